"""A copy of the package to edit, and the analyzer version a fresh interpreter reads from it (the report cache's
``analyzer_version``: the version and a fingerprint of the analysing code), for the tests that edit code."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO


def copy_package(into: Path, *ignore: str) -> Path:
    """``tb_gpu_advisor`` copied under ``into`` (without caches and ``ignore``'s patterns); ``into`` returned."""
    shutil.copytree(REPO / "tb_gpu_advisor", into / "tb_gpu_advisor",
                    ignore=shutil.ignore_patterns("__pycache__", *ignore))
    return into


def analyzer_version(pkg_root: Path) -> str:
    """``runtime.cache.analyzer_version()`` of the package under ``pkg_root``, read by a fresh interpreter."""
    code = "import tb_gpu_advisor.runtime.cache as c; print(c.analyzer_version())"
    env = {**os.environ, "PYTHONPATH": str(pkg_root)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                          cwd=str(pkg_root)).stdout.strip()
