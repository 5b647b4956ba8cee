"""Return freed heap to the operating system between analysis phases, and keep it where it is reused.

Each phase (building the trace's tables, the job and steps, the metrics context, the metrics) frees far more than it
keeps: numpy temporaries, released columns.  glibc keeps freed pages mapped, so without trims the process's peak RSS
carries every phase's leftovers under the next one's arrays.  A trim has a price too: each page it hands back that a
later allocation reuses is faulted in again (a minor fault, system time).  Measured on 2026-11-29 (``report`` of the
benchmark captures, whole process, docs/benchmarks.md "h38-faults"): trimming at every call site, the dense 100 MB
capture peaked at 198-204 MB with ~200 k minor faults, with no trim at all at 208-217 MB with ~87 k; the dense 1 GB one
at 1,527-1,572 MB against 1,608-1,649 MB.  So the trims stay at the phase boundaries, where a phase would otherwise
stack its arrays on the last one's leftovers, and at the end of each report (a long-lived worker must not keep a big
file's heap), but not after each plane of a read, whose leftovers the next plane's decoding reuses (~30 k faults at
100 MB, ~0.1 M at 1 GB, for no lower peak).  Keeping big arrays in the heap (``mallopt`` ``M_MMAP_THRESHOLD``
past glibc's 32 MB ceiling, even only while reading) halved the 1 GB captures' faults but left a heap whose holes
raised the dense 1 GB peak in some runs to 1,634-1,688 MB: not done.  A call costs a few ms.  Elsewhere than glibc
(macOS, musl) none of this does anything.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import threading
from collections.abc import Iterator  # at import, not in the call: a module loaded under a worker's address-space limit may not map

try:
    import resource
except ImportError:  # not POSIX
    resource = None  # type: ignore[assignment]


def _libc(name: str):  # a ctypes function, or None
    """glibc's function ``name``, or None elsewhere (macOS, musl)."""
    try:
        return getattr(ctypes.CDLL("libc.so.6"), name)
    except (OSError, AttributeError):
        return None


_MALLOC_TRIM = _libc("malloc_trim")
_MALLOPT = _libc("mallopt")
_M_ARENA_MAX = -8  # glibc's malloc.h
_ONE_HEAP = False


def share_one_heap() -> None:
    """Make threads started from now on allocate from the main heap (glibc ``M_ARENA_MAX`` 1); a no-op elsewhere.

    Why: glibc gives each new thread a heap (arena) of its own.  A reader's worker thread (``common/ahead.py``)
    allocates the column buffers the analysis keeps, and what it frees stays mapped in its arena, which
    ``malloc_trim`` does not fully hand back: ``report`` of the 100 MB tf-shape capture peaked at 150-163 MB with
    the XPlane walk on a second thread against 147 MB in one thread, and at 147-152 MB with one heap.  The
    threads' allocations are few and large, so sharing the heap's lock costs nothing measurable.  Process-wide
    and for good, once: call it in a process that analyses (the CLI, a worker), before starting the threads.
    """
    global _ONE_HEAP
    if _MALLOPT is not None and not _ONE_HEAP:
        _MALLOPT(_M_ARENA_MAX, 1)
        _ONE_HEAP = True


