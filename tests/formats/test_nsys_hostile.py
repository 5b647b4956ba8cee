"""Hostile Nsight exports (issue #39, ``synthetic.hostile.SQLITE_KINDS``): what an SQLite file defines -- views,
virtual tables, computed columns, names that are no UTF-8 -- is never run or trusted, and every query is bounded.

Before: a view named like a table was read as the table (an endless recursive one hung the listing and grew memory
~97 MB/s, or hung the analysis), and a column name that is no UTF-8 failed the analysis with a bare codec error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from synthetic import hostile
from tb_gpu_advisor.formats import sqlite as shared_sqlite
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.formats.nsys import tables as tb
from tb_gpu_advisor.formats.nsys.tables import NsysReadError

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _schema_tables(path: str) -> frozenset[str]:
    with shared_sqlite.open_db(path) as con:
        return tb.Schema(con).tables


@pytest.mark.parametrize("kind", ["endless_kernel_view", "virtual_kernels", "generated_names"])
def test_a_kernel_table_the_file_computes_is_no_table(tmp_path, kind):
    """A view, a virtual table (a module's code) or a table with a column computed on read, under the kernel table's
    name: not a table to read, so the export has no kernels -- what the reader says of an export without kernels
    (an error of the file, or a window without GPU work), never a hang: the endless view has no last row, so a read
    that ends did not read it."""
    path = hostile.SQLITE_KINDS[kind](str(tmp_path / "evil.sqlite"))
    tables = _schema_tables(path)
    assert tb.KERNEL not in tables and tb.STRINGS in tables
    t = time.monotonic()
    try:
        reader.read_trace(path)
    except NsysReadError as e:
        assert "codec" not in str(e) and "budget" not in str(e), e
    assert time.monotonic() - t < 30


def test_an_endless_view_in_place_of_a_metadata_table_is_never_read(tmp_path):
    """The 8 kB file whose ``TARGET_INFO_SYSTEM_ENV`` is an endless recursive view: the listing's header is read
    from real tables only, at once."""
    from tb_gpu_advisor.formats.nsys import layout

    path = hostile.sqlite_endless_env_view(str(tmp_path / "evil.sqlite"))
    assert tb.SYSTEM_ENV not in _schema_tables(path)
    t = time.monotonic()
    why, header = layout._probe(path)
    assert why is None and header.hostname is None and time.monotonic() - t < 10


def test_names_that_are_no_utf8_are_left_out(tmp_path):
    """A table, or a GPU-table column, named with bytes that are no UTF-8: left out, the export read as usual
    (before: the analysis failed with "'utf-8' codec can't decode byte 0xff")."""
    good = reader.read_trace(hostile.sqlite_export(str(tmp_path / "good.sqlite")))
    path = hostile.sqlite_not_utf8_table_name(str(tmp_path / "table.sqlite"))
    assert all(n.isprintable() for n in _schema_tables(path))
    assert len(reader.read_trace(path).devices[0]) == len(good.devices[0])
    col = hostile.sqlite_export(str(tmp_path / "column.sqlite"))
    hostile._sql(col, f'ALTER TABLE TARGET_INFO_GPU ADD COLUMN "{hostile._NAME_MARK.decode()}" INTEGER')
    hostile._patch(col, hostile._NAME_MARK, hostile.NOT_UTF8)
    t = reader.read_trace(col)
    assert len(t.devices[0]) == len(good.devices[0]) and t.devices[0].info.name == good.devices[0].info.name


def test_a_schema_whose_error_quotes_bytes_that_are_no_utf8_is_a_damaged_file(tmp_path):
    """SQLite's message about a schema it cannot parse quotes the bytes; Python decoded that message and raised
    UnicodeDecodeError, which no handler expected: the listing failed ("cannot list", every route of the tab 500),
    and the file alone was a traceback.  Now: an SQLite file that cannot be read, said in words."""
    from tb_gpu_advisor.formats.nsys import layout

    path = hostile.sqlite_malformed_schema_not_utf8(str(tmp_path / "evil.sqlite"))
    why, _ = layout._probe(path)
    assert why is not None and "malformed database schema" in why
    with pytest.raises(NsysReadError, match="damaged SQLite file: malformed database schema"):
        reader.read_trace(path)


def test_a_query_past_its_budget_is_a_clear_error(tmp_path, monkeypatch):
    """Every query runs under the connection's step budget (SQLite's progress handler): past it, the read stops
    with an error that says so."""
    path = hostile.sqlite_export(str(tmp_path / "good.sqlite"))
    monkeypatch.setattr(shared_sqlite, "PROGRESS_STEP", 100, raising=False)
    monkeypatch.setattr(shared_sqlite, "BASE_STEPS", 1_000, raising=False)
    monkeypatch.setattr(shared_sqlite, "STEPS_PER_BYTE", 0, raising=False)
    with pytest.raises(NsysReadError, match="budget of .* SQLite steps"):
        reader.read_trace(path)


def test_a_real_export_reads_well_inside_its_budget():
    """The budget's headroom, on a real export (``tests/fixtures/foreign``): reading every table takes under a
    tenth of it."""
    path = os.path.join(REPO, "tests", "fixtures", "foreign", "nsys_a100_cloverleaf", "perlmutter-cloverleaf-cuda.sqlite")
    spent = []
    real_close = shared_sqlite.Guarded.close

    def close(con):
        spent.append((con.ticks, con.budget))
        return real_close(con)

    try:
        shared_sqlite.Guarded.close = close
        reader.read_trace(path)
    finally:
        shared_sqlite.Guarded.close = real_close
    assert spent and all(ticks * 10 < budget for ticks, budget in spent)


def test_the_cli_lists_every_hostile_file_as_its_error_and_reports_the_good_run(tmp_path):
    """One logdir: a good run and a run per hostile kind.  The CLI (a fresh process, so a hang is a timeout here,
    not a stuck suite) reports the good run and names each hostile one's error; nothing hangs or crashes."""
    root = tmp_path / "logdir"
    (root / "good").mkdir(parents=True)
    hostile.sqlite_export(str(root / "good" / "train.sqlite"), steps=6)
    for kind, make in hostile.SQLITE_KINDS.items():
        if kind == "huge_env_value":
            continue  # 64 MB: the robustness campaign's
        (root / kind).mkdir()
        make(str(root / kind / "evil.sqlite"))
    env = {**os.environ, "TB_GPU_ADVISOR_CACHE_DIR": "off", "PYTHONPATH": REPO}
    done = subprocess.run([sys.executable, "-m", "tb_gpu_advisor.cli", "report", str(root), "--format", "json"],
                          capture_output=True, text=True, timeout=240, env=env)
    assert done.returncode in (0, 2), done.stderr[-2000:]
    body = json.loads(done.stdout)
    reports = body if isinstance(body, list) else body.get("reports", [body])
    by_run = {r["run"]: r for r in reports}
    good = by_run["good"]
    assert good["hosts"][0]["error"] is None and good["hosts"][0]["steps"]["count"] > 0
    for kind in ("endless_env_view", "endless_kernel_view", "virtual_kernels", "generated_names"):
        # analysed to the end: no kernel table to read (an error of the file, or a window without GPU work)
        error = by_run[kind]["hosts"][0]["error"] or ""
        assert "codec" not in error and "budget" not in error and "Traceback" not in error, (kind, error)
    for kind in ("trigger", "not_utf8_table_name"):
        assert by_run[kind]["hosts"][0]["error"] is None, (kind, by_run[kind]["hosts"][0]["error"])
    # StringIds a view, never run: the export has no string table, so its calls and kernels cannot be named -- the
    # file's damage said (h37-damage68: read before as nameless calls, "CUDA API 17"), never the view run
    strings = by_run["endless_strings_view"]["hosts"][0]
    assert "no such table: StringIds" in (strings["error"] or ""), strings["error"]
    assert [d["what"] for d in strings["damage_records"]] == ["sqlite_no_such_table"], strings["damage_records"]


