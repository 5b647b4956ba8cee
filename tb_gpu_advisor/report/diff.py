"""Compare two reports: did the change help, by how much, and was the Advisor's predicted saving right?

The last stage of the pipeline: a pure function of two :class:`~tb_gpu_advisor.model.schema.Report`
objects, so a diff of two cached reports never re-reads a profile.  The CLI (``tb-gpu-advisor diff``), the
server (``/diff``) and the tab all use :func:`diff_reports` and the JSON it gives (``Diff.to_dict``,
documented in ``docs/diff.md``; bump :data:`DIFF_VERSION` on a breaking change).

What is compared, and why that way:

* **One host per side.**  A session steps at its slowest host's pace, so by default each side's slowest host
  is compared (the same host name on both sides when both have it); ``host=`` picks another.
* **Step time with its noise.**  The per-step spread of each side gives the standard error of the
  difference of the mean step times (Welch).  A change counts when it exceeds ``diff.noise_z`` standard
  errors *and* the run-to-run floor ``diff.noise_floor_share``: two processes of the same code differ by more
  than one process's steps differ from each other (clocks, placement, allocator state).
* **Findings matched by rule** (and GPU): fixed, new, improved, worse or still present.
* **Calibration.**  The findings that were fixed predicted a saving in the base report: the union of the time
  they recover (``rules.savings.achievable``, so overlapping fixes are not counted twice).  It is shown next
  to the realised change of the step time; the ratio is what ``docs/diff.md``'s calibration table collects.
* **Memory** (issue #37 item 5) where both sides record the allocator (a memory snapshot, a trace with
  ``profile_memory``): per GPU, the numbers the single report gives (``GpuSummary.memory``: peak allocated and
  reserved, the reserve beyond the allocated peak, what holds the peak by category -- held across steps, activations,
  ... --, capacity and peak / capacity where known) and the allocation sites holding most at the peak; next to it the
  bytes the fixed memory findings said they free (``Finding.saving_bytes``) against the peak they realised.  A side
  that records memory and no GPU work (a snapshot) has no step time: its step and kernel tables are not compared.
* **Kernels** by class (complete: ``HostReport.kernel_classes``) and by name or op (the reports' top-25
  tables: a name outside the other side's top 25 is "entered/left the top", not "added/removed", unless that
  side's table holds every kernel).
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Sequence

from tb_gpu_advisor import ANALYZER_VERSION, devices
from tb_gpu_advisor.common import jsonout
from tb_gpu_advisor.common.fmt import echo, echo_list, gb
from tb_gpu_advisor.common.jsonout import json_float
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.memory import TOP_HOLDERS
from tb_gpu_advisor.model.schema import (KERNEL_WALL_US, SEVERITY_ORDER, TABLE_ROWS, WALL_US, Finding, HostReport, Metric, Report, Table,
                                         _json_default)
from tb_gpu_advisor.report.legend import MEMORY_LABELS
from tb_gpu_advisor.report.view import memory_labels
from tb_gpu_advisor.report.verdict import damage_note, damage_records
from tb_gpu_advisor.report.verdict import memory_only as _memory_only
from tb_gpu_advisor.rules.savings import COMPARED_GROUPS, achievable

DIFF_VERSION = "1.1"

#: step-time verdicts
Verdict = Literal["faster", "slower", "unchanged", "unknown"]
#: how a finding changed between the runs
FindingStatus = Literal["fixed", "new", "improved", "worse", "still"]
#: how a kernel, op or category changed
ChangeStatus = Literal["changed", "added", "removed", "entered_top", "left_top"]

_JUDGED = ("critical", "warning")
#: the rules that describe the capture, not a problem of the training step
_NOT_PROBLEMS = frozenset({"healthy"})


# --------------------------------------------------------------------------- schema


@dataclass
class Spread:
    """Per-step step times of one side (ms): how noisy its mean is."""

    n: int
    mean_ms: float
    std_ms: float | None  # None with fewer than 2 steps
    min_ms: float
    max_ms: float


@dataclass
class Side:
    """One capture of the comparison: which run, session and host, and its step time."""

    run: str
    session: str
    label: str  # "RUN/SESSION" (or the logdir or file the CLI was given)
    host: str | None  # the host compared
    hosts: list[str]
    framework: str | None
    step_ms: float | None
    spread: Spread | None
    achievable_step_ms: float | None
    analyzer_version: str
    error: str | None = None  # why this side has no step time (its host failed, no steps)
    #: why this side's one "step" is only its capture window (no step was found in it): its length is the window's,
    #: so a change in it says nothing of a step; None where the steps are the job's
    window: str | None = None
    #: what records this side's memory where it records memory and no GPU work (from 0.1.0+a39: a memory snapshot): it has no
    #: step time, and no error, and is compared by memory alone; None where the side ran GPU work
    memory_only: str | None = None


@dataclass
class StepChange:
    base_ms: float | None
    new_ms: float | None
    delta_ms: float | None  # new - base: positive is slower
    delta_share: float | None  # delta / base
    noise_ms: float | None  # a change smaller than this is noise (None: fewer than 2 steps on a side)
    beyond_noise: bool | None
    verdict: Verdict


@dataclass
class Change:
    """A before/after number: a breakdown group (ms/step), a kernel class, a kernel or an op (us/step)."""

    key: str
    label: str
    base: float | None
    new: float | None
    delta: float | None
    status: ChangeStatus = "changed"
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class MetricChange:
    """A headline card on both sides; ``better`` follows the card's good direction (None: no direction/value)."""

    id: str
    label: str
    unit: str
    base: float | None
    new: float | None
    base_display: str
    new_display: str
    base_status: str
    new_status: str
    better: bool | None
    #: whether the card moved by more than the step's noise allows (from 0.1.0+a41): a card is a ratio of times over
    #: the same steps, so its change is held to the step's relative noise (``noise_ms`` / base step, at least the
    #: floor); False leaves ``better`` None -- "within the noise" --, None where a side has no value
    beyond_noise: bool | None = None


@dataclass
class FindingChange:
    rule: str
    title: str  # the new run's title when it still fires, else the base run's
    status: FindingStatus
    guide_section: str
    base_severity: str | None
    new_severity: str | None
    base_saving_ms: float | None
    new_saving_ms: float | None
    #: the step time this change was predicted to save: the base saving of a fixed finding (None otherwise)
    predicted_ms: float | None = None
    gpu: int | None = None
    base_id: str | None = None
    new_id: str | None = None
    #: the GPU memory the finding's fix frees (``Finding.saving_bytes``) on each side (from 0.1.0+a39)
    base_saving_bytes: int | None = None
    new_saving_bytes: int | None = None


