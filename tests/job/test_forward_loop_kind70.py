"""A training loop captured with no NVTX and no op ranges is never read as forward passes where its kernels show a
backward or an update by name or by structure (``job.kind.forward_loop_kind``; h37-gen70).

fwd69 read a repeated launch loop of matrix products with no gradient or optimizer kernel as inference.  A real
training step's backward is often generic by name: cuBLAS runs a product's data and weight gradients in kernels named
like the forward's (a language model under nvprof on a V100, ``tests/fixtures/wild/pyprof_lm_v100_nvprof``:
``volta_sgemm_*_tn`` forward, ``_nn`` and ``_nt`` backward, seven of each a step; an nvFuser step on an H200,
``nvfuser_h200_first_call``: nvjet ``TNN``, ``NTN``, ``NNT``; an FSDP step on an MI350X, ``fsdp_mi350x_kernel_trace``:
Tensile's ``Alik_Bljk``, ``Ailk_Bljk``, ``Ailk_Bjlk``), cuDNN's data gradient is ``dgrad`` (only its weight gradient
``wgrad`` was read), a per-parameter optimizer is a run of ``vectorized_elementwise_kernel``s, a compiled optimizer
``triton_for_fused_*``.  Each of those read inference on base dbf6cf15; truth by construction
(``synthetic.nsysexport.NsysJob.step_kernels``: a step's kernels in turn, no NVTX, no ops, as the real exports).
Controls: fwd69's real T1000 forward loop and a transformer's forward (two layouts, long elementwise runs between
its products) stay inference."""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor import devices
from tb_gpu_advisor.job import kind as job_kind
from tests.support.kernel_loops import loop_job, said

#: a cuBLAS product in each operand layout (cuBLAS's own names: ``volta_sgemm_128x64_tn`` ...)
SGEMM = {lay: f"volta_sgemm_128x64_{lay}" for lay in ("tn", "nn", "nt")}
RELU = ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::<unnamed>::launch_clamp_scalar("
        "at::TensorIteratorBase &)::[lambda() (instance 1)]>(int, T2, T3)")
ADD = ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::CUDAFunctor_add<float>, "
       "std::array<char *, (unsigned long)3>>(int, T2, T3)")
MUL = ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::AUnaryFunctor<float, float, float, "
       "at::native::binary_internal::MulFunctor<float>>, std::array<char *, (unsigned long)2>>(int, T2, T3)")
SUM = ("void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
       "at::native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) "
       "(instance 1)]>, unsigned int, float, (int)4, (int)4>>(T3)")
#: fwd69's real forward (ML-DL-Security's small CNN on a T1000: cuDNN's convolutions, a pool, a clamp, a product)
CNN_FORWARD = ("_5x_cudnn_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1",
               ("void at::native::<unnamed>::max_pool_forward_nchw<float, float>(int, const T1 *, long, long, long, "
                "int, int, int, int, int, int, int, int, int, int, T1 *, long *)"),
               "_5x_cudnn_volta_scudnn_128x32_relu_small_nn_v1", RELU, "volta_sgemm_32x32_sliced1x4_tn")


#: a three-layer MLP's step in cuBLAS's generic names: forward products (tn), the loss's gradient, the backward's
#: data and weight gradients (nn, nt; the first layer's data gradient not computed), an update by one kernel
_MLP_STEP = (SGEMM["tn"], RELU, SGEMM["tn"], RELU, SGEMM["tn"], SUM,
             SGEMM["nn"], SGEMM["nt"], MUL, SGEMM["nn"], SGEMM["nt"], MUL, SGEMM["nt"], ADD)


def test_generic_backward_gemms_in_three_layouts_are_no_forward_loop(tmp_path):
    """Each product's two gradients in the layouts the forward does not run: no forward passes (base: inference)."""
    job = loop_job(tmp_path, _MLP_STEP)
    assert job["kind"] != "inference", said(job)


def test_a_per_parameter_update_run_is_no_forward_loop(tmp_path):
    """A step whose products show two layouts only (a hand-written backward: ``grad @ W``, ``x.t().contiguous() @
    grad``) and whose update is SGD one parameter at a time (a multiply and an add per tensor, six tensors: 12
    elementwise kernels after the last product): no forward passes (base: inference)."""
    step = (SGEMM["tn"], RELU, SGEMM["tn"], RELU, SGEMM["tn"], SUM, SGEMM["nn"], SGEMM["nn"], MUL, SGEMM["nn"],
            SGEMM["nn"], MUL, SGEMM["nn"]) + (MUL, ADD) * 6
    job = loop_job(tmp_path, step)
    assert job["kind"] != "inference", said(job)