def release_free_heap() -> None:
    """Hand freed heap pages back to the OS (glibc ``malloc_trim``); a no-op elsewhere."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


#: Address space probed per byte of a message before upb parses it, plus a fixed megabyte: upb's arena holds a copy
#: of the bytes (1x) and a 16-byte view of each repeated element (0.6x for a dense stream's ~25-byte events).
PARSE_ROOM_FACTOR = 2


def ensure_room_to_parse(nbytes: int) -> None:
    """Raise MemoryError unless room for parsing ``nbytes`` of protobuf can be mapped now.

    Why: upb (protobuf's C parser) does not survive a failed allocation -- under a worker's address-space limit
    (``RLIMIT_AS``, runtime/guard.py) the worker died of a segfault, or upb called the file damaged ("Arena alloc
    failed").  Mapping the room first (an anonymous map, unmapped at once: address space, no page touched, nothing
    for RSS or tracemalloc) makes running out a MemoryError in Python, before upb allocates.
    """
    size = PARSE_ROOM_FACTOR * max(int(nbytes), 0) + (1 << 20)
    if size <= UNREFUSED_MAP and not _maps_may_be_refused():
        return  # nothing can refuse upb a map this small here: the probe would map and unmap for nothing
    try:
        mmap.mmap(-1, size).close()
    except OSError as e:  # ENOMEM under the limit
        raise MemoryError(f"no room to parse {nbytes:,} bytes of protobuf: {e}") from e


#: Room (bytes) no kernel refuses to map where the process has no address-space limit and the system does not commit
#: strictly: Linux's default overcommit refuses only a single map larger than its RAM and swap together.
UNREFUSED_MAP = 64 << 20


def _maps_may_be_refused() -> bool:
    """Whether a small anonymous map may be refused now: the process has an address-space limit (``RLIMIT_AS``: a
    worker's, runtime/guard.py, set at any time -- asked each call, a fraction of a microsecond), the system commits
    strictly (``vm.overcommit_memory`` 2), or either cannot be told (not Linux).  Why asked: the probe of
    :func:`ensure_room_to_parse` maps and unmaps once per message, ~16 us each -- 2,316 messages and 37 ms of a
    173 ms analysis of real-h100-jax/gpt_bf16's XPlane (h37-refactor66) -- and only a limit can make it fail."""
    if resource is None or _overcommit_mode() not in (0, 1):
        return True
    return resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY


_OVERCOMMIT: list[int] = []


def _overcommit_mode() -> int:
    """``vm.overcommit_memory`` (0 heuristic, 1 always, 2 strict), read once; -1 where it cannot be read."""
    if not _OVERCOMMIT:
        try:
            with open("/proc/sys/vm/overcommit_memory") as f:
                _OVERCOMMIT.append(int(f.read().strip()))
        except (OSError, ValueError):
            _OVERCOMMIT.append(-1)
    return _OVERCOMMIT[0]


_SMALL_PAGES_LOCK = threading.Lock()
_SMALL_PAGES_USERS = 0
_SMALL_PAGES_BEFORE = True


def _numpy_huge_pages_switch():
    """numpy's process-wide switch of ``madvise(MADV_HUGEPAGE)`` on its big arrays (``enabled -> previous``), or
    None where this numpy has none (not Linux, an old or future numpy)."""
    import numpy as np

    for mod in ("_core", "core"):
        switch = getattr(getattr(np, mod, None), "multiarray", None)
        switch = getattr(switch, "_set_madvise_hugepage", None)
        if switch is not None:
            return switch
    return None


@contextlib.contextmanager
def small_pages() -> Iterator[None]:
    """numpy arrays allocated inside the block get no ``MADV_HUGEPAGE`` (numpy asks it for every array of 4 MB or
    more); the switch is set back when the last block open in the process closes.

    Why: a reader's columns are written once, front to back, and read a few times, so huge pages have little to give
    them (a few TLB misses), and their first touch costs more here: on this VM a huge-page fault took ~1.7 ms per
    2 MB against ~0.4 ms for the same 2 MB in 4 kB faults -- no compaction (``/proc/vmstat`` ``compact_stall``
    unchanged, ``thp_fault_alloc`` +225 for 255 MB of columns); likely the hypervisor backing fresh 2 MB regions,
    where small pages reuse recently freed ones.  Writing the 2.65 M rows of a 1 GB PyTorch trace into
    fresh columns (88 bytes a row): 0.39-0.46 s advised, 0.09 s not; the whole read (parse + to_trace) 3.0 -> 2.3 s
    of CPU, system time 1.1 -> 0.3 s (docs/benchmarks.md, h38-kineto).  Only page placement changes, never a value; a
    thread of a server that allocates meanwhile gets small pages too, which costs it nothing but the same trade.
    """
    global _SMALL_PAGES_USERS, _SMALL_PAGES_BEFORE
    switch = _numpy_huge_pages_switch()
    if switch is None:
        yield
        return
    with _SMALL_PAGES_LOCK:
        if _SMALL_PAGES_USERS == 0:
            _SMALL_PAGES_BEFORE = bool(switch(False))
        _SMALL_PAGES_USERS += 1
    try:
        yield
    finally:
        with _SMALL_PAGES_LOCK:
            _SMALL_PAGES_USERS -= 1
            if _SMALL_PAGES_USERS == 0:
                switch(_SMALL_PAGES_BEFORE)
