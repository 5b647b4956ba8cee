"""NVIDIA GPUs: what the names of their libraries' kernels (cuBLAS, cuBLASLt, cuDNN, CUTLASS, NCCL, FlashAttention)
and of the CUDA runtime say, and what each generation accelerates.

Every classifier takes one *distinct* name and is cached, so each name is classified once however many events
use it.  Names are looked at up to :data:`~tb_gpu_advisor.devices.MAX_CLASSIFIED_CHARS` characters.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tb_gpu_advisor.devices import collectives
from tb_gpu_advisor.model.schema import Action
from tb_gpu_advisor.devices.codes import (KIND_COLLECTIVE, KIND_D2D, KIND_D2H, KIND_H2D, KIND_KERNEL, KIND_MEMSET, KIND_OTHER_COPY,
                                          P_BF16, P_FP8, P_FP16, P_FP32, P_FP64, P_INT8, P_TF32, P_UNKNOWN,
                                          function_parts, head, mangled_template_head, own_function,
                                          plain_mangled_name)

VENDOR = "NVIDIA"
#: The prefixes of its runtime's and driver's calls (``cudaMalloc``, ``cuModuleLoadData``).
RUNTIME_PREFIXES = ("cuda", "cu")
#: Kernels only NVIDIA's software names (``devices.vendor_shown``): cuBLAS's and cuDNN's families that carry a
#: generation or an SM (``ampere_sgemm_128x64_tn``, ``volta_h884gemm_*``, ``sm80_xmma_fprop_*``, ``sm90_xmma_gemm_*``),
#: cuBLASLt's ``nvjet_*``, CUTLASS's, cuDNN's and cuBLAS's own names (``..._cublas``).  ROCm runs none of them (its libraries are Tensile's
#: ``Cijk_``, MIOpen, Composable Kernel: ``amd.OWN_KERNELS``); ATen's, Triton's and NCCL's names are every build's.
OWN_KERNELS = re.compile(r"^(?:void )?(?:(?:maxwell|pascal|volta|turing|ampere|hopper|blackwell)_|sm\d{2,3}_|nvjet_)"
                         r"|cutlass|xmma_|cudnn|cublas")
#: The outermost namespace -- or, for a global kernel, the prefix -- of NVIDIA's math and DNN libraries' kernels
#: (``devices.library_scope_one``): cuDNN (``cudnn::``, ``cudnn_infer_...``; its CUTLASS and xMMA builds
#: ``cutlass_cudnn_train::``, ``xmma_cudnn::``), cuBLAS and cuBLASLt, CUTLASS and CuTe, cuSPARSE, cuFFT, TensorRT
#: (``nvinfer1::``), Transformer Engine, FlashAttention's and FlashInfer's, CUB and Thrust.  Read case-insensitively,
#: ended by anything but a lower-case letter (``cutlass_``, ``cudnn::``; ``cute`` is no prefix of ``cutechess``).
#: Why: a convolution word proves a library's convolution -- matrix-unit work -- only inside such a scope.
LIBRARY_SCOPES = re.compile(r"(?i:cudnn|cublas(?:lt)?|cutlass|cute|xmma|cusparse(?:lt)?|cufft|cusolver|nvinfer1?|"
                            r"tensorrt(?:_llm)?|transformer_engine|flash|flashinfer|cub|thrust|"
                            r"at_cuda_detail)(?![a-z])")
#: Framework ops whose own name says they call NVIDIA's library (``devices.vendor_shown``): PyTorch's cuDNN ops
#: (``aten::cudnn_convolution``, ``aten::_cudnn_rnn``, ``aten::cudnn_batch_norm``,
#: ``aten::_scaled_dot_product_cudnn_attention``) exist only in a CUDA build -- ROCm's dispatches the same layers to its
#: MIOpen ops (``amd.OWN_OPS``).  Why: a window whose GPU side went unrecorded keeps its host's ops alone, and these
#: are then the only word of whose GPU ran them (h37-vendor66: ``wild/cuda_unrecorded_cifar_cnn``).  Not the ops that
#: only ask whether cuDNN would do (``aten::cudnn_is_acceptable``, ``aten::_use_cudnn_ctc_loss``): every build runs them.
OWN_OPS = re.compile(r"^aten::_?(?:cudnn_(?!is_acceptable)|scaled_dot_product_cudnn_)")
#: What a CUDA build of PyTorch names in the C++ frames a memory snapshot records (``stacks="all"``): the caching
#: allocator ``c10::cuda::CUDACachingAllocator``, a stream a ``CUstream_st*``, the runtime ``libcudart``.
ALLOCATOR_FRAMES = re.compile(r"\bc10::cuda::|CUDACachingAllocator|\bCUstream_st\b|\bcudaMalloc|libcudart")

#: What CUPTI's overhead activity records (``CUpti_ActivityOverheadKind``) are named in a TensorFlow/XLA XPlane: the
#: tracer names each after its kind (``getActivityOverheadKindString`` of tensorflow ``cupti_tracer.cc`` and
#: openxla/xla ``xla/backends/profiler/gpu/cupti_tracer.cc``: COMPILER, BUFFER_FLUSH, INSTRUMENTATION, RESOURCE, else
#: ``<UNKNOWN>``) and puts them on a GPU plane's ``CUPTI overhead`` line.  The profiler's own time, not GPU work.
CUPTI_OVERHEAD_EVENTS = frozenset({"COMPILER", "BUFFER_FLUSH", "INSTRUMENTATION", "RESOURCE", "<UNKNOWN>", "<unknown>"})

#: How NVIDIA's users name things: a rule asks its vendor for these (``devices.vendor_of(...).TERMS[key]``), never
#: spells one vendor's word for another's GPU.
TERMS = {
    "matrix_units": "Tensor Cores",
    "matrix_unit": "Tensor Core",
    "fp32_on_matrix_units": "already on TF32 Tensor Cores",
    "conv_library": "cuDNN",
    "collective_library": "NCCL",
    "graphs": "CUDA graphs",
    "gpu_link": "NVLink",
    "conv_padding": "cuDNN >= 7.6.3 pads convolutions automatically, dense layers are not padded",
    "tc_kernel_names": "an h884/h1688/s16816/xmma-style Tensor Core kernel",
    "allocator_calls": "cudaMalloc / cudaFree",
    "runtime": "CUDA",
    #: the legacy default stream, which orders itself against every blocking stream of its context
    #: (``rules.excessive_memcpy._legacy_words``)
    "legacy_stream": "CUDA's NULL stream",
    #: the tracer a profiler records this runtime's calls and the GPU's work through (PyTorch's Kineto, XLA's)
    "gpu_tracer": "CUPTI",
    "context_creation": "the CUDA context's creation",
    # a profiler's capture advice for a PyTorch program (``formats.kineto.WINDOW_FIXES``): the build whose GPU tracer
    # records kernels, the whole-system profiler that records them when it does not (text, then its command), and
    # the per-kernel counter profiler
    "torch_build": "a PyTorch build made for the installed driver's CUDA",
    "system_profiler": "Nsight Systems",
    "system_trace": "nsys profile -t cuda,nvtx -o run python train.py",
    "kernel_profiler": "Nsight Compute",
    #: the drivers that submit launches late, in batches, and how to see which one runs (the submission latency's
    #: finding, ``rules.capture_quality``: h37-idle67)
    "batching_drivers": "Windows' WDDM driver model does (and WSL2, which runs on it)",
    "driver_check": ("see which driver model runs (`nvidia-smi -q`, 'Driver Model'): on Windows a GPU that supports "
                     "TCC submits without batching, and a Linux host has no such batching"),
    #: which of the vendor's GPUs multiply bfloat16 on their matrix units, in a fix's words (``rules._kernels.fp16_reason``:
    #: where the capture does not say which GPU this is); NVIDIA's from Ampere
    "bf16_gpus": "bfloat16 only on Ampere and newer",
}

#: Tensor Core kernel name fragments.  The first block is the stock tool's list
#: (xprof gpu_utils.cc, pre-Hopper); the second block adds what it misses.
#: Each entry: fragment -> why it means Tensor Cores.
TENSOR_CORE_PATTERNS: dict[str, str] = {
    # --- stock list (xprof 2.24) ---
    "16816": "mma.m16n8k16 tile (Ampere+ HMMA/IMMA)",
    "c1688": "complex/tf32 m16n8k8 HMMA tile",
    "conv1x1": "cuDNN 1x1 conv kernel family that uses HMMA",
    "conv2d_c1_k1": "cuDNN 1x1 conv (HMMA)",
    "dgrad_1x1_stride_2x2": "cuDNN dgrad 1x1 stride-2 HMMA kernel",
    "direct_group": "cuDNN grouped direct conv (HMMA)",
    "first_layer_wgrad_kernel": "cuDNN first-layer wgrad (HMMA)",
    "h1688": "fp16 m16n8k8 HMMA (Turing/Ampere cuBLAS/cuDNN)",
    "h884": "fp16 m8n8k4 HMMA (Volta cuBLAS/cuDNN)",
    "hmma": "explicit HMMA instruction family",
    "i16832": "int8 m16n8k32 IMMA",
    "i8816": "int8 m8n8k16 IMMA",
    "s884": "fp32-accumulate m8n8k4 HMMA (Volta)",
    "s1688": "fp32-accumulate m16n8k8 HMMA (Turing/Ampere)",
    "xmma_gemm": "NVIDIA xMMA GEMM library (Tensor Core only)",
    "xmma_implicit_gemm": "xMMA implicit-GEMM convolution",
    "xmma_sparse_conv": "xMMA sparse conv (Ampere sparsity)",
    "xmma_sparse_gemm": "xMMA sparse GEMM",
    "xmma_warp_specialized_implicit_gemm": "xMMA warp-specialized conv",
    # --- added: Ampere / Ada / Hopper / Blackwell names the stock list misses ---
    "wgmma": "Hopper warpgroup MMA instruction (sm90)",
    "gmma": "Hopper GMMA kernels (cutlass 'gmma' collective mainloops)",
    "sm90_xmma": "cuBLAS/cuDNN Hopper xMMA kernels",
    "sm80_xmma": "cuBLAS/cuDNN Ampere xMMA kernels",
    "sm86_xmma": "Ampere GA10x xMMA kernels",
    "sm89_xmma": "Ada xMMA kernels",
    "sm100_xmma": "Blackwell xMMA kernels",
    "tensorop": "CUTLASS Tensor Core op class (e.g. cutlass_80_tensorop_s16816gemm)",
    "s16816": "fp32-accumulate m16n8k16 MMA (Ampere cuBLAS, e.g. ampere_fp16_s16816gemm)",
    "h16816": "fp16-accumulate m16n8k16 MMA",
    "bf16816": "bf16 m16n8k16 MMA",
    "s1688gemm": "tf32/fp16 m16n8k8 GEMM (Ampere tf32)",
    "i8816gemm": "int8 IMMA GEMM",
    "tf32": "tf32 math only exists on Tensor Cores",
    "hopper": "cuDNN/cuBLAS 'hopper' kernel families (sm90 MMA)",
    "_hmma_": "HMMA kernels by instruction name",
    "imma": "int8 IMMA kernels",
    "cutlass3x_sm90": "CUTLASS 3 sm90 kernels (wgmma)",
    "nvjet": "cuBLASLt Hopper/Blackwell 'nvjet' GEMM kernels (Tensor Core)",
    "flash_fwd": "FlashAttention kernels (mma.sync/wgmma)",
    "flash_bwd": "FlashAttention backward (mma.sync/wgmma)",
    "fmha": "fused multi-head attention of cuDNN, TensorRT-LLM and FlashInfer (fmhaSm100*, fmha_v2_*): mma/wgmma/"
            "tcgen05 on every generation that has them",
    "tmawarpspecialized": "CUTLASS 3 kernel schedules (KernelTmaWarpSpecialized*, MainloopSm90TmaGmmaWarpSpecialized*, "
                          "the Sm90TmaWarpSpecialized epilogue): sm90+ collectives built only around wgmma/tcgen05 -- "
                          "a CuTe kernel names its MMA atom deep in the template, its schedule near the start "
                          "(vLLM's Machete W4A16 GEMM)",
    "deep_gemm::sm90_": "DeepGEMM's Hopper kernels (fp8 GEMMs, paged MQA logits): wgmma",
    "deep_gemm::sm100_": "DeepGEMM's Blackwell kernels: tcgen05",
    "marlin<": "Marlin mixed-input GEMMs (IST-DASLab, vLLM's ``marlin::Marlin``, ``marlin_moe_wna16::Marlin``): "
               "int4/int8 weights dequantized in registers into 16-bit mma.sync (sm80+); the kernel is named "
               "``Marlin``, its helpers (``gptq_marlin_repack_kernel``, ``marlin::permute_cols_kernel``) are not",
    "marlin_24<": "Marlin's 2:4-sparse variant (``marlin_24::Marlin_24``): sparse mma.sp",
}

#: CUDA-core GEMMs whatever library prefix they carry: SIMT kernels, FFMA (fp32 fused multiply-add) math, and
#: xMMA GEMMs whose inputs *and* math are fp32 (``sm80_xmma_gemm_f32f32_f32f32_f32_..._ffma``; the TF32 variant
#: reads ``f32f32_tf32f32``).  Seen in the real H100 JAX captures with ``precision=HIGHEST``.
#: (``sgemm_`` names that also say ``tensorop`` are Tensor Core GEMMs: :func:`tensor_core_one` checks that in linear
#: time; the old ``sgemm_(?!.*tensorop)`` scanned to the end of the name from every ``sgemm_``, quadratic.)
_TC_EXCLUDE = re.compile(r"simt|ffma|f32f32_f32f32|sgemm_", re.I)

#: cuBLAS's ``hgemm`` / ``dgemm`` are words of their own (``ampere_hgemm_...``, ``dgemm_sm80``), never the tail of a
#: longer one: CuTe DSL's ``GroupedGemmKernel`` read fp64 by its ``dGemm``, a ``BatchGemm`` would read fp16.
_FP16 = re.compile(r"half|fp16|f16(?!\d)|__half|h884|h1688|h16816|(?<![A-Za-z])hgemm|hmma|float16", re.I)
#: ``DF16b``: the Itanium C++ ABI's mangling of ``std::bfloat16_t`` / ``__bf16`` (``DF16_`` is ``_Float16``), in the
#: mangled names ROCm's tracers record (aiter's ``add_rmsnorm_quant_kernelIDF16bDF16b...``): bf16, never the fp16 its
#: ``F16`` reads as.
_BF16 = re.compile(r"bf16|bfloat16|__nv_bfloat16|(?-i:DF16b)", re.I)
#: ``char`` as a value type is int8 math; ``char*`` (ATen's ``Array<char*, N>`` of byte pointers) is no precision.
_INT8 = re.compile(r"int8|i8816|i16832|imma|s8s8|u8s8|\bchar\b(?!\s*\*)", re.I)
_FP8 = re.compile(r"fp8|e4m3|e5m2", re.I)
_TF32 = re.compile(r"tf32", re.I)
_FP64 = re.compile(r"\bdouble\b|(?<![A-Za-z])dgemm|fp64|f64", re.I)


_TC_RE = re.compile("|".join(re.escape(p) for p in TENSOR_CORE_PATTERNS), re.I)
#: Marlin's GEMM kernels by their own name (``Marlin<``/``Marlin_24<`` after a namespace or at the start), not its
#: helpers that only carry ``marlin`` in a longer word (``gptq_marlin_repack_kernel``) or namespace.  Their parameter
#: list's ``float const*`` are scales and the fp32 reduction buffer, not the math (16-bit MMA): their precision is
#: read from the template arguments only (:func:`precision_one`).
_MARLIN = re.compile(r"(?<![a-z0-9_])marlin(?:_24)?<", re.I)
#: TensorRT-LLM's trtllm-gen GEMMs (its MoE FC1/FC2 and dense GEMMs, also run by SGLang and FlashInfer):
#: ``bmm_`` (batched) or ``gemm_``, then the output type, the A and B input types and the accumulator type, then the CTA
#: tile ``t<M>x<N>x<K>`` -- ``bmm_Bfloat16_E4m3E4m3_Fp32_t128x16x128u2_s6_et64x16_m64x16x32_..._sm100f`` -- and the MMA
#: instruction's shape ``m<M>x<N>x<K>`` (tcgen05 on Blackwell).  A name of this shape says it is a Tensor Core GEMM,
#: whose inputs are its *second* field (the first is its output: an fp8 GEMM writing bf16).  Linear: anchored at the start.
_TRTLLM_TYPE = r"(?:Mx)?[A-Z][a-z]*\d+(?:m\d)?"
#: Newer trtllm-gen builds put the block-scale sizes between the accumulator and the tile
#: (``bmm_E2m1_E2m1E2m1_Fp32_bA16_bB16_bC16_t128x8x512u2_...``, TensorRT-LLM's batchedGemm cubins): still one GEMM.
_TRTLLM_GEN = re.compile(rf"^(?:bmm|gemm)_({_TRTLLM_TYPE})_({_TRTLLM_TYPE})(?:{_TRTLLM_TYPE})?_{_TRTLLM_TYPE}"
                         r"(?:_b[A-Z]\d+)*_t\d+x\d+x\d+")
#: trtllm-gen's fused attention (``fmhaSm100fKernel_QkvBfloat16OBfloat16H128...``,
#: ``fmhaSm100aKernel_QE4m3KvE2m1OE4m3H128...``): Q's (and K's, V's) type first, the output's after ``O``.  The MMAs
#: run in Q's type (a narrower KV cache is widened to it), so Q's type is the kernel's, never the output's: an fp8
#: attention writing bf16 (``QkvE4m3OBfloat16``) was read as bf16 by the generic words, bf16 coming before fp8.
_TRTLLM_FMHA = re.compile(rf"^fmhaSm\d+[a-z]?Kernel_Q(?:kv)?({_TRTLLM_TYPE})")
#: trtllm-gen's input types -> precision codes.
_TRTLLM_INPUT = {"Bfloat16": P_BF16, "Fp16": P_FP16, "Fp32": P_FP32, "Int8": P_INT8}
#: trtllm-gen's minifloats ``E<exponent bits>m<mantissa bits>``, plain or microscaled (``Mx``): fp8 (``E4m3``,
#: ``E5m2``), fp6 (``E2m3``, ``E3m2``), fp4 (``E2m1``, NVFP4/MXFP4 weights).  The codes have none narrower than fp8:
#: every float of 8 bits or fewer reads as fp8 (as ``frameworks.xla.precision_code`` reads ``f4e2m1fn``), never as
#: the output's type that the generic words found in the name (``bmm_Bfloat16_MxE2m1MxE4m3_...`` read bf16).
_MINIFLOAT = re.compile(r"(?:Mx)?E[2-5]m[1-3]")


#: CUTLASS's and CuTe's numeric types as template arguments (``cutlass::half_t``, ``cutlass::float_e4m3_t``): a
#: CUTLASS kernel lists its *input* element first -- GEMMs their A operand before the epilogue's C/D types
#: (``vllm::cutlass_3x_gemm<cutlass::float_e4m3_t, cutlass::bfloat16_t, ...>``: fp8 in, bf16 out), FlashAttention 3 its
#: Q/K/V element before the accumulator and output (``CollectiveMainloopFwdSm90<..., cutlass::half_t, float,
#: cutlass::arch::Sm90, ..., cutlass::bfloat16_t>``) -- so the first one is the kernel's precision, where the generic
#: words, reading bf16 before fp16 and fp8, took the output's.
_CUTLASS_ELEMENT = re.compile(r"\bcutlass::(half_t|bfloat16_t|tfloat32_t|float_e[245]m[0-3]_t|float_ue[48]m[03]_t|"
                              r"(?:u?int8_t)|float_e2m3_t|float_e3m2_t|float_e2m1_t)\b")
_CUTLASS_PRECISION = {"half_t": P_FP16, "bfloat16_t": P_BF16, "tfloat32_t": P_TF32, "int8_t": P_INT8, "uint8_t": P_INT8}


def _cutlass_input(name: str) -> int | None:
    """The precision of the first CUTLASS element type a name lists (``_CUTLASS_ELEMENT``), None where it lists none."""
    m = _CUTLASS_ELEMENT.search(name)
    if not m:
        return None
    return _CUTLASS_PRECISION.get(m.group(1), P_FP8)


def _trtllm_input(kind: str) -> int | None:
    """The precision code of one trtllm-gen type field (``Bfloat16``, ``MxE2m1``), None for one not known."""
    if kind in _TRTLLM_INPUT:
        return _TRTLLM_INPUT[kind]
    return P_FP8 if _MINIFLOAT.fullmatch(kind) else None


def trtllm_gen_one(name: str) -> bool:
    """A trtllm-gen GEMM by its name's shape (``_TRTLLM_GEN``)."""
    return bool(_TRTLLM_GEN.match(name))


