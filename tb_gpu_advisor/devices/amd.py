"""AMD Instinct GPUs (ROCm): architectures, what their kernel libraries' names say, and the words ROCm users use.

ROCm's PyTorch and JAX report an AMD GPU with ``computeMajor``/``computeMinor`` that read like a CUDA compute
capability (``AMD Instinct MI300X``: 9.4); they are the GFX architecture (gfx942), not an NVIDIA generation.  The
matrix units are Matrix Cores, driven by MFMA instructions (``XDLOPS``); every CDNA generation has them for fp32,
fp16 and bf16 (MI100 on), so "not on Tensor Cores" means "not an MFMA kernel" here.

Kernel libraries: rocBLAS / hipBLASLt GEMMs come from Tensile, named ``Cijk_<A>_<B>_<types>_..._MT..._MI<m>x<n>x<k>``
(``MI``: the MFMA instruction tile; the first letter of ``<types>`` the input type); Composable Kernel (``ck::``,
``ck_tile::``, ``*_xdl*``) GEMMs and convolutions and MIOpen's convolutions (``igemm_*_gtcx*``, ``naive_conv``,
``MIOpenConv*``; its direct ones -- ``naive_conv_*``, the OpenCL ``MIOpenConvUni``/``MIOpenCv*`` -- run on the vector
ALUs, :func:`direct_convolution_one`) -- both libraries also ship normalization, pooling and element-wise kernels, which are none; RCCL collectives keep
NCCL's kernel names (``ncclDevKernel_Generic``).
"""

from __future__ import annotations

import re
from functools import lru_cache

from tb_gpu_advisor.model.schema import Action
from tb_gpu_advisor.devices.codes import (P_BF16, P_FP8, P_FP16, P_FP32, P_FP64, P_INT8, P_TF32, P_UNKNOWN,
                                          function_parts, head, plain_mangled_name, replace_each)

VENDOR = "AMD"
#: The prefix of HIP's calls (``hipMalloc``; not ``hipblasLtMatmul``, a library's).
RUNTIME_PREFIXES = ("hip",)
#: What a ROCm build of PyTorch names in the C++ frames a memory snapshot records (``stacks="all"``): its sources are
#: hipified, so the caching allocator is ``c10::hip::HIPCachingAllocator`` (``HIPCachingAllocatorMasqueradingAsCUDA``
#: behind ``torch.cuda``), a stream an ``ihipStream_t*``, the runtime ``libamdhip64``.
ALLOCATOR_FRAMES = re.compile(r"\bc10::hip::|HIPCachingAllocator|\bihipStream_t\b|\bhipMalloc|libamdhip64")
#: Kernels only ROCm's software names (``devices.vendor_shown``): ROCclr's blit kernels (``__amd_rocclr_copyBuffer``),
#: Tensile's GEMMs (``Cijk_``), Composable Kernel's (``ck::``, ``ck_tile::``) and MIOpen's.
OWN_KERNELS = re.compile(r"^__amd_rocclr_|^Cijk_|\bck(?:_tile)?::|\bMIOpen|^miopen")
#: The outermost namespace -- or, for a global kernel, the prefix -- of ROCm's math and DNN libraries' kernels
#: (``devices.library_scope_one``): MIOpen (``miopen::``, ``MIOpenConv1x1``, ``miopenGcnAsmConv1x1U``), rocBLAS,
#: hipBLAS(Lt), Tensile (``Cijk_``), Composable Kernel (``ck::``, ``ck_tile::``), aiter, rocPRIM and hipCUB, MIGraphX.
LIBRARY_SCOPES = re.compile(r"(?i:miopen|rocblas|hipblas(?:lt)?|tensile|ck|ck_tile|composable_kernel|aiter|rocprim|"
                            r"hipcub|migraphx)(?![a-z])|Cijk_")
#: Framework ops whose own name says they call ROCm's library (``devices.vendor_shown``): a ROCm build of PyTorch
#: dispatches convolutions, batch norms and RNNs to MIOpen's ops (``aten::miopen_convolution``,
#: ``aten::miopen_batch_norm``, ``aten::miopen_rnn``), which a CUDA build has not (``nvidia.OWN_OPS``).
OWN_OPS = re.compile(r"^aten::_?miopen_")
#: The collective library's own name (a distributed backend ``rccl``); ROCm's PyTorch names its backend ``nccl``
#: (``distributedInfo.backend`` of the kept MI300X traces), so NCCL's name is no vendor's evidence.
COLLECTIVE_LIBRARIES = ("rccl",)
#: Device names of AMD GPUs (ROCm names consumer and some server parts ``AMD Radeon Graphics``).
_DEVICE = re.compile(r"\bAMD\b|Instinct|Radeon|\bMI\d{3}", re.I)
#: Architecture by product (computeMajor/Minor 9.0 is both gfx908 and gfx90a), then by (major, minor).
_ARCH_BY_NAME = (("MI355", "gfx950"), ("MI350", "gfx950"), ("MI325", "gfx942"), ("MI300", "gfx942"),
                 ("MI250", "gfx90a"), ("MI210", "gfx90a"), ("MI200", "gfx90a"), ("MI100", "gfx908"))
_ARCH_BY_CC = {(9, 5): "gfx950", (9, 4): "gfx942", (9, 0): "gfx90a"}
#: A GFX architecture id as rocminfo's agent ``Name`` gives it (``gfx950``, ``gfx90a``, ``gfx1151``): the major version,
#: then one hex digit each of minor version and stepping (LLVM's AMDGPU processor names).
_GFX = re.compile(r"\bgfx(\d{1,2})([0-9a-f])([0-9a-f])\b", re.I)
#: Names that say the vendor and nothing more (ROCm's ``AMD Radeon Graphics`` for an Instinct board, XPlane's
#: ``AMD``), with the architecture a reader added from the capture where it records one (``... (gfx950)``).
GENERIC_NAME = re.compile(r"\s*(?:AMD|Advanced Micro Devices(?:, Inc\.)?|(?:AMD )?Radeon Graphics)?\s*(?:\(gfx[0-9a-f]+\))?\s*",
                          re.I)


def named_generically(name: str | None) -> bool:
    """The device's name says the vendor and at most its architecture, no model (``AMD Radeon Graphics``)."""
    return bool(GENERIC_NAME.fullmatch(name or ""))


def gfx_id(text: str | None) -> str | None:
    """The GFX architecture id a text holds (rocminfo's agent ``Name`` ``gfx950``), lower case; None where none."""
    m = _GFX.search(text or "")
    return m.group(0).lower() if m else None


#: vLLM's ROCm paged attention (vllm-project/vllm csrc/rocm/attention.cu, the ``ll4mi`` family): its ``QKV`` kernels
#: multiply the query heads of one KV head (``GQA_RATIO`` rows) by the keys and the probabilities by the values on MFMA
#: -- ``paged_attention_ll4mi_QKV_kernel`` on ``__builtin_amdgcn_mfma_f32_4x4x4f16`` / ``4x4x4bf16_1k`` (the form the
#: kept ``wild/vllm_rpd_fp8`` runs), its successors naming the instruction (``..._QKV_mfma16_kernel``,
#: ``_mfma4_kernel``).  Its ``reduce`` kernel merges the partitions (a reduction, no MFMA).
_VLLM_ROCM_ATTENTION = r"ll4mi_QKV"
#: Where a vLLM kernel's template names its KV cache's type (``(vllm::Fp8KVCacheDataType)1``, Itanium
#: ``N4vllm18Fp8KVCacheDataType``): the template arguments before it are the query's and the cache's element types.
_KV_CACHE_ENUM = re.compile(r"\(?(?:vllm::|N4vllm18)Fp8KVCacheDataType")


def vllm_attention_input(name: str) -> str | None:
    """The part of a vLLM ROCm attention kernel's name (``_VLLM_ROCM_ATTENTION``) that names its query's element type,
    before its KV cache's (``paged_attention_ll4mi_QKV_kernel<_Float16, unsigned char, (vllm::Fp8KVCacheDataType)1,
    ...>``), None for any other kernel.  Why: an fp8 cache is widened to the query's type before the MFMAs
    (csrc/rocm/attention.cu: ``scaled_convert_b8x8`` feeds ``gcn_mfma_instr<scalar_t, ...>``), so the kernel computes
    in that type; the enum's ``Fp8`` made it read fp8, its ``unsigned char`` cache would read int8."""
    h = head(name)
    m = _KV_CACHE_ENUM.search(h)
    if not m or not re.search(_VLLM_ROCM_ATTENTION, h[:m.start()]):
        return None
    return h[:m.start()]


