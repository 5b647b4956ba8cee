"""What the job-scope rules (``rank_straggler``, ``node_straggler``) share: findings over a :class:`JobView`,
in the framework's and the GPU vendor's words, and the ranks table they show."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from tb_gpu_advisor import devices, frameworks
from tb_gpu_advisor.job import adapt, context_tags
from tb_gpu_advisor.metrics.job import JobView, RankRow, med
from tb_gpu_advisor.model.schema import Action, Finding, Metric, Saving, Table
from tb_gpu_advisor.rules.base import titled, metric_in_words, of_window, table_in_words
from tb_gpu_advisor.rules.registry import REGISTRY
from tb_gpu_advisor.rules.savings import parts


def rank_columns(unit: str) -> list[str]:
    """The ranks table's columns, the first naming a row in the job's unit (``JobView.unit``: "rank" or "GPU")."""
    return [unit, "step ms", "compute ms", "exposed comm ms", "other ms", "step less comm ms"]


RANK_COLUMNS = rank_columns("rank")


def capital(word: str) -> str:
    """``word`` with its first letter a capital, the rest as written ("GPUs" stays "GPUs", not "Gpus")."""
    return word[:1].upper() + word[1:]


def rank_rows(ranks: Sequence[RankRow], mark: RankRow | None = None) -> list[list]:
    return [[r.label + (" (straggler)" if r is mark else ""), round(r.step_ms, 3), round(r.compute_ms, 3),
             round(r.comm_ms, 3), round(r.other_ms, 3), round(r.busy_ms, 3)] for r in ranks]


def ranks_table(job: JobView, title: str | None = None, mark: RankRow | None = None) -> Table:
    """Every rank, the most before its collectives first; a marked straggler leads.  Title and columns in the job's
    unit and scope ("Ranks (mean per step)", "GPUs (in the step)": :attr:`JobView.scope`)."""
    return Table(title or f"{capital(job.units)} ({job.scope})", rank_columns(job.unit),
                 rank_rows(sorted(job.ranks, key=lambda r: (r is not mark, -r.busy_ms)), mark))


def job_finding(job: JobView, rule_id: str, severity: str, summary: str, *, metric: Metric, saving_ms: float,
                assumption: str, evidence: list[Table], actions: list[Action], host: str | None,
                gpu: int | None = None, pool: str = "gpu_wait", title: str | None = None) -> Finding:
    """A finding over the whole job: id ``<rule>`` (one per session), prose in the vendor's words.  Each rule writes
    its rows in the job's unit itself (``JobView.unit`` / ``units``; ``title``: the rule's title in that unit, else
    the registered one)."""
    reg = REGISTRY[rule_id]
    step = job.step_ms
    v = max(0.0, min(saving_ms, step))

    def words(text: str) -> str:
        return devices.words(job.gpu_names, text)

    # the label's, meaning's and tables' window ("share of {step}", "({kept}, all GPUs)"), in the job's word where
    # every host kept one step
    noun = job.step_word if job.one_step else "step"
    evidence = [table_in_words(titled(lambda t: of_window(t, noun, job.per_step), t), words) for t in evidence]
    metric = metric_in_words(metric, words)
    metric = dataclasses.replace(metric, label=of_window(metric.label, noun, job.per_step),
                                 meaning=of_window(metric.meaning, noun, job.per_step))

    return Finding(
        id=rule_id, rule=rule_id, severity=severity, title=words(title or reg.title), summary=words(summary),  # type: ignore[arg-type]
        guide_section=reg.section, metric=metric,
        saving=Saving(ms_per_step=round(v, 3), percent_of_step=round(100.0 * v / step, 2) if step else 0.0,
                      assumption=words(assumption), recovers=parts(v, [("collectives", pool, v)])),
        evidence=evidence, actions=[Action(text=words(a.text), snippet=devices.code(job.gpu_names, a.snippet),
                                           snippet_lang=a.snippet_lang)
                                    for a in actions],
        host=host, gpu=gpu,
    )


def unrecorded_ranks_words(job: JobView, then: str) -> str:
    """What the recorded ranks' collectives cannot say where some of the job's ranks have no GPU work recorded
    (``JobView.unrecorded``), as one sentence ending in ``then`` (what the rule does not read from them); "" where
    every rank read ran GPU work.

    Why: the least time a rank spends in a call is its transfer only where every rank that enters the call is
    recorded -- the last to enter waits least.  A DDP job whose slow rank's trace lost its GPU side read its three
    recorded ranks' 1.32 ms a step of waiting for it as communication the step pays for, "8.4% of the link" and, with
    the parameter count, an AllReduce 17.8x slower than expected; its own trace was there, its GPU's side not
    recorded, so "profile every rank" is no answer either (``norank61``).  The types whose process groups hold
    none of them (``JobView.transfer_known``) are named as read; "" where every type's are (h37-group63)."""
    if not job.unrecorded:
        return ""
    types = job.types()
    known = [t for t in types if job.transfer_known(t)]
    if types and len(known) == len(types):  # no collective's process group holds them: nothing is unknown
        return ""
    one = len(job.unrecorded) == 1
    held = (f" No process group of {' or '.join(known)} holds {'it' if one else 'any of them'}: "
            f"{'its' if len(known) == 1 else 'their'} transfer is read." if known else "")
    return (f" The GPU work of {', '.join(job.unrecorded)} {'is' if one else 'are'} not recorded (the job line says "
            f"what {'its window holds' if one else 'their windows hold'} and how to record it): where "
            f"{'it takes' if one else 'they take'} part in these collectives, the time the recorded {job.units} spend "
            f"in them may be waiting for {'it' if one else 'them'}, which their traces cannot tell from the "
            f"transfer{then}.{held}")


