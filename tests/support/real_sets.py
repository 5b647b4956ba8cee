"""What every test module over one real set (``../shared/profiles/<set>``) starts with: its truth, or the module
skipped where the set is absent, and its runs' reports made once for the module.

Why here: the JAX, PyTorch and wild-PyTorch cross-checks each repeated these lines; ``real_checks`` itself stays free
of pytest (``scripts/real_check.py`` imports it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.real_checks import RunResult, load_truth, our_report


def truth_or_skip(set_dir: Path, missing: str) -> dict[str, dict[str, Any]]:
    """run -> truth entry of the set's ``TRUTH.json``; the calling module is skipped, ``missing`` saying why, where the
    set is not there."""
    if not (set_dir / "TRUTH.json").is_file():
        pytest.skip(missing, allow_module_level=True)
    return load_truth(set_dir)


def reports_fixture(set_dir: Path, runs: list[str]):
    """A module-scoped ``reports`` fixture: our CLI JSON report per run, each run analysed once for the module."""

    @pytest.fixture(scope="module", name="reports")
    def reports() -> dict[str, RunResult]:
        return {run: our_report(set_dir, run) for run in runs}

    return reports