@dataclass
class Calibration:
    """Predicted saving of the fixed findings next to the realised step-time change."""

    findings: list[str]  # rules fixed
    predicted_ms: float  # base step - achievable step with exactly these fixes (union of recovered time)
    realised_ms: float  # base step - new step
    ratio: float | None  # realised / predicted
    within: bool | None  # |ratio - 1| <= diff.calibration_tolerance
    tolerance: float
    note: str = ""


@dataclass
class GpuChange:
    gpu: int
    name: str
    base_step_ms: float | None
    new_step_ms: float | None
    base_busy_share: float | None
    new_busy_share: float | None
    base_kernel_count: int | None
    new_kernel_count: int | None
    breakdown: list[Change] = field(default_factory=list)  # ms/step by group


@dataclass
class MemoryChange:
    """One memory number of one GPU on both sides (from 0.1.0+a39): bytes, or a share for ``peak_share``."""

    key: str  # peak_allocated | peak_reserved | peak_above_start | reserve | capacity | peak_share | a MEMORY_CATEGORIES id
    label: str
    base: float | None
    new: float | None
    delta: float | None  # new - base: negative frees memory
    unit: str = "bytes"  # "bytes" | "share"


@dataclass
class MemorySite:
    """An allocation site holding bytes at a GPU's peak (the report's ``memory.top``) on both sides."""

    site: str
    category: str
    base_bytes: int | None
    new_bytes: int | None
    delta_bytes: int | None  # None where the site only entered or left a side's top list
    status: ChangeStatus = "changed"


@dataclass
class GpuMemoryChange:
    """One GPU's memory on both sides (from 0.1.0+a39): what the single report's memory table and top sites say."""

    gpu: int  # the base side's GPU index
    new_gpu: int
    rows: list[MemoryChange] = field(default_factory=list)
    sites: list[MemorySite] = field(default_factory=list)
    #: why the numbers are not judged against the GPU's size: "" where both sides record their capacity
    capacity_note: str = ""
    #: what one side lacks that the other records, and so what is compared instead (from 0.1.0+a40): a PyTorch 1.8-1.10
    #: trace's bytes above its capture's start beside the allocator's totals, a snapshot's state at the dump (no
    #: history: no peak) beside a peak; "" where both sides record the same quantities
    note: str = ""


@dataclass
class MemoryCalibration:
    """The bytes the fixed memory findings said they free next to the peak the new side realised (from 0.1.0+a39)."""

    findings: list[str]  # rules fixed whose findings named bytes freed
    gpu: int | None
    predicted_bytes: int  # the largest of their ``saving_bytes``: they free parts of one peak, never summed
    realised_bytes: int  # base peak - new peak, of ``measure``
    measure: str  # "peak reserved" | "peak allocated": what the process holds of the GPU
    ratio: float | None
    within: bool | None
    tolerance: float
    note: str = ""


@dataclass
class Diff:
    base: Side
    new: Side
    step: StepChange
    breakdown: list[Change]  # ms/step by group (rules/savings.COMPARED_GROUPS)
    headline: list[MetricChange]
    findings: list[FindingChange]
    calibration: Calibration | None
    kernel_classes: list[Change]  # us/step
    kernels: list[Change]  # us/step, largest change first
    ops: list[Change]  # kernel us/step per op, largest change first
    gpus: list[GpuChange]
    notes: list[str]
    analyzer_version: str
    generated_at: str
    diff_version: str = DIFF_VERSION
    #: why the two captures are not the same work (diff 1.1): FLOPs per step, GEMM shapes, GPU, framework, kind of job;
    #: empty when nothing says they differ.  A step-time change then says nothing of the code alone.
    incomparable: list[str] = field(default_factory=list)
    #: the same step times per TFLOP of work where both sides give FLOPs per step (diff 1.1): {base, new, delta_share}
    per_tflop: dict[str, float] = field(default_factory=dict)
    #: per GPU, the memory of both sides (from 0.1.0+a39), where both record the allocator
    memory: list[GpuMemoryChange] = field(default_factory=list)
    #: predicted vs realised bytes of the fixed memory findings (from 0.1.0+a39)
    memory_calibration: MemoryCalibration | None = None
    #: every text the tab shows, written by the CLI's renderer (``diff_render.display``, from 0.1.0+a39): the tab formats no
    #: number of its own, so a value reads the same on screen as in the CLI, the Markdown and the MCP answer
    display: dict[str, Any] = field(default_factory=dict)

    def regressed(self, percent: float) -> bool:
        """The CI gate: slower by more than ``percent`` % of the base step AND beyond the noise."""
        s = self.step
        if s.delta_ms is None or s.delta_share is None or s.delta_ms <= 0 or s.verdict == "unknown":
            return False
        return s.beyond_noise is not False and s.delta_share * 100.0 > percent

    def memory_regressions(self, percent: float) -> list[str]:
        """The CI gate on memory (from 0.1.0+a40): one line per GPU and quantity whose bytes grew by more than
        ``percent`` % of the base -- the peak allocated and reserved where both sides record them as peaks, the peak
        above each capture's start where one side records no totals (:data:`GATED_MEMORY`); empty where none did."""
        return [line for m in self.memory for line in memory_growth(m, percent)]

    def to_dict(self) -> dict[str, Any]:
        return jsonout.plain(self)

    def to_json(self, indent: int | None = None) -> str:
        return jsonout.dumps(self, indent=indent, default=_json_default)


class DiffError(ValueError):
    """The two reports cannot be compared as asked (an unknown host)."""


# --------------------------------------------------------------------------- entry point