#: What a kernel's name says of its MMA by structure, whatever library built it: CuTe's MMA atoms name the Tensor Core
#: instruction they issue, its generation first (``SM80_16x8x16_F32BF16BF16F32_TN`` mma.sync, ``SM90_64x128x16_F32BF16``
#: ``BF16_SS`` wgmma, ``SM100_MMA_F16BF16_SS`` tcgen05); Blackwell's ``UMMA``/``tcgen05`` (CUTLASS 3's
#: ``MainloopSm100TmaUmmaWarpSpecialized``, whose Hopper twin says ``Gmma``).  Case-sensitive, as CuTe spells them.
_MMA_ATOM = re.compile(r"\bSM(?:[89]\d|1\d\d)_(?:\d+x\d+x\d+|MMA)_|Umma|UMMA|tcgen05")
#: A GEMM that names the PTX ``mma.sync`` shape it is built on, ``m<M>n<N>k<K>`` (m8n8k4, m16n8k16, or ``X`` for a
#: templated N: AWQ's ``gemm_forward_4bit_cuda_m16nXk32``, which dequantizes int4 weights into fp16 ``mma.sync``
#: m16n8k16 tiles): a shape only the Tensor Core instructions have.  Asked with a ``gemm`` word beside it.
_MMA_SHAPE = re.compile(r"(?<![A-Za-z0-9])m(?:8|16)n(?:\d+|X)k(?:4|8|16|32|64)(?![0-9])")
#: Fused attention's main kernels by what their names say, not by one library's prefix: a pass of attention built for
#: one GPU generation -- ``<Attn|Attention><Fwd|Bwd|Forward|Backward>...Sm<NN>`` (FlashAttention 3's
#: ``flash::FlashAttnFwdSm90``, ``FlashAttnBwdSm80``; FlashAttention 4's ``FlashAttentionForwardSm100``) -- or cuDNN's
#: flash SDPA (``cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_...``, ``..._sm100_flash_fprop_f16``).
#: FlashAttention's algorithm is two matmuls per tile (QK^T, PV); a build for sm80 or later issues them on the Tensor
#: Cores (mma.sync, wgmma, tcgen05), the reason such builds exist.  Group 1/2: the generation.
_ATTENTION_ARCH = re.compile(r"(?:Attn|Attention)(?:Fwd|Bwd|Forward|Backward)[A-Za-z]*?Sm(\d{2,3})(?![0-9])|"
                             r"sdpa_sm(\d{2,3})_flash_[fb]prop")
#: FlashInfer's attention over a KV cache, by its names' structure (``BatchPrefillWithPagedKVCacheKernel``,
#: ``SinglePrefillWithKVCacheKernel``, ``BatchDecodeWithPagedKVCacheKernel``): a *prefill* multiplies a tile of many
#: queries by the keys (matrix x matrix: Tensor Core MMA), a *decode* one query row per head (matrix x vector: a 16-row
#: MMA would be 1/16 used, so it runs on CUDA cores; FlashInfer routes decode to its prefill kernels when it wants the
#: Tensor Cores, ``use_tensor_cores=True``).  Group 1: Prefill or Decode.
_KV_ATTENTION = re.compile(r"(?<![A-Za-z])(?:Batch|Single)?(Prefill|Decode)With\w*?KVCache")


def attention_kernel_one(name: str) -> bool:
    """A fused attention pass whose matmuls are Tensor Core work, by its name's structure (``_ATTENTION_ARCH``, a
    prefill of ``_KV_ATTENTION``), not a helper (:func:`attention_helper_one`).  A decode's matrix-vector products
    are no GEMM work: its class stays what its other words say."""
    name = head(name)
    return _attention_on_tensor_cores(name)


def _attention_on_tensor_cores(name: str) -> bool:
    """An attention pass built for sm80 or later, or a prefill over a KV cache (see ``_ATTENTION_ARCH``)."""
    if attention_helper_one(name):
        return False
    m = _ATTENTION_ARCH.search(name)
    if m:
        return int(m.group(1) or m.group(2)) >= 80
    kv = _KV_ATTENTION.search(name)
    return bool(kv) and kv.group(1) == "Prefill"


#: Quantized attention that names the operand types of its two products, ``qk_<type>_sv_<type>`` (SageAttention 2,
#: thu-ml/SageAttention csrc/qattn: ``qk_int_sv_f8_attn_kernel``, ``qk_int8_sv_f16_accum_f32_attn``): Q and K quantized
#: to int8 and multiplied on the integer MMA (``mma.sync`` m16n8k32 s8), P times V on the fp8 or fp16 MMA -- Tensor
#: Core work whose first product, the one its int8 quantization is for, gives the precision.
_QUANT_ATTENTION = re.compile(r"(?<![A-Za-z0-9])qk_int\d*_[sp]v_f(?:p)?\d+\w*?attn")
#: CUTLASS's Python DSL (CuTe DSL) names a kernel ``kernel_cutlass_<function>_<module path><class>_object_at_<args>``,
#: its arguments spelled out: a kernel built on a ``TiledMMA`` names its MMA atom's shape (``MMAAtom_ThrID10_ShapeMNK
#: 12812816``: a tcgen05 128x128x16 atom).  Every CuTe MMA atom of more than one element is a matrix instruction
#: (mma.sync, wgmma, tcgen05); CuTe's CUDA-core atom (``MmaUniversalOp``) is 1x1x1, ``ShapeMNK111``.  A DSL class
#: named for a GEMM or attention of one generation (``HopperWgmmaGemmKernel``, ``Sm120GemmKernel``,
#: ``BlackwellFusedMultiHeadAttentionForward``) is built on that generation's matrix instructions, as the C++ builds
#: of ``_ATTENTION_ARCH`` are.  Seen: NVIDIA/cutlass examples/python/CuTeDSL (dense_gemm, grouped_gemm, fmha)
#: compiled to MLIR in public repositories (find_string 'kernel_cutlass_kernel_').
_CUTE_DSL = re.compile(r"^kernel_cutlass_")
_CUTE_DSL_MMA = re.compile(r"MMAAtom_ThrID\d+_ShapeMNK(?!111_)\d|(?:Hopper|Blackwell|S[Mm](?:[89]\d|1\d\d))[A-Za-z0-9]*?"
                           r"(?:Gemm|Attention|Fmha|Mha)")


