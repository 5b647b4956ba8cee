"""A device whose build the capture does not name, where it shows the device is no CUDA device's default: words true
of every build that writes PyTorch's memory snapshot (CUDA and ROCm, ``torch_npu`` on an Ascend NPU, an XPU build).

A memory snapshot records no device by name; its frames name a build only where a stack runs through the build's
allocator or Python package (``devices.vendor_of_frames``).  A Python-only record of ``torch_npu`` with no
``torch.npu`` call in its stacks names none (three of codeasier/MemSnapDump's seven Ascend snapshots), and was told
CUDA's words -- "GPU", ``PYTORCH_CUDA_ALLOC_CONF`` (which torch_npu does not read), ``torch.cuda.*``,
``ProfilerActivity.CUDA`` -- from the reader's default.  What the file does say is its streams: CUDA's and HIP's
default stream is the null stream, recorded ``stream`` 0 by their allocators, while torch_npu's is a stream it made
(an ``aclrtStream`` handle, never 0); a snapshot none of whose segments lies on stream 0 ran on no CUDA device's
default stream (``formats.snapshot.reader._vendor``).  Such a capture is told this module's words: the device, the
build's variable and module written as placeholders (``PYTORCH_<DEVICE>_ALLOC_CONF``, ``torch.<device>.``) with
what each build spells there, never one vendor's claim.  No unit, peak or generation is claimed (``devices.unread``).
"""

from __future__ import annotations

import re

from tb_gpu_advisor.devices.codes import replace_each
from tb_gpu_advisor.devices.unread import copy_direction, host_memory, never, precision_one, unknown  # noqa: F401
from tb_gpu_advisor.model.schema import Action

VENDOR = "unnamed"
#: No frame names this vendor: it is what the reader says where no frame names any and the streams rule CUDA's out.
ALLOCATOR_FRAMES = re.compile(r"(?!)")
#: What the placeholders stand for, said once beside the code that holds them.
LEGEND = ("the snapshot names no build: <DEVICE> is CUDA on NVIDIA and AMD GPUs, NPU under torch_npu (Ascend), "
          "XPU on an Intel GPU")

#: Prose true of every build: the device is a device, each vendor's library or tool named by what it does.
WORDS = (("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_<DEVICE>_ALLOC_CONF"),
         ("PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_NO_<DEVICE>_MEMORY_CACHING"),
         ("Tensor Cores", "matrix units"), ("Tensor Core", "matrix-unit"),
         ("cuDNN", "the vendor's convolution library"),
         ("cuBLASLt", "the vendor's matmul library"),
         ("cuBLAS", "the vendor's matmul library"),
         ("NCCL", "the collective library"), ("nvidia-smi", "the vendor's device tool"),
         ("CUDA cores", "vector units"), ("CUDA-core", "vector-unit"),
         ("cudaMallocHost", "the runtime's pinned allocation"), ("cudaMalloc", "the runtime's allocation"),
         ("cudaFree", "the runtime's free"), ("cudaMemcpyAsync", "an asynchronous copy"), ("cudaMemcpy", "a copy"),
         (", or torch.cuda.nvtx under Nsight Systems", ""), ("NVTX ranges, ", ""),
         ("Nsight Systems", "the vendor's system profiler"), ("Nsight Compute", "the vendor's kernel profiler"),
         ("CUPTI", "the device tracer"), ("CUDA graphs", "device graphs"), ("CUDA graph", "device graph"),
         ("CUDA sync debug mode", "sync debug mode"), ("CUDA toolkit", "vendor toolkit"),
         ("CUDA driver", "device driver"), ("driver's CUDA", "device runtime"), ("CUDA build", "build"),
         ("CUDA", "device"), ("GPUs", "devices"), ("GPU", "device"))

TERMS = {
    #: the drivers that submit launches late, in batches, and how to see which one runs (``rules.capture_quality``
    #: submission latency, h37-idle67)
    "batching_drivers": "a driver that batches them does (Windows' WDDM driver model is one, and WSL2 runs on it)",
    "driver_check": ("see whether the host runs Windows or WSL2, whose driver model batches submissions"),
    "matrix_units": "matrix units",
    "matrix_unit": "matrix-unit",
    "fp32_on_matrix_units": "already on the matrix units in fp32",
    "conv_library": "the vendor's convolution library",
    "collective_library": "the collective library",
    "graphs": "device graphs",
    "gpu_link": "the device link",
    "conv_padding": "the vendor's library chooses its kernels for the channel counts it is given",
    "tc_kernel_names": "a matrix-unit kernel of the vendor's library",
    "allocator_calls": "the runtime's malloc / free",
    "runtime": "device runtime",
    "legacy_stream": "device's NULL stream",
    #: the tracer a profiler records this runtime's calls and the GPU's work through: none named here
    "gpu_tracer": "",
    "context_creation": "the device runtime's start-up",
    "torch_build": "a PyTorch build made for the installed device runtime",
    "system_profiler": "the vendor's system profiler",
    "system_trace": "the vendor's system profiler around python train.py",
    "kernel_profiler": "the vendor's kernel profiler",
    #: a vendor no evidence names: no generation of anyone's
    "bf16_gpus": "bfloat16 only on some of them",
}



