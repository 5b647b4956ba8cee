"""The command line's JSON report of a path, as a user runs it (``tb-gpu-advisor report``, its ``main`` run in the test's
process): the one helper the tests that read a whole report share instead of each spelling the command out."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

_Case = TypeVar("_Case")


def cli_reports(path: str | Path, ok: tuple[int, ...] = (0, 1)) -> list[dict]:
    """Every session report of ``report PATH --format json`` (:func:`in_process`); asserts the exit code is one of
    ``ok`` (0: nothing critical, 1: a critical finding).  The command's ``main`` runs in this process: a fresh
    interpreter per call cost ~1 s of CPU for the same ``main`` (the tests that need a process -- its exit status,
    what a fresh interpreter imports -- start one themselves)."""
    out = in_process("report", str(path), "--format", "json")
    assert out.returncode in ok, out.stderr
    return json.loads(out.stdout)["reports"]


def cli_report(path: str | Path, ok: tuple[int, ...] = (0, 1)) -> dict:
    """The one session report of ``path`` (:func:`cli_reports`)."""
    (report,) = cli_reports(path, ok)
    return report


def in_process(*argv: object) -> subprocess.CompletedProcess:
    """``tb-gpu-advisor ARGV`` through the command's ``main`` in this process, as a real process would report it: the
    exit code ``main`` returns (or argparse's ``SystemExit``), stdout and stderr (text buffers: not a terminal, as a
    pipe is not).  The environment ``main`` sets for its workers and the log handler it installs are put back after."""
    import contextlib
    import io
    import logging
    import os

    from tb_gpu_advisor.cli import main as cli_main

    out, err = io.StringIO(), io.StringIO()
    env, handlers = dict(os.environ), list(logging.getLogger().handlers)
    args = [*map(str, argv)]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli_main.main(args)
            except SystemExit as e:  # argparse: --help, a usage error
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    finally:
        os.environ.clear()
        os.environ.update(env)
        root = logging.getLogger()
        for h in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(h)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def first_host(path: str | Path) -> dict:
    """The first host of ``report PATH --format json --cache-dir off`` run in this process (no interpreter started:
    the by-construction tests that write one file and read one host's steps share it)."""
    return first_report(path)["hosts"][0]


def written_hosts(folder: str | Path, cases: Mapping[str, _Case], write: Callable[[str, _Case], dict],
                  ext: str = "sqlite") -> dict[str, tuple[dict, dict]]:
    """Each case of ``cases`` written by ``write(path, case)`` (a generator that returns its truth) to
    ``folder/<name>.<ext>`` and read by :func:`first_host`: name -> (its first host, its truth) -- the module fixture
    of the tests that read one scenario per form of a capture."""
    out = {}
    for name, case in cases.items():
        p = str(Path(folder) / f"{name}.{ext}")
        truth = write(p, case)
        out[name] = (first_host(p), truth)
    return out


def assert_steps_right(host: dict, truth: Any) -> None:
    """Every iteration of a generator's ``truth`` (its ``steps``, each ``step_ms`` long) read in ``host``'s steps."""
    assert host["steps"]["found"] == truth.steps
    steady = [r["step_ms"] for r in host["step_rows"]]
    assert steady and all(abs(ms - truth.step_ms) < 0.01 for ms in steady), (steady, truth.step_ms)


def first_report(path: str | Path) -> dict:
    """The first session report of ``report PATH --format json --cache-dir off`` run in this process (its hosts and
    its findings)."""
    return ran_report(path)[1]


def report_of(path: str | Path, fmt: str = "json", cache: str = "off") -> dict | str:
    """The report of ``report PATH --format FMT --cache-dir CACHE`` run in this process (:func:`ran_report`)."""
    return ran_report(path, fmt, cache)[1]


def ran_report(path: str | Path, fmt: str = "json", cache: str = "off",
               extra: tuple[str, ...] = ()) -> tuple[int, dict | str]:
    """The exit code and the report of ``report PATH --format FMT --cache-dir CACHE`` run in this process: the first
    session report's JSON, or the text (``text``, ``markdown``) -- the one home of the in-process run the
    by-construction tests share (each spelled it out before, h37-debt45); ``extra``: more of the command's options
    (``("--params", "8388608")``)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from tb_gpu_advisor.cli import main as cli

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["report", str(path), "--format", fmt, "--cache-dir", cache, *extra])
    return code, (json.loads(out.getvalue())["reports"][0] if fmt == "json" else out.getvalue())


def reports_by_run(path: str | Path) -> dict[str, dict]:
    """run -> its session report (JSON) of ``report PATH --format json --cache-dir off`` run in this process: every
    session, for the tests that read a job's ranks in sibling run folders."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from tb_gpu_advisor.cli import main as cli

    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        cli.main(["report", str(path), "--format", "json", "--cache-dir", "off"])
    return {r["run"]: r for r in json.loads(out.getvalue())["reports"]}


def gpus_of(report: dict) -> dict[int, dict]:
    """GPU id -> its entry, over every host of a session report (JSON)."""
    return {g["gpu"]: g for h in report["hosts"] for g in h["gpus"]}


def kept_report(path: Path):  # noqa: ANN201 - a Report (the schema's import stays inside, as cli's does)
    """:func:`first_report` of a kept capture's folder as a ``Report``, the test skipped where the folder is absent
    (the shared profiles' captures are not in every checkout)."""
    import pytest

    from tb_gpu_advisor.model.schema import Report

    if not path.is_dir():
        pytest.skip(f"{path} absent")
    return Report.from_dict(first_report(path))


def framed_passes_host(tmp_path: str | Path, **kw: object) -> tuple[dict, dict]:
    """(first host's report, truth) of ``synthetic.nsysexport.write_framed_passes(**kw)`` written under ``tmp_path``:
    the framed-pass tests' one export and read."""
    import os

    from synthetic import nsysexport

    path = os.path.join(str(tmp_path), "run.sqlite")
    truth = nsysexport.write_framed_passes(path, **kw)
    return first_host(path), truth


def _test_cache() -> str:
    """The report cache of the running test (``tests/conftest.py`` gives each test its own, empty, folder), "off"
    where none is set: the CLI runs of one test that read the same capture again (a snapshot's memory, then its diff
    both ways) analyse it once; no test sees another's reports."""
    import os

    from tb_gpu_advisor.common.cachedir import ENV_DIR

    return os.environ.get(ENV_DIR) or "off"


def cli_diff(capsys, *argv: str) -> tuple[int, str, str]:
    """``diff ARGV`` run in this process with the test's own report cache (:func:`_test_cache`): its exit code, stdout
    and stderr (pytest's ``capsys``)."""
    from tb_gpu_advisor.cli import main as cli

    rc = cli.main(["diff", *map(str, argv), "--cache-dir", _test_cache()])
    out, err = capsys.readouterr()
    return rc, out, err


def cli_memory(capsys, path: str | Path) -> dict:
    """The first GPU's ``memory`` of ``report PATH --format json`` run in this process with the test's own report
    cache (:func:`_test_cache`)."""
    from tb_gpu_advisor.cli import main as cli

    assert cli.main(["report", str(path), "--format", "json", "--cache-dir", _test_cache()]) in (0, 1)
    return json.loads(capsys.readouterr()[0])["reports"][0]["hosts"][0]["gpus"][0]["memory"]


def memory_gate_lines(err: str) -> list[str]:
    """The lines of a diff's stderr in which the memory gate names a regression."""
    return [line for line in err.splitlines() if "regression: memory:" in line]


def assert_bursts_are_iterations(path: str | Path, truth: Mapping) -> None:
    """A generated loop read from its GPU bursts: as many steps as the generator's ``iterations``, each as long as its
    ``iteration_ms`` (within 5%) -- the two numbers every burst-loop scenario's truth gives."""
    import pytest

    host = first_host(path)
    steps = host["steps"]
    assert steps["source"] == "gpu_busy_clusters" and steps["found"] == truth["iterations"], steps["note"]
    rows = [r["step_ms"] for r in host["step_rows"]]
    assert rows and all(ms == pytest.approx(truth["iteration_ms"], rel=0.05) for ms in rows), rows
