"""The in-process report of one run of a logdir, analysed once per test process: the tests that read several
findings of one kept capture share its analysis (analysis is deterministic for one tree)."""
from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import SHARED_PROFILES
from tests.support.report_store import session_report

_CACHE: dict[tuple[str, str], Report] = {}


def fresh_report(logdir: Path) -> Report:
    """The report of the one session under ``logdir``, analysed afresh (no cache): a test's own written logdir."""
    (session,) = discover(str(logdir))
    return analyze_session(session.run, session.session, session.hosts)


def fresh_run_report(logdir: str | Path, run: str) -> Report:
    """The report of ``run``'s one session under ``logdir``, analysed afresh (no cache): a logdir of several runs."""
    (s,) = [s for s in discover(str(logdir)) if s.run == run]
    return analyze_session(s.run, s.session, s.hosts)


def cli_report(logdir: Path, *argv: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``report LOGDIR --run run ARGV`` run in-process."""
    import io

    from tb_gpu_advisor.cli import main as cli

    args = cli.build_parser().parse_args(["report", str(logdir), "--run", "run", *argv])
    out, err = io.StringIO(), io.StringIO()
    return args.func(args, stdout=out, stderr=err), out.getvalue(), err.getvalue()


def run_report(logdir: str | Path, run: str) -> Report:
    """The report of ``run``'s one session under ``logdir``, cached by (logdir, run)."""
    key = (str(logdir), run)
    if key not in _CACHE:
        (s,) = [s for s in discover(str(logdir)) if s.run == run]
        _CACHE[key] = session_report(s)  # analysed once per test run, by whichever process came first
    return _CACHE[key]


def as_logdir_run(src: Path, root: Path, session: str = "2021_06_01_00_00_00") -> str:
    """Copy a bare XPlane file ``src`` into ``root`` as TensorBoard lays one out
    (``<run>/plugins/profile/<session>/<file>``, the run named by the file's stem); returns the run's name."""
    run = src.name.split(".")[0]
    dst = root / run / "plugins" / "profile" / session
    dst.mkdir(parents=True)
    shutil.copyfile(src, dst / src.name)
    return run


#: The real TF 2.4 capture of BERT on 8 x V100, a bare XPlane file kept beside the checkout (never copied into it).
V100_BERT = SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb"


def v100_bert_report(root: Path) -> Report:
    """The report of :data:`V100_BERT` laid out as a run (:func:`as_logdir_run`) once per test run, in the run's
    folder of generated captures (``corpus.corpus(LONE)``; under ``root`` without one): every test that asks, and the
    property walk, read the one copy, analysed once per run.  The test is skipped where ``../shared/profiles`` is not
    beside this checkout."""
    import pytest

    from tests.support.corpus import LONE, corpus

    if not V100_BERT.is_file():
        pytest.skip("../shared/profiles is not beside this checkout")
    return run_report(corpus(LONE, root), V100_BERT.name.split(".")[0])


def one_file_host(path: str, fmt: str) -> dict:
    """The host block of a one-file session's report (``fmt`` its reader), with the report's findings in it: the
    tests that read a window's finding off one capture, kept or cut from a kept one, build it so."""
    hosts = [SimpleNamespace(host="h0", path=path, format=fmt, size=os.path.getsize(path))]
    rep = analyze_session("w", "s", hosts).to_dict()
    (host,) = rep["hosts"]
    assert host["error"] is None, host["error"]
    return {**host, "findings": rep["findings"]}


def gzip_json(path: str | Path) -> dict:
    """A kept capture's document (gzipped JSON), to cut a control from."""
    with gzip.open(path, "rt") as f:
        return json.load(f)


def doc_host(tmp_path: Path, doc: dict, name: str = "cut.pt.trace.json") -> dict:
    """:func:`one_file_host` of a Kineto document written as a one-file session (a control cut from a kept capture)
    named ``name``."""
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return one_file_host(str(path), "kineto")


def capture_quality_finding(host: dict) -> dict:
    """The one capture-quality finding of :func:`one_file_host`'s host."""
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality"]
    return f