def _fixes() -> dict[str, Action]:
    """Fixes true of every build (the keys of ``nvidia.FIXES``): what to look at, each vendor's tool named by what it
    does.  No kernel of such a device is read, so only a capture of several devices could ask them."""
    node = Action(text="Look at the node itself: the devices' health, clocks, power and temperature, and other "
                       "processes on them (the vendor's device tool).")
    return {
        "topology": Action(text="Check the links between the devices and that the collective library uses them."),
        "transport": Action(text="Check which transport the collective library picked between the devices: its "
                                 "log names them."),
        "network": Action(text="Between hosts: the devices' own network ports, no TCP fallback; within a host: the "
                               "devices on their direct links."),
        "clocks": node,
        "library_blocks": Action(
            text="For a library's kernels: the library sizes each launch from the shapes it is called with, so only "
                 "the calls change it: fewer, larger calls (many small matrix products as one batched matmul)."),
        "more_blocks": Action(
            text="For a kernel of your own: launch at least one block per compute unit, sized from the data, so "
                 "every unit has work."),
    }


FIXES = _fixes()

# No build's runtime calls are named: this module defines no call list (``devices._calls`` reads a missing one as
# empty), so no name is read as a launch, a sync or a copy of the unnamed build's.

#: CUDA's device in PyTorch code -> a placeholder for the build's (:data:`LEGEND`).
_CODE = (("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_<DEVICE>_ALLOC_CONF"),
         ("PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_NO_<DEVICE>_MEMORY_CACHING"),
         ("'cuda'", "'<device>'"), ('"cuda"', '"<device>"'), ("torch.cuda.", "torch.<device>."),
         (".cuda()", ".to('<device>')"), ("CUDA", "<DEVICE>"), ("GPUs", "devices"), ("GPU", "device"))
#: The code names prose quotes as code (the rest of :data:`_CODE` is CUDA and the GPU in a snippet's comments).
_NAMED = 6
_PLACEHOLDER = re.compile(r"<(?:DEVICE|device)>")
#: A snippet that is one line of code (a shell variable set, a Python statement), not a name in prose.
_CODE_LINE = re.compile(r"\s*(?:export |unset |torch\.|import |with |\w+ = )")


def is_device(name: str | None) -> bool:
    """No device name is this vendor's: it is never read from a name."""
    return False


matrix_unit_one = gemm_kernel_one = attention_helper_one = gradient_kernel_one = never
has_matrix_units = has_tf32_on = has_bf16_on = arch_label = link_bandwidth = graph_switch_us = unknown


def words(text: str) -> str:
    """``text`` in words true of every build, the code it quotes with the build's placeholders."""
    return replace_each(replace_each(text, _CODE[:_NAMED]), WORDS)


def code(snippet: str) -> str:
    """A PyTorch snippet written for the CUDA device, with the build's placeholders, what they stand for said on a
    comment line above the code that holds one (a shell or Python line; a name quoted in prose is left one line)."""
    return placeholder_code(snippet, _CODE, LEGEND, _CODE_LINE)


def placeholder_code(snippet: str, swaps: tuple[tuple[str, str], ...], legend: str, code_line: re.Pattern) -> str:
    """``snippet`` with ``swaps``' placeholders, ``legend`` on a comment line above code that holds one (a shell or
    Python line matching ``code_line``, or several lines); a name quoted in prose is left one line: this module's
    and ``devices.unknown``'s code alike."""
    out = replace_each(snippet, swaps)
    if out == snippet or legend in out or not (_PLACEHOLDER.search(out) and ("\n" in out or code_line.match(out))):
        return out
    return f"# {legend}\n{out}"


def trace_device_action() -> Action:
    """How to record the device's own work where the build is not named: each build's profiler."""
    return Action(
        text=("Record the device's side with the profiler of the build that ran it (the snapshot names none): "
              "torch.profiler with ProfilerActivity.CUDA on NVIDIA and AMD GPUs, ProfilerActivity.XPU on an Intel "
              "GPU; on an Ascend NPU the Ascend PyTorch Profiler (torch_npu.profiler, ProfilerActivity.NPU)."),
        snippet=(f"# {LEGEND}; on an Ascend NPU use torch_npu.profiler (ProfilerActivity.NPU) with the same schedule\n"
                 "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.<DEVICE>],\n"
                 "             schedule=schedule(wait=5, warmup=2, active=10, repeat=1),\n"
                 "             on_trace_ready=tensorboard_trace_handler('LOGDIR/run1')) as prof:\n"
                 "    for step in range(17):\n"
                 "        run_one_step()\n"
                 "        prof.step()"),
        snippet_lang="python")


#: The capture advice (``report.build.capture_advice``): each build's profiler, none claimed.
OWN_PROFILER = trace_device_action