#: Tensile GEMMs and their MFMA tile; CK and MIOpen kernels built on XDLOPS (MFMA) or WMMA.
_TENSILE = re.compile(r"^Cijk_A\w{2,3}_B\w{2,3}_([A-Z][A-Za-z0-9]*)")
_MFMA = re.compile(r"_MI\d+x\d+x\d+|xdlops|_xdl_|_xdl\b|gtcx|mfma|wmma|ck_tile::\w*(Fmha|Gemm)|" + _VLLM_ROCM_ATTENTION, re.I)
#: A matmul/convolution by what its name says the kernel does, never by its library alone: MIOpen and Composable Kernel
#: also ship batch norm (``MIOpenBatchNormFwdTrainSpatial``), pooling, activations (``MIOpenNeuronFwd``), softmax and
#: tensor ops, and a ``ck_tile::`` type may sit in any kernel's template arguments.  Tensile GEMMs (``Cijk_``); any
#: GEMM (``kernel_gemm_xdl_...``, ``ck_tile::BatchedGemmKernel``, MIOpen's ``igemm_fwd_gtcx3_...``) but FBGEMM's;
#: CK's XDLOPS kernels (``_xdl_``, ``xdlops``: built around MFMA GEMM tiles); fused attention (``FmhaFwdKernel``) and
#: kernels that name the MFMA instruction they run (vLLM's ``paged_attention_ll4mi_QKV_mfma16_kernel``); convolutions:
#: CK's and MIOpen's by direction (``conv_fwd``, ``naive_conv_...``, ``grouped_conv``), MIOpen's OpenCL and assembly
#: solvers (``MIOpenConv1x1``, ``MIOpenCvD3x3_WSR0``, ``MIOpenGroupConvUni``, ``miopenGcnAsmConv1x1U``,
#: ``miopenSp3AsmConv3x3F``, Winograd) -- ``Conv`` not ``Convert``.  Of these, MIOpen's direct convolutions are no GEMM
#: (:data:`_DIRECT_CONV`: ``devices.gemm_kernel_one`` leaves them out); they stay here as MIOpen's library kernels --
#: ``MIOpenCDFGen`` (solver ``ConvOclDirectFwdGen``) too, whose name says no ``Conv``: read as no library's, its grid
#: was the program's own to fix under ``small_grid`` (h37-roof68).
_GEMM = re.compile(r"^Cijk_|(?<!fb)gemm|_xdl_|xdlops|fmha|mfma|conv_fwd|conv_bwd|conv_wrw|grouped_conv|naive_conv|"
                   r"convolution|MIOpen\w*?Conv(?!ert)|MIOpenCv|MIOpenCDF|AsmConv|Winograd|" + _VLLM_ROCM_ATTENTION, re.I)
_TENSILE_TYPE = {"H": P_FP16, "B": P_BF16, "S": P_FP32, "D": P_FP64, "X": P_TF32, "I": P_INT8, "F": P_FP8}

#: HIP's names for the CUDA runtime's calls, types and constants, and roctx's for NVTX's: the one table of them, read
#: in prose (:data:`WORDS`) and in a native program's code (:func:`code`).  HIP names its runtime calls as CUDA's with
#: ``hip`` for ``cuda`` (the HIP API reference), so a constant or a variant named after a call reads with it
#: (``cudaMemcpyHostToDevice`` -> ``hipMemcpyHostToDevice``, ``cudaHostAllocDefault`` -> ``hipHostMallocDefault``,
#: ``cudaMallocAsync`` -> ``hipMallocAsync``); but pinned host memory is ``hipHostMalloc`` / ``hipHostFree``
#: (``hipMallocHost`` is its deprecated alias).  Longer names first: ``cudaMallocHost`` before ``cudaMalloc``.
CALLS = (("cudaMallocHost", "hipHostMalloc"), ("cudaHostAlloc", "hipHostMalloc"), ("cudaFreeHost", "hipHostFree"),
         ("cudaHostRegister", "hipHostRegister"), ("cudaHostUnregister", "hipHostUnregister"),
         ("cudaHostGetDevicePointer", "hipHostGetDevicePointer"),
         ("cudaMemcpyAsync", "hipMemcpyAsync"), ("cudaMemcpy", "hipMemcpy"),
         ("cudaMemsetAsync", "hipMemsetAsync"), ("cudaMemset", "hipMemset"),
         ("cudaMemPrefetchAsync", "hipMemPrefetchAsync"), ("cudaMemAdvise", "hipMemAdvise"),
         ("cudaCpuDeviceId", "hipCpuDeviceId"), ("cudaStream_t", "hipStream_t"),
         ("cudaDeviceSynchronize", "hipDeviceSynchronize"), ("cudaStreamSynchronize", "hipStreamSynchronize"),
         ("cudaStreamWaitEvent", "hipStreamWaitEvent"), ("cudaEventSynchronize", "hipEventSynchronize"),
         ("cudaEventRecord", "hipEventRecord"), ("cudaEventQuery", "hipEventQuery"), ("cudaStreamQuery", "hipStreamQuery"),
         ("cudaSetDeviceFlags", "hipSetDeviceFlags"), ("cudaDeviceScheduleBlockingSync", "hipDeviceScheduleBlockingSync"),
         ("cudaEventElapsedTime", "hipEventElapsedTime"), ("cudaStreamBeginCapture", "hipStreamBeginCapture"),
         ("cudaStreamEndCapture", "hipStreamEndCapture"), ("cudaGraphInstantiate", "hipGraphInstantiate"),
         ("cudaGraphLaunch", "hipGraphLaunch"), ("cudaGraphExecUpdate", "hipGraphExecUpdate"),
         ("cudaMalloc", "hipMalloc"), ("cudaFree", "hipFree"),
         # a stream of no implicit order with the null stream (HIP's ``hipStreamNonBlocking``, as CUDA's; h37-amd70)
         ("cudaStreamCreateWithFlags", "hipStreamCreateWithFlags"), ("cudaStreamCreate", "hipStreamCreate"),
         ("cudaStreamNonBlocking", "hipStreamNonBlocking"),
         ("nvtxRangePushA", "roctxRangePushA"), ("nvtxRangePop", "roctxRangePop"))

#: ROCm's words for NVIDIA's, in prose.  Code keeps PyTorch's ``torch.cuda`` and ``torch.backends.cudnn`` (ROCm's
#: PyTorch spells them so); only the runtime's calls (:data:`CALLS`) change there (:func:`code`).  ROCm's ranges are
#: roctx's (``roctxRangePush``; PyTorch's ``torch.cuda.nvtx`` and ``emit_nvtx`` write roctx on ROCm).
WORDS = (("Nsight Systems' 'CUDA Async Memcpy with Pageable Memory' rule",  # PyTorch's pinning fix on ROCm
          "HIP stages a pageable buffer through a pinned one inside the copy call, hipMemcpyAsync or not"),
         ("Tensor Cores", "Matrix Cores (MFMA)"), ("Tensor Core", "Matrix Core"), ("cuDNN", "MIOpen"),
         ("cuBLASLt", "hipBLASLt"), ("cuBLAS", "rocBLAS"), ("CUDA graphs", "HIP graphs"), ("CUDA graph", "HIP graph"),
         ("NCCL", "RCCL"), ("nvidia-smi", "rocm-smi"), ("CUDA cores", "vector ALUs"), ("CUDA-core", "vector-ALU"),
         ("thread blocks", "workgroups"), ("thread block", "workgroup"), ("SMs", "CUs"),
         ("NVTX ranges", "roctx ranges"), ("NVTX range", "roctx range"),
         ("CUPTI", "roctracer / rocprofiler-sdk"),
         # PyTorch's ranges on ROCm are roctx's, which rocprofv3's marker trace records; MPI that takes GPU buffers is
         # "ROCm-aware" there (Open MPI over UCX) -- NVIDIA's tool and word reachable in a fix (h37-hiprocm36)
         ("torch.cuda.nvtx under Nsight Systems", "torch.cuda.nvtx, roctx ranges under rocprofv3 --marker-trace"),
         ("CUDA-aware", "ROCm-aware"),
         # ``torch.cuda.set_sync_debug_mode`` is torch.cuda's API, which ROCm's PyTorch keeps: its c10/cuda sources
         # (``warn_or_error_on_sync`` at each stream sync and blocking copy) are hipified, so the mode warns there too
         # -- the code stays, the prose says no CUDA (h37-words63)
         ("CUDA sync debug mode", "sync debug mode"),
         # the legacy default stream (``TERMS["legacy_stream"]``): clang's HIP driver takes the per-thread default stream as ``-fgpu-default-stream=per-thread`` (nvcc's
         # ``--default-stream per-thread``); the legacy-stream fix of a HIP program said nvcc's (h37-amd70)
         ("nvcc --default-stream per-thread", "hipcc -fgpu-default-stream=per-thread"),
         # the frameworks' fixes date bf16 and TF32 by NVIDIA's generation: AMD's GPUs run bf16 from MI100 (CDNA) and
         # RDNA3, TF32 on the MI300 (``devices.has_tf32``, which gives the TF32 fix only there)
         ("bfloat16 needs no loss scaling at all on Ampere and newer",
          "bfloat16 needs no loss scaling at all (Instinct MI100 and newer, Radeon RDNA3)"),
         ("On Ampere and newer,", "On the GPUs with TF32 (Instinct MI300),")) + CALLS