def diff_reports(base: Report, new: Report, host: str | None = None, base_label: str | None = None,
                 new_label: str | None = None, top: int = 15, host_fallback: bool = False) -> Diff:
    """The diff of ``new`` against ``base`` (see the module doc); ``host`` picks the host compared on both sides.

    ``host_fallback`` (the tab: its host is the one on screen, not a choice made for the comparison): a side that
    lacks ``host`` is compared by its slowest host instead, and a note says so; only a host neither side has is a
    :class:`DiffError`.  Without it (``diff --host``: the user named the host), a side that lacks it is the error."""
    notes: list[str] = []
    hb, hn = _pair_hosts(base, new, host, notes, host_fallback)
    sb = _side(base, hb, base_label)
    sn = _side(new, hn, new_label)
    fb, fn = _findings(base, hb), _findings(new, hn)
    changes = match_findings(fb, fn)
    step = step_change(sb, sn)
    why = incomparable(base, new, hb, hn)
    cal = calibrate(sb, sn, hb, fb, changes)
    if cal is not None and why:  # a realised change between different work says nothing of the fix
        cal.within = None
        cal.note = f"not comparable ({'; '.join(why)}): the realised change is not the fix's; {cal.note}"
    memory = memory_changes(hb, hn)
    mcal = memory_calibrate(fb, changes, memory, [c.rule for c in changes if c.status in ("new", "worse")])
    if mcal is not None and why:
        mcal.within = None
        mcal.note = f"not comparable ({'; '.join(why)}): the realised change is not the fix's; {mcal.note}"
    timed = not (sb.memory_only or sn.memory_only)  # a side with no GPU work has no step, kernel or GPU table to compare
    d = Diff(
        base=sb, new=sn, step=step,
        breakdown=_group_changes(hb.breakdown_ms if hb else {}, hn.breakdown_ms if hn else {}) if timed else [],
        headline=_metric_changes(_cards(base, hb), _cards(new, hn), step) if timed else [],
        findings=changes,
        calibration=cal,
        kernel_classes=_class_changes(hb, hn) if timed else [],
        kernels=_table_changes(hb, hn, "kernels", "kernel", (WALL_US, "total us"), top) if timed else [],
        ops=_table_changes(hb, hn, "ops", "op", (KERNEL_WALL_US, "kernel us"), top) if timed else [],
        gpus=_gpu_changes(hb, hn) if timed else [],
        notes=notes + _side_notes(sb, sn, bool(memory)) + [f"{w}: {damage_note(h)}" for w, h in (("base", hb), ("new", hn))
                                                            if h is not None and not h.error and damage_records(h)],
        analyzer_version=ANALYZER_VERSION,
        generated_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        incomparable=why, per_tflop=_per_tflop(sb, sn, _flops(base, hb), _flops(new, hn)),
        memory=memory, memory_calibration=mcal,
    )
    if nothing_compared(d):  # no table of one side's findings beside nothing: the one line says why
        d.findings, d.calibration = [], None
    from tb_gpu_advisor.report.diff_render import display  # the renderer reads this module: imported when called
    d.display = display(d)
    return d


def nothing_compared(d: Diff) -> str | None:
    """Why a diff compares nothing at all: a side records memory only (no GPU work, no step) and the two sides hold no
    memory in common; None where something is compared.  The CLI's exit 2 and the views' one line."""
    only = [(w, s) for w, s in (("base", d.base), ("new", d.new)) if s.memory_only]
    if not only or any(m.rows for m in d.memory):
        return None
    other = [w for w, s in (("base", d.base), ("new", d.new)) if not s.memory_only]
    why = " and ".join(f"the {w} side records memory and no GPU work ({s.memory_only})" for w, s in only)
    if other:
        return (f"nothing to compare: {why}, and the {other[0]} side records no memory of its GPUs: compare memory "
                f"with memory (a snapshot on both sides, or traces that record memory), or a trace with a trace")
    return f"nothing to compare: {why}, and no GPU's memory is on both sides"


# --------------------------------------------------------------------------- comparable work

#: FLOPs per step that differ by more than this share are different work (a batch size, a model size).
_FLOPS_TOLERANCE = 0.10


def _flops(r: Report, h: HostReport | None) -> float | None:
    card = next((c for c in _cards(r, h) if c.id == "mfu"), None)
    v = (card.detail or {}).get("flops_per_step") if card is not None else None
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def incomparable(base: Report, new: Report, hb: HostReport | None, hn: HostReport | None) -> list[str]:
    """Why the two captures are not the same work, each with its numbers (issue #27 item 5): FLOPs per step beyond
    ``_FLOPS_TOLERANCE``, no GEMM shape in common, another GPU model, another framework or kind of job."""
    out = []
    fb, fn = _flops(base, hb), _flops(new, hn)
    if fb and fn and abs(fn - fb) / fb > _FLOPS_TOLERANCE:
        out.append(f"{fb / 1e12:.3g} vs {fn / 1e12:.3g} TFLOP per step")
    shapes = [_gemm_work(h) for h in (hb, hn)]
    if all(shapes) and not shapes[0] & shapes[1]:
        out.append("no GEMM shape in common")
    gpus = [_gpu_models(h) for h in (hb, hn)]
    if all(gpus) and set(gpus[0]) != set(gpus[1]):
        out.append(f"GPUs {', '.join(sorted(gpus[0].values()))} vs {', '.join(sorted(gpus[1].values()))}")
    fw = [(h.capture or {}).get("framework") if h is not None else None for h in (hb, hn)]
    if all(fw) and fw[0] != fw[1]:
        out.append(f"frameworks {fw[0]} vs {fw[1]}")
    kind = [(getattr(h, "job", None) or {}).get("kind") if h is not None else None for h in (hb, hn)]
    if all(kind) and kind[0] != kind[1]:
        out.append(f"{kind[0]} vs {kind[1]}")
    return out


def _gpu_models(h: HostReport | None) -> dict[str, str]:
    """The GPU models a host ran work on, each by its table entry (else its name as said) -> its name as said.

    Why by the entry: one model is named differently by different tools -- an inferred name's reasons (the memory the
    driver left, h37-review30), PyTorch's "Tesla T4" beside an XPlane's inferred "NVIDIA T4" (h37-surfaces31) -- and
    neither is another GPU."""
    out: dict[str, str] = {}
    for g in (h.gpus if h is not None else []):
        if g.kernel_count:
            said = devices.said_name(g.name) or str(g.name)
            out.setdefault(devices.table_model(g.name) or said, said)
    return out


#: a dtype named in a GEMM's roofline label ("aten::mm bf16 [4096,4096]x[4096,4096]", "__cublas$gemm bf16[16384,...")
_DTYPE_WORD = re.compile(r"\b(?:" + "|".join(p for p in devices.PRECISIONS if p not in ("other", "unknown")) + r")\b ?")


def _gemm_work(h: HostReport | None) -> set[str]:
    """The GEMMs a host ran, as work: op and shapes without their dtype -- the same [4096,4096]x[4096,4096] GEMMs in
    fp32 and in bf16 are the same work, and the dtype is the fix the diff measures (issue #36: "NOT COMPARABLE ... no
    GEMM shape in common" on torch_fp32 -> torch_healthy_bf16)."""
    rows = h.roofline.rows if h is not None and h.roofline is not None else []
    return {" ".join(_DTYPE_WORD.sub("", str(row[0])).split()) for row in rows}


