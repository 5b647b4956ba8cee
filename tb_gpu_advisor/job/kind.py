"""The kind of work a capture holds: a training step, an inference forward pass, a serving engine step, no GPU work.

Decided from positive evidence, most specific first: a serving engine's or generation loop's names
(``frameworks.engines``); the framework's training-only events (autograd's backward nodes, an optimizer's update,
TF's gradient ops), a training wrapper's own phase ranges (Lightning's ``training_step``, ``validation_step``) or a
backward pass in the compiled program (XLA's ``transpose(jvp(...))``); a recorded grad mode
(``inference_mode``).  A PyTorch capture with ops but neither backward nor optimizer is an inference forward pass;
an XLA program without any backward is one too.  Nothing either way is ``unknown``: the fixes then stay the
training loop's, as the guide writes them.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from tb_gpu_advisor import devices, formats, frameworks
from tb_gpu_advisor.devices import apple
from tb_gpu_advisor.devices.collectives import cpu_backend
from tb_gpu_advisor.common.fmt import and_list, gb, ms, pct, plural
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.devices.peaks import cpu_peak_flops
from tb_gpu_advisor.frameworks import Framework, engines, never, nvtx, user_ranges
from tb_gpu_advisor.frameworks.base import op_type
from tb_gpu_advisor.job.iterations import (UNPHASED_WHY, earlier_pass_held, first_step, framed_pass_phases,
                                           pattern_phases, stackless_pass_phases)
from tb_gpu_advisor.job.phase import captured_calls, context_start
from tb_gpu_advisor.job.structure import SpanSteps
from tb_gpu_advisor.job.waits import Waits, sync_waits
from tb_gpu_advisor.model.damage import CUT, UNREADABLE, Damage
from tb_gpu_advisor.model.columns import coverage, outermost, time_within, union_intervals
from tb_gpu_advisor.model.enclosing import Encloser
from tb_gpu_advisor.model.trace import (MEMORY_PHASES, PS_PER_MS, HostEvents, LiveStack, MemoryEvents, Trace,
                                        cuts, device_launches, line_processes, listed_gpu_models, queued_before,
                                        unreadable)

#: Kinds of work, as reported (``job.kind``).
KINDS = ("training", "inference", "serving", "no_gpu", "unknown")
#: Distinct names looked at per table: the evidence is in a capture's first names, and a hostile file may hold millions.
_MAX_NAMES = 200_000


@dataclass(frozen=True)
class Kind:
    kind: str  # one of KINDS
    confidence: str  # "high" | "medium" | "low"
    evidence: str  # in words, with the name that showed it
    engine: str | None = None  # frameworks.engines id
    engine_name: str | None = None
    #: no GPU work, and why the framework's ops ran on the CPU (a model never moved to a GPU), in words: "the host made
    #: no GPU runtime call", or its matmul/convolution ops launched no kernel; "" otherwise
    cpu_only: str = ""
    #: no GPU work on the CPU (``cpu_only``), though the capture lists the GPUs the program saw
    #: (``Trace.producer["visible_gpus"]``): the GPU was there, the work never reached it; "" otherwise
    gpu_seen: str = ""
    #: no GPU work, but work on accelerators no stage reads (``Trace.unread_devices``: TPUs, MTIA)
    unread_devices: tuple[str, ...] = ()
    #: no GPU record, but the host shows GPU use ("260 kernel launches", "22 allocator events on GPU 0"): the GPU's
    #: side of the capture was lost or not recorded, its work did not run on the CPU (kind ``unknown``, not ``no_gpu``)
    lost_gpu: str = ""
    #: the ``VENDOR`` whose runtime made the host's calls where the GPU's side was lost (``lost_gpu``), or where no GPU
    #: ran work (``no_gpu``) and the host's runtime calls are one vendor's (h37-hipwin66), "" otherwise: a window with
    #: no GPU record names no GPU, yet ``hipLaunchKernel`` says ROCm's -- whose words and capture fixes its findings
    #: take (``rules.base.Ctx.vendor``; h37-hiprocm36: a HIP window was told CUDA's build)
    runtime_vendor: str = ""
    #: no GPU record, and the host shows the job ran on a GPU backend whose work the profiler does not trace at all
    #: (``devices.apple``: "mps"): not lost records, so none of the lost-records words or fixes (kind ``unknown``)
    untraced_backend: str = ""
    #: no GPU work, and what the window holds instead (:data:`WINDOWS`): "startup" (CUDA calls, no kernel launched
    #: yet), "input_only" (the framework's input pipeline fetching batch after batch, no kernel launched: a loop that
    #: runs no model), "loop_ended" (the framework's steps hold one batch fetch and nothing of the model after it: the
    #: fetch that found the input exhausted, the profiler's window opened after the loop's last batch),
    #: "nvtx_only" (the user's NVTX ranges, no CUDA call), "no_cuda_call" (CUDA tracing on, no CUDA call),
    #: "tracing_off" (the capture's options say CUDA tracing was off), "counters" (the kernels were measured by their
    #: hardware counters, each replayed, not timed: ``Trace.producer["counter_ranges"]``), "failed" (the program died
    #: before its GPU work: ``Trace.producer["program_error"]``, its own last words), "wsl2" (kernels launched under
    #: WSL2, none recorded: the platform's limit, ``Trace.producer["wsl2"]``; "wsl2_driver_ok" where the recorded
    #: Windows driver is one NVIDIA's profilers trace the GPU with), "wsl2_untraced" (under WSL2 no CUDA
    #: call recorded at all, though the program loaded CUDA or ran to its output), "unclosed" (the session stopped
    #: before the program's CUDA trace was finalized, so its later CUDA records were never written:
    #: ``Trace.producer["cuda_unclosed"]``), "frontend" (a serving engine's
    #: front-end process, which runs no GPU work by design: ``engine`` names the engine, whose own process holds the
    #: GPU work), "input_on_cpu" (the input pipeline's loop with no model op and no GPU runtime call recorded: its
    #: batches on the CPU), "copy_only" (copies between host and GPU and no kernel: a bandwidth test, a staging
    #: program, or a window cut before the first kernel -- GPU work all the same, :func:`_copies_only`), "teardown"
    #: (the program's exit after its loop: calls that release what it made, none that make: :func:`_teardown`),
    #: "collectives_only" (collectives and nothing else, :func:`collectives_alone`: the GPUs' -- a filter of a fuller
    #: trace to its communication, GPU work all the same, but none of the job's steps -- or a CPU backend's, its kind
    #: ``no_gpu`` and ``collectives_backend`` the backend's name), "os_calls_only" (the OS runtime's calls alone, no
    #: host event, and no capture option saying whether CUDA was traced: :func:`_os_calls_window`), "ops_unrecorded"
    #: (the framework's compiled graphs ran and none of their ops was recorded, on the host or a GPU:
    #: :func:`_ops_unrecorded_window`), "" otherwise
    window: str = ""
    #: a ``collectives_only`` window's collectives ran on a CPU backend (``devices.collectives.CPU_BACKENDS``): its
    #: name, "Gloo", "MPI"; "" for the GPUs' collectives or any other window.  Its words and fixes are that case's:
    #: the job's communication on the CPU, none of its work recorded (h37-gloo68)
    collectives_backend: str = ""
    #: no GPU work on the CPU (``cpu_only``) whose host recorded collectives of one CPU backend beside its ops
    #: (:func:`_cpu_backend_ops`): the library's name, "Gloo", "MPI"; "" otherwise.  The job's communication ran on
    #: the CPU by that backend's nature: a GPU job's fix is its process group on the GPUs' library besides its tensors
    #: on the GPU (h37-hunt70a: a hand-written 4-rank Gloo ring all-reduce, told only "move the model ... there")
    cpu_collectives: str = ""
    #: a ``copy_only`` window's copies from or to pageable host memory, how many (0: none, or none known): the
    #: copies' own fix, pinned memory, is the window's first
    pageable_copies: int = 0
    #: a memory snapshot whose allocator history holds no allocation -- only frees of blocks allocated before it began
    #: -- and nothing allocated at the dump: the program's tear-down, what it holds in words ("13 frees of blocks
    #: allocated before it began ..., and nothing allocated at the dump": :func:`_snapshot_teardown`); "" else
    snapshot_teardown: str = ""

    @property
    def times_gpu_step(self) -> bool:
        """Whether the window's step marks may time a GPU step: not in a window without GPU work (kind ``no_gpu``),
        marked or not, nor where the job's reading says its marks time none (:data:`NO_GPU_STEP`: the loop's end, CUDA
        tracing off).  The one answer to "do the window's marks time a GPU step?", which the metrics stage
        (``metrics.compute.gpu_step_timed``), the rules and the report's JSON (``kind`` and the ``job.<key>`` of
        :data:`NO_GPU_STEP`: ``report.verdict.no_gpu_step``) read.  Why one: the question had two tuples and two
        properties, which every reader -- the metrics, the laws, the tab -- joined again, and one more reading apart
        (h37-tidy29).  Why a window without GPU work times none, marked or not: a GPU step is the GPU's work of one
        iteration, and such a window has none; a CPU-only host's ``ProfilerStep`` marks time its host's loop
        (``h200_jobs/torch_cpu_only``: 4 of 88 ms, all host compute), which the JSON booked as 4 GPU steps under a
        title saying "no step: the window holds no GPU work"."""
        return self.kind != "no_gpu" and self.window not in NO_GPU_STEP

    @property
    def no_gpu_step_key(self) -> str:
        """The JSON key saying why the window's marks time no GPU step (:data:`NO_GPU_STEP`: ``marks_no_job_step``,
        ``gpu_unrecorded``), "" where none does -- the reason :attr:`times_gpu_step` reads, for a reader that asks
        which (the cards of a window whose GPU side went unrecorded: ``report.build``)."""
        return NO_GPU_STEP.get(self.window, "")

    #: the key of the capture format's fix for this window where the capture's own record picks one
    #: (``Format.window_fixes``: ``tracing_off:time``, the user's command with its trace options corrected and the
    #: window on its iteration range), and the words its code is filled with (``program``, ``retrace``,
    #: ``iteration`` ...); "" and () for the window's general fix
    window_fix: str = ""
    fix_words: tuple[tuple[str, str], ...] = ()
    #: a ``loop_ended`` window's count of the steps the loop ran before the fetch that found its input exhausted (the
    #: framework's number on that step's mark: ``ProfilerStep#N``), 0 where the mark numbers none
    loop_steps: int = 0
    #: a ``loop_ended`` window whose GPU ran work all the same: work queued before the window, none of it launched in
    #: it, run after the last marked step inside the profiler's exit sync (:func:`_queued_before`) -- the loop's last
    #: step's backlog, in words ("964 kernels (53.5 ms) and 34 copies or memsets ..."); "" otherwise.  The kind is
    #: still what those kernels show (they are the job's), but the window holds none of its steps
    queued: str = ""
    #: the format of a window's capture (``Trace.format``): whose profiler options put the window right
    capture_format: str = ""
    #: the kind was read off the user's NVTX range names: the job has an iteration structure of its own
    from_ranges: bool = False
    #: GPU work ran, then the program died: its own last words (``Trace.producer["program_died"]``); the window holds
    #: what ran before the failure, not the job's steady state; "" otherwise
    died: str = ""
    #: launches the CUDA runtime refused, their kernels never run (``Trace.producer["refused_launches"]``, from the
    #: calls' return codes), in words; "" where every launch was accepted
    refused_launches: str = ""
    #: the runtime refused every launch the host made (:func:`_every_launch_refused`): no kernel ran because none was
    #: accepted, so the missing GPU records are the refusal's, not a loss, and ``refused_launches`` is the one thing
    #: to say of the window -- decided here, once, from the counts; the rules read it
    every_launch_refused: bool = False
    #: GPU use with no GPU record -- or no GPU call at all in what was read --, in a file the reader could not read to
    #: its end (``Trace.problems``: cut off, corrupt): the records may lie past the damage rather than be missing from
    #: the capture, in words; "" otherwise -- and "" for a file read whole whose records contradict each other
    #: (a ``model.damage`` record of kind contradiction) or whose reader skipped records and read on to its end
    #: (a ``model.damage`` record of kind unreadable): nothing lies past that damage, so what is missing is missing
    damaged: str = ""
    #: the code of that damage (``model.damage.Damage.what``: "json_cut", "json_writers" ...), where ``damaged``
    #: speaks: a framework's fix for that damage is asked first (``capture_quality:damaged_records:<what>``)
    damaged_what: str = ""
    #: GPU use with no GPU record -- or no GPU call at all in what was read --, in a file read to its end whose reader
    #: skipped records it could not read (a ``model.damage`` record of kind unreadable: events whose time is no number): the GPU's
    #: records may be among those skipped rather than lost by the capture, in words (the first such entry); ""
    #: otherwise.  Nothing lies past that damage, so not ``damaged``'s words (h37-damage66)
    unread: str = ""
    #: no GPU record (no GPU work, or its records lost), but the framework's own host events name the work:
    #: "training" (autograd's backward nodes, an optimizer's step, a wrapper's training phase) or "inference" (an
    #: inference entry point, a wrapper's evaluation or prediction phase, a
    #: recorded grad mode off); "" otherwise.  The fixes follow it (a training loop, a forward), as they follow
    #: ``kind`` where kernels ran (:func:`host_kind`)
    host_kind: str = ""
    #: kernels ran, but a real share of the launches the runtime accepted has no kernel record although the GPU was
    #: done with them inside the window (:func:`lost_launches`): the part of the window from ``lost_from_ps`` on holds
    #: host calls without their GPU work, in words ("24,801 of 24,944 launches (99.4%) ..."); "" otherwise
    lost_launches: str = ""
    #: where the first lost stretch begins (the first such launch's start, ps on the trace's clock); -1 where none
    lost_from_ps: int = -1
    #: every lost stretch, ``(from, to)`` ps: its lost launches' calls, first to last, ``to`` -1 where the kernel
    #: records never resume (a lost tail); () where none
    lost_spans: tuple[tuple[int, int], ...] = ()
    #: those launches' share of the accepted launches; 0.0 where none
    lost_share: float = 0.0
    #: why the records were lost, as the capture's own settings or log show it, in the format's words
    #: (``Trace.producer["records_cause"]``: "the capture stopped on its --duration of 3.8 s ..."); "" where they
    #: show none
    lost_cause: str = ""
    #: the key of the capture format's fix for that cause (``Format.window_fixes``); "" for its general one
    lost_fix: str = ""
    #: the activity the capture holds no record of at all, where its format shows that none was made -- not asked
    #: for, or its tracer recorded nothing -- rather than lost on the way (``Trace.producer["unrecorded_activity"]``:
    #: "CUDA" for a torch.profiler trace of host ops alone); "" otherwise
    unrecorded: str = ""
    #: the profiler's own count of the GPU records it dropped, in words (``Trace.producer["records_dropped"]``); ""
    #: where it kept none
    lost_counted: str = ""
    #: that count; 0 where none
    lost_counted_n: int = 0


#: Windows whose step marks time no GPU step, each with the report's JSON key that says why (``job.<key>``:
#: :attr:`Kind.times_gpu_step`):
#:
#: * ``loop_ended`` -> ``marks_no_job_step``: the marks time none of the job's steps.  The loop's end marks a step
#:   (``ProfilerStep#2``, 0.54 ms) that holds one fetch finding the input exhausted and nothing of the model: read as
#:   the job's step, the report's JSON held a 0.54 ms step and an account of it under a title saying "no step" and
#:   words saying "none of the job's steps in it" (h37-survey55's ``wild/loop_ended_a100_gnn``).
#: * ``tracing_off`` -> ``gpu_unrecorded``: the capture did not record the GPU's side; the marks may time the job's
#:   iterations (the user's NVTX ranges), but a ledger of such a step books the GPU's unrecorded work as the host's
#:   time.  An export made with ``nsys -t nvtx`` (h37-survey57's ``wild/tracing_off_nvtx_a10_train``: 15
#:   ``benchmark_iteration`` ranges of ~210 ms) was read as 13 steps whose ledger said "host compute 203 ms" of each,
#:   an account of GPU time the capture never saw, under a title saying "no step: the window holds no GPU work".
#: * ``unclosed`` -> ``gpu_unrecorded``: the profiler stopped before it wrote the program's CUDA records; what the
#:   window keeps is what was written before, not a pass of the program (cestwc's solver, h37-nsys58: "one pass of
#:   29.9 ms", its two start-up calls, of a 6.04 s run of 20 steps).
#: * ``collectives_only`` -> ``marks_no_job_step``: the file kept the collectives alone (:func:`collectives_alone`),
#:   so its GPU bursts are its collectives, not the job's steps (a CPU backend's: no GPU work, and none of its steps).  TraceLens' NCCL-only filter of a 4-rank MI300X DDP
#:   said "collectives only: no step of the job in it" in its header, yet the rest of its report read 7 guessed
#:   16.1 ms steps of those bursts: a step-time share of 0.0% "!!", 2.6 collectives a step, an achievable step
#:   (the job's steps are ~45 ms; h37-nccl67).
NO_GPU_STEP = {"loop_ended": "marks_no_job_step", "tracing_off": "gpu_unrecorded", "unclosed": "gpu_unrecorded",
               "collectives_only": "marks_no_job_step"}
#: What a window without GPU work can hold (``Kind.window``), each with what the capture's reader must show for it.
WINDOWS = ("startup", "input_only", "loop_ended", "nvtx_only", "no_cuda_call", "tracing_off", "counters", "failed", "wsl2",
           "wsl2_driver_ok", "wsl2_untraced", "unclosed", "frontend", "input_on_cpu", "copy_only", "teardown",
           "collectives_only", "profiler_only", "os_calls_only", "ops_unrecorded", "kernels_unrecorded",
           "programs_no_kernel")
#: A runtime call this long is the CUDA context's creation (tens to hundreds of ms), which the first call that needs
#: a context pays -- ``cudaFree(0)``, ``cudaMalloc``, ``cudaSetDevice`` -- never the call's own work.
_CONTEXT_NS = 10_000_000
#: A sync this long waited on GPU work (an idle GPU's sync returns in microseconds), ps.
_UNSEEN_WAIT_PS = 1_000_000_000
#: An allocation op this long allocated on a GPU (creating its context): a host allocation maps pages lazily, in
#: microseconds to a few ms even for a large block (:func:`_context_allocation`).
_DEVICE_ALLOC_NS = 50_000_000


def work_kind(trace: Trace, fw: Framework, waits: Waits | None = None) -> Kind:
    """The kind of work of ``trace`` (written by ``fw``); where GPU work ran and the program then died (its standard
    error, kept in the capture, ends in a failure), the kind says so (``Kind.died``).  ``waits``: where the host waited
    for the GPU (``job.waits.host_waits``: its syncs and polls), which the lost launches are read by; its sync calls
    alone where not given."""
    kind = _work_kind(trace, fw)
    failed = trace.producer.get("program_died", "")
    if failed and not kind.window and (kind.lost_gpu or _ran_kernels(trace)):  # its records lost with it, or not
        kind = dataclasses.replace(kind, died=failed, capture_format=kind.capture_format or trace.format)
    refused = trace.producer.get("refused_launches", "")
    if refused:
        kind = dataclasses.replace(kind, refused_launches=refused)
    elif _ran_kernels(trace):  # a refused launch runs no kernel: its missing record is the refusal's, said above
        kind = _lost_records(trace, kind, waits)
    cause = trace.producer.get("unrecorded_cause", "")
    if kind.lost_gpu and cause and not kind.lost_cause:  # the capture's profiler records no GPU side at all
        kind = dataclasses.replace(kind, lost_cause=cause, lost_fix=trace.producer.get("unrecorded_fix", ""),
                                   unrecorded=trace.producer.get("unrecorded_activity", ""),
                                   capture_format=kind.capture_format or trace.format)
    if kind.lost_gpu:  # whose runtime made the calls; with none, whose GPUs the process listed (h37-window62)
        calls = [n for n in trace.h.names if devices.is_runtime_call(n)]
        said = None if calls else _shown_vendor(trace)
        kind = dataclasses.replace(kind, runtime_vendor=said or devices.vendor_of_calls(calls).VENDOR)
    elif kind.kind == "no_gpu" and (said := _calls_vendor(trace)):
        kind = dataclasses.replace(kind, runtime_vendor=said)
    cut = cuts(trace.problems)  # a file read to its end (contradicting, or records skipped) has nothing past its damage
    what = _cut_what(trace)
    if kind.lost_gpu and cut:  # a file not read to its end: what is missing may be past the damage
        kind = dataclasses.replace(kind, damaged=cut[0], damaged_what=what)
    elif kind.kind == "no_gpu" and cut:  # no GPU record in the part read is no proof the window held none
        kind = _cut_before_gpu(kind, cut[0], what)
    elif unread := unreadable(trace.problems):  # read to its end, records skipped: they may be the GPU's
        kind = _among_unread(kind, unread[0], _unread_what(trace))
    if kind.kind in ("no_gpu", "unknown") and trace.snapshot is None and not _ran_kernels(trace):
        said = host_kind(trace, fw)
        if said is not None:
            kind = dataclasses.replace(kind, host_kind=said[0], evidence=f"{kind.evidence}; {said[1]}")
    return kind


def _cut_before_gpu(kind: Kind, first: str, what: str) -> Kind:
    """``kind`` (``no_gpu``) of a file whose read stopped early (``first``: the first cut's words, ``what`` its code):
    no GPU record in the part read is no proof the window held no GPU work -- what the file holds past the damage was
    not read.  So ``damaged`` is set on every such kind, which the report's title, job line and tab read
    (``report.verdict.NO_STEP_WHY``: "no GPU record in the part of the damaged file read", never "the window holds no
    GPU work"; h37-damage69: wild/two_writers_v100_gloo's title said the window held no GPU work, its damage finding
    that the GPU's records may lie past the damage, 540 kernels among the unread bytes).  A reading of the host alone
    -- no GPU call, so the work ran on the CPU -- is withdrawn with it (h37-ui11: a Kineto trace cut at its 241st
    event said "the host made no GPU runtime call: the work ran on the CPU" and "move the model to the GPU"); a window
    the capture's own records name (start-up, tracing off, a serving front-end ...) keeps its reading, now beside the
    damage."""
    if kind.window or kind.unread_devices or kind.collectives_backend:
        return dataclasses.replace(kind, damaged=first, damaged_what=what)
    return dataclasses.replace(kind, confidence="low", cpu_only="", gpu_seen="", damaged=first, damaged_what=what,
                               evidence="no kernel, copy, collective or GPU runtime call in the part of the damaged "
                                        "file that was read; what it holds past the damage was not read")


def _cut_what(trace: Trace) -> str:
    """The code of the first damage of ``trace`` that cut its read short (``Damage.what`` of kind cut), "" where none
    or where the reader wrote words only: which fix the damage asks for (several writers in one file, not a copy cut
    short: h37-hunt69)."""
    return next((p.what for p in trace.problems if isinstance(p, Damage) and p.kind == CUT), "")


def collectives_alone(trace: Trace, fw: Framework | None = None) -> int:
    """The collectives of a capture that holds nothing else, else 0: the GPUs' collective kernels with no compute
    kernel, copy or fill on any GPU and nothing of the host (a filter of a fuller trace to its communication:
    TraceLens' NCCL-only view), or -- with ``fw``, whose names say which backend a host event's collective ran on --
    a CPU backend's collectives the host recorded and nothing else at all (:func:`_cpu_collectives`).
    Decided here, where the job's reading says what the window is (``Kind.window`` "collectives_only", which times no
    GPU step: :data:`NO_GPU_STEP`), so the steps, the metrics, the rules and the report read one answer.
    Why: such a file's GPU bursts are its collectives, not the job's steps, and the skew of its first collectives is
    the ranks' unrecorded work before them, not launches: read as a job it was given guessed 16 ms steps and "host
    thread contention" (h37-huntk66 *Left* 3, h37-straggle66), and after its header said so, still 7 steps of them in
    every table (h37-nccl67).  A CPU backend's alone is the same window on the host's side: the job's work is not in
    it, and its collectives ran on the CPU by the backend's nature (h37-gloo68)."""
    if len(trace.h) > 0:
        return len(trace.h) if fw is not None and _cpu_collectives(trace, fw) else 0
    n = 0
    for d in trace.devices:
        if not len(d):
            continue
        coll = d.kind == devices.KIND_COLLECTIVE
        if not coll.all():
            return 0
        n += int(coll.sum())
    return n


#: How :func:`lost_launches` ends its words, and how a file whose reader skipped records ends them (:func:`_among_unread`).
_NOT_WRITTEN = ", so their kernels ran but their records were not written"
_NOT_READ = ", so their kernels ran but no record of them was read"


def _unread_what(trace: Trace) -> str:
    """The code of the first damage of ``trace`` whose records were skipped (``Damage.what`` of kind unreadable)."""
    return next((p.what for p in trace.problems if isinstance(p, Damage) and p.kind == UNREADABLE), "")


def _among_unread(kind: Kind, first: str, what: str = "") -> Kind:
    """``kind`` of a file read to its end whose reader skipped records it could not read (``first``: the first such
    damage entry): GPU use without a GPU record, or no GPU call in what was read, is no proof the capture lost them or
    the work ran on the CPU -- they may be among the skipped records (h37-damage66: before, the skipped records were
    told as a cut, "past the damage"; read as no damage, "The capture lost its GPU records")."""
    if kind.lost_gpu:
        return dataclasses.replace(kind, unread=first)
    if kind.lost_launches:  # launches without kernels: theirs may be among the skipped records (h37-damage70)
        return dataclasses.replace(kind, unread=first, damaged_what=what,
                                   lost_launches=kind.lost_launches.replace(_NOT_WRITTEN, _NOT_READ))
    if kind.cpu_only:
        return dataclasses.replace(kind, confidence="low", cpu_only="", gpu_seen="", unread=first,
                                   evidence="no kernel, copy, collective or GPU runtime call among the records that "
                                            "could be read; the reader skipped records it could not read, which may "
                                            "hold them")
    return kind


def host_kind(trace: Trace, fw: Framework) -> tuple[str, str] | None:
    """(kind, in words) the framework's own host events say of a capture without GPU records: its ops and ranges are
    recorded whether or not a kernel was (a CPU-only run, a capture whose GPU side was lost), so a backward node or an
    optimizer's step there is a training step, an inference entry point or a recorded grad mode off a forward.  None
    where they say neither: the work is of no known kind.  Why: the fixes loop the job's own step (a Lightning
    ``training_step`` capture on a CPU, ``wild/lightning_cpu_fit``, was told ``run_one_step()``)."""
    used = _used_names(trace, fw) if len(trace.h) else []
    named = [n for n in used if fw.training_event(n)]
    work = [n for n in named if not fw.grad_reset_event(n)]  # a zero_grad alone may precede a no-grad forward
    # the name that says training plainly: the step's end (an optimizer's step) where the host recorded one, not a
    # wrapper's forward that only a training job runs (gpu_events_stripped: `DistributedDataParallel.forward` was
    # shown as "a training step" beside `Optimizer.step#FusedAdam.step`, h37-left43)
    train = next((n for n in work if fw.step_end_event(n)), work[0]) if work else None
    if train is not None:
        return "training", f"its host events name a training step: `{_short(train)}`"
    phase = _phase_kind(used, fw)
    if phase is not None:
        return phase
    infer = next((n for n in used if fw.inference_event(n)), None)
    if infer is not None:
        return "inference", f"its host events name the framework's inference entry point: `{_short(infer)}`"
    mode = trace.producer.get("grad_mode", "")
    if mode in ("inference_mode", "no_grad"):
        return "inference", f"it records grad mode `{mode}`: forward passes"
    return None


def _calls_vendor(trace: Trace) -> str | None:
    """The ``VENDOR`` whose runtime made every runtime call the host recorded (``devices.vendor_shown``: no default),
    None where none or several vendors' did.  Why: a window in which no GPU ran work still says whose runtime the
    program and the profiler called -- ROCm's PyTorch's ``hipGetDeviceCount`` / ``hipDeviceSynchronize`` on an MI300X
    whose model stayed on the CPU was told ``cudaMalloc``, CUDA and ``torch.cuda``'s NVIDIA words (h37-hipwin66);
    the calls are the runtime's word, not a GPU that ran work (``Kind.runtime_vendor``)."""
    return devices.vendor_shown([n for n in trace.h.names if devices.is_runtime_call(n)])


def _listed_vendor(trace: Trace) -> str | None:
    """The ``VENDOR`` that names every GPU the profiled process listed (``Trace.producer["visible_gpus"]``), None where
    it lists none or one no vendor names (``devices.vendor_claimed``)."""
    listed = trace.producer.get("visible_gpus", "")
    return devices.vendor_claimed(listed_gpu_models(listed)) if listed else None


def _shown_vendor(trace: Trace) -> str | None:
    """The ``VENDOR`` of a window whose host recorded no runtime call: the one naming every GPU the process listed
    (:func:`_listed_vendor`), else the one the file shows otherwise (``Trace.producer["gpu_vendor"]``, a reader's
    reading of its header keys, ops and backend: ``unknown`` where nothing names a vendor), None where the reader
    says nothing (its format's default, NVIDIA's, stands).  Why: a window with no GPU record and no runtime call, on
    a GPU nothing in the file names, was read as NVIDIA's and told CUDA, CUPTI and Nsight (h37-vendor66)."""
    return _listed_vendor(trace) or trace.producer.get("gpu_vendor") or None


def _unrecorded(trace: Trace) -> str:
    """What a capture that lost its GPU records says, where something else shows the job used the GPU: in the
    runtime's word of the GPUs the process listed (HIP for ROCm's PyTorch on an MI300X), CUDA's where none names one."""
    runtime = devices.vendor_called(_shown_vendor(trace)).TERMS["runtime"]
    return (f"but the capture holds no {runtime} call, kernel or copy: the job used the GPU, and its {runtime} "
            "activity was not recorded")


def _work_kind(trace: Trace, fw: Framework) -> Kind:
    """The kind of work, from what the capture holds: a memory snapshot's allocations; with no kernel recorded, why
    (another accelerator, counters only, GPU records lost) or what the window held instead; with kernels, the
    strongest evidence of serving, training or a forward pass."""
    kernels = [n for d in trace.devices if len(d) for n in d.names[:_MAX_NAMES]]
    if trace.snapshot is not None and not kernels:
        return _snapshot_kind(trace, fw)
    if not _ran_kernels(trace):
        return _no_kernel_kind(trace, fw)
    host = list(trace.h.names[:_MAX_NAMES]) if len(trace.h) else []
    engine = _engine_kind(trace, host, kernels)
    if engine is not None:
        return engine
    used = _used_names(trace, fw)
    phase, ranged = _phase_kind(used, fw), _nvtx_kind(trace)
    kind = _training_kind(trace, fw, used, kernels, phase, ranged) or _forward_kind(trace, fw, used, host, phase, ranged)
    return _window_kind(trace, host, fw, ran=kind)


def _backlog_window(w: _Held) -> Kind | None:
    """The kind the window's kernels show (``w.ran``) read as the loop's end where the host's window is one
    (:func:`_loop_ended`) and the GPU's work in it is all queued before it (:func:`_queued_before`); None otherwise.

    Why: a window's kernels are not always its own.  torch.profiler opened after the loop's last batch (a schedule
    whose wait and warmup steps used the loader up) records one ``ProfilerStep#N`` holding the fetch that found the
    input exhausted; the last step's launches, queued before the window, run in it, inside the profiler's exit sync.
    Read as the job's, that window was "a training step" of 0.56 ms, input-bound by its 42 us fetch, with the GPU idle
    in it (ryienh/gnn-ops-benchmark ``thetagpu11_3884292``: 964 kernels, 53.5 ms, none launched in the window)."""
    trace, fw = w.trace, w.fw
    ended = _loop_ended(trace, fw)
    queued = _queued_before(trace, fw) if ended else ""
    if not queued:
        return None
    return dataclasses.replace(w.ran, loop_steps=_loop_steps(trace, fw), queued=f"{ended}; {queued}",
                               capture_format=trace.format)


def _collectives_window(w: _Held) -> Kind | None:
    """A window of the collectives alone (:func:`collectives_alone`), None otherwise.  With kernels, the kind the
    GPUs' collectives show (``w.ran``): its GPU work is the job's, but none of its steps -- the steps, the metrics and
    the report follow :data:`NO_GPU_STEP` (h37-nccl67).  Without, a CPU backend's collectives the host recorded and
    nothing else (:func:`_cpu_collectives_kind`)."""
    if w.ran is None:
        return _cpu_collectives_kind(w.trace, w.fw)
    return dataclasses.replace(w.ran, capture_format=w.trace.format) if collectives_alone(w.trace) else None


def _cpu_collectives(trace: Trace, fw: Framework) -> str:
    """The library's own name (``devices.collectives.cpu_backend``: Gloo, MPI) where every host event is a collective
    of that one CPU backend (``Framework.collective_backend``) and the capture holds nothing else -- no GPU record, no
    allocator event, no Python span, no NVTX range; "" otherwise.  Why nothing else: a window holding an op, a step
    mark or a runtime call recorded the job's own work, which its other readers read (``wild/cpu_only_gloo``: 10
    ``gloo:all_reduce`` beside a ``ProfilerStep`` and ``aten::empty`` is a CPU job's step, not this)."""
    h = trace.h
    if (not len(h) or any(len(d) for d in trace.devices) or trace.memory or trace.unread_devices
            or (trace.spans is not None and len(trace.spans))):
        return ""
    backends = {fw.collective_backend(h.names[int(i)]) for i in np.unique(h.name)}
    return cpu_backend(next(iter(backends))) if len(backends) == 1 else ""


def _cpu_collectives_kind(trace: Trace, fw: Framework) -> Kind | None:
    """No GPU work, where the window holds a CPU backend's collectives and nothing else (:func:`_cpu_collectives`):
    how many, of which collectives, on how many threads -- and that no op, step mark, GPU runtime call
    or GPU record is in it; None otherwise.  Why: the backend moves host memory, so the job's communication ran on the
    CPU -- by design, or because its tensors never reached a GPU --, and the window recorded none of the job's own
    work.  Told "was the GPU visible? ... add the device to the profiler's activities", the advice of a GPU job whose
    device records were lost, Princeton COS 568's 4-rank Gloo BERT traces (69,038 ``gloo:gather`` / ``gloo:scatter``
    on two threads that are not the main one, ``Op count`` 0) were never told either (h37-gloo68)."""
    library = _cpu_collectives(trace, fw)
    if not library:
        return None
    h = trace.h
    each = _most_named(h.names, h.name, 4, times="x")
    threads = int(np.unique(h.line).size)
    return Kind("no_gpu", "high", f"{plural(len(h), f'{library} collective')} ({each}) on "
                                  f"{plural(threads, 'host thread')} and nothing else -- no op, step "
                                  f"mark, GPU runtime call or GPU record: {library} moves host memory, so the job's "
                                  "collectives ran on the CPU, and none of its own work was recorded",
                collectives_backend=library, capture_format=trace.format)


def _no_kernel_kind(trace: Trace, fw: Framework) -> Kind:
    """A capture with no kernel: the work ran on an accelerator the Advisor does not read, or the profiler measured
    counters instead of a timeline, or the GPU's records were lost (:func:`_lost_gpu_kind`); else what the window
    held (:func:`_window_kind`)."""
    if trace.unread_devices:
        return Kind("no_gpu", "high", f"the work ran on {and_list(trace.unread_devices)}, not on a GPU: an accelerator "
                                      "the Advisor does not analyse", unread_devices=trace.unread_devices)
    names = trace.h.names[:_MAX_NAMES] if len(trace.h) else []
    # a graph's launch is GPU work launched as surely as a kernel's (h37-randjobs4: 6 `cudaGraphLaunch` whose kernels
    # the export lost read "start-up only ... no kernel was launched")
    kernels = int(trace.h.name_mask(devices.is_launch_call).sum()) if names else 0
    graphs = int(trace.h.name_mask(devices.is_graph_launch).sum()) if names else 0
    launched = kernels + graphs
    untraced = _untraced_backend(trace, fw)
    if untraced is not None:
        return untraced
    counted = int(trace.producer.get("counter_ranges", 0))
    if counted:  # measured, not lost: the profiler replayed each kernel to read its counters
        return Kind("unknown", "low", f"{counted:,} kernels measured by their hardware counters (each replayed to "
                                      "read them), not timed: the capture holds no timeline of the GPU's work",
                    window="counters", capture_format=trace.format)
    lost = _lost_gpu_kind(trace, fw, names, launched, _launched_words(trace, kernels, graphs))
    if lost is not None:
        return lost
    kind = _window_kind(trace, names, fw)
    return dataclasses.replace(kind, capture_format=trace.format) if kind.window else kind


def _untraced_backend(trace: Trace, fw: Framework) -> Kind | None:
    """The job ran on Apple's GPU (PyTorch's MPS backend), whose work torch.profiler does not trace: the kind says so,
    with what showed it -- the ops dispatched only for MPS tensors (``Framework.backend_event``), the MPS allocator's
    ``[memory]`` events (``Trace.producer["backend_memory"]``); None where neither is in the capture.

    Why: a capture of MPS work holds the host's ``aten::`` ops and no kernel by design, so the physics that show a GPU
    whose CUDA records were lost (a scalar read that waited, an op faster than a CPU) hold here too, and read as lost
    CUDA records they told a Mac's user to trace CUDA again (amdmps35's Left).  A launch recorded beside them is a
    CUDA/HIP/XPU runtime's: its own checks read that capture."""
    if len(trace.h) and trace.h.name_mask(devices.is_runtime_call).any():
        return None
    ops = _backend_ops(trace, fw, apple.BACKEND)
    events = int(trace.producer.get("backend_memory_events", 0) or 0) \
        if trace.producer.get("backend_memory") == apple.BACKEND else 0
    shown = [w for w in (ops, f"{plural(events, 'allocator event')} on the MPS device" if events else "") if w]
    if not shown:
        return None
    return Kind("unknown", "low", f"the job ran on {apple.GPU} through PyTorch's MPS backend ({'; '.join(shown)}), and {apple.UNTRACED}",
                untraced_backend=apple.BACKEND, capture_format=trace.format)


def _backend_ops(trace: Trace, fw: Framework, backend: str) -> str:
    """The host's ops dispatched only for ``backend``'s tensors (``Framework.backend_event``), as ``N ops: `a`, `b```
    (most frequent first); "" for none."""
    if not len(trace.h):
        return ""
    mask = trace.h.name_mask(lambda n: fw.backend_event(n) == backend)
    return _counted_ops(trace, mask)


def _launched_words(trace: Trace, kernels: int, graphs: int) -> str:
    """What the host launched, in its vendor's words: "12 kernels", "6 CUDA graphs", "12 kernels and 6 CUDA graphs"."""
    if not graphs:
        return plural(kernels, "kernel")
    word = devices.vendor_of_calls(n for n in trace.h.names if devices.is_graph_launch(n)).TERMS["graphs"]
    said = f"{graphs:,} {word if graphs != 1 else word[:-1]}"
    return f"{plural(kernels, 'kernel')} and {said}" if kernels else said


def _every_launch_refused(trace: Trace, launched: int) -> bool:
    """Whether the runtime refused every one of the ``launched`` launches (``Trace.producer["refused_count"]``, the
    calls that returned a launch error).  Why: a refused launch runs no kernel, so its missing GPU record is the
    refusal's, not a profiler's loss (Butter-gpw/CUDA's export: 21 ``cudaLaunchKernel`` calls, each returned
    cudaErrorUnsupportedPtxVersion under a driver older than the toolkit, read "the GPU's side of the capture was
    lost" and told to trace CUDA again)."""
    return int(trace.producer.get("refused_count", 0) or 0) >= launched


def _lost_gpu_kind(trace: Trace, fw: Framework, names: list[str], launched: int, what: str = "") -> Kind | None:
    """Where the job used a GPU whose records the capture lacks, the evidence that it did, strongest first: launches
    with no kernel (WSL2's platform, or records lost), the allocator's GPU memory, ops only a GPU runs, a GPU-only
    process group, a sync that waited on the GPU, a context created, an op faster than a CPU, a scalar read that
    waited on a queue.  None where nothing shows GPU work: the kind is then of no GPU work at all."""
    wsl2 = trace.producer.get("wsl2", "")
    if launched and wsl2:  # the platform, not the file: WSL2 records the CUDA calls, the kernels only with
        # a recent Windows driver and profiler
        driver = trace.producer.get("nv_driver", "")
        recent = devices.nvidia.wsl_profiling_driver(driver)
        why = (f"the driver is recent enough for GPU tracing there ({devices.nvidia.WSL_PROFILING_DRIVER} or newer), "
               "so the profiler's release or the Windows build is why" if recent else
               "where the GPU's activity is recorded only with a recent Windows driver and profiler")
        return Kind("unknown", "low", f"the host launched {what}, but the capture holds no "
                                      f"GPU record of them: it ran under WSL2 (Linux kernel {wsl2}"
                                      f"{f', Windows driver {driver}' if driver else ''}), {why}",
                    window="wsl2_driver_ok" if recent else "wsl2", capture_format=trace.format)
    if launched and _every_launch_refused(trace, launched):
        return Kind("unknown", "low", f"the host launched {what}, and the runtime refused every launch (each call "
                                      "returned an error): no kernel ran, so the capture holds no GPU record of one",
                    every_launch_refused=True)
    if launched:
        # GPU work whose records are gone: of a kind nothing says (not "no GPU work", which the host disproves)
        return Kind("unknown", "low", f"the host launched {what}, but the capture holds no "
                                      "GPU record of them: the GPU's side of the capture was lost",
                    lost_gpu=f"the host launched {what}")
    used = {g: len(m.t) for g, m in trace.memory.items() if len(m.t)}
    if used:  # the allocator handed out GPU memory: the work was on the GPU, its activity not recorded
        where = ", ".join(f"GPU {g}" for g in sorted(used))
        return Kind("unknown", "low", f"the GPU's allocator recorded {sum(used.values()):,} events on {where}, but "
                                      "the capture holds no kernel or GPU runtime record: the GPU's activity was "
                                      "not recorded", lost_gpu=f"the allocator recorded memory on {where}")
    gpu_ops = _gpu_only_ops(trace, fw)
    if gpu_ops:  # the host's own ops say the work was on a GPU: its records are missing, the CPU did not do it
        return Kind("unknown", "low", f"the host's ops name work only a GPU does ({gpu_ops}), but the capture holds "
                                      "no GPU record: the GPU's side of the capture was not recorded",
                    lost_gpu=f"its ops name work only a GPU does, {gpu_ops}")
    backend = trace.producer.get("dist_backend", "")
    recorded = bool(names) and bool(trace.h.name_mask(devices.is_runtime_call).any())
    # its process group moves GPU tensors only; with CUDA calls recorded the window's own calls say what it holds
    if backend and fw.gpu_only_backend(backend) and not recorded:
        return Kind("unknown", "low", f"the job's process group runs on {backend.upper()}, which moves only GPU "
                                      "tensors, but the capture holds no kernel or GPU runtime record: the GPU's "
                                      "activity was not recorded",
                    lost_gpu=f"its process group runs on {backend.upper()}, which moves only GPU tensors")
    waited = _unseen_wait(trace)
    if waited:  # a sync waited on the GPU while nothing recorded ran on it: its kernels went unrecorded
        return Kind("unknown", "low", f"{waited}: the GPU ran work the capture holds no record of (no kernel, and "
                                      "no launch of one, was recorded)", lost_gpu=waited)
    created = _context_allocation(trace, fw)
    if created:  # a GPU's context was created: the work used the GPU, whose CUDA activity was not recorded
        return Kind("unknown", "low", f"{created}, {_unrecorded(trace)}", lost_gpu=created)
    fast = _faster_than_a_cpu(trace)
    if fast:  # an op returned sooner than any CPU computes its FLOPs: it queued them on a GPU, unrecorded
        return Kind("unknown", "low", f"{fast}: it queued its work on a GPU, {_unrecorded(trace)}", lost_gpu=fast)
    read = _scalar_read_wait(trace, fw)
    if read:  # a scalar read waited milliseconds: on a device's queue, whose CUDA activity was not recorded
        return Kind("unknown", "low", f"{read}, {_unrecorded(trace)}", lost_gpu=read)
    return None


def _engine_kind(trace: Trace, host: list[str], kernels: list[str]) -> Kind | None:
    """A serving engine or generation loop the trace names (``engines``): its kind, surest of all."""
    found = engines.find(host, kernels, _line_names(trace), trace.ranges.domains if trace.ranges is not None else ())
    if found is None:
        return None
    e, hit, where = found
    what = "serving engine" if e.kind == "serving" else "generation loop"
    said = {"thread": f"its process's thread `{_short(hit)}`", "domain": f"its own NVTX domain `{_short(hit)}`"}
    return Kind(e.kind, "high", f"the {what} {e.name}: {said.get(where, f'`{_short(hit)}`')} in the trace", e.id,
                e.name)


def _training_kind(trace: Trace, fw: Framework, used: list[str], kernels: list[str], phase: tuple[str, str] | None,
                   ranged: Kind | None) -> Kind | None:
    """Training, where anything shows work only training does: the framework's training events (unless they ran
    only in warm-up: inference then), a training phase, a sharded forward, the user's NVTX ranges, a compiled
    backward, gradient kernels.  None where nothing does."""
    train = next((n for n in used if fw.training_event(n)), None)
    warm = _trained_only_in_warmup(trace, fw) if train is not None or ranged is not None else ""
    if warm:
        return Kind("inference", "medium", warm)
    if train is not None and ranged is not None and ranged.kind == "training" and nvtx.framework_range_writer(train):
        return ranged  # a library's own range (DDP's ``DistributedDataParallel.forward``): said as that library's
    if train is not None:
        return Kind("training", "high", f"work only training does (a backward pass, an optimizer step, a data-parallel "
                                        f"training wrapper): `{_short(train)}`")
    if phase is not None and phase[0] == "training":
        return Kind("training", "high", phase[1])
    sharded = _sharded_training_forward(trace, used, fw)
    if sharded:
        return Kind("training", "high", sharded)
    if ranged is not None and ranged.kind == "training":
        return ranged
    grads = trace.producer.get("autodiff_modules")
    if grads:
        return Kind("training", "high", f"the compiled program {grads} holds a backward pass (transpose(jvp(...)) "
                                        "instructions in its HLO)")
    grad = _gradient_kernels(kernels)
    if grad:
        return Kind("training", "medium", f"kernels only a backward pass runs: {grad}")
    return None


def _forward_kind(trace: Trace, fw: Framework, used: list[str], host: list[str], phase: tuple[str, str] | None,
                  ranged: Kind | None) -> Kind:
    """With no training shown: inference, where the framework's entry point, a phase, the user's ranges, the grad
    mode, forward-only ops or a backward-less compiled program say so; else GPU work of a kind nothing names."""
    infer = next((n for n in used if fw.inference_event(n)), None)
    if infer is not None:
        return Kind("inference", "high", f"the framework's inference entry point: `{_short(infer)}`")
    if phase is not None:
        return Kind("inference", "high", phase[1])
    if ranged is not None:
        return ranged
    mode = trace.producer.get("grad_mode", "")
    if mode in ("inference_mode", "no_grad"):
        return Kind("inference", "high", f"the trace records grad mode `{mode}`")
    ops = any(fw.autograd_op(n) for n in used) and not any(fw.unrecorded_ops_event(n) for n in used)
    replayed, replays = _replayed_outside_ops(trace, fw) if ops else ("", set())  # ops beside graphs not theirs
    if ops and not replayed:
        traced = sorted(_compiler_traced(trace, fw))
        said = (f" of the job's own (its backward nodes, {and_list([f'`{_short(n)}`' for n in traced[:2]])}"
                f"{' ...' if len(traced) > 2 else ''}, lie only inside the compiler's spans: the compiler tracing a "
                f"backward graph, launching nothing)" if traced else f" ({fw.label('backward_nodes')})")
        return Kind("inference", "medium", f"{fw.label('ops')} ran but no backward pass{said} and no optimizer step: "
                                           f"a forward pass{_named_training_contradicted(trace, fw)}")
    recorded = _recorded_ops_forward(trace, fw)
    if recorded:
        return Kind("inference", "medium", recorded)
    if trace.flop_ops is not None and trace.flop_ops.source == "hlo" and "autodiff_modules" not in trace.producer:
        return Kind("inference", "low", "the compiled programs' HLO holds no backward pass (no transpose(jvp(...)))"
                                        f"{_named_training_contradicted(trace, fw)}")
    hooked = _hooked_forwards(trace)
    if hooked:
        return Kind("inference", "medium", hooked)
    named = _named_training_kind(trace, fw)
    if named is not None:
        return named
    evaluated = _evaluation_kind(trace)
    if evaluated is not None:
        return evaluated
    marked = _marked_forwards(trace)
    if marked:
        return Kind("inference", "medium", marked, from_ranges=True)
    shown = _backward_shown(trace)
    forwards = "" if shown or not replayed else _replayed_forwards(trace, replays)
    if forwards.startswith(_FORWARDS_SAID):
        return Kind("inference", "medium", f"{replayed}; {forwards}")
    if forwards:
        return Kind("unknown", "low", f"{replayed}; {forwards}, but nothing names training")
    if replayed:
        said = (f"; its kernels show a backward pass or an update ({shown}), but nothing names training" if shown
                else ", and its kernels name no backward pass, optimizer step or serving engine")
        return Kind("unknown", "low", f"{replayed}{said}")
    if shown and any(devices.is_launch_call(n) or devices.is_graph_launch(n) for n in host):
        return Kind("unknown", "low", f"GPU work whose kernels show a backward pass or an update ({shown}), but no "
                                      "host event names training")
    if any(devices.is_launch_call(n) or devices.is_graph_launch(n) for n in host):
        return Kind("unknown", "low", _UNNAMED_WORK)
    return Kind("unknown", "low", "no host event says what the GPU work was for")


#: What a capture whose host launched GPU work says where nothing shows what the work was for.
_UNNAMED_WORK = "GPU work, but no backward pass, optimizer step or serving engine is named"
#: The least share of the capture's kernel time replayed from graphs outside every op the framework records for its
#: ops' lack of a backward to say nothing of the work (:func:`_replayed_outside_ops`): most of it.
_REPLAYED_SHARE = 0.5


def _replayed_outside_ops(trace: Trace, fw: Framework) -> tuple[str, set[int]]:
    """Words saying most of the capture's kernel time (:data:`_REPLAYED_SHARE`) ran from graph launches
    (``devices.is_graph_launch``) that lie inside no event of the framework's dispatch (``Framework.dispatch_event``
    less the runtime's calls: an ATen op, autograd's nodes, the optimizer's step, a compiled region), "" otherwise.

    Why: a graph replayed by the program itself (``torch.cuda.CUDAGraph.replay()``: PyTorch's whole-network capture
    of a training step, forward, backward and ``optimizer.step()`` in one graph) runs kernels whose ops were recorded
    when the graph was captured, not in the window: the ops recorded then are the input's ``copy_`` into the graph's
    static tensors, and their lack of autograd's ``*Backward`` nodes says nothing of the graph's work -- a captured
    training step with a per-parameter or compiled optimizer read "ATen ops ran but no backward pass ...: a forward
    pass" (h37-gen71).  A graph replayed inside a compiled region (``torch.compile(mode="reduce-overhead")``) is
    the framework's: AOTAutograd records ``CompiledFunctionBackward`` where it trains (``compiled_graphs_rtx3060``).
    With the words, the host events of those graph launches (none where the words are "")."""
    h = trace.h
    if not len(h) or not h.per_name(devices.is_graph_launch).any():
        return "", set()
    graph = h.per_name(devices.is_graph_launch)
    outer = Encloser(h, h.name_mask(fw.dispatch_event) & ~h.name_mask(devices.is_runtime_call), nested=True)
    total = replayed = 0
    calls: set[int] = set()
    for d, rec in zip(trace.devices, device_launches(h, trace.devices)):
        k = (d.kind == devices.KIND_KERNEL) & (rec >= 0)
        if not k.any():
            continue
        dur = (d.end[k] - d.start[k]).astype(np.int64)
        total += int(dur.sum())
        r = rec[k].astype(np.int64)
        g = graph[h.name[r]]
        if not g.any():
            continue
        launch = np.unique(r[g])
        bare = launch[outer.find(launch) < 0]
        held = g & np.isin(r, bare)
        replayed += int(dur[held].sum())
        calls.update(bare.tolist())
    if not calls or replayed < _REPLAYED_SHARE * total:
        return "", set()
    call = _short(h.names[int(h.name[min(calls)])])
    return (f"{pct(replayed / total)} of the kernel time ran from {plural(len(calls), 'graph replay')} (`{call}`) "
            "outside every op the framework records: those ops did not launch it, so their lack of a backward pass "
            "says nothing of it"), calls


#: How :func:`_replayed_forwards`' words of forward passes begin (its other words say an update).
_FORWARDS_SAID = "each of its"


def _replayed_forwards(trace: Trace, replays: set[int]) -> str:
    """In words, forward passes shown by the kernels of the program's own graph replays (``replays``: their launches'
    host events, :func:`_replayed_outside_ops`), "" where they show none: at least :data:`_HOOKED_FORWARDS` replays,
    each running a matrix product or convolution (``devices.gemm_kernel_one``), none a per-parameter update (a run of
    kernels between two products, or before the first or after the last, as long as :func:`_update_pass` asks of a
    loop's repeat), and no kernel of the capture showing a gradient or an update (the caller asks
    :func:`_backward_shown` first).

    Why: a replay's kernels are one pass of the program in order; with nothing recorded around them, they are read
    as :func:`forward_loop_kind` reads a loop of launches -- a whole-network captured training step runs its
    optimizer after the backward's last product, every parameter in turn (seven kernels each for Adam with
    ``foreach=False``), or in kernels named like an update (ATen's fused Adam, ``multi_tensor_apply_kernel``).
    Where every replay runs such an update, the words say that instead (no forward passes; nothing names training)."""
    if len(replays) < _HOOKED_FORWARDS:
        return ""
    seqs: dict[int, list[tuple[bool, bool]]] = {}
    names: dict[str, int] = {}
    for d, rec in zip(trace.devices, device_launches(trace.h, trace.devices)):
        k = np.flatnonzero((d.kind == devices.KIND_KERNEL) & np.isin(rec, np.fromiter(replays, np.int64)))
        if not k.size:
            continue
        product = frameworks.gemm_kernel(d.names)  # Inductor's templates too: they bound an update's run
        forward = np.fromiter((devices.gemm_kernel_one(n) for n in d.names), bool, len(d.names))
        for i in k.tolist():
            j = int(d.name[i])
            seqs.setdefault(int(rec[i]), []).append((bool(product[j]), bool(forward[j])))
            if forward[j]:
                names[d.names[j]] = names.get(d.names[j], 0) + 1
    if len(seqs) < _HOOKED_FORWARDS or not all(any(p for p, _ in seq) for seq in seqs.values()):
        return ""
    update = []
    for seq in seqs.values():
        at = [i for i, (p, _) in enumerate(seq) if p]
        runs = sorted([at[0]] + [b - a - 1 for a, b in zip(at, at[1:])] + [len(seq) - at[-1] - 1])
        longest, second = runs[-1], runs[-2] if len(runs) > 1 else 0
        if longest >= max(_UPDATE_RUN, len(at) / 3) and longest >= _UPDATE_SHARE * second:
            update.append(longest)
    if update:
        return "" if len(update) < len(seqs) else (
            f"every one of its {len(seqs):,} replays runs one long run of {min(update):,}+ kernels beside its matrix "
            "products, a per-parameter weight update's")
    if not all(any(f for _, f in seq) for seq in seqs.values()):
        return ""  # a replay of templates alone: no operand layout, no gradient it could show (forward_loop_kind)
    top = sorted(names, key=lambda n: -names[n])[:2]
    return (f"{_FORWARDS_SAID} {len(seqs):,} replays runs forward matrix products or convolutions "
            f"({and_list([f'`{devices.short_kernel_name(n, 40)}`' for n in top])}) and no gradient, optimizer or "
            "per-parameter update kernel: forward passes")


def forward_loop_kind(trace: Trace, kind: Kind, structure: SpanSteps | None, launches: list[np.ndarray]) -> Kind:
    """``kind``, or inference at medium confidence where nothing named the work (``kind`` unknown, low) and the
    host's launch loop (``structure`` read by ``job.period.repeated_launches``) repeats at least
    :data:`_HOOKED_FORWARDS` times, every repeat launching a matrix product or convolution (``devices.gemm_kernel_one``;
    the first and last may be cut by the capture's window)
    and no kernel of the capture showing a gradient or an update (:func:`_backward_shown`: by a word of it,
    ``devices.backward_or_update_one``, or by its products run in a forward's and its two gradients' layouts), and
    no repeat running a per-parameter update (:func:`_update_pass`; where one does and nothing else spoke, the
    evidence says so in place of "no ... is named", h37-gen71).  Inductor's templates (``triton_tem_fused_mm_*``)
    are no products for the forward reading: their names give no operand layout, so a compiled step whose
    backward and update are generic too would show no gradient -- their loops stay of no known kind.

    Why: a training step computes the gradients of what its forward computed, and its libraries name those kernels
    (cuDNN's ``wgrad``, ATen's ``threshold_backward``, ``max_pool_backward``), so a loop of convolutions with none of
    them in any repeat ran forward passes.  Asked after the loop is read, as the kind's last evidence, since only then
    are the repeats known.  Medium, not high: a backward whose every kernel is generic by name and structure (a JIT's
    fusions and products in one layout, an update fused into one unnamed kernel) would read the same.  The real torchvision inference loops of an Nsight export with no op and no NVTX
    (AlexNet, DenseNet, SqueezeNet on a T1000: ``volta_sgemm_*``, ``scudnn_winograd``, ``max_pool_forward_nchw``)
    read "GPU work of an unknown kind"."""
    if kind.kind != "unknown" or kind.confidence != "low" or structure is None \
            or structure.source != "repeated_launches" or structure.start.size < _HOOKED_FORWARDS:
        return kind
    if _backward_shown(trace) or _forward_marked(trace):
        return kind
    update = _update_pass(trace, launches, structure)
    if update:
        if kind.evidence != _UNNAMED_WORK:
            return kind
        return dataclasses.replace(kind, evidence=(
            f"GPU work whose every repeat of the launch loop ({structure.start.size:,}) runs one long run of "
            f"{update:,}+ kernels between two matrix products, a per-parameter weight update's, but no host event "
            "names training"))
    starts, names = _gemm_launch_starts(trace, launches)
    if not starts.size:
        return kind
    first = np.searchsorted(starts, structure.start.astype(np.int64), side="left")
    held = (first < starts.size) & (starts[np.minimum(first, starts.size - 1)] < structure.end)
    n = int(held.sum())
    if n < _HOOKED_FORWARDS or not held[1:-1].all():
        return kind  # a repeat without a matrix product or convolution (the cut first and last aside): no model's pass
    return dataclasses.replace(kind, kind="inference", confidence="medium", evidence=(
        f"{n:,} repeats of the launch loop run forward matrix products or convolutions ({and_list(names)}) and no "
        f"gradient or optimizer kernel in any: forward passes"))


def backward_or_update_one(name: str) -> bool:
    """A kernel of a backward pass or a weight update by any word of it: a vendor library's
    (``devices.backward_or_update_one``: a gradient, a data gradient, a backward's word) or a framework's
    (``frameworks.update_kernel_word``: an optimizer's name, ``_foreach_``, Inductor's foreach kernels)."""
    return devices.backward_or_update_one(name) or frameworks.update_kernel_word(name)


def _backward_shown(trace: Trace) -> str:
    """In words, what shows a backward or an update among the kernels of ``trace``, "" where nothing does: a kernel
    by a word of it (:func:`backward_or_update_one`: a gradient, a data gradient, an optimizer's or a backward's
    word), or the layouts of its matrix products: three operand layouts (``devices.gemm_operand_layout``), the least
    run at least a :data:`_LAYOUT_SHARE`-th as often as the most.  Said where nothing names training
    (:func:`_forward_kind`'s last words: "no backward pass ... is named" beside a ``dgrad`` kernel was untrue,
    h37-gen71).

    Why the layouts: a backward computes each product's two gradients, dA = dC·Bᵀ and dB = Aᵀ·dC, from the same
    operands transposed, so a training step runs its products in three layouts where a forward pass runs one or two
    (a language model under nvprof on a V100: ``volta_sgemm_*_tn`` forward, ``_nn`` and ``_nt`` backward, each seven
    times; an nvFuser step on an H200: nvjet ``TNN``, ``NTN``, ``NNT``; an FSDP step on an MI350X: Tensile's
    ``Alik_Bljk``, ``Ailk_Bljk``, ``Ailk_Bjlk``) -- while every kernel's own name is a generic GEMM's."""
    names = [n for d in trace.devices for n in d.names[:_MAX_NAMES]]
    word = next((n for n in names if backward_or_update_one(n)), None)
    if word is not None:
        return f"`{devices.short_kernel_name(word, 48)}`, named like a gradient's or an update's kernel"
    layouts: dict[str, int] = {}
    for d in trace.devices:
        lay = [devices.gemm_operand_layout(n) if devices.gemm_kernel_one(n) else "" for n in d.names[:_MAX_NAMES]]
        ran = np.bincount(d.name[d.name < len(lay)], minlength=len(lay)) if len(d) else np.zeros(0, np.int64)
        for i, lay_i in enumerate(lay):
            if lay_i and ran[i]:
                layouts[lay_i] = layouts.get(lay_i, 0) + int(ran[i])
    runs = sorted(layouts.values())
    if len(runs) < 3 or runs[-3] * _LAYOUT_SHARE < runs[-1]:
        return ""
    ran = sorted(layouts.items(), key=lambda kv: -kv[1])
    return ("matrix products in a forward's and its two gradients' operand layouts: "
            f"{and_list([f'{lay} ×{n:,}' for lay, n in ran[:3]])}")


#: A gradient's layout runs at least 1 / this as often as the most-run layout of a step's products: each product's
#: two gradients run once each per forward one (real steps: 7 / 7 / 7 a step of a language model on a V100, 1,750 /
#: 1,850 / 1,750 of an FSDP job on an MI350X), fewer where layers are frozen (LoRA: the frozen layers' data gradient
#: alone); cuDNN's own products inside a forward's convolutions are lopsided (a DenseNet-121: 272 ``nn``, 8 ``tn``).
_LAYOUT_SHARE = 4
#: The fewest kernels an update of every parameter launches one at a time (a per-parameter optimizer: ``add_`` /
#: ``mul_`` per tensor): more than the elementwise work a small forward runs between two of its products (a bias, an
#: activation, a norm and a pool).
_UPDATE_RUN = 8
#: How many times a repeat's next-longest run between two products its update's run is at least: a language model's
#: forward on a V100 runs 13 kernels before its first product (the embedding, its dropout, a norm) and at most 7
#: between two others, its log-softmax after the last (15 to the next forward's first: twice, not thrice); the
#: model's training step runs 77 after its last gradient's product (5.5 times its forward's longest).
_UPDATE_SHARE = 3


def _update_pass(trace: Trace, launches: list[np.ndarray], structure: SpanSteps) -> int:
    """The fewest kernels of the update's run (0 where none) where every whole repeat of the loop (``structure``'s,
    the cut first and last aside) runs one long run of kernels between two matrix products
    (``frameworks.gemm_kernel_one``: a library's, or Inductor's templates): at least :data:`_UPDATE_RUN` kernels, a
    third as many as the repeat's products, and :data:`_UPDATE_SHARE` times the repeat's next-longest run -- a
    weight update of every parameter tensor, one kernel each or more.

    Why: an optimizer reads and writes each parameter once per step, after the backward's last product and before the
    next forward's first, so a per-parameter update (``foreach=False``, a hand-written ``p.data.add_(...)`` loop) is
    one run of elementwise kernels as long as the parameter tensors are many -- at least one weight per three products
    of a training step (its forward's, its data and its weight gradient) -- while a forward's runs between its
    products are its layers' few (a language model under nvprof on a V100, ``pyprof_lm_v100_nvprof``: runs of at
    most 14 kernels between its 21 products, then 77 after the last: its gradients' norms and its SGD update).
    Generic names (``vectorized_elementwise_kernel<... MulFunctor>``) say none of it."""
    starts, flags = [], []
    for d, la in zip(trace.devices, launches):
        if not len(d) or not la.size:
            continue
        k = (d.kind == devices.KIND_KERNEL) & (la >= 0)
        if k.any():
            gemm = frameworks.gemm_kernel(d.names)  # Inductor's templates too: a compiled model's products
            starts.append(trace.h.start[la[k]].astype(np.int64))
            flags.append(gemm[d.name[k]])
    if not starts:
        return 0
    every = np.concatenate(starts)
    order = np.argsort(every, kind="stable")
    every, gemm_at = every[order], np.concatenate(flags)[order]
    pos = np.flatnonzero(gemm_at)
    s, e = structure.start.astype(np.int64)[1:-1], structure.end.astype(np.int64)[1:-1]
    if pos.size < 2 or not s.size:
        return 0
    lengths = np.diff(pos) - 1  # the kernels between two products, each run closed by the later one's launch
    closes = every[pos[1:]]
    a, b = np.searchsorted(closes, s, side="left"), np.searchsorted(closes, e, side="left")
    products = np.searchsorted(every[pos], e, side="left") - np.searchsorted(every[pos], s, side="left")
    fewest = 0
    for i, j, n in zip(a.tolist(), b.tolist(), products.tolist()):
        runs = np.sort(lengths[i:j])
        if not runs.size:
            return 0
        longest, second = int(runs[-1]), int(runs[-2]) if runs.size > 1 else 0
        if longest < max(_UPDATE_RUN, n / 3) or longest < _UPDATE_SHARE * second:
            return 0
        fewest = longest if not fewest else min(fewest, longest)
    return fewest


def _forward_marked(trace: Trace) -> bool:
    """Whether the program marks its forward passes with ranges (``nvtx.is_forward_range``): then
    :func:`_marked_forwards` has read them, weighing the work after each forward against the forward's own, and
    where it found room for a backward there (a graphed backward, one launch of generic kernels) no loop of kernel
    names overrules it."""
    r = trace.ranges
    if r is None or not r.idx.size:
        return False
    marked = user_ranges.marked_ranges(r)
    return bool(marked.size) and bool(trace.h.per_name(nvtx.is_forward_range)[trace.h.name[marked]].any())


def _gemm_launch_starts(trace: Trace, launches: list[np.ndarray]) -> tuple[np.ndarray, list[str]]:
    """The host start times (ps, sorted) of the launches of every matrix product or convolution kernel
    (``devices.gemm_kernel_one``), and up to two of their short names, most run first."""
    starts, counts = [], {}
    for d, la in zip(trace.devices, launches):
        if not len(d) or not la.size:
            continue
        gemm = np.fromiter((devices.gemm_kernel_one(n) for n in d.names), bool, len(d.names))[d.name] & (la >= 0)
        if gemm.any():
            starts.append(trace.h.start[la[gemm]].astype(np.int64))
            ids, c = np.unique(d.name[gemm], return_counts=True)
            for i, k in zip(ids.tolist(), c.tolist()):
                short = devices.short_kernel_name(d.names[i], 40)
                counts[short] = counts.get(short, 0) + k
    if not starts:
        return np.zeros(0, np.int64), []
    names = [f"`{n}`" for n in sorted(counts, key=lambda n: -counts[n])[:2]]
    return np.sort(np.concatenate(starts)), names


def _recorded_ops_forward(trace: Trace, fw: Framework) -> str:
    """In words, a PyTorch forward pass shown by its ops recorded as NVTX ranges with no ATen name (PyProf / DLProf:
    ``Tensor.cuda``, ``torch.nn.functional.conv2d``) where no backward ran; "" otherwise.  Asked only once nothing
    says training (:func:`_training_kind`: no ``Tensor.backward``, no optimizer step, no gradient kernel).

    Why: such a tool wraps every ``torch``, ``Tensor`` and ``torch.nn.functional`` call, so a training step shows the
    program's ``loss.backward()`` as ``Tensor.backward``, and PyTorch's autograd engine runs a CUDA backward on a
    device thread of its own, which launches its kernels outside any such range.  Ops recorded, none of them a
    backward, and every launch made by a thread that recorded ops: nothing ran a backward.  mmagic's one forward
    pass under PyProf (an A100 Nsight export) read "GPU work of an unknown kind", and its fixes spoke of training
    (loss scaling) for a forward pass."""
    r = trace.ranges
    if not fw.op_ranges_show_backward or r is None or not r.op.any():
        return ""
    h = trace.h
    ops = r.idx[r.op]
    launch = h.name_mask(devices.is_launch_call) | h.name_mask(devices.is_graph_launch)
    if not launch.any() or not np.isin(h.line[launch], np.unique(h.line[ops])).all():
        return ""
    return (f"{fw.name}'s calls recorded as op ranges ({plural(int(ops.size), 'op')}), no backward pass, optimizer step "
            "or gradient kernel, every launch on a thread that recorded them: a forward pass")


def _phase_kind(used: list[str], fw: Framework) -> tuple[str, str] | None:
    """(kind, in words) a training wrapper's own phase ranges say (``Framework.training_phase`` /
    ``evaluation_phase``: Lightning's ``[pl][profile]...training_step``, ``...validation_step``); None where none
    is recorded.  Training wins: a fit's window may hold a validation pass between its training batches, never the
    reverse.  Why: the wrapper records its phases with the host's ops, so they name the loop where autograd's nodes
    fell outside the window and where the GPU's records were lost (a Lightning validation pass on Windows whose CUDA
    activity was not recorded read as work of no known kind, h37-survey22)."""
    train = next((n for n in used if fw.training_phase(n)), None)
    if train is not None:
        return "training", f"its training wrapper's own ranges name a training phase: `{_short(train)}`"
    evaluate = min((n for n in used if fw.evaluation_phase(n)), key=lambda n: not n.endswith("_step"), default=None)
    if evaluate is not None:  # the step itself named first, the loop's fetch of its batch else
        return "inference", (f"its training wrapper's own ranges name an evaluation or prediction phase, forward "
                             f"passes: `{_short(evaluate)}`")
    return None


def _trained_only_in_warmup(trace: Trace, fw: Framework) -> str:
    """Why the job is the forward passes the program measures, where its only training ran in its own warm-up; "" else.

    Why: a benchmark that warms up with training steps (``Warm-up`` around forward + backward) and then times forward
    passes only (jsun-012/assignment2-systems, issue #37) is analysed on those forwards -- the steps inside the
    program's own warm-up range are dropped (``steps.detect``) -- so the job is theirs: its fixes are a forward pass's.
    Decided by where the evidence lies: every training event (a backward, an optimizer step, by the framework's names or
    the user's ranges) and every backward-only kernel starts inside a range the program names as its warm-up
    (``frameworks.user_ranges.warmup_ranges``), and GPU work is launched outside it."""
    if trace.producer.get("autodiff_modules"):
        return ""
    h = trace.h
    sel = user_ranges.warmup_ranges(h, trace.ranges)
    if not sel.size:
        return ""

    def inside(t: np.ndarray) -> np.ndarray:
        return _within_spans(h, sel, t)

    launched = h.name_mask(devices.is_launch_call) | h.name_mask(devices.is_graph_launch)
    if not (launched & ~inside(h.start)).any():
        return ""  # all the GPU work is the warm-up's: nothing else is measured
    trains = h.name_mask(fw.training_event) | (h.name_mask(nvtx.is_training_range) & ~h.name_mask(nvtx.is_warmup_name))
    if not trains.any() or (trains & ~inside(h.start)).any():
        return ""
    for d in trace.devices:
        grad = np.fromiter((devices.gradient_kernel_one(n) for n in d.names[:_MAX_NAMES]), bool, min(len(d.names), _MAX_NAMES))
        if len(d) and grad.any():
            ok = d.name < grad.size
            if (grad[np.where(ok, d.name, 0)] & ok & ~inside(d.start)).any():
                return ""
    outer = sel[np.argmax(h.end[sel] - h.start[sel])]
    said = h.names[int(h.name[np.flatnonzero(trains)[0]])]
    return (f"the iterations after the program's own `{_short(h.names[int(h.name[outer])], 40)}` range run no backward "
            f"pass or optimizer step: forward passes (the warm-up trained: `{_short(said, 40)}` ran only inside it)")


def _gradient_kernels(kernels: list[str]) -> str:
    """The kernels of ``kernels`` (distinct names) that only a backward pass runs (``devices.gradient_kernel_one``: a
    weight gradient, a framework's ``*_backward`` kernel), up to three in words; "" for none."""
    grad = [n for n in kernels if devices.gradient_kernel_one(n)]
    if not grad:
        return ""
    short = sorted(dict.fromkeys(_says_why(n) for n in grad), key=lambda n: not n.endswith("`"))
    said = ", ".join(f"`{n}" for n in short[:3])  # those whose short name still says why first
    return said + (f" and {len(short) - 3:,} more" if len(short) > 3 else "")


def _says_why(name: str) -> str:
    """A gradient kernel's short name, and where its ``<…>`` hides the word that makes it one, that word: main said
    "kernels only a backward pass runs: `at::native::vectorized_elementwise_kernel<…>`" (h37-review14), a name any
    forward pass runs."""
    short = devices.short_kernel_name(name, 48)
    word = devices.gradient_word(name)
    return f"{short}`" if devices.gradient_kernel_one(short) or not word else f"{short}` (`{word}`)"


def _nvtx_kind(trace: Trace) -> Kind | None:
    """The kind the user's NVTX range names say (``frameworks.nvtx``): training where ranges name a backward pass,
    an optimizer step, gradient all-reduces or DDP/FSDP set-up; inference where an inference-only runtime's own
    ranges run its model (TensorRT), or the user's name only inference."""
    r = trace.ranges
    if r is None or not r.idx.size:
        return None
    names, writers = _marked_names(trace)
    train = sorted((n for n in names if nvtx.is_training_range(n)), key=lambda n: (n in writers, -names[n]))
    if train:
        return Kind("training", "high", f"{_whose(train, writers)} name work only training does: "
                                        f"{_counted(train, names)}", from_ranges=True)
    runtime = sorted((n for n in names if nvtx.is_inference_runtime_range(n)), key=lambda n: -names[n])
    if runtime:
        return Kind("inference", "high", f"an inference-only runtime's own NVTX ranges (TensorRT running its engine): "
                                         f"`{_short(runtime[0], 40)}` ×{names[runtime[0]]:,}")
    infer = [n for n in names if nvtx.is_inference_range(n)]
    if infer:
        return Kind("inference", "medium", f"the user's NVTX ranges name inference: `{_short(infer[0], 40)}`",
                    from_ranges=True)
    return None


def _named_training_steps(trace: Trace, fw: Framework) -> str:
    """The marked step ranges whose names say training (``nvtx.is_training_step_name``: ``train_step``,
    ``training_step``, ``TrainStep``, a ``train`` step mark), in words with whose they are and how many; "" for
    none."""
    r = trace.ranges
    if r is not None and r.idx.size:
        names, writers = _marked_names(trace)
        said = sorted((n for n in names if nvtx.is_training_step_name(n)), key=lambda n: (n in writers, -names[n]))
        if said:
            total = sum(names[n] for n in said)
            first = _short(said[0], 40)
            return f"{_whose(said, writers)} name training steps ({plural(total, 'range')}: `{first}` ...)"
    return _annotated_training_steps(trace, fw) or _marked_training_steps(trace, fw)


def _annotated_training_steps(trace: Trace, fw: Framework) -> str:
    """:func:`_named_training_steps` of the annotations a format keeps among its ops (``Trace.annotations``:
    Kineto's ``record_function("train_step")``), named as the steps' notes name them (``frameworks.ranges_word``: the
    capture's framework's ``Framework.annotation_ranges`` -- a format that keeps annotations keeps no range table), in
    words; "" for none.  One word by one path for the job and the steps (h37-homes71's Left 3, h37-onehome71)."""
    a = trace.annotations
    if a is None or not a.size:
        return ""
    return _training_step_names(trace.h, a, f"the program's {frameworks.ranges_word(trace, fw)}", "range")


def _training_step_names(h: HostEvents, at: np.ndarray, whose: str, unit: str) -> str:
    """The host events ``at`` (indices or a mask of ``h``) whose names say a training step
    (``nvtx.is_training_step_name``), in words -- ``whose`` name training steps, how many of them (in ``unit``), the
    most frequent name; "" for none.  One home for :func:`_annotated_training_steps` and :func:`_marked_training_steps`,
    which differ only in where the program's step names lie."""
    ids, counts = np.unique(h.name[at], return_counts=True)
    said = [(h.names[int(i)], int(c)) for i, c in zip(ids.tolist(), counts.tolist())
            if nvtx.is_training_step_name(h.names[int(i)])]
    if not said:
        return ""
    total = sum(c for _, c in said)
    return f"{whose} name training steps ({plural(total, unit)}: `{_short(max(said, key=lambda nc: nc[1])[0], 40)}` ...)"


def _marked_training_steps(trace: Trace, fw: Framework) -> str:
    """:func:`_named_training_steps` of the program's own step marks in an XPlane capture
    (``Framework.own_step_marks``: ``_r`` and ``step_num``, as TensorFlow's ``Trace('train', step_num=s, _r=1)`` and
    JAX's ``StepTraceAnnotation('train', step_num=s)`` write them), in words; "" for none.  Why: the marks live among
    the host's events, not in ``Trace.ranges``, so a TF forward loop marked ``train`` read "no host event says what
    the GPU work was for", and a JAX forward marked ``train`` read inference with the name-vs-work contradiction
    unsaid (h37-kind69 *Left* 1)."""
    h = trace.h
    if not len(h):
        return ""
    own = fw.own_step_marks(h)
    if not own.any():
        return ""
    return _training_step_names(h, own, "the program's own step marks", "mark")


def _named_training_kind(trace: Trace, fw: Framework) -> Kind | None:
    """Training, where the marked step ranges name it (:func:`_named_training_steps`) and nothing else in the capture
    says the kind.  Asked only once no evidence of either kind was found (``_training_kind``: no backward pass,
    optimizer step, gradient all-reduce or gradient kernel; no op recorded that shows a forward pass alone), and
    before evaluation's names: a fit's window holds validation steps between its training steps, never the reverse.

    Why medium, never high: the name says what the program meant its step to be, not what ran -- a backward of
    generic kernels, with no host op recorded, is not seen either way, so the evidence says the backward is not shown.
    Such a capture (the step range our capture advice asks for, nothing else named) read "GPU work of an unknown kind"
    on NVIDIA and AMD alike (h37-amd69 *Left* 3)."""
    said = _named_training_steps(trace, fw)
    if not said:
        return None
    return Kind("training", "medium", f"{said}; nothing else in the capture shows a backward pass, an optimizer step "
                                      f"or a gradient kernel: training by the step's name alone", from_ranges=True)


def _named_training_contradicted(trace: Trace, fw: Framework) -> str:
    """The contradiction, in words, where the recorded ops show a forward pass alone yet the step ranges name
    training (:func:`_named_training_steps`); "" where they name none.  Why said: the work recorded decides the kind,
    but a program that calls its forward passes ``train_step`` either lost its backward from the capture or
    mislabels its loop -- hiding the name would hide both."""
    said = _named_training_steps(trace, fw)
    return f", though {said}: the name says training, the recorded work does not" if said else ""


def _evaluation_kind(trace: Trace) -> Kind | None:
    """Evaluation, where the marked ranges name it (``nvtx.is_evaluation_range``: ``eval_step``,
    ``validation_step``, ``evaluate``).  Asked only once nothing in the capture shows training (``_training_kind``:
    no backward pass, optimizer step, training range or gradient kernel) and no op shows a forward pass by itself:
    Lightning's ``fit`` runs its validation between training steps, so the name alone says no evaluation -- the
    capture's missing backward does.  Why: such a capture read "GPU work of an unknown kind"."""
    r = trace.ranges
    if r is None or not r.idx.size:
        return None
    names, writers = _marked_names(trace)
    evaluate = sorted((n for n in names if nvtx.is_evaluation_range(n)), key=lambda n: (n in writers, -names[n]))
    if not evaluate:
        return None
    return Kind("inference", "medium", f"{_whose(evaluate, writers)} name evaluation ({_counted(evaluate, names)}) "
                                       f"and nothing in the capture shows a backward pass or an optimizer step: "
                                       f"forward passes", from_ranges=True)


def _marked_names(trace: Trace) -> tuple[dict[str, int], dict[str, str]]:
    """The marked ranges' names with their counts (``user_ranges.marked_ranges``), and which of them a library wrote
    (``user_ranges.framework_writers``, and by its name alone ``nvtx.framework_range_writer``: FSDP's hooks, DDP's
    forward -- name -> its writer).  Why by name too: FSDP's ``FSDP::pre_forward (blocks.0...)`` is no range of the
    framework's structure the steps read, yet it is FSDP's, and the job's evidence called it "the user's NVTX ranges"
    (h37-nvtx62 *Left* 4)."""
    r = trace.ranges
    ids, counts = np.unique(trace.h.name[user_ranges.marked_ranges(r)], return_counts=True)
    names = {trace.h.names[int(i)]: int(c) for i, c in zip(ids.tolist()[:_MAX_NAMES], counts.tolist())}
    named = {n: w for n in names if (w := nvtx.framework_range_writer(n))}
    return names, {**named, **user_ranges.framework_writers(trace.h, r)}


def _whose(said: list[str], writers: dict[str, str]) -> str:
    """Whose NVTX ranges ``said`` are, in words: the user's where the first is no framework's (``writers``:
    ``user_ranges.framework_writers``), else the library's that wrote it -- a DeepSpeed job's
    ``DeepSpeedEngine.backward`` is DeepSpeed's own range, not one the user wrote."""
    writer = writers.get(said[0])
    return f"{writer}'s own NVTX ranges (around its own calls)" if writer else "the user's NVTX ranges"


def _counted(said: list[str], names: dict[str, int]) -> str:
    """``said``'s first four range names with their counts (``names``), in words."""
    return ", ".join(f"`{_short(n, 40)}` ×{names[n]:,}" for n in said[:4])


#: The fewest model forwards a framework's forward hooks must mark for a loop of forward passes to be read from them:
#: a loop is read from three repeats or more, as a period is (two cannot tell a loop from a warm-up call and one pass).
_HOOKED_FORWARDS = 3


def _hooked_forwards(trace: Trace) -> str:
    """Why the job is forward passes, where a framework's layer-wise forward hooks (``HostRanges.framework``: NVIDIA's
    ``{'Module': ...}`` markers under vLLM, SGLang, TensorRT-LLM) mark the top module's forward at least
    :data:`_HOOKED_FORWARDS` times and nothing in the capture shows a backward or an optimizer step (the training
    evidence, every kind of it, was read first and found none); "" else.

    Why medium, not high: the hooks fire on forwards only, so a backward would not be marked -- its absence is read
    from the rest of the capture (no gradient kernel, no optimizer or backward event, no user range naming one), which
    an unrecorded backward (only generic kernels, no host ops) could still hide."""
    r = trace.ranges
    sel = user_ranges.framework_ranges(r)
    if not sel.size:
        return ""
    ids, counts = np.unique(trace.h.name[sel], return_counts=True)
    names = {trace.h.names[int(i)]: int(c) for i, c in zip(ids.tolist(), counts.tolist())}
    # the top module: the one every other hooked module sits under (``model`` over ``model.layers.0``), else the
    # shallowest most repeated
    top = next((n for n in names if all(o == n or o.startswith(n + ".") for o in names)), None)
    if top is None:
        top = min(names, key=lambda n: (n.count("."), -names[n]))
    if names[top] < _HOOKED_FORWARDS:
        return ""
    return (f"the framework's layer-wise forward hooks mark the model's forward `{_short(top, 40)}` ×{names[top]:,} "
            f"over {len(names):,} modules, and nothing shows a backward pass or an optimizer step: forward passes")


def _marked_forwards(trace: Trace) -> str:
    """Why the job is forward passes, where the program marks its forward pass (``nvtx.is_forward_range``: ``forward``,
    ``fwd``, ``forward_step``) at least :data:`_HOOKED_FORWARDS` times and after each forward, until the next one
    starts, fewer kernels are launched than that forward launched: no room for its backward; "" else.  Asked only once
    nothing shows training.

    Why by the launches: a backward pass runs a gradient for each op of its forward (a matrix product's two: its
    input's and its weight's), so it launches about as many kernels as its forward or more, after the forward's range
    closes and before the next forward starts -- on the program's thread (a C++ loop) or on autograd's own device
    thread (PyTorch), so the launches are counted by time on every thread.  A range named ``forward`` says only where
    the forward is; with the backward unmarked (an NVTX-only export, no autograd ranges) its absence is what the
    launches between the forwards show.  ``iteration-{k}`` around a ``forward`` ten times, nothing else, read "GPU work
    of an unknown kind" (h37-probe42n's Left 2).  Launches before the first forward are held to the same bound (a
    window opened mid-backward is no forward loop's)."""
    r = trace.ranges
    h = trace.h
    marked = user_ranges.marked_ranges(r)
    if not marked.size:
        return ""
    forward = h.per_name(nvtx.is_forward_range)[h.name[marked]]
    decode = h.per_name(nvtx.is_decode_range)[h.name[marked]] & ~forward
    if decode.sum() >= _HOOKED_FORWARDS and _runs_matmuls(trace, marked[decode]):
        forward |= decode  # a model decoding: each step one forward pass
    fwd = marked[forward]
    if fwd.size < _HOOKED_FORWARDS:
        return ""
    launch = np.flatnonzero(h.name_mask(devices.is_launch_call) | h.name_mask(devices.is_graph_launch))
    ran_kernels = _kernels_run(trace)
    proc = line_processes(trace)
    proc = np.zeros(len(h.line_names), np.int64) if proc is None else proc  # no lines per GPU: one process
    most = -1
    for p in np.unique(proc[h.line[fwd]]):
        own = fwd[proc[h.line[fwd]] == p]  # this process's forwards, judged by its own threads' launches
        ws, we = union_intervals(h.start[own].astype(np.int64), h.end[own].astype(np.int64))
        if ws.size < _HOOKED_FORWARDS:
            continue
        mine = launch[proc[h.line[launch]] == p]
        order = np.argsort(h.start[mine], kind="stable")
        t = h.start[mine[order]].astype(np.int64)
        ran = np.append(0, np.cumsum(ran_kernels[mine[order]]))  # kernels run by the launches before each
        s0, e0 = np.searchsorted(t, ws, side="left"), np.searchsorted(t, we, side="left")
        held = ran[e0] - ran[s0]  # the kernels each forward's launches ran
        after = ran[np.append(s0[1:], t.size)] - ran[e0]  # those from its end to the next forward's start
        if held.min() < 1 or (after >= held).any() or ran[s0[0]] >= np.median(held):
            return ""
        most = max(most, int(after.max()))
    if most < 0:
        return ""
    out = (f"at most {plural(most, 'kernel')} launched between one and the next, fewer than the forward itself "
           f"launched" if most else "no kernel launched between them")
    what = "decode steps, each running the model's matrix products" if decode.any() else "forward pass"
    _, writers = _marked_names(trace)  # FSDP's ``FullyShardedDataParallel.forward`` is FSDP's range, not the user's
    whose = _whose([h.names[int(h.name[fwd[0]])]], writers)
    return f"{whose} mark the {what} ({_named_ranges(h, fwd)}), with {out}: no backward pass ran -- forward passes"


def _kernels_run(trace: Trace) -> np.ndarray:
    """Per host event, the kernels its launch ran on any GPU (by correlation, ``device_launches``), at least one: a
    launch whose kernel the window lost still ran one.  Why kernels, not launches: a CUDA graph's one
    ``cudaGraphLaunch`` runs all of its nodes -- a forward replayed as a graph (PyTorch's ``g.replay()``, vLLM's decode
    step) is one launch of as many kernels as its eager forward, and its backward (a graphed callable's backward graph)
    one launch too, so only the kernels they ran weigh a forward against the work after it."""
    counts = np.zeros(len(trace.h), np.int64)
    for rec in device_launches(trace.h, trace.devices):
        rec = rec[rec >= 0]
        if rec.size:
            counts += np.bincount(rec, minlength=counts.size)[:counts.size]
    return np.maximum(counts, 1)


def _named_ranges(h: HostEvents, sel: np.ndarray) -> str:
    """Host events ``sel`` (ascending) in words: ```forward` ×10`` for one name, ```decode 0` … `decode 29`, 30 ranges``
    for a loop that numbers them."""
    if np.unique(h.name[sel]).size == 1:
        return f"`{_short(h.names[int(h.name[sel[0]])], 40)}` ×{sel.size:,}"
    first, last = h.names[int(h.name[sel[0]])], h.names[int(h.name[sel[-1]])]
    return f"`{_short(first, 40)}` … `{_short(last, 40)}`, {sel.size:,} ranges"


def _runs_matmuls(trace: Trace, sel: np.ndarray) -> bool:
    """Whether a kernel launched inside host events ``sel`` (any thread's launch, by time) is a matrix product or a
    convolution (``devices.gemm_kernel``): a model's work, not a codec's.  Why: ``decode`` names a language model's
    decode step and a decoder of images or video alike; only the model's runs matrix products."""
    h = trace.h
    ws, we = union_intervals(h.start[sel].astype(np.int64), h.end[sel].astype(np.int64))
    for d, rec in zip(trace.devices, device_launches(h, trace.devices)):
        ok = np.flatnonzero(rec >= 0)
        if not ok.size:
            continue
        t = h.start[rec[ok]].astype(np.int64)
        k = np.searchsorted(ws, t, side="right") - 1
        inside = ok[(k >= 0) & (t < we[np.maximum(k, 0)])]
        gemm = devices.gemm_kernel(list(d.names[:_MAX_NAMES]))
        names = d.name[inside]
        if (gemm[names[names < gemm.size]]).any():
            return True
    return False


def _gpu_only_ops(trace: Trace, fw: Framework) -> str:
    """The host's ops that the framework runs only for GPU work (``Framework.gpu_only_event``), as ``N ops: `a`,
    `b` ...`` (most frequent first); "" for none.  A capture of them with no GPU record lost its GPU side: the work
    was not the CPU's (wild/gpu_events_stripped: `nccl:all_to_all`, `aten::record_stream`)."""
    if not len(trace.h):
        return ""
    return _counted_ops(trace, trace.h.name_mask(fw.gpu_only_event))


def _counted_ops(trace: Trace, mask: np.ndarray) -> str:
    """The host events of ``mask`` as ``N ops: `a`, `b` ...`` (most frequent first, three at most); "" for none."""
    n = int(mask.sum())
    if not n:
        return ""
    ids, counts = np.unique(trace.h.name[mask], return_counts=True)
    top = [trace.h.names[int(i)] for i in ids[np.argsort(-counts, kind="stable")][:3]]
    return f"{n:,} op{'s' if n != 1 else ''}: " + ", ".join(f"`{_short(t, 40)}`" for t in top)


def _scalar_read_wait(trace: Trace, fw: Framework) -> str:
    """The framework's longest scalar read (``Framework.scalar_read_event``: ``.item()``'s ``aten::_local_scalar_dense``)
    of a capture with no CUDA runtime record, where it lasted at least :data:`_UNSEEN_WAIT_PS`, in words with the op
    it ran under; "" otherwise.

    Physics: reading one element of a tensor in host memory takes microseconds (the kept CPU-only trace's reads: at
    most 3 us); a read of a GPU tensor waits until the device's queue reaches it and copies it back, so one lasting
    milliseconds waited on a GPU (XAheli/torch-profiler's ScatterMoE forward: `.item()` under `aten::bincount`
    blocked 2.3 ms a step with no CUDA record in the file).  With any runtime call recorded, the window's own syncs
    say what the host waited for instead."""
    h = trace.h
    reads = waited_scalar_reads(trace, fw)
    if not reads.size:
        return ""
    dur = h.end[reads] - h.start[reads]
    i = int(reads[int(np.argmax(dur))])
    longest = int(dur.max())
    under = read_under(trace, i)
    return (f"`{_short(h.names[int(h.name[i])], 40)}`{f' under `{_short(under, 40)}`' if under else ''} blocked "
            f"{longest / 1e9:,.1f} ms reading one value, where a read from host memory takes microseconds: it waited on "
            "a GPU")


def waited_scalar_reads(trace: Trace, fw: Framework) -> np.ndarray:
    """Host event indices of the framework's scalar reads (``Framework.scalar_read_event``) that lasted at least
    :data:`_UNSEEN_WAIT_PS` in a capture with no CUDA runtime record: each waited on a GPU whose activity the capture
    lost (:func:`_scalar_read_wait`'s physics).  Empty where a runtime call is recorded: its own syncs say what the
    host waited for.  The job reads them as evidence of GPU use; the host-sync check, as the host's wait."""
    h = trace.h
    if not len(h) or h.name_mask(devices.is_runtime_call).any():
        return np.zeros(0, np.int64)
    reads = np.flatnonzero(h.name_mask(fw.scalar_read_event))
    return reads[(h.end[reads] - h.start[reads]) >= _UNSEEN_WAIT_PS]


def read_under(trace: Trace, i: int) -> str:
    """The ATen op host event ``i`` (a scalar read) ran under, innermost first past ``aten::item`` (the read's own
    wrapper): the op that asked for the value (``aten::bincount`` sizing its output); "" where none encloses it."""
    h = trace.h
    own = int(h.end[i] - h.start[i])
    holds = np.flatnonzero((h.line == h.line[i]) & (h.start <= h.start[i]) & (h.end >= h.end[i]))
    holds = holds[(h.end[holds] - h.start[holds]) > own]
    outer = [h.names[int(h.name[j])] for j in holds[np.argsort(h.end[holds] - h.start[holds], kind="stable")]]
    return next((n for n in outer if n.startswith("aten::") and n != "aten::item"), "")


def _faster_than_a_cpu(trace: Trace) -> str:
    """The matmul/convolution/attention op (``Trace.flop_ops``, FLOPs from the trace's own shapes) that returned
    soonest for its FLOPs, in words, where that rate is beyond any CPU's (``devices.peaks.cpu_peak_flops``); "" where
    none is, or where a CUDA runtime call was recorded.

    Physics: an op computed on the host takes at least its FLOPs over the CPU's peak; one that returns sooner queued
    its work on an accelerator (an asynchronous launch returns in microseconds, whatever the work).  A capture whose
    ops look like the CPU's -- no launch, no runtime call, no GPU-only op -- but return faster than any CPU computes
    ran on a GPU whose CUDA activity was not recorded (XAheli/torch-profiler's H200 GEMM benchmark, ``wild/
    gemm_h200_cuda_unrecorded``: `aten::matmul` bf16 [2048,4096]x[4096,14336], 240.5 GFLOP, returned after 84.7 us).
    With any runtime call recorded the window's own calls say where the time went instead.

    The words give the op's return time and what its FLOPs take at least, never their quotient as a rate (h37-peak):
    a rate over a host's return time is not the device's speed, and this one (2.84 PFLOP/s) exceeds the H200's own
    bf16 peak (989.5 TFLOP/s).  Where the capture lists its GPU (:func:`_listed_gpu`) and the op returned sooner than
    that GPU computes the FLOPs at its peak for their dtype, the words say so: the op returned before its work ran."""
    h, fo = trace.h, trace.flop_ops
    if fo is None or not len(fo) or not len(h) or h.name_mask(devices.is_runtime_call).any():
        return ""
    rows = np.flatnonzero(fo.host_idx >= 0)
    idx = fo.host_idx[rows]
    seconds = (h.end[idx] - h.start[idx]).astype(np.float64) * 1e-12
    rows, seconds = rows[seconds > 0], seconds[seconds > 0]
    if not rows.size:
        return ""
    rate = fo.flops[rows] / seconds
    ceiling = np.array([cpu_peak_flops(int(p)) for p in fo.precision[rows]])
    k = int(np.argmax(rate / ceiling))
    if rate[k] <= ceiling[k]:
        return ""
    r = int(rows[k])
    flops, prec = float(fo.flops[r]), int(fo.precision[r])
    out = (f"`{_short(fo.label[r], 60)}` returned after {seconds[k] * 1e6:,.1f} us for {flops / 1e9:,.1f} GFLOP, which "
           f"any CPU takes at least {flops / ceiling[k] * 1e6:,.1f} us to compute")
    gpu = _listed_gpu(trace)
    peak = devices.peak_flops(gpu, None, prec) if gpu else None
    if peak is not None and peak.value > 0 and flops / peak.value > seconds[k]:  # sooner than the GPU itself computes
        out += (f" and the {gpu} at least {flops / peak.value * 1e6:,.1f} us at its {devices.PRECISIONS[prec]} peak, so "
                "it returned before its work was done")
    return out


def _listed_gpu(trace: Trace) -> str:
    """The one GPU model the capture lists as the profiled process's (``Trace.producer["visible_gpus"]``: "8 x NVIDIA
    H200"); "" where it lists none or several models (which ran the work is then not known)."""
    names = set(listed_gpu_models(trace.producer.get("visible_gpus", "")))
    return names.pop() if len(names) == 1 else ""


def _context_allocation(trace: Trace, fw: Framework) -> str:
    """The framework's longest allocation op (``Framework.allocation_event``) of a capture with no CUDA runtime record,
    where it ran at least :data:`_DEVICE_ALLOC_NS`, in words with the op it ran under; "" otherwise.

    Physics: a host allocation maps its pages lazily -- microseconds, a few ms for a large block (the CPU-only
    captures read here: at most 1.6 ms; a 400 MB CPU tensor's 14 ms) -- while the first allocation on a GPU creates
    the CUDA context, 100 ms to seconds.  An allocation that long is the GPU's, so a capture whose every op looks like
    the CPU's (no launch, no GPU-only op, no runtime call) ran on a GPU whose CUDA activity was not recorded
    (``torch.square(torch.randn(N, N).cuda())`` profiled without CUDA activity: `aten::empty_strided` 3.77 s under
    `aten::to`).  With any runtime call recorded the window's own calls say where the time went instead."""
    h = trace.h
    if not len(h) or h.name_mask(devices.is_runtime_call).any():
        return ""
    alloc = np.flatnonzero(h.name_mask(fw.allocation_event))
    if not alloc.size:
        return ""
    dur = (h.end[alloc] - h.start[alloc]) // 1000  # ns
    i = int(alloc[int(np.argmax(dur))])
    longest = int(dur.max())
    if longest < _DEVICE_ALLOC_NS:
        return ""
    # the op it ran under: the shortest host event on its line that holds it (`aten::to`, `aten::randn`)
    holds = np.flatnonzero((h.line == h.line[i]) & (h.start <= h.start[i]) & (h.end >= h.end[i]))
    holds = holds[(holds != i) & ((h.end[holds] - h.start[holds]) > (h.end[i] - h.start[i]))]
    under = ""
    if holds.size:
        j = int(holds[int(np.argmin(h.end[holds] - h.start[holds]))])
        under = f" under `{_short(h.names[int(h.name[j])], 40)}`"
    # the start-up the first pays for, in the runtime of the GPUs the process listed (no runtime call is recorded
    # here): ROCm's PyTorch on an MI300X creates no CUDA context (h37-review62)
    started = devices.vendor_called(_shown_vendor(trace)).TERMS["context_creation"]
    return (f"the allocation `{_short(h.names[int(h.name[i])], 40)}`{under} took {longest / 1e6:,.0f} ms, where a host "
            f"allocation takes microseconds: an allocation on the GPU ({started}, paid by the first one)")


def _unseen_wait(trace: Trace) -> str:
    """A sync that waited on the GPU with none of its recorded work in flight, in words; "" for none.  A sync returns
    at once on an idle GPU, so one that waits milliseconds after the GPU's recorded copies and memsets have ended (the
    context exists: they ran) waited on work the capture did not record -- kernels launched through a path the
    profiler did not trace (RTX 5080, a Rust program's driver entry points: unschlagbar/neural-networks).  Not a
    start-up window, whose syncs wait on nothing (or create the context, before any GPU work)."""
    spans = [(d.start, d.end) for d in trace.devices if len(d)]
    if not spans or not len(trace.h):
        return ""
    st = np.concatenate([a for a, _ in spans])
    en = np.concatenate([b for _, b in spans])
    h = trace.h
    idx = np.flatnonzero(h.name_mask(devices.is_sync_call))
    idx = idx[(h.end[idx] - h.start[idx] >= _UNSEEN_WAIT_PS) & (h.start[idx] >= en.min())]
    for i in idx[np.argsort(-(h.end[idx] - h.start[idx]), kind="stable")].tolist():
        a, b = int(h.start[i]), int(h.end[i])
        if not ((st < b) & (en > a)).any():
            return (f"`{_short(h.names[int(h.name[i])], 40)}` waited {(b - a) / 1e9:,.1f} ms on the GPU after its "
                    "recorded copies and memsets had ended, where a sync returns at once on an idle GPU")
    return ""


def _lost_records(trace: Trace, kind: Kind, waits: Waits | None = None) -> Kind:
    """``kind`` with the GPU records the capture lost (:func:`lost_launches`, by accounting) or its profiler counted
    as dropped (``Trace.producer["records_dropped"]``), and the cause its settings or log show; unchanged where
    neither says a record is missing."""
    lost = lost_launches(trace, waits)
    said = trace.producer
    counted = said.get("records_dropped", "")
    if lost is None and not counted:
        return kind
    n = said.get("records_dropped_count", "")
    kind = dataclasses.replace(kind, lost_counted=counted, lost_counted_n=int(n) if n.isdigit() else 0,
                               lost_cause=said.get("records_cause", ""), lost_fix=said.get("records_fix", ""),
                               capture_format=kind.capture_format or trace.format)
    if lost is not None:
        kind = dataclasses.replace(kind, lost_launches=lost[0], lost_from_ps=lost[1][0][0], lost_spans=lost[1],
                                   lost_share=lost[2])
    return kind


def lost_launches(trace: Trace, waits: Waits | None = None) -> tuple[str, tuple[tuple[int, int], ...], float] | None:
    """(in words, the stretches that lost them as ``(from, to)`` ps on the trace's clock -- from the first lost
    launch's call to the last one's return, ``to`` -1 for a stretch that runs to the window's end --, their share of the accepted launches) of the kernel launches whose GPU records
    the capture lost, where they are a real share of the accepted launches (``capture.lost_launch_share``); None
    elsewhere.

    By accounting: every launch the runtime accepted runs its kernel, and CUPTI gives the kernel the launch's
    correlation id in every format that records the join.  A launch whose id no GPU record carries is *lost* where
    the GPU was shown done with it inside the window, wherever in the window it falls: its call returned while no
    recorded kernel ran (an idle queue: the kernel starts within the launch latency, never behind recorded work), and
    the host's first wait for the GPU that began after it -- a sync call, or a poll until done (``waits``,
    ``job.waits``) -- returned with still no kernel recorded in between, so the kernel ran in a stretch the records
    show empty.  Launches queued behind recorded kernels, or after
    the window's last sync, may be in flight at the window's edge -- a capture cut there (TraceLens, the profiler's
    stop) keeps those, and they are not lost.  The lost launches make stretches, split where a recorded kernel
    starts between two of them: the records resume there (a profiler's buffers dropped whole, on every stream, then
    written again), or never (its last buffers unwritten).  Asked only where the join holds (some launch's kernel is
    recorded): a format without correlation ids on one side leaves every launch unmatched by construction.
    Why: an Nsight export of a kernel harness on a GB10 recorded 143 kernels and then none for its last second --
    24,801 accepted launches, each behind a finished ``cudaDeviceSynchronize`` -- and was read as if the recorded
    part were the whole (Navi-AI-Lab/nvllm ``B_harness_grid_4_active``, h37-survey31); a stretch lost mid-window reads
    the same way by the same accounting, where a rule for the tail alone took its launches for work queued elsewhere
    (h37-lost3).  A poll is read where recorded work drains under it, or after a lost launch by its shape, queries in
    a row until the host goes on (``job.waits.polls``; ``nsysexport.write_lost_kernel_records(poll=)`` reads as its
    sync twin, h37-probe47c)."""
    h = trace.h
    devs = [d for d in trace.devices if len(d)]
    if not len(h) or not devs or h.corr is None:
        return None
    corr = np.asarray(h.corr)
    launch = np.flatnonzero(h.name_mask(devices.is_launch_call) & (corr >= 0))
    launch = launch[~captured_calls(h, launch)]  # recorded into a graph, not run: no kernel record to lose
    if not launch.size:
        return None
    recorded = np.unique(np.concatenate([np.asarray(d.corr) for d in devs if d.corr is not None]))
    seen = np.isin(corr[launch], recorded[recorded >= 0])
    if not seen.any():  # no join: the format (or this file) does not pair launches with kernels
        return None
    w = waits if waits is not None else sync_waits(h)  # the host's waits, by start: a sync call, a poll until done
    s_start, s_end = w.start, w.end
    if not s_start.size:
        return None
    ran = [(d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE) for d in devs]
    k_start = np.concatenate([np.asarray(d.start[m], dtype=np.int64) for d, m in zip(devs, ran)])
    k_end = np.concatenate([np.asarray(d.end[m], dtype=np.int64) for d, m in zip(devs, ran)])
    if not k_start.size:
        return None
    order = np.argsort(k_start, kind="stable")
    k_start, k_end = k_start[order], np.maximum.accumulate(k_end[order])  # the latest end of those begun so far
    unseen = launch[~seen]
    ends = np.asarray(h.end[unseen], dtype=np.int64)
    first = np.searchsorted(s_start, ends)  # the first sync that began after each call returned
    synced = first < s_start.size
    waited = np.where(synced, s_end[np.minimum(first, s_start.size - 1)], -1)
    before = np.searchsorted(k_start, ends, side="right")  # recorded kernels begun by the call's return
    busy = (before > 0) & (k_end[np.maximum(before - 1, 0)] > ends)  # one of them still running: queued behind it
    between = np.searchsorted(k_start, waited, side="right") > before  # one began before the sync returned
    lost = unseen[synced & ~busy & ~between]
    if lost.size < T("capture.lost_launch_share") * launch.size or lost.size < 2:
        return None
    order = np.argsort(np.asarray(h.start[lost], dtype=np.int64), kind="stable")
    starts = np.asarray(h.start[lost], dtype=np.int64)[order]
    stops = np.asarray(h.end[lost], dtype=np.int64)[order]
    # a stretch ends where the kernel records resume: a recorded kernel begins after one lost launch, before the next
    resume = np.searchsorted(k_start, starts, side="right")
    cut = np.flatnonzero(resume[1:] != resume[:-1])
    heads = np.concatenate([[0], cut + 1])
    tails = np.concatenate([cut, [starts.size - 1]])
    # each stretch spans its lost launches' calls; one with no record after it runs to the window's end (-1)
    spans = tuple((int(starts[a]), int(stops[b]) if resume[b] < k_start.size else -1) for a, b in zip(heads, tails))
    resumes = [int(k_start[resume[b]]) if resume[b] < k_start.size else -1 for b in tails]
    t0 = trace.viewer_zero_ps  # the report's ms, as the capture's own viewer draws them

    def at(ps: int) -> str:
        return f"{(ps - t0) / PS_PER_MS:,.1f} ms"

    share = lost.size / launch.size
    words = f"{lost.size:,} of the {launch.size:,} kernel launches the runtime accepted ({pct(share)}) have no kernel record, "
    if len(spans) == 1 and spans[0][1] < 0:
        words += (f"from {at(spans[0][0])} on: each returned after the last recorded kernel had ended "
                  f"({at(int(k_end[-1]))}), and a sync waited on the GPU after it and returned inside the capture")
    else:
        where = (f"from {at(spans[0][0])} to {at(resumes[0])}, where the kernel records resume" if len(spans) == 1 else
                 f"in {len(spans)} stretches between {at(spans[0][0])} and "
                 f"{at(resumes[-1]) if resumes[-1] >= 0 else 'the window' + chr(39) + 's end'}")
        words += (f"{where}: each returned while no recorded kernel ran, and the sync that waited on the GPU after it "
                  "returned with still none recorded")
    words += _NOT_WRITTEN
    return words, spans, share


def _ran_kernels(trace: Trace) -> bool:
    """Any kernel or collective on any GPU: copies and memsets alone are no GPU work (start-up's first memset)."""
    return any(((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)).any() for d in trace.devices
               if len(d))


def _no_kernel(trace: Trace) -> str:
    """"no kernel, copy or collective ran on any GPU in the capture" -- or, where the GPUs did copy or fill (a program
    whose ops all ran on the CPU still feeding its GPUs their batches), that no kernel or collective ran and how many
    copies and fills did: the kind is the compute's, the words never deny the copies the GPUs table shows
    (h37-xplane3).  Fills (``memset``) are counted apart: a GPU that only zeroed a buffer copied nothing
    (h37-copydir31; the same events were all "copies" before)."""
    work = [d.kind[(d.kind != devices.KIND_KERNEL) & (d.kind != devices.KIND_COLLECTIVE)] for d in trace.devices if len(d)]
    fills = sum(int((k == devices.KIND_MEMSET).sum()) for k in work)
    copies = sum(int(k.size) for k in work) - fills
    if not copies and not fills:
        return "no kernel, copy or collective ran on any GPU in the capture"
    gpus = sum(1 for d in trace.devices if len(d))
    did = " and ".join(w for w, n in (("copied", copies), ("filled memory", fills)) if n)
    counts = ", ".join(plural(n, w, ws) for w, ws, n in (("copy", "copies", copies), ("fill", "fills", fills)) if n)
    return f"no kernel or collective ran on any GPU in the capture (the {plural(gpus, 'GPU')} only {did}: {counts})"


def _seen_words(trace: Trace) -> str:
    """"; the capture lists the GPU the program saw (...), unused" where the file lists the GPUs its process saw; ""
    otherwise: work on the CPU beside a visible GPU is a model never moved, not a machine without one."""
    seen = trace.producer.get("visible_gpus", "")
    return f"; the capture lists the GPUs the program saw ({seen}): they went unused" if seen else ""


def _window_kind(trace: Trace, names: list[str], fw: Framework, ran: Kind | None = None) -> Kind:
    """A window by what it holds: the first reader of :data:`_WINDOW_READERS` that recognises it, asked in the table's
    order among the readers of its sort (with kernels, whose kind read off them is ``ran``; without, ``ran`` None),
    names its window; none does: the kernels' kind, or no kernel and nothing said of why."""
    held = _Held(trace, fw, names, trace.producer.get("cuda_trace", ""), ran)
    for read, window, with_kernels in _WINDOW_READERS:
        if with_kernels != (ran is not None):
            continue
        kind = read(held)
        if kind is not None:
            return dataclasses.replace(kind, window=window)
    return ran if ran is not None else Kind("no_gpu", "high", _no_kernel(trace))


@dataclass
class _Held:
    """A window as its readers (:data:`_WINDOW_READERS`) ask it: the trace, its framework, its host events' names,
    what the capture's own options say of CUDA tracing (``Trace.producer["cuda_trace"]``: "on", "off", "" where they
    do not say -- never guessed from a missing table), and the kind its kernels show (None: a window without)."""

    trace: Trace
    fw: Framework
    names: list[str]
    cuda: str
    ran: Kind | None = None

    @functools.cached_property
    def calls(self) -> bool:
        """Whether any host event is a GPU runtime call."""
        return any(devices.is_runtime_call(n) for n in self.names)

    @property
    def stream(self) -> str:
        """The program's stream whose last words the capture kept."""
        return self.trace.producer.get("program_stream", "") or "standard error"

    @functools.cached_property
    def profiler(self) -> str:
        """:func:`_profiler_calls_only`'s words, read once: the loop's end is asked only of a window whose calls are
        the profiler's own (or none), and the profiler's reader after it says them."""
        return _profiler_calls_only(self.trace) if self.calls else ""


def _failed_window(w: _Held) -> Kind | None:
    """The program died before its GPU work, in its own last words; or it launched nothing and reported that something
    it needed failed (likely why, not a death form: medium)."""
    failed = w.trace.producer.get("program_error", "")
    if failed:
        held = (f"; the window holds {_startup_calls(w.trace)}" if w.calls else
                "; CUDA tracing was on, and the window holds no CUDA call" if w.cuda == "on" else "")
        return Kind("no_gpu", "high", f"the program stopped with an error before it launched a kernel: \"{failed}\" "
                                      f"(its {w.stream}, kept in the capture){held}")
    reported = w.trace.producer.get("program_reported", "")
    if reported and w.calls:
        return Kind("no_gpu", "medium", f"the program reported a failure and launched no kernel: \"{reported}\" (its "
                                        f"{w.stream}, kept in the capture), likely why it stopped before its GPU work; "
                                        f"the window holds {_startup_calls(w.trace)}")
    return None


def _wsl2_window(w: _Held) -> Kind | None:
    """The platform, not the window (:func:`_wsl2_untraced`): the program ran, the profiler traced none of its CUDA
    work."""
    untraced = _wsl2_untraced(w.trace) if not w.calls and w.cuda != "off" else ""
    return Kind("unknown", "low", untraced) if untraced else None


def _unclosed_window(w: _Held) -> Kind | None:
    """The profiler, not the window: the session stopped before the program's CUDA trace was finalized
    (``Trace.producer["cuda_unclosed"]``), so the CUDA records it holds are what was written before, not all the
    program made -- a window without kernels then says nothing of whether the program launched any."""
    p = w.trace.producer
    if not p.get("cuda_unclosed") or w.cuda == "off":
        return None
    held = _startup_calls(w.trace) if w.calls else "no CUDA call"
    after = f", while the program went on ({p['cuda_unclosed_after']})" if p.get("cuda_unclosed_after") else ""
    return Kind("unknown", "low", f"{p['cuda_unclosed']}; the window keeps {held}{after}: what the program launched "
                                  "after its last written record is not in the capture, so no kernel recorded is no "
                                  "proof that none ran")


def _cpu_ops_window(w: _Held) -> Kind | None:
    """The framework's matmuls or convolutions ran with no CUDA call among them (:func:`_cpu_compute_ops`): a matmul
    on the GPU launches a kernel, these launched none, so the model ran on the CPU."""
    computed = _cpu_compute_ops(w.trace, w.fw) if w.calls else ""
    if not computed:
        return None
    ncalls = int(w.trace.h.name_mask(devices.is_runtime_call).sum())
    return Kind("no_gpu", "high", f"{_no_kernel(w.trace)}; the framework's "
                                  f"{computed} launched no kernel, where on a GPU each launches one: the model ran "
                                  f"on the CPU; the window's {ncalls:,} CUDA call{'s' if ncalls != 1 else ''} did "
                                  f"no GPU work{_seen_words(w.trace)}", cpu_only=f"its {computed} launched no kernel",
                gpu_seen=w.trace.producer.get("visible_gpus", ""))


def _loop_ended_window(w: _Held) -> Kind | None:
    """The loop ended before the window (:func:`_loop_ended`): the program's steps ran before it, so it says nothing
    of where its model runs.  Asked only where the calls are the profiler's own or none: a call of the program's is
    work the window holds."""
    ended = _loop_ended(w.trace, w.fw) if w.profiler or not w.calls else ""
    if not ended:
        return None
    runtime = devices.vendor_of_calls(n for n in w.names if devices.is_runtime_call(n)).TERMS["runtime"]
    return Kind("no_gpu", "high", ended + (f", and the window's only {runtime} calls are the profiler's own" if w.calls
                                           else ""), loop_steps=_loop_steps(w.trace, w.fw))


def _profiler_only_window(w: _Held) -> Kind | None:
    """Every call is the profiler's own, and the window recorded the program's CPU side yet holds none of its work
    (:func:`_profiler_only`): the profiled block ran nothing while the trace was on -- no verdict on where its code
    runs.  Asked before :func:`_profiler_window`, whose "its code ran on the CPU" rests on code the window holds."""
    held = _profiler_only(w.trace, w.fw) if w.profiler else ""
    return Kind("no_gpu", "high", held) if held else None


def _profiler_window(w: _Held) -> Kind | None:
    """Every call is the profiler's own (:func:`_profiler_calls_only`): nothing the program called touched the GPU,
    so its code ran on the CPU, whatever the window was."""
    if not w.profiler:
        return None
    return Kind("no_gpu", "high", f"{w.profiler}; no kernel was launched in the window{_seen_words(w.trace)}",
                cpu_only="the window's only GPU runtime calls are the profiler's own",
                gpu_seen=w.trace.producer.get("visible_gpus", ""))


def _input_only_window(w: _Held) -> Kind | None:
    """Batch after batch fetched, and no kernel (:func:`_input_only`): start-up does not repeat, so this is a loop that
    runs no model."""
    loading = _input_only(w.trace, w.fw) if w.calls else ""
    return Kind("no_gpu", "high", loading) if loading else None


def _cpu_loop_window(w: _Held) -> Kind | None:
    """The loop's marked steps each called CUDA, and no call of the window queued GPU work (:func:`_idle_marked_steps`):
    a loop that ran on the CPU, not a start-up -- start-up does not repeat step after step."""
    steps = _idle_marked_steps(w.trace, w.fw) if w.calls else 0
    if not steps:
        return None
    calls = _startup_calls(w.trace)
    return Kind("no_gpu", "high", f"the loop's {steps} marked steps each called CUDA ({calls}), and no "
                                  f"call queued GPU work -- no launch, copy or fill: the loop ran on the CPU"
                                  f"{_seen_words(w.trace)}", cpu_only=f"its {steps} marked steps queued no GPU work",
                gpu_seen=w.trace.producer.get("visible_gpus", ""))


def _copy_only_window(w: _Held) -> Kind | None:
    """The GPUs copied and ran no kernel (:func:`_copies_only`): GPU work, the copy engines', not start-up -- start-up
    makes a context and buffers, it does not move bytes back and forth window-long.  Not where the framework's
    matmuls or convolutions ran on the host (:func:`_cpu_compute_ops`): that is a model on the CPU whose batches were
    copied to the GPUs, read by the CPU readers after it (``test_random_jobs``' TF batches on 4 A100s)."""
    if _cpu_compute_ops(w.trace, w.fw):  # the model's matmuls ran on the host: a model on the CPU fed its batches
        return None
    copied, pageable = _copies_only(w.trace, w.fw)
    return Kind("no_gpu", "high", copied, pageable_copies=pageable) if copied else None


def _teardown_window(w: _Held) -> Kind | None:
    """The program's tear-down after its loop (:func:`_teardown`): calls that release what it made and none that make
    anything -- the loop ended before the window, which start-up never does."""
    ended = _teardown(w.trace) if w.calls else ""
    return Kind("no_gpu", "high", ended) if ended else None


def _startup_window(w: _Held) -> Kind | None:
    """Runtime calls and no kernel launched: the program's start-up (:func:`_startup_calls`)."""
    if not w.calls:
        return None
    return Kind("no_gpu", "high", f"start-up only: {_startup_calls(w.trace)}; no kernel was launched in the window")


def _programs_no_kernel_window(w: _Held) -> Kind | None:
    """The host ran programs that XLA compiled for the GPU (``Framework.program_backend``), none for the CPU, and the
    GPU runtime's calls are recorded -- none a kernel launch -- with no kernel: the programs launched nothing.

    Why: the start-up reader (:func:`_startup_window`) reads any window of runtime calls and no kernel as the
    program's start-up, and read a JAX loop of 6 jitted calls so recorded -- each a ``GpuExecutable::ExecuteThunks``
    whose only CUDA call was its host callback's ``cuLaunchHostFunc`` -- "start-up only ... no kernel was launched in
    the window" (h37-jaxunrec70 *Left* 1; by construction, ``synthetic.jaxcapture``).  The executables' runs are the
    loop's, past its start-up; and the API record is there (the GPU tracer worked, unlike
    :func:`_kernels_unrecorded_window`'s), so no kernel's record was lost: the programs launched none."""
    h = w.trace.h
    if not w.names or not w.calls or not len(h) or h.name_mask(devices.is_launch_call).any():
        return None
    backends = _program_backends(w)
    if set(backends) != {"GPU"}:
        return None
    runs = _outermost(h, backends["GPU"])
    named = _most_named(h.names, h.name[runs], 2)
    return Kind("no_gpu", "medium", f"the host ran {plural(runs.size, 'execution')} of programs compiled for the "
                                    f"GPU ({named}), and their GPU runtime calls are recorded -- "
                                    f"{_startup_calls(w.trace)} -- none a kernel launch: the programs launched no "
                                    f"kernel in the window")


def _frontend_window(w: _Held) -> Kind | None:
    """No CUDA call at all, and the code that ran is a serving engine's request handling (:func:`_frontend`)."""
    front = _frontend(w.trace)
    if front is None:
        return None
    e, hit = front
    return Kind("no_gpu", "high", f"the {e.name} serving engine's front-end process: its Python spans run the "
                                  f"engine's request handling (`{_short(hit)}`), not its model, and it made no GPU "
                                  f"runtime call; the engine's steps run in a process of their own", e.id, e.name)


def _tracing_off_window(w: _Held) -> Kind | None:
    """CUDA went untraced: the capture's options say so; else the program called into CUDA (its sampled call stacks
    ran inside the driver's library: no record of it is the profiler's, not the GPU's); else the driver initialised
    in the program (its own thread ran there) and the options do not say tracing was on.

    Where the options say tracing was off and the user's NVTX ranges name the work (:func:`_nvtx_kind`: a
    ``backward``, an optimizer step), the kind is theirs -- ``training`` -- and the window stays ``tracing_off``
    (``Kind.times_gpu_step`` false: no GPU step, no ledger).  Why: the job the capture describes is a training loop whose
    GPU side went unrecorded, not one without GPU work; read as ``no_gpu`` it was reported as "no GPU work" beside
    ranges that time 15 training iterations (h37-tracingoff2's ``wild/tracing_off_nvtx_a10_train``)."""
    p = w.trace.producer
    if w.cuda == "off":
        fix, words = _retrace(w.trace)
        said = f"CUDA tracing was off (the capture's options): the window records no CUDA call, copy or kernel" \
               f"{_ranges_beside(w.trace)}"
        return _untraced_kind(w, said, Kind("no_gpu", "high", said, window_fix=fix, fix_words=words))
    if p.get("cuda_in_stacks"):
        seen = "the program called into CUDA (its call stacks, which the capture sampled, ran inside the CUDA driver's " \
               "library)"
    elif p.get("cuda_thread") and w.cuda != "on":
        seen = "the CUDA driver initialised in the program (its own thread, cuda-EvtHandlr, ran in the program's process)"
    else:
        return None
    said = f"CUDA was not traced: {seen}, but the capture holds no CUDA call, copy or kernel table" \
           f"{_ranges_beside(w.trace)}"
    # the unsaid fix only where the export records no options (where they say CUDA tracing was on, that one is wrong)
    return _untraced_kind(w, said, Kind("unknown", "low", said, window_fix="" if w.cuda else _UNSAID_RETRACE))


#: The window fix of a capture whose CUDA side went untraced where its options do not say so (Nsight before 2023
#: exports none): CUDA seen from the program's side, not the settings -- "the options had it off" would be a guess.
_UNSAID_RETRACE = "tracing_off:unsaid"


def _untraced_kind(w: _Held, said: str, otherwise: Kind) -> Kind:
    """The kind of a window whose CUDA side went untraced: the user's NVTX ranges' (:func:`_nvtx_kind`: a
    ``backward``, an optimizer step) where they name the work, with ``otherwise``'s window fix; else ``otherwise``.
    One answer whatever shows CUDA went untraced -- the capture's options, the driver in the program's stacks or its
    thread: the ranges say what the program ran, not how the profiler was set.  Why: ``Backward`` x4 and ``SGD`` x4
    around each ``Batch N`` read "GPU work of an unknown kind" beside "ranges which name work only training does"
    where the export (Nsight 2022.1) records no options (YijiaZhao/NVTX-example ``quickstart.sqlite``, h37-huntnsys63),
    while the same ranges under recorded options read training."""
    named = _nvtx_kind(w.trace)
    if named is None:
        return otherwise
    said += f"; {named.evidence}" if named.kind != "training" else ""
    return Kind(named.kind, named.confidence, said, from_ranges=named.from_ranges, window_fix=otherwise.window_fix,
                fix_words=otherwise.fix_words)


def _nvtx_window(w: _Held) -> Kind | None:
    """The user's NVTX ranges (:func:`_user_ranges`) and no CUDA record."""
    user = _user_ranges(w.trace)
    if not user:
        return None
    if w.cuda == "on":  # traced, and none of the ranges' code called CUDA: the window is wrong, not the options
        return Kind("no_gpu", "high", f"NVTX ranges only ({user}), with CUDA tracing on: the window holds no CUDA "
                                      "call, copy or kernel", window_fix="nvtx_only:traced")
    # the export does not record its options: no CUDA table at all is what `-t nvtx` alone leaves
    return Kind("no_gpu", "high", f"NVTX ranges only ({user}), and no CUDA call, copy or kernel recorded; the export "
                                  f"does not record whether CUDA tracing was on, and "
                                  f"{_cuda_tables_words(w.trace, 'tracing NVTX alone (-t nvtx)')}")


def _cuda_tables_words(trace: Trace, traced: str) -> str:
    """What an export without capture options holds of CUDA's tables, as the clause its window's evidence ends on:
    "no CUDA table at all is what <traced> leaves"; where it holds them, every one empty
    (``Trace.producer["cuda_tables_empty"]``, the Nsight reader's), that -- which says neither way, Nsight writing no
    table for a trace that recorded nothing.  Never "no CUDA table" of a file that holds them (h37-window69)."""
    empty = trace.producer.get("cuda_tables_empty", "")
    if empty:
        return f"its CUDA tables ({empty}) are there but empty, which says neither way"
    return f"no CUDA table at all is what {traced} leaves"


def _input_on_cpu_window(w: _Held) -> Kind | None:
    """No model op and no call: a loop over its input alone (:func:`_input_on_cpu`), not a model on the CPU."""
    fetched = _input_on_cpu(w.trace, w.fw) if w.names else ""
    return Kind("no_gpu", "high", fetched) if fetched else None


def _program_backends(w: _Held) -> dict[str, np.ndarray]:
    """Per backend a compiled program's host events name (``Framework.program_backend``: XLA's executables, "GPU" or
    "CPU"), those events' indices; empty where none names one."""
    h = w.trace.h
    out: dict[str, list[int]] = {}
    for i in np.unique(h.name):
        backend = w.fw.program_backend(h.names[int(i)])
        if backend:
            out.setdefault(backend, []).append(int(i))
    return {b: np.flatnonzero(np.isin(h.name, ids)) for b, ids in out.items()}


def _outermost(h, idx: np.ndarray) -> np.ndarray:
    """Of the host events ``idx``, those inside no other of them on the same line (jaxlib writes a jitted call's
    ``PjitFunction(f)`` twice, one inside the other)."""
    if idx.size < 2:
        return idx
    idx = idx[np.lexsort((-(h.end[idx] - h.start[idx]), h.start[idx], h.line[idx]))]
    keep, line, reach = [], None, -1
    for i in idx:
        if h.line[i] != line or h.start[i] >= reach:
            keep.append(int(i))
            line, reach = h.line[i], int(h.end[i])
        else:
            reach = max(reach, int(h.end[i]))
    return np.asarray(keep, dtype=np.int64)


def _longest(h, runs: np.ndarray) -> str:
    """The longest of the host events ``runs``, named and timed."""
    dur = h.end[runs] - h.start[runs]
    return f"`{_short(h.names[int(h.name[int(runs[int(np.argmax(dur))])])], 60)}`, {int(dur.max()) / 1e9:,.1f} ms"


def _kernels_unrecorded_window(w: _Held) -> Kind | None:
    """The host ran programs that XLA compiled for the GPU (``Framework.program_backend``: ``GpuExecutable::
    ExecuteThunks``, ``<module>:XLA GPU module``), none for the CPU, and the capture holds no kernel and no GPU runtime
    call: the programs' GPU side was not recorded.

    Physics: a GPU executable's run launches its thunks' kernels on the GPU -- it runs no op on the host -- so the
    executable's own events are evidence the work was the GPU's, and a window with none of its kernels, nor the
    launches CUPTI records beside them, lost the GPU's side (CUPTI not loaded, or its records dropped), not a job that
    ran on the CPU.  A JAX loop of jitted calls so recorded read "high confidence: ... the host made no GPU runtime
    call: the work ran on the CPU ... move the model and its inputs there" (h37-jaxunrec70, by construction:
    ``synthetic.jaxcapture`` with no CUDA record)."""
    h = w.trace.h
    if not w.names or w.calls or not len(h):
        return None
    backends = _program_backends(w)
    if set(backends) != {"GPU"}:
        return None
    runs = _outermost(h, backends["GPU"])
    seen = w.trace.producer.get("visible_gpus", "")
    listed = f" (the capture lists {seen})" if seen else ""
    named = _most_named(h.names, h.name[runs], 2)
    return Kind("unknown", "low", f"{_no_kernel(w.trace)}, and the host ran {plural(runs.size, 'execution')} of "
                                  f"programs compiled for the GPU ({named}) whose kernels are not in the "
                                  f"capture{listed}: the GPU's side of the work was not recorded",
                gpu_seen=seen)


def _ops_unrecorded_window(w: _Held) -> Kind | None:
    """The framework's compiled graphs ran (``Framework.step_call_wait``: TensorFlow's eager call of a tf.function's
    graph; where it has none, its calls of compiled programs, ``Framework.dispatch_event`` with
    ``dispatch_is_compiled``: JAX's jitted calls) and the capture holds no op at all (``Framework.host_op_event``), on
    any thread, and no executable's event names the backend the programs were compiled for
    (``Framework.program_backend``; a CPU backend's window is the work on the CPU, a GPU's is
    :func:`_kernels_unrecorded_window`'s): the graphs' work was not recorded, on the host or a GPU, so where it ran is
    not shown.

    Physics: a graph's executor records each op it runs on the host's threads -- a CPU op's compute, a GPU op's launch
    alike (the kept CPU-only Keras capture: ``GatherV2:GatherV2`` on ``tf_Compute``) -- so a graph that ran for
    milliseconds with none of its ops in the capture ran work the capture did not keep, and "no GPU runtime call" is
    no evidence that it ran on the CPU.  awslabs/sagemaker-debugger's 8-GPU SageMaker capture
    (``ip-172-31-19-241.trace.json.gz``: one Keras ``train_function`` of 63.9 ms, its executor threads named and
    empty, its 8 GPU planes without a line) read "high confidence: the work ran on the CPU ... move the model and its
    inputs there" (h37-hunt70d).  A JAX jitted call records no op on the host: with no executable's event to name its
    backend, its work is as unshown (h37-jaxunrec70)."""
    h = w.trace.h
    if not w.names or w.calls or not len(h) or _graph_ops(w.trace, w.fw).any() or _program_backends(w):
        return None
    runs = np.flatnonzero(h.name_mask(w.fw.step_call_wait))
    what = "compiled graph"
    if not runs.size and w.fw.dispatch_is_compiled:
        runs, what = _outermost(h, np.flatnonzero(h.name_mask(w.fw.dispatch_event))), w.fw.label("dispatch_call")
    if not runs.size:
        return None
    seen = w.trace.producer.get("visible_gpus", "")
    where = f"on the host's threads or the GPUs it lists ({seen})" if seen else "on any of the host's threads"
    return Kind("unknown", "low", f"{_no_kernel(w.trace)}, and the host ran {plural(runs.size, what)} "
                                  f"({_longest(h, runs)}) whose ops are not in the capture, {where}: "
                                  "the graphs' work was not recorded, so where it ran is not shown",
                gpu_seen=seen)


def _graph_ops(trace: Trace, fw: Framework) -> np.ndarray:
    """Bool per host event: an op of the framework's (``Framework.host_op_event``) that a compiled graph ran -- one
    inside a graph call (``Framework.step_call_wait``; every op where no graph call is recorded) -- and no op of the
    input pipeline: an op whose type ran while the consumer waited in a fetch (``Framework.input_event``) is the
    pipeline's, since the graph that asked for the batch waits for it and runs none of its own ops meanwhile, and the
    pipeline's map functions run the same ops for every element, the prefetched ones after the fetch included.  Eager
    ops outside the graph calls (a callback's summary writes) are no record of the graph's work either.

    Why: the ops of a tf.data pipeline are no record of a graph's own work.  The untrimmed 8-GPU SageMaker capture
    (awslabs/sagemaker-debugger ``utils/ip-172-31-19-241.trace.json`` @7e7aad69, ``wild/tf_keras_input_ops_8gpu``)
    holds its input pipeline's ops (``DecodePng``, ``ParseExampleV2``, ``random_flip_left_right/mul:Mul`` on
    ``tf_Compute``, 5 fetches in 13.6 ms, the batch handed to the graph by ``IteratorGetNext/_1:_Send``) and none of
    the Keras ``train_function``'s own in its 63.4 ms graph run: read "the input pipeline only ... no model ran on
    them" (h37-hunt70e)."""
    h = trace.h
    ops = h.name_mask(fw.host_op_event)
    runs = np.flatnonzero(h.name_mask(fw.step_call_wait))
    if not ops.any() or not runs.size:
        return ops
    ops &= _within(h, runs, ops)
    fetch = np.flatnonzero(h.name_mask(fw.input_event))
    if not ops.any() or not fetch.size:
        return ops
    inside = _within(h, fetch, ops) & ops
    piped = {op_type(h.names[int(i)]) for i in np.unique(h.name[inside])}
    types = np.array([op_type(n) in piped for n in h.names], dtype=bool)
    return ops & ~types[h.name]


def _within(h: HostEvents, spans: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Bool per host event: one of ``mask`` that lies whole inside the union of the host events ``spans``."""
    out = np.zeros(len(h), dtype=bool)
    idx = np.flatnonzero(mask)
    s, e = union_intervals(h.start[spans].astype(np.int64), h.end[spans].astype(np.int64))
    k = np.searchsorted(s, h.start[idx].astype(np.int64), side="right") - 1
    out[idx] = (k >= 0) & (h.end[idx].astype(np.int64) <= e[np.maximum(k, 0)])
    return out


def _graph_ran(trace: Trace, fw: Framework) -> bool:
    """Whether the framework's compiled graphs ran (``Framework.step_call_wait``: TensorFlow's eager call of a
    tf.function's graph) for longer than the fetches inside them: a graph that does more than wait for its batch ran
    work of its own, whether or not its ops were recorded -- so the window is no loop that only fetched batches."""
    h = trace.h
    runs = np.flatnonzero(h.name_mask(fw.step_call_wait))
    if not runs.size:
        return False
    fetch = np.flatnonzero(h.name_mask(fw.input_event))
    held = (time_within(*union_intervals(h.start[fetch].astype(np.int64), h.end[fetch].astype(np.int64)),
                        h.start[runs].astype(np.int64), h.end[runs].astype(np.int64))
            if fetch.size else np.zeros(runs.size))
    return bool(((h.end[runs] - h.start[runs]).astype(np.float64) > 2 * held).any())


def _cpu_window(w: _Held) -> Kind | None:
    """Host events and no GPU runtime call: the work ran on the CPU -- said with the programs XLA compiled for the CPU
    where the executables' events name that backend (``Framework.program_backend``: ``TfrtCpuExecutable::Execute``),
    the evidence where it is."""
    if not w.names:
        return None
    cpu = _program_backends(w).get("CPU") if len(w.trace.h) else None
    runs = _outermost(w.trace.h, cpu) if cpu is not None else None
    ran = "" if runs is None else (f" and ran {plural(runs.size, 'execution')} of programs compiled for the CPU "
                                   f"({_most_named(w.trace.h.names, w.trace.h.name[runs], 2)})")
    return Kind("no_gpu", "high", f"{_no_kernel(w.trace)}, and the host made no GPU runtime call{ran}: the work ran on "
                                  f"the CPU{_seen_words(w.trace)}",
                cpu_only="the host made no GPU runtime call", gpu_seen=w.trace.producer.get("visible_gpus", ""),
                cpu_collectives=_cpu_backend_ops(w.trace, w.fw))


def _cpu_backend_ops(trace: Trace, fw: Framework) -> str:
    """The library's own name of the one CPU backend (``devices.collectives.cpu_backend``) whose collectives the host
    recorded (``Framework.collective_backend``: ``gloo:recv`` -> Gloo), "" where none or several."""
    backends = {fw.collective_backend(trace.h.names[int(i)]) for i in np.unique(trace.h.name)} - {""}
    return cpu_backend(next(iter(backends))) if len(backends) == 1 else ""


def _os_calls_window(w: _Held) -> Kind | None:
    """The OS runtime's calls (``Trace.host_waits``: Nsight's ``-t osrt``) and nothing else -- no host event, no NVTX
    range, no CUDA record -- where the capture's options do not say CUDA was traced (:func:`_no_cuda_call_window`
    reads a window whose options say it was).  Why: such a window is not empty, and not known to be the program's
    start-up; it was read "No GPU kernel or copy in this capture (0 GPU planes, 0 events)" -- XPlane's word, and none
    of its thousands of calls counted -- and asked "was the GPU visible?" (h37-window69; the SURVEY's OS-runtime-only
    exports of Ther-LF/QuantPSelInvPlus, an ``nsys profile mpirun ...`` that followed no rank's CUDA).  What it shows is
    a profiler that recorded the processes' OS calls and no CUDA table: CUDA not traced, or none of the processes it
    followed made a CUDA call."""
    waits = w.trace.host_waits
    if w.names or w.cuda == "on" or waits is None or not len(waits):
        return None
    top = _most_named(waits.names, waits.name, 4)
    return Kind("no_gpu", "high", f"OS runtime calls only ({plural(len(waits), 'call')}: {top}), and no CUDA call, "
                                  "copy or kernel recorded; the export does not record whether CUDA tracing was on, "
                                  f"and {_cuda_tables_words(w.trace, 'tracing without CUDA (-t osrt)')} -- or a "
                                  "profiler that followed none of the processes that use the GPU")


def _no_cuda_call_window(w: _Held) -> Kind | None:
    """CUDA tracing on (the capture's options), and nothing at all recorded: the program had not reached its GPU
    work."""
    if w.cuda != "on":
        return None
    return Kind("no_gpu", "high", "CUDA tracing was on, but the window holds no CUDA call: the program had not "
                                  "reached its GPU work")


#: The readers of a window, the window each names (``Kind.window``; "" for the work on the CPU, which names none) and
#: whether it reads a window with kernels (whose kind read off them it may rename) or one without, asked in this
#: order among the readers of the window's sort; the first that recognises the window decides it.  One table, so
#: that the windows' order lives in one place (h37-tidy29: the loop's end with a backlog was asked apart).  The order
#: is the logic:
#:
#: * the loop's end with a backlog, the one reader of a window with kernels: asked after the kernels' kind (a serving
#:   engine's window is the engine's, never asked), it keeps that kind -- the kernels are the job's -- and says the
#:   window holds none of its steps.  Every reader after it reads a window without kernels.
#: * ``failed`` first: the program's own last words say why no kernel ran; what the window holds was cut short by it.
#: * ``unclosed`` after the program's own failure and WSL2's, before every reader that reads a missing call or kernel
#:   as the program's: where the session stopped before the program's CUDA trace was finalized, a missing record is
#:   the profiler's (cestwc's solver read "start-up only", its 20 steps run in the window; h37-nsys58).
#: * ``wsl2_untraced`` before every reader of a window without calls: under WSL2 the calls are missing because the
#:   platform's profiler traced none, and the readers after it take a missing call for one the program never made.
#: * the framework's matmuls on the CPU before the loop's end and the profiler's calls: the model's own ops, named,
#:   are the surest evidence of where the work ran (a loop's end holds no op of the model: the two never both hold).
#: * ``loop_ended`` before the profiler's calls: a window opened after the loop's last batch says nothing of where the
#:   model runs, though its only calls are the profiler's (ryienh/gnn-ops-benchmark's A100 window read "the work ran
#:   on the CPU ... move the model there", h37-survey55).
#: * ``profiler_only`` before the profiler's calls: where the window recorded the program's CPU side (its Python
#:   frames) and holds no op of it, "the code ran on the CPU" names code the window never ran (jjiwoo28/NonLinLF's
#:   A4000 trace, the profiler's exit starting and stopping its own trace; h37-hunt69).
#: * the profiler's calls before ``input_only`` and ``startup``: a window whose every call is the profiler's own
#:   (device queries, its exit sync) holds no call of the program -- no start-up of its own, no batch copied to a GPU.
#: * ``input_only`` before ``startup``: start-up does not repeat; batch after batch fetched without a kernel is a loop
#:   that runs no model, not start-up cut short (h37-survey53).
#: * the CPU loop after ``input_only`` and before ``startup``: marked steps that each call CUDA and queue nothing are
#:   a loop on the CPU, which start-up does not repeat (h37-probe42w); a loop of fetches is said as such first.
#: * ``copy_only`` after the CPU loop and before ``startup``: copies between host and GPU that keep its copy engines
#:   busy a real share of the window are GPU work -- a bandwidth test's, a staging program's --, not start-up, whose
#:   copies are a few small ones (a memset of 4,608 bytes, h37-probe43w); a loop of fetches says so first.
#: * ``teardown`` before ``startup``: calls that release what the program made (frees, streams and modules destroyed,
#:   the device reset) and none that make anything are the program's exit, after its loop -- start-up makes, it does
#:   not release (h37-probe43w: such a window read "start-up only", told to start where the steps run).
#: * ``startup`` last of the readers of a window with calls: any call left is start-up; every reader after it reads a
#:   window with no runtime call at all.
#: * ``frontend`` before the tracing readers: a serving engine's front-end runs no GPU work by design; its missing CUDA
#:   records say nothing of the profiler's settings.
#: * ``tracing_off`` before ``nvtx_only``: where the options (or CUDA seen from the program's side) say CUDA went
#:   untraced, the ranges are what tracing left, not what the program did.
#: * ``nvtx_only`` before ``input_on_cpu``: the user's ranges and no CUDA record is what tracing NVTX alone leaves
#:   (``-t nvtx``), so a missing call is no proof that a loop fetched its batches on the CPU.
#: * ``input_on_cpu`` before the work on the CPU: a loop of fetches with no model op ran no model; "move the model to
#:   the GPU" names one where none ran (h37-inputgen's ``cpu_loop``).
#: * ``collectives_only`` (a CPU backend's collectives alone, no op) after ``input_on_cpu`` and before the work on the
#:   CPU: its host events are a backend's, none the job's, so "the work ran on the CPU" of an unrecorded job's ops
#:   is not what it shows -- the collectives' library is (h37-gloo68).  It holds no fetch, so it and ``input_on_cpu``
#:   never both hold.
#: * ``ops_unrecorded`` just before the work on the CPU: compiled graphs that ran with none of their ops recorded say
#:   nothing of where their work ran (h37-hunt70d); every reader before it reads a window whose own events say it.
#: * ``kernels_unrecorded`` just before ``ops_unrecorded``: programs compiled for the GPU that ran with none of their
#:   kernels recorded are GPU work unrecorded; ``ops_unrecorded`` reads only the runs whose backend no event names.
#: * host events without a call (the work on the CPU) before ``no_cuda_call``, which is the window with nothing at all.
#: * ``os_calls_only`` after the work on the CPU and before ``no_cuda_call``: it reads a window with no host event at
#:   all, whose OS calls are its only record, and only where the options do not say CUDA was traced -- where they
#:   do, the program had not reached its GPU work (``no_cuda_call``), as before.
#: * ``collectives_only`` before ``loop_ended`` among the readers of a window with kernels: a file of the collectives
#:   alone holds no host event, the loop's end's marks are host events -- the two never both hold.
_WINDOW_READERS: tuple[tuple[Callable[[_Held], Kind | None], str, bool], ...] = (
    (_collectives_window, "collectives_only", True),
    (_backlog_window, "loop_ended", True),
    (_failed_window, "failed", False),
    (_wsl2_window, "wsl2_untraced", False),
    (_unclosed_window, "unclosed", False),
    (_cpu_ops_window, "", False),
    (_loop_ended_window, "loop_ended", False),
    (_profiler_only_window, "profiler_only", False),
    (_profiler_window, "", False),
    (_input_only_window, "input_only", False),
    (_cpu_loop_window, "", False),
    (_copy_only_window, "copy_only", False),
    (_teardown_window, "teardown", False),
    (_programs_no_kernel_window, "programs_no_kernel", False),
    (_startup_window, "startup", False),
    (_frontend_window, "frontend", False),
    (_tracing_off_window, "tracing_off", False),
    (_nvtx_window, "nvtx_only", False),
    (_input_on_cpu_window, "input_on_cpu", False),
    (_collectives_window, "collectives_only", False),
    (_kernels_unrecorded_window, "kernels_unrecorded", False),
    (_ops_unrecorded_window, "ops_unrecorded", False),
    (_cpu_window, "", False),
    (_os_calls_window, "os_calls_only", False),
    (_no_cuda_call_window, "no_cuda_call", False),
)


def _wsl2_untraced(trace: Trace) -> str:
    """Why a WSL2 window without a CUDA call is not a program that had not reached its GPU work, in words: the program
    loaded CUDA (the profiler's CUDA injection started in it) or ran to its output (its standard output, kept in the
    export), with the profiler's own complaints; "" where the capture was not made under WSL2 or shows neither.
    Only what the file shows: not that kernels ran, only that the profiler recorded none of the CUDA work."""
    p = trace.producer
    wsl2 = p.get("wsl2", "")
    ran = [*(["loaded CUDA (the profiler's CUDA injection started in it)"] if p.get("cuda_injected") else []),
           *(["called into CUDA (its call stacks, which the capture sampled, ran inside the CUDA driver's library)"]
             if p.get("cuda_in_stacks") else []),
           *([f"wrote its output (its standard output ends \"{p['program_output']}\")"] if p.get("program_output") else [])]
    if not wsl2 or not ran:
        return ""
    driver = p.get("nv_driver", "")
    said = f"; the profiler reported: \"{p['profiler_trouble']}\"" if p.get("profiler_trouble") else ""
    return (f"the program {' and '.join(ran)}, but the capture holds no CUDA call, kernel or copy: it ran under WSL2 "
            f"(Linux kernel {wsl2}{f', Windows driver {driver}' if driver else ''}), where the profiler traced none of "
            f"its CUDA work{said}")


def _cpu_compute_ops(trace: Trace, fw: Framework) -> str:
    """The framework's matmul/convolution ops of a window that launched no kernel (``Framework.tc_eligible_op``), as
    ``N matmul/convolution ops (`aten::linear` ×90, ...)``, when no CUDA call that queues GPU work
    (:func:`_queues_work`) ran while they did: a model on the GPU queues its work between its ops (launches, copies,
    fills), one on the CPU does not; "" otherwise.

    Why only those calls: a model on the CPU may still call CUDA while it runs -- timed with CUDA events
    (``cudaEventRecord`` / ``cudaEventSynchronize`` / ``cudaEventElapsedTime`` around each step), synchronised
    (``torch.cuda.synchronize()``), its device queried -- and none of those queues work.  Counting every call, a
    benchmark loop timing a CPU model with ``torch.cuda.Event`` (48 matmuls, 32 event calls, no kernel) read "start-up
    only ... skip start-up with the profiler's schedule", where its model never reached the GPU (h37-probe42w's
    ``torchtrace.write_event_timed_cpu_model``)."""
    if not len(trace.h):
        return ""
    mask = trace.h.name_mask(lambda n: fw.tc_eligible_op(op_type(n)))
    n = int(mask.sum())
    if not n:
        return ""
    calls = trace.h.start[trace.h.name_mask(_queues_work) | reads_off_a_gpu(trace, fw)]
    if ((calls >= trace.h.start[mask].min()) & (calls <= trace.h.end[mask].max())).any():
        return ""
    top = _most_named(trace.h.names, trace.h.name[mask], 3)
    return f"{n:,} matmul/convolution op{'s' if n != 1 else ''} ({top})"


#: The fewest marked steps that each call CUDA for a window without kernels to be the loop's, not its start-up.
_MIN_LOOP_STEPS = 2


def _idle_marked_steps(trace: Trace, fw: Framework) -> int:
    """The framework's step marks (``Framework.step_marker``: ``ProfilerStep#N``) each holding a runtime call, where
    they are :data:`_MIN_LOOP_STEPS` or more and no call of the window queues GPU work (:func:`_queues_work`) or reads a
    value off a GPU (:func:`reads_off_a_gpu`); 0 otherwise.

    Why: "start-up only" read every call of a window without kernels as start-up's, and its fix (skip start-up with
    the profiler's schedule) records the same window again.  A loop whose steps each sync or time themselves
    (``cudaStreamSynchronize``, CUDA events) while its work stays on the CPU repeats those calls step after step,
    which start-up does not (h37-probe42w's ``torchtrace.write_idle_synced_steps``)."""
    h = trace.h
    marks = np.flatnonzero(h.name_mask(fw.step_marker))
    if marks.size < _MIN_LOOP_STEPS or h.name_mask(_queues_work).any() or reads_off_a_gpu(trace, fw).any():
        return 0
    at = np.sort(h.start[h.name_mask(devices.is_runtime_call)].astype(np.int64))
    s, e = h.start[marks].astype(np.int64), h.end[marks].astype(np.int64)
    held = int((np.searchsorted(at, e, side="right") > np.searchsorted(at, s, side="left")).sum())
    return held if held >= _MIN_LOOP_STEPS else 0


def reads_off_a_gpu(trace: Trace, fw: Framework) -> np.ndarray:
    """Bool per host event: a runtime call made inside the framework's read of a scalar (``Framework.scalar_read_event``:
    ``aten::item`` / ``aten::_local_scalar_dense``).  A value read off the host's own memory calls no CUDA: a sync inside
    the read waited for the GPU that held the tensor, so the op before it ran there, whatever else the window lost --
    unlike a sync the program makes between its ops (``torch.cuda.synchronize()``, CUDA events timing a CPU model)."""
    h = trace.h
    out = np.zeros(len(h), dtype=bool)
    reads = np.flatnonzero(h.name_mask(fw.scalar_read_event))
    calls = np.flatnonzero(h.name_mask(devices.is_runtime_call))
    if not reads.size or not calls.size:
        return out
    for line in np.unique(h.line[reads]):
        c = calls[h.line[calls] == line]
        r = reads[h.line[reads] == line]
        out[c] = coverage(h.start[c], h.start[r], h.end[r])  # a thread's events nest: a call begun in a read is in it
    return out


def _queues_work(name: str) -> bool:
    """A runtime call that puts work on the GPU: a kernel's or a graph's launch, a copy or a fill -- any vendor's
    (``devices.is_work_call``: CUDA's ``cudaMemcpyAsync`` as HIP's ``hipMemcpyAsync``).

    Why: this asked ``devices.is_copy_call``, which knows HIP's copy calls only, so a CUDA loop whose steps each
    queued a 154 MB copy each way (pytorch/benchmark PR #1080's A100 traces) read "no call queued GPU work -- no
    launch, copy or fill: the loop ran on the CPU", its GPU 99.7% busy copying (h37-hunt71b)."""
    return devices.is_work_call(name)


#: The longest a profiler's exit sync may end before the window's end: the profiler stops right after it returns
#: (``torch.profiler``'s ``__exit__``: ``torch.cuda.synchronize()``, then the trace's end; 0.05 ms on a course's A10G).
_EXIT_SYNC_NS = 1_000_000


def _makes(name: str) -> bool:
    """A runtime call that makes something a tear-down never makes: memory allocated, a context, stream, event, handle
    or module created or loaded, or GPU work queued (:func:`_queues_work`)."""
    base = devices.call_base_name(name)
    return ((devices.is_alloc_call(name) and not devices.is_any_free_call(name)) or devices.is_init_call(name)
            or "Create" in base or _queues_work(name))


def _teardown(trace: Trace) -> str:
    """A window of the program's tear-down, in words: at least ``job.teardown_min_calls`` calls that release what the
    program made (``devices.is_teardown_call``: frees, streams, events, modules and communicators destroyed, the device
    reset), at least half its runtime calls, none that makes anything (:func:`_makes`) and no context created in it;
    "" otherwise.

    Why: a window without kernels was read as start-up whatever its calls did.  A window opened after the loop (an
    ``nsys --delay`` past the last step, a capture left open to the program's exit) holds the frees of ``del model``,
    ``cudaStreamDestroy``, ``cuModuleUnload``, NCCL's ``ncclCommDestroy`` and ``cudaDeviceReset``: it read "start-up
    only ... the window ended during start-up", with the fix to start the window where the steps run -- a window
    that started too late was told it ended too early (h37-probe43w: ``nsysexport.write_teardown_window``)."""
    h = trace.h
    calls = h.name_mask(devices.is_runtime_call)
    if not calls.any() or context_start(trace).calls.any():
        return ""
    released = h.name_mask(devices.is_teardown_call)
    if h.name_mask(_makes).any() or int((released & calls).sum()) < max(T("job.teardown_min_calls"),
                                                                          int(calls.sum()) / 2):
        return ""
    named = np.flatnonzero(released & ~calls)  # a library's own record of its API call (NCCL's NVTX range)
    libs = {}
    for i in named.tolist():
        libs[h.names[int(h.name[i])]] = libs.get(h.names[int(h.name[i])], 0) + 1
    beside = f"; {', '.join(f'`{n}` ×{k}' for n, k in libs.items())} beside them" if libs else ""
    return (f"the program's tear-down, after its loop: {_startup_calls(trace)}{beside}; "
            f"{int((released & calls).sum()):,} of the calls release what the program made (frees, streams, events "
            f"or modules destroyed, the device reset) and none makes anything or queues GPU work")


@dataclass(frozen=True)
class IdleRank:
    """A rank of the job read with this trace whose window holds no GPU work."""

    label: str  # as the report names it: "rank 2 (node0_4102)", "python3 (pid 149)"
    lines: np.ndarray  # its host lines
    #: why a process of a multi-process file is read as a rank, in words (what its ranges name); "" for a rank's own
    #: file (a node's ranks' files read as one: each is a rank by being one)
    evidence: str = ""
    #: its job rank where its file states one (``Trace.idle_ranks``: ``distributedInfo.rank``), -1 where not
    rank: int = -1


def idle_rank_list(trace: Trace, launches: list[np.ndarray]) -> tuple[IdleRank, ...]:
    """The ranks read with this trace whose windows hold no GPU work: each file of a node's ranks read as one that
    ran none (``Trace.idle_ranks``, its lines named ``"<worker>: ..."``), and each process of a multi-process file
    that ran none (``Trace.host_only_processes``) whose NVTX ranges are a rank's (:func:`_rank_evidence`);
    ``launches``: per GPU, each device event's host launch record."""
    h = trace.h
    out = [IdleRank(f"rank {rank} ({worker})" if rank >= 0 else worker,
                    np.array([i for i, n in enumerate(h.line_names) if n.startswith(f"{worker}: ")], np.int64),
                    rank=rank)
           for worker, rank in trace.idle_ranks.items()]
    if trace.host_only_processes and trace.ranges is not None and len(h):
        work = _launching_range_names(trace, launches)
        rline = h.line[trace.ranges.idx]
        for label, lines in trace.host_only_processes.items():
            said = _rank_evidence(trace, np.isin(rline, lines), work)
            if said:
                out.append(IdleRank(label, np.asarray(lines, np.int64), said))
    return tuple(out)


def _launching_range_names(trace: Trace, launches: list[np.ndarray]) -> dict[int, set[str]]:
    """Per GPU, the names of the ranges (``Trace.ranges``) that hold a launch of its work on the launching thread: the
    names under which its process does the job's work (its steps, forward, backward, ops, collectives)."""
    h, rg = trace.h, trace.ranges
    out: dict[int, set[str]] = {}
    for d, launch in zip(trace.devices, launches):
        at = launch[launch >= 0]
        names: set[str] = set()
        for ln in np.unique(h.line[at]).tolist():
            t = np.sort(h.start[at[h.line[at] == ln]])
            ri = rg.idx[h.line[rg.idx] == ln]
            holds = np.searchsorted(t, h.end[ri], "right") > np.searchsorted(t, h.start[ri], "left")
            names.update(h.names[int(n)] for n in np.unique(h.name[ri[holds]]).tolist())
        out[d.gpu] = names
    return out


def _rank_evidence(trace: Trace, mine: np.ndarray, work: dict[int, set[str]]) -> str:
    """Why a process that ran no GPU work is one of the job's ranks, in words (what its ranges are), from its ranges (``mine``: a mask of
    ``Trace.ranges``): ranges of the job's communication (NCCL's calls, a framework's collectives:
    ``nvtx.is_communication_range``), or at least ``job.rank_shared_work`` of the names under which a GPU's process
    launches its work (:func:`_launching_range_names`), their numbers aside (``nvtx.number_family``) -- it ran the
    same program; "" where neither: a launcher
    (``torchrun`` marks none of the job's work), a loader worker (a few of the ops, none of the steps).

    Why: such a process beside ranks that ran GPU work was said nowhere, so a rank whose CUDA side went unrecorded
    left the others' wait for it read as their transfer, and the session "Healthy" (h37-norank61 *Left* 1); every
    launcher looks the same by its calls (none), so the evidence is what its ranges name."""
    h, rg = trace.h, trace.ranges
    if not mine.any():
        return ""
    idx = rg.idx[mine]
    names = [h.names[int(n)] for n in h.name[idx].tolist()]
    comm: dict[str, int] = {}
    for n, d in zip(names, rg.domain[mine].tolist()):
        if nvtx.is_communication_range(n, rg.domains[int(d)]):
            comm[n] = comm.get(n, 0) + 1
    if comm:
        top = sorted(comm, key=lambda n: -comm[n])[:3]
        return ("the job's communication: " + ", ".join(f"`{n}` ×{comm[n]}" for n in top)
                + (", ..." if len(comm) > 3 else ""))
    # compared by family (``nvtx.number_family``): a rank that writes its rank or step number into its ranges
    # (``rank1/forward``, ``step_12``) names the same work as rank 0's ``rank0/forward``, ``step_3``
    own = {nvtx.number_family(n) for n in names}
    shared = [(len(fam & own) / len(fam), len(fam & own), len(fam), g)
              for g, fam in ((g, {nvtx.number_family(n) for n in w}) for g, w in work.items()) if fam]
    share, k, n, g = max(shared, default=(0.0, 0, 0, -1))
    if share < T("job.rank_shared_work"):
        return ""
    return f"{k} of the {n} range names GPU{g}'s process launches its work under, numbers aside: the same program"


def idle_ranks(trace: Trace, ranks: tuple[IdleRank, ...]) -> str:
    """The ranks read with this trace whose windows hold no GPU work (:func:`idle_rank_list`), each once, with what
    its window holds: its runtime calls, the costliest first, and what they were -- start-up (they make a context,
    memory or streams), tear-down (:func:`_teardown`'s calls), or none at all; "" where every rank's window ran GPU
    work.

    Why: a node's ranks are one host, so a rank whose window ended in its start-up while rank 0 ran its loop was
    said nowhere -- its calls folded into rank 0's host, and the job line said "the other ranks' traces are not here"
    of a trace that held them (h37-probe42w's *Left* 1-2; h37-probe43w: ``write_mixed_window_run(one_node=True)``)."""
    if not ranks or not len(trace.h):
        return ""
    return "; ".join(f"{r.label}'s window holds no GPU work{_as_rank(r)}: {_rank_calls(trace, calls)}"
                     for r, calls in _idle_rank_calls(trace, ranks))


def _as_rank(r: IdleRank) -> str:
    """Why ``r`` is read as a rank, as the clause after "holds no GPU work"; "" for a rank's own file."""
    return f", though its NVTX ranges are a rank's ({r.evidence})" if r.evidence else ""


def _idle_rank_calls(trace: Trace, ranks: tuple[IdleRank, ...]) -> list[tuple[IdleRank, np.ndarray]]:
    """Each idle rank with a mask of its runtime calls."""
    h = trace.h
    calls = h.name_mask(devices.is_runtime_call)
    return [(r, np.isin(h.line, r.lines) & calls) for r in ranks]


def unrecorded_rank_labels(trace: Trace, ranks: tuple[IdleRank, ...]) -> tuple[str, ...]:
    """The idle ranks (:func:`idle_rank_list`) whose GPU side the capture did not record, by their calls' evidence:
    no runtime call at all (its trace written with the GPU's activity off), or launches that queued kernels none of
    which was recorded (its records lost) -- never a rank whose calls only started up (a context, memory, streams)
    or tore down: that window was recorded, and ended before its GPU work or after it.

    Why: the verdict and the report's ``healthy`` read these ranks -- a session holding one is incomplete, so no
    "Healthy" of it (h37-norank61 *Left* 4) -- while a node's rank that only started up beside a loop keeps its
    rank 0's verdict (h37-probe43w's ``write_mixed_window_run(one_node=True)``)."""
    if not ranks or not len(trace.h):
        return ()
    return tuple(r.label for r, calls in _idle_rank_calls(trace, ranks) if _rank_record(trace, calls) in ("none", "lost"))


def _rank_record(trace: Trace, calls: np.ndarray) -> str:
    """What an idle rank's runtime calls (a mask of the trace's host events) say of its window: "none" (no call: its
    GPU side was not recorded, or it used no GPU), "start-up", "tear-down", "lost" (launches with no start-up or
    tear-down word: kernels queued, none recorded), or "" (calls of none of these)."""
    h = trace.h
    idx = np.flatnonzero(calls)
    if not idx.size:
        return "none"
    names = [h.names[int(h.name[i])] for i in idx.tolist()]
    if any(_makes(n) for n in names) and not any(_queues_work(n) for n in names):
        return "start-up"
    if all(devices.is_teardown_call(n) or devices.is_sync_call(n) for n in names):
        return "tear-down"
    return "lost" if any(devices.is_launch_call(n) or devices.is_graph_launch(n) for n in names) else ""


def idle_rank_labels(ranks: tuple[IdleRank, ...]) -> tuple[str, ...]:
    """The ranks :func:`idle_ranks` says, each as the report names it ("rank 2 (node0_4102)", the worker alone where
    its file states no rank, "python3 (pid 149)" for a process of a multi-process file): the job view's list of the
    job's ranks whose GPU work the session holds no record of (``metrics.job.JobView.unrecorded``), which its rules
    read -- never the words."""
    return tuple(r.label for r in ranks)


def idle_rank_numbers(ranks: tuple[IdleRank, ...]) -> tuple[int, ...]:
    """The job ranks of :func:`idle_rank_labels`' ranks, in its order, -1 where the file states none (a process of a
    multi-process file, a rank's file without ``distributedInfo``): which process groups they are in
    (``metrics.job.JobView.unrecorded_ranks``)."""
    return tuple(r.rank for r in ranks)


def _rank_calls(trace: Trace, calls: np.ndarray) -> str:
    """One idle rank's runtime calls (``calls``: a mask of the trace's host events) in words: how many, the three
    costliest with their time, and whether they were start-up, tear-down or neither."""
    h = trace.h
    idx = np.flatnonzero(calls)
    if not idx.size:  # no call of its runtime recorded: its GPU side was never traced (or it used no GPU)
        return ("no GPU runtime call, kernel or copy: its GPU side was not recorded, or the process used no GPU"
                + _record_fix(trace, "cuda_unrecorded"))
    dur = (h.end[idx] - h.start[idx]).astype(np.int64)
    names = [h.names[int(h.name[i])] for i in idx.tolist()]
    total: dict[str, int] = {}
    for n, d in zip(names, dur.tolist()):
        total[n] = total.get(n, 0) + d
    top = sorted(total, key=lambda n: -total[n])[:3]
    listed = ", ".join(f"`{n}` {ms(total[n] / 1e9)}" for n in top) + (", ..." if len(total) > 3 else "")
    record = _rank_record(trace, calls)
    what = f"-- {record}" if record in ("start-up", "tear-down") else ""
    vendor = devices.vendor_of_calls(set(names))
    runtime = vendor.TERMS["runtime"]  # the vendor's word for its runtime's calls
    launched = sum(1 for n in names if devices.is_launch_call(n) or devices.is_graph_launch(n))
    if record == "lost":  # it queued kernels and not one ran on the record: its GPU's records were lost
        what = (f"-- its {plural(launched, 'launch', 'launches')} queued kernels, none recorded: its GPU's records "
                f"were lost{vendor.words(_record_fix(trace, 'lost_records'))}")
    return f"{plural(idx.size, f'{runtime} call')} ({listed}), no kernel {what}".rstrip()


def _record_fix(trace: Trace, key: str) -> str:
    """How to record a rank's GPU side the window holds no record of, as the capture format has it in one clause
    (``Format.window_fix_clauses``: Kineto's "record the GPU's side: put ProfilerActivity.CUDA among the profiler's
    activities"), after "; " -- the clause a rank's words end with; "" where the format has none.  Why: a rank said
    only to hold "no GPU work" beside ranks that ran it left the reader to guess whether its process used no GPU or
    its trace missed it, and how to capture it (``norank61``)."""
    try:
        clause = formats.get(trace.format).window_fix_clauses.get(key) if trace.format else None
    except ValueError:
        return ""
    return f"; {clause}" if clause else ""


def _profiler_calls_only(trace: Trace) -> str:
    """The runtime calls of a window without kernels, in words, where every one is the profiler's own: device queries
    (``devices.QUERY_CALLS``: the count and properties a profiler reads as it starts) and one whole-device sync
    (``devices.DEVICE_SYNC_CALLS``) that ends at the window's end -- the sync ``torch.profiler`` makes as it stops;
    "" otherwise.

    Why: such a window is no start-up cut short.  Its sync, not the program, created the CUDA context (115.9 ms of
    the 154 ms window on a course's A10G, ``baseline_trace.json``, its model and input left on the CPU): no call the
    profiled code made touched the GPU, so that code ran on the CPU.  A GPU program's first work calls the GPU
    (allocates, copies, sets a stream) before the profiler stops.

    Which call created the context is ``job.phase.context_start``'s answer where the window records the runtime's own
    start on the sync's thread (as :func:`_startup_calls` asks it): the runtime's next call that is no device query.
    Where it records none -- torch.profiler, whose exit sync this is, records no driver call but the launches, so no
    kept Kineto trace holds the start -- the sync's own evidence (:func:`_exit_sync_created`)."""
    calls = _profiler_calls(trace)
    return f"{calls}: no call of the profiled code touched the GPU, so it ran on the CPU" if calls else ""


def _profiler_calls(trace: Trace) -> str:
    """The profiler's own calls of a window where every runtime call is its own (:func:`_exit_sync`), in words -- the
    count, the exit sync and how near the window's end it ends; "" otherwise.  What they say of the profiled code is
    the caller's: it ran on the CPU (:func:`_profiler_calls_only`), or it ran nothing (:func:`_profiler_only`)."""
    h = trace.h
    last = _exit_sync(trace)
    if last < 0:
        return ""
    left = trace.window_end_ps() - int(h.end[last])
    took = (int(h.end[last]) - int(h.start[last])) / 1e9
    return (f"the profiler's calls only: {_startup_calls(trace)}; the last, `{h.names[int(h.name[last])]}` "
            f"({ms(took)}), ends {ms(left / 1e9)} before the window's end -- the profiler's own sync as it stops"
            f"{', which created the context' if _exit_sync_created(trace, int(last)) else ''}"
            f"{' -- and the others only read the device' if int(h.name_mask(devices.is_runtime_call).sum()) > 1 else ''}")


def _profiler_only(trace: Trace, fw: Framework) -> str:
    """A window that recorded the program's CPU side and holds none of its work, in words: its Python frames were
    recorded (``Trace.spans``: torch.profiler's Python tracer runs only with CPU activity on), its only host events are
    the profiler's own calls (:func:`_profiler_calls`) -- no op, annotation or step mark; "" otherwise.

    Why: :func:`_profiler_calls_only` reads "no call of the profiled code touched the GPU, so it ran on the CPU" --
    right where the window did not record the CPU side (an A10G course capture with CUDA activity alone, its model left
    on the CPU), but where it did and no op is in it, the profiled code ran nothing while the trace was on, on the GPU
    or the CPU.  jjiwoo28/NonLinLF's ``trace_output.json`` (RTX A4000, 1.06 ms, ``Op count: 0``): its 64 Python frames
    are the profiler's own exit (``__exit__`` -> ``stop`` -> ``start_trace`` then ``stop_trace``: a schedule whose
    recording the loop never reached), its one call the exit sync; it read "the work ran on the CPU ... move the model
    and its inputs there" (h37-hunt69)."""
    h, sp = trace.h, trace.spans
    calls = _profiler_calls(trace)
    if not calls or sp is None or not len(sp) or (~h.name_mask(devices.is_runtime_call)).any():
        return ""
    late = ("; its trace began inside the profiler's own exit (`__exit__` -> `start_trace` among its frames): with a "
            "schedule, the loop never reached its recording steps" if _started_at_exit(trace, fw) else "")
    return (f"the profiler's own work only: the window recorded the CPU side ({plural(len(sp), 'Python frame')}) "
            f"and holds no op, annotation or step mark of the program; {calls}: the profiled block ran none of the "
            f"program's work while the trace was on{late}")


def _started_at_exit(trace: Trace, fw: Framework) -> bool:
    """Whether the window's Python frames hold the profiler starting its trace inside its own exit
    (``Framework.profiler_start_frame`` within ``profiler_exit_frame``): torch.profiler with a schedule, closed before
    the loop's ``prof.step()`` calls reached the recording steps, starts and stops the trace as it exits -- a window
    of nothing but its own exit (jjiwoo28/NonLinLF's A4000 trace; h37-hunt69)."""
    sp = trace.spans
    if sp is None or not len(sp):
        return False
    names = trace.h.names
    ids, at = np.unique(sp.name, return_inverse=True)  # each frame name asked once, not once a frame
    said = [names[int(n)] for n in ids.tolist()]
    starts = np.flatnonzero(np.array([fw.profiler_start_frame(n) for n in said], bool)[at.reshape(-1)])
    exits = np.flatnonzero(np.array([fw.profiler_exit_frame(n) for n in said], bool)[at.reshape(-1)])
    return any(int(sp.start[e]) <= int(sp.start[i]) and int(sp.end[i]) <= int(sp.end[e])
               for i in starts.tolist() for e in exits.tolist())


def _exit_sync(trace: Trace) -> int:
    """The host event of the profiler's exit sync where every runtime call of the window is the profiler's own: device
    queries (``devices.QUERY_CALLS``) or the runtime's initialisation, and one whole-device sync
    (``devices.DEVICE_SYNC_CALLS``), the last call, ending at most :data:`_EXIT_SYNC_NS` before the window's end --
    ``torch.profiler``'s ``__exit__`` syncs, then stops; -1 otherwise (a call of the program's, or time after the
    sync: the sync was the program's)."""
    h = trace.h
    idx = np.flatnonzero(h.name_mask(devices.is_runtime_call)) if len(h) else np.zeros(0, np.int64)
    end = trace.window_end_ps()
    if not idx.size or end is None or not devices.DEVICE_SYNC_CALLS:
        return -1
    names = [h.names[int(i)] for i in h.name[idx].tolist()]
    sync = np.asarray([n.startswith(devices.DEVICE_SYNC_CALLS) for n in names], bool)
    # the runtime's own initialisation is no call of the program's
    query = np.asarray([n.startswith(devices.QUERY_CALLS) or devices.is_runtime_init(n) for n in names], bool)
    if not sync.any() or not (sync | query).all():
        return -1
    last = int(idx[sync][int(np.argmax(h.end[idx[sync]]))])
    left = end - int(h.end[last])
    if int(h.start[last]) < int(h.start[idx].max()) or not 0 <= left <= _EXIT_SYNC_NS * 1000:
        return -1
    return last


def _loop_ended(trace: Trace, fw: Framework) -> str:
    """The end of a loop, in words, where a window without kernels holds the framework's step marks (``prof.step()``'s
    ``ProfilerStep#N``), exactly one batch fetch (``Framework.input_event``) inside them, and no other op but ones that
    only allocate (``Framework.factory_op``: the profiler's own handles); "" otherwise.

    Why: a fetch that returns a batch is followed by the loop's body -- the model's ops, on the GPU or the CPU --
    before the step ends; a step that fetched and then ended, with nothing after, ends the loop: that fetch found the
    input exhausted.  The window opened after the last batch (a schedule whose wait and warmup steps used up the
    loader's batches), so it holds none of the job's work and says nothing of where the model runs.  A GNN benchmark on
    an A100 (ryienh/gnn-ops-benchmark: ``schedule(wait=1, warmup=1, active=3)`` over a loader of 2 batches, its model
    and batches moved to the GPU) read "the work ran on the CPU ... move the model and its inputs there"
    (h37-survey55)."""
    h = trace.h
    if not len(h):
        return ""
    marks, fetch = h.name_mask(fw.step_marker), h.name_mask(fw.input_event)
    other = ~(marks | fetch | h.name_mask(devices.is_runtime_call) | h.name_mask(fw.factory_op))
    if not marks.any() or int(fetch.sum()) != 1 or other.any():
        return ""
    i = int(np.flatnonzero(fetch)[0])
    if not (h.start[marks].min() <= h.start[i] and h.end[i] <= h.end[marks].max()):
        return ""  # a fetch outside the marked steps is not the loop's turn
    steps = [h.names[int(k)] for k in np.unique(h.name[marks])]
    took = int(h.end[i] - h.start[i]) / 1e9  # ms
    return (f"the loop's end only: {plural(len(steps), 'marked step')} (`{_short(steps[0], 40)}`"
            f"{', ...' if len(steps) > 1 else ''}) hold{'s' if len(steps) == 1 else ''} one batch fetch "
            f"(`{_short(h.names[int(h.name[i])], 60)}`, {ms(took)}) and no op of the model after it -- the fetch that "
            f"found the input exhausted, which ends the loop: the window opened after the loop's last batch; no kernel "
            f"was launched")


def _queued_before(trace: Trace, fw: Framework) -> str:
    """The GPU's work of a window whose every runtime call is the profiler's own (:func:`_exit_sync`: no launch, no
    copy, no call of the program's), in words, where all of it was queued before the window: every device event
    carries a correlation id that no host call in the window carries, and ends by the end of the profiler's exit sync,
    which waited for it; "" otherwise (a device event without an id to look up, or ending after the sync: what the
    window shows of it is not the GPU draining its queue).

    Why this is the accounting, not a guess: a GPU runs only what was launched to it, and the window launched nothing
    (CUPTI gives a launch and its work one id; none of these ids is on a call of the window).  So the work ran off a
    queue filled before the window opened -- the previous step's launches, which the host issued faster than the GPU
    ran them -- and the profiler's exit sync is where that queue drained.  Where it starts does not matter: the queue
    runs from the window's first instant, during the step's fetch as after it (``thetagpu11_3887901``: its first two
    kernels ran while the exhausted fetch did)."""
    h, last = trace.h, _exit_sync(trace)
    if last < 0 or not any(len(d) for d in trace.devices):
        return ""
    until = int(h.end[last])
    for d, launch in zip(trace.devices, device_launches(h, trace.devices)):
        if len(d) and (not queued_before(d, launch).all() or int(d.end.max()) > until):
            return ""
    work = [((d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE), d) for d in trace.devices if len(d)]
    kernels = sum(int(k.sum()) for k, _ in work)
    other = sum(int((~k).sum()) for k, _ in work)
    busy = sum(int((d.end[k] - d.start[k]).sum()) for k, d in work) / 1e9  # ms
    rest = f" and {other:,} cop{'ies' if other != 1 else 'y'} or memset{'s' if other != 1 else ''}" if other else ""
    took = (int(h.end[last]) - int(h.start[last])) / 1e9
    one = kernels + other == 1
    return (f"the GPU ran {plural(kernels, 'kernel')} ({ms(busy)}){rest} queued before the window: no call in the "
            f"window carries {'its correlation id' if one else 'their correlation ids'}, and the profiler's exit sync "
            f"(`{h.names[int(h.name[last])]}`, {ms(took)}) waited for {'it' if one else 'them'} -- the loop's last "
            f"step's backlog, not a step of the window")


def _exit_sync_created(trace: Trace, last: int) -> bool:
    """Whether the profiler's exit sync (host event ``last``) created the context: ``job.phase.context_start``'s answer
    where the window records the runtime's start on its thread; else its length, :data:`_CONTEXT_NS` or more.

    Why the length where the start is not recorded: every call before the sync is a device query, which needs no
    context, so the sync is the first call that needs one, and a whole-device sync on a GPU the window gave no work
    returns in microseconds unless it creates the context.  The one other cause -- work the process queued before the
    window, still running when the profiler stops -- the trace cannot show (its GPU records start with the window):
    it needs a program that launched GPU work and then ran a whole profiled block on the CPU."""
    h = trace.h
    started = context_start(trace)
    if any(int(h.line[first]) == int(h.line[last]) for first, _ in started.starts):
        return bool(started.calls[last])
    return (int(h.end[last]) - int(h.start[last])) / 1000 >= _CONTEXT_NS


def _loop_steps(trace: Trace, fw: Framework) -> int:
    """The steps a loop ran before its window's step that found the input exhausted: that step's number on its mark
    (``Framework.step_number``; prof.step() counts from 0, so ``ProfilerStep#2`` ran after 2 steps), 0 where the marks
    number none.  It counts the profiler's steps, which are the loop's where the profiler steps once per batch inside
    it, as its advice has it: the schedule proposed to the job must fit them (h37-schedfit)."""
    h = trace.h
    numbers = [fw.step_number(h.names[int(k)]) for k in np.unique(h.name[h.name_mask(fw.step_marker)])]
    return max(max(numbers, default=0), 0)


#: The fewest batches a window without kernels must fetch to be a loop over its input, not start-up: start-up fetches
#: the first batch once before the first step's launches; a second fetch with still no launch is the loop's next turn.
_MIN_INPUT_BATCHES = 2


def _input_only(trace: Trace, fw: Framework) -> str:
    """The input pipeline's work of a window without kernels, in words (:func:`_fetches`), with the copies of its
    batches to the GPU; "" where it fetched fewer than :data:`_MIN_INPUT_BATCHES` batches or ran a model.

    Why: such a window is no start-up cut short.  A SlimUNETR data-loading check (slpkite108/DET_SEG
    ``dataloader_trace.json``, its model call commented out) fetched 12 batches on an RTX 4090 and copied each to the
    GPU (24 copies, 2.4 GB, each waited for by ``cudaStreamSynchronize``), and no kernel ran: read as "start-up only",
    it was told to skip start-up with the profiler's schedule, where its loop never runs the model (h37-survey53)."""
    words = _fetches(trace, fw)
    if not words:
        return ""
    copied = _device_events(trace, _COPY_KINDS)
    if any(c for _, c, _ in copied):
        words += ", then copied to the GPU (" + ", ".join(
            f"{plural(c, 'copy', 'copies')}, {gb(b) + ' in all' if b >= 0 else _bytes_words(b, c)}, on GPU {g}"
            for g, c, b in copied if c) + ")"
    return words + "; no kernel was launched: the profiled loop fetches batches and runs no model on them"


def _fetches(trace: Trace, fw: Framework) -> str:
    """The batches the framework's input events (``Framework.input_event``: the DataLoader's ``__next__``) fetched,
    in words -- "the input pipeline only: 8 batch fetches (`...`, 1.20 ms inside them)" -- where they are
    :data:`_MIN_INPUT_BATCHES` or more and no model ran: no matmul or convolution op, and no host event of the
    framework's that names a training step or an inference entry point (:func:`host_kind`), and no compiled graph
    that ran beyond waiting for its batch (:func:`_graph_ran`); "" otherwise.

    Why both: a TensorFlow training loop on the CPU (``demo_logs/real_tf_cpu_custom``: its iterator's fetches, its
    ``gradient_tape/...`` ops) names no op the matmul test knows, yet its host events say a model trained."""
    h = trace.h
    mask = _fetch_mask(trace, fw)
    n = int(mask.sum())
    if n < _MIN_INPUT_BATCHES or h.name_mask(lambda name: fw.tc_eligible_op(op_type(name))).any():
        return ""  # a matmul or convolution without a kernel ran a model, on the CPU: not a loop without one
    if host_kind(trace, fw) is not None:
        return ""  # the framework's own events name the model's work: a model ran
    if _graph_ran(trace, fw):
        return ""  # a compiled graph ran work beyond waiting for its batch: not a loop that only fetched
    waited = int((h.end[mask] - h.start[mask]).astype(np.int64).sum()) / 1e9  # ms
    name = h.names[int(h.name[np.flatnonzero(mask)[0]])]
    return (f"the input pipeline only: {plural(n, 'batch fetch', 'batch fetches')} (`{_short(name, 60)}`, "
            f"{ms(waited)} inside them)")


def _fetch_mask(trace: Trace, fw: Framework) -> np.ndarray:
    """The host events that fetch a batch: the framework's own input events (``Framework.input_event``: the
    DataLoader's ``__next__``, tf.data's ``IteratorGetNextOp::DoCompute``); where it records fewer than
    :data:`_MIN_INPUT_BATCHES`, the program's own ranges whose name says they fetch one (``Framework.input_range`` of
    ``user_ranges.program_ranges``: ``jax.profiler.TraceAnnotation('load_batch')``, an NVTX ``get_batch``).

    Why: JAX records no input event of its own -- a loop's fetches are its own ranges, or none -- so a
    ``jax.profiler.trace`` around a loop that only loaded batches read "the work ran on the CPU ... move the model and
    its inputs there" and "check that JAX sees the GPU", where the same loop under torch.profiler or TensorFlow's
    profiler read "the input pipeline only" (h37-probe42w's ``jaxcapture.write_input_only_window``).  In a window
    without kernels no range can hold a step's launches, so a batch-named range is the fetch it names."""
    h = trace.h
    own = h.name_mask(fw.input_event)
    if int(own.sum()) >= _MIN_INPUT_BATCHES or fw.input_range is never:
        return own
    idx = user_ranges.program_ranges(trace, fw)
    idx = idx[h.per_name(fw.input_range)[h.name[idx]]] if idx.size else idx
    if idx.size < _MIN_INPUT_BATCHES:
        return own
    ranged = np.zeros(len(h), dtype=bool)
    ranged[idx] = True
    return ranged


def _input_on_cpu(trace: Trace, fw: Framework) -> str:
    """A window with no GPU runtime call whose loop only fetched batches (:func:`_fetches`), in words; "" otherwise.

    Why: "the work ran on the CPU", with the fix "move the model and every input of the step to the GPU", named a
    model where none ran -- the trace's own evidence is a loop of batch fetches and no matmul or convolution op: an
    input-only loop whose batches stayed on the CPU (h37-inputgen's generated ``cpu_loop``).  What to fix is the
    profiled block (the model's step inside it), not where a model lives.  Whether CUDA activity was recorded the
    window cannot say (a ``ProfilerActivity.CPU`` capture records no call either), so the words say what was not
    recorded, not that the GPU was unused."""
    words = _fetches(trace, fw)
    return (f"{words}, and no model op (no matmul or convolution) and no GPU runtime call recorded: the loop fetched "
            f"its batches on the CPU and ran no model on them" if words else "")


#: The device events that move bytes (the copies a window of input loading holds).
_COPY_KINDS = (devices.KIND_H2D, devices.KIND_D2H, devices.KIND_D2D, devices.KIND_OTHER_COPY)


def _device_events(trace: Trace, kinds: tuple[int, ...] | None = None) -> list[tuple[int, int, int]]:
    """(GPU, events, bytes moved) per GPU with any device event in a window without kernels: its events of ``kinds``
    (all where None) and the bytes of all its events, -1 where no event records its size.  Why one count: the
    input-only and the start-up words each counted a GPU's copies in their own loop (h37-review26's list).

    Why -1: a format may time copies without their sizes -- rocprofv3's CSV copy trace (``memory_copy_trace.csv``:
    ``Kind``, ``Direction``, ``Stream_Id``, ``Source_Agent_Id``, ``Destination_Agent_Id``, ``Correlation_Id`` and the
    timestamps, no size column; rocprofiler-sdk ``source/lib/output/generateCSV.cpp``) -- and two uploads of 64 MiB
    each read "(0 bytes)" (h37-probe44m): a size the file does not hold is unknown, not zero."""
    out = []
    for d in trace.devices:
        if not len(d):
            continue
        sizes = d.mem_bytes
        known = sizes >= 0
        out.append((d.gpu, len(d) if kinds is None else int(np.isin(d.kind, kinds).sum()),
                    int(sizes[known].sum()) if known.any() else -1))
    return out


def _bytes_words(nbytes: int, n: int) -> str:
    """A GPU's copy or memset events' bytes in words: "1,024 bytes", or that the file records none of their sizes."""
    if nbytes >= 0:
        return f"{nbytes:,} bytes"
    return "its size not recorded" if n == 1 else "their sizes not recorded"


#: How a copy's direction reads in a copy-only window's words.
_COPY_WAYS = {devices.KIND_H2D: "host to device", devices.KIND_D2H: "device to host",
              devices.KIND_D2D: "device to device", devices.KIND_OTHER_COPY: "of unstated direction"}


def _window_ps(trace: Trace) -> tuple[int, int]:
    """The window's (start, end), ps: the profiler's own where the file records one, else the first host or device
    event's start and the last one's end."""
    start, end = trace.window_start_ps(), trace.window_end_ps()
    if end is None:
        end = max([int(d.end.max()) for d in trace.devices if len(d)] + ([int(trace.h.end.max())] if len(trace.h)
                                                                         else []), default=start)
    return int(start), int(end)


def _copies_only(trace: Trace, fw: Framework | None = None) -> tuple[str, int]:
    """A window without kernels whose GPU copied between host and device for a real share of it
    (``job.copy_only_share``), one copy made again and again (:func:`_repeated`), in words: per GPU, how busy its
    copies kept it, by direction the copies and bytes, and whether the host side was pageable or pinned memory --
    and how many were pageable; ("", 0) otherwise.

    Why: copies are GPU work.  A host-device bandwidth test, or a staging program that moves batches to the GPU and
    back, queues copies and no kernel; read as a window of calls without kernels, its 200 copies busying the copy
    engine 44% of the window were "start-up only ... no GPU work", with the fix to record where the steps run
    (h37-probe43w: ``nsysexport.write_pageable_copy_loop(kernels=0)``, ``torchtrace.write_copy_only_window``).  The
    share is of the window from the GPU's first copy on: a context created before it (400 ms of a 484 ms window) is
    start-up's, not the copies'.  A start-up's copies are a few small ones, far under the share."""
    start, end = _window_ps(trace)
    parts, pageable = [], 0
    staged = _staged_words(trace, fw)
    for d in trace.devices:
        copy = np.isin(d.kind, _COPY_KINDS) if len(d) else np.zeros(0, bool)
        if not _repeated(d.kind[copy], d.mem_bytes[copy]):
            continue
        s, e = union_intervals(d.start[copy], d.end[copy])
        span = end - min(int(s[0]), end)  # from the first copy on: a context made before it is start-up's, not theirs
        busy = int((e - s).sum()) / span if span > 0 else 0.0
        if busy < T("job.copy_only_share"):
            continue
        parts.append(_gpu_copies(d, copy, busy, staged))
        pageable += int((devices.event_host_memory(d.names, d.name, d.mem_host)[copy] == 1).sum())
    if not parts:
        return "", 0
    return f"copies only, no kernel: {'; '.join(parts)} -- GPU work, not start-up", pageable


def _repeated(kind: np.ndarray, nbytes: np.ndarray) -> bool:
    """Whether one copy -- its direction and size -- was made ``job.copy_only_repeats`` times or more: a copy loop's
    (a bandwidth test's, a staging loop's), not one batch's upload before the first kernel (start-up cut short:
    ``randjobs.input_window``'s one fetch and its two tensors)."""
    if not kind.size:
        return False
    _, counts = np.unique(np.stack([kind.astype(np.int64), nbytes.astype(np.int64)]), axis=1, return_counts=True)
    return int(counts.max()) >= T("job.copy_only_repeats")


def _staged_words(trace: Trace, fw: Framework | None) -> str:
    """The framework runtime's own host copies staging the program's arrays through its pinned buffer, in words
    (``Framework.upload_staging_event``: JAX's ``H2D Dispatch``; ``read_staging_event``: ``D2H Copy From Staging
    Buffer``), "`H2D Dispatch` ×8 in, `D2H Copy From Staging Buffer` ×8 out"; "" where none ran."""
    if fw is None or not len(trace.h):
        return ""
    h = trace.h
    parts = []
    for pred, way in ((fw.upload_staging_event, "in"), (fw.read_staging_event, "out")):
        hit = np.flatnonzero(h.name_mask(pred))
        if hit.size:
            counts: dict[str, int] = {}
            for i in hit.tolist():
                counts[h.names[int(h.name[i])]] = counts.get(h.names[int(h.name[i])], 0) + 1
            parts += [f"`{n}` ×{k:,} {way}" for n, k in counts.items()]
    return fw.label("copies:staged", staged=", ".join(parts)) if parts else ""


def _gpu_copies(d, copy: np.ndarray, busy: float, staged: str = "") -> str:  # noqa: ANN001 - device events
    """One GPU's copies in words: its copies' busy share of the window from its first copy on, by direction their
    count and bytes, and the host memory they copied from or to (:func:`devices.event_host_memory`).  ``staged``: the
    framework's staging words (:func:`_staged_words`), said instead of "host memory pinned" -- the DMA's pinned side
    was the runtime's staging buffer, not the program's arrays (h37-probe43e *Left* 2, h37-probe44v: a JAX copy loop
    of NumPy arrays read "host memory pinned")."""
    kind, nbytes = d.kind[copy], np.maximum(d.mem_bytes[copy].astype(np.int64), 0)
    ways = []
    for k, way in _COPY_WAYS.items():
        sel = kind == k
        if sel.any():
            moved = f", {gb(float(nbytes[sel].sum()))}" if nbytes[sel].sum() else ""
            ways.append(f"{int(sel.sum()):,} {way}{moved}")
    host = devices.event_host_memory(d.names, d.name, d.mem_host)[copy]
    host = host[(kind == devices.KIND_H2D) | (kind == devices.KIND_D2H)]
    pinned = f"; {staged}" if staged else "; host memory pinned"
    memory = ("" if not host.size else "; host memory pageable" if (host == 1).all() else pinned
              if (host == 0).all() else f"; {int((host == 1).sum()):,} of them from or to pageable host memory"
              if (host == 1).any() else "")
    n = plural(int(copy.sum()), "copy", "copies")
    return (f"GPU {d.gpu}'s copies kept it busy {pct(busy)} of the window from its first copy on "
            f"({n}: {', '.join(ways)}{memory})")


def _startup_calls(trace: Trace) -> str:
    """The runtime calls of a window without kernels, in words: the most time first, the context's creation named,
    then the copies and memsets that ran (``cudaFree ×1 (118.6 ms: the CUDA context's creation), ...``).  The words
    are the vendor's whose runtime made the calls: the window names no GPU to ask.

    Which call created the context is ``job.phase.context_start``'s answer (the runtime's own initialisation in the
    window, then its thread's next call that is no device query, long, the GPU idle), not the longest call's: a window cut from a running
    process holds no creation, and its longest call may be one whose time grows with its bytes -- a 267 ms
    ``cudaHostAlloc`` of 134 MB among 17 page-locking siblings of 16-54 ms on an RTX 4090, its context made before the
    window.  Asked here, not handed down: only a window without kernels is worded so, and it holds few calls."""
    h = trace.h
    mask = h.name_mask(devices.is_runtime_call)
    idx = np.flatnonzero(mask)
    terms = devices.vendor_of_calls(h.names[int(i)] for i in np.unique(h.name[idx])).TERMS
    dur = (h.end[idx] - h.start[idx]).astype(np.int64) // 1000  # ns
    total = np.bincount(h.name[idx].astype(np.int64, copy=False), weights=dur, minlength=len(h.names))
    count = np.bincount(h.name[idx].astype(np.int64, copy=False), minlength=len(h.names))
    created = {int(h.name[i]) for i in np.flatnonzero(context_start(trace).calls).tolist()}
    order = [int(i) for i in np.argsort(-total, kind="stable") if count[i]]
    parts = []
    for i in order[:6]:
        what = f"`{h.names[i]}` ×{int(count[i])} ({ms(total[i] / 1e6)}"
        what += f": {terms['context_creation']}, paid by the first call that needs one)" if i in created else ")"
        parts.append(what)
    if len(order) > 6:
        parts.append(f"{len(order) - 6} more")
    text = f"{int(idx.size):,} {terms['runtime']} call{'s' if idx.size != 1 else ''}: {', '.join(parts)}"
    ran = _device_events(trace)
    if ran:
        text += "; " + ", ".join(f"{n} copy or memset event{'s' if n != 1 else ''} ({_bytes_words(b, n)}) on GPU {g}"
                                 for g, n, b in ran)
    return text


def _user_ranges(trace: Trace) -> str:
    """The user's NVTX ranges of a trace (not the framework's ops), as ``N ranges: `a`, `b` ...``; "" for none."""
    user = user_ranges.marked_ranges(trace.ranges)
    if not user.size:
        return ""
    ids, counts = np.unique(trace.h.name[user], return_counts=True)
    top = [trace.h.names[int(i)] for i in ids[np.argsort(-counts, kind="stable")][:4]]
    return f"{int(user.size):,} range{'s' if user.size != 1 else ''}: " + ", ".join(f"`{_short(n, 40)}`" for n in top)


def _ranges_beside(trace: Trace) -> str:
    """What a window whose CUDA side went unrecorded still holds of the job: the program's NVTX ranges
    (:func:`_user_ranges`) and, where some are named after work only training does (``nvtx.is_training_range``:
    ``backward``, ``optimizer_step``), those names with their count and median length -- the job's own words for what
    it ran and how long each took on the host, which a capture with CUDA tracing off keeps (``nsys profile -t nvtx``
    records them alone): the repeated range around them where there is one (the program's iteration: ``; only NVTX
    ranges (...), which name a training loop: `benchmark_iteration` ×15 of 209.5 ms each (median), each holding
    `backward```), else those names themselves; "" where the window holds no range.  Words only: the window still
    holds no GPU work to judge (the kind the names say is :func:`_nvtx_kind`'s)."""
    user = _user_ranges(trace)
    if not user:
        return ""
    h = trace.h
    train, outer = _training_loop(trace)
    if not train.size:
        return f"; only NVTX ranges ({user})"
    ids, counts = np.unique(h.name[train], return_counts=True)
    top = np.argsort(-counts, kind="stable")[:2]
    said = and_list([f"`{_short(h.names[int(ids[k])], 40)}`" for k in top])
    if outer.size:  # one repeated range around them: the iterations
        loop = f"{_named_lengths(h, outer)}, each holding {said}"
        return f"; only NVTX ranges ({user}), which name a training loop: {loop}"
    said = and_list([_named_lengths(h, train[h.name[train] == ids[k]]) for k in top])
    return f"; only NVTX ranges ({user}), which name work only training does: {said}"


def _training_loop(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """Host indices of the user's ranges named after work only training does (``nvtx.is_training_range``), and of
    the one repeated range around them where there is one (:func:`_holding_ranges`, a single name, more than once:
    the program's iteration), empty where none."""
    marked = user_ranges.marked_ranges(trace.ranges) if trace.ranges is not None else np.zeros(0, np.int64)
    if not marked.size:
        return marked, marked
    h = trace.h
    train = marked[h.per_name(nvtx.is_training_range)[h.name[marked]]]
    outer = _holding_ranges(h, marked, train) if train.size else train
    if outer.size < 2 or np.unique(h.name[outer]).size != 1:
        outer = outer[:0]
    return train, outer


def _retrace(trace: Trace) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The fix of a capture whose options had CUDA tracing off, as its own record picks it: the key of the format's
    fix and the words of its code -- the user's command (``program``), what it traced and what to trace (``traced``,
    ``retrace``: the format reader's ``Trace.producer`` facts) and, where NVTX ranges mark the program's iterations
    (:func:`_training_loop`), ONE window over enough steady ones (:func:`_window_iterations`) past the warm-up
    (:func:`_warmup_iterations`): ``tracing_off:time`` where the capture began at the program's launch
    (``launch_lead_ms``), so that ``--delay`` / ``--duration`` can be read off its clock; ``tracing_off:api``
    (cudaProfilerStart/Stop around those iterations) where it did not or the recorded run is too short for that
    window; ``tracing_off:program`` with the command alone; "" for the general fix.  Why: the generic
    ``nsys profile -t cuda,nvtx ./app`` asked the user to rebuild a command the capture had kept (h37-tracingoff2),
    and a report per NVTX range (``--capture-range-end=repeat-shutdown``) holds one iteration, which the capture
    check then calls too few steps (h37-tracingoff3): advice must fit what the report will say of its result."""
    p = trace.producer
    program, retrace = p.get("program_command", ""), p.get("retrace_apis", "")
    if not program or not retrace:
        return "", ()
    words = {"program": program, "traced": p.get("traced_apis", ""), "retrace": retrace}
    _, outer = _training_loop(trace)
    if not outer.size:
        return "tracing_off:program", tuple(words.items())
    h = trace.h
    order = outer[np.argsort(h.start[outer], kind="stable")]
    lengths = (h.end[order] - h.start[order]) / PS_PER_MS
    warm = min(_warmup_iterations(lengths), lengths.size - 1)
    median = float(np.median(lengths))
    steps = _window_iterations()
    words |= {"iteration": h.names[int(h.name[order[0]])], "median_ms": ms(median), "steps": str(steps),
              "kept": f"{T('capture.min_steps'):g}",
              "first_steady": str(warm + 1), "last_steady": str(warm + steps),
              "warmup_words": _warmup_words(warm, lengths, median)}
    timed = _time_window(p.get("launch_lead_ms", ""), h.start[order[warm]] / PS_PER_MS,
                         h.end[order].max() / PS_PER_MS, median, steps)
    if timed is None:
        why = ("this capture does not show when it began against the program's launch, from which --delay counts"
               if not p.get("launch_lead_ms") else "the recorded run ends before such a window would")
        return "tracing_off:api", tuple((words | {"why_no_time": why}).items())
    return "tracing_off:time", tuple((words | timed).items())


def _window_iterations() -> int:
    """How many whole iterations a window recorded again should hold so that its report keeps ``capture.min_steps``
    of them: that many and the first and last, which the step finder drops from a window of more than
    ``steps.drop_edges_above`` (a window of 6 iterations keeps 4 and reads "Too few steps": checked with
    ``synthetic.nsysexport.write_retraced_loop``)."""
    return int(np.ceil(T("capture.min_steps"))) + 2


def _warmup_words(warm: int, lengths: np.ndarray, median: float) -> str:
    """What the leading iterations the window skips were: "the first ran 780.3 ms against a median of 209.5 ms"."""
    if not warm:
        return f"no iteration ran over {T('job.warmup_iteration_ratio'):g}x the median of {ms(median)}"
    if warm == 1:
        return f"the first ran {ms(float(lengths[0]))} against a median of {ms(median)}"
    return (f"the first {warm} ran over {T('job.warmup_iteration_ratio'):g}x the median of {ms(median)}, the first "
            f"{ms(float(lengths[0]))}")


def _time_window(lead_ms: str, steady_ms: float, end_ms: float, median: float, steps: int) -> dict[str, str] | None:
    """``--delay`` / ``--duration`` (whole seconds, as nsys takes them) of one window over ``steps`` steady iterations:
    the delay the first steady iteration's start since the launch (``lead_ms`` to the trace's 0, plus ``steady_ms``),
    rounded up so the warm-up stays out; the duration ``steps`` + 1 median iterations rounded up (a window opened
    inside an iteration loses it, so ``steps`` + 1 lengths hold ``steps`` whole ones).  None where the lead is not known
    or the recorded run (its last iteration's end, ``end_ms``) ends before the window would."""
    try:
        lead = float(lead_ms)
    except ValueError:
        return None
    delay = int(np.ceil((lead + steady_ms) / 1000.0))
    duration = int(np.ceil((steps + 1) * median / 1000.0))
    if delay * 1000.0 + duration * 1000.0 > lead + end_ms:
        return None
    whole = int(duration * 1000.0 // median) - 1
    return {"delay_s": str(delay), "duration_s": str(duration), "whole": str(whole),
            "steady_at_s": f"{(lead + steady_ms) / 1000.0:.1f}"}


def _warmup_iterations(lengths: np.ndarray) -> int:
    """How many leading iterations (their lengths in start order) are warm-up: each longer than
    ``job.warmup_iteration_ratio`` times the median iteration, from the first on."""
    long = lengths > T("job.warmup_iteration_ratio") * float(np.median(lengths))
    return int(np.argmin(long)) if not long.all() else int(long.size)


def _holding_ranges(h: HostEvents, marked: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """Host indices of the outermost marked ranges (``model.columns.outermost``, per thread) that hold one of the
    ranges ``inner`` -- the program's own iteration around its ``forward`` / ``backward``, each once; empty where one of
    ``inner`` lies in no other range."""
    order = np.lexsort((-h.end[marked], h.start[marked], h.line[marked]))
    m = marked[order]
    top = m[outermost(h.line[m], h.start[m], h.end[m])]
    held = []
    for line in np.unique(h.line[inner]).tolist():  # per thread: its outermost ranges come by start
        on, ii = top[h.line[top] == line], inner[h.line[inner] == line]
        k = np.searchsorted(h.start[on], h.start[ii], side="right") - 1
        if (k < 0).any() or (on[np.maximum(k, 0)] == ii).any() or (h.end[on[k]] < h.end[ii]).any():
            return np.zeros(0, np.int64)
        held.append(on[k])
    return np.unique(np.concatenate(held))


def _named_lengths(h: HostEvents, sel: np.ndarray) -> str:
    """Ranges of one name as ```backward` ×15 of 136.1 ms each (median)``: how often the program ran that part and
    how long it took on the host."""
    length = float(np.median(h.end[sel] - h.start[sel])) / PS_PER_MS
    return f"`{_short(h.names[int(h.name[sel[0]])], 40)}` ×{int(sel.size):,} of {ms(length)} each (median)"


def _snapshot_teardown(trace: Trace) -> str:
    """A snapshot whose allocator history holds events but no allocation on any GPU -- frees (and segments given
    back) of blocks allocated before the history began -- with nothing allocated at the dump, in words; "" otherwise.

    Why: the history's window missed the work and kept the program's exit (``del model``, ``torch.cuda.empty_cache()``
    with the ring buffer of ``max_entries`` holding only its last events, or history recorded from after the
    steps).  Read as any snapshot, it was "No memory check fired" with no finding -- healthy, of a file that holds
    none of the job's allocations (h37-window69): the memory analogue of a trace window opened on the tear-down."""
    snap = trace.snapshot
    if snap is None or not trace.memory or any(a for _, a, _, _ in snap.state.values()):
        return ""
    events = [me for me in trace.memory.values() if len(me)]
    if not events or any((me.delta > 0).any() for me in events):
        return ""
    frees = sum(int((me.delta < 0).sum()) for me in events)
    given = sum(int(((me.delta == 0) & (np.diff(me.reserved, prepend=me.reserved[:1]) < 0)).sum()) for me in events)
    rest = f" and {plural(given, 'segment')} given back to the driver" if given else ""
    return f"{plural(frees, 'free')} of blocks allocated before it began{rest}, and nothing allocated at the dump"


def _snapshot_kind(trace: Trace, fw: Framework) -> Kind:
    """A memory snapshot records allocations, not GPU work; what allocated says what the job was:

    * the stacks of autograd's backward pass or an optimizer (C++ or Python frames, POSIX or Windows paths): training;
    * else the profiler's ranges the snapshot recorded (``external_annotations``) naming work only training does
      (``Optimizer.zero_grad#AdamW.zero_grad``): training -- a forward that ran out of memory before its backward;
    * else the allocation pattern of a backward run on autograd's engine thread, which records no Python frame (a
      ``stacks="python"`` snapshot -- the only kind on Windows -- holds none for it): the forward pass's blocks freed
      in reverse order while allocations without any stack are made;
    * else allocations in modules' forward and nothing else: forward passes (inference, or a benchmark of the forward).
    """
    teardown = _snapshot_teardown(trace)
    if teardown:
        return Kind("unknown", "low", f"a memory snapshot whose allocator history holds no allocation: {teardown} -- "
                                      "the program's tear-down: none of the job's work is in it",
                    snapshot_teardown=teardown)
    seen = {MEMORY_PHASES[p] for m in trace.memory.values() for p in np.unique(m.phase) if 0 <= p < len(MEMORY_PHASES)}
    train = [p for p in ("backward", "optimizer") if p in seen]
    if train:
        return Kind("training", "medium", f"a memory snapshot whose allocations' stacks hold the {' and the '.join(train)} "
                                          f"step{'s' if len(train) > 1 else ''}")
    named = [n for n in trace.producer.get("annotations", ()) if fw.training_event(n)]
    kept = _forward_kept_share(trace)
    no_grad = ""
    bare = trace.snapshot is not None and trace.snapshot.stackless
    if named:
        work = [n for n in named if not fw.grad_reset_event(n)]
        if work or _kept_for_backward(kept, bare):
            return Kind("training", "high", f"the profiler's ranges in the snapshot name work only training does: "
                                            f"`{_short((work or named)[0])}`")
    if named and kept is not None:
        no_grad = (f"; `{_short(named[0])}` ran, but the forward freed its blocks as it went ({pct(kept, 0)} of its bytes "
                   "live at the peak): it kept nothing for a backward (grad off), and no backward or optimizer step "
                   "followed")
    for g, me in sorted(trace.memory.items()):
        lifo, stackless = _backward_pattern(me)
        if lifo >= _LIFO_SHARE and stackless >= _STACKLESS_SHARE:
            return Kind("training", "medium", f"a memory snapshot in which GPU {g}'s forward-pass blocks are freed in "
                                              f"reverse order ({pct(lifo, 0)} of them) while allocations without any stack "
                                              f"({pct(stackless, 0)} of those made meanwhile) are made: a backward pass "
                                              "on autograd's engine thread, which records no Python frame")
    live = _live_kind(trace, fw)
    if live is not None and live.kind == "inference" and bare:
        # blocks a forward made, live at the dump, say only that the dump came after a forward; a stackless history
        # that walks its forwards back while making others shows the backward they were kept for (h37-snap69: a
        # real training step recorded with context="state" read "inference" from its live blocks)
        walked = _stackless_backward(trace) or _repeated_backward(trace) or _first_optimizer_step(trace)
        if walked is not None:
            return walked
        unended = _forward_unended_bare(trace)
        if unended:
            return Kind("unknown", "low", unended)
    if live is not None and (live.kind != "inference" or "forward" not in seen):
        return live
    if "forward" in seen:
        unended = _forward_unended(trace)
        if unended:
            return Kind("unknown", "low", unended)
        return Kind("inference", "medium", "a memory snapshot whose allocations come from modules' forward passes, "
                                           f"with no backward pass and no optimizer step{no_grad}")
    if bare:
        return _stackless_backward(trace) or _repeated_backward(trace) or _repeated_passes(trace) or \
            _first_optimizer_step(trace) or (
            _grad_reset_then(trace, named[0]) if named else None) or _dropped_forward(trace) or \
            _freed_as_it_went(trace) or Kind(
            "unknown", "low", "a memory snapshot recorded without stacks (no allocation carries a frame): what "
                              "allocated each block is not in the file, and its allocation pattern shows no backward "
                              f"pass -- the kind is not read{_unread_why(trace)}")
    return _repeated_passes(trace, f"a memory snapshot, {UNPHASED_WHY}", framed_pass_phases) or Kind(
        "unknown", "low", "a memory snapshot records allocations, not the GPU's work")


def _forward_unended(trace: Trace) -> str:
    """Why the kind of a snapshot whose history holds modules' forward allocations and no backward is not read, where
    its forward never ended: on every GPU with forward allocations, the forward's live bytes never fell back to
    ``job.snapshot_forward_kept`` of their running highest once that highest held :data:`_STACKLESS_MIN_BLOCKS`
    blocks (no graph dropped unused), and when the history ends (an out-of-memory error, or the dump) at least that
    many of its blocks are live (every layer's, as autograd keeps them: a pass under ``no_grad`` holds a few and frees
    as it goes); "" otherwise.

    Why: "no backward in the history" says inference only where a backward could have come -- a pass that ended (its
    graph dropped unused) or a forward that freed its layers as it went (grad off).  A training step's first forward
    that runs out of memory, or is dumped before its backward, keeps its layers' saved tensors too (20-60% of a real
    training forward's bytes, its intermediates freed) and looks the same: told "inference", it was handed
    ``inference_mode`` as the fix of its own training step (SURVEY session 41, probe l:
    ``synthetic.memsnapshot.oom_first_forward``)."""
    fwd = MEMORY_PHASES.index("forward")
    live_blocks = live_bytes = 0
    for me in trace.memory.values():
        got = _forward_live(me, fwd)
        if got is None:
            continue
        blocks, size, dropped = got
        if dropped or blocks < _STACKLESS_MIN_BLOCKS:
            return ""  # a graph dropped unused (a pass ended), or a forward that frees as it goes (grad off)
        live_blocks, live_bytes = live_blocks + blocks, live_bytes + size
    if not live_blocks:
        return ""
    snap = trace.snapshot
    end = ("an out-of-memory error" if snap is not None and snap.ooms else "the dump")
    return (f"a memory snapshot whose history ends ({end}) with its forward still climbing: {live_blocks:,} blocks the "
            f"modules' forward made ({gb(live_bytes)}) are held and none of its passes is seen to end, so no "
            "backward could yet follow -- a training step's forward cut before its backward and one run for its "
            "output alone (evaluation, a benchmark) look the same here")


def _forward_unended_bare(trace: Trace) -> str:
    """:func:`_forward_unended` for a history recorded without stacks (``context="state"``: the blocks keep theirs,
    the entries none), read from the allocation pattern: on every GPU whose blocks live at the dump hold at least
    :data:`_STACKLESS_MIN_BLOCKS` the modules' forward made (their stacks), the history never frees that many blocks
    in a row (:func:`_longest_free_run`: no pass's graph dropped unused -- the intermediates a forward frees as it goes
    are freed one at a time) nor blocks older than it (:func:`_earlier_dropped`), and its level rose by at least
    ``job.snapshot_forward_kept`` of those bytes (the forward is in the history, not older than it); "" otherwise.

    Why: the same first forward that runs out of memory reads "unknown" with stacks on its entries, but recorded with
    ``context="state"`` the forward's blocks live at the dump said "inference (medium)" -- a training step's first
    forward handed ``inference_mode`` (session 70 snap70: ``oom_first_forward`` as ``context="state"`` records it)."""
    snap = trace.snapshot
    if snap is None:
        return ""
    kept = T("job.snapshot_forward_kept")
    live_blocks = live_bytes = 0
    for g, me in trace.memory.items():
        fwd = [st for st in snap.stacks.get(g, ()) if st.phase == "forward"]
        blocks, size = sum(st.blocks for st in fwd), sum(st.size for st in fwd)
        if not fwd:
            continue
        if blocks < _STACKLESS_MIN_BLOCKS or not len(me):
            return ""
        level = me.allocated
        if (_longest_free_run(me) >= _STACKLESS_MIN_BLOCKS or _earlier_dropped(me)
                or level[-1] - level.min() < kept * size):
            return ""  # a pass's graph dropped (a pass ended), or the forward's blocks are older than the history
        live_blocks, live_bytes = live_blocks + blocks, live_bytes + size
    if not live_blocks:
        return ""
    end = "an out-of-memory error" if snap.ooms else "the dump"
    return (f"a memory snapshot recorded without stacks on its history whose history ends ({end}) with its forward "
            f"still climbing: {live_blocks:,} blocks the modules' forward made ({gb(live_bytes)}, by their stacks at "
            "the dump) are held and the allocated level never falls back, so no pass is seen to end and no backward "
            "could yet follow -- a training step's forward cut before its backward and one run for its output alone "
            "(evaluation, a benchmark) look the same here")


def _longest_free_run(me: MemoryEvents) -> int:
    """The most frees one GPU's history makes in a row, no allocation between: a graph dropped at once (an output
    let go frees every tensor its graph saved, in one cascade), where a forward frees its intermediates one at a
    time between its allocations."""
    frees = np.concatenate(([False], me.delta < 0, [False])).astype(np.int8)
    edges = np.flatnonzero(np.diff(frees))
    return int((edges[1::2] - edges[::2]).max()) if edges.size else 0


def _forward_live(me: MemoryEvents, fwd: int) -> tuple[int, int, bool] | None:
    """Of one GPU's history, the forward's blocks and bytes live at its end, and whether the forward's live bytes
    ever fell to ``job.snapshot_forward_kept`` of their running highest after it held :data:`_STACKLESS_MIN_BLOCKS`
    blocks, or the history freed as many made before it (:func:`_earlier_dropped`): a pass's graph dropped -- or the
    blocks held through the whole history repeat the forward's live ones (``job.iterations.earlier_pass_held``): an
    earlier pass ended and kept its graph through this one, no backward between (a forward-only loop with autograd
    on, dumped before its output is rebound: saravargas88's 2.7B benchmark); None where the forward made nothing."""
    n = len(me)
    made = np.flatnonzero((me.delta > 0) & (me.phase == fwd))
    if not made.size:
        return None
    freed = me.frees()[made]
    gone = freed < n
    d_bytes = np.zeros(n + 1, np.int64)
    d_blocks = np.zeros(n + 1, np.int64)
    np.add.at(d_bytes, made, me.delta[made])
    np.add.at(d_bytes, freed[gone], -me.delta[made][gone])
    np.add.at(d_blocks, made, 1)
    np.add.at(d_blocks, freed[gone], -1)
    live_b, live_n = np.cumsum(d_bytes[:n]), np.cumsum(d_blocks[:n])
    top = np.maximum.accumulate(live_b)
    at_top = np.maximum.accumulate(np.where(live_b >= top, np.arange(n), 0))  # where the running highest was set
    dropped = bool(((live_b <= T("job.snapshot_forward_kept") * top) & (live_n[at_top] >= _STACKLESS_MIN_BLOCKS)).any())
    held = made[~gone]
    return int(live_n[-1]), int(live_b[-1]), dropped or _earlier_dropped(me) or (
        held.size >= _STACKLESS_MIN_BLOCKS and earlier_pass_held(me, me.delta[held]) is not None)


def _earlier_dropped(me: MemoryEvents) -> bool:
    """Whether one GPU's history frees at least :data:`_STACKLESS_MIN_BLOCKS` blocks made before it began: with no
    backward in the history, what an earlier pass kept was dropped unused (a loop that rebinds its output frees the
    last pass's graph once the next has returned: wild/snapshot_forward_rebound_autograd's 872 blocks)."""
    ends = me.frees()
    allocs = np.flatnonzero(me.delta > 0)
    matched = np.zeros(len(me) + 1, bool)
    matched[ends[allocs]] = True
    return int(((me.delta < 0) & ~matched[:-1]).sum()) >= _STACKLESS_MIN_BLOCKS


#: Of a snapshot's allocated bytes, the share the winning kind's stacks must hold for "medium" where other kinds' stacks
#: hold bytes too (most of what is held says it); alone, it needs :data:`_LIVE_ALONE_SHARE`.
_LIVE_MOST_SHARE = 0.5
_LIVE_ALONE_SHARE = 0.1
#: What a live block's stack says, by MEMORY_PHASES where no frame names its code (the reader's phase of the stack).
_PHASE_SAYS = {"backward": ("training", "the backward pass"), "optimizer": ("training", "an optimizer's state"),
               "forward": ("inference", "modules' forward passes")}


@dataclass
class _Said:
    """The live bytes whose stacks say one kind of job (and engine): by what they hold, with the largest stack's
    deciding frame for each."""

    kind: str
    engine: "engines.Engine | None"
    size: int = 0
    what: dict[str, list] = dataclasses.field(default_factory=dict)  # what -> [bytes, frame of its largest stack]


def _stack_says(st: LiveStack, fw: Framework) -> tuple[str, str, str, "engines.Engine | None"] | None:
    """(kind, what, frame, engine) one allocating stack says, from its innermost frame that names the code (a serving
    engine's, or code only training runs: ``Framework.training_frame``), else from its phase (with the stack's own
    label: the user's line, or autograd's node); None where nothing."""
    for f in st.frames:
        engine = engines.frame_engine(f)
        if engine is not None:
            return engine.kind, f"{engine.name}'s work", f, engine
        what = fw.training_frame(f)
        if what:
            return "training", what, f, None
    said = _PHASE_SAYS.get(st.phase)
    if said is None:
        return None
    return said[0], said[1], st.label or (st.frames[0] if st.frames else "?"), None


def _live_kind(trace: Trace, fw: Framework) -> Kind | None:
    """The kind the blocks live at a snapshot's dump say through the stacks that allocated them (``snapshot.stacks``),
    each weighted by its bytes: a serving engine's KV cache and weights, an optimizer's state and gradient buffers
    (training), modules' forward passes (inference).  The kind is the one most live bytes say; medium where they are
    most of the allocated bytes (or the only kind said, by a tenth of them), else low.  None where no stack says any.

    A snapshot without a history (``_record_memory_history(enabled="state")``) or with one that holds no step is
    read by this: the state outlives the work that made it."""
    snap = trace.snapshot
    allocated = sum(st[1] for st in snap.state.values())
    said: dict[tuple[str, str], _Said] = {}
    for stacks in snap.stacks.values():
        for st in stacks:
            got = _stack_says(st, fw)
            if got is None:
                continue
            kind, what, frame, engine = got
            s = said.setdefault((kind, engine.id if engine else ""), _Said(kind, engine))
            s.size += st.size
            w = s.what.setdefault(what, [0, frame])
            w[0] += st.size
    if not said or allocated <= 0:
        return None
    ranked = sorted(said.values(), key=lambda s: -s.size)
    kept = _forward_beside_training(ranked, lambda: _caches(snap, fw))
    if kept is not None:
        ranked = [s for s in ranked if s is not kept]
    top, rest = ranked[0], ranked[1:]
    share = (top.size + (kept.size if kept else 0)) / allocated  # the live blocks: never more than the allocated bytes
    sure = share >= _LIVE_MOST_SHARE or (not rest and share >= _LIVE_ALONE_SHARE)
    text = (f"the blocks live at the snapshot's dump, by the stacks that allocated them: {gb(top.size)} of the "
            f"{gb(allocated)} allocated ({pct(top.size / allocated, 0)}) {_said_words(top)}")
    if kept is not None:
        text += (f", and {gb(kept.size)} modules' forward passes made (`{_frame_words(max(kept.what.values())[1])}`): "
                 "what a training step's forward keeps for its backward")
    if rest:
        text += "; beside them " + "; ".join(f"{gb(s.size)} {_said_words(s)}" for s in rest[:2])
    if top.engine is not None:
        return Kind(top.kind, "medium" if sure else "low", text, top.engine.id, top.engine.name)
    return Kind(top.kind, "medium" if sure else "low", text)


def _caches(snap: Any, fw: Framework) -> bool:
    """Whether a stack of the blocks live at the dump runs through a KV cache's code (``Framework.kv_cache_frame`` on
    its ``file.py:123 function`` frames): a generation's cache, made in the forward, that says inference."""
    return any(fw.kv_cache_frame(f) for stacks in snap.stacks.values() for st in stacks for f in st.frames)


def _forward_beside_training(ranked: list[_Said], caches: Callable[[], bool]) -> _Said | None:
    """The forward-made live bytes (no engine's) that outrank what says training (an optimizer's state, the backward's
    blocks, a training frame) where both are live at the dump: read as part of the training, not as inference.  Why:
    a training step's forward keeps its tensors for the backward, so at an out-of-memory dump in the forward they are
    most of the bytes beside the optimizer's state -- a training OOM recorded with ``context="state"`` read
    "inference" from its 18 GiB of activations beside 4 GiB of Adam's state (h37-snap69: ``oom_activations``); an
    optimizer's state is made by training alone.  Not where a live stack is a KV cache's (``caches``, asked last: it
    reads every live stack's frames): a generation's cache is made in the forward and says inference beside an
    optimizer's state."""
    top = ranked[0]
    if top.kind != "inference" or top.engine is not None:
        return None
    if not any(s.kind == "training" and s.engine is None for s in ranked[1:]):
        return None
    return None if caches() else top


def _said_words(s: _Said) -> str:
    """``_Said`` in words: the kind, and what holds its bytes with the frame that allocated the most."""
    parts = [f"{what} {gb(b)} (`{_frame_words(f)}`)" for what, (b, f) in sorted(s.what.items(), key=lambda w: -w[1][0])]
    return f"say {s.kind}: {', '.join(parts[:3])}"


def _frame_words(frame: str) -> str:
    """A ``/long/path/file.py:123 function`` frame as ``file.py:123 function``."""
    return _short(frame.replace("\\", "/").rsplit("/", 1)[-1], 60)


def _forward_kept_share(trace: Trace) -> float | None:
    """The largest share, over GPUs, of the forward pass's allocated bytes still live at the allocated peak, or None
    where no forward allocation was recorded.  Autograd keeps a forward's outputs for the backward, so under grad most
    of its bytes are live at the peak; under ``no_grad`` each layer's tensors are freed once the next has used them,
    and only one layer's working set is (1/L of an L-layer forward)."""
    fwd = MEMORY_PHASES.index("forward")
    best: float | None = None
    for me in trace.memory.values():
        n = len(me)
        made = (me.delta > 0) & (me.phase == fwd)
        if not n or not made.any():
            continue
        p = int(np.argmax(me.allocated))
        live = made & (np.arange(n) <= p) & (me.frees() > p)
        share = float(me.delta[live].sum()) / float(me.delta[made].sum())
        best = share if best is None else max(best, share)
    return best


#: A backward pass frees the forward's blocks live at the peak last-in first-out: the share of consecutive frees (in
#: time) of those whose block was allocated before the previous one's.  A forward under no_grad frees first in, first
#: out.
_LIFO_SHARE = 0.8
#: ... while making allocations of its own: the share of allocations between the first and last such free that carry
#: no stack at all (autograd's engine thread).
_STACKLESS_SHARE = 0.5


def _backward_pattern(me) -> tuple[float, float]:
    """(LIFO share of the forward blocks' frees, share of stackless allocations among those made meanwhile)."""
    got = _peak_frees(me, MEMORY_PHASES.index("forward"))
    if got is None:
        return 0.0, 0.0
    by_free, lo, hi = got
    lifo = float((np.diff(by_free) < 0).mean())
    allocs = np.flatnonzero(me.delta[lo:hi + 1] > 0) + lo
    if not allocs.size:
        return lifo, 0.0
    none = {k for k, name in enumerate(me.op_names) if name == "?"}
    ops = me.op[allocs]
    stackless = float(np.isin(ops, list(none | {-1})).mean())
    return lifo, stackless


def _peak_frees(me, phase: int | None, least: int = 8) -> tuple[np.ndarray, int, int] | None:
    """The blocks the allocated peak held (of ``phase``; of any where None) that the history frees, in the order they
    are freed, with the events of the first and the last of those frees; None where fewer than ``least``."""
    free_at = me.frees()
    n = len(me)
    peak = int(np.argmax(me.allocated)) if n else 0
    live = (np.arange(n) <= peak) & (free_at > peak)  # what the peak held: the forward's, kept for a backward
    made = (me.delta > 0) if phase is None else (me.delta > 0) & (me.phase == phase)
    blocks = np.flatnonzero(made & live & (free_at < n))
    if blocks.size < least:
        return None
    by_free = blocks[np.argsort(free_at[blocks], kind="stable")]
    return by_free, int(free_at[by_free[0]]), int(free_at[by_free[-1]])


#: Of a snapshot without stacks, the allocations a backward makes while it frees what the peak held, per block
#: freed: it makes each layer's gradients as it goes (a weight's, an input's), where the graph a forward kept, torn
#: down when its output is dropped with no backward, is freed with no allocation between.  The two sides measured:
#: a real backward (snapshots_wild ``windows_training_cs336``, its frames taken away) made 1,063 blocks over its 275
#: frees, 3.9 a free; a dropped graph makes 0 (one Python call tears it down).  The bound sits far from both -- a
#: sixteenth of the measured backward's rate, so a backward that reuses freed blocks for most of its gradients still
#: reads, and a teardown that another thread's few allocations interleave does not.
_BACKWARD_MADE_PER_FREE = 0.25
#: ... and the blocks the peak held, freed so, at least: a pass under ``no_grad`` holds a few at its peak, freed in
#: any order while the next pass allocates (a real GPT-2 medium's inference, its frames taken away: 8 blocks, 71% in
#: reverse order, 147 allocations a free); a backward frees every layer's saved tensors (a real 12-layer GPT's: 275).
#: Between the two measured counts; its error is on the safe side: a small model's backward (a two-layer MLP saves a
#: handful of tensors) reads "the kind is not read", never inference.
_STACKLESS_MIN_BLOCKS = 16


def _stackless_backward(trace: Trace) -> Kind | None:
    """Training, from the allocation pattern alone, where no allocation carries a stack (``MemorySnapshot.stackless``:
    ``_record_memory_history(context=None)``): on a GPU, the blocks the peak held are freed last-in first-out
    (:data:`_LIFO_SHARE`) while new blocks are made between those frees (:data:`_BACKWARD_MADE_PER_FREE` per block
    freed) -- a backward pass walking the forward's graph back.  None where no GPU shows it: the kind is then not read
    (a forward's graph dropped unused frees in the same order, but makes nothing meanwhile; a pass under ``no_grad``
    holds no such stack of blocks)."""
    for g, me in sorted(trace.memory.items()):
        got = _peak_frees(me, None, _STACKLESS_MIN_BLOCKS)
        if got is None:
            continue
        by_free, lo, hi = got
        lifo = float((np.diff(by_free) < 0).mean())
        made = int((me.delta[lo:hi + 1] > 0).sum())
        if lifo >= _LIFO_SHARE and made >= _BACKWARD_MADE_PER_FREE * by_free.size:
            return Kind("training", "low", f"a memory snapshot recorded without stacks, by its allocation pattern: the "
                                           f"{by_free.size:,} blocks GPU {g}'s peak held are freed in reverse order "
                                           f"({pct(lifo, 0)} of them) while {made:,} blocks are made between those frees "
                                           "-- a backward pass walking the forward's graph back")
    return None


def _repeated_backward(trace: Trace) -> Kind | None:
    """Training, low, where a history without stacks repeats its allocations with a backward's walk back in each
    repeat (``job.iterations.pattern_phases``); None where no GPU's does.  Why: a small model's backward frees fewer
    blocks than :data:`_STACKLESS_MIN_BLOCKS` asks of one peak, but the same walk back in every iteration of a loop --
    the same sizes in the same order, each iteration's forward blocks freed in reverse order while others are made --
    is a training loop's mark, and the iterations the job stage reads from it are training iterations."""
    for g, got in _patterned(trace, pattern_phases):
        return Kind("training", "low", f"a memory snapshot recorded without stacks, by its allocation pattern: "
                                       f"GPU {g}'s allocation sizes repeat every {got.period:,} allocations "
                                       f"({got.repeats} times), and in {got.turns} of its iterations the "
                                       "forward's blocks are freed in reverse order while others are made -- "
                                       "a backward pass each iteration")
    return None


def _first_optimizer_step(trace: Trace) -> Kind | None:
    """Training, low, where a history without stacks shows once a backward and the optimizer's first step after it
    (``job.iterations.first_step``): the forward's blocks walked back while blocks of the weights' sizes are made
    (gradients), then blocks of the weights' sizes made and held to the dump (the optimizer's state); None where no
    GPU's does.  Why: a single iteration repeats nothing for :func:`_repeated_backward`, and a small model's walk
    holds too few blocks for :func:`_stackless_backward`, yet the three marks together are a training step's alone
    (session 71 passes71)."""
    for g, got in _patterned(trace, first_step):
        return Kind("training", "low", f"a memory snapshot recorded without stacks, by its allocation pattern: GPU "
                                       f"{g}'s backward walks back {plural(got.walked, 'block')} of its forward in "
                                       f"reverse order while it makes {plural(got.grads, 'block')} of the weights' "
                                       f"sizes (gradients), then {plural(got.state, 'block')} of those sizes "
                                       f"({gb(got.state_bytes)}) are made and held to the dump -- an optimizer's "
                                       "state, made on its first step")
    return None


def _repeated_passes(trace: Trace, lead: str = "a memory snapshot recorded without stacks",
                     read: Callable[[MemoryEvents], Any] = stackless_pass_phases) -> Kind | None:
    """Inference, low, where a history no frame cuts repeats one forward pass -- the same sizes in the same order,
    all freed by each pass's end, no backward's walk back in any (``job.iterations.pass_phases``); None where no GPU's
    does.  Why: without frames nothing names a module's forward, but a loop of passes that make and free the same
    blocks with no backward between them is a forward run again and again: what inference and a forward benchmark
    do, and what no training loop does.  So too where the frames name no phase (``lead``): a forward written as plain
    functions, not modules (a hand-written attention benchmarked forward only), its passes read before its script's
    teardown as its steps are (``read``: ``job.iterations.framed_pass_phases``)."""
    for g, got in _patterned(trace, read):
        return Kind("inference", "low", f"{lead}, by its allocation pattern: "
                                        f"GPU {g} makes the same {got.size:,} allocations in the same order "
                                        f"{len(got.starts)} times in a row, each time freeing them all, with no "
                                        "backward pass walking them back -- forward passes")
    return None


def _dropped_forward(trace: Trace) -> Kind | None:
    """Inference, low, where a history without stacks, with no annotation naming training, drops a stack of blocks
    unwalked and keeps nothing it made from then on: on a GPU the peak held at least :data:`_STACKLESS_MIN_BLOCKS` of
    the history's blocks, all freed with fewer than :data:`_BACKWARD_MADE_PER_FREE` allocations a block between those
    frees, and of the bytes made from the first of them on, under ``job.snapshot_forward_kept`` are live at the dump;
    None otherwise.

    Why: each of a training step's parts leaves its mark in the allocations -- a backward makes each layer's
    gradients while it frees the forward's saved blocks (:func:`_stackless_backward`), the gradients stay live until
    the next ``zero_grad`` and an optimizer's state for good -- and a forward whose graph is dropped unused, or an
    autocast region's cache cleared at its exit, frees its stack at once with nothing made between.  One such pass
    reads nothing repeated (:func:`_repeated_passes`), so CS336's three bf16 forwards under ``no_grad`` and
    autocast, stripped of stacks, read "unknown" (h37-castcache's left (c)) where their frames read inference.  What
    was made before the stack's first block is the model's set-up (weights loaded inside the history), held by any
    kind of job.  Where the peak held fewer blocks, a small model's backward frees as few: nothing is said
    (:func:`_unread_why`)."""
    for g, me in sorted(trace.memory.items()):
        got = _peak_frees(me, None, _STACKLESS_MIN_BLOCKS)
        if got is None:
            continue
        by_free, lo, hi = got
        made = int((me.delta[lo:hi + 1] > 0).sum())
        since = np.flatnonzero(me.delta > 0)
        since = since[since >= int(by_free.min())]
        held = float(me.delta[since[me.frees()[since] >= len(me)]].sum()) / float(me.delta[since].sum())
        if made < _BACKWARD_MADE_PER_FREE * by_free.size and held < T("job.snapshot_forward_kept"):
            return Kind("inference", "low", f"a memory snapshot recorded without stacks, by its allocation pattern: "
                                            f"the {by_free.size:,} blocks GPU {g}'s peak held are freed with "
                                            f"{plural(made, 'block')} made between those frees (no gradient made as "
                                            f"they go: no backward), and {pct(held, 0)} of the bytes its history made "
                                            "from the first of them on are held at the dump (nothing kept for a "
                                            "backward, no gradient held) -- a forward pass, its graph or cast "
                                            "cache dropped at its end")
    return None


#: Of a history without stacks, the allocations a forward that freed as it went made for each block it held at
#: most, at least: a pass under ``no_grad`` holds the few tensors in use while it makes every layer's (the real
#: CS336 GPT-2 medium under ``inference_mode``, its frames taken away: 1,280 allocations, 13 blocks at most, 98 a
#: block; the other real no-grad forwards 27-178), where a forward kept for a backward holds 20-60% of what it made
#: (``job.snapshot_forward_kept``) and one training step, its backward's and optimizer's allocations counted too, 2-15
#: a block (``synthetic.memsnapshot.training_iterations(iterations=1)``: 1.3).  A loop of small training steps
#: reaches any ratio, but repeats its walk back, read first (:func:`_repeated_backward`).
_FREED_AS_IT_WENT = 16


def _freed_as_it_went(trace: Trace) -> Kind | None:
    """Inference, low, where a history without stacks and no annotation naming training shows a forward that freed
    its blocks as it went and kept nothing: on every GPU with allocations, from the last time before its peak that
    the level stood at the level the history ends at (the climb's floor: the weights, made before or inside it),
    the blocks made then on are held at most :data:`_STACKLESS_MIN_BLOCKS` at once, made at least
    :data:`_FREED_AS_IT_WENT` times as many, and under ``job.snapshot_forward_kept`` of their bytes are live at the
    dump; None otherwise.

    Why: the allocation pattern of a forward with autograd off -- the level climbs a little from the weights and
    falls back to them, each layer's tensors freed once the next is made -- read "unknown" without frames where its
    peak held fewer blocks than a backward's walk needs (:func:`_dropped_forward`): a single pass under
    ``inference_mode`` (the real ``snapshot_inference_gpt`` recorded ``context=None``) is none of a training step's
    parts -- no graph kept for a backward (at most a few blocks live), no gradient held, no optimizer state made
    (nothing kept at the dump) (session 71 snap71)."""
    kept = T("job.snapshot_forward_kept")
    said: tuple[int, int, int, int] | None = None
    for g, me in sorted(trace.memory.items()):
        n = len(me)
        if not n or not (me.delta > 0).any():
            continue
        p = int(np.argmax(me.allocated))
        below = np.flatnonzero(me.before(np.arange(p + 1)) <= int(me.allocated[-1]))
        c = int(below[-1]) if below.size else 0
        free_at = me.frees()
        made = c + np.flatnonzero(me.delta[c:] > 0)
        if made.size < _FREED_AS_IT_WENT:
            return None
        step = np.zeros(n + 1, np.int64)
        step[made] += 1
        gone = made[free_at[made] < n]
        np.add.at(step, free_at[gone], -1)
        most = int(np.cumsum(step[:n]).max())
        held = float(me.delta[made[free_at[made] >= n]].sum()) / float(me.delta[made].sum())
        if most > _STACKLESS_MIN_BLOCKS or made.size < _FREED_AS_IT_WENT * most or held >= kept:
            return None
        said = said or (g, int(made.size), most, round(held * 100))
    if said is None:
        return None
    g, allocs, most, held = said
    return Kind("inference", "low", f"a memory snapshot recorded without stacks, by its allocation pattern: GPU {g} "
                                    f"makes {allocs:,} blocks from the level it ends at and never holds more than "
                                    f"{most} of them at once, {held}% of their bytes live at the dump -- a forward "
                                    "that freed each layer's tensors as it went (grad off) and kept nothing: no graph "
                                    "for a backward, no gradient, no optimizer state")


def _unread_why(trace: Trace) -> str:
    """Why a stackless history's kind is not read, where its pattern rules out neither: "; ..." or "".  Why: a
    history that keeps what it made at the dump is a forward kept for its backward (dumped before it) or a cache an
    inference server holds, alike in the allocations; one whose peak held few blocks is a pass under ``no_grad`` or a
    small model's backward, which frees as few."""
    held = _held_at_dump(trace)
    if held is not None and held >= T("job.snapshot_forward_kept"):
        return (f" (it holds {pct(held, 0)} of the bytes it made at the dump: a model's set-up, a forward kept for a "
                "backward not run yet, or a cache an inference server keeps -- alike without frames)")
    if held is not None and all(_peak_frees(me, None, _STACKLESS_MIN_BLOCKS) is None for me in trace.memory.values()):
        return (f" (its peak held fewer than {_STACKLESS_MIN_BLOCKS} of the blocks it made: a pass under `no_grad` "
                "or a small model's backward, alike without frames)")
    return ""


def _kept_for_backward(kept: float | None, bare: bool) -> bool:
    """Whether a snapshot whose annotations name only a gradient reset (``zero_grad``) is read as training from
    them: where its forward kept ``job.snapshot_forward_kept`` of its bytes at the peak, or where no forward
    allocation was recorded in a history with stacks (nothing contradicts the name).  A history without stacks
    (``bare``) has no forward allocation by construction: its allocation pattern decides (:func:`_grad_reset_then`),
    the name ranking below it -- a reset says an optimizer exists, not that it stepped."""
    if kept is None:
        return not bare
    return kept >= T("job.snapshot_forward_kept")


def _grad_reset_then(trace: Trace, reset: str) -> Kind:
    """The kind of a history without stacks whose only training-worded annotation resets the gradients
    (``Optimizer.zero_grad``), and whose allocation pattern shows no backward and no loop of passes: training
    (low) where the blocks it made are held at the dump (:func:`_held_at_dump`, a share at least
    ``job.snapshot_forward_kept`` of them), else inference (low).

    Why: a ``zero_grad`` says an optimizer exists, not that it stepped -- a benchmark calls it before forward-only
    passes (``wild/snapshot_nograd_bf16``: `zero_grad`, then one forward under ``no_grad``), and main called that
    "training (high)" without the stacks that let the framed reading see the forward freeing its blocks as it
    went.  The allocations are the physics: a forward kept for a backward, or the gradients a backward made (held
    until the next ``zero_grad``), are live at the dump; a history that frees what it made kept nothing for either,
    and no optimizer step shows (the profiler's ranges would name it, as they name the reset)."""
    held = _held_at_dump(trace)
    if held is not None and held >= T("job.snapshot_forward_kept"):
        return Kind("training", "low", f"a memory snapshot recorded without stacks: `{_short(reset)}` ran and "
                                       f"{pct(held, 0)} of the bytes its history allocated after it are held at the dump "
                                       "-- a forward kept for its backward, or a backward's gradients")
    freed = ("frees every block it allocated after it" if not held
             else f"holds {pct(held, 0)} of the bytes it allocated after it")
    return Kind("inference", "low", f"a memory snapshot recorded without stacks: `{_short(reset)}` ran, but no "
                                    f"optimizer step and no backward's walk back show, and its history {freed} by "
                                    "the dump -- nothing kept for a backward, no gradient made: forward work (a "
                                    "benchmark calling `zero_grad`)")


def _held_at_dump(trace: Trace) -> float | None:
    """The largest share, over GPUs, of the bytes a snapshot's history allocated after its last gradient reset
    (``MemorySnapshot.reset_ends_ps``; the whole history where none on its clock, or nothing after it) that it never
    frees (live at the dump); None where the history allocates nothing.  Why: without stacks no block reads as the
    forward's, but what a backward still needs, or made, is live when the history ends whatever allocated it; what a
    forward under ``no_grad`` made, and an autocast region's cast cache, are freed by then.  Set-up before the reset
    (the model's weights, the optimizer's state) is held too, and says nothing of the step."""
    resets = trace.snapshot.reset_ends_ps if trace.snapshot is not None else ()
    best: float | None = None
    for me in trace.memory.values():
        made = me.delta > 0
        after = made & (me.t >= resets[-1]) if resets else made
        made = after if after.any() else made
        total = float(me.delta[made].sum())
        if total <= 0:
            continue
        share = float(me.delta[made & (me.frees() >= len(me))].sum()) / total
        best = share if best is None else max(best, share)
    return best


def _patterned(trace: Trace, read: Callable[[MemoryEvents], Any]) -> Iterator[tuple[int, Any]]:
    """(GPU, what ``read`` finds in its history) for each GPU, in order, where it finds something: the first GPU whose
    history shows the pattern speaks for the process (its devices run the same loop)."""
    for g, me in sorted(trace.memory.items()):
        got = read(me)
        if got is not None:
            yield g, got


def _sharded_training_forward(trace: Trace, used: list[str], fw: Framework) -> str:
    """The evidence that a window holding FSDP's forward hooks and no backward is a training step's forward: its ops
    were recorded for autograd (grad mode on: the reader's ``grad_recorded_ops``); "" where none was.  Why: FSDP also
    shards models run forward only (FastVideo's text encoder on two H100s, ``../shared/profiles/nsys/h100_fsdp_window``:
    ``FSDP::pre_forward`` with no op numbered for autograd), while a window cut inside a training step's forward (its
    ``fsdp_mfu_before`` twin: activation checkpointing, the ops numbered for the backward) holds the same hooks."""
    hook = next((n for n in used if fw.sharded_forward_event(n)), None)
    recorded = int(trace.producer.get("grad_recorded_ops", "0") or 0)
    if hook is None or not recorded:
        return ""
    return (f"a data-parallel wrapper's forward (`{_short(hook)}`) whose ops autograd recorded for a backward pass "
            f"({recorded:,} ops numbered in its graph): a training step's forward")


def _frontend(trace: Trace) -> tuple[engines.Engine, str] | None:
    """The serving engine whose front-end process the capture recorded, by the code its Python spans ran
    (``engines.Engine.frontend``); None where no span names one, or the capture has no Python spans.

    Why: vLLM's profiler traces every process of a server, and its front-end's trace (``async_llm``: the API server
    taking requests and streaming tokens) holds no GPU work by design -- Navi-AI-Lab/nvllm committed one
    (``phase_5_paged_skip/.../async_llm.pt.trace.json.gz``, 18,155 Python spans over 23.9 s) beside the engine core's.
    Read as a window with no GPU work of no known cause, it was asked whether PyTorch saw the GPU and told to capture
    "a training step or a forward pass", where the GPU work is in the other trace of the same session (h37-survey31)."""
    spans = trace.spans
    if spans is None or not len(spans) or not len(trace.h.names):
        return None
    names = trace.h.names
    used = np.unique(spans.name)
    return engines.find_frontend(names[i] for i in used[:_MAX_NAMES] if 0 <= i < len(names))


def _line_names(trace: Trace) -> list[str]:
    """The names of the host's threads that recorded events, then of their processes (Nsight's ``host_processes``):
    where an engine names its own (``engines.Engine.processes``)."""
    procs = [p for p in str(trace.producer.get("host_processes", "")).split(",") if p]
    lines = list(trace.h.line_names) if len(trace.h) else []
    return [_PID_SUFFIX.sub("", n) for n in lines] + procs


#: A host line's ids after its thread's name (``VLLM::EngineCor (pid 7373, tid 7373)``).
_PID_SUFFIX = re.compile(r" \(pid \d+.*\)$")


def _used_names(trace: Trace, fw: Framework | None = None) -> list[str]:
    """The distinct host event and Python span names (a name table may hold names no event uses); with ``fw``, less
    the training events the framework's compiler only traced (:func:`_compiler_traced`)."""
    names = trace.h.names
    if len(names) > _MAX_NAMES:
        names = names[:_MAX_NAMES]
    traced = _compiler_traced(trace, fw) if fw is not None else set()
    return [n for n in names if n not in traced]


def _compiler_traced(trace: Trace, fw: Framework) -> set[str]:
    """The names of training events (a backward node) that occur only inside the framework's compile spans
    (``Framework.compile_event``): the compiler tracing a backward on fake tensors, not a backward the job ran.

    Why: torch.compile's first call of a model whose parameters require grad traces the joint forward + backward graph
    (AOTAutograd, inside ``create_aot_dispatcher_function``): autograd's engine runs there on fake tensors, recording
    ``autograd::engine::evaluate_function: ViewBackward0`` and launching nothing.  A forward-only conv benchmark on an
    A10G (survey h37-survey40: 22 backward nodes, every one inside that span, no backward kernel) read "a training
    step [high confidence]".  A job that trains runs its backward after the compile, outside these spans."""
    h = trace.h
    if not len(h):
        return set()
    train = np.flatnonzero(h.name_mask(fw.training_event))
    compiling = np.flatnonzero(h.name_mask(fw.compile_event))
    if not train.size or not compiling.size:
        return set()
    inside = _within_spans(h, compiling, h.start[train])
    return {h.names[i] for i in set(h.name[train[inside]].tolist()) - set(h.name[train[~inside]].tolist())}


def _within_spans(h, sel: np.ndarray, t: np.ndarray) -> np.ndarray:  # noqa: ANN001 - host events
    """Bool per time ``t``: inside the union of host events ``sel``'s spans (indices), on any thread."""
    ws, we = union_intervals(h.start[sel].astype(np.int64), h.end[sel].astype(np.int64))
    k = np.searchsorted(ws, t.astype(np.int64), side="right") - 1
    return (k >= 0) & (t < we[np.maximum(k, 0)])


def _most_named(names: list[str], name_col: np.ndarray, k: int, times: str = "×") -> str:
    """The ``k`` names most often in ``name_col`` (ids into ``names``), most first (ties by id), each with its count:
    "`read` ×1,204, `poll` ×96".  One home for the windows' evidence of what their few kinds of event are."""
    ids, counts = np.unique(name_col, return_counts=True)
    order = np.argsort(-counts, kind="stable")[:k]
    return ", ".join(f"`{_short(names[int(ids[i])], 40)}` {times}{int(counts[i]):,}" for i in order)


def _short(name: str, n: int = 80) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"