#: How ROCm's users name things (the keys of ``nvidia.TERMS``).
TERMS = {
    #: the drivers that submit launches late, in batches, and how to see which one runs (``rules.capture_quality``
    #: submission latency, h37-idle67)
    "batching_drivers": "Windows' WDDM driver model does (and WSL2, which runs on it)",
    "driver_check": ("see whether the host runs Windows or WSL2: ROCm's Linux driver submits without such batching"),
    "matrix_units": "Matrix Cores (MFMA)",
    "matrix_unit": "Matrix Core",
    "fp32_on_matrix_units": "already on the Matrix Cores in fp32 (MFMA)",
    "conv_library": "MIOpen",
    "collective_library": "RCCL",
    "graphs": "HIP graphs",
    "gpu_link": "Infinity Fabric (xGMI)",
    "conv_padding": "MIOpen chooses its convolution kernels for the channel counts it is given; dense layers are "
                    "not padded",
    "tc_kernel_names": "an MFMA kernel (Tensile `Cijk_..._MI...`, Composable Kernel `xdl`, MIOpen `gtcx`)",
    "allocator_calls": "hipMalloc / hipFree",
    "runtime": "HIP",
    #: HIP's null stream orders itself with the blocking streams as CUDA's does (h37-amd70)
    "legacy_stream": "HIP's null stream",
    #: the tracer a profiler records this runtime's calls and the GPU's work through (PyTorch's Kineto, XLA's): Kineto
    #: moved from roctracer to rocprofiler-sdk (pytorch/kineto #1249, 2026; roctracer removed in #1419), so a ROCm
    #: build's is either -- the words :data:`WORDS` gives CUPTI (h37-review62: "roctracer" alone named the old one)
    "gpu_tracer": "roctracer / rocprofiler-sdk",
    "context_creation": "the HIP runtime's start-up",
    # ROCm's PyTorch is its own build (pytorch.org's ``rocm`` wheels), traced by roctracer / rocprofiler-sdk, and
    # rocprofv3 records a Python program's HIP calls, kernels and roctx ranges (``torch.cuda.nvtx`` writes roctx)
    "torch_build": "a ROCm build of PyTorch made for the installed ROCm",
    "system_profiler": "rocprofv3",
    "system_trace": "rocprofv3 --runtime-trace --marker-trace --output-format json -- python train.py",
    "kernel_profiler": "rocprofv3's counter collection (--pmc)",
    #: AMD's GPUs run bf16 from MI100 (CDNA) and RDNA3 (``has_bf16_on``)
    "bf16_gpus": "bfloat16 only on Instinct MI100 and newer and Radeon RDNA3",
}


def _fixes() -> dict[str, Action]:
    return {
        "topology": Action(text="Check the links between the GPUs (Infinity Fabric / xGMI vs PCIe) and that RCCL "
                                "uses them.", snippet="rocm-smi --showtopo", snippet_lang="shell"),
        "transport": Action(text="Check which transport RCCL picked between the GPUs (xGMI / InfiniBand / sockets): "
                                 "RCCL reads NCCL's variables, and its log names the channels and the network plugin.",
                            snippet="export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET   # RCCL reads NCCL_* too",
                            snippet_lang="shell"),
        "network": Action(text="Between hosts: one NIC per GPU (NCCL_IB_HCA, which RCCL reads), GPUDirect RDMA "
                               "(ROCm peer memory) enabled, no TCP fallback; within a host: the GPUs on xGMI.",
                          snippet="rocm-smi --showtopo", snippet_lang="shell"),
        "clocks": Action(text="Look at the node itself: GPU clocks, power and temperature, and other processes on it.",
                         snippet="rocm-smi --showclocks --showpower --showtemp --showperflevel", snippet_lang="shell"),
        # the same too-small grids in a library's kernels (``devices.library_kernel_one``), which the program does not
        # launch itself: what it can change is the calls (h37-words32)
        "library_blocks": Action(
            text="For a library's kernels (rocBLAS, hipBLASLt, MIOpen, Composable Kernel): the library sizes "
                 "each grid from the shapes it is called with, so no launch setting of yours changes it -- only "
                 "the calls do: fewer, larger calls (many small matrix products as one batched call: "
                 "rocblas_gemm_strided_batched_ex, a framework's batched matmul)."),
        "more_blocks": Action(
            text="For a kernel of your own (HIP, an extension): launch at least one workgroup per CU (better several), "
                 "sized from the data (grid = ceil(n / threads per workgroup)), and loop over the data with a "
                 "grid-stride loop so any grid covers it; a serial loop in one thread (a sum over an array) becomes a "
                 "parallel reduction: each workgroup reduces a slice, then one short pass combines their results (or "
                 "call hipCUB's hipcub::DeviceReduce). Where that grid is still under the CUs -- one thread per "
                 "element, and too few elements -- a bigger grid only adds idle threads: launch smaller workgroups "
                 "(64 or 128 threads: more workgroups for the same elements), give each element several threads (a "
                 "wavefront per element for its inner loops), or run independent work at once on other streams.",
            snippet="__global__ void k(const float* x, float* y, int n) {\n"
                    "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
                    "        y[i] = f(x[i]);\n"
                    "}\n"
                    "hipLaunchKernelGGL(k, dim3(num_cus * 4), dim3(256), 0, 0, x, y, n);   // hipDeviceGetAttribute("
                    "&num_cus, hipDeviceAttributeMultiprocessorCount, dev)",
            snippet_lang="text"),
    }


#: ROCm's own fixes (the keys of ``nvidia.FIXES``).
FIXES = _fixes()

#: How a HIP program with no ML framework marks and records its iterations: roctx ranges (rocprofiler-sdk's
#: ``rocprofiler-sdk-roctx/roctx.h``, linked with ``librocprofiler-sdk-roctx.so``; ``roctxRangePush`` is the macro of
#: ``roctxRangePushA``) recorded by rocprofv3's ``--marker-trace`` beside its ``--runtime-trace`` (HIP calls, kernels,
#: copies) -- the program's own code, so no translation of CUDA's snippet: ``nvtxRangePushA`` and ``nsys`` do not
#: exist there (h37-rocsteps).
PROGRAM_CAPTURE = (
    "# mark each iteration with a roctx range and record a steady window of a few dozen of them:\n"
    "#   #include <rocprofiler-sdk-roctx/roctx.h>   (link -lrocprofiler-sdk-roctx)\n"
    "#   roctxRangePush(\"iteration\"); ... ; roctxRangePop();\n"
    "rocprofv3 --runtime-trace --marker-trace --output-format json -- ./app"
)


def _program_fixes() -> dict[str, tuple[Action, ...]]:
    """A HIP program's fixes (no ML framework) where a CUDA program's are CUDA's own tools and calls
    (``frameworks.native.FIXES``' keys): rocprofv3 and roctx for Nsight and NVTX, rocBLAS and hipBLASLt's 16-bit
    GEMMs for cuBLAS' TF32 mode (no TF32 mode to switch on: fp32 GEMMs already run on the fp32 MFMA instructions, and
    the gain is from a 16-bit input).  A fix that names only the runtime's calls is CUDA's own in HIP's names
    (:func:`words`, :func:`code`), not a copy here: the managed-memory and chunked-copy fixes were (h37-hipcode34)."""
    record = "rocprofv3 --runtime-trace --marker-trace --output-format json -- ./app"
    return {
        "capture_quality": (Action(
            text="Record a steady window of a few dozen iterations after start-up, each marked with a roctx range (the "
                 "Advisor takes them as the steps).", snippet=PROGRAM_CAPTURE, snippet_lang="shell"),),
        "step_gaps:unrecorded": (Action(
            text="Record what the host does between its GPU work: mark the CPU code with roctx ranges (roctxRangePush "
                 "/ roctxRangePop) and record them beside the HIP calls; then read the ranges that fill the gap -- or "
                 "move that CPU work out of the profiled window, or onto the GPU.", snippet=record,
            snippet_lang="shell"),),
        "step_gaps:outside": (Action(
            text="Find what the host waits for between its GPU work -- the source that paces the loop (a camera's or "
                 "sensor's frame rate, a file or socket reader, a timer, another thread's lock): a system-call trace "
                 "names the call it waits in.  Where the GPU should work faster than the source delivers, read the "
                 "next input on a thread of its own into a second (pinned) buffer while the GPU processes this one; "
                 "where the source sets the pace, the GPU's idle is the program's budget per input, not a loss.",
            snippet="strace -f -tt -T -o calls.txt ./app   # the blocking calls and how long each waited",
            snippet_lang="shell"),),
        # the launch wait is mostly the program's own code between its launches (h37-launchwait): roctx, not NVTX
        "launch_bound:host_code": (Action(
            text="Find what the host computes between its launches: mark that code with roctx ranges (roctxRangePush "
                 "/ roctxRangePop) and record them beside the HIP calls, then take it off the launch path -- queue "
                 "the next kernels before the host's bookkeeping, prepare their arguments ahead, or run that work on "
                 "another thread or on the GPU.", snippet=record, snippet_lang="shell"),),
        "tensor_core_unused": (Action(
            text="Where the algorithm tolerates a 16-bit input, run the GEMMs with bf16 (or fp16) inputs and fp32 "
                 "accumulation (rocblas_gemm_ex, hipblasLtMatmul), which the Matrix Cores (MFMA) run at several times "
                 "their fp32 rate."),),
        "tensor_core_unused:tf32": (),  # cuBLAS's TF32 switch: no HIP program's (its XF32 has no such switch here)
        "capture_quality:no_gpu": (Action(
            text="Check that the program ran its GPU work inside the recorded window (rocprofv3 --kernel-trace, or "
                 "--runtime-trace for the HIP calls too), and that the output holds the kernel records."),),
        "capture_quality:lost_records": (Action(
            text="Record the kernels: trace them with the HIP calls (rocprofv3 --runtime-trace) and let the GPU finish "
                 "(hipDeviceSynchronize) before the program exits, so that its records are written.",
            snippet="rocprofv3 --runtime-trace --output-format json -- ./app   # app: hipDeviceSynchronize() before exit",
            snippet_lang="shell"),),
    }