def _cute_dsl_mma(name: str) -> bool:
    """A CuTe DSL kernel built on matrix instructions, by its arguments' MMA atom or its class (``_CUTE_DSL_MMA``)."""
    return bool(_CUTE_DSL.match(name)) and bool(_CUTE_DSL_MMA.search(name))


#: A GEMM (``gemm``, ``matmul``) whose own identifier (not its template arguments or parameters) names an fp8 type:
#: Triton's ``_w8a8_block_fp8_matmul``, DeepGEMM's ``deep_gemm::fp8_gemm_kernel<...>(__nv_bfloat16*, ...)`` -- fp8
#: inputs, a bf16 output.  GPUs compute on fp8 only in their matrix units (NVIDIA from sm89, AMD's MFMA from CDNA 3;
#: neither's vector units have fp8 arithmetic), so an fp8 GEMM is a Tensor Core GEMM (as :func:`_fp8_gemm` reads an
#: fp8 word anywhere beside a ``gemm``); the own identifier also makes fp8 its precision, over a bf16 output's words.
_OWN_FP8_GEMM = re.compile(r"(?i:fp8|e4m3|e5m2)\w*?(?i:gemm|matmul)|(?i:gemm|matmul)\w*?(?i:fp8|e4m3|e5m2)")


def _own_identifier(name: str) -> str:
    """The kernel's own name: its qualified identifier before its template arguments and parameters
    (``void deep_gemm::fp8_gemm_kernel<...>(...)`` -> ``deep_gemm::fp8_gemm_kernel``); of a mangled name, only a plain
    nested one's (``_ZN5aiter42fp8gemm_bf16_...E`` -> ``aiter::fp8gemm_bf16_...``: ``codes.plain_mangled_name``).
    The name's text up to its first ``<`` or ``(``: :func:`_first_template_argument` reads the template that follows
    it.  The last part of the kernel's own function, its return type and unnamed namespaces dropped, is
    ``codes.own_function``'s (one reader for every vendor)."""
    if name.startswith("_Z"):  # mangled: a plain nested name reads as its parts (aiter's assembly kernels), else none
        return plain_mangled_name(name)
    name = name.removeprefix("void ")
    cut = min((i for i in (name.find("<"), name.find("(")) if i >= 0), default=len(name))
    return name[:cut]


#: A kernel whose own function is named for moving data -- a transpose, copy, permute, gather, scatter, (re)pack or
#: fill -- moves bytes and multiplies nothing, whatever namespace holds it: DeepSeek's
#: ``dpsk::grouped_gemm::cuda::utils::transpose<512, 128, 4, 4>(unsigned char const*, ...)`` (h37-survey35, an H800)
#: lives in a GEMM library's namespace and takes bytes (``unsigned char``: fp8 data), and was read as an int8 GEMM
#: off the Tensor Cores.  Only the last part of the kernel's own identifier is read (its function, not its
#: namespaces or template arguments), and only where that part names no GEMM itself (``gather_gemm`` stays one).
_DATA_MOVEMENT = re.compile(r"_?(?:batched_)?(?:transpose|copy|permute|gather|scatter|re?pack|unpack|fill)(?![a-z])",
                            re.I)
_OWN_GEMM_WORD = re.compile(r"gemm|matmul|mma|conv", re.I)


@lru_cache(maxsize=65536)
def data_movement_one(name: str) -> bool:
    """A kernel whose own function names a data movement (``_DATA_MOVEMENT``): no matmul, whatever its namespace."""
    own = own_function(name)
    return bool(_DATA_MOVEMENT.match(own)) and not _OWN_GEMM_WORD.search(own)


#: A kernel whose own function is named for quantizing -- SageAttention's ``sage_quant_kernel`` and
#: ``quant_per_block_int8_kernel`` (Q, K, V to int8/fp8 before its attention: thu-ml/SageAttention, aiter's
#: fav3_sage_attention.py), vLLM's ``scaled_fp8_quant_kernel``, ``per_token_group_quant_8bit_kernel`` -- reads each
#: element, scales it and writes it narrower: element-wise traffic, whatever its dtype words (its scale, where it
#: computes one, is a max over the tile it holds).  Not ``dequant`` (a GEMM's prologue), not a fused norm's
#: (``add_rmsnorm_quant_kernel`` reduces its rows first: ``devices.normalization_one`` decides), not one whose own
#: function names a GEMM (``_OWN_GEMM_WORD``).
_QUANTIZE = re.compile(r"(?<![a-z])quant(?:ize)?(?![a-z])", re.I)


@lru_cache(maxsize=65536)
def quantize_one(name: str) -> bool:
    """A kernel whose own function quantizes (``_QUANTIZE``) and names no GEMM.  C++'s unnamed namespace is dropped
    first: its parenthesis is no argument list (FBGEMM's ``fbgemm_gpu::(anonymous namespace)::_compute_FP8_quantize_
    cuda_kernel<float>``)."""
    own = own_function(name)
    words = own.replace("_", " ")
    return bool(_QUANTIZE.search(words)) and not _OWN_GEMM_WORD.search(own)


#: A kernel whose own function names a matrix product, whatever its family (``devices.ggml`` now reads llama.cpp's own
#: kernels as the families they are; this stays the int8 test of any library's or program's product): llama.cpp's
#: quantized matmuls (ggml/src/ggml-cuda/mmq.cuh, mmvq.cu, hipified for ROCm as they are: ``mul_mat_q<(ggml_type)2,
#: 128, false>(char const*, ...)``, ``mul_mat_vec_q``) multiply their quantized weights by activations quantized to
#: ``q8_1`` in int8 dot products (``dp4a``, int8 MMA) -- seen: the kept wild/llamacpp_rocprof_r9700 (Q4_0, 90% of
#: its kernel time) --, a program's own ``int8_gemm_kernel``.  ``conv`` and ``mma`` as words only (``convert`` is
#: a cast).
_OWN_PRODUCT = re.compile(r"gemm|matmul|mul_?mat|(?<![a-z])(?:mma|bmm|conv(?:\dd)?)(?![a-z])", re.I)


@lru_cache(maxsize=65536)
def own_product_one(name: str) -> bool:
    """A kernel whose own function names a matrix product (``_OWN_PRODUCT``), whatever family its library is."""
    return bool(_OWN_PRODUCT.search(own_function(name)))


@lru_cache(maxsize=65536)
def tensor_core_one(name: str) -> bool:
    """The kernel uses Tensor Cores, by name (a Tensor Core family, not a CUDA-core variant of one)."""
    name = head(name)
    if data_movement_one(name):
        return False
    if (_TRTLLM_GEN.match(name) or _MMA_ATOM.search(name) or _attention_on_tensor_cores(name)
            or _QUANT_ATTENTION.search(name) or _cute_dsl_mma(name)):
        return True
    own = _own_identifier(name)
    own_mma = _MMA_SHAPE.search(own) and "gemm" in own.lower()
    if own_mma and not _TC_EXCLUDE.search(name):  # a name that says CUDA cores (``simt``, ``ffma``) still does
        return True
    if not _TC_RE.search(name):
        return _fp8_gemm(name, own)
    return not _TC_EXCLUDE.search(name) or "tensorop" in name.lower()


def _fp8_gemm(name: str, own: str | None = None) -> bool:
    """A GEMM whose inputs are fp8 runs on Tensor Cores whatever its library calls it: PTX's fp8 types (``e4m3``,
    ``e5m2``) are operands of only the conversions and the matrix instructions (``mma``, ``wgmma``, ``tcgen05``) --
    no CUDA-core instruction multiplies them -- and cuBLASLt's fp8 GEMMs have no CUDA-core fallback (misaligned dims
    are refused, not run slower).  DeepSeek's own grouped GEMMs
    (``cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>`` on an H800, h37-survey35) name
    no Tensor Core family and were read as 16-bit GEMMs that fell back.  A name that says CUDA cores (``simt``,
    ``ffma``) still does.  The one home of this fact: a GEMM word anywhere (``_GEMM_KERNEL``) or, for the names that
    family misses (Triton's ``_w8a8_block_fp8_matmul``), the kernel's own identifier (``own``, :func:`_own_identifier`)
    naming an fp8 GEMM (``_OWN_FP8_GEMM``, which :func:`precision_one` also reads for the kernel's precision) --
    h37-review17: the own-identifier reading had become a second check of it in :func:`tensor_core_one`."""
    if not _FP8.search(name) or _TC_EXCLUDE.search(name):
        return False
    return bool(_GEMM_KERNEL.search(name)) or bool(_OWN_FP8_GEMM.search(_own_identifier(name) if own is None else own))


#: Words by which a program's own kernel claims the matrix units: the CUDA WMMA API (``nvcuda::wmma``), the PTX
#: ``mma`` instruction, "tensor core" -- ``gemm_tensorcore``, ``wmma_gemm_kernel``, ``mma_sync_kernel``.  A name is
#: what its author chose, not the instructions the compiler emitted (``mma`` may be a loop that only calls itself
#: so), so such a name, in no library family of :data:`TENSOR_CORE_PATTERNS`, makes Tensor Core use *unknown*
#: (``mma`` alone, not inside a word: ``gemma`` is no claim).
_TC_CLAIM = re.compile(r"tensor_?cores?|wmma|(?<![a-z])mma(?![a-z])", re.I)


@lru_cache(maxsize=65536)
def tensor_core_claimed_one(name: str) -> bool:
    """The kernel's name claims Tensor Cores (see ``_TC_CLAIM``) but is no library family known to run on them."""
    return not tensor_core_one(name) and bool(_TC_CLAIM.search(head(name)))


#: Explicit fp32 evidence in a kernel name: cuBLAS/CUTLASS SGEMMs, FFMA math, fp32 xMMA operands, C++ ``float``
#: template arguments (Eigen, TF functors, NCCL ``_float``), ``fp32``/``f32``.  ``tf32`` is tested before.
_FP32 = re.compile(r"sgemm|ffma|f32f32_f32f32|\bfloat\b|_float\b|<float|fp32|(?<![a-z0-9])f32(?!\d)|single", re.I)
#: cuBLASLt Hopper/Blackwell GEMMs: ``nvjet_[smXX_]<types>_...``; the first letter is the input type
#: (``hsh`` fp16, ``tst``/``tss`` bf16, ``sss`` fp32 or TF32 with a ``_tf32`` suffix, ``qqtst`` fp8).
_NVJET = re.compile(r"nvjet_(?:sm\d+_)?([a-z]{3,6})_", re.I)
_NVJET_INPUT = {"h": P_FP16, "t": P_BF16, "s": P_FP32, "q": P_FP8, "e": P_FP8, "d": P_FP64, "i": P_INT8}


#: The dtypes a kernel name spells out, tested in this order, the first found winning (bf16 before fp16: ``bf16``
#: holds ``f16``); :func:`precision_one` then reads cuBLASLt's ``nvjet`` input letter, then plain fp32 evidence.
_NAMED_PRECISIONS = ((_BF16, P_BF16), (_FP8, P_FP8), (_FP16, P_FP16), (_INT8, P_INT8), (_TF32, P_TF32), (_FP64, P_FP64))


#: vLLM's KV-cache enum, a template parameter of every vLLM cache and attention kernel whatever the cache holds: its
#: value ``0`` (``kAuto``: the cache keeps the model's own type; ``(vllm::Fp8KVCacheDataType)0``, the Itanium
#: ``N4vllm18Fp8KVCacheDataTypeE0E``) says no fp8 at all, though its type's name says ``Fp8``.  A non-zero value is an
#: fp8 cache (``devices.amd.vllm_attention_input`` reads what an attention kernel computes in then).
_KV_CACHE_AUTO = re.compile(r"\(vllm::Fp8KVCacheDataType\)0(?!\d)|N(?:4vllm|S\d*_)18Fp8KVCacheDataTypeE0E")
#: The same enum holding a narrower cache (``(vllm::Fp8KVCacheDataType)1``: fp8 e4m3, 2: e5m2; mangled, the enum's
#: scope may be a substitution: ``LNS_18Fp8KVCacheDataTypeE1E``).
_KV_CACHE_NARROW = re.compile(r"\(vllm::Fp8KVCacheDataType\)[1-9]|N(?:4vllm|S\d*_)18Fp8KVCacheDataTypeE[1-9]E")

#: C++ element types as a kernel template's first type argument (its ``scalar_t``) spells them -> precision.
_SCALAR_TYPES = {"float": P_FP32, "double": P_FP64, "c10::Half": P_FP16, "at::Half": P_FP16, "__half": P_FP16,
                 "half": P_FP16, "_Float16": P_FP16, "c10::BFloat16": P_BF16, "at::BFloat16": P_BF16,
                 "__nv_bfloat16": P_BF16, "__hip_bfloat16": P_BF16, "__bf16": P_BF16}
