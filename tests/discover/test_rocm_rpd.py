"""rocmProfileData's files -- the ``.rpd`` SQLite database AMD's ROCm tracer writes (``runTracer.sh -o x.rpd``) and
the Chrome trace its ``rpd2tracing.py`` makes from one -- are named by what wrote them, given alone, renamed or found
in a logdir (survey h37-survey30).

The real pair is ROCm/rocmProfileData's blog example (MIT, kept in ``tests/fixtures/foreign/rocm_rpd_matmul``): a
PyTorch ``torch.matmul`` of [50000,10000] x [10000,800] fp32 on a gfx90a GPU, traced from process start.  Main said
"not a profile this tool reads" for the ``.rpd``, "an SQLite database, but not an Nsight Systems export" for the same
file renamed ``.sqlite``, and "JSON without traceEvents: not a trace" for its JSON -- a trace, whose event list opens
with an empty object ``{}`` (the converter puts a comma before every event), which the Chrome-array check did not
allow.  None of the three said what the file is or what to capture instead.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover, skipped
from tb_gpu_advisor.formats.kineto.layout import sniff

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "foreign" / "rocm_rpd_matmul"
RPD = FOLDER / "matmul_result.rpd"
JSON = FOLDER / "matmul_result.json"
NAMED = "rocmProfileData"


def _report_error(path: Path, capsys) -> str:
    assert cli(["report", str(path), "--cache-dir", "off"]) == 2
    return capsys.readouterr().err


def test_the_real_rpd_given_alone_is_named_with_what_to_capture(capsys):
    err = _report_error(RPD, capsys)
    assert NAMED in err and "torch.profiler" in err
    assert "not a profile this tool reads" not in err


def test_the_same_database_renamed_sqlite_is_named_not_called_a_foreign_sqlite(tmp_path: Path, capsys):
    renamed = tmp_path / "report1.sqlite"
    shutil.copyfile(RPD, renamed)
    err = _report_error(renamed, capsys)
    assert NAMED in err and "not an Nsight Systems export (none of its tables)" not in err


def test_its_rpd2tracing_json_is_a_trace_named_by_its_writer(capsys):
    why = sniff(str(JSON))
    assert why is not None and NAMED in why, why
    assert NAMED in _report_error(JSON, capsys)


def test_the_object_form_rpd2tracing_writes_by_default_is_named_too(tmp_path: Path):
    """``rpd2tracing.py --format object`` (its default since 2024) wraps the same list in ``traceEvents``; a PyTorch
    job's markers are named ``aten::...`` there, which alone would pass for a Kineto trace."""
    events = json.loads(JSON.read_text())
    events.append({"pid": "1087077", "tid": "1087077", "name": "aten::mm", "ts": "8306020565000", "dur": "30",
                   "ph": "X", "args": {"desc": "UserMarker"}})
    path = tmp_path / "matmul_result.json"
    path.write_text(json.dumps({"traceEvents": events}))
    why = sniff(str(path))
    assert why is not None and NAMED in why, why


def test_in_a_logdir_both_are_left_out_by_name_never_no_profiles_found(tmp_path: Path, capsys):
    run = tmp_path / "matmul"
    run.mkdir()
    shutil.copyfile(RPD, run / RPD.name)
    shutil.copyfile(JSON, run / JSON.name)
    skips = dict(skipped(str(tmp_path)))
    assert sorted(skips) == ["matmul/matmul_result.json", "matmul/matmul_result.rpd"], skips
    assert all(NAMED in why for why in skips.values()), skips
    assert discover(str(tmp_path)) == []
    assert NAMED in _report_error(tmp_path, capsys)


def test_another_tools_array_opening_with_an_empty_object_is_a_chrome_array_trace(tmp_path: Path):
    """The ``{}`` opening is no rocmProfileData mark: any writer that puts a comma before each event makes it."""
    path = tmp_path / "gpu_trace.json"
    path.write_text('[ {}\n,{"name": "[MEMCPY] HtoD", "ph": "X", "ts": 1.0, "dur": 8.0, "pid": 1, "tid": 7}\n]')
    why = sniff(str(path))
    assert why is not None and "Chrome's JSON array form" in why and NAMED not in why


def test_controls_other_json_and_other_sqlite_are_unchanged(tmp_path: Path, capsys):
    config = tmp_path / "config.json"
    config.write_text('[ {}, {"lr": 0.1}, {"phase": "train"}]')
    assert sniff(str(config)) == "JSON without traceEvents: not a trace"
    db = tmp_path / "report1.sqlite"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE rocpd_api(id INTEGER PRIMARY KEY); CREATE TABLE users(id INTEGER PRIMARY KEY);")
    con.commit()
    con.close()
    err = _report_error(db, capsys)
    assert "not an Nsight Systems export (none of its tables)" in err and NAMED not in err


def test_a_gzipped_rpd_is_still_named_by_its_writer(tmp_path: Path, capsys):
    """rocmProfileData's own test trace is shared gzipped (``raptor/tests/mytrace.rpd.gz``); nvprof's likewise."""
    import gzip

    packed = tmp_path / "mytrace.rpd.gz"
    packed.write_bytes(gzip.compress(RPD.read_bytes()))
    assert NAMED in _report_error(packed, capsys)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "top_kernel.nvvp.gz").write_bytes(gzip.compress(b"SQLite format 3\x00"))
    skips = dict(skipped(str(tmp_path / "run")))
    assert "nvprof's database" in skips.get("top_kernel.nvvp.gz", ""), skips
