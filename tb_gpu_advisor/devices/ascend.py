"""Huawei Ascend NPUs (PyTorch's ``npu`` device through the ``torch_npu`` plug-in, CANN underneath): their words.

``torch_npu`` adds an ``npu`` device to PyTorch and keeps CUDA's Python API under ``torch.npu`` (``torch.npu.
empty_cache``, ``torch.npu.memory._record_memory_history`` / ``_dump_snapshot``, ``torch.autocast("npu")``).  Its
caching allocator is ``c10_npu::NPUCachingAllocator`` (``torch_npu/csrc/core/npu/NPUCachingAllocator.cpp``), read
from ``PYTORCH_NPU_ALLOC_CONF`` (``max_split_size_mb``, ``garbage_collection_threshold``, ``expandable_segments``:
Ascend's environment-variable reference for CANN 8.0 and Ascend Extension for PyTorch 6.0/7.x) -- never
``PYTORCH_CUDA_ALLOC_CONF``, which it does not read.  What reaches the Advisor from such a job is a memory
snapshot: the same layout as PyTorch's, its stacks through the ``torch_npu`` package (codeasier/MemSnapDump's
``segment_free`` frames, ``torch_npu/npu/memory.py: empty_cache``) or the NPU allocator's C++ frames.  The Ascend
PyTorch Profiler's traces (``trace_view.json``) are named apart by the Kineto reader and not analysed
(``formats.kineto.layout.ASCEND_TRACE``), so no kernel or runtime call of an NPU is read here: every call list is empty.

No unit, peak or generation of an NPU is claimed: the matrix units (Cube units) and their kernels' names are not
read, so the Tensor Core rules neither count a kernel on them nor off them.
"""

from __future__ import annotations

import re

from tb_gpu_advisor.devices.unread import (copy_direction, host_memory, never, precision_one,  # noqa: F401
                                           speech, unknown)
from tb_gpu_advisor.model.schema import Action

VENDOR = "Huawei"
#: What ``torch_npu`` names in the frames a memory snapshot records: its caching allocator's C++ frames
#: (``c10_npu::NPUCachingAllocator``), or any Python frame in the ``torch_npu`` package itself (its ``torch.npu`` API:
#: ``torch_npu/npu/memory.py`` under ``torch.npu.empty_cache()``) -- a package that imports on an Ascend NPU's CANN
#: only, so a stack through it was recorded on one.
ALLOCATOR_FRAMES = re.compile(r"\bc10_npu::|NPUCachingAllocator|(?:^|[/\\])torch_npu[/\\]")
#: Device names of Ascend NPUs as ``torch.npu.get_device_name`` gives them (``Ascend910B1``, ``Ascend310P3``).
_DEVICE = re.compile(r"^Ascend\s?\d", re.IGNORECASE)

#: Ascend's words for NVIDIA's, in prose (code goes through :func:`code`).  The device is an NPU: "GPU" is no word of
#: it.  Only what ``torch_npu`` and CANN are known to have is named (HCCL, ``npu-smi``, ``PYTORCH_NPU_ALLOC_CONF``,
#: the Ascend PyTorch Profiler); where NVIDIA's tool has no known counterpart the words say what records it instead.
WORDS = (("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NPU_ALLOC_CONF"),
         ("PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_NO_NPU_MEMORY_CACHING"),
         ("Tensor Cores", "Cube units"), ("Tensor Core", "Cube-unit"), ("cuDNN", "CANN's operators"),
         ("cuBLASLt", "CANN's matmul operators"), ("cuBLAS", "CANN's matmul operators"), ("NCCL", "HCCL"),
         ("nvidia-smi", "npu-smi"), ("CUDA cores", "Vector units"), ("CUDA-core", "Vector-unit"),
         ("thread blocks", "blocks"), ("thread block", "block"), ("SMs", "AI Cores"),
         ("cudaMallocHost", "aclrtMallocHost"), ("cudaMalloc", "aclrtMalloc"), ("cudaFree", "aclrtFree"),
         ("cudaMemcpyAsync", "aclrtMemcpyAsync"), ("cudaMemcpy", "aclrtMemcpy"),
         (", or torch.cuda.nvtx under Nsight Systems", ""), ("NVTX ranges, ", ""),
         ("Nsight Systems", "the Ascend PyTorch Profiler (torch_npu.profiler)"),
         ("Nsight Compute", "msprof op"), ("CUPTI", "the Ascend profiler"),
         ("CUDA graphs", "NPU graphs"), ("CUDA graph", "NPU graph"), ("CUDA sync debug mode", "NPU's synchronizations"),
         ("CUDA toolkit", "CANN toolkit"), ("CUDA driver", "Ascend driver"), ("driver's CUDA", "CANN"),
         ("CUDA build", "torch_npu build"), ("CUDA", "NPU"), ("GPUs", "NPUs"), ("GPU", "NPU"))

