"""Damage with no whole event after it is searched for one in a bounded span, the rest counted as it streams past,
never held (h37-homes71).  On main ea5a2537 ``_Parser._resync`` doubled its buffer until the file's end where no whole
event followed the damage: the rest of a damaged file, however large, was held in memory at once.

A crafted file: whole events, a broken one, then 6 MiB of an event's text cut over and over (candidates, none whole)
with ``"traceName"`` keys among them at odd places.  With the span set to 64 KiB here (a class attribute; 64 MiB in
use), the buffer stays within a chunk and a few read blocks; the record says the span and the bytes skipped, and counts every
``"traceName"`` key in the rest (three traces' ends here: two writers' words).  Fails on ea5a2537: the buffer grows
to the file (no ``RESYNC_SPAN``).  The control: the same damage in a small file is read as before (its rest in the
buffer, the record's words unchanged).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tb_gpu_advisor.formats.kineto import parse

SPAN = 64 << 10
CHUNK = 256 << 10  # the events decoded at once (4 MiB in use): the buffer holds a chunk and a read block ahead
REST = 6 << 20
KEYS = 3


def _event(name: str, ts: int) -> str:
    return json.dumps({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": 5},
                      separators=(",", ":"))


def _damaged(path: Path, rest: int) -> int:
    """The file, ``rest`` bytes of cut events after the broken one, :data:`KEYS` ``"traceName"`` keys among them
    (none at the file's end, which closes the array after the last cut event): the damage's byte."""
    head = '{"schemaVersion":1,"traceEvents":[' + _event("a_op", 100) + "," + _event("b_op", 200) + ","
    # an event broken off by the next one's bytes (its ``},`` a cut candidate for the chunks, none whole)
    cut = '{"ph":"X","cat":"cpu_op","name":"cut_op","args":{"k":1},"pid":1,"ts":3'
    junk = (cut * (rest // len(cut) + 1))[:rest]
    for k in range(KEYS):  # at odd places, so that one is likely cut between two read blocks
        at = (k + 1) * rest // (KEYS + 1) + 7 * k - 5
        junk = junk[:at] + '"traceName":"x"' + junk[at + 15:]
    path.write_text(head + junk + "]}")
    return len(head)


def _read_watched(path: Path, monkeypatch) -> tuple[object, int]:
    """The file read (one worker, events decoded :data:`CHUNK` bytes at once), and the most bytes its buffer held at
    once."""
    monkeypatch.setattr(parse, "CHUNK_BYTES", CHUNK)
    peak = [0]
    fill = parse._Parser._fill

    def watched(self, want):
        fill(self, want)
        peak[0] = max(peak[0], len(self.buf))

    monkeypatch.setattr(parse._Parser, "_fill", watched)
    return parse.parse_trace(str(path), workers=1), peak[0]


def test_no_whole_event_after_the_damage_is_searched_in_a_span(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(parse._Parser, "RESYNC_SPAN", SPAN, raising=False)
    path = tmp_path / "damaged.pt.trace.json"
    at = _damaged(path, REST)
    kt, peak = _read_watched(path, monkeypatch)
    assert {kt.names[i] for i in kt.name.tolist()} == {"a_op", "b_op"}
    assert peak <= CHUNK + 3 * parse._READ_BLOCK + SPAN < REST, peak
    (p,) = [p for p in kt.problems if p.kind == "cut"]
    assert p.what == "json_writers" and p.offset == at, p
    assert "no whole event begins in the 64.0 KiB after it" in p.detail, p.detail
    assert f"({path.stat().st_size - at:,} bytes, skipped)" in p.detail, p.detail
    assert f"{KEYS} traces' ends" in p.detail, p.detail


def test_the_same_damage_in_a_small_file_reads_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "damaged.pt.trace.json"
    at = _damaged(path, 200 << 10)
    kt, _ = _read_watched(path, monkeypatch)
    (p,) = [p for p in kt.problems if p.kind == "cut"]
    assert p.what == "json_writers" and p.offset == at
    assert p.detail.endswith(f"; the events from byte {at:,} on were not read") and "skipped" not in p.detail
