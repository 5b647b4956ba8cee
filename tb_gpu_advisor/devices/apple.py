"""Apple GPUs (PyTorch's ``mps`` device, Apple Silicon's M-series): what a PyTorch profile of them holds, and words.

torch.profiler on the MPS backend records the host's ops only: Kineto has no Metal activity source, so a capture of
a job that ran on the Apple GPU holds ``aten::`` ops and no kernel, copy or runtime call -- by design, not a lost
buffer (CUPTI's case).  The GPU's side is recorded by the backend's own OS Signposts (``torch.mps.profiler.profile``,
PyTorch 2.1 on: one interval per op's Metal encoding, ``wait_until_completed`` for one dispatch each) read in Xcode
Instruments (the Logging and Metal System Trace instruments; pytorch/pytorch ``aten/src/ATen/mps/MPSProfiler.h``),
and since PyTorch 2.8 a Metal capture (``torch.mps.profiler.metal_capture``, a ``.gputrace`` for Xcode).

The evidence a Kineto capture gives is the host's: the ops PyTorch dispatches only for MPS tensors
(``Framework.backend_event``: ``aten::_mps_convolution``, ``aten::_lstm_mps``) and the allocator's ``[memory]`` events
of ``Device Type`` 13 (c10's ``DeviceType::MPS``).
"""

from __future__ import annotations

import re

from tb_gpu_advisor.devices.unread import (copy_direction, host_memory, never, precision_one,  # noqa: F401
                                           speech, unknown)
from tb_gpu_advisor.model.schema import Action

VENDOR = "Apple"
#: PyTorch's device string of the backend, as ``Framework.backend_event`` and the Kineto reader name it.
BACKEND = "mps"
#: The capture formats the Apple GPU's jobs write: torch.profiler's (Kineto); Instruments' traces are not read.
WRITES = ("kineto",)
#: The backend in words (``rules.capture_quality``'s title).
BACKEND_NAME = "MPS backend"
#: The GPU in words.
GPU = "the Apple GPU"
#: Why a capture of it holds no GPU record.
#: why a host's scalar reads are all a capture on the MPS backend shows of its GPU: said where other captures say their
#: GPU's records were lost (``rules.host_sync``)
NOT_RECORDED = "torch.profiler does not record the Apple GPU's work (PyTorch's MPS backend)"
UNTRACED = ("torch.profiler records only the host's ops on the MPS backend (it has no Metal activity source), so the "
            "GPU's work is not in this capture by design: no record of it was dropped")


def trace_gpu_action() -> Action:
    """How to record the Apple GPU's own work: the backend's OS Signposts in Instruments, not CUDA tracing."""
    return Action(
        text=("Record the GPU's side with the MPS backend's own profiler: wrap the steps in "
              "torch.mps.profiler.profile(mode=\"interval\", wait_until_completed=True) (PyTorch 2.1 or newer) and "
              "record the run in Xcode Instruments (the Logging and Metal System Trace instruments show each op's "
              "GPU interval); torch.mps.synchronize() before reading a time keeps host timings honest. "
              "torch.profiler's trace shows the host's ops only on this backend."),
        snippet=("with torch.mps.profiler.profile(mode=\"interval\", wait_until_completed=True):\n"
                 "    for _ in range(5):\n        train_step()\n"
                 "torch.mps.synchronize()"),
        snippet_lang="python")


#: Apple's words for NVIDIA's, in prose (code goes through :func:`code`).  The MPS backend has no runtime call a capture
#: records, no graphs, no collective library of its own and no tracer of Metal in torch.profiler: NVIDIA's tools are
#: named by what records the Apple GPU instead (Instruments), the CUDA sync debug mode has none (``Framework.fit``
#: leaves it out: ``frameworks.pytorch.DEVICE_FEATURES``).
WORDS = (("Tensor Cores", "the GPU's matrix units (simdgroup matrices)"), ("Tensor Core", "matrix-unit"),
         ("cuDNN", "MPSGraph"), ("cuBLASLt", "Metal Performance Shaders"), ("cuBLAS", "Metal Performance Shaders"),
         ("CUDA graphs", "one compiled graph (torch.compile)"), ("CUDA graph", "compiled graph"), ("NCCL", "Gloo"),
         ("nvidia-smi", "powermetrics"), ("CUDA cores", "ALUs"), ("CUDA-core", "ALU"),
         ("thread blocks", "threadgroups"), ("thread block", "threadgroup"), ("SMs", "GPU cores"),
         ("cudaMalloc", "MTLDevice.newBuffer"), ("cudaFree", "buffer release"),
         ("CUDA sync debug mode", "MPS backend's synchronizations"), (", or torch.cuda.nvtx under Nsight Systems", ""),
         ("NVTX ranges, ", ""), ("Nsight Systems", "Xcode Instruments"), ("Nsight Compute", "Xcode's Metal debugger"),
         ("CUPTI", "the profiler's GPU tracer"), ("cudaMemcpyAsync", "a copy to the mps device"),
         ("cudaMemcpy", "a copy to the mps device"), ("the CUDA context's", "the MPS backend's"),
         ("CUDA-aware", "GPU-aware"), ("CUDA toolkit", "macOS SDK"), ("CUDA driver", "macOS"),
         ("CUDA build", "MPS build"), ("driver's CUDA", "macOS"), ("CUDA", "Metal"),
         ("bfloat16 needs no loss scaling at all on Ampere and newer",
          "bfloat16 (macOS 14 and newer) needs no loss scaling at all"))

