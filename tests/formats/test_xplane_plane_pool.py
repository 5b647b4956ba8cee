"""Planes decoded on two threads read as one thread reads them (issue #38: one big file uses every core).

Why: ``reader._PlanePool`` decodes a file's big planes two at a time, out of turn, and settles them in file order.
What a plane decodes to depends on the planes before it only through the file's time base (set by the first line
with an absolute epoch timestamp), and which error a broken file gives depends on which plane a serial read reaches
first.  These tests build files where both matter and compare the pool's result -- columns, time base, or the error's
words -- with a serial read (one worker) and with the pure-Python reference; one proves that two planes really are
decoded at once.
"""

from __future__ import annotations

import io
import threading

import pytest

from synthetic import encode as enc
from synthetic import hostile
from tb_gpu_advisor.common import ahead
from tb_gpu_advisor.formats.xplane import reader, wire
from tb_gpu_advisor.formats.xplane.schema import message_class
from tests.support.xplane_paths import differences, read_with

EPOCH_NS = 1_700_000_000_000_000_000  # an absolute timestamp: the first line with one sets the file's time base


def _varint_field(number: int, value: int) -> bytes:
    return enc.tag(number, 0) + enc.encode_varint(value)


def _event(start_ps: int, duration_ps: int, name_id: int = 1) -> bytes:
    return _varint_field(1, name_id) + _varint_field(2, start_ps) + _varint_field(3, duration_ps)


def _line(timestamp_ns: int, events: list[bytes], line_id: int = 7) -> bytes:
    head = _varint_field(1, line_id) + hostile.field(2, b"stream") + _varint_field(3, timestamp_ns)
    return head + b"".join(hostile.field(4, e) for e in events)


def _plane(plane_id: int, lines: list[bytes]) -> bytes:
    """One GPU plane (an XSpace field 1) holding ``lines``, with event and stat metadata."""
    XPlane = message_class("XPlane")
    p = XPlane(id=plane_id, name=f"/device:GPU:{plane_id}")
    for entries, names in ((p.event_metadata, ("k0", "k1", "k2")), (p.stat_metadata, ("tf_op", "correlation_id"))):
        for i, name in enumerate(names, start=1):
            e = entries.add()
            e.key = e.value.id = i
            e.value.name = name
    return hostile.field(1, p.SerializeToString() + b"".join(hostile.field(3, ln) for ln in lines))


def _events(n: int, seed: int) -> list[bytes]:
    return [_event(1000 * i + seed, 500 + (i * seed) % 97, 1 + (i + seed) % 3) for i in range(n)]


@pytest.fixture
def pooled(monkeypatch):
    """Two cores, and every plane big enough to go to the pool with room for all of them at once."""
    monkeypatch.setattr(ahead, "cores", lambda: 2)
    monkeypatch.setattr(wire, "AHEAD_MIN_BYTES", 1)
    monkeypatch.setattr(reader, "_pool_budget", lambda size: size)
    return monkeypatch


def _read(data: bytes, workers: int, monkeypatch, use_compiled: bool = True) -> object:
    monkeypatch.setattr(reader, "PLANE_WORKERS", workers)
    return read_with(use_compiled, data)


def _serial_reference(data: bytes, monkeypatch) -> object:
    """The pure-Python decoder, one plane at a time."""
    return _read(data, 1, monkeypatch, use_compiled=False)


def test_two_planes_are_decoded_at_once_with_the_serial_columns(pooled):
    """The first two planes meet inside their decodes (a barrier of two: a serial read never passes it), and the
    timeline equals the one-thread read and the pure-Python reference."""
    data = b"".join(_plane(i, [_line(1000 * i, _events(3000, i)), _line(5, _events(50, i + 9), 8)]) for i in range(1, 6))
    meet = threading.Barrier(2, timeout=20)
    threads: list[str] = []
    real = reader._read_plane

    def meeting(buf, clock, keep_stats=None):
        threads.append(threading.current_thread().name)
        if len(threads) <= 2:
            meet.wait()  # BrokenBarrierError here when the second plane is not decoded alongside the first
        return real(buf, clock, keep_stats)

    pooled.setattr(reader, "_read_plane", meeting)
    both = _read(data, 2, pooled)
    assert not isinstance(both, Exception), both
    assert len(set(threads[:2])) == 2 and all(t.startswith("xplane-plane") for t in threads)
    pooled.setattr(reader, "_read_plane", real)
    assert differences(both, _read(data, 1, pooled)) == []
    assert differences(both, _serial_reference(data, pooled)) == []
    assert [p.id for p in both.planes] == [1, 2, 3, 4, 5] and both.num_events == 5 * 3050


