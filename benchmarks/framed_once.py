"""CPU of the step detection on unmarked captures, and of the GPU-burst cut its two framed readings share (h37-debt47).

    PYTHONPATH=. python benchmarks/framed_once.py [--repeat 7] [--json]

Why: ``steps.detect`` asks ``steps.framed._framed_bursts`` and, where that finds no frame, ``_framed_pass``; both
read the same bursts of the same inputs -- the program's busy intervals (``_program_busy``), cut at its host's waits
(``_synced_bursts``), each rank's own bursts (``_process_starts``).  Until session 47 each made them itself, so every
capture that reaches the second (every unmarked one that no earlier reading takes) made them twice.  Now one
``FrameBursts`` makes them on first need.  This table says what the second making cost: the "cut" column is one
making, the time saved per detection on the captures whose detection reads it in ``_framed_pass`` too ("both": it
reaches it, and the job is no training job -- a training job's returns before the bursts).

Run it in this tree and in a tree before the change (its ``detect`` column only: it has no ``FrameBursts``) to see
the detection's own before and after; CPU (``time.process_time``), the best of ``--repeat`` runs, so other people's
load on a shared machine moves it little.  Captures are written by the project's own writers (``synthetic/``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from synthetic import nsysexport as nx  # noqa: E402
from tb_gpu_advisor import formats, frameworks  # noqa: E402
from tb_gpu_advisor.job import detect_job  # noqa: E402
from tb_gpu_advisor.model.trace import device_launches  # noqa: E402
from tb_gpu_advisor.steps import framed  # noqa: E402
from tb_gpu_advisor.steps.detect import detect_steps  # noqa: E402
from tb_gpu_advisor.steps.reading import _Reading  # noqa: E402

#: (name, writer of one Nsight export at a path): unmarked loops, one or two ranks, short and long.
CAPTURES: tuple[tuple[str, Callable[[str], object]], ...] = (
    ("eager bursts 30 x 12", lambda p: nx.write_eager_training_bursts(p)),
    ("eager bursts 600 x 40", lambda p: nx.write_eager_training_bursts(p, bursts=600, kernels=40,
                                                                       grad_bursts=tuple(range(20, 600, 6)))),
    ("framed pass, 3 warm-ups + 1", lambda p: nx.write_framed_passes(p, measured=1)),
    ("framed pass, 2 ranks, 400 kernels a pass", lambda p: nx.write_framed_passes(p, measured=1, kernels=400,
                                                                                   ranks=2)),
    ("framed pass, 4 ranks, 1000 kernels a pass", lambda p: nx.write_framed_passes(p, measured=1, kernels=1000,
                                                                                    ranks=4)),
    ("framed passes, 3 + 5, varying", lambda p: nx.write_framed_passes(p, vary=True)),
    ("native loop, 400 x 2", lambda p: nx.write_native_loop(p)),
    ("synced kernels 200 x 100", lambda p: nx.write_synced_kernels(p, iterations=200, kernels=100)),
)


def _best(fn: Callable[[], object], repeat: int) -> float:
    """The least CPU seconds of ``repeat`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def _asked_twice(trace, launches, job) -> bool:
    """Whether the detection asks ``_framed_pass`` (counted by wrapping it for one detection) for a job that is no
    training job: the one early return before it reads the bursts, so where the cut was made twice."""
    calls = []
    import tb_gpu_advisor.steps.detect as detect

    saved = detect._framed_pass
    detect._framed_pass = lambda *a, **k: calls.append(1) or saved(*a, **k)
    try:
        detect_steps(trace, launches, job)
    finally:
        detect._framed_pass = saved
    return bool(calls) and job.kind.kind != "training"


def measure(name: str, write: Callable[[str], object], repeat: int) -> dict:
    """One capture's row: its detection's source and CPU ms, and one making of the shared cut (where this tree has
    it)."""
    with tempfile.TemporaryDirectory(prefix="framed-once-") as tmp:
        path = os.path.join(tmp, "job.sqlite")
        write(path)
        trace = formats.read(SimpleNamespace(host="h0", path=path, format="nsys", size=os.path.getsize(path)))
    launches = device_launches(trace.h, trace.devices)
    job = detect_job(trace, launches, frameworks.detect_trace(trace))
    steps = detect_steps(trace, launches, job)
    row = {"capture": name, "kernels": int(sum(len(d) for d in trace.devices)), "source": steps.detection.source,
           "both": _asked_twice(trace, launches, job),
           "detect_ms": 1e3 * _best(lambda: detect_steps(trace, launches, job), repeat), "cut_ms": None}
    if hasattr(framed, "FrameBursts"):
        r = _Reading(trace, launches, job.waits)
        row["cut_ms"] = 1e3 * _best(lambda: framed.FrameBursts(trace, r.active, r.waits).cut, repeat)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    rows = [measure(name, write, a.repeat) for name, write in CAPTURES]
    if a.json:
        print(json.dumps(rows, indent=1))
        return 0
    print("| capture | kernels | steps source | both read the cut | detect ms | one cut ms (saved) |")
    print("|---|---:|---|---|---:|---:|")
    for r in rows:
        cut = "-" if r["cut_ms"] is None else f"{r['cut_ms']:.2f}" + ("" if r["both"] else " (not made twice)")
        print(f"| {r['capture']} | {r['kernels']} | {r['source']} | {'yes' if r['both'] else 'no'} | "
              f"{r['detect_ms']:.2f} | {cut} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
