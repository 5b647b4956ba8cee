"""Helpers the rule modules build findings with (the registry itself is ``registry.py``).

A rule is one check of the guide.  It lives in its own module
(``rules/<id>.py``), registers itself with :func:`rule`, reads only
:class:`~tb_gpu_advisor.metrics.types.HostMetrics`, takes its numbers from
:mod:`.thresholds`, and returns zero or more
:class:`~tb_gpu_advisor.model.schema.Finding` (empty list = check passed).

Helpers here keep the rule modules about the guide, not about formatting:
:class:`Ctx` (step time, step count, host), :func:`grade` (severity from a
warning/critical pair), :func:`share_metric`, :func:`saving`,
:func:`step_windows`, :func:`finding`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from types import SimpleNamespace
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from tb_gpu_advisor import devices, formats, frameworks
from tb_gpu_advisor.common.fmt import ms, ms_apart, ms_step, pct, pct_part  # noqa: F401  (re-exported: rules format numbers alike)
from tb_gpu_advisor.common.thresholds import THRESHOLDS, T, of_window  # noqa: F401  (T re-exported to the rule modules)
from tb_gpu_advisor.frameworks import Framework, action, nvtx  # noqa: F401  (re-exported: rules build neutral fixes alike)
from tb_gpu_advisor.metrics.job import step_word
from tb_gpu_advisor.metrics.types import BREAKDOWN_CATEGORIES, HostMetrics, StepTable, rows_of_gpu
from tb_gpu_advisor.model.schema import Action, Finding, Metric, Saving, Table, TimeWindow
from tb_gpu_advisor.model.trace import listed_gpu_models
from tb_gpu_advisor.rules.headline import grade  # noqa: F401  (re-exported: the one grading of rules and cards)
from tb_gpu_advisor.rules.registry import REGISTRY, Rule, rule  # noqa: F401  (re-exported to the rule modules)
from tb_gpu_advisor.rules.savings import CRITICAL_POOLS, FLOORED_POOLS, IDLE_GROUPS, POOL_CLASS, parts
from tb_gpu_advisor.steps.types import UNMARKED_SOURCES

# --------------------------------------------------------------------------- context


class Ctx:
    """What nearly every rule needs from the metrics, computed once."""

    def __init__(self, m: HostMetrics):
        self.m = m
        self.host: str = m.host or ""
        step = m.headline.avg_step_ms
        self.step_ms: float | None = float(step) if step is not None and step > 0 else None
        self.steps: int = int(m.steps.count or 0)
        #: the GPUs' vendor (``devices/nvidia.py``, ``devices/amd.py``): its words (``TERMS``) and own fixes (``FIXES``)
        self.vendor = _vendor(m)
        #: the capture's framework: its fixes, words and finding titles
        self.fw: Framework = framework(m, self.vendor)
        #: the capture recorded the GPU's work (:func:`gpu_work_recorded`): only then may a finding speak of its
        #: utilization or idle time
        self.gpu_recorded: bool = gpu_work_recorded(m)

    @property
    def one_step(self) -> bool:
        """The capture holds one kept step: its numbers are that step's, not a mean over several."""
        return self.steps == 1

    @property
    def unit(self) -> str:
        """The job's own word for its step: "engine step" (a serving engine), "forward pass" (inference), else "step"
        -- only where the job's kind is more than a guess, and where the step is one the capture marks: a step that is
        the whole window, or the one pass it was read as, may hold several calls of the model launched back to back
        (h200_jobs torch_fp16_inference_unmarked: 10 forward calls read as one step, "of the 36.6 ms forward pass")."""
        job = self.m.job
        if job is None:
            return "step"
        return step_word(job.kind.kind, job.kind.confidence, self.m.steps.source not in UNMARKED_SOURCES)

    def of_step(self, step_ms: float | None = None) -> str:
        """"of each 20.6 ms step" over several steps; "of the 20.6 ms step" (the job's own word: "of the 116 ms
        forward pass") where the capture holds one.  The one home of the phrase every rule puts after a part of the
        step (h37-left60: a one-step capture read "of each 11.3 ms step")."""
        t = ms(self.step_ms if step_ms is None else step_ms)
        return f"of the {t} {self.unit}" if self.one_step else f"of each {t} step"

    def part_of_step(self, part: float | None, step_ms: float | None = None) -> str:
        """"21.96 ms of the 22.03 ms pass": a part of the step and :meth:`of_step`, the two printed to the digits that
        tell them apart (``common.fmt.ms_apart``: "22.0 ms of the 22.0 ms pass" beside a share of 99.7%, h37-left62)."""
        p, t = ms_apart(part, self.step_ms if step_ms is None else step_ms)
        return f"{p} of the {t} {self.unit}" if self.one_step else f"{p} of each {t} step"

    def the_step(self, step_ms: float | None = None) -> str:
        """"the 20.6 ms step", in the job's word where the capture holds one step ("the 36.6 ms pass" where that step is
        the one pass an unmarked capture was read as): the mean step is "the step" over several."""
        return f"the {ms(self.step_ms if step_ms is None else step_ms)} {self.unit if self.one_step else 'step'}"

    @property
    def step_noun(self) -> str:
        """"step" over several steps; the job's word for the one step the capture holds (:attr:`unit`: "pass" where it
        is the pass an unmarked capture was read as).  The one home of the noun a rule writes after "the" ("off the
        step", "if the step is short", "of the step"): a per-rule "the step" beside :meth:`of_step`'s "of the 432.6 ms
        pass" said the capture marks a step it does not (h37-words21: small_grid, xla_not_used, launch_bound)."""
        return self.unit if self.one_step else "step"

    def window_words(self, template: str) -> str:
        """A meaning written with a ``{step}`` for the window its numbers are of (a threshold's, a finding's metric's:
        "share of the {step} the device executes") said of this host's window (:attr:`step_noun`,
        ``common.thresholds.of_window``): "share of the pass ..." beside findings saying "of the 28.5 ms pass"; its
        ``{per_step}`` as :attr:`per_step` says it ("in the pass")."""
        return of_window(template, self.step_noun, self.per_step)

    @property
    def per_step(self) -> str:
        """"per step" over several steps; "in the step" (the job's word) where the capture holds one: every count
        and time a rule states per step is that one step's."""
        return f"in the {self.unit}" if self.one_step else "per step"

    def mean_words(self, *counts: float) -> str:
        """What a count per step is a mean of, where one printed (to 0.1) is not whole: " on average" over the steps,
        " on average over its 2 GPUs" where the host's per-step numbers are shared among several GPUs
        (``HostMetrics.per_step``: over the kept steps and the active GPUs) -- a count of one step is a mean over its
        GPUs alone, so "424.5 TF ops in the step" said no mean at all (h37-words3: v100_bert's two replicas ran 849).
        "" where every count is whole.  The one home of the words, for every count a rule states per step."""
        if all(_whole(k) for k in counts):
            return ""
        ranks = self.m.ranks
        return " on average" + (f" over its {ranks} GPUs" if ranks > 1 else "")

    def count_per_step(self, k: float, noun: str, plural: str | None = None, per: str | None = None) -> str:
        """"92 kernels per step", "1 sync in the step", "7.5 calls per step on average", "424.5 TF ops in the step on
        average over its 2 GPUs": a count per step and rank (``HostMetrics.per_step``) as every rule states it
        (``per``: the phrase after the count, :attr:`per_step` unless given)."""
        return f"{n_of(k, noun, plural, mean=True)} {self.per_step if per is None else per}{self.mean_words(k)}"

    def step_name(self, step: int) -> str:
        """A kept step as a trace window names it: "step 3"; "the pass" where the one step kept is the pass an
        unmarked capture was read as (``steps.types.UNMARKED_SOURCES``: the whole window, or one pass of the
        program) -- the capture numbers no step, so "step 0" named one it does not hold (h37-words20: the one-pass
        rocprof_aiter_mi355x's window read "unrecorded host time, step 0")."""
        return f"the {self.unit}" if self.one_pass else f"step {step}"

    @property
    def one_pass(self) -> bool:
        """The one step kept is the pass an unmarked capture was read as (``steps.types.UNMARKED_SOURCES``): no step
        of the job is marked in it, so the findings speak of "the pass", never of a numbered step."""
        return self.one_step and self.m.steps.source in UNMARKED_SOURCES

    def the_pass_or(self, words: str) -> str:
        """"the pass" (:attr:`step_noun`) where the capture holds one unmarked pass (:attr:`one_pass`), else ``words``
        ("each step", "the steady steps", "3 steps"): the one test of the words a rule writes for the steps it speaks
        of, each rule having asked it in its own line (h37-onepass2's launch_skew, allocator_churn, input_bound,
        cold_start; h37-review25)."""
        return self.pass_or("the {step}", words)

    def pass_or(self, template: str, words: str) -> str:
        """``template`` said of the one unmarked pass the capture holds (:attr:`one_pass`; its ``{step}`` filled with
        :attr:`step_noun`: "a {step} that is a guess" -> "a pass that is a guess"), else ``words`` ("steps that are a
        guess"): the phrase whose article, number or verb follows the window is composed here, the rules and the
        report's caps asking no ``one_pass`` of their own (h37-review25's list: ``rules._guessed``)."""
        return of_window(template, self.step_noun) if self.one_pass else words

    @property
    def a_step(self) -> str:
        """"a step" after a time ("1.02 ms a step") over several steps; "in the step" where the capture holds one."""
        return f"in the {self.unit}" if self.one_step else "a step"

    def steady_fix(self, key: str) -> list[Action]:
        """How to record the steady state: the capture's own profiler options where its format has them (an Nsight
        window moves with ``--capture-range`` or ``--delay``, whatever framework the program uses: a torch.profiler
        schedule does not move it), else the framework's fix ``key`` -- and the framework's (a serving engine's) first
        where its own advice records this format (``Framework.capture_formats``: Triton Inference Server, profiled
        from outside by Nsight, is told how to put Nsight's window on a steady load, not a program's ``./app``)."""
        fmt = self.m.capture.capture_format
        if fmt in self.fw.capture_formats and self.fw.fix(key):
            return self.fw.fix(key)
        return self.window_fixes(fmt, "steady") or self.fw.fix(key)

    def record_host_fix(self, key: str = "step_gaps:unrecorded") -> list[Action]:
        """How to record what the host does between its GPU work: the capture's own profiler's way where its format
        gives one (rocprof's roctx ranges with ``--roctx-trace``; ``Format.window_fixes["unrecorded"]``), else the
        framework's ``key`` (Nsight's NVTX and CPU sampling for a native program); [] where neither has one.  Where
        the capture recorded nothing of the host (``HostMetrics.host_recorded``), the profiler's way to record the
        host's side at all comes first (``window_fixes["no_host"]``: rocprof's ``--hip-trace``), where it has one."""
        fmt = self.m.capture.capture_format
        first = [] if self.m.host_recorded else self.window_fixes(fmt, "no_host", fallback=False)
        # the profiler traced every Python call already (``with_stack``) and none covers the time: the host is in a
        # frame's own lines there, so turning the tracing on is no way to see it -- the framework's ranges are
        # (h37-huntkin63: 2 ms a step after each upload, inside the loop's frame alone, told ``with_stack=True``)
        traced = self.fw.extra(f"{key}_traced") if self.m.capture.python_tracing.calls_per_step >= 1 else []
        return first or self.window_fixes(fmt, "unrecorded") or traced or self.fw.extra(key)

    @property
    def no_host(self) -> str:
        """"" where the capture recorded the host; else what the window holds, in words -- the one phrase the
        findings that would word the host's time say instead (a kernel trace alone: the idle is unobserved, not time
        the host spent on something the capture does not name)."""
        return "" if self.m.host_recorded else NO_HOST

    def window_fixes(self, fmt: str | None, window: str, fallback: bool = True,
                     words: Mapping[str, str] | None = None) -> list[Action]:
        """The capture format ``fmt``'s own fixes for a ``window`` (its profiler's options; the format's ``""`` key
        where it has none for it and ``fallback``), [] where it has none: their code names the job's step in the
        job's words (an NVTX range named for a forward pass, not ``train_step``: ``frameworks.nvtx.step_range``),
        ``words`` the capture's own record fills (``job.kind.Kind.fix_words``: the user's command, their range), and
        the GPU vendor's build, tools and runtime (``devices.<vendor>.TERMS``: a Kineto trace is ROCm's PyTorch's
        too, told its ROCm build and rocprofv3, not CUDA's and Nsight's; h37-hiprocm36).  A key none of them fills
        stays as written."""
        try:
            f = formats.get(fmt) if fmt else None
        except ValueError:
            f = None
        own, lang = (f.window_fixes, f.window_fix_lang) if f is not None else ({}, "shell")
        said = _Said({**self.vendor.TERMS, **nvtx.step_range(self.m.job.work() if self.m.job is not None else "training"),
                      **(words or {})})
        fixes = own.get(window) or (own.get("", ()) if fallback else ())
        return [action(text.format_map(said), code.format_map(said), lang) for text, code in fixes]

    def words(self, text: str) -> str:
        """Prose in the words of the capture's GPU vendor (Matrix Cores and MIOpen on AMD; code: :meth:`code`)."""
        return self.vendor.words(text)

    def code(self, snippet: str) -> str:
        """A snippet for the capture's GPU: PyTorch's device is ``xpu`` on Intel GPUs, a native program's calls are
        HIP's on AMD GPUs (``devices.vendor_code``)."""
        return devices.vendor_code(self.vendor, snippet)

    def said(self, actions: Sequence[Action]) -> list[Action]:
        """``actions`` as the host is told them: their prose in its vendor's words (:meth:`words`), their code for its
        GPU (:meth:`code`) -- every fix a finding carries, also one added after the finding was made (a first call's
        steady window: ``rules._steady_first`` gave an Intel GPU ``ProfilerActivity.CUDA``, h37-words63)."""
        return [dataclasses.replace(a, text=self.words(a.text), snippet=self.code(a.snippet)) for a in actions]

    def fit(self, actions: Sequence[Action]) -> list[Action]:
        """The fixes the job's GPU can follow at the trace's framework version (``Framework.fit``): a feature its
        vendor's device lacks (CUDA graphs through torch.compile on an Intel GPU), or the framework's build on the
        job's operating system (expandable segments on Windows: ``Memory.platform``), is left out of the advice.
        The version the trace dates is its writer's (``Job.version_low``): where another framework ran the work
        (``CaptureQuality.work_framework``), whose fixes these are, that framework's version is not known -- a
        TensorFlow program under PyTorch 2.6's profiler is no TensorFlow 2.6 (h37-jaxwords65's *Left* 3, h37-vendor66)."""
        dated = self.m.job is not None and not self.m.capture.work_framework
        low = self.m.job.version_low if dated else None
        fitted = (self.fw.fit(a, self.vendor.VENDOR, low, self.m.memory.platform) for a in actions)
        return [a for a in fitted if a is not None]

    def share(self, ms: float | None) -> float | None:
        if ms is None or self.step_ms is None:
            return None
        return float(ms) / self.step_ms

    def graded(self, ms: float | None, warning: str, critical: str) -> tuple[float, str] | None:
        """(share of the step, severity) of ``ms`` against the thresholds ``warning`` / ``critical``; None
        without a step time or below the warning level: the opening of most rules, in one place."""
        share = self.share(ms)
        sev = grade(share, warning, critical)
        return None if sev is None or share is None else (share, sev)

    def graded_wait(self, headline_share: float | None, breakdown_ms: float | None, warning: str,
                    critical: str) -> tuple[float, str, float | None] | None:
        """(share of the step, severity, ms per step) of a wait the headline reports as a share (the breakdown's ms
        when it does not); None below the warning level: the opening of the wait rules (input, launch)."""
        share = self.step_share(headline_share, breakdown_ms)
        sev = grade(share, warning, critical)
        if sev is None or share is None:
            return None
        return share, sev, (share * self.step_ms if self.step_ms else None)

    def step_share(self, headline_share: float | None, breakdown_ms: float | None) -> float | None:
        """A headline share of step time or, when it is missing, the breakdown part / step time."""
        if headline_share is not None or not self.step_ms:
            return headline_share
        return self.share(breakdown_ms)

    def fid(self, rule_id: str, gpu: int | None = None) -> str:
        """Stable finding id: ``<rule>:<host>`` or ``<rule>:<host>:<gpu>``."""
        parts = [rule_id, self.host or "-"]
        if gpu is not None:
            parts.append(str(gpu))
        return ":".join(parts)


