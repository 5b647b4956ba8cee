"""GPU time no kernel family claimed, on the kept captures that run it (issue #37, h37-kernelfam).

``scripts/unclaimed_kernels.py`` measured, over every kept capture, the kept steps' kernel time of class "other" (no
family knows the kernel) and its largest kernels.  Each family below held at least 2% of some capture's GPU time as
"other" on main (``d49dbbf4``); its class now says what the kernel computes (truth from the library's source):

* ATen's ``multi_tensor_apply_kernel`` (the ``torch._foreach_*`` ops and fused optimizers: ``FusedAdamMathFunctor``)
  updates each element from its own gradient and states -- element-wise (``h200_jobs/torch_compile_train``);
* TF's ``tensorflow::functor::ApplyAdamKernel`` (training_ops_gpu.cu.cc) likewise (``demo_logs/ideal``);
* ATen's ``cunn_SoftMaxForward`` reduces each row to its max and sum of exponentials -- a reduction
  (``wild/timesformer_h100_video``: 44% of its kernel time);
* pooling (``max_pool_forward_nchw``, ``adaptive_average_pool``) reduces a window -- a reduction
  (``wild/cold_a100_alexnet``);
* cuDNN's ``nchwToNhwcKernel`` (mangled too) and MIOpen's ``batched_transpose_*`` move each element once, as do
  ATen's ``CatArrayBatchedCopy`` (``torch.cat``) and ``indexSelectLargeIndex`` -- element-wise traffic
  (``wild/ddp_a100_nccl``, ``wild/loader_pass_rtx5070ti``, ``wild/ddp_mi300x_nopool``, ``wild/hf_qwen_h100``);
* nvFuser names each kernel by its scheduler (``nvfuser_inner_persistent_f1_c1_r0_g2``: a normalization's row
  reduction; ``nvfuser_pointwise_...``: element-wise) (``wild/nvfuser_h200_first_call``: 31% "other" on main);
* cuDNN's batch-norm inference kernel, mangled (``_ZN5cudnn26bn_fw_inf_1C11_kernel_NCHW...``), applies stored
  statistics -- element-wise (``wild/loader_pass_rtx5070ti``).

Only the classes move: no kernel became GEMM work or left it, so the matrix-unit and precision readings (and the
savings' "matmul" pool) are main's -- the controls below check the matmul/conv class is unchanged.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import devices, frameworks
from tests.support.paths import DEMO_LOGS, FIXTURES
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"


def _classes(logdir, run) -> dict[str, float]:
    """The first host's kernel time per class, us per step (the report's ``kernel_classes``)."""
    h = run_report(logdir, run).hosts[0]
    return {c["class"]: c["us_per_step"] for c in h.kernel_classes}


def _share(classes: dict[str, float], cls: str) -> float:
    return classes.get(cls, 0.0) / sum(classes.values())


def _class_of(name: str) -> str:
    """A kernel name's class as the report reads a row of no op (``report.build.kernel_class_summary``)."""
    return devices.kernel_class(name, tensor_core=devices.tensor_core_one(name), tc_eligible=False,
                                elementwise=frameworks.elementwise_one(name), collective=False,
                                kind=frameworks.kernel_kind_one(name))


@pytest.mark.parametrize("logdir, run, cls, main_other, at_most, at_least, matmul_us", [
    # capture, the class that gains, main's "other" share, its bound now, the class's share now at least (above main's:
    # 0.30, 0.074, 0.015, 0.054, 0.144, 0.100, 0.094, 0.547, 0.014), and main's matmul/conv us per step (a control: no kernel
    # joins or leaves GEMM work)
    (FIXTURES / "h200_jobs", "torch_compile_train", "elementwise", 0.466, 0.01, 0.60, 71.529),
    (DEMO_LOGS, "ideal", "elementwise", 0.022, 0.001, 0.09, 5271.525),
    (WILD, "timesformer_h100_video", "reduction", 0.466, 0.03, 0.44, 54347.616),
    (WILD, "cold_a100_alexnet", "reduction", 0.120, 0.01, 0.12, 3569.0),
    (WILD, "ddp_a100_nccl", "elementwise", 0.120, 0.01, 0.20, 13668.754),
    (WILD, "loader_pass_rtx5070ti", "elementwise", 0.175, 0.01, 0.25, 8676.647),
    (WILD, "ddp_mi300x_nopool", "elementwise", 0.218, 0.01, 0.20, 19080.15),
    # hf_qwen_h100's step no longer holds the 509 kernels queued before the window (h37-loopstart): 16482.572 before
    (WILD, "hf_qwen_h100", "elementwise", 0.064, 0.01, 0.60, 11580.932),
    (WILD, "nvfuser_h200_first_call", "reduction", 0.307, 0.01, 0.15, 6443.354),
])
def test_unclaimed_time_now_has_its_family(logdir, run, cls, main_other, at_most, at_least, matmul_us):
    classes = _classes(logdir, run)
    assert _share(classes, "other") <= at_most < main_other
    assert _share(classes, cls) >= at_least
    assert classes["matmul/conv"] == pytest.approx(matmul_us, abs=0.01)


@pytest.mark.parametrize("name, cls", [
    # aten/src/ATen/native/cuda/ForeachReduceOp.cu: the foreach norm reduces each tensor to one value (clip_grad_norm_)
    ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
     "TensorListMetadata<1>, at::native::(anonymous namespace)::LpNormFunctor<float, (at::native::NormType)1, float, "
     "float>, float*, int>(at::native::(anonymous namespace)::TensorListMetadata<1>, ...)", "reduction"),
    # the fused Adam of the kept real-h100-torch/torch_compile_bf16 (18% of its kernel time "other" on main)
    ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
     "FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, "
     "(at::native::ADAM_MODE)1, false>, float const*, double, double, double, double, double, bool, float const*, "
     "float const*>(...)", "elementwise"),
    ("void soft_max_f32<true, 0, 0>(float const*)", "reduction"),  # llama.cpp's (wild/llamacpp_rocprof_r9700)
])
def test_kernel_names_of_the_new_families(name, cls):
    assert _class_of(name) == cls


@pytest.mark.parametrize("name", [
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, "
    "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
    "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*)",
    "_ZN5cudnn26bn_fw_inf_1C11_kernel_NCHWIffLb1ELi1EEEvT0_S1_17cudnnTensorStructPKT_S2_PS3_S2_PKS1_S8_S8_S8_S1_",
])
def test_control_the_new_families_claim_no_gemm_work(name):
    """A class is what the kernel computes; none of these joins the GEMM work the matrix-unit checks read."""
    assert not frameworks.gemm_kernel_one(name) and not devices.tensor_core_one(name)
