"""Intel GPUs (PyTorch's ``xpu`` device: Data Center GPU Max, Arc): their copy names, runtime calls and words.

PyTorch traces them through Kineto's ``xpupti`` plugin (Intel's PTI SDK), PyTorch 2.4 on (pytorch/kineto
``libkineto/src/plugin/xpupti/XpuptiActivityHandlers.cpp``): kernels, copies and memsets keep CUDA's categories
(``kernel``, ``gpu_memcpy``, ``gpu_memset``), the calls that launch them are ``xpu_runtime`` (SYCL's Unified Runtime,
``urEnqueueKernelLaunch``; SYCL's older plug-in interface, ``piEnqueueKernelLaunch``) and ``xpu_driver`` (Level Zero,
``zeCommandListAppendLaunchKernel``), linked by ``correlation``.  A copy is named by PTI's kind and memories,
``Memcpy M2D (MEMORY -> DEVICE)`` (older plugins: ``Memcpy M2D``): ``M`` the process's own system memory (what CUDA
calls pageable), ``H`` USM host memory (pinned), ``D`` device memory, ``S`` USM shared memory.

The matrix units are Xe Matrix Extensions (XMX); which kernels use them their names do not say, so the Tensor Core
rules neither count a kernel on them nor off them here.  The device is ``xpu`` in PyTorch's code
(``x.to('xpu')``, ``torch.autocast('xpu')``, ``ProfilerActivity.XPU``): :func:`code` rewrites a snippet's CUDA device.
"""

from __future__ import annotations

import re

from tb_gpu_advisor.devices.codes import P_UNKNOWN, replace_each
from tb_gpu_advisor.model.schema import Action

VENDOR = "Intel"
#: The prefixes of the calls of SYCL's Unified Runtime, its older plug-in interface and Level Zero (``urQueueFinish``,
#: ``piEventsWait``, ``zeCommandListAppendLaunchKernel``).
RUNTIME_PREFIXES = ("ur", "pi", "ze")
#: The collective libraries' own names as a distributed backend: PyTorch's ``xccl`` (oneCCL, PyTorch 2.8 on) and
#: Intel's oneCCL bindings' ``ccl`` (``devices.vendor_shown``).
COLLECTIVE_LIBRARIES = ("xccl", "ccl")
#: What an XPU build of PyTorch names in the C++ frames a memory snapshot records: its caching allocator
#: (``c10::xpu::XPUCachingAllocator``).
ALLOCATOR_FRAMES = re.compile(r"\bc10::xpu::|XPUCachingAllocator")
#: Device names of Intel GPUs as SYCL reports them (``Intel(R) Data Center GPU Max 1550``, ``Intel(R) Arc(TM) A770
#: Graphics``): Intel's name, never a CPU's (``deviceProperties`` lists only the accelerators).
_DEVICE = re.compile(r"\bIntel\b|\bArc\b|Data Center GPU (?:Max|Flex)", re.I)

#: PTI's copy kinds: source and destination memory letters (``ptiViewMemcpyTypeToString``).
_PTI_COPY = re.compile(r"^Memcpy ([MHDS])2([MHDS])\b")
_HOST_MEMORY = frozenset("MH")
#: PTI's memory words after the kind (``(MEMORY -> DEVICE)``): ``MEMORY`` is system memory (pageable).
_PTI_PAGEABLE = re.compile(r"^Memcpy (?:M2[MHDS]|[HDS]2M)\b")

