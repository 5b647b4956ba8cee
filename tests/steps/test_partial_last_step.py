"""The last of the steps a program's repeated range tiles, where the range marks only part of each iteration.

hpcgroup/pipit's ``saxpy-mpi-cuda_nsys_perlmutter0.sqlite`` (rank 0 of an MPI + CUDA saxpy on an A100, read in the
h37-survey14 survey) marks each iteration with one NVTX range, ``saxpy``, around the kernel's launch alone: the steps
it tiles run from one ``saxpy`` to the next (247-271 ms, whole iterations), but the last ends where its range and its
kernel end (17.7 ms), before the iteration's read-back and MPI exchange.  Main averaged it in: 208.1 ms a step.  By
construction (``synthetic.nsysexport.write_mpi_saxpy``): the steps are the generated iterations, the cut one left out;
the control -- ranges around whole steps, where the last step is whole -- keeps every step."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from synthetic.nsysexport import NsysJob, write, write_mpi_saxpy
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _report(path) -> dict:
    host = SimpleNamespace(host="rank0", path=str(path), format="nsys", size=0)
    return analyze_session("rank0", "s", [host]).to_dict()["hosts"][0]


@pytest.mark.parametrize("iterations", [3, 5])
def test_a_last_step_its_mark_cuts_short_is_left_out(tmp_path, iterations):
    p = tmp_path / "saxpy.sqlite"
    truth = write_mpi_saxpy(str(p), iterations=iterations)
    host = _report(p)
    steps = host["steps"]
    assert steps["source"] == "nvtx_top_range", steps
    assert steps["found"] == iterations
    assert steps["count"] == iterations - 1
    assert [d["reason"].split(":")[0] for d in steps["dropped"]] == ["partial"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["iteration_ms"], rel=0.01)


def test_a_last_step_its_range_holds_whole_is_kept(tmp_path):
    p = tmp_path / "whole.sqlite"
    truth = write(str(p), NsysJob(steps=4, shuffle=False))
    host = _report(p)
    assert host["steps"]["found"] == host["steps"]["count"] == 4, host["steps"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth.step_ms, rel=0.02)


def test_the_mpi_saxpy_rank_steps_are_its_whole_iterations():
    """The real export (kept: ``tests/fixtures/wild/mpi_saxpy_a100_rank0``): the step is the mean time from one
    ``saxpy`` range to the next, read from its NVTX table (255.7 ms; main: 208.1 ms with the cut last step)."""
    import sqlite3

    from tests.support.paths import FIXTURES

    path = FIXTURES / "wild" / "mpi_saxpy_a100_rank0" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"
    con = sqlite3.connect(path)
    starts = [s for (s,) in con.execute("SELECT start FROM NVTX_EVENTS WHERE text = 'saxpy' ORDER BY start")]
    con.close()
    truth = (starts[-1] - starts[0]) / (len(starts) - 1) / 1e6
    host = _report(path)
    assert host["steps"]["found"] == len(starts) and host["steps"]["count"] == len(starts) - 1
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth, rel=0.01)
