"""rocmProfileData's files -- the ``.rpd`` SQLite database AMD's ROCm tracer writes (``runTracer.sh -o x.rpd``) and
the Chrome trace its ``rpd2tracing.py`` makes from one -- given alone, renamed or found in a logdir (surveys
h37-survey30, h37-rpd).

The real pair is ROCm/rocmProfileData's blog example (MIT, kept in ``tests/fixtures/foreign/rocm_rpd_matmul``): a
PyTorch ``torch.matmul`` of [50000,10000] x [10000,800] fp32 on a gfx90a GPU, traced from process start.  h37-survey30
named the ``.rpd`` (main before it: "not a profile this tool reads"); h37-rpd reads it (``formats.rpd``): alone,
renamed ``.sqlite``, gzipped, and in a logdir, where the JSON beside it is left out by name, saying to give the
database instead.
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


def _report(path: Path, capsys) -> dict:
    assert cli(["report", str(path), "--cache-dir", "off", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)["reports"][0]["hosts"][0]


def test_the_real_rpd_given_alone_is_read(capsys):
    host = _report(RPD, capsys)
    assert host["error"] is None and host["capture"]["vendor"] == "AMD"
    assert host["gpus"][0]["name"] == "AMD GPU (model not recorded)"


def test_the_same_database_renamed_sqlite_is_read_as_rpd(tmp_path: Path, capsys):
    renamed = tmp_path / "report1.sqlite"
    shutil.copyfile(RPD, renamed)
    host = _report(renamed, capsys)
    assert host["error"] is None and host["capture"]["vendor"] == "AMD"
    assert [h.format for s in discover(str(tmp_path)) for h in s.hosts] == ["rpd"]


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


def test_in_a_logdir_the_rpd_is_read_and_its_json_named(tmp_path: Path, capsys):
    run = tmp_path / "matmul"
    run.mkdir()
    shutil.copyfile(RPD, run / RPD.name)
    shutil.copyfile(JSON, run / JSON.name)
    skips = dict(skipped(str(tmp_path)))
    assert sorted(skips) == ["matmul/matmul_result.json"], skips
    assert NAMED in skips["matmul/matmul_result.json"] and ".rpd database itself" in skips["matmul/matmul_result.json"]
    assert [(s.run, [h.format for h in s.hosts]) for s in discover(str(tmp_path))] == [("matmul", ["rpd"])]
    assert cli(["report", str(tmp_path), "--cache-dir", "off"]) == 0
    assert "AMD GPU (model not recorded)" in capsys.readouterr().out


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


def test_a_gzipped_rpd_is_read_and_another_compression_named_with_its_command(tmp_path: Path, capsys):
    """rocmProfileData's own test trace is shared gzipped (``raptor/tests/mytrace.rpd.gz``): read through a private
    decompressed copy; an ``.xz`` is named with the command that restores it, as nvprof's ``.nvvp`` in ``.xz`` is
    (its gzipped one is read since h37-wild55n)."""
    import gzip
    import lzma

    packed = tmp_path / "mytrace.rpd.gz"
    packed.write_bytes(gzip.compress(RPD.read_bytes()))
    assert _report(packed, capsys)["capture"]["vendor"] == "AMD"
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "other.rpd.xz").write_bytes(lzma.compress(RPD.read_bytes()))
    (tmp_path / "run" / "top_kernel.nvvp.xz").write_bytes(lzma.compress(b"SQLite format 3\x00"))
    skips = dict(skipped(str(tmp_path / "run")))
    assert "xz -dk other.rpd.xz" in skips.get("other.rpd.xz", ""), skips
    assert "compressed nvprof database" in skips.get("top_kernel.nvvp.xz", ""), skips
