"""§1.1 Input pipeline: is the program input-bound?

Metric: ``headline.input_wait_share`` -- the share of the step the GPUs are
idle while the host waits in ``IteratorGetNext`` / the DataLoader's ``__next__``
(the stock tool shows 0.0% for GPU captures; the Advisor measures it itself).
Where the capture records its input pipeline, the wait is that pipeline's own
time; other host time before the step's first op is named apart, not counted
(``metrics/inputs.py``, issue #37 item 4).  Where the capture records no
pipeline but the host's own ops fill that time (a CPU ``aten::randn`` before
the step's copy), the ops are named and the step said to make its input
itself; where the op creates a tensor from its arguments alone, the first fix
is the framework's for making it on the GPU.  Where most of the wait is the
batch's transfer to the device after the pipeline made it (TF's
``IteratorGetNext/_1:_Send``, ``HostInput.transfer_ms_per_step``), that is
said and the first fix is the framework's for prefetching to the device
(``input_bound:transfer``).  Where no pipeline event is recorded but the
program's Python frames (``with_stack``) hold the host time before the first
op, the frames that fetch or prepare the batch are named (a pipeline's
``preprocess``, and what it spends its time in) and the first fix is the
framework's for preparing the input off the step's path
(``input_bound:frames``); frames whose names say nothing of the batch (a
library's own set-up) are other host work, not input, and named apart.  Those
frames are the profiler's Python tracing's own events, so the wait they hold is
host time measured under the tracer, as an in-process DataLoader's ``__next__``
is: the finding says what the calls traced inside the wait itself may cost of
it (``traced_python``, as the host-time findings do; review18).  A range
the program names for fetching its batch (``get_batch`` in ``record_function``,
NVTX, JAX's ``TraceAnnotation``, TF's ``Trace``; grain's dataset iterators'
``...DatasetIterator.__next__``) with no kernel launched inside is the
pipeline's own event -- on the loop's own thread: a pipeline's worker thread
making the next batch meanwhile is no wait of the loop's -- and where such
ranges hold the wait the finding names them, with the batch's transfer to
the device the ledger books as input beside them (``jax.device_put`` after
the fetch), so the parts it names add up to the wait.  Every part it names
states its time a step and its share of the step, from the ledger's input wait
inside what it names: the framework's own pipeline event (the DataLoader's
``__next__``, tf.data's ``IteratorGetNext``) beside the program's ranges where
both hold some of it, or the untraced lead (h37-forms10num: the iterator's and
the untraced loader's words stated no time).  Where the trace shows a pipeline
whose workers make the batches (a DataLoader's ``_MultiProcessingDataLoaderIter``)
inside a range the loop marks around its fetch, and the range's own code holds
most of the wait, the first fix names that code -- the range's time outside the
pipeline's event and the calls the profiler recorded there
(``input_bound:own_range``) -- never loading in workers, a lever in use
(h37-huntr67); a pipeline without workers whose ``__next__`` holds the lesser
part of such a range's wait gets the same first fix, the loader's after it
(``input_bound:own_range_serial``, h37-idle67).  Saving: the whole input
wait, i.e. a pipeline that prefetches fast enough to overlap with compute.
"""

from __future__ import annotations

from tb_gpu_advisor.frameworks import Framework
from tb_gpu_advisor.metrics.types import HostInput, HostMetrics
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules.base import (Ctx, T, finding, ms, n_of, pct, pick_steps, rule, saving, share_metric, step_windows, table,
                                       traced_python)

ID = "input_bound"


@rule(ID, "§1.1", "Input-bound: the GPU waits for the input pipeline",
      thresholds=("input_bound.warning", "input_bound.critical", "input_bound.range_named_share",
                  "input_bound.most_share", "input_bound.whole_share", "input_bound.apart_share"), card="input_wait_share", waits=("input_wait",))
