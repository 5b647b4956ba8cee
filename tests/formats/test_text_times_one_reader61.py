"""A trace's events array has one incremental reader: the columns' chunked one (``parse._Parser``), which the
rewrite of times written as text reads through too (``parse._TextTimes``; h37-tidy61, review60 *Left* 1).

``parse.py`` held two: the columns' chunk by chunk decode and h37-speed60's ``_EventStream``, a second reader of
the same array (a block of text, ``raw_decode`` event by event) for ``times_as_numbers`` alone.  Now the rewrite is
the columns' reader with its chunks mended and written instead of added, and refusing where it forgives.

Real traces (kept wild fixtures, PROVENANCE.md) with every ``ts``/``dur`` written as a string, as a converter that
quotes them writes it: the rewrite is the whole document's (``json.loads``, mended, ``json.dumps``) byte for byte,
and its columns are the original file's."""

from __future__ import annotations

import gzip
import io
import json

import numpy as np
import pytest

from tb_gpu_advisor.formats.kineto import parse
from tests.support.paths import FIXTURES
from tests.support.text_times import whole_rewrite

REAL = ["amd_mi300x/bert_small.pt.trace.json.gz", "cold_loop_a4000_swin/a4000_1312450.1670476769.pt.trace.json.gz"]


def _quoted(doc: dict) -> bytes:
    """``doc`` with every event's ``ts`` and ``dur`` written as text (``1700.5`` -> ``"1700.5"``)."""
    for e in doc["traceEvents"]:
        for key in ("ts", "dur"):
            if isinstance(e.get(key), (int, float)):
                e[key] = json.dumps(e[key])
    return json.dumps(doc).encode()


@pytest.mark.parametrize("name", REAL)
def test_a_real_trace_quoted_is_mended_through_the_columns_reader(name, monkeypatch):
    # fails on 3074f48d: the rewrite read the array with a reader of its own (no chunk of the columns' reader)
    with gzip.open(FIXTURES / "wild" / name, "rb") as f:
        original = f.read()
    text = _quoted(json.loads(original))
    chunks = []
    chunk = parse._Parser._chunk
    monkeypatch.setattr(parse._Parser, "_chunk", lambda self, pos: chunks.append(type(self)) or chunk(self, pos))
    mended = parse.times_as_numbers(io.BytesIO(gzip.compress(text)))
    assert chunks and set(chunks) == {parse._TextTimes}
    assert mended == whole_rewrite(text)
    want, got = parse.parse_trace(io.BytesIO(original), workers=1), parse.parse_trace(io.BytesIO(mended), workers=1)
    assert got.untimed == want.untimed and len(got) == len(want) > 100
    assert np.array_equal(got.ts_ns, want.ts_ns) and np.array_equal(got.dur_ns, want.dur_ns)
    assert [got.names[i] for i in got.name] == [want.names[i] for i in want.name]


def test_its_chunks_are_the_rewrites_size_not_the_columns(monkeypatch):
    """The rewrite decodes :data:`parse._REWRITE_CHUNK` of the array at a time (the columns' 4 MB chunk of decoded
    events beside the text it writes was its peak): no chunk of events it writes holds more than that much text."""
    monkeypatch.setattr(parse, "_REWRITE_CHUNK", 1 << 12)
    events = [{"ph": "X", "name": f"k{i}", "ts": str(1000 + i), "dur": "2", "pid": 0, "tid": 1} for i in range(3000)]
    text = json.dumps({"traceEvents": events}).encode()
    sizes = []
    add = parse._TextTimes._add
    monkeypatch.setattr(parse._TextTimes, "_add",
                        lambda self, evs, typed=None: sizes.append(len(json.dumps(evs))) or add(self, evs, typed))
    assert parse.times_as_numbers(io.BytesIO(text)) == whole_rewrite(text)
    assert len(sizes) > 10 and max(sizes) < 2 * (1 << 12)


@pytest.mark.parametrize("text", [
    b'{"traceEvents": [, {"ts": "1"}]}', b'{"a": 1 "traceEvents": [{"ts": "1"}]}',
    b'{"a": 1,, "traceEvents": [{"ts": "1"}]}', b'{, "traceEvents": [{"ts": "1"}]}',
    b'{"traceEvents": [{"ts": "1"}], }', b'{"traceEvents": [{"ts": "1"}],, "x": 1}', b'{"traceEvents": [{"ts": "1"}]',
    b'[{"ts": "1"}]}', b'{"traceEvents": [{"ts": "1"}, {"ts": "2", "name": "a}, {b\xff"}]}',
], ids=["comma first", "no comma", "two commas", "comma after brace", "comma last", "two commas after",
        "not closed", "list closed twice", "no UTF-8 where a cut fails"])
def test_control_what_the_columns_forgive_the_rewrite_refuses_as_json_does(text):
    # control (3074f48d's own reader refused these too): the columns' reader forgives them, the rewrite may not
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        parse.times_as_numbers(io.BytesIO(text))


def test_control_a_compressed_stream_cut_off_raises_its_read_error():
    # control (the same on 3074f48d): a gzip cut off is the stream's EOFError, not a text mended from its start
    text = json.dumps({"traceEvents": [{"ts": str(i), "dur": "1"} for i in range(20000)]}).encode()
    cut = gzip.compress(text)[:-5000]

    class Unseekable(io.BytesIO):
        def seekable(self) -> bool:
            return False

    with pytest.raises(EOFError):
        parse.times_as_numbers(Unseekable(cut))