def gpu_work_recorded(m: HostMetrics) -> bool:
    """Whether the capture holds a record of the GPU's work: a GPU ran a kernel or collective (``GpuMetrics.active``),
    or the window's GPUs ran copies only (``Kind.window`` "copy_only").  The one answer every check asks before it
    speaks of the GPU's utilization or idle time: a window with no GPU work recorded (CUDA tracing off, the GPU
    tracer's records lost, a start-up-only window, a CPU-only XPlane, a memory snapshot) cannot show how busy the GPU
    was.  Why: a Kineto trace with CUDA unrecorded and its allocator's events read "A larger batch raises device
    utilization" of a GPU whose work it never saw (h37-jax61)."""
    kind = m.job.kind if m.job is not None else None
    return any(g.active for g in m.gpus) or (kind is not None and kind.window == "copy_only" and bool(m.gpus))


def gpu_steps_to_judge(m: HostMetrics) -> bool:
    """Whether the guide's GPU checks have work of the job's steps to judge: a GPU ran work, and the job's reading does
    not say the window's marks time no GPU step (``Kind.times_gpu_step``: the loop's end, CUDA tracing off).  Why: at the
    loop's end the GPU may still drain the last step's queue inside the profiler's exit sync (``Kind.queued``); that
    work is no step of the window, and judged as one it read as an input-bound 0.56 ms step whose GPU idled.  Nor where
    the capture kept the collectives alone (``CaptureQuality.collectives_only``): ``capture_quality`` says so."""
    # a capture of collectives alone (a filter of a fuller trace) holds none of the steps' work: its GPU bursts are
    # its collectives, its skew the ranks' unrecorded work before them (h37-straggle66)
    return any(g.active for g in m.gpus) and (m.job is None or m.job.kind.times_gpu_step) \
        and not m.capture.collectives_only


