"""§2.2 GPU host thread contention: kernels are launched on some GPUs late.

Metric: ``multi_gpu.launch_skew_ms`` (spread of the GPUs' first-kernel start
per step) as a share of the host-wide step (each step from its first GPU's
start to its last GPU's end), over the steps it was measured in (two or more
GPUs ran in them: ``multi_gpu.launch_skew_steps``) whose host-wide step is measured, each step's skew its own
(``multi_gpu.launch_skew_by_step``); none where the GPUs run out of step (ranks no
collective binds drift apart: ``metrics.breakdown.in_lockstep``), nor where their processes ran in turn (one rank's work
all ended before another's began: ``metrics.multigpu.processes_in_turn``).  Silent when the GPUs run sequentially
(that rule explains the skew).  Recommends ``TF_GPU_THREAD_MODE=
gpu_private`` only when the capture has no ``tf_gpu_private_*`` threads;
otherwise ``TF_GPU_THREAD_COUNT``.  Saving: the skew, in the steps that hold it, per kept step, less the late GPU's
later start that its GPU holding its launched work explains (``late_rank.late_wait``'s ``start_held``: the cause's
finding, ``late_rank``, saves it with the held-work fix); info, with that fix, where it explains it all.
"""

from __future__ import annotations

from tb_gpu_advisor.metrics.types import HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules._multi import active_gpus, is_multi, wait_held_ms, wait_parts
from tb_gpu_advisor.rules.base import (Ctx, T, finding, grade, ms, pct, rule, saving, share_metric, step_windows,
                                      table)
from tb_gpu_advisor.rules.capture_quality import HELD_FIX
from tb_gpu_advisor.rules.late_rank import late_wait
from tb_gpu_advisor.rules.sequential_gpus import is_sequential
from tb_gpu_advisor.rules.step_gaps import start_offsets_ms

ID = "launch_skew"


@rule(ID, "§2.2", "Skewed kernel launches across GPUs (host thread contention)",
      thresholds=("launch_skew.warning", "launch_skew.critical", "launch_skew.min_ms"), waits=("launch_wait",))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    mg = m.multi_gpu
    skew = mg.launch_skew_ms
    if not is_multi(m) or skew is None or ctx.step_ms is None or is_sequential(m):
        return []
    if skew < T("launch_skew.min_ms"):
        return []
    # the skew is a part of the host-wide step (the first GPU's start to the last one's end), not of the GPUs' mean
    # step: where each GPU's steps are its own, a late GPU's last step ends with its own work, short of the others', and
    # 4 GPUs 4.19 ms apart read "129.3% of the 3.24 ms step" (h37-randjobs3)
    # and a part of the steps it was measured in (two or more GPUs ran in them), never of every kept step: where the
    # GPUs run in turn, a few steps hold two GPUs' work, 11.1 ms apart, and the mean of all 18 steps was 5.31 ms
    # ("209.4% of the 5.31 ms step", h37-lawseeds)
    measured = set(mg.launch_skew_steps)
    # and a part of the very steps whose whole is measured: where the GPUs' windows are apart the last step has no
    # whole (no next start bounds it), and its skew is left out of the part too -- 2 ranks 330 then 457 us apart,
    # both steps' mean set against the first one's 380 us read "103.5% of the host-wide step" (h37-zero12law)
    held_skew, whole = _skew_and_whole_ms(m, measured)
    held_skew, whole = (skew, ctx.step_ms) if held_skew is None or not whole else (held_skew, whole)
    share = held_skew / whole
    # the delay per kept step: the skew in the steps that hold it, none in those where one GPU ran alone
    kept = m.steps.count or len(measured)
    part = len(measured) / kept if measured and kept > len(measured) else 1.0
    sev = grade(share, "launch_skew.warning", "launch_skew.critical")
    if sev is None:
        return []
    # one step value on the screen: the host-wide step said by its value only where it prints as the step does
    # (and where the part is the skew said: a part of fewer steps than the skew's is set against no printed step)
    of = (ctx.the_step() if ms(whole) == ms(ctx.step_ms) and ms(held_skew) == ms(skew) else
          "the host-wide step, from the first GPU's start to the last one's end")
    where = (f" in the {len(measured)} of the {kept} steps in which two or more of them run" if part < 1.0 else "")
    private = bool(m.capture.gpu_thread_mode_private) or any(g.launch_thread_private for g in m.gpus)
    gs = active_gpus(m)
    offsets = start_offsets_ms(m)
    late_gpu = max(offsets, key=offsets.get) if offsets else (mg.first_gpu_order[-1] if mg.first_gpu_order else gs[-1].gpu)
    late_ms = offsets.get(late_gpu)
    order = " → ".join(f"GPU{g}" for g in mg.first_gpu_order)
    acts = ctx.fw.fix(f"{ID}:{'private_threads' if private else 'shared_threads'}")
    whole_save = min(skew * part, wait_held_ms(m))
    # the late GPU's later start, where its GPU holds the work its host launched, is that held work's: the late-rank
    # finding (the cause) credits it with the held work's fix, so it is no host thread contention here, and the same
    # ms is not claimed twice (h37-turns71: the Megatron TP pair's GPU0, taking turns with another context -- 53 ms of
    # its 62.6 ms step held -- read "host thread contention", 12.6 ms, first)
    w = late_wait(m)
    credited = min(whole_save, w["start_held"]) if w and w["gpu"].gpu == late_gpu else 0.0
    save = max(0.0, whole_save - credited)
    turns = credited > 0 and credited >= 0.05 * whole_save
    all_held = turns and save < 0.05 * whole_save  # the whole later start is the held work's
    label = '' if private else ctx.fw.label('launch_skew:no_private_threads')
    if turns:
        label = (f": {'all' if all_held else ms(credited)} of its later start is its GPU's, not its "
                 f"host's -- GPU{late_gpu} idles {ms(w['held'])} {ctx.per_step} more than "
                 f"{'the other GPU' if len(gs) == 2 else 'the others'} with work its host had launched (another "
                 "process's context on the same GPU taking turns with this one, or a wait outside the capture); the "
                 "late-rank finding credits that time to the held work, with its fix")
        if all_held:
            sev, acts = "info", [HELD_FIX]
    return [finding(
        ctx, ID, sev,
        f"The GPUs start {_which(ctx, part)} up to {ms(skew)} apart{where} ({pct(share)} of {of}); GPU{late_gpu} "
        f"starts last (+{ms(late_ms)}), launch order {order or 'n/a'}{label}.",
        title=("Skewed kernel launches across GPUs: the late GPU holds the work it was given"
               if all_held else None),
        metric=share_metric("launch_skew_share", "Launch skew share of {step}", share, "launch_skew.warning", severity=sev,
                            detail={"launch_skew_ms": skew, "launch_order_skew_ms": mg.launch_order_skew_ms,
                                    "gpu_private_threads": private}),
        saving=saving(ctx, save, "all GPUs start the {step} together (the late GPU no longer delays the AllReduce)",
                      wait_parts(m)),
        evidence=[table("First kernel / first launch per GPU, relative to the earliest "
                        f"(ms, {ctx.per_step if ctx.one_pass else 'average per step'})",
                        ["gpu", "first kernel offset ms", "first launch offset ms", "private launch threads"],
                        [[g.gpu, offsets.get(g.gpu, g.first_kernel_offset_ms), g.first_launch_offset_ms,
                          g.launch_thread_private] for g in gs])],
        windows=step_windows(ctx, label="launch skew", n=2),
        gpu=late_gpu,
        actions=acts,
    )]