#: :func:`_program_fixes`, read by ``frameworks.native.for_vendor``.
PROGRAM_FIXES = _program_fixes()


#: HIP's calls that wait for the GPU, and those the host is blocked in (copies, as for CUDA).
SYNC_CALLS = ("hipStreamSynchronize", "hipDeviceSynchronize", "hipEventSynchronize")
BLOCKING_CALLS = SYNC_CALLS + ("hipMemcpy", "hipMemset")
#: HIP's queries of an event or a stream (see ``nvidia.POLL_CALLS``).
POLL_CALLS = ("hipEventQuery", "hipStreamQuery")
GRAPH_LAUNCH_CALLS = ("hipGraphLaunch",)
#: HIP's wait of a stream for another's event (see ``nvidia.STREAM_WAIT_CALLS``).
STREAM_WAIT_CALLS = ("hipStreamWaitEvent",)
#: HIP's device queries and its whole-device wait (see ``nvidia.QUERY_CALLS``).
QUERY_CALLS = ("hipGetDeviceCount", "hipGetDeviceProperties", "hipDeviceGetAttribute", "hipGetDevice",
               "hipDriverGetVersion", "hipRuntimeGetVersion")
DEVICE_SYNC_CALLS = ("hipDeviceSynchronize",)
#: HIP's kernel launches (a first launch also loads its code object) and its one-time calls (code objects, library
#: handles of rocBLAS, hipBLASLt and MIOpen, graph instantiation).
LAUNCH_CALLS = ("hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel", "hipExtModuleLaunchKernel",
                "hipLaunchCooperativeKernel")
#: HIP's launches of a kernel from a code object the program loaded itself (``hipModuleLoadData``, then
#: ``hipModuleGetFunction``): see ``nvidia.MODULE_LAUNCH_CALLS`` -- Triton on ROCm launches this way, ATen's own kernels
#: through ``hipLaunchKernel`` (rocBLAS and hipBLASLt use ``hipExtModuleLaunchKernel`` too, inside the op that calls
#: them).
MODULE_LAUNCH_CALLS = ("hipModuleLaunchKernel", "hipExtModuleLaunchKernel", "hipHccModuleLaunchKernel")
CAPTURE_CALLS = (("hipStreamBeginCapture",), ("hipStreamEndCapture",))
#: HIP's launches whose ``grid`` is the grid size in work-items (threads), not in workgroups: they take HSA's global
#: work size (``globalWorkSizeX..Z``), which AQL's dispatch packet defines in work-items, next to the workgroup size
#: (``localWorkSizeX..Z``).  The tracers copy the call's arguments as they are: Kineto's roctracer logger reads them
#: through the ``hipModuleLaunchKernel`` view of the same argument union (pytorch/kineto
#: libkineto/src/RoctracerLogger.cpp: ``case HIP_API_ID_hipExtModuleLaunchKernel: ... args.gridDimX``), its
#: rocprofiler-sdk logger maps ``globalWorkSizeX`` and ``gridDimX`` to the same field (RocprofLogger.cpp
#: ``extract_kernel_args``).  rocBLAS/hipBLASLt (Tensile ``Cijk_``) and MIOpen launch this way, ATen, Triton and
#: RCCL through ``hipLaunchKernel``/``hipModuleLaunchKernel``/``hipExtLaunchKernel`` (``numBlocks``, ``gridDimX``:
#: workgroups).  XLA's ROCm tracer divides the global size by the workgroup size itself (openxla/xla
#: xla/backends/profiler/gpu/rocm_tracer.cc ``grid_x = globalWorkSizeX / blockDimX``), so XPlane's ``grid`` is
#: workgroups.
WORK_ITEM_GRID_CALLS = ("hipExtModuleLaunchKernel", "hipHccModuleLaunchKernel")
#: Calls that release what a HIP program made, its tear-down's (see ``nvidia.TEARDOWN_CALLS``; RCCL keeps NCCL's
#: API names).
TEARDOWN_CALLS = ("hipStreamDestroy", "hipEventDestroy", "hipModuleUnload", "hipDeviceReset", "hipCtxDestroy",
                  "hipDevicePrimaryCtxRelease", "hipDevicePrimaryCtxReset", "hipGraphExecDestroy", "hipGraphDestroy",
                  "rocblas_destroy_handle", "hipblasDestroy", "hipblasLtDestroy", "miopenDestroy")
INIT_CALLS = ("hipModuleLoad", "hipModuleGetFunction", "rocblas_create_handle", "hipblasCreate", "hipblasLtCreate",
              "miopenCreate", "hipGraphInstantiate", "hipInit")
#: HIP's lookups of a kernel's handle or attributes (see ``nvidia.LOOKUP_CALLS``).
LOOKUP_CALLS = ("hipModuleGetFunction", "hipFuncGetAttributes")
#: Calls recorded only while a HIP process starts, before the call that initialises the runtime (see
#: ``nvidia.RUNTIME_INIT_CALLS``).  Facts (ROCm/clr ``hipamd``): the compiler emits a module constructor per HIP
#: translation unit that calls ``__hipRegisterFatBinary`` before ``main`` -- it registers the code objects and
#: initialises nothing --, and every HIP API initialises the runtime once, inside it (``HIP_INIT_API``:
#: ``std::call_once(hip::init)`` -- ROCr, the devices).  rocprofiler-sdk (rocprofv3 ``--hip-compiler-trace``) records
#: the registration as a ``HIP_COMPILER_API`` call, and times each HIP call around the dispatch table's entry, so the
#: process's next HIP call holds the start-up, whatever call it is (a blocking ``hipMemcpyToSymbol``, a sync).
#: ``hipInit`` is no such mark: a library calls it at any time (a kept MI300X Kineto window records a 1 us ``hipInit``
#: after its first launch); roctracer (rocprof v1, rpd, Kineto's roctracer logger) records neither the registration
#: nor the initialisation (its record opens after ``HIP_INIT``).
RUNTIME_INIT_CALLS = ("__hipRegisterFatBinary",)
#: The OS calls through which ROCm's thunk (libhsakmt) talks to the kernel driver: ``ioctl`` on ``/dev/kfd`` and the
#: render nodes (see ``nvidia.DRIVER_OS_CALLS``).
DRIVER_OS_CALLS = ("ioctl",)
#: Compiling a kernel at run time: hipRTC and its linker (see ``nvidia.JIT_COMPILE_CALLS``).
JIT_COMPILE_CALLS = ("hiprtccompileprogram", "hiprtclinkcomplete")
#: HIP's pinned host memory calls (see ``nvidia.PINNED_ALLOC_CALLS``; ``hipMallocHost`` / ``hipHostAlloc`` /
#: ``hipFreeHost``: deprecated aliases).
PINNED_ALLOC_CALLS = ("hipHostMalloc", "hipMallocHost", "hipHostAlloc", "hipHostFree", "hipFreeHost", "hipHostRegister",
                      "hipHostUnregister")
#: Calls that open a run-time link of code just generated (see ``nvidia.LINK_START_CALLS``).
LINK_START_CALLS = ("hiprtcLinkCreate",)
#: Calls that load a code object from the program's memory (see ``nvidia.IMAGE_LOAD_CALLS``): hipRTC's output, Triton's.
IMAGE_LOAD_CALLS = ("hipModuleLoadData",)