class _Said(dict):
    """The words a window fix's text and code are filled with; a key none fills stays as written (``{traced}`` in a
    fix asked for without the capture's own words)."""

    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _vendor(m: HostMetrics):  # noqa: ANN202 - a vendor module
    """The vendor of the GPUs that ran the capture's work, by their names; where none ran any the capture recorded
    (a memory snapshot), the one its allocator's frames name (``Memory.vendor``: a ROCm build's
    ``c10::hip::HIPCachingAllocator``), else the one whose runtime made the calls of a window that lost its GPU
    records (``Kind.runtime_vendor``), else NVIDIA's words as before.  Why: a snapshot's GPUs are never active, so an
    AMD GPU's snapshot was told CUDA's allocator settings (h37-snaprocm); a HIP window without kernel records was told
    "a PyTorch build made for the installed driver's CUDA" (h37-hiprocm36)."""
    return devices.vendor_called(capture_vendor(m))


def capture_vendor(m: HostMetrics) -> str | None:
    """The ``VENDOR`` the capture shows ran its GPU work (:func:`_vendor`'s order: the active GPUs' names, a
    snapshot's allocator frames, the runtime calls of a window that lost its GPU records, a backend the profiler does
    not trace: PyTorch's ``mps`` is Apple's), else the vendor naming every GPU the file lists (``Job.gpus_listed``:
    a window whose GPUs ran nothing still lists them -- a JAX window on an MI300X was told ``CudaDevice``,
    h37-window62), None where it shows none (a CPU-only capture listing no GPU, an accelerator no stage reads): the
    report's ``capture.vendor`` and the vendor every word of the host's report is in, one answer for the findings,
    the legend and the tables."""
    names = [g.name for g in m.gpus if g.active]
    kind = m.job.kind if m.job is not None else None
    if not names and kind is not None and kind.window == "copy_only":
        # its GPUs ran copies and no kernel: GPU work all the same, on the GPUs that copied (h37-probe43e: a rocprof
        # copy loop on an MI300X was told Nsight's NVTX ranges and `nsys profile`, its vendor none)
        names = [g.name for g in m.gpus]
    backend = devices.vendor_of_backend(kind.untraced_backend) if kind is not None else None
    said = m.memory.vendor or (kind.runtime_vendor if kind is not None else "") or (backend.VENDOR if backend else "")
    if any(names) or (names and not said):
        return devices.vendor_of(names).VENDOR
    if not said and m.job is not None and m.job.gpus_listed:  # no GPU work recorded: the GPUs the process listed
        said = devices.vendor_claimed(listed_gpu_models(m.job.gpus_listed)) or ""
    if not said and m.job is not None and m.job.gpu_vendor in devices.UNSETTLED_NAMES and not (kind and kind.unread_devices):
        # nothing in the file names a vendor (``Job.gpu_vendor``: no runtime call, header key, vendor's op or
        # backend): its words are every vendor's, not NVIDIA's by default -- a start-up window of an unknown
        # runtime's calls was told ``torch.cuda`` and CUDA (h37-vendor66); ``unknown`` claims no vendor.  Not where the
        # work ran on an accelerator no stage reads (MTIA, TPU: ``Kind.unread_devices``): no GPU to speak of
        said = m.job.gpu_vendor
    return said or None


# --------------------------------------------------------------------------- grading


# --------------------------------------------------------------------------- formatting




def us(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1f} us"


def count(x: float | int | None) -> str:
    if x is None:
        return "n/a"
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.1f}"


def _whole(x: float | int) -> bool:
    """Whether a count is whole, up to the float error a sum over steps divided by their number leaves."""
    v = float(x)
    return abs(v - round(v)) <= 1e-9 * max(1.0, abs(v))


def mean_count(x: float | int) -> str:
    """A count per step, a mean over the kept steps, to 0.1: "92" where it is whole, "3.0" where it is not though it
    rounds to a whole -- "3 kernels per step" of a mean of 3.018 claimed every step ran 3 (walk --xplane 170171: an
    un-jitted loop's steps, one of which held an extra kernel), and its "on average" (:meth:`Ctx.mean_words`) must
    fit the number printed."""
    return count(round(x)) if _whole(x) else f"{round(float(x), 1):,.1f}"


def n_of(k: float | int, noun: str, plural: str | None = None, mean: bool = False) -> str:
    """``1 copy``, ``2 copies``, ``1.5 copies``: a count with its noun in the number it needs (``mean``: a mean per
    step, printed by :func:`mean_count`)."""
    word = noun if float(k) == 1.0 else (plural or (noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou"
                                                     else noun + ("es" if noun.endswith(("s", "sh", "ch", "x")) else "s")))
    return f"{mean_count(k) if mean and not _whole(k) else count(k)} {word}"


def the_others(k: int, noun: str, verb: str, many: str | None = None) -> str:
    """The others and what they do, in the number their count needs: "the other GPU spends" beside one other (a 2-GPU
    job: h37-review10, ddp_overlap_rtx3090 read "the others spend 33.6 ms more"), else ``many`` ("the others spend")
    or "the other 3 GPUs spend"."""
    if float(k) == 1.0:
        return f"the other {noun} {verb}{'es' if verb.endswith(('s', 'sh', 'ch', 'x', 'o')) else 's'}"
    return many or f"the other {n_of(k, noun)} {verb}"


def r(x: float | None, nd: int = 3) -> float | None:
    """Round for JSON evidence (None-safe)."""
    return None if x is None else round(float(x), nd)


# --------------------------------------------------------------------------- builders


def share_metric(
    id: str,
    label: str,
    value: float | None,
    threshold: str | None = None,
    meaning: str = "",
    severity: str | None = None,
    detail: dict[str, Any] | None = None,
) -> Metric:
    """A share-of-step (fraction) metric with its threshold from the table: better higher where the threshold is a
    floor (``direction == "below"``), else lower."""
    t = THRESHOLDS[threshold] if threshold else None
    good = "higher" if t is not None and t.direction == "below" else "lower"
    return value_metric(id, label, value, "share", pct(value), threshold, meaning, severity, good, detail)


def value_metric(
    id: str,
    label: str,
    value: float | None,
    unit: str,
    display: str,
    threshold: str | None = None,
    meaning: str = "",
    severity: str | None = None,
    good_direction: str = "lower",
    detail: dict[str, Any] | None = None,
) -> Metric:
    t = THRESHOLDS[threshold] if threshold else None
    return Metric(
        id=id,
        label=label,
        value=r(value, 4),
        unit=unit,
        display=display,
        good_direction=good_direction,  # type: ignore[arg-type]
        status=_status(severity),
        meaning=meaning or (t.meaning if t else ""),
        threshold=t.value if t else None,
        detail={"threshold_name": t.name, "threshold_source": t.source, **(detail or {})} if t else dict(detail or {}),
    )


#: a time as :func:`ms` prints it that is not zero: a non-zero digit in it
_SHOWS = re.compile(r"[1-9]")


def _status(severity: str | None) -> str:
    return {"critical": "critical", "warning": "warning", "info": "good", "ok": "good"}.get(severity or "", "unknown")