#: The outermost namespace -- or, for a global kernel, the prefix -- of Intel's math and DNN libraries' kernels
#: (``devices.library_scope_one``): oneDNN (``dnnl::``), oneMKL, oneAPI's.
LIBRARY_SCOPES = re.compile(r"(?i:dnnl|onednn|oneapi|mkl)(?![a-z])")
#: Intel's words for NVIDIA's (prose; code goes through :func:`code`, and so does code quoted in prose: ``device='cuda'``
#: in a sentence).  A citation of NVIDIA's tools stays as written
#: (Nsight Systems' rule names); NVTX ranges, which no Intel tool reads, are left out of the advice.
WORDS = (("Tensor Cores", "XMX engines"), ("Tensor Core", "XMX"), ("cuDNN", "oneDNN"), ("cuBLASLt", "oneMKL"),
         ("cuBLAS", "oneMKL"), ("CUDA graphs", "SYCL graphs"), ("CUDA graph", "SYCL graph"), ("NCCL", "oneCCL"),
         ("nvidia-smi", "xpu-smi"), ("CUDA cores", "vector engines"), ("CUDA-core", "vector-engine"),
         ("thread blocks", "work-groups"), ("thread block", "work-group"), ("SMs", "Xe cores"),
         ("cudaMalloc", "sycl::malloc_device"), ("cudaFree", "sycl::free"),
         ("CUDA sync debug mode", "XPU sync debug mode"), (", or torch.cuda.nvtx under Nsight Systems", ""),
         ("NVTX ranges, ", ""), ("CUPTI", "PTI"),
         # NVIDIA's tool and generations named in the frameworks' fixes (h37-words63): PTI names a pageable copy by its
         # memories (``Memcpy M2D``); every Intel GPU with XMX engines multiplies bf16 on them (Xe-HPC and Xe-HPG), the
         # Data Center GPU Max TF32 too
         ("Nsight Systems' 'CUDA Async Memcpy with Pageable Memory' rule",
          "PTI names such a copy Memcpy M2D: from the process's own system memory"),
         ("bfloat16 needs no loss scaling at all on Ampere and newer", "bfloat16 needs no loss scaling at all"),
         ("On Ampere and newer,", "On the GPUs with TF32 (Data Center GPU Max),"))

#: PyTorch's CUDA device in code, and its Intel GPU spelling; the caching allocator's variable is the XPU build's own
#: (``c10/xpu/XPUCachingAllocator.h`` reads ``PYTORCH_XPU_ALLOC_CONF``).
_CODE = (("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_XPU_ALLOC_CONF"), ("'cuda'", "'xpu'"), ('"cuda"', '"xpu"'), ("torch.cuda.", "torch.xpu."), ("ProfilerActivity.CUDA",
                                                                                  "ProfilerActivity.XPU"),
         (".cuda()", ".to('xpu')"), ("CUDAGraph(", "XPUGraph("))

#: How Intel GPU users name things (the keys of ``nvidia.TERMS``).
TERMS = {
    #: the drivers that submit launches late, in batches, and how to see which one runs (``rules.capture_quality``
    #: submission latency, h37-idle67)
    "batching_drivers": "Windows' WDDM driver model does (and WSL2, which runs on it)",
    "driver_check": ("see whether the host runs Windows or WSL2: the Linux driver (i915/xe) submits without such batching"),
    "matrix_units": "XMX engines",
    "matrix_unit": "XMX",
    "fp32_on_matrix_units": "already on the XMX engines in fp32 (TF32)",
    "conv_library": "oneDNN",
    "collective_library": "oneCCL",
    "graphs": "SYCL graphs",
    "gpu_link": "Xe Link",
    "conv_padding": "oneDNN chooses its kernels for the channel counts it is given",
    "tc_kernel_names": "an XMX (DPAS) kernel of oneDNN or oneMKL",
    "allocator_calls": "sycl::malloc_device / sycl::free",
    "runtime": "SYCL runtime",
    #: no SYCL queue is such a stream: a SYCL program's copies are never read on one (formats state it for CUDA and
    #: HIP alone), so the words stay CUDA's
    "legacy_stream": "CUDA's NULL stream",
    #: the tracer a profiler records this runtime's calls and the GPU's work through (PyTorch's Kineto, XLA's)
    "gpu_tracer": "Intel's PTI (Kineto's xpupti plugin)",
    "context_creation": "the SYCL runtime's start-up",
    "torch_build": "a PyTorch XPU build made for the installed Intel GPU driver",
    "system_profiler": "Intel VTune Profiler",
    "system_trace": "vtune -collect gpu-hotspots -r run -- python train.py",
    "kernel_profiler": "Intel VTune Profiler's GPU analyses",
    #: every Intel GPU with XMX engines multiplies bf16 on them (Xe-HPC and Xe-HPG)
    "bf16_gpus": "bfloat16 on them too (Data Center GPU Max, Arc)",
}


