"""The PyTorch trace parser (formats/kineto/parse.py) against an independent reading: stdlib ``json.load`` of
the whole file, event by event.

Why: the parser cuts the event array into chunks at ``}`` + ``,``/``]`` and decodes each chunk alone (typed by
msgspec when installed).  Every way that can go wrong -- a cut inside a string or a nested object, a chunk
boundary inside an event, the decoders disagreeing, a file cut off mid-write, garbage, a gzip bomb -- is
checked here on real traces (``../shared/profiles/real-h100-torch``) and on small hand-written ones.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tb_gpu_advisor.formats.kineto import parse
from tb_gpu_advisor.formats.kineto.parse import KinetoReadError, parse_trace
from tests.support.real_checks import REAL_TORCH_SET

REAL = sorted(REAL_TORCH_SET.glob("*/*.pt.trace.json")) if REAL_TORCH_SET.is_dir() else []
DECODERS = ["json"] + (["msgspec"] if parse._decoder(None) == "msgspec" else [])
COLUMNS = ("cat", "name", "ts_ns", "dur_ns", "pid", "tid", "correlation", "external_id", "device", "stream",
           "bytes", "graph_id")
ARGS = {"correlation": "correlation", "external_id": "External id", "device": "device", "stream": "stream",
        "bytes": "bytes", "graph_id": "graph id"}


def reference(doc: dict[str, Any]) -> dict[str, list]:
    """What each X event should become, read from a plain ``json.load`` (strings where the parser has ids)."""
    xs = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    out: dict[str, list] = {"cat": [e.get("cat", "") for e in xs], "name": [e.get("name", "") for e in xs],
                            "ts_ns": [round(e["ts"] * 1000) for e in xs],
                            "dur_ns": [max(round(e.get("dur", 0) * 1000), 0) for e in xs],
                            "pid": [e.get("pid") for e in xs], "tid": [e.get("tid") for e in xs]}
    for col, key in ARGS.items():
        out[col] = [e.get("args", {}).get(key, -1) for e in xs]
    return out


def as_reference(kt: parse.KinetoTrace) -> dict[str, list]:
    """The parser's columns back in the reference's terms (ids -> strings, negative pids -> their labels)."""
    out = {col: getattr(kt, col).tolist() for col in COLUMNS}
    out["cat"] = [kt.cats[i] for i in out["cat"]]
    out["name"] = [kt.names[i] for i in out["name"]]
    out["pid"] = [kt.pid_labels.get(p, p) for p in out["pid"]]
    out["tid"] = [kt.tid_labels.get(t, t) for t in out["tid"]]
    return out


def event(name: str, ts: float, dur: float = 1.0, cat: str = "cpu_op", **args: Any) -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 2, "ts": ts, "dur": dur, "args": args}


def trace_doc(events: list[dict[str, Any]], **meta: Any) -> dict[str, Any]:
    return {"schemaVersion": 1, **meta, "traceEvents": events, "traceName": "t.pt.trace.json"}


def write(tmp_path: Path, doc: Any, name: str = "w_1.1.pt.trace.json", indent: int | None = 1) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(doc, indent=indent))
    return p


# ---------------------------------------------------------------------------------------- real traces

@pytest.mark.skipif(not REAL, reason="real H100 PyTorch traces not found (the shared checkout holds them)")
@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.parent.name)
def test_real_traces_match_plain_json(path: Path, decoder: str) -> None:
    doc = json.loads(path.read_text())
    kt = parse_trace(str(path), decoder=decoder)
    assert as_reference(kt) == reference(doc)
    assert kt.n_events == len(doc["traceEvents"]) and not kt.problems and not kt.truncated
    assert kt.meta["deviceProperties"] == doc["deviceProperties"] and kt.meta["traceName"] == doc["traceName"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    assert {(kt.pid_labels.get(p, p), kt.tid_labels.get(t, t)): n for (p, t), n in kt.thread_names.items()} == threads


@pytest.mark.skipif(not REAL, reason="real H100 PyTorch traces not found")
def test_small_chunks_gzip_and_streams_read_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 4 kB (hundreds of cuts, many inside args), a gzip copy, and a non-seekable stream: one result."""
    path = REAL[0]
    whole = as_reference(parse_trace(str(path)))
    monkeypatch.setattr(parse, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(parse, "_READ_BLOCK", 1000)
    assert as_reference(parse_trace(str(path))) == whole
    gz = tmp_path / "w.1.pt.trace.json.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    kt = parse_trace(str(gz))
    assert kt.compressed and as_reference(kt) == whole

    class Pipe(io.RawIOBase):  # read() only: no seek, no tell (a remote object)
        def __init__(self, data: bytes):
            self._b = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, buf) -> int:  # noqa: ANN001
            chunk = self._b.read(min(len(buf), 777))
            buf[:len(chunk)] = chunk
            return len(chunk)

    assert as_reference(parse_trace(io.BufferedReader(Pipe(gz.read_bytes())))) == whole


