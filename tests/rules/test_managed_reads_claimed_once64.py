"""The host's reads of managed memory the GPU wrote are claimed once, by one finding, whichever finds them
(h37-review64, review of h37-copy63's one account of the reads; issue #37 class 3: each wait belongs to its cause).

Generator ``synthetic.nsysexport.write_counted_solver(read="managed", fault_us=300, sleep_us=400)``, truth by
construction: each turn the thread sleeps 300 us in its read's page fault (the ledger's ``managed_read``) and 400 us
off the CPU in no read after its first sync (a timer's, a socket's wait).  The gaps' check names the reads and claims
all 300 us of them (between the steps and inside); on base the host-wait finding then claimed the same 300 us again
from the waits the gaps' claim left -- the sleep's time, read as the reads -- so two findings saved the reads (600 us
of a 300 us category) and none named the sleep."""

from __future__ import annotations

from synthetic import nsysexport as nx
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.rules.savings import IDLE_POOLS
from tests.support.report_store import session_report

READS = "managed memory the GPU wrote"


def _report(tmp_path, sleep_us: float) -> tuple[dict, dict]:
    truth = nx.write_counted_solver(str(tmp_path / "run.sqlite"), read="managed", fault_us=300.0, sleep_us=sleep_us)
    (s,) = discover(str(tmp_path))
    return session_report(s).to_dict(), truth


def _reads_claimed_ms(rep: dict) -> float:
    group, pool = IDLE_POOLS["managed_read"]
    return sum(r["ms"] for f in rep["findings"] if f.get("saving")
               for r in f["saving"]["recovers"] if (r["group"], r["pool"]) == (group, pool))


def test_the_reads_are_claimed_once_beside_another_wait(tmp_path):
    """The reads' claims add up to the ledger's ``managed_read`` (300 us), no more; the other wait is named as one
    for a source outside the capture and saves the sleep (400 us by construction).  Fails on base (600 us of reads
    claimed, the outside-wait finding titled as the reads, saving 300 us)."""
    rep, _ = _report(tmp_path, 400.0)
    ledger = rep["hosts"][0]["breakdown_ms"]
    reads = [f for f in rep["findings"] if (f.get("metric") or {}).get("id") == "managed_read_share"]
    assert [f["rule"] for f in reads] == ["step_gaps"]
    (gaps,) = reads
    assert abs(gaps["saving"]["ms_per_step"] - ledger["managed_read"]) <= 0.02 * ledger["managed_read"]
    (outside,) = [f for f in rep["findings"] if f["id"].endswith("#outside_wait")]
    assert "outside the capture" in outside["title"] and READS not in outside["title"]
    assert abs(outside["saving"]["ms_per_step"] - 0.4) <= 0.02
    # the pool the reads take holds the reads and the sleep, each once: never above the two waits' time
    assert _reads_claimed_ms(rep) <= ledger["managed_read"] + 0.4 + 0.01


def test_control_the_reads_alone_are_claimed_by_the_gaps_check(tmp_path):
    """Control (passes on base): no other wait -- the gaps' check claims the reads, no outside-wait finding."""
    rep, truth = _report(tmp_path, 0.0)
    assert not [f for f in rep["findings"] if f["id"].endswith("#outside_wait")]
    assert abs(_reads_claimed_ms(rep) * 1000 - truth["fault_us_per_turn"]) <= 0.03 * truth["fault_us_per_turn"]
