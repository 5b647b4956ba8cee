"""The program's own XPlane step marks name the job's steps to the job stage too (issue #37 class 2, h37-names70).

TensorFlow's ``tf.profiler.experimental.Trace('train', step_num=s, _r=1)`` and JAX's ``StepTraceAnnotation('train',
step_num=s)`` mark each step with ``_r`` and ``step_num`` among the host's events (``tensorflow.own_step_marks``), not
as NVTX ranges (``Trace.ranges`` is None in an XPlane capture), so the job stage never read their names: a TF forward
loop marked ``train`` read "no host event says what the GPU work was for", and a JAX forward marked ``train`` read
inference with the contradiction between the name and the work unsaid (h37-kind69 *Left* 1).  TensorFlow's recorded
ops are read first, as PyTorch's ATen ops are: TF records a training step's gradient ops beside its forward's
(``gradient_tape/...``, ``ReluGrad``, ``ResourceApplyAdam``), so ops recorded with none are a forward pass, and the
``train`` mark then is the contradiction the evidence says.  Truth by construction (``synthetic.tfcapture``,
``synthetic.jaxcapture``: what TensorFlow and jaxlib write for those calls).

Base dbf6cf15: the TF cases read "unknown" (low); the JAX forward's evidence never names its ``train`` marks; an eager
step whose backward shows only by its ops' types (``ReluGrad``, no ``gradient_tape/`` scope) read "unknown".
Controls: a TF training step (its ``gradient_tape/`` ops and ``ResourceApplyAdam``) stays training, high; a JAX
forward marked ``predict`` says no training name.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import jaxcapture as jc
from synthetic import kernels as K
from synthetic.tfcapture import A100, Capture, Op
from synthetic.xla_kernels import GEMM_BF16, TINY_EW, XlaKernel
from tb_gpu_advisor.frameworks import tensorflow
from tb_gpu_advisor.runtime.pipeline import analyze_host

STEPS = 10


def _write_tf(root: Path, mark: str, layer_ops) -> Path:
    """A TensorFlow custom loop of ``STEPS`` steps, each inside ``tf.profiler.experimental.Trace(mark, step_num=s,
    _r=1)`` around its ``FunctionRun``, running ``layer_ops`` of four dense layers."""
    cap = Capture(1, A100, marker="custom_loop", trace_name=mark)
    g, e = K.sized(K.GEMM_FP16_TC, 200), K.sized(K.EW_ADD_HALF, 18)
    ops = [Op("IteratorGetNext/_2:_Send", [], host_us=4, h2d_bytes=1 << 20)]
    for i in range(4):
        ops += layer_ops(f"model/dense_{i}", g, e)
    for _ in range(STEPS):
        cap.step([ops], input_wait_us=25, between_us=300)
    path = root / "worker0.xplane.pb"
    cap.finish().write(path)
    return path


def _write_jax(root: Path, mark: str) -> Path:
    """A JAX loop of ``STEPS`` jitted forward passes (four bf16 GEMMs, each with its ReLU fusion; their HLO holds no
    backward), each inside ``StepTraceAnnotation(mark, step_num=step)``."""
    cap = jc.JaxCapture(step_annotation=True, step_mark=mark, jitter=0.0, module="jit_forward", function="forward")
    kernels = []
    for i in range(4):
        kernels.append(XlaKernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
                                 "execute_segment_k_off_kernel__5x_cublas", f"cublas-lt-matmul.{i}",
                                 "jit(forward)/dot_general", 150.0, GEMM_BF16, "bf16"))
        kernels.append(XlaKernel("fusion_34", f"fusion.{34 + i}", "jit(forward)/max", 20.0, TINY_EW, "bf16"))
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    for _ in range(STEPS):
        cap.call(kernels, h2d_bytes=0, between_us=300.0)
    (path,) = jc.JaxScenario("fwd", cap.finish(), cap.truth("fwd", "forward loop", "trace_train")).write(root)
    return path


def _forward(s: str, g, e) -> list[Op]:
    return [Op(f"{s}/MatMul:MatMul", [g]), Op(f"{s}/BiasAdd:BiasAdd", [e]), Op(f"{s}/Relu:Relu", [e])]


def _eager_training(s: str, g, e) -> list[Op]:
    """A step run eagerly under a GradientTape: its backward's ops carry no scope, their types say what they are."""
    return [Op("MatMul:MatMul", [g]), Op("Relu:Relu", [e]), Op("ReluGrad:ReluGrad", [e]), Op("MatMul:MatMul", [g]),
            Op("BiasAddGrad:BiasAddGrad", [e])]


def _graph_training(s: str, g, e) -> list[Op]:
    grad = f"gradient_tape/{s}"
    return _forward(s, g, e) + [Op(f"{grad}/MatMul:MatMul", [g]), Op(f"{grad}/BiasAdd/BiasAddGrad:BiasAddGrad", [e]),
                                Op(f"Adam/update/{s}/ResourceApplyAdam:ResourceApplyAdam", [K.ADAM_F32])]