def saving(ctx: Ctx, ms_per_step: float | None, assumption: str,
           recovers: Sequence[tuple[str, str, float]], paced: bool = True) -> Saving | None:
    """Saving in ms/step and percent of the step (0-100), clipped to [0, step], with the time it recovers.

    ``recovers``: ``(group, pool, ms)`` claims (rules/savings.py), scaled to add up to the saving.  ``paced``: the
    fix makes kernels faster but keeps their launches, so where the host paces the GPU its kernel-time claims are
    capped (:func:`critical_cap`); a fix that removes the launches of the kernels it saves (fusing a chain into one
    kernel, dropping casts) takes the host's pacing of them away with them, and is not.
    """
    if ms_per_step is None or ctx.step_ms is None:
        return None
    v = max(0.0, min(float(ms_per_step), ctx.step_ms))
    shares = ctx.m.compute_critical_share
    touched = sorted({POOL_CLASS[p] for _, p, x in recovers if p in CRITICAL_POOLS and x > 0} & set(shares))
    v, recovers, cut = critical_cap(v, recovers, ctx.m.compute_critical_ms if paced else None, shares)
    v, recovers, below = floor_cap(v, recovers, ctx.m.breakdown.device_compute, ctx.m.flops.floor_ms_per_step)
    if below >= ms_step(v) / 2 and _SHOWS.search(ms(below)):
        assumption += FLOORED.format(floor=ms(ctx.m.flops.floor_ms_per_step), cut=ms(below))
    # a cut the saving as printed does not show is no caveat (h37-review12), nor one that prints as nothing: half a
    # microsecond is half the saving's last digit yet "0 us" (the format rounds the tie to even; walk seed 25171)
    if cut >= ms_step(v) / 2 and _SHOWS.search(ms(cut)):
        # a share under all of its class prints the digits that show it is under (99.96%, never "100.0%" beside the
        # time it leaves out); where every class is wholly critical the step-wide cap made the cut, said as such
        # (walk seed 125022: "(100.0% of the matmul/convolution kernels' time) ... the rest of the time")
        share = ", ".join(f"{pct_part(shares[c])} of the {_CLASS_WORDS[c]}" for c in touched) \
            if any(shares[c] < 1.0 for c in touched) else ""
        assumption += (CAPPED_SHARE.format(share=share, cut=ms(cut)) if share else
                       CAPPED.format(cap=ms(ctx.m.compute_critical_ms), cut=ms(cut)))
    return Saving(ms_per_step=round(v, 3), percent_of_step=round(100.0 * v / ctx.step_ms, 2),
                  # read by the user like the summary: the GPU's vendor's words, of the host's window ("shortens the
                  # {step}": "the pass" on one pass, h37-onepass2)
                  assumption=ctx.words(ctx.window_words(assumption)),
                  recovers=parts(v, recovers))


#: A sentence's pointer to other findings: a placeholder the rule writes, filled once every finding it may point to
#: is known (:func:`fill_pointers`: the session's at the end of ``rules.evaluate_session``, each host's in
#: ``report.merge.merge_hosts``) with its words where one of the rules it names fired, else with nothing (h37-review12:
#: demo multi_host's AllReduce note read "(see the straggler findings)" in a report with none,
#: ddp_overlap_rtx3090's "(see imbalance and launch skew)" beside neither).
#: the guide's first overview number's label, of the host's window (``Ctx.window_words``): "Device pass-time share" on
#: a capture read as one pass, whose other words say "the 28.5 ms pass", "Device forward-pass-time share" on one
#: marked forward pass (h37-onepass); the card and the idle findings' metric share it
DEVICE_SHARE_LABEL = "Device {step-}-time share"

SEE_STRAGGLERS = "{see_stragglers}"
SEE_IMBALANCE = "{see_imbalance}"
#: placeholder -> (its words, the rules whose findings they point to)
POINTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    SEE_STRAGGLERS: (" (see the straggler findings)", ("rank_straggler", "node_straggler", "gpu_imbalance", "launch_skew")),
    SEE_IMBALANCE: (" (see imbalance and launch skew)", ("gpu_imbalance", "launch_skew")),
}


def fill_pointers(findings: Iterable[Finding], fired: Iterable[str], beside: Iterable[Finding] = ()) -> None:
    """Fill each finding's pointer placeholders (:data:`POINTERS`) in place: their words where one of the rules they
    name is among ``fired`` (the rules of every finding the reader sees beside it), else nothing; and a capped
    saving's :data:`HOST_FIX` by the findings the reader sees beside it (``findings`` and ``beside``:
    :func:`host_fix_words`)."""
    findings = list(findings)
    fired = set(fired)
    seen = findings + [f for f in beside if all(f is not g for g in findings)]

    def said(key: str) -> str:
        words, targets = POINTERS[key]
        return words if fired.intersection(targets) else ""

    for f in findings:
        f.summary = f.summary.replace("{see_stragglers}", said(SEE_STRAGGLERS)).replace("{see_imbalance}",
                                                                                         said(SEE_IMBALANCE))
        if f.saving is not None and HOST_FIX in f.saving.assumption:
            f.saving.assumption = f.saving.assumption.replace("{host_fix}",
                                                              host_fix_words(g for g in seen if g is not f))


#: A capped saving's words on the kernel time it leaves out (:data:`CAPPED_SHARE`, :data:`CAPPED`): a placeholder
#: the saving writes, filled once every finding of the report is known (:func:`fill_pointers`, :func:`host_fix_words`)
#: -- a fix is named only where a finding of the report gives it, else the words say why the saving stops there.
#: Why: dlrm_a100_alltoall's, jax_mi355x's and d2d_v100's savings said "more once the host-bound fix lands" beside no
#: such finding (survey h37-survey36, "Read and left"), and loader_pass_rtx5070ti's beside an input wait's.
#: What a kernel trace alone holds (``HostMetrics.host_recorded`` False), said where a finding would word the host's
#: time: the capture saw the GPU's work only, so the host's time is unobserved -- its code, a wait or the launches
#: themselves, the capture cannot say (h37-hostless: rocprof_aiter_mi355x's idle was "the host's own code, or a wait
#: ... the capture traced no context switches", as if the host had been recorded and showed nothing).
NO_HOST = "the capture recorded only the GPU's kernels, nothing of the host (no runtime call, launch, op or range)"

HOST_FIX = "{host_fix}"
HOST_FIX_WORDS = {"host": " more once the host-bound fix lands",
                  "none": " left out: the host, not these kernels, sets the pace there, and no finding of this report "
                          "gives back that idle"}
#: the pools whose claims give back GPU idle the host's pacing causes inside the step: the host's own work and its
#: launches (rules/savings.POOLS)
HOST_PACING_POOLS = frozenset({"host_own", "launch"})


def fixes_host_pacing(f: Finding) -> bool:
    """Whether finding ``f``'s fix shortens the host's pacing of the GPU: its saving claims GPU idle of the host's own
    work or its launches (:data:`HOST_PACING_POOLS`) -- the host-bound, launch-bound and eager findings'.  Not a
    finding of copies (it claims the copies' time too): the idle it claims there is the host inside its copies' calls
    (their staging, their waits), which pinning removes without touching the host's own pacing (h37-pexsi:
    loader_pass_rtx5070ti's staged batch read "more once the host-bound fix lands" beside no such finding).  A claim
    on the launch group counts whatever its pool: a sync's idle there (pool ``sync_idle``, apart from the launch
    check's since h37-probe42s) is the host launching late because it waited."""
    return f.saving is not None and not any(r["group"] == "copies" and float(r["ms"]) > 0 for r in f.saving.recovers) \
        and any((r["pool"] in HOST_PACING_POOLS or r["group"] == "launch") and float(r["ms"]) > 0
                for r in f.saving.recovers)


def gives_back_idle(f: Finding) -> bool:
    """Whether finding ``f``'s fix gives back GPU idle the host causes (its saving claims a group of
    :data:`~.savings.IDLE_GROUPS`: input, launch, host, allocator, start-up) -- what makes more kernel time critical
    (:func:`critical_cap`)."""
    return f.saving is not None and any(r["group"] in IDLE_GROUPS and float(r["ms"]) > 0 for r in f.saving.recovers)


def host_fix_words(findings: Iterable[Finding]) -> str:
    """What fills a capped saving's :data:`HOST_FIX`, given every finding the reader sees: the host-bound fix where
    one of them shortens the host's pacing (:func:`fixes_host_pacing`); else the finding that gives back the most of
    the GPU's idle the host causes (:func:`gives_back_idle`: an input wait, the allocator), by its title; else why
    the saving stops there."""
    findings = list(findings)
    if any(fixes_host_pacing(f) for f in findings):
        return HOST_FIX_WORDS["host"]
    idle = [f for f in findings if gives_back_idle(f)]
    if idle:
        best = max(idle, key=lambda f: (f.saving.ms_per_step if f.saving else 0.0, f.id))
        return f" more once the fix of \"{best.title}\" lands"
    return HOST_FIX_WORDS["none"]


