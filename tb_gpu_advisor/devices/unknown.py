"""A GPU of no known vendor: a trace whose GPU did work but that shows nobody's -- no device name a vendor claims
(no ``deviceProperties``, or a model no table here knows), no runtime call of a known runtime, no kernel only one
vendor's software names, no header key of a vendor's build, no vendor's collective library.

Such a GPU was read as NVIDIA's, the profilers' default, and told CUDA, Tensor Cores, ``nsys`` and NCCL (h37-words63's
*Left* 4; h37-vendor64).  Its report speaks words true of every vendor's GPU -- the GPU stays a GPU, each vendor's
library or tool is named by what it does ("the vendor's system profiler", "matrix units", "the collective library") --
and PyTorch's device API is written as a placeholder with what each build spells there.  No unit, peak or generation
is claimed (``devices.unread``): the GPU's model is not known.  The reader names such a GPU :data:`GPU_NAME` (or its
model with :data:`NAME_TAIL`), which is how this vendor is read (:func:`is_device`).
"""

from __future__ import annotations

import re

from tb_gpu_advisor.devices import unnamed
from tb_gpu_advisor.devices.codes import replace_each, replace_once
from tb_gpu_advisor.devices.unread import copy_direction, host_memory, never, precision_one, unknown  # noqa: F401
from tb_gpu_advisor.model.schema import Action

VENDOR = "unknown"
#: What a reader names a GPU whose vendor nothing in the file shows, and what it appends to a model name no vendor's
#: table claims (``MTT S4000`` -> ``MTT S4000 (vendor unknown)``).
GPU_NAME = "GPU of unknown vendor"
NAME_TAIL = " (vendor unknown)"
_NAMED = re.compile(r"\bGPU of unknown vendor\b|\(vendor unknown\)$")
#: No frame of a snapshot names this vendor (a snapshot names its build, or :mod:`devices.unnamed`).
ALLOCATOR_FRAMES = re.compile(r"(?!)")
#: What the placeholders stand for, said once beside the code that holds them.
LEGEND = ("the capture names no GPU vendor: <device> is cuda on NVIDIA and AMD GPUs, xpu on an Intel GPU, your "
          "build's own device name elsewhere")

#: Prose true of every vendor's GPU: the GPU stays a GPU; a library, tool or unit of one vendor's is named by what it
#: does (:mod:`devices.unnamed`'s words, less its "device" for the GPU -- a snapshot may be an NPU's, this is a GPU's).
WORDS = tuple((a, b) for a, b in unnamed.WORDS if a not in ("GPUs", "GPU")) + (
    ("thread blocks", "workgroups"), ("thread block", "workgroup"), ("SMs", "compute units"))

#: How such a GPU's user names things (the keys of ``nvidia.TERMS``): nobody's product.
TERMS = dict(unnamed.TERMS, torch_build="a PyTorch build made for the installed GPU runtime",
             context_creation="the GPU runtime's start-up", runtime="GPU runtime", graphs="GPU graphs",
             gpu_link="the GPUs' link", bf16_gpus="bfloat16 only on some of them")

FIXES = {k: Action(text=replace_each(a.text, (("devices", "GPUs"), ("device", "GPU"))), snippet=a.snippet,
                   snippet_lang=a.snippet_lang) for k, a in unnamed.FIXES.items()}

# No runtime's calls are named: this module defines no call list (``devices._calls`` reads a missing one as empty), so
# no name is read as a launch, a sync or a copy of this vendor's.

#: CUDA's device in PyTorch code -> a placeholder for the build's (:data:`LEGEND`); the GPU stays a GPU.
_CODE = (("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_<DEVICE>_ALLOC_CONF"),
         ("PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_NO_<DEVICE>_MEMORY_CACHING"),
         ("ProfilerActivity.CUDA", "ProfilerActivity.<DEVICE>"),
         ("'cuda'", "'<device>'"), ('"cuda"', '"<device>"'), ("torch.cuda.", "torch.<device>."),
         (".cuda()", ".to('<device>')"), ("CUDA", "<DEVICE>"))
#: The code names prose quotes as code (the rest of :data:`_CODE` is CUDA in a snippet's comments).
_QUOTED = 7
_CODE_LINE = re.compile(r"\s*(?:export |unset |torch\.|import |with |\w+ = |from )")


def is_device(name: str | None) -> bool:
    """A GPU its reader named as of no known vendor (:data:`GPU_NAME`, :data:`NAME_TAIL`)."""
    return bool(name) and bool(_NAMED.search(name or ""))


matrix_unit_one = gemm_kernel_one = attention_helper_one = gradient_kernel_one = never
has_matrix_units = has_tf32_on = has_bf16_on = arch_label = link_bandwidth = graph_switch_us = unknown


#: NVIDIA's range tool, named beside PyTorch's own ranges: left out before the code's placeholders hide its name.
_NVTX = ((", or torch.cuda.nvtx under Nsight Systems", ""), ("NVTX ranges, ", ""))


def words(text: str) -> str:
    """``text`` in words true of every vendor's GPU, the code it quotes with the build's placeholders."""
    return replace_each(replace_each(replace_each(text, _NVTX), _CODE[:_QUOTED]), WORDS)


#: The device objects a framework prints for a CUDA GPU -> each GPU build's (JAX's ``CudaDevice`` is ``RocmDevice`` on
#: ROCm: ``amd.DEVICES``): a JAX window on a GPU nothing names was told to look for ``CudaDevice`` (h37-vendor66).
DEVICES = (("CudaDevice(id=0)", "a GPU device (CudaDevice(id=0), RocmDevice(id=0), ...)"),
           ("CudaDevice", "a GPU device (CudaDevice, RocmDevice, ...)"))


def code(snippet: str) -> str:
    """A PyTorch snippet written for the CUDA device, with the build's placeholders, what they stand for said on a
    comment line above the code that holds one (a shell or Python line; a name quoted in prose is left one line); a
    framework's CUDA device object as each GPU build's (:data:`DEVICES`)."""
    return unnamed.placeholder_code(replace_once(snippet, DEVICES), _CODE, LEGEND, _CODE_LINE)