def _fixes() -> dict[str, Action]:
    return {
        "topology": Action(text="Check the links between the GPUs (Xe Link vs PCIe) and that oneCCL uses them.",
                           snippet="xpu-smi topology -m", snippet_lang="shell"),
        "transport": Action(text="Check which transport oneCCL picked between the GPUs (Xe Link / network / "
                                 "sockets): its log names them.", snippet="export CCL_LOG_LEVEL=info",
                            snippet_lang="shell"),
        "network": Action(text="Between hosts: one NIC per GPU and GPU-direct RDMA for oneCCL, no TCP fallback; "
                               "within a host: the GPUs on Xe Link.", snippet="xpu-smi topology -m",
                          snippet_lang="shell"),
        "clocks": Action(text="Look at the node itself: GPU clocks, power and temperature, and other processes on it.",
                         snippet="xpu-smi stats -d 0", snippet_lang="shell"),
        # the same too-small grids in a library's kernels (``devices.library_kernel_one``), which the program does not
        # launch itself: what it can change is the calls (h37-words32)
        "library_blocks": Action(
            text="For a library's kernels (oneDNN, oneMKL): the library sizes each range from the shapes it "
                 "is called with, so no launch setting of yours changes it -- only the calls do: fewer, larger "
                 "calls (many small matrix products as one batched call: oneMKL's gemm_batch, a framework's "
                 "batched matmul)."),
        "more_blocks": Action(
            text="For a kernel of your own (SYCL, an extension): launch at least one work-group per Xe core (better "
                 "several), sized from the data, and loop over the data with a stride of the global range so any "
                 "range covers it; a serial loop in one work-item becomes a parallel reduction "
                 "(sycl::reduction).", snippet="q.parallel_for(sycl::nd_range<1>(groups * 256, 256), ...);",
            snippet_lang="text"),
    }


#: Intel's own fixes (the keys of ``nvidia.FIXES``).
FIXES = _fixes()

#: SYCL/Level Zero calls that wait for the GPU; those the host is blocked in (the syncs: a SYCL copy call's blocking
#: is a flag of the call, which the trace does not record).
SYNC_CALLS = ("urQueueFinish", "urEventWait", "piQueueFinish", "piEventsWait", "zeCommandQueueSynchronize",
              "zeEventHostSynchronize", "zeFenceHostSynchronize")
BLOCKING_CALLS = SYNC_CALLS
POLL_CALLS: tuple[str, ...] = ()  # no query of an event that a program polls is read here
GRAPH_LAUNCH_CALLS = ("urCommandBufferEnqueueExp", "urEnqueueCommandBufferExp")
#: Pinned host memory calls (see ``nvidia.PINNED_ALLOC_CALLS``): none, as none of the device's own allocations is
#: known here (``devices.is_alloc_call`` reads CUDA's and HIP's).
PINNED_ALLOC_CALLS: tuple[str, ...] = ()
#: A queue's wait for another's events: none the Level Zero / UR traces we hold record apart (``nvidia.STREAM_WAIT_CALLS``).
STREAM_WAIT_CALLS: tuple[str, ...] = ()
#: Device queries (see ``nvidia.QUERY_CALLS``); SYCL waits on queues, not on the whole device: no such call is known.
QUERY_CALLS = ("urDeviceGet", "urDeviceGetInfo", "urPlatformGet", "piDevicesGet", "piDeviceGetInfo", "piPlatformsGet")
DEVICE_SYNC_CALLS: tuple[str, ...] = ()
#: The calls that launch one kernel: Unified Runtime, SYCL's plug-in interface, Level Zero.
LAUNCH_CALLS = ("urEnqueueKernelLaunch", "piEnqueueKernelLaunch", "zeCommandListAppendLaunchKernel",
                "zeCommandListAppendLaunchCooperativeKernel")
