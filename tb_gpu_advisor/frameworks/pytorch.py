"""PyTorch (``torch.profiler`` / Kineto traces): how its traces look and how its users fix things.

Names as seen in the real PyTorch 2.11 H100 traces (``../shared/profiles/real-h100-torch``): the
main thread's ``ProfilerStep#N`` annotations mark steps; ATen ops (``aten::addmm``) wrap the CUDA
runtime calls (``cudaLaunchKernel``, ``cuLaunchKernelEx``, ``cudaMemcpyAsync``) that launch the device
work; the DataLoader shows as ``enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__``
(``_MultiProcessingDataLoaderIter`` with workers).  Only public PyTorch APIs appear in the fixes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any
from dataclasses import dataclass

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.devices.collectives import MAX_RANKS
from tb_gpu_advisor.frameworks import tensorflow
from tb_gpu_advisor.frameworks.base import (OPTIMIZER_KERNEL, WITHOUT_LINE, Framework, Noted, Spelled, action, job_loop, names_batch, never,
                                            refilled, words)
from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.model.schema import Action

#: The consumer side of a DataLoader: the training loop blocks here until the next batch is ready.
_DATALOADER = ("enumerate(DataLoader)#", "DataLoader.__next__")
#: The ``record_function`` scopes PyTorch opens itself around its own code (the DataLoader's ``__next__``, the
#: optimizer's ``step`` / ``zero_grad``, the profiler's ``ProfilerStep#N``, a compiled region and its guards): under
#: ``emit_nvtx`` they come as ``enumerate(DataLoader)#..., op_id = N``, suffixed like a user's ``record_function``
#: -- the framework's, not the program's.
_OWN_SCOPES = _DATALOADER + ("Optimizer.", "ProfilerStep#", "Torch-Compiled Region", "TorchDynamo Cache Lookup",
                             "CompiledFunction", "DistributedDataParallel.", "FullyShardedDataParallel.")


#: NVIDIA's forward-hook marker (``PytHooks.module_fwd_pre_hook``, on every module of the model: SGLang's
#: ``--enable-layerwise-nvtx-marker``, vLLM's ``--enable-layerwise-nvtx-tracing``, TensorRT-LLM's
#: ``LayerwiseNvtxMarker``) pushes the ``str()`` of a dict whose first key is ``Module``, the module's dotted name
#: (``{'Module': 'model.layers.0.mlp', 'Inputs': [[8, 4096]]}``); its other keys hold the call's shapes, so each
#: row's text is nearly unique and the module name is what repeats.
_MODULE_HOOK = re.compile(r"""^\{\s*['"]Module['"]\s*:\s*['"]([^'"]+)['"]""")


def module_hook_name(text: str) -> str | None:
    """The module a forward-hook marker range names (:data:`_MODULE_HOOK`): ``model`` -- the whole model's forward,
    one per pass (an engine step's) -- ``model.layers.0`` ..., nested as the modules are; None for any other text."""
    m = _MODULE_HOOK.match(text)
    return m.group(1) if m is not None else None


#: NVTX ranges a library of PyTorch's ecosystem writes around its own code, by the names its writer gives them:
#:
#: * Megatron-core (``--nvtx-ranges``: ``megatron/core/utils.py``, ``nvtx_range_push`` and ``nvtx_decorator`` without a
#:   message) names a range after its caller, ``<module.__name__>.<function>[.<suffix>]``:
#:   ``megatron.core.transformer.transformer_layer._forward_attention.self_attention``, pushed once a layer; NeMo's
#:   and Transformer Engine's modules are named by the same rule where they call it.  In the forward only
#:   (NVIDIA/Megatron-LM @d98e8a64, ``transformer_layer.py``: ``self_attention``, ``self_attn_bda``, ``mlp``,
#:   ``mlp_bda``; the backward runs under autograd, no range), and without pipelining none around an iteration
#:   (``forward_backward_no_pipelining`` pushes none; ``training.py`` turns them on at ``--profile-step-start``): its
#:   iterations are the runs of those ranges a backward separates (``steps.forward_runs``);
#: * Megatron-FSDP (``megatron_fsdp/experimental/module.py``, ``_nvtx_label``): ``MFSDP <module> forward|backward``;
#: * Lightning (``profilers/pytorch.py``): ``record_function("[pl][profile]" + action)`` around its loop's actions and
#:   ``[pl][module]<module class path>: <name>`` around each module's forward.
#:
#: A message a program passes itself (Megatron's ``nvtx_range_push("get_data")`` in an example's ``train.py``) is no
#: module path: it stays the program's.
_FRAMEWORK_PACKAGES = ("megatron", "nemo", "transformer_engine", "lightning", "pytorch_lightning")
_FRAMEWORK_RANGE = re.compile(r"^(?:%s)(?:\.\w+){2,}$|^MFSDP .+ (?:forward|backward)$|^\[pl\]\[" %
                              "|".join(_FRAMEWORK_PACKAGES))
#: torch.compile's own ranges around the code it generated: Inductor's ``## Call CompiledFxGraph <hash> ##`` around
#: each compiled graph's call and AOTAutograd's ``AOTDispatcher Runtime Wrapper Prologue`` / ``Epilogue`` -- the
#: compiled model's structure, named by a content hash, never a region the user named (h37-survey37's SD 3.5
#: capture named Inductor's call "the program's own range") -- and the phases Dynamo times itself
#: (``torch._dynamo.utils.dynamo_timed`` records ``<phase> (dynamo_timed)``: ``CUDAGraphNode.record (dynamo_timed)``).
_COMPILED_CALLS = ("## Call CompiledFxGraph", "AOTDispatcher ")
_COMPILE_TIMED = " (dynamo_timed)"


#: DeepSpeed's ``instrument_w_nvtx`` (``deepspeed/utils/nvtx.py``) pushes the decorated function's ``__qualname__``
#: around its engine's and ZeRO's own calls: ``DeepSpeedEngine.forward`` / ``.backward`` / ``.allreduce_gradients``,
#: ``DeepSpeedZeroOptimizer_Stage3.step`` (and its subclasses' ``SuperOffloadOptimizer_Stage3.step``,
#: ``MiCS_Optimizer.allreduce_mics_shard_grads``), ``DeepSpeedZeRoOffload.partition_all_parameters``,
#: ``PartitionedParameterCoordinator.fetch_sub_module`` once a layer, the all-gather handles' ``wait``.  A qualname is
#: ``<class>.<method>`` (``<locals>`` between them for a nested hook): the class says whose code it is; its
#: functions without a class carry their own names (:data:`_DEEPSPEED_FUNCTIONS`).  A user's own ``Trainer.step``
#: names no DeepSpeed class: it stays the user's.
_DEEPSPEED_CLASSES = (r"(?:DeepSpeed\w*|\w+_Stage3|MiCS_\w+|PartitionedParameterCoordinator|"
                      r"(?:NoGather|AllGather|AllReduce)\w*Handle)\.[\w.<>]+")
#: The ``__qualname__`` DeepSpeed's ``instrument_w_nvtx`` pushes for its decorated functions that belong to no class
#: of its own (deepspeedai/DeepSpeed @edaa7221, every ``@instrument_w_nvtx`` / ``instrument_w_nvtx(f)`` under
#: ``deepspeed/``): ``runtime/comm/coalesced_collectives.py``'s module functions and the ``deepspeed.comm`` calls it
#: wraps (``reduce_scatter_fn``, ``allgather_fn``), ``runtime/zero/partitioned_param_coordinator.py``'s,
#: ``partition_parameters.py``'s (``free_param``; ``all_gather_coalesced``, nested in ``Init``'s
#: ``_convert_to_deepspeed_param``), ``zero/utils.py``'s rank checks, ZenFlow's stage-3 functions
#: (``runtime/zenflow/engine_stage3.py``).  Left out, by design: its wrapped ``torch.cat`` (``cat``) and ZenFlow's
#: ``step`` -- a program's own range may bear those names, and only DeepSpeed's NVTX domain
#: (:data:`FRAMEWORK_RANGE_DOMAINS`) tells them apart.
_DEEPSPEED_FUNCTIONS = ("reduce_scatter_coalesced", "all_to_all_quant_reduce", "all_to_all_loco_quant_reduce",
                        "reduce_scatter_fn", "allgather_fn", "update_recompute_parameters", "get_all_parameters",
                        "free_param", "Init._convert_to_deepspeed_param.<locals>.all_gather_coalesced",
                        "assert_ints_same_as_other_ranks", "assert_lst_len_same_as_other_ranks", "partition_grads",
                        "unscale_and_clip_grads")
_DEEPSPEED_RANGE = re.compile(rf"^(?:{_DEEPSPEED_CLASSES}|{'|'.join(map(re.escape, _DEEPSPEED_FUNCTIONS))})$")
#: NVTX domains a training library pushes its own ranges in (``nvtxDomainCreate``): DeepSpeed's ``DeepSpeed``
#: (``deepspeed/utils/nvtx.py`` where the ``nvtx`` package is installed), around its own calls -- not ops, not the
#: user's blocks, and no communication library's.
FRAMEWORK_RANGE_DOMAINS = {"DeepSpeed": "DeepSpeed"}
#: Who writes a framework range, by its name (:func:`framework_range_writer`): the words that say it is not the user's.
#: PyTorch's data-parallel wrappers record their own hooks (``record_function``, NVTX under ``emit_nvtx``): FSDP2's
#: ``FSDP::pre_forward (<module>)`` / ``FSDP::post_backward`` (``torch/distributed/fsdp/_fully_shard/_fsdp_state.py``,
#: ``_fsdp_param_group.py``), FSDP1's ``FullyShardedDataParallel._pre_forward`` (``fsdp/_runtime_utils.py``), DDP's
#: ``DistributedDataParallel.forward`` (``nn/parallel/distributed.py``) -- the library's structure, not the user's.
#: Megatron-LM's reinforcement-learning trainer (GRPO, ``megatron/rl/rl_utils.py`` and ``sequence_packing_utils.py``
#: @d98e8a64, ``get_nvtx_range()``'s ``nvtx_range("rl/...")``, pushed under ``--nvtx-ranges``): its loop's phases,
#: every one run from ``training.py``'s ``train()`` (``rl_utils.get_grpo_data_iterator``) -- the rollouts it generates
#: (``rl/rollout-collection``, ``rl/collect-rollouts``), the log-probabilities of the policy and its reference
#: (``rl/compute-logprobs``, ``rl/compute-ref-logprobs``), the data it prepares for the policy's update
#: (``rl/prepare-data-for-update``), its optimizer moved off the GPU while it generates.  Only a training job pushes
#: them: a policy trained on its own generations.
MEGATRON_RL_RANGES = frozenset({
    "rl/align-inference-logprobs", "rl/collect-rollouts", "rl/compute-group-stats", "rl/compute-logprobs",
    "rl/compute-old-logprobs", "rl/compute-ref-logprobs", "rl/create-dataloader", "rl/forward-pass",
    "rl/get-logprobs", "rl/get-ltor-masks", "rl/inference-setup", "rl/log-softmax",
    "rl/offload-optimizer-before-inference", "rl/offload/grad-buffers", "rl/offload/optimizer-state",
    "rl/pack-logprobs", "rl/pack-sequences", "rl/prefetch-weights-to-gpu", "rl/prepare-data-for-update",
    "rl/prepare-trajectories", "rl/regather-trajectories", "rl/restore-optimizer-after-inference",
    "rl/restore/grad-buffers", "rl/restore/optimizer-state", "rl/rollout-collection", "rl/sequence-packing",
    "rl/suspend-engine", "rl/sync-request-ledger", "rl/sync-rollout-state", "rl/synchronize-cuda-and-collect-garbage"})


def is_rl_training_range(name: str) -> bool:
    """One of Megatron-LM's RL trainer's own ranges (:data:`MEGATRON_RL_RANGES`): the job trains a policy."""
    return name in MEGATRON_RL_RANGES


_RANGE_WRITERS = ((_DEEPSPEED_RANGE, "DeepSpeed"), (re.compile(r"^(?:megatron\.|MFSDP )"), "Megatron-core"),
                  (re.compile(f"^(?:{'|'.join(map(re.escape, sorted(MEGATRON_RL_RANGES)))})$"), "Megatron-LM's RL trainer"),
                  (re.compile(r"^(?:FSDP::|FullyShardedDataParallel\.)"), "FSDP"),
                  (re.compile(r"^DistributedDataParallel\."), "DDP"),
                  (re.compile(r"^nemo\."), "NeMo"), (re.compile(r"^transformer_engine\."), "Transformer Engine"),
                  (re.compile(r"^(?:lightning\.|pytorch_lightning\.|\[pl\]\[)"), "Lightning"))


def is_framework_range(name: str) -> bool:
    """An NVTX range (or ``record_function``) a library of PyTorch's ecosystem writes around its own code, by the names
    its writer gives them (:data:`_FRAMEWORK_RANGE`, :data:`_DEEPSPEED_RANGE`, :data:`_COMPILED_CALLS`): the
    framework's structure (a layer, a module, its loop's actions, its engine's calls, a compiled graph's call), never a
    region the user named."""
    return (bool(_FRAMEWORK_RANGE.match(name)) or bool(_DEEPSPEED_RANGE.match(name)) or name.startswith(_COMPILED_CALLS)
            or name.endswith(_COMPILE_TIMED))


#: DeepSpeed's ZeRO optimizer's ``step`` (``DeepSpeedZeroOptimizer_Stage3.step``, its subclasses'
#: ``SuperOffloadOptimizer_Stage3.step``, ``MiCS_Optimizer.step``): once an iteration, after all of its micro-batches'
#: ``DeepSpeedEngine.forward`` / ``backward`` -- which repeat ``gradient_accumulation_steps`` times an iteration.
_DEEPSPEED_STEP_END = re.compile(r"^\w*(?:Optimizer|_Stage3)\w*\.step$")


def is_framework_step_end(name: str) -> bool:
    """A framework's own range that closes each training iteration (:data:`_DEEPSPEED_STEP_END`): the iteration runs
    from the end of one to the end of the next.  Why: its engine's ``forward`` is the most repeated of its ranges,
    once a micro-batch -- a step read from it is a micro-batch, not the iteration (h37-nvtx22)."""
    return bool(_DEEPSPEED_RANGE.match(name)) and bool(_DEEPSPEED_STEP_END.match(name))


#: DeepSpeed's engine ``forward`` (``runtime/engine.py``, ``@instrument_w_nvtx``): once a micro-batch, whatever the
#: ZeRO stage.  Under ZeRO-1/2 no range of DeepSpeed's closes an iteration: ``DeepSpeedEngine.step`` is not decorated
#: and runs the optimizer's update (``_take_model_step``) only where ``is_gradient_accumulation_boundary()`` -- every
#: ``gradient_accumulation_steps``-th micro-batch -- outside every range of its own (deepspeedai/DeepSpeed @edaa7221).
_DEEPSPEED_MICRO_BATCH = "DeepSpeedEngine.forward"


def is_framework_micro_batch(name: str) -> bool:
    """A framework's own range once a micro-batch (:data:`_DEEPSPEED_MICRO_BATCH`): where none of its ranges closes an
    iteration (:func:`is_framework_step_end`), the GPU work it launches outside its ranges after every k-th of them --
    the update at the accumulation boundary -- does.  Why: read alone it is a micro-batch, not the iteration."""
    return name == _DEEPSPEED_MICRO_BATCH


def framework_range_writer(name: str, domain: str = "") -> str:
    """The library that wrote a framework range (:func:`is_framework_range`, or one in its NVTX ``domain``), as the
    report names it (``DeepSpeed``); "torch.compile" for a compiled graph's; "" where ``name`` is none of theirs.
    Why: a finding that reads a library's ranges must say whose they are -- "the user's NVTX ranges" of a DeepSpeed
    job's ``DeepSpeedEngine.backward`` told the user about code they never wrote."""
    if domain in FRAMEWORK_RANGE_DOMAINS:
        return FRAMEWORK_RANGE_DOMAINS[domain]
    writer = next((w for rx, w in _RANGE_WRITERS if rx.match(name)), "")
    return writer or ("torch.compile" if is_framework_range(name) else "")


#: An op's name as the profiler records it: a namespaced ATen or library op (``aten::mm``, ``prim::``, ``c10d::``,
#: ``torch::autograd::AccumulateGrad``) or an autograd node (``AddmmBackward``, ``AddmmBackward0``).
_OP_NAME = re.compile(r"^\w+::|^\w+Backward\d*$")


def is_scope_name(name: str) -> bool:
    """A ``record_function`` scope's name, not an op's (:data:`_OP_NAME`): PyTorch's own scopes
    (:data:`_OWN_SCOPES`) and the program's ``record_function("train_step")``.  Why: before 1.11 the profiler wrote
    each scope as an op of its own (category ``Operator``, 1.10's ``cpu_op``), where 1.11 on writes it as a
    ``user_annotation``; its name is what still tells it apart (``wild-torch/resnet50_*``, PyTorch 1.8.1:
    ``ProfilerStep#5``, ``Optimizer.step#SGD.step``, ``enumerate(DataLoader)#...``)."""
    return is_own_scope(name) or not _OP_NAME.match(name)


def is_own_scope(name: str) -> bool:
    """A ``record_function`` scope PyTorch opens around its own code (:data:`_OWN_SCOPES`), never the user's block."""
    return name.startswith(_OWN_SCOPES)


#: PyTorch's caching allocator's segment sizes (c10/cuda/CUDACachingAllocator.cpp, hipified alike for ROCm): a request
#: up to 1 MiB (kSmallSize) is served from 2 MiB segments (kSmallBuffer); a larger one under 10 MiB (kMinLargeAlloc)
#: opens a 20 MiB segment (kLargeBuffer); from 10 MiB on, a segment of its own size rounded up to 2 MiB (kRoundLarge).
#: Expandable segments map pages of the same sizes (2 MiB small, 20 MiB large).
SMALL_REQUEST = 1 << 20
SMALL_SEGMENT = 2 << 20
LARGE_REQUEST = 10 << 20
LARGE_SEGMENT = 20 << 20
SEGMENT_ROUND = 2 << 20


def _round_up(n: int, to: int) -> int:
    return -(-n // to) * to


def least_reserve(sizes: np.ndarray, largest_request: int) -> int:
    """The least bytes the caching allocator reserves from the driver to hold blocks of ``sizes`` at once.

    Why: the allocator never reserves less than its segment sizes allow, so the reserve beside a small program's peak
    is its rounding, not split blocks (sungdk0822's CS336 attention sweep, d=16 at 256 tokens: a 14.8 MiB peak in 22
    MiB reserved -- one 20 MiB segment for its 2 MiB tensors, one 2 MiB for its small ones -- read as 7 MiB of
    fragmentation; h37-snapleft).  Small blocks fill 2 MiB segments; large ones at least their bytes rounded to 2 MiB,
    in segments of 10 MiB or more -- 20 MiB where no request of 10 MiB or more (``largest_request``) opened a
    smaller one.  A lower bound: how the blocks pack into segments may take more, and that more is the gap judged."""
    small = sizes[sizes <= SMALL_REQUEST]
    large = sizes[sizes > SMALL_REQUEST]
    out = _round_up(int(small.sum()), SMALL_SEGMENT)
    if large.size:
        least_segment = LARGE_SEGMENT if largest_request < LARGE_REQUEST else LARGE_REQUEST
        out += max(_round_up(int(large.sum()), SEGMENT_ROUND), least_segment)
    return out


def driver_ask(request: int, expandable: bool) -> tuple[int, int]:
    """(the most bytes the caching allocator asks the driver for at once to serve ``request`` when no cached block
    fits, the unit the driver's memory serves requests in).  Fixed segments: the request's own segment (2 MiB up to
    1 MiB, 20 MiB under 10 MiB, else its bytes rounded up to 2 MiB); expandable segments: its bytes rounded up to
    pages (a free block already at the range's end asks fewer).  The unit: what one ask takes whole -- a page on
    expandable segments (2 MiB for a small request, 20 MiB for a large one), a fixed segment's own size under 10 MiB
    (2 or 20 MiB), and 2 MiB above it, where a fixed segment is the request rounded up to 2 MiB.

    Why: an OOM's free bytes are the driver's, and the allocator asks in these units -- a 5 MiB request fails with
    15 MiB free (its 20 MiB segment does not fit), and 8 MiB cached beside 1,016 MiB free cannot serve 1 GiB in 20 MiB
    pages: neither is a cap nor split blocks (``synthetic.memsnapshot.oom_driver_unit``; h37-snap62).  A fixed 3 GiB
    request asks for 3 GiB in 2 MiB steps, so 2.93 GiB cached in split blocks beside 79 MiB free is fragmentation,
    not a full GPU (the 20 MiB unit called it one; h37-review62)."""
    if request <= SMALL_REQUEST:
        return SMALL_SEGMENT, SMALL_SEGMENT
    if expandable:
        return _round_up(request, LARGE_SEGMENT), LARGE_SEGMENT
    if request < LARGE_REQUEST:
        return LARGE_SEGMENT, LARGE_SEGMENT
    return _round_up(request, SEGMENT_ROUND), SEGMENT_ROUND


#: The call that records the caching allocator's history a memory snapshot dumps: what a snapshot without history
#: lacks for its peak and its time.
RECORD_MEMORY_HISTORY = "torch.cuda.memory._record_memory_history()"

#: The call that records the allocator's history, by the release whose snapshot layout a file has
#: (``formats.snapshot.reader._layout``).  2.1 on: ``enabled="all"`` (the default) with ``max_entries``; 2.0:
#: ``enabled=True`` and the trace's own ``trace_alloc_max_entries`` (its default keeps one event) and
#: ``trace_alloc_record_context``; 1.13: ``_record_memory_history(True)`` keeps each block's last allocation and its
#: stack, and no event at all -- the history of events came with 2.0 (the Dec 2022 "memory traces" post).
RECORD_HISTORY_21 = 'torch.cuda.memory._record_memory_history(enabled="all", max_entries=100_000)'
RECORD_HISTORY_20 = ("torch.cuda.memory._record_memory_history(True, trace_alloc_max_entries=100_000, "
                     "trace_alloc_record_context=True)")
RECORD_HISTORY_113 = "torch.cuda.memory._record_memory_history(True)"


def _calls(layout: str) -> str:
    """The call that records a history, for the release whose layout a snapshot has, with the other release's."""
    if layout in ("1.13", "2.0", "2.0 or older"):
        return f"{RECORD_HISTORY_20} in PyTorch 2.0 (and later); {RECORD_HISTORY_21} from 2.1"
    return f"{RECORD_HISTORY_21} from PyTorch 2.1; {RECORD_HISTORY_20} in 2.0"


def record_history(layout: str) -> str:
    """How to record what a snapshot without history lacks (its peak, when, what held it), in words that fit the
    release whose layout it has: a call 1.13 does not have is never offered to a 1.13 dump, nor 2.1's keywords to 2.0
    (2.0's call still works from 2.1 on: ``_record_memory_history`` passes a bool ``enabled`` to its legacy form)."""
    if layout == "1.13":
        return (f"PyTorch 1.13 records no allocator events (its {RECORD_HISTORY_113} keeps each live block's last "
                f"allocation and stack, no more): the history needs PyTorch 2.0 or later -- {_calls(layout)} -- "
                "before the work, then a dump")
    return f"record it before the work ({_calls(layout)}), then dump"


#: How a snapshot without history came to have none, by the release whose layout it has (``labels``, read by
#: ``capture_quality``'s note as ``snapshot_made:<layout>``).
SNAPSHOT_MADE = {
    "snapshot_made:1.13": "PyTorch 1.13's layout: that release records no allocator events",
    "snapshot_made:2.0": "PyTorch 2.0's layout, dumped without a trace",
    "snapshot_made:2.0 or older": "segments of PyTorch 2.0 or older (torch.cuda.memory_snapshot())",
    "snapshot_made:2.1": "a PyTorch 2.1+ dump with no history: enabled=\"state\", or no _record_memory_history before "
                         "it",
    "snapshot_made:": "segments alone (torch.cuda.memory_snapshot())",
    # a leak whose blocks no frame names (``memory_leak``): recorded with context=None, or made on a thread with no
    # Python frame under stacks="python"
    "leak_site:unnamed": "at a line the history cannot name: it holds no stack for them -- recorded with "
                         "context=None, or made where stacks=\"python\" finds no Python frame; "
                         "_record_memory_history(context=\"all\", stacks=\"all\") names it",
    # a history that frees blocks it never allocated (``metrics.memory``): a full ring buffer, or a late start
    "snapshot_begun:ring": "the history frees {blocks} it never allocated ({size}) and holds exactly {entries}, "
                           "a round number as max_entries is: most likely a full ring buffer "
                           "(_record_memory_history(max_entries={n})) that dropped its oldest events -- what "
                           "came before its first event, and any peak there, is not in it",
    "snapshot_begun:either": "the history frees {blocks} it never allocated ({size}): it begins after {made} "
                             "-- _record_memory_history was called with the run under way, or its ring buffer of "
                             "max_entries events was full and dropped the oldest ({entries}, no round "
                             "max_entries: more likely the first; the file does not say). Either way what came before "
                             "its first event, and any peak there, is not in it",
    # a history without stacks whose live blocks carry theirs (``capture_quality``'s note): the release's setting
    "snapshot_stacks:dump": "it was recorded with `context=\"state\"`, which keeps the stacks of the blocks live at "
                            "the dump (the job line reads them) and none of the history's events",
    "snapshot_stacks:dump:2.0": "it was recorded with `_record_memory_history(True)` without "
                                "`trace_alloc_record_context=True`, which keeps the stacks of the blocks live at the "
                                "dump (the job line reads them) and none of the history's events",
    # ``_record_memory_history(enabled="state")`` keeps a ring buffer of one event (``torch/csrc/cuda/
    # memory_snapshot.cpp``: ``max_entries = enabled == "all" ? max_entries : 1``): its dump's history is the last one
    "snapshot_begun:state": "the history holds one event, a free of {blocks} it never allocated ({size}): what "
                            "_record_memory_history(enabled=\"state\") keeps (the last event alone, a ring buffer of "
                            "one), or a recording begun just before the dump -- the peak, when it fell and what held "
                            "it are not in it; _record_memory_history(enabled=\"all\", max_entries=100_000) before "
                            "the work records them",
}


def _record_history_fix(layout: str, call: str) -> Action:
    """The fix of a snapshot without history, in its release's call (:func:`record_history`)."""
    lead = ("Move to PyTorch 2.0 or later (1.13 records no allocator events: its _record_memory_history(True) keeps "
            "each live block's last allocation only) and record" if layout == "1.13" else "Record")
    dump = ("pickle.dump(torch.cuda.memory._snapshot(), open('snapshot.pickle', 'wb'))" if call == RECORD_HISTORY_20
            else "torch.cuda.memory._dump_snapshot('snapshot.pickle')")
    return action(f"{lead} the allocator's history before the work, then dump: the snapshot then holds every "
                  "allocation and free with its stack -- the peak, when it fell, what held it, and what a forward "
                  f"keeps for a backward ({_calls(layout)}).",
                  f"{call}\nrun_steps(2)   # the work to see, after warm-up\n{dump}")


#: The call that records the allocator's history with each allocation's stack, by release: 2.1 on, ``context="all"``
#: (the default; ``None`` records none) with ``stacks="python"`` (the Python frames only: cheaper than ``"all"``'s C++
#: unwinding, and what names the user's line); 2.0, ``trace_alloc_record_context=True`` (its default records none).
RECORD_STACKS_21 = ('torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python", '
                    'max_entries=100_000)')


def _record_stacks_fix(call: str) -> Action:
    """The fix of a snapshot whose history carries no stack (``capture_quality``'s ``no_stacks`` note)."""
    dump = ("pickle.dump(torch.cuda.memory._snapshot(), open('snapshot.pickle', 'wb'))" if call == RECORD_HISTORY_20
            else "torch.cuda.memory._dump_snapshot('snapshot.pickle')")
    return action("Record the history with each allocation's stack: the snapshot then says which blocks a forward, a "
                  "backward or an optimizer made -- the job's kind, its iterations, and what a forward keeps for a "
                  "backward.", f"{call}\nrun_steps(2)   # the work to see, after warm-up\n{dump}")


#: The pin-memory thread and DataLoader workers: background, never the step's critical path.
_BACKGROUND_THREADS = ("pt_pin_memory", "pt_data_worker")


#: Host events of PyTorch's dispatch of GPU work: ATen ops (and the autograd and optimizer wrappers around
#: them), Inductor's compiled kernels' launchers, and the runtime's calls that hand the GPU work themselves
#: (``devices.is_work_call``: CUDA's, HIP's, Level Zero's).  The GPU idling while the host is inside one of them waits
#: for the host to launch work.
_DISPATCH = ("aten::", "autograd::", "torch::autograd::", "Optimizer.", "triton_", "Torch-Compiled Region",
             "TorchDynamo Cache Lookup",  # the guards a compiled function checks on every call: its dispatch
             "CompiledFunction")
_STEP = "ProfilerStep#"


#: ``prof.step()`` marks each step with ``ProfilerStep#N``.
PROFILER_STEP = re.compile(r"^ProfilerStep#(\d+)$")
#: ``torch.compile`` at work: Inductor's Triton kernels and the compiled region's host annotations.
COMPILED_HOST = ("Torch-Compiled Region", "CompiledFunction", "CompiledFunctionBackward")
TRITON_KERNEL = ("triton_",)


def step_number(name: str) -> int:
    """N of a ``ProfilerStep#N`` annotation, -1 for any other name."""
    m = PROFILER_STEP.match(name)
    return int(m.group(1)) if m else -1


def is_dispatch(name: str) -> bool:
    return name.startswith(_DISPATCH) or devices.is_work_call(name)


def is_step_marker(name: str) -> bool:
    return name.startswith(_STEP)


def is_launcher_call(name: str) -> bool:
    """A launch from a module loaded at run time (``devices.is_module_launch``: CUDA's ``cuLaunchKernel``, HIP's
    ``hipModuleLaunchKernel``).  Why it names a Python launcher where no op or range is around it: ATen launches
    its own kernels inside its ops, and Inductor's Triton kernels inside their ``triton_*`` op or the compiled
    region; a driver launch outside all of them comes from a launcher the program calls itself -- Triton's JIT
    runtime outside ``torch.compile``, CuPy, Numba (a Triton microbenchmark on an A10G, survey h37-survey44: 12
    bare ``cuLaunchKernel`` calls, each after 25-68 us the profiler records nothing of)."""
    return devices.is_module_launch(name)


def is_input(name: str) -> bool:
    return name.startswith(_DATALOADER) or ("DataLoaderIter" in name and name.endswith("__next__"))


#: ATen's ops that make a tensor from their arguments alone (``torch.randn(10000, 10000)``, ``torch.arange(n)``): run
#: long on the host they computed a CPU tensor, which ``device='cuda'`` would have made on the GPU, without the copy.
_CREATION_OP = re.compile(r"^aten::(?:randn|rand|randint|randperm|normal_|uniform_|bernoulli_|random_|full|zeros|ones"
                          r"|arange|linspace|logspace|eye)$")


def is_creation_op(name: str) -> bool:
    return bool(_CREATION_OP.match(name))


#: The words of a function or range name that say it fetches or prepares the batch: loading (``get_batch``,
#: ``load_batch``, ``next_batch``, ``fetch``, a ``DataLoader``/``Dataset``/iterator's ``__next__``/``__getitem__``,
#: ``collate``), decoding and transforming it (a pipeline's ``preprocess``, an image or feature processor, a video
#: reader, ``tokenize``/a tokenizer's ``__call__``).  Matched on the name's own words (split at ``_``, ``.``, spaces
#: and case changes), so ``batch_norm`` -- an op, never a range of the program's -- and ``onload`` are no match.
_INPUT_WORDS = frozenset((
    "batch", "batches", "fetch", "load", "loader", "dataloader", "dataset", "datasets", "getitem",
    "collate", "preprocess", "preprocessing", "prepare", "tokenize", "tokenizer", "tokenization", "decode",
    "processor", "processing", "transform", "transforms", "augment", "augmentation", "read", "reader", "input",
    "inputs", "prompt", "prompts", "sampler", "prefetch"))
#: Python frames' and ranges' names: ``path/file.py(123): function`` (``with_stack``) or the range's own text; the
#: function's words, and its file's (``tokenization_utils_base.py(2403): __call__``, ``image_processing_*.py``)
_FRAME = re.compile(r"^(?P<file>.*?)\((?P<line>\d+)\): (?P<func>.+)$")


def is_input_frame(name: str) -> bool:
    """A Python frame or program range whose own name says it fetches or prepares the batch (:data:`_INPUT_WORDS`):
    the function's words, or -- for a frame of a dunder call (``__call__``) -- its module file's, whose name then says
    what is called (``tokenization_utils_base.py``).  ATen's and the runtime's own ops are never the program's."""
    if name.startswith(("aten::", "cuda", "hip", "cudnn", "nccl", "ProfilerStep")):
        return False
    m = _FRAME.match(name)
    if m is None:
        return bool(words(name) & _INPUT_WORDS)
    func = m.group("func")
    if func == "__next__" or words(func) & _INPUT_WORDS:
        return True
    if func.startswith("__") and func not in ("__next__", "__getitem__"):
        stem = m.group("file").rsplit("/", 1)[-1].removesuffix(".py")
        return bool(words(stem) & _INPUT_WORDS)
    return False


def is_input_range(name: str) -> bool:
    """A range the program marks around fetching its batch (``base.names_batch``); ATen's and the runtime's never."""
    if name.startswith(("aten::", "cuda", "hip", "cudnn", "nccl", "ProfilerStep")):
        return False
    return names_batch(name)


def frame_label(name: str) -> str:
    """``path/to/file.py(123): func`` (a ``with_stack`` frame) as ``func (file.py:123)``, a C function's frame as the
    program calls it (``<built-in function sleep>`` -> ``sleep``); other names as they are."""
    m = _FRAME.match(name)
    if m is None:
        b = _BUILTIN.match(name)  # a C function the tracer records by its repr: the name the program calls
        return name if b is None else (f"{b.group('owner')}.{b.group('func')}" if b.group("owner") else b.group("func"))
    return f"{m.group('func')} ({m.group('file').rsplit('/', 1)[-1]}:{m.group('line')})"


#: A C function's frame as ``with_stack`` records it, by its repr: ``<built-in function sleep>``, ``<built-in method
#: item of Tensor object at 0x7f...>`` (said ``sleep``, ``Tensor.item``).
_BUILTIN = re.compile(r"^<built-in (?:function|method) (?P<func>[\w.]+)(?: of (?P<owner>\w+) object at 0x[0-9a-f]+)?>$")


#: The fix where the program's own Python prepares each step's input before its first op while the GPU waits
#: (``input_bound:frames``: a pipeline's ``preprocess``, video decoding, an image processor, a tokenizer call).
PREPARE_OFF_PATH = action(
    "Prepare the input off the step's path: {frames} ran in the main process before each step's first op while the "
    "GPU waited. Run that preparation where the GPU need not wait for it: in DataLoader worker processes (a Dataset "
    "whose __getitem__ decodes and processes one item, num_workers > 0; a transformers pipeline given a dataset "
    "takes num_workers and batch_size), or once beforehand (datasets' map with num_proc) with the result stored; "
    "process many items per call rather than one; decode images and video on the GPU where the library can.",
    "loader = torch.utils.data.DataLoader(ds, batch_size=bs, num_workers=8, collate_fn=preprocess)   # in workers\n"
    "for out in pipe(KeyDataset(ds, 'video'), batch_size=8, num_workers=8): ...   # a transformers pipeline\n"
    "ds = ds.map(preprocess, batched=True, num_proc=8)   # or once, beforehand (datasets)")


#: The fix for a tensor an op made on the CPU where the GPU could (``step_gaps``' and ``input_bound``'s creation
#: variants).
MADE_ON_GPU = action(
    "Make the tensor on the GPU: `{op}` ran on the CPU for {op_ms} of each step, making a CPU tensor the GPU can use "
    "only after a copy; the same call given device='cuda' fills it on the GPU in a fraction of the time, with no copy.",
    "x = torch.randn(10000, 10000, device='cuda')   # not torch.randn(10000, 10000).cuda()\n"
    "idx = torch.arange(n, device='cuda')")

#: The fix where CPU ops with no sync among them fill the gaps between steps (``step_gaps:cpu_ops``): tensor work on the
#: host, often the next batch being built, done where the GPU need not wait for it.
CPU_OPS_OFF_PATH = action(
    "Take the CPU tensor work off the step's path: {ops} ran on the CPU between steps while the GPU idled, and no "
    "sync waits there. Where it builds or transforms the next batch, do it in the Dataset's __getitem__ or the "
    "collate_fn, so DataLoader workers run it while the GPU computes; where it enlarges data (repeat, expand, cat, "
    "pad), copy the small source to the GPU first and run the op there.",
    "x = torch.from_numpy(a).pin_memory().cuda(non_blocking=True).repeat(4, 8)   # small copy, repeat on the GPU\n"
    "loader = torch.utils.data.DataLoader(dataset, batch_size=bs, num_workers=8, pin_memory=True)   # or in workers")


def is_parallel_input(name: str) -> bool:
    """The DataLoader's iterator with worker processes (``num_workers > 0``): batches are already made in parallel."""
    return is_input(name) and "_MultiProcessingDataLoaderIter" in name


def is_background_line(name: str) -> bool:
    return name.startswith(_BACKGROUND_THREADS)


@dataclass(frozen=True)
class Loop:
    """The loop a fix's code runs, in the words of the job's kind: a training step over a DataLoader's batches, a
    forward pass over inputs, or a step of work of no known kind (``for_job`` picks one by the job's tags).  The
    capture advice and every fix that runs the step are composed from it, so none is written for a training loop
    and reworded afterwards (h37-left29; h37-left28's ``capture_words`` replaced finished text)."""

    #: the profiled loop of the capture advice: its header (``{steps}``: the steps its schedule asks, filled by the
    #: advice that proposes the schedule) and its step line (comment included)
    capture_header: str
    capture_step: str
    #: the loop over a run's batches, and the step on its batch: ``call`` with ``{}`` for its arguments
    header: str
    call: str
    args: str
    #: one batch fetched and kept on the GPU (confirming an input-bound step)
    batch: str
    #: the name of a step's result the host reads
    value: str
    #: the fix for reading values mid-loop, where its substance differs from the loop's composed one (a forward pass
    #: returns its outputs: read them once, after the batch)
    no_sync: Action | None = None
    #: the step is a training step: its mixed-precision fixes show the loss, its backward and (float16) its scaler
    training: bool = False
    #: the step is a forward pass alone (no loss, no backward): its float16 fix (``autocast_legacy``) says no scaler is
    #: needed, where a step of no known kind is told a training step's scaler too
    forward_only: bool = False

    def step(self, args: str | None = None) -> str:
        """The step called on ``args`` (the loop's own batch by default)."""
        return self.call.format(self.args if args is None else args)


TRAINING_LOOP = Loop(capture_header="for step, (x, y) in enumerate(loader):", capture_step="train_step(x, y)",
                     header="for step, (x, y) in enumerate(loader):", call="train_step({})", args="x, y",
                     batch="x, y = next(iter(loader)); x, y = x.cuda(), y.cuda()", value="loss", training=True)
#: GPU work of no known kind (a Triton kernel's test, a low-confidence forward): a step of its own, not train_step
ANY_LOOP = Loop(capture_header="for step in range({steps}):",
                capture_step="run_one_step()             # a training step or a forward pass",
                header="for step, batch in enumerate(loader):", call="run_one_step({})", args="batch",
                batch="batch = next(iter(loader)).cuda()", value="out")


def _loader(into: str) -> str:
    """The loader fix's words, ``into`` where its workers put the batches (", into pinned memory"; "" where the trace
    shows the uploads pinned already: :data:`_UNPINNED_WORDS`)."""
    return (f"Load batches in DataLoader worker processes{into}, with workers kept alive between epochs and a few "
            "batches prefetched each, so the loop never waits for the next batch.")


LOADER = action(
    _loader(", into pinned memory"),
    "loader = torch.utils.data.DataLoader(\n"
    "    dataset, batch_size=bs, shuffle=True,\n"
    "    num_workers=8, pin_memory=True, persistent_workers=True, prefetch_factor=4)")
def loader_workers_slow(loop: Loop) -> Action:
    """More loader workers, or no loader at all for a dataset that fits the GPU: the loop's step on its slices."""
    return action(
        "The DataLoader already makes batches in worker processes (`_MultiProcessingDataLoaderIter`), and the loop "
        "still waits for them: its workers make batches more slowly than the step uses them. Give it more workers (up "
        "to the CPU cores the job may use) and more batches in flight, and make each sample cheaper: decode and "
        "transform once and cache the result, batch the per-sample transforms, or move them to the GPU. A dataset that "
        "fits in GPU memory needs no loader at all: keep it on the GPU and index its batches there.",
        "loader = torch.utils.data.DataLoader(\n"
        "    dataset, batch_size=bs, shuffle=True, num_workers=len(os.sched_getaffinity(0)),\n"
        "    pin_memory=True, persistent_workers=True, prefetch_factor=4)\n"
        "# a dataset that fits on the GPU (MNIST-sized): no loader, no copy per step\n"
        "X = torch.stack([x for x, _ in dataset]).cuda(); Y = torch.tensor([y for _, y in dataset]).cuda()\n"
        "for idx in torch.randperm(len(X), device='cuda').split(bs):\n"
        "    " + loop.step("X[idx], Y[idx]"))


LOADER_WORKERS_SLOW = loader_workers_slow(TRAINING_LOOP)
#: The fix where the DataLoader's workers hand each batch over quickly but the loop's own code inside the range it
#: marks around fetching it holds most of the wait (``input_bound:own_range``): workers are a lever in use, and the
#: range's own work is what to find and move (the duoan/playground-cuda ``torch_baseline``: 74 of a 261 us wait in the
#: workers' ``__next__``, h37-huntr67).  ``{ranges}`` the ranges and their own time, ``{next}`` the ``__next__``'s,
#: ``{calls}`` what the profiler recorded of that code.
OWN_FETCH_RANGE = action(
    "Look inside the loop's own fetch range, not at the workers: the DataLoader already makes batches in worker "
    "processes (`_MultiProcessingDataLoaderIter`) and hands one over in {next}, but {ranges} more of the range's time "
    "lies outside its `__next__`{calls}. Find what that is (with_stack=True records its Python, or a record_function "
    "around each part); keep only next(it) in the range, and move per-batch work the loop does there (unpacking, "
    "conversions, transforms, bookkeeping) into the Dataset or its collate_fn, which the workers run, or after the "
    "step's launch.",
    "with torch.profiler.record_function('data_loader'):\n"
    "    batch = next(it)                      # the fetch alone\n"
    "x, y = batch                              # the rest outside the range, off the wait\n"
    "prof = torch.profiler.profile(..., with_stack=True)   # names the range's unrecorded Python")
#: :data:`OWN_FETCH_RANGE` for a DataLoader without workers (``input_bound:own_range_serial``): its ``__next__`` holds
#: the lesser part of the wait, the loop's own code in the range the greater; workers would take only the first
#: (h37-idle67), so the range's code comes first and the loader's fix after it.
OWN_FETCH_RANGE_SERIAL = action(
    "Look inside the loop's own fetch range first: the DataLoader's `__next__` (in the main process, no workers) "
    "hands a batch over in {next}, but {ranges} more of the range's time lies outside it{calls}. Find what that is "
    "(with_stack=True records its Python, or a record_function around each part); keep only next(it) in the range, "
    "and move per-batch work the loop does there (unpacking, conversions, transforms, bookkeeping) into the Dataset "
    "or its collate_fn, which worker processes can then run, or after the step's launch.",
    OWN_FETCH_RANGE.snippet)
#: A training step's upload exposed although pinned and asynchronous (the GPU idles while it runs, on
#: the kernels' stream) is hidden by copying the next batch on a stream of its own during the current step -- the
#: DataLoader's workers make the batch sooner, never the copy (h37-probe42s's Left, h37-probe42c).
PREFETCH_BATCH = action(
    "Copy the next batch to the GPU while the current step runs: a copy on the kernels' own stream runs between "
    "them however it is made, and the GPU idles for it, so issue it on a stream of its own, from pinned memory, and "
    "make the step wait for that stream only when it needs the batch.",
    "copy_stream = torch.cuda.Stream()\n"
    "def upload(batch):\n"
    "    with torch.cuda.stream(copy_stream):\n"
    "        return [t.to('cuda', non_blocking=True) for t in batch]   # pin_memory=True in the DataLoader\n"
    "nxt = upload(next(it))\n"
    "for step in range(steps):\n"
    "    torch.cuda.current_stream().wait_stream(copy_stream)\n"
    "    x, y = nxt\n"
    "    for t in (x, y): t.record_stream(torch.cuda.current_stream())\n"
    "    nxt = upload(next(it))                                     # copied while this step runs\n"
    "    train_step(x, y)")
#: An upload already on a stream of its own that the kernels still wait for: issued when the step needs it, not a step
#: ahead -- the copy's stream is no fix to tell it (h37-copystream61: PREFETCH_BATCH said "a copy on the kernels' own
#: stream runs between them" to a copy on none of theirs).
PREFETCH_AHEAD = action(
    "The copies to the GPU already run on a stream of their own, yet the kernels wait for them: each batch is copied "
    "when the step needs it. Issue the next batch's copy one step ahead, while the current step runs, and make the "
    "step wait for the copy stream only when it uses that batch.",
    "nxt = upload(next(it))                     # on copy_stream, from pinned memory\n"
    "for step in range(steps):\n"
    "    torch.cuda.current_stream().wait_stream(copy_stream)\n"
    "    x, y = nxt\n"
    "    for t in (x, y): t.record_stream(torch.cuda.current_stream())   # used here, made on copy_stream\n"
    "    nxt = upload(next(it))                 # copied while this step runs, not when the next needs it\n"
    "    train_step(x, y)")
NON_BLOCKING = action(
    "Copy batches to the GPU asynchronously from pinned memory, so the host goes on queueing the step's work instead "
    "of waiting for the copy (on the kernels' own stream the copy still runs between them).",
    "x = x.to(device, non_blocking=True)   # needs pin_memory=True in the DataLoader\n"
    "y = y.to(device, non_blocking=True)")
def _pin_memory(copy_flag: str) -> str:
    """The pinning fix's words (``{copies}``: the rule's), ``copy_flag`` the clause that asks the batches' copies for
    ``non_blocking=True`` -- "" where their copy ops ask for it already (``non_blocking_h2d``, h37-nonblock34)."""
    return ("Copy from pinned (page-locked) host memory ({copies}): a copy from pageable memory is staged by the driver "
            "through a pinned buffer, moves at a fraction of the bus bandwidth and blocks the host even when "
            "asynchronous (Nsight Systems' 'CUDA Async Memcpy with Pageable Memory' rule). Let the DataLoader pin its "
            f"batches{copy_flag}; pin a tensor you copy yourself.")


PIN_MEMORY = action(
    _pin_memory(" and copy them with non_blocking=True"),
    "loader = torch.utils.data.DataLoader(dataset, batch_size=bs, num_workers=4, pin_memory=True)\n"
    "for x, y in loader:\n"
    "    x = x.to('cuda', non_blocking=True)\n"
    "    y = y.to('cuda', non_blocking=True)\n"
    "# a tensor of your own: x = x.pin_memory(); x.to('cuda', non_blocking=True)")
#: The blocking copies are indexing ops' uploads of CPU index tensors (``excessive_memcpy:index_upload``): the index's
#: place is the fix, not a batch's pinning (h37-probe45p).
INDEX_ON_DEVICE = action(
    "The copies that hold the host are inside indexing ops (x[idx], x[idx] = v with idx a CPU tensor or list): PyTorch "
    "uploads the index from pageable memory and waits for the GPU's queue to drain before each one. Keep the index on "
    "the GPU -- build it there (torch.arange(..., device=x.device); torch.where(mask, x, 0) in place of a boolean "
    "mask), or move it once outside the loop -- so that indexing launches without a copy or a wait.",
    "idx = idx.to(x.device)        # once, outside the loop (or build it on the GPU)\n"
    "for step in range(steps):\n"
    "    y = x[idx]                 # no upload, no wait inside aten::index\n"
    "torch.cuda.set_sync_debug_mode('warn')   # warns at each copy or sync left")
#: A read-back into pageable memory (``.cpu()``, ``.numpy()`` of a device tensor): the destination is pinned, not a
#: batch -- the DataLoader's pinning fix names a copy the other way (h37-copyforms).
PIN_READBACK = action(
    "Copy results back into pinned (page-locked) host memory ({copies}): a copy to pageable memory returns only once "
    "it has completed and moves at a fraction of the bus bandwidth (Nsight Systems' 'CUDA Async Memcpy with Pageable "
    "Memory' rule). Allocate the destination once with pin_memory=True, copy into it with non_blocking=True, and wait "
    "on an event only where the host reads the values.",
    "buf = torch.empty(out.shape, dtype=out.dtype, pin_memory=True)   # once, outside the loop\n"
    "buf.copy_(out, non_blocking=True)\n"
    "ready = torch.cuda.Event(); ready.record()\n"
    "# ... launch more GPU work ...\n"
    "ready.synchronize()   # only where the host reads buf")


def confirm_input(loop: Loop) -> Action:
    """Confirming an input-bound step: the loop's step, 100 times on one batch kept on the GPU."""
    return action(
        "Confirm: run the same step on one batch kept on the GPU; if it is much faster, loading the data is the "
        "bottleneck.",
        loop.batch + "\n"
        "for _ in range(100):\n"
        f"    {loop.step():<26}# no loading, no host->device copy\n"
        "torch.cuda.synchronize()")


CONFIRM_INPUT = confirm_input(TRAINING_LOOP)
COMPILE = action(
    "Compile the model (or the whole step) with torch.compile: Inductor fuses chains of small ops into "
    "Triton kernels, so far fewer kernels are launched.",
    "model = torch.compile(model)")
CUDA_GRAPHS = action(
    "Remove the per-kernel launch cost altogether: mode=\"reduce-overhead\" records the step as CUDA graphs "
    "and replays it with one launch (static shapes).",
    "model = torch.compile(model, mode=\"reduce-overhead\")")
FUSED_OPTIMIZER = action(
    "Use the fused (or foreach) optimizer: one kernel for all parameters instead of several per parameter.",
    "opt = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)")
def no_item(loop: Loop) -> Action:
    """Reading values every N steps, not every step: the loop's step and the value it returns."""
    if loop.no_sync is not None:
        return loop.no_sync
    return action(
        "Keep .item(), .cpu(), print(loss) and Python control flow on tensor values out of the step: each one waits "
        "for the GPU to finish (aten::_local_scalar_dense + a device-to-host copy). Accumulate on the GPU and read "
        "values every N steps.",
        "running = torch.zeros((), device='cuda')\n"
        + loop.header + "\n"
        f"    {loop.value} = {loop.step()}\n"
        f"    running += {loop.value + '.detach()':<24}# stays on the GPU\n"
        "    if step % 100 == 0:\n"
        "        print(running.item() / 100)    # one sync per 100 steps\n"
        "        running.zero_()")


NO_ITEM = no_item(TRAINING_LOOP)
#: A loop of steps too small for their host cost that syncs in every turn (``launch_bound:step_sync``): each
#: ``torch.cuda.synchronize()`` or ``.item()`` makes the host wait for the GPU and the GPU for the host's next call, so
#: neither runs ahead of the other; one sync after the loop lets the host queue the turns while the GPU runs them
#: (h37-turn66: lutetjeff/cs521-mp2's benchmark loop, a ``cudaDeviceSynchronize`` closing each 10 us turn).
SYNC_AFTER_LOOP = action(
    "Synchronize once after the loop, not in every turn: each torch.cuda.synchronize() or .item() inside it makes the "
    "host wait for the GPU and the GPU wait for the host's next call. Keep the results on the GPU and read them once "
    "after the loop (or every N turns); to time the loop, record the GPU's events around it.",
    "start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
    "total = torch.zeros((), device='cuda')\n"
    "start.record()\n"
    "for x in inputs:\n"
    "    out = step(x)                 # no torch.cuda.synchronize() or .item() in the loop\n"
    "    total += out.sum()            # stays on the GPU\n"
    "end.record()\n"
    "torch.cuda.synchronize()          # once, after the loop\n"
    "print(total.item(), start.elapsed_time(end) / len(inputs), 'ms per turn')")
#: The program polls an event or a stream until the GPU is done (``host_sync:poll``): one wait, or work meanwhile.
POLL_WAIT = action(
    "The host polls a CUDA event (or stream) with .query() until the GPU is done, launching nothing meanwhile: the "
    "poll is the program's own wait for the GPU. Wait once with event.synchronize() (or stream.synchronize()), or "
    "queue the next step's work and do host work that does not need the result before waiting, and wait less often "
    "(every N steps).",
    "done = torch.cuda.Event()\n"
    "done.record()\n"
    "batch = next(loader)      # host work that does not need the result\n"
    "done.synchronize()        # one wait, not `while not done.query(): ...`")
#: A sync inside an op that reads a GPU value back to size its output (``aten::bincount``'s max): the user wrote no
#: ``.item()``, so the fix is to give the size the op would compute (``host_sync:read_in_op``).
OUTPUT_SIZE_READ = action(
    "The wait is inside an op that reads a GPU value back to size its output (torch.bincount reads the largest "
    "value, torch.nonzero, boolean-mask indexing and masked_select count the hits, torch.unique counts the uniques): "
    "keep the count on the GPU in a tensor of a size known in advance -- count into a fixed number of bins with "
    "scatter_add_, use nonzero_static where the size is known, torch.where(mask, x, 0) instead of x[mask] -- so that "
    "the host never waits for the value.",
    "counts = torch.zeros(num_bins, dtype=torch.long, device=idx.device)\n"
    "counts.scatter_add_(0, idx, torch.ones_like(idx))   # torch.bincount(idx) reads idx.max() back first\n"
    "torch.cuda.set_sync_debug_mode('warn')              # warns at every sync left")
AUTOCAST = action(
    "Run the forward pass and the loss under autocast in bfloat16: matmuls and convolutions then use the Tensor "
    "Cores, parameters stay float32, and bfloat16 needs no loss scaling.",
    "with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n"
    "    loss = loss_fn(model(x), y)\n"
    "loss.backward()")
#: GPUs without bf16 Tensor Cores (V100, T4): float16, whose small range needs a GradScaler.
AUTOCAST_FP16 = action(
    "Run the forward pass and the loss under autocast in float16 with a GradScaler ({gpu_fp16}): matmuls and "
    "convolutions then use the Tensor Cores, parameters stay float32.",
    "scaler = torch.amp.GradScaler('cuda')\n"
    "with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
    "    loss = loss_fn(model(x), y)\n"
    "scaler.scale(loss).backward()\n"
    "scaler.step(optimizer)\n"
    "scaler.update()")
#: Autocast around a step that is not known to train: no loss, backward or optimizer to show; a training step's
#: float16 loss scaling said in words.
_STEP_AUTOCAST = ("Run the step under autocast in {dtype}: matmuls and convolutions then use the Tensor Cores, "
                  "parameters stay float32{why}.")


def autocast(loop: Loop) -> Action:
    """bfloat16 autocast around the loop's step (a training step: its forward and loss, then its backward)."""
    if loop.training:
        return AUTOCAST
    return action(_STEP_AUTOCAST.format(dtype="bfloat16", why=" (bfloat16 needs no loss scaling in training)"),
                  "with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n"
                  f"    {loop.value} = {loop.step()}")


def autocast_fp16(loop: Loop) -> Action:
    """float16 autocast around the loop's step, on GPUs without bf16 Tensor Cores."""
    if loop.training:
        return AUTOCAST_FP16
    return action(_STEP_AUTOCAST.format(dtype="float16 ({gpu_fp16})", why="; a training step also scales its loss "
                                        "(torch.amp's gradient scaler), float16's range being small"),
                  "with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
                  f"    {loop.value} = {loop.step()}")


TF32 = action(
    "On Ampere and newer, let float32 matmuls and convolutions use TF32 Tensor Cores (off by default for "
    "matmuls in PyTorch) where full fp32 accuracy is not needed.",
    "torch.backends.cuda.matmul.allow_tf32 = True   # or torch.set_float32_matmul_precision('high')\n"
    "torch.backends.cudnn.allow_tf32 = True")
#: A 16-bit convolution off the Tensor Cores whose channels are aligned already: cuDNN (MIOpen on ROCm) chose that
#: kernel by its heuristics; timing its candidates on the real shapes finds the Tensor Core ones where they are faster
#: (h37-huntk66: MIOpen's Winograd ``dot2`` kernels for the 1x1 and 3x3 convolutions of an MI300X ResNet).
CONV_SEARCH = action(
    "Let cuDNN time its convolution algorithms on your shapes and keep the fastest, in place of its heuristic "
    "choice: the channels are aligned already, so padding them changes nothing.",
    "torch.backends.cudnn.benchmark = True   # once, before the first convolution")
CHANNELS_LAST = action(
    "For convolutional models, use the channels_last memory format so cuDNN picks Tensor Core kernels without "
    "layout transposes.",
    "model = model.to(memory_format=torch.channels_last)\n"
    "x = x.to(memory_format=torch.channels_last)")


#: torch.profiler's schedule counts prof.step() calls: wait, then warmup, then active.  A loop of fewer steps than
#: their sum ends before the window opens (or while it is open) -- the very failure ``loop_ended`` names -- so every
#: schedule the advice proposes states the steps it asks beside the loop that must run them.
SCHEDULE_FITS = "# the loop must run wait + warmup + active = {steps} steps (prof.step() counts them)"


def _profiled(schedule: tuple[int, int, int], loop: Loop) -> str:
    """A profiled loop under ``schedule`` (wait, warmup, active), with the steps it asks said beside it and a loop of
    the framework's own count (``Loop.capture_header``'s ``{steps}``) running exactly those: the one home of a capture
    advice's schedule lines (h37-schedfit: the generic advice asked ``schedule(wait=5, warmup=2, active=10)`` of
    ``for step in range(10)``, 17 steps of 10 -- the window recorded 3 steps and the loop ended)."""
    wait, warmup, active = schedule
    steps = wait + warmup + active
    return ("from torch.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity\n"
            + SCHEDULE_FITS.format(steps=steps) + "\n"
            "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],\n"
            f"             schedule=schedule(wait={wait}, warmup={warmup}, active={active}, repeat=1),\n"
            "             on_trace_ready=tensorboard_trace_handler('LOGDIR/run1')) as prof:\n"
            f"    {loop.capture_header.format(steps=steps)}\n"
            f"        {loop.capture_step}\n"
            "        prof.step()")


def capture(loop: Loop, per_rank: bool) -> str:
    """PyTorch's capture advice for a job: a few steady-state steps of its loop after warm-up; "one trace per rank"
    only to a job of several processes (a one-process job has no rank to trace: mi210_gpu_only, h37-left28)."""
    return ("# capture a few steady-state steps after warm-up" + (", one trace per rank:" if per_rank else ":") + "\n"
            + _profiled((5, 2, 10), loop))


#: The schedule a loop-ended window's fix proposes where the loop ran at least its sum of steps.
LOOP_ENDED_SCHEDULE = (1, 1, 3)


def fit_schedule(schedule: tuple[int, int, int], steps: int) -> tuple[int, int, int]:
    """``schedule`` (wait, warmup, active) cut to a loop of ``steps`` steps: wait goes first, then warmup down to one,
    then active down to one, then the last warmup -- a window that records one step of the loop is still a window;
    ``schedule`` itself where it fits (or ``steps`` is not known: 0)."""
    wait, warmup, active = schedule
    over = max(wait + warmup + active - steps, 0) if steps > 0 else 0
    cut = min(wait, over); wait, over = wait - cut, over - cut
    cut = min(max(warmup - 1, 0), over); warmup, over = warmup - cut, over - cut
    cut = min(active - 1, over); active, over = active - cut, over - cut
    return wait, warmup - min(warmup, over), active


def loop_ended(loop: Loop, steps: int = 0) -> Action:
    """A window opened after the loop's last batch (``job.kind._loop_ended``): a schedule the loader's batches cover,
    checked before the loop, around the job's own loop over its loader, its step the capture advice's (one job, one
    loop: the ``loop-once`` law).  Where the window numbers the steps the loop ran (``steps``: ``ProfilerStep#N``'s
    N), the proposed schedule fits them (h37-schedfit: ``1, 1, 3`` was proposed to a loop of 2 batches)."""
    wait, warmup, active = fit_schedule(LOOP_ENDED_SCHEDULE, steps)
    ran = (f" This loop ran {plural(steps, 'batch', 'batches')} (`ProfilerStep#{steps}` found its input exhausted): the "
           f"schedule below fits them (wait={wait}, warmup={warmup}, active={active})." if steps else "")
    return action(
        "The profiler's window opened after the loop's last batch: its schedule's wait and warmup steps used up the "
        "loader's batches. Keep wait + warmup + active within the batches the profiled loop runs (len(loader) per "
        "pass; loop over the data again for more), and call prof.step() after each step." + ran,
        "from torch.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity\n"
        f"wait, warmup, active = {wait}, {warmup}, {active}\n"
        "assert wait + warmup + active <= len(loader), 'the window would open after the last batch'\n"
        "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],\n"
        "             schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=1),\n"
        "             on_trace_ready=tensorboard_trace_handler('LOGDIR/run1')) as prof:\n"
        f"    {loop.header}\n"
        f"        {loop.capture_step}\n"
        "        prof.step()")


def short_capture(advice: str) -> str:
    """A long capture's advice: the same schedule, said as the short window it records."""
    return ("# record 10 steps, not the whole run: skip 5, warm up 2, record 10, then stop (repeat=1)\n"
            + advice.split("\n", 1)[1])


CAPTURE = capture(TRAINING_LOOP, per_rank=True)
_BALANCE = action(
    "Give every rank the same work: a DistributedSampler over the dataset (drop_last=True), the same batch size "
    "per rank, and no extra work (evaluation, logging, checkpointing) on {gpu} inside the step.",
    "sampler = torch.utils.data.distributed.DistributedSampler(dataset, drop_last=True)\n"
    "loader = torch.utils.data.DataLoader(dataset, batch_size=bs, sampler=sampler, num_workers=8, pin_memory=True)")

#: The copies already come from pinned memory, asynchronously, and outlast the compute: what is left is the bytes.
FEWER_BYTES = action(
    "Move fewer bytes to the GPU: keep tensors on the device across steps (create them there; cache a dataset that "
    "fits in GPU memory), send compact types and convert on the GPU (uint8 images normalised there), and copy a "
    "result back only when it is read.",
    "x = torch.from_numpy(batch_uint8).to(device, non_blocking=True)   # 4x fewer bytes than float32\n"
    "x = x.float().div_(255)                                             # widened on the GPU")

#: The wait before graph replays is the host preparing each (h37-left60): the next inputs made and copied meanwhile.
def _replay_ahead(copy: str) -> str:
    """The words of preparing graph replays ahead, ``copy`` how the next inputs are copied into the static tensors."""
    return ("The GPU waits while the host prepares each graph replay: get the next inputs ready while the current "
            f"replay runs -- copy them into the graph's static tensors{copy}, and move the Python between replays "
            "(batching, bookkeeping, reading results) off the path or after the next replay's launch.")


REPLAY_AHEAD = action(
    _replay_ahead(" from pinned memory with non_blocking=True"),
    "static_x.copy_(next_x_pinned, non_blocking=True)   # ready before the replay, no host wait\n"
    "g.replay()                                         # one launch\n"
    "next_x_pinned = prepare_next_batch()               # host work while the GPU runs the replay")

#: DDP: gradient buckets reduced while the backward pass still runs.
DDP_OVERLAP = action(
    "DDP overlaps each gradient bucket's AllReduce with the rest of the backward pass: keep buckets small enough "
    "to start early, reduce into the gradients in place, and with gradient accumulation skip the AllReduce of all "
    "but the last micro-batch (no_sync).",
    "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank], bucket_cap_mb=25,\n"
    "                                                  gradient_as_bucket_view=True, static_graph=True)\n"
    "with model.no_sync():          # micro-batches 1..k-1 of an accumulation\n"
    "    loss_fn(model(x), y).backward()")
#: FSDP: all-gathers prefetched ahead of the layer that needs them.
FSDP_PREFETCH = action(
    "FSDP: prefetch the next layer's all-gather during the current layer's compute, in the forward and the backward "
    "pass, and keep at most two all-gathers in flight.",
    "model = FSDP(model, forward_prefetch=True, backward_prefetch=BackwardPrefetch.BACKWARD_PRE,\n"
    "             limit_all_gathers=True)   # FSDP2: fully_shard(layer, reshard_after_forward=False) for the last blocks")
#: Tensor parallelism's per-layer activation collectives overlapped with the matmuls they feed (async TP).
TP_OVERLAP = action(
    "Tensor parallelism (DTensor) all-gathers and reduce-scatters the activations at every layer, so the step waits "
    "for each: let torch.compile overlap them with the matmuls they feed (asynchronous tensor parallelism, over "
    "symmetric memory), and move bf16 activations rather than fp32 (half the bytes a collective sends).",
    "torch._inductor.config._micro_pipeline_tp = True      # async TP: collective matmuls\n"
    "from torch.distributed._symmetric_memory import enable_symm_mem_for_group\n"
    "enable_symm_mem_for_group(mesh['tp'].get_group().group_name)\n"
    "model = torch.compile(model)")
#: All-to-all of no kind the job stage could read (``job.exchange``): each kind's overlap, named by what it moves.
A2A_OVERLAP = action(
    "All-to-all waits on its slowest split: overlap it with compute that does not need it, as fits what it "
    "exchanges -- embedding rows: TorchRec's TrainPipelineSparseDist (the next batch's exchange beside this batch's "
    "compute); a mixture-of-experts layer's tokens: one micro-batch's dispatch and combine beside another's compute; "
    "sequence-parallel attention heads: the exchange beside the QKV projection, or ring attention -- and balance the "
    "splits across ranks.")
#: The embeddings' all-to-all of a recommender (its lookups beside it): TorchRec's pipeline of batches.
A2A_EMBEDDINGS = action(
    "The embedding all-to-all (each rank's table lookups sent to the ranks that own the batch's samples) waits on its "
    "slowest split: pipeline it with the dense part of the model (TorchRec's TrainPipelineSparseDist overlaps the next "
    "batch's embedding all-to-all with this batch's compute), and balance the splits across ranks.",
    "from torchrec.distributed.train_pipeline import TrainPipelineSparseDist\n"
    "pipeline = TrainPipelineSparseDist(model, optimizer, device)\n"
    "for _ in range(steps):\n"
    "    pipeline.progress(data_iter)")
#: A mixture-of-experts layer's token exchange in training (the router's top-k and the experts' grouped GEMMs beside
#: it, or DeepEP's kernels): micro-batches overlapped, experts balanced.  DeepEP's calls as its README spells them.
A2A_EXPERTS = action(
    "A mixture-of-experts layer's all-to-all (its tokens dispatched to their experts' ranks and combined back) waits "
    "on its slowest split: overlap one micro-batch's dispatch and combine with another micro-batch's attention and "
    "expert GEMMs (DualPipe, or two-batch overlap, with the dispatch on a communication stream), and balance the "
    "tokens per expert (a load-balancing auxiliary loss or routing bias, a capacity factor) so no rank waits for the "
    "hottest expert.",
    "# DeepEP: the dispatch runs on its own stream while the other micro-batch computes\n"
    "n_rank, n_rdma, n_expert, in_rank, _ = buffer.get_dispatch_layout(topk_idx, num_experts)\n"
    "recv_x, recv_idx, recv_w, _, handle, event = buffer.dispatch(\n"
    "    x, topk_idx=topk_idx, topk_weights=topk_weights, num_tokens_per_rank=n_rank,\n"
    "    num_tokens_per_rdma_rank=n_rdma, is_token_in_rank=in_rank, num_tokens_per_expert=n_expert,\n"
    "    async_finish=True, allocate_on_comm_stream=True)\n"
    "other_micro_batch_attention()\n"
    "event.current_stream_wait()")
#: An expert-parallel forward's token exchange: nothing of training's (no pipeline of batches with an optimizer, no
#: auxiliary loss); decode's small batches: DeepEP's low-latency kernels, whose receive hook holds no SMs.
A2A_FORWARD = action(
    "An expert-parallel forward's all-to-all (the tokens' dispatch to their experts and back) waits on its slowest "
    "split: overlap the exchange with compute that does not need it (the shared expert, another micro-batch's "
    "attention), and balance the tokens per rank by placing copies of the hot experts on more ranks.")
A2A_EXPERTS_FORWARD = action(
    A2A_FORWARD.text + " For decode's small batches, DeepEP's low-latency kernels send over RDMA with no SMs held: "
    "return_recv_hook=True lets another micro-batch compute until the tokens are needed.",
    "recv_x, recv_count, handle, event, hook = buffer.low_latency_dispatch(\n"
    "    x, topk_idx, num_max_dispatch_tokens_per_rank, num_experts, return_recv_hook=True)\n"
    "other_micro_batch_attention()\n"
    "hook()   # the tokens have arrived")
#: Sequence parallelism's head/sequence exchange around attention (attention kernels beside it): the same fix in
#: training and in a forward (DeepSpeed-Ulysses, xDiT's ``ulysses_degree`` / ``ring_degree``).
A2A_SEQUENCE = action(
    "Sequence parallelism's all-to-all (DeepSpeed-Ulysses, xDiT: heads exchanged for sequence before attention and "
    "back after it) stalls every layer: overlap it with the QKV projection (send one group of heads while the next "
    "is projected), or move part of the degree to ring attention, which passes K/V blocks between ranks while each "
    "block's attention runs (xDiT: a larger ring_degree, a smaller ulysses_degree over slow links).")
#: An embedding forward's exchange (recommender inference): no training pipeline, no optimizer.
A2A_EMBEDDINGS_FORWARD = action(
    "The embedding all-to-all of a forward pass (each rank's table lookups sent to the ranks that own the batch) "
    "waits on its slowest split: overlap the next batch's input distribution and lookups with this batch's dense "
    "forward, and place the tables so fewer rows cross ranks (replicate small tables, shard hot ones row-wise).")
#: The all-to-all's fixes by what it exchanges (``job.exchange``: the ``AllToAll/<kind>`` variant), for a forward
#: pass or work of no known kind.
_A2A_FORWARD_FIXES = {"embeddings": (A2A_EMBEDDINGS_FORWARD,), "experts": (A2A_EXPERTS_FORWARD,),
                      "sequence": (A2A_SEQUENCE,)}
#: Balancing a skewed all-to-all's splits by what it exchanges (``alltoall_imbalance:<kind>``, ``job.exchange``).
#: Embeddings: the sharding plan, in training and in a forward alike.
BALANCE_EMBEDDINGS = action(
    "Balance the embedding rows each rank sends: a sharding plan that spreads the hot tables (TorchRec's planner with "
    "row-wise or table-wise-row-wise sharding), so no rank's lookups outweigh the others'.")
#: Experts in training: the router's own balance (an auxiliary loss, a capacity factor; Switch Transformer's loss).
BALANCE_EXPERTS = action(
    "Balance the tokens per expert: a load-balancing auxiliary loss on the router (or a routing bias) and a capacity "
    "factor (tokens over capacity dropped or re-routed), so every rank's all-to-all moves about as many tokens.",
    "aux_loss = num_experts * (tokens_per_expert_fraction * router_prob_mean).sum()  # Switch Transformer\n"
    "loss = task_loss + 0.01 * aux_loss")
#: Experts in a forward: no loss to train, so the hot experts are placed, not re-routed.
BALANCE_EXPERTS_FORWARD = action(
    "Balance what each rank receives: place copies of the hot experts on more ranks (an expert-parallel load "
    "balancer places them by measured load).")
#: Sequence parallelism: each rank's share of the sequence, training or not.
BALANCE_SEQUENCE = action(
    "Balance the sequence each rank holds: split the tokens evenly across the sequence-parallel ranks (pack "
    "variable-length sequences to equal token counts per rank), so no rank's share of the exchange outweighs the "
    "others'.")
#: A forward's or work of no known kind's balancing, by the exchange's kind ("": of no kind the job stage read).
_BALANCE_FORWARD_FIXES = {
    "": (action("Balance what each rank receives: place copies of the hot experts on more ranks (an expert-parallel "
                "load balancer places them by measured load); for embeddings, a sharding plan that spreads hot tables "
                "(TorchRec's planner with row-wise or table-wise-row-wise sharding)."),),
    ":embeddings": (BALANCE_EMBEDDINGS,), ":experts": (BALANCE_EXPERTS_FORWARD,), ":sequence": (BALANCE_SEQUENCE,)}
#: DDP's gradient buckets, said to work of no known kind: the constructor, not a training step's code.
DDP_BUCKETS = action(
    "If this is a DDP training step, DDP overlaps each gradient bucket's AllReduce with the rest of the backward pass: "
    "keep buckets small enough to start early and reduce into the gradients in place.",
    "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank], bucket_cap_mb=25,\n"
    "                                                  gradient_as_bucket_view=True, static_graph=True)")
#: The job rules' fixes for forward passes and work of no known kind (``rules/_job`` asks the job's context, h37-left34):
#: no ``.backward()`` under ``no_sync``, no training pipeline with an optimizer, no auxiliary loss.
FORWARD_COMM_FIXES = {
    "comm_exposed@inference": (TP_OVERLAP,),
    "comm_exposed:AllGather@inference": (FSDP_PREFETCH,),
    "comm_exposed:ReduceScatter@inference": (FSDP_PREFETCH,),
    "comm_exposed:AllToAll@inference": (A2A_FORWARD,),
    "comm_exposed:SendRecv@inference": (A2A_FORWARD,),
    "comm_exposed@any_work": (DDP_BUCKETS, TP_OVERLAP),
    "comm_exposed:AllGather@any_work": (FSDP_PREFETCH,),
    "comm_exposed:ReduceScatter@any_work": (FSDP_PREFETCH,),
    "comm_exposed:AllToAll@any_work": (A2A_FORWARD,),
    "comm_exposed:SendRecv@any_work": (A2A_FORWARD,),
    **{f"comm_exposed:AllToAll/{kind}@{tag}": fix for kind, fix in _A2A_FORWARD_FIXES.items()
       for tag in ("inference", "any_work")},
    **{f"alltoall_imbalance{variant}@{tag}": fix for variant, fix in _BALANCE_FORWARD_FIXES.items()
       for tag in ("inference", "any_work")},
}

#: Seeing the host's own code that no event records: the profiler's Python tracing, or named ranges around it.
RECORD_PYTHON = action(
    "Record the host's own code between the GPU's work: Python tracing in the profiler (with_stack=True), or "
    "named ranges around the suspect code (torch.profiler.record_function, or torch.cuda.nvtx under Nsight "
    "Systems); then profile again and read the ranges that fill the gap.",
    "with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], with_stack=True) as prof:\n"
    "    ...\n"
    "with torch.profiler.record_function('log_metrics'):   # around code you suspect\n"
    "    log_metrics(loss)")

#: The host's time no event records where the profiler traced every Python call already (``with_stack=True``): the
#: host is in a frame's own lines there, in no call -- only ranges around those lines show which one holds it.
RECORD_LINES = action(
    "The profiler traced every Python call already (with_stack=True) and none covers this time: the host runs the "
    "loop's own lines there, in no call the tracer sees (freeing a large tensor when its name is rebound, garbage "
    "collection, work inside a C extension). Mark the loop's lines with named ranges (torch.profiler.record_function, "
    "or torch.cuda.nvtx under Nsight Systems), profile again and read which range holds the time.",
    "with torch.profiler.record_function('upload'):\n"
    "    x = x.to('cuda', non_blocking=True)\n"
    "with torch.profiler.record_function('after_upload'):   # the lines that follow, until the next op\n"
    "    ...")

#: Small collectives launched one by one (``comm_exposed:paced``, h37-buckets): one call per parameter pays a launch
#: and NCCL's latency each; DDP packs the gradients into buckets of bucket_cap_mb and reduces each once.
GRAD_BUCKETS = action(
    "Reduce the gradients in a few large calls, not one all_reduce per parameter: wrap the model in DDP, which packs "
    "them into buckets of bucket_cap_mb and reduces each bucket once as the backward fills it (under torch.compile "
    "DDP splits the compiled graph at the buckets so they overlap the backward); a hand-written loop can reduce one "
    "flattened buffer instead; FSDP: a wrapping policy of a few large units, not one per parameter.",
    "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank], bucket_cap_mb=25,\n"
    "                                                  gradient_as_bucket_view=True)\n"
    "# or, by hand: one call for all the gradients\n"
    "flat = torch.cat([p.grad.reshape(-1) for p in params]); dist.all_reduce(flat)\n"
    "torch._utils._unflatten_dense_tensors(flat, [p.grad for p in params])  # copy back into each p.grad")

FIXES = {
    "comm_exposed:paced": (GRAD_BUCKETS,),
    "comm_exposed": (DDP_OVERLAP,),
    # collectives of no known type (``metrics.comm.UNKNOWN``: NCCL's generic kernels, ``ncclDevKernel_Generic_1``, in a
    # capture with no host op to name them): a data-parallel training step's may be DDP's gradient AllReduce or FSDP's
    # all-gathers and reduce-scatters, so both fixes (h37-review17: fsdp_mi350x_kernel_trace, a kernel trace alone, was
    # told DDP's buckets only)
    "comm_exposed:collective": (DDP_OVERLAP, FSDP_PREFETCH),
    "comm_exposed:AllGather": (FSDP_PREFETCH,),
    "comm_exposed:ReduceScatter": (FSDP_PREFETCH,),
    "comm_exposed:AllToAll": (A2A_OVERLAP,),
    "comm_exposed:AllToAll/embeddings": (A2A_EMBEDDINGS,),
    "comm_exposed:AllToAll/experts": (A2A_EXPERTS,),
    "comm_exposed:AllToAll/sequence": (A2A_SEQUENCE,),
    "comm_exposed:SendRecv": (A2A_OVERLAP,),
    "comm_exposed@tensor_parallel": (TP_OVERLAP,),
    "alltoall_imbalance": (action(
        "Balance what each rank sends: for mixture-of-experts, a load-balancing auxiliary loss and a capacity factor "
        "(tokens over capacity are dropped or re-routed); for embeddings, a sharding plan that spreads hot tables "
        "(TorchRec's planner with row-wise or table-wise-row-wise sharding).", BALANCE_EXPERTS.snippet),),
    "alltoall_imbalance:embeddings": (BALANCE_EMBEDDINGS,),
    "alltoall_imbalance:experts": (BALANCE_EXPERTS,),
    "alltoall_imbalance:sequence": (BALANCE_SEQUENCE,),
    "rank_straggler": (_BALANCE,),
    "late_rank": (action(
        "Find what {gpu}'s process does before its collectives that the other ranks' do not: profile that rank's host "
        "thread (with_stack=True) and look for work only it runs (rank-0-style logging or checkpointing, a .item() or "
        "print, its data loading), a slower dispatch (fewer CPU cores, another process on its cores), and keep it off "
        "the step or give its process its own cores near its GPU."),),
    "input_bound:creation": (MADE_ON_GPU,),
    "input_bound:frames": (PREPARE_OFF_PATH,),
    "launch_bound": (COMPILE, CUDA_GRAPHS, FUSED_OPTIMIZER),
    "launch_bound:step": (CUDA_GRAPHS, action("Or raise the batch size, so each launch does more GPU work.")),
    # a driver's late submission is paid per launch: fewer launches pay it fewer times (h37-idle67)
    "capture_quality:submission": (CUDA_GRAPHS, COMPILE),
    # a step too small for its host cost that syncs in every turn (``launch_bound.sync_fixes``): once, after the loop
    "launch_bound:step_sync": (SYNC_AFTER_LOOP,),
    # the wait comes before graph replays: the host's preparation of each, not a launch per kernel (h37-left60)
    "launch_bound:replay": (REPLAY_AHEAD,),
    # most small kernels are the optimizer's own, a few per parameter: the optimizer's update is what to batch
    "launch_bound:optimizer": (FUSED_OPTIMIZER, action(
        "A custom optimizer: write its update over the whole parameter list with torch._foreach_* ops (one "
        "multi-tensor kernel per op for all parameters, not one per parameter), or compile the optimizer's step.",
        "torch._foreach_mul_(exp_avgs, beta1)\n"
        "torch._foreach_add_(exp_avgs, grads, alpha=1 - beta1)   # every parameter in one launch\n"
        "opt.step = torch.compile(opt.step)                       # or let Inductor fuse the update"), COMPILE),
    "host_sync:unrecorded": (RECORD_PYTHON,),
    "host_sync:unrecorded_traced": (RECORD_LINES,),
    "step_gaps:unrecorded_traced": (RECORD_LINES,),
    # the program's waits are polls (``job.waits.polls``): ``while not ev.query()`` until the GPU is done
    "host_sync:poll": (POLL_WAIT,),
    # the step's host time no event covers (between batches, or inside a one-pass step): the same Python tracing
    "step_gaps:unrecorded": (RECORD_PYTHON,),
    # the unrecorded time right before kernels a Python launcher starts through the driver (Triton called directly)
    "step_gaps:launcher": (action(
        "Take the Python launcher off each kernel's path: call the Triton kernels from a torch.compile'd function "
        "(Inductor launches them from its generated code, without the JIT's per-call argument binding and cache "
        "lookup), or capture the launches once in a CUDA graph and replay it -- one launch for all of them, no Python "
        "per kernel (the kernels must run on the capturing stream).",
        "fn = torch.compile(fn)              # Triton kernels called inside: launched by Inductor\n"
        "# or record the launches once and replay them:\n"
        "g = torch.cuda.CUDAGraph()\n"
        "with torch.cuda.graph(g):\n"
        "    out = fn(static_x)\n"
        "g.replay()                          # static_x.copy_(x) before each replay"),),
    "excessive_memcpy:h2d": (LOADER, NON_BLOCKING),
    # an upload already pinned and asynchronous that the GPU still waits for: the next batch's copy on a side stream
    # (``rules.excessive_memcpy._exposed_upload``, which orders it against the loader's fix by the trace's input wait)
    "excessive_memcpy:h2d_exposed": (PREFETCH_BATCH,),
    "excessive_memcpy:h2d_own_stream": (PREFETCH_AHEAD,),
    # the copies to the GPU are FSDP's uploads of offloaded parameters, launched in its pre-forward/backward hooks
    "excessive_memcpy:param_upload": (action(
        "The copies to the GPU are FSDP's uploads of parameters offloaded to host memory: every layer's parameters "
        "cross PCIe before its forward and again before its backward, each step. Where the sharded parameters (and "
        "their optimizer state) fit in GPU memory, turn the offload off; where they do not, prefetch the next layers "
        "so each upload overlaps the current layer's compute.",
        "fully_shard(block)   # FSDP2: without offload_policy=CPUOffloadPolicy() the parameters stay on the GPU\n"
        "block.set_modules_to_forward_prefetch([next_block])   # if offload must stay: upload during this block\n"
        "block.set_modules_to_backward_prefetch([prev_block])\n"
        "# FSDP1: FSDP(model, cpu_offload=CPUOffload(offload_params=False), forward_prefetch=True,\n"
        "#             backward_prefetch=BackwardPrefetch.BACKWARD_PRE)"),),
    "excessive_memcpy:pageable": (PIN_MEMORY,),
    "excessive_memcpy:index_upload": (INDEX_ON_DEVICE,),
    "excessive_memcpy:pageable_d2h": (PIN_READBACK,),
    # the copies already come from pinned memory, asynchronously: what is left is the bytes themselves
    "excessive_memcpy:pinned": (FEWER_BYTES,),
    "excessive_memcpy:d2d": (action(
        "Remove the copies on the device the math does not need: `.contiguous()` after a transpose or permute, "
        "`torch.cat`/`torch.stack` in a loop, `.clone()`, `.to(memory_format=...)` and `copy_` each copy the tensor "
        "(the copies' top ops say which). Keep one memory layout end to end (channels_last model and inputs) and "
        "write into preallocated tensors (`out=`, in-place ops).",
        "model = model.to(memory_format=torch.channels_last)\n"
        "x = x.to(memory_format=torch.channels_last)     # one layout: no copy between layers"),
        action("Let torch.compile fuse the copies that remain (layout changes, concatenations) into the kernels "
               "around them.", "model = torch.compile(model)")),
    "step_gaps:creation": (MADE_ON_GPU,),
    "step_gaps:cpu_ops": (CPU_OPS_OFF_PATH,),
    # the gaps hold the dispatch of the next step's own compute (h37-hunt69): fewer, larger launches
    "step_gaps:dispatch": (COMPILE, CUDA_GRAPHS),
    "loss_scaling_gaps": (action(
        "With float16 autocast, keep the GradScaler's skipped steps rare: bfloat16 needs no loss scaling at all on "
        "Ampere and newer.",
        "scaler = torch.amp.GradScaler('cuda')\n"
        "with torch.autocast('cuda', dtype=torch.float16):\n"
        "    loss = loss_fn(model(x), y)\n"
        "scaler.scale(loss).backward(); scaler.step(opt); scaler.update()"),),
    "tensor_core_unused:conv": (CHANNELS_LAST,),  # only where the run has convolutions
    "tensor_core_unused:search": (CONV_SEARCH,),  # only for aligned 16-bit convolutions off the Tensor Cores
    "mfu_low:conv": (CHANNELS_LAST, CONV_SEARCH),  # only where convolutions hold most of the slow shapes' time
    "tensor_core_unused:tf32": (TF32,),
    "xla_not_used": (COMPILE,),
    "eager_execution": (COMPILE,),
    "batch_size_headroom": (action(
        "Raise the batch size per GPU until peak memory nears capacity; check convergence (learning rate "
        "scaling).", "print(torch.cuda.max_memory_allocated() / torch.cuda.get_device_properties(0).total_memory)"),),
    "allreduce_extra": (DDP_BUCKETS,),
    "gpu_imbalance": (_BALANCE,),
    "sequential_gpus": (action(
        "Run one process per GPU with DistributedDataParallel (torchrun) instead of moving work between GPUs "
        "from one Python thread.", "torchrun --nproc_per_node=8 train.py"),),
    "launch_skew": (action(
        "Start every rank's step together: no rank-0-only work (logging, evaluation, checkpoints) inside the "
        "step, and the same data loading on every rank.", "if step % log_every == 0 and rank == 0:\n    log(...)  # outside the timed step"),),
    "launch_skew:private_threads": (DDP_BUCKETS,),
    "launch_skew:shared_threads": (DDP_BUCKETS,),
    "capture_quality:lost_records": (action(
        "Record the GPU's activity and wait for the GPU before the profile ends: kernels still running when the "
        "profiler stops leave no record.",
        "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:\n"
        "    run_steps()\n"
        "    torch.cuda.synchronize()   # the GPU's work done before the profiler collects its records"),),
    # a trace whose GPU work names no launch (capture_quality's ``not_kept``: a converted or trimmed copy)
    "capture_quality:not_kept": (action(
        "Analyse the trace torch.profiler itself wrote (tensorboard_trace_handler or export_chrome_trace), not a "
        "converted or trimmed copy: it links every kernel, copy and memset to its launch by a `correlation` and a "
        "flow arrow.",
        "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],\n"
        "             on_trace_ready=tensorboard_trace_handler(\"./log\")) as prof:\n"
        "    run_steps()"),),
    # a file of the collective kernels alone (a filter of a fuller trace: TraceLens' NCCL-only view)
    "capture_quality:collectives_only": (action(
        "Read the trace this file was filtered from -- each rank's own torch.profiler trace, or all of a fused file's "
        "events --, not its collectives alone: each rank's steps, its work before each collective and why one rank "
        "enters them late are there.",
        "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],\n"
        "             on_trace_ready=tensorboard_trace_handler(\"./log\")) as prof:\n"
        "    run_steps()"),),
    "capture_quality:no_history": (_record_history_fix("2.1", RECORD_HISTORY_21),),
    # a history that kept only the program's exit (rules.capture_quality._snapshot_teardown): record from before the
    # steps, dump right after them -- before the script frees what they made -- with room for the steps' events
    "capture_quality:snapshot_teardown": (action(
        "Record the allocator's history before the steps and dump the snapshot right after them, before the script "
        "frees what they made (del, torch.cuda.empty_cache()); a max_entries large enough for the steps' events keeps "
        "them when the exit's frees follow.",
        f"{RECORD_HISTORY_21}\nrun_steps(2)   # the work to see, after warm-up\n"
        "torch.cuda.memory._dump_snapshot('snapshot.pickle')   # before del model / torch.cuda.empty_cache()"),),
    "capture_quality:no_history_2.0": (_record_history_fix("2.0", RECORD_HISTORY_20),),
    "capture_quality:no_history_1.13": (_record_history_fix("1.13", RECORD_HISTORY_20),),
    "capture_quality:no_stacks": (_record_stacks_fix(RECORD_STACKS_21),),
    "capture_quality:no_stacks_2.0": (_record_stacks_fix(RECORD_HISTORY_20),),
    "capture_quality:history_cut": (action(
        "Record the snapshot's history with room for every event of the steps it should show: max_entries is the "
        "number of allocator events kept (the oldest are dropped first), so size it to a few steps' allocations, or "
        "record fewer steps.",
        "torch.cuda.memory._record_memory_history(max_entries=1_000_000)\n"
        "run_steps(2)   # the steps to see, after warm-up\n"
        "torch.cuda.memory._dump_snapshot('snapshot.pickle')"),),
}

# ---- the job: inference and serving (no training loop), and old PyTorch versions ----------------------------------

NO_SYNC_INFERENCE = action(
    "Keep .item(), .cpu(), .tolist() and Python branches on tensor values out of the forward pass: each one waits for "
    "the GPU to finish. Return tensors and read them once, after the batch.",
    "with torch.inference_mode():\n"
    "    outs = [model(x) for x in batches]   # no .item() inside\n"
    "results = torch.stack(outs).cpu()       # one sync at the end")
#: An upload to the GPU exposed although pinned and asynchronous: on the stream of the kernels it still runs between
#: them, so the next input is copied on a stream of its own while the current forward pass runs (h37-probe42s: a
#: forward loop's upload was told the read-back's "keep .item() out of the forward pass").
PREFETCH_INPUT = action(
    "Copy the next input to the GPU while the current forward pass runs: a copy on the kernels' own stream runs "
    "between them however it is made, so issue it on a stream of its own, from pinned memory, and make the "
    "forward pass wait for that stream only when it needs the input.",
    "copy_stream = torch.cuda.Stream()\n"
    "with torch.cuda.stream(copy_stream):\n"
    "    nxt = next_batch.pin_memory().to('cuda', non_blocking=True)\n"
    "out = model(x)                                         # runs while nxt is copied\n"
    "torch.cuda.current_stream().wait_stream(copy_stream)   # then x = nxt for the next pass\n"
    "nxt.record_stream(torch.cuda.current_stream())")
#: :data:`PREFETCH_AHEAD`'s forward-pass words.
PREFETCH_AHEAD_INPUT = action(
    "The copies to the GPU already run on a stream of their own, yet the kernels wait for them: each input is copied "
    "when the forward pass needs it. Issue the next input's copy while the current forward pass runs, and make the "
    "pass wait for the copy stream only when it uses that input.",
    "with torch.cuda.stream(copy_stream):\n"
    "    nxt = next_batch.to('cuda', non_blocking=True)    # from pinned memory\n"
    "out = model(x)                                         # runs while nxt is copied\n"
    "torch.cuda.current_stream().wait_stream(copy_stream)   # then x = nxt for the next pass\n"
    "nxt.record_stream(torch.cuda.current_stream())")
#: A forward pass over inputs (``inference``): its outputs read once, after the batch, not every N steps.
FORWARD_LOOP = Loop(capture_header="for batch in batches:          # {steps} or more inputs", capture_step="model(batch)",
                    header="for step, batch in enumerate(batches):", call="model({})", args="batch",
                    batch="batch = next(iter(batches)).cuda()", value="out", no_sync=NO_SYNC_INFERENCE,
                    forward_only=True)
CAPTURE_INFERENCE = ("# profile several forward passes after warm-up, one prof.step() after each:\n"
                     "from torch.profiler import profile, schedule, tensorboard_trace_handler, ProfilerActivity\n"
                     "with torch.inference_mode(), profile(\n"
                     "        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],\n"
                     "        schedule=schedule(wait=1, warmup=2, active=5, repeat=1),\n"
                     "        on_trace_ready=tensorboard_trace_handler('LOGDIR/run1')) as prof:\n"
                     f"    {FORWARD_LOOP.capture_header.format(steps=1 + 2 + 5)}\n"
                     f"        {FORWARD_LOOP.capture_step}\n"
                     "        prof.step()")
#: A long capture's fix: how torch.profiler records a short window rather than the whole run (its schedule).
LONG_WORDS = ("Record a short window, not the whole run: torch.profiler's schedule(wait, warmup, active, repeat=1) "
              "skips `wait` {steps}, warms up over `warmup` and records only the `active` ones, then stops: a few "
              "seconds of steady {steps} are enough.")
CAPTURE_SHORT_INFERENCE = ("# record 5 forward passes, not the whole run: skip 1, warm up 2, record 5, then stop "
                           "(repeat=1)\n" + CAPTURE_INFERENCE.split("\n", 1)[1])
CAPTURE_SERVING = ("# vLLM: profile a running server between two requests to its profiler routes\n"
                   "VLLM_TORCH_PROFILER_DIR=LOGDIR/run1 vllm serve MODEL ...\n"
                   "curl -X POST localhost:8000/start_profile   # send a steady load, then:\n"
                   "curl -X POST localhost:8000/stop_profile\n"
                   "# SGLang: SGLANG_TORCH_PROFILER_DIR=LOGDIR/run1, then POST /start_profile and /stop_profile")
def capture_cold(loop: Loop) -> str:
    """A cold start's capture advice: a schedule whose wait and warm-up steps cover the one-time start-up, around the
    job's own loop (h37-review5: cold_a100_alexnet's forward passes were told `run_one_step()` here and `model(batch)`
    by every other capture fix of the same report)."""
    return ("# skip the first calls (module loading, library and allocator start-up, compilation):\n"
            + _profiled((2, 3, 5), loop))

#: PyTorch 1.8-1.10 (the old trace schema): autocast and the GradScaler under ``torch.cuda.amp``, float16 only -- the
#: dtype every Tensor Core GPU of those releases runs; no word of bfloat16, which the fix does not use and a V100 or
#: Turing GPU lacks (h37-review14: resnet50_num_workers_0 on a V100 read "bfloat16 autocast on the GPU needs 1.10")
#: The words name no release as the trace's: the tag says only that its oldest may predate torch.autocast
#: (h37-review16: "PyTorch 1.8-1.10 spell it" would misname a trace stating 1.9)
_CUDA_AMP = "torch.cuda.amp's, which runs on releases before torch.autocast came with PyTorch 1.10"
_AUTOCAST_LEGACY_WORDS = ("Run the forward pass and the loss under float16 autocast with a GradScaler (" + _CUDA_AMP +
                          "): matmuls and convolutions then use the Tensor Cores, parameters stay float32{aside}.")
_AUTOCAST_LEGACY_CODE = (
    "scaler = torch.cuda.amp.GradScaler()\n"
    "with torch.cuda.amp.autocast():\n"
    "    loss = loss_fn(model(x), y)\n"
    "scaler.scale(loss).backward()\n"
    "scaler.step(optimizer)\n"
    "scaler.update()")
AUTOCAST_LEGACY = action(_AUTOCAST_LEGACY_WORDS.format(aside=""), _AUTOCAST_LEGACY_CODE)


#: The old releases' float16 fix on a GPU known to have bf16 Tensor Cores (the ``:bf16`` variant: an A100 or H100
#: under PyTorch 1.8-1.10), where the finding says bf16: torch.autocast, with its dtype, came with 1.10, so the bf16
#: form is named with its release beside the float16 one every release runs (h37-review15: review14 trimmed the
#: bfloat16 aside for a V100, leaving a bf16-capable GPU's finding saying "bf16" above a fix in float16 alone).
_BF16_FROM_1_10 = ("; from PyTorch 1.10 on this GPU can run bfloat16 instead{why}: "
                   "torch.autocast(device_type='cuda', dtype=torch.bfloat16)")


def autocast_legacy(loop: Loop, bf16: bool = False) -> Action:
    """PyTorch 1.8-1.10's float16 autocast around the loop's step (``torch.cuda.amp``); ``bf16``: the GPU has bf16
    Tensor Cores, and 1.10's bfloat16 form is named beside it."""
    # a forward pass has no loss to scale: "a training step also scales its loss" was told to a PyTorch 1.8-1.10
    # inference trace's forward passes on an H100 (h37-probe52x, issue #37); a step of no known kind keeps the aside
    forward = loop.forward_only
    aside = _BF16_FROM_1_10.format(why="" if forward else ", which needs no loss scaling") if bf16 else ""
    if loop.training:
        return action(_AUTOCAST_LEGACY_WORDS.format(aside=aside), _AUTOCAST_LEGACY_CODE) if bf16 else AUTOCAST_LEGACY
    scaler = (" (a forward pass needs no loss scaling)" if forward else
              "; a training step also scales its loss (torch.cuda.amp's gradient scaler)")
    return action(_STEP_AUTOCAST.format(dtype="float16 (" + _CUDA_AMP + ")", why=scaler + aside),
                  "with torch.cuda.amp.autocast():\n"
                  f"    {loop.value} = {loop.step()}")


SCRIPT_LEGACY = action(
    "torch.compile needs PyTorch 2.0 or newer (this trace was written by an older one): upgrade, or script the "
    "model meanwhile so its element-wise chains are fused.",
    "model = torch.jit.script(model)")
#: CUDA graphs before torch.compile: ``torch.cuda.make_graphed_callables`` (PyTorch 1.10 on; ``DEVICE_FEATURES`` notes
#: the version where the trace could be older) -- the one launch a step the launch-bound saving assumes, given as a
#: fix (h37-review11: resnet50_num_workers_4's legacy fixes held no graph beside "one launch a step (a graph's)")
GRAPHS_LEGACY = action(
    "Replay the model's launches from a CUDA graph: make_graphed_callables records its passes once (the forward, and "
    "the backward where it trains) and replays each with one launch (static shapes; copy each batch into the sample "
    "inputs' shapes).",
    "model = torch.cuda.make_graphed_callables(model, (sample_x,))   # after a few warm-up steps")
#: A forward pass's collectives before PyTorch 2.0 (no asynchronous tensor parallelism, no torch.compile): issued
#: asynchronously, waited for where their result is used -- ``dist``'s ``async_op`` is as old as the package.
FORWARD_COMM_LEGACY = action(
    "The forward pass waits for each collective (a tensor-parallel layer's AllReduce, gathered outputs): issue it "
    "with async_op=True and wait only where its result is needed, so compute that does not need it runs meanwhile, "
    "and send more inputs per collective (a larger batch) so fewer of them wait.",
    "work = dist.all_reduce(partial_out, async_op=True)   # returns at once\n"
    "other = independent_branch(x)                       # compute that does not need the sum\n"
    "work.wait()                                         # the sum, just before its use")
DDP_OVERLAP_LEGACY = action(
    "DDP overlaps each gradient bucket's AllReduce with the rest of the backward pass: keep buckets small enough "
    "to start early, reduce into the gradients in place, and with gradient accumulation skip the AllReduce of all "
    "but the last micro-batch (no_sync).",
    "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank], bucket_cap_mb=25,\n"
    "                                                  gradient_as_bucket_view=True)\n"
    "with model.no_sync():          # micro-batches 1..k-1 of an accumulation\n"
    "    loss_fn(model(x), y).backward()")
#: ``DDP_BUCKETS`` before PyTorch 2.0 (``static_graph`` a keyword from 1.11), for a step of no known kind.
DDP_BUCKETS_LEGACY = action(
    "If this is a DDP training step, DDP overlaps each gradient bucket's AllReduce with the rest of the backward "
    "pass: keep buckets small enough to start early and reduce into the gradients in place.",
    "model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank], bucket_cap_mb=25,\n"
    "                                                  gradient_as_bucket_view=True)")
#: Inference: no loss, no GradScaler, no backward.
HALF_INFERENCE = action(
    "Run inference in bfloat16: cast the model once (or wrap the forward in autocast), so matmuls and convolutions "
    "use the Tensor Cores; no loss scaling is needed without a backward pass.",
    "model = model.to(torch.bfloat16).eval()\n"
    "with torch.inference_mode():\n"
    "    out = model(x.to(torch.bfloat16))")
HALF_INFERENCE_FP16 = action(
    "Run inference in float16 ({gpu_fp16}): cast the model once, so matmuls and "
    "convolutions use the Tensor Cores; no loss scaling is needed without a backward pass.",
    "model = model.half().eval()\n"
    "with torch.inference_mode():\n"
    "    out = model(x.half())")
GRAPHS_INFERENCE = action(
    "Capture the forward pass as CUDA graphs so the host launches it in one call: torch.compile with "
    "mode=\"reduce-overhead\" (fixed input shapes, or a few padded sizes).",
    "model = torch.compile(model, mode=\"reduce-overhead\")")
BATCH_INFERENCE = action(
    "Batch more inputs per forward pass: the per-pass host cost (Python, launches) is paid once for the whole batch.",
    "out = model(torch.stack(inputs))        # instead of one input per call")
def _between_passes(ahead: str) -> str:
    """Preparing the next input between forward passes, ``ahead`` what is done ahead and how (the copies' levers, less
    those the trace shows in use)."""
    return f"Prepare the next input while the GPU runs this one ({ahead}): the GPU then never waits between forward passes."


BETWEEN_PASSES = action(
    _between_passes("tokenise and copy ahead, pinned memory, non_blocking copies"),
    "x = x.pin_memory().to('cuda', non_blocking=True)")


def _loader_inference(into: str) -> str:
    """The inference loader fix's words, ``into`` where its workers put the inputs (as :func:`_loader`)."""
    return (f"Load the inputs in DataLoader worker processes{into}, so the next batch is ready when a forward pass "
            "ends: without workers the loop makes each batch between passes while the GPU waits.")


LOADER_INFERENCE = action(
    _loader_inference(", into pinned memory"),
    "loader = torch.utils.data.DataLoader(dataset, batch_size=bs, num_workers=8, pin_memory=True,\n"
    "                                     persistent_workers=True)\n"
    "for x, _ in loader:\n"
    "    out = model(x.to('cuda', non_blocking=True))")
HEADROOM_INFERENCE = action(
    "Raise the inference batch size (or the number of requests served together) until peak memory nears capacity: "
    "the per-pass cost is then shared by more inputs.",
    "print(torch.cuda.max_memory_allocated() / torch.cuda.get_device_properties(0).total_memory)")

CAST_ONCE = action(
    "Keep the weights in the 16-bit dtype instead of letting autocast cast them again on every call: cast the model "
    "once (inference), or let torch.compile fuse the casts into the kernels next to them (training keeps fp32 master "
    "weights in the optimizer).",
    "model = torch.compile(model)   # training: casts fused into their neighbours")
# ---- memory (issue #29) -------------------------------------------------------------------------------------------
CHECKPOINT = action(
    "Recompute activations in the backward pass instead of keeping them from the forward (activation checkpointing): "
    "wrap each block in torch.utils.checkpoint; a Hugging Face model: model.gradient_checkpointing_enable(); under "
    "FSDP: apply_activation_checkpointing.",
    "from torch.utils.checkpoint import checkpoint\n"
    "def forward(self, x):\n"
    "    for block in self.blocks:\n"
    "        x = checkpoint(block, x, use_reentrant=False)   # keeps only each block's input\n"
    "    return self.head(x)")
SELECTIVE_CHECKPOINT = action(
    "Or recompute only the cheap ops (selective checkpointing, PyTorch 2.4+): keep the matmuls' outputs, recompute "
    "the element-wise ops around them -- most of the memory for a few percent more compute.",
    "from torch.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts, CheckpointPolicy\n"
    "def policy(ctx, op, *args, **kwargs):\n"
    "    return CheckpointPolicy.MUST_SAVE if op in (torch.ops.aten.mm.default, torch.ops.aten.addmm.default) \\\n"
    "        else CheckpointPolicy.PREFER_RECOMPUTE\n"
    "x = checkpoint(block, x, use_reentrant=False, context_fn=lambda: create_selective_checkpoint_contexts(policy))")
EXPANDABLE = action(
    "Let the caching allocator grow segments instead of carving fixed ones: with expandable segments freed space is "
    "reusable by a request of any size, so reserved memory stays close to allocated.",
    "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
SHARD_STATE = action(
    "Shard parameters, gradients and optimizer state over the data-parallel GPUs (FSDP full sharding, as ZeRO-3) "
    "instead of a full copy on each GPU: each keeps 1/N of them.",
    "from torch.distributed.fsdp import fully_shard    # PyTorch 2.4+ (FSDP2)\n"
    "for block in model.blocks:\n"
    "    fully_shard(block)\n"
    "fully_shard(model)")
OFFLOAD_STATE = action(
    "On fewer GPUs: keep the optimizer state small or off the GPU -- an 8-bit optimizer, or the state and parameters "
    "offloaded to host memory between uses (FSDP's CPUOffload, DeepSpeed ZeRO-Offload).",
    "from torch.distributed.fsdp import CPUOffload, FullyShardedDataParallel as FSDP\n"
    "model = FSDP(model, cpu_offload=CPUOffload(offload_params=True))")
SMALLER_MICROBATCH = action(
    "Run a smaller micro-batch and keep the batch size with gradient accumulation: activations shrink with the "
    "micro-batch, the update stays the same.",
    "for i, (x, y) in enumerate(loader):          # micro-batches of batch // k\n"
    "    (loss_fn(model(x), y) / k).backward()\n"
    "    if (i + 1) % k == 0:\n"
    "        opt.step(); opt.zero_grad(set_to_none=True)")
GRADS_FREED = action(
    "Free gradients as soon as the optimizer used them (zero_grad(set_to_none=True), the default since 2.0), and "
    "shard them with the optimizer state (ZeRO-2: FSDP's SHARD_GRAD_OP) on several GPUs.",
    "opt.zero_grad(set_to_none=True)\n"
    "model = FSDP(model, sharding_strategy=ShardingStrategy.SHARD_GRAD_OP)")
INFERENCE_MEMORY = action(
    "Hold fewer bytes per GPU: load the weights in bfloat16 (or quantized: int8 / fp8), split the model over several "
    "GPUs, or lower the batch (and a KV cache's length).",
    "model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16, device_map='auto')")
#: A forward pass's peak held mostly by what it made before the pass (``memory_near_capacity:held@inference``): the
#: weights, in fewer bytes each or split over GPUs -- transformers' ``BitsAndBytesConfig`` and ``device_map``, vLLM's
#: ``tensor_parallel_size`` and ``quantization`` (fp8 weights) -- never the optimizer state a forward does not have.
INFERENCE_WEIGHTS = action(
    "Hold the weights in fewer bytes per GPU: load them quantised (int8, fp8 or 4-bit rather than 16 or 32 bits "
    "each), or split the model over several GPUs (tensor parallelism; device_map=\"auto\" places its layers on "
    "them in turn).",
    "model = AutoModelForCausalLM.from_pretrained(name, device_map=\"auto\",\n"
    "    quantization_config=BitsAndBytesConfig(load_in_8bit=True))      # transformers: int8 weights\n"
    "llm = LLM(model=name, tensor_parallel_size=2, quantization=\"fp8\")   # vLLM: fp8 weights over 2 GPUs")
#: Fixes of a peak near capacity that hold whatever the job (``@any_work``: neither training nor a confident
#: forward): what holds the bytes, and fewer of them per GPU -- never a training lever (sharding the optimizer state,
#: recomputing in a backward) said to a job whose capture shows neither (h37-memkind36: wild/lost_kernels_synced_a40,
#: one analysis call of no known kind, was told "shard parameters, gradients and optimizer state with FSDP").
HELD_BYTES = action(
    "Find what the memory made before the step (or pass) holds -- the model's weights (parameters x bytes each), its buffers, "
    "tensors kept from earlier calls -- and keep fewer of those bytes on this GPU: free the tensors the job no "
    "longer uses, keep weights it does not train in a 16-bit dtype, or split the model over several GPUs (tensor or "
    "pipeline parallelism).",
    "weights = sum(p.numel() * p.element_size() for p in model.parameters())\n"
    "print(f\"weights {weights / 2**30:.1f} GiB of {torch.cuda.memory_allocated() / 2**30:.1f} GiB allocated\")\n"
    "print(torch.cuda.memory_summary(abbreviated=True))   # what else the allocator holds")
_FEWER_INPUTS = "Run fewer inputs (or shorter sequences) in each pass: the activations grow with them, the weights do not"
_FEWER_INPUTS_CODE = ("for part in batch.split(len(batch) // 2):   # half the activations at a time\n"
                      "    out = model(part)")
SMALLER_PASS = action(
    f"{_FEWER_INPUTS} (a training loop keeps its batch by accumulating gradients over the smaller passes).",
    _FEWER_INPUTS_CODE)
#: The same to a forward pass (``@inference``): no training loop's words to a job that has none.
FORWARD_SMALLER_PASS = action(f"{_FEWER_INPUTS}.", _FEWER_INPUTS_CODE)
MEMORY_CAP = action(
    "Raise or remove the process's memory cap where the GPU is this job's alone: "
    "torch.cuda.set_per_process_memory_fraction limits what the caching allocator may reserve, whatever the GPU has "
    "free (look for it in the training script and in the launcher's or framework's settings).",
    "torch.cuda.set_per_process_memory_fraction(0.95)   # or drop the call: the allocator may use the whole GPU")
#: ``Module._apply``'s frame as a memory snapshot records it (``.../torch/nn/modules/module.py:957 _apply``): the
#: function ``.to()``, ``.cuda()`` and ``.half()`` move every parameter through -- the parameter first, then its
#: ``.grad`` where it has one, from a later line of the same function (the lines differ by version, their order not).
_MODULE_APPLY = re.compile(r"(?:^|[/\\])torch[/\\]nn[/\\]modules[/\\]module\.py:(\d+) _apply$")


def module_apply_line(frame: str) -> int | None:
    """The line of a ``Module._apply`` frame ("file.py:123 function"), None for any other frame."""
    m = _MODULE_APPLY.search(frame)
    return int(m.group(1)) if m else None


DROP_GRADS = action(
    "Drop the gradients before moving the model to the GPU: a model that is only evaluated needs none, yet "
    "Module.to() moves each parameter's .grad with it. Set them to None (or load the weights from a state_dict, which "
    "holds no gradients) and turn autograd off for the parameters.",
    "model.zero_grad(set_to_none=True)     # p.grad = None for every parameter\n"
    "model.requires_grad_(False)\n"
    "model = model.to(device).eval()")


NO_GRAPH = action(
    "Run the forward pass without autograd's graph: under torch.inference_mode() (or torch.no_grad()) no tensor is "
    "kept for a backward, so each layer's memory is freed as soon as the next has used it. In a training script, "
    "wrap evaluation (and any forward-only benchmark) the same way.",
    "model.eval()\n"
    "with torch.inference_mode():          # or torch.no_grad() where the outputs feed autograd later\n"
    "    out = model(x)")
#: autocast caches its 16-bit cast of an fp32 parameter that requires grad (a tensor's flag, which torch.no_grad()
#: leaves on) until the outermost autocast region exits (``aten/src/ATen/autocast_mode.cpp``, ``cached_cast``):
#: ``cache_enabled=False`` or parameters that require no grad make no cache; a model cast once holds no fp32 weights.
NO_CAST_CACHE = action(
    "Keep no cache of the weights' 16-bit copies in a run that never trains: autocast keeps its cast of every fp32 "
    "weight that requires grad until the autocast region exits, and torch.no_grad() does not turn that off. Turn "
    "autograd off for the parameters (or pass cache_enabled=False), and each copy is freed once its layer has used "
    "it; or, for inference only, cast the model once to bfloat16 (or .half()), which also drops the fp32 weights.",
    "model.requires_grad_(False)          # autocast caches casts only of weights that require grad\n"
    "with torch.no_grad(), torch.autocast(device_type='cuda', dtype=torch.bfloat16, cache_enabled=False):\n"
    "    out = model(x)\n"
    "# or, inference only: one 16-bit copy of the weights and no fp32 ones\n"
    "model = model.to(torch.bfloat16)")
#: The file a snapshot's capacity is read from (``formats/snapshot/capacity``): beside the dump, named as the snapshot
#: without its suffix and this one (``snapshot.pickle`` or ``snapshot.pickle.gz`` -> ``snapshot.capacity.json``).  Its
#: home is here, where the fix that tells users to write it is: the reader (a later stage) takes the name from here,
#: so the advice and the file read cannot drift apart.
CAPACITY_SUFFIX = ".capacity.json"
#: The capacity file's keys: ``torch.cuda.mem_get_info()``'s two numbers (``free, total``), in bytes.
CAPACITY_TOTAL, CAPACITY_FREE = "total_bytes", "free_bytes"
RECORD_CAPACITY = action(
    "Record the GPU's capacity next to the snapshot, so its peak can be judged against it: save "
    f"torch.cuda.mem_get_info() (free and total bytes) beside the dump as <snapshot name>{CAPACITY_SUFFIX} "
    "(the snapshot's name without .pickle or .pickle.gz), which the Advisor reads with the snapshot, or profile with "
    "torch.profiler.profile(profile_memory=True), whose trace records the device's memory.",
    "free, total = torch.cuda.mem_get_info()\n"
    "torch.cuda.memory._dump_snapshot(\"snapshot.pickle\")\n"
    f"json.dump({{\"{CAPACITY_TOTAL}\": total, \"{CAPACITY_FREE}\": free}}, open(\"snapshot{CAPACITY_SUFFIX}\", \"w\"))")
#: a leak's fixes (``memory_leak``): what a loop keeps past its iteration is a tensor it holds on to
LEAK_ITEM = action(
    "Accumulate numbers, not tensors: `total_loss += loss` keeps every iteration's loss with its autograd graph (and "
    "the tensors that graph saved); add `loss.item()` -- or `loss.detach()` to stay on the GPU -- instead, and run "
    "evaluation under `torch.no_grad()`.",
    "total_loss += loss.item()          # not: total_loss += loss\n"
    "with torch.no_grad():\n"
    "    val_loss += criterion(model(xv), yv).item()")
LEAK_LIST = action(
    "Do not keep outputs in a list across iterations: append `out.detach().cpu()` (or only the numbers you need), "
    "so the GPU block is freed when the iteration ends.",
    "outputs.append(out.detach().cpu())   # not: outputs.append(out)")
#: the same to a forward-only loop (``memory_leak@inference``): it has no loss to ``.item()`` and no graph to drop
#: under ``no_grad``; what it keeps is each pass's result, on the GPU
LEAK_RESULTS = action(
    "Move each pass's result off the GPU as it is made: `preds.append(out)` keeps every pass's output on the GPU "
    "until the list is dropped; append `out.cpu()` (or the numbers you need: `out.argmax(-1).cpu()`), or write the "
    "results into one tensor allocated before the loop, and run the loop under `torch.inference_mode()` so no "
    "output holds a graph.",
    "with torch.inference_mode():\n"
    "    for x in loader:\n"
    "        preds.append(model(x.cuda()).cpu())   # not: preds.append(model(x.cuda()))")
#: PyTorch's single-process data parallelism (``nn.DataParallel``): every call replicates the module onto each GPU
#: (``replicate.py``), scatters the batch (``scatter_gather.py``), runs the replicas (``parallel_apply.py``) and gathers
#: their outputs on ``output_device`` (GPU 0 by default) -- all from ``torch/nn/parallel/``; its replicas'
#: allocations carry those files in their Python frames.  ``DistributedDataParallel`` (``distributed.py``) runs one
#: process per GPU, so its snapshot holds one device.
_DATA_PARALLEL_FILE = re.compile(
    r"(?:^|[/\\])torch[/\\]nn[/\\]parallel[/\\](?:data_parallel|parallel_apply|replicate|scatter_gather)\.py$")


#: A Python frame of ``torch.cuda``'s own package (``torch/cuda/memory.py: empty_cache``, ``torch/cuda/streams.py``,
#: ``torch/cuda/graphs.py``), on any platform's path
_CUDA_API_FILE = re.compile(r"(?:^|[\\/])torch[\\/]cuda[\\/]")


def cuda_api_file(filename: str) -> bool:
    """Whether a Python frame's file is ``torch.cuda``'s own: the program called PyTorch's CUDA API there -- a CUDA
    build's, or ROCm's, which keeps the ``torch.cuda`` names -- so ``torch.cuda`` and ``PYTORCH_CUDA_ALLOC_CONF``
    are its words, whatever stream its work ran on (an Ascend build's Python is ``torch_npu``'s, an XPU's
    ``torch.xpu``)."""
    return bool(_CUDA_API_FILE.search(filename))


def data_parallel_file(filename: str) -> bool:
    """Whether a Python frame's file is ``nn.DataParallel``'s own (:data:`_DATA_PARALLEL_FILE`)."""
    return bool(_DATA_PARALLEL_FILE.search(filename))


#: one process's devices holding unequal memory (``memory_imbalance``): under ``nn.DataParallel`` the replicas differ
#: by what the one process puts on GPU 0 (the module's master copy, the gathered outputs, the loss) and by how the
#: batch was split; one process per GPU with equal shards holds the same on each
DDP_NOT_DP = action(
    "Replace nn.DataParallel with DistributedDataParallel: one process per GPU, each holding its own model copy, "
    "its own shard of the batch and its own outputs and loss, so no GPU gathers the others' outputs (DataParallel "
    "also replicates the model from GPU 0 every iteration).",
    "# torchrun --nproc_per_node=NUM_GPUS train.py\n"
    "torch.distributed.init_process_group(\"nccl\")\n"
    "rank = int(os.environ[\"LOCAL_RANK\"]); torch.cuda.set_device(rank)\n"
    "model = torch.nn.parallel.DistributedDataParallel(model.cuda(rank), device_ids=[rank])\n"
    "loader = DataLoader(ds, batch_size=per_gpu_batch, sampler=DistributedSampler(ds))")
BALANCE_BATCH = action(
    "Give each replica the same bytes of the batch, not the same count: DataParallel scatters every input along its "
    "first dimension in equal chunks, so where the items differ in size (graphs, sequences of different lengths) one "
    "replica gets far more; sort or bucket the items by size so each chunk holds as much, or pad them to one size.",
    "batch = sorted(items, key=lambda it: it.num_nodes)          # sizes interleaved across the replicas\n"
    "chunks = [batch[i::n_gpus] for i in range(n_gpus)]")
BALANCE_GATHER = action(
    "Keep the gathered outputs and the loss off the fullest GPU: compute the loss inside the module's forward (each "
    "replica returns its loss, and only those scalars are gathered), or gather on another device "
    "(DataParallel(output_device=...)).",
    "class WithLoss(torch.nn.Module):\n"
    "    def __init__(self, model, loss_fn): super().__init__(); self.model, self.loss_fn = model, loss_fn\n"
    "    def forward(self, x, y): return self.loss_fn(self.model(x), y).unsqueeze(0)\n"
    "loss = torch.nn.DataParallel(WithLoss(model, loss_fn))(x, y).mean()")
BALANCE_SPLIT = action(
    "Balance what each GPU holds: where the model is split across the GPUs (device_map=\"auto\", pipeline stages), "
    "cap each GPU's share (max_memory) or move layers off the fullest one; where each GPU runs its own part of the "
    "batch, give each the same bytes of it.",
    "model = AutoModelForCausalLM.from_pretrained(name, device_map=\"auto\",\n"
    "                                             max_memory={0: \"30GiB\", 1: \"30GiB\", 2: \"30GiB\"})")
MEMORY_FIXES = {
    "memory_imbalance": (BALANCE_SPLIT,),
    "memory_imbalance:data_parallel": (DDP_NOT_DP, BALANCE_GATHER),
    "memory_imbalance:data_parallel_split": (BALANCE_BATCH, DDP_NOT_DP),
    "memory_imbalance:reserved": (EXPANDABLE,),
    "memory_leak": (LEAK_ITEM, LEAK_LIST),
    "memory_leak@inference": (LEAK_RESULTS,),
    "activation_memory": (CHECKPOINT, SELECTIVE_CHECKPOINT),
    "activation_memory:forward_kept": (NO_GRAPH,),
    "activation_memory:grads_kept": (DROP_GRADS,),
    "activation_memory:cast_cache": (NO_CAST_CACHE,),
    "activation_memory:capacity_unknown": (RECORD_CAPACITY,),
    "memory_fragmentation:capacity_unknown": (RECORD_CAPACITY,),
    "memory_leak:capacity_unknown": (RECORD_CAPACITY,),
    "capture_quality:capacity_unknown": (RECORD_CAPACITY,),
    "memory_fragmentation": (EXPANDABLE,),
    "memory_near_capacity": (CHECKPOINT, SHARD_STATE, OFFLOAD_STATE),
    "memory_near_capacity:activations": (CHECKPOINT, SMALLER_MICROBATCH),
    "memory_near_capacity:held": (SHARD_STATE, OFFLOAD_STATE),
    "memory_near_capacity:optimizer": (OFFLOAD_STATE, SHARD_STATE),
    "memory_near_capacity:gradients": (GRADS_FREED, SMALLER_MICROBATCH),
    "memory_near_capacity:other": (SMALLER_MICROBATCH,),
    "memory_near_capacity@inference": (INFERENCE_MEMORY,),
    "memory_near_capacity@any_work": (HELD_BYTES, SMALLER_PASS),
    "memory_near_capacity:held@any_work": (HELD_BYTES,),
    "memory_near_capacity:activations@any_work": (SMALLER_PASS, NO_GRAPH),
    "memory_near_capacity:other@any_work": (SMALLER_PASS,),
    "memory_near_capacity@serving": (action(
        "A serving engine takes most of the GPU for its KV cache by design (vLLM's --gpu-memory-utilization, "
        "SGLang's --mem-fraction-static): a peak near capacity is its plan, not a leak. Lower the fraction only if "
        "other processes share the GPU or it runs out of memory at start-up.",
        "vllm serve MODEL --gpu-memory-utilization 0.85"),),
    "oom_snapshot": (SMALLER_MICROBATCH,),
    "oom_snapshot:fragmentation": (EXPANDABLE,),
    "oom_snapshot:memory_cap": (MEMORY_CAP,),
    "oom_snapshot:activations": (CHECKPOINT, SMALLER_MICROBATCH),
    "oom_snapshot:held": (SHARD_STATE, OFFLOAD_STATE),
    "oom_snapshot:optimizer": (OFFLOAD_STATE, SHARD_STATE),
    "oom_snapshot:gradients": (GRADS_FREED, SMALLER_MICROBATCH),
    "oom_snapshot:other": (SMALLER_MICROBATCH,),
    # an OOM of a forward pass or of work of no known kind: what its live bytes are, fewer of them -- never the
    # optimizer state's sharding (variants only: a cap, fragmentation, a cache, the scores keep their own fixes) or a backward's recompute (h37-memkind36: synthetic.memsnapshot.oom_weights, read
    # "inference", was told "Shard parameters, gradients and optimizer state ... (FSDP ...)")
    # -- to a forward pass in its own words (no training loop's accumulation), as memory_near_capacity's
    **{f"oom_snapshot{v}@{tag}": fix for tag in ("inference", "any_work")
       for fewer in ((FORWARD_SMALLER_PASS if tag == "inference" else SMALLER_PASS),)
       for v, fix in ((":held", (INFERENCE_MEMORY if tag == "inference" else HELD_BYTES,)),
                      (":activations", (fewer, NO_GRAPH)), (":other", (fewer,)))},
    # an OOM whose live forward tensors are autograd's graph of a pass with no backward (``_memory.graph_kept``):
    # not recording the graph frees it whole; fewer inputs per pass only shrink it
    "oom_snapshot:forward_kept": (NO_GRAPH, FORWARD_SMALLER_PASS),
}
FIXES.update(MEMORY_FIXES)

#: The sync fix to a compiled program that links libtorch (``native_host``: no Python process in the capture).
NO_SYNC_CPP = action(
    "Keep host reads of tensor values (tensor.item<T>(), .cpu(), a branch on a tensor's value) out of the loop: each "
    "one waits for the GPU to finish (aten::_local_scalar_dense + a device-to-host copy). Accumulate on the GPU and "
    "read values every N iterations.",
    "auto running = torch::zeros({}, torch::kCUDA);\n"
    "for (int64_t i = 0; i < iters; ++i) {\n"
    "  running += step(x).detach().sum();   // stays on the GPU\n"
    "  if (i % 100 == 0) std::cout << running.item<float>() / 100 << '\\n';   // one sync per 100 iterations\n"
    "}", "text")

#: The capture's window opened with the GPU on earlier work (capture_quality's ``before_capture``): start it idle.
BEFORE_CAPTURE = ("Start the profiler with the GPU idle, so the window holds whole steps and none of the work before "
                  "it: torch.cuda.synchronize() right before the profiler starts (a profiler recording the CPU only "
                  "stops without waiting for the GPU), or let its schedule skip a step (wait) so the window opens "
                  "between steps.")
IDLE_FIRST = "torch.cuda.synchronize()   # the GPU done with earlier work before the window opens\n"

#: Fixes for a job that is not a training loop (``@inference``), for PyTorch before 1.11 (``@legacy``) and for a
#: compiled program linking libtorch (``@native_host``): they replace every fix of the rule (``Framework.for_job``).
JOB_FIXES = {
    "allocator_churn": (action(
        "Turn PyTorch's caching allocator back on (PYTORCH_NO_CUDA_MEMORY_CACHING=1 turns it off), and keep tensor "
        "shapes the same from step to step so cached blocks fit.",
        "unset PYTORCH_NO_CUDA_MEMORY_CACHING\n"
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True   # fewer, growable segments"),),
    # most of the allocator's time is pinned host memory taken and given back (h37-hostalloc32)
    "allocator_churn:pinned": (action(
        "Pin host buffers once and reuse them: allocate the staging tensor with pin_memory=True before the loop and "
        "copy each batch into it, rather than pinning fresh memory every step (tensor.pin_memory() or "
        "torch.empty(..., pin_memory=True) inside the loop): page-locking memory is slow.",
        "staging = [torch.empty(max_shape, dtype=dtype, pin_memory=True) for _ in range(2)]   # pinned once\n"
        "done = [torch.cuda.Event(), torch.cuda.Event()]\n"
        "for i, batch in enumerate(loader):\n"
        "    buf, ev = staging[i % 2], done[i % 2]\n"
        "    ev.synchronize()                 # the copy that last read this buffer has finished\n"
        "    buf[:len(batch)].copy_(batch)\n"
        "    x = buf[:len(batch)].to(\"cuda\", non_blocking=True)\n"
        "    ev.record()"),),
    # the program's own torch.cuda.empty_cache() holds the step's cudaFree calls: the cache is on, and emptied
    "allocator_churn:empty_cache": (action(
        "Drop torch.cuda.empty_cache() from the loop: it hands every cached block back to the driver (cudaFree, which "
        "synchronizes the device), so the next pass asks the driver for the same memory again (cudaMalloc). The "
        "caching allocator reuses freed blocks by itself; a benchmark that wants a cold L2 cache can overwrite a "
        "buffer on the GPU instead.",
        "flush = torch.empty(64 << 20, dtype=torch.int8, device=\"cuda\")   # a benchmark's cold L2: allocated once\n"
        "for batch in loader:\n"
        "    flush.zero_()                # overwrites the L2 cache, frees nothing\n"
        "    out = model(batch)\n"
        "    # torch.cuda.empty_cache()   # removed: the next pass would cudaMalloc its memory again"),),
    "dtype_casts": (CAST_ONCE,),
    "dtype_casts@inference": (action(
        "Cast the model to bfloat16 once instead of running it under autocast, which casts the fp32 weights again on "
        "every forward pass.", "model = model.to(torch.bfloat16).eval()   # then no torch.autocast around the forward"),),
    "dtype_casts:fp16@inference": (action(
        "Cast the model to float16 once instead of running it under autocast, which casts the fp32 weights again on "
        "every forward pass.", "model = model.half().eval()   # then no torch.autocast around the forward"),),
    "dtype_casts@legacy": (action("Keep the weights in 16 bits between calls (model.half() for inference) instead of "
                                  "casting them on every call."),),
    "host_sync@inference": (NO_SYNC_INFERENCE,),
    "step_gaps@native_host": (NO_SYNC_CPP,),
    "host_sync@native_host": (NO_SYNC_CPP,),
    "host_op_placement@inference": (NO_SYNC_INFERENCE,),
    # a forward pass's copies are not all its read-backs: the looped ``excessive_memcpy`` / ``:host_device`` fixes
    # (the forward loop's ``no_sync``) answer a read of its outputs; its uploads of inputs have their own (h37-probe42s)
    "excessive_memcpy:h2d@inference": (NON_BLOCKING, PREFETCH_INPUT),
    "excessive_memcpy:h2d_exposed@inference": (PREFETCH_INPUT,),
    "excessive_memcpy:h2d_own_stream@inference": (PREFETCH_AHEAD_INPUT,),
    "excessive_memcpy:pageable@inference": (PIN_MEMORY,),  # pinned memory serves inference the same
    "excessive_memcpy:pageable_d2h@inference": (PIN_READBACK,),
    "excessive_memcpy:pinned@inference": (FEWER_BYTES,),
    # a forward-only job sharded with FSDP (FastVideo's text encoder): the same uploads, before each forward only
    "excessive_memcpy:param_upload@inference": (action(
        "The copies to the GPU are FSDP's uploads of parameters offloaded to host memory: every layer's parameters "
        "cross PCIe before its forward, on every call. Where the sharded parameters fit in GPU memory, turn the "
        "offload off (or load the weights on the GPU for inference); where they do not, prefetch the next layers so "
        "each upload overlaps the current layer's compute.",
        "fully_shard(block)   # FSDP2: without offload_policy=CPUOffloadPolicy() the parameters stay on the GPU\n"
        "block.set_modules_to_forward_prefetch([next_block])   # if offload must stay: upload during this block\n"
        "# FSDP1: FSDP(model, cpu_offload=CPUOffload(offload_params=False), forward_prefetch=True)"),),
    "step_gaps@inference": (BETWEEN_PASSES, BATCH_INFERENCE),
    "step_gaps:creation@inference": (MADE_ON_GPU,),
    "input_bound:creation@inference": (MADE_ON_GPU,),
    "input_bound:frames@inference": (PREPARE_OFF_PATH,),
    "input_bound@inference": (BETWEEN_PASSES, BATCH_INFERENCE),
    # the capture shows the DataLoader in the main process: its batches are made between the forward passes
    "input_bound:pipeline@inference": (LOADER_INFERENCE, BETWEEN_PASSES),
    "launch_bound@inference": (GRAPHS_INFERENCE, BATCH_INFERENCE),
    "capture_quality:submission@inference": (GRAPHS_INFERENCE, BATCH_INFERENCE),
    "mixed_precision_off@inference": (HALF_INFERENCE,),
    "mixed_precision_off:fp16@inference": (HALF_INFERENCE_FP16,),
    "tensor_core_unused@inference": (HALF_INFERENCE,),
    "tensor_core_unused:fp16@inference": (HALF_INFERENCE_FP16,),
    "tensor_core_unused:tf32@inference": (TF32,),
    "tensor_core_unused:conv@inference": (CHANNELS_LAST,),
    "tensor_core_unused:search@inference": (CONV_SEARCH,),
    "mfu_low:conv@inference": (CHANNELS_LAST, CONV_SEARCH),
    "batch_size_headroom@inference": (HEADROOM_INFERENCE,),
    "capture_quality@inference": (action("Profile several forward passes after warm-up, with prof.step() after each.",
                                         CAPTURE_INFERENCE),),
    "capture_quality:before_capture@inference": (action(BEFORE_CAPTURE, IDLE_FIRST + CAPTURE_INFERENCE),),
    "capture_quality@serving": (action("Profile the running server under a steady load through its profiler routes, "
                                       "not its start-up.", CAPTURE_SERVING),),
    "capture_quality:long@inference": (action(LONG_WORDS.format(steps="forward passes"), CAPTURE_SHORT_INFERENCE),),
    "loss_scaling_gaps@cuda_amp": (AUTOCAST_LEGACY,),
    "launch_bound@legacy": (SCRIPT_LEGACY, GRAPHS_LEGACY,
                            action("Or raise the batch size, so each launch does more GPU work.")),
    "xla_not_used@legacy": (SCRIPT_LEGACY,),
    "eager_execution@legacy": (SCRIPT_LEGACY,),
}
FIXES.update(JOB_FIXES)
FIXES.update(FORWARD_COMM_FIXES)

#: Finding every sync: PyTorch's sync debug mode.
SYNC_DEBUG = action(
    "Find every sync PyTorch makes: the CUDA sync debug mode warns at each one (.item(), .cpu(), torch.nonzero, "
    "indexing with a GPU mask, printing a tensor).", "torch.cuda.set_sync_debug_mode('warn')")


#: A data-parallel job's process group on the GPUs' own collective library, its model and tensors on its GPU: the fix
#: of a window whose collectives ran on a CPU backend (``{backend}``: Gloo, MPI; ``capture_quality:collectives_only/cpu``).
#: NCCL's backend name is ROCm's PyTorch's too (RCCL under it); an Intel GPU's is ``xccl``.
GPU_PROCESS_GROUP = action(
    "If the job is meant to train on GPUs: make its process group on the GPUs' own collective library, which moves "
    "GPU tensors between them, and move the model and every tensor of the step to the rank's GPU -- {backend} moves "
    "host memory, so its collectives ran on the CPU.",
    "local_rank = int(os.environ['LOCAL_RANK'])\n"
    "torch.cuda.set_device(local_rank)\n"
    "dist.init_process_group(backend='nccl')   # the GPUs' library: NCCL (RCCL on ROCm), not a CPU backend\n"
    "model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])\n"
    "x, y = x.to(local_rank, non_blocking=True), y.to(local_rank, non_blocking=True)   # each input of the step")


def comm_legacy(loop: Loop) -> tuple[Action, ...]:
    """The exposed collectives' fixes for PyTorch before 2.0, by the job's work: DDP's overlap with the backward pass
    for a training step, the forward's own collectives issued asynchronously for forward passes, both for a step of
    no known kind (DDP's hedged).  Why composed here: ``comm_exposed@legacy``, applied after ``@inference``, replaced
    a forward pass's fix with DDP's ``.backward()`` loop (h37-probe52x *Left* 5: a 2-rank inference job)."""
    if loop.training:
        return (DDP_OVERLAP_LEGACY,)
    if loop.forward_only:
        return (FORWARD_COMM_LEGACY,)
    return (DDP_BUCKETS_LEGACY, FORWARD_COMM_LEGACY)


def looped_fixes(loop: Loop, per_rank: bool) -> dict[str, tuple[Action, ...]]:
    """The fixes whose code runs the job's own loop or quotes the capture advice, composed for one job
    (``Framework.looped``): its loop by its kind, "one trace per rank" only where it has ranks."""
    advice = capture(loop, per_rank)
    reads, confirm = no_item(loop), confirm_input(loop)
    return {
        "input_bound": (LOADER, NON_BLOCKING, confirm),
        "input_bound:parallel": (loader_workers_slow(loop), confirm),
        "input_bound:own_range": (OWN_FETCH_RANGE, confirm),
        "input_bound:own_range_serial": (OWN_FETCH_RANGE_SERIAL, LOADER, confirm),
        "host_op_placement": (reads,),
        "host_sync": (reads, SYNC_DEBUG),
        "host_sync:read_in_op": (OUTPUT_SIZE_READ, reads),
        "host_sync@legacy": (reads,),
        "comm_exposed@legacy": comm_legacy(loop),
        "excessive_memcpy": (reads, NON_BLOCKING),
        "excessive_memcpy:host_device": (reads,),
        "step_gaps": (reads, LOADER),
        "step_gaps:host_work": (reads,),
        "step_gaps:private_threads": (reads,),
        "step_gaps:shared_threads": (reads,),
        "capture_quality": (action("Profile a short steady-state window instead of the whole run.", advice),),
        "capture_quality:unseen": (action(
            "Record whole steps with the GPU's activity, so the GPU work the host waits for is in the trace: "
            "ProfilerActivity.CUDA on, the profiler started before a step's first launch and stepped at each step's end "
            "(prof.step()); if the GPU still sits idle there, another process shares it (nvidia-smi lists each GPU's "
            "processes).", advice),),
        "capture_quality:before_capture": (action(BEFORE_CAPTURE, IDLE_FIRST + advice),),
        "capture_quality:no_gpu": (action("Check that PyTorch sees the GPU and that ProfilerActivity.CUDA is among the profiler's activities, then "
                                          "profile steady-state steps.",
                                          "print(torch.cuda.is_available(), torch.cuda.device_count())\n" + advice),),
        "capture_quality:gpu_unused": (action("Move the model and every input of the step to the GPU PyTorch sees, "
                                              "then profile steady-state steps with ProfilerActivity.CUDA on.",
                                              "print(next(model.parameters()).device)   # cpu: the model never "
                                              "moved\ndevice = torch.device('cuda')\nmodel = model.to(device)\n"
                                              "x = x.to(device, non_blocking=True)   # each input of the step\n"
                                              + advice),),
        # the same, its collectives recorded on a CPU backend ({backend}): the process group moves to the GPUs' library
        "capture_quality:gpu_unused/cpu_collectives": (GPU_PROCESS_GROUP, action(
            "Then profile steady-state steps with ProfilerActivity.CUDA on.", advice)),
        "capture_quality:window": (action("The profiled window held no GPU work (start-up, or before the first step): "
                                          "let torch.profiler's schedule skip start-up (wait), warm up (warmup) and "
                                          "record a few steps (active), with ProfilerActivity.CUDA on.", advice),),
        # the window opened after the loop, on the program's exit (h37-probe43w): a schedule inside the loop
        "capture_quality:teardown": (action("The profiled window opened after the loop and held the program's exit: "
                                            "let torch.profiler's schedule end inside the loop -- wait + warmup + "
                                            "active no more than the steps the loop runs -- and call prof.step() "
                                            "once per step.", advice),),
        # copies and no kernel (h37-probe43w): GPU work, so never "held no GPU work"
        "capture_quality:copy_only": (action("The profiled window held copies and no kernel: where the copies are "
                                             "the program's work, they are what it measures; where a model runs "
                                             "after them, let torch.profiler's schedule skip them (wait), warm up "
                                             "(warmup) and record a few steps (active), with ProfilerActivity.CUDA on.",
                                             advice),),
        "capture_quality:input_on_cpu": (action(
            "The profiled loop only fetched batches, and no model op ran on them: run the model's step on each batch "
            "inside the profiled block -- the model and the batch moved to the GPU (model.to('cuda'), "
            "batch.to('cuda', non_blocking=True)) -- with ProfilerActivity.CUDA recorded, and call prof.step() after each "
            "step.", advice),),
        # a file that holds several traces' bytes (h37-hunt69): the ranks exported to one path at once
        "capture_quality:damaged_records:json_writers": (action(
            "More than one trace was written into this file -- the job's processes exported to one path at once, "
            "and their writes interleaved: give each process its own file (its rank in the name, or "
            "tensorboard_trace_handler, which names each file by host and process), then profile again.",
            "rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0\n"
            "prof.export_chrome_trace(f'trace_rank{rank}.json')   # one file per process\n"
            "# or: on_trace_ready=torch.profiler.tensorboard_trace_handler('LOGDIR/run1')"),),
        # the profiler's own work and none of the program's, its CPU side recorded (h37-hunt69): the block ran nothing
        "capture_quality:profiler_only": (action(
            "The profiled block ran none of the program's work while the trace was on (with a schedule, the profiler's "
            "exit started and stopped the trace itself): put the loop's steps inside the `with profile(...)` block, "
            "call prof.step() once per step, and let the loop run at least wait + warmup + active steps.", advice),),
        "capture_quality:input_only": (action(
            "The profiled loop only fetched batches (and copied them to the GPU): run the model on each batch inside "
            "the profiled block -- the forward pass, and for training the backward pass and the optimizer step -- and "
            "call prof.step() after each step.", advice),),
        # a CPU backend's collectives alone, no op (h37-gloo68): the backend for a GPU job, then the job's own capture
        "capture_quality:collectives_only/cpu": (GPU_PROCESS_GROUP, action(
            "If the capture should show the job's work, not only its collectives: profile the training loop itself "
            "on its main thread -- the CPU's activity and the GPU's recorded, a schedule whose active steps are "
            "training steps, prof.step() at the end of each.", advice)),
        "capture_quality:loop_ended": (loop_ended(loop),),
        # a loop that numbered its steps, fewer than the proposed schedule's: the schedule cut to fit them
        **{f"capture_quality:loop_ended/{n}": (loop_ended(loop, n),) for n in range(1, sum(LOOP_ENDED_SCHEDULE))},
        "capture_quality:few_steps": (action("Profile a window of several steps after warm-up and call prof.step() "
                                             "once per step (ProfilerStep#N marks).", advice),),
        "capture_quality:unsteady": (action("Skip warm-up, evaluation and checkpoint steps in the profiled window "
                                            "(schedule's wait/warmup).", advice),),
        "capture_quality:long": (action(LONG_WORDS.format(steps="steps"), short_capture(advice)),),
        # the warm-up's own fix (the cold start's, and unsteady steps'), around the job's loop; the capture's other
        # findings keep theirs
        # the executor re-plans per input shape (``Framework.label('compile_gap_cause')``): fewer shapes, fewer
        # plans; PyTorch 1.11's fusion strategy compiles for dynamic shapes (``_FUSION_STRATEGY`` gates it)
        # CUDAGraph Trees recording again in the steady run (``rules.graph_recaptured``): the pending backward of a
        # forward run with autograd on, or new input shapes
        # a forward run with autograd on and no backward (``rules.forward_with_autograd``): the memory side's fix
        "forward_with_autograd": (NO_GRAPH,),
        "graph_recaptured": (
            action("Run forward-only calls under torch.inference_mode() (or torch.no_grad()): with no backward pending, "
                   "each call of the compiled model starts a new iteration and replays the recorded graph.",
                   "with torch.inference_mode():\n    out = model(x)"),
            action("Where outputs must keep autograd on yet no backward follows, mark each new iteration before the "
                   "call.", "torch.compiler.cudagraph_mark_step_begin()\nout = model(x)"),
            action("Keep input shapes static: pad inputs up to a few bucket sizes, or mark a dimension static "
                   "(torch._dynamo.mark_static) so the compiled model keeps one graph for its sizes.",
                   "torch._dynamo.mark_static(x, 0)   # before the first call; or pad x up to a fixed bucket size"),
        ),
        "cold_start:compile_gap": (
            action("Pad or bucket the inputs' sizes to a few fixed shapes (a GNN's batch: nodes and edges padded up to "
                   "the next bucket, the padding masked out), so the TorchScript executor reuses its plans instead of "
                   "planning for each new size.",
                   "import torch.nn.functional as F\n"
                   "BUCKETS = (1024, 2048, 4096, 8192)   # a few sizes every input fits in\n"
                   "def padded(x):   # rows (a graph's nodes) padded up to the next bucket; mask the padding out\n"
                   "    n = next(b for b in BUCKETS if b >= x.shape[0])\n"
                   "    return F.pad(x, (0, 0, 0, n - x.shape[0]))", "python"),
            action("Let the fuser compile for dynamic shapes after a few static ones, before the scripted model's "
                   "first call.",
                   "torch.jit.set_fusion_strategy([('STATIC', 2), ('DYNAMIC', 10)])   # before the first call",
                   "python"),),
        "capture_quality:unsteady@cold": (action("Skip the first calls: profile with a schedule whose wait and warmup "
                                                 "steps cover the one-time start-up.", capture_cold(loop)),),
        "mixed_precision_off": (autocast(loop),),
        "mixed_precision_off:fp16": (autocast_fp16(loop),),
        "tensor_core_unused": (autocast(loop),),
        "tensor_core_unused:fp16": (autocast_fp16(loop),),
        "mixed_precision_off@cuda_amp": (autocast_legacy(loop),),
        "tensor_core_unused@cuda_amp": (autocast_legacy(loop),),
        "mixed_precision_off:bf16@cuda_amp": (autocast_legacy(loop, bf16=True),),
        "tensor_core_unused:bf16@cuda_amp": (autocast_legacy(loop, bf16=True),),
    }


def job_capture(tags: tuple[str, ...], loop: Loop, per_rank: bool) -> str:
    """A job's capture advice, whole, for its tags: a serving engine is profiled through its server's routes, cold or
    not (its start-up is never in a window recorded under load); a cold start's schedule skips start-up around the
    job's own loop; a forward pass's loop under inference mode; else a few steady steps of the job's loop."""
    if "serving" in tags:
        return CAPTURE_SERVING
    if "cold" in tags:
        return capture_cold(loop)
    if "inference" in tags:
        return CAPTURE_INFERENCE
    return capture(loop, per_rank)


def loop_for_job(tags: tuple[str, ...]) -> tuple[str, dict[str, tuple[Action, ...]]]:
    """The capture advice and looped fixes for a job's tags (``Framework.looped``): a forward pass's loop for an
    inference job, a step of its own for work of no known kind (``any_work``), else the training loop; per-rank
    words unless the job is one process (``alone``).  A serving job's capture fixes are its server's routes: the cold
    start's schedule around a loop is not added to them (h37-left43: the cold tag, applied after the serving one,
    replaced its advice and its unsteady capture's fix with a loop)."""
    loop = job_loop(tags, TRAINING_LOOP, FORWARD_LOOP, ANY_LOOP)
    per_rank = "alone" not in tags
    fixes = looped_fixes(loop, per_rank)
    if "serving" in tags:  # the cold start's variant is the server's routes too, as every capture fix of the job
        fixes["capture_quality:unsteady@cold"] = JOB_FIXES["capture_quality@serving"]
    if "tensor_parallel" in tags:
        fixes.update(_all_to_all_beside_tp(loop))
    return job_capture(tags, loop, per_rank), fixes


def _all_to_all_beside_tp(loop: Loop) -> dict[str, tuple[Action, ...]]:
    """The all-to-all's fixes, each kind's (``comm_exposed:AllToAll/<kind>``), for a tensor-parallel job's work
    (``loop``: training's, a forward's, a step of its own), as ``@tensor_parallel`` keys.

    Why: ``comm_exposed@tensor_parallel`` rewrites the rule's fixes whole (DTensor's all-gathers and reduce-scatters
    are TP's, not FSDP's), and with them the all-to-all's: an MoE or sequence-parallel job that also shards its layers
    lost the fix of the exchange it was told it pays for (h37-a2afix's left).  A tag's own ``rule:variant@tag`` keys
    survive its rewrite, so the all-to-all's are restated under it -- composed here, where the job's work is known,
    because the tensor-parallel tag comes after the forward's and would else restate training's fixes to a forward."""
    suffix = "" if loop is TRAINING_LOOP else "@inference" if loop is FORWARD_LOOP else "@any_work"
    variants = ["AllToAll"] + [f"AllToAll/{kind}" for kind in _A2A_FORWARD_FIXES]
    return {f"comm_exposed:{v}@tensor_parallel": FIXES[f"comm_exposed:{v}{suffix}"] for v in variants}


FIXES.update(looped_fixes(TRAINING_LOOP, per_rank=True))

#: What only a training step runs: autograd's backward nodes, ATen's backward kernels' ops, the optimizer's step and
#: gradient accumulation (PyTorch 1.8 to 2.x spellings); the program's own ``loss.backward()`` as PyProf and DLProf
#: name the call (``{'mod': 'Tensor', 'op': 'backward'}``: ``Tensor.backward``).  Not a name that prepares *for* a
#: backward (``torch/autograd/function.py(34): save_for_backward``, ``with_stack``'s frame of a custom or compiled
#: ``autograd.Function``'s forward): every forward run with autograd on calls it, whether a backward ever runs or not
#: -- pytorch/ao's 100 ``torch.compile``d forwards under ``record_function("model_inference")``, no backward, read
#: "training, high" on it (h37-hunt71b).
_TRAINING = re.compile(r"Backward\d*\b|^autograd::engine::evaluate_function|(?<!_for)_backward\b|"
                       r"^Optimizer\.(step|zero_grad)|"
                       r"^Tensor\.backward$|"
                       r"^torch::autograd::AccumulateGrad|^aten::_fused_adam|^aten::_foreach_add_|CompiledFunctionBackward|"
                       # DDP exists to reduce gradients; FSDP also shards a model run forward only (FastVideo's
                       # text encoder on two H100s: pre_forward / post_forward and no backward), so only its
                       # backward hooks (FSDP2's ``FSDP::pre_backward``, FSDP1's ``_post_backward_hook``) are training's
                       r"^FSDP::\w*backward|FullyShardedDataParallel\.\w*backward|DistributedDataParallel\.forward")
#: torch.compile at work compiling (Dynamo's and Inductor's timed phases), and nvFuser (``torch.jit``'s fuser,
#: Lightning Thunder's executor) building the kernels of a fusion it has not seen (its NVTX ranges: segmenting the
#: fusion, scheduling and compiling each segment): one-time, never steady state.
_COMPILING = ("_compile.compile_inner", "compile_fx", "OutputGraph.call_user_compiler", "create_aot_dispatcher_function",
              "TorchDynamo compilation", "async_compile", "FusionExecutorCache::getKernelRuntimeFor::compileNewKRT",
              "FusionKernelRuntime::compileFusionParallel", "KernelExecutor::compile")


#: An ``nn.Module`` call: ``with_stack``'s Python span of ``Module._call_impl`` (``_wrapped_call_impl`` since 2.0) or
#: ``with_modules``' ``nn.Module: <Class>_<n>`` annotation.
_MODULE_CALL = re.compile(r"^nn\.Module: |torch/nn/modules/module\.py\(\d+\): _(wrapped_)?call_impl$")


def is_model_call(name: str) -> bool:
    return bool(_MODULE_CALL.search(name))


#: Lightning's profiler's annotation around each module's forward (``[pl][module]<class path>: <name>``).
_LIGHTNING_MODULE = "[pl][module]"


def is_module_forward(name: str) -> bool:
    """An op that is a module's forward call: :func:`is_model_call`'s spans, or Lightning's ``[pl][module]``
    annotation.  Inside ``optimizer.step(closure)`` (Lightning's automatic optimization, LBFGS) it opens the forward
    the closure runs, whose allocations are the forward's, not the optimizer's (:func:`memory_phase`)."""
    return name.startswith(_LIGHTNING_MODULE) or is_model_call(name)


_NAMED_MODULE = re.compile(r"^nn\.Module: (\S.*)$")


def named_module(name: str) -> str:
    """The module object a ``with_modules`` annotation names (``nn.Module: T5Stack_0`` -> ``T5Stack_0``), "" for any
    other name: ``with_stack``'s ``_call_impl`` frame is the same for every module, so it names none."""
    m = _NAMED_MODULE.match(name)
    return m.group(1) if m else ""


_INSTANCE = re.compile(r"^(.+?)(?:_\d+)?$")


def module_class(name: str) -> str:
    """The class of the module a ``with_modules`` annotation names (``nn.Module: T5Attention_3`` -> ``T5Attention``:
    the profiler numbers each instance), "" for any other name."""
    m = _INSTANCE.match(named_module(name))
    return m.group(1) if m else ""


def is_training_event(name: str) -> bool:
    return bool(_TRAINING.search(name))


def is_autograd_forward(name: str) -> bool:
    """AOTAutograd's compiled forward as an ``autograd.Function`` (``CompiledFunction``), not its backward: made only
    where grad mode is on and an input or parameter requires grad (``torch._functorch.aot_autograd``: the inference
    path, taken under ``no_grad`` / ``inference_mode``, runs the compiled graph with no ``autograd.Function``)."""
    return name == "CompiledFunction"


#: Autograd's engine's range around each backward node it runs, the node's name after it.
_ENGINE_WRAPPER = "autograd::engine::evaluate_function: "


def engine_wrapped(name: str) -> str:
    """The node autograd's engine's range wraps (``autograd::engine::evaluate_function: IndexBackward0`` ->
    ``IndexBackward0``), "" for any other event: the node is the program's code -- the backward of its ``x[mask]``,
    its own ``autograd.Function``'s (``ClampScaleBackward``) -- the wrapper only the engine's
    (``Framework.engine_wrapper``)."""
    return name[len(_ENGINE_WRAPPER):].strip() if name.startswith(_ENGINE_WRAPPER) else ""


#: ATen's indexing by index tensors that may live on the CPU for a CUDA tensor: ``x[idx]``, ``x[idx] = v`` (TensorIterator
#: indexing moves the indices to ``self``'s device, a blocking copy from pageable memory; ``index_select`` and
#: ``gather`` refuse a CPU index instead).
_INDEX_UPLOAD_OPS = frozenset({"aten::index", "aten::index_put_", "aten::_index_put_impl_", "aten::index_put"})


def is_index_upload_op(name: str) -> bool:
    """An op whose blocking copy to the device is its CPU index's upload (``Framework.index_upload_op``)."""
    return name in _INDEX_UPLOAD_OPS


def is_autograd_op(name: str) -> bool:
    """An ATen op (``aten::mm``): recorded by the profiler beside autograd's ``*Backward`` nodes wherever a backward
    ran, so ATen ops with no such node are a forward pass (``Framework.autograd_op``)."""
    return name.startswith("aten::")


#: A training wrapper's own range around a phase of its loop, by the phase's name: PyTorch Lightning records each as
#: ``[pl][profile]<phase>`` (2.x) or a bare ``<phase>`` (1.x), a hook of its strategy, module or loop as
#: ``[<Owner>]<Class>.<phase>``.  The phase is what it names -- its last dotted or bracketed part.
_WRAPPER_RANGE = re.compile(r"^(?:\[pl\]\[profile\])?(?:\[(?:Strategy|TrainingTypePlugin|LightningModule|Accelerator|"
                            r"_?\w*Loop)\][\w.]*?\.?)?(?P<phase>[a-z_]+?)(?:_\d+)?$")
#: Phases only training runs: a batch's training step, its backward, its optimizer's step (Lightning 1.x's
#: ``training_step_and_backward``, ``optimizer_step_with_closure_0``, ``model_backward``).
_TRAINING_PHASES = frozenset({"run_training_batch", "training_step", "training_step_and_backward", "backward",
                              "model_backward", "optimizer_step", "optimizer_step_with_closure"})
#: Phases of evaluation and prediction: forward passes (the step, and the loop fetching its next batch).
_EVALUATION_PHASES = frozenset({"validation_step", "test_step", "predict_step", "evaluation_step_and_end",
                                "val_next", "test_next", "predict_next"})
#: Lightning 1.x's phase ranges recorded without a mark of their own: names of its loop's internals.
_UNMARKED_PHASES = frozenset({"run_training_batch", "training_step_and_backward", "model_backward",
                              "optimizer_step_with_closure", "evaluation_step_and_end"})


def _wrapper_phase(name: str) -> str:
    """The phase a training wrapper's own range names, "" where ``name`` is none.  Only a name the wrapper marks as
    its own (``[pl][profile]``, an owner in brackets) or one of its 1.x names no user would pick
    (:data:`_UNMARKED_PHASES`) is read: a user's ``record_function("backward")`` says nothing of the loop."""
    m = _WRAPPER_RANGE.match(name)
    if m is None:
        return ""
    phase = m.group("phase")
    return phase if name.startswith("[") or phase in _UNMARKED_PHASES else ""


def is_training_phase(name: str) -> bool:
    return _wrapper_phase(name) in _TRAINING_PHASES


def is_evaluation_phase(name: str) -> bool:
    return _wrapper_phase(name) in _EVALUATION_PHASES


#: A training wrapper's own range around one whole iteration of its loop: Lightning's ``run_training_batch`` holds the
#: batch's forward (``training_step``), its backward and its optimizer's step.  Lightning calls ``prof.step()`` as
#: ``training_step`` returns, so each ``ProfilerStep#N`` opens between a forward and its backward: the profiler's marks
#: cover the interval between two ``step()`` calls, not an iteration (h37-left46, ``wild/lightning_cpu_fit``).
_ITERATION_PHASES = frozenset({"run_training_batch"})


def is_iteration_range(name: str) -> bool:
    """A training wrapper's range around one whole iteration (:data:`_ITERATION_PHASES`), by the wrapper's own mark."""
    return _wrapper_phase(name) in _ITERATION_PHASES


#: FSDP's hooks around a forward pass (FSDP2's ``FSDP::pre_forward (blocks.3)``, FSDP1's ``FullyShardedDataParallel.
#: _pre_forward``): a training step's forward, or a model sharded to run forward only.
_SHARDED_FORWARD = re.compile(r"^FSDP::|^FullyShardedDataParallel\.")


def is_sharded_forward_event(name: str) -> bool:
    return bool(_SHARDED_FORWARD.search(name))


#: FSDP's hooks around a forward pass alone, by name (FSDP2's ``FSDP::pre_forward`` / ``post_forward`` /
#: ``root_pre_forward``, FSDP1's ``FullyShardedDataParallel._pre_forward`` / ``.forward``): never its backward's.
_SHARDED_FORWARD_HOOK = re.compile(r"^(?:FSDP::\w*forward|FullyShardedDataParallel\.\w*forward)\b")


def is_sharded_forward_hook(name: str) -> bool:
    """FSDP's own range around a forward (:data:`_SHARDED_FORWARD_HOOK`): a training step's forward or a sharded
    model run forward only -- by itself no evidence of training (:data:`_TRAINING` reads only FSDP's backward hooks),
    whatever word of FSDP's its name holds."""
    return bool(_SHARDED_FORWARD_HOOK.match(name))


def is_tensor_parallel_event(name: str) -> bool:
    """DTensor's redistribution of a sharded tensor (``parallelize_module``'s Colwise/Rowwise/SequenceParallel plans
    record one ``Redistribute`` per layout change, around its all-gather or reduce-scatter)."""
    return name == "Redistribute"


#: Code that allocates only a training job's memory, by the file of a stack frame (``file.py:123 function``, POSIX or
#: Windows paths): an optimizer package's (its moments and master weights: ``torch/optim``'s ``_init_group``, Megatron's
#: ``core/optimizer``, Apex's and Transformer Engine's ``optimizers``, bitsandbytes' ``optim``), a data-parallel
#: wrapper's gradient buckets and buffers (DDP's reducer, FSDP's flat parameters and gradients, Megatron's DDP
#: ``param_and_grad_buffer``, DeepSpeed ZeRO's partitions) and autograd's backward pass.
_TRAINING_FRAMES = (
    (re.compile(r"/(?:optim|optimizers?)/[^:]*\.py:"), "an optimizer's state"),
    (re.compile(r"/nn/parallel/distributed\.py:|/distributed/fsdp/|/_composable/fsdp/|/megatron/core/distributed/|"
                r"/deepspeed/runtime/zero/"), "a data-parallel wrapper's gradient buffers"),
    (re.compile(r"/torch/autograd/(?:graph|__init__)\.py:|/torch/_tensor\.py:\d+ backward$|_engine_run_backward$|"
                r"torch::autograd::Engine::"), "the backward pass"),
)


def training_frame(frame: str) -> str:
    """What a stack frame's code allocates for training only (:data:`_TRAINING_FRAMES`), "" where nothing."""
    f = frame.replace("\\", "/")
    return next((what for pattern, what in _TRAINING_FRAMES if pattern.search(f)), "")


def is_grad_reset_event(name: str) -> bool:
    return name.startswith("Optimizer.zero_grad")


#: ``Optimizer.step#<Class>.step``: the ``record_function`` every ``torch.optim`` optimizer's step runs in (1.8 on).
_OPTIMIZER_STEP = re.compile(r"^Optimizer\.step#")


#: Ops PyTorch runs only on GPU tensors: the NCCL process group's host record of each collective (``nccl:all_reduce``,
#: ``nccl:all_to_all``; RCCL on ROCm keeps the name), ``record_stream`` (a tensor's use on a GPU stream), and the
#: cuDNN / MIOpen ops the dispatcher picks only for GPU tensors.  The CPU's collectives are ``gloo:``.
_GPU_ONLY_OP = re.compile(r"^nccl:|^aten::record_stream$|^aten::_?(cudnn|miopen)_")


def is_gpu_only_event(name: str) -> bool:
    return bool(_GPU_ONLY_OP.match(name))


#: Ops the dispatcher runs only for tensors on Apple's GPU (native_functions.yaml's MPS-only entries:
#: ``_mps_convolution``, ``mps_convolution_backward``, ``_mps_convolution_transpose``, ``_lstm_mps``,
#: ``lstm_mps_backward``), with an overload after a dot.
_MPS_OP = re.compile(r"^aten::(\w*_)?mps(_\w+)?(\.\w+)?$")


def backend_event(name: str) -> str:
    """The backend an op is dispatched only for: "mps" for the MPS-only ops (:data:`_MPS_OP`), "" otherwise."""
    return "mps" if _MPS_OP.match(name) else ""


def is_scalar_read_event(name: str) -> bool:
    """``aten::_local_scalar_dense``: the read ``.item()`` (``int()``, ``float()``, ``bool()`` of a tensor) ends in."""
    return name == "aten::_local_scalar_dense"


#: ATen's ops that only allocate (no compute, no copy): the leaves under ``aten::to``, ``aten::randn``, ``empty_like``.
_ALLOCATION_OP = re.compile(r"^aten::(?:empty|empty_strided)$")


def is_gpu_only_backend(name: str) -> bool:
    """NCCL (RCCL on ROCm keeps the name) moves GPU tensors only: a process group on it is a GPU job's."""
    return name.strip().lower() == "nccl"


def is_allocation_event(name: str) -> bool:
    return bool(_ALLOCATION_OP.match(name))


#: A data-parallel wrapper's hooks that bring a layer's parameters to the GPU before it runs: FSDP2's
#: ``FSDP::pre_forward`` / ``FSDP::pre_backward`` (``record_function`` in torch/distributed/fsdp/_fully_shard/
#: _fsdp_state.py, the module's name appended: ``FSDP::pre_forward (encoder.block.3)``), FSDP1's
#: ``FullyShardedDataParallel._pre_forward`` / ``._pre_backward_hook`` (_runtime_utils.py).  Without CPU offload the
#: parameters are on the GPU already (the all-gather is NCCL's, no host copy), so a host-to-device copy launched
#: inside one is an offloaded parameter's upload (``CPUOffloadPolicy``, ``CPUOffload(offload_params=True)``).
_PARAM_UPLOAD = re.compile(r"^(?:FSDP::pre_(?:forward|backward)|FullyShardedDataParallel\._pre_(?:forward|backward))")


def is_param_upload_event(name: str) -> bool:
    return bool(_PARAM_UPLOAD.match(name))


#: ``torch.cuda.empty_cache()`` / ``torch.cuda.memory.empty_cache`` as a Python frame (``with_stack``:
#: ``torch/cuda/memory.py(192): empty_cache``), its C binding (``torch._C._cuda_emptyCache``), or a range the program
#: names for it (PARAM's ``[param|clear_cache]``, which calls it)
_CACHE_RELEASE = re.compile(r"(?:empty|clear)_?cache\b|_cuda_emptyCache", re.IGNORECASE)


def is_cache_release_event(name: str) -> bool:
    return bool(_CACHE_RELEASE.search(name))


def is_step_end_event(name: str) -> bool:
    return bool(_OPTIMIZER_STEP.match(name))


def is_compile_event(name: str) -> bool:
    return name.startswith(_COMPILING)


#: TorchScript's profiling executor (PyTorch 1.6+): a scripted function runs a profiling plan on its first calls, then
#: an optimised, fused plan guarded by type checks on the shapes it profiled; a guard that fails calls the function's
#: ``fallback_function`` -- a graph function with an executor of its own, which profiles and optimises its graph on
#: its own first calls (and bails out again, up to the executor's bailout depth).  The profiler records that call
#: by the function's name: its time outside the ops nested in it is the executor building a plan, not the graph's
#: work.  A model whose input shapes change each call (a GNN's node count) pays it on every new shape.
_JIT_FALLBACK = "fallback_function"


def is_jit_fallback(name: str) -> bool:
    return name == _JIT_FALLBACK


#: ATen's convolution ops.  Their own math never syncs: a sync inside one is cuDNN's (or MIOpen's) algorithm search,
#: which ``torch.backends.cudnn.benchmark = True`` runs on the first call of each input shape, timing each candidate
#: kernel with CUDA events (``cudaEventSynchronize``).
_CONVOLUTION_OP = re.compile(r"^aten::(?:_?convolution|conv\d?d|conv_transpose\d?d|(?:cudnn|miopen)_convolution)")


def is_autotune_event(name: str) -> bool:
    return bool(_CONVOLUTION_OP.match(name))


#: Where an allocation's bytes belong (``model.trace.MEMORY_PHASES``), from the ops around it: autograd's backward
#: nodes (gradients and the backward's temporaries) and the optimizer's step (its state, created on the first step).
_BACKWARD_SCOPE = re.compile(r"^autograd::engine::evaluate_function|Backward\d*$|^CompiledFunctionBackward")
_OPTIMIZER_SCOPE = re.compile(r"^Optimizer\.(step|zero_grad)#")
#: Ops that only make the allocator hand out a tensor: the op that called them is what the bytes are for.
_FACTORY_OPS = frozenset({"aten::empty", "aten::empty_strided", "aten::empty_like", "aten::new_empty",
                          "aten::new_empty_strided", "aten::resize_", "aten::zeros", "aten::zeros_like", "aten::ones",
                          "aten::ones_like", "aten::full", "aten::new_zeros", "aten::new_full", "aten::zero_",
                          "aten::fill_", "aten::as_strided", "aten::view", "aten::reshape", "aten::detach"})


def memory_phase(name: str) -> str | None:
    """"backward" / "optimizer" for an op that scopes the allocations inside it, None for any other."""
    if _BACKWARD_SCOPE.search(name):
        return "backward"
    if _OPTIMIZER_SCOPE.search(name):
        return "optimizer"
    return None


#: torch.profiler's own Python frames, as ``with_stack`` records them: its file, a line, the function
_PROFILER_FRAME = re.compile(r"(?:^|/)torch/profiler/profiler\.py\(\d+\): (\w+)$")


def is_profiler_start_frame(name: str) -> bool:
    """torch.profiler starting its trace (``profiler.py(N): start_trace``)."""
    m = _PROFILER_FRAME.search(name)
    return m is not None and m.group(1) == "start_trace"


def is_profiler_exit_frame(name: str) -> bool:
    """torch.profiler's ``with`` block closing (``profiler.py(N): __exit__``)."""
    m = _PROFILER_FRAME.search(name)
    return m is not None and m.group(1) == "__exit__"


def is_profiler_frame(name: str) -> bool:
    """Any frame of torch.profiler's own code (``torch/profiler/profiler.py(628): step``)."""
    return _PROFILER_FRAME.search(name) is not None


def is_factory_op(name: str) -> bool:
    """An op that only allocates (``aten::empty``...): its allocations are named after the op that called it."""
    return name in _FACTORY_OPS


#: ``torch.autocast`` (device_type, dtype) came with PyTorch 1.10; before it ``torch.cuda.amp.autocast`` alone, float16
#: only (PyTorch's amp docs: "torch.autocast and torch.cpu.amp.autocast are new in version 1.10")
AUTOCAST_SINCE = (1, 10)


def version_tags(rng) -> tuple[str, ...]:
    """The job tags the trace's PyTorch versions earn: ``legacy`` where every one of them is before 2.0 (no
    torch.compile), ``cuda_amp`` where the oldest of them is before 1.10 (no ``torch.autocast``: the precision fixes
    spelled ``torch.cuda.amp``).  A trace that states 1.10-1.13 is told ``torch.autocast`` with 2.3's GradScaler
    spelled ``torch.cuda.amp.GradScaler`` (``DEVICE_FEATURES``); one that dates nothing earns no tag (h37-review16:
    the ``torch.cuda.amp`` fix and its "PyTorch 1.8-1.10" were keyed to ``legacy``, any release before 2.0)."""
    if rng is None or rng[1] is None or rng[1] > (2, 0):
        return ()
    return ("legacy", "cuda_amp") if rng[0] < AUTOCAST_SINCE else ("legacy",)


def version_range(facts) -> tuple[tuple[int, ...], tuple[int, ...] | None] | None:
    """The PyTorch versions a trace's ``producer`` facts allow: a stated ``torch_version`` (that minor release), or
    the old schema's 1.8-1.10; None where nothing dates it (1.11 or newer)."""
    v = re.match(r"(\d+)\.(\d+)", facts.get("torch_version", ""))
    if v:
        major, minor = int(v.group(1)), int(v.group(2))
        return (major, minor), (major, minor + 1)
    if facts.get("schema") == "kineto<1.11":
        return (1, 8), (1, 11)
    return None


#: ATen ops (PyTorch; the op type is the name after ``aten::``) whose work Tensor Cores can do: matmuls,
#: convolutions and attention.
ATEN_TC_OPS = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "addbmm", "matmul", "linear", "_scaled_mm", "einsum",
    "convolution", "_convolution", "cudnn_convolution", "cudnn_convolution_transpose", "conv1d", "conv2d", "conv3d",
    "convolution_backward", "scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention", "_flash_attention_forward",
    "_flash_attention_backward", "_efficient_attention_forward", "_efficient_attention_backward",
})


#: Host events that name a collective and, with ``record_shapes``, carry its message: the c10d annotation
#: (``nccl:all_reduce``: ``Input Dims`` / ``Input type`` of the tensor, or since PyTorch 2.1 ``In msg nelems``,
#: ``dtype``, ``Group size``), ``record_param_comms`` (the same keys), the ``c10d::`` op.
COLLECTIVE_OP_PREFIXES = ("nccl:", "gloo:", "record_param_comms", "c10d::")
#: c10d's host record of a collective, ``<backend>:<collective>``: the process group's backend by its own name
#: (``ProcessGroup::getBackendName``: ``nccl``, ``gloo``, ``ucc``, ``mpi``, ``xccl``, ``hccl``).
_BACKEND_ANNOTATION = re.compile(r"^(?:nccl|gloo|ucc|mpi|xccl|hccl):[a-z_]+$")


def collective_backend_annotation(name: str) -> bool:
    """A collective's c10d annotation (``nccl:all_to_all``), which names its process group's backend as
    ``distributedInfo.backend`` does: the backend's collective library, where a trace lost its header's word of it
    (HTA's ``wild/gpu_events_stripped``: ``nccl:all_to_all`` its one word of whose GPU ran it; h37-vendor66)."""
    return bool(_BACKEND_ANNOTATION.match(name))


def collective_backend(name: str) -> str:
    """The process group's backend a collective's c10d annotation names (``gloo:gather`` -> "gloo",
    :data:`_BACKEND_ANNOTATION`), "" for any other event.  Why: a Gloo rank's window may hold its collectives and
    nothing else -- no op, no GPU record (h37-gloo68) --, and the annotation is then its one word of where they ran."""
    return name.split(":", 1)[0] if _BACKEND_ANNOTATION.match(name) else ""


def is_collective_op(name: str) -> bool:
    return name.startswith(COLLECTIVE_OP_PREFIXES)


#: The ATen op that performs a copy between devices, whatever called it (``.to``, ``.cuda``, ``_to_copy``):
#: ``copy_(self, src, non_blocking)``, the op whose ``External id`` the copy's runtime call and device record carry.
COPY_OP = "aten::copy_"
#: The ATen ops of a copy to a device whose recorded inputs (``Concrete Inputs``) hold its ``non_blocking`` flag: op ->
#: the number of inputs of each overload -> where the flag stands among them.  From the op schemas, as PyTorch records
#: them (wild/loader_pass_rtx5070ti: ``.to('cuda', non_blocking=True)`` records ``aten::to`` ``["", "6", "0", "", "",
#: "True", "False", ""]`` over ``aten::_to_copy`` ``["", "6", "0", "", "", "True", ""]`` over ``aten::copy_`` ``["",
#: "", "True"]``): ``copy_(self, src, non_blocking)``; ``to.dtype(self, dtype, non_blocking, copy, memory_format)``
#: and ``to.other(self, other, non_blocking, ...)``; ``to.device(self, device, dtype, non_blocking, copy,
#: memory_format)``; ``to.dtype_layout(self, dtype, layout, device, pin_memory, non_blocking, copy, memory_format)``;
#: ``_to_copy(self, dtype, layout, device, pin_memory, non_blocking, memory_format)``.  A copy's ``External id`` is
#: its innermost op's -- ``copy_`` in every trace read --; the callers pass ``copy_`` their own flag, so the one the id
#: names tells it whichever of them it is (h37-nonblock34).
COPY_OPS_NON_BLOCKING_AT: dict[str, dict[int, int]] = {COPY_OP: {3: 2}, "aten::to": {5: 2, 6: 3, 8: 5},
                                                       "aten::_to_copy": {7: 5}}


def is_copy_op(name: str) -> bool:
    """An ATen op of a copy to a device, whose recorded inputs (``record_shapes``) say whether it was called
    ``non_blocking``."""
    return name in COPY_OPS_NON_BLOCKING_AT


def copy_non_blocking(args: Mapping[str, Any], op: str = COPY_OP) -> bool | None:
    """Whether a copy op ``op`` (:data:`COPY_OPS_NON_BLOCKING_AT`) asked for ``non_blocking=True``, as its recorded
    inputs say (``copy_``'s ``Concrete Inputs``: ``["", "", "True"]``); None where they do not record it (no
    ``record_shapes``, PyTorch before 1.10) or record an overload of another schema.  Why from the op: a copy from
    pageable memory blocks the host whatever the call asked, so the copy's own record cannot tell a loop that already
    passes ``non_blocking=True`` from one that does not (h37-nonblock33)."""
    concrete = args.get("Concrete Inputs")
    if not isinstance(concrete, list):
        return None
    at = COPY_OPS_NON_BLOCKING_AT.get(op, {}).get(len(concrete))
    if at is None:
        return None
    flag = str(concrete[at]).strip().lower()
    return True if flag == "true" else False if flag == "false" else None


#: What shows a program's uploads called ``non_blocking=True`` (``metrics.memcpy.applied``): every copy to the GPU
#: whose ``copy_`` op records its inputs asked for it
NON_BLOCKING_UPLOADS = ("copies to the GPU called with non_blocking=True (every H2D copy's aten::copy_ records it "
                        "among its inputs)")


#: ATen's dtype spellings (``Input type``, ``dtype``) -> bytes per element.
DTYPE_BYTES = {"float": 4, "Float": 4, "c10::BFloat16": 2, "BFloat16": 2, "c10::Half": 2, "Half": 2, "double": 8,
               "Double": 8, "long int": 8, "Long": 8, "int": 4, "Int": 4, "short int": 2, "Short": 2,
               "signed char": 1, "Char": 1, "unsigned char": 1, "Byte": 1, "bool": 1, "Bool": 1,
               "c10::Float8_e4m3fn": 1, "c10::Float8_e5m2": 1, "Float8_e4m3fn": 1, "Float8_e5m2": 1}


def collective_message(args: dict) -> tuple[int, int] | None:
    """(bytes of one rank's message, group size or -1) from a collective op's ``args``; None when the capture has
    no sizes (``record_shapes`` off, or a list of tensors)."""
    group = args.get("Group size")
    group = group if type(group) is int and group > 0 else -1
    n, dtype = args.get("In msg nelems"), args.get("dtype")
    if type(n) is int and n >= 0 and dtype in DTYPE_BYTES:
        return n * DTYPE_BYTES[dtype], group
    dims, types = args.get("Input Dims"), args.get("Input type")
    if not (isinstance(dims, list) and isinstance(types, list) and dims):
        return None
    total = 0
    for d, t in zip(dims, types):
        if not (isinstance(d, list) and d and all(type(x) is int and x >= 0 for x in d) and t in DTYPE_BYTES):
            continue
        count = 1
        for x in d:
            count *= x
        total += count * DTYPE_BYTES[t]
    return (total, group) if total else None


def collective_group(args: dict) -> tuple[str | None, int | None]:
    """(process group label, sequence number) of a collective op's ``args`` where the capture records them:
    ``Process Group Name`` (PyTorch 2.2+; ``Process Group ID`` before) with its ``Process Group Desc``
    (``default_pg``, a user's name for a tensor- or data-parallel group), and ``Seq``, the call's number in its
    group -- the same on every rank, so calls pair across ranks by it."""
    name = args.get("Process Group Name")
    name = name if isinstance(name, (str, int)) and name != "" else args.get("Process Group ID")
    label = None
    if isinstance(name, (str, int)) and not isinstance(name, bool):
        desc = args.get("Process Group Desc")
        label = f"pg {name}" + (f" ({desc})" if isinstance(desc, str) and desc and desc != "undefined" else "")
    seq = args.get("Seq")
    return label, (seq if type(seq) is int and seq >= 0 else None)


def collective_members(args: dict) -> tuple[int, ...] | None:
    """The job's global ranks of a collective op's process group (``Process Group Ranks``, PyTorch 2.1+:
    ``"[0, 1]"``), sorted, where the capture records them; None where it does not: absent (older PyTorch), ``"[]"``
    (a call whose group c10d leaves unnamed), a list c10d cut short (``"[0, 1, ..., 63]"``: it writes at most 30) or
    anything but whole numbers of ranks (ASCII digits, each below the communication's :data:`MAX_RANKS`).  What tells
    which ranks a call could have waited for (``metrics.job.JobView.transfer_known``).

    Why ASCII and bounded (h37-review64): ``str.isdigit`` holds for "²", which ``int`` refuses -- one such rank ended
    the host file's read in a ValueError; a rank of 10**23 was read as a group member."""
    v = args.get("Process Group Ranks")
    if isinstance(v, str):
        t = v.strip()
        if not (t.startswith("[") and t.endswith("]")):
            return None
        parts = [x.strip() for x in t[1:-1].split(",")]
        if not all(x.isascii() and x.isdigit() and len(x) <= 10 for x in parts):  # "[]" (one empty part), "...", a name
            return None
        v = [int(x) for x in parts]
    if not isinstance(v, list) or not v or not all(type(x) is int and 0 <= x < MAX_RANKS for x in v):
        return None
    return tuple(sorted(set(v)))


def op_text(name: str) -> str:
    """A PyTorch op's text as the op tables read it (``frameworks.base.op_type``), ``<name>:<type>``: ``aten::addmm`` ->
    ``aten::addmm:addmm``; ``Torch-Compiled Region: 0/0`` -> type ``Torch-Compiled Region`` (the frame id is not a
    type).  Every reader of PyTorch's ops (Kineto's JSON, Nsight's autograd NVTX) writes it so."""
    op_type = name.rsplit("::", 1)[-1].split(": ", 1)[0]
    return f"{name}:{op_type}"


def is_tc_eligible_op(op_type_: str) -> bool:
    """An ATen op (the name after ``aten::``) whose work Tensor Cores can do."""
    return op_type_ in ATEN_TC_OPS


#: Element-wise kernels ATen launches (``vectorized_elementwise_kernel``, ``elementwise_kernel``).
ELEMENTWISE_KERNELS = (r"vectorized_elementwise", r"elementwise")
#: Inductor (``torch.compile``) names each Triton kernel it generates ``triton_<kind>_fused_<ops>_<n>``, the kind the
#: first three letters of its category (torch/_inductor/codegen/triton.py: ``get_kernel_category_by_source_code``):
#: ``poi`` pointwise, ``per`` persistent reduction, ``red`` reduction, ``for`` foreach (a pointwise op over a list of
#: tensors), ``tem`` a template: Inductor's templates are its matmuls, convolutions and attention (``mm``, ``addmm``,
#: ``bmm``, ``convolution``, ``flex_attention`` in torch/_inductor/kernel/), each a loop of ``tl.dot`` tiles -- GEMM
#: work whose matrix-unit use its name cannot tell (no dtype in it; an fp32 dot without TF32 stays on the CUDA cores).
#: The kind is what the kernel does, whatever ops its fused name lists (``triton_red_fused_native_layer_norm_1``
#: reduces rows; ``triton_red_fused_fused_add_rms_norm_marlin_gemm_0`` is the norm fused into a GEMM op's input, no
#: GEMM; ``triton_tem_fused_addmm_relu_0`` is the GEMM with its epilogue).
INDUCTOR_KERNEL_KINDS = (("triton_poi_", "elementwise"), ("triton_for_", "elementwise"), ("triton_per_", "reduction"),
                         ("triton_red_", "reduction"), ("triton_tem_", "matmul/conv"))
#: ATen's own kernels whose function names their work (``named_kernel_kinds``; truth from aten/src/ATen/native/cuda/):
#: ``multi_tensor_apply_kernel`` runs one functor over chunks of a list of tensors -- the ``torch._foreach_*`` ops and
#: the fused optimizers (``FusedAdamMathFunctor``, ``FusedSgdMathFunctor``), each element updated from its own
#: gradient and states: element-wise, except the foreach norms (``LpNormFunctor``, ``LpMaxFunctor``:
#: ``_foreach_norm``, ``clip_grad_norm_``), which reduce each tensor to one value, and ``lpnorm_cleanup``, which sums
#: their partials.  ``CatArrayBatchedCopy`` (``torch.cat``) and ``indexSelect{Small,Large}Index`` (``index_select``,
#: an embedding lookup) copy each output element from one input element: element-wise traffic, no arithmetic.
#: The pooling kernels and the softmaxes are read by ``devices`` (every vendor's libraries name them alike).
#: ATen's upsampling forward kernels (aten/src/ATen/native/cuda/UpSample*.cu: ``upsample_bilinear2d_out_frame``,
#: ``upsample_nearest2d_out_frame``, ``upsample_bicubic2d_out_frame``, their ``_nhwc_`` twins): each output element is
#: interpolated from a fixed 1-16 input elements around its source position -- a gather and a few products per
#: output, no dimension summed (Inductor lowers the same op to a pointwise ``triton_poi_`` kernel).  The backward
#: kernels (``_backward_out_frame``) scatter-add gradients and are left unread.  ``upsample_bilinear2d`` was "other"
#: (h37-kernelfam3): 9.5% of an mmagic forward on an A100.
_ATEN_UPSAMPLE = r"\bat::native::(?:<unnamed>::|\(anonymous namespace\)::)?upsample_\w+?(?<!backward)_out_frame\b"
ATEN_KERNEL_KINDS = ((r"multi_tensor_apply_kernel<.*?Lp(?:Norm|Max)Functor|\blpnorm_cleanup\b", "reduction"),
                     (r"\bmulti_tensor_apply_kernel\b", "elementwise"),
                     (r"\bCatArrayBatchedCopy", "elementwise"),
                     (r"\bindexSelect(?:Small|Large)Index\b", "elementwise"),
                     (_ATEN_UPSAMPLE, "elementwise"))
#: nvFuser's generated kernels by the scheduler that built them (``named_kernel_kinds``, beside ATen's: nvFuser is
#: PyTorch's fuser -- TorchScript's, then Thunder's; ``_COMPILING`` holds its compiling ranges -- not ATen's own
#: code).  It names each kernel ``nvfuser_<scheduler>_f<fusion>_c<id>_r<id>_g<group>`` (NVIDIA/Fuser
#: csrc/scheduler/scheduler_types.cpp ``toString``): ``pointwise``, ``transpose`` and ``resize`` (pad, slice, cat) move
#: or map each element; ``reduction`` and the ``*_persistent`` normalization schedulers reduce rows or columns.
#: ``matmul``, ``cutlass``, ``expr_eval``, ``none`` (a kernel scheduled by hand) say nothing this reading can use and
#: stay unread.
NVFUSER_KERNEL_KINDS = ((r"\bnvfuser_(?:pointwise|transpose|resize)_f\d", "elementwise"),
                        (r"\bnvfuser_(?:reduction|(?:inner_|outer_|inner_outer_)persistent)_f\d", "reduction"))
#: FBGEMM's embedding kernels (fbgemm_gpu's code-generated table-batched embeddings, which TorchRec and DLRM call;
#: ``(split|dense)_embedding[_nobag]_{codegen_forward,backward_codegen}_*``; truth from fbgemm_gpu/codegen/): a pooled
#: forward (``..._codegen_forward_{un,}weighted_kernel``) gathers each bag's rows and sums them (a mean is that sum
#: scaled) -- a reduction over the bag; an unpooled one (``_nobag_``) copies one row per index -- element-wise
#: traffic.  The backward kernels (``..._kernel_cta_per_row_1``, ``_warp_per_row_1``) sum each row's gradient over
#: its occurrences in the sorted indices, then apply the optimizer fused into them (rowwise Adagrad's per-row mean of
#: squares too) -- a segment reduction; ``grad_indice_weights`` is the dot of a gradient row with an embedding row per
#: index (a reduction); ``find_long_segments`` marks the segments too long for one warp (a compare per segment).
#: ``bounds_check_indices`` and ``linearize_index`` check or offset each index once: element-wise.  No multiply of
#: two matrices in any: the embeddings' time is the memory's (``NOT_GEMM_KERNELS`` already keeps them off the matrix
#: units).  They were "other" (h37-kernelfam2): 17.6% of a DLRM step on an A100, 15.1% of a TorchRec step.
_FBGEMM_EMBEDDING = r"\b(?:split|dense)_embedding(?:_nobag)?_"
FBGEMM_KERNEL_KINDS = ((_FBGEMM_EMBEDDING + r"codegen_grad_indice_weights", "reduction"),
                       (_FBGEMM_EMBEDDING + r"backward_codegen_\w*find_long_segments", "elementwise"),
                       (_FBGEMM_EMBEDDING + r"backward_codegen_\w*_kernel_(?:cta|warp)_per_row", "reduction"),
                       (r"\b(?:split|dense)_embedding_nobag_codegen_forward", "elementwise"),
                       (r"\b(?:split|dense)_embedding_codegen_forward", "reduction"),
                       (r"\b(?:bounds_check_indices|linearize_index)_kernel\b", "elementwise"))
#: The deformable convolution's column kernels of PyTorch's vision extensions (open-mmlab/mmcv
#: mmcv/ops/csrc/common/cuda/deform_conv_cuda_kernel.cuh ``deformable_im2col_gpu_kernel``, its
#: ``modulated_deformable_im2col_gpu_kernel``; torchvision's ``deformable_im2col_kernel``): each column element is the
#: input sampled at its kernel tap's learned offset -- a bilinear interpolation of four input elements (times the
#: tap's mask) -- an im2col with a gather, element-wise traffic; the convolution's products are the GEMM that follows
#: (cuBLAS).  The backward's ``col2im`` kernels scatter-add and are left unread.  It was "other" (h37-kernelfam3):
#: 10.4% of an mmagic (BasicVSR++) forward on an A100.
VISION_KERNEL_KINDS = ((r"\b(?:modulated_)?deformable_im2col(?:_gpu)?_kernel<", "elementwise"),)
#: Kernels that are no matmul/convolution under any op: ATen's own kernels (copies, element-wise, reductions,
#: indexing, batch norm: ATen hands GEMMs to cuBLAS and convolutions to cuDNN) and FBGEMM's embedding kernels
#: (TorchRec, DLRM: ``split_embedding_*``, ``fbgemm_gpu::``).
NOT_GEMM_KERNELS = (r"\bat::native::", r"fbgemm_gpu::", r"split_embedding", r"\bbatch_index_select")


def _fused_optimizer_op(name: str) -> bool:
    """ATen's fused optimizer step (``optimizer(fused=True)``): ``aten::_fused_adam_``, ``_fused_adamw_``, ``_fused_sgd_``."""
    return name.startswith("aten::_fused_")


def _fused_optimizer_kernel(name: str) -> bool:
    return "FusedAdam" in name or "FusedSgd" in name or "fused_adam" in name


#: Fixes a trace shows in use: Inductor's Triton kernels (or its compiled regions) mean torch.compile, a graph launch
#: means CUDA graphs, a fused optimizer op or kernel means ``fused=True``.
APPLIED_MARKERS = {
    # its compiled regions alone where no Triton kernel ran (h37-review10: d2d_v100's 2022 trace holds
    # `CompiledFunction` / `CompiledFunctionBackward` and no `triton_` kernel, and read "Inductor's Triton kernels")
    "compiled": ("torch.compile (Inductor's Triton kernels in the trace)",
                 lambda n: n.startswith(COMPILED_HOST), lambda n: n.startswith(TRITON_KERNEL),
                 "torch.compile (its compiled regions in the trace)"),
    "cuda_graphs": ("CUDA graphs (graph launches in the trace)", devices.is_graph_launch, never),
    "fused_optimizer": ("a fused optimizer (its fused kernels in the trace)", _fused_optimizer_op,
                        _fused_optimizer_kernel),
}
#: the asynchronous copy from pinned memory: shown by the copies themselves (``metrics.memcpy.applied``: every upload
#: pinned, none holding the host), whatever loader made them
FIX_APPLIED = {COMPILE.text: "compiled", CUDA_GRAPHS.text: "cuda_graphs", FUSED_OPTIMIZER.text: "fused_optimizer",
               NON_BLOCKING.text: "pinned_async_h2d"}
#: A fix's code that pins an upload or copies it to the device without waiting: a DataLoader's ``pin_memory=True`` (on
#: its own line of the call, or beside ``DataLoader(``), ``.pin_memory()``, ``.to(...)`` / ``.cuda(...)`` with
#: ``non_blocking=True``, a ``copy_`` from a pinned tensor -- not a read-back's pinned destination
#: (``torch.empty(..., pin_memory=True)``, ``buf.copy_(out, ...)``)
_UPLOAD_PIN_CODE = re.compile(r"DataLoader\(.*\bpin_memory=True|^\s+(?:\w+=\w+,\s*)*pin_memory=True|\.pin_memory\(\)|"
                              r"\.(?:to|cuda)\([^)]*non_blocking=True|\.copy_\(\w*pinned\w*, non_blocking=True")
#: The words of fixes that bundle pinned, asynchronous uploads with another lever, less that lever: the rest is the fix
#: for a trace whose uploads are pinned and asynchronous already (h37-pinned32: ``real-h100-torch/torch_input_bound``
#: and ``wild/d2d_v100`` were told to load batches "into pinned memory" beside their pinned ``cudaMemcpyAsync``s).
#: Each composed from its fix's own template, so a change of a fix's words is made once (h37-hipcode34).
_UNPINNED_WORDS = {
    LOADER.text: _loader(""),
    LOADER_INFERENCE.text: _loader_inference(""),
    BETWEEN_PASSES.text: _between_passes("tokenise and build it ahead, on a thread of its own or in DataLoader workers"),
    REPLAY_AHEAD.text: _replay_ahead(" before it ends"),
}
#: what a kept upload line says beside it
_KEPT = "as already: uploads pinned, non_blocking"


def _uploads_kept(a: Action) -> Action | None:
    """Fix ``a`` for a trace whose uploads are pinned and asynchronous already (``pinned_async_h2d``): its words less
    the pinning (:data:`_UNPINNED_WORDS`), each code line that pins an upload or copies it ``non_blocking`` marked as
    kept, not removed (a loader written without ``pin_memory=True`` would undo the pinning the trace shows); None
    where the fix holds no such lever.  Why not drop the fix: its other levers (worker processes, preparing ahead)
    are still news."""
    text = _UNPINNED_WORDS.get(a.text, a.text)
    lines = (a.snippet or "").split("\n")
    marked = [_kept_line(ln) if _UPLOAD_PIN_CODE.search(ln) else ln for ln in lines]
    if text == a.text and marked == lines:
        return None
    return Action(text=text, snippet="\n".join(marked) if a.snippet is not None else None, snippet_lang=a.snippet_lang)


def _kept_line(line: str, kept: str = _KEPT) -> str:
    """A code line that pins or copies an upload asynchronously, its comment saying the trace shows it done."""
    code, sep, comment = line.partition("   # ")
    return f"{code}   # {comment}; {kept}" if sep else f"{line}   # {kept}"


#: what a code line that copies ``non_blocking`` says beside it, where the copies ask for it already
_KEPT_NON_BLOCKING = "as already: non_blocking=True"
#: A fix's ``non_blocking=True`` line (not one of a read-back's pinned destination, :data:`_UPLOAD_PIN_CODE`'s rule)
_NON_BLOCKING_CODE = re.compile(r"\.(?:to|cuda)\([^)]*non_blocking=True|\.copy_\(\w*pinned\w*, non_blocking=True")
#: The pinning alone, the rest of the fix that asks for asynchronous copies from pinned memory where the copies ask
#: for non_blocking=True already: words only -- each line of its code is one the trace shows done.  It opens with the
#: pinning fix's own lever, so a finding that gives that fix tells it once (``rules.base._said_before``)
_PIN_BATCHES = action("Let the DataLoader pin its batches (pin_memory=True): from pageable memory the driver stages "
                      "each copy to the GPU and the host waits for it, however the copy was called.")
#: The words of fixes that ask for asynchronous uploads among other levers, less the flag, for a trace whose uploads
#: ask for it already but copy from pageable memory: the pinning and the other levers are the rest of the fix
#: (h37-nonblock33: ``wild/loader_pass_rtx5070ti``'s batch copy, ``copy_(..., non_blocking=True)`` from pageable
#: memory, was told to add ``non_blocking=True``).  The finding's summary says once that the flag is in use
#: ("Already in use, so not suggested: ..."); no fix repeats it (h37-nonblock34: two fixes of one finding said "the
#: copies ask for non_blocking=True already").
_FLAG_ASKED_WORDS = {
    BETWEEN_PASSES.text: _between_passes("tokenise and copy ahead, from pinned memory"),
    REPLAY_AHEAD.text: _replay_ahead(" from pinned memory"),
}


def _non_blocking_kept(a: Action) -> Action | None:
    """Fix ``a`` for a trace whose uploads ask for ``non_blocking=True`` already but are not all pinned
    (``non_blocking_h2d``): its words less the request for the flag (composed from its template: PIN_MEMORY's
    ``{copies}`` kept as the rule filled it), each code line that copies ``non_blocking`` marked as kept (not removed:
    a copy without it would block even once pinned); None where the fix holds no such lever.  Why keep the rest: the
    pinning is still news, and without it the flag does nothing."""
    if a.text == NON_BLOCKING.text:
        return _PIN_BATCHES
    text = _FLAG_ASKED_WORDS.get(a.text) or refilled(a.text, PIN_MEMORY.text, _pin_memory("")) or a.text
    lines = (a.snippet or "").split("\n")
    marked = [_kept_line(ln, _KEPT_NON_BLOCKING) if _NON_BLOCKING_CODE.search(ln) else ln for ln in lines]
    if text == a.text and marked == lines:
        return None
    return Action(text=text, snippet="\n".join(marked) if a.snippet is not None else None, snippet_lang=a.snippet_lang)


FIX_REST = {"pinned_async_h2d": _uploads_kept, "non_blocking_h2d": _non_blocking_kept}
#: Fixes that act on something a trace may not hold: the fused optimizer needs an optimizer step.
FIX_NEEDS = {FUSED_OPTIMIZER.text: ("an optimizer step", lambda n: is_step_end_event(n) or _fused_optimizer_op(n))}
#: Code that records CUDA graphs: torch.compile's mode, the graph APIs.
_GRAPH_CODE = ("reduce-overhead", "make_graphed_callables", "torch.cuda.graph(", "CUDAGraph(")


#: Graph capture on Intel GPUs (the ``xpu`` device), written in CUDA's spelling as every fix is (``devices.code`` gives
#: it the device's: ``torch.xpu.graph``, ``torch.xpu.XPUGraph``).
XPU_GRAPHS = action(
    "Capture the step (or the forward pass) once as a graph and replay it with one launch: torch.xpu.graph records "
    "it (PyTorch 2.11 on); torch.compile's mode=\"reduce-overhead\" records no graph on Intel GPUs.  Static shapes; "
    "copy each new input into the captured tensors.",
    "g = torch.cuda.CUDAGraph()\n"
    "with torch.cuda.graph(g):          # once, after a few warm-up steps\n"
    "    static_out = model(static_x)\n"
    "static_x.copy_(x); g.replay()      # each step: one launch")
#: What PyTorch's fixes name that a vendor's device lacks, or has only from a version on (``Framework.fit``).  Intel
#: GPUs: Inductor records graphs (``mode="reduce-overhead"``, its CUDA graph trees) on CUDA devices only -- XPU's are
#: proposed, not released (pytorch/pytorch#180168, "[RFC] XPUGraph Trees", open, planned after 2.15); the graph APIs
#: ``torch.xpu.XPUGraph``, ``torch.xpu.graph`` and ``make_graphed_callables`` came with PyTorch 2.11 (the RFC
#: pytorch/pytorch#162143 and its pull requests #171447, #174046; vllm-project/vllm#34482 runs them on
#: torch 2.11.0+xpu).  A trace that does not date PyTorch is told neither.  The allocator's history for a memory
#: snapshot, ``torch.xpu.memory._record_memory_history``, came with the same release (pytorch/pytorch#169559, merged
#: December 2025; intel/torch-xpu-ops#2311).  The sync debug mode is CUDA's (``torch.cuda.set_sync_debug_mode``):
#: PyTorch's own ``torch.xpu`` has none (no ``_xpu_set_sync_debug_mode`` binding; only Intel's extension, IPEX, adds
#: one, which a trace does not show in use): a fix keeps its other lines.
#: CUDA and ROCm builds alike: the device-generic ``torch.amp.GradScaler('cuda')`` came with PyTorch 2.3
#: (``torch.cuda.amp.GradScaler`` deprecated for it in 2.4, still there); a trace that does
#: not date PyTorch past 2.3 is told ``torch.cuda.amp.GradScaler()``, which every version it could be accepts
#: (h37-review10: d2d_v100, 2022, and resnet_rtx2080ti_slow_workers were told the 2.3 form).
_GRAD_SCALER = ("torch.amp.GradScaler('cuda')", (2, 3), Spelled("scaler = torch.cuda.amp.GradScaler()"))
#: ``torch.cuda.make_graphed_callables`` came with PyTorch 1.10 (its CUDA graphs API, ``torch.cuda.graphs``)
_GRAPHED_CALLABLES = ("make_graphed_callables", (1, 10), Noted(
    "make_graphed_callables: PyTorch 1.10 or newer; before it, TorchScript's fusion is the lever"))
#: ROCm's caching allocator reads its settings from ``PYTORCH_CUDA_ALLOC_CONF`` first and, where that is unset, from
#: ROCm's own ``PYTORCH_HIP_ALLOC_CONF`` (``c10/cuda/CUDAAllocatorConfig.h``, ``#ifdef USE_ROCM``: "convenience for ROCm
#: users"): an AMD GPU's user is told ROCm's name, with the order.  Expandable segments came to ROCm with PyTorch 2.12
#: on ROCm 7.0+ (pytorch/pytorch#173330, relanded as #177974, March 2026; gated to ROCm 7 by #179930): an older ROCm
#: build warns "expandable_segments not supported on this platform" and ignores the setting, so a trace that does not
#: date PyTorch past 2.11 is told so beside the fix.
_HIP_ALLOC_CONF = ("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", None, Spelled(
    "export PYTORCH_HIP_ALLOC_CONF=expandable_segments:True   # read where PYTORCH_CUDA_ALLOC_CONF is unset"))
_ROCM_EXPANDABLE = ("expandable_segments:True", (2, 12), Noted(
    "ROCm: PyTorch 2.12+ on ROCm 7.0+; an older ROCm build warns \"expandable_segments not supported on this "
    "platform\" and ignores it"))
#: ROCm's own name for the switch that turns the caching allocator off is ``PYTORCH_NO_HIP_MEMORY_CACHING`` (ROCm's
#: debugging guides set it): both names are unset to turn it back on.
_HIP_NO_CACHING = ("unset PYTORCH_NO_CUDA_MEMORY_CACHING", None, Spelled(
    "unset PYTORCH_NO_HIP_MEMORY_CACHING PYTORCH_NO_CUDA_MEMORY_CACHING   # ROCm's name and CUDA's"))
#: ``torch.jit.set_fusion_strategy`` came with PyTorch 1.11 (pytorch/pytorch#72937, the dynamic-shape fusion API):
#: a trace of an older release, or one that does not date it (nothing assumed), is not told of it
_FUSION_STRATEGY = ("torch.jit.set_fusion_strategy", (1, 11), None)
#: An XPU build's caching allocator reads its own variable, ``PYTORCH_XPU_ALLOC_CONF`` (``c10/xpu/XPUCachingAllocator.h``,
#: ``XPUAllocatorConfig::instance``; ``devices.intel.code`` spells it), and honours expandable segments only where it
#: was built with them (pytorch/pytorch#166292 and its stack, late 2025; without ``SYCL_EXT_ONEAPI_VIRTUAL_MEM`` the
#: setting warns "expandable_segments not supported on this platform" and is ignored): said beside the fix, the
#: release not being dated here.
_XPU_EXPANDABLE = ("expandable_segments:True", None, Noted(
    "XPU: only a PyTorch XPU build with expandable segments (pytorch/pytorch#166292) honours it; an older one warns "
    "\"expandable_segments not supported on this platform\" and ignores it"))
#: torch_npu's expandable segments need the NPU driver of Ascend HDK 23.0.0 or newer, and an allocator that keeps
#: ``max_split_size_mb`` and ``garbage_collection_threshold`` at their defaults (Ascend's ``PYTORCH_NPU_ALLOC_CONF``
#: reference, CANN 8.0 / Ascend Extension for PyTorch 6.0): said beside the fix, which no snapshot dates.
_NPU_EXPANDABLE = ("expandable_segments:True", None, Noted(
    "Ascend: needs Ascend HDK 23.0.0+, and max_split_size_mb / garbage_collection_threshold left at their defaults"))
DEVICE_FEATURES = {
    "NVIDIA": (_GRAD_SCALER, _GRAPHED_CALLABLES, _FUSION_STRATEGY),
    # a line spelled anew first: a fix given a note is not read further (``Framework.fit``)
    "AMD": (_GRAD_SCALER, _HIP_ALLOC_CONF, _HIP_NO_CACHING, _GRAPHED_CALLABLES, _ROCM_EXPANDABLE, _FUSION_STRATEGY),
    "Intel": (_FUSION_STRATEGY, ("reduce-overhead", None, XPU_GRAPHS), ("make_graphed_callables", (2, 11), None),
              ("torch.cuda.graph(", (2, 11), None), ("CUDAGraph(", (2, 11), None),
              ("memory._record_memory_history", (2, 11), None), ("set_sync_debug_mode", None, WITHOUT_LINE),
              _XPU_EXPANDABLE),
    # Ascend NPUs (``torch_npu``): its AMP scaler is ``torch.npu.amp.GradScaler`` (the CUDA spelling, which
    # ``devices.ascend.code`` makes the NPU's); graphs, the sync debug mode and TF32 are not known of every torch_npu
    # release a snapshot may come from (none dates it), so a fix naming them is left out or keeps its other lines.
    # The memory history and expandable segments are torch_npu's own (``torch.npu.memory._record_memory_history``,
    # ``PYTORCH_NPU_ALLOC_CONF``): kept, in its words.
    "Huawei": (_FUSION_STRATEGY, ("torch.amp.GradScaler('cuda')", None, Spelled("scaler = torch.cuda.amp.GradScaler()")),
               ("reduce-overhead", None, None), ("make_graphed_callables", None, None),
               ("torch.cuda.graph(", None, None), ("CUDAGraph(", None, None),
               ("set_sync_debug_mode", None, WITHOUT_LINE), ("allow_tf32", None, None), _NPU_EXPANDABLE),
    # the MPS backend: no graphs, no memory history, no sync debug mode (``torch.mps`` has none of them)
    "Apple": (_FUSION_STRATEGY, ("make_graphed_callables", None, None), ("torch.cuda.graph(", None, None),
              ("CUDAGraph(", None, None), ("memory._record_memory_history", None, None),
              ("set_sync_debug_mode", None, WITHOUT_LINE), ("allow_tf32", None, None)),
}

#: PyTorch's Windows builds leave out the CUDA driver API its expandable segments are built on
#: (``c10/cuda/CMakeLists.txt`` defines ``PYTORCH_C10_DRIVER_API_SUPPORTED`` only ``if(NOT WIN32)``; without it
#: ``CUDAAllocatorConfig``'s ``expandable_segments()`` warns "expandable_segments not supported on this platform" and
#: returns false): a Windows job is told the allocator's setting against fragmentation its build honours,
#: ``max_split_size_mb`` (PyTorch's own out-of-memory advice before expandable segments), and a fix whose other lines
#: stand alone keeps them.
WINDOWS_NO_SPLIT = action(
    "Keep large cached blocks whole instead: PyTorch on Windows has no expandable segments (the setting warns "
    "\"expandable_segments not supported on this platform\" and is ignored). With max_split_size_mb the caching "
    "allocator never splits a cached block larger than it, so a large request still finds one whole; set it before "
    "the first CUDA allocation.",
    "import os\n"
    "os.environ[\"PYTORCH_CUDA_ALLOC_CONF\"] = \"max_split_size_mb:128\"   # Windows: no expandable segments\n"
    "import torch", "python")
PLATFORM_FEATURES = {
    "Windows": (("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True   #", None, WITHOUT_LINE),
                ("expandable_segments:True", None, WINDOWS_NO_SPLIT)),
}


def fix_introduces(a: Action) -> tuple[str, ...]:
    """What a fix's code puts in place: CUDA graphs (a compiled run without them may still be told of the mode),
    else torch.compile."""
    code = a.snippet or ""
    if any(x in code for x in _GRAPH_CODE):
        return ("cuda_graphs",)
    return ("compiled",) if "torch.compile(" in code else ()


#: Kernels launched with fewer blocks than SMs (``small_grid``): in PyTorch, ops on tiny tensors, one launch each.
#: Two fixes, not one with an "or": the compiler's is a fix of its own, which a compiled trace is not told again
#: (``fix_introduces`` reads its code; h37-review10: d2d_v100 and torch_compile_cudagraphs_inference were told "or
#: let torch.compile fuse the small ops" beside "Already in use, so not suggested: torch.compile").
_STACKED = ("xs = torch.stack(items)            # one (N, ...) tensor instead of N small ones\n"
            "ys = torch.vmap(f)(xs)             # one launch over the batch, not N")
_COMPILE_SMALL = action("Let torch.compile fuse the small ops into fewer, larger kernels.", "model = torch.compile(model)")
FIXES["small_grid"] = (action(
    "These kernels run on tensors too small to fill the GPU: give each launch more data -- raise the batch size, "
    "stack per-item or per-parameter tensors and run one op over the stack (torch.stack, torch._foreach_* ops, "
    "torch.vmap instead of a Python loop).",
    _STACKED + "\n"
    "torch._foreach_mul_(params, 0.9)   # one multi-tensor kernel over a list of tensors"), _COMPILE_SMALL)
#: and to a job with no optimizer step known (a forward pass, work of no known kind): no per-parameter update to batch
#: -- ``torch._foreach_mul_(params, 0.9)`` is an optimizer's code, and hf_qwen_h100's forward passes were shown it
#: (h37-auditleft31)
_SMALL_GRID_FORWARD = (action(
    "These kernels run on tensors too small to fill the GPU: give each launch more data -- raise the batch size, "
    "stack per-item tensors and run one op over the stack (torch.stack, torch.vmap instead of a Python loop).",
    _STACKED), _COMPILE_SMALL)
FIXES.update({f"small_grid@{tag}": _SMALL_GRID_FORWARD for tag in ("inference", "any_work")})

#: The frame of SDPA's math backend (``at::native::_scaled_dot_product_attention_math``, its op
#: ``at::_ops::_scaled_dot_product_attention_math``): where no fused kernel takes ``F.scaled_dot_product_attention``'s
#: call (fp32 inputs where the flash kernel needs 16-bit, a head dimension over the kernels' limit, an arbitrary mask
#: with some builds, the fused backends disabled), PyTorch computes softmax(QKᵀ)V op by op, writing the (batch, heads,
#: queries, keys) scores and probabilities to memory and keeping them for the backward -- quadratic in the sequence.
ATTENTION_MATH_FRAME = "_scaled_dot_product_attention_math"


def is_attention_math_frame(name: str) -> bool:
    """An allocation's frame (its function's name) is SDPA's math backend (:data:`ATTENTION_MATH_FRAME`)."""
    return ATTENTION_MATH_FRAME in name


#: Where attention computed op by op shows in a snapshot's stacks, in words (the rules' and the report's).
ATTENTION_OP_BY_OP = (f"SDPA's math backend, `{ATTENTION_MATH_FRAME}`, or a softmax called as its own op inside an "
                      f"attention function")
#: The words a function's name has where it computes attention (``scaled_dot_product_attention``, Hugging Face's
#: ``eager_attention_forward``, a model's own ``attn``) and where it computes a softmax (``torch.softmax``,
#: ``at::_softmax``, a course's own ``softmax`` / ``custom_softmax``), lower case.
_ATTENTION_WORDS = ("attention", "attn")
_SOFTMAX_WORD = "softmax"


def writes_attention_scores(names: Sequence[str]) -> bool:
    """Whether an allocation's stack (its frames' function names, innermost first) is attention computed op by op:
    SDPA's math backend (:func:`is_attention_math_frame`), or a softmax run as its own op inside an attention
    function.  Why the second: a fused attention kernel runs its softmax on chip and writes no (batch, heads,
    queries, keys) matrix, so a softmax that allocates inside attention is, by that alone, attention's probabilities
    (and its temporaries) written to memory -- quadratic in the sequence; a model's own attention (CS336's
    ``scaled_dot_product_attention`` over its own ``softmax``, Hugging Face's eager path) writes them exactly as the
    math backend does, and was booked as plain activations (h37-survey41m).  A softmax outside attention (a
    classifier's, cross-entropy's ``log_softmax``) is no score matrix."""
    low = [n.lower() for n in names]
    if any(is_attention_math_frame(n) for n in names):
        return True
    first = next((i for i, n in enumerate(low) if _SOFTMAX_WORD in n), None)
    return first is not None and any(w in n for n in low[first + 1:] for w in _ATTENTION_WORDS)


#: An OOM whose live blocks SDPA's math backend made (``oom_snapshot``): the fused backends keep no score matrix.
FIXES["oom_snapshot:attention_math"] = (action(
    "Compute attention in one fused kernel: call torch.nn.functional.scaled_dot_product_attention in place of a "
    "hand-written matmul -> softmax -> matmul, and let it run a fused backend.  Attention computed op by op (by hand, "
    "or SDPA's math fallback) writes the full score matrix (batch x heads x queries x keys) to memory, and its "
    "softmax stays live while autograd keeps it for a backward (grad on); the flash and memory-efficient kernels keep "
    "neither scores nor probabilities.  They need 16-bit inputs for flash (autocast), a supported head dimension, "
    "and is_causal=True rather than a materialised causal mask; forcing them raises, with the reason, where they "
    "cannot run.",
    "from torch.nn.attention import SDPBackend, sdpa_kernel\n"
    "with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]), \\\n"
    "        torch.autocast(\"cuda\", dtype=torch.bfloat16):\n"
    "    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)"),)

#: A peak whose live blocks SDPA's math backend made (``activation_memory``'s attention-math check): the same fix.
FIXES["activation_memory:attention_math"] = FIXES["oom_snapshot:attention_math"]
FIXES["memory_near_capacity:attention_math"] = FIXES["oom_snapshot:attention_math"]

#: Where a library makes its KV cache (a frame's file, its path): vLLM's cache engine (v0), SGLang's token-to-KV pools
#: (``mem_cache/``).  A cache holds the tokens a generation keeps -- neither the weights (it grows with the batch and
#: the context) nor the activations (no backward frees it).
_KV_CACHE_PATHS = ("vllm/worker/cache_engine.py", "sglang/srt/mem_cache/")
#: A file whose name says it holds a KV cache's code: Hugging Face's ``cache_utils.py`` (``DynamicCache.update``'s
#: ``torch.cat``, ``StaticCache``'s buffers) and the forks research code copies of it (SketchKV's
#: ``cache_utils_V2.py``: tests/fixtures/wild/snapshot_llama_kvcache_state), torchtune's and many models'
#: ``kv_cache.py``.
_KV_CACHE_FILE_NAMES = ("cache_utils", "kv_cache")


@functools.lru_cache(maxsize=1 << 16)  # a snapshot asks of the same frames thousands of times
def is_kv_cache_frame(filename: str, name: str) -> bool:
    """A frame (its file and function) makes a KV cache: a library's cache (:data:`_KV_CACHE_PATHS`), a file named
    for one (:data:`_KV_CACHE_FILE_NAMES`), or a function whose name says it (vLLM v1's ``initialize_kv_cache`` /
    ``_allocate_kv_cache_tensors``, a user's ``setup_kv_cache``)."""
    path = filename.replace("\\", "/")
    base = path.rsplit("/", 1)[-1].lower()
    return (any(f in path for f in _KV_CACHE_PATHS) or any(base.startswith(f) for f in _KV_CACHE_FILE_NAMES)
            or "kv_cache" in name.lower())


#: A live stack's frame as the snapshot reader writes it (``file:line function``; a Windows path's drive colon is no
#: line's).
_FRAME_TEXT = re.compile(r"(.*?):\d+ (.*)")


def is_kv_cache_frame_text(frame: str) -> bool:
    """:func:`is_kv_cache_frame` of a frame written ``file.py:123 function`` (``model.trace.LiveStack.frames``)."""
    m = _FRAME_TEXT.match(frame)
    return m is not None and is_kv_cache_frame(m.group(1), m.group(2))


#: An OOM whose live memory is mostly a KV cache (``oom_snapshot``): fewer cached tokens, or each one smaller.
FIXES["oom_snapshot:kv_cache"] = (action(
    "Keep fewer tokens in the KV cache, or each one smaller: the cache is neither weights nor activations -- it "
    "grows with the batch and the context.  Bound its tokens (a serving engine's max_model_len / max_num_seqs, or its "
    "share, gpu_memory_utilization; generate()'s batch and max_new_tokens), page it (vLLM, SGLang) rather than "
    "preallocating the longest context, or quantise it (fp8 or 4-bit entries).",
    "llm = LLM(model, gpu_memory_utilization=0.85, max_model_len=8192, kv_cache_dtype=\"fp8\")   # vLLM\n"
    "out = model.generate(**inputs, max_new_tokens=256, cache_implementation=\"quantized\",    # transformers\n"
    "                     cache_config={\"backend\": \"quanto\", \"nbits\": 4})"),)

#: A peak mostly a KV cache (``memory_near_capacity``): what the cache's size follows, never the weights' sharding.
FIXES["memory_near_capacity:kv_cache"] = FIXES["oom_snapshot:kv_cache"]
#: The same in an inference job -- where a generation's cache lives: ``memory_near_capacity@inference`` replaces the
#: rule's general fixes and its variants, and said "load the weights in bfloat16, split the model" of a peak the
#: cache holds most of.  The math backend's scores are a forward's too: a fused backend frees them there alike.
FIXES["memory_near_capacity:kv_cache@inference"] = FIXES["oom_snapshot:kv_cache"]
FIXES["memory_near_capacity:attention_math@inference"] = FIXES["oom_snapshot:attention_math"]
#: A job of no known kind (``memory_near_capacity@any_work`` replaces the rule's fixes whole): the variants whose fix
#: holds for it as it is -- gradients and an optimizer step only where its memory shows them, a cache, the scores.
FIXES.update({f"memory_near_capacity:{v}@any_work": FIXES[f"memory_near_capacity:{v}"]
              for v in ("gradients", "optimizer", "kv_cache", "attention_math")})
#: Work of no known kind whose memory shows gradients or an optimizer step trains (``_memory.trained``; the rule asks
#: the variant ``<category>/trained``): the training job's fixes of that category, not the held-bytes one
#: (memkind36 *Left*: the gradients are the evidence of training the job's kind did not have).
FIXES.update({f"memory_near_capacity:{v}/trained@any_work": FIXES[f"memory_near_capacity:{v}"]
              for v in ("held", "activations", "other")})
#: ... and autocast's cast copies of a job that trains keep the rule's training fixes: the casts' own fix
#: (``NO_CAST_CACHE``) is for a run that never trains.
FIXES["memory_near_capacity:casts/trained@any_work"] = FIXES["memory_near_capacity"]
#: Each category of a forward pass's peak its own fix (``memory_near_capacity@inference`` replaced them all with one
#: "load the weights in bfloat16, split the model, lower the batch"): the weights in fewer bytes or over more GPUs;
#: activations and other bytes with fewer inputs per pass, and none kept for a backward; autocast's cached copies
#: not cached.  A job of no known kind keeps its own (``@any_work``) but for the casts, whose fix holds for it too.
FIXES.update({
    "memory_near_capacity:held@inference": (INFERENCE_WEIGHTS,),
    "memory_near_capacity:activations@inference": (FORWARD_SMALLER_PASS, NO_GRAPH),
    "memory_near_capacity:other@inference": (FORWARD_SMALLER_PASS,),
    "memory_near_capacity:casts@inference": (NO_CAST_CACHE,),
    "memory_near_capacity:casts@any_work": (NO_CAST_CACHE,),
    # a peak whose activations are autograd's graph of a pass with no backward (``_memory.graph_kept``): not recording
    # the graph frees it whole, whatever the job's kind was read (h37-probe41m)
    **{f"memory_near_capacity:forward_kept{tag}": FIXES["oom_snapshot:forward_kept"]
       for tag in ("", "@inference", "@any_work")},
})

#: Attention computed op by op (``unfused_attention``): PyTorch's fused attention op, which picks the GPU's own fused
#: kernel (its flash, memory-efficient or cuDNN backend on CUDA; ROCm's own backends), and Hugging Face's switch to it.
FIXES["unfused_attention"] = (action(
    "Compute attention with one fused op: F.scaled_dot_product_attention runs the matmuls and the softmax in one "
    "kernel of the GPU's own, without writing the score matrix to memory.  In a Hugging Face model, load it with "
    "attn_implementation=\"sdpa\".",
    "out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)\n"
    "# instead of: torch.softmax(q @ k.transpose(-2, -1) * scale + mask, dim=-1) @ v\n"
    "model = AutoModel.from_pretrained(name, attn_implementation=\"sdpa\")"),)

#: Hugging Face's T5 family computed its attention op by op only until transformers moved it to the shared attention
#: interface (huggingface/transformers#47014, merged 2026-07: T5, mT5, UMT5, Pix2Struct, UDOP, Pop2Piano): before it,
#: ``attn_implementation="sdpa"`` raises a ValueError for these models, since their relative position bias is added to
#: the scores.  LongT5 and Switch Transformers stay eager-only after it.  Keyed by the module class that launched the
#: run (``metrics.attention``: ``with_modules``' ``nn.Module: T5Attention_0``).
_T5_SDPA_LATER = action(
    "Hugging Face's {module} computes attention op by op: its relative position bias is added to the scores, and "
    "transformers offered no attn_implementation=\"sdpa\" for it until its attention moved to the shared attention "
    "interface (huggingface/transformers#47014, 2026); on an older release the switch raises a ValueError.  Upgrade "
    "transformers and load the model with attn_implementation=\"sdpa\": the bias goes to "
    "F.scaled_dot_product_attention as its attention mask, and the fused kernel never writes the score matrix.",
    "# after upgrading transformers to a release with T5 on the shared attention interface\n"
    "model = T5EncoderModel.from_pretrained(name, attn_implementation=\"sdpa\")")
_T5_EAGER_ONLY = action(
    "Hugging Face's {module} computes attention op by op and offers no attn_implementation=\"sdpa\": its position "
    "bias is added to the scores in its own code.  Replace the module's attention with "
    "F.scaled_dot_product_attention, the bias (with the mask) passed as attn_mask and scale=1.0 (T5 does not scale "
    "its scores).",
    "out = F.scaled_dot_product_attention(q, k, v, attn_mask=position_bias + mask, scale=1.0)")
for _m in ("T5Attention", "MT5Attention", "UMT5Attention", "Pix2StructTextAttention", "UdopAttention",
           "Pop2PianoAttention"):
    FIXES[f"unfused_attention:{_m}"] = (_T5_SDPA_LATER,)
for _m in ("LongT5Attention", "LongT5LocalAttention", "LongT5TransientGlobalAttention", "SwitchTransformersAttention"):
    FIXES[f"unfused_attention:{_m}"] = (_T5_EAGER_ONLY,)

#: PyTorch's words for a weight update in a kernel's name (``Framework.update_kernels``): its optimizers' names
#: (``fused_adam_kernel``, ``base.OPTIMIZER_KERNEL``), gradient clipping (``clip_grad``), ATen's ``_foreach_`` ops and
#: Inductor's compiled foreach kernels (``triton_for_fused_*``: a compiled optimizer's step).
UPDATE_KERNELS = (OPTIMIZER_KERNEL, r"(?i:clip_grad|_foreach_)", r"^triton_for_fused")

FRAMEWORK = Framework(
    id="pytorch", name="PyTorch",
    # PyTorch/XLA's ``xp.StepTrace(name, step_num=s)`` writes its XPlane's step marks as TensorFlow's (``_r=1``), by
    # the same profiler as its other step marks; Keras 3 runs on PyTorch too (its step functions)
    own_step_marks=tensorflow.own_step_marks,
    step_marks=tensorflow.PROFILER_STEP_MARKS, step_function=tensorflow.is_step_function,
    annotation_ranges="record_function ranges",
    input_event=is_input, parallel_input=is_parallel_input, creation_op=is_creation_op, input_frame=is_input_frame, input_range=is_input_range, frame_label=frame_label, background_line=is_background_line, dispatch_event=is_dispatch, step_marker=is_step_marker, step_number=step_number, factory_op=is_factory_op, profiler_start_frame=is_profiler_start_frame, profiler_exit_frame=is_profiler_exit_frame, profiler_frame=is_profiler_frame,
    launcher_call=is_launcher_call, least_reserve=least_reserve, driver_ask=driver_ask,
    labels={**SNAPSHOT_MADE,
            "memory_imbalance:replicas": "nn.DataParallel's replicas of one module",
            "collectives_on_cpu": ("its process group was made on {backend} where a GPU's own collective library "
                                   "moves GPU tensors between GPUs"),
            "memory_imbalance:split_blocks": (
                "the caching allocator keeps split blocks on GPU {gpu} that later requests do not fit, so it runs out of "
                "memory first while the others keep room (its cache of wholly free segments is not counted: the "
                "allocator hands that back before it fails)"),
            "memory_imbalance:first_gpu": ("The fullest is the first GPU: DataParallel's output device, which holds the "
                                           "module's master copy and gathers every replica's outputs."),
            "python_tracing": "every Python call (torch.profiler's with_stack=True)",
            "python_tracing_confirm": ("profile again without with_stack=True (torch.profiler.record_function ranges "
                                       "around the suspect code keep it named) to measure the host's time as the "
                                       "job runs it"),
            "cast_cause": "autocast casting the fp32 weights again on every call, or layers kept in fp32",
            "autograd_forward": ("`CompiledFunction` calls (AOTAutograd's compiled forward as an autograd.Function, "
                                 "called only with grad mode on and an input or parameter that requires grad)"),
            # PyTorch's CUDAGraph Trees (``torch.compiler_cudagraph_trees``; ``torch.compiler.cudagraph_mark_step_begin``'s
            # docs): a call starts a new iteration only while no backward is pending, and a graph is recorded per
            # distinct input shape -- a forward run with autograd on and never a backward, or changing shapes, record
            # again in the steady run
            "recapture_cause": (
                "torch.compile's CUDA graphs (mode=\"reduce-overhead\" or \"max-autotune\": CUDAGraph Trees) record "
                "the graph again rather than replay it: a call starts a new iteration only while no backward is pending, "
                "so forward calls run with autograd on and no backward record anew; and each new input shape is "
                "recorded too"),
            "compile_gap": ("TorchScript's executor profiling and optimising a scripted graph for input shapes its "
                            "guards had not seen (`fallback_function`)"),
            # PyTorch's profiling executor (``profiling_graph_executor_impl``; ``torch.jit.set_fusion_strategy``'s
            # docs): a failed type guard runs the fallback function, compiled and specialised in turn for the shapes it
            # sees, down to the bailout depth -- then an unfused, unspecialised graph
            "compile_gap_cause": (
                "TorchScript's profiling executor plans the graph again for each input shape its type guards have not "
                "seen, one fallback deeper each time until its bailout depth is spent: a model whose input sizes change "
                "every call (a graph's node count, a sequence's length) pays this planning again for each new shape, "
                "in the steady run too, not once."),
            "compile_gap_saving": ("the steady state's inputs fit plans the executor already made (sizes padded to a "
                                   "few buckets) and pay none of the planning"),
            "autotune": "cuDNN's algorithm search (`torch.backends.cudnn.benchmark`: candidate kernels "
                        "timed on the first call of each shape)",
            "op": "ATen op", "ops": "ATen ops", "ops_short": "ATen ops", "ops_table": "Top ATen ops ({kept}, all GPUs)",
            "backward_nodes": "autograd's `*Backward` nodes",
            "input_wait_meaning": "share of the {step} the GPU was idle while the training loop waited for the "
                                  "DataLoader's next batch or copied it to the GPU",
            "input_next": "the DataLoader's `__next__`",
            "handoff:own_streams": "the program's (`torch.cuda.Stream`, `wait_stream`)",
            "host_op_meaning": "PyTorch places each op on its tensors' device: there is no op placement to check",
            "gpu_user": "PyTorch",
            "dispatch_call": "top-level op call",
            "compiled_step": "torch.compile",
            "memcpy:levers": "pinned memory and non_blocking copies, ops kept on the GPU, async prefetch",
            "compiler": "torch.compile",
            "step_gaps:host_work": "host work between steps (Python, .item() and other syncs)",
            "step_gaps:cpu_ops": "CPU ops between steps (tensor work on the host, no sync among it: often the next "
                                 "batch being built)",
            "step_gaps:launch": "the host launching kernels",
            "step_gaps:dispatch": "the host dispatching the next step's own ops (Python and PyTorch's per-op work "
                                  "before their first launch)",
            "input_bound:own_range_calls": " -- the profiler recorded {calls} there, the rest is Python it did not record",
            "input_bound:own_range_unrecorded": " -- Python the profiler did not record",
            "unrecorded:launcher": ("{ms} of it comes right before kernels launched straight through the driver, "
                                    "outside every ATen op ({launches}): a Python launcher's own time (Triton's JIT "
                                    "runtime called outside torch.compile, CuPy, Numba), binding the kernel's "
                                    "arguments and finding its compiled kernel on every call"),
            "param_upload": "FSDP's pre-forward / pre-backward hooks (parameters offloaded to host memory, uploaded "
                            "before each layer runs)",
            "title:xla_not_used": "torch.compile is off: chains of element-wise kernels could be fused"},
    looped=loop_for_job,
    not_applicable={"host_op_share": "PyTorch places each op on the device of its tensors: there is no op placement "
                                     "to check (syncs such as .item() are the host-sync check's)",
                    "eager_execution": "PyTorch runs eagerly by default: the cost of launching op by op is reported "
                                       "as launch-bound, with torch.compile as its fix"},
    fixes=FIXES, applied_markers=APPLIED_MARKERS, fix_applied=FIX_APPLIED, fix_introduces=fix_introduces,
    fix_rest=FIX_REST,
    device_features=DEVICE_FEATURES,
    platform_features=PLATFORM_FEATURES,
    fix_needs=FIX_NEEDS,
    capture_snippet=CAPTURE,
    memory_record=("with `torch.profiler.profile(profile_memory=True)`, or dump a memory snapshot with "
                   "`torch.cuda.memory._dump_snapshot(path)`"),
    writes="kineto", also_writes=("snapshot",), tc_eligible_op=is_tc_eligible_op, elementwise_kernels=ELEMENTWISE_KERNELS, kernel_kinds=INDUCTOR_KERNEL_KINDS,
    update_kernels=UPDATE_KERNELS,
    named_kernel_kinds=ATEN_KERNEL_KINDS + NVFUSER_KERNEL_KINDS + FBGEMM_KERNEL_KINDS + VISION_KERNEL_KINDS,
    not_gemm_kernels=NOT_GEMM_KERNELS,
    capture_hint=("torch.profiler.profile(..., on_trace_ready=tensorboard_trace_handler('LOGDIR/<run>'))",
                  "call prof.step() once per training step (or per forward pass)"),
    training_event=is_training_event, autograd_forward_event=is_autograd_forward, training_phase=is_training_phase, evaluation_phase=is_evaluation_phase,
    autograd_op=is_autograd_op, work_event=is_autograd_op, engine_wrapper=engine_wrapped, index_upload_op=is_index_upload_op, op_ranges_show_backward=True,
    training_frame=training_frame, kv_cache_frame=is_kv_cache_frame_text, grad_reset_event=is_grad_reset_event,
    sharded_forward_event=is_sharded_forward_event, tensor_parallel_event=is_tensor_parallel_event,
    compile_event=is_compile_event, compile_gap_event=is_jit_fallback,
    autotune_event=is_autotune_event, gpu_only_event=is_gpu_only_event, backend_event=backend_event, allocation_event=is_allocation_event,
    scalar_read_event=is_scalar_read_event,
    gpu_only_backend=is_gpu_only_backend, collective_backend=collective_backend, version_range=version_range, version_tags=version_tags,
    step_end_event=is_step_end_event, param_upload_event=is_param_upload_event,
    model_call=is_model_call, named_module=named_module, cache_release_event=is_cache_release_event,
    module_class=module_class, module_apply_line=module_apply_line, record_history=record_history,
    cast_kernels=(r"(bfloat16|float16|half|float8\w*)_copy_kernel",), cast_ops=("_to_copy", "to", "type_as"),
)