@pytest.mark.parametrize("backward", ["layouts", "templates"])
def test_a_compiled_training_step_is_no_forward_loop(tmp_path, backward):
    """A ``torch.compile``'d step with Inductor's names not descriptive (``triton_poi_0``...): its products extern
    cuBLAS calls in three layouts ("layouts"), or Triton templates no name reads as a product ("templates"), and its
    optimizer compiled to one foreach kernel (``triton_for_fused_2``): no forward passes (base: inference)."""
    gemms = ((nx.GEMM_BF16,) + nx.gradient_gemms(nx.GEMM_BF16) if backward == "layouts"
             else (nx.GEMM_BF16, "triton_tem_fused_mm_3", "triton_tem_fused_mm_4"))
    step = (gemms[0], "triton_poi_fused_0", gemms[0], "triton_red_fused_1", gemms[1], gemms[2], "triton_poi_fused_0",
            gemms[1], gemms[2], "triton_for_fused_2")
    job = loop_job(tmp_path, step)
    assert job["kind"] != "inference", said(job)


@pytest.mark.parametrize("library", ["cudnn", "miopen"])
def test_a_convolution_backward_by_its_data_gradient_is_no_forward_loop(tmp_path, library):
    """A CNN's step whose weight gradient runs in a generic cuDNN kernel (``scudnn_..._stridedB_splitK_..._nn``) and
    whose data gradient is cuDNN's ``dgrad`` (MIOpen's ``igemm_bwd``): no forward passes (base: inference)."""
    if library == "cudnn":
        grads = (("void cudnn::detail::dgrad_engine<float, 128, 6, 8, 3, 3, 5, false>(int, int, int, const float *, "
                  "int, const float *, int, float *, kernel_grad_params, unsigned long long, int, unsigned long long, "
                  "int, float, int, int, int)"),
                 "_5x_cudnn_volta_scudnn_128x64_stridedB_splitK_small_nn_v1")
    else:
        grads = (("igemm_bwd_gtcx2_nhwc_fp32_bx0_ex1_bt64x64x16_wt32x32x2_ws1x1_wr1x1_ta1x4x1x1_1x4x1x64_"
                  "tb1x4x1x1_1x4x1x64"), "_5x_cudnn_volta_scudnn_128x64_stridedB_splitK_small_nn_v1")
    job = loop_job(tmp_path, CNN_FORWARD + (SUM, SGEMM["nn"]) + grads + (ADD,))
    assert job["kind"] != "inference", said(job)


def test_control_the_real_cnn_forward_stays_inference(tmp_path):
    """Control (passes on base too): fwd69's real T1000 forward loop (cuDNN ``_nt``/``_nn`` tile names, a ``_tn``
    product) is forward passes."""
    job = loop_job(tmp_path, CNN_FORWARD)
    assert (job["kind"], job["kind_confidence"]) == ("inference", "medium"), said(job)


def test_control_a_transformer_forward_stays_inference(tmp_path):
    """Control (passes on base too): a transformer block's forward -- its linears ``_tn``, attention's second product
    ``_nn`` (two layouts), a norm, a softmax and residual adds between products (at most six kernels in a run) -- is
    forward passes, its runs of elementwise kernels no update."""
    norm = ("void at::native::<unnamed>::vectorized_layer_norm_kernel<float, float, (bool)0>(int, T2, const T1 *, "
            "const T1 *, const T1 *, T2 *, T2 *, T1 *)")
    softmax = "void at::native::<unnamed>::cunn_SoftMaxForward<(int)4, float, float, float, at::native::<unnamed>::SoftMaxForwardEpilogue>(T3 *, const T1 *, int)"
    block = (norm, SGEMM["tn"], MUL, SGEMM["tn"], softmax, SGEMM["nn"], SGEMM["tn"], ADD, norm, SGEMM["tn"], RELU,
             SGEMM["tn"], ADD)
    job = loop_job(tmp_path, block * 2 + (norm, MUL, ADD, RELU, ADD, MUL, SGEMM["tn"]))
    assert (job["kind"], job["kind_confidence"]) == ("inference", "medium"), said(job)