def check(m: HostMetrics) -> list[Finding]:
    ctx = Ctx(m)
    graded = ctx.graded_wait(m.headline.input_wait_share, m.breakdown.input_wait, "input_bound.warning", "input_bound.critical")
    if graded is None:
        return []
    share, sev, wait_ms = graded
    h2d = m.breakdown.memcpy_h2d
    rows = [
        [s.step, s.step_ms, s.breakdown.input_wait, s.breakdown.memcpy_h2d, s.breakdown.device_compute]
        for s in pick_steps(m.steps_detail, None, None, 50)  # the first 50 host-wide rows, only those made
    ]
    evidence = [table("Input wait {per_step} (ms)", ["step", "step ms", "input wait ms", "H2D copy ms", "device compute ms"], rows)]
    src = m.input
    made = _made_by_ops(src.ops, wait_ms, _each_step(ctx), ctx.step_noun, ctx.fw)
    held = _held_by_frames(ctx, src.frames, src.frames_within, wait_ms) if not made else ""
    what = {"pipeline": _pipeline_said(ctx, src, wait_ms),
            "before_first_op": made or held or _untraced_said(ctx, src, wait_ms)
            }.get(src.source, "")
    # the copy is a part of the account only beside the untraced lead it was taken from: the host's own ops or frames
    # (made, held) are measured on their own and may overlap it (the copy runs on PjRt's worker thread)
    moved = _transfer_said(min(src.transfer_ms_per_step, wait_ms), wait_ms,
                           src.source == "pipeline" or bool(made or held))
    what += moved
    other = _frames_said(ctx, [(n, v) for n, v, inp in src.frames if not inp], src.pre_op_ms_per_step)
    apart = (f" Another {ms(src.pre_op_ms_per_step)} {ctx.per_step} of host time before the {ctx.step_noun}'s first op is not the input "
             f"pipeline's" + (f" (the program's other work: {other})" if other else "") + " and is not counted here."
             if src.pre_op_ms_per_step >= _apart_floor(src.source, wait_ms)
             else "")
    return [finding(
        ctx, ID, sev,
        f"{'The GPU sits' if sum(1 for g in m.gpus if g.active) == 1 else 'The GPUs sit'} idle waiting for input for "
        f"{ctx.part_of_step(wait_ms)} ({pct(share)}; "
        f"stock 'input-bound' level is >=5%){what}, over {ctx.the_pass_or(n_of(ctx.steps, 'step'))}"
        + (f"; H2D input copies add {ms(h2d)}." if h2d >= T("report.min_said_ms") else ".") + apart
        # the Python the profiler traced inside the wait's own host time (the frames that hold it, an in-process
        # loader's ``__next__``): each of those calls cost the host its recording
        + traced_python(ctx, wait_ms, src.traced_calls_per_step),
        metric=share_metric("input_wait_share", "Input wait share of {step}", share, "input_bound.warning", severity=sev,
                            detail={"input_wait_ms": wait_ms, "memcpy_h2d_ms": h2d, "source": src.source,
                                    "pre_op_ms": src.pre_op_ms_per_step}),
        saving=saving(ctx, wait_ms, "removing the input wait entirely (input prepared in parallel and prefetched, "
                                    "so it overlaps with the previous {step}'s compute)", [("input", "input", wait_ms)]),
        evidence=evidence,
        windows=step_windows(ctx, label="input wait", draws=("input_wait",), claimed_ms=wait_ms),
        actions=_creation(ctx, src.ops, wait_ms)
        + (ctx.fw.extra(f"{ID}:transfer") if src.transfer_ms_per_step >= T("input_bound.most_share") * wait_ms else [])
        + (ctx.fw.extra(f"{ID}:frames", frames=_frames_said(ctx, _input_frames(src.frames), wait_ms)) if held else [])
        + (_own_range(ctx, src)
           or ctx.fw.fix(f"{ID}:parallel" if src.parallel else f"{ID}:pipeline" if src.source == "pipeline" else ID)),
    )]


def _own_range(ctx: Ctx, src: HostInput) -> list:
    """The framework's fix for a pipeline whose ``__next__`` hands each batch over quickly while the loop's own code
    in the range it marks around the fetch holds most of the wait (``HostInput.own_range``: ``input_bound:own_range``
    with workers, ``input_bound:own_range_serial`` without -- where the loader's fix follows), filled with the ranges'
    own time, the pipeline's, and the calls the profiler recorded there (in the framework's words); [] otherwise, or
    where the framework writes no such fix.  Why: "load batches in worker processes" told a loop that uses them to
    use them (duoan/playground-cuda ``torch_baseline``, h37-huntk67 *Left* 1)."""
    if not src.own_range or not src.ranges:
        return []
    ranges = ", ".join(f"`{name}`" for name, _ in src.ranges[:3])
    own = sum(v for _, v in src.ranges)
    calls = ", ".join(f"`{name}` ({k:.3g} a {ctx.step_noun}, {ms(t)})" for name, k, t in src.range_calls)
    # without workers the loader's own part is still made on the step's path: its fix follows the range's
    fix = f"{ID}:own_range" if src.workers else f"{ID}:own_range_serial"
    return ctx.fw.extra(fix, ranges=f"{ms(own)} {ctx.per_step} ({ranges})",
                        next=f"{ms(src.own_ms_per_step)} {ctx.per_step}",
                        calls=ctx.fw.label(f"{ID}:own_range_calls", calls=calls) if calls
                        else ctx.fw.label(f"{ID}:own_range_unrecorded"))


