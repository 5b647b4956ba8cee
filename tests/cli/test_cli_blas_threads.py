"""The CLI starts no OpenBLAS worker threads (issue #38): numpy loads OpenBLAS, which starts a thread per core that
spins on the CPU waiting for matrix work the analysis never gives it.  Asserted on the process's threads (Linux
``/proc/self/task``), never on a time; a count the user set is kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tb_gpu_advisor.cli import main as cli
from tests.support.paths import REPO

SMALL = os.path.join(REPO, "tests", "fixtures", "wild", "amd_mi250")
#: After ``main(argv)`` in a fresh interpreter: its live threads (the kernel's count) and the variable's value.
PROBE = ("import json, os, sys\nfrom tb_gpu_advisor.cli.main import main\n"
         "try:\n    main(json.loads(sys.argv[1]))\nexcept SystemExit:\n    pass\n"
         "import numpy\n"
         "sys.stderr.write('\\nPROBE ' + json.dumps([len(os.listdir('/proc/self/task')), "
         f"os.environ.get({cli.BLAS_THREADS_ENV!r})]))\n")


def _threads_after(argv: list[str], **env: str) -> tuple[int, str | None]:
    base = {k: v for k, v in os.environ.items() if k not in (cli.BLAS_THREADS_ENV, "OMP_NUM_THREADS")}
    r = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv)], cwd=REPO, capture_output=True, text=True,
                       env=dict(base, TB_GPU_ADVISOR_CACHE_DIR="off", **env), timeout=300)
    threads, value = json.loads(r.stderr.rsplit("PROBE ", 1)[1])
    return threads, value


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2,
                    reason="needs Linux's /proc and 2 cores (OpenBLAS starts no thread on one)")
def test_report_leaves_one_thread_where_openblas_would_start_more():
    threads, value = _threads_after(["report", SMALL, "--format", "json"])
    assert value == "1"
    assert threads == 1, "OpenBLAS (or the reader) left threads running"
    # the yardstick: with the user's own count, numpy does start OpenBLAS's threads, so the count above can fail
    threads_user, value_user = _threads_after(["report", SMALL, "--format", "json"], **{cli.BLAS_THREADS_ENV: "2"})
    assert value_user == "2" and threads_user > 1


def test_a_count_the_user_set_is_kept(monkeypatch):
    monkeypatch.setenv(cli.BLAS_THREADS_ENV, "4")
    cli.one_blas_thread()
    assert os.environ[cli.BLAS_THREADS_ENV] == "4"
    monkeypatch.delenv(cli.BLAS_THREADS_ENV)
    cli.one_blas_thread()
    assert os.environ[cli.BLAS_THREADS_ENV] == "1"