#: roctracer's names of its HIP-OPS copy and fill records (``roctracer_op_string(ACTIVITY_DOMAIN_HIP_OPS,
#: HIP_OP_ID_COPY, kind)``), which XLA's ROCm tracer writes as the event's name on the GPU's stream (openxla/xla
#: xla/backends/profiler/gpu/rocm_tracer.cc ``AddNormalHipOpsMemcpyActivityEvent``, ``AddHipOpsMemsetActivityEvent``:
#: kinds 4595-4597 and 4615).  roctracer names a ``hipMemcpyDtoD`` ``CopyHostToDevice`` (its issue #53): where the
#: call that made the record is in the capture, its direction wins (:func:`call_copy_direction`).
COPY_NAMES = {"CopyHostToDevice": "h2d", "CopyDeviceToHost": "d2h", "CopyDeviceToDevice": "d2d", "FillBuffer": "memset"}
#: ``hipMemcpyKind`` (HIP's ``hipMemcpyHostToHost`` 0 ... ``hipMemcpyDeviceToDevice`` 3) -> roctracer's record name of
#: that direction (``hipMemcpyDefault``, 4: the runtime infers it; the record says).  What a copy call asked for, as the
#: tracers record its arguments (rocmProfileData's ``rocpd_copyapi.kind``, rocprof's ``kind(2)``).
MEMCPY_KIND_OPS = {0: "CopyHostToHost", 1: "CopyHostToDevice", 2: "CopyDeviceToHost", 3: "CopyDeviceToDevice"}
#: ROCclr's blit kernels: HIP runs a copy or fill the DMA engines do not take as a kernel of its own (ROCm CLR
#: ``rocclr/device/blitcl.cpp``), traced as a kernel dispatch under the copy call's correlation id -- the kept MI300X
#: capture's 12 ``hipMemcpyHtoDAsync`` and 12 ``hipMemcpyDtoDAsync`` ran as ``__amd_rocclr_copyBuffer.kd``, the
#: MI355X's 20 ``hipMemsetAsync`` as ``__amd_rocclr_fillBufferAligned.kd``.  A copy the program asked for, not its
#: model's compute.
_BLIT_COPY = re.compile(r"^__amd_rocclr_(copy|fill)(Buffer|Image)")
#: HIP's copy and fill calls by direction, as their names say it (``hipMemcpyHtoDAsync``, ``hipMemsetD32Async``).
_CALL_DIRECTION = (("hipMemcpyHtoD", "h2d"), ("hipMemcpyDtoH", "d2h"), ("hipMemcpyDtoD", "d2d"),
                   ("hipMemcpyPeer", "p2p"), ("hipMemset", "memset"), ("hipMemcpy", "other"))


def copy_direction(name: str) -> str | None:
    """``h2d``/``d2h``/``d2d``/``memset`` for roctracer's copy and fill records (:data:`COPY_NAMES`), None else."""
    return COPY_NAMES.get(name)


def blit_copy(name: str) -> str | None:
    """``copy`` or ``fill`` for ROCclr's blit kernels (``__amd_rocclr_copyBuffer.kd``), None for any other kernel."""
    m = _BLIT_COPY.match(name)
    return m.group(1) if m else None


def call_copy_direction(call: str) -> str | None:
    """The direction a HIP copy or fill call names (``hipMemcpyHtoDAsync`` -> ``h2d``, ``hipMemsetAsync`` ->
    ``memset``, ``hipMemcpyAsync`` -> ``other``: its kind is an argument), None for any other call."""
    return next((d for prefix, d in _CALL_DIRECTION if call.startswith(prefix)), None)


#: The copy kinds a HIP copy or fill call not named ``...Async`` is known by its record to return before: none.
#: ROCm's runtime (clr's ``hipamd/src/hip_memory.cpp`` and ``hip_peer.cpp`` at f9f995c6, October 2024; no HIP API page
#: states it) queues without the host's wait a copy between two *device* buffers of one GPU (clr SWDEV-384658, March
#: 2023), ``hipMemcpyPeer``, and a fill of device memory from the start of its allocation -- but a copy to or from
#: pinned host memory, which it holds the host for, is recorded device-to-device by ROCm's tracers (pinned memory is
#: memory the GPU maps): measured on the kept MI300X Kineto traces, 11 of 11 ``hipMemcpyWithStream`` copies recorded
#: ``Memcpy DtoD (Device -> Device)`` (``.item()``'s ``aten::_local_scalar_dense``: wild/amd_mi300x,
#: ddp_mi300x_nopool, sglang_mi300x_prefill, xdit_sd35_mi300x_denoise) ended before their calls returned; and a fill's
#: offset is recorded nowhere.  So the kind cannot tell a HIP call that returned at once: where the tracer records the
#: call's end, the AMD readers read it off the timing (``formats.hip_ops.copies_host_side``: a call that returned before
#: its copy began did not wait for it).  CUDA's kinds are CUDA's documented rule (``nvidia.HOST_FREE_KINDS``).
HOST_FREE_KINDS: tuple[int, ...] = ()


def copy_call_sync(name: str, kind: int | None = None) -> int:
    """1 a HIP copy or fill call that returns only once its work is done, 0 one that returns before, -1 no copy or
    fill call (:func:`call_copy_direction`); ``kind`` is the copy's recorded kind where the reader knows it -- the same
    question, with the same arguments and the same reading, as ``nvidia.copy_call_sync``.

    An ``...Async`` call returns before its work (a pageable buffer staged inside it is read off the call's timing:
    ``formats.hip_ops.copies_host_side``); a call not named so holds the host unless its copy's kind is one known to
    return at once (:data:`HOST_FREE_KINDS`: none by the record, as measured -- the timing decides where it is
    recorded)."""
    if call_copy_direction(name) is None:
        return -1
    return 0 if "Async" in name or kind in HOST_FREE_KINDS else 1


def is_device(name: str | None) -> bool:
    """A GPU of this vendor, by the name the trace gives it."""
    return bool(name) and bool(_DEVICE.search(name or ""))


def arch(name: str | None, cc: str | float | None) -> str | None:
    """The GFX architecture (``gfx942``) of an AMD GPU, by product name, else by the GFX id its name carries (a
    generic name a reader completed from rocminfo: ``AMD Radeon Graphics (gfx950)``), else by its reported
    major.minor."""
    for product, gfx in _ARCH_BY_NAME:
        if product in (name or "").upper():
            return gfx
    if gfx_id(name):
        return gfx_id(name)
    try:
        major, _, minor = str(cc).partition(".")
        return _ARCH_BY_CC.get((int(major), int(minor or 0)))
    except ValueError:
        return None


def has_matrix_units(name: str | None = None, cc: object = None) -> bool:
    """Whether the GPU has matrix units: every CDNA Instinct GPU has Matrix Cores (MFMA, from gfx908), RDNA 3 and 4
    (gfx11, gfx12) their WMMA units; GCN before gfx908 (Vega 10/20: gfx900-gfx906, gfx90c) and RDNA 1/2 (gfx10) have
    none.  An architecture the capture does not record is read as an Instinct's (ROCm's own GPUs)."""
    return _matrix_units_of(arch(name, cc))


def _matrix_units_of(gfx: str | None) -> bool:
    """Matrix units by GFX id (``_GFX``: major version, then a hex digit each of minor version and stepping).  Why
    by number: ROCm names an RDNA 2 laptop GPU (gfx1035) ``AMD Radeon Graphics`` as it does an Instinct board, so
    only the id tells the generation (survey h37-survey43: a HIP matmul on a Ryzen 6800H's Radeon 680M)."""
    m = _GFX.fullmatch(gfx or "")
    if not m:
        return True
    major, minor, stepping = int(m.group(1)), int(m.group(2), 16), int(m.group(3), 16)
    if major == 9:  # CDNA 1/2 are gfx908/gfx90a; gfx94x/gfx95x CDNA 3/4; gfx90c a Renoir APU's Vega
        return minor >= 4 or stepping in (0x8, 0xA)
    return major >= 11


def has_tf32_on(name: str | None, cc: object) -> bool:
    return has_tf32(name, cc)


def has_bf16_on(name: str | None, cc: object) -> bool:
    """Every CDNA generation's Matrix Cores run bfloat16."""
    return True


def arch_label(name: str | None, cc: str | None) -> str | None:
    """AMD's architecture is its GFX name (``gfx942``), not the major.minor ROCm reports."""
    return arch(name, cc) or cc


def matrix_unit_one(name: str) -> bool:
    return matrix_core_one(name)


def has_tf32(name: str | None, cc: str | float | None) -> bool:
    """Reduced-precision fp32 (XF32) on Matrix Cores: CDNA 3 only (gfx942); CDNA 4 (gfx950) dropped it."""
    return arch(name, cc) == "gfx942"


