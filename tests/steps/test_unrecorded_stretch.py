"""A step guessed from GPU bursts never holds a stretch in which nothing was recorded (issue #37 class 1, h37-left30).

The real class: Aphelack/efficient-dl-systems ``week02_fast_pipelines/homework/task3/torch_profiler_trace.json``
@7e6cd43 (MIT, kept: ``wild/vit_a4000_pageable_batch``) -- CUDA activities only, so its steps are GPU bursts: 21.7 ms
of an earlier iteration's kernels, 3.78 s in which no event of any kind was recorded, then one iteration.  Main's first
step ran from its burst to the next one's start and held the stretch: a mean step of 1.94 s for an ~84 ms iteration.
Truth from the file itself (json): the longest stretch no event covers, and the recorded time either side of it.
Controls: ``wild/mordred_rtx6000_hashjoin``, whose 4.65 s between bursts is a recorded OS wait (``getc``), keeps it
in its step; the same ViT capture with its stretch shortened to less than the rest of the step keeps it too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support import unrecorded
from tests.support.paths import FIXTURES

TRACE = unrecorded.VIT_PAGEABLE
_doc = unrecorded.load


def _stretch(events: list[dict]) -> tuple[float, float, float, float]:
    """(first event's start, the longest stretch no event covers: its start and end, last event's end), us."""
    busy = unrecorded.timed(events)
    hole0, hole1 = unrecorded.longest_hole(events)
    return busy[0][0], hole0, hole1, busy[-1][1]


def _steps(path: Path, fmt: str = "kineto") -> tuple[dict, list[tuple[float, float]]]:
    """(the report's steps, each kept step's (start, end) in ms, host-wide)."""
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, fmt))
    assert rep.error is None, rep.error
    rows = [r for r in rep.step_rows if r.gpu is None]
    return rep.steps, [(r.start_ms, r.start_ms + r.step_ms) for r in rows]


def test_a_burst_step_is_cut_at_the_stretch_nothing_recorded():
    events = _doc()["traceEvents"]
    first, hole0, hole1, last = _stretch(events)
    assert hole1 - hole0 > 3.7e6, (hole0, hole1)  # the 3.78 s nothing recorded
    steps, windows = _steps(TRACE)
    # two bursts; the first, the tail of an iteration launched before the window, is dropped as partial (h37-left46)
    assert (steps["source"], steps["found"], steps["count"]) == ("gpu_busy_clusters", 2, 1), steps
    # the trace viewer counts from the file's first event (the profiler's own span, 59 us before the first kernel)
    zero = min(e["ts"] for e in events if e.get("ph") == "X")
    lo, hi = (hole0 - zero) / 1000, (hole1 - zero) / 1000
    for a, b in windows:
        assert min(b, hi) - max(a, lo) <= 0.001, (a, b, lo, hi)  # no step holds any of the stretch
    after = (last - hole1) / 1000  # 84.0 ms: the time the capture recorded after the stretch, the whole iteration
    assert sum(b - a for a, b in windows) == pytest.approx(after, rel=0.01)
    assert "nothing recorded" in steps["note"], steps["note"]


def test_a_stretch_shorter_than_the_rest_of_the_step_stays_in_it(tmp_path):
    """Control: the same capture with everything after the stretch moved back so that only 10 ms of it is left,
    less than the 21.7 ms of recorded work before it: the step is mostly known, and keeps the stretch."""
    path = unrecorded.shortened(_doc(), 10_000.0, tmp_path / TRACE.name)
    steps, windows = _steps(path)
    assert steps["found"] == 2, steps  # step 0, the window's partial first iteration, is dropped (h37-left46)
    assert "nothing recorded" not in steps["note"], steps["note"]  # uncut: the stretch stays in step 0


def test_a_recorded_os_wait_between_bursts_stays_in_the_step():
    """Control: ``wild/mordred_rtx6000_hashjoin`` waits 4.65 s in ``getc`` between its uploads and its queries; the
    OS runtime trace records it, so its burst step keeps it."""
    path = FIXTURES / "wild" / "mordred_rtx6000_hashjoin" / "report1.sqlite"
    steps, windows = _steps(path, "nsys")
    assert steps["source"] == "gpu_busy_clusters", steps
    assert max(b - a for a, b in windows) > 4650.0, windows
    assert "nothing recorded" not in steps["note"], steps["note"]
