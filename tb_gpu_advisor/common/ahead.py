"""Produce a sequence on a second core while the caller consumes it, in the same order.

Why (issue #38, "one big file uses every core"): the compiled XPlane decoder spends its time in C with the GIL
released, but the reader's Python between two of its calls (interning a batch's strings, joining columns) holds
the GIL.  Run serially, each waits for the other.  :func:`run_ahead` runs the producer -- the C walk of the next
lines and batches -- on a worker thread, at most ``depth`` items ahead of the consumer, so the C of batch k+1
overlaps the Python of batch k on another core.

The consumer sees exactly the items, and the exception, that iterating the producer itself would give, at the same
position: results cannot differ from the serial run.  Where the process has one core, or ``depth`` is 0, the
items are produced in the caller's thread as they are asked for (no thread, no queue).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from tb_gpu_advisor.common.memory import share_one_heap

T = TypeVar("T")
R = TypeVar("R")


def cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS says, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def run_ahead(items: Iterator[T], depth: int, name: str = "ahead") -> Iterator[T]:
    """``items``, produced on a worker thread at most ``depth`` items before the caller takes them (the item the
    caller is working on is not counted: with ``depth`` 1, the next is produced while the caller uses this one).

    Close the returned generator (or exhaust it) to stop the worker: leaving early (a ``break``, an error in the
    consumer) stops it after the item it is producing, and waits for that, so no work outlives the caller.
    """
    if depth <= 0 or cores() < 2:
        yield from items
        return
    share_one_heap()  # the worker's allocations in the main heap (see common/memory.py)
    q: queue.SimpleQueue[tuple[int, object]] = queue.SimpleQueue()
    room = threading.Semaphore(depth)  # items the worker may still produce before the caller takes one
    stop = threading.Event()
    worker = threading.Thread(target=_produce, args=(iter(items), q, room, stop), name=name, daemon=True)
    worker.start()
    try:
        while True:
            kind, value = q.get()
            if kind == _ITEM:
                room.release()
                yield value  # type: ignore[misc]
            elif kind == _DONE:
                return
            else:
                raise value  # type: ignore[misc]
    finally:
        stop.set()
        room.release()  # a worker waiting for room wakes, sees ``stop`` and ends
        worker.join()


_ITEM, _DONE, _RAISED = 0, 1, 2


def _produce(items: Iterator[T], q: queue.SimpleQueue, room: threading.Semaphore, stop: threading.Event) -> None:
    """The worker: each item into ``q`` in order once there is room, then the end or the exception that ended
    ``items``."""
    try:
        while True:
            room.acquire()
            if stop.is_set():
                return
            try:
                item = next(items)
            except StopIteration:
                q.put((_DONE, None))
                return
            q.put((_ITEM, item))
    except BaseException as e:  # noqa: BLE001 - handed to the consumer, raised there at the same position
        q.put((_RAISED, e))


def map_in_order(fn: Callable[[T], R], items: Sequence[T], workers: int = 2, name: str = "pool") -> list[R]:
    """``[fn(x) for x in items]``, at most ``workers`` at once on threads (issue #38: one big file uses every core).

    For independent pieces whose work is mostly numpy or C that lets go of the GIL (one GPU's event table each).
    The results come in ``items``' order and the error raised is the first item's in that order that failed, as
    in the serial loop; at most ``workers`` calls run at once, so at most that many pieces' temporaries are alive.
    With one core, ``workers`` <= 1, or fewer than two items, the calls run in the caller's thread, in order.
    """
    if workers <= 1 or len(items) < 2 or cores() < 2:
        return [fn(x) for x in items]
    share_one_heap()  # the workers' allocations in the main heap (see common/memory.py)
    with ThreadPoolExecutor(min(workers, len(items)), thread_name_prefix=name) as pool:
        futures = [pool.submit(fn, x) for x in items]
        try:
            return [f.result() for f in futures]
        finally:
            for f in futures:
                f.cancel()  # after an error: the items not started yet are not started
