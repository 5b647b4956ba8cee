"""Hostile PyTorch profiler traces (``*.pt.trace.json``): one long event, and times no clock writes (issue #39).

Each generator returns the bytes of a small, otherwise ordinary trace (eight ``ProfilerStep#N`` steps of one GEMM
kernel each on an H100) broken in one way:

* ``long_event(kind, size)``: one event that is ``size`` bytes long -- its name, the whitespace between its keys, or
  a string argument of a FLOP op; ``long_gap(size)``: a run of whitespace between two events.  A reader must cost
  time and memory in proportion to the length (a few times it at most), never its square.
* ``TIME_KINDS``: timestamps and durations that make no physical sense -- every ``ts`` 1e308 or all equal, an
  event a day from the others, durations that are negative, not finite or text.  Such a file is damaged, never
  "healthy".

``KINDS`` names them all for ``scripts/robustness.py`` (the long shapes at a moderate size).
"""

from __future__ import annotations

import json
from collections.abc import Callable

STEPS = 8
KERNELS_PER_STEP = 5


def base_events() -> list[dict]:
    """Eight steps of five launched GEMM kernels, with the CPU ops and runtime calls around them."""
    evs = []
    for s in range(STEPS):
        t0 = 1000.0 + s * 1000
        evs.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{s}", "pid": 1, "tid": 1, "ts": t0,
                    "dur": 900.0})
        for i in range(KERNELS_PER_STEP):
            corr = s * 10 + i
            evs.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t0 + 10 + i * 100,
                        "dur": 50.0})
            evs.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                        "ts": t0 + 20 + i * 100, "dur": 5.0, "args": {"correlation": corr}})
            evs.append({"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32", "pid": 0, "tid": 7,
                        "ts": t0 + 30 + i * 100, "dur": 80.0,
                        "args": {"device": 0, "stream": 7, "correlation": corr}})
    return evs


def trace(events: list[dict], extra: str = "") -> bytes:
    """A whole trace of ``events`` (``extra``: raw JSON text appended to the array, an event written by hand)."""
    head = {"schemaVersion": 1, "deviceProperties": [
        {"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0,
         "totalGlobalMem": 85_000_000_000}], "traceEvents": events}
    text = json.dumps(head)
    if extra:
        cut = text.rindex("]")
        text = text[:cut] + ", " + extra + text[cut:]
    return text.encode()


def long_event(kind: str, size: int) -> bytes:
    """The base trace plus one event ``size`` bytes long: ``name`` (its name), ``space`` (whitespace between its
    keys) or ``args`` (an ``Input Dims`` string of an ``aten::mm``)."""
    if kind == "name":
        ev = '{"ph": "X", "cat": "cpu_op", "name": "' + "a" * size + '", "pid": 1, "tid": 1, "ts": 2000.0, "dur": 1.0}'
    elif kind == "space":
        ev = '{"ph": "X", "cat": "cpu_op", "name": "b",' + " " * size + '"pid": 1, "tid": 1, "ts": 2000.0, "dur": 1.0}'
    elif kind == "args":
        ev = ('{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 2000.0, "dur": 1.0, '
              '"args": {"Input Dims": "' + "9" * size + '"}}')
    else:
        raise ValueError(f"unknown long event kind {kind!r}")
    return trace(base_events(), ev)


def long_gap(size: int) -> bytes:
    """The base trace with ``size`` bytes of whitespace after the comma between two of its events."""
    text = trace(base_events()).decode()
    at = text.index("}, {", len(text) // 2) + 2
    return (text[:at] + "\n" * size + text[at:]).encode()


def _times(edit: Callable[[dict], None], which: Callable[[dict], bool] = lambda e: True) -> Callable[[], bytes]:
    def make() -> bytes:
        evs = base_events()
        for e in evs:
            if which(e):
                edit(e)
        return trace(evs)
    return make


def _set(key: str, value) -> Callable[[dict], None]:
    def edit(e: dict) -> None:
        e[key] = value
    return edit


def _negate_dur(e: dict) -> None:
    e["dur"] = -e["dur"]


#: Times no profiler's clock writes: each makes the file damaged (``Trace.problems``), never healthy.
TIME_KINDS: dict[str, Callable[[], bytes]] = {
    "ts_1e308": _times(_set("ts", 1e308)),
    "ts_all_zero": _times(_set("ts", 0)),
    "ts_infinite": _times(_set("ts", float("inf"))),  # json writes Infinity, which the stdlib reads
    "ts_a_day_off": _times(_set("ts", 1000.0 + 2 * 86_400e6), lambda e: e["cat"] == "cpu_op" and e["ts"] < 1100),
    "dur_nan": _times(_set("dur", float("nan"))),
    "dur_infinite": _times(_set("dur", float("inf"))),
    "dur_negative": _times(_negate_dur),
    # text that spells no number (a numeric string, "12", is read as the number, as the Chrome trace viewer reads it:
    # session h37-meta57)
    "dur_text": _times(_set("dur", "12 us")),
}

#: Every hostile trace of this module, the long shapes at 8 MB (``scripts/robustness.py``).
KINDS: dict[str, Callable[[], bytes]] = {
    **TIME_KINDS,
    "long_name_8mb": lambda: long_event("name", 8 << 20),
    "long_space_8mb": lambda: long_event("space", 8 << 20),
    "long_args_8mb": lambda: long_event("args", 8 << 20),
    "long_gap_8mb": lambda: long_gap(8 << 20),
}
