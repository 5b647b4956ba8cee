"""The read errors h37-damage67 left without a record now carry one: a damaged file says what its damage is, in every
format, and is never called foreign (h37-damage67b; issue #37: "a damaged file is never healthy, and says what it is").

* A Kineto trace cut in its head (before its ``traceEvents``: ``{"schemaVersion": 1, "deviceProperties": [...``) read
  "no traceEvents array in the file: not a PyTorch profiler trace" -- a foreign file, with no record.  Its head holds
  the keys only PyTorch's profiler writes (``formats.kineto.layout.kineto_head``) and is no whole JSON value: the
  events that follow a head are missing -- a cut (``json_cut`` at the file's end).  A whole object with those keys
  and no ``traceEvents`` stays foreign: nothing of it is missing.
* nvprof's printed CSV cut in its last row (``csv_cut``) or holding a row of other cells (``csv_invalid``), a rocprofv3
  JSON cut (``json_cut``) or holding bytes that are no JSON (``json_invalid``), a rocprofv3 CSV row of other cells
  (``csv_invalid``): errors whose words said "damaged" and whose host carried no record.
* A Kineto ``.json.gz`` cut before its first text decompressed: zlib's bare EOFError, no file named, no record; now a
  cut (``gzip_cut``) of the file named.  An SQLite file (an Nsight export, an nvprof database) cut inside its 100-byte
  header: "malformed" (an export left out of the logdir, no host); now ``sqlite_cut_short``.
* A rocprof ``results.json`` cut after its events, in ``otherData`` (rocminfo's GPU properties, written last), read
  as a whole file: no damage, the exit status 0.  It ends on no ``}``: a cut.
* A rocprofv3 capture whose ``kernel_trace.csv`` was cut in its header: the file was left out by its header (none of
  rocprofv3's), its siblings read as the whole capture, its kernels said "lost", exit 0.  Named as rocprofv3's and
  holding no whole line, it is claimed and read as cut (``csv_cut``).

Truth by construction: the real RTX A4000 Kineto trace and rocprof ``results.json`` and the RDNA2 rocprofv3 capture of
``tests/fixtures/wild``, cut at the bytes named; nvprof's CSV and a rocprofv3 JSON generated (``synthetic``).

Fail on base 776bb150: every test but the two controls (a whole head without events, a whole ``results.json``): no
record, or a cut file read as a whole one with ``exit_code`` 0."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from synthetic import nvprofcsv, rocprofv3trace
from tb_gpu_advisor.cli.report import exit_code
from tb_gpu_advisor.model.damage import CUT, UNREADABLE, of_error
from tb_gpu_advisor.report.verdict import KIND_WORDS, VERDICT_WORDS
from tests.support.paths import FIXTURES
from tests.support.run_report import cli_report, fresh_report

KINETO = FIXTURES / "wild" / "cuda_only_a4000_swin_fwd" / "a4000_1312450.1670476781.pt.trace.json.gz"
ROCPROF = FIXTURES / "wild" / "rocprof_mxfp4_setup_gfx950" / "results.json.gz"
ROCPROFV3_CSV = FIXTURES / "wild" / "hip_matmul_rdna2_igpu"
STEPS = [[("gemm_kernel(float*)", 400.0), ("relu(float*)", 50.0)]] * 3


def _run(tmp: Path, name: str, data: bytes) -> Path:
    (tmp / "run").mkdir(parents=True, exist_ok=True)
    (tmp / "run" / name).write_bytes(data)
    return tmp


def _kineto() -> bytes:
    return gzip.decompress(KINETO.read_bytes())


def _one_record(report):
    (h,) = report.hosts
    records = h.records()
    assert records, (report.verdict, h.error)
    return h, records[0]


@pytest.mark.parametrize("after", [b'"schemaVersion": 1,', b'"deviceProperties": [', b'"name": "NVIDIA RT',
                                   b'"numSms": 48, '])
def test_a_kineto_trace_cut_in_its_head_is_a_cut_never_a_foreign_file(tmp_path, after):
    data = _kineto()
    k = data.index(after) + len(after)
    report = fresh_report(_run(tmp_path, "a4000.1670476781.pt.trace.json", data[:k]))
    h, d = _one_record(report)
    assert (d.kind, d.what, d.offset) == (CUT, "json_cut", k), d
    assert h.error and "not a PyTorch profiler trace" not in h.error, h.error
    assert not report.healthy and KIND_WORDS[CUT] in report.verdict, report.verdict
    code, _, err = cli_report(tmp_path)
    assert code == 2 and f"[damage: cut, json_cut at byte {k:,}]" in err, err


def test_control_a_whole_head_without_events_stays_a_foreign_file(tmp_path):
    """Kineto's keys in a whole object with no ``traceEvents``: nothing of it is missing -- no cut, the foreign
    file's error."""
    report = fresh_report(_run(tmp_path, "a4000.1670476781.pt.trace.json", b'{"schemaVersion": 1, "deviceProperties": []}'))
    (h,) = report.hosts
    assert h.records() == [] and "not a PyTorch profiler trace" in h.error and not report.healthy


