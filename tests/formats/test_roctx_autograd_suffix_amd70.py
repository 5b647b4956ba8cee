"""roctx ranges pushed by ``torch.autograd.profiler.emit_nvtx`` on ROCm are read without PyTorch's autograd suffix, as
Nsight's NVTX ranges are (h37-amd70: h37-nvtx70's Lightning case on ROCm, issue #37 class 2).

On ROCm PyTorch's NVTX observer pushes its ranges through roctx with the same text as on CUDA
(``torch/csrc/profiler/util.cpp`` ``getNvtxStr``): ``aten::mm, seq = 1, op_id = 2``, and a ``record_function``'s name
with its ``, op_id = N`` -- Lightning's ``[pl][profile]run_training_batch, op_id = 4`` under
``PyTorchProfiler(emit_nvtx=True)``, a user's ``train_step, op_id = 7``.  Each range's own ``op_id`` made every name
unique: base dbf6cf15 (and main aa007027) read Lightning's iterations from rocprofv3 or rocpd as "GPU work of an
unknown kind" and no iteration, and a user's step ranges as no steps, where Nsight's reader cut the suffix off
(``frameworks.nvtx.op_name``).  Truth by construction (``synthetic.rocprofv3trace``, ``synthetic.rocpdtrace``): 8
iterations of six Tensile GEMMs, each in one range whose ``op_id`` counts up as emit_nvtx's does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthetic import rocpdtrace, rocprofv3trace as rv
from tests.support.contradictions import context_problems
from tests.support.run_report import fresh_report

_GEMM = "Cijk_Alik_Bljk_SB_MT128x64x16_MI32x32x2x1_SN_1LDSB0"
_STEPS = [[(_GEMM, 300.0)] * 6] * 8
_LIGHTNING = "[pl][profile]run_training_batch"


def _counted_op_ids(folder: Path, name: str) -> None:
    """Each range of ``name`` in the marker CSV given its own ``op_id``, counting up (emit_nvtx numbers every range)."""
    (csv,) = folder.glob("*_marker_api_trace.csv")
    k = iter(range(4, 10_000, 9))
    csv.write_text(re.sub(re.escape(f'"{name}"'), lambda _: f'"{name}, op_id = {next(k)}"', csv.read_text()))


def _report(tmp_path: Path, name: str, fmt: str):
    run = tmp_path / "run"
    if fmt == "rocpd":
        run.mkdir(parents=True)
        rocpdtrace.write(str(run / "results.db"), _STEPS, step_range=f"{name}, op_id = 4")
    else:
        rv.write(str(run), _STEPS, step_range=name, fmt="csv")
        _counted_op_ids(run, name)
    return fresh_report(tmp_path)


@pytest.mark.parametrize("fmt", ["csv", "rocpd"])
def test_lightnings_emit_nvtx_iterations_read_training_on_rocm(tmp_path: Path, fmt: str) -> None:
    """Fails on dbf6cf15: "GPU work of an unknown kind", steps not Lightning's iterations."""
    rep = _report(tmp_path, _LIGHTNING, fmt)
    (host,) = rep.hosts
    assert host.job["kind"] == "training", host.job["kind_evidence"]
    assert f"`{_LIGHTNING}`" in host.job["kind_evidence"], host.job["kind_evidence"]
    assert host.steps["source"] == "iteration_range" and host.steps["found"] == 8, host.steps
    assert not context_problems(rep)


def test_a_users_step_range_under_emit_nvtx_is_its_steps_on_rocm(tmp_path: Path) -> None:
    """``train_step, op_id = N`` ranges: 8 steps from the user's range, named without the suffix.  Fails on dbf6cf15
    (no step read from the ranges: each name its own)."""
    rep = _report(tmp_path, "train_step", "csv")
    (host,) = rep.hosts
    assert host.steps["source"] == "nvtx_range" and host.steps["found"] == 8, host.steps
    assert "op_id" not in host.steps["note"] and "op_id" not in host.job["summary"], host.steps["note"]
