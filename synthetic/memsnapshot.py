"""PyTorch memory snapshots (``torch.cuda.memory._dump_snapshot``) whose contents are known by construction, and
hostile pickles that must be refused without running.

Why: no GPU here records one, and a snapshot is what a framework dumps on an OOM; the reader
(``formats/snapshot``) must be judged on files with the real structure and known numbers.  The structure is what
``torch.cuda.memory._snapshot()`` returns (``torch/csrc/cuda/Module.cpp``, ``memorySnapshot``; the keys of
``torch/cuda/_memory_viz.py``'s readers): a dict of ``segments`` (``device``, ``address``, ``total_size``,
``allocated_size``, ``active_size``, ``requested_size``, ``stream``, ``segment_type``, ``segment_pool_id``,
``is_expandable``, ``frames``, ``blocks``: ``address``, ``size``, ``requested_size``, ``state``, ``frames``),
``device_traces`` (one list per device of ``action`` ``alloc`` / ``free_requested`` / ``free_completed`` /
``segment_alloc`` / ``segment_free`` / ``oom`` entries with ``addr`` (``device_free`` for an OOM), ``size``,
``stream``, ``time_us``, ``frames``), ``allocator_settings`` and ``external_annotations``; frames are
``{"filename", "line", "name"}``.  It is pickled by ``pickle.dump`` as ``_dump_snapshot`` does.

The allocator is a small model of PyTorch's caching allocator: blocks under 1 MiB come from 2 MiB segments, larger
ones from segments rounded up to 2 MiB (20 MiB at least below 10 MiB); a freed block stays cached in its segment
(merged with free neighbours) and is reused by a later request that fits (best fit); a request no cached block fits
asks the driver for a new segment; when the device has no room for it, the cached segments no block uses go back
to the driver first (``segment_free``), and only then does the request fail (``oom``).

    python -m synthetic.memsnapshot OUT.pickle [--scenario oom_activations]
"""

from __future__ import annotations

import argparse
import os
import pickle
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Callable, Iterator

MiB, GiB = 1 << 20, 1 << 30
SMALL, SMALL_SEGMENT, MIN_LARGE_SEGMENT = 1 * MiB, 2 * MiB, 20 * MiB
#: Device memory starts here (a CUDA address of the size real snapshots show).
BASE_ADDR = 0x7F00_0000_0000
T0_US = 1_790_857_026_000_000  # a time_us in 2026


def frame(filename: str, line: int, name: str) -> dict[str, Any]:
    return {"filename": filename, "line": line, "name": name}


def cpp(name: str, filename: str = "??") -> dict[str, Any]:
    """A C++ frame as ``stacks="all"`` records it: no line, the file often unknown (``??``)."""
    return frame(filename, 0, name)


#: What ``_record_memory_history(stacks="all")`` (the default) puts before any Python frame of every allocation: the
#: unwinder and the caching allocator (as a real H200 snapshot of PyTorch 2.11 shows, tests/fixtures/h200_memory).
ALLOCATOR_CPP = [cpp("torch::unwind::unwind()"), cpp("torch::CapturedTraceback::gather(bool, bool, bool)"),
                 cpp("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(unsigned long, "
                     "CUstream_st*)", "CUDACachingAllocator.cpp"),
                 cpp("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc(void**, signed char, "
                     "unsigned long, CUstream_st*)", ""),
                 cpp("at::detail::empty_generic(c10::ArrayRef<long>, c10::Allocator*, c10::DispatchKeySet, "
                     "c10::ScalarType, std::optional<c10::MemoryFormat>)")]


def _op(op: str) -> list[dict[str, Any]]:
    return [cpp(f"at::_ops::{op}::call(at::Tensor const&, at::Tensor const&)"), cpp("_PyObject_MakeTpCall")]


#: Stack frames as the allocator records them, innermost first (a user's model under torch.nn and autograd), with the
#: C++ frames of ``stacks="all"`` before and between the Python ones.
PARAMS = [*ALLOCATOR_CPP, *_op("_to_copy"),
          frame("/usr/lib/python3/site-packages/torch/nn/modules/module.py", 1355, "convert"),
          cpp("_PyEval_EvalFrameDefault"),
          frame("/usr/lib/python3/site-packages/torch/nn/modules/module.py", 942, "_apply"),
          frame("train.py", 31, "main")]
ACTIVATION = [*ALLOCATOR_CPP, *_op("addmm"),
              frame("/usr/lib/python3/site-packages/torch/nn/modules/linear.py", 125, "forward"),
              cpp("_PyEval_EvalFrameDefault"),
              frame("/usr/lib/python3/site-packages/torch/nn/modules/module.py", 1762, "_call_impl"),
              frame("model.py", 58, "forward"), frame("train.py", 44, "train_step")]
#: The backward pass runs on autograd's engine thread: its allocations have no Python frame at all.
GRADIENT = [*ALLOCATOR_CPP, cpp("at::_ops::mm::call(at::Tensor const&, at::Tensor const&)"),
            cpp("torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)"),
            cpp("torch::autograd::Node::operator()(std::vector<at::Tensor, std::allocator<at::Tensor> >&&)"),
            cpp("torch::autograd::Engine::evaluate_function(std::shared_ptr<torch::autograd::GraphTask>&, "
                "torch::autograd::Node*, torch::autograd::InputBuffer&, std::shared_ptr<torch::autograd::ReadyQueue> "
                "const&)"),
            cpp("torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)")]
#: The program's own ``torch.cuda.empty_cache()``: the segments it gives back carry its call's stack, C++ and Python
#: (a real one: ``torch/cuda/memory.py(192): empty_cache`` under the loop; survey h37-left17) -- never an allocation's.
EMPTY_CACHE = [cpp("torch::unwind::unwind()"), cpp("torch::CapturedTraceback::gather(bool, bool, bool)"),
               cpp("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::emptyCache()",
                   "CUDACachingAllocator.cpp"),
               cpp("c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::emptyCache()"),
               cpp("THCPModule_emptyCache(_object*, _object*)"),
               frame("/usr/lib/python3/site-packages/torch/cuda/memory.py", 192, "empty_cache"),
               frame("train.py", 52, "train_step")]
OPTIMIZER = [*ALLOCATOR_CPP, *_op("zeros_like"),
             frame("/usr/lib/python3/site-packages/torch/optim/adam.py", 157, "_init_group"),
             frame("/usr/lib/python3/site-packages/torch/optim/optimizer.py", 485, "wrapper"),
             frame("train.py", 47, "train_step")]

#: Lightning's automatic optimization (and any ``optimizer.step(closure)``, LBFGS's): the closure runs the training
#: step's forward and backward *inside* the optimizer's ``step``, so a forward's allocation has the optimizer's frames
#: outside its module's (a real DiT training step's stacks: tests/fixtures/wild/SURVEY.md, session 30, h37-survey64).
_CLOSURE = [frame("/usr/lib/python3/site-packages/lightning/pytorch/loops/optimization/automatic.py", 131, "closure"),
            frame("/usr/lib/python3/site-packages/lightning/pytorch/plugins/precision/precision.py", 109,
                  "_wrap_closure"),
            frame("/usr/lib/python3/site-packages/torch/optim/adam.py", 146, "step"),
            frame("/usr/lib/python3/site-packages/torch/optim/optimizer.py", 385, "wrapper"),
            frame("/usr/lib/python3/site-packages/lightning/pytorch/core/optimizer.py", 154, "step"),
            frame("train.py", 60, "main")]
CLOSURE_ACTIVATION = [*ACTIVATION[:-1], frame("lit_module.py", 105, "training_step"), *_CLOSURE]
CLOSURE_OPTIMIZER = [*OPTIMIZER[:-2], frame("/usr/lib/python3/site-packages/torch/optim/adam.py", 146, "step"),
                     *_CLOSURE[3:]]

#: A model built on the GPU: each ``nn.Linear(..., device="cuda")`` allocates its weight in its constructor, and no
#: ``Module._apply`` ever moves it (a real snapshot's stacks: tests/fixtures/wild/SURVEY.md, session 31,
#: h37-survey69: a0kuma/ckptTry).  ``with torch.device("cuda"):`` around the model's construction (litgpt's
#: ``init_module``, gpt-fast) allocates the same way, through the device mode's ``__torch_function__`` first.
_EMPTY = cpp("at::_ops::empty_memory_format::call(c10::ArrayRef<c10::SymInt>, std::optional<c10::ScalarType>, "
             "std::optional<c10::Layout>, std::optional<c10::Device>, std::optional<bool>, "
             "std::optional<c10::MemoryFormat>)")
BUILT_ON_GPU = [*ALLOCATOR_CPP, _EMPTY, cpp("_PyObject_MakeTpCall"),
                frame("/usr/lib/python3/site-packages/torch/nn/modules/linear.py", 106, "__init__"),
                cpp("_PyEval_EvalFrameDefault"),
                frame("model.py", 21, "__init__"), frame("train.py", 30, "main")]
BUILT_IN_DEVICE_MODE = [*ALLOCATOR_CPP, _EMPTY, cpp("_PyObject_MakeTpCall"),
                        frame("/usr/lib/python3/site-packages/torch/utils/_device.py", 104, "__torch_function__"),
                        *BUILT_ON_GPU[len(ALLOCATOR_CPP) + 2:]]
#: A checkpoint's loader puts each weight on the GPU itself: a tensor's ``.to()`` (``_to_copy``) or an empty tensor
#: on the device and ``copy_``, under the loader's own frames and no ``Module._apply`` or constructor -- Hugging Face's
#: ``from_pretrained(device_map=...)`` through accelerate's ``set_module_tensor_to_device``, and a user's own loader
#: (frames: the shapes these calls record; the names are theirs, the reader reads none of them).
_SITE = "/usr/lib/python3/site-packages"
HF_LOADED = [*ALLOCATOR_CPP, *_op("_to_copy"),
             frame(f"{_SITE}/accelerate/utils/modeling.py", 329, "set_module_tensor_to_device"),
             frame(f"{_SITE}/transformers/modeling_utils.py", 940, "_load_state_dict_into_meta_model"),
             frame(f"{_SITE}/transformers/modeling_utils.py", 4820, "_load_pretrained_model"),
             frame(f"{_SITE}/transformers/modeling_utils.py", 4261, "from_pretrained"),
             frame("train.py", 30, "main")]
USER_LOADED = [*ALLOCATOR_CPP, *_op("empty_strided"), frame("load.py", 12, "load_weights"),
               frame("train.py", 30, "main")]
#: The weights' stacks by how the model reached the GPU (``oom_weights``).
WEIGHT_FRAMES = {"moved": PARAMS, "built": BUILT_ON_GPU, "device_mode": BUILT_IN_DEVICE_MODE, "hf": HF_LOADED,
                 "loader": USER_LOADED}
#: A loader's staging buffer (a shard read whole onto the GPU, the weights copied out of it, then freed).
STAGING = [*ALLOCATOR_CPP, *_op("empty_strided"), frame(f"{_SITE}/safetensors/torch.py", 313, "load_file"),
           frame("load.py", 9, "load_weights"), frame("train.py", 30, "main")]


class OutOfMemory(Exception):
    """The modelled allocator could not serve a request (PyTorch raises ``torch.OutOfMemoryError``)."""


@dataclass
class _Block:
    address: int
    size: int
    requested: int = 0
    allocated: bool = False
    frames: list = field(default_factory=list)


@dataclass
class _Segment:
    address: int
    size: int
    large: bool
    blocks: list[_Block]
    frames: list


@dataclass
class Allocator:
    """One device's caching allocator, recording its trace as ``_record_memory_history`` does."""

    capacity: int  # bytes this process may reserve (the device's, or a cap it set)
    device: int = 0
    device_total: int | None = None  # the device's memory where a cap (set_per_process_memory_fraction) is below it
    expandable: bool = False
    #: PyTorch's ``should_split``: a large-pool block is split only where more than 1 MiB (``kSmallSize``) of it would
    #: remain, so a 25 MiB tensor keeps the whole 26 MiB block of its segment; off, every block is split to its size
    #: (the scenarios written before it keep their truths)
    unsplit_rest: bool = False
    segments: list[_Segment] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    now_us: int = T0_US
    next_addr: int = BASE_ADDR

    def _entry(self, action: str, addr: int, size: int, frames: list) -> None:
        self.now_us += 7
        e = {"action": action, ("device_free" if action == "oom" else "addr"): addr, "size": size, "stream": 0,
             "time_us": self.now_us}
        if frames:
            e["frames"] = frames
        self.trace.append(e)

    reserved: int = 0  # bytes in segments

    def __post_init__(self) -> None:
        self.expandable = self.expandable or _EXPANDABLE[0]
    allocated: int = 0  # bytes in allocated blocks

    def malloc(self, requested: int, frames: list | None = None) -> int:
        frames = frames or []
        size = _round(requested)
        large = size >= SMALL
        fits = [(b.size, b.address, s, b) for s in self.segments if s.large == large for b in s.blocks
                if not b.allocated and b.size >= size]
        if fits:
            _, _, seg, blk = min(fits, key=lambda f: (f[0], f[1]))
        elif self.expandable:
            seg, blk = self._map(size, large, requested, frames)
        else:
            seg_size = SMALL_SEGMENT if not large else (max(MIN_LARGE_SEGMENT, _round_to(size, 2 * MiB))
                                                         if size < 10 * MiB else _round_to(size, 2 * MiB))
            if self.reserved + seg_size > self.capacity:
                # as PyTorch does before it gives up: cached segments back, then one more try -- from inside this
                # allocation, so each segment given back carries its stack (``DeviceCachingAllocator::malloc``)
                self.empty_cache(frames)
            if self.reserved + seg_size > self.capacity:
                self._entry("oom", (self.device_total or self.capacity) - self.reserved, requested, frames)
                raise OutOfMemory(f"tried to allocate {requested} bytes")
            seg = _Segment(self.next_addr, seg_size, large, [_Block(self.next_addr, seg_size)], frames)
            self.next_addr += seg_size
            self.segments.append(seg)
            self.reserved += seg_size
            self._entry("segment_alloc", seg.address, seg_size, frames)
            blk = seg.blocks[0]
        if blk.size > size and not (self.unsplit_rest and large and blk.size - size <= SMALL):  # the rest stays cached
            i = seg.blocks.index(blk)
            seg.blocks.insert(i + 1, _Block(blk.address + size, blk.size - size))
            blk.size = size
        blk.allocated, blk.requested, blk.frames = True, requested, frames
        self.allocated += size
        # the entry records the tensor's request (``orig_size``), the block its rounded bytes
        # (``CUDACachingAllocator.cpp``'s ``alloc_found_block``: ``record_trace(ALLOC, ptr, orig_size, ...)``)
        self._entry("alloc", blk.address, requested, frames)
        return blk.address

    def size_of(self, addr: int) -> int:
        return next(b.size for s in self.segments for b in s.blocks if b.address == addr and b.allocated)

    def free(self, addr: int) -> None:
        seg, blk = next((s, b) for s in self.segments for b in s.blocks if b.address == addr and b.allocated)
        # both record the block's ``requested_size``: the request its allocation recorded, never the block's bytes
        self._entry("free_requested", addr, blk.requested, blk.frames)
        self._entry("free_completed", addr, blk.requested, blk.frames)
        blk.allocated, blk.requested, blk.frames = False, 0, []
        self.allocated -= blk.size
        seg.blocks = _merged(seg.blocks)

    def _map(self, size: int, large: bool, requested: int, frames: list) -> tuple[_Segment, _Block]:
        """``expandable_segments:True``: no cached block fits, so the pool's growable range maps pages where PyTorch's
        ``find_expandable_block`` finds room: the lowest-address unmapped stretch -- a hole an earlier
        ``empty_cache`` left (:meth:`_unmap`), or the range's end -- that, with the free block mapped just before it
        and the free and unmapped stretches after it, holds ``size``; then ``map_block`` maps as few whole pages of it
        as the request needs beside those free bytes (``segment_map``: the pages' address and bytes; a hole filled
        joins the ranges either side).  Each contiguous mapped range reads as one segment (``_snapshot()``).  Pages:
        20 MiB in the large pool, 2 MiB in the small (``ExpandableSegment``'s ``segment_size``).  Where the device has
        no room, the free pages go back first (``release_cached_blocks``: ``segment_unmap``), as with fixed segments,
        then the request fails (``oom``)."""
        page = MIN_LARGE_SEGMENT if large else SMALL_SEGMENT
        for retry in (False, True):
            plan = self._map_plan(size, large, page)
            if self.reserved + sum(n for _, n in plan[1]) <= self.capacity:
                break
            if not retry:
                self.empty_cache(frames)
        else:
            self._entry("oom", (self.device_total or self.capacity) - self.reserved, requested, frames)
            raise OutOfMemory(f"tried to allocate {requested} bytes")
        start, maps = plan
        for at, n in maps:
            self._entry("segment_map", at, n, frames)
            self.reserved += n
            self.segments.append(_Segment(at, n, large, [_Block(at, n)], frames))
        self._join(large)
        return next((s, b) for s in self.segments if s.large == large for b in s.blocks if b.address == start)

    def _map_plan(self, size: int, large: bool, page: int) -> tuple[int, list[tuple[int, int]]]:
        """Where :meth:`_map` places ``size`` bytes: (the block's address, the (address, bytes) of each run of pages
        it maps).  The pool's stretches in address order -- its blocks, and the unmapped holes between its ranges,
        the last one open-ended -- are walked from each hole (or the free block just before it), lowest first, for
        the first run of free and unmapped stretches that adds up to ``size``."""
        base = EXPANDABLE_BASE[large] + self.device * _EXPANDABLE_SPAN
        parts: list[tuple[int, int, bool | None]] = []  # (address, bytes, free) of each stretch; None: unmapped
        at = base
        for s in sorted((s for s in self.segments if s.large == large), key=lambda s: s.address):
            if s.address > at:
                parts.append((at, s.address - at, None))
            parts += [(b.address, b.size, not b.allocated) for b in s.blocks]
            at = s.address + s.size
        parts.append((at, 1 << 62, None))
        for i, (_, _, free) in enumerate(parts):
            if free is not None:
                continue
            first = i - 1 if i and parts[i - 1][2] else i
            got, maps = 0, []
            for addr, n, free in parts[first:]:
                if got >= size or free is False:
                    break
                if free is None:  # pages of this hole, as few as the rest needs
                    n = min(n, _round_to(size - got, page))
                    maps.append((addr, n))
                got += n
            if got >= size:
                return parts[first][0], maps
        raise AssertionError("the open-ended stretch always fits")

    def _join(self, large: bool) -> None:
        """The pool's contiguous mapped ranges as one segment each, free neighbours merged into one block (a range
        keeps the stack of the part that begins it)."""
        mine = sorted((s for s in self.segments if s.large == large), key=lambda s: s.address)
        joined: list[_Segment] = []
        for s in mine:
            if joined and joined[-1].address + joined[-1].size == s.address:
                joined[-1].size += s.size
                joined[-1].blocks += s.blocks
            else:
                joined.append(_Segment(s.address, s.size, large, list(s.blocks), s.frames))
        for s in joined:
            s.blocks = _merged(s.blocks)
        self.segments = [s for s in self.segments if s.large != large] + joined

    def _unmap(self, frames: list) -> None:
        """``empty_cache()`` on expandable segments: every whole page inside a free block is unmapped
        (``segment_unmap``: its address and bytes), wherever it lies; the range left splits where pages went."""
        kept: list[_Segment] = []
        for s in self.segments:
            page = MIN_LARGE_SEGMENT if s.large else SMALL_SEGMENT
            base = EXPANDABLE_BASE[s.large] + self.device * _EXPANDABLE_SPAN
            piece: list[_Block] = []
            for b in s.blocks:
                lo = base + _round_to(b.address - base, page)
                hi = base + (b.address + b.size - base) // page * page
                if b.allocated or hi <= lo:
                    piece.append(b)
                    continue
                self._entry("segment_unmap", lo, hi - lo, frames)
                self.reserved -= hi - lo
                if lo > b.address:
                    piece.append(_Block(b.address, lo - b.address))
                if piece:
                    kept.append(_Segment(piece[0].address, sum(x.size for x in piece), s.large, piece,
                                         s.frames if piece[0].address == s.address else frames))
                piece = [_Block(hi, b.address + b.size - hi)] if b.address + b.size > hi else []
            if piece:
                kept.append(_Segment(piece[0].address, sum(x.size for x in piece), s.large, piece,
                                     s.frames if piece[0].address == s.address else frames))
        self.segments = kept

    def empty_cache(self, frames: list | None = None) -> None:
        """``torch.cuda.empty_cache()``: segments with no allocated block go back to the driver (on expandable
        segments, every free whole page: :meth:`_unmap`); ``frames``: the allocation whose retry gives them back (the
        allocator's own, inside ``malloc``), else the program's call (:data:`EMPTY_CACHE`)."""
        if self.expandable:
            self._unmap(EMPTY_CACHE if frames is None else frames)
            return
        for s in [s for s in self.segments if not any(b.allocated for b in s.blocks)]:
            self._entry("segment_free", s.address, s.size, EMPTY_CACHE if frames is None else frames)
            self.segments.remove(s)
            self.reserved -= s.size

    def snapshot_segments(self) -> list[dict[str, Any]]:
        out = []
        for s in self.segments:
            blocks = [{"address": b.address, "size": b.size, "requested_size": b.requested,
                       "state": "active_allocated" if b.allocated else "inactive", "frames": b.frames} for b in s.blocks]
            alloc = sum(b.size for b in s.blocks if b.allocated)
            out.append({"device": self.device, "address": s.address, "total_size": s.size, "allocated_size": alloc,
                        "active_size": alloc, "requested_size": sum(b.requested for b in s.blocks), "stream": 0,
                        "segment_type": "large" if s.large else "small", "segment_pool_id": (0, 0),
                        "is_expandable": self.expandable, "frames": s.frames, "blocks": blocks})
        return out