def _per_tflop(base: Side, new: Side, fb: float | None, fn: float | None) -> dict[str, float]:
    """Step time per TFLOP of work on each side: what compares two captures of different work."""
    if not (fb and fn and base.step_ms and new.step_ms):
        return {}
    b, n = base.step_ms / (fb / 1e12), new.step_ms / (fn / 1e12)
    return {"base_ms_per_tflop": round(b, 4), "new_ms_per_tflop": round(n, 4), "delta_share": round(n / b - 1.0, 4)}


# --------------------------------------------------------------------------- sides and step time


def _ok_hosts(r: Report) -> list[HostReport]:
    return [h for h in r.hosts if h.error is None]


def host_step_ms(h: HostReport | None) -> float | None:
    """A host's mean step time, as its report prints it (``HostReport.mean_step_ms``)."""
    return None if h is None else h.mean_step_ms()


def _slowest(r: Report) -> HostReport | None:
    hs = _ok_hosts(r)
    return max(hs, key=lambda h: host_step_ms(h) or 0.0) if hs else (r.hosts[0] if r.hosts else None)


def _pair_hosts(base: Report, new: Report, host: str | None, notes: list[str],
                fallback: bool = False) -> tuple[HostReport | None, HostReport | None]:
    """The host compared on each side (module doc; ``fallback``: :func:`diff_reports`)."""
    if host is not None:
        if fallback:
            has = [any(h.host == host for h in r.hosts) for r in (base, new)]
            if any(has) and not all(has):
                return _fallback_pair(base, new, host, has[0], notes)
        return _named(base, host, "base"), _named(new, host, "new")
    hb = _slowest(base)
    by_name = {h.host: h for h in new.hosts}
    hn = by_name.get(hb.host) if hb is not None and hb.host in by_name and len(base.hosts) > 1 else _slowest(new)
    if len(base.hosts) > 1 or len(new.hosts) > 1:
        notes.append(f"compared host {hb.host if hb else '-'} (base) with {hn.host if hn else '-'} (new): "
                     "each session's slowest host sets its step time; pick another with --host")
    elif hb is not None and hn is not None and hb.host != hn.host:
        notes.append(f"different host names: {hb.host} (base), {hn.host} (new)")
    return hb, hn


def _fallback_pair(base: Report, new: Report, host: str, base_has: bool,
                   notes: list[str]) -> tuple[HostReport | None, HostReport | None]:
    """``host`` on the side that has it, the other side's slowest host, and a note that says so."""
    lacking, which = (new, "new") if base_has else (base, "base")
    other = _slowest(lacking)
    notes.append(f"the {which} run {lacking.run}/{lacking.session} has no host {echo(host)} (its hosts: "
                 f"{echo_list(h.host for h in lacking.hosts)}): compared its slowest host, "
                 f"{other.host if other else '-'}, with {host}")
    named = _named(base if base_has else new, host, "base" if base_has else "new")
    return (named, other) if base_has else (other, named)


def _named(r: Report, host: str, which: str) -> HostReport:
    for h in r.hosts:
        if h.host == host:
            return h
    raise DiffError(f"unknown host {echo(host)} in the {which} run {r.run}/{r.session}. "
                    f"Available hosts: {echo_list(h.host for h in r.hosts)}")


def _side(r: Report, h: HostReport | None, label: str | None) -> Side:
    memory_only = _memory_only(h)
    step = host_step_ms(h) if h is not None and h.error is None and memory_only is None else None
    error = None
    if memory_only:
        pass  # no step time, and no error: compared by memory (``memory_changes``)
    elif h is None:
        error = "the session has no host file"
    elif h.error:
        error = f"host {h.host} could not be analysed: {h.error}"
    elif step is None:
        error = f"host {h.host}: no step time (no GPU activity or no steps found)"
    return Side(run=r.run, session=r.session, label=label or (r.session if r.run == "." else f"{r.run}/{r.session}"),
                host=h.host if h else None, hosts=[x.host for x in r.hosts],
                framework=(h.capture or {}).get("framework_name") if h else None,
                step_ms=json_float(step), spread=spread(h) if step is not None else None,
                achievable_step_ms=json_float((h.achievable or {}).get("achievable_step_ms")) if h else None,
                analyzer_version=r.analyzer_version, error=error,
                window=_window_only(h) if step is not None else None, memory_only=memory_only)


def _window_only(h: HostReport | None) -> str | None:
    """Why a host's one step is its capture window, not a step of the job: no step was found in it (no marker,
    pass or repeating burst), so the whole window was analysed as one -- a slice of the job as long as the capture
    ran, whose length any other slice may differ from with no change to the code (nsys fsdp_mfu_before/after: two
    300 ms windows of one job, 290.4 vs 298.6 ms of work launched in them)."""
    if h is None or (h.steps or {}).get("source") != "whole_capture" or (h.capture or {}).get("steps_captured"):
        return None
    length = (h.capture or {}).get("length_ms")
    size = f"its {length:,.1f} ms capture window" if isinstance(length, (int, float)) else "its capture window"
    return f"no step found: its one step is {size}, analysed whole"


def step_times(h: HostReport) -> list[float]:
    """One time per step: a step lasts until its slowest GPU is done (rows are per GPU on multi-GPU hosts)."""
    per: dict[int, float] = {}
    for row in h.step_rows:
        if row.step_ms is not None and math.isfinite(row.step_ms):
            per[row.step] = max(per.get(row.step, 0.0), float(row.step_ms))
    return [per[k] for k in sorted(per)]


def spread(h: HostReport) -> Spread | None:
    xs = step_times(h)
    if not xs:
        return None
    n = len(xs)
    mean = sum(xs) / n
    std = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else None
    return Spread(n=n, mean_ms=json_float(mean), std_ms=json_float(std), min_ms=json_float(min(xs)), max_ms=json_float(max(xs)))


def step_change(base: Side, new: Side) -> StepChange:
    """New minus base, with the noise the two sides' step spreads allow (module doc)."""
    if base.step_ms is None or new.step_ms is None:
        return StepChange(base.step_ms, new.step_ms, None, None, None, None, "unknown")
    delta = new.step_ms - base.step_ms
    if base.window or new.window:  # a window's length is no step time: no verdict, and no gate (``regressed``)
        return StepChange(base.step_ms, new.step_ms, json_float(delta),
                          json_float(delta / base.step_ms, 4) if base.step_ms else None, None, None, "unknown")
    noise = noise_ms(base, new)
    beyond = None if noise is None else abs(delta) > noise
    if beyond is False:
        verdict: Verdict = "unchanged"
    elif beyond is None and abs(delta) <= T("diff.noise_floor_share") * base.step_ms:
        verdict = "unchanged"
    else:
        verdict = "slower" if delta > 0 else "faster"
    return StepChange(base.step_ms, new.step_ms, json_float(delta), json_float(delta / base.step_ms, 4) if base.step_ms else None,
                      json_float(noise), beyond, verdict)


