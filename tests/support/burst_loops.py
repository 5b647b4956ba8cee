"""Generated loops with no step marker, read as GPU-burst steps (``gpu_busy_clusters``, low confidence): the vehicles
of the tests that need guessed steps -- gaps partly or wholly outside the steps' windows, a cold start inside every
step -- since h37-windows2 read the two kept captures that once showed them (rocprof_aiter_mi355x,
nvfuser_h200_gtest) as one pass each, their truth.  Each is a ``synthetic.rocprofv3trace`` capture of an MI300X-like
GPU, passes of a shared gemm and a kernel of the pass's own; the truth is by construction, in each constant's words."""
from __future__ import annotations

from pathlib import Path

from synthetic import rocprofv3trace
from tb_gpu_advisor.model.schema import Report
from tests.support.run_report import run_report

#: 15 passes (4 ms gemm, 1 ms own kernel): the host stalls 60 ms (nothing recorded) after passes 3, 6 and 12 and
#: 400 ms after pass 9, 2 ms between the others -- 5 GPU bursts, the steps; the 400 ms stretch, longer than any other
#: step, is cut out of the steps' windows (``steps.place._cut_unrecorded``), the three 60 ms gaps stay inside theirs.
#: Mean gap over the 5 steps (180 + 400) / 5 = 116.0 ms, of which 400 / 5 = 80.0 ms (69.0%) lies outside every
#: window; the part inside, 180 / 5 = 36.0 ms, is the saving.
PARTLY_OUTSIDE_GAPS = [2, 2, 60, 2, 2, 60, 2, 2, 400, 2, 2, 60, 2, 2, 1]
#: 6 such passes, 15 ms apart but one 400 ms stall after the third: 2 bursts, the one gap between them cut out of both
#: windows -- wholly outside the steps (mean over the 2 steps 200.0 ms, all of it outside; saves ~0).
WHOLLY_OUTSIDE_GAPS = [15, 15, 400, 15, 15, 2]
#: 24 passes (0.5 ms gemm, 1 ms own kernel) in 4 bursts of 6, 2 ms apart, 80 ms between bursts, no copy; each pass's
#: own kernel's first launch loads its module for 8 ms, the GPU idle 7.5 ms of it: every burst holds its passes' loads,
#: 6 x 7.5 = 45.0 ms -- 4 steps (the last dropped, ending at its own work: 3 kept), each ~144 ms (burst and gap), 31%
#: of it in one-time costs: past ``job.warmup_share``, so by its own share a cold start would be critical.
COLD_BURST_GAPS = ([2.0] * 5 + [80.0]) * 4
#: 18 passes (4 ms gemm, 1 ms own kernel) in 6 bursts of 3, 2 ms apart, 80 ms between bursts, no copy; a second thread
#: loads a code object (``hipModuleLoad``, a one-time cost) for 120 ms from 20 ms after the first kernel: it starts in
#: the first step, which is left out as warm-up (and the last, ending at its own work), and runs on into the second,
#: whose GPU idles in it -- the 4 kept steps hold that part of the start-up, the dropped one the rest.
LOADER_GAPS = [2.0, 2.0, 80.0] * 6
LOADER = (20.0, 120.0)


def burst_loop(root: Path, gaps: list[float], gemm_us: float = 4000.0, first_launch_ms: float = 0.0,
               loader: tuple[float, float] | None = None, run: str = "loop") -> Report:
    """The report of a loop of ``len(gaps)`` passes, the host idle ``gaps[i]`` ms after pass i, written under
    ``root / run``; no upload or read-back where modules load, so every burst is the loop's own."""
    passes = [[("gemm_kernel(float*)", gemm_us), (f"test{i}_relu(float*)", 1000.0)] for i in range(len(gaps))]
    io = {"upload_ns": 0, "read_ns": 0} if first_launch_ms or loader else {}
    rocprofv3trace.write(str(root / run), passes, step_range=None, gap_ms=gaps, first_launch_ms=first_launch_ms,
                         loader=loader, **io)
    return run_report(root, run)


def cold_burst_loop(root: Path) -> Report:
    """The loop of ``COLD_BURST_GAPS``: a cold start inside every guessed step."""
    return burst_loop(root, COLD_BURST_GAPS, gemm_us=500.0, first_launch_ms=8.0)


#: ``COLD_BURST_GAPS``' loop with a 4 ms gemm before each own kernel: its first launch's 8 ms module load runs while
#: the gemm does, the GPU idle 8 - 4 = 4.0 ms of it, 6 x 4.0 = 24.0 ms a step -- 17% of the ~144 ms step, under
#: ``job.warmup_share``: steps mostly of the program's own work, each holding a cold start.
MOSTLY_OWN_WORK_GEMM_US = 4000.0


def mostly_own_work_burst_loop(root: Path) -> Report:
    """The loop of ``COLD_BURST_GAPS`` with ``MOSTLY_OWN_WORK_GEMM_US``: guessed steps that hold a cold start and are
    mostly the program's own work (streams_pinned_copies' two guessed steps showed it until h37-onepass32 read that
    capture as the one pass it is)."""
    return burst_loop(root, COLD_BURST_GAPS, gemm_us=MOSTLY_OWN_WORK_GEMM_US, first_launch_ms=8.0, run="own")


def loader_burst_loop(root: Path) -> Report:
    """The loop of ``LOADER_GAPS``: a one-time cost begun in a step left out as warm-up, held in part by a kept one."""
    return burst_loop(root, LOADER_GAPS, loader=LOADER)
