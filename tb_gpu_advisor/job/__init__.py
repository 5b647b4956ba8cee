"""What a capture is, decided before anything is judged: the kind of work, its phase, and its own step structure.

The rules were written for a steady-state training loop on NVIDIA.  Real captures are often something else: one
forward pass of a model, a serving engine's worker, the first call of a process with its one-time costs.  This
stage reads the trace and says which, with the evidence and how sure it is (:class:`Job`), so that the steps come
from the program's own structure, the one-time costs are not read as launch overhead, and every fix is written
for the job it is given to (``Framework.for_job``).

- :mod:`.kind`: training step, inference forward pass, serving engine step, or no GPU work; the serving engine;
- :mod:`.phase`: steady state, warm-up (cold start) or mixed, from one-time costs the trace shows;
- :mod:`.structure`: steps from the program's repeated spans where the format marks none.
- :mod:`.period`: else steps from the period of the launch sequence, where the host pauses between its repeats;
- :mod:`.waits`: where the host waited for the GPU (a sync call, a poll until done): the steps and the metrics ask it;
- :mod:`.exchange`: what the all-to-all exchanges (embeddings, MoE tokens, attention heads), from its neighbours;
- :mod:`.iterations`: a memory snapshot's training iterations from its allocations, where it marks none;
- :mod:`.peers`: the job's other processes' one-time costs, from their own files, on this trace's clock.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.common.memo import Memo
from tb_gpu_advisor.common.memory import release_free_heap
from tb_gpu_advisor.frameworks import Framework, engines, native
from tb_gpu_advisor.frameworks.base import allocator_fixes
from tb_gpu_advisor.job.exchange import exchange_kind, exchange_tag
from tb_gpu_advisor.job.iterations import snapshot_iterations
from tb_gpu_advisor.job.kind import (Kind, idle_rank_labels, idle_rank_list, idle_rank_numbers, idle_ranks,
                                     unrecorded_rank_labels, work_kind, forward_loop_kind)
from tb_gpu_advisor.job.phase import (STARTING, OneTime, async_stalls, context_start, one_time_costs, unseen_gpu_calls,
                                     window_phase)
from tb_gpu_advisor.job.period import device_iterations, repeated_launches, training_iterations
from tb_gpu_advisor.job.waits import Waits, host_waits
from tb_gpu_advisor.job.structure import (SpanSteps, backward_span_steps, model_calls, span_steps, step_end_count,
                                         step_end_steps, within_one_call, layer_passes)
from tb_gpu_advisor.model.columns import union_intervals
from tb_gpu_advisor.model.trace import Trace

__all__ = ["Job", "Kind", "OneTime", "SpanSteps", "adapt", "context_tags", "detect_job"]


@dataclass
class Job:
    """What one host file's capture is (``HostReport.job`` in the report)."""

    kind: Kind
    phase: OneTime
    #: the program's own steps where the format marks none (None: it has no repeated span that holds the work)
    structure: SpanSteps | None = None
    #: the framework version the trace implies, in words ("PyTorch 1.8-1.10"), None where it says nothing
    version: str | None = None
    #: the same as numbers: the lowest version the trace allows, None where it says nothing (not in the report: the
    #: fixes ask it, ``Framework.fit``)
    version_low: tuple[int, ...] | None = None
    #: what the fixes are written for (``Framework.for_job``): the work kind, a cold capture, an old version
    tags: tuple[str, ...] = field(default_factory=tuple)
    #: compiled modules that run several training steps per call (a ``lax.scan`` over steps): module -> steps
    steps_per_call: dict[str, int] = field(default_factory=dict)
    #: a training capture's optimizer steps (``structure.step_end_count``): an update runs once per iteration, so the
    #: window holds no more whole iterations than this; 0 where nothing shows how many
    optimizer_steps: int = 0
    #: a training job's iterations from its launches' period (``job.period.training_iterations``: the host waits at
    #: each repeat's boundary and every repeat runs a backward), where nothing else marks them: the steps read it where
    #: the GPU's bursts give no steps (the gaps between iterations too short to part them)
    periodic: SpanSteps | None = None
    #: the GPUs the profiled process listed, in words (``Trace.producer["visible_gpus"]``: "8 x NVIDIA H200"), used or
    #: not; "" where the file lists none.  What the report's rates are held to where no GPU ran recorded work
    #: (h37-peak: an op's return time on such a GPU is no measure of its speed)
    gpus_listed: str = ""
    #: the ``VENDOR`` the file shows besides its GPUs' names (``Trace.producer["gpu_vendor"]``: its runtime's calls,
    #: header keys, ops only one vendor's build has, its collective backend; ``unknown`` where nothing names one), ""
    #: where its reader says nothing.  ``unknown`` is the vendor of a window in which no GPU ran work
    #: (``rules.base.capture_vendor``): its words every vendor's, never NVIDIA's by default
    gpu_vendor: str = ""
    #: the ranks read with this host whose windows hold no GPU work, and what each holds, in words
    #: (:func:`kind.idle_ranks`); "" where every rank's window ran GPU work
    idle_ranks: str = ""
    #: how many ranks :attr:`idle_ranks` says: the count the report's rank arithmetic reads, not its words
    idle_rank_count: int = 0
    #: those ranks, each as the report names it (:func:`kind.idle_rank_labels`): what the job view's rules read
    idle_rank_labels: tuple[str, ...] = ()
    #: their job ranks, in that order, -1 where a file states none (:func:`kind.idle_rank_numbers`)
    idle_rank_numbers: tuple[int, ...] = ()
    #: of those, the ranks whose GPU side the capture did not record (:func:`kind.unrecorded_rank_labels`: no runtime
    #: call, or launches none of whose kernels was recorded) -- not one that only started up: the session is then
    #: incomplete, never "healthy" (``report.verdict``)
    unrecorded_rank_labels: tuple[str, ...] = ()
    #: where the host waited for the GPU (``job.waits.host_waits``: its sync calls and its polls), which the steps read
    #: an iteration's end by (not in the report); None: not read (a job made by hand), the sync calls alone then
    waits: Waits | None = None
    #: the job's other processes inside their one-time costs, read from their own files on this trace's clock
    #: (``job.peers``: ranks in sibling run folders of one machine): (starts, ends) ps, disjoint; None: none placed.
    #: A collective here waiting through them waits for a peer's start-up (``Context.peer_one_time_spans``)
    peer_one_time: tuple[np.ndarray, np.ndarray] | None = None
    #: each collective-running GPU of those processes: its collective calls, (starts, ends) ps in start order
    #: (``job.peers.placed_calls``); empty: no peer's entries known.  A collective here that a peer in it had not
    #: entered -- its matching call not begun (``job.peers.entered_with``) -- waits for that peer
    #: (``Context.waited_start_up``, ``job.peers.own_not_entered``)
    peer_calls: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    #: forward calls the framework records only with autograd on (``Framework.autograd_forward_event``) in a window
    #: with no training event (no backward, no optimizer step): forwards that kept tensors for a backward that never
    #: ran; 0 where there are none or a training event shows a backward (h37-recapture71)
    autograd_forwards: int = 0

    def framework(self, fw: Framework, alone: bool = False, work: Framework | None = None) -> Framework:
        """``fw`` as it talks to this job: its fixes for the job's tags, then the engine's own fixes on top.

        ``alone``: the capture is one process that talks to no other (the metrics' count of processes, no
        collective): its advice says nothing of ranks (``alone``).  Work neither training nor a confident forward
        (``any_work``) is told to loop its own step, not a training step: mi210_gpu_only's one process and
        compiled_a100_triton's Triton kernel read "one trace per rank" and ``train_step`` before (h37-review3).

        ``work``: the framework that ran the work where ``fw``'s profiler wrote the capture of another's program
        (``CaptureQuality.work_framework``): each written for the job, then composed (``frameworks.recorded_by``)."""
        # without GPU records the kind of the work is what the host's events name (``Kind.host_kind``)
        tags = context_tags(self.kind.host_kind or self.kind.kind, self.tags, alone)
        adapted = adapt(fw, tags, self.kind.engine)
        if work is not None:
            adapted = frameworks.recorded_by(adapt(work, tags, None), adapted)
        if self.kind.window == "frontend":  # a serving engine's front-end: the capture to take is its engine's trace
            front = [a.snippet for a in adapted.fix("capture_quality:frontend") if a.snippet]
            if front:
                adapted = dataclasses.replace(adapted, capture_snippet="\n".join(front))
        return adapted

    def work(self) -> str:
        """What the job's step is, for the fixes whose code runs or marks it: ``training``, ``inference`` (a forward
        pass) or ``any_work`` (neither training nor a confident forward: a step of its own)."""
        return work_of(self.kind.host_kind or self.kind.kind, self.tags)

    def as_dict(self) -> dict:
        """The report's ``job`` block (schema 1.2); ``tags`` and ``engine_id`` let the job-scope rules talk to the
        job as the host rules do (:func:`adapt`)."""
        return {
            "kind": self.kind.kind, "kind_confidence": self.kind.confidence, "kind_evidence": self.kind.evidence,
            "engine": self.kind.engine_name, "engine_id": self.kind.engine, "phase": self.phase.phase,
            "phase_evidence": self.phase.evidence, "one_time_ms": round(self.phase.total_ms, 3),
            "one_time_share": round(self.phase.share, 4), "unseen_gpu_ms": round(self.phase.unseen_ms, 3),
            "version": self.version, "tags": list(self.tags), "steps_per_call": dict(self.steps_per_call),
            "host_kind": self.kind.host_kind, **({"gpus_listed": self.gpus_listed} if self.gpus_listed else {}),
            # whose runtime made the calls of a window that lost its GPU records (the vendor its fixes speak to)
            **({"runtime_vendor": v} if (v := self.kind.runtime_vendor) else {}),
            # why the window's marks time no GPU step, where they time none (``Kind.times_gpu_step``): one key of two
            **({key: True} if (key := self.kind.no_gpu_step_key) else {}),
            # a file whose read stopped early (``Kind.damaged``): what is missing may lie past the damage, so a window
            # with no GPU record in the part read is told as that, never as one without GPU work (h37-damage69)
            **({"damaged": True} if self.kind.damaged else {}),
            # copies and no kernel (``Kind.window`` "copy_only"): GPU work, which the job line and title never deny
            **({"copies_only": True} if self.kind.window == "copy_only" else {}),
            # the collectives alone, filtered from a fuller trace (``Kind.window`` "collectives_only"): the job line's
            # words for a window whose GPU work holds none of the job's steps, not a loop's end's queued work
            **({"collectives_only": True} if self.kind.window == "collectives_only" else {}),
            # ... on a CPU backend (Gloo, MPI): no GPU work at all, the collectives' library says where they ran
            **({"collectives_backend": b} if (b := self.kind.collectives_backend) else {}),
            # the idle ranks in words and their count, which the session's rank arithmetic reads (``report.merge``)
            **({"idle_ranks": self.idle_ranks, "idle_rank_count": self.idle_rank_count,
                "idle_rank_labels": list(self.idle_rank_labels),
                "idle_rank_numbers": list(self.idle_rank_numbers)} if self.idle_ranks else {}),
            **({"unrecorded_rank_labels": list(self.unrecorded_rank_labels)} if self.unrecorded_rank_labels else {}),
        }