def straggler_meaning(job: JobView) -> str:
    """What the straggler metrics measure (``rank_straggler.warning``'s meaning), in the job's unit."""
    return (f"a {job.unit}'s (or a whole node's) extra time before the collectives, above the other {job.units}' "
            "median, {per_step}")  # filled with the job's window by job_finding


def _framework(job: JobView) -> frameworks.Framework:
    """The job's framework, talking to the job as the host rules do (``rules.base.framework``): its tags (a serving
    engine, an old version), its kind (forward passes and work of no known kind are not told a training step's
    code: ``any_work``) and one process's GPUs (``alone``: no per-rank words)."""
    alone = job.processes == 1
    vendor = devices.vendor_of(job.gpu_names)
    fw = frameworks.for_vendor(job.framework, vendor)
    tags = context_tags(job.kind, job.tags, alone)
    adapted = adapt(fw, tags, job.engine)
    if not job.work_framework:
        return adapted
    # another framework's program under this one's profiler: its fixes, the capture's words (``Job.framework``)
    return frameworks.recorded_by(adapt(frameworks.for_vendor(job.work_framework, vendor), tags, None), adapted)


def vendor_fixes(job: JobView, *keys: str) -> list[Action]:
    """The job's GPU vendor's own fixes (``devices/<vendor>.py`` ``FIXES``): NVIDIA's tools for NVIDIA's GPUs only."""
    v = devices.vendor_of(job.gpu_names)
    return [v.FIXES[k] for k in keys]


def fixes(job: JobView, key: str, **fmt: object) -> list[Action]:
    return _framework(job).fix(key, **fmt)


def fixes_for(job: JobView, key: str, variants: Sequence[str]) -> list[Action]:
    return _framework(job).fixes_for(key, variants)


def slow_node(job: JobView) -> tuple[str, float, float, float] | None:
    """(host, extra wait ms, its ranks' largest exposed comm ms, the other nodes' median) of the node every rank of
    which waits less in the collectives than the other nodes' ranks (they enter last: the job waits for them),
    by the most; None without 2+ nodes of 2+ ranks, or when no node's ranks all wait less and do more before the
    collectives than the others' medians."""
    nodes = job.by_host()
    if len(nodes) < 2 or any(len(rs) < 2 for rs in nodes.values()):
        return None
    best = None
    for h, rs in nodes.items():
        others = [r for r in job.ranks if r.host != h]
        others_wait = med([r.comm_ms for r in others])
        extra = others_wait - max(r.comm_ms for r in rs)
        if min(r.busy_ms for r in rs) < med([r.busy_ms for r in others]):
            continue  # some rank of the node does not do more before the collectives: not the node's pace
        if extra > 0 and (best is None or extra > best[1]):
            best = (h, extra, max(r.comm_ms for r in rs), others_wait)
    return best
