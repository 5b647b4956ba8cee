"""A check that fails is one line on stderr; its traceback is for ``--debug`` (issue 27 item 15).

Before: ``launch_bound`` raising ``ZeroDivisionError`` (a trace whose timestamps are in seconds) printed a
9-line traceback to the user's stderr through the logging module's last resort, although the report was right.

Through a real subprocess: the last resort and the handler the CLI installs act on the process's real stderr,
which pytest's own log capture would hide in process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.support.paths import DEMO_LOGS, REPO

#: The CLI with one rule made to raise (its check replaced), as a rule that fails on an odd capture does.
FAILING_RULE = """
import dataclasses, sys
from tb_gpu_advisor import rules
def boom(metrics):
    return 1 / 0
rules.REGISTRY["launch_bound"] = dataclasses.replace(rules.REGISTRY["launch_bound"], check=boom)
from tb_gpu_advisor.cli.main import main
sys.exit(main(sys.argv[1:]))
"""

pytestmark = pytest.mark.skipif(not (DEMO_LOGS / "launch_bound").is_dir(), reason="demo_logs/ missing")


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("logs")
    shutil.copytree(DEMO_LOGS / "launch_bound", d / "launch_bound")
    return str(d)


def _run(*argv: str, code: str = FAILING_RULE) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), TB_GPU_ADVISOR_CACHE_DIR="off")
    env.pop("TB_GPU_ADVISOR_DEBUG", None)
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=REPO, env=env,
                          timeout=300)


def test_a_failing_rule_is_one_line_on_stderr_and_the_report_says_so(logdir):
    out = _run("report", logdir, "--run", "launch_bound")
    assert out.returncode in (0, 1), out.stderr[-2000:]
    assert "could not run" in out.stdout  # the report names the check that failed (rules.evaluate)
    lines = out.stderr.splitlines()
    assert lines == ["tb-gpu-advisor: warning: rule launch_bound failed on worker0: division by zero "
                     "(ZeroDivisionError; --debug for the traceback)"], out.stderr[-2000:]


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_keeps_the_traceback(logdir, where):
    argv = ["--debug", "report", logdir, "--run", "launch_bound"] if where == "before" else \
        ["report", logdir, "--run", "launch_bound", "--debug"]
    out = _run(*argv)
    assert out.returncode in (0, 1), out.stderr[-2000:]
    assert "Traceback (most recent call last)" in out.stderr and "ZeroDivisionError: division by zero" in out.stderr
    assert "in boom" in out.stderr  # the frame that raised


def test_worker_processes_of_the_cli_log_the_same_way():
    """A worker starts with the CLI's environment (``TB_GPU_ADVISOR_DEBUG``) and no handler: it installs the same
    one-line handler; without the variable (TensorBoard's workers) it leaves logging alone."""
    code = ("import logging, sys; from tb_gpu_advisor.common import logs; logs.configure_worker(); "
            "log = logging.getLogger('tb_gpu_advisor.x')\n"
            "try:\n    1 / 0\nexcept ZeroDivisionError:\n    log.warning('failed', exc_info=True)")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for value, one_line in (("0", True), (None, False)):
        if value is None:
            env.pop("TB_GPU_ADVISOR_DEBUG", None)
        else:
            env["TB_GPU_ADVISOR_DEBUG"] = value
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=env)
        assert ("Traceback" not in out.stderr) is one_line, out.stderr