def test_a_time_base_set_by_an_earlier_plane_reaches_the_planes_decoded_beside_it(pooled):
    """Plane 2's first line sets the time base (an epoch timestamp) while plane 3, also in epoch time, is decoded
    on the other thread: plane 3's starts are relative to plane 2's base, as in a serial read -- a plane that took
    its own base would start at 0 instead of 5 ms later."""
    data = (_plane(1, [_line(2000, _events(2000, 1))])
            + _plane(2, [_line(EPOCH_NS, _events(2000, 2))])
            + _plane(3, [_line(EPOCH_NS + 5_000_000, _events(2000, 3))])
            + _plane(4, [_line(EPOCH_NS + 9_000_000, _events(10, 4))]))
    both = _read(data, 2, pooled)
    assert not isinstance(both, Exception), both
    assert both.time_base_ns == EPOCH_NS
    assert int(both.planes[2].lines[0].start_ps[0]) == 5_000_000 * 1000 + 3
    assert differences(both, _read(data, 1, pooled)) == []
    assert differences(both, _serial_reference(data, pooled)) == []


@pytest.mark.parametrize("tail", [b"", b"\x0a\xff\xff\xff\x0f"], ids=["whole", "truncated after"])
def test_the_error_a_serial_read_reaches_first_is_the_one_raised(pooled, tail):
    """Plane 2's times are out of range (a 12-day duration) and plane 3's events are cut short; plane 3 is smaller
    and done first, and a truncated file fails the read past both: the error is plane 2's, word for word, as in a
    serial read -- also where the time error is only found when its clock calls are replayed in file order."""
    long = reader.MAX_TIME_PS + 1
    data = (_plane(1, [_line(1000, _events(500, 1))])
            + _plane(2, [_line(1000, _events(3000, 2) + [_event(0, long)])])
            + _plane(3, [_line(1000, _events(20, 3)) + b"\x22\x05\x08"])
            + tail)
    both = _read(data, 2, pooled)
    serial = _read(data, 1, pooled)
    assert isinstance(both, reader.ProfileReadError) and "durations out of range" in str(both)
    assert differences(both, serial) == []
    assert differences(both, _serial_reference(data, pooled)) == []


def test_a_time_error_before_a_broken_line_of_the_same_plane_is_raised_first(pooled):
    """Plane 2's first line has a 12-day duration, its second line is cut short: decoded out of turn, the plane's
    decode ends at the second line, but a serial read stops at the first -- the time error, found when the clock
    calls made before the broken line are replayed, comes first."""
    long = reader.MAX_TIME_PS + 1
    data = (_plane(1, [_line(1000, _events(500, 1))])
            + _plane(2, [_line(1000, _events(3000, 2) + [_event(0, long)]), _line(1000, _events(5, 3)) + b"\x22\x05\x08"])
            + _plane(3, [_line(1000, _events(20, 3))]))
    both = _read(data, 2, pooled)
    assert isinstance(both, reader.ProfileReadError) and "durations out of range" in str(both)
    assert differences(both, _read(data, 1, pooled)) == []
    assert differences(both, _serial_reference(data, pooled)) == []


def test_one_core_reads_in_the_callers_thread(monkeypatch):
    """With one core no pool is started: every plane is decoded by the reader's thread."""
    monkeypatch.setattr(ahead, "cores", lambda: 1)
    monkeypatch.setattr(reader, "cores", lambda: 1)
    monkeypatch.setattr(wire, "AHEAD_MIN_BYTES", 1)
    seen = []
    real = reader._read_plane
    monkeypatch.setattr(reader, "_read_plane", lambda *a: seen.append(threading.get_ident()) or real(*a))
    data = b"".join(_plane(i, [_line(1000, _events(100, i))]) for i in (1, 2, 3))
    result = reader._parse(io.BytesIO(data), len(data), "<bytes>", None)
    assert len(result.planes) == 3 and set(seen) == {threading.get_ident()}


