"""A program's own phases, each run once, are no frame around timed passes (h37-survey71).

extra-p/extrap's ParallelKernelsTest (kept as ``wild/extrap_parallel_kernels_gtx1060``, BSD-3-Clause: a GTX 1060
Max-Q, Nsight 2022.1) runs three tests once each, every one in an NVTX range of its own inside ``main``:
``main->test_max_par`` (uploads, kernel ``test`` on 5 streams, read-backs), ``main->test_copies`` (copies only, its
GPU work cut in two bursts at its syncs) and ``main->process`` (kernels ``test0`` .. ``test4``, ``test2`` 414 ms).
The frame rule (``job.frame``) took the copy test's range, which holds 2 of the GPU's 4 bursts, for the one range
around the passes a benchmark times: its 2 bursts became the job's steps ("Memory copies block the GPU ... 89%"),
the first test's burst "its warm-up", the third's "outside its timing".  A repeat before a frame that lies in a range
the program opens once and closes before the frame opens is a phase of the program's own, no warm-up of the frame's
passes: there is no frame, and the capture reads as the one pass it is.

Truth by construction (``synthetic.nsysexport.write_sibling_phases``) and, for the real capture, read by hand with
``sqlite3`` (the three ranges run once each; kernels 763.9 ms from the first one's start to the last one's end).
"""

from __future__ import annotations

from pathlib import Path

from synthetic.nsysexport import write_copy_bursts, write_sibling_phases
from tests.support.cli_report import first_host, framed_passes_host

KEPT = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "extrap_parallel_kernels_gtx1060"


def test_three_tests_run_once_are_one_pass_not_a_framed_copy_loop(tmp_path):
    """By construction: three phases of different work, each once -- one pass, no range read as the frame."""
    truth = write_sibling_phases(str(tmp_path / "run.sqlite"))
    steps = first_host(tmp_path / "run.sqlite")["steps"]
    assert "its frame" not in steps["note"], steps["note"]
    assert steps["count"] == truth["passes"], steps["note"]


def test_control_warmups_outside_any_range_still_frame_the_timed_passes(tmp_path):
    """Control (passes before and after): warm-up passes outside any range, then one range around the timed ones --
    the frame stands, its passes are the steps."""
    host, truth = framed_passes_host(tmp_path)
    assert host["steps"]["count"] == truth["measured"]
    assert "its frame" in host["steps"]["note"]


def test_extrap_parallel_kernels_capture_is_one_pass():
    """The real capture: one pass, no frame, and no copies finding leading the report from two copy bursts read as
    steps (main: "2 steps, step 27.7 ms", top "Memory copies block the GPU ... 89%")."""
    host = first_host(KEPT)
    steps = host["steps"]
    assert "its frame" not in steps["note"] and steps["count"] == 1, steps["note"]
    bad = [f for f in host["findings"] if f["severity"] in ("warning", "critical")]
    assert bad and bad[0]["rule"] != "excessive_memcpy"


def test_control_warmups_named_so_inside_a_setup_phase_still_frame_the_timed_passes(tmp_path):
    """Control: the warm-up passes in a range the program names its warm-up, inside a ``setup`` phase of its own --
    the program says they are warm-ups, so the frame stands."""
    host, truth = framed_passes_host(tmp_path, warmup_ranges=("setup", "warmup"))
    assert host["steps"]["count"] == truth["measured"]
    assert "its frame" in host["steps"]["note"]



# --------------------------------------------------------------------------- h37-hostalloc32: copies named alike

KEPT_S4 = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "extrap_parallel_kernels_s4_gtx1060"


def test_three_tests_in_one_burst_each_are_one_pass_not_repeats_of_a_copy(tmp_path):
    """By construction: the three tests each one GPU burst (the copy test not cut at a pause, as at the program's
    scalings 2 and 4), the first and second sharing only pinned 16 MB uploads -- a copy's name is its direction and
    memory kinds, no work of the program's, so no burst repeats another: one pass (main: 3 "steps" from "clusters of
    GPU activity ... some of the same work running in several of them", the uploads taken for that work)."""
    truth = write_sibling_phases(str(tmp_path / "run.sqlite"), copy_halves=False, idle_us=150.0)
    steps = first_host(tmp_path / "run.sqlite")["steps"]
    assert steps["count"] == truth["passes"], steps["note"]
    assert "clusters of GPU activity" not in steps["note"], steps["note"]


def test_control_copy_bursts_alone_still_repeat_each_other(tmp_path):
    """Control (the same on main): a bandwidth sweep whose passes are copies alone, one kernel after them -- the
    copy-only bursts repeat among themselves, so the bursts are still the steps."""
    truth = write_copy_bursts(str(tmp_path / "run.sqlite"), check_kernel=True)
    steps = first_host(tmp_path / "run.sqlite")["steps"]
    assert "clusters of GPU activity" in steps["note"], steps["note"]
    assert truth["iterations"] - 2 <= steps["count"] <= truth["iterations"], steps["note"]


def test_extrap_parallel_kernels_at_scaling_4_is_one_pass():
    """The real capture at scaling 4 (no NVTX frame read there): three tests, three bursts, no kernel in two of them
    -- main: 2 steps of 73.9 ms, the first test dropped as a warm-up; here the one pass, its top problem the pinned
    allocation it does in every test."""
    host = first_host(KEPT_S4)
    steps = host["steps"]
    assert steps["count"] == 1 and "clusters of GPU activity" not in steps["note"], steps["note"]
    assert any(f["rule"] == "allocator_churn" and f["severity"] == "critical" for f in host["findings"])