def _merged(blocks: list[_Block]) -> list[_Block]:
    """``blocks`` (one segment's, in address order) with each run of free neighbours merged into one, as the allocator
    merges a freed block with its free neighbours."""
    out: list[_Block] = []
    for b in blocks:
        if out and not out[-1].allocated and not b.allocated:
            out[-1].size += b.size
        else:
            out.append(b)
    return out


#: Whether allocators made now default to ``expandable_segments:True`` (:func:`expandable_segments`).
_EXPANDABLE = [False]


@contextmanager
def expandable_segments() -> Iterator[None]:
    """Every scenario built inside runs its allocators on ``expandable_segments:True`` (``PYTORCH_CUDA_ALLOC_CONF``):
    the same program, its reserve grown and given back a page at a time (``Allocator._map`` / ``_unmap``) -- its
    truths (the generator's own counts) follow."""
    _EXPANDABLE[0] = True
    try:
        yield
    finally:
        _EXPANDABLE[0] = False


#: Where each pool's growable range of ``expandable_segments:True`` starts (the large pool's, the small's), a device's
#: ``_EXPANDABLE_SPAN`` above the one before: virtual address space the driver maps pages into.
EXPANDABLE_BASE = {True: BASE_ADDR + (1 << 40), False: BASE_ADDR}
_EXPANDABLE_SPAN = 1 << 37


def _round(n: int) -> int:
    """The allocator's request rounding: multiples of 512 bytes."""
    return max(512, _round_to(n, 512))


def _round_to(n: int, k: int) -> int:
    return (n + k - 1) // k * k


def snapshot(allocators: list[Allocator], conf: str = "") -> dict[str, Any]:
    """What ``torch.cuda.memory._snapshot()`` returns for these devices."""
    if not conf and any(a.expandable for a in allocators):
        conf = "expandable_segments:True"
    return {"segments": [s for a in allocators for s in a.snapshot_segments()],
            "device_traces": [list(a.trace) for a in allocators],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": conf, "max_split_size": -1,
                                   "garbage_collection_threshold": 0.0,
                                   "expandable_segments": any(a.expandable for a in allocators),
                                   "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
                                   "pinned_use_cuda_host_register": False,
                                   "roundup_power2_divisions": {str(1 << k): 0 for k in range(6)}},
            "external_annotations": []}


# ---------------------------------------------------------------------------------------------- scenarios

@dataclass
class Scenario:
    """A snapshot and what it holds by construction (the check's truth)."""

    doc: dict[str, Any]
    truth: dict[str, Any]


@dataclass
class _KindAtPeak:
    """An allocator's calls that count the live bytes of one kind of block (those made under one of ``kinds``' frame
    lists, told apart by identity) and what of them lives at the highest allocated level: the truth of a scenario
    that peaks where it peaks (``attention_math_steps``, ``kv_cache_generation``), counted as the allocator placed
    the blocks, not read off the file the generator writes."""

    a: Allocator
    kinds: tuple[list, ...]
    live: int = 0  # bytes of the kind allocated now (their blocks', as the allocated level counts them)
    top: int = 0  # the highest allocated level so far
    at_top: int = 0  # ``live`` when ``top`` was reached
    counted: set[int] = field(default_factory=set)  # the kind's live blocks, by address

    def malloc(self, size: int, frames: list) -> int:
        addr = self.a.malloc(size, frames)
        if any(frames is k for k in self.kinds):
            self.live += self.a.size_of(addr)
            self.counted.add(addr)
        if self.a.allocated > self.top:
            self.top, self.at_top = self.a.allocated, self.live
        return addr

    def free(self, addr: int) -> None:
        if addr in self.counted:
            self.counted.discard(addr)
            self.live -= self.a.size_of(addr)
        self.a.free(addr)


def oom_activations(capacity: int = 24 * GiB, layers: int = 24, act_mib: int = 512,
                    device_total: int | None = None, closure: bool = False, short: int = 0) -> Scenario:
    """A training loop that runs out of memory in the forward pass of its second step: 2 GiB of weights and Adam's
    4 GiB of state live across steps, each layer keeps ``act_mib`` MiB of activations for the backward pass, and the
    second step's batch is twice the first's -- its activations no longer fit, and the request for a layer's
    activations fails with 18 GiB of them live.  The activations are the largest thing live: checkpointing frees the
    most.  ``device_total``: the GPU's memory where ``capacity`` is a cap below it.  ``closure``: the loop is
    ``optimizer.step(closure)``'s (Lightning's automatic optimization): the forward runs inside the optimizer's
    ``step``, its frames outside the module's; the activations are still the forward's.  ``short``: each activation
    asks that many bytes under its MiB (an odd shape: the same blocks, each trace entry the request)."""
    a = Allocator(capacity, device_total=device_total)
    act_frames, opt_frames = (CLOSURE_ACTIVATION, CLOSURE_OPTIMIZER) if closure else (ACTIVATION, OPTIMIZER)
    params = [a.malloc(256 * MiB, PARAMS) for _ in range(8)]
    state: list[int] = []
    acts: list[int] = []
    for batch in (1, 2):
        acts = []
        try:
            for _ in range(layers):
                acts.append(a.malloc(act_mib * MiB * batch - short, act_frames))
        except OutOfMemory:
            break
        grads = [a.malloc(256 * MiB, GRADIENT) for _ in params]
        for x in acts:
            a.free(x)
        if not state:
            state = [a.malloc(256 * MiB, opt_frames) for _ in range(16)]
        for g in grads:
            a.free(g)
    oom = a.trace[-1]
    truth = {"gpu": 0, "requested": oom["size"], "device_free": oom["device_free"], "allocated": a.allocated,
             "reserved": a.reserved, "live_activation_bytes": len(acts) * act_mib * MiB * 2,
             "persistent_bytes": (len(params) + len(state)) * 256 * MiB, "failed_frames": act_frames,
             "optimizer_bytes": len(state) * 256 * MiB,
             "largest": "activations"}
    return Scenario(snapshot([a]), truth)


def oom_weights(built: str = "built", capacity: int = 24 * GiB, weights: int = 64, weight_mib: int = 256,
                act_mib: int = 512, staging_mib: int = 0) -> Scenario:
    """A first training step that runs out of memory in its forward: 16 GiB of weights fill two thirds of the GPU,
    and the forward's activations (``act_mib`` MiB a layer, kept for the backward) take the rest until one more does
    not fit.  The weights are the largest thing live: sharding or offloading them frees the most, checkpointing the
    activations less.  ``built``: how the weights reached the GPU (``WEIGHT_FRAMES``) -- moved by ``model.to("cuda")``
    (``Module._apply``), made by the modules' constructors with ``device="cuda"``, or made under
    ``with torch.device("cuda"):``, or loaded by a checkpoint's loader (``hf``, ``loader``); the bytes are the same.
    ``staging_mib``: the loader reads each shard of 8 weights into a staging buffer of that size first and frees it
    once the weights are copied out -- before the forward, so none is live at the OOM (``truth["staging"]``: how many
    staging buffers, each allocated at ``STAGING``)."""
    a = Allocator(capacity)
    staging = 0
    for k in range(weights):
        if staging_mib and k % 8 == 0:
            buf = a.malloc(staging_mib * MiB, STAGING)
            staging += 1
        a.malloc(weight_mib * MiB, WEIGHT_FRAMES[built])
        if staging_mib and k % 8 == 7:
            a.free(buf)
    acts: list[int] = []
    try:
        while True:
            acts.append(a.malloc(act_mib * MiB, ACTIVATION))
    except OutOfMemory:
        pass
    truth = {"gpu": 0, "weight_bytes": weights * weight_mib * MiB, "live_activation_bytes": len(acts) * act_mib * MiB,
             "largest": "held", "staging": staging}
    return Scenario(snapshot([a]), truth)


def oom_later_turn(built: str = "hf", turns: int = 3, weights: int = 16, weight_mib: int = 256, layers: int = 8,
                   act_mib: int = 160, grow: int = 12, capacity: int = 24 * GiB) -> Scenario:
    """A training loop that runs out of memory in a later turn: weights put on the GPU inside the history (``built``:
    ``WEIGHT_FRAMES``; 4 GiB), then ``turns`` alike iterations -- a forward keeping ``layers`` activations, a backward
    making one gradient per weight and freeing the activations in reverse, Adam's two moments per weight made on its
    first step (8 GiB, held from then on), ``zero_grad()`` freeing the gradients -- then one with a batch ``grow``
    times larger whose forward fails.  What is live at the OOM, by construction: the weights (made before the first
    turn), the optimizer's state (made in the first turn, kept through every later one) and the last turn's
    activations; recorded with ``context=None`` (``as_recorded``) no allocation has a frame, and only the pattern of
    the turns tells the weights and the state (held across steps) from the failing turn's activations.  Truth:
    ``weight_bytes``, ``state_bytes``, ``live_activation_bytes``, ``turns``."""
    a = Allocator(capacity)
    params = [a.malloc(weight_mib * MiB, WEIGHT_FRAMES[built]) for _ in range(weights)]
    state: list[int] = []
    acts: list[int] = []
    for it in range(turns + 1):
        batch = grow if it == turns else 1
        acts = []
        try:
            for _ in range(layers):
                acts.append(a.malloc(act_mib * MiB * batch, ACTIVATION))
        except OutOfMemory:
            break
        grads = []
        for k, x in enumerate(reversed(acts)):
            grads += [a.malloc(weight_mib * MiB, GRADIENT) for _ in params[k::layers]]
            a.free(x)
        if not state:
            state = [a.malloc(weight_mib * MiB, OPTIMIZER) for _ in range(2 * weights)]
        for g in grads:
            a.free(g)
    truth = {"gpu": 0, "weight_bytes": len(params) * weight_mib * MiB, "state_bytes": len(state) * weight_mib * MiB,
             "live_activation_bytes": len(acts) * act_mib * MiB * grow, "turns": turns}
    return Scenario(snapshot([a]), truth)


_ATTENTION_CALLER = [cpp("at::_ops::scaled_dot_product_attention::call(at::Tensor const&, at::Tensor const&, "
                         "at::Tensor const&, std::optional<at::Tensor> const&, double, bool, std::optional<double>, "
                         "bool)"), cpp("_PyObject_MakeTpCall"), frame("model.py", 72, "forward"),
                     cpp("_PyEval_EvalFrameDefault"),
                     frame("/usr/lib/python3/site-packages/torch/nn/modules/module.py", 1762, "_call_impl"),
                     frame("model.py", 120, "forward"), frame("train.py", 44, "train_step")]
_MATH = cpp("at::native::_scaled_dot_product_attention_math(at::Tensor const&, at::Tensor const&, at::Tensor const&, "
            "std::optional<at::Tensor> const&, double, bool, std::optional<at::Tensor> const&, std::optional<double>, "
            "bool)")
#: SDPA's math fallback (``at::native::_scaled_dot_product_attention_math``): the scores ``q @ kᵀ`` and their softmax,
#: each a (batch, heads, queries, keys) matrix, the softmax's kept for the backward.
ATTENTION_MATH_SCORES = [*ALLOCATOR_CPP, *_op("matmul"), _MATH,
                         cpp("at::_ops::_scaled_dot_product_attention_math::call(at::Tensor const&, ...)"),
                         *_ATTENTION_CALLER]
ATTENTION_MATH_PROBS = [*ALLOCATOR_CPP, *_op("_softmax"), _MATH,
                        cpp("at::_ops::_scaled_dot_product_attention_math::call(at::Tensor const&, ...)"),
                        *_ATTENTION_CALLER]
#: The flash backend: the output and the softmax's log-sum-exp per row, nothing quadratic.
ATTENTION_FLASH = [*ALLOCATOR_CPP, *_op("_scaled_dot_product_flash_attention"),
                   cpp("at::native::_scaled_dot_product_flash_attention_cuda(at::Tensor const&, ...)"),
                   *_ATTENTION_CALLER]


