"""A GPU whose file's only vendor word is NCCL's: NVIDIA's or AMD's, not known which.

NCCL's names are both vendors' (ROCm's PyTorch names its backend ``nccl``, RCCL keeps NCCL's kernel names:
``devices.vendor_known``), so such a GPU is no more known than :mod:`devices.unknown`'s, and its prose is that
module's: words true of every vendor's GPU, no CUDA-only library or tool (cuDNN, Nsight Systems, CUPTI).  But it is
a GPU PyTorch drives through its ``cuda`` device on both vendors' builds -- ROCm's PyTorch keeps ``torch.cuda``,
``.cuda()``, ``PYTORCH_CUDA_ALLOC_CONF`` and ``ProfilerActivity.CUDA`` -- so its code is written as PyTorch spells
it there, with no placeholder to fill in (h37-late67: a fused MI300X DDP stripped of its header was told
``torch.<device>.synchronize()``).  The reader names such a GPU :data:`GPU_NAME` (or its model with
:data:`NAME_TAIL`), which is how this vendor is read (:func:`is_device`).
"""

from __future__ import annotations

import re

from tb_gpu_advisor.devices import unknown
from tb_gpu_advisor.devices.codes import replace_each, replace_once
from tb_gpu_advisor.devices.unknown import (ALLOCATOR_FRAMES, DEVICES, FIXES, TERMS, arch_label,  # noqa: F401
                                            attention_helper_one, copy_direction, gemm_kernel_one, gradient_kernel_one,
                                            graph_switch_us, has_bf16_on, has_matrix_units, has_tf32_on, host_memory,
                                            link_bandwidth, matrix_unit_one, never, precision_one)

VENDOR = "nvidia_or_amd"
#: What a reader names such a GPU: no maker's name (``amd.is_device`` reads "AMD" in a name, ``nvidia.is_device``
#: "NVIDIA"), PyTorch's device as both builds spell it.
GPU_NAME = "cuda device of unknown vendor"
NAME_TAIL = " (a cuda device, vendor unknown)"
_NAMED = re.compile(r"\bcuda device of unknown vendor\b|\(a cuda device, vendor unknown\)$")
#: NCCL's names: the evidence that makes a GPU this vendor's where nothing else names one (``devices.vendor_known``).
COLLECTIVE_WORDS = re.compile(r"^nccl", re.IGNORECASE)

#: PyTorch's names of its ``cuda`` device, the same on NVIDIA's and ROCm's builds: kept as they are in code and prose.
_PYTORCH_CUDA = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NO_CUDA_MEMORY_CACHING", "ProfilerActivity.CUDA")
#: Prose true of either vendor's GPU (:mod:`devices.unknown`'s, less its placeholders for PyTorch's device names).
WORDS = tuple((a, b) for a, b in unknown.WORDS if a not in _PYTORCH_CUDA)
#: NVIDIA's range tool named beside PyTorch's own ranges: left out, as for a GPU of unknown vendor.
_NVTX = ((", or torch.cuda.nvtx under Nsight Systems", ""), ("NVTX ranges, ", ""))


def is_device(name: str | None) -> bool:
    """A GPU its reader named as NVIDIA's or AMD's, not known which (:data:`GPU_NAME`, :data:`NAME_TAIL`)."""
    return bool(name) and bool(_NAMED.search(name or ""))


def _kept(text: str, pairs: tuple[tuple[str, str], ...]) -> str:
    """``text`` with ``pairs`` replaced, PyTorch's names of its ``cuda`` device (:data:`_PYTORCH_CUDA`) left whole."""
    marks = tuple((name, f"\x00{i}\x00") for i, name in enumerate(_PYTORCH_CUDA))
    out = replace_each(replace_each(text, marks), pairs)
    return replace_each(out, tuple((m, name) for name, m in marks))


def words(text: str) -> str:
    """``text`` in words true of NVIDIA's and AMD's GPUs, PyTorch's ``cuda`` device as PyTorch names it on both."""
    return _kept(replace_each(text, _NVTX), WORDS)


def code(snippet: str) -> str:
    """A PyTorch snippet written for the CUDA device as it stands: PyTorch's device is ``cuda`` on both builds (its
    ``torch.cuda.CUDAGraph`` and ``CUDA_VISIBLE_DEVICES`` too); a framework's CUDA device object as each GPU build's
    (``unknown.DEVICES``: JAX's ``CudaDevice`` is ``RocmDevice`` on ROCm)."""
    return replace_once(snippet, DEVICES)
