"""A library's NVTX is not the user's, and evaluation is not inference's name alone (issue #37 class 2, h37-nvtx22).

Nsight exports built with ``synthetic.nsysexport`` around the names the writers push, no other evidence of the job
(no ATen op range, generic GEMM kernels), truth by construction (the iterations and their period):

* DeepSpeed's ``instrument_w_nvtx`` (deepspeedai/DeepSpeed @edaa7221 ``deepspeed/utils/nvtx.py``: the decorated
  function's ``__qualname__``, in NVTX domain ``DeepSpeed`` where the ``nvtx`` package is installed, else the default
  domain): ``DeepSpeedEngine.forward`` / ``backward`` once a micro-batch (``runtime/engine.py``),
  ``DeepSpeedZeroOptimizer_Stage3.step`` once an iteration (``runtime/zero/stage3.py``).  Main called them "the
  user's NVTX ranges" and "the program's own ranges", and under gradient accumulation cut the steps on
  ``DeepSpeedEngine.forward``: 32 micro-batches of 8 iterations;
* a program's ``eval_step`` / ``validation_step`` / ``evaluate`` ranges with nothing that trains: main read "GPU work
  of an unknown kind".  Controls: the same names beside a backward pass (its ranges, or weight-gradient kernels) are
  training -- Lightning's ``fit`` validates between its training steps.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import assert_steps_right, first_host

#: Only the ranges speak: no ATen op ranges, no user step range.
_BARE = dict(step_range=None, autograd_nvtx=False)
_DS = ("DeepSpeedEngine.forward", "DeepSpeedEngine.backward", "DeepSpeedZeroOptimizer_Stage3.step")
#: cuDNN's weight-gradient convolution: a kernel only a backward pass runs
_WGRAD = ("sm80_xmma_wgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize64x32x64_stage5_warpsize2x2x1_g1"
          "_tensor16x8x16_kernel")
CASES = {
    "ds_default": dict(steps=8, extra_ranges=_DS),
    "ds_domain": dict(steps=8, extra_ranges=_DS, range_domain="DeepSpeed"),
    # gradient_accumulation_steps = 4: four forward/backward pairs, then the optimizer's step
    "ds_gas": dict(steps=8, ops=18, extra_ranges=_DS[:2] * 4 + _DS[2:]),
    "ds_gas_domain": dict(steps=8, ops=18, extra_ranges=_DS[:2] * 4 + _DS[2:], range_domain="DeepSpeed"),
    # the host runs code no event records after each step's sync, inside the optimizer's step: the GPU idles there
    "ds_idle": dict(steps=8, extra_ranges=_DS, untraced_ms=12.0),
    # one pass after 40 ms of set-up: the engine's ranges bound it (controls: main read it so too)
    "ds_one_pass": dict(steps=1, extra_ranges=_DS, setup_ms=40.0, setup_range="setup"),
    "ds_one_pass_domain": dict(steps=1, extra_ranges=_DS, setup_ms=40.0, setup_range="setup", range_domain="DeepSpeed"),
    # the user's own step range around DeepSpeed's: the user's marks the steps (control)
    "ds_user_step": dict(steps=8, extra_ranges=_DS, step_range="train_step {k}"),
    "eval_step": dict(steps=8, extra_ranges=("data", "eval_step")),
    "validation_step": dict(steps=8, extra_ranges=("validation_step",)),
    "evaluate": dict(steps=8, extra_ranges=("load", "evaluate", "metrics")),
    # controls: evaluation beside training
    "fit_validates": dict(steps=8, extra_ranges=("forward", "backward", "optimizer_step", "validation_step")),
    "eval_wgrad": dict(steps=8, extra_ranges=("data", "eval_step"), kernel=_WGRAD),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Each case's first host as ``report PATH`` reads it, with the export's truth."""
    d = tmp_path_factory.mktemp("library_nvtx")
    out = {}
    for name, kw in CASES.items():
        path = d / f"{name}.sqlite"
        truth = nx.write(str(path), nx.NsysJob(**{"ops": 9, **_BARE, **kw}))
        out[name] = (first_host(path), truth)
    return out


@pytest.mark.parametrize("case", ["ds_default", "ds_domain"])
def test_deepspeeds_ranges_are_deepspeeds_not_the_users(reports, case):
    host, truth = reports[case]
    job = host["job"]
    assert job["kind"] == "training"  # its ranges still say what ran
    assert "DeepSpeed's own NVTX ranges" in job["kind_evidence"]  # main: "the user's NVTX ranges name ..."
    assert "the user's" not in job["kind_evidence"]
    assert_steps_right(host, truth)