#: vLLM's kernels over its KV cache (paged attention, its v2 reduce, the cache writes) keep an fp16 as its 16 bits:
#: vLLM's dispatch (``DISPATCH_BY_KV_CACHE_DTYPE``, csrc/quantization/fp8/nvidia/quant_utils.cuh) instantiates them
#: with ``float`` for fp32, ``uint16_t`` for ``at::Half`` and ``__nv_bfloat16`` for bf16, and ``uint8_t`` as
#: ``cache_t`` for an fp8 cache -- a convention vLLM took from FasterTransformer's decoder attention.  So an unsigned
#: 16-bit integer as such a kernel's element type is fp16, never an integer: a softmax has no integer form.  The
#: demangler prints ``uint16_t`` as ``unsigned short``.
_VLLM_HALF_BITS = frozenset({"unsigned short", "uint16_t"})


def _first_template_argument(name: str) -> str | None:
    """The first argument of the kernel's own template, stripped (``void vllm::f<unsigned short, ...>(...)`` ->
    ``unsigned short``), None where its own name has no template (a mangled name's is not read)."""
    if name.startswith("_Z"):
        return None
    own = _own_identifier(name)
    rest = name.removeprefix("void ")[len(own):]
    if not rest.startswith("<"):
        return None
    depth = 0
    for i, ch in enumerate(rest):
        depth += (ch == "<") - (ch == ">")
        if (ch == "," and depth == 1) or depth == 0:
            return rest[1:i].strip()
    return None


@lru_cache(maxsize=65536)
def vllm_element_precision(name: str) -> int | None:
    """The precision of a vLLM kernel (``vllm::``) by its template's element type where its dtype words mislead, None
    for any other kernel.  Two cases, both read from the first template argument (``scalar_t``):

    * ``unsigned short`` / ``uint16_t`` is fp16 (``_VLLM_HALF_BITS``): ``paged_attention_v2_kernel<unsigned short,
      ...>(float*, ...)`` read fp32 by its fp32 partial sums, the cache write ``reshape_and_cache_kernel<unsigned
      short, unsigned short, ...>`` no dtype at all;
    * an attention kernel reading an fp8 cache (``(vllm::Fp8KVCacheDataType)1``, ``cache_t`` ``unsigned char``)
      computes in ``scalar_t``: csrc/attention/attention_kernels.cuh widens each key and value vector to it
      (``fp8::scaled_convert``) before the dot products -- so ``float`` there is fp32 work, not the enum's fp8.  A
      cache *write* with that enum stores fp8 whatever it reads: ``reshape_and_cache_flash_kernel<__nv_bfloat16,
      unsigned char, (vllm::Fp8KVCacheDataType)1>`` read bf16 by its input's word, found before the enum's.

    A mangled name (a tool that keeps symbols as the binary has them) is read the same, by its own template's head
    (``codes.mangled_template_head``: ``_ZN4vllm24reshape_and_cache_kernelIttLb0EEEv...`` is ``unsigned short``)."""
    h = head(name)
    mangled = mangled_template_head(h) if h.startswith("_Z") else None
    own = mangled[0] if mangled else _own_identifier(h).removeprefix("void ")
    if not own.startswith("vllm::"):
        return None
    first = mangled[1] if mangled else _first_template_argument(h)
    if _KV_CACHE_NARROW.search(h):
        if "attention" not in own.rsplit("::", 1)[-1].lower():
            return P_FP8
        return P_FP16 if first in _VLLM_HALF_BITS else _SCALAR_TYPES.get(first or "")
    return P_FP16 if first in _VLLM_HALF_BITS else None


@lru_cache(maxsize=65536)
def precision_one(name: str) -> int:
    """Precision code of one kernel name or shape string (P_* constants); bf16 before fp16.

    Only what the name says: a name with no dtype in it (XLA ``fusion_N``, Triton ``gemm_fusion_dot``,
    ``Memset``) is ``P_UNKNOWN``, never fp32 -- counting it as fp32 raised false "mixed precision is off"
    alarms on bf16 JAX captures.
    """
    element = vllm_element_precision(name)
    if element is not None:
        return element
    name = _KV_CACHE_AUTO.sub("", head(name))
    if _QUANT_ATTENTION.search(name):
        return P_INT8
    gen, fmha = _TRTLLM_GEN.match(name), _TRTLLM_FMHA.match(name)
    own = _trtllm_input(gen.group(2)) if gen else _trtllm_input(fmha.group(1)) if fmha else None
    if own is not None:
        return own
    if _MARLIN.search(name):
        name = name.split(">(", 1)[0]
    if _OWN_FP8_GEMM.search(_own_identifier(name)):
        return P_FP8
    own = _cutlass_input(name)
    if own is not None:
        return own
    for pattern, precision in _NAMED_PRECISIONS:
        if pattern.search(name):
            return precision
    m = _NVJET.search(name)
    if m:
        return _NVJET_INPUT.get(m.group(1)[0].lower(), P_UNKNOWN)
    if _FP32.search(name):
        return P_FP32
    return P_UNKNOWN


MEMCPY_NAMES = {
    "MemcpyH2D": "h2d",
    "MemcpyD2H": "d2h",
    "MemcpyD2D": "d2d",
    "MemcpyP2P": "p2p",
    "MemcpyOther": "other",
    "Memset": "memset",
    # CUPTI activity names as PyTorch's profiler (Kineto) writes them: "Memcpy HtoD (Pinned -> Device)"
    "Memcpy HtoD": "h2d",
    "Memcpy DtoH": "d2h",
    "Memcpy DtoD": "d2d",
    "Memcpy PtoP": "p2p",
}
#: A copy direction -> its kind code (every vendor's copies: ``devices.kind_one``).
COPY_KINDS = {"h2d": KIND_H2D, "d2h": KIND_D2H, "d2d": KIND_D2D, "p2p": KIND_D2D, "memset": KIND_MEMSET, "other": KIND_OTHER_COPY}
#: Kineto names carry the memory kinds after the direction: "Memcpy DtoH (Device -> Pageable)"
_KINETO_COPY = re.compile(r"^(Memcpy [HDP]to[HDP])\b")

#: CUPTI's memory kinds that say what memory a copy's side is, as Kineto names them (``memoryKindString``, pytorch/kineto
#: ``libkineto/src/cupti_strings.cpp``) and the Nsight reader's ``ENUM_CUDA_MEM_KIND`` labels: a copy's name ends
#: ``(<source kind> -> <destination kind>)``.  CUPTI's ``Unknown`` says nothing, and ROCm's Kineto writes the copy's
#: *sides* there, not memory kinds: ``Memcpy HtoD (Host -> Device)`` (roctracer's and rocprofiler-sdk's
#: ``getMemcpySrcDstString``, ``RocprofActivity_inl.h``) -- host memory pinned or pageable alike.
MEMORY_KINDS = ("Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static")
_COPY_SIDES = re.compile(r"\(([^()]*?) -> ([^()]*?)\)\s*$")
#: Which of a copy's sides (source 0, destination 1) is host memory, by its direction; another copy's every side.
_HOST_SIDES = {"HtoD": (0,), "DtoH": (1,), "HtoH": (0, 1)}


def host_memory(name: str) -> int:
    """1 a copy to or from pageable host memory, 0 one whose name gives CUPTI's memory kinds and none of them pageable,
    -1 a name that does not say: no ``(src -> dst)`` (XPlane's ``MemcpyH2D``), or a host side no CUPTI memory kind
    names (ROCm's ``(Host -> Device)``, CUPTI's ``Unknown``); only the host side counts (an upload's source, a
    download's destination: ``(Pinned -> Unknown)`` is a pinned upload).  Why not "anything in parentheses but
    Pageable is pinned": ROCm's Kineto names the sides of every host copy ``Host``, so every AMD upload read as
    pinned and its report said the program already copies from pinned memory -- which the trace never recorded
    (h37-variance32)."""
    m = _COPY_SIDES.search(name)
    if m is None:
        return -1
    host = [m.group(i + 1) for i in _HOST_SIDES.get(name[len("Memcpy "):][:4], (0, 1))]
    if "Pageable" in host:
        return 1
    return 0 if all(s in MEMORY_KINDS for s in host) else -1


def _copy_name(name: str) -> str:
    """A copy's name without what Kineto appends to it (``Memcpy HtoD (Pinned -> Device)`` -> ``Memcpy HtoD``)."""
    m = _KINETO_COPY.match(name)
    return m.group(1) if m else name


def kind_one(name: str) -> int:
    """Kind code of one device event name: kernel, each copy kind (CUPTI's names, as XPlane and Kineto write them),
    collective (NCCL)."""
    n = head(name)
    direction = copy_direction(n)
    if direction is not None:
        return COPY_KINDS[direction]
    return KIND_COLLECTIVE if collectives.is_collective(_copy_name(n)) else KIND_KERNEL


def collective_one(name: str) -> bool:
    """A collective kernel of any communication library (``devices/collectives.py``)."""
    return collectives.is_collective(name)


#: Collective types, as nccl-tests name them; the kernel-name spellings of each: NCCL < 2.19
#: ``ncclKernel_AllReduce_RING_LL_Sum_float``, NCCL >= 2.19 ``ncclDevKernel_AllReduce_Sum_bf16_RING_LL``, RCCL the
#: same, XLA's HLO collectives (``all-reduce-start``), TF's ``NcclAllReduce`` / ``CollectiveReduceV2``.
COLLECTIVE_TYPES = ("AllReduce", "AllGather", "ReduceScatter", "AllToAll", "SendRecv", "Broadcast", "Reduce",
                    "CollectivePermute")
_COLLECTIVE_TYPE = tuple((t, re.compile(p, re.I)) for t, p in (
    ("AllReduce", r"all_?reduce|all-reduce|CollectiveReduce"),
    ("AllGather", r"all_?gather|all-gather|CollectiveGather"),
    ("ReduceScatter", r"reduce_?scatter|reduce-scatter"),
    ("AllToAll", r"all_?to_?all|all-to-all"),
    ("CollectivePermute", r"collective-permute"),
    ("SendRecv", r"SendRecv|_Send_|_Recv_|ncclKernel_Send|ncclKernel_Recv|ncclDevKernel_Send|ncclDevKernel_Recv"),
    ("Broadcast", r"Broadcast|CollectiveBcast"),
    ("Reduce", r"nccl(Dev)?Kernel_Reduce"),
))


@lru_cache(maxsize=4096)
def collective_type_one(name: str) -> str | None:
    """The collective a kernel runs, by its name (:data:`COLLECTIVE_TYPES`); None when the name does not say, as
    NCCL's and RCCL's ``ncclDevKernel_Generic`` does not (the launching host op names it)."""
    n = head(name)
    for t, rx in _COLLECTIVE_TYPE:
        if rx.search(n):
            return t
    fam = collectives.family(n)
    return fam.type if fam is not None else None


#: CUDA's "sticky" errors (``cudaError_t``, the CUDA Runtime API's error types): a kernel faulted, and the context is
#: unusable afterwards -- every later call returns the error, and the profiler cannot flush the GPU's records from it.
#: code -> (name, what happened).
STICKY_ERRORS = {
    700: ("cudaErrorIllegalAddress", "a kernel read or wrote an address outside its memory"),
    702: ("cudaErrorLaunchTimeout", "a kernel ran past the display watchdog's limit"),
    710: ("cudaErrorAssert", "a kernel's device-side assert failed"),
    714: ("cudaErrorHardwareStackError", "a kernel overflowed its call stack"),
    715: ("cudaErrorIllegalInstruction", "a kernel executed an illegal instruction"),
    716: ("cudaErrorMisalignedAddress", "a kernel accessed a misaligned address"),
    717: ("cudaErrorInvalidAddressSpace", "a kernel used an address in the wrong address space"),
    718: ("cudaErrorInvalidPc", "a kernel's program counter went invalid"),
    719: ("cudaErrorLaunchFailure", "a kernel failed while it ran"),
}


def sticky_error(code: int) -> tuple[str, str] | None:
    """(name, what happened) of a CUDA error that leaves the context unusable, else None."""
    return STICKY_ERRORS.get(int(code))


