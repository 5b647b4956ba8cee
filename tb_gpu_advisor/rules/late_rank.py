"""§2 item 5 within one host: one GPU enters the collectives last, by its own host's work, and the others wait for it.

Metric: the other GPUs' wait in the collectives (their median, ``Communication.arrivals``: each call paired across
the GPUs, each GPU's wait the time from its own arrival to the last one's), less what the late GPU's later start
(``launch_skew``'s) and its extra compute (``gpu_imbalance``'s) explain, as a share of the step; graded on
``rank_straggler``'s levels (the same wait: one rank's extra time before the collectives).  Only where one GPU enters
most calls last.  Why: on one host the GPU checks compare GPU work, and a rank late by its host (its dispatch, Python,
a sync) with the same GPU work left the others' 11-13 ms a step in their all-reduces unexplained -- waiting, not slow
communication (issue #37 class 3; h37-straggle66: the fused MI300X DDP, rank 3).  Across host files the job's
``rank_straggler`` says it (no clock is shared there).
Saving: the step time the late GPU keeping pace gives back (``arrivals["gain_ms"]``: each step's calls replayed with
it ready when the last of the others is, ``metrics.comm.step_gain``), less the same two parts -- at most the wait, as
the others' own next work runs inside their wait and returns to the path once it is on time (h37-late67: 2.59 ms of
wait, 1.80 of gain); graded on that, info where only the wait reaches the levels (the fused MI300X DDP: 12.5 ms of
wait, 1.9 ms of gain, ranks 1-2 entering the last bucket late by their own work).
Booked where the host's ledger (the mean over its GPUs) holds it (:func:`wait_claims`): the others'
part in their collective and idle time (``gpu_wait``), the late GPU's own part -- its idle beyond its peers', its
launch gaps above all -- in that idle's own pool (``launch`` ...), so a ``launch_bound`` that claims the host's launch
gaps and this finding count the late rank's gaps once (h37-overlap66: the fused MI300X DDP's "if every fix lands" added
11.8 ms of wait and 10.0 ms of launch gaps, 2.2 ms of both rank 3's own dispatch).
"""

from __future__ import annotations

from tb_gpu_advisor.common.fmt import plural
from tb_gpu_advisor.metrics.multigpu import peer_median
from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._multi import active_gpus, is_multi, wait_held_ms, wait_parts
from tb_gpu_advisor.rules.base import Ctx, finding, grade, ms, pct, rule, saving, share_metric, table, the_others
from tb_gpu_advisor.rules.capture_quality import HELD_FIX
from tb_gpu_advisor.rules.savings import IDLE_POOLS, idle_claims
from tb_gpu_advisor.rules.step_gaps import start_offsets_ms

ID = "late_rank"


def who(g) -> str:  # noqa: ANN001 - a GpuMetrics
    """``GPU5 (rank 3)`` where the trace states the GPU's rank, else ``GPU5``."""
    return f"GPU{g.gpu} (rank {g.rank})" if g.rank is not None else f"GPU{g.gpu}"


def late_wait(m: HostMetrics) -> dict | None:
    """The late GPU's facts: {"gpu" (a GpuMetrics), "others", "wait" (the others' median wait per step), "gain" (the
    step time given back where it keeps pace, ``arrivals["gain_ms"]``: at most that wait), "start" (its later start,
    ms), "compute" (its compute above its peers' median), "host" (the rest of the gain: its own host's work),
    "last_in", "calls", "lag"}; None where no GPU enters most paired calls last.

    Why the gain, not the wait: the others' next work runs inside their wait, and comes back on the step's path once
    the late GPU is on time -- the wait summed over the calls claimed 2.59 ms of a step that gains 1.80 (h37-late67)."""
    arr = m.comm.arrivals
    gs = {g.gpu: g for g in active_gpus(m)}
    if not arr or arr["gpu"] not in gs or len(gs) < 2:
        return None
    late, calls = gs[arr["gpu"]], arr["calls"]
    last_in = arr["last_in"].get(late.gpu, 0)
    if not calls or last_in * 2 <= calls:
        return None  # the last arrival moves from GPU to GPU: no one GPU's cause
    others = [g for g in gs.values() if g is not late]
    wait = peer_median({g.gpu: arr["wait_ms"].get(g.gpu, 0.0) for g in gs.values()}, late.gpu)
    comp = {g.gpu: g.breakdown.device_compute for g in gs.values()}
    extra = max(0.0, comp[late.gpu] - peer_median(comp, late.gpu))
    start = max(0.0, start_offsets_ms(m).get(late.gpu, 0.0))
    gain = min(wait, float(arr.get("gain_ms", wait)))
    held = held_beyond_peers_ms(gs, late.gpu)
    host = max(0.0, gain - start - extra - held)
    # its GPU holding its launched work (5% of the wait or more) is the cause of the lateness it explains, its later
    # start included: that part is the held work's -- at most the held time; of the lateness, the gain less the extra
    # compute and the host's part, or its later start where that is more (the start is a part of the lateness, and
    # the replayed gain may leave some of it out) -- and launch_skew credits the start to it, never claimed twice
    sig = held >= 0.05 * wait and wait > 0
    turns = min(held, max(gain - extra - host, start, 0.0)) if sig else 0.0
    return {"gpu": late, "others": others, "wait": wait, "gain": gain, "start": start, "compute": extra, "held": held,
            "host": host, "turns": turns, "start_held": min(start, turns), "last_in": last_in, "calls": calls,
            "lag": arr["lag_ms"]}