#: what a saving capped by :func:`critical_cap` adds to its assumption: by the critical share of the kernels the fix
#: speeds up, or (no share measured) by the step's critical kernel time
CAPPED_SHARE = ("; only the part of those kernels' time that the GPU's next work waited for shortens the {{step}} ({share}): "
                "the GPU idles waiting for the host the rest of the time, so a faster kernel there only lengthens that "
                "idle ({cut}{{host_fix}})")
_CLASS_WORDS = {"matmul": "matmul/convolution kernels' time", "other": "other kernels' time"}
CAPPED = ("; at most the {cap} of kernel time per step that the GPU's next work waited for: the GPU idles waiting "
          "for the host the rest of the time, so a faster kernel there only lengthens that idle ({cut}{{host_fix}})")


#: the caveat of a saving the GPU's peaks cap (:func:`floor_cap`), of its {step}
FLOORED = ("; at most the kernel time above the {floor} per {{step}} that the work of known FLOPs and bytes needs at "
           "the GPU's peak FLOP/s and memory bandwidth: no kernel beats its GPU's peak ({cut} less)")


def floor_cap(total_ms: float, recovers: Sequence[tuple[str, str, float]], compute_ms: float | None,
              floor_ms: float | None) -> tuple[float, list[tuple[str, str, float]], float]:
    """(saving, claims, ms cut) with the claims on kernel time whose fix keeps the work's precision
    (:data:`~.savings.FLOORED_POOLS`) capped at the kernel
    time above its floor: ``compute_ms`` (the step's kernel time, ms per step and GPU) less ``floor_ms`` (the least
    time the work of known FLOPs and bytes takes at the GPU's peaks, ``Flops.floor_ms_per_step``).

    Why: a faster kernel cannot beat its GPU's peak -- "filling the SMs" of a batch-1 decode whose GEMVs already read
    their weights near the memory bandwidth saves nothing, whatever its grid (issue #37, h37-floor34).  Every rule's
    saving passes here (:func:`saving`); without a known floor (no shapes, no peak) nothing is capped."""
    claims = [(g, p, max(0.0, float(x))) for g, p, x in recovers]
    raw = sum(x for _, _, x in claims)
    if floor_ms is None or compute_ms is None or raw <= 0 or total_ms <= 0:
        return total_ms, claims, 0.0
    scale = total_ms / raw
    kern = sum(x for _, p, x in claims if p in FLOORED_POOLS) * scale
    cut = kern - min(kern, max(0.0, compute_ms - floor_ms))
    if cut <= 0:
        return total_ms, claims, 0.0
    k = cut / kern
    out = [(g, p, x * scale * (1.0 - k) if p in FLOORED_POOLS else x * scale) for g, p, x in claims]
    return total_ms - cut, out, cut


def critical_cap(total_ms: float, recovers: Sequence[tuple[str, str, float]], critical_ms: float | None,
                 shares: dict[str, float] | None = None) -> tuple[float, list[tuple[str, str, float]], float]:
    """(saving, claims, ms cut) with the claims on kernel time (:data:`~.savings.CRITICAL_POOLS`) capped at the
    kernel time the GPU's next work waited for (``HostMetrics.compute_critical_ms``, issue #37): a kernel's speed-up
    shortens the step only where the GPU, not the host, is the bottleneck.  Every rule's saving passes here
    (:func:`saving`), so no rule sizes it alone; without a measure (no launch known) nothing is capped.

    A fix that also gives back GPU idle the host causes (its own claims in :data:`~.savings.IDLE_GROUPS`) makes at
    most that much more kernel time critical, so its cap is the critical time plus its own idle claims.  Another
    finding's host fix is not counted here: each saving stands alone, and "if every fix lands" adds up the savings as
    the findings state them (docs/report-schema.md, Savings).

    Per kernel class (``shares``: ``HostMetrics.compute_critical_share``, each class's critical share of its kernel
    time): a fix speeds up the kernels of its pool's class (:data:`~.savings.POOL_CLASS`), and only their critical
    part shortens the step, so each claim keeps its class's share -- a fusion of element-wise kernels the host paces
    saves nothing even where the step's GEMMs are all critical.  The step-wide cap above still bounds the total."""
    claims = [(g, p, max(0.0, float(x))) for g, p, x in recovers]
    raw = sum(x for _, _, x in claims)
    if critical_ms is None or raw <= 0 or total_ms <= 0:
        return total_ms, claims, 0.0
    scale = total_ms / raw  # the claims as parts() scales them to the saving
    kern = sum(x for _, p, x in claims if p in CRITICAL_POOLS) * scale
    freed = sum(x for g, _, x in claims if g in IDLE_GROUPS) * scale
    if kern <= 0:
        return total_ms, claims, 0.0
    # each kernel claim's part off the critical path: by its class's share where measured, else the step's cap
    step_cut = max(0.0, kern - max(0.0, critical_ms))
    own = [x * scale * (1.0 - min(1.0, max(0.0, shares[POOL_CLASS[p]])))
           if p in CRITICAL_POOLS and shares and POOL_CLASS[p] in shares else
           (x * scale * step_cut / kern if p in CRITICAL_POOLS else 0.0) for _, p, x in claims]
    off = max(sum(own), step_cut)
    cut = max(0.0, off - freed)
    if cut <= 0:
        return total_ms, claims, 0.0
    if sum(own) < off:  # the step-wide cap binds: spread it over the kernel claims
        own = [x * scale * off / kern if p in CRITICAL_POOLS else 0.0 for _, p, x in claims]
    k = cut / sum(own)
    out = [(g, p, x * scale - c * k) for (g, p, x), c in zip(claims, own)]
    return total_ms - cut, out, cut


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> Table:
    return Table(title=title, columns=list(columns), rows=[[_scalar(v) for v in row] for row in rows])


def in_ranges(ctx: Ctx, claims: dict[str, float], what: str = "the GPU's idle time") -> str:
    """Where in the program's code the host holds the GPU idle: its own ranges (NVTX, ``record_function``) holding at
    least a tenth of the finding's time, so the user knows where to look (issue #37); "" where the capture marks none
    or none stands out.

    ``claims``: ledger category -> ms per step the finding claims of it; each range is given its share of that claim
    (:func:`ranges_part`), so the ranges named never add up to more than the finding's own time and a microsecond
    another finding claims (the allocator's, a host sync's) is not said again here."""
    own = sum(claims.values())
    parts = ranges_part(ctx, claims)
    named = [f"`{n}` {ms(v)}" for n, v in parts if v >= 0.1 * own]
    if not named:
        return ""
    shared = _claim_scales(ctx, claims)
    extra = (" (each its share of this time: other findings claim the rest of the idle there)"
             if any(shared.get(c, 1.0) < 0.999 for c, v in claims.items() if v > 0) else "")
    return f"; {what} lies in the program's own ranges {', '.join(named)} {ctx.a_step}{extra}"


def ranges_part(ctx: Ctx, claims: dict[str, float]) -> list[tuple[str, float]]:
    """(range, ms per step) of the finding's time each of the program's ranges holds, longest first: its idle the
    step ledger books in each category of ``claims`` (``HostMetrics.idle_in_ranges_by``), times the share of that
    category the finding claims (:func:`_claim_scales`).

    Why: a finding's claim on the host's time is the ledger's category less what other findings claim of it (host
    syncs, eager dispatch, gaps), which are no intervals -- tiny_block_h100_infer's host-bound 0.9 ms named ranges
    holding more than that, hedged "(with what other findings claim there)".  Scaled, each category's parts add up
    to at most its claim, so the named ranges never exceed the finding's time (h37-left31's left)."""
    scale = _claim_scales(ctx, claims)
    out = [(n, sum(parts.get(c, 0.0) * scale.get(c, 0.0) for c in claims))
           for n, parts in ctx.m.idle_in_ranges_by.items()]
    return sorted(((n, v) for n, v in out if v > 0), key=lambda nv: (-nv[1], nv[0]))


