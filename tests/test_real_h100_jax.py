"""Real JAX captures from one H100, each with its problem injected by construction (issue #9).

Why: synthetic profiles only contain what we thought of; these were written
by JAX 0.11 on real hardware (``../shared/docs/real-captures.md``).  Each run
is judged as ``../shared/tools/score_real.py`` judges it (the spec; the check
functions are shared with ``scripts/real_check.py`` in
``tests/real_checks.py``), one test id per check and run so a failure names
both.  The stock xprof converter cross-checks the step time wherever it
groups steps.

The captures are read in place from ``<repo>/../shared``; the module is
skipped when that set is absent.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable

import pytest

from tests.real_checks import (REAL_JAX_SET, Check, RunResult, check_diagnosis, check_not, check_sixteen_bit,
                               check_step, check_stock, load_truth, our_report, stock_available,
                               stock_step_for_run)

if not (REAL_JAX_SET / "TRUTH.json").is_file():
    pytest.skip(f"real H100 JAX captures not found at {REAL_JAX_SET} (the shared checkout holds them)",
                allow_module_level=True)

TRUTH = load_truth(REAL_JAX_SET)
RUNS = sorted(TRUTH)


@pytest.fixture(scope="module")
def reports() -> dict[str, RunResult]:
    """Our CLI JSON report per run, each run analysed once for the whole module."""
    return {run: our_report(REAL_JAX_SET, run) for run in RUNS}


@pytest.fixture(scope="module")
def stock() -> dict[str, tuple[float | None, str]]:
    """run -> (stock average step ms or None, why None); the converter runs in worker processes."""
    if not stock_available():
        pytest.skip("stock converter (xprof / tensorboard-plugin-profile) not installed")
    with ProcessPoolExecutor(2) as pool:
        return {run: (ms, why) for run, ms, why in pool.map(stock_step_for_run, [(str(REAL_JAX_SET), r) for r in RUNS])}


def _judge(reports: dict[str, RunResult], run: str, check: Callable[[dict[str, Any], dict[str, Any]], Check]) -> None:
    """Fail on a missing report or a failed check; skip, with the check's reason, where it does not apply."""
    result = reports[run]
    if result.report is None:
        pytest.fail(f"{run}: no report: {result.error}", pytrace=False)
    verdict = check(TRUTH[run], result.report)
    if verdict.ok is None:
        pytest.skip(f"{run}: {verdict.detail}")
    if not verdict.ok:
        pytest.fail(f"{run} [{verdict.name}]: {verdict.detail} -- truth: {TRUTH[run].get('note', '')}", pytrace=False)


@pytest.mark.parametrize("run", RUNS)
def test_diagnosis(reports, run):
    _judge(reports, run, check_diagnosis)


@pytest.mark.parametrize("run", RUNS)
def test_expect_not(reports, run):
    _judge(reports, run, check_not)


@pytest.mark.parametrize("run", RUNS)
def test_step_time(reports, run):
    _judge(reports, run, check_step)


@pytest.mark.parametrize("run", RUNS)
def test_sixteen_bit(reports, run):
    _judge(reports, run, check_sixteen_bit)


@pytest.mark.parametrize("run", RUNS)
def test_stock_step_time(reports, stock, run):
    """Our GPU step time within 10% of the stock overview_page's average step time, where stock finds steps."""
    stock_ms, why = stock[run]
    _judge(reports, run, lambda _truth, report: check_stock(report, stock_ms, why))
