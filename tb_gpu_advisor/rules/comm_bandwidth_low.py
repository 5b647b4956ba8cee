"""§2.1 A collective moves its data far below the link's bandwidth.

Per collective type with message sizes in the trace (``record_param_comms``): bus bandwidth -- nccl-tests'
definition, from the mean message and the transfer time per call (the least time any rank spends in it, so
waiting for a late rank is not counted) -- against the link: NVLink by GPU generation when every rank is on one
host file, else the user's network bandwidth per GPU between hosts (``--net-gbps``, the tab's setting; default
``comm.net_GBps``).  Judged only for messages of at least ``comm_bandwidth_low.min_message_bytes`` (smaller ones are
latency-bound) whose exposed transfer costs at least ``comm_bandwidth_low.min_share`` of the step.  Saving: the
exposed transfer time above what the collective would take at the warning level's bandwidth (half the link).
Not judged where ranks of the job have no GPU work recorded (``JobView.unrecorded``: a rank's trace without its CUDA
activity, its GPU records lost): the rank that entered a call last may be one of them, so the recorded ranks' least
time in it is no transfer (``JobView.bus_bandwidth`` reads none).
"""

from __future__ import annotations

from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.job import JobView
from tb_gpu_advisor.model.schema import Finding, Metric, Table
from tb_gpu_advisor.rules._job import job_finding, med, vendor_fixes
from tb_gpu_advisor.rules.base import grade, pct
from tb_gpu_advisor.rules.registry import rule

ID = "comm_bandwidth_low"

#: The vendor's fixes it gives (``devices/<vendor>.py`` ``FIXES``): NCCL's or RCCL's log, the links and the NICs.
_FIXES = ("transport", "network")


@rule(ID, "§2.1", "Collectives move data far below the link's bandwidth",
      thresholds=("comm_bandwidth_low.warning", "comm_bandwidth_low.critical", "comm_bandwidth_low.min_message_bytes",
                  "comm_bandwidth_low.min_share", "comm.net_GBps"), scope="job")
def check(job: JobView) -> list[Finding]:
    if not job.step_ms:
        return []
    across = len(job.hosts) > 1
    gbps = job.options.link_gbps
    link = gbps * 1e9 if across else job.link_bandwidth
    given = "the user's --net-gbps / network setting" if job.options.net_gbps is not None else "default comm.net_GBps"
    source = f"{gbps:g} GB/s per GPU between hosts ({given})" if across else job.link_source
    if not link:
        return []
    worst = None
    rows = []
    for t in job.types():
        bw = job.bus_bandwidth(t)
        if bw is None:
            continue
        size, bus = bw
        paid = med([job.paid_ms(r, t) or 0.0 for r in job.ranks if t in r.collectives])  # known: a rate was read
        rows.append([t, size, round(bus / 1e9, 2), round(bus / link, 3), paid])
        if size < T("comm_bandwidth_low.min_message_bytes") or paid / job.step_ms < T("comm_bandwidth_low.min_share"):
            continue
        ratio = bus / link
        if grade(ratio, "comm_bandwidth_low.warning", "comm_bandwidth_low.critical") and (worst is None or ratio < worst[1]):
            worst = (t, ratio, bus, size, paid)
    if worst is None:
        return []
    t, ratio, bus, size, paid = worst
    sev = grade(ratio, "comm_bandwidth_low.warning", "comm_bandwidth_low.critical")
    save = max(0.0, paid * (1 - ratio / T("comm_bandwidth_low.warning")))
    return [job_finding(
        job, ID, sev,
        f"{t} moves {size / 2**20:.0f} MiB per call at {bus / 1e9:.1f} GB/s of bus bandwidth, {pct(ratio)} of the "
        f"{link / 1e9:.0f} GB/s {'between hosts' if across else 'of the link'} ({source}); its exposed transfer takes "
        f"{job.part_of_step(paid)}.",
        metric=Metric(id="bus_bandwidth_ratio", label="Bus bandwidth / link", value=round(ratio, 4), unit="ratio",
                      display=f"{ratio:.2f}", good_direction="higher", status=sev,
                      meaning="bus bandwidth of the collective (nccl-tests' definition) / the link's bandwidth",
                      threshold=T("comm_bandwidth_low.warning"),
                      detail={"collective": t, "bytes_per_call": size, "bus_bytes_per_s": bus, "link_bytes_per_s": link,
                              "link_source": source, "threshold_name": "comm_bandwidth_low.warning"}),
        saving_ms=save, pool="exposed_comm",
        assumption=f"the collective reaches half the link's bandwidth ({link / 2e9:.0f} GB/s), as NCCL does on a "
                   f"healthy fabric for messages this size",
        evidence=[Table(f"Collectives with message sizes (median {job.unit})", ["collective", "bytes per call", "bus GB/s",
                                                                          "of link", "exposed transfer ms"], rows)],
        actions=vendor_fixes(job, *_FIXES), host=None,
    )]
