"""A ``ddp`` job's Kineto files with each ``ProfilerStep#k`` dropped and its window split into the user's
``record_function`` phases -- ``forward``, ``backward``, ``optimizer`` -- and the per-step rows the tests read
(h37-probe48k; the phase reading's tests, ``tests/steps/test_kineto_phase_steps.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from synthetic import torchtrace as tt
from tests.support.cli_report import ran_report


def compute_rows(host: dict[str, Any], gpu: int) -> list[tuple[int, float]]:
    """(step, compute ms) of each kept step on ``gpu``, in step order."""
    return [(r["step"], round(r["breakdown"].get("device_compute", 0.0), 3))
            for r in sorted(host["step_rows"], key=lambda r: r["step"]) if r["gpu"] == gpu]


#: One rank's compute a step in ``ddp``'s body (``forward_backward`` + ``optimizer``), us: 4 x (addmm 180 + relu 20)
#: + 4 x (relu grad 35 + 2 GEMMs 170, 160 + sum 22) + the SGD update 42.
DDP_COMPUTE_MS = (4 * (180.0 + 20.0) + 4 * (35.0 + 170.0 + 160.0 + 22.0) + 42.0) / 1000


#: The phases' spans of one step: (step start, step end, first backward op, all-reduce, next step's start; us) ->
#: (name, start, end) of ``forward``, ``backward`` and ``optimizer``.
PhaseBounds = Callable[[float, float, float, float, float], list[tuple[str, float, float]]]


def _apart(t0: float, t1: float, bwd: float, opt: float, nxt: float) -> list[tuple[str, float, float]]:
    """The phases with half a microsecond between them, the optimizer ending before the step's end."""
    return [("forward", t0 + 0.5, bwd - 0.5), ("backward", bwd - 0.4, opt - 0.5), ("optimizer", opt - 0.4, t1 - 0.5)]


def split_into_phases(path: str, bounds: PhaseBounds = _apart) -> None:
    """Rewrite the Kineto file ``path`` (a ``ddp`` rank's): each ``ProfilerStep#k`` dropped and its window split into
    the user's ``record_function`` phases where ``bounds`` puts them -- ``forward`` (to the first backward op),
    ``backward`` (to the all-reduce), ``optimizer`` (to the step's end or the next step's start)."""
    doc = json.loads(Path(path).read_text())
    ev = doc["traceEvents"]
    marks = sorted((e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")),
                   key=lambda e: e["ts"])
    phases = []
    for k, st in enumerate(marks):
        t0, t1 = st["ts"], st["ts"] + st["dur"]
        ops = [e for e in ev if e.get("ph") == "X" and e.get("tid") == st["tid"] and t0 < e["ts"] < t1]
        bwd = min(e["ts"] for e in ops if "backward" in e["name"])
        opt = min(e["ts"] for e in ops if e["name"].startswith("nccl:"))
        nxt = marks[k + 1]["ts"] if k + 1 < len(marks) else t1
        for name, a, b in bounds(t0, t1, bwd, opt, nxt):
            phases.append({**st, "name": name, "ts": round(a, 3), "dur": round(b - a, 3), "args": {}})  # as Kineto
    doc["traceEvents"] = [e for e in ev if not e.get("name", "").startswith("ProfilerStep#")] + phases
    tt.write_doc(path, doc)


def phase_spans_host(logdir: Path, scenario: str) -> dict[str, Any]:
    """The one host's report of ``scenario`` (a ``ddp`` job of 4 ranks, one file each) with each ``ProfilerStep#k``
    dropped and its window split into the user's ``record_function`` phases: ``forward`` (to the first backward op),
    ``backward`` (to the all-reduce), ``optimizer`` (to the step's end)."""
    for path in tt.write_run(str(logdir), scenario):
        split_into_phases(path)
    code, report = ran_report(logdir)
    assert code in (0, 1)
    (host,) = report["hosts"]
    return host