# ---------------------------------------------------------------------------------------- cuts and layouts

TRICKY = [
    event("}, {", 1.0), event("a}]b", 2.0, note='"}, {"ph": "X"}]'),
    event("nested", 3.0, lists=[{"a": 1}, {"b": [{"c": 2}, {"d": 3}]}], correlation=5),
    event("ünïcödé ∑ kernel<{lambda()#1}>", 4.0, cat="kernel", device=0, stream=7, correlation=5, bytes=16),
    event("last", 5.0, **{"External id": 9, "graph id": 3}),
]


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize("indent", [None, 2], ids=["compact", "indented"])
@pytest.mark.parametrize("chunk", [1, 40, 1 << 20])
def test_cut_candidates_inside_strings_and_nested_objects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          decoder: str, indent: int | None, chunk: int) -> None:
    """``}, {`` and ``}]`` in names and args, arrays of objects in args, non-ASCII names: every chunk size."""
    monkeypatch.setattr(parse, "CHUNK_BYTES", chunk)
    doc = trace_doc(TRICKY * 3)
    kt = parse_trace(str(write(tmp_path, doc, indent=indent)), decoder=decoder)
    assert as_reference(kt) == reference(doc) and not kt.problems


def test_array_format_and_keys_after_the_events(tmp_path: Path) -> None:
    """Chrome's JSON Array Format (events only) reads; top-level keys on both sides of the array are kept."""
    kt = parse_trace(str(write(tmp_path, TRICKY)))
    assert [kt.names[i] for i in kt.name] == [e["name"] for e in TRICKY] and kt.meta == {}
    doc = {"a": 1, "traceEvents": TRICKY, "distributedInfo": {"rank": 3, "world_size": 4}}
    assert parse_trace(str(write(tmp_path, doc))).meta == {"a": 1, "distributedInfo": {"rank": 3, "world_size": 4}}


def test_metadata_string_pids_and_memory(tmp_path: Path) -> None:
    events = [
        {"ph": "M", "name": "process_name", "pid": 7, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "thread_name", "pid": 7, "tid": 9, "args": {"name": "main thread"}},
        {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
         "ts": 1.0, "dur": 50.0},
        {"ph": "i", "name": "[memory]", "pid": 7, "tid": 9, "ts": 2.0,
         "args": {"Device Type": 1, "Device Id": 0, "Total Allocated": 100, "Total Reserved": 400}},
        {"ph": "i", "name": "[memory]", "pid": 7, "tid": 9, "ts": 3.0,
         "args": {"Device Type": 1, "Device Id": 0, "Total Allocated": 300, "Total Reserved": 400}},
        {"ph": "i", "name": "[memory]", "pid": 7, "tid": 9, "ts": 3.0,
         "args": {"Device Type": 0, "Device Id": -1, "Total Allocated": 999, "Total Reserved": 999}},
        {"ph": "s", "id": 1, "pid": 7, "tid": 9, "ts": 2.0, "cat": "ac2g", "name": "ac2g"},
    ]
    for decoder in DECODERS:
        kt = parse_trace(str(write(tmp_path, trace_doc(events))), decoder=decoder)
        assert kt.process_names == {7: "python3"} and kt.thread_names == {(7, 9): "main thread"}
        assert kt.pid.tolist() == [-2] and kt.pid_labels == {-2: "Spans"} and kt.tid_labels == {-2: "PyTorch Profiler"}
        assert kt.memory == {0: 300} and kt.memory_reserved == {0: 400}
        assert kt.ph_counts == {"M": 2, "X": 1, "i": 3, "s": 1} and kt.n_events == 7