def held_beyond_peers_ms(gs: dict, late: int) -> float:
    """ms per step the late GPU idled, its work launched, beyond its peers' median (each GPU's ledger ``unseen``: work
    it held after the launch returned, or the host waiting with every GPU idle -- GPU work the capture does not hold).

    Why: that lateness is the GPU's, not its host's.  Megatron-LM's tensor-parallel pair
    (``wild/megatron_tp2_v100_turns``): GPU0 starts each kernel up to 2.4 ms after its launch returned, in turns (53 ms
    of its 62.6 ms step), its host waiting ~2.3 ms in each tiny copy's sync; GPU1 waits 48.2 ms in the all-reduces
    for it -- read "the rest is GPU0 (rank 0)'s own host work before each call: its dispatch, Python or a sync", fix
    "profile that rank's host thread"."""
    vals = {gpu: float(g.breakdown.unseen or 0.0) for gpu, g in gs.items()}
    return max(0.0, vals[late] - peer_median(vals, late))


def own_idle_ms(m: HostMetrics, late) -> dict[str, float]:  # noqa: ANN001 - a GpuMetrics
    """The late GPU's idle beyond its peers' (category -> ms per step: its ledger's host-caused idle,
    ``IDLE_POOLS``, less the median other GPU's), as the host's ledger holds it: a share of one GPU in the mean over
    the host's GPUs (metrics/breakdown: the host-wide columns are that mean).  Why: that idle is the late rank's
    lateness, the same time the others wait -- once in its own ledger, once in theirs -- so a fix that makes it keep
    pace gives back this part where it sits, and the finding that claims that idle (``launch_bound``: the launch
    gaps) names the same pool."""
    gs = active_gpus(m)
    out = {}
    for c in IDLE_POOLS:
        vals = {g.gpu: float(getattr(g.breakdown, c, 0.0) or 0.0) for g in gs}
        extra = vals[late.gpu] - peer_median(vals, late.gpu)
        if extra > 0:
            out[c] = extra / len(gs)
    return out


def wait_claims(m: HostMetrics, late, host_ms: float) -> tuple[float, list[tuple[str, str, float]]]:  # noqa: ANN001
    """The saving of the late rank keeping pace (``host_ms`` of the others' wait a step) and its claims where the
    host's ledger holds it: the late GPU's own idle beyond its peers' (:func:`own_idle_ms`, in that idle's pools;
    at most its one-GPU share of the wait, ``host_ms`` / the GPUs), the rest the others' wait (``wait_parts``: their
    collective and idle time, ``gpu_wait``), at most what the ledger holds there (``wait_held_ms``)."""
    own = own_idle_ms(m, late)
    total_own = sum(own.values())
    cap = host_ms / len(active_gpus(m))
    if total_own > cap:
        own = {c: v * cap / total_own for c, v in own.items()}
        total_own = cap
    rest = min(max(0.0, host_ms - total_own), wait_held_ms(m))
    where = wait_parts(m)
    held = sum(v for _, _, v in where)
    claims = idle_claims(own) + [(g, p, rest * v / held) for g, p, v in where if held > 0]
    return total_own + rest, claims