def noise_ms(base: Side, new: Side) -> float | None:
    """The smallest step-time change that is not noise: ``diff.noise_z`` standard errors of the difference of
    the means, and at least ``diff.noise_floor_share`` of the base step.  None when a side has < 2 steps."""
    a, b = base.spread, new.spread
    if a is None or b is None or a.std_ms is None or b.std_ms is None or base.step_ms is None:
        return None
    se = math.sqrt(a.std_ms ** 2 / a.n + b.std_ms ** 2 / b.n)
    return max(T("diff.noise_z") * se, T("diff.noise_floor_share") * base.step_ms)


def _side_notes(base: Side, new: Side, memory: bool = False) -> list[str]:
    out = [f"{w}: {s.error}" for w, s in (("base", base), ("new", new)) if s.error]
    if memory:
        out += [f"{w}: {s.memory_only}: memory and no GPU work, so no step time: compared by memory"
                for w, s in (("base", base), ("new", new)) if s.memory_only]
    out += [f"{w}: {s.window}: the step-time change is the windows', not a step's -- capture a few whole steps "
            f"(the profiler's step markers or a schedule) on both sides to compare them"
            for w, s in (("base", base), ("new", new)) if s.window]
    if base.analyzer_version != new.analyzer_version:
        out.append(f"the reports come from different analyzer versions ({base.analyzer_version}, "
                   f"{new.analyzer_version}): a change may come from the analyzer, not the training job")
    if base.framework and new.framework and base.framework != new.framework:
        out.append(f"different frameworks ({base.framework}, {new.framework}): findings are matched by rule, "
                   "kernels and ops by name")
    return out


# --------------------------------------------------------------------------- findings and calibration


def _findings(r: Report, h: HostReport | None) -> list[Finding]:
    """The session's merged findings, or the compared host's own when the session has several hosts."""
    if h is not None and len(r.hosts) > 1:
        return list(h.findings)
    return list(r.findings)


def _judged(f: Finding) -> bool:
    return f.severity in _JUDGED and f.rule not in _NOT_PROBLEMS


def _by_key(fs: Iterable[Finding]) -> dict[tuple[str, int | None], Finding]:
    """Findings by (rule, gpu); of duplicates (one rule on several hosts, unmerged) the larger saving stands."""
    out: dict[tuple[str, int | None], Finding] = {}
    for f in fs:
        if not _judged(f):
            continue
        k = (f.rule, f.gpu)
        if k not in out or _saving(f) > _saving(out[k]):
            out[k] = f
    return out


def _saving(f: Finding | None) -> float:
    return float(f.saving.ms_per_step) if f is not None and f.saving is not None else 0.0


def match_findings(base: Sequence[Finding], new: Sequence[Finding]) -> list[FindingChange]:
    """Warning/critical findings of both runs matched by (rule, GPU); fixed first, then new, then the rest."""
    b, n = _by_key(base), _by_key(new)
    out = []
    for k in list(b) + [k for k in n if k not in b]:
        fb, fn = b.get(k), n.get(k)
        if fn is None:
            status: FindingStatus = "fixed"
        elif fb is None:
            status = "new"
        else:
            rank_b, rank_n = SEVERITY_ORDER[fb.severity], SEVERITY_ORDER[fn.severity]
            status = "improved" if rank_n > rank_b else "worse" if rank_n < rank_b else "still"
        ref = fn or fb
        out.append(FindingChange(
            rule=k[0], title=ref.title, status=status, guide_section=ref.guide_section,
            base_severity=fb.severity if fb else None, new_severity=fn.severity if fn else None,
            base_saving_ms=json_float(_saving(fb)) if fb and fb.saving else None,
            new_saving_ms=json_float(_saving(fn)) if fn and fn.saving else None,
            predicted_ms=json_float(_saving(fb)) if status == "fixed" and fb.saving else None,
            gpu=k[1], base_id=fb.id if fb else None, new_id=fn.id if fn else None,
            base_saving_bytes=fb.saving_bytes if fb else None, new_saving_bytes=fn.saving_bytes if fn else None))
    order = {"fixed": 0, "new": 1, "worse": 2, "improved": 3, "still": 4}
    out.sort(key=lambda c: (order[c.status], -(c.base_saving_ms or c.new_saving_ms or 0.0)))
    return out


def calibrate(base: Side, new: Side, hb: HostReport | None, base_findings: Sequence[Finding],
              changes: Sequence[FindingChange]) -> Calibration | None:
    """The fixed findings' predicted saving (union of what they recover) next to the realised change."""
    fixed_ids = {c.base_id for c in changes if c.status == "fixed" and c.predicted_ms}
    fixed = [f for f in base_findings if f.id in fixed_ids]
    if not fixed or base.step_ms is None or new.step_ms is None or hb is None:
        return None
    a = achievable(base.step_ms, hb.breakdown_ms, fixed, peak_floor_ms=(hb.achievable or {}).get("peak_floor_ms"))
    predicted = base.step_ms - a["achievable_step_ms"]
    realised = base.step_ms - new.step_ms
    tol = T("diff.calibration_tolerance")
    ratio = realised / predicted if predicted > 0 else None
    others = [c.rule for c in changes if c.status in ("new", "worse")]
    note = ("realised = the whole step-time change between the runs; "
            + (f"it also holds what got worse ({', '.join(others)})" if others else "no other finding got worse"))
    return Calibration(findings=sorted({f.rule for f in fixed}), predicted_ms=json_float(predicted), realised_ms=json_float(realised),
                       ratio=json_float(ratio, 3), within=None if ratio is None else abs(ratio - 1.0) <= tol, tolerance=tol,
                       note=note)


# --------------------------------------------------------------------------- breakdown, cards, GPUs


def group_ms(breakdown_ms: dict[str, float | None]) -> dict[str, float]:
    """Breakdown categories gathered into the compared groups (input, launch, compute, copies, fills, collectives,
    host: ``rules.savings.COMPARED_GROUPS``)."""
    return {g: sum(float(breakdown_ms.get(c) or 0.0) for c in cats) for g, cats in COMPARED_GROUPS.items()}


def _group_changes(base: dict[str, float | None], new: dict[str, float | None]) -> list[Change]:
    if not base and not new:
        return []
    gb, gn = group_ms(base), group_ms(new)
    return [Change(g, g, json_float(gb[g]) if base else None, json_float(gn[g]) if new else None,
                   json_float(gn[g] - gb[g]) if base and new else None) for g in COMPARED_GROUPS]