#: aiter's assembly kernels (ROCm/aiter ``hsa/<arch>/`` code objects, loaded by ``AiterAsmKernel`` under their
#: symbols): plain mangled names, ``_ZN5aiter<n><name>E`` -- no template, no parameters, so no word of a library's
#: C++ family.  Hand-written around MFMA: the fused-MoE GEMMs (``fmoe_stage1_bf16_pertokenFp8_blockscale_...``,
#: ``fmoe_bf16_pertokenMXfp4_g1u1_...``), the GEMMs (``fp8gemm_bf16_blockscale_BpreShuffle_32x128``,
#: ``f4gemm_bf16_per1x32Fp4_tn_256x256``), flash attention (``fmha_fwd_hd192_hd128_bf16_causal``) and MLA decode
#: (``mla_...``: the query heads sharing one latent KV are the tile's rows).  h37-kernfam3.  And its paged attention
#: (``pa_`` / ``PA_``: see ``_AITER_INT8_INPUT``).
_AITER_ASM = re.compile(r"aiter::(?:fmoe_|\w*?gemm|fmha_(?:fwd|bwd)_|mla_|pa_|PA_)")


#: An aiter assembly kernel's name gives its output type first and its inputs' after the quantization's granularity
#: (``fmoe_stage1_bf16_pertokenFp8_blockscale_...``: fp8 in, bf16 out; ``f4gemm_bf16_per1x32Fp4_...``: fp4 in) or in
#: its own word (``fp8gemm_bf16_...``): 8 bits or fewer, the precisions' fp8 (their narrowest float, as for trtllm-gen's
#: fp4).
_AITER_NARROW_INPUT = re.compile(r"per[A-Za-z0-9]*?(?:MX)?[Ff]p[468]|f[p]?[468]gemm")


def aiter_asm_narrow_input(name: str) -> bool:
    """An aiter assembly kernel (``aiter_asm_one``) whose inputs are 8-bit or narrower floats (``_AITER_NARROW_INPUT``)."""
    return aiter_asm_one(name) and bool(_AITER_NARROW_INPUT.search(plain_mangled_name(head(name))))


#: aiter's paged-attention assembly, ``_AITER_ASM``'s ``pa_`` (ROCm/aiter hsa/gfx942/pa/pa_asm.csv @372db6e5: columns
#: qType, kvType, Gqa -> ``_ZN5aiter31pa_bf16_pertokenFp8_gqa8_2tg_4wE``,
#: ``_ZN5aiter42PA_A16W8_BLK1024_1TG_4W_16mx1_64nx4_MTP_PSE``): decode attention over a paged KV cache whose ``gqa<N>``
#: query heads sharing one KV head are the rows multiplied by the keys, on MFMA.  The code objects ship without
#: source; their instructions say it (h37-kernfam5: every one of the 107 ``hsa/gfx942/pa/*.co`` and
#: ``hsa/gfx950/pa/*.co`` at ROCm/aiter @e4048607, disassembled, holds MFMAs, VOP3P opcodes of the MFMA range: 0x4d
#: ``v_mfma_f32_16x16x16_f16`` in the ``fp16_noquant`` ones, 0x61 ``v_mfma_f32_16x16x16_bf16`` in the
#: ``bf16_noquant`` ones -- both checked against LLVM's gfx940 encodings -- and only 0x73 in each of the 67 fp8-cache
#: ones, only 0x57 in each of the 24 int8-cache ones: fp8 x fp8 and int8 x int8 MFMAs by LLVM's gfx940 opcode order,
#: so the query is quantized to the cache's type and multiplied there).  So the dtype after the quantization's
#: granularity (``pertokenFp8``, ``pertokenInt8``) is the kernel's precision (``_AITER_NARROW_INPUT``,
#: ``_AITER_INT8_INPUT``), the first word (``qType``) only where none follows (``noquant``).  Seen: public
#: MI300X/MI355X serving write-ups (find_string 'pa_bf16_pertokenFp8').
#: An aiter assembly kernel whose inputs are quantized to int8 (``pa_bf16_pertokenInt8_...``: int8 MFMA).
_AITER_INT8_INPUT = re.compile(r"per[A-Za-z0-9]*?Int8")


def aiter_asm_input(name: str) -> int | None:
    """An aiter assembly kernel's input precision where its name gives a quantized one: fp8 for 8-bit or narrower
    floats (:func:`aiter_asm_narrow_input`), int8 for int8 (``_AITER_INT8_INPUT``); None otherwise."""
    if aiter_asm_narrow_input(name):
        return P_FP8
    if aiter_asm_one(name) and _AITER_INT8_INPUT.search(plain_mangled_name(head(name))):
        return P_INT8
    return None


def aiter_asm_one(name: str) -> bool:
    """An aiter assembly GEMM or attention kernel (``_AITER_ASM``), by its plain mangled name."""
    own = plain_mangled_name(head(name))
    return bool(own) and bool(_AITER_ASM.match(own))


@lru_cache(maxsize=65536)
def matrix_core_one(name: str) -> bool:
    """The kernel runs on Matrix Cores (an MFMA/XDLOPS GEMM or convolution, an aiter assembly GEMM), by name."""
    name = head(name)
    return (bool(_GEMM.search(name)) and bool(_MFMA.search(name))) or aiter_asm_one(name)


@lru_cache(maxsize=65536)
def gemm_kernel_one(name: str) -> bool:
    """A matmul/convolution kernel of rocBLAS/hipBLASLt (Tensile), Composable Kernel, MIOpen or aiter's assembly, by
    what its name says it computes (``_GEMM``, ``_AITER_ASM``): MIOpen's batch norm is MIOpen's, and no convolution."""
    return bool(_GEMM.search(head(name))) or aiter_asm_one(name)


#: rocPRIM's prefix scans (ROCm/rocPRIM rocprim/include/rocprim/device/device_scan.hpp, detail/device_scan_*.hpp; hipCUB
#: and PyTorch's ROCm ``cumsum`` and index sorts call them), by the kernel's own function under ``rocprim``:
#: ``single_scan_kernel`` (one block scans it all) and ``lookback_scan_kernel`` (decoupled look-back) -- reductions;
#: ``init_lookback_scan_state_kernel`` fills the tiles' status words (element-wise).  Newer rocPRIM launches them
#: through a ``trampoline_kernel<...config...>`` whose own name says nothing; left unread.
_ROCPRIM_KINDS = {"single_scan_kernel": "reduction", "lookback_scan_kernel": "reduction",
                  "init_lookback_scan_state_kernel": "elementwise"}


def primitive_kind(name: str) -> str | None:
    """The class of a rocPRIM scan kernel (``_ROCPRIM_KINDS``), by its own function under ``rocprim``; None for any
    other kernel."""
    parts = function_parts(name)
    return _ROCPRIM_KINDS.get(parts[-1]) if parts and parts[0] == "rocprim" else None


#: Matrix x vector products on the vector units: rocBLAS's level-2 ``gemv`` kernels (``rocblas_gemvn_kernel``,
#: ``rocblas_gemvt_kernel``, ``rocblas_gemvt_sn_kernel``: library/src/blas2/rocblas_gemv_kernels.cpp) and vLLM's
#: ROCm skinny GEMMs (csrc/rocm/skinny_gemms.cu: ``wvSplitK`` / ``wvSplitKQ``, first spelled ``wvSpltK``, with
#: ``_sml_`` / ``_big_`` forms, and ``LLGemm1_kernel`` of its ``LLMM1`` op; aiter carries the same ``wvSpltK``),
#: which vLLM runs in place of hipBLASLt for a decode's 1-4 tokens.  Each weight is read once and used for at most 4
#: columns in ``dot2`` instructions: at most 4 FLOP per fp16 weight byte, far below any Instinct GPU's ridge point --
#: the memory's time, which no Matrix Core shortens.
_MATRIX_VECTOR = re.compile(r"(?:rocblas_)?gemv\w*|wvSpl(?:i)?tKQ?\w*|LLGemm1\w*")


@lru_cache(maxsize=65536)
def matrix_vector_one(name: str) -> bool:
    """A rocBLAS or vLLM-ROCm matrix x vector product (``_MATRIX_VECTOR``), by its own function's name."""
    return any(_MATRIX_VECTOR.fullmatch(p) for p in function_parts(name))


#: Composable Kernel's attention backward helpers (``ck_tile::FmhaBwdOGradDotOKernel``: the row-wise dot of dO and O, a
#: reduction; ``ck_tile::FmhaBwdConvertQGradKernel``: the cast of the fp32 dQ accumulator to its output type), which
#: FlashAttention's and Transformer Engine's ROCm backends launch around ``FmhaBwdDQDKDVKernel``.  Their names say
#: ``Fmha`` like the attention kernels around them, but they run no matmul.
_ATTENTION_HELPER = re.compile(r"FmhaBwd(?:OGradDotO|Convert[QKV]+Grad)")