def test_events_of_the_wrong_shape_are_skipped_and_counted(tmp_path: Path) -> None:
    """A string time or a non-object entry does not reject its neighbours (the typed decode falls back)."""
    events = [event("a", 1.0), {"ph": "X", "name": "bad", "ts": "soon"}, 42, event("b", 2.0, correlation="x")]
    for decoder in DECODERS:
        kt = parse_trace(str(write(tmp_path, trace_doc(events))), decoder=decoder)
        assert [kt.names[i] for i in kt.name] == ["a", "b"] and kt.correlation.tolist() == [-1, -1]
        assert any("2 events" in str(p) for p in kt.problems), kt.problems


@pytest.mark.parametrize("decoder", DECODERS)
def test_empty_events_cost_no_row_and_a_chunk_holds_a_bounded_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     decoder: str) -> None:
    """``{}`` events (nothing to analyse: 3 bytes each) between real ones: the rows are the real events', and no
    chunk decodes more than ``CHUNK_OBJECTS`` objects at once (a 4 MB chunk of them was 1.4 M objects, ~150 MB)."""
    monkeypatch.setattr(parse, "CHUNK_OBJECTS", 2000)
    real = TRICKY * 3
    events: list[Any] = []
    for e in real:
        events += [{}] * 997 + [e]
    doc = trace_doc(events + [{}] * 3001)
    decoded: list[int] = []
    real_decode = parse._decode_chunk

    def counting(data: bytes, which: str) -> list[Any]:
        out = real_decode(data, which)
        decoded.append(len(out))
        return out

    monkeypatch.setattr(parse, "_decode_chunk", counting)
    monkeypatch.setattr(parse, "_CSCAN", None)  # the decode of Python objects is what is bounded (not the C scan)
    kt = parse_trace(str(write(tmp_path, doc, indent=None)), decoder=decoder)
    assert as_reference(kt) == reference(trace_doc(real)) and not kt.problems
    assert kt.n_events == len(events) + 3001 and len(kt) == len(real)
    # chunk sizes follow the objects' density over the bytes ahead: about CHUNK_OBJECTS, never the 4 MB default
    assert len(decoded) > 5 and max(decoded) <= 2000 * 1.1, decoded


# ---------------------------------------------------------------------------------------- damaged files

def _events_in(text: bytes) -> int:
    """Whole X events before the end of ``text`` (the independent count): decode prefixes with raw_decode."""
    s = text.decode("utf-8", "replace")
    start = s.index("[", s.index('"traceEvents"')) + 1
    dec, n, i = json.JSONDecoder(), 0, start
    while True:
        while i < len(s) and s[i] in " \n\t\r,":
            i += 1
        try:
            e, i = dec.raw_decode(s, i)
        except json.JSONDecodeError:
            return n
        n += e.get("ph") == "X"


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("frac", [0.2, 0.5, 0.93, 0.999])
def test_a_trace_cut_off_mid_write_keeps_every_whole_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          gz: bool, frac: float) -> None:
    monkeypatch.setattr(parse, "CHUNK_BYTES", 2000)
    doc = trace_doc([event(f"op{i}", float(i), correlation=i) for i in range(300)])
    text = json.dumps(doc, indent=2).encode()
    cut = text[: int(len(text) * frac)]
    p = tmp_path / ("w.1.pt.trace.json" + (".gz" if gz else ""))
    p.write_bytes(gzip.compress(text)[: int(len(gzip.compress(text)) * frac)] if gz else cut)
    kt = parse_trace(str(p))
    if gz:  # the compressed cut falls anywhere: every event is whole and in order, a prefix of the file's
        assert 0 < len(kt) <= 300 and kt.correlation.tolist() == list(range(len(kt)))
        # the last 0.1% is the gzip trailer alone: every event is there, the damage is still told
        assert kt.truncated == (len(kt) < 300) and "EOFError" in str(kt.problems[0])
        return
    assert kt.truncated and kt.problems and "cut off" in str(kt.problems[0])
    assert len(kt) == _events_in(cut) and kt.correlation.tolist() == list(range(len(kt)))