def _cards(r: Report, h: HostReport | None) -> list[Metric]:
    return list(h.headline) if h is not None and len(r.hosts) > 1 else list(r.headline)


def card_noise_share(step: StepChange | None) -> float:
    """The relative change a headline card must exceed to be better or worse: the step's noise over the base step
    (a card is a ratio of times over the same steps, so it is no steadier than they are), at least the run-to-run
    floor ``diff.noise_floor_share``; the floor alone where the step's noise is unknown (fewer than 2 steps, a window)."""
    floor = T("diff.noise_floor_share")
    if step is None or step.noise_ms is None or not step.base_ms:
        return floor
    return max(floor, step.noise_ms / step.base_ms)


def _metric_changes(base: Sequence[Metric], new: Sequence[Metric], step: StepChange | None = None) -> list[MetricChange]:
    nb = {m.id: m for m in new}
    share = card_noise_share(step)
    out = []
    for mb in base:
        mn = nb.get(mb.id)
        if mn is None:
            continue
        better = beyond = None
        if mb.value is not None and mn.value is not None:
            beyond = abs(mn.value - mb.value) > share * abs(mb.value)
            if beyond and mb.good_direction != "none":
                better = (mn.value > mb.value) == (mb.good_direction == "higher")
        out.append(MetricChange(mb.id, mb.label, mb.unit, mb.value, mn.value, mb.display, mn.display,
                                mb.status, mn.status, better, beyond))
    return out


def _gpu_changes(hb: HostReport | None, hn: HostReport | None) -> list[GpuChange]:
    if hb is None or hn is None:
        return []
    gb, gn = {g.gpu: g for g in hb.gpus}, {g.gpu: g for g in hn.gpus}
    out = []
    for i in sorted(set(gb) | set(gn)):
        a, b = gb.get(i), gn.get(i)
        out.append(GpuChange(
            gpu=i, name=(b or a).name, base_step_ms=a.step_ms if a else None, new_step_ms=b.step_ms if b else None,
            base_busy_share=a.busy_share if a else None, new_busy_share=b.busy_share if b else None,
            base_kernel_count=a.kernel_count if a else None, new_kernel_count=b.kernel_count if b else None,
            breakdown=_group_changes(a.breakdown if a else {}, b.breakdown if b else {})))
    return out


# --------------------------------------------------------------------------- memory


def _memory_gpus(h: HostReport | None) -> dict[int, dict[str, Any]]:
    return {g.gpu: g.memory for g in (h.gpus if h is not None and h.error is None else []) if g.memory}


def memory_changes(hb: HostReport | None, hn: HostReport | None) -> list[GpuMemoryChange]:
    """Per GPU the memory both sides record (module doc): GPUs by index, or the one GPU of each side where each side
    records one (a job moved from GPU 0 to GPU 1 is the same job's memory).

    A side that records less is compared by what both know, and the pair says what it lacks: a PyTorch 1.8-1.10 trace
    (bytes above its capture's start, no totals) beside totals by the peak above each capture's start (the totals'
    peak less what was allocated when their capture started); a snapshot without history (its state at the dump, no
    peak) beside a peak by its rows as they are, never judged as a peak's growth (:func:`memory_growth`)."""
    a, b = _memory_gpus(hb), _memory_gpus(hn)
    names = memory_labels(hn if hn is not None else hb)  # the categories named for the job compared (the new side's)
    if len(a) == 1 and len(b) == 1:
        pairs = [(next(iter(a)), next(iter(b)))]
    else:
        pairs = [(i, i) for i in sorted(set(a) & set(b))]
    out = []
    for i, j in pairs:
        ma, mb = a[i], b[j]
        if _above_start(ma) != _above_start(mb):
            out.append(_above_start_pair(i, j, ma, mb))
            continue
        out.append(GpuMemoryChange(gpu=i, new_gpu=j, rows=_memory_rows(ma, mb, names), sites=_site_changes(ma, mb),
                                   capacity_note=_capacity_note(ma, mb), note=_dump_note(ma, mb)))
    return out


#: The rows the memory gate judges: the allocated and reserved peaks, and the peak above a capture's start where a
#: side records no totals.  The reserved peak in segments in use, the reserve, the categories and the capacity are
#: parts or context of these, never gated on their own.
GATED_MEMORY = ("peak_allocated", "peak_reserved", "peak_above_start")


def memory_growth(m: GpuMemoryChange, percent: float) -> list[str]:
    """The lines of :meth:`Diff.memory_regressions` for one GPU: each gated row that grew by more than ``percent`` %
    of its base.  A row whose base is 0 or unknown has no share to judge; a snapshot side without history holds its
    state at the dump, no peak, so its peaks are judged only beside another such dump (:func:`_dump_note`).

    The allocator's noise (from 0.1.0+a41).  Peak allocated bytes are the program's: the same code allocates the same
    tensors (rounded to 512 bytes).  Reserved bytes are also the caching allocator's: whole segments it keeps cached
    (freed blocks no later request fitted, ``empty_cache()`` called or not) and each request's rounding to a segment.
    So no peak reserved grows past the gate by one segment's rounding or less (``diff.reserved_noise_bytes``: the
    20 MiB segment a 1-10 MiB request opens); and where both sides know their segments (snapshots whose history
    follows them) the peak reserved grew only where the peak reserved in segments in use grew too -- a whole empty
    segment is cache handed back (``empty_cache()``, or the allocator itself before it raises an OOM), while bytes
    in a segment that holds a live block (fragmentation) cannot be."""
    if _DUMP_WORDS in m.note:
        return []  # a dump's state beside a peak: not the same quantity (the pair's note says so)
    rows = {r.key: r for r in m.rows}
    in_use = rows.get("peak_reserved_in_use")
    in_use = in_use if in_use and in_use.base and in_use.new is not None and in_use.delta is not None else None
    floor = T("diff.reserved_noise_bytes")
    out = []
    for r in m.rows:
        if r.key not in GATED_MEMORY or r.base is None or r.new is None or r.base <= 0 or r.delta is None:
            continue
        share = r.delta / r.base
        if not (r.delta > 0 and share * 100.0 > percent):
            continue
        more = ""
        if r.key == "peak_reserved":
            if r.delta <= floor:
                continue  # within one segment's rounding
            if in_use is not None:
                used = in_use.delta / in_use.base
                if in_use.delta <= floor or used * 100.0 <= percent:
                    continue  # grown by whole empty segments: cache the allocator hands back
                more = f"; in segments in use {gb(in_use.base)} -> {gb(in_use.new)} ({used * 100:+.1f}%)"
        out.append(f"{_memory_gpu_name(m)} {r.label} {gb(r.base)} -> {gb(r.new)} ({share * 100:+.1f}%, "
                   f"+{gb(r.delta)}{more}; > {percent:g}%)")
    return out


