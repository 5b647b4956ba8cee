"""Real JAX captures from one H100, each with its problem injected by construction (issue #9).

Why: synthetic profiles only contain what we thought of; these were written
by JAX 0.11 on real hardware (``../shared/docs/real-captures.md``).  Each run
is judged as ``../shared/tools/score_real.py`` judges it (the spec; the check
functions are shared with ``scripts/real_check.py`` in
``tests/support/real_checks.py``), one test id per check and run so a failure names
both.  The stock xprof converter cross-checks the step time wherever it
groups steps.

The captures are read in place from ``<repo>/../shared``; the module is
skipped when that set is absent.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import pytest

from tests.support.real_checks import (
    REAL_JAX_SET,
    check_stock,
    judge,
    stock_available,
    stock_step_for_run,
)
from tests.support.real_sets import reports_fixture, truth_or_skip, truth_test

TRUTH = truth_or_skip(REAL_JAX_SET, f"real H100 JAX captures not found at {REAL_JAX_SET} (the shared checkout "
                                    "holds them)")
RUNS = sorted(TRUTH)
reports = reports_fixture(REAL_JAX_SET, RUNS)


@pytest.fixture(scope="module")
def stock() -> dict[str, tuple[float | None, str]]:
    """run -> (stock average step ms or None, why None); the converter runs in worker processes."""
    if not stock_available():
        pytest.skip("stock converter (xprof / tensorboard-plugin-profile) not installed")
    with ProcessPoolExecutor(2) as pool:
        return {run: (ms, why) for run, ms, why in pool.map(stock_step_for_run, [(str(REAL_JAX_SET), r) for r in RUNS])}

test_truth = truth_test(TRUTH)  # the score_real.py checks, one test id per run and check


@pytest.mark.parametrize("run", RUNS)
def test_stock_step_time(reports, stock, run):
    """Our GPU step time within 10% of the stock overview_page's average step time, where stock finds steps."""
    stock_ms, why = stock[run]
    judge(TRUTH[run], reports[run], run, lambda _truth, report: check_stock(report, stock_ms, why))