#: The errors a CUDA Runtime *launch* returns when it refuses a kernel before it runs (``cudaError_t``): the kernel
#: never runs, nothing else breaks, and the program goes on with its results missing unless it checks the return code.
#: code -> (name, the usual cause at a launch).  A cause's ``{placeholder}``s name what the export knows of the GPU and
#: the driver (:func:`launch_error`): the architecture to build for, the driver's CUDA version.
LAUNCH_ERRORS = {
    1: ("cudaErrorInvalidValue", "a launch argument out of range -- most often more dynamic shared memory than the "
                                 "48 KB a kernel gets unless cudaFuncSetAttribute(kernel, "
                                 "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) raised it"),
    2: ("cudaErrorMemoryAllocation", "the device memory the launch needed could not be allocated"),
    9: ("cudaErrorInvalidConfiguration", "a grid or block out of the device's limits (more than 1024 threads per "
                                         "block, a zero dimension) or more shared memory than a block may have"),
    98: ("cudaErrorInvalidDeviceFunction", "the kernel is not a device function of this program's loaded modules"),
    209: ("cudaErrorNoKernelImageForDevice", "the binary holds no code for this GPU's architecture{gpu} (build it "
                                            "with -arch={sm})"),
    # The module-loading errors a launch returns where the driver cannot make machine code of the kernel's PTX: the
    # kernel's module is loaded (lazily) at its first launch, so the launch is where a driver older than the toolkit
    # that built the binary shows (CUDA Runtime API, cudaLaunchKernel's return codes).
    218: ("cudaErrorInvalidPtx", "the driver's JIT compiler could not compile the kernel's PTX (build machine code "
                                "for the GPU with -arch={sm})"),
    221: ("cudaErrorJitCompilerNotFound", "the binary holds only PTX for this GPU{gpu} and the driver's PTX JIT "
                                         "compiler is missing (build machine code for the GPU with -arch={sm})"),
    222: ("cudaErrorUnsupportedPtxVersion", "the binary holds only PTX for this GPU{gpu}, built by a newer CUDA "
                                           "toolkit than the driver{driver} supports (update the driver, or build "
                                           "machine code for the GPU with -arch={sm}, or build with {toolkit})"),
    223: ("cudaErrorJitCompilationDisabled", "the binary holds only PTX for this GPU{gpu} and PTX JIT compilation is "
                                            "disabled (CUDA_DISABLE_PTX_JIT; build machine code with -arch={sm})"),
    701: ("cudaErrorLaunchOutOfResources", "the block needs more registers than an SM has for it (fewer threads per "
                                          "block, or __launch_bounds__)"),
}


#: How to find and fix a refused launch: (text, snippet).  The profiler's record holds the call and its code only;
#: the program's own check after the launch, or compute-sanitizer, names the kernel.
LAUNCH_ERROR_FIX = (
    "Check every launch's error (cudaGetLastError() right after it), fix the cause the error names, and run the "
    "program once under compute-sanitizer, which reports each refused launch with its kernel's name.",
    "kernel<<<grid, block, smem>>>(...);\n"
    "cudaError_t e = cudaGetLastError();  // the launch's own error\n"
    "if (e != cudaSuccess) { fprintf(stderr, \"%s\\n\", cudaGetErrorString(e)); abort(); }\n"
    "// over 48 KB of dynamic shared memory, before the first launch:\n"
    "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);\n"
    "// then: compute-sanitizer ./app")


def launch_error(code: int, cc: tuple[int, int] | None = None, driver: str | None = None,
                 driver_cuda: int | None = None) -> tuple[str, str] | None:
    """(name, usual cause) of an error a CUDA Runtime launch returned without running its kernel, else None; the cause
    names the GPU's architecture (``cc``, its compute capability) and the driver (``driver``, its release;
    ``driver_cuda``, the CUDA version it supports as the driver API encodes it, 12020) where the export records them.
    Why: a finding never withholds what the report knows -- "-arch=sm_XX" on an export that records an sm_89 GPU left
    the reader to look up what the report had read (h37-survey48's kept ``ptx_refused_rtx4090d``).  Unknown, the
    words stay generic."""
    found = LAUNCH_ERRORS.get(int(code))
    if found is None:
        return None
    name, cause = found
    sm = f"sm_{cc[0]}{cc[1]}" if cc else ""
    cuda = cuda_version_words(driver_cuda)
    driver_words = ", ".join(w for w in (driver, f"CUDA {cuda}" if cuda else "") if w)
    return name, cause.format(gpu=f" ({sm})" if sm else "", sm=sm or "sm_XX",
                              driver=f" ({driver_words})" if driver_words else "",
                              toolkit=f"CUDA {cuda} or older" if cuda else "the toolkit the driver supports")


def cuda_version_words(encoded: int | None) -> str:
    """The CUDA version ``cuDriverGetVersion`` encodes as 1000 * major + 10 * minor (12020 -> "12.2"); "" where it is
    unknown or not of that form."""
    if not encoded or encoded < 1000:
        return ""
    return f"{encoded // 1000}.{encoded % 1000 // 10}"


#: The words the Nsight reader puts in the name of a Unified Memory page migration (``copyKind`` UVM HtoD/DtoH/DtoD,
#: ``Memcpy HtoD (Unified Memory page migration)``): a copy no call of the program asked for -- the driver moves managed
#: memory's pages on demand, when a kernel (or the host) touches pages resident on the other side, or prefetches them.
#: Threads the CUDA driver starts in a process once it initialises there (``cuda-EvtHandlr``, its event handler): a
#: process holding one loaded and initialised CUDA, whatever the profiler traced.
CUDA_DRIVER_THREADS = frozenset({"cuda-EvtHandlr"})


def driver_thread_one(name: str) -> bool:
    """A thread the CUDA driver starts in a process where it initialised (:data:`CUDA_DRIVER_THREADS`)."""
    return name in CUDA_DRIVER_THREADS


PAGE_MIGRATION = "Unified Memory page migration"


#: The words the Nsight reader puts in the name of a migration the program asked for with ``cudaMemPrefetchAsync``
#: (``migrationCause`` "User prefetch"): a copy of the program's own, made ahead of the work that reads the pages --
#: not the driver's on-demand paging (:data:`PAGE_MIGRATION`).
UM_PREFETCH = "Unified Memory prefetch"


def page_migration_one(name: str) -> bool:
    """A Unified Memory page migration (:data:`PAGE_MIGRATION`): the driver's paging, not a copy the program made."""
    return PAGE_MIGRATION in name


def copy_direction(name: str) -> str | None:
    """"h2d", "d2h", ... for a memcpy event name, else None."""
    name = _copy_name(name)
    if name in MEMCPY_NAMES:
        return MEMCPY_NAMES[name]
    if name.startswith("Memcpy"):
        return "other"
    if name.startswith("Memset"):
        return "memset"
    return None


#: GEMM / convolution kernels by name: work Tensor Cores can do, whatever op (if any) launched it.  XLA's
#: Triton GEMMs (``gemm_fusion_dot*``), cuBLAS(Lt) (``*gemm*``, ``nvjet``, ``xmma``), CUTLASS, cuDNN convolutions
#: and fused attention.  ``convert`` fusions are not convolutions.
#: ``gemm`` but not inside ``fbgemm`` (FBGEMM's embedding kernels carry ``fbgemm_gpu::`` template arguments and are
#: no GEMMs); cuDNN convolutions by their engine names (``volta_scudnn_*``, ``dgrad_engine``, ``wgrad_alg0_engine``,
#: the Winograd transforms); Marlin's mixed-input GEMMs (``_MARLIN``); trtllm-gen's batched GEMMs (``_TRTLLM_GEN``:
#: ``bmm_Bfloat16_...`` says no ``gemm``).
_GEMM_KERNEL = re.compile(r"(?<!fb)gemm|nvjet|xmma|s884|h884|s1688|h1688|16816|hmma|wgmma|implicit_convolve|conv2d|"
                          r"conv3d|_conv_|convolution|fprop|dgrad|wgrad|flash_fwd|flash_bwd|fmha|[shdi]cudnn_|"
                          r"winograd|" + _MARLIN.pattern, re.I)
#: Library kernels that are positively no GEMM or convolution whatever op launched them: CUB and Thrust primitives
#: (sorts, scans, reductions).
_NOT_GEMM = re.compile(r"\bcub::|\bthrust::|DeviceRadixSort|DeviceSegmentedRadixSort|DeviceScan|DeviceReduce")


def not_gemm_one(name: str) -> bool:
    """A library kernel that is positively no matmul/convolution (see ``_NOT_GEMM``)."""
    return bool(_NOT_GEMM.search(head(name)))


def _cudnn_attention(lower: str) -> bool:
    """``cudnn`` followed anywhere later by ``attn``/``attention``, in linear time (was ``cudnn.*(attn|attention)``,
    which rescans the rest of the name from every ``cudnn``: quadratic)."""
    i = lower.find("cudnn")
    if i < 0:
        return False
    return lower.find("attn", i + 5) >= 0 or lower.find("attention", i + 5) >= 0


#: cuDNN's and CUTLASS's weight-gradient convolutions (``wgrad``: ``sm80_xmma_wgrad_implicit_gemm_...``,
#: ``cudnn::...::wgrad_alg0_engine``) and cuDNN's batch-norm backward (``bn_bw_1C11_...``): kernels only a backward
#: pass runs.  Not ``dgrad`` (the data gradient), which a transposed convolution's forward runs too.
_GRADIENT = re.compile(r"wgrad|(?:^|[_:])bn_bw_", re.I)


def gradient_kernel_one(name: str) -> bool:
    """A kernel only a backward pass runs, by cuDNN's or CUTLASS's naming (a weight gradient)."""
    return bool(_GRADIENT.search(head(name)))


#: cuDNN's and CUTLASS's data-gradient convolutions (``cudnn::detail::dgrad_engine``, ``dgrad2d_alg1_1``,
#: ``sm80_xmma_dgrad_implicit_gemm_...``): a backward's, or a transposed convolution's forward -- so never read as
#: training by itself, but a loop that runs one is not read as forward passes alone (``job.kind``).
_DATA_GRADIENT = re.compile(r"dgrad", re.I)


def data_gradient_one(name: str) -> bool:
    """A data-gradient convolution by cuDNN's or CUTLASS's naming (:data:`_DATA_GRADIENT`)."""
    return bool(_DATA_GRADIENT.search(head(name)))


#: The operand layout cuBLAS, cuBLASLt and CUTLASS spell in a matrix product's name, BLAS's ``op(A)``/``op(B)``
#: (``n`` as stored, ``t`` transposed): ``nvjet_tst_..._TNN`` (A, B, then the output's), ``volta_sgemm_128x64_tn``,
#: ``sm80_xmma_gemm_..._tn_n_tilesize...``, ``cutlass_80_tensorop_s16816gemm_..._nt_align8``, ``gemmSN_TN_kernel``.
#: A convolution's implicit GEMM (cuDNN's ``scudnn_..._nn_v1``, ``implicit_gemm``) spells its tile order, not a
#: product's operands, and a complex product (``volta_gcgemm_32x32_nt``, ``cgemm``, ``zgemm``) is an FFT
#: convolution's pointwise product in frequency space (cuDNN runs it inside a DenseNet-121's forward on a T1000,
#: ML-DL-Security ``report3``): none read.
_NVJET_LAYOUT = re.compile(r"^nvjet_\w*?_([TN])([TN])[TN]$")
_GEMM_LAYOUT = re.compile(r"(?i:gemm)\w*?_([nt]{2})(?:_|$)|(?i:gemm)\w*?_([NT]{2})_kernel")
_CONVOLUTION_WORD = re.compile(r"cudnn|conv|fprop|dgrad|wgrad|winograd|implicit|(?:^|_)(?:g?c|z)gemm", re.I)


def gemm_operand_layout(name: str) -> str:
    """A matrix product's operand layout by its library's name (:data:`_GEMM_LAYOUT`), two letters of ``n``/``t``
    (A's, then B's); "" where the name says none.  Why: a backward computes each product's two gradients,
    dA = dC·Bᵀ and dB = Aᵀ·dC, with the operands transposed -- a training step runs its products in layouts a
    forward pass alone does not (a language model's ``volta_sgemm_*_tn`` forward, ``_nn`` and ``_nt`` backward)."""
    h = head(name).strip()
    m = _NVJET_LAYOUT.match(h)
    if m:
        return (m.group(1) + m.group(2)).lower()
    if _CONVOLUTION_WORD.search(h):
        return ""
    m = _GEMM_LAYOUT.search(h)
    return (m.group(1) or m.group(2)).lower() if m else ""


#: cuDNN's batch normalization of training, forward and backward (``cudnn::bn_fw_tr_1C11_kernel_NCHW``,
#: ``bn_fw_tr_1C11_singleread``, ``bn_bw_1C11_kernel_new``): each reduces every channel to its statistics (or their
#: gradients) before it scales -- a reduction.  Not the inference kernel (``bn_fw_inf_``), which applies stored ones.
#: The name may be Itanium-mangled, where a length precedes each identifier (``_ZN5cudnn24bn_fw_tr_1C11_...``):
#: ``_BN_AT``, where a cuDNN batch-norm kernel's name begins, mangled or not, is that of :data:`_BATCH_NORM` too.
_BN_AT = r"(?:^|[_:\d])bn_"
_NORMALIZATION = re.compile(_BN_AT + r"(?:fw_tr|bw)_")
#: cuDNN's layout conversions (``cudnn::ops::nchwToNhwcKernel``, ``nhwcToNchwKernel``; mangled in some captures:
#: ``_ZN5cudnn19engines_precompiled16nchwToNhwcKernel...``): a convolution's input or output transposed between
#: NCHW and NHWC around a Tensor Core engine -- each element read once and written once, no arithmetic.
_LAYOUT_CONVERSION = re.compile(r"nchw_?to_?nhwc|nhwc_?to_?nchw", re.I)


#: Every cuDNN batch-norm kernel, the inference one (``bn_fw_inf_1C11_kernel_NCHW``: stored statistics applied) too.
_BATCH_NORM = re.compile(_BN_AT + r"(?:fw_(?:tr|inf)|bw)_")


