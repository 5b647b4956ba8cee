"""What every test module over one real set (``../shared/profiles/<set>``) starts with: its truth, or the module
skipped where the set is absent, and its runs' reports made once for the module.

Why here: the JAX, PyTorch and wild-PyTorch cross-checks each repeated these lines, and their ``test_truth``;
``real_checks`` itself stays free of pytest (``scripts/real_check.py`` imports it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.real_checks import TRUTH_CHECKS, RunResult, judge, load_truth, our_report


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


def truth_test(truth: dict[str, dict[str, Any]]) -> Callable[..., None]:
    """The module's ``test_truth`` (assign it to that name): the ``score_real.py`` checks of every run of ``truth``,
    one test id per run and check, on the ``reports`` fixture (:func:`reports_fixture`)."""

    @pytest.mark.parametrize("check", TRUTH_CHECKS)
    @pytest.mark.parametrize("run", sorted(truth))
    def test_truth(reports: dict[str, RunResult], run: str, check: str) -> None:
        judge(truth[run], reports[run], run, TRUTH_CHECKS[check])

    return test_truth
