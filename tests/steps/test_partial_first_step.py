"""A step whose work was launched before the capture began is partial: dropped like a warm-up step, and said so, never
averaged in (h37-left46, issue #37).

The real class: ``wild/vit_a4000_pageable_batch`` (Aphelack/efficient-dl-systems' ViT homework, MIT; CUDA activities
only): the window opens on 21.7 ms of kernels whose launch calls precede it -- the tail of an earlier iteration --,
then 3.78 s with nothing recorded, then one whole iteration of 84.0 ms.  Main kept both GPU bursts as steps: a mean step
of 52.8 ms, the tail averaged with the iteration.  Truth from the file itself (json): the first record with no launch
in the capture, and the time recorded after the stretch.  Any format: an Nsight export of a loop with NVTX step
ranges, the launches of its first range's work taken out (what a window opened mid-iteration holds), drops that
range; the same export whole keeps it.  Controls: ``wild/mordred_rtx6000_hashjoin``, whose first burst's uploads are
launched inside the window, drops no step as cut by the window; ``../shared/profiles/nsys/fsdp_mfu_before``, whose
first burst opens with 9.4 ms of unlaunched kernels and runs on into 282 ms of work launched in the window, keeps it
(more than a tail: a first version dropped it and kept only the window's last 8.2 ms burst).
"""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support import unrecorded
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.sqlite_edits import run_sql

CUT = "partial: the capture began inside it"


def _metrics(path, fmt: str):
    return host_metrics(read(SimpleNamespace(host="h", path=str(path), format=fmt)))


def test_a_first_burst_launched_before_the_window_is_dropped():
    """Fails on main: two steps, 52.8 ms on average."""
    events = unrecorded.load()["traceEvents"]
    launched = {e["args"].get("correlation") for e in events if e.get("cat") == "cuda_runtime"}
    device = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")), key=lambda e: e["ts"])
    assert device[0]["args"].get("correlation") not in launched  # the window's first GPU record: no launch in it
    _, hole1 = unrecorded.longest_hole(events)
    iteration_ms = (max(e["ts"] + e.get("dur", 0) for e in events if "ts" in e and e.get("ph") == "X") - hole1) / 1e3
    m = _metrics(unrecorded.VIT_PAGEABLE, "kineto")
    assert (m.steps.found, m.steps.count) == (2, 1)
    (cut,) = m.steps.dropped
    assert cut.step == 0 and cut.reason.startswith(CUT), cut
    assert "21.7 ms of GPU work" in cut.reason
    (w,) = m.steps.windows
    assert w.duration_ms == pytest.approx(iteration_ms, rel=0.01)


def _nvtx_loop(path, cut: bool):
    nx.write(str(path), nx.NsysJob(steps=4, step_range="train_step {k}"))
    if cut:  # the first range's work keeps its records, its launches are gone: the window opened after them
        con = sqlite3.connect(str(path))
        (second,) = con.execute("SELECT start FROM NVTX_EVENTS WHERE text LIKE 'train_step%' ORDER BY start "
                                "LIMIT 1 OFFSET 1").fetchone()
        con.close()
        early = (f"SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start < {second} UNION "
                 f"SELECT correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE start < {second}")
        run_sql(str(path), f"DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IN ({early})")
    return _metrics(path, "nsys")


def test_an_nsight_step_whose_launches_precede_the_window_is_dropped(tmp_path):
    m = _nvtx_loop(tmp_path / "cut.sqlite", cut=True)
    assert (m.steps.source, m.steps.found, m.steps.count) == ("nvtx_range", 4, 3)
    assert [d.reason.startswith(CUT) for d in m.steps.dropped] == [True]


def test_a_whole_first_step_is_kept(tmp_path):
    """Control: the same export with its launches: every range is a step."""
    m = _nvtx_loop(tmp_path / "whole.sqlite", cut=False)
    assert (m.steps.source, m.steps.found, m.steps.count) == ("nvtx_range", 4, 4)
    assert not m.steps.dropped


def test_a_first_burst_that_runs_on_into_launched_work_is_kept():
    path = SHARED_PROFILES / "nsys" / "fsdp_mfu_before" / "mfu_2gpu_before.sqlite"
    if not path.is_file():
        pytest.skip(f"real Nsight exports not found ({path})")
    m = _metrics(path, "nsys")
    # one window since h37-left58 (its burst gap lies inside one op), kept, not dropped as partial
    assert m.steps.count == 1 and not m.steps.dropped


def test_a_first_burst_launched_in_the_window_is_not_cut():
    """Control: mordred's first burst (its uploads, launched inside the window) is dropped by the stock rule, as
    before, and no step as cut by the window."""
    m = _metrics(FIXTURES / "wild" / "mordred_rtx6000_hashjoin" / "report1.sqlite", "nsys")
    assert m.steps.count == 6
    assert not [d for d in m.steps.dropped if d.reason.startswith(CUT)]