def severity(share: float, wait_share: float) -> str | None:
    """The grade of the step time the late GPU keeping pace gives back (``share``), on ``rank_straggler``'s levels;
    info where that is below them but the others' wait it explains is not (``wait_share``).  Why: a finding is
    judged by what it saves (issue #37 deliverable 4), yet a wait of a quarter of the step that reads as slow
    communication needs its cause said -- the fused MI300X DDP's ranks wait 12-20 ms a step for rank 3, and rank 3
    keeping pace alone gives back 1.9 ms of the 46.9 ms step, the others entering the last bucket late by their own
    work (h37-late67)."""
    sev = grade(share, "rank_straggler.warning", "rank_straggler.critical")
    if sev is None and grade(wait_share, "rank_straggler.warning", "rank_straggler.critical") is not None:
        return "info"
    return sev


def across_job(f: Finding, job, job_findings: list[Finding]) -> Finding | None:  # noqa: ANN001 - a JobView
    """The late GPU a job-scope straggler finding names (``rank_straggler``, ``node_straggler``: the same wait read
    across host files) is said there, once: None; any other job finding (``comm_exposed``, which counts this wait as
    no communication the step pays) leaves it standing."""
    named = {(j.host, j.gpu) for j in job_findings if j.rule in ("rank_straggler", "node_straggler")}
    nodes = {j.host for j in job_findings if j.rule == "node_straggler"}
    return None if (f.host, f.gpu) in named or f.host in nodes else f