def _claim_scales(ctx: Ctx, claims: dict[str, float]) -> dict[str, float]:
    """Ledger category -> the share of its time the finding claims: its claim over the category's time per step (the
    ledger's, or the ranges' together where rounding puts that above it), at most 1."""
    led = ctx.m.breakdown
    out = {}
    for c, claim in claims.items():
        whole = max(float(getattr(led, c, 0.0) or 0.0),
                    sum(p.get(c, 0.0) for p in ctx.m.idle_in_ranges_by.values()))
        out[c] = min(1.0, max(0.0, claim) / whole) if whole > 0 else 0.0
    return out


def ranges_table(ctx: Ctx) -> list[Table]:
    """The evidence of :func:`in_ranges`: the ranges and their idle time per step; none where there are none."""
    rows = [[n, v] for n, v in ctx.m.idle_in_ranges]
    return [table("The GPU's idle time inside the program's own ranges (the busiest thread's outermost ranges below "
                  f"the {{step}}; ms {ctx.per_step})", ["range", "ms"], rows)] if rows else []


def traced_python(ctx: Ctx, host_ms: float, inside: float | None = None) -> str:
    """The profiler's own cost in a finding that rests on the host's time, in words: where the capture recorded every
    Python call (``CaptureQuality.python_tracing``), how many per step and how much of ``host_ms`` (the finding's
    host time per step, GPU idle) they may cost -- the calls made while the GPU ran nothing (a recording while the GPU
    works ahead costs the step nothing) times the least time a recorded call takes in this file, its recording
    included (``metrics.capture._call_period_us``), never more than ``host_ms`` -- and how to measure the host
    without it; "" where nothing was traced.

    Why: xDiT's SD 3.5 on an MI300X (survey h37-survey37) is host-bound by 468 ms a step under ``with_stack``'s
    134,151 Python calls in that step: part of the host's time is the tracer's, and the finding said nothing of it.
    A caveat, not a change to the ledger: the calls' cost is bounded from the file, not measured apart.

    ``inside``: where the finding knows its own host time's stretches, the idle calls counted in them, per step
    (``HostInput.traced_calls_per_step``: the input wait's), whose cost is then the finding's own -- not its share of
    the step's idle (h37-pystack's left: an in-process DataLoader's ``__next__`` runs traced Python too)."""
    pt = ctx.m.capture.python_tracing
    if pt.calls_per_step < 1 or pt.idle_calls_per_step < 0.5 or host_ms <= 0:  # none lengthens the GPU's idle
        return ""
    if inside is not None:
        return _traced_inside(ctx, host_ms, inside)
    calls = (f"{ctx.count_per_step(pt.calls_per_step, 'Python call')}, {n_of(round(pt.idle_calls_per_step), 'call')} "
             f"of them while the GPU ran nothing")
    if pt.call_us is None:
        cost = ", each adding to the host's time by an amount this file's clock cannot resolve"
    else:
        cost_ms = pt.idle_calls_per_step * pt.call_us / 1000.0
        dev = ctx.m.headline.device_step_share
        idle = (ctx.step_ms or 0.0) * (1.0 - dev) if dev is not None else 0.0
        # the finding's part: its share of the GPU's idle, as the calls spread over that idle; never above its time
        part = min(host_ms, cost_ms * min(1.0, host_ms / idle) if idle > 0 else cost_ms)
        cost = (f"; at {pt.call_us:.2f} us a call (the least two back-to-back calls take in this capture, their "
                f"recording included) those cost up to {ms(cost_ms)} of the GPU's {ms(idle)} idle {ctx.a_step}, "
                f"about {ms(part)} of this {ms(host_ms)} ({pct(part / host_ms)}) -- time a run without the profiler "
                f"does not spend")
    return f" The capture recorded {ctx.fw.label('python_tracing')}: {calls}{cost}; {ctx.fw.label('python_tracing_confirm')}."


def _traced_inside(ctx: Ctx, host_ms: float, calls: float) -> str:
    """:func:`traced_python`'s words for the calls counted inside the finding's own host time (``calls`` per step,
    those while the GPU ran nothing): their cost at the file's least call period, never above ``host_ms``."""
    pt = ctx.m.capture.python_tracing
    if calls < 0.5:  # nothing traced inside the wait itself
        return ""
    said = f"{ctx.count_per_step(calls, 'Python call')} inside this wait while the GPU ran nothing"
    if pt.call_us is None:
        cost = ", each adding to the host's time by an amount this file's clock cannot resolve"
    else:
        part = min(host_ms, calls * pt.call_us / 1000.0)
        cost = (f"; at {pt.call_us:.2f} us a call (the least two back-to-back calls take in this capture, their "
                f"recording included) those cost up to {ms(part)} of this {ms(host_ms)} ({pct(part / host_ms)}) -- time "
                f"a run without the profiler does not spend")
    return f" The capture recorded {ctx.fw.label('python_tracing')}: {said}{cost}; {ctx.fw.label('python_tracing_confirm')}."


def profiler_words(ctx: Ctx) -> str:
    """The ledger's ``profiler`` time (per step), booked apart from the host's work and waits, in a sentence; "" under
    a microsecond.

    Why: each wait belongs to its cause.  torchprof-XDU's ResNet-50 pass (RTX 5070 Ti Laptop GPU, wild58 torch58)
    idled 0.88 ms inside its input's copy while the profiler requested an activity buffer; the host-bound finding
    read it as the host's own code and sized its compile fix on it.  The ledger books it once (h37-ledger59); a
    finding on the host's time says that it is not among its own."""
    own = ctx.m.breakdown.profiler
    if own < 1e-3:
        return ""
    return (f" Not in this time: {ms(own)} {ctx.a_step} the GPU idled while the program's thread waited for the "
            f"profiler's own work (its activity buffer requests, recorded as `overhead` events; the breakdown's "
            f"\"profiler\" time) -- time a run without the profiler does not spend and no change to the program removes.")


def in_os_waits(ctx: Ctx, host_ms: float) -> str:
    """The blocking OS calls (Nsight's OS runtime trace: ``read``, ``getc``, ``pthread_cond_wait``) the thread launching
    the GPU's work sat in while the GPU idled in the step, each at least a tenth of ``host_ms``
    (``HostMetrics.idle_in_os_waits``): a host that waits on a file or another thread is no host at work; "" where
    none was traced or none stands out."""
    named = [f"`{n}` {ms(v)}" for n, v in ctx.m.idle_in_os_waits if v >= 0.1 * host_ms]
    return (f"; the thread launching the GPU's work was blocked in the OS (OS runtime or scheduler trace): "
            f"{', '.join(named)} {ctx.a_step}"
            if named else "")


def wait_covered(recorded_ms: float, unrecorded_ms: float) -> str:
    """What the capture recorded around a wait, in words, by the ledger's parts of it (``recorded_ms``: under the
    program's own ops or ranges, ``host_compute``; ``unrecorded_ms``: under nothing, ``other``): nothing, or the
    program's ops and ranges around it -- which run no code there while the thread sleeps, but do cover the time."""
    return (", where no runtime call, op or range of the capture covers it" if unrecorded_ms >= recorded_ms else
            ", inside the program's own ops or ranges (they span the wait; no code of theirs ran)")


def in_async_stalls(ctx: Ctx, part_ms: float, stalls: list[tuple[str, float]] | None = None) -> str:
    """The slow asynchronous calls the host stalled in while the GPU idled in the step (``stalls``: (call, ms per
    step) measured inside the finding's own idle -- the host-sync finding's, ``HostSyncs.idle_in_async_stalls`` --;
    by default the step's, ``HostMetrics.idle_in_async_stalls``, booked with the host's work), where they are at least
    a tenth of ``part_ms``, in words; "" where none stands out.  Why: such a call waits for no GPU work, so its time is
    the runtime's -- the driver, a lock, the OS -- and no change to the program's own code between launches gives it
    back (h37-asyncslow32)."""
    named = [(n, v) for n, v in (ctx.m.idle_in_async_stalls if stalls is None else stalls) if v >= 0.1 * part_ms]
    if not named or part_ms <= 0:
        return ""
    inside = min(part_ms, sum(v for _, v in named))  # a part of the whole it is said of, never more
    return (f"; {ms(inside)} {ctx.a_step} of it the host spent inside asynchronous runtime calls of milliseconds "
            f"({', '.join(f'`{n}`' for n, _ in named)}) that wait for no GPU work: the runtime's own time (the driver, "
            "a lock, the OS), not the program's code")