#: MIOpen's direct convolutions, by the names MIOpen gives them: its HIP reference kernels ``naive_conv_*``
#: (``naive_conv_fwd_nchw_float_double_float``, ``naive_conv_ab_nonpacked_fwd_nchw_ushort_double_ushort``,
#: ``naive_conv_ab_nonpacked_wrw_ncdhw_...``: solver ``ConvDirectNaiveConv*``, MIOpen's fallback where no other solver
#: takes a layer -- an int8 layer on gfx900, a dilated conv1d) and its OpenCL direct solvers (``MIOpenConvUni``,
#: ``MIOpenGroupConvUni``, ``MIOpenConv1x1``, ``MIOpenConv1x1pquv``, ``MIOpenCvD3x3_WSR0``, ``MIOpenCDFGen``,
#: ``MIOpenCvBwdWrW*``: ``ConvOclDirect*`` solvers).  Each is nested loops over an output's window and channels,
#: multiplied and added on the vector ALUs: the naive kernels are plain C++ loops (a disassembly of their int8 build
#: holds ``v_mul``/``v_add``, no dot or MFMA instruction), and MIOpen's OpenCL C kernels call no MFMA builtin.  CK's
#: ``kernel_grouped_conv_fwd_xdl*`` and MIOpen's ``igemm_*_gtcx*`` are implicit GEMMs on MFMA (``_MFMA``): not these.
_DIRECT_CONV = re.compile(r"^(?:naive_conv_|MIOpen(?:Group)?Conv(?:Uni|1x1)|MIOpenCv|MIOpenCDF)")


@lru_cache(maxsize=65536)
def direct_convolution_one(name: str) -> bool:
    """A MIOpen direct convolution (``_DIRECT_CONV``, a global kernel's own name) that names no MFMA: convolution work
    on the vector ALUs, which no dtype puts on the Matrix Cores.  Why: read as GEMM-family work (``_GEMM``'s
    ``naive_conv``, ``MIOpenCv``), a 16-bit layer MIOpen fell back to ``naive_conv_ab_nonpacked_fwd_*`` for was a
    "16-bit MatMul/Conv kernel that misses the Matrix Cores" and its time MFU's matmul/conv time (h37-flops68b)."""
    return bool(_DIRECT_CONV.match(head(name))) and not matrix_core_one(name)


#: MIOpen's convolutions on the vector ALUs that are no direct loop: its GCN assembly solvers (``ConvAsm1x1U``,
#: ``ConvAsm3x3U``, ``ConvAsmBwdWrW*``: ``miopenGcnAsmConv1x1U``, ``miopenGcnAsmConv3x3U``, ``miopenGcnAsmConv1x1WrW``),
#: its binary Winograd ones (``ConvBinWinograd*``, ``ConvWinograd3x3MultipassWrW``: ``miopenSp3AsmConv3x3F``,
#: ``miopenSp3AsmConvRxSf3x2``, ``miopenSp3AsmConv_v30_3_1_gfx9_fp16_dot2_edc_f3x2_stride1``, ``sp3AsmConvRxSU``) and
#: its FFT one (``fft``: ``MIOpenConvFFT_*``).  They were written for GCN before MFMA: ``v_fma``/``v_mac`` and, in 16
#: bits, ``v_dot2`` (the ``dot2`` of the Winograd names) -- vector instructions, no Matrix Core's.  Unlike the direct
#: ones they are GEMM-form work (a 1x1 convolution is a GEMM; Winograd's and FFT's middle stage a batch of GEMMs
#: over the channels) that MIOpen's MFMA implicit GEMMs (``igemm_*_gtcx*``) could run instead: a 16-bit one misses
#: the Matrix Cores (wild/mi300x_conv_backward_replay's fp16 Winograd), so they stay in the GEMM family.
_VALU_CONV = re.compile(r"^(?:miopenGcnAsmConv|miopenSp3AsmConv|sp3AsmConv|MIOpenConvFFT)", re.I)
#: MIOpen's convolutions that do fewer multiplies than the direct count: Winograd (``Sp3AsmConv``, any ``Winograd``)
#: and FFT (``MIOpenConvFFT``).
_FEWER_MULTIPLIES = re.compile(r"Sp3AsmConv|winograd|^MIOpenConvFFT", re.I)


def vector_alu_convolution_one(name: str) -> bool:
    """A MIOpen assembly, Winograd or FFT convolution (``_VALU_CONV``): GEMM-form work on the vector ALUs.  Why:
    NVIDIA's cuDNN ``conv1x1`` fragment read ``miopenGcnAsmConv1x1U`` as Matrix Core work (h37-conv69)."""
    return bool(_VALU_CONV.match(head(name))) and not matrix_core_one(name)


def fewer_multiplies_one(name: str) -> bool:
    """A MIOpen convolution whose algorithm multiplies less than the direct count (``_FEWER_MULTIPLIES``)."""
    return bool(_FEWER_MULTIPLIES.search(head(name)))


def attention_helper_one(name: str) -> bool:
    """A helper kernel of Composable Kernel's attention backward (``_ATTENTION_HELPER``): attention's family, no
    matmul."""
    return bool(_ATTENTION_HELPER.search(head(name)))


#: MIOpen's weight-gradient convolutions (its ``wrw`` direction: ``igemm_wrw_gtcx2_...``, ``naive_conv_..._wrw_...``)
#: and its batch-norm backward: kernels only a backward pass runs.  Not its ``bwd`` (data-gradient) direction, which a
#: transposed convolution's forward runs too.
#: MIOpen's own solver kernels spell the direction in CamelCase (``MIOpenCvBwdWrW``, ``MIOpenConvBwdWeights...``).
_GRADIENT = re.compile(r"(?:^|_)wrw(?:_|$)|BwdWrW|BwdWeights|MIOpenBatchNormBwd", re.I)


def gradient_kernel_one(name: str) -> bool:
    """A kernel only a backward pass runs, by MIOpen's naming (a weight gradient)."""
    return bool(_GRADIENT.search(head(name)))


#: MIOpen's data-gradient convolutions (its ``bwd`` direction: ``igemm_bwd_gtcx2_...``, ``naive_conv_..._bwd_...``,
#: ``MIOpenConvBwdData...``): a backward's, or a transposed convolution's forward -- never read as training by itself,
#: but a loop that runs one is not read as forward passes alone (``job.kind``).
_DATA_GRADIENT = re.compile(r"(?:^|_)bwd(?:_|$)|BwdData", re.I)


def data_gradient_one(name: str) -> bool:
    """A data-gradient convolution by MIOpen's naming (:data:`_DATA_GRADIENT`)."""
    return bool(_DATA_GRADIENT.search(head(name)))


#: Tensile's operand layout (rocBLAS, hipBLASLt): ``Cijk_Ailk_Bljk`` (A and B as stored), ``Cijk_Alik_...`` (A
#: transposed), ``..._Bjlk`` (B transposed).
_TENSILE_LAYOUT = re.compile(r"^Cijk_A(il|li)k_B(lj|jl)k")


def gemm_operand_layout(name: str) -> str:
    """A Tensile GEMM's operand layout (:data:`_TENSILE_LAYOUT`) as BLAS spells it, ``n``/``t`` for A then B; "" where
    the name says none (``devices.gemm_operand_layout``)."""
    m = _TENSILE_LAYOUT.match(head(name).strip())
    if not m:
        return ""
    return ("n" if m.group(1) == "il" else "t") + ("n" if m.group(2) == "lj" else "t")


#: Composable Kernel's fp8 element types as its kernels' template arguments spell them (``ck::f8_t``,
#: ``ck::bf8_fnuz_t``, ``ck::f8_ocp_t``).  A CK GEMM names its A/B input types first and its accumulator and shuffle
#: types (``float``) after them: aiter's fp8 block-scale GEMM on an MI355X (survey h37-rocprof2) is
#: ``kernel_gemm_xdl_cshuffle_v3_multi_d_blockscale_b_preshuffle<...RowMajor, ColumnMajor, ..., ck::f8_fnuz_t,
#: ck::f8_fnuz_t, float, float, ...>``: fp8 inputs, fp32 accumulation.
_CK_FP8 = re.compile(r"\bck::b?f8(?:_fnuz|_ocp)?_t\b")


@lru_cache(maxsize=65536)
def precision_one(name: str) -> int:
    """Input type of a Composable Kernel kernel of fp8 inputs (``ck::f8_fnuz_t``) or of a Tensile GEMM (``Cijk_..._BBS_...`` is bf16), else unknown (the generic dtype words are asked first)."""
    name = head(name)
    if _CK_FP8.search(name):
        return P_FP8
    m = _TENSILE.search(name)
    return _TENSILE_TYPE.get(m.group(1)[0], P_UNKNOWN) if m else P_UNKNOWN


#: Two alternatives that ROCm's words made one name ("cudaHostAlloc / cudaMallocHost": both ``hipHostMalloc``).
_SAME_ALTERNATIVES = re.compile(r"\b(\w+) / \1\b")


def words(text: str) -> str:
    """``text`` in ROCm's words; where CUDA names two calls that HIP names alike, the call once (h37-hipcode34 *Left*
    2: "page-locking memory (hipHostMalloc / hipHostMalloc, hipHostRegister)")."""
    return _SAME_ALTERNATIVES.sub(r"\1", replace_each(text, WORDS))


