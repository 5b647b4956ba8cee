"""A burst of copies alone is no iteration of its own, in any job (issue #37 class 1, h37-onepass32).

The real class: ntua-el20062/gemm_spmm_a100 ``gemm_tiled_20000`` (A100-PCIE-40GB, Nsight 2024.2; no licence, measured
in SURVEY.md, not kept): A's synchronous pinned upload, cuBLAS's start-up with the GPU idle 19.7 ms, B's upload, one
990 ms DGEMM and the read-back.  The start-up cut the GPU's work into two bursts -- the first A's copy alone -- and the
two uploads share a copy's name, so main read 2 "steps" (184 ms and 1.38 s).  Any loop runs its body's kernels in every
iteration, so where all of a window's kernels run in one burst the window holds one iteration at most, whatever the job.
Truth by construction (``synthetic.nsysexport.write_one_pass_gemm``): one GEMM, one pass from A's upload to the
read-back's end.  Control: the same program run four times repeats, and its steps stay the repeats."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import nsysexport
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _report(tmp_path: Path, passes: int):
    path = tmp_path / "report1.sqlite"
    truth = nsysexport.write_one_pass_gemm(str(path), passes=passes)
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "nsys"))
    assert rep.error is None, rep.error
    return rep, truth


def test_a_one_pass_program_cut_by_its_start_up_is_one_pass(tmp_path: Path) -> None:
    rep, truth = _report(tmp_path, 1)
    assert truth["gemms"] == 1 and truth["startup_idle_ms"] > 19.0  # one kernel: one pass, cut by the start-up
    assert rep.job["kind"] != "training", rep.job
    assert (rep.steps["source"], rep.steps["count"]) == ("whole_capture", 1), rep.steps  # main: 2 burst "steps"
    # either reading of its copies says why: copy-only bursts beside its one burst of kernels (h37-onepass32), or
    # bursts that share only copies' names (h37-hostalloc32, which speaks first where both hold)
    assert "copies alone" in rep.steps["note"] or "only work they share is copies" in rep.steps["note"], rep.steps
    (row,) = [r for r in rep.step_rows if r.gpu is None]
    assert row.step_ms == pytest.approx(truth["pass_ms"], rel=0.01), (row.step_ms, truth)


def test_control_the_program_run_four_times_keeps_its_repeats(tmp_path: Path) -> None:
    rep, _ = _report(tmp_path, 4)
    assert rep.steps["source"] != "whole_capture" and rep.steps["count"] >= 2, rep.steps
    assert "copies alone" not in rep.steps["note"], rep.steps["note"]


def test_a_program_s_one_pass_is_no_guessed_iteration(tmp_path: Path) -> None:
    """The one pass is the window's, exact for it, as with bursts that share no work: no guessed iteration, so its
    findings keep their confidence (a training job's window read as one iteration stays a guess, test_copy_bursts).
    Before: ``iteration_guess`` True and every finding low confidence, none critical (wild/lazy_first_launch_t4's
    cold start fell from critical to warning)."""
    rep, _ = _report(tmp_path, 1)
    assert rep.steps["source"] == "whole_capture" and rep.steps["iteration_guess"] is False, rep.steps
