"""The communication the step pays for, where a rank of the job has no GPU work recorded (issue #37 class 1 at job
scope; h37-review61b *Left* 2).

``comm_exposed``'s paid time is the exposed time up to the transfer -- the least time any rank spends in the
collective.  With a rank's GPU side unrecorded that least time may be the recorded ranks' wait for it
(``JobView.transfer_known`` is false; review61b already printed no "transfer ms"), yet base still printed
``min(exposed, transfer)`` as known on every screen: "1.32 ms (35.4% of the step) of communication the step pays
for", the evidence's "paid ms" 1.324, the metric's ``paid_ms_per_step`` and a saving of 1.32 ms a step from
overlapping -- of a 150 us AllReduce (truth by construction), the rest the wait for the unrecorded slow rank, which
no overlap hides.  ``alltoall_imbalance`` read its "exposed transfer" and saving off the same value.

Truth by construction: ``synthetic.torchtrace`` jobs (DDP with a slow rank 2 at 1.5x compute and a 150 us
AllReduce; the 8-rank MoE with skewed all-to-all splits) with one rank rewritten by ``unrecord_gpu``."""

from __future__ import annotations

from synthetic import torchtrace as tt
from tb_gpu_advisor.model.schema import Report
from tests.support.cli_report import ran_report
from tests.support.properties import unrecorded_rank_claims


def _report(tmp_path, sc: tt.Scenario, unrecorded: int | None) -> dict:
    paths = tt.write_run(str(tmp_path), sc, steps=8, run="job")
    if unrecorded is not None:
        tt.unrecord_gpu(next(p for p in paths if tt.doc_rank(p) == unrecorded))
    return ran_report(tmp_path / "job")[1]


def _finding(rep: dict, rule: str) -> dict:
    return next(f for f in rep["findings"] if f["rule"] == rule)


def _ddp() -> tt.Scenario:
    return tt.Scenario(4, tt.ddp(comm_us=150.0, slow_rank=2, slow=1.5), [], [], "DDP, a slow rank")


def test_no_paid_time_or_saving_is_read_with_the_slow_rank_unrecorded(tmp_path):
    """Every screen of ``comm_exposed`` reads one value, the exposed time, and none prints a paid time: the summary,
    the evidence's "paid ms", the metric's detail, the saving (base: 1.32 ms each; truth 0.15 ms of transfer).
    Fails on base."""
    rep = _report(tmp_path, _ddp(), unrecorded=2)
    f = _finding(rep, "comm_exposed")
    assert "pays for" not in f["summary"], f["summary"]
    assert "the step waits 1.32 ms (35.4%) in collectives, their transfer and any wait for a late rank together" \
        in f["summary"], f["summary"]
    (table,) = f["evidence"]
    (row,) = table["rows"]
    assert row[table["columns"].index("exposed ms")] == 1.324
    assert row[table["columns"].index("paid ms")] is None  # base 1.324
    assert "paid_ms_per_step" not in f["metric"]["detail"]
    assert f["metric"]["value"] == round(1.324 / 3.741, 4) or abs(f["metric"]["value"] - 0.354) < 0.001
    assert f.get("saving") is None, f.get("saving")  # base 1.324 ms/step: overlap hides no wait for a late rank
    assert unrecorded_rank_claims(Report.from_dict(rep)) == []


def test_the_skewed_all_to_all_claims_no_saving_off_an_unrecorded_ranks_wait(tmp_path):
    """The MoE's skew is the recorded ranks' messages (a fact: 4.0x), so the finding stays; its time is the exposed
    time, said beside the unrecorded rank, and no saving is claimed.  Fails on base (a saving off the least time)."""
    rep = _report(tmp_path, tt.SCENARIOS["moe_alltoall_skew"], unrecorded=3)
    f = _finding(rep, "alltoall_imbalance")
    assert f["metric"]["value"] == 4.0
    assert f.get("saving") is None, f.get("saving")
    assert "rank 3 (node0_4103) is not recorded" in f["summary"] and "what balanced splits save is not known" \
        in f["summary"], f["summary"]
    assert _finding(rep, "comm_exposed").get("saving") is None
    assert unrecorded_rank_claims(Report.from_dict(rep)) == []


def test_every_rank_recorded_keeps_the_paid_time(tmp_path):
    """Control (passes on base): the MoE job fully recorded reads its paid time and both savings."""
    rep = _report(tmp_path, tt.SCENARIOS["moe_alltoall_skew"], unrecorded=None)
    f = _finding(rep, "comm_exposed")
    assert f["metric"]["detail"]["paid_ms_per_step"] > 0 and "pays for" in f["summary"]
    assert f["saving"]["ms_per_step"] > 0 and _finding(rep, "alltoall_imbalance")["saving"]["ms_per_step"] > 0
    (table,) = f["evidence"]
    assert all(r[table["columns"].index("paid ms")] is not None for r in table["rows"])
    assert unrecorded_rank_claims(Report.from_dict(rep)) == []