def _transfer_said(xfer_ms: float, wait_ms: float, made: bool = True) -> str:
    """Where the batch's transfer to the device after the pipeline made it (``HostInput.transfer_ms_per_step``, never
    above the wait) holds most of the wait, the words that say so -- "all of it" where it holds the whole at the
    report's precision; "" otherwise: the batch was not made in time, the transfer is no cause.  With no pipeline
    event (``made`` False) the copy is said wherever the report prints it: it is then a part of the wait's account
    beside the lead before the first op (real-h100-jax ``input_bound``: 10.1 ms of lead and 4.8 ms of copies)."""
    if xfer_ms < (T("input_bound.most_share") * wait_ms if made else T("report.min_said_ms")):
        return ""  # with no pipeline event the copy is a part of the wait's account, said beside the lead
    part = f"all of it ({ms(xfer_ms)})" if xfer_ms >= T("input_bound.whole_share") * wait_ms else \
        f"{ms(xfer_ms)} of {'it' if made else 'the wait'} ({pct(xfer_ms / wait_ms)})"  # beside the lead: not the lead's
    return f"; {part} the batch's transfer to the device" + (" after the pipeline made it" if made else
                                                             ", in the capture's host-to-device copy events")


def _apart_floor(source: str, wait_ms: float) -> float:
    """ms a step of other host time before the step's first op from which the finding says it apart: where the
    pipeline's own events bound the wait, any time the report prints; else a share of the wait (the lead that stands
    for an untraced loader already holds the rest)."""
    return T("report.min_said_ms") if source == "pipeline" else T("input_bound.apart_share") * wait_ms


#: The words of an input wait the capture records no pipeline event of: the host time before each step's first op
#: (``{each}``: :func:`_each_step`), with the ledger's input wait inside it (``HostInput.lead_ms_per_step``) as
#: ``{part}`` (:func:`_part`).
_UNTRACED = ("; the host time before {each} first op ({part}): the capture records no input pipeline event, so that "
             "time stands for an untraced loader")
#: :data:`_UNTRACED` where that time ends at the batch's put to the device (``HostInput.lead_to_put``): the number is
#: the step's start to the put (the put's own time is the transfer said beside it), and the untraced Python after
#: the put is named apart (h37-probe44s)
_UNTRACED_TO_PUT = ("; the host time from {each} start to its batch's put to the device ({part}): the capture "
                    "records no input pipeline event, so that time stands for an untraced loader")
#: The words of an input wait in the pipeline's own events: ``{parts}`` the parts the ledger books there, the larger
#: first -- the framework's own event as ``_NEXT`` (``{next}`` its label ``input_next``, ``{part}`` :func:`_part` of
#: ``HostInput.own_ms_per_step``) and the program's ranges --, ``{put}`` the batch's transfer beside them.
_PIPELINE = "; the input pipeline's own time: {parts}{put}"
_NEXT = "{next} ({part})"


def _untraced_said(ctx: Ctx, src: HostInput, wait_ms: float) -> str:
    """The host time before each step's first op standing for an untraced loader (:data:`_UNTRACED`), where the
    report prints any of it; "" where the wait is all the batch's own transfer (a jitted call copying the NumPy batch
    it was handed, after the step's first op: real-h100-jax ``implicit_numpy_input``, whose 2.49 ms wait main named
    "the host time before each step's first op" with that op 3 us into the step).  Where that time ends at the
    batch's put (``HostInput.lead_to_put``) the words say so: "before each step's first op" named a span that also
    held the untraced Python after the put, which the finding names apart (h37-probe44s)."""
    lead = min(src.lead_ms_per_step, wait_ms)
    words = _UNTRACED_TO_PUT if src.lead_to_put else _UNTRACED  # the words say where the time they count ends
    return words.format(each=_each_step(ctx), part=_part(ctx, lead)) if lead >= T("report.min_said_ms") else ""


