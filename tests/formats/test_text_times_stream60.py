"""A trace that writes its times as text is mended event by event, not read whole (h37-speed60).

``formats.kineto.parse.times_as_numbers`` read such a document whole (its objects ~5x the file) and wrote it again;
it now writes the same text from a block of the file at a time.  Truth: the whole document's rewrite
(``json.loads``, every event's ``ts``/``dur`` mended, ``json.dumps``), computed here, byte for byte."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc

import pytest

from tb_gpu_advisor.formats.kineto import parse
from tests.support.text_times import whole_rewrite


def _events(n: int, ts=lambda i: str(1000 + 10 * i), dur=lambda i: 2) -> list:
    return [{"ph": "X", "cat": "kernel", "name": f"k\u00e9{i % 7}", "pid": 0, "tid": 7, "ts": ts(i), "dur": dur(i),
             "args": {"ts": "5", "grid": [1, i, 1], "x": float("nan") if i == 3 else 1.5}} for i in range(n)]


DOCS = {
    "object": lambda: {"schemaVersion": 1, "deviceProperties": [{"id": 0}], "traceEvents": _events(3000),
                       "traceName": "t", "displayTimeUnit": "ms"},
    "list": lambda: _events(2500, dur=lambda i: f" {i}.25 "),
    "events_last": lambda: {"a": {"b": [1, 2, {"c": None}]}, "traceEvents": _events(1500, ts=lambda i: 1000 + i,
                                                                                     dur=lambda i: "1e1")},
    "some_text": lambda: {"traceEvents": _events(2000, ts=lambda i: str(i) if i % 97 == 0 else i)},
    "empty_events": lambda: {"traceEvents": [], "x": "1"},
    "no_events": lambda: {"schemaVersion": 1, "events": _events(10)},
    "not_a_list": lambda: {"traceEvents": {"ts": "1"}},
    "scalar": lambda: "ts",
    "words": lambda: {"traceEvents": _events(50, ts=lambda i: "12abc", dur=lambda i: "inf")},
}


@pytest.mark.parametrize("block", [parse._SCAN_BLOCK, 257])
@pytest.mark.parametrize("name", sorted(DOCS))
def test_the_streamed_rewrite_is_the_whole_documents_byte_for_byte(monkeypatch, name, block):
    # control of the rewrite's meaning (the streamed text is the whole document's), at blocks cutting every value
    monkeypatch.setattr(parse, "_SCAN_BLOCK", block)
    for indent in (None, 2):
        text = json.dumps(DOCS[name](), indent=indent).encode()
        want = whole_rewrite(text)
        assert parse.times_as_numbers(io.BytesIO(text)) == want
        assert parse.times_as_numbers(io.BytesIO(gzip.compress(text))) == want
        if want is not None:
            assert parse.times_as_numbers(_Unseekable(text)) == want


class _Unseekable(io.BytesIO):
    def seekable(self) -> bool:
        return False


def test_a_repeated_top_level_key_keeps_jsons_meaning():
    text = b'{"traceEvents": [{"ts": "1"}], "x": 1, "traceEvents": [{"ts": "2", "dur": "3"}]}'
    assert parse.times_as_numbers(io.BytesIO(text)) == whole_rewrite(text) == b'{"traceEvents": [{"ts": 2, "dur": 3}], "x": 1}'


@pytest.mark.parametrize("text", [
    b'{"traceEvents": [{"ts": "1"}]} extra', b'{"traceEvents": [{"ts": "1"},]}', b'{"traceEvents": [{"ts": "1"}',
    b'[{"ts": "1"} {"ts": "2"}]', b'{"traceEvents": [{"ts": "1", "name": "\xff"}]}', b'{traceEvents: [{"ts": "1"}]}',
])
def test_what_json_refuses_is_refused_alike(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        parse.times_as_numbers(io.BytesIO(text))


def test_the_rewrite_holds_its_text_and_a_block_not_the_document(monkeypatch):
    # fails on 3416ad6f: the whole document was parsed (its objects ~5x the file) and written again beside it
    # the file read and its events decoded 16 KB at a time (h37-tidy61: the columns' chunked reader's knobs)
    monkeypatch.setattr(parse, "_READ_BLOCK", 1 << 14)
    monkeypatch.setattr(parse, "_REWRITE_CHUNK", 1 << 14)
    text = json.dumps({"traceEvents": _events(8000)}).encode()
    tracemalloc.start()
    try:
        out = parse.times_as_numbers(io.BytesIO(text))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == whole_rewrite(text)
    assert peak < 2 * len(text)  # the text it returns, a block and a chunk of events



@pytest.mark.parametrize("long", [
    b'"' + b"x" * (1 << 20) + b'"',  # a hostile file's one huge string: 256 blocks in one value
    b"1." + b"0" * (1 << 20),  # a number at the buffer's end, which may go on in the next block
], ids=["string", "number"])
def test_a_value_longer_than_many_blocks_is_decoded_a_few_times_not_once_per_block(monkeypatch, long):
    # fails on 04942157: a value cut by the buffer's end was decoded again after each block -- one of N blocks N
    # times, its square; the buffer now doubles.  Counted, not timed.
    monkeypatch.setattr(parse, "_SCAN_BLOCK", 1 << 12)
    text = b'{"traceEvents": [{"ts": "1"}], "note": ' + long + b"}"
    calls = []

    class Counting(json.JSONDecoder):
        def raw_decode(self, s, idx=0):
            calls.append(idx)
            return super().raw_decode(s, idx)

    monkeypatch.setattr(parse.json, "JSONDecoder", Counting)
    assert parse.times_as_numbers(io.BytesIO(text)) == whole_rewrite(text)
    assert len(calls) < 40, len(calls)  # the few values, the long one about log2(256) times
