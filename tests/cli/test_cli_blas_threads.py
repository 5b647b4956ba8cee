"""The command keeps numpy's OpenBLAS to one thread (``tb_gpu_advisor/cli/__init__.py``): its threads spun ~0.06 s
of CPU per process at numpy's import, for no work (the analysis calls no BLAS routine); a value the user set wins."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.support.paths import REPO

CODE = ("import json, os\nimport tb_gpu_advisor.cli\nimport numpy\n"
        "threads = int(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('Threads:')))\n"
        "print(json.dumps([os.environ.get('OPENBLAS_NUM_THREADS'), threads]))\n")


def _child(**env: str) -> tuple[str | None, int]:
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    r = subprocess.run([sys.executable, "-c", CODE], cwd=REPO, env={**clean, **env}, capture_output=True, text=True,
                       timeout=120, check=True)
    value, threads = json.loads(r.stdout)
    return value, threads


def test_the_command_imports_numpy_with_one_blas_thread():
    value, threads = _child()
    assert value == "1"
    assert threads == 1  # OpenBLAS started no thread of its own (it starts one per further core otherwise)


def test_a_thread_count_the_user_set_is_kept():
    value, _ = _child(OPENBLAS_NUM_THREADS="2")
    assert value == "2"