@rule(ID, "§2 item 5", "One GPU enters the collectives last, by its own host's work: the others wait for it",
      thresholds=("rank_straggler.warning", "rank_straggler.critical"), in_job=across_job)
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    if not is_multi(m) or not ctx.step_ms:
        return []
    w = late_wait(m)
    if w is None:
        return []
    # the step time it gives back: its host keeping pace, and where its GPU holds its launched work, that GPU running
    # the work as launched (its own GPU, or MPS) -- the held work's part of the gain, its later start included
    # (h37-turns71: the Megatron TP pair's 12.6 ms later start read as launch_skew's host thread contention, first)
    gives_ms = w["host"] + w["turns"]
    share = gives_ms / ctx.step_ms
    sev = severity(share, max(0.0, w["wait"] - w["start"] + w["start_held"] - w["compute"]) / ctx.step_ms)
    if sev is None:
        return []  # its later start or its extra compute explains the wait: launch_skew's or gpu_imbalance's
    late, others = w["gpu"], w["others"]
    named = ", ".join(who(g) for g in others)
    known = [f"its step starts {ms(w['start'])} later" if w["start"] >= 0.05 * w["wait"] else "",
             f"it computes {ms(w['compute'])} more" if w["compute"] >= 0.05 * w["wait"] else ""]
    known = [k for k in known if k]
    # its GPU holding its launched work idle beyond its peers' is the GPU's lateness, not its host's (h37-hunt71a)
    held = w["held"] >= 0.05 * w["wait"]
    comp = {g.gpu: g.breakdown.device_compute for g in (late, *others)}
    saves, claims = wait_claims(m, late, gives_ms)
    own = sum(v for g, p, v in claims if p != "gpu_wait")
    told = (f" Of the time it saves, {ms(own)} is {who(late)}'s own idle beyond its peers' (its launch gaps, its host "
            "work), the host's share of its lateness: the launch and host-work findings tell that time where they "
            "claim it, and the estimate if every fix lands counts it once." if own >= 0.05 * saves else "")
    because = (f" {'; '.join(known).capitalize()} (the launch-skew and GPU-imbalance checks' part); the rest"
               if known else f" Its GPU work is no more than theirs ({ms(comp[late.gpu])} of "
               f"compute {ctx.per_step}, {ms(peer_median(comp, late.gpu))} at their median) and it starts its "
               f"{ctx.step_noun} with theirs: its lateness")
    host_words = (f" is {who(late)}'s own host work before each call: its dispatch, Python or a sync that "
                  f"{'the other rank does not do or does' if len(others) == 1 else 'the other ranks do not do or do'} "
                  "sooner.")
    if held:
        # its later start is the held work's where that holds it (the launch-skew check credits it here)
        known = [k for k in known if not k.startswith("its step starts") or w["start_held"] < 0.95 * w["start"]]
        because = (f" {'; '.join(known).capitalize()} (the GPU-imbalance check's part)."
                   if known and not known[0].startswith("its step starts") else
                   f" {'; '.join(known).capitalize()} (the launch-skew and GPU-imbalance checks' part)." if known
                   else "")
        host_words = (f" {'The rest' if known else 'Its lateness'} is its GPU's, not its host's: {who(late)} idles "
                      f"{ms(w['held'])} {ctx.per_step} more than "
                      f"{'the other GPU' if len(others) == 1 else 'the others'}"
                      " with work its host had launched -- kernels and copies that start only long after their "
                      "launch calls returned, the host waiting in syncs and blocking copies for them -- so it runs "
                      "work the capture does not hold (another process's context on the same GPU taking turns with "
                      "this one) or waits on something outside it.")
    hidden = w["wait"] - w["gain"]
    gives = (f" If it kept pace the {ctx.step_noun} would be {ms(w['host'])} shorter ({pct(share)} {ctx.of_step()})"
             + (f", not the whole wait: {ms(hidden)} of it is their own next work (the next bucket's compute, their "
                "launches), which runs inside the wait and is back on the path once it is on time."
                if hidden >= 0.05 * w["wait"] else "."))
    if held and w["turns"]:
        late_start = (f", its later start ({ms(w['start_held'])}) included" if w["start_held"] >= 0.05 * w["wait"]
                      else "")
        gives = (f" If its GPU ran the work as launched (a GPU of its own, or MPS) the {ctx.step_noun} would be "
                 f"{ms(gives_ms)} shorter ({pct(share)} {ctx.of_step()}){late_start}"
                 + (f"; {ms(w['host'])} of it its host keeping pace." if w["host"] >= 0.05 * w["wait"] else "."))
        told = ""
    return [finding(
        ctx, ID, sev,
        f"{who(late)} enters the collectives last in {w['last_in']} of {plural(w['calls'], 'call')} matched across the "
        f"GPUs, {ms(w['lag'])} {ctx.per_step} after the median other GPU; {named} "
        f"{'waits' if len(others) == 1 else 'wait'} "
        f"{ms(w['wait'])} {ctx.per_step} in those calls for it{'' if len(others) == 1 else ' (their median)'}: "
        f"waiting for {who(late)}, not slow communication.{because}{host_words}" + gives + told,
        title=(f"{who(late)} enters the collectives last: "
               f"{the_others(len(others), 'GPU', 'wait', 'the other GPUs wait')} for it"),
        metric=share_metric("late_rank_wait_share", "Others' wait for the late GPU's host, share of {step}", share,
                            "rank_straggler.warning", severity=sev,
                            detail={"gpu": late.gpu, "rank": late.rank, "last_in": w["last_in"], "calls": w["calls"],
                                    "lag_ms_per_step": w["lag"], "others_wait_ms": w["wait"],
                                    "start_ms": w["start"], "compute_extra_ms": w["compute"], "host_ms": w["host"],
                                    "gain_ms": w["gain"],
                                    "wait_ms": m.comm.arrivals["wait_ms"]}),
        saving=saving(ctx, saves,
                      f"the late GPU runs its work as launched (no other process taking turns on it) and its host "
                      f"keeps pace, so {the_others(len(others), 'GPU', 'stop', 'the others stop')} waiting for it in "
                      "the collectives" if w["turns"] else
                      f"the late GPU's host keeps pace, so {the_others(len(others), 'GPU', 'stop', 'the others stop')} "
                      "waiting for it in the collectives",
                      claims),
        evidence=[table(f"Per GPU: arrivals at the collectives (ms {ctx.per_step})",
                        ["gpu", "rank", "last in calls", "waits in them ms", "compute ms", "first kernel offset ms"],
                        [[g.gpu, g.rank, m.comm.arrivals["last_in"].get(g.gpu, 0),
                          m.comm.arrivals["wait_ms"].get(g.gpu, 0.0), g.breakdown.device_compute,
                          g.first_kernel_offset_ms] for g in (late, *others)])],
        gpu=late.gpu,
        actions=[HELD_FIX] if held and w["held"] >= w["host"] else ctx.fw.fix(ID, gpu=who(late)),
    )]
