"""A straggler rank's slow call across host files: named where it holds part of the lead, the reading the longest-call
lists cannot decide said with both bounds, the one-off left out of the saving (h37-ranks58).

BASE (e030cb7b): ``rank_straggler.one_call`` took a peer's longest call of the kernel -- or, where the peer's 16
listed calls leave the kernel out, its shortest listed -- as the same call's time there: a lower bound of the excess,
so a slow call hidden below a peer's 16 longest kernels read as a straggler, unsaid; and a slow call beside a real
straggler was counted in its saving as work to rebalance, unnamed.

By construction: ``synthetic.torchtrace.write_one_slow_call`` (4 DDP ranks on 2 nodes; rank 2 1.4x slower every step
and its first GEMM of step 4 8 ms longer) and rank rows written by hand (their longest calls listed as the reports
list them).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.rules import rank_straggler as rs
from tests.support.cli_report import first_report


def _rows(peer_shortest: float) -> tuple[SimpleNamespace, list[SimpleNamespace]]:
    """A straggler whose call 5 of 24 of kernel K took 8.18 ms (1.36 ms a step over 6 steps); three peers, each listing
    16 longest calls of other kernels, the shortest ``peer_shortest`` ms -- K is not among them."""
    s = SimpleNamespace(label="rank 2", longest_calls=[["K", 4, 8.18, 24, 1.3633], ["G", 0, 0.2, 24, 0.0333]])
    listed = [[f"L{i}", 0, peer_shortest + 0.1 * (15 - i), 6, 0.5] for i in range(16)]
    return s, [SimpleNamespace(label=f"rank {r}", longest_calls=listed) for r in (0, 1, 3)]


def test_a_call_below_the_peers_lists_is_said_with_both_bounds() -> None:
    """The peers' lists bound their K call by 4 ms: the call holds between 0.697 and 1.36 ms of the 1.36 ms lead --
    one slow call at the most, a straggler at the least; the report says so (BASE: read as a straggler, unsaid)."""
    s, others = _rows(4.0)
    lead = extra = 1.3633
    assert rs.one_call(s, others, lead, extra, 4.0) is None
    und = rs.undecided_call(s, others, lead, extra, 4.0)
    assert und is not None and und["kernel"] == "K" and not und["exact"]
    assert und["excess_ms"] == pytest.approx(1.3633 * (1 - 4.0 / 8.18), rel=1e-3)
    assert und["excess_hi_ms"] == pytest.approx(1.3633)
    words, part = rs._call_words(s, others, lead, extra, 4.0, "rank")
    assert "between 697 us and 1.36 ms of the 1.36 ms" in words and "profile the ranks again" in words, words
    assert part == pytest.approx(und["excess_ms"])


def test_control_a_call_the_lists_bound_tightly_is_one_call() -> None:
    """Control (one call on BASE too): the peers' shortest listed call is 0.2 ms -- the bound decides it."""
    s, others = _rows(0.2)
    one = rs.one_call(s, others, 1.3633, 1.3633, 4.0)
    assert one is not None and one["kernel"] == "K" and one["share_of_lead"] > 0.9


def test_a_slow_call_beside_a_straggler_is_named_and_left_out_of_the_saving(tmp_path: Path) -> None:
    """Rank 2 at 1.4x every step and one 8 ms GEMM call: a straggler whose finding names the call and saves what its
    pace costs -- the same job without the call saves it (BASE: 2.27 ms, the one-off counted as its pace)."""
    tt.write_one_slow_call(str(tmp_path / "call"), slow=1.4)
    tt.write_one_slow_call(str(tmp_path / "plain"), slow=1.4, extra_us=1.0)
    (f,) = [f for f in first_report(tmp_path / "call" / "one_slow_call")["findings"] if f["rule"] == "rank_straggler"]
    (p,) = [f for f in first_report(tmp_path / "plain" / "one_slow_call")["findings"] if f["rule"] == "rank_straggler"]
    assert "of that lead" in f["summary"] and "is one call: `" in f["summary"] and "(call 5 of " in f["summary"]
    assert "one call" not in p["summary"]  # control: no slow call, none named
    assert f["saving"]["ms_per_step"] == pytest.approx(p["saving"]["ms_per_step"], rel=0.1), (f["saving"], p["saving"])
    assert f["saving"]["ms_per_step"] <= f["metric"]["detail"]["straggler_busy_extra_ms"]