def test_garbage_inside_the_array_is_skipped_to_the_next_whole_event_and_says_where(tmp_path: Path) -> None:
    """The event the garbage broke is dropped, the read resumes at the next whole event (h37-damage70: it stopped
    there, the 19 events after it unread); the record says what was skipped and that the counts are a lower bound."""
    text = json.dumps(trace_doc([event(f"op{i}", float(i)) for i in range(50)]), indent=1)
    at = text.index('"op30"')
    p = tmp_path / "w.1.pt.trace.json"
    p.write_text(text[:at] + "@@garbage@@" + text[at:])
    kt = parse_trace(str(p))
    said = str(kt.problems[0])
    assert len(kt) == 49 and "op30" not in [kt.names[i] for i in kt.name] and not kt.truncated
    assert kt.problems[0].kind == "unreadable" and kt.problems[0].what == "json_invalid", kt.problems
    assert "invalid JSON" in said and "byte" in said and "1 damaged stretch" in said and "1 broken event" in said, said
    assert "lower bound" in said, said


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize("nest", ["[" * 100_000 + "]" * 100_000,
                                  '{"ph": "X", "ts": 2, "args": ' + '{"a": ' * 50_000 + "1" + "}" * 50_001])
def test_hostile_nesting_stops_reading_with_a_reason(tmp_path: Path, decoder: str, nest: str) -> None:
    """Nesting deeper than the interpreter's recursion limit: the events before it are kept, the rest is
    reported as unread -- no RecursionError escapes."""
    p = tmp_path / "w.1.pt.trace.json"
    p.write_text('{"traceEvents": [' + json.dumps(event("a", 1.0)) + ", " + nest + "]}")
    kt = parse_trace(str(p), decoder=decoder)
    assert [kt.names[i] for i in kt.name] == ["a"] and kt.truncated and "nested too deeply" in str(kt.problems[0])


def test_a_broken_tail_costs_only_its_keys(tmp_path: Path) -> None:
    text = json.dumps(trace_doc([event("a", 1.0)]))
    p = tmp_path / "w.1.pt.trace.json"
    p.write_text(text[:-5])  # inside "traceName"'s value
    kt = parse_trace(str(p))
    assert len(kt) == 1 and "traceName" not in kt.meta and "after \"traceEvents\"" in str(kt.problems[0])


@pytest.mark.parametrize("content, words", [
    (b"", "empty"),
    (b"   \n", "empty"),
    (b"\x00\x01binary", "not JSON"),
    (b'{"schemaVersion": 1, "other": []}', "no \"traceEvents\""),
    (b'{"schemaVersion": 1, "traceEvents": [', "no readable event"),
    (b'{"schemaVersion": 1, "traceEvents": []}', "no complete event"),
    (b'{"schemaVersion": 1, "traceEvents": [{"ph": "X", "name": "a", "ts": 1', "cut off"),
    (b'{"a": [1, 2, "traceEvents": [{"ph": "X"}]}', "does not parse"),
])
def test_files_that_are_no_trace_get_a_clear_error(tmp_path: Path, content: bytes, words: str) -> None:
    p = tmp_path / "w.1.pt.trace.json"
    p.write_bytes(content)
    with pytest.raises(KinetoReadError, match=words) as e:
        parse_trace(str(p))
    assert str(p) in str(e.value)


def test_missing_file_and_gzip_bomb(tmp_path: Path) -> None:
    with pytest.raises(KinetoReadError, match="cannot open"):
        parse_trace(str(tmp_path / "absent.pt.trace.json"))
    bomb = tmp_path / "w.1.pt.trace.json.gz"
    bomb.write_bytes(gzip.compress(b'{"traceEvents": [' + b" " * (8 << 20) + b"]}"))
    assert bomb.stat().st_size < 100_000
    with pytest.raises(KinetoReadError, match="limit once decompressed"):
        parse_trace(str(bomb), max_bytes=1 << 20)


def test_progress_reports_growing_offsets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse, "CHUNK_BYTES", 500)
    p = write(tmp_path, trace_doc([event(f"op{i}", float(i)) for i in range(100)]))
    seen: list[int] = []
    parse_trace(str(p), progress=seen.append)
    assert len(seen) > 5 and seen == sorted(seen) and seen[-1] <= p.stat().st_size


def test_columns_are_numpy_and_narrow(tmp_path: Path) -> None:
    kt = parse_trace(str(write(tmp_path, trace_doc(TRICKY))))
    assert kt.cat.dtype == np.int16 and kt.ts_ns.dtype == np.int64 and all(
        isinstance(getattr(kt, c), np.ndarray) and getattr(kt, c).shape == (len(TRICKY),) for c in COLUMNS)