@pytest.mark.parametrize("case", ["ds_gas", "ds_gas_domain"])
def test_gradient_accumulation_steps_are_iterations_not_micro_batches(reports, case):
    host, truth = reports[case]
    assert_steps_right(host, truth)  # main: 32 steps cut on `DeepSpeedEngine.forward`, uneven (1.2 .. 3.5 ms)
    assert "DeepSpeedZeroOptimizer_Stage3.step" in host["steps"]["note"]


def test_host_time_findings_do_not_call_deepspeeds_ranges_the_programs(reports):
    host, _ = reports["ds_idle"]
    tables = [t for f in host["findings"] for t in f.get("evidence", [])
              if t.get("title", "").startswith("The program's own ranges")]
    named = {str(row[0]) for t in tables for row in t["rows"]}
    # main: "The program's own ranges in the gaps" held `DeepSpeedEngine.forward`
    assert not any(n.startswith("DeepSpeed") for n in named), named
    assert any(f["id"].startswith("step_gaps") for f in host["findings"])  # the idle is still found


@pytest.mark.parametrize("case", ["ds_one_pass", "ds_one_pass_domain"])
def test_control_one_pass_is_still_bounded_by_the_engines_ranges(reports, case):
    host, truth = reports[case]
    assert_steps_right(host, truth)  # the 40 ms set-up left out: the pass is the engine's forward to its optimizer's step


def test_control_the_users_step_range_marks_the_steps(reports):
    host, truth = reports["ds_user_step"]
    assert_steps_right(host, truth)
    assert "train_step" in host["steps"]["note"]


@pytest.mark.parametrize(("case", "word"), [("eval_step", "`eval_step`"), ("validation_step", "`validation_step`"),
                                            ("evaluate", "`evaluate`")])
def test_evaluation_with_nothing_that_trains_is_forward_passes(reports, case, word):
    host, truth = reports[case]
    job = host["job"]
    assert job["kind"] == "inference"  # main: unknown, "no backward pass, optimizer step or serving engine is named"
    assert word in job["kind_evidence"] and "evaluation" in job["kind_evidence"]
    assert_steps_right(host, truth)


@pytest.mark.parametrize("case", ["fit_validates", "eval_wgrad"])
def test_control_evaluation_beside_training_is_training(reports, case):
    host, truth = reports[case]
    assert host["job"]["kind"] == "training"
    assert_steps_right(host, truth)


@pytest.mark.parametrize(("name", "framework"), [
    ("DeepSpeedEngine.forward", True), ("DeepSpeedZeroOptimizer_Stage3.step", True),
    ("PartitionedParameterCoordinator.fetch_sub_module", True), ("AllGatherCoalescedHandle.wait", True),
    ("DeepSpeedZeRoOffload.setup_zero_stage3_hooks.<locals>._start_of_forward_hook", True),
    ("MiCS_Optimizer.allreduce_mics_shard_grads", True),
    ("Trainer.step", False), ("Model.forward", False), ("forward", False), ("DeepSpeed", False),
])
def test_deepspeed_qualnames(name, framework):
    assert nvtx.is_framework_range(name) is framework
    assert (nvtx.framework_range_writer(name) == "DeepSpeed") is framework


def test_deepspeeds_domain_names_its_generic_calls():
    # a wrapped call's qualname (``torch.cat``'s ``cat``) could be a program's own range: only the domain says whose it
    # is (its classless functions' own names: tests/job/test_deepspeed_functions.py, h37-zero12)
    assert nvtx.framework_range_writer("cat", "DeepSpeed") == "DeepSpeed"
    assert nvtx.framework_range_writer("cat") == ""


@pytest.mark.parametrize(("name", "step_end"), [
    ("DeepSpeedZeroOptimizer_Stage3.step", True), ("SuperOffloadOptimizer_Stage3.step", True),
    ("MiCS_Optimizer.step", True), ("DeepSpeedEngine.forward", False), ("DeepSpeedZeroOptimizer_Stage3.zero_grad", False),
    ("Optimizer.step", False), ("optimizer.step", False),
])
def test_the_iterations_end(name, step_end):
    assert nvtx.is_framework_step_end(name) is step_end


@pytest.mark.parametrize(("name", "evaluation"), [
    ("eval_step", True), ("evaluate", True), ("Evaluation", True), ("validation_step", True), ("validate", True),
    ("val_step", True), ("test_step", True),
    ("eval 3", True), ("evaluation loop", True),
    ("interval", False), ("retrieval", False), ("value", False), ("evalue", False), ("eval_backward", False),
    ("training_step", False), ("test", False), ("val", False),
    # nvFuser's C++ expression evaluator (wild/nvfuser_h200_gtest): an expression's evaluation, not a model's
    ("ExpressionEvaluator::evaluate", False), ("PrecomputedValues::Evaluate", False),
    ("PrecomputedValuess::Validate", False),
])
def test_evaluation_words(name, evaluation):
    assert nvtx.is_evaluation_range(name) is evaluation