#: How Apple GPU users name things (the keys of ``nvidia.TERMS``).
TERMS = {
    #: the drivers that submit launches late, in batches, and how to see which one runs (``rules.capture_quality``
    #: submission latency, h37-idle67)
    "batching_drivers": "Metal does, committing its command buffers in batches",
    "driver_check": "know that Metal batches by design: fewer, larger launches are the lever there",
    "matrix_units": "the GPU's matrix units (simdgroup matrices)",
    "matrix_unit": "matrix-unit",
    "fp32_on_matrix_units": "already on the GPU's matrix units in fp32",
    "conv_library": "MPSGraph",
    "collective_library": "Gloo",
    "graphs": "compiled graphs",
    "gpu_link": "unified memory",
    "conv_padding": "MPSGraph chooses its kernels for the channel counts it is given",
    "tc_kernel_names": "an MPS matrix kernel",
    "allocator_calls": "the MPS allocator's heap allocations",
    "runtime": "Metal",
    "legacy_stream": "Metal's NULL stream",
    #: the tracer a profiler records this runtime's calls and the GPU's work through: none named here
    "gpu_tracer": "",
    "context_creation": "the MPS backend's start-up",
    "torch_build": "a PyTorch build for macOS on Apple Silicon",
    "system_profiler": "Xcode Instruments (Metal System Trace)",
    "system_trace": "xcrun xctrace record --template 'Metal System Trace' --launch -- python train.py",
    "kernel_profiler": "Xcode's Metal debugger (a .gputrace from torch.mps.profiler.metal_capture)",
    #: Metal's bfloat16 from macOS 14 (as this module's words for loss scaling say)
    "bf16_gpus": "bfloat16 only from macOS 14",
}


def _fixes() -> dict[str, Action]:
    """Apple's own fixes (the keys of ``nvidia.FIXES``): one GPU on one chip, no link between GPUs to check."""
    node = Action(text="Look at the Mac itself: the GPU's power and frequency, thermal throttling and other "
                       "processes using the GPU.", snippet="sudo powermetrics --samplers gpu_power -n 5",
                  snippet_lang="shell")
    return {
        "topology": Action(text="An Apple GPU shares the chip's unified memory with the CPU; between Macs the "
                                "collective runs over the network (Gloo): check the network between them."),
        "transport": Action(text="Check which network interface Gloo uses between the Macs.",
                            snippet="export GLOO_SOCKET_IFNAME=en0", snippet_lang="shell"),
        "network": Action(text="Between Macs: the fastest network interface for Gloo (Thunderbolt bridge or 10 GbE)."),
        "clocks": node,
        "library_blocks": Action(
            text="For a library's kernels (Metal Performance Shaders, MPSGraph): the library sizes each dispatch "
                 "from the shapes it is called with, so only the calls change it: fewer, larger calls (many small "
                 "matrix products as one batched matmul)."),
        "more_blocks": Action(
            text="For a kernel of your own (a Metal shader): dispatch at least one threadgroup per GPU core (better "
                 "several), sized from the data, and loop over the data with a stride of the grid so any grid "
                 "covers it."),
    }


FIXES = _fixes()

# No runtime call of the MPS backend is recorded by torch.profiler (no Metal activity source): this module defines no
# call list (``devices._calls`` reads a missing one as empty), so no Apple call is read as a launch, a sync or a copy.

#: What an MPS build of PyTorch names in a memory snapshot's C++ frames: its allocator (``at::mps::HeapAllocator``).
ALLOCATOR_FRAMES = re.compile(r"\bat::mps::|MPSHeapAllocator|MPSAllocator")
_DEVICE = re.compile(r"^Apple\b|\bApple M\d", re.I)

#: CUDA's device in PyTorch code -> the MPS backend's (``torch.mps.synchronize``, ``device='mps'``).
_CODE = (("'cuda'", "'mps'"), ('"cuda"', '"mps"'), ("torch.cuda.", "torch.mps."), (".cuda()", ".to('mps')"),
         ("ProfilerActivity.CUDA", "ProfilerActivity.CPU"))


def is_device(name: str | None) -> bool:
    """An Apple GPU's name as PyTorch reports it (``Apple M2 Max``)."""
    return bool(name) and bool(_DEVICE.search(name or ""))


matrix_unit_one = gemm_kernel_one = attention_helper_one = gradient_kernel_one = never
has_matrix_units = has_bf16_on = arch_label = link_bandwidth = graph_switch_us = unknown


def host_link(name: str | None, cc: object) -> tuple[float, str]:
    """No bus between the host and an Apple GPU: one unified memory, so a copy has no floor on a link (h37-bus69)."""
    return float("inf"), "unified memory (no bus between the host and the GPU)"


def has_tf32_on(name: str | None, cc: object) -> bool | None:
    """Metal has no TF32 type: the float32 matmuls of the MPS backend run in fp32 (or fp16 with reduced precision)."""
    return False


#: ``text`` in Apple's words with the code it quotes for its device; a CUDA snippet for its device.
words, code = speech(_CODE, WORDS)
