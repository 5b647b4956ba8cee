"""Which Kineto files are one process's parts is read from their ids by the compiled scanner's host columns
(``parse.scan_host_columns``), not by decoding each whole at discovery and again in the reader (h37-reads60; the
review of session 59 *Left*: ``layout._ids_agree`` -> ``adapter.process_of`` decoded each candidate whole).

``adapter.process_of`` is the one place that chooses: the scanner's columns where it reads the file as the reader
would, else (no scanner, a file the reader mends, drops rows of, or links by its flow arrows) the whole decode, the
reference.  Truth: the reference ``ranks.Process`` of the same file (its pids, header and ids), equal on every file
the scan reads (checked by hand over 893 local Kineto files: 713 scanned, 0 differ; the rest fall back).

Fail on BASE (3416ad6f): the window cut in two is decoded 4 times (2 at discovery, 2 by the reader), now 2; and
``scan_host_columns`` is new (the equality and fall-back tests).  Control: the pure-Python decoder falls back."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import numpy as np
import pytest

from tb_gpu_advisor.formats.kineto import adapter, parse
from tb_gpu_advisor.formats.kineto.ranks import Process
from tests.support.decodes import count_decodes

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
REAL = [*sorted((WILD / "tp_rtx4090_two_ranks").glob("*.json.gz")), *sorted((WILD / "dlrm_v100").glob("*.json.gz"))[:3],
        WILD / "amd_mi250" / "minitoy.pt.trace.json.gz", next((WILD / "cpu_only_gloo").glob("*.json.gz")),
        next((WILD / "cold_a100_alexnet").glob("*.json.gz"))]

needs_scanner = pytest.mark.skipif(parse._CSCAN is None, reason="the compiled scanner is not built here")


def _same(a: Process, b: Process) -> bool:
    return (a.host_pids == b.host_pids and a.header == b.header
            and all(x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x) for x, y in zip(a.ids, b.ids)))


def _scanned(data: bytes) -> parse.HostColumns | None:
    return parse.scan_host_columns(io.BytesIO(data), 1 << 30)


@needs_scanner
@pytest.mark.parametrize("path", REAL, ids=lambda p: p.parent.name + "/" + p.name[:24])
def test_the_scans_process_is_the_whole_decodes(path: Path):
    cols = parse.scan_host_columns(open(path, "rb"), 1 << 30)
    assert cols is not None  # each of these reads whole by the scanner (gzip; keys and a log's lines after the events)
    assert _same(Process.of(cols), Process.of(adapter._parse(str(path))[0]))


def _doc(events: list, **tail) -> dict:
    head = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100"}], "baseTimeNanoseconds": 17}
    return {**head, "traceEvents": events, **tail}


_EVENTS = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 10.0, "dur": 5.0,
            "args": {"External id": 3}},
           {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": 11.0, "dur": 1.0,
            "args": {"External id": 3, "correlation": 40}},
           {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 12.0, "dur": 3.0,
            "args": {"External id": 3, "correlation": 40, "device": 0}},
           {"ph": "X", "cat": "cpu_op", "name": "legacy", "pid": "CPU functions", "tid": 1, "ts": 13.0, "dur": 1.0,
            "args": {"External id": 9}}]


@needs_scanner
def test_keys_after_the_events_even_an_array_of_objects_are_the_header():
    doc = _doc(_EVENTS, traceName="t", distributedInfo={"rank": 1}, logs=["a]", "b"], devices=[{"id": 0}])
    data = json.dumps(doc, indent=1).encode()
    cols = _scanned(data)
    assert cols is not None and cols.meta["distributedInfo"] == {"rank": 1} and "traceEvents" not in cols.meta
    path = io.BytesIO(data)
    path.name = "t.pt.trace.json"
    ref = parse.parse_trace(path)
    assert _same(Process.of(cols), Process.of(ref))
    assert Process.of(cols).host_pids == frozenset({7})  # the string pid's rows are host rows of no pid


@needs_scanner
@pytest.mark.parametrize("how", ["pairs", "untimed", "far", "cut", "bom", "bad_dur"])
def test_a_file_the_reader_mends_or_drops_rows_of_falls_back(how: str):
    events = [dict(e) for e in _EVENTS]
    if how == "pairs":
        events += [{"ph": "B", "name": "b", "pid": 7, "tid": 7, "ts": 20.0}, {"ph": "E", "pid": 7, "tid": 7, "ts": 21.0}]
    elif how == "untimed":
        events[0]["ts"] = "10"
    elif how == "far":
        events[0]["ts"] = 10.0 + 3 * 86_400e6  # days from the others: the reader drops it
    elif how == "bad_dur":
        events[0]["dur"] = "x"
    data = json.dumps(_doc(events)).encode()
    if how == "cut":
        data = data[: len(data) - 40]
    elif how == "bom":
        data = b"\xef\xbb\xbf" + data
    assert _scanned(data) is None


def test_without_the_scanner_the_whole_decode_answers(monkeypatch):
    # control: the pure-Python reading is the reference itself
    monkeypatch.setattr(parse, "_CSCAN", None)
    path = REAL[0]
    assert parse.scan_host_columns(open(path, "rb"), 1 << 30) is None
    assert _same(adapter.process_of(str(path)), Process.of(adapter._parse(str(path))[0]))


def _cut_in_two(src: Path, out: Path) -> None:
    """``src``'s window written as two files cut at its middle event (each with the header and metadata)."""
    doc = json.load(gzip.open(src, "rt"))
    meta = [e for e in doc["traceEvents"] if e.get("ph") == "M"]
    timed = [e for e in doc["traceEvents"] if e.get("ph") != "M" and "ts" in e]
    mid = sorted(e["ts"] for e in timed)[len(timed) // 2]
    out.mkdir()
    for k, half in enumerate(([e for e in timed if e["ts"] < mid], [e for e in timed if e["ts"] >= mid])):
        with gzip.open(out / f"minitoy_{k}.pt.trace.json.gz", "wt") as f:
            json.dump({**doc, "traceEvents": meta + half}, f)


@needs_scanner
def test_a_window_in_two_files_is_decoded_once_each(tmp_path, monkeypatch):
    from tb_gpu_advisor.discover.logdir import discover
    from tests.support.report_store import session_report

    _cut_in_two(WILD / "amd_mi250" / "minitoy.pt.trace.json.gz", tmp_path / "run")
    decodes = count_decodes(monkeypatch)
    (s,) = discover(str(tmp_path / "run"))
    assert [len(h.ranks) for h in s.hosts] == [2]  # one process's two parts, as on base
    (h,) = session_report(s).to_dict()["hosts"]
    assert len(h["gpus"]) == 1
    assert sorted(decodes.values()) == [1, 1], decodes  # base: [2, 2] (each decoded at discovery, then read)


@needs_scanner
def test_text_past_the_scans_bound_is_decoded_whole(monkeypatch):
    # the scan holds the text whole: past its bound the streaming decode answers
    data = json.dumps(_doc(_EVENTS)).encode()
    assert _scanned(data) is not None
    monkeypatch.setattr(parse, "SCAN_MAX_BYTES", len(data) - 1)
    assert _scanned(data) is None


def test_a_damaged_compressed_stream_is_no_process_not_a_crash(tmp_path):
    # fails on 04942157: zlib's error in the middle of the stream escaped process_of (discovery's ``_ids_agree``
    # asks it of a file whose header matched another's; a file that does not read is no part)
    doc = json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": i,
                                       "dur": 1, "args": {"External id": i}} for i in range(5000)]}).encode()
    z = gzip.compress(doc)
    path = tmp_path / "w.1.pt.trace.json.gz"
    path.write_bytes(z[:20] + b"\0" * 200)
    assert adapter.process_of(str(path)) is None