def oom_attention_math(backend: str = "math", capacity: int = 23 * GiB, layers: int = 24, batch: int = 4,
                       heads: int = 16, seq: int = 2048, head_dim: int = 64, weight_mib: int = 4096) -> Scenario:
    """A transformer's first training step whose attention runs SDPA's math backend (``backend="math"``: fp32 inputs
    the flash kernel refuses, say): each layer keeps its q, k, v and output (bf16, ``batch x seq x heads x head_dim``)
    and the softmax of its scores -- ``batch x heads x seq x seq`` fp32, 1 GiB here -- for the backward, the scores
    themselves freed once the softmax is made.  With 4 GiB of weights the forward runs out of memory asking for a
    layer's scores.  By construction: ``attention_math_bytes`` live at the OOM (the kept softmaxes and the backend's
    outputs, 16 MiB a layer beside the softmax's 1 GiB, and the failing layer's scores), the request itself is the math
    backend's; freeing the softmaxes serves it.  ``backend="flash"``: the same model with the
    fused backend (output and a log-sum-exp per row) -- it fits, and runs no OOM (a control for the words)."""
    a = Allocator(capacity)
    a.malloc(weight_mib * MiB, PARAMS)
    act = batch * seq * heads * head_dim * 2
    quad = batch * heads * seq * seq * 4
    kept: list[int] = []
    probs = 0
    try:
        for _ in range(layers):
            kept += [a.malloc(act, ACTIVATION) for _ in range(3)]  # q, k, v
            if backend == "math":
                scores = a.malloc(quad, ATTENTION_MATH_SCORES)
                probs += quad  # live until the softmax is made: at the OOM where the softmax's request fails
                kept.append(a.malloc(quad, ATTENTION_MATH_PROBS))
                a.free(scores)
                kept.append(a.malloc(act, ATTENTION_MATH_SCORES))  # probs @ v: the output, under the same frame
                probs += act
            else:
                kept.append(a.malloc(act, ATTENTION_FLASH))
                kept.append(a.malloc(batch * heads * seq * 4, ATTENTION_FLASH))
    except OutOfMemory:
        pass
    truth = {"gpu": 0, "attention_math_bytes": probs, "request": quad, "oom": any(e["action"] == "oom" for e in a.trace),
             "weight_bytes": weight_mib * MiB}
    return Scenario(snapshot([a]), truth)


def attention_math_steps(backend: str = "math", steps: int = 3, layers: int = 12, batch: int = 4, heads: int = 16,
                         seq: int = 2048, head_dim: int = 64, weight_mib: int = 4096) -> Scenario:
    """``oom_attention_math``'s transformer trained for ``steps`` whole steps on a GPU it fits (80 GiB: no OOM): each
    forward keeps every layer's q, k, v, the math backend's softmax (``batch x heads x seq x seq`` fp32, 1 GiB) and
    output, the backward frees them in reverse while it makes the weights' gradient (freed by ``zero_grad``), and
    plain SGD allocates nothing.  The peak falls as the backward begins: every layer's kept blocks live and the
    weights' gradient made (a layer's 1 GiB of scores, freed within its forward, never outweighs the 4 GiB gradient).
    By construction (``peak_attention_math_bytes``): the bytes made under the math backend's frame live at
    the highest allocated level -- counted as the allocator placed them, not read off the file.  ``backend="flash"``:
    the fused backend's output and log-sum-exp instead (none of it the math backend's)."""
    a = Allocator(80 * GiB)
    a.malloc(weight_mib * MiB, PARAMS)
    act = batch * seq * heads * head_dim * 2
    quad = batch * heads * seq * seq * 4
    math = _KindAtPeak(a, (ATTENTION_MATH_SCORES, ATTENTION_MATH_PROBS))
    for _ in range(steps):
        kept: list[int] = []
        for _ in range(layers):
            kept += [math.malloc(act, ACTIVATION) for _ in range(3)]  # q, k, v
            if backend == "math":
                scores = math.malloc(quad, ATTENTION_MATH_SCORES)
                kept.append(math.malloc(quad, ATTENTION_MATH_PROBS))
                math.free(scores)
                kept.append(math.malloc(act, ATTENTION_MATH_SCORES))  # probs @ v
            else:
                kept += [math.malloc(act, ATTENTION_FLASH), math.malloc(batch * heads * seq * 4, ATTENTION_FLASH)]
        grad = math.malloc(weight_mib * MiB, GRADIENT)
        for addr in reversed(kept):
            math.free(addr)
        math.free(grad)  # zero_grad(set_to_none=True) after plain SGD's in-place step
    truth = {"gpu": 0, "peak": math.top, "peak_attention_math_bytes": math.at_top, "weight_bytes": weight_mib * MiB,
             "steps": steps}
    return Scenario(snapshot([a]), truth)


#: A static KV cache made before the first forward: Hugging Face's ``StaticCache`` (``generate(...,
#: cache_implementation="static")``) allocates every layer's keys and values for the longest context up front.
HF_STATIC_CACHE = [*ALLOCATOR_CPP, *_op("zeros"),
                   frame(f"{_SITE}/transformers/cache_utils.py", 1183, "__init__"),
                   frame(f"{_SITE}/transformers/generation/utils.py", 1877, "_get_cache"),
                   frame(f"{_SITE}/transformers/generation/utils.py", 2214, "generate"),
                   frame("eval.py", 33, "run")]
#: The same model's forward under ``generate()`` (no backward: ``no_grad``).
GENERATE_FORWARD = [*ALLOCATOR_CPP, *_op("addmm"),
                    frame(f"{_SITE}/torch/nn/modules/linear.py", 125, "forward"),
                    frame(f"{_SITE}/torch/nn/modules/module.py", 1762, "_call_impl"),
                    frame(f"{_SITE}/transformers/models/llama/modeling_llama.py", 550, "forward"),
                    frame(f"{_SITE}/transformers/generation/utils.py", 3251, "_sample"),
                    frame("eval.py", 33, "run")]


def oom_kv_cache(cache: str = "static", capacity: int = 24 * GiB, layers: int = 16, weights: int = 32,
                 weight_mib: int = 256) -> Scenario:
    """Generation that runs out of memory with a KV cache holding most of the GPU: 8 GiB of weights loaded by
    ``from_pretrained`` (``HF_LOADED``), then

    * ``cache="static"``: a ``StaticCache`` made before the first forward (keys and values per layer, 320 MiB each:
      10 GiB), then a prefill whose per-layer hidden states (512 MiB) replace each other, and whose logits (6 GiB)
      do not fit -- the cache lives as long as the weights (made before the first forward, never freed);
    * ``cache="dynamic"``: ``DynamicCache`` grown token by token in the forward -- each step's ``torch.cat`` makes a
      layer's longer keys-and-values block (64 MiB more a step) and frees the shorter one, until one does not fit.

    A cache is neither weights nor activations: its fix is fewer or smaller cached tokens, not sharding the weights
    nor checkpointing (there is no backward).  Truth: ``kv_bytes`` live at the OOM, ``weight_bytes``."""
    a = Allocator(capacity)
    for _ in range(weights):
        a.malloc(weight_mib * MiB, HF_LOADED)
    live_kv: list[int] = []
    kv_bytes = 0
    try:
        if cache == "static":
            for _ in range(2 * layers):
                live_kv.append(a.malloc(320 * MiB, HF_STATIC_CACHE))
                kv_bytes += 320 * MiB
            h = None
            for _ in range(layers):
                nxt = a.malloc(512 * MiB, GENERATE_FORWARD)
                if h is not None:
                    a.free(h)
                h = nxt
            a.malloc(6 * GiB, GENERATE_FORWARD)  # the logits
        else:
            sizes = [0] * layers
            blocks: list[int | None] = [None] * layers
            while True:
                for k in range(layers):
                    new = a.malloc((sizes[k] + 64) * MiB, HF_KV_CACHE)
                    kv_bytes += (sizes[k] + 64) * MiB
                    if blocks[k] is not None:
                        a.free(blocks[k])
                        kv_bytes -= sizes[k] * MiB
                    blocks[k], sizes[k] = new, sizes[k] + 64
    except OutOfMemory:
        pass
    truth = {"gpu": 0, "kv_bytes": kv_bytes, "weight_bytes": weights * weight_mib * MiB,
             "oom": any(e["action"] == "oom" for e in a.trace)}
    return Scenario(snapshot([a]), truth)


def kv_cache_generation(cache: str = "static", passes: int = 6, layers: int = 16, weights: int = 32,
                        weight_mib: int = 256) -> Scenario:
    """``oom_kv_cache``'s generation on a GPU it fits (80 GiB: no OOM): 8 GiB of weights loaded by ``from_pretrained``,
    then ``passes`` decoding passes, each making a layer's hidden states in turn (64 MiB, each replacing the last)
    and the logits (256 MiB), freed at the pass's end.  ``cache="static"``: a ``StaticCache`` made before the first
    pass (keys and values per layer, 320 MiB each: 10 GiB), never freed; ``cache="dynamic"``: ``DynamicCache``'s
    ``torch.cat`` in each pass makes every layer's longer block (64 MiB more a pass) and frees the shorter one.
    By construction: ``peak_kv_bytes``, the cache's bytes live at the highest allocated level, and ``weight_bytes``."""
    a = Allocator(80 * GiB)
    for _ in range(weights):
        a.malloc(weight_mib * MiB, HF_LOADED)
    kv = _KindAtPeak(a, (HF_STATIC_CACHE, HF_KV_CACHE))
    if cache == "static":
        for _ in range(2 * layers):
            kv.malloc(320 * MiB, HF_STATIC_CACHE)
    blocks: list[int | None] = [None] * layers
    for n in range(passes):
        h = None
        for k in range(layers):
            nxt = kv.malloc(64 * MiB, GENERATE_FORWARD)
            if h is not None:
                kv.free(h)
            h = nxt
            if cache == "dynamic":
                new = kv.malloc((n + 1) * 64 * MiB, HF_KV_CACHE)
                if blocks[k] is not None:
                    kv.free(blocks[k])
                blocks[k] = new
        logits = kv.malloc(256 * MiB, GENERATE_FORWARD)
        kv.free(h)
        kv.free(logits)
    truth = {"gpu": 0, "peak": kv.top, "peak_kv_bytes": kv.at_top, "weight_bytes": weights * weight_mib * MiB}
    return Scenario(snapshot([a]), truth)


def fragmented(capacity: int = 8 * GiB, segments: int = 300, short: int = 0) -> Scenario:
    """Blocks of 5 MiB, four to each 20 MiB segment, three of every four freed: each segment keeps 15 MiB cached that
    it cannot give back (one block still lives in it), 4.4 GiB in all, and a 3 GiB request fails although allocated
    plus free is above it -- the ``expandable_segments`` case (one growable segment instead of many fixed ones).
    ``short``: each tensor asks that many bytes under 5 MiB (an odd shape: the same blocks, each trace entry the
    request), the history still begun with nothing allocated."""
    a = Allocator(capacity)
    blocks = [a.malloc(5 * MiB - short, ACTIVATION) for _ in range(4 * segments)]
    for i, x in enumerate(blocks):
        if i % 4:
            a.free(x)
    try:
        a.malloc(3 * GiB, ACTIVATION)
    except OutOfMemory:
        pass
    oom = a.trace[-1]
    truth = {"gpu": 0, "requested": oom["size"], "device_free": oom["device_free"], "allocated": a.allocated,
             "reserved": a.reserved, "largest": "fragmentation"}
    return Scenario(snapshot([a]), truth)


def history_beside_segments(allocs: int = 4, mib: int = 64, params: int = 3, outside: bool = True,
                            cached_mib: int = 0) -> Scenario:
    """A snapshot whose history was not recorded by the allocator whose segments it holds, as a generator writes one
    (facebookresearch/mosaic's ``test/scripts/generate_snapshot.py``: random allocations and their frees beside five
    segments of its own, at addresses none of them covers): ``params`` 512-byte weights placed by the allocator
    (their small segment and allocations in the history), then ``allocs`` activations of ``mib`` MiB made together
    and freed by another allocator -- its blocks at addresses the file's segments do not cover, its
    ``segment_alloc`` entries left out.  ``outside=False``: the same activations made by the file's own allocator (the
    control: a history that fits its segments).  ``cached_mib``: the file's allocator first makes and frees a block
    of that many MiB, its segment kept cached -- room enough that the other allocator's activations stay within what
    the segments reserve (h37-damage66: only their addresses tell them).  Truth by construction: the most the history
    holds allocated beyond what its segments reserve (``excess``: the weights' blocks and the activations, less the
    segments; 0 for the control), when (``at_ps``: the last activation made, in ps from the history's first event),
    and the allocations no segment covers (``off``: (count, requested bytes, ps of the first), None for the
    control)."""
    a = Allocator(8 * GiB)
    for _ in range(params):
        a.malloc(512, PARAMS)
    if cached_mib:
        a.free(a.malloc(cached_mib * MiB, ACTIVATION))
    maker = Allocator(8 * GiB, now_us=a.now_us, next_addr=BASE_ADDR + (1 << 40)) if outside else a
    made = [maker.malloc(mib * MiB, ACTIVATION) for _ in range(allocs)]
    at_us = maker.trace[-1]["time_us"]
    first_us = next(e["time_us"] for e in maker.trace if e["action"] == "alloc" and e["addr"] == made[0])
    for x in made:
        maker.free(x)
    doc = snapshot([a])
    if outside:
        doc["device_traces"][0] += [e for e in maker.trace if not e["action"].startswith("segment")]
    excess = max(0, a.allocated + allocs * mib * MiB - a.reserved) if outside else 0
    first = doc["device_traces"][0][0]["time_us"]
    off = (allocs, allocs * mib * MiB, (first_us - first) * 1_000_000) if outside else None
    return Scenario(doc, {"excess": excess, "at_ps": (at_us - first) * 1_000_000 if outside and excess else None,
                          "reserved": a.reserved, "allocated": a.allocated, "off": off})


def oom_driver_unit(capacity_mib: int = 1000, weights_mib: int = 990, request_mib: int = 5) -> Scenario:
    """A whole GPU (no cap) of ``capacity_mib`` MiB filled by ``weights_mib`` MiB of weights; the next request of
    ``request_mib`` MiB fails though the driver has more free than it: under 10 MiB the caching allocator opens a
    20 MiB segment for it (on expandable segments, maps a 20 MiB page), and that does not fit.  Truth by
    construction: the GPU was full -- no cap refused it, no block was split (the weights' one segment holds no free
    byte); the weights are what lives."""
    a = Allocator(capacity_mib * MiB, device_total=capacity_mib * MiB)
    a.malloc(weights_mib * MiB, PARAMS)
    try:
        a.malloc(request_mib * MiB, ACTIVATION)
    except OutOfMemory:
        pass
    oom = a.trace[-1]
    truth = {"gpu": 0, "requested": oom["size"], "device_free": oom["device_free"], "allocated": a.allocated,
             "reserved": a.reserved, "largest": "weights", "cap": False}
    return Scenario(snapshot([a]), truth)


