"""A damaged, untimed Kineto file's second look for times written as text is a scan, not the whole document again
(``formats.kineto.parse.times_as_numbers``; session 59, h37-layout59)."""

from __future__ import annotations

import gzip
import io
import json

import pytest

from tb_gpu_advisor.formats.kineto import parse


def _trace(ts_of, n: int = 3000) -> bytes:
    events = [{"ph": "X", "cat": "kernel", "name": f"k{i % 7}", "pid": 0, "tid": 7, "ts": ts_of(i), "dur": 2}
              for i in range(n)]
    return json.dumps({"schemaVersion": 1, "traceEvents": events}).encode()


@pytest.mark.parametrize("pack", [lambda b: b, gzip.compress], ids=["json", "gz"])
def test_a_damaged_untimed_file_is_scanned_not_read_whole(monkeypatch, pack):
    # fails on 91102037: every damaged file was parsed whole a second time (its document in memory) only to find no
    # time written as text.  Its times null or words: nothing to mend, and the document is never built.
    def whole(_src):
        raise AssertionError("the document was read whole")

    monkeypatch.setattr(parse, "_whole_document", whole)
    for ts_of in (lambda i: None if i % 100 == 0 else i * 10, lambda i: "soon" if i % 50 == 0 else i * 10):
        assert parse.times_as_numbers(io.BytesIO(pack(_trace(ts_of)))) is None


def test_times_written_as_text_past_a_block_seam_are_still_mended(monkeypatch):
    # control (passes on base too): a time written as text is found wherever it stands, across a block's seam too.
    monkeypatch.setattr(parse, "_SCAN_BLOCK", 4096, raising=False)
    for at in range(0, 3000, 997):
        text = _trace(lambda i: str(i * 10) if i == at else i * 10)
        out = json.loads(parse.times_as_numbers(io.BytesIO(text)))
        assert [e["ts"] for e in out["traceEvents"]] == [i * 10 for i in range(3000)]
    text = _trace(lambda i: i * 10)
    seam = text.index(b'"ts"', 4096 - 8)  # a key cut by the seam between two blocks
    text = text[:seam] + b'"ts": "123"' + text[text.index(b",", seam):]
    monkeypatch.setattr(parse, "_SCAN_BLOCK", seam + 3, raising=False)
    assert parse.times_as_numbers(io.BytesIO(text)) is not None