def batch_norm_one(name: str) -> bool:
    """A cuDNN batch-norm kernel of any pass (``_BATCH_NORM``), mangled or not."""
    return bool(_BATCH_NORM.search(head(name)))


def layout_conversion_one(name: str) -> bool:
    """A layout conversion kernel (``_LAYOUT_CONVERSION``): data movement around a convolution."""
    return bool(_LAYOUT_CONVERSION.search(head(name)))


def normalization_one(name: str) -> bool:
    """A normalization kernel that reduces its rows or channels, by cuDNN's naming (``_NORMALIZATION``)."""
    return bool(_NORMALIZATION.search(head(name)))


#: cuBLAS's matrix x vector products by their own function (cuBLAS's level-2 ``gemv`` and ``gemvx`` kernels:
#: ``internal::gemvx::kernel<...>`` -- ``cublasGemmEx`` / ``cublasSgemv`` with one column, which PyTorch's ``mv``,
#: ``addmv`` and a ``linear`` of one row call --, the older ``gemv2N_kernel``, ``gemv2T_kernel_val``,
#: ``gemvNSP_kernel``): each weight is read once and multiplied once, so no matrix unit can speed them.  Only the
#: function's own name is read (``codes.function_parts``): the small-N GEMMs (``gemmSN_TN_kernel``) carry
#: ``cublasGemvTensorStridedBatched`` in their template arguments and stay GEMMs (``gemmk1_kernel``, which carries it
#: too, is :func:`outer_product_one`'s).
_CUBLAS_GEMV = re.compile(r"gemv\w*")


@lru_cache(maxsize=65536)
def matrix_vector_one(name: str) -> bool:
    """A cuBLAS matrix x vector product (``_CUBLAS_GEMV``), by its own function's name."""
    return any(_CUBLAS_GEMV.fullmatch(p) for p in function_parts(name))


#: cuBLAS's GEMM for an inner dimension of one (``gemmk1_kernel``: ``cublasGemmEx`` with k = 1, an outer product
#: ``C = alpha * a b^T + beta * C`` -- a ``linear`` of one input feature, a broadcast product written as a matmul):
#: each output element is one product of one element of each operand, nothing is accumulated, so a Tensor Core's
#: tile has no sum to run (2-3 FLOP per output element against its 2-4 bytes written: element-wise work, the
#: memory's time).  cuBLAS picks it for k = 1 whatever the other dims' alignment.
_OUTER_PRODUCT = "gemmk1_kernel"


@lru_cache(maxsize=65536)
def outer_product_one(name: str) -> bool:
    """cuBLAS's k = 1 GEMM (``_OUTER_PRODUCT``), by its own function's name."""
    return _OUTER_PRODUCT in function_parts(name)


#: CUB's prefix scans and the passes of its radix sort that count or scan (NVIDIA/cccl cub/device/dispatch/
#: dispatch_scan.cuh, dispatch_radix_sort.cuh; PyTorch's copy in ``at_cuda_detail::cub``), by the kernel's own
#: function under a ``cub`` namespace: ``DeviceScanKernel`` / ``DeviceScanByKeyKernel`` (``cumsum``, the offsets of a
#: ``nonzero`` or an index sort), ``RadixSortScanBinsKernel`` and ``DeviceRadixSortExclusiveSumKernel`` (the digit
#: counts' prefix sum), ``DeviceRadixSortUpsweepKernel`` and ``DeviceRadixSortHistogramKernel`` (the digit counts) --
#: reductions; ``DeviceScanInitKernel`` and ``DeviceCompactInitKernel`` initialise the tiles' status words (a fill:
#: element-wise).  The sort's ranking-and-scatter passes (``Downsweep``, ``Onesweep``, ``SingleTile``) do neither alone
#: and stay unread.  ``DeviceReduce*`` kernels are read by their word (``REDUCTION``).
_CUB_KINDS = {"DeviceScanKernel": "reduction", "DeviceScanByKeyKernel": "reduction",
              "RadixSortScanBinsKernel": "reduction", "DeviceRadixSortExclusiveSumKernel": "reduction",
              "DeviceRadixSortUpsweepKernel": "reduction", "DeviceRadixSortHistogramKernel": "reduction",
              "DeviceScanInitKernel": "elementwise", "DeviceCompactInitKernel": "elementwise"}


def primitive_kind(name: str) -> str | None:
    """The class of a CUB scan or radix-sort counting kernel (``_CUB_KINDS``), by its own function under a ``cub``
    namespace; None for any other kernel."""
    parts = function_parts(name)
    return _CUB_KINDS.get(parts[-1]) if "cub" in parts[:-1] else None


#: TensorRT-LLM's Mixture-of-Experts routing and finalize kernels (its trtllm-gen MoE, ``namespace moe::dev``, which
#: FlashInfer ships and vLLM and SGLang call for Blackwell MoE layers; truth from ``RoutingKernel.cuh`` and
#: ``DevKernel.cu``): the router's ``moe::dev::routing::<method>::routingIndices*Kernel`` pick each token's top-k experts
#: from its scores (``HistogramScores``: a selection over the expert row), count the tokens per expert (``Histogram``:
#: a histogram) and prefix-scan the counts into each expert's offsets, placing each (token, expert) pair there
#: (``Offsets``; the ``Block``, ``Cluster`` and ``Coop`` kernels fuse the three) -- reductions over the experts; its
#: ``routingInitExpertCounts`` zeroes the counts (element-wise).  ``moe::dev::finalize::finalizeKernel*`` gathers each
#: token's k expert outputs and sums them weighted by the router's scores (the "k-way reduction"): a reduction.  No
#: product of two matrices in any: the experts' GEMMs are the trtllm-gen ``bmm_*`` kernels (``_TRTLLM_GEN``).  They
#: were "other" (h37-kernelfam3): 7.4% of a gpt-oss engine step on a B200, 3.7% of an SGLang decode step on a B300.
_TRTLLM_MOE_NS = ("moe", "dev")
_TRTLLM_MOE_ZEROING = "routingInitExpertCounts"


def moe_routing_kind(name: str) -> str | None:
    """The class of a TensorRT-LLM MoE routing or finalize kernel (``_TRTLLM_MOE_NS``): "elementwise" for its
    counts' zeroing, "reduction" for every other routing or finalize kernel; None for any other kernel."""
    parts = function_parts(name)
    if parts[:2] != _TRTLLM_MOE_NS or len(parts) < 4 or parts[2] not in ("routing", "finalize"):
        return None
    return "elementwise" if parts[-1] == _TRTLLM_MOE_ZEROING else "reduction"


#: cuDNN's direct convolutions, by the word its own function carries in every direction: ``conv2d_grouped_direct_kernel``
#: (forward), ``dgrad2d_grouped_direct_kernel`` (data gradient), ``wgrad2d_grouped_direct_kernel`` (weight gradient) --
#: in ``cudnn::cnn::`` since cuDNN 8, global in cuDNN 7 (a TF 2 Keras trace's ``void dgrad2d_grouped_direct_kernel<float,
#: float, float, true, 0, 1, (cudnnTensorFormat_t)0>(cudnnTensorStruct, ...)``).  Each thread sums its output's window
#: over the group's channels in registers: no GEMM form, no ``mma`` -- cuDNN's engine for grouped and depthwise layers
#: (JAX's and Flax's depthwise convolutions lower to it; ConvNeXt's 7x7 depthwise layers run it under PyTorch) and a
#: scalar fallback where no Tensor Core engine takes the layer (a cuDNN 9 INT8 layer on sm_120 fell back to it, ~100x
#: off an IMMA kernel).
_DIRECT_CONV = re.compile(r"grouped_direct")


#: cuDNN's convolutions that multiply less than the direct count: its Winograd engines (the fused
#: ``*scudnn_winograd_*`` kernels, ``cudnn::winograd_nonfused::winograd*4x4`` transforms around their GEMM,
#: ``cudnn::winograd::generateWinogradTilesKernel``) and its FFT engines (``fft2d_r2c_32x32``, ``fft2d_c2r_32x32``,
#: ``fft1d_r2c_32``: transforms around a complex GEMM, ``*_cgemm_*`` / ``*_gcgemm_*``).
_FEWER_MULTIPLIES = re.compile(r"winograd|(?:^| )fft[123]d_[rc]2[rc]", re.I)


def fewer_multiplies_one(name: str) -> bool:
    """A cuDNN Winograd or FFT convolution kernel (``_FEWER_MULTIPLIES`` in its own function's parts)."""
    return bool(_FEWER_MULTIPLIES.search(" ".join(function_parts(head(name)))))


@lru_cache(maxsize=65536)
def direct_convolution_one(name: str) -> bool:
    """A cuDNN direct convolution (``_DIRECT_CONV`` in its own function's parts: not a word of its template arguments)
    whose name claims no Tensor Core (:func:`tensor_core_one`: ``xmma``, ``hmma``, ``implicit_gemm``, an MMA shape):
    convolution work on the CUDA cores, which no dtype or alignment puts on the Tensor Cores."""
    return bool(_DIRECT_CONV.search(" ".join(function_parts(head(name))))) and not tensor_core_one(name)


@lru_cache(maxsize=65536)
def gemm_kernel_one(name: str) -> bool:
    """A matmul/convolution kernel by name (Tensor-Core-eligible work)."""
    name = head(name)
    gemm = (bool(_GEMM_KERNEL.search(name)) or _cudnn_attention(name.lower()) or bool(_TRTLLM_GEN.match(name))
            or attention_kernel_one(name) or bool(_QUANT_ATTENTION.search(name)) or _cute_dsl_mma(name))
    return gemm and not collectives.is_collective(name)


#: FlashAttention's backward helpers: kernels of the attention family that run no matmul.  FlashAttention 2's
#: ``flash_bwd_dot_do_o_kernel`` (the row-wise dot of dO and O, a reduction), ``flash_bwd_clear_dkvaccum_kernel`` (it
#: zeroes the fp32 accumulators), ``flash_bwd_convert_dq_kernel`` / ``flash_bwd_convert_dkv_kernel`` (they cast those
#: accumulators to the output type); FlashAttention 3's ``FlashAttnBwdPreprocess`` (the same dot and clear) and
#: ``FlashAttnBwdPostprocessConvertdQ`` (the cast).  The family's prefix (``flash_bwd``) says attention, the rest of
#: the name what the kernel does: the dQ/dK/dV kernel itself (``flash_bwd_dq_dk_dv_loop_...``) stays a matmul.
#: The forward's helpers likewise: a split-KV attention writes partial outputs with their log-sum-exp, and a combine
#: kernel merges them (a reduction over the splits) -- FlashAttention 2's ``flash_fwd_splitkv_combine_kernel``,
#: FlashAttention 3's ``FlashAttnFwdCombine``, FlashAttention 4's ``FlashAttentionForwardCombine``, FlashInfer's
#: ``MergeStatesKernel`` / ``VariableLengthMergeStatesKernel`` (its word for merging partial attention states).
_ATTENTION_HELPER = re.compile(r"flash_bwd_(?:dot_do_o|convert_d[qkv]+|clear_d[qkv]+_?accum)|"
                               r"FlashAttnBwd(?:Preprocess|Postprocess)|flash_fwd_splitkv_combine|"
                               r"FlashAttn(?:Fwd)?Combine|FlashAttention(?:Forward)?Combine|"
                               r"flashinfer::\w*?MergeStates?")


def attention_helper_one(name: str) -> bool:
    """A helper kernel of FlashAttention's backward (``_ATTENTION_HELPER``): attention's family, no matmul."""
    return bool(_ATTENTION_HELPER.search(head(name)))


#: CUDA runtime and driver calls that block the host until the GPU (a stream, an event, the device) is done.
SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cuStreamSynchronize",
              "cuCtxSynchronize", "cuEventSynchronize")


def is_sync_call(name: str) -> bool:
    """A host call that waits for the GPU: while inside it, the host is not what the GPU waits for."""
    return name.startswith(SYNC_CALLS)


#: CUDA runtime and driver calls that ask whether an event or a stream is done and return at once: a program that
#: calls one until it says so (``while not ev.query()``; ``torch.cuda.Event.query`` / ``Stream.query`` call
#: ``cudaEventQuery`` / ``cudaStreamQuery``) waits for the GPU as a sync does; the caching allocator's one query of each
#: freed block's event is no wait (``job.waits.polls``).
POLL_CALLS = ("cudaEventQuery", "cudaStreamQuery", "cuEventQuery", "cuStreamQuery")


#: Calls that only read what the device is (its count, properties, attributes, versions): no memory, no work, no
#: stream -- what a profiler asks at its start.  And the calls that wait for the whole device: ``torch.cuda.
#: synchronize()``'s, which ``torch.profiler`` makes as it stops (a window whose only other calls are the queries holds
#: the profiler's calls alone).
QUERY_CALLS = ("cudaGetDeviceCount", "cudaGetDeviceProperties", "cudaDeviceGetAttribute", "cudaGetDevice",
               "cudaDriverGetVersion", "cudaRuntimeGetVersion", "cuDeviceGetCount", "cuDeviceGetAttribute",
               "cuDriverGetVersion")
DEVICE_SYNC_CALLS = ("cudaDeviceSynchronize", "cuCtxSynchronize")