def context_tags(kind: str, tags: tuple[str, ...] | list[str], alone: bool) -> tuple[str, ...]:
    """A job's tags with what its context adds, for :func:`adapt`: ``alone`` (one process that talks to no other)
    and ``any_work`` (work neither training nor a confident forward: ``kind`` not "training" and no ``inference``
    tag).  One home for both the host rules (:meth:`Job.framework`) and the job-scope rules (``rules/_job``), so
    that a job rule's fix fits the job as a host rule's does."""
    said = ("alone",) if alone else ()
    if work_of(kind, tags) == "any_work":
        said += ("any_work",)
    return tuple(tags) + said


def work_of(kind: str, tags: tuple[str, ...] | list[str]) -> str:
    """What a job's step is, from its kind of work and tags: ``training``, ``inference`` (a forward pass, the tag) or
    ``any_work`` (neither training nor a confident forward: a step of its own)."""
    if kind == "training":
        return "training"
    return "inference" if "inference" in tags else "any_work"


#: :func:`adapt`'s answers by (framework, tags, engine), each beside the framework and engine it was made of: every
#: rule, table and job rule asks for the same host's framework again (~40 asks a host; 0.1-0.4 ms CPU each, up to
#: 6.5% of an analysis: ``benchmarks/rule_context.py``, h37-speed59).  Keyed on the objects themselves (``is``), not
#: on their ids' reuse; a Framework is frozen and every reader copies what it takes (``Framework.fix``), so one answer
#: is shared.
_ADAPTED: Memo = Memo(256)