#: The device objects' names a framework prints on ROCm for CUDA's: JAX's ROCm plugin's devices are
#: ``RocmDevice(id=0)`` where CUDA's are ``CudaDevice(id=0)`` (``print(jax.devices())``; ROCm's JAX install guide and
#: jax-ml/jax's ``device_test.py`` ROCm branches).  A JAX capture on an MI300X whose steps stayed on the host was told
#: to look for ``CudaDevice`` in ``jax.devices()`` (h37-window62).
DEVICES = (("CudaDevice", "RocmDevice"),)


def code(snippet: str) -> str:
    """A snippet written for CUDA, for ROCm: a native program's runtime calls in HIP's names (:data:`CALLS`:
    ``cudaHostAlloc(&h_buf, ...)`` -> ``hipHostMalloc(&h_buf, ...)``), a framework's device objects as it prints them
    there (:data:`DEVICES`); PyTorch's device stays ``cuda`` there.  Why: the prose of a HIP program's fixes was put in
    HIP's calls and their code was not, so one fix said ``hipHostMalloc`` above ``cudaHostAlloc(&h_buf, max_bytes,
    cudaHostAllocDefault)`` (h37-review33 *Left* 5)."""
    return replace_each(replace_each(snippet, CALLS), DEVICES)


#: Per-direction GPU<->GPU bandwidth over AMD Infinity Fabric (xGMI), per GPU, by GFX architecture.
XGMI_BANDWIDTH = {
    "gfx942": (448e9, "Infinity Fabric (xGMI) on MI300X: 7 links x 64 GB/s per direction per GPU (AMD CDNA 3 "
                      "white paper)"),
    "gfx90a": (400e9, "Infinity Fabric (xGMI) on MI250X: 800 GB/s aggregate peak, 400 GB/s per direction (AMD "
                      "Instinct MI250X datasheet)"),
}


def link_bandwidth(name: str | None, cc: str | float | None) -> tuple[float, str] | None:
    """xGMI bandwidth of an AMD GPU by its architecture, None when unknown."""
    return XGMI_BANDWIDTH.get(arch(name, cc) or "")


#: How long the GPU idles, by GFX architecture, entering or leaving a HIP graph it already holds (``hipGraphLaunch``
#: returned long before): the command processor's switch between one launch and a graph's kernels, not held work.
#: Read off queued transitions (the next work's call returned, and the driver submitted it, before the GPU finished
#: what ran before it) in the kept captures ``wild/vllm_mi300x_prefill`` and ``wild/vllm_mi300x_decode`` (vLLM, ROCm,
#: MI300X): 52 graph entries and exits of 0-13.8 us, median 10.6 us; the same GPU's switch between two kernels of a
#: graph, or two kernels launched apart, is 0 us at the median and under 3.5 us at the 90th percentile
#: (``ddp_mi300x_actckpt``: 1 259 transitions).  h37-left44.
GRAPH_SWITCH_US = {
    "gfx942": (15.0, "MI300X (CDNA 3) under ROCm: 52 HIP graph entries and exits in two kept vLLM captures idle "
                     "0-13.8 us, median 10.6 us, with the graph already submitted (h37-left44)"),
}


def graph_switch_us(name: str | None, cc: object) -> tuple[float, str] | None:
    """The longest a GPU of this architecture idles entering or leaving a graph it already holds, with its source;
    None where not measured."""
    if isinstance(cc, (tuple, list)) and len(cc) == 2:
        cc = f"{cc[0]}.{cc[1]}"
    return GRAPH_SWITCH_US.get(arch(name, cc) or "")


#: The APU of the MI300 family: its CPU and GPU share one HBM, so a host copy crosses no bus (AMD Instinct MI300A data
#: sheet) -- nor does a Ryzen APU's Radeon, in the host's own memory (its GFX id: :data:`_INTEGRATED_GFX`).
_APU = re.compile(r"\bMI300A\b", re.IGNORECASE)
#: The GFX ids of AMD's integrated GPUs (LLVM's AMDGPU processor table): Raven/Picasso (gfx902, gfx909), Renoir and
#: Cezanne (gfx90c), Van Gogh (gfx1033), Rembrandt, Raphael and Mendocino (gfx1035-gfx1037), Phoenix (gfx1103),
#: Strix Point, Strix Halo and Krackan (gfx1150-gfx1153).
_INTEGRATED_GFX = {"gfx902", "gfx909", "gfx90c", "gfx1033", "gfx1035", "gfx1036", "gfx1037", "gfx1103", "gfx1150",
                   "gfx1151", "gfx1152", "gfx1153"}
_SHARED_MEMORY = (float("inf"), "the host's own memory (an APU: CPU and GPU share it, no bus between them)")
_PCIE3, _PCIE4, _PCIE5 = 15.75e9, 31.5e9, 63.0e9  # x16, per direction after encoding (PCI-SIG)
#: The fastest host link per direction of each AMD architecture, from AMD's own documents, so a copy's floor on it is
#: never too high.  MI250/MI250X (gfx90a OAM): "each GCD maintains its own PCIe x16 link to the host" (Gen 4; "some
#: platforms may offer an x8 interface"; ROCm's MI250 microarchitecture page), but on HPE Cray EX235a nodes (Frontier,
#: LUMI) the CPU reaches each GCD over Infinity Fabric at a peak 36+36 GB/s (OLCF Frontier user guide) -- the
#: platform decides, so the faster is the floor's and the words say both.  MI100 (gfx908): PCIe Gen 4 x16 (ROCm's
#: MI100 page).  MI300X/MI325X (gfx942) and MI350X/MI355X (gfx950): PCIe Gen5 x16 (AMD's MLPerf system descriptions,
#: "accelerator_host_interconnect": "PCIe Gen5 x16").  MI50/MI60 (gfx906) PCIe 4.0, MI25 (gfx900) 3.0; Radeon RX
#: 5000-7000 (gfx10, gfx11) PCIe 4.0 x16, RX 9000 (gfx12) 5.0 x16.
_HOST_LINKS = {
    "gfx950": (_PCIE5, "PCIe 5.0 x16 (~63 GB/s per direction), an MI350 part's host link"),
    "gfx942": (_PCIE5, "PCIe 5.0 x16 (~63 GB/s per direction), an MI300X / MI325X part's host link"),
    "gfx90a": (36.0e9, ("Infinity Fabric to the CPU at best (~36 GB/s per direction per GCD, on Frontier-like nodes), "
                        "else each GCD's own PCIe 4.0 x16 (~31.5 GB/s, x8 on some platforms): the platform decides")),
    "gfx908": (_PCIE4, "PCIe 4.0 x16 (~31.5 GB/s per direction), an MI100's host link"),
    "gfx906": (_PCIE4, "PCIe 4.0 x16 (~31.5 GB/s per direction), the fastest host link of a Vega 20 part"),
    "gfx900": (_PCIE3, "PCIe 3.0 x16 (~15.8 GB/s per direction), a Vega 10 part's host link"),
}
#: MI210 is a PCIe card of the MI250's architecture: its host link is the slot's.
_MI210 = re.compile(r"\bMI210\b", re.IGNORECASE)


def host_link(name: str | None, cc: object) -> tuple[float, str] | None:
    """The fastest link per direction between the host's memory and this AMD GPU (:data:`_HOST_LINKS`), with its
    words: none on an APU (one memory); None where the architecture is not known (the assumed PCIe, said so).  Why:
    an MI250X's copies were floored on an assumed PCIe 5.0 x16 (63 GB/s) that no MI250X host has, and a Ryzen APU's
    Radeon (gfx1035) on a bus it does not sit on (h37-copy70)."""
    if _APU.search(name or ""):
        return _SHARED_MEMORY
    gfx = arch(name, cc) or gfx_id(str(cc or ""))
    if gfx in _INTEGRATED_GFX:
        return _SHARED_MEMORY
    if gfx == "gfx90a" and _MI210.search(name or ""):
        return _PCIE4, "PCIe 4.0 x16 (~31.5 GB/s per direction), an MI210 card's host link"
    if gfx in _HOST_LINKS:
        return _HOST_LINKS[gfx]
    m = _GFX.fullmatch(gfx or "")
    major = int(m.group(1)) if m else _major(cc)
    if major in (10, 11):
        return _PCIE4, "PCIe 4.0 x16 (~31.5 GB/s per direction), the fastest host link of a Radeon RDNA 1-3 part"
    if major == 12:
        return _PCIE5, "PCIe 5.0 x16 (~63 GB/s per direction), the fastest host link of a Radeon RDNA 4 part"
    return None


def _major(cc: object) -> int | None:
    """The major version of a reported ``major.minor`` (ROCm's ``11.0`` of an RX 7900), None where none reads."""
    head = str(cc or "").partition(".")[0]
    return int(head) if head.isdigit() else None
