"""The job view: every rank of a session side by side, from the per-host reports (issue #19).

A rank is one GPU of one host file (a PyTorch rank, an XLA device).  Per rank, per step (mean over its kept
steps): step time, compute (``device_compute``), exposed communication (``collectives``: collective time no
compute overlaps) and the rest of the step.  The job view is built from the small per-host summaries, never
from events, so its memory grows with ranks, not with trace size; no clock alignment between hosts is needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common import fmt
from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.metrics.comm import step_calls, step_gain
from tb_gpu_advisor.model.logdir import RankRuns
from tb_gpu_advisor.model.callrows import CALL_ROWS_CAP, call_rows, call_times, calls_cut
from tb_gpu_advisor.model.schema import HostReport
from tb_gpu_advisor.model.steprows import StepRowTable
from tb_gpu_advisor.steps.types import UNMARKED_SOURCES


def med(xs) -> float:  # noqa: ANN001 - any iterable of numbers
    """The median (0 for none): the one "median rank" every job-view number and finding uses.  ``statistics.median``'s
    arithmetic (the middle value, or the mean of the two middle ones), without importing ``statistics`` (it pulls in
    ``fractions`` and ``decimal``: ~10 ms of every ``report``, issue #30 item 3)."""
    xs = sorted(xs)
    n = len(xs)
    if not n:
        return 0.0
    return float(xs[n // 2]) if n % 2 else float((xs[n // 2 - 1] + xs[n // 2]) / 2)


def med_count(xs) -> float:  # noqa: ANN001 - any iterable of numbers
    """The median of counts (calls a rank made): where every rank's count is whole (one pass, or as many calls in
    each step), a count some rank made -- of two middle ones the higher -- never their mean: 0 and 1 calls are no
    "0.5 calls in the pass" (h37-walk25, ``--forms`` 51122: a Broadcast that began before one rank's pass and inside
    another's).  The higher, as every rank sampled ran the type: the lower may be a rank whose only call began
    before its kept steps (time in them, no call counted).  Counts already per-step means keep :func:`med`."""
    xs = sorted(xs)
    if len(xs) % 2 or any(x != int(x) for x in xs):
        return med(xs)
    return float(xs[len(xs) // 2])


@dataclass
class CollectiveSummary:
    """One collective type across the job, per step, at the median rank (of the ranks that run it)."""

    type: str
    calls: float
    ms: float
    exposed_ms: float
    #: the least any rank spends in it; None where ranks of the job have no GPU work recorded (:attr:`JobView.unrecorded`:
    #: the least time may be a wait for one of them, no transfer)
    transfer_ms: float | None
    #: exposed, up to the transfer: what the step pays for; None where the transfer is unknown (as ``transfer_ms``)
    paid_ms: float | None
    bytes_per_call: float | None
    bus_bytes_per_s: float | None


@dataclass
class RankRow:
    host: str  # the host file's host (a node: its ranks share a machine)
    gpu: int
    step_ms: float
    compute_ms: float  # non-collective kernels
    comm_ms: float  # exposed collectives: the rank waits in them
    other_ms: float  # idle, copies, host work: the rest of the step
    #: collective type -> (calls, ms, exposed ms) per step on this rank
    collectives: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    #: collective type -> (bytes per call, group size or 0) where the trace records the message
    messages: dict[str, tuple[float, int]] = field(default_factory=dict)
    #: step number -> (step ms, exposed comm ms) of that step on this rank: the ranks aligned by step number
    #: (every rank numbers its steps alike: ``ProfilerStep#N``, ``step_num``)
    steps: dict[int, tuple[float, float]] = field(default_factory=dict)
    rank: int | None = None  # the job's global rank (PyTorch distributedInfo), None unknown
    #: collective type -> the transfer per step in this rank's calls: the least time any GPU of its host spends in each
    #: call, summed (``metrics.comm.matched_transfer_ps``); a type absent: its own time (a report before 0.1.0+a35)
    transfers: dict[str, float] = field(default_factory=dict)
    #: collective type -> ``GpuSummary.calls``: the calls as columns (``model.callrows``: group, step, bytes, transfer ms),
    #: what matches a call across host files; a type absent: a report before 0.1.0+a35
    calls: dict[str, dict] = field(default_factory=dict)
    #: collective type -> the transfer per step over its calls' whole time where some run past the kept steps
    #: (``CollectiveStat.whole_transfer_ms_per_step``); a type absent: as ``transfers`` (every call inside the steps,
    #: or a report before 0.1.0+a38)
    whole_transfers: dict[str, float] = field(default_factory=dict)
    #: collective type -> calls that started before the first kept step and run into it (``CollectiveStat.calls_before``):
    #: their time is in the type's ms, their calls are not in its calls; a type absent: none (or a report before a40)
    calls_before: dict[str, int] = field(default_factory=dict)
    #: collective type -> (ms, calls) per step of the GPU idle between its small calls launched one by one
    #: (``CollectiveStat.paced_ms_per_step``): the calls' count's cost, past their time; a type absent: none (or a
    #: report before 0.1.0+a41)
    paced: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: ms per step the rank's GPU idled while its host waited in a communication library's calls (``MPI_Wait``:
    #: ``GpuSummary.host_calls_ms``, part of ``comm_ms``); None: a report before 0.1.0+a52
    host_calls_ms: float | None = None
    #: the GPU's kernels' longest single calls (``GpuSummary.longest_calls``: [kernel, call index, ms, calls, ms per
    #: step]); None: a report before 0.1.0+a78
    longest_calls: list | None = None
    #: the GPU's compute kernels' summed time (``GpuSummary.kernel_ms``: [kernel, ms per step], largest first, a
    #: bounded list); None: a report before 0.1.0+a80
    kernel_ms: list | None = None
    #: collective type -> the job's global ranks of every process group its calls ran in on this rank
    #: (``GpuSummary.collective_ranks``); a type absent: unknown (the trace records no group's ranks, or a report
    #: before 0.1.0+a84)
    group_ranks: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """``host/GPU<n>``, or with the job's global rank where the trace names it: ``rank 11 (node1/GPU3)``."""
        where = f"{self.host}/GPU{self.gpu}"
        return f"rank {self.rank} ({where})" if self.rank is not None else where

    @property
    def busy_ms(self) -> float:
        """The step less its exposed communication: what the rank does before it can enter the collectives."""
        return max(0.0, self.step_ms - self.comm_ms)


def calls_before_note(counts: dict[str, int], gpus: int, units: str = "GPUs", step: str = "step") -> str:
    """Words for a collectives table whose time holds calls that started before the first kept step and run into
    it (``CollectiveStat.calls_before``; ``counts`` summed over the table's ``gpus``), "" where none does: their time
    inside the steps is in the table's ms, as the ledger paints it, and each call counts in the step it starts in, a
    dropped one -- one home for the host's table and the session's.  ``step``: the window's noun ("step" over
    several steps, ``rules.base.Ctx.step_noun`` where the capture holds one): a call that started before the one pass
    a capture holds counts in no kept window, and "the first kept step" named steps the capture does not hold
    (h37-walk25's `--forms` 51122 under h37-onepass2's law)."""
    named = [f"{plural(n, t + ' call')}" for t, n in sorted(counts.items()) if n]
    if not named:
        return ""
    over = f" over the {gpus} {units}" if gpus > 1 else ""
    if step == "step":
        return (f"; {' and '.join(named)}{over} started before the first kept step and ran into it: their time inside "
                "the steps is in ms, their calls count in the step they started in")
    return (f"; {' and '.join(named)}{over} started before the {step} and ran into it: their time inside the {step} is "
            "in ms, their calls are not counted in it")


def step_word(kind: str, confidence: str, marked: bool) -> str:
    """The job's own word for its step: "engine step" (a serving engine), "forward pass" (inference), else "step" --
    only where the job's kind is more than a guess (``confidence`` not "low") and the capture marks the step.  A step
    the capture does not mark (``marked`` False: the whole window, or the one pass it was read as,
    ``steps.types.UNMARKED_SOURCES``) is "pass": it may hold several calls of the model launched back to back, so it
    is neither one of the job's steps nor its forward pass (h37-words3: torch_fp16_inference_unmarked's 10 forward
    calls read "of the 36.6 ms step").  The one table the host rules (``rules.base.Ctx.unit``), the job rules
    (:attr:`JobView.step_word`) and the capture's own findings read."""
    if not marked:
        return "pass"
    word = {"serving": "engine step", "inference": "forward pass"}.get(kind, "step")
    return word if confidence != "low" else "step"


@dataclass
class JobView:
    framework: str
    gpu_names: list[str]
    ranks: list[RankRow] = field(default_factory=list)
    #: AllReduce time per step expected from the parameter count and the link (``--params``), None unknown
    expected_allreduce_ms: float | None = None
    #: GPU-to-GPU bandwidth within a host (bytes/s, per direction) and where it comes from; None unknown
    link_bandwidth: float | None = None
    link_source: str = ""
    #: the framework that ran the work where another's profiler wrote the captures (``CaptureQuality.work_framework``),
    #: "" where they are one: its fixes, the writer's capture words (``frameworks.recorded_by``)
    work_framework: str = ""
    #: the user's settings of this analysis (the network between hosts: ``net_gbps``), handed in by the merge
    options: UserOptions = field(default_factory=UserOptions)
    #: what the job is, as its first host's report says (``HostReport.job``): the fixes' tags and serving engine
    tags: tuple[str, ...] = ()
    engine: str | None = None
    #: the first host's kind of work (``job.kind``): with :attr:`processes`, the context its fixes are chosen for
    kind: str = "unknown"
    #: how many processes drive the rows' GPUs (each host file's ``capture.processes``); None: every GPU its own
    processes: int | None = None
    #: how sure the first host's job stage is of :attr:`kind` (``low``: a guess, so the step keeps its plain name)
    kind_confidence: str = "low"
    #: every analysed host kept one step (``HostReport.steps["count"]``): the job's numbers are that step's
    one_step: bool = False
    #: every analysed host's steps are ones its capture marks -- not the whole window, nor the one pass it was read as,
    #: which may hold several calls of the model (``rules.base.Ctx.unit``): only then is the step the job's own unit
    marked: bool = True
    #: the job's other ranks as sibling run folders hold them (``model.logdir.RankRuns``: one folder per rank), which
    #: a rank read alone names; None where the session's own files are all the job discovery saw
    rank_runs: RankRuns | None = None
    #: the job's ranks read with the session whose windows hold no GPU work beside ranks that ran it (a rank's trace
    #: written with its GPU activity off or its records lost, a window ended in its start-up, a CPU-only process), as
    #: the report names them: no row of :attr:`ranks` -- their GPU time is unknown, not zero --, yet a collective the
    #: rows ran may have waited for them, so the least time a recorded rank spends in it is no transfer
    unrecorded: tuple[str, ...] = ()
    #: the job ranks of :attr:`unrecorded`, where every one's file states its rank (``Job.idle_rank_numbers``); None
    #: where one's does not: which process groups could have waited for them (:meth:`transfer_known`)
    unrecorded_ranks: tuple[int, ...] | None = None

    @property
    def step_word(self) -> str:
        """The job's word for its step: "engine step" (serving), "forward pass" (inference), else "step"."""
        return step_word(self.kind, self.kind_confidence, self.marked)

    def of_step(self, step_ms: float | None = None) -> str:
        """"of each 20.6 ms step", or "of the 20.6 ms step" where every host kept one: the job rules' phrase, as
        ``rules.base.Ctx.of_step`` is the host rules' (h37-left60)."""
        t = fmt.ms(self.step_ms if step_ms is None else step_ms)
        return f"of the {t} {self.step_word}" if self.one_step else f"of each {t} step"

    def part_of_step(self, part: float | None, step_ms: float | None = None) -> str:
        """A part of the step and :meth:`of_step`, printed to the digits that tell them apart (``fmt.ms_apart``), as
        ``rules.base.Ctx.part_of_step`` is the host rules'."""
        p, t = fmt.ms_apart(part, self.step_ms if step_ms is None else step_ms)
        return f"{p} of the {t} {self.step_word}" if self.one_step else f"{p} of each {t} step"

    @property
    def per_step(self) -> str:
        """"per step", or "in the step" where every host kept one."""
        return f"in the {self.step_word}" if self.one_step else "per step"

    @property
    def scope(self) -> str:
        """What a table of the job's means holds, for its title: "mean per step", or "in the step" where every host
        kept one (a mean of one step is that step: h37-words3, the lone V100 BERT's "GPUs (mean per step)")."""
        return self.per_step if self.one_step else "mean per step"

    @property
    def unit(self) -> str:
        """What a row is, in the report's words: "rank" where each GPU is a process of its own, else "GPU" (one
        TensorFlow process driving 8 GPUs under MirroredStrategy is one worker, not 8 ranks)."""
        return "GPU" if self.processes is not None and self.processes < len(self.ranks) else "rank"

    @property
    def units(self) -> str:
        """:attr:`unit` in the plural ("ranks", "GPUs"): a job rule composes its sentences from the two, so no
        finished text is reworded after the fact (h37-left29)."""
        return self.unit + "s"

    def transfer_ms(self, typ: str) -> float:
        """A collective type's transfer time per step: the least time any rank that runs it spends in it -- call by
        call across host files where they agree on the calls (:meth:`matched_transfer_ms`); else within a host, call
        by call (:attr:`RankRow.transfers`: in each call the GPU that enters last), across hosts the least of those.
        Every rank leaves a collective together, so the one that enters it last waits least; the others' extra time
        is waiting for it.  Needs no clock alignment between nodes."""
        m = self.matched_transfer_ms(typ)
        if m is not None:
            return m
        xs = [min(r.collectives[typ][1], r.transfers.get(typ, r.collectives[typ][1])) for r in self.ranks
              if typ in r.collectives]
        return min(xs) if xs else 0.0

    def matched_transfer_ms(self, typ: str) -> float | None:
        """The transfer per step matched call by call across host files: each call keyed by (process group, step,
        order within the group in that step, message bytes), the least time any rank's host spends in it, summed over
        the calls, per kept step.  Only each call's *duration* is compared -- no clock is shared between machines.
        None where fewer than two host files run the type, a rank carries no calls, or the ranks disagree on the calls'
        sequence (count, groups, steps, sizes) or on the steps kept: the least host's reading stands then."""
        rs = [r for r in self.ranks if typ in r.collectives]
        if len({r.host for r in rs}) < 2:
            return None
        keyed = [_keyed(r.calls.get(typ)) for r in rs]
        if any(k is None for k in keyed):
            return None
        (keys0, _, n0), rest = keyed[0], keyed[1:]
        if not keys0 or not n0 or any(k != keys0 or n != n0 for k, _, n in rest):
            return None
        least = [min(col) for col in zip(*(ms for _, ms, _ in keyed))]
        return sum(least) / n0

    def replay_gain_ms(self, late: RankRow) -> float | None:
        """The step time per step given back where rank ``late`` keeps pace, across host files: every collective type
        that every rank runs, its calls matched by (process group, step, order within the group, bytes) as
        :meth:`matched_transfer_ms` matches them, replayed step by step with ``late`` ready when the last of the others
        is (``metrics.comm.step_gain``: the one home of that replay, ``late_rank``'s within a host).  The clock is the
        calls' ends, which every rank shares (each leaves a collective together): each rank's arrival and readiness
        are read before the call's end (``CollectiveStat.call_times``), the ends after the step's first.  None where a
        type's calls do not match across the ranks, a report carries no call times (before 0.1.0+a89), no type is
        run by every rank, or another rank enters a step's last call last: the replay holds each other rank's
        readiness where it was, which is right for work that ran inside its wait (DDP's next bucket) and not for work
        that waited on the earlier calls' results -- there that rank's pace, not the replay, says what reaches the
        step's end (wild/dlrm_v100: rank 7 last in the forward's all-to-alls, ranks 4-5 in the backward's calls; the
        replay read 3 us of its 1.1 ms lead).

        Why: the others' wait summed over the calls holds their own next work (the next bucket's compute, their
        host's launches), which comes back on the step's path once the late rank is on time -- the straggler's
        saving was that wait, above the step it gives back (session 68, as h37-late67 within one host)."""
        if late not in self.ranks or len(self.ranks) < 2:
            return None
        matched = self._matched_call_times()
        if matched is None:
            return None
        times, steps, kept = matched
        end = np.median(times[:, :, 2], axis=0)  # one instant on every rank: each call's end after its step's first
        s, r = end - times[:, :, 0], end - times[:, :, 1]
        k = self.ranks.index(late)
        by_step = step_calls(steps)
        if not _paces_last_calls(s, end, by_step, k):
            return None
        return float(step_gain(s, np.broadcast_to(end, s.shape), r, steps, k, by_step).sum()) / kept

    def _matched_call_times(self) -> tuple[np.ndarray, np.ndarray, int] | None:
        """The calls of every collective type that every rank runs, matched across the ranks as
        :meth:`matched_transfer_ms` matches them: (times, steps, kept steps) -- ``times`` ranks x calls x (arrive,
        ready, at) ms, the calls type after type and by key within a type; ``steps`` each call's step.  None where a
        type's keys or kept steps differ between the ranks or between types, a rank carries no call times, or no type
        is run by every rank.  Why every rank's keys must agree: the replay pairs each call across the ranks by its
        position, so one missing or extra call would pair unlike calls."""
        per_type: list[tuple[list, list[int]]] = []  # each type: (its times on every rank, each call's step)
        kept = None
        for typ in self.types():
            if any(typ not in r.collectives for r in self.ranks):
                continue
            keyed = [_keyed(r.calls.get(typ), times=True) for r in self.ranks]
            if any(k is None for k in keyed):
                return None
            keys0, _, n = keyed[0]
            if not keys0 or any(ks != keys0 or m != n for ks, _, m in keyed[1:]) or (kept is not None and n != kept):
                return None
            kept = n
            per_type.append(([vals for _, vals, _ in keyed], [key[1] for key in keys0]))
        if not per_type or not kept:
            return None
        times = np.hstack([np.asarray(t, dtype=np.float64).reshape(len(self.ranks), -1, 3) for t, _ in per_type])
        steps = np.asarray([st for _, sts in per_type for st in sts], dtype=np.int64)
        return times, steps, kept

    def transfer_matching(self, typ: str) -> str | None:
        """Words for how the job's transfer of ``typ`` was read across host files: None where one host file runs it
        or the calls were matched across them; else why the least host's reading stands."""
        rs = [r for r in self.ranks if typ in r.collectives]
        if len({r.host for r in rs}) < 2 or self.matched_transfer_ms(typ) is not None:
            return None
        cut = [r for r in rs if calls_cut(r.calls.get(typ))]
        if cut:
            return (f"a {self.unit} runs {plural(int(cut[0].calls[typ].get('count') or 0), 'call')} of it in its kept "
                    f"steps, more than the {CALL_ROWS_CAP:,} a report carries call by call, so no call is matched across "
                    "host files and the job's transfer is the least host's")
        if any(not r.calls.get(typ) for r in rs):
            return "a host's report carries no per-call times, so the job's transfer is the least host's"
        return ("the host files do not agree on the calls' sequence (count, process groups, steps or sizes), so no "
                "call is matched across them and the job's transfer is the least host's")

    def bus_bandwidth(self, typ: str) -> tuple[float, float] | None:
        """(bytes per call, bus bandwidth in bytes/s) of a collective type, from the messages the trace records and
        the transfer time per call; nccl-tests' bus factors: AllReduce 2(n-1)/n, AllGather (the message is one
        rank's shard: n of them arrive), ReduceScatter and AllToAll (n-1)/n, others 1.  None without sizes, and where
        ranks of the job have no GPU work recorded (:attr:`unrecorded`): the rank that entered a call last -- the one
        whose time in it is the transfer -- may be one of them, so the recorded ranks' least time is transfer and
        waiting, and a rate from it no bandwidth (a DDP job whose slow rank's trace lost its GPU side read "32 MiB per
        call at 38.0 GB/s, 8.4% of the link" of a 150 us transfer: ``norank61``)."""
        size = self.message_bytes(typ)
        t = self.call_transfer_ms(typ)
        if size is None or not t or not self.transfer_known(typ):
            return None
        found = [r.messages[typ] for r in self.ranks if typ in r.messages and typ in r.collectives]
        n = max((m[1] for m in found), default=0) or len(self.ranks)
        total = size * n if typ == "AllGather" else size  # nccl-tests' S: the whole gathered buffer
        factor = {"AllReduce": 2 * (n - 1) / n}.get(typ, (n - 1) / n if typ in ("AllGather", "ReduceScatter", "AllToAll")
                                                       else 1.0) if n > 1 else 1.0
        return size, total / (t / 1e3) * factor

    def message_bytes(self, typ: str) -> float | None:
        """A collective type's bytes per call at the median rank, from the messages the trace records; None without
        sizes.  A fact of the calls, kept where no rate is read from them (:meth:`bus_bandwidth`)."""
        found = [r.messages[typ][0] for r in self.ranks if typ in r.messages and typ in r.collectives]
        return med(found) if found else None

    def call_transfer_ms(self, typ: str) -> float | None:
        """A collective type's transfer per call, ms: the time a rate's bytes moved in.  The calls counted
        (``CollectiveStat.calls_per_step``: those that start in the kept steps) over their whole time
        (``whole_transfers``): where the host files' calls are matched call by call, their matched transfer per call
        (stretched by how far the calls run past the steps); else per rank, its host's transfer of those calls per
        call, the least rank's -- the one that enters each call last waits least in it.  None where no rank counts a
        call.

        Why not the transfer per step over the calls per step: the transfer per step holds, as the ledger does, the
        part of a call that started before the first kept step and runs into it, a call the count leaves out -- two
        ranks' queued 32 MiB all-reduces of 2.18 ms each read 3.26 ms a call (10.3 GB/s for 15.4), the time of one call
        more over the calls of the rank that started the fewest (h37-comm3)."""
        rs = [r for r in self.ranks if typ in r.collectives and r.collectives[typ][0] > 0]
        if not rs:
            return None
        m = self.matched_transfer_ms(typ)
        if m is not None:
            t = m * self._whole_ratio(typ) / min(r.collectives[typ][0] for r in rs)
            return t if t > 0 else None
        per = [r.whole_transfers.get(typ, min(r.collectives[typ][1], r.transfers.get(typ, r.collectives[typ][1])))
               / r.collectives[typ][0] for r in rs]
        t = min(per)
        return t if t > 0 else None

    def calls_before_note(self) -> str:
        """The collectives table's words for calls that started before the first kept step and run into it, "" where
        none does (:func:`calls_before_note`)."""
        counts: dict[str, int] = {}
        for r in self.ranks:
            for t, n in r.calls_before.items():
                counts[t] = counts.get(t, 0) + n
        return calls_before_note(counts, len(self.ranks), self.units, self.step_word if self.one_step else "step")

    def _whole_ratio(self, typ: str) -> float:
        """How much longer a collective type's calls are than their time inside the kept steps (1: every call ends
        inside them): the transfer per step counts only that time, as the ledger does, while a rate needs each call's
        whole time -- queued all-reduces that nobody waits for run behind the steps.  The most any rank's calls run
        past the steps (the one whose calls the steps cut the most)."""
        out = 1.0
        for r in self.ranks:
            x, w = r.transfers.get(typ), r.whole_transfers.get(typ)
            if x and w and w > x:
                out = max(out, w / x)
        return out

    def message_skew(self, typ: str) -> tuple[RankRow, float, float] | None:
        """(the rank with the largest message, its bytes per call, the median rank's) of a collective type whose
        messages the trace records on 2+ ranks; None otherwise.  An all-to-all's splits differ per rank (MoE
        routing, embedding lookups): every rank waits for the one that moves the most."""
        found = [(r, r.messages[typ][0]) for r in self.ranks if typ in r.messages]
        if len(found) < 2:
            return None
        top = max(found, key=lambda x: x[1])
        return top[0], top[1], med(b for _, b in found)

    def last_per_step(self) -> list[tuple[int, RankRow, float]]:
        """Per step number every rank has: (step, the rank that waits least in exposed collectives -- the one that
        enters them last --, how much less than the median rank it waits)."""
        common = set.intersection(*(set(r.steps) for r in self.ranks)) if self.ranks else set()
        out = []
        for step in sorted(common):
            last = min(self.ranks, key=lambda r: r.steps[step][1])
            out.append((step, last, med(r.steps[step][1] for r in self.ranks) - last.steps[step][1]))
        return out

    def host_calls_transfer_ms(self) -> float | None:
        """The communication itself in the hosts' communication calls (an MPI job's ``MPI_Wait``, no collective
        kernel): the least wait any rank's GPU shows in them, as :meth:`transfer_ms` reads a collective kernel -- every
        rank leaves the exchange together, so the one that enters it last waits least; the others' extra time is
        waiting for it (``rank_straggler``'s).  Read over the ranks that wait in such calls at all; None where fewer
        than two do, or a rank's report predates the reading (0.1.0+a52): one rank cannot tell the two apart."""
        if any(r.host_calls_ms is None for r in self.ranks):
            return None
        xs = [r.host_calls_ms for r in self.ranks if r.host_calls_ms]
        return min(xs) if len(xs) >= 2 else None

    def transfer_known(self, typ: str) -> bool:
        """Whether the least time a rank spends in a collective type is its transfer: not where ranks of the job have
        no GPU work recorded (:attr:`unrecorded`) -- the rank entering a call last, which waits least, may be one of
        them, so the recorded ranks' least time is transfer and waiting together -- unless no process group the ranks
        ran the type in holds one of them (:attr:`RankRow.group_ranks`): its ranks all the rows' own, or none of
        :attr:`unrecorded_ranks`.  A call waits only for its own group's ranks, so a tensor-parallel pair of recorded
        ranks never waited for an unrecorded rank of the data-parallel group.  A group's ranks unknown (a PyTorch
        before 2.1 writes none, ``"[]"``) and an unrecorded rank's number unknown: not known, as before.  The one
        question every reading of the transfer asks (the collectives table, ``comm_exposed``'s paid time, the bus
        bandwidth, ``allreduce_slow``'s judgement)."""
        if not self.unrecorded:
            return True
        rs = [r for r in self.ranks if typ in r.collectives]
        if not rs or any(typ not in r.group_ranks for r in rs):
            return False
        members = {x for r in rs for x in r.group_ranks[typ]}
        if members <= {r.rank for r in self.ranks if r.rank is not None}:
            return True
        return self.unrecorded_ranks is not None and not members & set(self.unrecorded_ranks)

    def paid_ms(self, r: RankRow, typ: str) -> float | None:
        """A rank's exposed time in one collective type that is the transfer itself, not waiting for another rank;
        None where the transfer is not known (:meth:`transfer_known`)."""
        c = r.collectives.get(typ)
        if not c:
            return 0.0
        return min(c[2], self.transfer_ms(typ)) if self.transfer_known(typ) else None

    def summary(self, typ: str) -> CollectiveSummary:
        """The type at the median rank: the per-collective table and comm_exposed's evidence read the same numbers."""
        rs = [r for r in self.ranks if typ in r.collectives]
        bw = self.bus_bandwidth(typ)
        known = self.transfer_known(typ)
        return CollectiveSummary(
            type=typ, calls=med_count(r.collectives[typ][0] for r in rs), ms=med(r.collectives[typ][1] for r in rs),
            exposed_ms=med(r.collectives[typ][2] for r in rs), transfer_ms=self.transfer_ms(typ) if known else None,
            paid_ms=med(self.paid_ms(r, typ) or 0.0 for r in rs) if known else None,
            bytes_per_call=bw[0] if bw else (None if known else self.message_bytes(typ)),
            bus_bytes_per_s=bw[1] if bw else None)

    def types(self) -> list[str]:
        """Collective types any rank runs, most exposed time (summed over ranks) first."""
        tot: dict[str, float] = {}
        for r in self.ranks:
            for t, v in r.collectives.items():
                tot[t] = tot.get(t, 0.0) + v[2]
        return sorted(tot, key=lambda t: -tot[t])

    @property
    def hosts(self) -> list[str]:
        return sorted({r.host for r in self.ranks})

    @property
    def step_ms(self) -> float:
        return med(r.step_ms for r in self.ranks)

    def by_host(self) -> dict[str, list[RankRow]]:
        out: dict[str, list[RankRow]] = {}
        for r in self.ranks:
            out.setdefault(r.host, []).append(r)
        return out


def job_view(reports: list[HostReport], options: UserOptions | None = None,
             rank_runs: RankRuns | None = None) -> JobView:
    """Every active GPU of every analysed host, with its mean step and breakdown; ``options`` (the user's
    settings) and ``rank_runs`` (the job's other ranks in sibling run folders, ``Session.linked_ranks``) ride along
    for the job rules that need them."""
    ranks: list[RankRow] = []
    names: list[str] = []
    fw = work = ""
    expected = None
    what: dict = {}
    procs: int | None = 0
    counts, sources = [], []
    for hr in reports:
        if hr.error is not None:
            continue
        n = (hr.capture or {}).get("processes")
        procs = procs + n if procs is not None and isinstance(n, int) and n >= 0 else None  # a report without it: unknown
        fw = fw or str((hr.capture or {}).get("framework") or "")
        work = work or str((hr.capture or {}).get("work_framework") or "")
        what = what or dict(getattr(hr, "job", None) or {})
        counts.append(hr.steps.get("count") if isinstance(hr.steps, dict) else None)
        sources.append(hr.steps.get("source") if isinstance(hr.steps, dict) else None)
        expected = expected if expected is not None else hr.expected_allreduce_ms
        steps_of = _steps_by_gpu(hr.step_rows)
        for g in hr.gpus:
            b = g.breakdown or {}
            if g.step_ms is None or not g.kernel_count:
                continue
            compute, comm = float(b.get("device_compute", 0.0)), float(b.get("collectives", 0.0))
            colls = {t: (float(v[0] or 0), float(v[1] or 0), float(v[2] or 0)) for t, v in (g.collectives or {}).items()}
            msgs = {t: (float(v[3]), int(v[4] or 0)) for t, v in (g.collectives or {}).items()
                    if len(v) > 3 and v[3] is not None}
            steps = steps_of.get(g.gpu, {})
            xfer = {t: float(v[5]) for t, v in (g.collectives or {}).items() if len(v) > 5 and v[5] is not None}
            whole = {t: float(v[6]) for t, v in (g.collectives or {}).items() if len(v) > 6 and v[6] is not None}
            before = {t: int(v[7]) for t, v in (g.collectives or {}).items() if len(v) > 7 and v[7]}
            paced = {t: (float(v[8] or 0.0), float(v[9] or 0.0)) for t, v in (g.collectives or {}).items()
                     if len(v) > 9 and v[8]}
            ranks.append(RankRow(hr.host, g.gpu, float(g.step_ms), compute, comm,
                                 max(0.0, float(g.step_ms) - compute - comm), colls, msgs, steps,
                                 getattr(g, "rank", None), xfer, dict(getattr(g, "calls", None) or {}), whole, before,
                                 paced, _float_or_none(getattr(g, "host_calls_ms", None)),
                                 getattr(g, "longest_calls", None), getattr(g, "kernel_ms", None),
                                 _group_ranks(getattr(g, "collective_ranks", None))))
            names.append(g.name)
    link, source = _link([g for hr in reports if hr.error is None for g in hr.gpus])
    unrecorded, numbers = _unrecorded(reports) if ranks else ((), ())
    return JobView(framework=fw or "unknown", work_framework=work, gpu_names=names, ranks=ranks, expected_allreduce_ms=expected,
                   link_bandwidth=link, link_source=source, options=options if options is not None else UserOptions(),
                   tags=tuple(what.get("tags") or ()), engine=what.get("engine_id"), kind=str(what.get("kind") or "unknown"),
                   kind_confidence=str(what.get("kind_confidence") or "low"),
                   processes=procs or None, one_step=bool(counts) and all(c == 1 for c in counts),
                   marked=not any(x in UNMARKED_SOURCES for x in sources), rank_runs=rank_runs, unrecorded=unrecorded,
                   unrecorded_ranks=numbers)


def _group_ranks(held: object) -> dict[str, tuple[int, ...]]:
    """``GpuSummary.collective_ranks`` -> :attr:`RankRow.group_ranks`: each type whose value is a list of whole
    non-negative ranks; anything else (a report before 0.1.0+a84: none; a damaged one) unknown."""
    if not isinstance(held, dict):
        return {}
    return {str(t): tuple(v) for t, v in held.items()
            if isinstance(v, list) and v and all(type(x) is int and x >= 0 for x in v)}


def _unrecorded(reports: list[HostReport]) -> tuple[tuple[str, ...], tuple[int, ...] | None]:
    """The session's ranks with no GPU work recorded (:attr:`JobView.unrecorded`): those a host file read with its
    node's ranks says (``Job.idle_rank_labels``), and each host file that ran no kernel and whose job says its GPU's
    side went unrecorded -- none at all (``no_gpu``), its records lost (``runtime_vendor``: whose runtime made the
    calls of a window that lost them) or its tracing off (``gpu_unrecorded``) -- by its host's name; never a memory
    snapshot (its job none of these: it records the allocator, not the GPU's work).  Asked only where other ranks ran
    GPU work.  With them their job ranks (:attr:`JobView.unrecorded_ranks`): an idle rank's as its host's job states
    it (``idle_rank_numbers``), None where one's is not known (a host file's own: its report keeps no rank of a GPU
    that ran nothing; a report before 0.1.0+a84)."""
    out: list[str] = []
    numbers: list[int] | None = []
    for hr in reports:
        if hr.error is not None:
            continue
        job = getattr(hr, "job", None) or {}
        labels = [str(x) for x in job.get("idle_rank_labels") or ()]
        said_ranks = job.get("idle_rank_numbers")
        out.extend(labels)
        if numbers is not None and labels:
            ok = (isinstance(said_ranks, list) and len(said_ranks) == len(labels)
                  and all(type(x) is int and x >= 0 for x in said_ranks))
            numbers = numbers + said_ranks if ok else None
        said = job.get("kind") == "no_gpu" or job.get("runtime_vendor") or job.get("gpu_unrecorded")
        if said and not any(g.kernel_count for g in hr.gpus):
            out.append(hr.host)
            numbers = None
    return tuple(out), (tuple(numbers) if numbers is not None else None)


#: how many kernels :func:`kernel_gap` names: a size bound of the words, no judgement (``multigpu.GAP_KERNELS``'s)
GAP_KERNELS = 3


def kernel_gap(s: RankRow, others: list[RankRow]) -> dict | None:
    """Where rank ``s``'s compute over the median of ``others`` lies by kernel, across host files, from each rank's
    listed kernel times (``RankRow.kernel_ms``, a bounded list): per kernel ``s`` lists, the least it spends more than
    the median other rank -- a peer that lists the kernel, its time; one whose list is full without it, its shortest
    listed (at most that); one whose list is not full without it, 0 (it runs none).  ``{"kernels": [[kernel, ms per
    step more], ...] (the largest :data:`GAP_KERNELS`), "more_kernels", "more_ms", "less_ms" (its time less than the
    median peer's in the kernels it lists)}``, the shape of ``MultiGpu.gap_by_kernel`` within one host.  Facts
    (``rules.rank_straggler`` names them); None where a report lists none (before 0.1.0+a80) or nothing is more."""
    if not s.kernel_ms or any(r.kernel_ms is None for r in others) or not others:
        return None
    full = max(len(r.kernel_ms) for r in [s, *others])
    diff = []
    for kernel, mine in s.kernel_ms:
        theirs = []
        for r in others:
            listed = {row[0]: float(row[1]) for row in r.kernel_ms}
            theirs.append(listed.get(kernel, float(r.kernel_ms[-1][1]) if len(r.kernel_ms) >= full and r.kernel_ms
                                     else 0.0))
        diff.append((kernel, float(mine) - med(theirs)))
    diff.sort(key=lambda kv: -kv[1])
    more = [[k, v] for k, v in diff if v > 0]
    if not more:
        return None
    return {"kernels": more[:GAP_KERNELS], "more_kernels": len(more), "more_ms": float(sum(v for _, v in more)),
            "less_ms": float(-sum(v for _, v in diff if v < 0))}


def _float_or_none(x: object) -> float | None:
    """A number a report may lack (a key newer than the report): None stays None -- unknown, not zero."""
    return float(x) if isinstance(x, (int, float)) else None


def _paces_last_calls(s: np.ndarray, end: np.ndarray, by_step: list[np.ndarray], late: int) -> bool:
    """Whether rank ``late`` enters each step's last call last (``s``: ranks x calls, each rank's arrival before the
    call's end; ``end`` each call's end; ``by_step`` each step's calls, ``metrics.comm.step_calls``).  Why: the
    replay holds the other ranks' readiness where it was, which is right only where the step's end waits on ``late``
    (see :meth:`JobView.replay_gain_ms`)."""
    for calls in by_step:
        last = calls[np.argmax(end[calls])]
        if s[late, last] < s[:, last].max():
            return False
    return True


def _keyed(c: dict | None, times: bool = False) -> tuple[list, list, int] | None:
    """A rank's calls of a type (``RankRow.calls``) as (keys, values, kept steps), sorted by key: each key (process
    group, step, order within the group in that step, bytes), each value the call's transfer ms -- or, with
    ``times``, its (arrive, ready, at) ms (``model.callrows.call_times``).  None where the calls (or their times)
    are not carried.  Why one keying: :meth:`JobView.matched_transfer_ms` and :meth:`JobView.replay_gain_ms` pair
    a call across host files by this key, so both must read the same key for the same call."""
    calls = call_rows(c)
    values = call_times(c) if times else [float(ms or 0.0) for *_, ms in calls or ()]
    if not calls or values is None or not isinstance(c.get("steps"), int):
        return None
    seen: dict[tuple, int] = {}
    rows = []
    for (grp, step, nbytes, _), v in zip(calls, values):  # in (group, step, start) order: the order in the group
        k = (str(grp), int(step))
        seen[k] = seen.get(k, -1) + 1
        rows.append(((str(grp), int(step), seen[k], int(nbytes)), v))
    rows.sort(key=lambda x: x[0])
    return [k for k, _ in rows], [v for _, v in rows], int(c["steps"])


def _steps_by_gpu(rows) -> dict:
    """GPU -> {step: (step ms, collective ms)} of a report's step rows, one pass over them (not one per GPU); a
    ``StepRowTable`` (``model.steprows``) is read by its columns, without making a row object."""
    out: dict = {}
    if isinstance(rows, StepRowTable):
        step_ms, coll, steps, gpus = rows.column("step_ms"), rows.column("collectives"), rows.step.tolist(), rows.gpu
        # a GPU's rows come together (the table is GPU by GPU): each run of one GPU's rows is one dict update, in C,
        # not a setdefault and two tuples per row in Python (12,700 rows of the dense 100 MB capture: 24 -> 3 ms)
        cuts = [0, *(i for i in range(1, len(gpus)) if gpus[i] != gpus[i - 1]), len(gpus)]
        for a, b in zip(cuts[:-1], cuts[1:]) if gpus else ():
            out.setdefault(gpus[a], {}).update(zip(steps[a:b], zip(map(float, step_ms[a:b]), map(float, coll[a:b]))))
        return out
    for r in rows:
        out.setdefault(r.gpu, {})[int(r.step)] = (float(r.step_ms), float((r.breakdown or {}).get("collectives", 0.0)))
    return out


def _link(gpus: list) -> tuple[float | None, str]:
    """The GPU link of the job's GPUs (``devices.link_bandwidth``: NVLink by generation, xGMI by AMD architecture)
    when they are all of one kind; None for mixed or unknown GPUs: nothing is assumed."""
    links = {devices.link_bandwidth(g.name, g.compute_capability) for g in gpus}
    if len(links) != 1 or None in links:
        return None, ""
    return next(iter(links))