def _part(ctx: Ctx, part_ms: float) -> str:
    """"9.43 ms a step, 38.9% of the step": a part of the input wait as the finding states it, per step and as a share
    of the step, so the reader can check the claim against the step it is of (h37-forms10num)."""
    share = ctx.share(part_ms) if ctx.step_ms else 0.0
    return f"{ms(part_ms)} {ctx.a_step}, {pct(share)} of the {ctx.step_noun}"


def _pipeline_said(ctx: Ctx, src: HostInput, wait_ms: float) -> str:
    """The input pipeline's own time, in the parts the ledger books as input: the framework's own pipeline event
    (its label ``input_next``: the DataLoader's ``__next__``, tf.data's ``IteratorGetNext``) with the time inside it
    (``HostInput.own_ms_per_step``), the program's ranges for fetching its batch (``HostInput.ranges``: ``get_batch``),
    the larger part first, and the batch's transfer to the device beside them (``HostInput.put_ms_per_step``), each
    never above the whole: the parts named add up to the wait (h37-forms10in, h37-forms10num).  Main named the
    iterator with no time where the ranges held under half of the wait -- and where the iterator held none of it (a
    grain loop's wait, its ranges' and the put's)."""
    own = min(src.own_ms_per_step, wait_ms)
    ranges = _range_parts(src.ranges, wait_ms)
    parts = [(sum(min(v, wait_ms) for _, v in src.ranges), "the program's " + ("range" if len(src.ranges) == 1 else "ranges")
              + " for fetching its batch (" + ", ".join(ranges) + ")")] if ranges else []
    functions = _range_parts(src.functions, wait_ms, "other ops")
    if functions:  # the pipeline's own functions' ops on the step's threads (tf.data's map), named as such
        total = min(sum(v for _, v in src.functions), wait_ms)
        if not any(w.startswith("`") for w in functions):  # many small ops, none a tenth of the wait: their time
            functions = [_part(ctx, total)]  # as the iterator's part is said ("other ops 68 us" of no op named)
        parts.append((total, f"{ctx.fw.label('input_function_ops')} ({', '.join(functions)})"))
    if own >= T("report.min_said_ms") or not parts:
        # the iterator's own frame where the Python tracer recorded it (``HostInput.own_frame``), else its label
        nxt = (ctx.fw.label("input_next_frame", frame=ctx.fw.frame_label(src.own_frame)) if src.own_frame
               else ctx.fw.label("input_next"))
        parts.append((own, _NEXT.format(next=nxt, part=_part(ctx, own))))
    return _PIPELINE.format(parts=", ".join(w for _, w in sorted(parts, key=lambda p: -p[0])),
                            put=_put_said(src.put_ms_per_step, wait_ms))


def _range_parts(ranges: list[tuple[str, float]], wait_ms: float, rest_word: str = "other ranges") -> list[str]:
    """The program's ranges (or the pipeline functions' ops), each holding a tenth of the wait or more with its part
    (never above the whole), the smaller ones together ("other ranges X", ``rest_word``)."""
    # both sides of the split read the one bar (h37-forms10in wrote it twice); a part too small to print is unsaid
    bar = T("input_bound.range_named_share") * wait_ms
    named = [f"`{n}` {ms(min(v, wait_ms))}" for n, v in ranges if v >= bar]
    rest = sum(v for _, v in ranges if v < bar)
    if rest >= T("report.min_said_ms"):
        named.append(f"{rest_word} {ms(min(rest, wait_ms))}")
    return named


def _put_said(put_ms: float, wait_ms: float) -> str:
    """The batch's transfer to the device the ledger books as input beside the pipeline's events
    (``HostInput.put_ms_per_step``), "" where there is none."""
    return f" and the batch's transfer to the device ({ms(min(put_ms, wait_ms))})" if put_ms >= T("report.min_said_ms") else ""