def ran_witness(m: HostMetrics, thread: str = "its thread") -> str:
    """What shows that the thread launching the GPU's work ran through its time no event records
    (``HostMetrics.waits_traced``), in words: the scheduler's trace of it on the CPU, or an OS runtime trace that
    records every call of the threshold or longer and holds none of that thread there; "" where nothing shows it."""
    if m.waits_traced == "scheduler":
        return f"the scheduler's trace shows {thread} on the CPU"
    if m.waits_traced == "os runtime":
        return (f"the OS runtime trace, which records every OS call of {us(m.os_runtime_threshold_us or 0.0)} or "
                f"longer, holds none of {thread} then: a wait for anything outside the program (a file, a socket, "
                f"a lock, a timer) is such a call, so the thread ran, or was preempted")
    return ""


def os_waits_table(ctx: Ctx) -> list[Table]:
    """The evidence of :func:`in_os_waits`: the calls and the GPU idle time per step the launching thread spent in
    them; none where there are none."""
    rows = [[n, v] for n, v in ctx.m.idle_in_os_waits]
    return [table("OS calls the thread launching the GPU's work was blocked in while the GPU idled (OS runtime trace; "
                  f"ms {ctx.per_step})", ["call", "ms"], rows)] if rows else []


def _scalar(v: Any) -> Any:
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        v = v.item()
    if isinstance(v, float):
        if not math.isfinite(v):
            return None
        return round(v, 4)
    return v


class _Columns:
    """A step row whose fields are columns: ``key(_Columns(b))`` runs a rule's row key (``lambda s:
    s.breakdown.a + s.breakdown.b``) once over every row of the block, in the same float operations and order."""

    def __init__(self, block: Any):
        self.step, self.start_ms, self.step_ms = block.step, block.start_ms, block.step_ms
        self.breakdown = SimpleNamespace(**{c: block.mat[:, j] for j, c in enumerate(BREAKDOWN_CATEGORIES)})


def _column_key(detail: Sequence[Any], gpu: int | None, key: Callable[[Any], float]) -> tuple[Any, np.ndarray] | None:
    """(``gpu``'s one column block, ``key`` of each of its rows) -- None where the rows are not one column block, or
    the key is not arithmetic on the columns (then :func:`pick_steps` ranks the row objects)."""
    block = _one_block(detail, gpu)
    if block is None:
        return None
    try:
        k = key(_Columns(block))  # type: ignore[arg-type]
    except (AttributeError, TypeError, ValueError):
        return None
    if not isinstance(k, np.ndarray) or k.shape != block.step.shape or k.dtype.kind != "f" or np.isnan(k).any():
        return None
    return block, k


def _one_block(detail: Sequence[Any], gpu: int | None) -> Any | None:
    """``gpu``'s rows where they are one column block of a StepTable that holds no row lists, else None."""
    if not isinstance(detail, StepTable) or any(isinstance(b, list) for b in detail.blocks):
        return None
    blocks = [b for b in detail.blocks if b.gpu == gpu]
    return blocks[0] if len(blocks) == 1 and hasattr(blocks[0], "take") else None