def _compiled(s: str, g, e) -> list[Op]:
    """An XLA cluster's run beside an op left outside it: the cluster's own ops (a backward's) are not recorded."""
    return [Op(f"{s}/cluster_0:_XlaRun", [g, e, g]), Op(f"{s}/Relu:Relu", [e])]


def _job(path: Path) -> dict:
    return analyze_host(SimpleNamespace(host="h", path=str(path))).job


def test_a_tf_forward_loop_marked_train_is_a_forward_pass_and_says_the_name(tmp_path: Path) -> None:
    job = _job(_write_tf(tmp_path, "train", _forward))
    assert (job["kind"], job["kind_confidence"]) == ("inference", "medium"), job["kind_evidence"]  # base: unknown
    ev = job["kind_evidence"]
    assert "TensorFlow ops ran but no backward pass" in ev
    assert "step marks name training steps (10 marks: `train`" in ev and "the recorded work does not" in ev


def test_a_tf_forward_loop_marked_predict_is_a_forward_pass(tmp_path: Path) -> None:
    job = _job(_write_tf(tmp_path, "predict", _forward))
    assert (job["kind"], job["kind_confidence"]) == ("inference", "medium"), job["kind_evidence"]  # base: unknown
    assert "training" not in job["kind_evidence"]


def test_an_eager_backward_shown_by_its_op_types_is_training(tmp_path: Path) -> None:
    job = _job(_write_tf(tmp_path, "train", _eager_training))
    assert (job["kind"], job["kind_confidence"]) == ("training", "high"), job["kind_evidence"]  # base: unknown
    assert "`ReluGrad:ReluGrad`" in job["kind_evidence"]


def test_a_compiled_cluster_hides_the_backward_so_the_mark_alone_says_training(tmp_path: Path) -> None:
    """Ops recorded beside an XLA cluster's run are no forward pass by lacking a backward: the cluster may hold it.
    The ``train`` mark is then the only word, medium (as an NVTX ``train_step`` alone, h37-kind69)."""
    job = _job(_write_tf(tmp_path, "train", _compiled))
    assert (job["kind"], job["kind_confidence"]) == ("training", "medium"), job["kind_evidence"]  # base: unknown
    assert "step marks name training steps" in job["kind_evidence"] and "name alone" in job["kind_evidence"]


def test_a_tf_training_step_stays_training_control(tmp_path: Path) -> None:
    job = _job(_write_tf(tmp_path, "train", _graph_training))
    assert (job["kind"], job["kind_confidence"]) == ("training", "high"), job["kind_evidence"]


@pytest.mark.parametrize("mark, said", [("train", True), ("predict", False)])
def test_a_jax_forward_marked_train_says_the_contradiction(tmp_path: Path, mark: str, said: bool) -> None:
    job = _job(_write_jax(tmp_path, mark))
    assert job["kind"] == "inference", job["kind_evidence"]  # the HLO decides: no backward in it
    ev = job["kind_evidence"]
    assert ("step marks name training steps" in ev and "the recorded work does not" in ev) is said, ev  # base: never


@pytest.mark.parametrize("name, training", [
    ("gradient_tape/model/dense/MatMul:MatMul", True), ("ReluGrad:ReluGrad", True), ("x/BiasAddGrad:BiasAddGrad", True),
    ("FusedBatchNormGradV3:FusedBatchNormGradV3", True), ("c/Conv2DBackpropFilter:Conv2DBackpropFilter", True),
    ("ResourceApplyAdam:ResourceApplyAdam", True), ("s/ResourceSparseApplyAdagradV2:ResourceSparseApplyAdagradV2", True),
    ("loss/StopGradient:StopGradient", False), ("PreventGradient:PreventGradient", False),
    ("BroadcastGradientArgs:BroadcastGradientArgs", False), ("model/dense/MatMul:MatMul", False)])
def test_the_op_types_only_training_runs(name: str, training: bool) -> None:
    assert tensorflow.is_training_event(name) is training


@pytest.mark.parametrize("name, recorded", [
    ("model/dense/MatMul:MatMul", True), ("Relu:Relu", True), ("cluster_0:_XlaRun", False),
    ("IteratorGetNext/_2:_Send", False), ("FunctionRun", False), ("IteratorGetNext:IteratorGetNext", False)])
def test_the_ops_recorded_one_by_one(name: str, recorded: bool) -> None:
    assert tensorflow.is_recorded_op(name) is recorded


def test_a_jax_loop_with_no_other_word_is_training_by_its_train_mark(tmp_path: Path) -> None:
    """Generated eager JAX (``jax_eager_ops``: no HLO, no op that says a pass) marked ``train``: the mark is the only
    word, so training by the step's name alone, medium -- the rule an NVTX ``train_step`` follows (h37-kind69).
    Base: "unknown"."""
    from synthetic.jaxcapture import jax_eager_ops

    (path,) = jax_eager_ops(num_steps=4, iterations=5).write(tmp_path)
    job = _job(path)
    assert (job["kind"], job["kind_confidence"]) == ("training", "medium"), job["kind_evidence"]
    assert "step marks name training steps (4 marks: `train`" in job["kind_evidence"]
    assert "name alone" in job["kind_evidence"]