#: Runtime and driver calls that launch one kernel: a call of milliseconds here is no launch cost but a one-time one
#: (CUDA's lazy module loading runs inside the first launch of each kernel; ``CUDA_MODULE_LOADING=LAZY`` is the
#: default since CUDA 11.7).
LAUNCH_CALLS = ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchCooperativeKernel", "cuLaunchCooperativeKernel",
                "cudaLaunchKernelExC", "cuLaunchKernelEx")
#: The driver API's launches of a kernel from a module the program loaded itself (``cuModuleLoadData``, then
#: ``cuModuleGetFunction``): how a kernel compiled at run time is started -- Triton's launcher, CuPy's and Numba's
#: kernels, Inductor's generated code -- where a library compiled into the program launches through the runtime API
#: (``cudaLaunchKernel``: ATen's own kernels).  ``cuLaunchKernelEx`` is matched as ``cuLaunchKernel``'s prefix.
MODULE_LAUNCH_CALLS = ("cuLaunchKernel", "cuLaunchCooperativeKernel")
#: Calls that only a process's first work makes: loading modules, creating library handles (cuBLAS, cuBLASLt, cuDNN),
#: building a CUDA graph.  ``cudaGetDeviceProperties``-style queries are cheap and left out.  ``cuKernelGetFunction``
#: is CUDA 12's library API twin of ``cuModuleGetFunction``: a library (cuBLAS 12) loads its fatbinary with
#: ``cuLibraryLoadData``, gets a kernel with ``cuLibraryGetKernel`` and, before each launch, its function in the
#: current context with ``cuKernelGetFunction`` -- under lazy loading the first such call of a kernel loads its module
#: into the context (107-726 ms for one cuBLAS DGEMM on an A100, ntua-el20062/gemm_spmm_a100; microseconds after).
#: Only calls of ``job.one_time_call_ms`` or more count, so the repeat fetches stay out.
#: Calls that release what a program made, as its tear-down makes them after its loop: streams, events, graphs, library
#: handles and modules destroyed or unloaded, the context released or reset (``cudaDeviceReset`` destroys the primary
#: context), NCCL's communicators destroyed (NCCL records its API calls as NVTX ranges in its ``NCCL`` domain, named for
#: the function: ``NVTX3_FUNC_RANGE_IN(nccl_domain)`` in NVIDIA/nccl ``src/init.cc``).  The frees are
#: ``devices.is_any_free_call``'s (h37-probe43w).
TEARDOWN_CALLS = ("cudaStreamDestroy", "cuStreamDestroy", "cudaEventDestroy", "cuEventDestroy", "cuModuleUnload",
                  "cuLibraryUnload", "cudaDeviceReset", "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxReset",
                  "cuCtxDestroy", "cudaGraphExecDestroy", "cudaGraphDestroy", "cuGraphExecDestroy", "cuGraphDestroy",
                  "cublasDestroy", "cublasLtDestroy", "cudnnDestroy", "ncclCommDestroy", "ncclCommAbort",
                  "ncclCommFinalize")
INIT_CALLS = ("cuModuleLoad", "cudaModuleLoad", "cuLibraryLoad", "cuModuleGetFunction", "cuKernelGetFunction",
              "cudnnCreate", "cublasCreate", "cublasLtCreate", "cudaGraphInstantiate", "cuGraphInstantiate", "cuInit",
              "cudaFuncGetAttributes")
#: The one-time calls that fetch a kernel's handle or attributes, which a program may make before every launch (cuBLAS
#: 12's ``cuKernelGetFunction``, a launcher's ``cudaFuncGetAttributes``): slow only the first time a kernel is asked
#: for (lazy loading loads its module inside that call), microseconds after (a real A4000 Swin capture,
#: ``wild/cold_loop_a4000_swin``: the first ``cudaFuncGetAttributes`` 117 us, its 5 later calls 1-2 us).  One slow
#: every time is the program's steady cost, no first call's (``job.phase``).
LOOKUP_CALLS = ("cuModuleGetFunction", "cuKernelGetFunction", "cudaFuncGetAttributes")
#: Calls the CUDA runtime makes once, while it initialises in a process, before the call that creates its context
#: (CUDA 11.7 and newer query the module loading mode first; every process-start export read so far opens with it): a
#: window that holds one holds the process's start, so the next runtime call of its thread creates the context,
#: whatever call it is (``cudaMalloc``, ``cudaMallocManaged``, a blocking ``cudaMemcpyToSymbol``).
RUNTIME_INIT_CALLS = ("cuModuleGetLoadingMode",)
#: The OS calls through which the driver's user-space library talks to its kernel module (``ioctl`` on
#: ``/dev/nvidiactl``, ``/dev/nvidia0``, ``/dev/nvidia-uvm``), as Nsight's OS runtime trace (``-t osrt``) names them:
#: creating a context is hundreds of them (a real A100 export: 652 in 971 ms, up to 215 ms each).
DRIVER_OS_CALLS = ("ioctl",)
#: Compiling a kernel at run time: NVRTC (CUDA C++ to PTX, ``nvrtcCompileProgram``), nvJitLink and the driver's
#: linker.  A fusion compiler (nvFuser, Triton, CuPy's raw kernels) runs them once per new kernel: a one-time cost.
#: JIT compilers wrap them in their own NVTX ranges (nvFuser: ``executor_utils::Nvrtc::CompileProgram``), so the
#: name is matched anywhere in an event's name, any case.
JIT_COMPILE_CALLS = ("nvrtccompileprogram", "nvrtc::compileprogram", "nvjitlinkcomplete", "culinkcomplete")
#: Calls that open a run-time link of code the program just generated (the driver's linker, nvJitLink).  A JIT
#: compiler that is not NVRTC (Numba's NVVM, an LLVM backend) leaves no call of its own in the capture: its compile is
#: the host's silence right before the link, and the link is what shows that it was one.
LINK_START_CALLS = ("cuLinkCreate", "nvJitLinkCreate")
#: Calls that load a module from an image in the program's memory, not from a file: the image was made in the process
#: (NVRTC's cubin or PTX for CuPy's element-wise and reduction kernels, Triton's and PyTorch's jiterator's kernels) or
#: read from a compiler's cache.  NVRTC is a library, not the runtime: ``nsys -t cuda`` records none of its calls, so
#: a compile shows only as the host's silence before the load (CuPy 13 on an A100, nikitinvv/recon-stream: 169 ms
#: with no CUDA call, then ``cuModuleLoadData`` and the new kernel's first launch).  ``cuLibraryLoadData`` is left
#: out: the CUDA 12 runtime loads the program's own fatbinaries with it at start-up.
IMAGE_LOAD_CALLS = ("cuModuleLoadData", "cuModuleLoadFatBinary")

#: Stream capture of a CUDA graph: kernels launched between these record, they do not run (one-time, graph set-up).
CAPTURE_CALLS = (("cudaStreamBeginCapture", "cuStreamBeginCapture"), ("cudaStreamEndCapture", "cuStreamEndCapture"))

#: Runtime and driver calls that replay a CUDA graph (``torch.compile(mode="reduce-overhead")``, ``torch.cuda.graphs``).
GRAPH_LAUNCH_CALLS = ("cudaGraphLaunch", "cuGraphLaunch")
#: Calls that make a stream wait for an event recorded on another (PyTorch's ``wait_stream``, ``Event.wait``): the
#: capture's record of a handoff between streams the program ordered.
STREAM_WAIT_CALLS = ("cudaStreamWaitEvent", "cuStreamWaitEvent")
#: Launches whose recorded ``grid`` counts threads, not blocks (``amd.WORK_ITEM_GRID_CALLS``): none, CUPTI records
#: ``gridX..Z`` in blocks for every launch.
WORK_ITEM_GRID_CALLS: tuple[str, ...] = ()

#: Pinned (page-locked) host memory taken from and given back to the driver (runtime and driver API, without their
#: ``_v3020`` suffixes): the driver's allocator as much as ``cudaMalloc`` is.  Page-locking is slow -- the OS pins and
#: maps every page for the GPU (ParallelKernelsTest's pass on a GTX 1060: 176 ms of ``cudaHostAlloc`` /
#: ``cudaFreeHost``, h37-survey71) -- and a program that does it in its loop pays it every pass (allocate once, reuse).
PINNED_ALLOC_CALLS = ("cudaHostAlloc", "cudaMallocHost", "cudaFreeHost", "cudaHostRegister", "cudaHostUnregister",
                      "cuMemHostAlloc", "cuMemAllocHost", "cuMemFreeHost", "cuMemHostRegister", "cuMemHostUnregister")
#: Runtime and driver calls that set (fill) memory: a subset of :data:`COPY_CALLS`.
FILL_CALLS = ("cudaMemset", "cuMemset")
#: Runtime and driver calls that copy or set memory; an ``...Async`` one is asynchronous, the others synchronous.
COPY_CALLS = ("cudaMemcpy", "cuMemcpy") + FILL_CALLS
#: Copy kinds a CUDA copy call not named ``...Async`` returns before, as CUDA's API synchronization behaviour states:
#: "for transfers from device memory to device memory, no host-side synchronization is performed"; the memset
#: functions "are asynchronous with respect to the host except when the target memory is pinned host memory";
#: ``cudaMemcpyPeer`` is "asynchronous with respect to the host".  Measured: 15 of the 16 ``cudaMemset`` calls of the
#: kept RTX 6000 export (``wild/mordred_rtx6000_hashjoin``) returned before their fill ended.
HOST_FREE_KINDS = (KIND_D2D, KIND_MEMSET)


def copy_call_sync(name: str, kind: int | None = None) -> int:
    """1 a CUDA copy or memset call that holds the host until its work is done, 0 one that returns before (an
    ``...Async`` call, or a synchronous one of a kind that moves no host memory: :data:`HOST_FREE_KINDS`), -1 no copy
    call (:data:`COPY_CALLS`); ``kind`` is the copy's recorded kind where the reader knows it -- the same question,
    with the same arguments, as ``amd.copy_call_sync``."""
    if not name.startswith(COPY_CALLS):
        return -1
    return 0 if "Async" in name or kind in HOST_FREE_KINDS else 1


#: Runtime and driver calls the host spends blocked in: the syncs, and copies (a copy to or from pageable memory
#: waits for the stream, then copies through a staging buffer; an asynchronous one to pinned memory returns at once).
BLOCKING_CALLS = SYNC_CALLS + COPY_CALLS


def is_blocking_call(name: str) -> bool:
    """Host time inside this call is waiting for the GPU or the driver, not host work."""
    return name.startswith(BLOCKING_CALLS)


#: Compute capability from which a generation has Tensor Cores (Volta, sm70), TF32 Tensor Core math and bf16 (Ampere,
#: sm80).  NVIDIA's architecture whitepapers.
TENSOR_CORE_MIN_CC = 7.0
TF32_MIN_CC = 8.0


def has_tensor_cores(cc: float | None) -> bool | None:
    """Whether a GPU of compute capability ``cc`` has Tensor Cores (None when the capture does not say)."""
    return None if cc is None else cc >= TENSOR_CORE_MIN_CC


def has_tf32(cc: float | None) -> bool | None:
    """Whether it runs TF32 (and bf16) on Tensor Cores: Ampere and later."""
    return None if cc is None else cc >= TF32_MIN_CC


def has_bf16(cc: float | None) -> bool | None:
    """Whether its Tensor Cores run bfloat16: Ampere and later (V100 and T4 have fp16 Tensor Cores only)."""
    return has_tf32(cc)


#: Per-direction GPU<->GPU bandwidth of each generation's NVLink (per GPU, all links), by compute capability major.
NVLINK_BANDWIDTH = {
    7: (150e9, "NVLink 2 on V100 (~150 GB/s per direction per GPU)"),
    8: (300e9, "NVLink 3 on A100 (~300 GB/s per direction per GPU)"),
    9: (450e9, "NVLink 4 on H100 (~450 GB/s per direction per GPU)"),
    10: (900e9, "NVLink 5 on B200 (~900 GB/s per direction per GPU)"),
}


def _fixes() -> dict[str, Action]:
    return {
        "topology": Action(text="Check the interconnect between the GPUs (NVLink vs PCIe) and that NCCL uses it.",
                           snippet="nvidia-smi topo -m", snippet_lang="shell"),
        "transport": Action(text="Check which transport NCCL picked between the GPUs (NVLink / InfiniBand / sockets) "
                                 "and why: its log names the channels, rings and the network plugin.",
                            snippet="export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET   # then look for 'via NET/Socket' "
                                    "or 'P2P/IPC'", snippet_lang="shell"),
        "network": Action(text="Between hosts: one NIC per GPU (NCCL_IB_HCA), GPUDirect RDMA enabled, no TCP fallback; "
                               "within a host: the GPUs on NVLink rather than PCIe.",
                          snippet="nvidia-smi topo -m", snippet_lang="shell"),
        "clocks": Action(text="Look at the node itself: GPU clocks and throttle reasons (thermal, power), and other "
                              "processes on it.", snippet="nvidia-smi -q -d PERFORMANCE,CLOCK,TEMPERATURE",
                         snippet_lang="shell"),
        # a kernel launched with fewer blocks than SMs (``small_grid``), where the program picks its launch itself
        # the same too-small grids in a library's kernels (``devices.library_kernel_one``), which the program does not
        # launch itself: what it can change is the calls (h37-words32)
        "library_blocks": Action(
            text="For a library's kernels (cuBLAS, cuDNN, CUTLASS): the library sizes each grid from the "
                 "shapes it is called with, so no launch setting of yours changes it -- only the calls do: fewer, "
                 "larger calls (many small matrix products as one batched call: cublasGemmStridedBatched, a "
                 "framework's batched matmul)."),
        "more_blocks": Action(
            text="For a kernel of your own (CUDA C++, an extension): launch at least one thread block per SM (better "
                 "several), sized from the data (grid = ceil(n / threads per block)), and loop over the data with a "
                 "grid-stride loop so any grid covers it; a serial loop in one thread (a sum over an array) becomes a "
                 "parallel reduction: each block reduces a slice, then one short pass combines the blocks' results "
                 "(or call CUB's cub::DeviceReduce). Where that grid is still under the SMs -- one thread per "
                 "element, and too few elements -- a bigger grid only adds idle threads: launch smaller blocks (64 "
                 "or 128 threads: more blocks for the same elements), give each element several threads (a warp per "
                 "element for its inner loops), or run independent work at once on other streams.",
            snippet="__global__ void k(const float* x, float* y, int n) {\n"
                    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
                    "        y[i] = f(x[i]);\n"
                    "}\n"
                    "k<<<num_sms * 4, 256>>>(x, y, n);   // cudaDeviceGetAttribute(&num_sms, "
                    "cudaDevAttrMultiProcessorCount, dev)",
            snippet_lang="text"),
    }


