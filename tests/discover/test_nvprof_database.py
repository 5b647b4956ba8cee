"""nvprof's own database (``nvprof -o <file>.nvvp``) is told by its tables, given alone or found in a logdir, and read
(``formats.nvprof``, h37-wild55n; before it, named by what wrote it and refused).

Survey h37-survey21: rajesh-s/mlsys-deepspeech-gpu-profiling (no licence) keeps two ``.nvvp`` files of 2022, a
DeepSpeech training run on a Tesla P100 under ``nvprof --kernels ... --analysis-metrics``: SQLite databases whose
CUPTI tables carry an Nsight export's names (``CUPTI_ACTIVITY_KIND_KERNEL``, ``..._MARKER``) but whose strings sit in
``StringTable`` and whose format in ``Version``.  Main said "not a profile this tool reads" for the ``.nvvp`` and "an
SQLite database, but not an Nsight Systems export" when it was renamed ``.sqlite``: neither names nvprof nor says what
to capture instead; h37-survey21 named it, h37-wild55n reads it.  The test builds the schema's tell-tale tables, with
one kernel row.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover, skipped
from tests.support.paths import FIXTURES


def _nvprof_db(path: Path) -> Path:
    """The tables nvprof 10.x writes that tell its database from an Nsight Systems export."""
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, value TEXT NOT NULL UNIQUE);
        CREATE TABLE Version(version INT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_DEVICE(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, name INT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, start INT NOT NULL,
            end INT NOT NULL, deviceId INT NOT NULL, streamId INT NOT NULL, name INT NOT NULL);
        INSERT INTO StringTable(value) VALUES ('Tesla P100-PCIE-16GB'), ('maxwell_fp16_sgemm_fp16_128x32_nn');
        INSERT INTO Version VALUES (14);
        INSERT INTO CUPTI_ACTIVITY_KIND_DEVICE(name) VALUES (1);
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId, streamId, name)
            VALUES (1645408399669067591, 1645408399669167591, 0, 7, 2);
    """)
    con.commit()
    con.close()
    return path


def test_an_nvvp_given_alone_is_read_as_nvprofs(tmp_path: Path, capsys):
    """h37-wild55n: nvprof's database is read (``formats.nvprof``), no longer refused by name."""
    path = _nvprof_db(tmp_path / "top_kernel_invocation_only.nvvp")
    assert cli(["report", str(path), "--cache-dir", "off"]) == 0
    out = capsys.readouterr().out
    assert "Tesla P100-PCIE-16GB" in out and "not a profile this tool reads" not in out


def test_the_same_database_renamed_sqlite_is_read_as_nvprofs(tmp_path: Path, capsys):
    path = _nvprof_db(tmp_path / "report1.sqlite")
    assert cli(["report", str(path), "--cache-dir", "off"]) == 0
    assert "not an Nsight Systems export (none of its tables)" not in capsys.readouterr().err


def test_in_a_logdir_it_is_a_session_never_no_profiles_found(tmp_path: Path):
    run = tmp_path / "deepspeech"
    run.mkdir()
    _nvprof_db(run / "top2_kernel_invocation_only.nvvp")
    assert skipped(str(tmp_path)) == []
    (s,) = discover(str(tmp_path))
    assert [(h.host, h.format) for h in s.hosts] == [("top2_kernel_invocation_only", "nvprof")]


def test_pyprofs_net_sql_is_read_as_nvprofs(tmp_path: Path, capsys):
    """NVIDIA PyProf's documented capture (``nvprof -f -o net.sql --profile-from-start off -- python ...``, then
    ``python -m apex.pyprof.parse net.sql``): josiahdavis/profiling-lm keeps that ``net.sql`` (Apache-2.0, 806,912
    bytes, 2020, a PyTorch language model on CUDA 10.1; survey h37-survey39; kept since h37-wild55n in
    ``tests/fixtures/wild/pyprof_lm_v100_nvprof``), nvprof's tables with ``StringTable`` and ``Version``."""
    path = _nvprof_db(tmp_path / "net.sql")
    assert cli(["report", str(path), "--cache-dir", "off"]) == 0
    assert "not a profile this tool reads" not in capsys.readouterr().err


def test_control_an_sql_script_beside_an_export_is_no_profile(tmp_path: Path):
    """A ``.sql`` that is a text script is no SQLite file: never read, never a session -- the export beside it is the
    run's one capture, as before."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "schema.sql").write_text("CREATE TABLE t(a INTEGER);\n")
    assert discover(str(tmp_path)) == []
    shutil.copy(FIXTURES / "wild" / "mmagic_a100_pyprof_forward" / "net.sqlite", run / "net.sqlite")
    (s,) = discover(str(tmp_path))
    assert [h.host for h in s.hosts] == ["net"]