def adapt(fw: Framework, tags: "tuple[str, ...] | list[str]", engine_id: str | None) -> Framework:
    """``fw`` talking to a job with ``tags`` run by engine ``engine_id``: the tags' fixes (``Framework.for_job``),
    then the engine's own fixes replacing those of the same rules.  A pure function of the three, asked once per
    distinct three (``_ADAPTED``)."""
    tags = tuple(tags)
    engine = engines.by_id(engine_id)
    return _ADAPTED.of((fw, engine), lambda: _adapt(fw, tags, engine), tags)


def _adapt(fw: Framework, tags: tuple[str, ...], engine: engines.Engine | None) -> Framework:
    """:func:`adapt` made anew."""
    adapted = fw.for_job(tags)
    if engine is None:
        return adapted
    # the engine's own way to profile it is the job's capture advice, as it is its capture fixes: the framework's text
    # for serving engines in general led with another engine's routes (h37-review13: sglang_b300_decode's capture
    # advice was vLLM's `VLLM_TORCH_PROFILER_DIR=... vllm serve`, SGLang's a comment under it)
    own = "\n".join(a.snippet for a in engine.capture if a.snippet)
    if own:
        adapted = dataclasses.replace(adapted, capture_snippet=own, capture_formats=engine.capture_formats)
    if not engine.fixes:
        return adapted
    fixes = {k: v for k, v in adapted.fixes.items() if k.split(":", 1)[0] not in engine.fixes}
    fixes.update(engine.fixes)
    fixes.update(allocator_fixes(adapted.fixes))  # the allocator's history is recorded the same under any engine
    return dataclasses.replace(adapted, fixes=fixes)


