"""§2 item 5, in the exchange itself: an all-to-all whose splits differ between ranks.

Mixture-of-experts routing and embedding lookups send a different amount from each rank; an all-to-all ends
when the rank that moves the most is done, and every other rank waits for it.  Metric: the largest rank's
message per call / the median rank's (the messages ``record_param_comms`` records), for all-to-alls whose exposed
transfer costs at least ``comm_bandwidth_low.min_share`` of the step.  Saving: the exposed all-to-all time less
what it would take with every rank's splits at the median: (1 - median / largest) of it.  Where the transfer is not
known (``JobView.transfer_known``: a rank of the job has no GPU work recorded), the all-to-all's exposed time stands
for it in the gate and the words, and no saving is claimed: that time may be a wait for the unrecorded rank.
"""

from __future__ import annotations

import dataclasses

from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.job.exchange import tagged_exchange
from tb_gpu_advisor.metrics.job import JobView
from tb_gpu_advisor.model.schema import Finding, Metric, Table
from tb_gpu_advisor.rules._job import fixes, job_finding, med, unrecorded_ranks_words
from tb_gpu_advisor.rules.base import grade
from tb_gpu_advisor.rules.registry import rule

ID = "alltoall_imbalance"
#: the title in the job's unit (``JobView.unit``)
TITLE = "All-to-all splits are skewed: every {unit} waits for the one that sends the most"


@rule(ID, "§2 item 5", TITLE.format(unit="rank"),
      thresholds=("alltoall_imbalance.warning", "alltoall_imbalance.critical", "comm_bandwidth_low.min_share"),
      scope="job")
def check(job: JobView) -> list[Finding]:
    skew = job.message_skew("AllToAll")
    if skew is None or not job.step_ms or skew[2] <= 0:
        return []
    rank, biggest, median = skew
    ratio = biggest / median
    known = job.transfer_known("AllToAll")  # else its exposed time: transfer and waiting, told apart by no trace
    paid = med([(job.paid_ms(r, "AllToAll") if known else r.collectives["AllToAll"][2]) or 0.0
                for r in job.ranks if "AllToAll" in r.collectives])
    sev = grade(ratio, "alltoall_imbalance.warning", "alltoall_imbalance.critical")
    if sev is None or paid / job.step_ms < T("comm_bandwidth_low.min_share"):
        return []
    save = paid * (1 - median / biggest)
    rows = sorted(([r.label, r.messages["AllToAll"][0], r.collectives.get("AllToAll", (0, 0, 0))[2]]
                   for r in job.ranks if "AllToAll" in r.messages), key=lambda x: -x[1])[:16]
    f = job_finding(
        job, ID, sev,
        f"{rank.label} sends {biggest / 2**20:.1f} MiB per all-to-all, {ratio:.1f}x the median {job.unit}'s "
        f"{median / 2**20:.1f} MiB; the exchange ends when it is done, so the all-to-all's exposed transfer"
        + (f", {job.part_of_step(paid)}, is set by its splits." if known else
           f" is set by its splits; its exposed time, {job.part_of_step(paid)}, holds it beside any wait for a late "
           f"{job.unit}." + unrecorded_ranks_words(job, ": what balanced splits save is not known")),
        metric=Metric(id="alltoall_skew", label="Largest / median all-to-all message", value=round(ratio, 3),
                      unit="ratio", display=f"{ratio:.1f}x", good_direction="lower", status=sev,
                      meaning=f"the largest {job.unit}'s all-to-all message per call / the median {job.unit}'s",
                      threshold=T("alltoall_imbalance.warning"),
                      detail={"rank": rank.label, "largest_bytes": biggest, "median_bytes": median,
                              "threshold_name": "alltoall_imbalance.warning"}),
        saving_ms=save, pool="gpu_wait",
        assumption=f"balanced splits: every {job.unit} moves the median {job.unit}'s message, and the exchange takes "
                   "that much less",
        evidence=[Table(f"All-to-all message per {job.unit} (largest first)", [job.unit, "bytes per call", "exposed ms"],
                        rows)],
        actions=fixes(job, _fix_key(job)), host=rank.host, gpu=rank.gpu, title=TITLE.format(unit=job.unit),
    )
    return [f if known else dataclasses.replace(f, saving=None)]


def _fix_key(job: JobView) -> str:
    """The fixes' key for the job's exchange: ``alltoall_imbalance:<kind>`` where the job stage read what the
    all-to-all moves (``job.exchange``; a framework without that variant falls back to the rule's), else the rule's.

    Why: an MoE's splits are balanced by its router (an auxiliary loss, a capacity factor), a recommender's by its
    sharding plan, sequence parallelism's by each rank's share of the tokens; the rule told every job both MoE's and
    TorchRec's ways, where ``comm_exposed`` already followed the kind (h37-a2afix's left)."""
    kind = tagged_exchange(job.tags)
    return f"{ID}:{kind}" if kind else ID