def _top_n(k: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` largest of ``k``, largest first, ties in index order: ``sorted(range(len(k)), key=lambda
    i: -k[i])[:n]`` (a stable sort) in O(rows) -- a partition finds the n-th largest, only the rows at or above it
    are sorted."""
    if n <= 0:
        return np.zeros(0, np.int64)
    if n >= k.shape[0]:
        return np.argsort(-k, kind="stable")
    cut = np.partition(k, k.shape[0] - n)[k.shape[0] - n]  # the n-th largest
    above = np.flatnonzero(k > cut)
    idx = np.concatenate([above, np.flatnonzero(k == cut)[:n - above.shape[0]]])
    idx.sort()  # index order, so that the stable sort below breaks ties as sorted() over the rows did
    return idx[np.argsort(-k[idx], kind="stable")]


def pick_steps(detail: Sequence[Any], gpu: int | None, key: Callable[[Any], float] | None, n: int) -> list[Any]:
    """The ``n`` rows of ``gpu`` (None: host-wide) with the largest ``key``, largest first, ties in row order; without
    ``key`` the first ``n`` rows.

    Why columns (issue #38): a 1 GB Nsight export has ~470 k host-wide rows; making a StepMetrics object of each
    (~4 us) only to keep three took ~1.9 s.  The rows are ranked on the columns and only the chosen ones are made --
    the same rows in the same order as ranking the objects (``tests/rules/test_pick_steps.py``)."""
    if key is not None:
        found = _column_key(detail, gpu, key)
        if found is not None:
            block, k = found
            return block.take(_top_n(k, n)).rows()
    else:
        block = _one_block(detail, gpu)
        if block is not None:
            return block.take(np.arange(min(max(n, 0), block.step.shape[0]))).rows()
    rows = rows_of_gpu(detail, gpu)
    return sorted(rows, key=lambda s: -key(s))[:n] if key else rows[:n]


def step_windows(
    ctx: Ctx,
    key: Callable[[Any], float] | None = None,
    label: str = "step",
    n: int = 3,
    gpu: int | None = None,
    *,
    draws: Sequence[str] = (),
    claimed_ms: float | None = None,
) -> list[TimeWindow]:
    """Trace-viewer windows for the ``n`` worst kept steps, each labelled with the time its finding says of that step
    ("launch wait, step 3 (2.80 ms)").

    The one rule of a window's number (issue #37, one account of every capture): a finding names the ledger categories
    its time is booked in (``draws``) and, where it claims only part of them, its own time per step (``claimed_ms``:
    what its text says, its share of the mean step's ``draws``).  Each step's window then claims the finding's share
    of that step's categories -- on a capture of one step exactly the text's value, over several the steps' parts of
    it in the ledger's proportion, their mean the text's.  Where the ledger holds no honest per-step value of the
    finding's time (it claims more than its categories hold, or names none: a time measured apart from the ledger),
    the label says so -- "(not measured per step)" -- instead of printing a second value of one quantity or dropping
    the number unsaid.  h37-windows60: the host-bound, outside-wait and unrecorded-time findings, the launch wait less
    the syncs', the syncs' own idle and the small-grid kernels each had their own way (a scaled key, a dropped number,
    a whole category under a part's words).

    ``key`` is for a finding whose time per step is a step row's own quantity (not a share of categories):
    a copy's blocking time, the unseen work less what precedes the capture.  Without ``key`` or ``draws`` the windows
    are the first kept steps, with no time.  Rows are the host-wide rows (``gpu is None``) unless ``gpu`` is given; a
    host-wide window is the step's detected window, which holds the step on every GPU (a row's start plus its mean step
    time would show only the first GPU's part where GPUs run the step one after another, as on the real 8 x V100
    capture); a GPU's window is that GPU's step.  Without per-step rows, falls back to the first kept step windows.
    """
    unmeasured = False
    if draws:
        whole = sum(float(getattr(ctx.m.breakdown, c)) for c in draws)
        share = 1.0 if claimed_ms is None else claimed_ms / whole if whole > 0 else float("inf")
        unmeasured = share > 1.0 + 1e-6 and (claimed_ms or 0.0) - whole > 5e-4  # more than its categories hold
        part = 1.0 if unmeasured else min(share, 1.0)
        key = lambda st: part * sum(getattr(st.breakdown, c) for c in draws)  # noqa: E731  (columns too: pick_steps)
    elif claimed_ms is not None:
        unmeasured = True  # a time the ledger does not hold per step: said, not a row's category under its words
    chosen = pick_steps(ctx.m.steps_detail, gpu, key, n)
    if key is not None and not unmeasured:  # a window claims time its step holds: none where the step holds none of it
        # -- unless no step holds any: then the first steps, each claiming its nothing, as the text says "0 us of each"
        chosen = [s for s in chosen if key(s) > 0] or chosen
    out: list[TimeWindow] = []
    if chosen:
        spans = {w.step: (w.start_ms, w.end_ms) for w in ctx.m.steps.windows} if gpu is None else {}
        for s in sorted(chosen, key=lambda s: s.start_ms):
            extra = f" ({UNMEASURED})" if unmeasured else f" ({ms(key(s))})" if key else ""
            start, end = spans.get(s.step, (s.start_ms, s.start_ms + s.step_ms))
            out.append(
                TimeWindow(
                    host=ctx.host,
                    label=f"{label}, {ctx.step_name(s.step)}{extra}",
                    start_ms=round(float(start), 3),
                    end_ms=round(float(end), 3),
                    gpu=gpu,
                    step=int(s.step),
                )
            )
        return out
    extra = f" ({UNMEASURED})" if unmeasured else ""
    for w in (ctx.m.steps.windows or [])[:n]:
        out.append(
            TimeWindow(host=ctx.host, label=f"{label}, {ctx.step_name(w.step)}{extra}", start_ms=round(w.start_ms, 3),
                       end_ms=round(w.end_ms, 3), gpu=gpu, step=int(w.step))
        )
    return out


#: a window's words where the ledger holds no per-step value of its finding's time (:func:`step_windows`)
UNMEASURED = "not measured per step"


def finding(
    ctx: Ctx,
    rule_id: str,
    severity: str,
    summary: str,
    *,
    title: str | None = None,
    metric: Metric | None = None,
    saving: Saving | None = None,
    evidence: Sequence[Table] = (),
    windows: Sequence[TimeWindow] = (),
    actions: Sequence[Action] = (),
    gpu: int | None = None,
    saving_bytes: int | None = None,
) -> Finding:
    reg = REGISTRY.get(rule_id)
    actions, used = _not_applied(ctx, ctx.fit(actions))
    if used:  # a fix the trace shows in use is never recommended: the next lever is (issue #21 item 3)
        summary += f" Already in use, so not suggested: {'; '.join(used)}."
    return Finding(
        id=ctx.fid(rule_id, gpu),
        rule=rule_id,
        severity=severity,  # type: ignore[arg-type]
        title=ctx.words(title or ctx.fw.title(rule_id) or (reg.title if reg else rule_id)),
        summary=ctx.words(summary),
        guide_section=reg.section if reg else "",
        metric=_in_words(ctx, metric),
        saving=saving,
        evidence=[table_in_words(titled(ctx.window_words, t), ctx.words) for t in evidence],
        windows=list(windows),
        actions=ctx.said(_once(actions)),
        host=ctx.host or None,
        gpu=gpu,
        saving_bytes=int(saving_bytes) if saving_bytes is not None else None,
    )


def _once(actions: Sequence[Action]) -> list[Action]:
    """Each fix once, in its first place: a rule that asks several variants of its fixes may be given one fix under
    each (a capture of no known writer has the same JAX fix for every variant of a check only TensorFlow splits,
    ``frameworks._either_writer``)."""
    out: list[Action] = []
    for a in actions:
        if a not in out:
            out.append(a)
    return out


def _in_words(ctx: Ctx, metric: Metric | None) -> Metric | None:
    """A finding's metric as its user reads it beside the summary (:func:`metric_in_words`), the ``{step}`` of its
    label and meaning (a threshold's or a rule's: "Input wait share of {step}", "share of {step} time ...") filled
    with the host's window (:meth:`Ctx.window_words`): "share of pass" beside a summary saying "of the 28.5 ms pass"
    (h37-words24)."""
    if metric is None:
        return None
    said = metric_in_words(metric, ctx.words)
    return dataclasses.replace(said, label=ctx.window_words(said.label), meaning=ctx.window_words(said.meaning))


def metric_in_words(metric: Metric, words: Callable[[str], str]) -> Metric:
    """A metric in the GPU vendor's ``words``: its label, its meaning and its threshold's source, printed beside it
    (the threshold table and the rules write NVIDIA's "SMs", "cudaMalloc", "should use Tensor Cores"; an AMD report
    says CUs, hipMalloc, Matrix Cores)."""
    detail = metric.detail
    if isinstance(detail, dict) and isinstance(detail.get("threshold_source"), str):
        detail = {**detail, "threshold_source": words(detail["threshold_source"])}
    return dataclasses.replace(metric, label=words(metric.label), meaning=words(metric.meaning), detail=detail)


def titled(window: Callable[[str], str], t: Table) -> Table:
    """``t`` with its title's window placeholders filled (``window``: :meth:`Ctx.window_words` or the job's): a rule
    writes "Dtype casts ({kept}, all GPUs)", and a one-pass host reads "(the pass, all GPUs)" beside findings saying
    "of the 28.5 ms pass" -- "(kept steps, all GPUs)" named steps the capture does not hold (h37-onepass2)."""
    return dataclasses.replace(t, title=window(t.title))


def table_in_words(t: Table, words: Callable[[str], str]) -> Table:
    """An evidence table in the GPU vendor's ``words``: its title and columns (the rules write NVIDIA's: "TC-eligible
    kernels not using Tensor Cores"); its rows are the trace's own names and numbers."""
    return dataclasses.replace(t, title=words(t.title), columns=[words(c) for c in t.columns])


def fixes_left(ctx: Ctx, actions: Sequence[Action]) -> list[Action]:
    """The fixes of ``actions`` a finding would still give (:func:`finding` leaves out those the job's GPU cannot
    follow and those the trace shows in use): a rule asks it where every fix it knows may be in use already, so that
    its finding still says what to do next."""
    return _not_applied(ctx, ctx.fit(actions))[0]


def _not_applied(ctx: Ctx, actions: Sequence[Action]) -> tuple[list[Action], list[str]]:
    """The fixes the trace does not show in use, and what shows the others in use (once each)."""
    keep, used = [], []
    unmet = set(ctx.m.unmet_fixes)
    for a in actions:
        if a.text in unmet:  # its object is not in the trace (no optimizer step for a fused optimizer)
            continue
        if ctx.fw.premature(a, ctx.m.applied):  # a next lever, where the first is not in use: the first is the fix
            continue
        a, kept = ctx.fw.rest(a, ctx.m.applied)  # a lever it bundles in use already: the rest of the fix
        if _said_before(a, keep):  # a lever an earlier fix of the finding already names: told once
            continue
        used += [w for w in kept if w not in used]
        why = ctx.fw.applied(a, ctx.m.applied)
        if why is None:
            keep.append(a)
        elif why not in used:
            used.append(why)
    return keep, used


_CLAUSE = re.compile(r"[.;:,]\s+|\s+--\s+|[()]")
_LEAD = re.compile(r"^(?:or|and|also|then)\s+", re.I)


def _lever(clause: str) -> str:
    """A clause of a fix's words as a lever: lower case, without its leading "or"/"and"."""
    c = clause.strip()
    lead = _LEAD.match(c)
    return (c[lead.end():] if lead else c).rstrip(".").lower()


def _said_before(a: Action, earlier: Sequence[Action]) -> bool:
    """Whether fix ``a`` (words only, no code) opens with a lever an earlier fix of the same finding names: the rule's
    own "..., or raise the batch size" beside a framework's "Or raise the batch size, so each launch does more GPU
    work." (h37-review11: resnet50_num_workers_4's launch-bound finding told the batch size twice)."""
    if a.snippet or not earlier:
        return False
    lead = _lever(_CLAUSE.split(" ".join(a.text.split()))[0])
    if len(lead.split()) < 3:
        return False
    return any(lead == _lever(c) for b in earlier for c in _CLAUSE.split(" ".join(b.text.split())))


def framework(m: HostMetrics, vendor=None) -> Framework:  # noqa: ANN001 - a vendor module
    """The capture's framework (``capture.framework``): its fixes, labels and what does not apply to it, written for
    the job the capture holds (``job/``: a forward pass, a serving engine, a cold start, an old version).  ``vendor``:
    :func:`_vendor`'s answer where the caller has it (``Ctx``: one reading of the GPUs' names per rule, not two)."""
    vendor = vendor if vendor is not None else _vendor(m)
    fw = frameworks.for_vendor(m.capture.framework, vendor)
    # the framework that ran the work, where another's profiler wrote the capture: its fixes, the writer's capture words
    work = frameworks.for_vendor(m.capture.work_framework, vendor) if m.capture.work_framework else None
    # one GPU process that runs no collective talks to no other rank (a CPU-only capture counts no GPU process: a
    # gloo rank of a 300-rank job, wild/cpu_only_gloo, keeps its words); one process driving several GPUs
    # (DataParallel, TF MirroredStrategy) runs its collectives among its own GPUs: no rank either (h37-left29) --
    # unless its own header names a larger job (``distributedInfo.world_size``): a DDP rank whose window ran no
    # collective is still one rank of N (h37-left33)
    mg = m.multi_gpu
    alone = (mg.processes == 1 and not (mg.job_ranks or 0) > 1
             and (not mg.collective_calls_per_gpu_step or len(mg.active_gpus) > 1))
    if m.job is not None:
        return m.job.framework(fw, alone=alone, work=work)
    return fw if work is None else frameworks.recorded_by(work, fw)


def kernels_per_step(m: HostMetrics, ctx: Ctx) -> float | None:
    """Kernels per kept step and rank, as the metrics count them (``SmallKernels.kernels_per_step``)."""
    if not ctx.steps:
        return None
    return m.small_kernels.kernels_per_step


def short(name: str, n: int = 70) -> str:
    """Shorten a (demangled, templated) kernel name for tables and summaries."""
    name = name or ""
    return name if len(name) <= n else name[: n - 1] + "…"
