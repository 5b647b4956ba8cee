"""GPU vendors: what their kernel and runtime names mean, and what each generation accelerates.

One module per vendor (``nvidia.py``) owns its libraries' kernel-name taxonomy (cuBLAS, cuDNN, CUTLASS, NCCL,
FlashAttention), its copy and sync names and its generations; ``codes.py`` holds the vendor-neutral codes.  The
array functions here take a list of *distinct* names (a plane's interned ``event_names``) and return one numpy
entry per name; callers index the result with the events' ``name_id`` column, so each distinct name is classified
once however many events use it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

import numpy as np

from tb_gpu_advisor.devices import amd, apple, ascend, ggml, intel, nccl_gpu, nvidia, triton, unknown, unnamed
from tb_gpu_advisor.devices.peaks import (Peak, inferred_model, said_name, table_model, memory_bandwidth, peak_flops, sixteen_bit_gain_bound, sm_count, vector_peak_flops, vector_peak_16,
                                          unit_name)
from tb_gpu_advisor.devices.codes import (ANON_NS, KERNEL_CLASSES, KIND_COLLECTIVE, KIND_D2D, KIND_D2H, KIND_H2D,
                                          KIND_KERNEL, KIND_MEMSET, KIND_OTHER_COPY, LOW_PRECISIONS, MAX_CLASSIFIED_CHARS, P_BF16,
                                          P_FP8, P_FP16, P_FP32, P_FP64, P_INT8, P_OTHER, P_TF32, P_UNKNOWN, PRECISIONS,
                                          TC_ALIGN_BYTES, function_parts, head, mangled_template_text,
                                          tc_align_elements, without_templates)

__all__ = ["KERNEL_CLASSES", "KIND_COLLECTIVE", "KIND_D2D", "KIND_D2H", "KIND_H2D", "KIND_KERNEL", "KIND_MEMSET", "KIND_OTHER_COPY",
           "LOW_PRECISIONS", "MAX_CLASSIFIED_CHARS", "P_BF16", "P_FP8", "P_FP16", "P_FP32", "P_FP64", "P_INT8", "P_OTHER",
           "P_TF32", "P_UNKNOWN", "PRECISIONS", "Peak", "REDUCTION", "VENDORS", "collective", "collective_type", "COLLECTIVE_TYPES", "copy_direction", "copy_host_memory", "event_host_memory", "copies_call_sync", "event_copy_directions", "recorded_kinds", "RECORDED_NAME_ONLY", "RECORDED_KERNEL", "RECORDED_TRANSFER", "RECORDED_FILL", "blit_copy_kind", "is_copy_call", "code", "device_kind",
           "autotune_kernel_one", "gemm_kernel", "gemm_kernel_one", "graph_switch_us", "gradient_kernel_one", "has_bf16", "integer_data", "has_matrix_units", "has_tf32", "head", "is_blocking_call", "is_async_fill", "is_async_copy", "is_graph_launch", "is_graph_instantiate", "grid_in_work_items", "is_alloc_call", "is_pinned_alloc_call", "is_any_free_call", "call_base_name", "is_free_call", "is_driver_os_call", "is_init_call", "is_teardown_call", "TEARDOWN_CALLS", "is_launch_call", "is_module_launch", "is_runtime_call", "CAPTURE_BEGIN", "CAPTURE_END", "is_sync_call", "kernel_class", "kind_one", "matrix_unit_claimed_one", "matrix_unit_unknown_one", "own_convolution_one", "library_scope_one", "depthwise_one", "direct_convolution_one", "fewer_multiplies", "fewer_multiplies_one", "PAGE_MIGRATION", "page_migration", "UM_PREFETCH", "managed_migration", "memory_bandwidth", "normalization_one", "not_gemm_one", "peak_flops", "vector_peak_flops", "vector_peak_16", "sixteen_bit_gain_bound", "precision", "precision_one", "PINNED_ASYNC_UPLOADS", "PINNED_ASYNC_UPLOADS_BUT_SMALL",
           "short_kernel_name", "tensor_core", "tensor_core_one", "vendor", "vendor_of", "vendor_of_calls", "vendor_of_frames", "vendor_called", "vendor_shown", "vendor_known", "UNKNOWN", "vendor_of_backend", "vendor_code", "arch_label", "attention_helper_one", "words", "VENDORS", "link_bandwidth", "PCIE_BANDWIDTH", "host_link", "HOST_LINK_ASSUMED", "MEASURED_LINK", "MEASURED_LINK_AT_LEAST", "ASSUMED_LINK", "SHARED_LINK", "is_lookup_call", "is_own_time_call", "is_per_thread_call", "DEFAULT_STREAM_HANDLES", "update_kernel_one",
           "sm_count", "TC_ALIGN_BYTES", "tc_align_elements", "unit_name", "inferred_model", "said_name", "table_model"]

#: The vendors whose names are known, in the order they are asked (NVIDIA last: a GPU no vendor claims is read as
#: NVIDIA's, the profilers' default).  Each module gives the same interface: ``is_device``, ``matrix_unit_one``,
#: ``precision_one``, ``gemm_kernel_one``, ``gradient_kernel_one``, ``attention_helper_one``, ``arch_label``,
#: ``has_matrix_units``, ``has_tf32_on``, ``has_bf16_on``, ``link_bandwidth``, ``words``, ``TERMS``, ``FIXES`` and
#: its call names.  Every question below asks them in turn.
#: ``unnamed``: a device whose build the capture does not name but shows is no CUDA device (a snapshot on no null
#: stream, ``formats.snapshot.reader._vendor``); named by no device, frame or call, it is before NVIDIA, the default.
#: ``unknown``: a GPU whose reader found no vendor's word in the file (``unknown.GPU_NAME``, h37-vendor64): named by
#: its reader, never by a model's name.  ``nccl_gpu``: one whose file's only vendor word is NCCL's (NVIDIA's or AMD's,
#: not known which: ``nccl_gpu.GPU_NAME``), named by its reader too.
VENDORS = (amd, intel, apple, ascend, unnamed, nccl_gpu, unknown, nvidia)


@functools.lru_cache(maxsize=65536)  # a pure function of the name, asked by several classifiers (prof62)
def attention_helper_one(name: str) -> bool:
    """A fused-attention library's helper kernel (a row-wise dot, a cast, a clear around the attention backward:
    ``flash_bwd_dot_do_o_kernel``, ``FmhaBwdConvertQGradKernel``): its family's prefix says attention, the rest of its
    name says it runs no matmul.  Asked of every vendor: one vendor's families match another's names (``fmha``)."""
    return any(v.attention_helper_one(name) for v in VENDORS) or triton.attention_helper_one(name)


@functools.lru_cache(maxsize=65536)  # a pure function of the name, asked by several classifiers (prof62)
def tensor_core_one(name: str) -> bool:
    """The kernel runs on the GPU's matrix units (NVIDIA Tensor Cores, AMD Matrix Cores), by name: a vendor library's
    family, or a Triton ``tl.dot`` kernel whose name gives a 16-bit or narrower dtype (``devices.triton``).  Not a
    MIOpen direct convolution (``amd.direct_convolution_one``): NVIDIA's ``conv1x1`` fragment (cuDNN's HMMA family)
    read ``MIOpenConv1x1``, an OpenCL kernel on the vector ALUs, as Tensor Core work (h37-flops68b), and
    ``miopenGcnAsmConv1x1U``, a GCN assembly one (``amd.vector_alu_convolution_one``, h37-conv69)."""
    if (attention_helper_one(name) or nvidia.data_movement_one(name) or amd.direct_convolution_one(name)
            or amd.vector_alu_convolution_one(name)):
        return False
    return any(v.matrix_unit_one(name) for v in VENDORS) or _dot_on_matrix_units(name) or ggml.matrix_unit_one(name)


def _dot_on_matrix_units(name: str) -> bool:
    """A Triton ``tl.dot`` kernel (``triton.dot_kernel_one``) of a dtype every matrix unit takes (16 bits or fewer):
    Triton lowers such a dot to ``mma``/``wgmma``/MFMA whatever the GPU (only an fp32 dot may stay on the CUDA cores)."""
    return triton.dot_kernel_one(name) and (PRECISIONS[precision_one(name)] in LOW_PRECISIONS
                                            or triton.quantized_dot_one(name))


def matrix_unit_unknown_one(name: str) -> bool:
    """Whether the kernel runs on matrix units is unknown: its name claims them (a program's own WMMA / MMA kernel,
    ``gemm_tensorcore``) but is no vendor library's family, or it is a Triton ``tl.dot`` kernel whose name gives no
    dtype of 16 bits or fewer (``attn_fwd``, ``fused_moe_kernel``: fp32 dots may run either way) -- only its
    instructions could tell, so the Tensor Core rules neither count it as using them nor as missing them."""
    return (nvidia.tensor_core_claimed_one(name) or (triton.dot_kernel_one(name) and not _dot_on_matrix_units(name))
            or ggml.matrix_unit_unknown_one(name))


def matrix_unit_claimed_one(name: str) -> bool:
    """A kernel of no library family whose name claims the matrix units (a program's own WMMA / MMA kernel)."""
    return nvidia.tensor_core_claimed_one(name)


def driver_thread(name: str) -> bool:
    """A thread a GPU driver starts in a process once it initialises there (NVIDIA's ``cuda-EvtHandlr``): the process
    used the GPU's runtime, whether or not the profiler traced it."""
    return nvidia.driver_thread_one(name)


@functools.lru_cache(maxsize=65536)  # a pure function of the name, asked by several classifiers (prof62)
def precision_one(name: str) -> int:
    """Precision code of one kernel name: its dtype words, else what its library's naming says (:func:`_named_precision`),
    an 8-bit integer type only where the kernel computes in it (:func:`integer_arithmetic_one`).

    Why: an 8-bit integer type names a precision of arithmetic only in the kernels that multiply in it (int8 GEMMs,
    convolutions and attention on the matrix units, llama.cpp's int8 dot products) and the quantizers that make their
    operands.  Anywhere else it is the type of the bytes moved -- a ``uint8`` image, a mask, random bytes, fp8 values
    carried as ``unsigned char``, a ``char*`` argument -- and says nothing of the arithmetic: main read
    ``distribution_elementwise_grid_stride_kernel<... unsigned char ...>`` (``aten::random_`` of a uint8 tensor) and
    ``FillFunctor<unsigned char>`` as int8, and a fp32 model's headline said "x% 8-bit" (h37-survey44).  Such a
    kernel's precision is unknown, as a ``FillFunctor<unsigned short>``'s already is: no share counts it either way."""
    p = _named_precision(name)
    return P_UNKNOWN if p == P_INT8 and not integer_arithmetic_one(name) else p


def integer_data_one(name: str) -> bool:
    """The kernel's name types its data as an 8-bit integer it does no arithmetic in (:func:`precision_one`'s unknown
    precision of ``random_from_to_kernel<unsigned char>``, ``BitwiseOrFunctor<unsigned char>``): the bytes' type is
    known, the arithmetic's is not -- there is none to run in 16 bits.  What the precision card says of a window of
    such kernels alone, where "no dtype known" denied the type its names give (h37-onepass:
    wild/rocprof_mxfp4_setup_gfx950, an MXFP4 benchmark's packing of random bytes)."""
    return _named_precision(name) == P_INT8 and not integer_arithmetic_one(name)


def integer_data(names: list[str]) -> np.ndarray:
    """Bool per name: :func:`integer_data_one`."""
    return np.fromiter((integer_data_one(n) for n in names), dtype=bool, count=len(names))


def integer_arithmetic_one(name: str) -> bool:
    """The kernel computes in the integer type its name gives: a GEMM / convolution / attention family of any vendor
    (``gemm_kernel_one``, the matrix units' families, a program's own kernel claiming them), a kernel whose own
    function names a matrix product (``nvidia.own_product_one``: llama.cpp's ``mul_mat_vec_q``), a quantizer (its output
    is the integer GEMM's operand: ``nvidia.quantize_one``) or a collective (its type is what it reduces).  Not
    ``tensor_core_one``: a Triton dot's answer there asks this kernel's precision."""
    return (gemm_kernel_one(name) or any(v.matrix_unit_one(name) for v in VENDORS) or matrix_unit_claimed_one(name)
            or nvidia.own_product_one(name) or nvidia.quantize_one(name) or nvidia.collective_one(name))


def _named_precision(name: str) -> int:
    """Precision code of one kernel name by its dtype words, else by what its library's naming says.

    The generic dtype words (NVIDIA's module reads them) come before a library's own letters, except a plain fp32
    word: a C++ ``float`` in a library's GEMM is as often its accumulator as its input (Composable Kernel's
    ``ck::f8_fnuz_t, ck::f8_fnuz_t, float, float``), so the library's own input type, where it names one, wins."""
    own = ggml.precision(name)  # ggml's int8 products: their only dtype words are a byte pointer and a float output
    if own is not None:
        return own
    quantized = amd.aiter_asm_input(name)  # its output type is named first (``fmoe_bf16_pertokenFp8_...``)
    if quantized is not None:
        return quantized
    query = amd.vllm_attention_input(name)  # the query's type, before the KV cache's (widened to it for the MFMAs)
    if query is not None:
        return precision_one(query)
    p = nvidia.precision_one(name)
    if p not in (P_UNKNOWN, P_FP32):
        return p
    q = amd.precision_one(name)
    return q if q != P_UNKNOWN else p if p != P_UNKNOWN else _mangled_precision(name)


def _mangled_precision(name: str) -> int:
    """An Itanium-mangled kernel's precision read as its demangled twin's would be: by its template arguments' element
    types (``codes.mangled_template_text``: ``_ZN8internal5gemvx6kernelIiiffff...`` is ``kernel<int, int, float, float,
    ...>``, fp32).  Why: the element types of a mangled name are letters (``f``) and length-prefixed names
    (``6__half``, ``13__nv_bfloat16``) no dtype word matches, so a trace that keeps symbols undemangled read "unknown"
    where its demangled twin read its type (h37-kernelfam3 *Left*).  Only where the mangled name itself told nothing."""
    text = mangled_template_text(name)
    return _named_precision(text) if text else P_UNKNOWN


#: The words by which any vendor's families name a convolution generically (NVIDIA's ``convolution``, ``conv2d``,
#: ``conv3d``; AMD's ``convolution``), as against a library's own names for its convolutions (cuDNN's
#: ``implicit_convolve_sgemm``, ``xmma_fprop``; CK's and MIOpen's ``conv_fwd``, ``naive_conv_``, ``MIOpenConv1x1``).
_GENERIC_CONV = re.compile(r"convolution|conv[23]d", re.I)
#: Any convolution word (``conv``, ``convolve``, ``convolution``, ``conv2d``; ``Conv`` in camel case) as a word of its
#: own -- not the head of ``convert`` (a cast) or ``convex``: in a scope no library owns, every such word is the
#: program's own.
_ANY_CONV = re.compile(r"(?:(?<![A-Za-z])[Cc]|(?<=[a-z])C)onv(?:olution|olve)?(?:[123][dD])?(?![a-z])")
#: The namespaces of the frameworks' own kernels, every build's (no vendor's): ATen and c10 (``at::native::``; the
#: ops' own ``aten::`` and ``torch::``, where a capture names its device events by their op), Caffe2, TensorFlow and
#: its Eigen (``tensorflow::``, ``Eigen::``), XLA and its stream executor, ONNX Runtime, PaddlePaddle (``phi::``,
#: ``paddle::``), MXNet (``mxnet::``, ``mshadow::``), FBGEMM.  Exact namespaces, read as written: a program's
#: ``attention::`` or ``Atlas::`` is no ATen.
_FRAMEWORK_SCOPES = frozenset({"at", "aten", "torch", "c10", "caffe2", "tensorflow", "Eigen", "xla", "stream_executor",
                               "onnxruntime", "phi", "paddle", "mxnet", "mshadow", "fbgemm_gpu"})


def library_scope_one(name: str) -> bool:
    """The kernel's own function lies in a known library's scope: its outermost namespace (``codes.function_parts``;
    C++'s unnamed namespace dropped) is a framework's (:data:`_FRAMEWORK_SCOPES`) or opens as a vendor library's
    (``LIBRARY_SCOPES`` of each vendor: ``cudnn::``, ``cutlass_cudnn_train::``, ``miopen::``), or -- a global
    kernel -- its one name opens with a vendor library's prefix (``cutlass_tensorop_...``, ``MIOpenConv1x1``,
    ``Cijk_...``).  Why: a kernel is a library's only where its name is in the library's scope; a name in any other
    namespace is the program's own, whatever words it uses (h37-huntn67)."""
    parts = function_parts(head(name))
    if not parts:
        return False
    if len(parts) > 1 and parts[0] in _FRAMEWORK_SCOPES:
        return True
    return any(p.match(parts[0]) for v in VENDORS if (p := getattr(v, "LIBRARY_SCOPES", None)) is not None)


@functools.lru_cache(maxsize=65536)
def own_convolution_one(name: str) -> bool:
    """A program's own kernel named for a convolution: in no library's scope (:func:`library_scope_one`), and its
    only GEMM evidence is a convolution word -- with that word blanked from its own function's parts
    (``codes.function_parts``), no vendor's family claims the name.  The word is any convolution word
    (:data:`_ANY_CONV`) where the kernel has a namespace of its own (``mylib::convolution``,
    ``myproj::conv2d_kernel``, ``myproj::naive_conv_fwd``), only a generic one (:data:`_GENERIC_CONV`) for a free
    function of the global namespace, which the libraries' own global kernels share (MIOpen's ``naive_conv_fwd_*``,
    CK's ``kernel_grouped_conv_fwd_*``, ``gridwise_convolution_implicit_gemm_*`` keep their words).

    Why: a convolution word proves a library's convolution -- work the matrix units run in 16 bits -- only inside a
    library's names.  A program's own ``convolution`` is as often an image filter as a network's layer, and what
    instructions it runs is the program's code, not a precision switch: che30122/opensift's SIFT blur
    ``convolution(cv::cuda::PtrStepSz<float>, cv::cuda::PtrStepSz<double>, ...)`` -- a one-channel Gaussian stencil
    on an RTX 3080, no GEMM form, no library call -- was read as Tensor-Core-eligible, and ``tensor_core_unused`` went
    critical with bf16 and cuBLAS TF32 fixes it cannot take (survey h37-huntn66); the same kernel in a namespace of
    the program's (``mylib::convolution``) still was (h37-huntn67).  A ``gemm``/``matmul`` name stays a matrix
    product whoever wrote it."""
    parts = function_parts(head(name))
    if not parts or library_scope_one(name):
        return False
    word = _ANY_CONV if len(parts) > 1 else _GENERIC_CONV
    own = " ".join(parts)
    if not word.search(own):
        return False
    rest = word.sub(" ", own)
    return not any(v.gemm_kernel_one(rest) for v in VENDORS)


#: A depthwise convolution by its own function's name, any vendor's or framework's: ATen's
#: ``conv_depthwise2d_forward_kernel`` / ``conv_depthwise3d_cuda_kernel`` and their gradients, TensorFlow's
#: ``DepthwiseConv2dGPUKernelNHWC`` / ``DepthwiseConv2dBackpropFilterGPUKernel*``, a library's or a program's
#: ``depthwise_conv*`` / ``dwconv*``.
_DEPTHWISE = re.compile(r"depthwise|(?<![a-z])dw_?conv", re.IGNORECASE)


@functools.lru_cache(maxsize=65536)
def depthwise_one(name: str) -> bool:
    """A depthwise convolution kernel (:data:`_DEPTHWISE` in its own function's parts, ``codes.function_parts``: not
    a word of its template arguments).  Why no matrix-unit work: each output channel is one input channel's
    K x K window times its own K x K filter -- no sum across channels, so no GEMM whose inner dimension a Tensor
    Core or MFMA tile could fill (K*K = 9 multiply-adds per output against a tile's 16+); its time is the memory's.
    ATen's and TensorFlow's own depthwise kernels run on the CUDA cores.  TensorFlow's names matched NVIDIA's generic
    ``conv2d``: a depthwise layer (MobileNet's, ConvNeXt's) in fp32 was Tensor-Core-eligible work for
    ``tensor_core_unused`` and part of the matmul/conv kernel time MFU's coverage is of (h37-huntn67).  A kernel of a
    Tensor Core family keeps that reading (``tensor_core_one``): its name says what it runs on."""
    return bool(_DEPTHWISE.search(" ".join(function_parts(head(name)))))


def direct_convolution_one(name: str) -> bool:
    """A library's direct convolution kernel that claims no matrix unit (``nvidia.direct_convolution_one``: cuDNN's
    ``conv2d_grouped_direct_kernel``, ``dgrad2d_``/``wgrad2d_grouped_direct_kernel``).  Why no GEMM: NVIDIA's generic
    ``conv2d`` made cuDNN's grouped direct kernel Tensor-Core-eligible work, so a 16-bit depthwise layer run by it was
    "16-bit MatMul/Conv kernels that miss the Tensor Cores" and its time MFU's matmul/conv kernel time, though the
    kernel loops over each output's window on the CUDA cores whatever its dtype or dimensions (h37-flops68).  A kernel
    whose name says its engine runs on the Tensor Cores (``xmma``, ``hmma``, ``implicit_gemm``) keeps that reading.
    AMD's: MIOpen's ``naive_conv_*`` and OpenCL direct solvers (``amd.direct_convolution_one``: ``MIOpenConvUni``,
    ``MIOpenCvD3x3_WSR0``), vector-ALU loops; CK's ``kernel_grouped_conv_fwd_xdl*`` (MFMA) stays matrix work."""
    return nvidia.direct_convolution_one(name) or amd.direct_convolution_one(name)


@functools.lru_cache(maxsize=65536)
def fewer_multiplies_one(name: str) -> bool:
    """A convolution kernel of an algorithm that multiplies less than the direct count -- Winograd's, an FFT's
    (``nvidia.fewer_multiplies_one``: cuDNN's; ``amd.fewer_multiplies_one``: MIOpen's) -- on whatever units it runs.

    Why: a convolution's FLOPs are its op's, the direct count (``frameworks.aten_flops``: 2 x outputs x window x
    channels), and rightly so in MFU -- they are the model's work.  But a Winograd F(4x4, 3x3) tile does 4x fewer
    multiplies than that count (F(2x2, 3x3) 2.25x, MIOpen's F(3, 2) 2.25x in 2-D), an FFT fewer still for large
    windows: the direct FLOPs over its kernels' time may exceed the units' peak with no kernel beating it, so that
    peak bounds such a row's rate from below only (``metrics.flops._rooflines``), never from above."""
    return nvidia.fewer_multiplies_one(name) or amd.fewer_multiplies_one(name)


def fewer_multiplies(names: list[str]) -> np.ndarray:
    """Bool per name: :func:`fewer_multiplies_one`."""
    return np.fromiter((fewer_multiplies_one(n) for n in names), dtype=bool, count=len(names))


@functools.lru_cache(maxsize=65536)  # a pure function of the name, asked by several classifiers (prof62)
def gemm_kernel_one(name: str) -> bool:
    """A matmul/convolution kernel by its library's naming (any vendor), not an attention helper, a kernel whose own
    function moves data (``nvidia.data_movement_one``: a transpose inside a GEMM library's namespace), cuBLAS's
    k = 1 GEMM (``nvidia.outer_product_one``: an outer product, nothing to accumulate -- element-wise work; HTA's
    inference_rank_1 was told to pad its fp16 dims to 8 for the Tensor Cores, h37-kernelfam2) nor a matrix x vector
    product (:func:`matrix_vector_one`: the memory's time, no matrix unit's -- vLLM's ROCm ``LLGemm1_kernel`` says
    "Gemm" in its name, which ROCm's GEMM pattern read as matrix-unit work, h37-review26), a program's own
    convolution (:func:`own_convolution_one`), a depthwise convolution (:func:`depthwise_one`) nor a direct one
    (:func:`direct_convolution_one`)."""
    return ((any(v.gemm_kernel_one(name) for v in VENDORS) or triton.dot_kernel_one(name)
             or ggml.matrix_product_one(name))
            and not attention_helper_one(name) and not nvidia.data_movement_one(name)
            and not nvidia.outer_product_one(name) and not matrix_vector_one(name) and not own_convolution_one(name)
            and not depthwise_one(name) and not direct_convolution_one(name))


def library_kernel_one(name: str) -> bool:
    """A kernel of a math library the program calls -- a GEMM, convolution or fused attention of any vendor's family
    (cuBLAS, cuDNN, CUTLASS; rocBLAS, hipBLASLt, MIOpen, Composable Kernel; XLA's GEMM fusions), a matrix x vector
    product (:func:`matrix_vector_one`) or a CUB/Thrust primitive -- whose grid the library sizes from the shapes of
    each call; not a Triton kernel, whose grid is its caller's ``grid=``.

    Why: ``small_grid``'s fix for a launch the program sizes itself ("launch at least one thread block per SM") was
    told beside cuBLAS's kernels, which no user relaunches: their grids change only with the calls -- the shapes and
    batch that reach the library (h37-words32)."""
    if triton.dot_kernel_one(name) or own_convolution_one(name):  # the program's own kernel, whose grid it sizes
        return False
    return any(v.gemm_kernel_one(name) for v in VENDORS) or matrix_vector_one(name) or nvidia.not_gemm_one(name)


#: Softmax kernels by name, any vendor: ATen's own (``cunn_SoftMaxForward``/``Backward``,
#: ``softmax_warp_forward``/``backward``, the same names hipified on ROCm), cuDNN's and MIOpen's (``softmax_fw``,
#: ``SoftmaxForward``), XLA and Inductor fusions that name it (``triton_per_fused__softmax_0``).  Not log-softmax
#: (a loss's, over classes): ATen's ``cunn_SoftMaxForward<..., LogSoftMaxForwardEpilogue>`` says so in its
#: template, ``log_softmax`` in an op's name.
#: Not a router's softmax fused with its top-k over the experts either (vLLM's ``topkGatingSoftmax``, the kernel of
#: its ``topk_softmax`` op): it reads [tokens, experts] logits and writes k picks per token, no score matrix between
#: two matmuls.
_SOFTMAX = re.compile(r"soft_?max", re.I)
_LOG_SOFTMAX = re.compile(r"log_?soft_?max", re.I)
_ROUTER_SOFTMAX = re.compile(r"top_?k|gating", re.I)
#: A softmax's gradient where its name says so without ``backward`` (cuDNN's and TensorFlow's short spellings:
#: ``softmax_bw``, ``SoftmaxGrad``); ATen's, MIOpen's and Inductor's say ``backward`` (:func:`gradient_kernel_one`).
_SOFTMAX_GRAD = re.compile(r"soft_?max_?(?:bwd?|grad)", re.I)


def softmax_one(name: str) -> bool:
    """A kernel computing a softmax on its own (not log-softmax; not a fused attention or GEMM kernel that names
    its softmax in a template argument; not a router's fused softmax and top-k)."""
    return (bool(_SOFTMAX.search(name)) and not _LOG_SOFTMAX.search(name) and not _ROUTER_SOFTMAX.search(name)
            and not gemm_kernel_one(name) and not attention_helper_one(name))


def softmax_backward_one(name: str) -> bool:
    """A softmax kernel of the backward pass (``cunn_SoftMaxBackward``, ``softmax_warp_backward``,
    ``triton_..._softmax_backward_data_0``, ``softmax_bw``).  Why: eager attention in training runs matmul ->
    softmax -> matmul twice a layer, once each way; the count of layers is the forward's."""
    return softmax_one(name) and (gradient_kernel_one(name) or bool(_SOFTMAX_GRAD.search(name)))


def softmax(names: list[str]) -> np.ndarray:
    """Bool per name: :func:`softmax_one`."""
    return np.fromiter((softmax_one(n) for n in names), dtype=bool, count=len(names))


def softmax_backward(names: list[str]) -> np.ndarray:
    """Bool per name: :func:`softmax_backward_one`."""
    return np.fromiter((softmax_backward_one(n) for n in names), dtype=bool, count=len(names))


#: A framework's or compiler's own gradient kernels say so on any vendor: ATen's ``batch_norm_backward_kernel``,
#: ``max_pool_backward_nchw``, ``mse_backward_cuda_kernel``; Inductor's ``triton_..._backward_0``; FlashAttention's
#: and Composable Kernel's attention backward (``flash_bwd_...``, ``fmha_bwd``, ``FmhaBwd``); TensorFlow's gradient
#: kernels, named for their ``...Grad`` op (``tensorflow::functor::ReluGradHalfKernelVector``,
#: ``tensorflow::BiasGradNHWC_SharedAtomics``: the word is TF's own, so it is read case-sensitively in TF's namespace);
#: an optimizer's update, by its functor's name (ATen's ``FusedAdamMathFunctor``, ``FusedSgdMathFunctor``; Apex's and
#: DeepSpeed's ``AdamFunctor``, ``LAMBStage1Functor``, ``SGDFunctor``), and AMP's gradient-scaler kernels
#: (``amp_update_scale_cuda_kernel``, ``_amp_foreach_non_finite_check_and_unscale_cuda_kernel``) -- a step that
#: updates weights is training's, as a backward is.
_GRADIENT = re.compile(r"(?i:backward|(?:flash|fmha|attn|attention)_?bwd)|\btensorflow::[\w:]*?Grad(?![a-z])|"
                       r"Fused(?:Adam|Sgd)|\b(?:Adam|AdamW|Adagrad|LAMBStage\d|Lamb|Novograd|SGD|Sgd|Lion)\w*Functor|"
                       r"amp_update_scale|non_finite_check_and_unscale")
#: The kernels of an update whose functor says no optimizer by its name: ATen's ``_foreach_*`` ops (PyTorch's default
#: multi-tensor Adam runs its update as ``multi_tensor_apply_kernel<..., BinaryOpListAlphaFunctor ...>``), which an
#: inference pass has no use for -- never read as a gradient (a foreach op is no backward by itself), but a loop that
#: runs one is not read as forward passes alone (``job.kind``).
_MULTI_TENSOR = re.compile(r"\bmulti_tensor_apply")


def update_kernel_one(name: str) -> bool:
    """A kernel of a gradient or a weight update: :func:`gradient_kernel_one`, or a multi-tensor kernel
    (:data:`_MULTI_TENSOR`) an optimizer runs.  Why: a kernel loop with none of them computes forward passes alone."""
    return gradient_kernel_one(name) or bool(_MULTI_TENSOR.search(head(name)))


#: Words of a backward or an update weaker than :data:`_GRADIENT`'s, which a training step's library kernels carry
#: where they name no gradient: a backward's own word in a kernel's name (``bwd_kernel_fuse`` of an FSDP step on an
#: MI350X, ``layer_norm_grad_input_kernel``, ``cuComputeGradGammaBeta``), a gradient norm.  The framework's words for
#: an update (an optimizer's name, ATen's ``_foreach_`` ops, Inductor's foreach kernels) are the framework's own
#: (``frameworks.update_kernel_word``).  Read only to keep a loop from being read as forward passes
#: (``job.kind.forward_loop_kind``), never as training by itself.
_BACKWARD_WORD = re.compile(r"(?i:(?<![a-z])bwd(?![a-z])|grad_?(?:input|weight|norm))|Grad(?:GammaBeta|Input|Weight)")


def backward_or_update_one(name: str) -> bool:
    """A kernel of a backward pass or a weight update by any vendor library's word of it: :func:`update_kernel_one`, a
    data-gradient convolution (``nvidia.data_gradient_one``, ``amd.data_gradient_one``: cuDNN's ``dgrad``, MIOpen's
    ``bwd``, which a transposed convolution's forward runs too) or :data:`_BACKWARD_WORD`.  Why: a loop with any of
    them is no loop of forward passes alone, though none of them says training (``job.kind.forward_loop_kind`` asks
    this and ``frameworks.update_kernel_word``)."""
    return (update_kernel_one(name) or nvidia.data_gradient_one(name) or amd.data_gradient_one(name)
            or bool(_BACKWARD_WORD.search(head(name))))


def gemm_operand_layout(name: str) -> str:
    """A matrix product's operand layout by its library's name (``nvidia.gemm_operand_layout``: cuBLAS, cuBLASLt,
    CUTLASS; ``amd.gemm_operand_layout``: Tensile): ``nn``, ``nt``, ``tn`` or ``tt``, "" where the name says none."""
    return nvidia.gemm_operand_layout(name) or amd.gemm_operand_layout(name)


def gradient_kernel_one(name: str) -> bool:
    """A kernel only a backward pass runs, by its name: the framework's own word for it, or a vendor library's weight
    gradient (cuDNN ``wgrad``, MIOpen ``wrw``).  Why: a capture of kernels alone (no op events) still shows training
    by what its kernels compute."""
    return bool(_GRADIENT.search(head(name))) or any(v.gradient_kernel_one(name) for v in VENDORS)


#: Kernels only an algorithm search runs: XLA's stream executor (TensorFlow's and JAX's GPU backends) checks the guard
#: bytes around each candidate algorithm's buffers with ``redzone_checker`` (``RedzoneAllocator``) and compares the
#: candidates' results with its ``__xla_<type>_comparison`` kernels (``BufferComparator``) -- at the first call of each
#: shape, never in the steady state (h37-wild57n: a TensorFlow transposed convolution on a Jetson Nano ran 147 ms of
#: ``redzone_checker``, 99% of its kernel time, between its candidate ``dgrad`` kernels, in its first call alone).
_AUTOTUNE_KERNEL = re.compile(r"^(?:redzone_checker|__xla_\w+_comparison)$")


def autotune_kernel_one(name: str) -> bool:
    """A kernel only an autotuner's search runs (:data:`_AUTOTUNE_KERNEL`), by its name: a one-time cost."""
    return bool(_AUTOTUNE_KERNEL.match(name.strip()))


def gradient_word(name: str) -> str:
    """The identifier in ``name`` that makes it a gradient kernel by the framework's word (``threshold_backward_kernel``
    of ``at::native::vectorized_elementwise_kernel<4, at::native::threshold_backward_kernel, ...>``), where a short
    name's ``<…>`` would hide it; "" where the name's word is none of ours (a vendor library's, said by its name)."""
    h = head(name)
    m = _GRADIENT.search(h)
    if not m:
        return ""
    a = m.start()
    while a > 0 and (h[a - 1].isalnum() or h[a - 1] == "_"):
        a -= 1
    b = m.end()
    while b < len(h) and (h[b].isalnum() or h[b] == "_"):
        b += 1
    return h[a:b]


@functools.lru_cache(maxsize=1024)
def vendor(gpu_name: str | None):  # noqa: ANN201 - a vendor module
    """The vendor module of a GPU, by the name the trace gives it (NVIDIA when no vendor claims it).  Remembered per
    name: a pure function of the name that every rule's context asks for each GPU of its host (~24 k asks over the
    kept captures, each five regular-expression searches; prof62)."""
    return next((v for v in VENDORS if v.is_device(gpu_name)), nvidia)


def vendor_of(gpu_names: list[str]):  # noqa: ANN201 - a vendor module
    """The vendor of a host's or job's GPUs: the one every named GPU belongs to, else NVIDIA.  Rules ask it for its
    words (``TERMS``) and its own fixes (``FIXES``)."""
    named = [n for n in gpu_names if n]
    found = {vendor(n) for n in named}
    return found.pop() if len(found) == 1 else nvidia


def vendor_claimed(gpu_names: Iterable[str]) -> str | None:
    """The ``VENDOR`` whose own device names claim every one of ``gpu_names`` (a vendor's ``is_device``), None where
    one is claimed by none (a capture's bare "GPU") or they are of several vendors: unlike :func:`vendor_of`, no
    default.  Why: a window whose GPUs ran nothing still lists the GPUs the program saw, and their vendor is the one
    the fixes' words and code are in -- a JAX capture on an MI300X whose steps stayed on the host was told to look for
    ``CudaDevice`` in ``jax.devices()`` (h37-window62)."""
    found = {next((v.VENDOR for v in VENDORS if v.is_device(n)), None) for n in gpu_names}
    return found.pop() if len(found) == 1 else None


#: The ``VENDOR`` of a device whose build the capture does not name (:mod:`devices.unnamed`).
UNNAMED = unnamed.VENDOR

#: CUDA's and HIP's default streams as a program's stream handle records them (a memory snapshot's ``stream``): 0 the
#: NULL stream, 1 the legacy default stream named (``cudaStreamLegacy`` / ``hipStreamLegacy``, ``((cudaStream_t)0x1)``),
#: 2 the calling thread's own (``cudaStreamPerThread`` / ``hipStreamPerThread``, ``((cudaStream_t)0x2)``: a build with
#: ``--default-stream per-thread``).  No stream a program creates has such a handle: each is a pointer.
DEFAULT_STREAM_HANDLES = frozenset((0, 1, 2))


def vendor_of_frames(frame_names: Iterable[str]) -> str | None:
    """The vendor (``VENDOR``) whose build of the framework recorded ``frame_names`` -- the C++ frames of a memory
    snapshot's allocations name its caching allocator (``c10::hip::HIPCachingAllocator`` on ROCm, ``c10::cuda::``
    on CUDA: ``ALLOCATOR_FRAMES``); None where no frame or more than one vendor's does.  Why: a snapshot records no
    GPU by name, so its frames are the only word of whose GPU it ran on; a Python-only record says nothing."""
    found: set[str] = set()
    seen: set[str] = set()  # a stack's frames repeat across a snapshot's thousands of records: each name is read once
    for name in frame_names:
        if name in seen:
            continue
        seen.add(name)
        found.update(v.VENDOR for v in VENDORS if v.ALLOCATOR_FRAMES.search(name))
        if len(found) > 1:
            return None
    return found.pop() if found else None


def vendor_of_backend(backend: str | None):  # noqa: ANN201 - a vendor module or None
    """The vendor module whose device is the framework backend ``backend`` (PyTorch's ``mps``: ``devices.apple.BACKEND``),
    None for none; such a vendor says why its work is not recorded (``NOT_RECORDED``, ``UNTRACED``) and how to record
    it (``trace_gpu_action``).  Why: a backend whose GPU work the profiler does not trace (``job.kind.Kind.untraced_backend``) is
    the only word of whose GPU the job ran on, as a lost window's runtime calls are (``Kind.runtime_vendor``)."""
    return next((v for v in VENDORS if backend and getattr(v, "BACKEND", None) == backend), None)


def vendor_called(name: str | None):  # noqa: ANN201 - a vendor module
    """The vendor module whose ``VENDOR`` is ``name`` (a fact a reader recorded), NVIDIA where none is."""
    return next((v for v in VENDORS if v.VENDOR == name), nvidia)


def arch_label(gpu_name: str | None, cc: str | None) -> str | None:
    """How a GPU's architecture reads: NVIDIA's compute capability (``9.0``), AMD's GFX name (``gfx942``)."""
    return vendor(gpu_name).arch_label(gpu_name, cc)


def words(gpu_names: list[str], text: str) -> str:
    """``text`` in the words of the vendor of ``gpu_names``."""
    return vendor_of(gpu_names).words(text)


not_gemm_one = nvidia.not_gemm_one
#: Device-plane events that are the GPU tracer's own overhead, not GPU work (CUPTI's overhead records).
PROFILER_OVERHEAD_EVENTS = nvidia.CUPTI_OVERHEAD_EVENTS


#: The shortest host-side lead before a copy's transfer read as staging through pageable memory (``formats.staging``,
#: ``metrics.syncs.copy_leads``): a launch's own latency is microseconds, so a millisecond with nothing queued ahead
#: is host work for the copy, not the call's overhead.  Here, not in ``formats.staging``, so that an analysis of a
#: format that never stages (XPlane) imports no AMD reader's helper to read it.
STAGING_MIN_NS = 1_000_000

#: The longest a copy's bytes take to move that is still its own latency, not its size: a read of a few bytes
#: (``float(loss)``) spends microseconds in its transfer and its staging copy whatever the bandwidth, so that time is
#: the read's round trip (the sync's), and only a read moving longer is the copy's in part (``metrics.syncs``).
COPY_LATENCY_NS = 20_000


def copy_direction(name: str) -> str | None:
    """``h2d``, ``d2h``, ``d2d``, ``p2p``, ``memset``, ``other`` for a copy or memset event's name (CUPTI's and ROCm's
    ``Memcpy HtoD (Pinned -> Device)``, XPlane's ``MemcpyH2D``, Intel PTI's ``Memcpy M2D (MEMORY -> DEVICE)``, roctracer's
    ``CopyHostToDevice``), else None."""
    return intel.copy_direction(name) or amd.copy_direction(name) or nvidia.copy_direction(name)


def blit_copy_kind(name: str, call: str | None) -> int | None:
    """The kind of a ROCm copy or fill that its own name may misstate, by the direction of the call that made it
    (``call``: the host call of its correlation id, ``hipMemcpyHtoDAsync``), else by its name: ROCclr's blit kernels
    (``__amd_rocclr_copyBuffer.kd``: the HIP runtime ran the program's copy as a kernel, ``amd.blit_copy``; a copy of
    unknown direction or a memset) and roctracer's copy records (``CopyHostToDevice``, which roctracer also calls a
    ``hipMemcpyDtoD``: ``amd.COPY_NAMES``).  None for any other event."""
    what = amd.blit_copy(name)
    named = amd.copy_direction(name)
    if what is None and named is None:
        return None
    direction = amd.call_copy_direction(call) if call else None
    if direction in (None, "other"):
        direction = named or ("memset" if what == "fill" else "other")
    return nvidia.COPY_KINDS[direction]


#: A copy kind code -> the copies table's word for it (``COPY_KINDS`` read back; both device copies read ``d2d``).
_KIND_DIRECTION = {KIND_H2D: "h2d", KIND_D2H: "d2h", KIND_D2D: "d2d", KIND_MEMSET: "memset", KIND_OTHER_COPY: "other"}


def event_copy_directions(names: list[str], name_id: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """Per device event, the copies table's direction of its copy or fill (``""``: no copy), read off the kind the
    ledger books it by (``kind``: the format's, ``blit_copy_kind`` for ROCm's blit copies), the name refining it
    only where both agree (``p2p`` within ``d2d``).  Why: the table read a copy's direction from its name alone, so
    a copy the HIP runtime ran as a kernel (``__amd_rocclr_copyBuffer.kd`` under ``hipMemcpyHtoDAsync``) was booked
    by the ledger and absent from the table -- one quantity, two values (h37-rocmcopy30)."""
    by_name = np.array([copy_direction(x) or "" for x in names] or [""], dtype=object)
    named = by_name[name_id] if len(name_id) else np.zeros(0, dtype=object)
    by_kind = np.array([_KIND_DIRECTION.get(int(k), "") for k in range(int(kind.max(initial=0)) + 1)], dtype=object)
    booked = by_kind[kind] if len(kind) else np.zeros(0, dtype=object)
    agree = np.array([bool(n) and nvidia.COPY_KINDS[n] == k for n, k in zip(named.tolist(), kind.tolist())], bool)
    return np.where(agree, named, booked)


def event_host_memory(names: list[str], name_id: np.ndarray, recorded: np.ndarray) -> np.ndarray:
    """Per device event, the host memory of its copy: 1 pageable, 0 another kind, -1 unknown or no copy -- the kind
    its name gives (CUPTI's "Memcpy HtoD (Pageable -> Device)", :func:`copy_host_memory`), or where the name does not
    say, what the format recorded apart from it (``recorded``: ``DeviceEvents.mem_host`` -- XPlane's
    ``memcpy_details``, ``formats.staging``'s reading of AMD's timing).  One reading for the copies' tally and the
    job stage's reading of a first call's copies (``job.phase``), which each spelled it."""
    if not len(name_id):
        return np.zeros(0, np.int8)
    by_name = np.array([copy_host_memory(x) for x in names], dtype=np.int8)[name_id]
    return np.where(by_name >= 0, by_name, recorded)


#: What a format recorded a device event as, apart from its name (:func:`recorded_kinds`): nothing (the name
#: decides: XPlane's GPU lines), a kernel dispatch (Kineto's ``kernel``, Nsight's kernel table, an AMD tracer's
#: dispatch section), a copy or fill (Kineto's ``gpu_memcpy``, Nsight's copy and fill tables, an AMD tracer's copy
#: section), a fill (Kineto's ``gpu_memset``).
RECORDED_NAME_ONLY, RECORDED_KERNEL, RECORDED_TRANSFER, RECORDED_FILL = -1, 0, 1, 2
#: The kind codes of a copy or fill (every kind that is no kernel or collective).
_TRANSFER_KINDS = (KIND_H2D, KIND_D2H, KIND_D2D, KIND_OTHER_COPY, KIND_MEMSET)


def recorded_kinds(names: list[str], name_id: np.ndarray, recorded: np.ndarray) -> np.ndarray:
    """int8 kind per device event: what the format recorded it as (``recorded``, one of the ``RECORDED_*`` codes per
    event), its name saying only what the record leaves open -- a copy's direction, a kernel's being a collective.

    Why: every reader took an event's kind from its name alone (:func:`device_kind`), so a kernel the program named
    like a copy (a ``Memset...`` or ``Memcpy...`` kernel, roctracer's ``CopyHostToDevice``) was booked as a copy
    though the tracer recorded a kernel dispatch, and a copy or fill whose name says no direction was booked as compute
    though the tracer recorded a transfer.  The record is the tracer's own word on what ran; a name is a label
    (h37-copydir31).  A kernel named like a copy is a kernel; a recorded copy whose name says no direction is a copy of
    unknown direction (``other``); a recorded fill is a fill."""
    by_name = device_kind(names)
    kind = by_name[name_id] if len(name_id) else np.zeros(0, np.int8)
    named_transfer = np.isin(kind, _TRANSFER_KINDS)
    kind = np.where((recorded == RECORDED_KERNEL) & named_transfer, KIND_KERNEL, kind)
    kind = np.where((recorded == RECORDED_TRANSFER) & ~named_transfer, KIND_OTHER_COPY, kind)
    kind = np.where(recorded == RECORDED_FILL, KIND_MEMSET, kind)
    return kind.astype(np.int8)


def is_copy_call(call: str) -> bool:
    """A runtime call that copies or fills memory and names its direction (``amd.call_copy_direction``)."""
    return amd.call_copy_direction(call) is not None


def copy_host_memory(name: str) -> int:
    """1 a copy to or from pageable (system) host memory, 0 one whose name gives another memory kind, -1 a name that
    does not say (XPlane's ``MemcpyH2D``, ROCm's sides ``(Host -> Device)``, CUPTI's ``Unknown``): CUPTI's memory
    kinds ``(Pageable -> Device)`` (:func:`nvidia.host_memory`), PTI's ``M`` (``Memcpy M2D``)."""
    pti = intel.host_memory(name)
    return pti if pti >= 0 else nvidia.host_memory(name)


def code(gpu_names: list[str], snippet: str) -> str:
    """A snippet written for CUDA, for the GPUs of ``gpu_names``' vendor (``xpu`` on Intel GPUs; ROCm's PyTorch keeps
    ``cuda``, a HIP program calls ``hipMemcpyAsync``)."""
    return vendor_code(vendor_of(gpu_names), snippet)


def vendor_code(vendor, snippet: str) -> str:  # noqa: ANN001 - a vendor module
    """A snippet written for CUDA, for ``vendor``'s GPUs (:func:`code`): PyTorch's device (``xpu`` on Intel), a native
    program's runtime calls (HIP's on AMD: ``amd.code``)."""
    fix = getattr(vendor, "code", None)
    return fix(snippet) if fix and snippet else snippet


#: What a pair of GPUs is assumed to talk over when no GPU link is known for them.
PCIE_BANDWIDTH = (16e9, "PCIe 3.0 x16 (~16 GB/s): no GPU-to-GPU link known for this GPU")


def link_bandwidth(gpu_name: str | None, cc: str | None) -> tuple[float, str] | None:
    """Per-direction bandwidth between two GPUs of one host, with its source: NVLink by NVIDIA generation, Infinity
    Fabric (xGMI) by AMD architecture; None when neither is known (a caller decides whether to assume PCIe)."""
    return vendor(gpu_name).link_bandwidth(gpu_name, cc)


#: The host link assumed where the GPU's vendor or generation does not say its own (:func:`host_link`): PCIe 5.0 x16,
#: the fastest slot a discrete GPU sits in today (PCI-SIG: 32 GT/s a lane, 128b/130b), so the floor it gives a copy is
#: never too high.
HOST_LINK_ASSUMED = (63.0e9, "PCIe 5.0 x16 (~63 GB/s per direction) assumed: the capture does not say the GPU's link")


#: A host link in the words of what measured it (``metrics.memcpy._link_rate``, h37-copy70): the rate the capture's
#: own large pinned copies moved at; a pageable copy's, faster than the link assumed; and the assumed link, said so.
MEASURED_LINK = "the link this capture measured: {rate:.1f} GB/s over {copies}{side}"
MEASURED_LINK_AT_LEAST = "the link this capture measured: {rate:.1f} GB/s at least, over {copies} (faster than {beside})"
ASSUMED_LINK = "{link} (no large pinned copy in the capture measures this machine's link)"
#: The measured link's words where several GPUs' copies ran side by side (``metrics.memcpy._side_by_side``,
#: h37-copy71): the sum they moved at once, kept no faster than the fastest link the GPU can sit on (``cap``); the
#: floor takes it only for the bytes that crossed alone (``metrics.memcpy._bus_floor``).
SHARED_LINK = (", side by side on {gpus} GPUs (a host link they share moves their sum{cap}; the bytes a GPU moves "
               "beside another's keep the share they moved at)")


def host_link(gpu_name: str | None, cc: object) -> tuple[float, str]:
    """The fastest link per direction between host memory and the GPU, with its words (the vendor's ``host_link``,
    else :data:`HOST_LINK_ASSUMED`): the least time a host copy's bytes take, pinned or not (h37-bus69)."""
    own = getattr(vendor(gpu_name), "host_link", None)
    return (own(gpu_name, cc) if own is not None else None) or HOST_LINK_ASSUMED


def graph_switch_us(gpu_name: str | None, cc: object) -> tuple[float, str] | None:
    """The longest the GPU idles entering or leaving a graph (CUDA graph, HIP graph, XLA command buffer) it already
    holds, by vendor and architecture, with its source; None where the kernel switch covers it
    (``launch.kernel_switch_us``)."""
    return vendor(gpu_name).graph_switch_us(gpu_name, cc)


def has_matrix_units(gpu_name: str | None, cc: float | None) -> bool | None:
    """Whether a GPU has matrix units (NVIDIA Tensor Cores from Volta; every AMD Instinct); None when unknown."""
    return vendor(gpu_name).has_matrix_units(gpu_name, cc)


def has_tf32(gpu_name: str | None, cc: float | None) -> bool | None:
    """Whether fp32 matmuls can run on its matrix units in reduced precision (TF32 from Ampere; XF32 on CDNA 3)."""
    return vendor(gpu_name).has_tf32_on(gpu_name, cc)


def has_bf16(gpu_name: str | None, cc: float | None) -> bool | None:
    """Whether its matrix units run bfloat16 (NVIDIA from Ampere; every AMD Instinct)."""
    return vendor(gpu_name).has_bf16_on(gpu_name, cc)


def _calls_of(vendor: object, attr: str) -> tuple[str, ...]:
    return getattr(vendor, attr, ())


def _calls(attr: str) -> tuple[str, ...]:
    """Every vendor's ``attr`` call list; a vendor whose calls no capture here reads (Apple's, Ascend's, an unnamed
    build's) defines none, read as empty -- no name is its launch, sync or copy."""
    return tuple(n for v in VENDORS for n in getattr(v, attr, ()))


#: Host calls that wait for the GPU (CUDA and HIP).
SYNC_CALLS = _calls("SYNC_CALLS")
#: Host calls the host is blocked in: the syncs and the copies (CUDA and HIP).
BLOCKING_CALLS = _calls("BLOCKING_CALLS")


def is_sync_call(name: str) -> bool:
    """A host call that waits for the GPU: while inside it, the host is not what the GPU waits for."""
    return name.startswith(SYNC_CALLS)


#: Host calls that ask whether an event or a stream is done, returning at once (CUDA and HIP): a run of them
#: until the GPU drains is the program's wait (``job.waits.polls``).
POLL_CALLS = _calls("POLL_CALLS")


def is_poll_call(name: str) -> bool:
    """A host call that asks whether GPU work is done without waiting for it (``cudaEventQuery``)."""
    return name.startswith(POLL_CALLS)


#: Host calls that only read what the device is, and those that wait for the whole device (CUDA and HIP).
QUERY_CALLS = _calls("QUERY_CALLS")
DEVICE_SYNC_CALLS = _calls("DEVICE_SYNC_CALLS")


#: Host calls that replay a recorded graph of kernels (CUDA and HIP graphs).
GRAPH_LAUNCH_CALLS = _calls("GRAPH_LAUNCH_CALLS")
#: Host calls that make a stream wait for another stream's event (CUDA and HIP).
STREAM_WAIT_CALLS = _calls("STREAM_WAIT_CALLS")
#: Launch calls whose recorded ``grid`` is in work-items, not blocks (``amd.WORK_ITEM_GRID_CALLS``).
WORK_ITEM_GRID_CALLS = _calls("WORK_ITEM_GRID_CALLS")


#: Host calls that launch one kernel, and those only a process's first work makes (CUDA and HIP).
LAUNCH_CALLS = _calls("LAUNCH_CALLS")
INIT_CALLS = _calls("INIT_CALLS")
#: One-time calls that look up a kernel's handle or attributes (``nvidia.LOOKUP_CALLS``): first-time only per kernel.
LOOKUP_CALLS = _calls("LOOKUP_CALLS")
#: Calls that release what a program made: its tear-down's (``nvidia.TEARDOWN_CALLS``), frees aside.
TEARDOWN_CALLS = _calls("TEARDOWN_CALLS")
#: Launches of a kernel from a module the program loaded itself (CUDA's driver API, HIP's module API): a kernel
#: compiled at run time (``nvidia.MODULE_LAUNCH_CALLS``).
MODULE_LAUNCH_CALLS = _calls("MODULE_LAUNCH_CALLS")
#: Run-time kernel compilation (NVRTC, hipRTC and their linkers), lower case: matched anywhere in a name, since JIT
#: compilers wrap the call in ranges of their own (``executor_utils::Nvrtc::CompileProgram``).
JIT_COMPILE_CALLS = _calls("JIT_COMPILE_CALLS")


#: (begin, end) name prefixes of a stream capture (CUDA and HIP graphs)
CAPTURE_BEGIN = tuple(n for v in VENDORS for n in getattr(v, "CAPTURE_CALLS", ((), ()))[0])
CAPTURE_END = tuple(n for v in VENDORS for n in getattr(v, "CAPTURE_CALLS", ((), ()))[1])
#: A GPU runtime's or driver's call by its spelling: a vendor's prefix (``RUNTIME_PREFIXES``), then a capital
#: (``cudaMalloc``, ``cuModuleLoadData``, ``hipFree``, ``urQueueFinish``; not ``custom_op``, ``hipblasLtMatmul``)
_RUNTIME = re.compile(r"^(%s)[A-Z]" % "|".join(p for v in VENDORS for p in _calls_of(v, "RUNTIME_PREFIXES")))


def is_runtime_call(name: str) -> bool:
    return bool(_RUNTIME.match(name))


def _call_vendors(call_names: Iterable[str]) -> set:
    """The vendor modules whose runtime prefix (``RUNTIME_PREFIXES``, then a capital) spells one of ``call_names``."""
    return {v for n in call_names for v in VENDORS
            if any(n.startswith(p) and n[len(p):len(p) + 1].isupper() for p in _calls_of(v, "RUNTIME_PREFIXES"))}


def vendor_of_calls(call_names: Iterable[str]):  # noqa: ANN201 - a vendor module
    """The vendor whose runtime made ``call_names`` (``hipMemcpy`` is ROCm's, ``cudaFree`` NVIDIA's), NVIDIA when
    none or several do.  Why: a window with no GPU record names no GPU, yet its runtime calls still say whose runtime
    ran -- a ROCm start-up window is "HIP calls", never "CUDA calls"."""
    found = _call_vendors(call_names)
    return found.pop() if len(found) == 1 else nvidia


def vendor_shown(call_names: Iterable[str], kernel_names: Iterable[str] = (), libraries: Iterable[str] = (),
                 op_names: Iterable[str] = ()) -> str | None:
    """The ``VENDOR`` that every piece of vendor evidence a capture holds besides its GPUs' names claims, None where
    none claims one or two disagree (no default, as :func:`vendor_claimed`): its runtime's calls (``hipLaunchKernel``,
    ``urEnqueueKernelLaunch``, ``cudaLaunchKernel``: ``RUNTIME_PREFIXES``), kernels only one vendor's software names
    (``OWN_KERNELS``: ROCclr's ``__amd_rocclr_copyBuffer``, Tensile's ``Cijk_``), a collective library the
    capture names (``COLLECTIVE_LIBRARIES``: ``rccl``, ``xccl``; ``nccl`` is both vendors'), framework ops only one
    vendor's build has (``OWN_OPS``: ``aten::cudnn_convolution``, ``aten::miopen_batch_norm``).

    Why: a GPU the file does not name is read as NVIDIA's, the profilers' default -- a ROCm trace that kept no
    ``deviceProperties`` (nor ROCm's version keys) was told NCCL, Tensor Cores and Nsight Systems beside its own
    ``hipLaunchKernel`` calls (h37-words63)."""
    found = _vendors_shown(call_names, kernel_names, libraries, op_names)
    return found.pop() if len(found) == 1 else None


def _vendors_shown(call_names: Iterable[str], kernel_names: Iterable[str], libraries: Iterable[str],
                   op_names: Iterable[str] = ()) -> set[str]:
    """Every ``VENDOR`` a piece of :func:`vendor_shown`'s evidence claims."""
    found = {v.VENDOR for v in _call_vendors(call_names)}
    own = [(v.VENDOR, p) for v in VENDORS if (p := getattr(v, "OWN_KERNELS", None)) is not None]
    found |= {vendor for n in set(kernel_names) for vendor, p in own if p.search(n)}
    ops = [(v.VENDOR, p) for v in VENDORS if (p := getattr(v, "OWN_OPS", None)) is not None]
    found |= {vendor for n in set(op_names) for vendor, p in ops if p.search(n)}
    found |= {v.VENDOR for lib in libraries for v in VENDORS if lib.lower() in getattr(v, "COLLECTIVE_LIBRARIES", ())}
    return found


#: The ``VENDOR`` of a GPU whose file shows no vendor's word (:mod:`devices.unknown`).
UNKNOWN = unknown.VENDOR
#: The ``VENDOR`` of a GPU whose file's only vendor word is NCCL's (:mod:`devices.nccl_gpu`).
NCCL_GPU = nccl_gpu.VENDOR
#: The readers' names of a GPU whose vendor the file does not settle, by ``VENDOR``.
UNSETTLED_NAMES = {UNKNOWN: unknown.GPU_NAME, NCCL_GPU: nccl_gpu.GPU_NAME}


def vendor_known(call_names: Iterable[str], kernel_names: Iterable[str] = (), libraries: Iterable[str] = (),
                 op_names: Iterable[str] = ()) -> str | None:
    """:func:`vendor_shown`'s vendor; else :data:`UNKNOWN` where nothing claims a vendor -- NCCL's names alone
    included (a distributed backend ``nccl``, c10d's ``nccl:all_reduce``, ``ncclDevKernel_*``): ROCm's PyTorch names
    its backend ``nccl`` and RCCL keeps NCCL's kernel names, so they are both vendors' words (h37-hipwin66: a ROCm
    window whose only such word was ``nccl:all_reduce`` was told CUDA and CUPTI); None where the evidence disagrees.

    Why: a GPU the file does not name was NVIDIA's whatever the file held; one whose file names no runtime, library
    or kernel family of anybody's (another vendor's runtime, a build no table knows) was told CUDA, Tensor Cores,
    ``nsys`` and NCCL (h37-vendor64)."""
    kernel_names, libraries, op_names = list(kernel_names), list(libraries), list(op_names)
    found = _vendors_shown(list(call_names), kernel_names, libraries, op_names)
    if found:
        return found.pop() if len(found) == 1 else None
    # NCCL's names say a GPU PyTorch drives as ``cuda`` on either vendor's build: its code is PyTorch's as written
    # (h37-late67), its prose still every vendor's
    if any(nccl_gpu.COLLECTIVE_WORDS.match(n) for n in (*libraries, *kernel_names)):
        return NCCL_GPU
    return UNKNOWN


#: The device allocator's own calls (CUDA runtime and driver, HIP): each ``cudaFree`` synchronizes the device, and
#: a framework's caching allocator makes them rare after warm-up.  The stream-ordered ``*Async`` forms are not these.
_ALLOC = re.compile(r"^(cuda|hip)(Malloc|Free)(_v\d+)?$|^cuMem(Alloc|Free)(_v\d+)?$")


#: Pinned host memory's calls, every vendor's (``nvidia.PINNED_ALLOC_CALLS``).
PINNED_ALLOC_CALLS = frozenset(_calls("PINNED_ALLOC_CALLS"))
_VERSION_SUFFIX = re.compile(r"_v\d+$")


def is_pinned_alloc_call(name: str) -> bool:
    """Pinned host memory taken or given back (``cudaHostAlloc``, ``cudaFreeHost``, ``hipHostMalloc``...).  Why
    apart from :func:`is_alloc_call`, which holds them too: the fix differs -- pinned buffers are allocated once and
    reused, where device churn is a caching allocator's."""
    return call_base_name(name) in PINNED_ALLOC_CALLS


def call_base_name(name: str) -> str:
    """A runtime call's name without the API version Nsight appends (``cudaHostAlloc_v3020`` -> ``cudaHostAlloc``)."""
    return _VERSION_SUFFIX.sub("", name)


def is_any_free_call(name: str) -> bool:
    """The allocator given memory back: a device free (:func:`is_free_call`) or pinned host memory freed or
    unregistered (``cudaFreeHost``, ``hipHostFree``, ``cudaHostUnregister``)."""
    base = call_base_name(name)
    return is_free_call(name) or (base in PINNED_ALLOC_CALLS and ("Free" in base or "Unregister" in base))


def is_alloc_call(name: str) -> bool:
    """The driver's allocator: device memory (``cudaMalloc`` / ``cudaFree``) or pinned host memory
    (:func:`is_pinned_alloc_call`).  Why both: while the host pins pages, or frees pinned ones, the GPU waits on the
    allocator alike -- not on the host's own code (h37-hostalloc32: ParallelKernelsTest's 176 ms of ``cudaHostAlloc`` /
    ``cudaFreeHost`` read as "the host's own code" with a CUDA-graph fix)."""
    return bool(_ALLOC.match(name)) or is_pinned_alloc_call(name)


_FREE = re.compile(r"^(cuda|hip)Free(_v\d+)?$|^cuMemFree(_v\d+)?$")


def is_free_call(name: str) -> bool:
    """A driver free of device memory (``cudaFree``): the allocator handing memory back, which syncs the device."""
    return bool(_FREE.match(name))


def is_launch_call(name: str) -> bool:
    return name.startswith(LAUNCH_CALLS)


def is_work_call(name: str) -> bool:
    """A runtime or driver call that hands a GPU work, any vendor's: a kernel launch (:data:`LAUNCH_CALLS`, a module's
    too), a graph launch, a copy or a fill (:func:`copy_call_sync`) -- ``cudaLaunchKernel`` and HIP's
    ``hipLaunchKernel`` / ``hipExtModuleLaunchKernel`` alike, so a ROCm trace's launches and copies are dispatch where
    CUDA's are (h37-vendor64: the framework's dispatch named CUDA's calls only)."""
    return name.startswith(LAUNCH_CALLS) or is_graph_launch(name) or copy_call_sync(name) >= 0


def is_module_launch(name: str) -> bool:
    """A launch of a kernel from a module the program loaded itself (:data:`MODULE_LAUNCH_CALLS`): a kernel a JIT
    compiler made, started by its launcher -- not a library's kernel compiled into the program."""
    return name.startswith(MODULE_LAUNCH_CALLS)


def is_teardown_call(name: str) -> bool:
    """A call that releases what the program made (:data:`TEARDOWN_CALLS`: a stream, event, graph, handle, module,
    communicator or context destroyed), or a free (:func:`is_any_free_call`): its tear-down's calls."""
    return name.startswith(TEARDOWN_CALLS) or is_any_free_call(name)


def is_init_call(name: str) -> bool:
    """A one-time call: module loading, library handle creation, graph instantiation."""
    return name.startswith(INIT_CALLS)


def is_lookup_call(name: str) -> bool:
    """A call that looks up a kernel's handle or attributes (:data:`LOOKUP_CALLS`): one-time only where it is slow
    the first time a kernel is asked for, not every time (``job.phase``)."""
    return name.startswith(LOOKUP_CALLS)


def is_own_time_call(name: str) -> bool:
    """A runtime call that holds the host in the runtime and no more: not a launch (its idle is the launch wait's),
    a copy or sync (a wait), an allocation or free (the allocator's) or a stream capture -- a query of the device or
    its memory (``cudaMemGetInfo``), an event's record or query, a stream's wait on an event, a kernel's attributes.
    Why: such a call outside any op is recorded time, the call's own; read as nothing recorded, a step's 800 us
    ``cudaMemGetInfo`` was "no runtime call ... covers it" (h37-ledger69)."""
    return (is_runtime_call(name) and not is_launch_call(name) and not is_graph_launch(name)
            and not is_blocking_call(name) and not is_alloc_call(name) and not is_pinned_alloc_call(name)
            and not is_any_free_call(name) and not name.startswith(CAPTURE_BEGIN + CAPTURE_END))


#: What a stretch the host spends in its own runtime calls (:func:`is_own_time_call`) is, in a finding's words.
OWN_CALLS_WORDS = "the program's own runtime calls (recorded: each call's own time, no wait for the GPU)"


def own_calls_fix(calls: str) -> str:
    """The fix for runtime calls (:func:`is_own_time_call`) the program makes every step, ``calls`` their names and
    times in words: ask less often.  Why: a query's answer (free memory, a device's properties or attributes) does not
    change from step to step, and an event timed by hand is read only where it is logged; each call costs the host
    its time every step it is made, the GPU idle meanwhile."""
    return (f"Make these runtime calls less often ({calls}): a query of the device or its memory (free memory, "
            f"properties, attributes) asked once before the loop or every N steps, an event timed by hand recorded "
            f"and read only on the steps that log it -- each call costs its time every step it is made.")


RUNTIME_INIT_CALLS = _calls("RUNTIME_INIT_CALLS")


def is_runtime_init(name: str) -> bool:
    """A call the runtime makes once while it initialises in a process (``nvidia.RUNTIME_INIT_CALLS``)."""
    return bool(RUNTIME_INIT_CALLS) and name.startswith(RUNTIME_INIT_CALLS)


#: The OS calls a GPU driver's user-space library enters its kernel module through (``ioctl``), any vendor.
DRIVER_OS_CALLS = tuple(dict.fromkeys(_calls("DRIVER_OS_CALLS")))


def is_driver_os_call(name: str) -> bool:
    """An OS call (Nsight's OS runtime trace) of the kind a GPU driver makes into its kernel module: ``ioctl``.  The
    name alone does not say whose call it is (a terminal's size is an ``ioctl`` too): callers ask it only where the
    driver is the one working (between the runtime's start-up and its next recorded call, see ``job.phase``)."""
    return name in DRIVER_OS_CALLS


def is_jit_compile(name: str) -> bool:
    """Compiling a kernel at run time (a fusion compiler's NVRTC / hipRTC call): a one-time cost per kernel."""
    low = name.lower()
    return any(c in low for c in JIT_COMPILE_CALLS)


LINK_START_CALLS = _calls("LINK_START_CALLS")


def is_link_start(name: str) -> bool:
    """A run-time link of freshly generated code opens (``nvidia.LINK_START_CALLS``): a compile just ended."""
    return name.startswith(LINK_START_CALLS)


IMAGE_LOAD_CALLS = _calls("IMAGE_LOAD_CALLS")


def is_image_load(name: str) -> bool:
    """A module loaded from an image in the program's memory (``nvidia.IMAGE_LOAD_CALLS``): code the process compiled
    (or read from a compiler's cache) just before -- a compiler the capture may not trace."""
    return bool(IMAGE_LOAD_CALLS) and name.startswith(IMAGE_LOAD_CALLS)


def is_graph_launch(name: str) -> bool:
    return name.startswith(GRAPH_LAUNCH_CALLS)


def is_graph_instantiate(name: str) -> bool:
    """A runtime's or driver's instantiation of a captured graph (``cudaGraphInstantiate*``, ``cuGraphInstantiate*``,
    ``hipGraphInstantiate*``): the executable graph made after each capture, before its first launch."""
    return is_runtime_call(name) and "GraphInstantiate" in name


#: A runtime or driver call's per-thread default stream twin, as a build with ``--default-stream per-thread`` (or
#: ``CUDA_API_PER_THREAD_DEFAULT_STREAM`` defined) calls it: CUDA's headers map each call that takes a stream to its
#: ``_ptsz`` twin and each that runs on the default stream to its ``_ptds`` one (``cuda_runtime_api.h``'s
#: ``__CUDART_API_PTSZ`` / ``__CUDART_API_PTDS``; CUPTI's callback ids ``cudaLaunchKernel_ptsz_v7000``,
#: ``cudaMemcpy_ptds_v7000``; the driver's ``cuLaunchKernel_ptsz``, ``cuMemcpyHtoD_v2_ptds``).  In such a call stream 0
#: is the calling thread's own default stream (``cudaStreamPerThread``), not the legacy NULL stream.
_PER_THREAD_CALL = re.compile(r"_pt(sz|ds)(_v\d+)?$")


def is_per_thread_call(name: str) -> bool:
    """A call made through the per-thread default stream's entry points (:data:`_PER_THREAD_CALL`)."""
    return bool(_PER_THREAD_CALL.search(name))


def is_stream_wait(name: str) -> bool:
    """A host call that makes a stream wait for an event of another (``cudaStreamWaitEvent``)."""
    return name.startswith(STREAM_WAIT_CALLS)


def grid_in_work_items(launch_call: str) -> bool:
    """A kernel launched by this host call records its ``grid`` in work-items (threads), so its workgroups are
    ``ceil(grid_d / block_d)`` per dimension: HIP's module launches that take HSA's global work size
    (``amd.WORK_ITEM_GRID_CALLS``); every other launch records blocks."""
    return bool(WORK_ITEM_GRID_CALLS) and launch_call.startswith(WORK_ITEM_GRID_CALLS)


def is_blocking_call(name: str) -> bool:
    """Host time inside this call is waiting (for the GPU, a copy, the driver), not host work."""
    return name.startswith(BLOCKING_CALLS)


def is_async_fill(name: str) -> bool:
    """An asynchronous memset call (``cudaMemsetAsync``, ``cuMemsetD32Async``, ``hipMemsetAsync``): it writes device
    memory only and returns once the fill is queued -- CUDA's API synchronisation rules make the ``Async`` memsets
    always asynchronous to the host, with no host bytes to stage -- so no time inside it is a wait for the GPU."""
    if copy_call_sync(name) != 0:
        return False
    return name.startswith(nvidia.FILL_CALLS) or amd.call_copy_direction(name) == "memset"


def is_async_copy(name: str) -> bool:
    """An asynchronous copy call that is no fill (``cudaMemcpyAsync``, ``cuMemcpyHtoDAsync``, ``hipMemcpyAsync``):
    asynchronous to the host only where neither end is pageable memory (the driver stages pageable bytes and may wait
    for the stream) and one end is the device (a host-to-host copy runs on the host) -- its copy records say which."""
    return copy_call_sync(name) == 0 and not is_async_fill(name)


def copy_call_sync(name: str, kind: int | None = None) -> int:
    """1 a copy or memset call that holds the host until its work is done, 0 one that returns before (``...Async``),
    -1 no copy call: the readers mark each copy by the call that made it and, where they know it, the kind of the
    copy (``kind``).  Each vendor answers for its own calls, with the same arguments: CUDA's
    (``nvidia.copy_call_sync``) and HIP's (``amd.copy_call_sync``), each returning at once from a synchronous call of
    a kind that moves no host memory (their ``HOST_FREE_KINDS``)."""
    for vendor in (nvidia, amd):
        if (sync := vendor.copy_call_sync(name, kind)) >= 0:
            return sync
    return -1


def copies_call_sync(call_names: list[str], call_id: np.ndarray, kind: np.ndarray) -> np.ndarray:
    """int8 per device event: :func:`copy_call_sync` of the host call that made it (``call_names[call_id]``, -1 where
    none) and of its own kind -- one home for "did this copy's call hold the host", which each reader asked of the
    call's name alone, so a ``cudaMemset`` or a device-to-device ``cudaMemcpy`` read as holding the host
    (h37-copydir31)."""
    out = np.full(call_id.size, -1, np.int8)
    has = call_id >= 0
    if not has.any():
        return out
    pairs, inv = np.unique(np.stack([call_id[has].astype(np.int64), kind[has].astype(np.int64)]), axis=1,
                           return_inverse=True)
    got = np.array([copy_call_sync(call_names[int(c)], int(k)) for c, k in pairs.T.tolist()], np.int8)
    out[has] = got[inv.reshape(-1)]
    return out
#: Reduction kernels by name (Eigen/TF reductions, cub block reductions, XLA reduce fusions).
REDUCTION = re.compile(r"Reduc|reduce|TensorReductionOp|ColumnReduce|RowReduce|BlockReduce", re.I)
#: Normalization kernels by what their names say they normalize: layer, RMS, group, batch, instance and QK norms
#: (ATen's ``vectorized_layer_norm_kernel``, ``LayerNormForwardCUDAKernel``, ``layer_norm_grad_input_kernel``,
#: ``batch_norm_collect_statistics_kernel``; vLLM's ``rms_norm_kernel`` and ``fused_add_rms_norm_kernel``; Composable
#: Kernel's ``Rmsnorm2dFwd``; aiter's ``add_rmsnorm_quant_kernel``; apex's ``cuApplyLayerNorm``; Transformer Engine's
#: ``ln_fwd_tuned_kernel``; MIOpen's ``MIOpenBatchNormBwdSpatial``; llama.cpp's ``rms_norm_f32``), their moments
#: (``RowwiseMomentsCUDAKernel``, Welford's) and the gradients of their scale and shift (``GammaBetaBackward``): each
#: reduces a row (or a channel) to its statistics before it scales it, so it is a reduction -- never element-wise work
#: a fusion would still merge (``fused_add_rms_norm`` has fused its add already).  Not ``rope_norm`` (llama.cpp's
#: rotary embedding) nor ``LpNorm`` (a gradient norm, a reduction by its own words).
_NORMALIZATION = re.compile(r"layer_?norm|rms_?norm|group_?norm|batch_?norm|instance_?norm|qk_?norm|welford|"
                            r"RowwiseMoments|GammaBeta|(?:^|[_:])ln_(?:fwd|bwd)_", re.I)
#: Words by which a normalization's kernel only applies statistics it was given, element-wise: ATen's element-wise
#: wrappers around a norm's functor (``vectorized_elementwise_kernel<4, batch_norm_calc_invstd...>``,
#: ``elementwise_kernel<..., batch_norm_elementwise...>``), batch norm's ``transform_input`` / ``backward_elemt`` /
#: ``update_stats``, inference with stored statistics (``Infer``, cuDNN's ``bn_fw_inf_``), MIOpen's normalize pass of
#: a split batch norm (``MIOpenBatchNormFwdTrainSpatialNorm``).
_NORM_APPLIES = re.compile(r"elementwise|transform_input|elemt|invstd|update_stats|(?-i:Infer)|_infer|inference|_inf_|"
                           r"SpatialNorm\b", re.I)


def normalization_apply_one(name: str) -> bool:
    """A normalization kernel that only applies the statistics it was given (``_NORM_APPLIES``): ATen's
    ``batch_norm_transform_input_kernel`` computes ``(x - mean) * invstd * weight + bias`` per element, one pass over
    the tensor and no reduction -- element-wise work, whatever the words of its name (h37-kernfam3 left it "other")."""
    h = head(name)  # cuDNN's inference kernel too, mangled (``_ZN5cudnn26bn_fw_inf_...``: "other" on main)
    return bool(_NORMALIZATION.search(h) or nvidia.batch_norm_one(h)) and bool(_NORM_APPLIES.search(h))


@functools.lru_cache(maxsize=65536)  # a pure function of the name, asked by several classifiers (prof62)
def normalization_one(name: str) -> bool:
    """A normalization kernel that reduces rows or channels to their statistics (``_NORMALIZATION``, cuDNN's
    ``nvidia.normalization_one``), not one that only applies them (``_NORM_APPLIES``)."""
    h = head(name)
    return (bool(_NORMALIZATION.search(h)) or nvidia.normalization_one(h)) and not _NORM_APPLIES.search(h)


@functools.lru_cache(maxsize=65536)  # a pure function of the name, asked by several classifiers (prof62)
def kind_one(name: str) -> int:
    """Kind code of one device event name (kernel, copy kinds, collective)."""
    direction = intel.copy_direction(head(name)) or amd.copy_direction(name)
    return nvidia.COPY_KINDS[direction] if direction else nvidia.kind_one(name)


def tensor_core(names: list[str]) -> np.ndarray:
    """Bool per name: the kernel uses Tensor Cores (by name)."""
    return np.fromiter((tensor_core_one(n) for n in names), dtype=bool, count=len(names))


def precision(names: list[str]) -> np.ndarray:
    """int8 precision code per name (see PRECISIONS)."""
    return np.fromiter((precision_one(n) for n in names), dtype=np.int8, count=len(names))


def device_kind(names: list[str]) -> np.ndarray:
    """int8 kind per device event name: kernel, each copy kind, collective."""
    return np.fromiter((kind_one(n) for n in names), dtype=np.int8, count=len(names))


COLLECTIVE_TYPES = nvidia.COLLECTIVE_TYPES


def collective_type(name: str) -> str | None:
    """The collective type of a collective kernel (NCCL, RCCL and XLA spellings), None when its name does not say."""
    return nvidia.collective_type_one(name)


PAGE_MIGRATION = nvidia.PAGE_MIGRATION
#: What shows a program's copies to the GPU already pinned and asynchronous, in words (``metrics.memcpy.applied``):
#: the copy records' own memory kind and the host's calls, every vendor's tracer alike
PINNED_ASYNC_UPLOADS = ("pinned, asynchronous copies to the GPU (every H2D copy in the trace from pinned host memory, "
                        "none holding the host)")
#: the same where a few pageable copies beside them are too small for pinning to speed (``{copies}``: how many, "a step"
#: where the window holds several; under ``{under}`` each on average: their time is the call's, not the bytes')
PINNED_ASYNC_UPLOADS_BUT_SMALL = ("pinned, asynchronous copies to the GPU (the H2D copies from pinned host memory, none "
                                  "holding the host; besides them {copies} from pageable memory, under {under} "
                                  "each on average, too small for pinning to speed)")
UM_PREFETCH = nvidia.UM_PREFETCH


def managed_migration(names: list[str]) -> np.ndarray:
    """Bool per name: a Unified Memory migration of either cause, the driver's paging or the program's prefetch: the
    driver moves the pages in chunks of its own choosing, so their bursts are no iterations of the program."""
    return np.fromiter((nvidia.page_migration_one(n) or nvidia.UM_PREFETCH in n for n in names), dtype=bool,
                       count=len(names))


def page_migration(names: list[str]) -> np.ndarray:
    """Bool per name: a Unified Memory page migration (the driver's paging of managed memory, no copy the program
    asked for: ``nvidia.PAGE_MIGRATION``)."""
    return np.fromiter((nvidia.page_migration_one(n) for n in names), dtype=bool, count=len(names))


def collective(names: list[str]) -> np.ndarray:
    """Bool per name: a collective kernel."""
    return np.fromiter((nvidia.collective_one(n) for n in names), dtype=bool, count=len(names))


def gemm_kernel(names: list[str]) -> np.ndarray:
    """Bool per name: a matmul/convolution kernel (Tensor-Core-eligible work)."""
    return np.fromiter((gemm_kernel_one(n) for n in names), dtype=bool, count=len(names))


def kernel_class(name: str, *, tensor_core: bool, tc_eligible: bool, elementwise: bool, collective: bool,
                 kind: str | None = None) -> str:
    """One class per kernel: collectives first (NCCL kernels can match other patterns), then MatMul/Conv (a
    Tensor Core kernel or a kernel of a Tensor-Core-eligible op), then what its name's structure says it does (an
    attention helper's verb; ``kind``, the class a compiler's naming states: ``frameworks.kernel_kind_one``), then
    element-wise, reduction, other."""
    if collective:
        return "collective"
    if tensor_core or tc_eligible:
        return "matmul/conv"
    helper = attention_helper_kind(name) or kind
    if helper:
        return helper
    if elementwise or normalization_apply_one(name) or (nvidia.quantize_one(name) and not normalization_one(name)):
        return "elementwise"
    if REDUCTION.search(head(name)) or normalization_one(name):
        return "reduction"
    return named_work_kind(name) or "other"


#: Pooling kernels by the word for the work in their name (``max_pool``, ``avg_pool``, ``average_pool``,
#: ``pooling``), whichever library wrote them: the vendors' DNN libraries -- cuDNN's ``pooling_fw_4d_kernel``,
#: MIOpen's ``mloPoolingG`` and ``mloPoolingMaxBwd`` -- and the frameworks' own kernels, which use the same words
#: (ATen's ``max_pool_forward_nchw``, ``avg_pool2d_out_cuda_frame``), so no framework table repeats them.  The work
#: is what this table knows: each output is the max or the mean of a window of inputs, and the gradient sums, per
#: input, the windows that chose it -- a reduction over the window, no matmul.
_POOLING = re.compile(r"max_?pool|avg_?pool|average_?pool|pooling", re.I)


def pooling_one(name: str) -> bool:
    """A pooling kernel (``_POOLING``) that is no GEMM by its library's naming."""
    return bool(_POOLING.search(head(name))) and not gemm_kernel_one(name)


def row_softmax_one(name: str) -> bool:
    """A kernel computing a softmax or log-softmax of rows on its own (``_SOFTMAX``; a router's fused softmax and
    top-k included): each row's max and sum of exponentials, then a scale -- a row reduction.  Not a GEMM or
    attention kernel naming its softmax (those are claimed first, as matmul work or an attention helper)."""
    return bool(_SOFTMAX.search(head(name))) and not gemm_kernel_one(name) and not attention_helper_one(name)


def matrix_vector_one(name: str) -> bool:
    """A matrix x vector product by its library's naming: cuBLAS's and rocBLAS's ``gemv`` kernels, vLLM's ROCm skinny
    GEMMs (``nvidia.matrix_vector_one``, ``amd.matrix_vector_one``), ggml's ``mul_mat_vec_*`` (``ggml``).

    Why a reduction, and no matmul: each output is the dot product of one matrix row with the vector, each weight read
    once and used once -- 2 FLOP per element read, 1 FLOP/byte in 16 bits, where every GPU's ridge point (peak FLOP/s
    over memory bandwidth) is in the tens to hundreds: the memory's time, which no Tensor Core or Matrix Core
    shortens.  cuBLAS leaves them off the matrix units for that reason, so they are not Tensor-Core-eligible
    (``gemm_kernel_one`` does not claim them) and the savings keep them in the non-matmul pool
    (``metrics.flops.gemm_events``): their precision fix is half the bytes, never a matrix unit's speed-up.  They were
    "other" (h37-kernelfam2): cuBLAS's complex ``gemvx`` held 7.4% of an mmagic forward's kernel time on an A100."""
    return nvidia.matrix_vector_one(name) or amd.matrix_vector_one(name) or ggml.matrix_vector_one(name)


def named_work_kind(name: str) -> str | None:
    """The class of a kernel no family claimed, by the work its name states (h37-kernelfam): ``"reduction"`` for a
    softmax of rows (:func:`row_softmax_one`), a pooling (:func:`pooling_one`) and a matrix x vector product
    (:func:`matrix_vector_one`) and a convolution of the vector units (:func:`_vector_convolution_one`);
    ``"elementwise"`` for a kernel that moves each element once -- a copy, a transpose,
    a gather (``nvidia.data_movement_one``: MIOpen's ``batched_transpose_*``), a layout conversion
    (``nvidia.layout_conversion_one``: cuDNN's ``nchwToNhwcKernel``) -- and for an outer product
    (``nvidia.outer_product_one``: cuBLAS's ``gemmk1_kernel``, one product per output element); a Mixture-of-Experts
    router's or combine's class (:func:`moe_routing_kind`); a library primitive's (CUB's and rocPRIM's scans and radix
    sort counts: ``nvidia.primitive_kind``, ``amd.primitive_kind``); None for any other kernel.

    Why: these were "other", which says no family knows the kernel: ATen's ``cunn_SoftMaxForward`` held 44% of a
    TimeSformer's kernel time on an H100 (wild/timesformer_h100_video), MIOpen's transposes 14% of a ResNet step on
    an MI300X (wild/ddp_mi300x_nopool), and the kernel-class table called that time unknown work."""
    if row_softmax_one(name) or pooling_one(name) or matrix_vector_one(name) or _vector_convolution_one(name):
        return "reduction"
    if nvidia.data_movement_one(name) or nvidia.layout_conversion_one(name) or nvidia.outer_product_one(name):
        return "elementwise"
    return moe_routing_kind(name) or nvidia.primitive_kind(name) or amd.primitive_kind(name)


def _vector_convolution_one(name: str) -> bool:
    """A convolution kernel of the vector units: a depthwise one (:func:`depthwise_one`) or a library's direct one
    (:func:`direct_convolution_one`) that claims no matrix unit.  Each output is a weighted sum over its window (and,
    for a direct one, the group's channels), summed in registers -- a pooling's form with weights, read as a
    reduction as pooling and matrix x vector products are.  Why: leaving the GEMM family they were "other" (ATen's
    ``conv_depthwise2d_forward_kernel``, TF's ``DepthwiseConv2dGPUKernelNHWC``) or "reduction" only by the
    ``cudnn::reduced_divisor`` of cuDNN 7's argument list (h37-flops68)."""
    return (depthwise_one(name) or direct_convolution_one(name)) and not tensor_core_one(name)


def moe_routing_kind(name: str) -> str | None:
    """The class of a Mixture-of-Experts routing or combine kernel of a vendor's or a compiler's library: TensorRT-LLM's
    ``moe::dev::routing`` / ``moe::dev::finalize`` (``nvidia.moe_routing_kind``), the ``triton_kernels`` package's
    ``_topk_forward``, ``_sum_bitmatrix_rows``, ``_combined_routing_*``, ``_finalize_matmul_*`` (``triton``); None
    for any other kernel.

    Why: a MoE layer's router picks each token's experts (a top-k over the expert row), counts the tokens per expert
    (a histogram) and prefix-sums the counts into offsets; its combine sums each token's k expert outputs -- all
    reductions over the experts or the top-k, none a matmul.  They were "other" (h37-kernelfam3): up to 7.4% of a
    serving engine step's kernel time (gpt-oss on a B200, ``wild/vllm_b200_tp8``)."""
    return nvidia.moe_routing_kind(name) or triton.moe_routing_kind(name)


#: What an attention helper does, by the verb its name carries: a combine of split-KV partials, a merge of attention
#: states, the row-wise dot of dO and O (``dot_do_o``, ``OGradDotO``, FlashAttention 3's ``Preprocess``, which computes
#: it and the log-sum-exp) reduce rows; a cast of an accumulator (``convert``, ``Postprocess``), a clear (zeroing) is
#: element-wise.
_HELPER_REDUCES = re.compile(r"combine|merge|dot_?do_?o|GradDotO|preprocess|reduce", re.IGNORECASE)


def attention_helper_kind(name: str) -> str | None:
    """``"reduction"`` or ``"elementwise"`` for an attention helper kernel (:func:`attention_helper_one`): what it
    computes, not its family's matmul; None for any other kernel."""
    if not attention_helper_one(name):
        return None
    return "reduction" if _HELPER_REDUCES.search(head(name)) else "elementwise"


def short_kernel_name(name: str, width: int = 80) -> str:
    """Readable kernel name: template arguments collapsed, the argument list and ``(anonymous namespace)::`` dropped,
    cut to ``width`` -- ``void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<...>(...)`` is
    ``at::native::vectorized_layer_norm_kernel<…>``, never ``at::native::`` (the first parenthesis taken for the
    arguments)."""
    s = name.replace(ANON_NS, "")  # its parenthesis is no argument list (``codes.ANON_NS``)
    if s.startswith("void "):
        s = s[5:]
    s = without_templates(s, "<…>", stop_at_arguments=True).strip() or name
    return s if len(s) <= width else s[: width - 1] + "…"