def test_an_export_over_the_profile_limit_is_listed_unread(tmp_path, monkeypatch):
    """The listing makes no private copy of a file the analysis would refuse: over the profile limit, it is listed
    without being opened, and its analysis says it is too big (an error of that file)."""
    from tb_gpu_advisor.formats.nsys import layout

    path = hostile.sqlite_export(str(tmp_path / "big.sqlite"))
    monkeypatch.setenv("TB_GPU_ADVISOR_MAX_PROFILE_BYTES", "1000")
    opened = []
    monkeypatch.setattr(shared_sqlite, "open_db", lambda *a, **k: opened.append(a) or pytest.fail("opened"))
    size = os.path.getsize(path)
    assert layout.probe_file(path, size, 1) == (None, layout.Header()) and not opened
    with pytest.raises(NsysReadError, match="over the .* limit"):
        reader.read_trace(path)


def test_the_cli_given_an_unreadable_export_alone_says_why(tmp_path):
    """``report FILE`` of the export whose schema SQLite cannot parse: exit 2 and why, in one line (before: a
    UnicodeDecodeError traceback, exit 1)."""
    (tmp_path / "run").mkdir()
    path = hostile.sqlite_malformed_schema_not_utf8(str(tmp_path / "run" / "evil.sqlite"))
    env = {**os.environ, "TB_GPU_ADVISOR_CACHE_DIR": "off", "PYTHONPATH": REPO}
    done = subprocess.run([sys.executable, "-m", "tb_gpu_advisor.cli", "report", path], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "an SQLite file that cannot be read (malformed database schema" in done.stderr


def test_a_wal_mode_export_is_read_from_its_bytes(tmp_path):
    """An export left in WAL mode (bytes 18-19 of its header say 2): its bytes read in memory as the same export."""
    import sqlite3

    path = hostile.sqlite_export(str(tmp_path / "wal.sqlite"))
    want = len(reader.read_trace(path).devices[0])
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    con.close()
    with open(path, "rb") as f:
        assert f.read(20)[18:20] == b"\x02\x02"
    assert len(reader.read_trace(path).devices[0]) == want