#: No call tells a kernel compiled at run time from the runtime's own (``nvidia.MODULE_LAUNCH_CALLS``): SYCL launches
#: both through ``urEnqueueKernelLaunch``.
MODULE_LAUNCH_CALLS: tuple[str, ...] = ()
#: SYCL graphs are recorded in the runtime, with no call of their own around the recording.
CAPTURE_CALLS: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
WORK_ITEM_GRID_CALLS: tuple[str, ...] = ()
#: Calls that release what a Level Zero / Unified Runtime program made, its tear-down's (see
#: ``nvidia.TEARDOWN_CALLS``).
TEARDOWN_CALLS = ("zeCommandListDestroy", "zeCommandQueueDestroy", "zeModuleDestroy", "zeKernelDestroy",
                  "zeContextDestroy", "zeEventDestroy", "zeEventPoolDestroy", "urQueueRelease", "urContextRelease",
                  "urProgramRelease", "urKernelRelease")
INIT_CALLS = ("urProgramBuild", "urProgramCreateWithIL", "urKernelCreate", "piProgramBuild", "piKernelCreate",
              "zeModuleCreate", "zeKernelCreate", "zeInit")
#: None (see ``nvidia.RUNTIME_INIT_CALLS``): Level Zero initialises its drivers inside a recorded call -- the program
#: must call ``zeInit`` / ``zeInitDrivers`` before any other (the Level Zero specification) -- which ``INIT_CALLS``
#: books as start-up; no later call holds an initialisation the capture does not name.
RUNTIME_INIT_CALLS: tuple[str, ...] = ()
#: The OS calls through which the Level Zero driver talks to the kernel driver (``ioctl`` on the DRM render node; see
#: ``nvidia.DRIVER_OS_CALLS``).
DRIVER_OS_CALLS = ("ioctl",)
JIT_COMPILE_CALLS = ("urprogrambuild", "piprogrambuild", "zemodulecreate")
LINK_START_CALLS = ("urProgramLink", "piProgramLink")
#: No load of a program from memory is read apart here (see ``nvidia.IMAGE_LOAD_CALLS``): Level Zero's
#: ``zeModuleCreate`` builds as it loads and is a compile call of its own (``JIT_COMPILE_CALLS``).
IMAGE_LOAD_CALLS: tuple[str, ...] = ()


def is_device(name: str | None) -> bool:
    return bool(name) and bool(_DEVICE.search(name or ""))


def copy_direction(name: str) -> str | None:
    """``h2d``/``d2h``/``d2d``/``other`` for PTI's copy names (``Memcpy M2D``), None for any other name."""
    m = _PTI_COPY.match(name)
    if not m:
        return None
    src, dst = m.groups()
    if src in _HOST_MEMORY and dst == "D":
        return "h2d"
    if src == "D" and dst in _HOST_MEMORY:
        return "d2h"
    return "d2d" if src == dst == "D" else "other"


def host_memory(name: str) -> int:
    """1 a PTI copy to or from system (pageable) memory, 0 one of USM host or device memory, -1 no PTI copy name."""
    if not _PTI_COPY.match(name):
        return -1
    return 1 if _PTI_PAGEABLE.match(name) else 0


def matrix_unit_one(name: str) -> bool:
    return False


def has_matrix_units(name: str | None = None, cc: object = None) -> bool | None:
    return None  # XMX on Max and Arc, none on some integrated parts: the name alone does not say


def has_tf32_on(name: str | None, cc: object) -> bool | None:
    return None


def has_bf16_on(name: str | None, cc: object) -> bool | None:
    return None


def arch_label(name: str | None, cc: str | None) -> str | None:
    return None


def precision_one(name: str) -> int:
    return P_UNKNOWN


def gemm_kernel_one(name: str) -> bool:
    return False


def attention_helper_one(name: str) -> bool:
    return False


def gradient_kernel_one(name: str) -> bool:
    return False


def link_bandwidth(name: str | None, cc: object) -> tuple[float, str] | None:
    return None


def graph_switch_us(name: str | None, cc: object) -> tuple[float, str] | None:
    return None


def words(text: str) -> str:
    """``text`` in Intel's words, the code it quotes (``given device='cuda'``) for the ``xpu`` device."""
    return replace_each(replace_each(text, WORDS), _CODE)


def code(snippet: str) -> str:
    """A PyTorch snippet written for the CUDA device, for the ``xpu`` device."""
    return replace_each(snippet, _CODE)