def test_a_gzip_kineto_trace_cut_in_its_head_is_a_cut(tmp_path):
    """The same head cut, gzipped whole (the stream ends cleanly on the cut text): a cut of the decompressed bytes."""
    data = _kineto()
    k = data.index(b'"deviceProperties": [') + 30
    report = fresh_report(_run(tmp_path, "a4000.1670476781.pt.trace.json.gz", gzip.compress(data[:k])))
    _, d = _one_record(report)
    assert (d.kind, d.what, d.offset) == (CUT, "json_cut", k), d


def _nvprof(tmp: Path) -> str:
    nvprofcsv.write(tmp / "made.csv", steps=3)
    return (tmp / "made.csv").read_text()


def test_an_nvprof_csv_cut_in_its_last_row_is_a_cut(tmp_path):
    text = _nvprof(tmp_path).rstrip("\n")
    last = text.rsplit("\n", 1)[1]
    cut_text = text[: len(text) - len(last) // 2]  # half its last row: fewer cells, no closing newline
    report = fresh_report(_run(tmp_path / "l", "trace.csv", cut_text.encode()))
    h, d = _one_record(report)
    assert (d.kind, d.what) == (CUT, "csv_cut") and h.error and "trace.csv" in h.error, (d, h.error)
    assert exit_code([report], None) == 2 and KIND_WORDS[CUT] in report.verdict


def test_an_nvprof_csv_row_of_other_cells_is_records_unread_not_a_cut(tmp_path):
    lines = _nvprof(tmp_path).splitlines(keepends=True)
    lines[-3] = lines[-3].replace(",", ";", 3)  # a row inside the table with three cells fewer; the file ends whole
    report = fresh_report(_run(tmp_path / "l", "trace.csv", "".join(lines).encode()))
    _, d = _one_record(report)
    assert (d.kind, d.what) == (UNREADABLE, "csv_invalid"), d


def _rocprofv3_json(tmp: Path) -> bytes:
    rocprofv3trace.write(str(tmp / "made"), STEPS, fmt="json")
    return (tmp / "made" / f"{rocprofv3trace.PID}_results.json").read_bytes()


@pytest.mark.parametrize("damage,kind,what", [("cut", CUT, "json_cut"), ("invalid", UNREADABLE, "json_invalid")])
def test_a_damaged_rocprofv3_json_says_its_kind(tmp_path, damage, kind, what):
    data = _rocprofv3_json(tmp_path)
    mid = data.index(b",", len(data) // 2)  # a comma half-way: cut there, or written as a byte no JSON has there
    data = data[:mid] if damage == "cut" else data[:mid] + b";" + data[mid + 1:]
    report = fresh_report(_run(tmp_path / "l", f"{rocprofv3trace.PID}_results.json", data))
    h, d = _one_record(report)
    assert (d.kind, d.what) == (kind, what) and h.error, (d, h.error)
    assert exit_code([report], None) == 2


def test_a_rocprof_results_json_cut_after_its_events_is_a_cut_not_a_whole_file(tmp_path):
    text = gzip.decompress(ROCPROF.read_bytes())
    k = text.index(b'"otherData"') + 200  # inside rocminfo's properties, written after every event
    report = fresh_report(_run(tmp_path, "results.json", text[:k]))
    h, d = _one_record(report)
    assert not h.error and (d.kind, d.what) == (CUT, "json_cut"), (d, h.error)
    assert report.verdict.startswith(VERDICT_WORDS[CUT]) and exit_code([report], None) == 2, report.verdict


def test_control_a_whole_rocprof_results_json_carries_no_record(tmp_path):
    report = fresh_report(_run(tmp_path, "results.json", gzip.decompress(ROCPROF.read_bytes())))
    assert report.hosts[0].records() == [], report.hosts[0].records()


@pytest.mark.parametrize("k", [37, 184])  # inside a column's name; after every column the reader asks, unended
def test_a_rocprofv3_capture_whose_kernel_trace_is_cut_in_its_header_says_the_cut(tmp_path, k):
    run = tmp_path / "run"
    shutil.copytree(ROCPROFV3_CSV, run)
    kernels = run / "output_kernel_trace.csv"
    kernels.write_bytes(kernels.read_bytes()[:k])
    report = fresh_report(tmp_path)
    h, d = _one_record(report)
    assert (d.kind, d.what) == (CUT, "csv_cut") and "output_kernel_trace.csv" in h.error, (d, h.error)
    assert exit_code([report], None) == 2


def test_a_rocprofv3_csv_row_of_other_cells_is_records_unread(tmp_path):
    from tb_gpu_advisor.formats.rocprof.csv_reader import RocprofCsvReadError, read_trace

    path = tmp_path / "output_kernel_trace.csv"
    lines = (ROCPROFV3_CSV / "output_kernel_trace.csv").read_text().splitlines(keepends=True)
    path.write_text(lines[0] + lines[1].replace(",", ";", 2) + lines[1])
    with pytest.raises(RocprofCsvReadError) as e:
        read_trace(str(path))
    d = of_error(e.value)
    assert d is not None and (d.kind, d.what, d.record) == (UNREADABLE, "csv_invalid", 1), d


def test_an_sqlite_export_cut_in_its_header_is_a_cut_host_not_left_out(tmp_path):
    """An Nsight export cut inside SQLite's 100-byte header (82 bytes: its magic whole): before, "an SQLite file that
    cannot be read (database disk image is malformed)", left out of the logdir with no host; now a host cut short
    (``sqlite_cut_short`` at its last byte), as an export cut past its header was."""
    nsys = FIXTURES / "wild" / "extrap_ex_gpu_a100" / "ex-gpu.s100000.sqlite"
    report = fresh_report(_run(tmp_path, "ex-gpu.sqlite", nsys.read_bytes()[:82]))
    h, d = _one_record(report)
    assert (d.kind, d.what, d.offset) == (CUT, "sqlite_cut_short", 82) and "100-byte header" in h.error, (d, h.error)


def test_an_nvprof_database_cut_in_its_header_is_a_cut_not_malformed(tmp_path):
    from tb_gpu_advisor.formats.nvprof.reader import NvprofReadError, read_trace

    path = tmp_path / "net.nvvp"
    path.write_bytes((FIXTURES / "wild" / "pyprof_lm_v100_nvprof" / "net.sql").read_bytes()[:50])
    with pytest.raises(NvprofReadError) as e:
        read_trace(str(path))
    d = of_error(e.value)
    assert d is not None and (d.kind, d.what, d.offset) == (CUT, "sqlite_cut_short", 50), d


def test_a_gzip_kineto_trace_cut_before_its_first_text_names_the_file_and_its_cut(tmp_path):
    """A ``.json.gz`` cut 30 bytes in (its gzip header and a few bytes of deflate: no text decompressed yet) raised
    zlib's bare "compressed file ended before the end-of-stream marker was reached": no file named, no record."""
    report = fresh_report(_run(tmp_path, "a4000.1670476781.pt.trace.json.gz", KINETO.read_bytes()[:30]))
    h, d = _one_record(report)
    assert (d.kind, d.what) == (CUT, "gzip_cut") and "a4000.1670476781.pt.trace.json.gz" in h.error, (d, h.error)
