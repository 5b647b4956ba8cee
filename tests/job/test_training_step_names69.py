"""A step range named after training makes the job training by its name, medium (issue #37 class 2, h37-kind69).

``train_step`` is the step range this tool's own capture advice asks a training job to write
(``frameworks.nvtx.STEP_RANGES``), yet an NVTX or roctx range of that name, with no backward or optimizer range beside
it, left the job's kind "unknown" on NVIDIA and AMD alike (h37-amd69 *Left* 3).  Each capture is built by
construction (``synthetic``'s Nsight and rocprof writers, generic GEMM kernels, no op recorded), so only the names can
say the kind: medium, never high, and the evidence says the name alone decided it.  Where the recorded ops show a
forward pass alone (Kineto, ATen ops with no ``*Backward`` node), the work decides, and the evidence says the name
contradicts it.  Controls: a bare ``step`` stays unknown, ``eval_step`` stays inference.

Base (bf937833): the Nsight and roctx ``train_step`` cases read "unknown"; the Kineto case's evidence never names the
``train_step`` ranges; ``nvtx.is_training_step_name`` did not exist.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from synthetic import rocproftrace as rp
from synthetic import torchtrace as tt
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_host


@pytest.mark.parametrize("name, says", [
    ("train_step", True), ("training_step 3", True), ("TrainStep", True), ("train/step_12", True),
    ("train_iter_7", True), ("train", True), ("train_function", True), ("rank1 ddp_train_step 2", True),
    ("trainer", False), ("train_loader", False), ("warmup_train_step", False), ("eval_step", False),
    ("step 3", False), ("constrain", False)])
def test_the_step_names_that_say_training(name, says):
    assert nvtx.is_training_step_name(name) is says


def _nsight(tmp_path, step_range: str) -> dict:
    path = tmp_path / "job.sqlite"
    nx.write(str(path), nx.NsysJob(steps=8, ops=9, step_range=step_range, autograd_nvtx=False))
    return first_host(path)["job"]


@pytest.mark.parametrize("step_range", ["train_step {k}", "TrainStep", "train/step_{k}"])
def test_an_nvtx_step_named_training_is_training_by_its_name(tmp_path, step_range):
    job = _nsight(tmp_path, step_range)
    assert (job["kind"], job["kind_confidence"]) == ("training", "medium"), job["kind_evidence"]  # base: unknown
    assert "name training steps" in job["kind_evidence"] and "name alone" in job["kind_evidence"]


@pytest.mark.parametrize("step_range, kind", [("step {k}", "inference"), ("eval_step {k}", "inference")])
def test_other_step_names_keep_their_kind(tmp_path, step_range, kind):
    """A name that says no training leaves the kind to the work: this loop's kernels are one GEMM, no gradient or
    optimizer kernel, so forward passes (h37-fwd69: ``job.kind.forward_loop_kind``), never training by the name."""
    job = _nsight(tmp_path, step_range)
    assert job["kind"] == kind and "name training steps" not in job["kind_evidence"], job["kind_evidence"]


def test_a_roctx_train_step_is_training_by_its_name(tmp_path):
    path = tmp_path / "results.json"
    rp.write(str(path), [[("Cijk_Ailk_Bljk_gemm", 0.5), ("elementwise_kernel", 0.1)] * 3 for _ in range(8)],
             step_range="train_step")
    job = first_host(path)["job"]
    assert (job["kind"], job["kind_confidence"]) == ("training", "medium"), job["kind_evidence"]  # base: unknown
    assert "roctx ranges name training steps" in job["kind_evidence"]


def test_a_forward_pass_named_train_step_says_the_contradiction(tmp_path):
    (path, *_) = tt.write_named_turns(str(tmp_path), "autocast_forward", name="train_step_{k}", steps=6)
    job = first_host(path)["job"]
    assert job["kind"] == "inference"  # the recorded work decides: ATen ops, no backward node
    assert "name training steps" in job["kind_evidence"] and "the recorded work does not" in job["kind_evidence"]