def detect_job(trace: Trace, launches: list[np.ndarray], fw: Framework | None = None) -> Job:
    """The job of one trace; ``launches``: per GPU, each device event's host launch record."""
    fw = fw or frameworks.detect_trace(trace)
    waits = host_waits(trace, launches, fw)  # a loop's iteration ends where its host waits: a sync or a poll
    kind = work_kind(trace, fw, waits)  # a lost launch is one the host's next wait shows run unrecorded
    started = context_start(trace)  # read by both: the context's creation is a one-time cost, and waits for nothing
    phase = window_phase(one_time_costs(trace, fw, launches, started), kind.window)  # the exit's costs are no warm-up
    release_free_heap()  # its durations and masks (~35 MB on the dense 100 MB capture), before the span search's
    phase.unseen_calls = unseen_gpu_calls(trace, launches, started)
    u = phase.unseen_calls
    phase.unseen_start, phase.unseen_end = union_intervals(trace.h.start[u].astype(np.int64, copy=False),
                                                           trace.h.end[u].astype(np.int64, copy=False))
    phase.stalls = async_stalls(trace, launches)
    del started
    structure = span_steps(trace, launches, fw, engines.by_id(kind.engine))
    if structure is None and trace.snapshot is not None:
        structure = snapshot_iterations(trace)
    if structure is None and kind.kind == "training":
        structure = step_end_steps(trace, fw)
        if structure is None and not kind.from_ranges:
            structure = backward_span_steps(trace, launches, fw)
    # a training job's launch period whose every repeat runs a backward: its iterations where its GPU's bursts read none
    # or, where the capture recorded no launch (a kernel trace alone), its busiest stream's period (device windows)
    periodic = ((training_iterations(trace, launches, fw.training_event, waits) or device_iterations(trace, launches))
                if structure is None and kind.kind == "training" else None)
    if structure is None and kind.kind != "training":
        # not for training: FSDP's all-gather rate limit makes the host wait before every layer, so a training
        # step's layers repeat with the waits a loop's calls have (the real Nsight FSDP pair reads 157-kernel "steps")
        structure = repeated_launches(trace, launches, waits)
        if structure is not None and within_one_call(structure.start, structure.end, model_calls(trace, fw)):
            # periods inside one call of the model are its layers (a real MoE forward's 9 blocks, each synced twice)
            structure = None
        passes = layer_passes(trace, structure) if structure is not None else None
        if passes is not None:  # periods each in one layer's own range are its layers: the passes they make, if any
            structure = passes if passes.start.size >= 2 else None
    kind = forward_loop_kind(trace, kind, structure, launches)  # a loop of forwards, no gradient: only now its repeats
    release_free_heap()  # the span searches' temporaries (~40 MB on the dense 100 MB capture), before the steps'
    version = _version(fw, trace)
    tags: list[str] = []
    if (kind.kind in ("inference", "serving") and kind.confidence != "low") or kind.host_kind == "inference":
        tags.append("inference")
    if kind.kind == "serving":
        tags.append("serving")
    if phase.phase in STARTING:  # a tear-down's one-time costs are the exit's: no cold start's fixes
        tags.append("cold")
    if native.native_host(trace.producer):
        tags.append("native_host")
    rng = fw.version_range(trace.producer)
    tags.extend(fw.version_tags(rng))  # the releases the framework's fixes are spelled for (an old PyTorch)
    if len(trace.h) and trace.h.name_mask(fw.tensor_parallel_event).any():
        tags.append("tensor_parallel")
    exchange = exchange_kind(trace, launches)
    if exchange is not None:
        tags.append(exchange_tag(exchange))  # what the all-to-all moves: its fix follows it (``job.exchange``)
    ranks = idle_rank_list(trace, launches)
    idle = idle_ranks(trace, ranks)
    return Job(kind=kind, phase=phase, structure=structure, version=version, version_low=rng[0] if rng else None,
               tags=tuple(tags),
               steps_per_call=_steps_per_call(trace.producer.get("steps_per_call", "")),
               optimizer_steps=step_end_count(trace, fw) if kind.kind == "training" else 0, periodic=periodic,
               gpus_listed=trace.producer.get("visible_gpus", ""), gpu_vendor=trace.producer.get("gpu_vendor", ""),
               idle_ranks=idle,
               idle_rank_count=len(ranks) if idle else 0,
               idle_rank_labels=idle_rank_labels(ranks) if idle else (),
               idle_rank_numbers=idle_rank_numbers(ranks) if idle else (),
               unrecorded_rank_labels=unrecorded_rank_labels(trace, ranks) if idle else (), waits=waits,
               autograd_forwards=_autograd_forwards(trace, fw, kind.kind))


