"""A window with some one-time costs is no cold-start capture.

danae-pan/hpc_assignment3 ``report2.sqlite`` @02bed39d (read locally only, no licence): an OpenMP-offload matmul on
an H100 PCIe whose second launch runs 1 team of 32 threads for 10.2 s of an 11.6 s window; the start-up
(``cuMemHostAlloc`` 551 ms, ``cudaMallocHost``) is 6% of it (phase ``mixed``).  Main listed "The capture is a cold
start ... No steady step is left to analyse apart from them: every number below describes the start-up" first, above
the one-block kernel that saves 89% -- both untrue of a window the program's own work fills.  The phases here are
built by hand, so what each says is known by construction."""

from __future__ import annotations

from tb_gpu_advisor.job import Job
from tb_gpu_advisor.job.kind import Kind
from tb_gpu_advisor.job.phase import OneTime
from tb_gpu_advisor.model.schema import Finding, Saving
from tb_gpu_advisor.rules import REGISTRY, rank
from tests.support.rules_factory import healthy, ledger


def _window(phase: str, share: float, startup_ms: float):
    """A 10 ms step of which ``startup_ms`` is GPU idle inside one-time costs filling ``share`` of the window."""
    m = healthy(breakdown=ledger(startup=startup_ms))
    m.job = Job(kind=Kind("unknown", "low", "GPU work"),
                phase=OneTime(phase, "some one-time costs: `cuMemHostAlloc` 551 ms", total_ms=722.0, share=share))
    return m


def _one_block_kernel(saving_ms: float) -> Finding:
    return Finding(id="small_grid:host0", rule="small_grid", severity="warning", title="small grid", summary="",
                   guide_section="", saving=Saving(saving_ms, saving_ms * 10, ""), host="host0")


def test_a_mixed_windows_start_up_ranks_by_its_saving():
    (cold,) = REGISTRY["cold_start"].check(_window("mixed", 0.06, 0.6))
    assert cold.severity == "warning"  # 6% of the step: still said, as a warning
    assert "every number below describes the start-up" not in cold.summary
    # of the step this finding grades (6% of it start-up), not of the window (h37-review12: ddp_overlap_rtx3090's
    # "82.2% of the window ... analysed below" beside a pass of 16% of its window)
    assert "The other 94.0% of the step is the program's own work" in cold.summary
    grid = _one_block_kernel(8.9)
    assert rank([cold, grid]) == [grid, cold]


def test_a_warm_up_window_still_leads():
    """The control: a window that is mostly one-time costs is a cold start, said first whatever else saves more."""
    (cold,) = REGISTRY["cold_start"].check(_window("warm-up", 0.6, 6.0))
    assert "every number below describes the start-up" in cold.summary
    grid = _one_block_kernel(3.0)
    assert rank([cold, grid]) == [cold, grid]


def test_a_mixed_window_whose_steps_are_mostly_start_up_still_leads():
    """The other control (``wild/nvfuser_h200_first_call``: 12% of the window, 56% of each step compiling): where the
    one-time costs fill a quarter of the step or more, the finding is critical and the steps are a cold start."""
    (cold,) = REGISTRY["cold_start"].check(_window("mixed", 0.12, 5.6))
    assert cold.severity == "critical"
    grid = _one_block_kernel(8.0)
    assert rank([cold, grid]) == [cold, grid]


def _one_pass(share_of_window: float, startup_ms: float):
    """:func:`_window` kept as one pass (no step found): the capture's only iteration."""
    m = _window("mixed", share_of_window, startup_ms)
    m.steps.count = 1
    return m


def test_a_one_pass_mostly_start_up_is_the_start_up_whatever_the_window_reads():
    """h37-startjson (``wild/nvfuser_h200_first_call``: Thunder's first call, 27% of its one 3.19 s pass compiling,
    12% of a window its imports dilute): the pass is the start-up -- the phase's bar (``job.warmup_share``) applied to
    the part analysed -- so no steady step is left, as a warm-up window's one pass says.  Main read "The other 72.7% of
    the pass is the program's own work, analysed below" under a title that now says "start-up only"."""
    (cold,) = REGISTRY["cold_start"].check(_one_pass(0.12, 3.0))
    assert "No steady step is left to analyse apart from them" in cold.summary, cold.summary
    assert "program's own work" not in cold.summary


def test_a_one_pass_with_some_start_up_keeps_its_own_work():
    """The control: under the bar (20% of the pass) the rest of the pass is the program's own work, as before."""
    (cold,) = REGISTRY["cold_start"].check(_one_pass(0.12, 2.0))
    assert "The other 80.0% of the step is the program's own work" in cold.summary, cold.summary
    assert "No steady step is left" not in cold.summary