def test_control_a_language_model_forward_with_a_long_head_stays_inference(tmp_path):
    """Control (passes on base too): a language model's forward with the real runs between its products
    (``pyprof_lm_v100_nvprof``'s forward: 13 kernels before its first product, then 4, 3, 1, 7, 3, 5 between the
    next, a log-softmax after its last) -- one run twice the next-longest, none thrice -- is forward passes, no
    per-parameter update."""
    runs = (13, 4, 3, 1, 7, 3, 5)
    step = tuple(k for r in runs for k in (MUL, ADD) * (r // 2) + (ADD,) * (r % 2) + (SGEMM["tn"],)) + (ADD, MUL)
    job = loop_job(tmp_path, step)
    assert (job["kind"], job["kind_confidence"]) == ("inference", "medium"), said(job)


def test_control_cudnn_products_inside_a_forward_stay_inference(tmp_path):
    """Control (passes on base too): a DenseNet-121's forward on a T1000 (ML-DL-Security ``report3``, read locally)
    runs cuBLAS-named products inside cuDNN's convolutions -- ``volta_sgemm_*_nn`` (272), an FFT convolution's
    complex ``volta_gcgemm_32x32_nt`` (192), the classifier's ``_tn`` (8): three layouts, but a complex product is
    no model's operand and the rest lopsided, no product with its two gradients -- forward passes (an earlier
    draft of h37-gen70 read it as no forward loop)."""
    bn = ("void at::native::batch_norm_transform_input_kernel<float, float, float, (bool)0, int>(at::"
          "GenericPackedTensorAccessor<const T1, (unsigned long)3, at::DefaultPtrTraits, T5>)")
    conv = ("volta_sgemm_32x128_nn", bn, RELU, "volta_gcgemm_32x32_nt", bn, RELU)
    job = loop_job(tmp_path, conv * 4 + ("volta_sgemm_32x128_nn", bn, RELU, "volta_sgemm_32x32_sliced1x4_tn"))
    assert (job["kind"], job["kind_confidence"]) == ("inference", "medium"), said(job)


@pytest.mark.parametrize(("name", "layout"), [
    ("volta_sgemm_32x32_sliced1x4_nt", "nt"),  # pyprof_lm_v100_nvprof
    ("nvjet_tst_192x192_64x3_1x2_h_bz_coopB_NTN", "nt"),  # nvfuser_h200_first_call
    ("nvjet_tst_192x208_64x4_1x1_h_bz_coopB_bias_TNT", "tn"),  # shared nsys fsdp_mfu_before: a forward's output layout
    ("Cijk_Ailk_Bjlk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x64x128_MI32x32x1_SN_LDSB0", "nt"),  # fsdp_mi350x_kernel_trace
    ("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x32x256_MI16x16x1_SN_LDSB0", "tn"),
    (nx.GEMM_FP32, "tn"),
    ("_5x_cudnn_volta_scudnn_128x32_relu_small_nn_v1", ""),  # a convolution's tile order, no product's operands
    ("_5x_cudnn_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1", ""),
    ("volta_gcgemm_32x32_nt", ""),  # ML-DL-Security report3: an FFT convolution's complex product
])
def test_gemm_operand_layout_of_real_names(name, layout):
    """The operand layout a real capture's product names (base: no such reading)."""
    assert devices.gemm_operand_layout(name) == layout


@pytest.mark.parametrize(("name", "shown"), [
    ("bwd_kernel_fuse", True),  # fsdp_mi350x_kernel_trace
    ("void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<float, float, false>(float const*)", True),
    ("void at::native::(anonymous namespace)::cuComputeGradGammaBeta<float, float, false>(float const*)", True),
    ("igemm_bwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x128x32_wt16x64x4_ws1x1_wr1x1_ta1x4x1x1_1x8x1x32_mh_gkgs", True),  # mi210
    ("triton_for_fused_0", True),
    ("fused_adam_kernel", True),
    ("igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x256x32_wt16x64x4_ws1x1_wr1x2", False),
    (CNN_FORWARD[1], False),
    (RELU, False),
    ("lambda_kernel", False),
])
def test_backward_or_update_words_of_real_names(name, shown):
    """A backward's or an update's own word in a real kernel's name; a forward's none (base: no such reading)."""
    assert job_kind.backward_or_update_one(name) is shown