def cache_twin(empty_cache: bool = False, packed: bool = True, leak_mib: int = 0, iterations: int = 3,
               weights: int = 4, weight_mib: int = 64, acts: int = 30, keep: int = 10, act_mib: int = 6,
               workspaces: int = 8, workspace_mib: int = 48, grow: bool = False) -> Scenario:
    """A training loop whose allocations are the same whatever its allocator caches: ``weights`` parameters, then per
    iteration ``acts`` activations of ``act_mib`` (1-10 MiB: three to each 20 MiB segment), ``keep`` of them kept for
    the backward while ``workspaces`` buffers of ``workspace_mib`` are live, then all freed.  ``empty_cache``: the
    loop calls ``torch.cuda.empty_cache()`` once the activations it does not keep are freed (the whole empty segments
    go back to the driver, then come back as new ones), else they stay cached; ``packed``: the kept activations are
    the first ones (they share segments), else one of every three (one in each segment: fragmentation);
    ``leak_mib``: each iteration keeps one tensor of that size forever (a leak); ``grow``: iteration k's is ``k *
    leak_mib`` (a cache keyed by shape, each new shape's entry kept: 16, 32, ... 96 MiB).  Twins differ in their
    reserved peak and not in their allocations; truth: the peaks of allocated, reserved, and reserved in segments holding a live
    block, followed after every call."""
    a = Allocator(80 * GiB)
    peaks = {"allocated": 0, "reserved": 0, "reserved_in_use": 0}

    def seen() -> None:
        in_use = sum(sg.size for sg in a.segments if any(b.allocated for b in sg.blocks))
        for k, v in (("allocated", a.allocated), ("reserved", a.reserved), ("reserved_in_use", in_use)):
            peaks[k] = max(peaks[k], v)

    for _ in range(weights):
        a.malloc(weight_mib * MiB, PARAMS)
        seen()
    for it in range(iterations):
        made = []
        for _ in range(acts):
            made.append(a.malloc(act_mib * MiB, ACTIVATION))
            seen()
        kept = made[:keep] if packed else made[::max(1, acts // keep)][:keep]
        for x in made:
            if x not in kept:
                a.free(x)
        if empty_cache:
            a.empty_cache()
        ws = []
        for _ in range(workspaces):
            ws.append(a.malloc(workspace_mib * MiB, GRADIENT))
            seen()
        for x in ws + kept:
            a.free(x)
        if leak_mib:
            a.malloc(leak_mib * MiB * (it + 1 if grow else 1), OPTIMIZER)
            seen()
    return Scenario(snapshot([a]), {f"peak_{k}": v for k, v in peaks.items()})


def retry_training(capacity: int = 25 * GiB, weights: int = 48, weight_mib: int = 256, acts: int = 240,
                   act_mib: int = 8, empty_cache: bool = False) -> Scenario:
    """One training step at its GPU's limit, as a real 2.7B fp32 step with plain SGD ran (wild
    ``snapshot_retry_full_gpu_sgd``): ``weights`` parameters, a forward whose ``acts`` activations of ``act_mib`` (20
    MiB segments) are freed by the backward and stay cached, then one gradient per parameter: where the cache holds
    no block a gradient fits and the device has no room for a new segment, the allocator gives its cached segments
    back from inside that allocation and asks again (its retry).  ``empty_cache``: the program empties the cache
    itself before the backward (no retry, and the segments given back carry no allocation's stack).  Truth: per
    retry, the bytes reserved before it, the segment asked for again, what went back; the bound
    ``reserved + asked`` of the first retry (what the process could not reserve)."""
    a = Allocator(capacity)
    params = [a.malloc(weight_mib * MiB, PARAMS) for _ in range(weights)]
    made = [a.malloc(act_mib * MiB, ACTIVATION) for _ in range(acts)]
    for x in made:
        a.free(x)
    if empty_cache:
        a.empty_cache()
    retries, peak_reserved = [], a.reserved
    for _ in params:
        before, n = a.reserved, len(a.trace)
        a.malloc(weight_mib * MiB, GRADIENT)
        peak_reserved = max(peak_reserved, before, a.reserved)
        gone = [e for e in a.trace[n:] if e["action"] == "segment_free"]
        if gone:
            asked = next(e["size"] for e in a.trace[n:] if e["action"] == "segment_alloc")
            retries.append({"reserved": before, "asked": asked, "released": sum(e["size"] for e in gone),
                            "segments": len(gone)})
    truth = {"retries": retries, "bound": retries[0]["reserved"] + retries[0]["asked"] if retries else None,
             "peak_reserved": peak_reserved, "allocated": a.allocated}
    return Scenario(snapshot([a]), truth)


def memory_cap(cap: int = 20 * GiB, device_total: int = 80 * GiB) -> Scenario:
    """The OOM of a process that capped itself (``torch.cuda.set_per_process_memory_fraction``): the training loop of
    :func:`oom_activations` allowed ``cap`` of a GPU of ``device_total``: the request fails while the driver still has
    most of the GPU free, as on the real H200 capture (a 6 GiB cap on 140 GiB)."""
    sc = oom_activations(capacity=cap, device_total=device_total)
    sc.truth["largest"] = "memory_cap"
    return sc


#: The forward pass's allocation sites of one transformer layer (Python frames under a module's forward).
FORWARD_SITES = [[*ALLOCATOR_CPP, *_op(op), frame("/usr/lib/python3/site-packages/torch/nn/modules/module.py", 1762,
                                                  "_call_impl"), frame("model.py", line, "forward"),
                  frame("bench.py", 20, "run_forward")]
                 for op, line in (("addmm", 58), ("gelu", 59), ("layer_norm", 61), ("scaled_dot_product_attention", 64))]


#: autocast's cast cache: a parameter's 16-bit copy, made on its first use in the region and kept until it ends
#: (``at::autocast::cached_cast`` under the op, as in a real bf16 benchmark's snapshot, silmont2000/assignment2-systems).
AUTOCAST_CAST = [*ALLOCATOR_CPP, *_op("_to_copy"),
                 cpp("at::autocast::cached_cast(c10::ScalarType, at::Tensor const&, c10::DeviceType)"),
                 cpp("at::autocast::WrapFunction_<(at::autocast::CastPolicy)0, (c10::DeviceType)1>::call"),
                 *FORWARD_SITES[0][len(ALLOCATOR_CPP) + 2:]]


def _forward_layer(a: Allocator, live: list[int], grad: bool, mib: int) -> tuple[list[int], int]:
    """One layer of a forward pass: a tensor at each of the 4 :data:`FORWARD_SITES` (``mib`` and twice it, in turn);
    under no_grad the previous layer's tensors (``live``) are freed once these are made, with autograd on they stay.
    Returns the tensors live after it and the most allocated while it ran (the pass's peak is inside a layer)."""
    mine, top = [], 0
    for k, site in enumerate(FORWARD_SITES):
        mine.append(a.malloc(mib * MiB * (1 + k % 2), site))
        top = max(top, a.allocated)
    if not grad:
        for x in live:
            a.free(x)
        live = []
    return live + mine, top


def forward_only(grad: bool = True, layers: int = 24, mib: int = 64, passes: int = 2,
                 cast_mib: int = 0, dump_before_drop: bool = False, cast_of_weights: bool = False,
                 input_cast_mib: int = 0) -> Scenario:
    """A forward-only benchmark: 2 GiB of weights, then ``passes`` forward passes of ``layers`` layers, each layer
    allocating one tensor at each of the 4 :data:`FORWARD_SITES`.  With autograd on (``grad``) every tensor is kept
    for a backward that never runs, and all are freed together when the output is dropped after the pass; under
    ``no_grad`` each layer's tensors are freed once the next layer has used them.  ``cast_mib``: under autocast, each
    layer's first op also casts its weight to 16 bits (``cast_mib`` MiB), cached until the pass ends -- a parameter's
    copy, not an activation.  ``dump_before_drop``: the dump comes before the last pass's output is dropped (a
    training forward dumped before its backward), so that pass's tensors are live at it.  ``cast_of_weights``: the
    model is one fp32 weight of ``2 * cast_mib`` MiB per layer, so each cast is its weight's 16-bit copy, half its
    bytes, as a real one is; without it the 8 x 256 MiB weights are no twice any cast (only the cast's frame names
    it).  ``input_cast_mib``: each layer's op also casts its fp32 input to 16 bits (``input_cast_mib`` MiB, under the
    same ``at::autocast::cached_cast`` frames: autocast casts every input, caching only the weights'); with autograd on
    the cast is saved for the backward with the layer's tensors, under no_grad freed once the op has used it -- an
    activation's cast, counted in ``kept_bytes``, never in ``cast_bytes``.  No OOM: the capacity is unknown.  Truth:
    the forward bytes live at the peak and the largest of them (the weights' casts apart, ``cast_bytes``)."""
    a = Allocator(80 * GiB)
    weights = [2 * cast_mib * MiB] * layers if cast_mib and cast_of_weights else [256 * MiB] * 8
    for size in weights:
        a.malloc(size, PARAMS)
    peak_kept = largest = 0
    casts_held = 0
    starts = []
    for n in range(passes):
        first = len(a.trace)
        live: list[int] = []
        casts = []
        for _layer in range(layers):
            if cast_mib:
                casts.append(a.malloc(cast_mib * MiB, AUTOCAST_CAST))
                casts_held = max(casts_held, len(casts) * cast_mib * MiB)
            saved = [a.malloc(input_cast_mib * MiB, AUTOCAST_CAST)] if input_cast_mib else []
            live, _ = _forward_layer(a, live, grad, mib)
            for x in saved:  # the input's cast: saved for the backward with the layer's tensors, else used and freed
                live.append(x) if grad else a.free(x)
            held = sum(a.size_of(x) for x in live)
            if held > peak_kept:
                peak_kept, largest = held, max(a.size_of(x) for x in live)
        for x in ([] if dump_before_drop and n == passes - 1 else live + casts):  # the output dropped: the graph
            a.free(x)  # (or the last layer's tensors) freed at once, and the autocast region left
        # the pass's first allocation: its first layer's (the input is reused in place)
        starts.append(next(e["time_us"] for e in a.trace[first:] if e["action"] == "alloc"))
    truth = {"gpu": 0, "kept_bytes": peak_kept, "largest_bytes": largest, "params_bytes": sum(weights),
             "cast_bytes": casts_held, "grad": grad, "kind": "inference", "starts_us": starts}
    return Scenario(snapshot([a]), truth)


def forward_rebound(grad: bool = True, layers: int = 12, mib: int = 32, warmup: int = 2, temps: int = 0,
                    dump_before_rebind: bool = False) -> Scenario:
    """A forward-only loop that rebinds its output (``out = model(x)`` again and again), recorded from after its
    ``warmup`` passes, as ``_record_memory_history`` begun there: 2 GiB of weights, then passes of ``layers`` layers
    allocating one tensor at each of the 4 :data:`FORWARD_SITES`.  The old output is dropped only when the new pass
    has returned.  With autograd on (``grad``) the output holds its pass's whole graph, so the recorded pass's peak
    holds two graphs, the earlier one made before the recording (its history shows it only by its frees); under
    ``no_grad`` each layer's tensors are freed once the next has used them and the output is one tensor.  Truth: the
    recorded peak, the pass's own kept bytes, the earlier pass's at the peak (``earlier_bytes``: 0 under no_grad,
    where it is no graph), and the largest kept tensor.  ``temps``: each layer first makes that many temporaries
    (``mib`` MiB each, an attention's intermediates), then frees them last-in first-out, making one tensor it keeps
    for the backward after each free -- the walk back a backward makes, inside a forward's layer (a real 2.7B
    layer's 56 allocations do: ``snapshot_forward_autograd_2p7b``).  ``dump_before_rebind``: the dump comes once the
    recorded pass has returned, before its output replaces the old one -- the previous pass's graph is live at the
    dump, and no free of the history shows it (saravargas88's 2.7B benchmark, ``wild/snapshot_forward_held_at_dump_*``);
    the truth is the same."""
    a = Allocator(80 * GiB)
    for size in [256 * MiB] * 8:
        a.malloc(size, PARAMS)
    out: list[int] = []
    peak = kept = largest = earlier = 0
    for n in range(warmup + 1):
        if n == warmup:
            a.trace = []  # the recording begins between two passes
            earlier = sum(a.size_of(x) for x in out) if grad else 0
        live: list[int] = []
        for _layer in range(layers):
            made = [a.malloc(mib * MiB, FORWARD_SITES[k % 4]) for k in range(temps)]
            peak = max(peak, a.allocated)
            for k, x in enumerate(reversed(made)):
                a.free(x)
                live.append(a.malloc(mib * MiB // 2, FORWARD_SITES[(k + 1) % 4]))
                peak = max(peak, a.allocated)
            if not grad:  # under no_grad nothing is saved for a backward
                for x in live[-temps:] if temps else []:
                    a.free(x)
                live = live[:-temps] if temps else live
            live, top = _forward_layer(a, live, grad, mib)
            peak = max(peak, top)
        kept = sum(a.size_of(x) for x in live)
        largest = max(a.size_of(x) for x in live)
        if not grad:  # the output alone outlives the pass
            for x in live[:-1]:
                a.free(x)
            live = live[-1:]
        if dump_before_rebind and n == warmup:
            break  # dumped with the old output (and its graph) still bound
        for x in out:  # the old output (with its graph) dropped at the rebinding, the new pass returned
            a.free(x)
        out = live
    truth = {"gpu": 0, "peak_bytes": peak, "kept_bytes": kept, "earlier_bytes": earlier, "largest_bytes": largest,
             "params_bytes": 8 * 256 * MiB, "grad": grad, "kind": "inference"}
    return Scenario(snapshot([a]), truth)


def oom_forward_graph(grad: bool = True, rebound: bool = False, capacity: int = 14 * GiB, passes: int = 3,
                      layers: int = 24, mib: int = 64, grow: int = 2) -> Scenario:
    """A forward-only benchmark that runs out of memory: 2 GiB of weights, then ``passes`` forward passes of ``layers``
    layers (one tensor at each of the 4 :data:`FORWARD_SITES`, ``mib`` and twice it), the last pass's input ``grow``
    times longer (its tensors ``grow`` times larger), on a GPU of ``capacity`` bytes.  With autograd on (``grad``)
    every layer's tensors are kept for a backward that never runs -- the earlier passes' graphs are freed together
    with no backward between -- and the last pass's graph no longer fits: the request for one of its tensors fails.
    ``rebound``: the loop rebinds its output (``out = model(x)``), so a pass's graph is freed only once the next pass
    has returned, and the second pass (no longer input) already fails holding two graphs.  Under ``no_grad`` the same
    loop frees each layer's tensors once the next has used them and never runs out of memory.

    Truth by construction: whether it ran out of memory (``oom``), the forward's bytes live at the failure
    (``graph_bytes``), the largest of them, what the same loop under no_grad holds at most above the weights
    (``nograd_peak_bytes``, replayed on the same allocator model: what inference_mode leaves), and the kind
    (inference: no backward ever runs)."""
    a = Allocator(capacity, device_total=capacity)
    for _ in range(8):
        a.malloc(256 * MiB, PARAMS)
    weights = a.allocated
    out: list[int] = []
    live: list[int] = []
    top = 0
    oom = False
    try:
        for n in range(passes):
            live = []
            for _layer in range(layers):
                live, high = _forward_layer(a, live, grad, mib * (grow if n == passes - 1 and not rebound else 1))
                top = max(top, high)
            kept = live if grad else live[-1:]  # under no_grad the output alone outlives the pass
            for x in [y for y in live if y not in kept]:
                a.free(x)
            if rebound:  # the old output (and its graph) dropped only now, the new pass returned
                for x in out:
                    a.free(x)
                out = kept
            else:  # the output dropped at the pass's end: its graph freed at once, no backward
                for x in kept:
                    a.free(x)
    except OutOfMemory:
        oom = True
    at_oom = a.allocated - weights
    # the forward's tensors live at the failure, the largest of them (what stays in use under inference_mode)
    sizes = [b.size for s in a.segments for b in s.blocks if b.allocated and any(b.frames is f for f in FORWARD_SITES)]
    truth = {"gpu": 0, "kind": "inference", "grad": grad, "oom": oom, "graph_bytes": at_oom if oom else 0,
             "largest_bytes": max(sizes) if oom and sizes else 0, "peak_bytes": top, "weights": weights}
    if grad:
        truth["nograd_peak_bytes"] = oom_forward_graph(False, rebound, capacity, passes, layers, mib,
                                                       grow).truth["peak_bytes"] - weights
    return Scenario(snapshot([a]), truth)


def oom_first_forward(train: bool = True, capacity: int = 14 * GiB, layers: int = 24, mib: int = 128,
                      temporaries: bool = False) -> Scenario:
    """One file from two jobs: 2 GiB of weights, then a forward pass of ``layers`` layers with autograd on (one tensor
    at each of the 4 :data:`FORWARD_SITES` a layer, ``mib`` and twice it, every one kept) that runs out of memory
    on a GPU of ``capacity`` bytes before it ends.  ``train``: the forward of a training step's first iteration,
    whose backward (gradients made as the kept tensors are freed in reverse) would follow; else a forward run for its
    output alone (evaluation, a benchmark), whose output would be dropped.  Neither gets past the OOM, so both write
    the same history, byte for byte.  Truth by construction: the OOM; the kind the file can show (None: a training
    step and a forward-only run alike -- ``train`` is not in the file); the forward's bytes live at the failure
    (``graph_bytes``), its blocks and the largest; and what the same forward holds at most above the weights under
    no_grad (``nograd_peak_bytes``, replayed on the same allocator model: what inference mode leaves, where the run
    is forward-only).  ``temporaries``: each layer also makes an intermediate (``2 * mib``) that the next op uses and
    saves nothing of, freed at once -- a real forward with autograd on frees those (a real training forward keeps
    20-60% of its bytes at its peak, ``job.snapshot_forward_kept``), so not every forward block is held at the OOM."""
    a = Allocator(capacity, device_total=capacity)
    for _ in range(8):
        a.malloc(256 * MiB, PARAMS)
    weights = a.allocated
    oom = False
    try:
        live: list[int] = []
        for _layer in range(layers):
            live, _ = _forward_layer(a, live, True, mib)
            if temporaries:
                a.free(a.malloc(2 * mib * MiB, FORWARD_SITES[1]))
        if train:  # the backward: each kept tensor's gradient made as the tensor is freed, last first
            for x in reversed(live):
                g = a.malloc(a.size_of(x), GRADIENT)
                a.free(x)
                a.free(g)
        else:  # the output dropped: the graph freed unused
            for x in live:
                a.free(x)
    except OutOfMemory:
        oom = True
    sizes = [b.size for s in a.segments for b in s.blocks if b.allocated and any(b.frames is f for f in FORWARD_SITES)]
    truth = {"gpu": 0, "oom": oom, "kind": None, "train": train, "graph_bytes": a.allocated - weights,
             "blocks": len(sizes), "largest_bytes": max(sizes, default=0), "weights": weights,
             "nograd_peak_bytes": oom_forward_graph(False, False, capacity, 1, layers, mib, 1).truth["peak_bytes"]
             - weights}
    return Scenario(snapshot([a]), truth)


#: Windows records Python frames only (``stacks="python"``), with its own paths.
_WIN_TORCH = "C:\\Users\\me\\venv\\Lib\\site-packages\\torch"
WIN_FORWARD = [frame(f"{_WIN_TORCH}\\nn\\modules\\linear.py", 125, "forward"),
               frame(f"{_WIN_TORCH}\\nn\\modules\\module.py", 1762, "_call_impl"),
               frame("C:\\Users\\me\\proj\\model.py", 58, "forward"),
               frame("C:\\Users\\me\\proj\\train.py", 44, "train_step")]
#: ``loss.backward()`` seeding the gradient on the calling thread, as the real Windows snapshot records it
WIN_BACKWARD_CALL = [frame(f"{_WIN_TORCH}\\autograd\\__init__.py", 220, "_make_grads"),
                     frame(f"{_WIN_TORCH}\\autograd\\__init__.py", 347, "backward"),
                     frame(f"{_WIN_TORCH}\\_tensor.py", 648, "backward"),
                     frame("C:\\Users\\me\\proj\\train.py", 46, "train_step")]


def windows_training(python_backward: bool = True, layers: int = 24, mib: int = 128) -> Scenario:
    """A training step recorded on Windows: Python frames only, backslash paths.  The forward keeps each layer's
    activation; the backward runs on autograd's engine thread, whose allocations carry no frame at all, and frees
    the activations last-in first-out; no optimizer step in the history.  ``python_backward``: the backward's first
    allocation (the loss's gradient, made on the calling thread) carries ``loss.backward()``'s Python frames; without
    it only the allocation pattern says it was a backward."""
    a = Allocator(80 * GiB)
    params = [a.malloc(256 * MiB, []) for _ in range(4)]
    acts = [a.malloc(mib * MiB, WIN_FORWARD) for _ in range(layers)]
    a.malloc(2 * MiB, WIN_BACKWARD_CALL if python_backward else [])
    for x in reversed(acts):
        g = a.malloc(mib * MiB, [])  # a gradient on the engine thread: no stack
        a.free(x)
        a.free(g)
    truth = {"gpu": 0, "kind": "training", "params": len(params), "activation_bytes": layers * mib * MiB,
             "evidence": "backward" if python_backward else "reverse order"}
    return Scenario(snapshot([a]), truth)


_DIST = "/usr/local/lib/python3.10/dist-packages"
#: A vLLM worker's KV cache and its model's weights (as a real verl rollout's snapshot records them,
#: tests/fixtures/wild/snapshot_verl_rollout_state); a trainer's DDP gradient buckets and Adam's moments; a Hugging Face
#: model's KV cache grown in its forward under generate().
VLLM_KV_CACHE = [frame(f"{_DIST}/vllm/worker/cache_engine.py", 83, "_allocate_kv_cache"),
                 frame(f"{_DIST}/vllm/worker/cache_engine.py", 64, "__init__"),
                 frame(f"{_DIST}/vllm/worker/worker.py", 312, "_init_cache_engine"),
                 frame("/opt/rl/workers/rollout.py", 77, "__init__")]
VLLM_WEIGHTS = [frame(f"{_DIST}/torch/utils/_device.py", 104, "__torch_function__"),
                frame(f"{_DIST}/vllm/model_executor/layers/linear.py", 178, "create_weights"),
                frame(f"{_DIST}/vllm/model_executor/models/qwen2.py", 75, "__init__"),
                frame("/opt/rl/workers/rollout.py", 70, "__init__")]
DDP_BUCKETS = [frame(f"{_DIST}/torch/nn/parallel/distributed.py", 1231, "_ddp_init_helper"),
               frame(f"{_DIST}/torch/nn/parallel/distributed.py", 862, "__init__"),
               frame("/opt/rl/workers/actor.py", 40, "build")]
HF_KV_CACHE = [*ALLOCATOR_CPP, *_op("cat"),
               frame(f"{_DIST}/transformers/cache_utils.py", 450, "update"),
               frame(f"{_DIST}/transformers/models/llama/modeling_llama.py", 270, "forward"),
               frame(f"{_DIST}/torch/nn/modules/module.py", 1762, "_call_impl"),
               frame("eval.py", 33, "run")]


def ring_buffer_training(iterations: int = 6, max_entries: int | None = 60, layers: int = 8,
                         mib: int = 64) -> Scenario:
    """A training loop (forward keeping each layer's activation, backward on autograd's thread, an Adam step) recorded
    with ``_record_memory_history(max_entries=N)``: the allocator keeps only its last ``max_entries`` events (None:
    all), while the profiler's annotations (``Optimizer.zero_grad``, ``Optimizer.step``, with their times) are kept
    apart, every iteration's.  Truth: the events kept, and whether whole iterations were dropped."""
    a = Allocator(80 * GiB)
    for _ in range(4):
        a.malloc(256 * MiB, PARAMS)
    notes: list[dict[str, Any]] = []

    def note(stage: str, name: str) -> None:
        notes.append({"stage": stage, "name": name, "device": 0, "time_us": a.now_us})

    for _ in range(iterations):
        note("START", "Optimizer.zero_grad#AdamW.zero_grad")
        note("END", "Optimizer.zero_grad#AdamW.zero_grad")
        acts = [a.malloc(mib * MiB, ACTIVATION) for _ in range(layers)]
        for x in reversed(acts):
            g = a.malloc(mib * MiB, GRADIENT)
            a.free(x)
            a.free(g)
        note("START", "Optimizer.step#AdamW.step")
        a.free(a.malloc(8 * MiB, OPTIMIZER))
        note("END", "Optimizer.step#AdamW.step")
    doc = snapshot([a])
    full = len(doc["device_traces"][0])
    if max_entries is not None:
        doc["device_traces"][0] = doc["device_traces"][0][-max_entries:]
    doc["external_annotations"] = notes
    kept = len(doc["device_traces"][0])
    return Scenario(doc, {"gpu": 0, "kept": kept, "cut": kept < full, "iterations": iterations})


def ring_buffer_inference(passes: int = 4, max_entries: int | None = 100, layers: int = 8, mib: int = 16) -> Scenario:
    """An inference server's forward passes under no_grad (:func:`forward_only` with ``grad=False``: 2 GiB of weights
    made before them, each layer's tensors freed once the next has used them) recorded with
    ``_record_memory_history(max_entries=N)`` and no profiler annotation: the allocator keeps only its last
    ``max_entries`` events, so the history begins inside a pass and frees blocks it never saw made (the real
    LitServe TTS server's snapshot: 1,000 events, the last 11.9 ms of a request).  Truth: the events kept, whether the
    ring buffer dropped any (``cut``), and the inference kind of :func:`forward_only`."""
    sc = forward_only(grad=False, layers=layers, mib=mib, passes=passes)
    trace = sc.doc["device_traces"][0]
    full = len(trace)
    if max_entries is not None:
        sc.doc["device_traces"][0] = trace[-max_entries:]
    kept = len(sc.doc["device_traces"][0])
    return Scenario(sc.doc, {**sc.truth, "kept": kept, "cut": kept < full})


def synced_training(turns: int = 5, period_us: int = 50_000, enqueue_us: int = 9_000, first_enqueue_us: int = 20_000,
                    layers: int = 8, mib: int = 64, empty_cache: bool = True) -> Scenario:
    """A GPU-bound training loop that synchronizes after each optimizer step (CS336's ``benchmark_memory.py``:
    ``zero_grad``, forward, backward, AdamW ``step``, ``torch.cuda.synchronize()``), recorded after its warm-up with
    its annotations: the host enqueues each turn in ``enqueue_us`` (the first in ``first_enqueue_us``: its forward
    makes the segments a preceding ``empty_cache()`` returned) and waits for the GPU until ``period_us`` after the
    turn's start.  The history holds the turns' events only (the weights were made before recording) and ends at the
    last step's end (the dump comes after the last wait, which allocates nothing).  Truth by construction: every turn
    lasts ``period_us`` from its ``zero_grad`` to the next's, whatever its enqueue took (h37-snapturn).
    ``empty_cache=False``: the warm-up's blocks stay cached, so the first recorded turn makes no segment either."""
    assert first_enqueue_us < period_us and enqueue_us < period_us
    a = Allocator(80 * GiB)
    for _ in range(4):
        a.malloc(256 * MiB, PARAMS)
    warm = [a.malloc(mib * MiB, ACTIVATION) for _ in range(layers + 1)]  # the warm-up's turns
    for x in warm:
        a.free(x)
    if empty_cache:
        a.empty_cache()
    skip = len(a.trace)
    notes: list[dict[str, Any]] = []
    opens: list[int] = []

    def note(stage: str, name: str) -> None:
        notes.append({"stage": stage, "name": name, "device": 0, "time_us": a.now_us})

    a.now_us += 1_000  # the warm-up's synchronize() and the recording's start
    for k in range(turns):
        start = a.now_us
        opens.append(start)
        note("START", "Optimizer.zero_grad#AdamW.zero_grad")
        note("END", "Optimizer.zero_grad#AdamW.zero_grad")
        enqueue = first_enqueue_us if k == 0 else enqueue_us
        beat = enqueue // (3 * layers + 2)  # the host's time between its allocations, spread over the enqueue
        acts = []
        for _ in range(layers):
            acts.append(a.malloc(mib * MiB, ACTIVATION))
            a.now_us += beat
        for x in reversed(acts):
            g = a.malloc(mib * MiB, GRADIENT)
            a.now_us += beat
            a.free(x)
            a.free(g)
            a.now_us += beat
        note("START", "Optimizer.step#AdamW.step")
        a.free(a.malloc(8 * MiB, OPTIMIZER))
        note("END", "Optimizer.step#AdamW.step")
        a.now_us = start + period_us  # synchronize(): the GPU's work of the turn ends a period after its start
    doc = snapshot([a])
    doc["device_traces"][0] = doc["device_traces"][0][skip:]
    doc["external_annotations"] = notes
    return Scenario(doc, {"gpu": 0, "period_us": period_us, "turns": turns, "zero_grad_us": opens})


def training_with_workspace(iterations: int = 4, layers: int = 6, mib: int = 4, workspace_mib: int = 8) -> Scenario:
    """A training loop recorded without annotations (no ``Optimizer.step`` marks) whose first forward allocates a
    block it never frees -- cuBLAS's workspace, made in the first matmul's ``linear`` forward and kept by its handle
    (a real snapshot, Da1sypetals/tomi's: 8.1 MiB) -- then each iteration's activations, freed by its backward.
    Truth: at the peak the activations are one iteration's; the workspace and the weights are held."""
    a = Allocator(80 * GiB)
    params = [a.malloc(16 * MiB, PARAMS) for _ in range(2)]
    workspace = None
    for _ in range(iterations):
        acts = []
        for _ in range(layers):
            if workspace is None:
                workspace = a.malloc(workspace_mib * MiB, ACTIVATION)
            acts.append(a.malloc(mib * MiB, ACTIVATION))
        for x in reversed(acts):
            g = a.malloc(mib * MiB, GRADIENT)
            a.free(x)
            a.free(g)
        a.free(a.malloc(1 * MiB, OPTIMIZER))
    truth = {"gpu": 0, "activation_bytes": layers * mib * MiB,
             "held_bytes": len(params) * 16 * MiB + workspace_mib * MiB, "workspace_bytes": workspace_mib * MiB}
    return Scenario(snapshot([a]), truth)


def state_only(parts: dict[str, int], history: bool = False) -> Scenario:
    """A snapshot of the state alone (``_record_memory_history(context="state")``, or a dump whose history holds no
    step): blocks live at the dump, each with the stack that allocated it, and no allocation history -- with
    ``history``, one free of a temporary, as a history started just before the dump records.  ``parts``: bytes
    per holder, of ``weights`` (allocated before recording: no stack), ``kv_vllm``, ``weights_vllm``, ``adam``
    (Adam's moments), ``ddp`` (DDP's gradient buckets), ``grads`` (autograd's engine thread), ``kv_hf`` (a forward's
    KV cache).  Truth: the bytes each kind's stacks hold, and the kind most of them say."""
    sites = {"weights": ([], ""), "kv_vllm": (VLLM_KV_CACHE, "serving"), "weights_vllm": (VLLM_WEIGHTS, "serving"),
             "adam": (OPTIMIZER, "training"), "ddp": (DDP_BUCKETS, "training"), "grads": (GRADIENT, "training"),
             "kv_hf": (HF_KV_CACHE, "inference")}
    a = Allocator(160 * GiB)
    by_kind: dict[str, int] = {}
    for name, size in parts.items():
        frames, kind = sites[name]
        for _ in range(4):  # four blocks each, as a model's layers or a cache's per-layer tensors
            a.malloc(size // 4, frames)
        if kind:
            by_kind[kind] = by_kind.get(kind, 0) + size
    if history:
        tmp = a.malloc(4 * MiB, HF_KV_CACHE)
        a.free(tmp)
        a.trace = a.trace[-1:]
    else:
        a.trace = []
    kind = max(by_kind, key=lambda k: by_kind[k]) if by_kind else "unknown"
    truth = {"gpu": 0, "allocated": a.allocated, "by_kind": by_kind, "kind": kind,
             "engine": "vllm" if kind == "serving" else None}
    return Scenario(snapshot([a]), truth)


def _moved_by_apply(line: int) -> list[dict[str, Any]]:
    """The stack of a block ``Module.to()`` allocated (a real PyTorch 2.x snapshot's shape, BlockZero's): ``convert``
    called from ``_apply`` at ``line`` -- the parameter's line, or the later one of its ``.grad``."""
    mod = "/usr/lib/python3/site-packages/torch/nn/modules/module.py"
    return [*ALLOCATOR_CPP, *_op("_to_copy"), frame(mod, 1357, "convert"), frame(mod, line, "_apply"),
            frame(mod, 930, "_apply"), frame(mod, 930, "_apply"), frame(mod, 1371, "to"),
            frame("evaluator.py", 37, "load_model_from_path")]


def moved_with_grads(grads: bool = True, params: int = 24, mib: int = 64) -> Scenario:
    """A state-only snapshot of an evaluation process that moved a model to the GPU (``model.to("cuda")``), with its
    parameters' gradients set (``grads``: a model loaded with its ``.grad`` tensors) or not: each parameter moved
    from ``_apply``'s line 957 and, with ``grads``, its gradient from line 998, the same size; the history holds one
    free (as BlockZero's does).  Truth: the gradients' bytes the snapshot holds."""
    a = Allocator(80 * GiB)
    for _ in range(params):
        a.malloc(mib * MiB, _moved_by_apply(957))
        if grads:
            a.malloc(mib * MiB, _moved_by_apply(998))
    tmp = a.malloc(4 * MiB, _moved_by_apply(957))  # BlockZero's history: one free, as recording began at the dump
    a.free(tmp)
    a.trace = a.trace[-1:]
    return Scenario(snapshot([a]), {"gpu": 0, "allocated": a.allocated, "grads_bytes": params * mib * MiB if grads
                                    else 0, "grads_blocks": params if grads else 0})


def training_iterations(iterations: int = 3, layers: int = 6, mib: int = 32, params: int = 4, param_mib: int = 64,
                        hold_loss: bool = True, dump_in_forward: bool = False, micro_batches: int = 1,
                        optimizer_temp: bool = True, trial_mib: int = 0, set_to_none: bool = True,
                        max_entries: int | None = None, leak: str = "", leak_mib: int = 16,
                        leak_layers: int = 3, leak_from: int = 0, micro_schedule: list[int] | None = None,
                        recorded_from_loop: bool = False, teardown: bool = False,
                        per_param_step: bool = False, short: int = 0) -> Scenario:
    """A training loop recorded with no annotation (``_record_memory_history()`` alone, as the "Understanding GPU
    Memory 1" blog's ResNet-50 snippet): ``model.cuda()`` (``params`` weights), then ``iterations`` times a forward
    keeping ``layers`` activations of one size from one site (a model of identical layers), a backward on autograd's
    thread making each parameter's gradient and freeing the activations, an Adam step that makes its two moments per
    parameter on its first call (held from then on) and a temporary each call, and ``zero_grad()`` freeing the
    gradients.  ``hold_loss``: the loss a variable keeps until the next iteration's is made.  ``dump_in_forward``: one
    more iteration's forward, dumped before its backward (a part of an iteration ends the history).  Truth: each
    whole iteration's start (its first allocation's time) and peak allocated bytes, and the bytes held between
    iterations after the first (weights and Adam's moments).  ``micro_batches``: gradient accumulation, each iteration
    ``micro_batches`` forwards and backwards before its one optimizer step (the first backward makes the gradients,
    held until ``zero_grad()``; the later ones make each gradient anew and add it in place, freeing it).
    ``optimizer_temp``: the step makes (and frees) a temporary each call; without it only the first step allocates
    (its state), as a fused optimizer that updates in place.  ``trial_mib``: the first forward also makes and frees a
    buffer of that size at its top (an autotuner's trial buffer, a first call's workspace): one-time work that may
    hold the capture's peak, above every later iteration's (the truth's first of ``peaks``).

    ``leak``: each iteration keeps bytes no later code frees (a leak; truth ``leak``: the bytes and blocks each
    iteration keeps, the innermost user's line that allocated them, and the bytes kept at the peak and at the end).  ``"list"``:
    ``outputs.append(out)`` keeps the forward's output (one ``leak_mib`` block from the model's head, ``LEAK_OUTPUT``)
    after its backward.  ``"graph"``: ``val_total += criterion(model(xv), yv)`` after the step, under autograd and
    without ``.item()``: the sum holds each evaluation's graph, so the ``leak_layers`` activations of ``leak_mib`` that
    graph saved and its 512-byte loss (``LEAK_EVAL``, ``LEAK_EVAL_LOSS``) stay live -- no backward ever frees them.
    Either way the allocated level between iterations rises by the same bytes each iteration.  ``"grow"``: the head's
    output kept as ``"list"`` does, its size growing each iteration (``leak_mib`` times the iteration's number: a
    sequence length or a batch that grows, outputs appended to a list -- 16, 32, ... 96 MiB over 6 iterations): the
    level rises by more each iteration, one block each time at one line (truth ``bytes_per_iteration`` is the first
    iteration's, ``bytes_last_iteration`` the last's).  ``leak_from``: the first iteration (0-based) that leaks (a
    condition that starts keeping later: ``if step >= warmup: outputs.append(out)``); the truth's iterations are
    those from it.  ``micro_schedule``: each iteration's own count of micro-batches (a schedule that grows the
    accumulation, an epoch's last short group), in place of ``micro_batches``.  ``"input"``: each iteration makes a
    ``leak_mib`` tensor at its top, before its forward (``x = torch.randn(..., device=dev)`` at ``train.py:40``,
    ``LEAK_INPUT``), and a list keeps it (Ascend's ``memory_leaks_demo.py``'s shape).

    ``recorded_from_loop``: ``_record_memory_history`` called after ``model.cuda()``, so the history begins at the
    loop's first iteration: the weights are blocks of the dump no event made.  ``teardown``: after the loop the script
    frees everything it holds (``del model, optimizer, loss``), the dump made with nothing allocated -- no part of the
    last iteration.

    ``per_param_step``: a hand-written Adam that loops over its parameters (CS336's ``AdamW.step``): on its first
    call each parameter's two moments made at the top of its turn (``state["m"] = torch.zeros_like(p)``, lines 82
    and 84 of ``OPTIMIZER_LOOP``), then each call an update temporary (line 100) that its variable holds until the
    next parameter's turn rebinds it -- freed after that turn's moments are made; the last one at the step's end.
    Its parameters alternate two shapes (every other one half ``param_mib``), as a model's matrices and norms do.
    Truth as without it: the moments are the first step's one-time state, never a leak.

    ``short``: each activation and each block a leak keeps asks for that many bytes less than its size (a tensor's
    bytes are rarely a multiple of 512: odd batch or sequence sizes), so PyTorch records the request while its
    allocator holds the same 512-byte-multiple blocks as without it -- every truth, in blocks, unchanged."""
    a = Allocator(80 * GiB)
    leaked: list[int] = []
    seen = {"top": 0, "live": 0, "at_top": 0}  # the highest allocated level, the leak's live bytes, those at it
    # a model of two parameter shapes, alternating (a layer's matrix and its norm) where the optimizer loops over them
    sizes = [param_mib * MiB // (2 if per_param_step and k % 2 else 1) for k in range(params)]
    for size in sizes:
        a.malloc(size, PARAMS)
    if recorded_from_loop:
        a.trace = []  # the recording begins after the weights, at the loop's first iteration
    state: list[int] = []
    loss: int | None = None
    kept: list[int] = []  # gradients zero_grad(set_to_none=False) keeps allocated
    starts, peaks = [], []
    loss_site = [*ALLOCATOR_CPP, *_op("mse_loss"), frame("train.py", 45, "train_step")]
    top = 0

    def malloc(size: int, frames: list) -> int:
        nonlocal top
        addr = a.malloc(size, frames)
        top = max(top, a.allocated)
        if a.allocated > seen["top"]:
            seen["top"], seen["at_top"] = a.allocated, seen["live"]
        return addr

    def keep(size: int, frames: list) -> None:
        """An allocation the leak keeps: counted live from its own event on (at the peak where it makes it)."""
        addr = malloc(size, frames)
        leaked.append(addr)
        seen["live"] += a.size_of(addr)
        if a.allocated == seen["top"]:
            seen["at_top"] = seen["live"]

    each: list[int] = []  # per leaking iteration, its number of leaked blocks
    for it in range(iterations + (1 if dump_in_forward else 0)):
        first, top = len(a.trace), a.allocated
        grads: list[int] = []
        leaking = bool(leak) and leak_from <= it < iterations
        was = len(leaked)
        micro = micro_schedule[it] if micro_schedule is not None and it < iterations else micro_batches
        if leak == "input" and leaking:
            keep(leak_mib * MiB - short, LEAK_INPUT)  # x = torch.randn(..., device=dev); inputs.append(x): made before the forward
        for _micro in range(micro if it < iterations else 1):
            acts = [malloc(mib * MiB - short, ACTIVATION) for _ in range(layers)]
            if leak in ("list", "grow") and leaking:
                keep(leak_mib * MiB * (it + 1 if leak == "grow" else 1) - short, LEAK_OUTPUT)  # outputs.append(out): the head's output, kept
            if trial_mib and it == 0 and _micro == 0:
                a.free(malloc(trial_mib * MiB, AUTOTUNE))
            if it == iterations:
                break  # dumped inside the forward
            new_loss = malloc(512, loss_site)
            if loss is not None:
                a.free(loss)  # the previous iteration's loss, dropped when the new one is assigned
            loss = new_loss if hold_loss else None
            if not hold_loss:
                a.free(new_loss)
            made = 0
            for x in reversed(acts):
                if made < params:
                    made += 1
                    g = malloc(sizes[made - 1], GRADIENT)
                    if len(grads) < params and not kept:
                        grads.append(g)  # the first backward's gradient: .grad, held
                    else:
                        a.free(g)  # accumulated into .grad in place
                a.free(x)
        if it == iterations:
            break
        if per_param_step:
            first_step, update = not state, None
            for size in sizes:
                if first_step:
                    state += [malloc(size, _optimizer_loop(82)), malloc(size, _optimizer_loop(84))]
                new_update = malloc(size, _optimizer_loop(100))
                if update is not None:
                    a.free(update)  # the previous parameter's update, dropped when its variable is rebound
                update = new_update
            a.free(update)
        elif not state:
            state = [malloc(param_mib * MiB, OPTIMIZER) for _ in range(2 * params)]
        if optimizer_temp and not per_param_step:
            a.free(malloc(param_mib * MiB, OPTIMIZER))
        if leak == "graph" and leaking:  # val_total += criterion(model(xv), yv): its graph, saved tensors and all
            for _ in range(leak_layers):
                keep(leak_mib * MiB - short, LEAK_EVAL)
            keep(512, LEAK_EVAL_LOSS)
        if set_to_none:
            for g in grads:
                a.free(g)
        else:
            kept = kept or grads  # zeroed in place: .grad stays allocated
        if leaking:
            each.append(len(leaked) - was)
        starts.append(next(e["time_us"] for e in a.trace[first:] if e["action"] == "alloc"))
        peaks.append(top)
    # a teardown frees what a leak kept too: the history then keeps nothing, no leak (truth None)
    leak_truth = None if teardown else _leak_truth(a, leak, leaked, each, seen["at_top"])
    if teardown:  # del model, optimizer, loss: every block the loop holds, its leak's too
        for b in [b.address for s in a.segments for b in s.blocks if b.allocated]:
            a.free(b)
    doc = snapshot([a])
    cut_in = None
    if max_entries is not None:
        doc["device_traces"][0] = kept = doc["device_traces"][0][-max_entries:]
        whole = [k for k, s in enumerate(starts) if s >= kept[0]["time_us"]]
        cut_in = whole[0] - 1 if whole and whole[0] > 0 and starts[whole[0]] != kept[0]["time_us"] else None
        starts, peaks = [starts[k] for k in whole], [peaks[k] for k in whole]
    # the first step's one-time work: Adam's moments, allocated on it alone (warm-up where two iterations remain)
    return Scenario(doc, {"gpu": 0, "iterations": len(starts), "starts_us": starts, "peaks": peaks, "cut_in": cut_in,
                                    "held": (3 if set_to_none else 4) * sum(sizes),
                                    "first_call_allocs": 2 * params + (1 if trial_mib else 0),
                                    "leak": leak_truth,
                                    **({"leak_iterations": len(each)} if leak and (leak_from or micro_schedule)
                                       else {})})


def _optimizer_loop(line: int) -> list[dict[str, Any]]:
    """A hand-written optimizer's ``step`` at ``line`` of its own file, under ``Optimizer``'s wrapper
    (``training_iterations(per_param_step=True)``)."""
    return [*ALLOCATOR_CPP, *_op("zeros_like" if line < 100 else "mul"), frame("cs336_basics/optimizer.py", line, "step"),
            frame("/usr/lib/python3/site-packages/torch/optim/optimizer.py", 493, "wrapper"),
            frame("train.py", 47, "train_step")]


#: ``outputs.append(out)``: the model's head makes the output a list keeps (``training_iterations(leak="list")``).
LEAK_OUTPUT = [*ALLOCATOR_CPP, *_op("addmm"),
               frame("/usr/lib/python3/site-packages/torch/nn/modules/linear.py", 125, "forward"),
               cpp("_PyEval_EvalFrameDefault"),
               frame("/usr/lib/python3/site-packages/torch/nn/modules/module.py", 1762, "_call_impl"),
               frame("model.py", 61, "forward"), frame("train.py", 44, "train_step")]
#: ``x = torch.randn(..., device=dev)`` at an iteration's top, kept by a list (``training_iterations(leak="input")``).
LEAK_INPUT = [*ALLOCATOR_CPP, *_op("randn"), frame("train.py", 40, "train_step")]
#: ``val_total += criterion(model(xv), yv)`` under autograd: the evaluation's activations its graph saves, and its loss.
LEAK_EVAL = [*ACTIVATION[:-1], frame("train.py", 52, "train_step")]
LEAK_EVAL_LOSS = [*ALLOCATOR_CPP, *_op("mse_loss"), frame("train.py", 52, "train_step")]


def _leak_truth(a: Allocator, leak: str, leaked: list[int], each: list[int], at_peak: int) -> dict[str, Any] | None:
    """What ``training_iterations``' leak keeps, as the allocator placed it: per iteration (``each``: the blocks each
    leaking iteration kept; ``blocks_per_iteration`` the first's, ``blocks_last_iteration`` the last's), at the
    allocated peak (its first event at the highest level), and at the end."""
    if not leak:
        return None
    sizes = [a.size_of(x) for x in leaked]
    out = {"cause": leak, "blocks_per_iteration": each[0], "bytes_per_iteration": sum(sizes[:each[0]]),
           "bytes_last_iteration": sum(sizes[-each[-1]:]), "bytes_at_end": sum(sizes), "bytes_at_peak": at_peak,
           "site": {"graph": "train.py:52", "input": "train.py:40"}.get(leak, "model.py:61")}
    if len(set(each)) > 1:
        out["blocks_last_iteration"] = each[-1]
    return out


#: An autotuner's trial buffer, made and freed once while the first call benchmarks its candidate kernels.
AUTOTUNE = [*ALLOCATOR_CPP, *_op("empty_strided"),
            frame("/usr/lib/python3/site-packages/torch/_inductor/runtime/triton_heuristics.py", 812, "bench"),
            frame("train.py", 44, "train_step")]
#: What a script's ``x.to("cuda")`` allocates: the pass's input, copied from the host.
INPUT = [*ALLOCATOR_CPP, *_op("_to_copy"), frame("bench.py", 18, "run_inference")]
#: A KV cache's buffer, made on the first pass and kept by the model between passes.
KV_CACHE = [*ALLOCATOR_CPP, *_op("zeros"), frame("model.py", 40, "forward"),
            frame("/usr/lib/python3/site-packages/torch/nn/modules/module.py", 1762, "_call_impl"),
            frame("bench.py", 19, "run_inference")]


def inference_loop(passes: int = 4, blocks: int = 12, mib: int = 16, input_mib: int = 8, weight_mib: int = 256,
                   kv_mib: int = 0, dump_in_pass: bool = False, between_us: int = 0, leak_mib: int = 0) -> Scenario:
    """An inference loop under ``no_grad`` with no annotation: 1 GiB of weights, then ``passes`` forward passes of a
    model of ``blocks`` identical blocks, each pass copying its input to the GPU (``input_mib``), each block making
    its output (``mib``, one site: the blocks are alike) and freeing the one before it, the input and the last output
    freed when the pass ends.  ``kv_mib``: a KV cache made on the first pass and held from then on.
    ``dump_in_pass``: the last pass's input and output still live at the dump (no whole pass there).
    ``between_us``: the loop's time after each pass's last free, with no allocation in it (a wait for the GPU, the
    profiler's ``prof.step()``): the last pass, the history's end, has none of it after it.  Truth: each pass's start
    (its input's time) and peak allocated bytes, the bytes held between passes after the first, and each pass's
    period (its start to the next one's; the last has none: its end is not in the history).

    ``leak_mib``: the loop keeps each pass's result on the GPU (``preds.append(model(x))``, as an evaluation or a
    batch-inference script that concatenates its outputs after the loop): one ``leak_mib`` block from the model's head
    (``LEAK_PRED``) a pass, never freed in the history, and the last block's output is freed as before.  No backward
    or optimizer step runs anywhere -- the loop is forward-only, under ``no_grad`` -- so the level between passes rises
    by ``leak_mib`` every pass (truth ``leak``: bytes and blocks a pass, at the peak and at the end, the site)."""
    a = Allocator(80 * GiB)
    for _ in range(4):
        a.malloc(weight_mib * MiB, PARAMS)
    kv: int | None = None
    kept: list[int] = []
    starts, peaks = [], []
    for _ in range(passes):
        first = len(a.trace)
        x = a.malloc(input_mib * MiB, INPUT)
        top = a.allocated
        if kv_mib and kv is None:
            kv = a.malloc(kv_mib * MiB, KV_CACHE)
        prev: int | None = None
        for _block in range(blocks):
            out = a.malloc(mib * MiB, ACTIVATION)
            top = max(top, a.allocated)
            if prev is not None:
                a.free(prev)
            prev = out
        if dump_in_pass and len(starts) == passes - 1:
            break
        if leak_mib:
            kept.append(a.malloc(leak_mib * MiB, LEAK_PRED))  # preds.append(model.head(h)): the pass's result, kept
            top = max(top, a.allocated)
        a.free(x)
        if prev is not None:
            a.free(prev)
        starts.append(next(e["time_us"] for e in a.trace[first:] if e["action"] == "alloc"))
        peaks.append(top)
        a.now_us += between_us
    # the first pass's one-time work: the KV cache, made on it alone (warm-up where two passes remain)
    return Scenario(snapshot([a]), {"gpu": 0, "passes": passes, "starts_us": starts, "peaks": peaks,
                                    "held": 4 * weight_mib * MiB + kv_mib * MiB, "kind": "inference",
                                    "first_call_allocs": 1 if kv_mib else 0,
                                    "periods_us": [nxt - cur for cur, nxt in pairwise(starts)],
                                    "leak": ({"cause": "list", "blocks_per_iteration": 1,
                                              "bytes_per_iteration": leak_mib * MiB,
                                              "bytes_at_end": len(kept) * leak_mib * MiB,
                                              "bytes_at_peak": len(kept) * leak_mib * MiB, "site": "model.py:61"}
                                             if leak_mib else None)})


#: ``preds.append(model(x))`` in a forward-only loop: the model's head makes the result the list keeps.
LEAK_PRED = [*LEAK_OUTPUT[:-1], frame("bench.py", 20, "run_inference")]


SCENARIOS: dict[str, Callable[[], Scenario]] = {"oom_activations": oom_activations, "fragmented": fragmented,
                                                "memory_cap": memory_cap, "forward_autograd": forward_only,
                                                "forward_no_grad": lambda: forward_only(grad=False),
                                                "windows_training": windows_training,
                                                "training_iterations": training_iterations,
                                                "windows_training_pattern": lambda: windows_training(False),
                                                "state_rollout": lambda: state_only(
                                                    {"weights": 2 * GiB, "kv_vllm": 12 * GiB, "weights_vllm": GiB,
                                                     "adam": GiB, "ddp": GiB // 2})}


def as_version(doc: dict[str, Any], version: str) -> dict[str, Any]:
    """``doc`` (what PyTorch 2.1+ dumps) in the layout an older PyTorch wrote, the same state and history:

    * ``"2.0"``: each block's stack in ``history`` (``[{"addr", "real_size", "frames"}]``, its allocations newest
      first: the allocator prepends each to the block's chain and the snapshot walks it from the head), no block
      ``frames``, ``address`` nor ``requested_size`` (a block's bytes follow the one before it in its segment: the 2.0 viewer's ``segsum``
      places them so, and reads an active block's ``history[0]["addr"]``); trace entries without ``time_us`` (the
      memory-traces post of Dec 2022: ``action``, ``addr``, ``frames``, ``size``, ``stream``, ``device_free`` for an
      OOM); no ``allocator_settings``, ``external_annotations``, ``segment_pool_id``, ``is_expandable``;
    * ``"1.13"``: that, and no ``device_traces`` (``_snapshot()``'s ``segments``, the state at the dump alone: the
      release recorded no allocator event, only each block's last allocation).

    Sources: zdevito.github.io's "Debugging PyTorch memory use with snapshots" (Aug 2022: ``Segment`` / ``Block`` /
    ``History`` / ``Frame``) and "Visualizing PyTorch memory usage over time" (Dec 2022: ``TraceEntry``), and the
    2.0-era ``torch/cuda/_memory_viz.py`` (``_write_blocks``, ``segsum``, ``trace``)."""
    import copy

    out = copy.deepcopy(doc)
    for seg in out["segments"]:
        for k in ("segment_pool_id", "is_expandable", "frames", "requested_size"):
            seg.pop(k, None)
        for b in seg["blocks"]:
            address = b.pop("address")
            frames = b.pop("frames", [])
            real = b.pop("requested_size", b["size"])
            if b["state"] != "inactive":
                b["history"] = [{"addr": address, "real_size": real, "frames": frames}]
    for k in ("allocator_settings", "external_annotations"):
        out.pop(k, None)
    if version == "1.13":
        out.pop("device_traces", None)
    else:
        for trace in out.get("device_traces", []):
            for e in trace:
                e.pop("time_us", None)
    return out


def as_recorded(doc: dict[str, Any], context: str | None = "all", stacks: str = "all",
                enabled: str = "all") -> dict[str, Any]:
    """``doc`` (recorded with ``_record_memory_history()``'s defaults, ``context="all", stacks="all"``) as the other
    settings write the same history (``torch/csrc/cuda/memory_snapshot.cpp``):

    * ``context=None``: no stack is gathered -- no trace entry has ``frames``, every block and segment ``[]``;
    * ``context="state"``: stacks for the allocator's state only -- every block and segment keeps its own, no trace
      entry has ``frames`` (``RecordContext::STATE``: the trace's entries are recorded without context);
    * ``context="alloc"``: that, and the ``alloc`` and ``segment_alloc`` entries keep theirs (``RecordContext::ALLOC``:
      the allocation's stack is gathered, a free's is not);
    * ``stacks="python"``: Python frames only (no C++ unwinding: the only kind on Windows) -- an allocation made on a
      thread with no Python frame (the backward, on autograd's engine thread) keeps an empty list;
    * ``enabled="state"``: the history is a ring buffer of one event (``memory_snapshot.cpp``: ``max_entries =
      enabled == "all" ? max_entries : 1``) -- each device's last entry alone."""
    import copy

    out = copy.deepcopy(doc)
    if enabled == "state":
        out["device_traces"] = [trace[-1:] for trace in out["device_traces"]]
    if context in ("state", "alloc"):
        for trace in out["device_traces"]:
            for e in trace:
                if context == "state" or e["action"] not in ("alloc", "segment_alloc"):
                    e.pop("frames", None)
        return as_recorded(out, "all", stacks)
    if context is None:
        keep: Callable[[list], list] = lambda frames: []  # noqa: E731 - one rule for every list
    elif stacks == "python":
        keep = lambda frames: [f for f in frames if f.get("line", 0) > 0]  # noqa: E731 - C++ frames have no line
    else:
        return out
    for seg in out["segments"]:
        seg["frames"] = keep(seg.get("frames") or [])
        for b in seg["blocks"]:
            b["frames"] = keep(b.get("frames") or [])
            b.pop("history", None)
    for trace in out["device_traces"]:
        for e in trace:
            if context is None:
                e.pop("frames", None)
            elif "frames" in e:
                e["frames"] = keep(e["frames"])
    return out


def torn_down(doc: dict[str, Any], empty_cache: bool = False) -> dict[str, Any]:
    """``doc`` as if the script freed everything it held before the dump (``del model, optimizer, loss`` after its
    loop): each block allocated at the dump freed (``free_requested``, ``free_completed``) after the history's last
    event, in the order the segments list them, and the dump's blocks left inactive -- the same history, then a
    teardown (truth by construction: the loop's iterations are the history's without it).  ``empty_cache``: the
    script then calls ``torch.cuda.empty_cache()`` -- every segment given back (``segment_free`` on its stream, the
    call's stack :data:`EMPTY_CACHE`), none left at the dump."""
    import copy

    out = copy.deepcopy(doc)
    traces = out["device_traces"]
    for seg in out["segments"]:
        trace = traces[seg.get("device", 0)]
        for b in seg["blocks"]:
            if b.get("state") != "active_allocated":
                continue
            now = (trace[-1]["time_us"] if trace else 0) + 7
            for action in ("free_requested", "free_completed"):
                trace.append({"action": action, "addr": b["address"], "size": b.get("requested_size") or b["size"],
                              "stream": seg.get("stream", 0), "time_us": now})
            b["state"] = "inactive"
            b["requested_size"] = 0
        seg["allocated_size"] = seg["active_size"] = 0
    if empty_cache:
        for seg in out["segments"]:
            trace = traces[seg.get("device", 0)]
            trace.append({"action": "segment_free", "addr": seg["address"], "size": seg["total_size"],
                          "stream": seg.get("stream", 0), "time_us": (trace[-1]["time_us"] if trace else 0) + 7,
                          "frames": copy.deepcopy(EMPTY_CACHE)})
        out["segments"] = []
    return out


#: What a ROCm build of PyTorch names in the allocator's C++ frames for CUDA's (its sources are hipified: the caching
#: allocator is ``c10::hip::HIPCachingAllocator``, a stream an ``ihipStream_t*``); the Python frames are the same.
HIP_FRAMES = (("c10::cuda::CUDACachingAllocator", "c10::hip::HIPCachingAllocator"),
              ("CUDACachingAllocator.cpp", "HIPCachingAllocator.cpp"), ("CUstream_st*", "ihipStream_t*"))


def _frame_lists(doc: dict[str, Any]) -> Iterator[list]:
    """Every stack of a snapshot: its segments', its blocks' and its trace entries' ``frames``."""
    for seg in doc["segments"]:
        yield seg.get("frames") or []
        for b in seg["blocks"]:
            yield b.get("frames") or []
    for trace in doc.get("device_traces", []):
        for e in trace:
            yield e.get("frames") or []


def as_rocm(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as a ROCm build of PyTorch dumps the same history: the same layout and Python frames, its C++ frames
    in HIP's names (:data:`HIP_FRAMES`).  Truth by construction: a snapshot whose frames name HIP was made on an AMD
    GPU; one recorded with ``stacks="python"`` (or no context) holds no such frame, so names no vendor."""
    import copy

    out = copy.deepcopy(doc)

    def hip(frames: list) -> None:
        for f in frames:
            for cuda, rocm in HIP_FRAMES:
                f["name"] = f["name"].replace(cuda, rocm)
                f["filename"] = f["filename"].replace(cuda, rocm)

    for frames in _frame_lists(out):
        hip(frames)
    return out


#: What ``torch_npu`` (PyTorch on a Huawei Ascend NPU) names in a snapshot's frames for CUDA's: its caching allocator is
#: ``c10_npu::NPUCachingAllocator`` (``torch_npu/csrc/core/npu/NPUCachingAllocator.cpp``), its Python API
#: ``torch.npu`` lives in the ``torch_npu`` package (``torch_npu/npu/memory.py``: ``empty_cache``, as
#: codeasier/MemSnapDump's real Ascend snapshots record it); the rest of the Python frames are the same.
NPU_FRAMES = (("c10::cuda::CUDACachingAllocator", "c10_npu::NPUCachingAllocator"),
              ("CUDACachingAllocator.cpp", "NPUCachingAllocator.cpp"), ("CUstream_st*", "aclrtStream"),
              ("site-packages/torch/cuda/", "site-packages/torch_npu/npu/"))


#: A default stream as torch_npu records it: an ``aclrtStream`` handle the plug-in made (codeasier/MemSnapDump's
#: real ones record 1067708320, 1276474240, ...: a handle, never CUDA's null stream 0).
NPU_STREAM = 1_067_708_320


def as_npu(doc: dict[str, Any], stream: int | None = None) -> dict[str, Any]:
    """``doc`` as ``torch_npu`` dumps the same history on an Ascend NPU (``torch.npu.memory._dump_snapshot``): the same
    layout, its allocator's C++ frames and ``torch.npu``'s Python frames in the plug-in's names (:data:`NPU_FRAMES`);
    ``stream`` (:data:`NPU_STREAM`): CUDA's null stream 0 recorded as that handle, as torch_npu's default stream is
    one it made.  Truth by construction: a snapshot whose frames run through ``torch_npu`` was made on an Ascend NPU,
    and one whose segments lie on no stream 0 ran on no CUDA device's default stream."""
    out = _frames_renamed(doc, NPU_FRAMES)
    return out if stream is None else on_stream(out, stream)


def on_stream(doc: dict[str, Any], stream: int) -> dict[str, Any]:
    """``doc`` with its stream 0 -- segments' and trace entries' -- recorded as ``stream`` (in place, returned)."""
    for seg in doc["segments"]:
        if seg.get("stream", 0) == 0:
            seg["stream"] = stream
    for trace in doc.get("device_traces", []):
        for e in trace:
            if e.get("stream", 0) == 0:
                e["stream"] = stream
    return doc


#: What an XPU build of PyTorch (Intel GPUs) names in a snapshot's frames for CUDA's: its caching allocator is
#: ``c10::xpu::XPUCachingAllocator`` (``c10/xpu/XPUCachingAllocator.cpp``), its Python API ``torch.xpu``.
XPU_FRAMES = (("c10::cuda::CUDACachingAllocator", "c10::xpu::XPUCachingAllocator"),
              ("CUDACachingAllocator.cpp", "XPUCachingAllocator.cpp"), ("CUstream_st*", "sycl::queue*"),
              ("site-packages/torch/cuda/", "site-packages/torch/xpu/"))


def as_xpu(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` as an XPU build of PyTorch dumps the same history on an Intel GPU (``torch.xpu.memory._dump_snapshot``,
    PyTorch 2.11 on): its allocator's C++ frames and ``torch.xpu``'s Python frames in its names (:data:`XPU_FRAMES`).
    Truth by construction: a snapshot whose frames name ``c10::xpu::`` was made on an Intel GPU."""
    return _frames_renamed(doc, XPU_FRAMES)


def _frames_renamed(doc: dict[str, Any], pairs: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """A copy of ``doc`` whose frames' names and files have each (CUDA's, ours) pair of ``pairs`` replaced."""
    import copy

    out = copy.deepcopy(doc)
    done: set[int] = set()  # a frame shared by many entries is rewritten once
    for frames in _frame_lists(out):
        for f in frames:
            if id(f) in done:
                continue
            done.add(id(f))
            for cuda, ours in pairs:
                f["name"] = f["name"].replace(cuda, ours)
                f["filename"] = f["filename"].replace(cuda, ours)
    return out


def as_windows(doc: dict[str, Any], drive: str = "C:") -> dict[str, Any]:
    """``doc`` as PyTorch on Windows dumps the same history: Python frames only (``as_recorded(stacks="python")``: no
    C++ unwinding there), each file's path a Windows one (``/usr/lib/x.py`` -> ``C:\\usr\\lib\\x.py``, ``train.py`` ->
    ``C:\\proj\\train.py``).  Truth by construction: a snapshot whose frames carry such paths was made on Windows."""
    out = as_recorded(doc, stacks="python")
    done: set[int] = set()  # a frame shared by many entries (the copy keeps them shared) is rewritten once

    def windows(frames: list) -> None:
        for f in frames:
            if id(f) in done:
                continue
            done.add(id(f))
            name = f["filename"]
            f["filename"] = drive + (name if name.startswith("/") else "/proj/" + name).replace("/", "\\")

    for frames in _frame_lists(out):
        windows(frames)
    return out


def write(path: str, doc: dict[str, Any], protocol: int = 4) -> str:
    """Pickle ``doc`` as ``_dump_snapshot`` does (``pickle.dump``; protocol 4 is Python 3.8-3.13's default)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as f:
        pickle.dump(doc, f, protocol=protocol)
    return path


def write_torch_save(path: str, doc: dict[str, Any]) -> str:
    """Save ``doc`` as ``torch.save(torch.cuda.memory._snapshot(), path)`` does (PyTorch 1.6+): a zip archive named
    after the file, its records in ``torch/serialization.py``'s ``_save`` order -- ``data.pkl`` (the dict pickled at
    torch's ``DEFAULT_PROTOCOL`` 2), ``.format_version``, ``.storage_alignment``, ``byteorder``, then the writer's
    ``version`` and ``.data/serialization_id`` -- each stored uncompressed, its data aligned to 64 bytes by an
    ``FB`` extra field (``caffe2/serialize/inline_container.cc``)."""
    import struct
    import zipfile

    stem = os.path.basename(path).split(".")[0] or "archive"
    records = [("data.pkl", pickle.dumps(doc, protocol=2)), (".format_version", b"1"),
               (".storage_alignment", b"64"), ("byteorder", b"little"), ("version", b"3\n"),
               (".data/serialization_id", b"0123456789012345678901234567890123456789")]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as f, zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as z:
        for name, data in records:
            info = zipfile.ZipInfo(f"{stem}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            start = f.tell() + 30 + len(info.filename) + 4  # the data's offset past a bare FB field's header
            pad = -start % 64
            info.extra = struct.pack("<HH", 0x4246, pad) + b"Z" * pad
            z.writestr(info, data)
    return path


def write_capacity(snapshot_path: str, total: int, free: int, name: str | None = None) -> str:
    """Write the GPU's capacity beside a snapshot as the Advisor's fix tells users to (``pytorch.RECORD_CAPACITY``:
    ``torch.cuda.mem_get_info()``'s free and total bytes in ``<snapshot name>.capacity.json``); ``name``: another
    file name (a hostile or misnamed one).  The numbers are the truth by construction."""
    import json

    stem = os.path.basename(snapshot_path)
    for suffix in (".gz", ".pickle", ".pkl"):
        stem = stem[: -len(suffix)] if stem.endswith(suffix) else stem
    out = os.path.join(os.path.dirname(snapshot_path), name or f"{stem}.capacity.json")
    with open(out, "w") as f:
        json.dump({"total_bytes": total, "free_bytes": free}, f)
    return out


def free_beside(doc: dict[str, Any], total: int, outside: int, device: int = 0) -> int:
    """``mem_get_info()``'s free bytes taken beside the dump of ``doc`` on a GPU of ``total`` bytes where ``outside``
    bytes are in use outside the caching allocator (the CUDA context, NCCL's buffers, another process): the total less
    those less every segment the allocator reserved at the dump -- the truth by construction of the record."""
    reserved = sum(int(seg["total_size"]) for seg in doc["segments"] if int(seg.get("device", 0)) == device)
    return total - outside - reserved


# ---------------------------------------------------------------------------------------------- hostile pickles

class _Run:
    """Pickles as a call of ``fn(*args)``: what a hostile file does (``__reduce__``)."""

    def __init__(self, fn: Callable, *args: Any):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def hostile(marker: str) -> dict[str, bytes]:
    """Pickles that run code when opened with ``pickle.load``, each creating ``marker`` (a file path) if it ever
    ran; and other bad ones.  Each looks like a snapshot from its first bytes (its ``segments`` key comes first)."""
    cmd = f"touch {marker}"
    evil = {
        "reduce_os_system": {"segments": [_Run(os.system, cmd)], "device_traces": []},
        "reduce_exec": {"segments": [], "device_traces": [_Run(exec, f"open({marker!r}, 'w').close()")]},
        "reduce_in_frames": {"segments": [{"device": 0, "address": 0, "total_size": 1, "blocks": [
            {"size": 1, "state": "active_allocated", "frames": [_Run(os.system, cmd)]}]}], "device_traces": []},
    }
    out = {name: pickle.dumps(doc, protocol=p) for name, doc in evil.items() for p in (4,)}
    out.update({f"{name}_protocol0": pickle.dumps(doc, protocol=0) for name, doc in evil.items()})
    head = pickle.dumps({"segments": [], "device_traces": []}, protocol=4)
    out["truncated"] = head[: len(head) // 2]
    out["set_value"] = pickle.dumps({"segments": [], "device_traces": [{1, 2}]}, protocol=4)
    out["bytes_value"] = pickle.dumps({"segments": [b"\x00" * 8], "device_traces": []}, protocol=4)
    out["huge_int"] = pickle.dumps({"segments": [1 << 4000], "device_traces": []}, protocol=4)
    # a string claiming 2**60 bytes: its length is checked before anything is read
    out["huge_string"] = b"\x80\x04}\x8c\x08segments\x8d" + (1 << 60).to_bytes(8, "little") + b"abc"
    # shared references (the pickle's memo): a billion frames for a few kB of file, for the reader's walk to bound
    frames = [frame("x.py", 1, "f")] * 1000
    block = {"address": 0, "size": 512, "requested_size": 512, "state": "active_allocated", "frames": frames}
    seg = {"device": 0, "address": 0, "total_size": 512, "segment_type": "small", "blocks": [block] * 1000}
    entry = {"action": "alloc", "addr": 0, "size": 512, "stream": 0, "time_us": T0_US, "frames": frames}
    out["shared_references"] = pickle.dumps({"segments": [seg] * 1000, "device_traces": [[entry] * 1000] * 1000},
                                            protocol=4)
    return out


# ---------------------------------------------------------------------------------------------- a large history

def write_large(path: str, entries: int, stacks: int = 300, depth: int = 30, live: int = 2000) -> int:
    """Write a snapshot of ``entries`` trace entries straight to ``path`` (any size, in constant memory), shaped as
    PyTorch writes them: every frame dict and key string pickled once and referenced by memo after, each entry a dict
    with its own list of ``depth`` frame references, drawn from ``stacks`` stacks; allocations of 512 B to 2 MiB,
    each freed (first made, first freed) once ``live`` newer ones exist.  Returns the number of bytes written.  For
    measuring the reader on files of a gigabyte (``docs/robustness.md``) without holding one in memory.

    The entries are encoded a block of :data:`_LARGE_BLOCK` at a time with numpy (each field a column of bytes, each
    row's own length masked), so writing is bound by the disk: a Python loop per entry wrote ~10 MB a minute on a
    loaded machine (session 61).  Allocation ``k``'s size and stack come from its block of allocations' own seeded
    generator, so any block is drawn alike in any order and the file is the same for the same arguments."""
    import random
    import struct

    import numpy as np

    rng = random.Random(7)
    names = ["action", "addr", "size", "stream", "time_us", "frames", "alloc", "free_completed", "filename", "line",
             "name"]
    memo: dict[str, int] = {}
    out = bytearray(b"\x80\x04}(")  # PROTO 4, the top dict, MARK

    def text(v: str) -> bytes:
        raw = v.encode()
        return b"\x8c" + bytes([len(raw)]) + raw if len(raw) < 256 else b"X" + struct.pack("<I", len(raw)) + raw

    def ref(k: int) -> bytes:
        return b"j" + struct.pack("<I", k)

    def num(v: int) -> bytes:
        raw = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
        return b"\x8a" + bytes([len(raw)]) + raw

    # one segment first (discovery tells a snapshot by its first keys), then the shared strings and frames, memoized
    out += (text("segments") + b"](}(" + text("device") + b"K\x00" + text("total_size") + num(1 << 40)
            + text("blocks") + b"]ue" + text("x_shared") + b"](")
    for n in names:
        memo[n] = len(memo)
        out += text(n) + b"\x94"
    frames = []
    for k in range(stacks * 4):
        frames.append(len(memo))
        memo[f"f{k}"] = len(memo)
        out += (b"}\x94(" + ref(memo["filename"]) + text(f"/site-packages/torch/nn/modules/m{k}.py")
                + ref(memo["line"]) + num(k + 1) + ref(memo["name"]) + text(f"forward_{k % 11}") + b"u")
    out += b"e" + text("device_traces") + b"](]("  # one device's list; entries in batches of 1,000
    tracebacks = [[rng.choice(frames) for _ in range(depth)] for _ in range(stacks)]
    # each stack's bytes once: ``frames`` key, EMPTY_LIST MARK, the frame references, APPENDS, the entry's SETITEMS
    tails = _rows([ref(memo["frames"]) + b"](" + b"".join(ref(k) for k in tb) + b"eu" for tb in tracebacks])
    heads = _rows([b"}(" + ref(memo["action"]) + ref(memo[a]) + ref(memo["addr"]) for a in ("alloc", "free_completed")])
    size_key, middle = _rows([ref(memo["size"])]), _rows([ref(memo["stream"]) + b"K\x00" + ref(memo["time_us"])])
    allocs = _LargeAllocs(stacks, live)
    with open(path, "wb") as f:
        f.write(out)
        written = len(out)
        for lo in range(0, entries, _LARGE_BLOCK):
            e = np.arange(lo, min(entries, lo + _LARGE_BLOCK), dtype=np.int64)
            # the first ``live + 1`` entries allocate; after them each other one frees the oldest allocation
            after = e - (live + 1)
            freeing = (after >= 0) & (after % 2 == 0)
            k = np.where(after < 0, e, np.where(freeing, after // 2, live + 1 + (after - 1) // 2))
            addr, size, tb = allocs.take(k)
            n = len(e)
            # each field a column of bytes with the rows that hold it (a number's own length; "e(" every 1,000th)
            ones = np.ones(n, np.int64)
            cols = [(heads[freeing.astype(np.int64)], ones * heads.shape[1]), _longs(addr),
                    (np.repeat(size_key, n, 0), ones * size_key.shape[1]), _longs(size),
                    (np.repeat(middle, n, 0), ones * middle.shape[1]), _longs(T0_US + 3 * (e + 1)),
                    (tails[tb], ones * tails.shape[1]),
                    (np.tile(np.frombuffer(b"e(", np.uint8), (n, 1)), 2 * (e % 1000 == 999))]
            rows = np.concatenate([c for c, _ in cols], axis=1)
            mask = np.concatenate([np.arange(c.shape[1]) < length[:, None] for c, length in cols], axis=1)
            chunk = rows[mask].tobytes()
            f.write(chunk)
            written += len(chunk)
        tail = b"ee" + text("allocator_settings") + b"}u."
        f.write(tail)
    return written + len(tail)


#: Entries ``write_large`` encodes at a time (and allocations drawn by one generator); its peak RSS is the blocks' columns
#: and numpy (175 MB writing 5,000,000 entries, 1.08 GB, in 29 s wall, 6.4 s CPU).
_LARGE_BLOCK = 1 << 16


def _rows(parts: list[bytes]) -> Any:
    """Byte strings of one length as the rows of a uint8 array."""
    import numpy as np

    return np.frombuffer(b"".join(parts), np.uint8).reshape(len(parts), -1)


def _longs(v: Any) -> tuple[Any, Any]:
    """Non-negative ints as pickle's ``LONG1`` writes each (``\\x8a``, its length, its fewest signed little-endian
    bytes): the rows of bytes (10 wide) and each row's length."""
    import numpy as np

    v = np.asarray(v, np.int64)
    n = 1 + sum((v >= (1 << (8 * b - 1))).astype(np.int64) for b in range(1, 8))
    raw = v.astype("<i8").view(np.uint8).reshape(len(v), 8)
    return np.concatenate([np.full((len(v), 1), 0x8A, np.uint8), n.astype(np.uint8)[:, None], raw], axis=1), 2 + n


class _LargeAllocs:
    """``write_large``'s allocations by index: allocation ``k``'s size (512 B to 2 MiB) and stack come from the seeded
    generator of its block of :data:`_LARGE_BLOCK`, its address is the running sum of the sizes; the blocks a
    window of entries asks (the newest and those ``live`` back) are kept, the older dropped."""

    def __init__(self, stacks: int, live: int):
        self.stacks, self.live = stacks, live
        self.blocks: dict[int, tuple[Any, Any, Any]] = {}
        self.base = BASE_ADDR  # the address after the last block drawn
        self.drawn = 0

    def _block(self, b: int) -> tuple[Any, Any, Any]:
        import numpy as np

        while self.drawn <= b:
            g = np.random.default_rng([7, self.drawn])
            size = 512 * g.integers(1, 4097, _LARGE_BLOCK, dtype=np.int64)
            addr = self.base + np.cumsum(size)
            self.blocks[self.drawn] = (addr, size, g.integers(0, self.stacks, _LARGE_BLOCK, dtype=np.int64))
            self.base = int(addr[-1])
            self.drawn += 1
        return self.blocks[b]

    def take(self, k: Any) -> tuple[Any, Any, Any]:
        import numpy as np

        b = k // _LARGE_BLOCK
        for old in [x for x in self.blocks if x < int(b.min())]:
            del self.blocks[old]
        parts = [self._block(int(x)) for x in range(int(b.min()), int(b.max()) + 1)]
        addr, size, tb = (np.concatenate([p[i] for p in parts]) for i in range(3))
        at = k - int(b.min()) * _LARGE_BLOCK
        return addr[at], size[at], tb[at]


#: A Windows snapshot's Python frames of a bf16 ``Linear`` under autocast: the cast copy of the weight and the layer's
#: output are both made in ``F.linear`` inside the module's forward -- nothing in Python frames tells them apart.
WIN_LINEAR = [frame(f"{_WIN_TORCH}\\nn\\modules\\linear.py", 125, "forward"),
              frame(f"{_WIN_TORCH}\\nn\\modules\\module.py", 1762, "_call_impl"),
              frame("C:\\Users\\me\\proj\\model.py", 41, "forward"),
              frame("C:\\Users\\me\\proj\\bench.py", 52, "profile_forward_pass")]

#: ``model.to("cuda")`` on Windows: each parameter moved by ``Module._apply`` (Python frames only).
WIN_PARAMS = [frame(f"{_WIN_TORCH}\\nn\\modules\\module.py", 1355, "convert"),
              frame(f"{_WIN_TORCH}\\nn\\modules\\module.py", 942, "_apply"),
              frame("C:\\Users\\me\\proj\\bench.py", 31, "main")]


def windows_autocast_forward(passes: int = 3, layers: int = 12, weight_mib: int = 16, act_mib: int = 4,
                             weights_in_history: bool = False, cast: bool = True, unsplit: bool = False,
                             grad: bool = False) -> Scenario:
    """Forward passes of a bf16 benchmark under ``torch.no_grad()`` and autocast recorded on Windows (Python frames
    only), shaped after LilySu/stanford-cs336-assignment2-systems' ``memory_snapshot_large_forward_ctx128_mp.pickle``:
    ``layers`` x 2 fp32 weights of ``weight_mib`` MiB, allocated before the history (or, with ``weights_in_history``,
    moved by ``Module._apply`` inside it); each pass, one ``with autocast():`` region, makes each weight's bf16 copy on
    its first use (``weight_mib / 2`` MiB, with ``cast``; without, the weights are used as they are) and an output of
    ``act_mib`` MiB per layer, the layer before's freed as it goes, and on leaving the region frees the copies together.
    ``unsplit``: the allocator leaves a large block whole where 1 MiB or less would remain (:attr:`Allocator.unsplit_rest`),
    as PyTorch's does: with ``weight_mib=25`` (CS336's 2.7B model, d_model 2560: QR-0W/Stanford-CS336) each weight
    holds a 26 MiB block and its copy 12.5 MiB, not half the block.
    ``grad``: autograd on, the loop rebinding its output (``logits = model(x)`` after ``model.train()``, no backward:
    ``snapshot_forward_rebound_bf16_autograd``'s shape): each pass's graph keeps its outputs and its copies (saved for
    a backward: autocast's cache is cleared at the region's exit, the graph still holds them) until the next pass has
    returned, each op's temporary freed at once; the recording begins after the first pass, so the earlier graph was
    made before it (known by its frees alone) and the dump holds the last pass's.
    Truth: the weights' bytes (their blocks'), one pass's copies' bytes, the copies the history recorded that are live
    at the peak (``cast_peak_bytes``: with ``grad``, the last two passes' graphs are live together before the
    rebinding, and the first pass's copies were made before the recording), and the forward's own at most."""
    a = Allocator(80 * GiB, unsplit_rest=unsplit)
    weights = [a.malloc(weight_mib * MiB, WIN_PARAMS if weights_in_history else []) for _ in range(2 * layers)]
    weights_bytes = sum(a.size_of(w) for w in weights)
    if not weights_in_history and not grad:
        a.trace = []
    graph: list[int] = []  # the previous pass's outputs and copies, held by its graph (``grad``)
    for n in range(passes):
        if grad and n == 1:
            a.trace = []  # the recording begins between two passes: the first pass's graph made before it
        copies: list[int] = []
        out: list[int] = []
        for layer in range(layers):
            for w in range(2):
                if cast:
                    copies.append(a.malloc(weight_mib * MiB // 2, WIN_LINEAR))
                new = a.malloc(act_mib * MiB, WIN_LINEAR)
                if not grad:
                    for x in out:
                        a.free(x)
                    out = [new]
                else:  # saved for the backward; a temporary the op frees at once (its workspace) is not
                    out.append(new)
                    a.free(a.malloc(act_mib * MiB, WIN_LINEAR))
        if grad:  # the new output returned: the old one, and its graph, dropped at the rebinding
            for x in graph:
                a.free(x)
            graph = out + copies
            continue
        for x in out:
            a.free(x)
        for x in copies:  # the autocast region left: its cache cleared, every copy freed in one run
            a.free(x)
    truth = {"gpu": 0, "weights_bytes": weights_bytes,
             "cast_bytes": 2 * layers * weight_mib * MiB // 2 if cast else 0, "act_bytes": 2 * act_mib * MiB,
             "kind": "inference"}
    truth["cast_peak_bytes"] = truth["cast_bytes"] * (min(passes - 1, 2) if grad else 1)
    return Scenario(snapshot([a]), truth)

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--scenario", default="oom_activations", choices=sorted(SCENARIOS))
    a = ap.parse_args(argv)
    sc = SCENARIOS[a.scenario]()
    write(a.out, sc.doc)
    print(f"{a.out}: {a.scenario}, {sc.truth}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


# ---------------------------------------------------------------------------------------------- one process, several GPUs

_PARALLEL = f"{_SITE}/torch/nn/parallel"
#: ``nn.DataParallel``'s forward as its replicas' allocations record it (the frames of a real one: Constructor-Sun's
#: snapshot, h37-snap58): each replica's weights broadcast from GPU 0 (``replicate``), each replica's forward on a
#: worker thread (``parallel_apply._worker``), the outputs gathered on GPU 0 (``gather``)
DP_REPLICA = [*ALLOCATOR_CPP, *_op("empty"),
              frame(f"{_PARALLEL}/comm.py", 67, "broadcast_coalesced"),
              frame(f"{_PARALLEL}/_functions.py", 23, "forward"),
              frame(f"{_PARALLEL}/replicate.py", 100, "_broadcast_coalesced_reshape"),
              frame(f"{_PARALLEL}/replicate.py", 127, "replicate"),
              frame(f"{_PARALLEL}/data_parallel.py", 190, "replicate"),
              frame(f"{_PARALLEL}/data_parallel.py", 183, "forward"), frame("train.py", 44, "train_step")]
DP_ACTIVATION = [*ACTIVATION[:-2], frame("model.py", 58, "forward"),
                 frame(f"{_PARALLEL}/parallel_apply.py", 83, "_worker")]
DP_GATHER = [*ALLOCATOR_CPP, *_op("cat"),
             frame(f"{_PARALLEL}/comm.py", 236, "gather"),
             frame(f"{_PARALLEL}/_functions.py", 87, "forward"),
             frame(f"{_PARALLEL}/scatter_gather.py", 99, "gather_map"),
             frame(f"{_PARALLEL}/data_parallel.py", 200, "gather"),
             frame(f"{_PARALLEL}/data_parallel.py", 186, "forward"), frame("train.py", 44, "train_step")]
DP_LOSS = [*ALLOCATOR_CPP, *_op("log_softmax"),
           frame("/usr/lib/python3/site-packages/torch/nn/functional.py", 3479, "cross_entropy"),
           frame("train.py", 45, "train_step")]
#: the same model's layers placed on several GPUs by one process (``device_map="auto"``: no DataParallel frame)
SPLIT_ACTIVATION = [*ACTIVATION[:-2], frame("model.py", 58, "forward"), frame("train.py", 44, "train_step")]


def data_parallel(chunks_mib: tuple[int, ...] = (1024, 1024, 1024), gather_mib: int = 0, steps: int = 2,
                  layers: int = 8, weights: int = 8, weight_mib: int = 128, wrapped: bool = True,
                  temps_mib: tuple[int, ...] | None = None) -> Scenario:
    """One process training one module on ``len(chunks_mib)`` GPUs (``nn.DataParallel`` where ``wrapped``, else the
    model's layers run on each GPU by one process with no DataParallel frame), ``steps`` steps: GPU 0 holds the
    master weights (``weights`` of ``weight_mib``), every other GPU a replica broadcast from it each step; replica
    ``i``'s forward keeps ``layers`` activations of ``chunks_mib[i]`` MiB in all (its share of the batch: equal
    shares, or a batch split by count whose items differ in size); GPU 0 gathers the replicas' outputs
    (``gather_mib`` MiB) and computes the loss; the backward frees the activations, the replicas and the gathered
    outputs.  ``temps_mib``: per GPU, a temporary of that many MiB made and freed after each layer's activation (a
    score matrix its share's longer sequences need; 0: none): the next layer's activation, smaller, lands in the
    freed temporary's cached block and splits it, and the next temporary needs a new segment -- the caching
    allocator's split blocks on that GPU alone, with every GPU's allocated peak alike.  Truth by construction: each
    GPU's allocated peak (the most its own allocations hold at once) and its peak reserve in segments that hold an
    allocated block (``in_use_peaks``)."""
    n = len(chunks_mib)
    gpus = [Allocator(80 * GiB, device=i) for i in range(n)]
    peak = [0] * n
    in_use = [0] * n
    temps = temps_mib or (0,) * n

    def malloc(i: int, size: int, frames: list) -> int:
        addr = gpus[i].malloc(size, frames)
        peak[i] = max(peak[i], gpus[i].allocated)
        in_use[i] = max(in_use[i], sum(s.size for s in gpus[i].segments if any(b.allocated for b in s.blocks)))
        return addr

    def layer(i: int) -> int:
        addr = malloc(i, chunks_mib[i] * MiB // layers, DP_ACTIVATION if wrapped else SPLIT_ACTIVATION)
        if temps[i]:
            gpus[i].free(malloc(i, temps[i] * MiB, DP_ACTIVATION if wrapped else SPLIT_ACTIVATION))
        return addr

    master = [malloc(0, weight_mib * MiB, PARAMS) for _ in range(weights)]
    for _ in range(steps):
        for a in gpus[1:]:  # the replicas run on threads: one clock for the process
            a.now_us = max(a.now_us, gpus[0].now_us)
        replicas = {i: [malloc(i, weight_mib * MiB, DP_REPLICA if wrapped else PARAMS) for _ in range(weights)]
                    for i in range(1, n)} if wrapped else {}
        acts = {i: [layer(i) for _ in range(layers)] for i in range(n)}
        for i in range(n):
            gpus[i].now_us = max(a.now_us for a in gpus)
        gathered = [malloc(0, gather_mib * MiB, DP_GATHER)] if gather_mib else []
        loss = malloc(0, 512, DP_LOSS if wrapped else ACTIVATION)
        grads = {i: [malloc(i, weight_mib * MiB, GRADIENT) for _ in range(weights)] for i in range(n)}
        for i in range(n):
            for x in reversed(acts[i]):
                gpus[i].free(x)
        for x in (*gathered, loss):
            gpus[0].free(x)
        for i, rs in replicas.items():
            for x in rs + grads[i]:
                gpus[i].free(x)
        for x in grads[0]:
            gpus[0].free(x)
    del master
    truth = {"peaks": peak, "fullest": max(range(n), key=lambda i: peak[i]), "data_parallel": wrapped,
             "in_use_peaks": in_use}
    return Scenario(snapshot(gpus), truth)