def _memory_gpu_name(m: GpuMemoryChange) -> str:
    return f"GPU {m.gpu}" if m.gpu == m.new_gpu else f"GPU {m.gpu} -> GPU {m.new_gpu}"


def _above_start(m: dict[str, Any]) -> bool:
    """Whether a side records bytes above its capture's start only (PyTorch 1.8-1.10 traces: no allocator totals)."""
    return m.get("baseline") == "capture_start"


def _at_dump(m: dict[str, Any]) -> bool:
    """Whether a side is a snapshot's state at the dump alone: no history event, so its "peak" is the dump's bytes."""
    return not m.get("events") and m.get("baseline") == "absolute"


_DUMP_WORDS = "is a snapshot without history"


def _dump_note(a: dict[str, Any], b: dict[str, Any]) -> str:
    """What a pair with one snapshot side that recorded no history compares: that side's allocated and reserved bytes
    are the dump's (a lower bound of its peak), not a peak, so no row is a peak's change."""
    if _at_dump(a) == _at_dump(b):
        return ""
    which = "base" if _at_dump(a) else "new"
    return (f"the {which} side {_DUMP_WORDS} (its state at the dump: allocated and reserved then, a lower bound of "
            "its peak): its rows are the dump's, the other side's its peaks -- shown, not judged as growth; record the "
            "allocator's history before the dump for its peak")


def _above_start_pair(i: int, j: int, a: dict[str, Any], b: dict[str, Any]) -> GpuMemoryChange:
    """A side with bytes above its capture's start only (PyTorch 1.8-1.10) beside one with the allocator's totals:
    both know the peak above their capture's start -- the totals' peak less what was allocated when their capture
    started (``start_bytes``) --, and the sites holding most at the peak (each side's recorded allocations); the
    totals, the reserve and the capacity are the other side's alone, said so."""
    lacking = "base" if _above_start(a) else "new"

    def above(m: dict[str, Any]) -> int | None:
        if _above_start(m):
            return m.get("peak_allocated_bytes")
        peak, start = m.get("peak_allocated_bytes"), m.get("start_bytes")
        return peak - start if peak is not None and start is not None else None

    va, vb = above(a), above(b)
    rows = [] if va is None or vb is None else [MemoryChange("peak_above_start", "peak allocated above the capture's start",
                                                             va, vb, vb - va)]
    other = "new" if lacking == "base" else "base"
    note = (f"the {lacking} side records bytes above its capture's start only (a PyTorch 1.8-1.10 trace: no "
            f"allocator totals): compared by the peak above each capture's start "
            + (f"(the {other} side's peak allocated less what it held when its capture started); "
               if rows else f"-- not known on the {other} side (no allocation before its peak is recorded); ")
            + f"the peaks' totals, reserved bytes and capacity are the {other} side's alone")
    both_sites = rows and a.get("top") and b.get("top")  # a side whose events carry no addresses names no site
    return GpuMemoryChange(gpu=i, new_gpu=j, rows=rows, sites=_site_changes(a, b) if both_sites else [], note=note)


def _peak_used(m: dict[str, Any]) -> int | None:
    """What the process holds of the GPU at its peak: reserved where known, else allocated (``render.memory_rows``)."""
    v = m.get("peak_reserved_bytes")
    return v if v is not None else m.get("peak_allocated_bytes")


def _memory_rows(a: dict[str, Any], b: dict[str, Any], names: dict[str, str] = MEMORY_LABELS) -> list[MemoryChange]:
    """The rows of one GPU's memory compared: peaks, reserve, what holds the peak by category (``names``: the
    categories' names for the job, ``view.memory_labels``), capacity and the peak's share of it."""
    out: list[MemoryChange] = []

    def add(key: str, label: str, va: float | None, vb: float | None, unit: str = "bytes") -> None:
        if va is None and vb is None:
            return
        delta = vb - va if va is not None and vb is not None else None
        out.append(MemoryChange(key, label, va, vb, json_float(delta, 4) if unit == "share" else delta, unit))

    add("peak_allocated", "peak allocated", a.get("peak_allocated_bytes"), b.get("peak_allocated_bytes"))
    add("peak_reserved", "peak reserved", a.get("peak_reserved_bytes"), b.get("peak_reserved_bytes"))
    add("peak_reserved_in_use", "peak reserved in segments in use", a.get("peak_reserved_in_use_bytes"),
        b.get("peak_reserved_in_use_bytes"))
    add("reserve", "reserved beyond the allocated peak", a.get("gap_bytes"), b.get("gap_bytes"))
    ba, bb = a.get("breakdown") or {}, b.get("breakdown") or {}
    for cat in [c for c in MEMORY_LABELS if c in ba or c in bb]:  # a side with a breakdown holds 0 where it lacks one
        add(cat, f"{names.get(cat, cat)} at the peak", ba.get(cat, 0) if ba else None, bb.get(cat, 0) if bb else None)
    add("capacity", "capacity", a.get("capacity_bytes"), b.get("capacity_bytes"))
    sa, sb = (_peak_used(m) / m["capacity_bytes"] if m.get("capacity_bytes") and _peak_used(m) is not None
              and m.get("baseline") != "capture_start" else None for m in (a, b))
    add("peak_share", "peak / capacity", json_float(sa, 4), json_float(sb, 4), "share")
    return out


def _capacity_note(a: dict[str, Any], b: dict[str, Any]) -> str:
    lacking = [w for w, m in (("base", a), ("new", b)) if not m.get("capacity_bytes")]
    if not lacking:
        return ""
    which = "both sides" if len(lacking) == 2 else f"the {lacking[0]} side"
    return f"the GPU's capacity is unknown on {which}: compared by bytes, not by the share of the GPU they fill"


def _sites(m: dict[str, Any]) -> tuple[dict[tuple[str, str], int], bool]:
    rows = m.get("top") or []
    out: dict[tuple[str, str], int] = {}
    for row in rows:
        if len(row) >= 3:
            k = (str(row[0]), str(row[1]))
            out[k] = out.get(k, 0) + int(row[2] or 0)
    return out, len(rows) < TOP_HOLDERS


