"""``common/ahead.run_ahead``: a producer on a second core, its items and its errors exactly the serial ones.

Why: the XPlane reader runs its C walk ahead of its Python this way (issue #38, "one big file uses every core");
a reordered item, a lost exception or a worker left running would change or leak a report.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import threading
import time

import pytest

from tb_gpu_advisor.common import ahead
from tests.support.paths import REPO


@pytest.fixture
def two_cores(monkeypatch):
    """As on a machine with two cores, whatever this one has (the thread is what is tested)."""
    monkeypatch.setattr(ahead, "cores", lambda: 2)


def _producer(n: int, threads: list[int], fail_at: int | None = None):
    for i in range(n):
        threads.append(threading.get_ident())
        if i == fail_at:
            raise ValueError(f"bad item {i}")
        yield i


def test_items_come_in_order_from_another_thread(two_cores):
    threads: list[int] = []
    assert list(ahead.run_ahead(_producer(500, threads), depth=2)) == list(range(500))
    assert set(threads) and threading.get_ident() not in threads


def test_an_error_is_raised_where_the_serial_run_raises_it(two_cores):
    got = []
    with pytest.raises(ValueError, match="bad item 7"):
        got.extend(ahead.run_ahead(_producer(20, [], fail_at=7), depth=3))  # keeps what came before the error
    assert got == list(range(7))


def test_leaving_early_stops_the_worker(two_cores):
    """The worker stops after the item it is producing: nothing runs on once the consumer is gone."""
    produced = []

    def endless():
        i = 0
        while True:
            produced.append(i)
            yield i
            i += 1

    stream = ahead.run_ahead(endless(), depth=2, name="ahead-test")
    assert [next(stream) for _ in range(5)] == list(range(5))
    stream.close()
    assert not [t for t in threading.enumerate() if t.name == "ahead-test"]
    n = len(produced)
    time.sleep(0.05)
    assert len(produced) == n <= 5 + 2  # the consumed and ``depth`` more


def test_depth_bounds_what_is_produced_before_it_is_asked_for(two_cores):
    produced = []

    def counted():
        for i in range(100):
            produced.append(i)
            yield i

    stream = ahead.run_ahead(counted(), depth=2)
    for k in range(1, 30):
        next(stream)
        time.sleep(0.002)
        assert len(produced) <= k + 2  # the consumed and ``depth`` more
    stream.close()


@pytest.mark.parametrize("depth,n_cores", [(0, 2), (2, 1)])
def test_without_a_second_core_or_depth_the_caller_produces(monkeypatch, depth, n_cores):
    monkeypatch.setattr(ahead, "cores", lambda: n_cores)
    threads: list[int] = []
    assert list(ahead.run_ahead(_producer(10, threads), depth=depth)) == list(range(10))
    assert set(threads) == {threading.get_ident()}


_ARENAS = """
import ctypes, sys
from tb_gpu_advisor.common import ahead
ahead.cores = lambda: 2
if sys.argv[1] == "own heaps":
    ahead.share_one_heap = lambda: None
def produce():
    for _ in range(50):
        yield [bytearray(200) for _ in range(200)]  # small blocks: from the thread's heap, never mmap'd alone
kept = list(ahead.run_ahead(produce(), 2))
libc = ctypes.CDLL("libc.so.6")
libc.open_memstream.restype = ctypes.c_void_p
text, size = ctypes.c_char_p(), ctypes.c_size_t()
fp = ctypes.c_void_p(libc.open_memstream(ctypes.byref(text), ctypes.byref(size)))
libc.malloc_info(0, fp)
libc.fclose(fp)
print(text.value.decode().count("<heap nr="))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="glibc's per-thread heaps")
@pytest.mark.parametrize("setting,heaps", [("one heap", 1), ("own heaps", 2)])
def test_the_worker_allocates_from_the_main_heap(setting, heaps):
    """glibc's ``malloc_info`` counts the heaps: the worker's blocks land in the main one, where what it frees is
    reused and trimmed (``common/memory.share_one_heap``); without that call the worker gets a heap of its own
    (the control case, which shows the count can tell)."""
    out = subprocess.run([sys.executable, "-c", _ARENAS, setting], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    assert int(out.stdout.strip()) == heaps, out.stderr


# -- map_in_order: independent pieces (one GPU's table each) on a pool ------------------------------------------------


def test_map_in_order_runs_two_at_once_and_keeps_the_order(two_cores):
    """Two calls meet inside ``fn`` (a barrier of two: the serial loop never passes it), at most two run at once, and
    the results are in the items' order whatever order the calls end in."""
    meet = threading.Barrier(2, timeout=20)
    lock = threading.Lock()
    running, most, threads = [0], [0], set()

    def fn(i: int) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            threads.add(threading.get_ident())
        if i < 2:
            meet.wait()
        time.sleep(0.002 * (7 - i))  # later items end first
        with lock:
            running[0] -= 1
        return i * i

    assert ahead.map_in_order(fn, list(range(7)), 2) == [i * i for i in range(7)]
    assert most[0] == 2 and threading.get_ident() not in threads


def test_map_in_order_raises_the_first_error_in_item_order(two_cores):
    """Item 1 fails late and item 2 fails at once: item 1's error is raised, as in the serial loop."""

    def fn(i: int) -> int:
        if i == 1:
            time.sleep(0.05)
            raise ValueError("one")
        if i == 2:
            raise KeyError("two")
        return i

    with pytest.raises(ValueError, match="one"):
        ahead.map_in_order(fn, [0, 1, 2, 3], 2)


@pytest.mark.parametrize("workers, n_cores", [(1, 2), (2, 1)])
def test_map_in_order_without_a_second_core_or_worker_runs_in_the_caller(monkeypatch, workers, n_cores):
    monkeypatch.setattr(ahead, "cores", lambda: n_cores)
    seen = []
    assert ahead.map_in_order(lambda i: seen.append(threading.get_ident()) or -i, [1, 2, 3], workers) == [-1, -2, -3]
    assert set(seen) == {threading.get_ident()}