def _which(ctx: Ctx, part: float) -> str:
    """The steps the GPUs start apart: "a step" where only some hold two GPUs' work, "each step", "the pass" where the
    capture holds one unmarked pass (h37-onepass2: "The GPUs start each step up to 3.82 ms apart" of one pass)."""
    if part < 1.0:
        return "a step"
    return ctx.the_pass_or("each step")


def _skew_and_whole_ms(m: HostMetrics, measured: set[int]) -> tuple[float | None, float | None]:
    """(the mean skew, the mean host-wide step) over the same steps: the measured ones (every kept one where none is
    named) whose host-wide step is bounded by the next one's start, else -- where the measured steps are only the last
    one, left out where the GPUs' windows are apart -- their own untrimmed span: longer, never shorter, so the share is
    at most understated, never of all steps' mean (h37-skewfall).  Each step's skew is its own
    (``MultiGpu.launch_skew_by_step``; the mean ``launch_skew_ms`` for each where the metrics name none).  Why one set
    of steps: a part averaged over steps its whole leaves out is no part of it (h37-zero12law).  (None, None) without
    per-GPU steps."""
    mg = m.multi_gpu
    own = (dict(zip(mg.launch_skew_steps, mg.launch_skew_by_step))
           if len(mg.launch_skew_by_step) == len(mg.launch_skew_steps) else {})
    for keep_last in (False, True):
        spans = _host_wide_spans(m, keep_last)
        held = [k for k in spans if not measured or k in measured]
        if held:
            part = sum(own.get(k, mg.launch_skew_ms or 0.0) for k in held)
            return part / len(held), sum(spans[k] for k in held) / len(held)
    return None, None


def _host_wide_spans(m: HostMetrics, keep_last: bool = False) -> dict[int, float]:
    """Kept step -> its host-wide step, ms: step k from the first
    active GPU's start of it to the last one's end, ending where the next step starts (the host's steps are disjoint:
    ``steps.detect``).  GPUs in step (``metrics.breakdown.in_lockstep``: else no skew is
    measured) each start step k before the next step starts, so no spread of their starts exceeds it.  ``keep_last``: the
    last kept step is kept where the GPUs are apart too, from its first start to its last end -- no shorter than the
    spread of its GPUs' first kernels, which all lie inside it (h37-skewfall).  Empty without per-GPU steps."""
    act = {g.gpu for g in m.gpus if g.active}
    span: dict[int, list[float]] = {}
    apart = False  # the GPUs' windows of a step differ: each GPU's steps are its own
    for s in m.steps_detail:
        if s.gpu in act:
            lo_hi = span.setdefault(s.step, [s.start_ms, s.start_ms + s.step_ms])
            apart |= (s.start_ms, s.start_ms + s.step_ms) != tuple(lo_hi)
            lo_hi[0], lo_hi[1] = min(lo_hi[0], s.start_ms), max(lo_hi[1], s.start_ms + s.step_ms)
    order = sorted(span, key=lambda k: span[k])
    if not order:
        return {}
    for a, b in zip(order, order[1:]):
        span[a][1] = max(span[a][0], min(span[a][1], span[b][0]))
    # GPUs apart: the last kept step has no next start here -- a GPU's window may end at its own work's end, or at the
    # start of a step the averages dropped, past the other GPUs' next start: it is measured where a next step bounds it
    order = order[:-1] if apart and len(order) > 1 and not keep_last else order
    return {k: span[k][1] - span[k][0] for k in order}
