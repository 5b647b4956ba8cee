"""§2 item 5, across nodes: every rank of one node is slower, and the other nodes' ranks wait for it.

A node whose ranks all enter the collectives last points at the machine (clocks and thermals, host CPU
contention, a slow NIC or file system), not at a rank's share of the work.  Metric: how much longer the other
nodes' ranks (their median) wait in exposed collectives per step than the node's ranks that wait most, as a
share of the job's median step; every rank of the node must also spend at least the others' median time before
its collectives.  Needs 2+ host files of 2+ ranks each; clock-free.  Saving: that wait.
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.job import JobView
from tb_gpu_advisor.model.schema import Action, Finding
from tb_gpu_advisor.rules._job import job_finding, ranks_table, slow_node, straggler_meaning, vendor_fixes
from tb_gpu_advisor.rules.base import grade, ms, pct, share_metric
from tb_gpu_advisor.rules.registry import rule

ID = "node_straggler"
#: the title in the job's unit (``JobView.units``): "all its GPUs" where one process drives several GPUs
TITLE = "A straggler node: all its {units} are slower, and the other nodes wait for them"

_NODE_FIXES = [
    Action(text="Compare its host: CPU contention from data-loader workers or other jobs, the NIC and the file "
                "system it reads from; exclude the node from the next run to confirm.",
           snippet="srun --exclude=<node> ...   # Slurm; on Kubernetes: cordon the node", snippet_lang="shell"),
]


@rule(ID, "§2 item 5", TITLE.format(units="ranks"),
      thresholds=("rank_straggler.warning", "rank_straggler.critical"), scope="job")
def check(job: JobView) -> list[Finding]:
    found = slow_node(job)
    if found is None or not job.step_ms:
        return []
    host, extra, comm, others_comm = found
    share = extra / job.step_ms
    sev = grade(share, "rank_straggler.warning", "rank_straggler.critical")
    if sev is None:
        return []
    n = len(job.by_host()[host])
    return [job_finding(
        job, ID, sev,
        f"The other nodes' {job.units} wait {ms(others_comm)} {job.per_step} in exposed collectives (median); every one of the {n} "
        f"{job.units} on {host} waits at most {ms(comm)}: they enter the collectives last, and the job runs at {host}'s "
        f"pace, {ms(extra)} ({pct(share)} of the {ms(job.step_ms)} {job.step_word if job.one_step else 'step'}) {job.per_step}.",
        metric=share_metric("node_extra_share", "Slow node's extra time, share of {step}", share, "rank_straggler.warning",
                            meaning=straggler_meaning(job), severity=sev, detail={"node": host, "extra_ms_per_step": extra, "node_comm_ms": comm,
                                                  "others_comm_ms": others_comm, "nodes": len(job.hosts)}),
        saving_ms=extra, assumption=f"{host} runs as fast as the other nodes: their {job.units} stop waiting for it",
        evidence=[ranks_table(job)], actions=vendor_fixes(job, "clocks") + list(_NODE_FIXES), host=host,
        title=TITLE.format(units=job.units),
    )]
