"""The copy time no kernel ran beside has one value on every screen (h37-marks68, left by the audit of session 68's
control reports).

cestwc/balinski-and-gomory-cuda's managed-memory solver on an RTX 3090 (wild/counted_steps_rtx3090_solver,
wild/managed_flag_rtx3090_solver, MIT): its H2D copies are Unified Memory page migrations that ran under kernels,
the kernels waiting ~0.5 ms a step for them.  The copy table's "exposed ms/step" -- defined as copy time during which
no kernel ran (``MemcpyStat.blocking_ms_per_step``) -- read H2D 0.0062 / 0.0053 ms while the ledger booked
``memcpy_h2d`` 0: ``metrics.memcpy._blocking`` added the kernels' wait, capped at the copies' own time, a slice of the
wait named as copy time.  Now "exposed" is the ledger's category and the kernels' wait has a column of its own; the
two with the D2H copies' exposed time make the finding's whole ("Copies block the GPU for 528 us").

Law ``copy-exposed`` (``tests/support/properties.py``); both tests fail on base 5b7502f7 (0.0062 / 0.0053 against 0,
no page-wait column).
"""

from __future__ import annotations

import pytest

from tests.support.properties import copy_exposed_problems
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

SOLVERS = ("counted_steps_rtx3090_solver", "managed_flag_rtx3090_solver")
#: the kernels' wait's column (written here, not read from the code: the test checks the code's words)
PAGE_WAIT_COLUMN = "kernel page wait ms/step"


def _host(run: str):  # noqa: ANN202 - a HostReport
    (s,) = [s for s in wild_sessions() if s.run == run]
    (h,) = session_report(s).hosts
    return h


@pytest.mark.parametrize("run", SOLVERS)
def test_page_migrations_under_kernels_are_no_exposed_copy_time(run: str) -> None:
    h = _host(run)
    assert not copy_exposed_problems(h)
    col = {c: i for i, c in enumerate(h.memcpy.columns)}
    h2d = next(r for r in h.memcpy.rows if r[col["direction"]] == "h2d")
    assert h2d[col["exposed ms/step"]] == h.breakdown_ms["memcpy_h2d"] == 0
    assert h2d[col[PAGE_WAIT_COLUMN]] > 0.4  # the kernels' wait: 524 / 461 us a step


@pytest.mark.parametrize("run", SOLVERS)
def test_the_copy_tables_parts_make_the_findings_whole(run: str) -> None:
    """The copies' exposed time and the kernels' wait for their pages, every direction's, are the finding's blocking
    time (no copy of this job held the host: no idle after one)."""
    h = _host(run)
    (f,) = [f for f in h.findings if f.rule == "excessive_memcpy"]
    col = {c: i for i, c in enumerate(h.memcpy.columns)}
    parts = sum(r[col["exposed ms/step"]] + r[col[PAGE_WAIT_COLUMN]] for r in h.memcpy.rows)
    assert parts == pytest.approx(f.metric.detail["blocking_ms_per_step"], abs=2e-4)
