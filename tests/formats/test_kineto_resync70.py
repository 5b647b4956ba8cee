"""A Kineto file damaged inside its events is read past the damage, never mended, never healthy (h37-damage70).

The real file: wild/two_writers_v100_gloo (cheese-snowleopard/dist-GNN ``trace_result.json`` @326da70, MIT), two
processes (pids 62927 and 62928) exporting to one path at once: a patchwork of both writers' bytes, each one's events
broken off where the other's blocks begin.  Base dbf6cf15 read its first 23 events and stopped at byte 8,372 ("no GPU
record in the part of the damaged file read"); 540 kernels lie among its bytes.  Now the reader skips each broken
stretch to the next whole event (``parse._Parser._resync``), counts what it skipped (a lower bound), tells the two
processes' events apart (host events by pid, device events by their launching call's correlation id) and keeps one
writer's (``parse._per_process``): 288 kernels of pid 62928 read and timed, pid 62927's set aside, counted.

The compiled scanner stops at a chunk that is no run of whole events and hands it to the Python reader
(``_Parser._chunk`` -> ``_exact``), which resyncs: both paths read every damaged file alike (checked here on every
mutation).  Fuzz: a whole real trace and a second writer's copy of it (another pid, shifted times, so its events lie
at other offsets) written over each other at random block boundaries, cut, with garbage inserted, with bytes dropped:
never an error other than the reader's own, never a damaged text read as whole, never an event that is in neither
writer's text (a duration cut mid-event is dropped, never guessed) -- but where the damage joins two halves that
parse as one event (bytes dropped from one string to another, a writer's switch at a point both texts agree on), no
reader can tell it from a whole one: at most one such event per join, and the record says so.  Fail on base dbf6cf15: the real-file tests (23
events, a cut), the fuzz's ``not truncated`` where a stretch is skipped."""

from __future__ import annotations

import gzip
import json
import random
import re

import numpy as np
import pytest

from tb_gpu_advisor.formats.kineto import parse
from tests.support.compiled import built, needs
from tests.support.kineto_paths import differences, read_both
from tests.support.paths import FIXTURES

TWO = FIXTURES / "wild" / "two_writers_v100_gloo" / "bns_gcn_rank2.62928.pt.trace.json.gz"
needs_compiled = needs(built("tb_gpu_advisor.formats.kineto._cscan"), "PyTorch JSON scanner")
SRC = FIXTURES / "wild" / "profiler_only_a4000" / "wire_lf_new.527706.pt.trace.json.gz"


def _kernels(kt) -> int:
    ids = [i for i, c in enumerate(kt.cats) if c.lower() == "kernel"]
    return int(np.isin(kt.cat, ids).sum())


def test_the_two_writer_file_is_read_past_its_damage_one_writer_kept():
    kt = parse.parse_trace(str(TWO), workers=1)
    (rec, *_) = kt.problems
    assert rec.kind == "unreadable" and rec.what == "json_writers" and rec.offset == 8372, rec
    assert not kt.truncated
    d = rec.detail
    assert "2 traces' ends" in d and "every count is a lower bound" in d and "160 damaged stretches" in d, d
    assert "pid 62928: 1,680 ops, 722 runtime calls, 40 annotations, 288 kernels" in d and "-- kept" in d, d
    assert "set aside: pid 62927: 302 runtime calls, 179 kernels" in d, d
    assert _kernels(kt) == 288
    pids = set(kt.pid.tolist())
    assert 62928 in pids and 62927 not in pids, pids


@needs_compiled
def test_both_paths_read_the_two_writer_file_alike():
    fast, ref = read_both(str(TWO))
    assert differences(fast, ref) == []
    fast, ref = read_both(str(TWO), chunk_bytes=1 << 12)  # small chunks: the damage falls in many chunks' middles
    assert differences(fast, ref) == []


def _events(text: bytes) -> set[tuple]:
    doc = json.loads(text)
    return {(e.get("name"), e.get("ts"), e.get("dur")) for e in doc["traceEvents"] if e.get("ph") == "X"}


def _second_writer(text: bytes) -> bytes:
    """The same trace as another process wrote it: another pid, times 7 us later (its events at other offsets)."""
    out = re.sub(rb'"pid": 527706', b'"pid": 5277', text)
    return re.sub(rb'"ts": (\d+)', lambda m: b'"ts": %d' % (int(m.group(1)) + 7), out)


def _mosaic(a: bytes, b: bytes, rng: random.Random) -> tuple[bytes, int]:
    """Two writers' bytes written over each other: each offset holds one writer's byte, block by block; and the
    blocks (each switch of writer may join two writers' halves into one event that parses)."""
    n, out, at, blocks = max(len(a), len(b)), bytearray(), 0, 0
    while at < n:
        blocks += 1
        step = rng.randrange(200, 9000)
        src = a if rng.random() < 0.5 else b
        part = src[at:at + step]
        out += part if len(part) == min(step, n - at) else (a if src is b else b)[at:at + step]
        at += step
    return bytes(out), blocks


def _mutate(a: bytes, b: bytes, rng: random.Random) -> tuple[bytes, int]:
    """A damaged text and how many events of it may still parse though changed (two halves joined; garbage inside a
    string that holds no quote): the reader cannot tell one from a whole event; a cut end makes none."""
    how = rng.randrange(4)
    if how == 0:
        return _mosaic(a, b, rng)
    k = rng.randrange(len(a) // 50, len(a))
    if how == 1:
        data, blocks = _mosaic(a, b, rng)
        return data[:k], blocks
    if how == 2:
        return a[:k] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))) + a[k:], 1  # in a string
    return a[:k] + a[k + rng.randrange(1, 3000):], 1


@needs_compiled
@pytest.mark.parametrize("seed", range(60))
def test_fuzz_damaged_events_are_skipped_never_mended(seed, tmp_path):
    a = gzip.decompress(SRC.read_bytes())
    b = _second_writer(a)
    rng = random.Random(seed)
    data, splices = _mutate(a, b, rng)
    path = tmp_path / "x.pt.trace.json"
    path.write_bytes(data)
    fast, ref = read_both(str(path), chunk_bytes=1 << rng.randrange(10, 16))
    assert differences(fast, ref) == []
    if isinstance(ref, Exception):
        assert isinstance(ref, parse.KinetoReadError), ref
        return
    try:  # bytes that are no UTF-8 inside a string are read as escapes, as always (no damage of the JSON)
        json.loads(data.decode("utf-8", "surrogateescape"))
        whole = True
    except ValueError:
        whole = False
    assert whole or ref.problems, "a damaged text read as whole"
    known = _events(a) | _events(b)
    names = ref.names
    read = {(names[n], t / 1000, d / 1000) for n, t, d in zip(ref.name.tolist(), ref.ts_ns.tolist(),
                                                               ref.dur_ns.tolist())}
    invented = {e for e in read if not any(str(k[0]).startswith(e[0]) and abs(e[1] - k[1]) < 1e-3 and abs(e[2] - (k[2] or 0)) < 1e-3
                                           for k in known)}
    assert len(invented) <= splices, sorted(invented)[:5]