def _site_changes(a: dict[str, Any], b: dict[str, Any]) -> list[MemorySite]:
    """The sites holding most at each side's peak (the report's top list of :data:`TOP_HOLDERS`) whose bytes changed: a
    site outside the other side's full list only entered or left it (its bytes there are below the list's last row)."""
    sa, a_full = _sites(a)
    sb, b_full = _sites(b)
    out = []
    for k in set(sa) | set(sb):
        va, vb = sa.get(k), sb.get(k)
        status, delta = _row_change(va, vb, a_full, b_full)
        if status == "changed" and delta == 0:
            continue  # the same bytes at the same site: no change (the table's held row says what stayed)
        out.append(MemorySite(k[0], k[1], va, vb, delta, status))
    out.sort(key=lambda c: (-abs(c.delta_bytes if c.delta_bytes is not None else (c.base_bytes or c.new_bytes or 0)), c.site, c.category))
    return out[:TOP_HOLDERS]


def memory_calibrate(base_findings: Sequence[Finding], changes: Sequence[FindingChange], memory: Sequence[GpuMemoryChange],
                     others: Sequence[str]) -> MemoryCalibration | None:
    """The bytes the fixed findings said they free (each frees part of one peak: the largest, never a sum) next to
    the peak the new side realised, on the GPU they named."""
    fixed_ids = {c.base_id for c in changes if c.status == "fixed"}
    fixed = [f for f in base_findings if f.id in fixed_ids and f.saving_bytes]
    if not fixed or not memory:
        return None
    gpus = {f.gpu for f in fixed if f.gpu is not None}
    pair = next((m for m in memory if m.gpu in gpus), memory[0] if len(memory) == 1 else None)
    if pair is None:
        return None
    rows = {r.key: r for r in pair.rows}
    row = rows.get("peak_reserved")
    if row is None or row.delta is None:
        row = rows.get("peak_allocated")
    if row is None or row.delta is None or not row.base:
        return None
    predicted = min(max(int(f.saving_bytes or 0) for f in fixed), int(row.base))  # no fix frees more than the peak
    realised = -int(row.delta)
    tol = T("diff.calibration_tolerance")
    ratio = realised / predicted if predicted > 0 else None
    note = (f"realised = the whole change of the {row.label} between the captures ({gb(row.base)} -> {gb(row.new)}); "
            + (f"it also holds what got worse ({', '.join(others)})" if others else "no other finding got worse"))
    return MemoryCalibration(findings=sorted({f.rule for f in fixed}), gpu=pair.gpu, predicted_bytes=predicted,
                             realised_bytes=realised, measure=row.label, ratio=json_float(ratio, 3),
                             within=None if ratio is None else abs(ratio - 1.0) <= tol, tolerance=tol, note=note)


# --------------------------------------------------------------------------- kernels and ops


def _per_step(h: HostReport) -> float:
    """Kernel tables hold kept steps' totals over the host's GPUs: divide by the kept step count (1 without steps)
    and the GPUs that ran kernels, so a time per step is per GPU like the step it is compared with."""
    return float(h.steps.get("count") or 1) * max(1, sum(1 for g in h.gpus if g.kernel_count))


def _class_changes(hb: HostReport | None, hn: HostReport | None) -> list[Change]:
    if hb is None or hn is None:
        return []
    cb = {c["class"]: c for c in hb.kernel_classes}
    cn = {c["class"]: c for c in hn.kernel_classes}
    out = []
    for k in list(cb) + [k for k in cn if k not in cb]:
        a, b = cb.get(k), cn.get(k)
        va, vb = (a or {}).get("us_per_step"), (b or {}).get("us_per_step")
        status: ChangeStatus = "added" if a is None else "removed" if b is None else "changed"
        out.append(Change(k, k, va, vb, json_float((vb or 0.0) - (va or 0.0)), status,
                          {"base_kernels": (a or {}).get("kernels", 0), "new_kernels": (b or {}).get("kernels", 0),
                           "base_launches_per_step": (a or {}).get("launches_per_step"),
                           "new_launches_per_step": (b or {}).get("launches_per_step")}))
    out.sort(key=lambda c: -abs(c.delta or 0.0))
    return out


def _table_rows(h: HostReport, table: str, key: str, values: tuple[str, ...]) -> tuple[dict[str, float], bool]:
    """``{name: us per step}`` of a report table (rows of one name summed), and whether it is complete: from the first
    of ``values`` the table holds -- each kernel's time once (``report.build.WALL_US``), as the class table beside it
    sums it, else (a report before 0.1.0+a57) its own durations."""
    t: Table | None = getattr(h, table)
    value = next((v for v in values if t is not None and v in t.columns), None)
    if t is None or key not in t.columns or value is None:
        return {}, True
    ik, iv = t.columns.index(key), t.columns.index(value)
    per = _per_step(h)
    out: dict[str, float] = {}
    for row in t.rows:
        out[str(row[ik])] = out.get(str(row[ik]), 0.0) + float(row[iv] or 0.0) / per
    return out, len(t.rows) < TABLE_ROWS


def _row_change(va: float | None, vb: float | None, a_full: bool, b_full: bool) -> tuple[ChangeStatus, float | None]:
    """A row's status across a top list of each side, and its change: a row missing from a side's *full* list was
    added or removed; missing from a cut list it only entered or left the top (its value there is unknown: no delta)."""
    if va is None:
        status: ChangeStatus = "added" if a_full else "entered_top"
    elif vb is None:
        status = "removed" if b_full else "left_top"
    else:
        status = "changed"
    return status, (None if status in ("entered_top", "left_top") else (vb or 0) - (va or 0))


def _table_changes(hb: HostReport | None, hn: HostReport | None, table: str, key: str, value: tuple[str, ...],
                   top: int) -> list[Change]:
    """The ``top`` largest changes of a table's per-step time by name (module doc: top-25 tables)."""
    if hb is None or hn is None:
        return []
    a, a_full = _table_rows(hb, table, key, value)
    b, b_full = _table_rows(hn, table, key, value)
    out = []
    for name in set(a) | set(b):
        va, vb = a.get(name), b.get(name)
        status, delta = _row_change(va, vb, a_full, b_full)
        out.append(Change(name, name, json_float(va), json_float(vb), json_float(delta), status))
    out.sort(key=lambda c: (-abs(c.delta if c.delta is not None else (c.base or c.new or 0.0)), c.key))
    return out[:top]


__all__ = ["DIFF_VERSION", "Diff", "DiffError", "diff_reports", "memory_changes", "memory_calibrate", "nothing_compared", "match_findings", "calibrate", "step_change",
           "noise_ms", "spread", "step_times", "group_ms", "host_step_ms"]