@pytest.mark.parametrize("decoder", DECODERS)
def test_integers_past_64_bits_read_as_absent_not_a_crash(tmp_path: Path, decoder: str) -> None:
    """A pid, tid or integer argument past 64 bits (a mutated file: no process, thread or correlation id is that
    large) reads as absent (-1), as a string argument does; it was an OverflowError that escaped the reader."""
    huge = 1 << 70
    events = [event("a", 1.0, correlation=5), {**event("b", 2.0, correlation=huge), "pid": huge},
              {**event("c", 3.0, stream=-huge), "tid": -huge},
              {"ph": "i", "name": "[memory]", "pid": huge, "tid": 2, "ts": 2.5, "args": {"Bytes": 8, "Device Id": 0}}]
    kt = parse_trace(str(write(tmp_path, trace_doc(events))), decoder=decoder)
    assert kt.pid.tolist() == [1, -1, 1] and kt.tid.tolist() == [2, 2, -1]
    assert kt.correlation.tolist() == [5, -1, -1] and kt.stream.tolist() == [-1, -1, -1]
    assert kt.mem is not None and kt.mem.pid.tolist() == [-1]


@pytest.mark.parametrize("decoder", DECODERS)
def test_shape_arguments_that_are_no_utf8_are_skipped_not_a_crash(tmp_path: Path, decoder: str) -> None:
    """A FLOP op's shapes holding bytes that are no UTF-8 (a damaged file): the typed decode keeps them raw and
    unchecked, and decoding them raised a UnicodeDecodeError out of the reader; now those shapes are skipped."""
    good = json.dumps(event("aten::mm", 1.0, **{"Input Dims": [[4, 8], [8, 16]], "Input type": ["float", "float"]})).encode()
    bad = good.replace(b"[[4, 8]", b'[["\xec\x80"]').replace(b'"ts": 1.0', b'"ts": 2.0')
    p = tmp_path / "w_1.1.pt.trace.json"
    p.write_bytes(b'{"traceEvents": [' + good + b", " + bad + b"]}")
    kt = parse_trace(str(p), decoder=decoder)
    assert len(kt) == 2 and kt.op_work[0] is not None and kt.op_work.get(1) is None


@pytest.mark.parametrize("where", ["head", "tail"])
def test_json_nested_past_the_recursion_limit_around_the_events_is_a_clear_error(tmp_path, where):
    """Top-level keys nested 100,000 deep before ``traceEvents`` raised RecursionError out of the reader (the CLI
    printed "maximum recursion depth exceeded" as the host's error; found by scripts/kineto_fuzz_equal.py): before
    the events it is a file that is not a trace; after them, only those keys are lost."""
    deep = "[" * 100_000 + "]" * 100_000
    event = '{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2}'
    body = (f'{{"deviceProperties": {deep}, "traceEvents": [{event}]}}' if where == "head"
            else f'{{"traceEvents": [{event}], "traceName": {deep}}}')
    p = tmp_path / "w.1.pt.trace.json"
    p.write_text(body)
    if where == "head":
        with pytest.raises(KinetoReadError, match="does not parse"):
            parse_trace(str(p))
    else:
        t = parse_trace(str(p))
        assert any("after \"traceEvents\" does not parse" in str(x) for x in t.problems)


@pytest.mark.parametrize("total", [0, 10_000, 10**9])
def test_the_sink_holds_the_parts_concatenated(total):
    """The reader's columns, filled chunk by chunk (the file's size unknown, exact, or far off: a dense start), are
    the parts concatenated, in their dtypes; capacity never past 4x the rows needed when it grows, or one row per
    ``BYTES_PER_ROW`` of the input."""
    from tb_gpu_advisor.formats.kineto.parse import _ROW_DTYPES, BYTES_PER_ROW, _Sink

    rng = np.random.default_rng(1)
    sink, parts = _Sink(), []
    for i, n in enumerate((1, 5000, 0, 7000, 40_000, 3)):
        part = {k: rng.integers(-5, 1 << 30, n).astype(dt) for k, dt in _ROW_DTYPES.items()}
        sink.total, sink.done = total, 100 * (i + 1)
        sink.append(part)
        parts.append(part)
        assert len(sink.cols["ts"]) <= max(4 * sink.rows, 1 << 12, total // BYTES_PER_ROW)
    for k, dt in _ROW_DTYPES.items():
        col = sink.column(k)
        assert col.dtype == dt and np.array_equal(col, np.concatenate([p[k] for p in parts]))
