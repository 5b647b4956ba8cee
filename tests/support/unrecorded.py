"""The kept ViT A4000 capture whose timed events leave one 3.78 s stretch nothing recorded
(``tests/fixtures/wild/vit_a4000_pageable_batch``): its events, that stretch read off them, and the control that
shortens it -- shared by the steps, gap and copy tests that read it against the file."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tests.support.intervals import union
from tests.support.paths import FIXTURES

VIT_PAGEABLE = FIXTURES / "wild" / "vit_a4000_pageable_batch" / "vit_a4000.1436345.pt.trace.json.gz"


def load(path: Path = VIT_PAGEABLE) -> dict:
    """The capture's JSON document."""
    return json.loads(gzip.decompress(path.read_bytes()))


def timed(events: list[dict]) -> list[tuple[float, float]]:
    """The union of the timed events' spans (us), the profiler's own span aside."""
    return union([(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("ph") == "X" and e.get("cat") != "Trace"])


def longest_hole(events: list[dict]) -> tuple[float, float]:
    """The longest stretch no timed event covers: its start and end, us."""
    busy = timed(events)
    return max(((a[1], b[0]) for a, b in zip(busy, busy[1:])), key=lambda x: x[1] - x[0])


def shortened(doc: dict, keep_us: float, out: Path) -> Path:
    """``doc`` with every timed event after its longest hole moved back so that only ``keep_us`` of the hole is
    left, written gzipped to ``out`` (the control: a stretch short enough to belong to its step)."""
    events = doc["traceEvents"]
    hole0, hole1 = longest_hole(events)
    shift = (hole1 - hole0) - keep_us
    for e in events:
        if e.get("ph") == "X" and e.get("cat") != "Trace" and e["ts"] >= hole1:
            e["ts"] -= shift
    out.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return out


def tail_launched(doc: dict, out: Path | None = None) -> dict:
    """``doc`` with a ``cudaLaunchKernel`` recorded just before each GPU record that no launch in it correlates with
    (the 21.7 ms tail of an iteration launched before the window): the capture as if the window had opened on that
    iteration's launches -- its first step whole, kept, where the file's own first step is dropped as partial
    (h37-left46).  Written gzipped to ``out`` when given."""
    events = doc["traceEvents"]
    launched = {e["args"].get("correlation") for e in events if e.get("cat") == "cuda_runtime"}
    pid = next(e["pid"] for e in events if e.get("cat") == "cuda_runtime")
    tid = next(e["tid"] for e in events if e.get("cat") == "cuda_runtime")
    for e in [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]:
        corr = e["args"].get("correlation")
        if corr not in launched:
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid, "tid": tid,
                           "ts": e["ts"] - 60.0, "dur": 5.0, "args": {"correlation": corr, "cbid": 211}})
            launched.add(corr)
    if out is not None:
        out.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return doc
