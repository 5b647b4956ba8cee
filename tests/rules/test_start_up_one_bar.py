"""One bar, one home for "the part analysed holds the start-up" (h37-review26 *Left* 8): the cold-start check's
reading of a host's step (``rules.cold_start.pass_is_start_up`` / ``steps_hold_start_up``) and the report's
start-up-only account of a host's ledger (``report.verdict.start_up_window``) ask ``cold_start.holds_start_up`` and
``pass_reads_start_up``, where each wrote its own share and bar before.  The account of one pass follows the check's
reading at every bar: a share on either side of ``job.one_time_min_share`` and ``job.warmup_share``, each phase,
and the bar moved in the table."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tb_gpu_advisor.common.thresholds import T, override
from tb_gpu_advisor.report.verdict import start_up_window
from tb_gpu_advisor.rules.cold_start import holds_start_up, pass_reads_start_up

#: one pass of 100 ms: its ledger's start-up share (at and around the two bars) and the window's phase
SHARES = (0.0, 0.019, 0.02, 0.1, 0.249, 0.25, 0.9)
PHASES = ("warm-up", "mixed", "steady", None)


def _host(phase: str | None, startup_ms: float, count: int = 1) -> SimpleNamespace:
    """A host's report as ``start_up_window`` reads it: its job's phase, its steps, its ledger summing to 100 ms."""
    return SimpleNamespace(job={"phase": phase} if phase else {}, steps={"count": count},
                           breakdown_ms={"startup": startup_ms, "device_compute": 100.0 - startup_ms})


def test_the_bars_are_the_tables():
    assert holds_start_up(2.0, 100.0) and not holds_start_up(1.9, 100.0)
    assert holds_start_up(25.0, 100.0, "job.warmup_share") and not holds_start_up(24.9, 100.0, "job.warmup_share")
    assert not holds_start_up(5.0, None) and not holds_start_up(5.0, 0.0) and not holds_start_up(None, 100.0)
    with override(**{"job.one_time_min_share": 0.01}):
        assert holds_start_up(1.9, 100.0)


@pytest.mark.parametrize("bar", [None, 0.1])
def test_the_accounts_reading_is_the_checks(bar):
    """The report's start-up-only window of one pass is: some one-time cost the check grades, and the pass read as
    the start-up -- the same two readings the check makes of the same numbers, at the table's bar or a moved one."""
    with override(**({"job.warmup_share": bar} if bar else {})):
        for share in SHARES:
            for phase in PHASES:
                start, whole = 100.0 * share, 100.0
                want = holds_start_up(start, whole) and pass_reads_start_up(phase, start, whole)
                assert start_up_window([_host(phase, start)]) == want, (phase, share, T("job.warmup_share"))
                assert not start_up_window([_host(phase, start, count=2)])  # two steps: never start-up only