def _made_by_ops(ops: list[tuple[str, float]], wait_ms: float, each: str = "each step's", noun: str = "step",
                 fw: Framework | None = None) -> str:
    """Where the host's recorded ops fill most of the input time no pipeline event names, the step makes its input
    itself (a CPU ``aten::randn`` before its copy), and says so with the ops (each at least a tenth of the wait; a
    part never above its whole), of the window's steps (``each``: :func:`_each_step`; ``noun``: ``Ctx.step_noun``);
    "" otherwise (an untraced loader stands for that time).

    A host event the profiler's Python tracer recorded (``fw.traced_frame``: JAX's and TensorFlow's ``$time sleep``)
    is a Python call, no op: said as one, by the name the program calls it (``fw.frame_label``: ``time.sleep``).
    real-h100-jax ``input_bound_pytracer`` read "the host's own ops before each step's first launch: `$time sleep`
    10.1 ms" -- the loop's own ``time.sleep`` called an op under its tracer's raw name (h37-pyinput70 *Left* 1)."""
    named = [(name, min(v, wait_ms)) for name, v in ops if v >= 0.1 * wait_ms]
    if not named or sum(v for _, v in named) < T("input_bound.most_share") * wait_ms:
        return ""
    calls = [fw is not None and fw.traced_frame(n) for n, _ in named]
    what = ("Python calls" if all(calls) else "ops and Python calls" if any(calls) else "ops")
    told = ", ".join(f"`{fw.frame_label(n) if c else n}` {ms(v)}" for (n, v), c in zip(named, calls))
    tracer = " (as the profiler's Python tracer recorded them)" if any(calls) else ""
    return f"; the host's own {what} before {each} first launch: {told}{tracer} -- the {noun} makes its input itself"


def _each_step(ctx: Ctx) -> str:
    """"each step's" over several steps; where the capture holds one, that one's in the job's word
    (``Ctx.step_noun``: "the pass's", "the forward pass's"): the owner of the first op or launch the input time runs
    up to.  A one-pass JAX capture's wait in PjRt's linearizing of its put read "before each step's first launch --
    the step makes its input itself" beside "of the 343 us pass" (h37-probe47p: walk ``--xplane`` seed 128696)."""
    return f"the {ctx.step_noun}'s" if ctx.one_step else "each step's"


def _creation(ctx: Ctx, ops: list[tuple[str, float]], wait_ms: float) -> list:
    """The framework's fix for a tensor made on the CPU, first, where the op filling most of the input time creates
    one from its arguments alone (``torch.randn(N, N).cuda()``); [] otherwise."""
    if not ops or not wait_ms:
        return []
    name, op_ms = ops[0]
    if op_ms < T("input_bound.most_share") * wait_ms or not ctx.fw.creation_op(name):
        return []
    return ctx.fw.extra(f"{ID}:creation", op=name, op_ms=ms(min(op_ms, wait_ms)))


def _input_frames(frames: list[tuple[str, float, bool]]) -> list[tuple[str, float]]:
    """The frames whose names say they fetch or prepare the batch, (name, ms per step), longest first."""
    return [(n, v) for n, v, inp in frames if inp]


def _frames_said(ctx: Ctx, frames: list[tuple[str, float]], whole_ms: float) -> str:
    """The frames holding at least a tenth of ``whole_ms`` (each never above it), as the framework labels them."""
    named = [(ctx.fw.frame_label(n), min(v, whole_ms)) for n, v in frames if whole_ms and v >= 0.1 * whole_ms]
    return ", ".join(f"`{n}` {ms(v)}" for n, v in named)


def _held_by_frames(ctx: Ctx, frames: list[tuple[str, float, bool]], within: list[tuple[str, float]],
                    wait_ms: float) -> str:
    """Where the program's Python frames that fetch or prepare the batch (``HostInput.frames``: a pipeline's
    ``preprocess``, its video decoding and image processor) hold most of the input time no pipeline event names, the
    capture records what holds it: the step prepares its input itself, in those frames (and, inside the longest,
    ``within``: what it spends its time in), and says so; "" otherwise (an untraced loader stands for that time)."""
    own = _input_frames(frames)
    if not wait_ms or sum(min(v, wait_ms) for _, v in own) < T("input_bound.most_share") * wait_ms:
        return ""
    inner = _frames_said(ctx, within, min(frames[0][1], wait_ms)) if frames[0][2] else ""
    return (f"; the host time before {_each_step(ctx)} first op, held by the program's own input preparation: "
            + _frames_said(ctx, own, wait_ms) + (f" (in it: {inner})" if inner else "")
            + f" -- the {ctx.step_noun} prepares its input itself, not an untraced loader")