def _tables_equal(a, b) -> bool:
    import numpy as np

    if type(a) is not type(b) or vars(a).keys() != vars(b).keys():
        return False
    for k, va in vars(a).items():
        vb = vars(b)[k]
        if isinstance(va, np.ndarray):
            if not (isinstance(vb, np.ndarray) and va.dtype == vb.dtype and np.array_equal(va, vb)):
                return False
        elif va != vb:
            return False
    return True


def test_gpu_tables_built_two_at_once_equal_the_serial_ones(monkeypatch):
    """Five GPU planes of several streams: the tables built on the pool (and their order) are the serial loop's."""
    from tb_gpu_advisor.formats.xplane import adapter

    monkeypatch.setattr(ahead, "cores", lambda: 2)
    data = b"".join(_plane(i, [_line(1000 * i, _events(4000, i)), _line(3000, _events(900, i + 5), 8)]) for i in range(5))
    tables = {}
    for workers in (1, 2):
        monkeypatch.setattr(adapter, "DEVICE_TABLE_WORKERS", workers)
        tables[workers] = adapter.all_device_events(reader._parse(io.BytesIO(data), len(data), "<bytes>", None), True)
    assert [t.gpu for t in tables[2]] == [0, 1, 2, 3, 4]
    assert all(_tables_equal(a, b) for a, b in zip(tables[1], tables[2], strict=True))


def test_an_interrupt_past_a_pending_broken_plane_stays_an_interrupt(pooled):
    """Ctrl-C while a broken plane is decoding on the pool: the interrupt reaches the caller, not the plane's error
    (only an error of the read is preceded by the pending planes' errors)."""
    broken = _plane(1, [_line(1000, _events(3000, 1)) + b"\x22\x05\x08"])
    real = wire.stream_top_level_fields

    def interrupted(*a, **k):
        yield from real(*a, **k)
        raise KeyboardInterrupt

    pooled.setattr(wire, "stream_top_level_fields", interrupted)
    pooled.setattr(reader, "PLANE_WORKERS", 2)
    pooled.setattr(reader, "_pool_budget", lambda size: 2 * size)  # room for the one plane and its padding
    with pytest.raises(KeyboardInterrupt):
        reader._parse(io.BytesIO(broken), len(broken), "<bytes>", None)
    pooled.setattr(wire, "stream_top_level_fields", real)
    assert isinstance(_read(broken, 2, pooled), reader.ProfileReadError)  # the same file, read whole: its error


def test_the_xplane_reader_builds_its_columns_on_small_pages(monkeypatch):
    """numpy's huge-page advice is off while the timeline is decoded and the trace's tables are built (huge-page
    faults cost ~4x small ones on the VMs measured: the 1 GB dense read's system time 2.7-3.1 -> 1.4 s), and on
    again after, for the analysis."""
    from tb_gpu_advisor.common import memory
    from tb_gpu_advisor.formats.xplane import adapter
    from tests.support.paths import DEMO_LOGS

    switch = memory._numpy_huge_pages_switch()
    if switch is None:
        pytest.skip("this numpy has no huge-page switch")

    def now() -> bool:
        state = bool(switch(False))
        switch(state)
        return state

    states: dict[str, bool] = {}
    for name in ("read_timeline", "to_trace"):
        real = getattr(adapter, name)

        def spy(*a, _real=real, _name=name, **k):
            states[_name] = now()
            return _real(*a, **k)

        monkeypatch.setattr(adapter, name, spy)
    before = switch(True)
    try:
        path = next(DEMO_LOGS.rglob("*.xplane.pb"))
        trace = adapter.read_trace(str(path))
        assert states == {"read_timeline": False, "to_trace": False}
        assert now() and trace.num_events > 0
    finally:
        switch(before)