#: How Ascend users name things (the keys of ``nvidia.TERMS``).
TERMS = {
    #: the drivers that submit launches late, in batches, and how to see which one runs (``rules.capture_quality``
    #: submission latency, h37-idle67)
    "batching_drivers": "a driver that batches task submission does",
    "driver_check": "see whether a virtualisation layer or the host's driver batches submissions",
    "matrix_units": "Cube units",
    "matrix_unit": "Cube-unit",
    "fp32_on_matrix_units": "already on the Cube units in fp32",
    "conv_library": "CANN's operators",
    "collective_library": "HCCL",
    "graphs": "NPU graphs",
    "gpu_link": "HCCS",
    "conv_padding": "CANN chooses its operators for the channel counts it is given",
    "tc_kernel_names": "a Cube-unit operator of CANN (MatMul, Conv2D)",
    "allocator_calls": "aclrtMalloc / aclrtFree",
    "runtime": "CANN runtime",
    "legacy_stream": "NPU's NULL stream",
    #: the tracer a profiler records this runtime's calls and the GPU's work through: none named here
    "gpu_tracer": "",
    "context_creation": "the CANN runtime's start-up",
    "torch_build": "a torch_npu build made for the installed CANN",
    "system_profiler": "the Ascend PyTorch Profiler (torch_npu.profiler)",
    "system_trace": "msprof --application=\"python train.py\"",
    "kernel_profiler": "msprof op",
    #: no fact here of which Ascend NPUs multiply bf16: said of none in particular
    "bf16_gpus": "bfloat16 only on some of them",
}


def _fixes() -> dict[str, Action]:
    """Ascend's own fixes (the keys of ``nvidia.FIXES``)."""
    smi = Action(text="Look at the node itself: the NPUs' health, clocks, power and temperature, and other processes "
                      "on them.", snippet="npu-smi info", snippet_lang="shell")
    return {
        "topology": Action(text="Check the links between the NPUs (HCCS vs PCIe) and that HCCL uses them.",
                           snippet="npu-smi info", snippet_lang="shell"),
        "transport": Action(text="Check which transport HCCL picked between the NPUs: its log names them."),
        "network": Action(text="Between hosts: HCCL over the NPUs' own RoCE ports, no TCP fallback; within a host: "
                               "the NPUs on HCCS."),
        "clocks": smi,
        "library_blocks": Action(
            text="For a library's operators (CANN's MatMul, Conv2D): the library tiles each call from the shapes it "
                 "is called with, so only the calls change it: fewer, larger calls (many small matrix products as "
                 "one batched matmul)."),
        "more_blocks": Action(
            text="For an operator of your own (Ascend C): launch at least one block per AI Core, sized from the "
                 "data, so every core has work."),
    }


FIXES = _fixes()

# No call of CANN's runtime is read here (an NPU's traces are not analysed): this module defines no call list
# (``devices._calls`` reads a missing one as empty), so no name is read as an NPU's launch, sync or copy.

#: CUDA's device in PyTorch code -> torch_npu's (``torch.npu.empty_cache()``, ``device='npu'``, its allocator's
#: variables, CANN's environment: ``ASCEND_RT_VISIBLE_DEVICES``, ``ASCEND_LAUNCH_BLOCKING``).  ``torch.npu`` exists
#: once ``import torch_npu`` ran, as every such program does.  Then the device in a snippet's comments: an NPU.
_CODE = (("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NPU_ALLOC_CONF"),
         ("PYTORCH_NO_CUDA_MEMORY_CACHING", "PYTORCH_NO_NPU_MEMORY_CACHING"),
         ("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES"), ("CUDA_LAUNCH_BLOCKING", "ASCEND_LAUNCH_BLOCKING"),
         ("'cuda'", "'npu'"), ('"cuda"', '"npu"'), ("torch.cuda.", "torch.npu."), (".cuda()", ".npu()"),
         ("CUDA", "NPU"), ("GPUs", "NPUs"), ("GPU", "NPU"))


def is_device(name: str | None) -> bool:
    """An Ascend NPU's name as ``torch_npu`` reports it (``Ascend910B1``)."""
    return bool(name) and bool(_DEVICE.search(name or ""))


matrix_unit_one = gemm_kernel_one = attention_helper_one = gradient_kernel_one = never
has_matrix_units = has_tf32_on = has_bf16_on = arch_label = link_bandwidth = graph_switch_us = unknown


#: ``text`` in Ascend's words with the code it quotes for its device; a CUDA snippet for its device.
words, code = speech(_CODE, WORDS)


def trace_npu_action() -> Action:
    """How to record an NPU's own work: the Ascend PyTorch Profiler, not torch.profiler's CUDA activity (which an NPU
    has none of); what it writes is read with Ascend's tools (``formats.kineto.layout.ASCEND_TRACE``)."""
    return Action(
        text=("Record the NPU's side with the Ascend PyTorch Profiler (torch_npu.profiler, the same schedule as "
              "torch.profiler's) and read what it writes (`*_ascend_pt/ASCEND_PROFILER_OUTPUT`) with Ascend's own "
              "tools (MindStudio Insight, msprof-analyze): torch.profiler records no NPU activity, and the Advisor "
              "does not analyse an NPU's traces; a memory snapshot (torch.npu.memory._dump_snapshot) it reads."),
        snippet=("import torch_npu\n"
                 "with torch_npu.profiler.profile(\n"
                 "        activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],\n"
                 "        schedule=torch_npu.profiler.schedule(wait=5, warmup=2, active=10, repeat=1),\n"
                 "        on_trace_ready=torch_npu.profiler.tensorboard_trace_handler('LOGDIR/run1')) as prof:\n"
                 "    for step in range(17):\n"
                 "        run_one_step()\n"
                 "        prof.step()"),
        snippet_lang="python")


#: The vendor's own profiler, for a capture whose device torch.profiler does not record (``report.build.capture_advice``).
OWN_PROFILER = trace_npu_action
