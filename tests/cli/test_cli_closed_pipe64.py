"""A reader that closes the command's output early (``tb-gpu-advisor report LOGDIR --format json | head -c 100``):
the command stops quietly with the status a process SIGPIPE ended shows (141), no traceback (h37-review64; base died
with a BrokenPipeError traceback and status 1 on the JSON report).  The pipe is made here, 4 KiB deep, so the report outgrows it and the
writer meets the closed end whatever the scheduling (no timing)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys

import pytest

from tb_gpu_advisor.cli import main as cli
from tests.support.paths import REPO

SMALL = os.path.join(REPO, "tests", "fixtures", "wild", "amd_mi250")  # a 109 kB JSON report, 8 kB of text


def _head(argv: list[str], keep: int = 100) -> tuple[int, str]:
    """Run the CLI into a pipe whose reader reads ``keep`` bytes and closes it: (exit status, stderr)."""
    r, w = os.pipe()
    if hasattr(fcntl, "F_SETPIPE_SZ"):
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)
    env = dict(os.environ, TB_GPU_ADVISOR_CACHE_DIR="off", PYTHONPATH=REPO)
    proc = subprocess.Popen([sys.executable, "-m", "tb_gpu_advisor.cli", *argv], cwd=REPO, stdout=w,
                            stderr=subprocess.PIPE, env=env)
    os.close(w)
    got = os.read(r, keep)
    os.close(r)
    _, err = proc.communicate(timeout=300)
    assert got  # the report began
    return proc.returncode, err.decode()


def _quiet(err: str) -> bool:
    return "Traceback" not in err and "BrokenPipeError" not in err and "Exception ignored" not in err


def test_a_reader_that_closes_early_ends_the_command_quietly():
    """Fails on base (status 1, BrokenPipeError's traceback on stderr)."""
    code, err = _head(["report", SMALL, "--format", "json"])
    assert _quiet(err), err
    assert code == cli.EXIT_CLOSED_PIPE == 141


@pytest.mark.skipif(not hasattr(fcntl, "F_SETPIPE_SZ"), reason="the text report fits a default pipe: needs Linux's "
                    "F_SETPIPE_SZ")
def test_a_text_report_into_a_closed_pipe_is_quiet():
    """Control (passes on base): the text report, one write the kernel takes in part before the reader goes, ends
    quietly either way -- 0 where the closed end was never written again, 141 where it was."""
    code, err = _head(["report", SMALL, "--format", "text"])
    assert _quiet(err), err
    assert code in (0, cli.EXIT_CLOSED_PIPE)


def test_a_broken_pipe_of_the_commands_own_keeps_its_traceback(monkeypatch, capsys):
    """Control (base raises too): a BrokenPipeError while standard output is open is a fault, raised."""
    def broken(args):
        raise BrokenPipeError(32, "a worker's pipe")

    monkeypatch.setattr(cli, "_run", broken)
    with pytest.raises(BrokenPipeError):
        cli.main(["report", SMALL])
