"""``common.memory.small_pages``: numpy's big arrays allocated inside it carry no ``MADV_HUGEPAGE`` (checked in the
kernel's own record of the mapping, ``/proc/self/smaps``), the switch comes back when the last open block closes
(nested, threads), and the PyTorch reader allocates its columns inside it."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from tb_gpu_advisor.common import memory
from tb_gpu_advisor.formats.kineto import adapter

SWITCH = memory._numpy_huge_pages_switch()


def _switch_now() -> bool:
    """numpy's huge-page switch, read without changing it."""
    was = SWITCH(False)
    SWITCH(was)
    return bool(was)


def _advised(a: np.ndarray) -> bool | None:
    """Whether the kernel holds the mapping of ``a``'s data advised for huge pages (``hg`` in its VmFlags); None
    where ``/proc/self/smaps`` does not say."""
    addr = a.ctypes.data + a.nbytes // 2
    try:
        text = Path("/proc/self/smaps").read_text()
    except OSError:
        return None
    inside = False
    for line in text.splitlines():
        head = line.split(maxsplit=1)[0] if line else ""
        if "-" in head and not head.endswith(":"):
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= addr < hi
        elif inside and line.startswith("VmFlags:"):
            return "hg" in line.split()[1:]
    return None


needs_switch = pytest.mark.skipif(SWITCH is None or not sys.platform.startswith("linux"),
                                  reason="numpy has no huge-page switch here")


@needs_switch
def test_arrays_allocated_inside_are_not_advised_and_outside_are() -> None:
    before = _switch_now()
    SWITCH(True)
    try:
        # 40 MB: numpy advises from 4 MB, and glibc maps anything past 32 MB afresh (its largest mmap threshold), so no
        # array below lands in memory an earlier one left advised
        outside = np.ones(5 << 20)
        if not _advised(outside):
            pytest.skip("this kernel records no huge-page advice (no THP, or no smaps)")
        with memory.small_pages():
            inside = np.ones(5 << 20)
            assert _advised(inside) is False
        after = np.ones(5 << 20)
        assert _advised(after) is True
    finally:
        SWITCH(before)


@needs_switch
def test_the_switch_returns_when_the_last_block_closes() -> None:
    before = _switch_now()
    SWITCH(True)
    try:
        with memory.small_pages():
            with memory.small_pages():
                assert not _switch_now()
            assert not _switch_now()
        assert _switch_now()
        # two threads whose blocks overlap, the first to enter leaving first: off until the second leaves
        entered, release_a, release_b = threading.Event(), threading.Event(), threading.Event()
        seen: list[bool] = []

        def a() -> None:
            with memory.small_pages():
                entered.set()
                release_a.wait(5)

        def b() -> None:
            entered.wait(5)
            with memory.small_pages():
                release_a.set()
                release_b.wait(5)
                seen.append(_switch_now())

        ta, tb = threading.Thread(target=a), threading.Thread(target=b)
        ta.start(), tb.start()
        ta.join(5)
        assert not _switch_now()  # a has left, b is still inside
        release_b.set()
        tb.join(5)
        assert seen == [False] and _switch_now()
        SWITCH(False)
        with memory.small_pages():
            pass
        assert not _switch_now()  # a switch that was off stays off
    finally:
        SWITCH(before)


@needs_switch
def test_the_pytorch_reader_builds_its_columns_on_small_pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10.0 + i, "dur": 0.5}
              for i in range(4)]
    path = tmp_path / "w.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": events}))
    states: dict[str, bool] = {}
    for name in ("parse_trace", "to_trace"):
        real = getattr(adapter, name)

        def spy(*a, _real=real, _name=name, **k):
            states[_name] = _switch_now()
            return _real(*a, **k)

        monkeypatch.setattr(adapter, name, spy)
    before = _switch_now()
    SWITCH(True)
    try:
        trace = adapter.read_trace(str(path))
        assert states == {"parse_trace": False, "to_trace": False}
        assert _switch_now()
        assert trace.num_events == 4
    finally:
        SWITCH(before)
