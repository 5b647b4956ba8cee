"""Nsight Systems captures in a logdir: exports found by their tables (not their name), other databases left out with
why, an ``.nsys-rep`` beside its own export read once, per-rank exports of one job as one session, a logdir mixing
XPlane, PyTorch and Nsight runs, and ``report FILE.sqlite``."""

from __future__ import annotations

import os
import shutil
import sqlite3

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.discover import logdir as discover
from tb_gpu_advisor.formats import probe
from tests.support.paths import DEMO_LOGS, SHARED_PROFILES


def _db(path, tables=("metrics",)):
    con = sqlite3.connect(path)
    for t in tables:
        con.execute(f"CREATE TABLE {t} (a INTEGER)")
    con.commit()
    con.close()


def test_exports_are_known_by_their_tables(tmp_path):
    (tmp_path / "run_a").mkdir()
    (tmp_path / "run_b").mkdir()
    write(str(tmp_path / "run_a" / "profile.db"), NsysJob(steps=3))  # any name: its tables say
    _db(tmp_path / "run_b" / "optuna.sqlite")  # a database, no export
    (tmp_path / "run_b" / "notes.sqlite").write_text("text")
    sessions = discover.discover(str(tmp_path))
    assert [(s.run, [h.host for h in s.hosts], s.format) for s in sessions] == [("run_a", ["profile"], "nsys")]
    assert sessions[0].session == "2026_05_24_13_40_14"  # TARGET_INFO_SESSION_START_TIME, UTC
    skipped = dict(discover.skipped(str(tmp_path)))
    assert "not an Nsight Systems export" in skipped["run_b/optuna.sqlite"]
    assert skipped["run_b/notes.sqlite"] == "not an SQLite file"
    assert probe.file_has_gpu_activity(sessions[0].hosts[0].path, "nsys") is True


def test_a_report_beside_its_export_is_read_once(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write(str(run / "report1.sqlite"), NsysJob(steps=3))
    (run / "report1.nsys-rep").write_bytes(b"NSYS binary")
    (run / "report2.nsys-rep").write_bytes(b"NSYS binary")
    sessions = discover.discover(str(tmp_path))
    hosts = sorted((h.host, os.path.basename(h.path)) for s in sessions for h in s.hosts)
    assert hosts == [("report1", "report1.sqlite"), ("report2", "report2.nsys-rep")]


def test_a_report_given_by_path_beside_its_export_is_that_export(tmp_path):
    """``report report1.nsys-rep`` where ``nsys export --type sqlite`` left ``report1.sqlite`` beside it (the export's
    default name): the walk reads the export in its place, so the file given is that export's host -- not refused as
    "not a profile this tool reads" by a message listing ``.nsys-rep`` among the names it reads (probe h37-probe43d).
    A report with no export beside it stays its own host (told how to export it when read)."""
    run = tmp_path / "run"
    run.mkdir()
    write(str(run / "report1.sqlite"), NsysJob(steps=3))
    (run / "report1.nsys-rep").write_bytes(b"NSYS binary")
    (run / "report2.nsys-rep").write_bytes(b"NSYS binary")
    got = discover.locate_file(str(run / "report1.nsys-rep"))
    assert got is not None
    logdir, session, host = got
    assert logdir == str(run) and os.path.basename(host.path) == "report1.sqlite" and host.format == "nsys"
    _, _, alone = discover.locate_file(str(run / "report2.nsys-rep"))
    assert os.path.basename(alone.path) == "report2.nsys-rep"


def test_rank_exports_of_one_job_are_one_session(tmp_path):
    """``nsys profile -o report_rank%q{RANK}``: one export per rank, captured at the same time: one session; their
    machine (TARGET_INFO_SYSTEM_ENV Hostname) one host whose GPUs are the ranks'."""
    run = tmp_path / "job"
    run.mkdir()
    for r in range(2):
        write(str(run / f"report_rank{r}.sqlite"), NsysJob(steps=3))
    sessions = discover.discover(str(tmp_path))
    assert len(sessions) == 1 and len(sessions[0].hosts) == 1
    host = sessions[0].hosts[0]
    assert host.host == "synthetic-node" and [os.path.basename(r.path) for r in host.ranks] == \
        ["report_rank0.sqlite", "report_rank1.sqlite"]


def test_successive_runs_are_not_ranks(tmp_path):
    """nsys's default names (report1, report2) of two runs one after the other: their captures do not overlap."""
    run = tmp_path / "runs"
    run.mkdir()
    write(str(run / "report1.sqlite"), NsysJob(steps=3))
    write(str(run / "report2.sqlite"), NsysJob(steps=3))
    con = sqlite3.connect(run / "report2.sqlite")
    con.execute("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + 120000000000")  # 2 minutes later
    con.commit()
    con.close()
    sessions = discover.discover(str(tmp_path))
    assert sorted(len(s.hosts) for s in sessions) == [1, 1] and len(sessions) == 2


def test_mixed_logdir(tmp_path):
    """XPlane, PyTorch and Nsight runs in one logdir: each found, each with its format."""
    shutil.copytree(DEMO_LOGS / "launch_bound", tmp_path / "tf_run")
    torch_runs = [p for p in DEMO_LOGS.iterdir() if p.is_dir() and any(p.glob("*.pt.trace.json*"))]
    if not torch_runs:
        pytest.skip("no PyTorch demo run")
    shutil.copytree(torch_runs[0], tmp_path / "torch_run")
    (tmp_path / "nsys_run").mkdir()
    write(str(tmp_path / "nsys_run" / "rank0.sqlite"), NsysJob(steps=3))
    formats = {s.run: s.format for s in discover.discover(str(tmp_path))}
    assert formats == {"tf_run": "xplane", "torch_run": "kineto", "nsys_run": "nsys"}


def test_locate_one_export(tmp_path):
    run = tmp_path / "a" / "b"
    run.mkdir(parents=True)
    write(str(run / "x.sqlite"), NsysJob(steps=3))
    logdir, session, host = discover.locate_file(str(run / "x.sqlite"))
    assert logdir == str(run) and host.host == "x" and session.run == "."
    _db(run / "other.sqlite")
    assert discover.locate_file(str(run / "other.sqlite")) is None


@pytest.mark.skipif(not (SHARED_PROFILES / "nsys").is_dir(), reason="real Nsight exports not here")
def test_shared_exports_as_a_logdir():
    sessions = discover.discover(str(SHARED_PROFILES / "nsys"))
    assert sorted(s.run for s in sessions) == ["fsdp_mfu_after", "fsdp_mfu_before", "h100_fsdp_window"]
    assert {s.format for s in sessions} == {"nsys"}