def _autograd_forwards(trace: Trace, fw: Framework, kind: str) -> int:
    """Forward calls recorded only with autograd on (``Framework.autograd_forward_event``) in a window of forward
    passes (``kind`` inference) where no host event is a training one (a backward, an optimizer step): 0 otherwise.

    Why: a forward run with autograd on keeps every tensor its backward would need, and builds the graph to run it;
    where no backward ever runs, ``torch.inference_mode()`` drops both -- the memory-snapshot side says so from the
    bytes a forward keeps (``rules._memory.graph_kept``), the Kineto side said nothing (h37-hunt71b *Left* 1:
    ``wild/compiled_linear_gtx1650_no_backward``'s 100 compiled forwards).  Only where the trace proves it: an eager
    forward records nothing that tells grad mode on from ``no_grad``."""
    h = trace.h
    if kind != "inference" or not len(h):
        return 0
    n = int(h.name_mask(fw.autograd_forward_event).sum())
    return n if n and not h.name_mask(fw.training_event).any() else 0


def _steps_per_call(text: str) -> dict[str, int]:
    """``module=N,module=N`` (the XPlane reader's) as a dict."""
    out = {}
    for part in text.split(","):
        name, _, n = part.rpartition("=")
        if name and n.isdigit():
            out[name] = int(n)
    return out


def _version(fw: Framework, trace: Trace) -> str | None:
    rng = fw.version_range(trace.producer)
    if rng is None:
        return None
    lo, hi = rng
    low = ".".join(map(str, lo))
    if hi is None:
        return f"{fw.name} {low} or newer"
    last = (hi[0], hi[1] - 1) if len(hi) > 1 and hi[1] > 0 else hi
    high = ".".join(map(str, last))
    return f"{fw.name} {low}" if high == low else f"{fw.name} {low}-{high}"