#: The vendor's own fixes, by key (a rule asks ``devices.vendor_of(...).FIXES[key]``).
FIXES = _fixes()


def link_bandwidth_of(cc_major: int | None) -> tuple[float, str] | None:
    """NVLink bandwidth of a generation, None when the generation is unknown or has no NVLink entry."""
    return NVLINK_BANDWIDTH.get(cc_major) if cc_major is not None else None


# ---- the vendor interface every vendor module gives (``devices.VENDORS``): name in, answer out -------------------

#: Names NVIDIA's GPUs carry; NVIDIA is also the vendor asked last, when no other claims a GPU.
_DEVICE = re.compile(r"NVIDIA|Tesla|GeForce|Quadro|Tegra|Jetson|\bRTX\b|\b[ABHLTV]\d{1,3}\b|\bGB?\d{3}\b", re.I)


def is_device(name: str | None) -> bool:
    return bool(name) and bool(_DEVICE.search(name or ""))


#: GPUs whose name alone says their compute capability, one model per name (NVIDIA's CUDA GPU list): the ones a
#: capture names without its properties -- nvprof's printed trace names the GPU and nothing else of it, and nvprof
#: profiles GPUs up to Volta, most of them with no Tensor Cores (jakemdaly/PyTorch-GPU-Profiling's ``NVIDIA Tegra X1``,
#: a Jetson Nano: Maxwell, sm_53; h37-wild57n).  Only names no other compute capability is sold under.
CC_BY_NAME: tuple[tuple[re.Pattern, tuple[int, int]], ...] = tuple((re.compile(p, re.I), cc) for p, cc in (
    (r"\bTegra X1\b|\bJetson (?:Nano|TX1)\b", (5, 3)),
    (r"\bTegra X2\b|\bJetson TX2\b", (6, 2)),
    (r"\bXavier\b", (7, 2)),
    (r"\bOrin\b", (8, 7)),
    (r"\bTesla K(?:20|40)[cmx]?\b", (3, 5)),
    (r"\bTesla K80\b", (3, 7)),
    (r"\bTesla M(?:40|60)\b", (5, 2)),
    (r"\bTesla P100\b", (6, 0)),
    (r"\bTesla P(?:4|40)\b", (6, 1)),
    (r"\bGeForce GTX (?:950|960|970|980)(?: Ti)?\b(?!\s*M)", (5, 2)),
    (r"\bGeForce GTX 10[5-8]0(?: Ti)?\b", (6, 1)),
))


#: Turing parts without Tensor Cores, though their sm_75 says Turing: the TU116 and TU117 dies of the GeForce GTX 16
#: series (1630-1660 Ti), the GeForce MX450 / MX550 and the workstation T400-T2000 (``NVIDIA T1000``, ``Quadro T2000``,
#: laptop ones too) -- NVIDIA's product pages list no Tensor Core for any of them (the TU11x dies have fp16 units of
#: twice the fp32 rate instead).  The T4 (TU104) is not among them.  Why: a capture of an ``NVIDIA T1000`` (sm 7.5, 14
#: SMs; owaisahmadlone/ML-DL-Security's torchvision inference, survey "Session 69 hunt69c") was told its fp32
#: convolutions "do not use the Tensor Cores of NVIDIA T1000" and to move them to "this GPU's fp16 Tensor Cores".
NO_TENSOR_CORE_TURING = re.compile(r"\bGTX 16[3-6]0\b|\bMX[45]50\b|\bT(?:400|500|550|600|1000|1200|2000)\b",
                                   re.I)


def turing_without_tensor_cores(name: str | None, cc: float | None) -> bool:
    """Whether ``name`` is a Turing part with no Tensor Cores (:data:`NO_TENSOR_CORE_TURING`), its compute capability
    not recorded or Turing's: a capture's other compute capability is its own word, and the name does not overrule it."""
    return bool(name) and cc in (None, 7.5) and bool(NO_TENSOR_CORE_TURING.search(name or ""))


def named_cc(name: str | None) -> tuple[int, int] | None:
    """The compute capability a GPU's name alone says (:data:`CC_BY_NAME`); None for any other name."""
    return next((cc for p, cc in CC_BY_NAME if name and p.search(name)), None)


def _cc(cc: object) -> float | None:
    try:
        major, _, minor = str(cc).strip("()[] ").replace(",", ".").replace(" ", "").partition(".")
        return float(f"{int(major)}.{int(minor or 0)}")
    except ValueError:
        return None


def _known_cc(name: str | None, cc: object) -> float | None:
    """The capture's compute capability, else the one the GPU's name says (:func:`named_cc`)."""
    got = (float(cc) if isinstance(cc, (int, float)) else _cc(cc)) if cc is not None else None
    if got is None and named_cc(name) is not None:
        got = _cc(named_cc(name))
    return got


def matrix_unit_one(name: str) -> bool:
    return tensor_core_one(name)


def arch_label(name: str | None, cc: str | None) -> str | None:
    """NVIDIA's architecture is its compute capability (``9.0``)."""
    return cc


def has_matrix_units(name: str | None, cc: object) -> bool | None:
    """Tensor Cores by compute capability (Volta on), but for the Turing parts that have none
    (:func:`turing_without_tensor_cores`)."""
    known = _known_cc(name, cc)
    return False if turing_without_tensor_cores(name, known) else has_tensor_cores(known)


def has_tf32_on(name: str | None, cc: object) -> bool | None:
    return has_tf32(_known_cc(name, cc))


def has_bf16_on(name: str | None, cc: object) -> bool | None:
    return has_bf16(_known_cc(name, cc))


#: The compute capabilities of the data-center parts that carry NVLink on their SXM boards (V100 7.0, A100/A30 8.0,
#: H100/H200 9.0, B200/B300 10.x).  The other minors of a generation are workstation, inference and consumer parts on
#: PCIe (T4 7.5, A10/A40/RTX 30 8.6, L4/L40/RTX 40 8.9, RTX 50 12.x): a link by major alone gave an RTX 4090 pair
#: "NVLink 3 on A100".
_NVLINK_CC = {7.0, 8.0, 9.0}
#: A board name that says PCIe (``A100-PCIE-40GB``, ``H100 PCIe``): its NVLink is an optional bridge, so none is assumed.
_PCIE_BOARD = re.compile(r"\bPCI-?E\b", re.I)


def link_bandwidth(name: str | None, cc: object) -> tuple[float, str] | None:
    """The NVLink of an SXM data-center GPU by its generation; None for a PCIe board or a part without NVLink (the
    caller assumes PCIe and says so)."""
    c = _cc(cc) if not isinstance(cc, (int, float)) else float(cc)
    if c is None or _PCIE_BOARD.search(name or "") or not (c in _NVLINK_CC or int(c) == 10):
        return None
    return link_bandwidth_of(int(c))


#: The fastest host link per direction an NVIDIA GPU can have, by compute capability: the PCIe generation its parts
#: support at x16 (PCI-SIG's per-lane rates after encoding: 3.0 0.985 GB/s, 4.0 1.969 GB/s, 5.0 3.938 GB/s, 6.0 ~7.6
#: GB/s; pcisig.com/specifications), or the CPU link of the parts that have one: V100 SXM2 on POWER9 (NVLink 2.0,
#: 3 links x 25 GB/s per direction), Grace Hopper and Grace Blackwell (NVLink-C2C, 900 GB/s both directions, NVIDIA
#: GH200 / GB200 data sheets).  The highest the GPU could have, so a copy's floor on it is never too high: a board in
#: a slower slot or at x8 only moves its bytes slower.
_HOST_LINKS = ((12.0, 63.0e9, ("PCIe 5.0 x16 (~63 GB/s per direction), the fastest host link of an RTX 50 / Blackwell "
                                "workstation part")),
               (10.0, 121.0e9, ("PCIe 6.0 x16 (~121 GB/s per direction), the fastest host link of a Blackwell "
                                "data-center part")),
               (9.0, 63.0e9, "PCIe 5.0 x16 (~63 GB/s per direction), the fastest host link of a Hopper part"),
               (8.0, 31.5e9, "PCIe 4.0 x16 (~31.5 GB/s per direction), the fastest host link of an Ampere / Ada part"),
               (0.0, 15.75e9, ("PCIe 3.0 x16 (~15.8 GB/s per direction), the fastest host link of a Pascal, Volta or "
                               "Turing part")))
#: The integrated parts, whose GPU shares the host's memory (Tegra X1 5.3, X2 6.2, Xavier 7.2, Orin 8.7, Thor 11.0,
#: GB10 12.1): a copy moves bytes within one memory, over no bus -- no floor on a link.
_INTEGRATED_CC = {5.3, 6.2, 7.2, 8.7, 11.0, 12.1}
SHARED_MEMORY = (float("inf"), "the host's own memory (an integrated GPU: no bus between them)")
_C2C = re.compile(r"\bG[HB]\d{3}\b", re.IGNORECASE)
_V100_SXM = re.compile(r"\bV100\b.*\bSXM", re.IGNORECASE)


def host_link(name: str | None, cc: object) -> tuple[float, str] | None:
    """The fastest link per direction between the host's memory and this GPU (:data:`_HOST_LINKS`), with its words;
    None where neither the name nor the capture says the generation.  Why: a copy from pinned memory still takes its
    bytes over this link -- 805 MB of pageable copies on a GTX 1050 Ti need ~51 ms at PCIe 3.0's best, which no
    pinning removes (h37-bus69; OlivierKessler01/cuda-thinkering's vector add was promised a pass of 8.30 ms)."""
    c = _known_cc(name, cc)
    if c in _INTEGRATED_CC:
        return SHARED_MEMORY
    if _C2C.search(name or ""):
        return 450.0e9, "NVLink-C2C (450 GB/s per direction) between Grace and the GPU"
    if _V100_SXM.search(name or ""):
        return 75.0e9, "NVLink 2.0 to a POWER9 host at best (3 links, 75 GB/s per direction), else PCIe 3.0 x16"
    if c is None:
        return None
    return next((bw, words) for lo, bw, words in _HOST_LINKS if c >= lo)


#: The oldest Windows display driver under which NVIDIA's profilers trace the GPU from WSL2: Nsight Compute's system
#: requirements ("Profiling is supported on Windows 10 WSL with OS build version 19044 and greater, and NVIDIA display
#: driver version 545 or higher", docs.nvidia.com/nsight-compute/ReleaseNotes/topics/system-requirements.html, 2024.1
#: on).  A WSL2 capture without kernels under an older driver gets "update the driver"; under this one or newer the
#: driver is not why, and that advice would be wrong.
WSL_PROFILING_DRIVER = 545
#: A Windows display driver version as NVIDIA names it (``NvDriverVersion``: "577.03", "536.40"); Windows' own form
#: ("32.0.15.7703") does not read as one.
_DRIVER_VERSION = re.compile(r"^\s*(\d{3,4})\.\d{2}\b")


def wsl_profiling_driver(version: str | None) -> bool | None:
    """Whether a Windows display driver traces the GPU from WSL2 (:data:`WSL_PROFILING_DRIVER` or newer); None where
    the version is missing or does not read as NVIDIA's."""
    m = _DRIVER_VERSION.match(version or "")
    return None if m is None else int(m.group(1)) >= WSL_PROFILING_DRIVER


def words(text: str) -> str:
    """NVIDIA's words: the prose is written in them."""
    return text


def graph_switch_us(name: str | None, cc: object) -> tuple[float, str] | None:
    """None: no NVIDIA generation has a floor of its own measured for entering or leaving a CUDA graph.  The H100's
    JAX command buffers switch in 2.8-4.6 us (119 of ``real-h100-jax/gpt_big``) but 5.8-6.1 us in ``fp32_highest``
    (19), the RTX 3060's CUDA graphs in 0.7-2.7 us (``wild/compiled_graphs_rtx3060``): ``launch.kernel_switch_us``
    stays the floor (h37-left44)."""
    return None
