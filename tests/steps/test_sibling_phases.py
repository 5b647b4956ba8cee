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

from synthetic.nsysexport import write_sibling_phases
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

