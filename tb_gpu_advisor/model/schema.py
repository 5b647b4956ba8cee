"""The report schema: defined once, used by the CLI, the server and the frontend.

A report is plain JSON built from these dataclasses (``to_json``).  The
frontend reads exactly these field names; ``frontend/`` tests load a
report produced by this module.  Bump ``SCHEMA_VERSION`` on any breaking
change (renamed or removed field, changed meaning); adding optional fields
is not breaking.

Times are milliseconds unless a field name says otherwise; shares are
fractions in [0, 1] (the UI formats them as percentages).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from tb_gpu_advisor.common import jsonout
from tb_gpu_advisor.model.damage import Damage, from_legacy

SCHEMA_VERSION = "1.7"

Severity = Literal["critical", "warning", "info", "ok"]
Status = Literal["good", "warning", "critical", "unknown"]
SEVERITY_ORDER: dict[str, int] = {"critical": 0, "warning": 1, "info": 2, "ok": 3}
#: rows kept in a host's kernel and op tables (the largest by time); ``kernel_classes`` covers every kernel
TABLE_ROWS = 25
#: the kernels table's column of each kernel's part of the GPU's time in the kept steps, each microsecond once
#: (``KernelStat.wall_us``: kernels on concurrent streams share the time they overlap) -- what the kernel classes'
#: ``us_per_step`` sums, where "total us" sums the kernels' own durations (rates and averages need those).  Why: the
#: diff printed kernels from "total us" under classes from ``us_per_step``, and on concurrent streams the kernels
#: summed past their classes (wild/extrap_parallel_kernels_gtx1060: 895.6 ms/step of kernels under 467.9 ms/step of
#: classes; h37-classsum33 *Left* 1, h37-coldshare34).  The ops table's :data:`KERNEL_WALL_US` likewise
#: (``OpStat.kernel_wall_us``).  From 0.1.0+a57.
WALL_US = "wall us"
KERNEL_WALL_US = "kernel wall us"


@dataclass
class Metric:
    """One number with its meaning and verdict (a headline card, or a finding's metric)."""

    id: str
    label: str
    value: float | None
    unit: str  # "share", "ms", "count", "ratio", "us"
    display: str  # preformatted, e.g. "72.4%"
    good_direction: Literal["higher", "lower", "none"] = "none"
    status: Status = "unknown"
    meaning: str = ""
    threshold: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Saving:
    """Estimated step-time saving of a fix, with its assumption spelled out."""

    ms_per_step: float
    percent_of_step: float
    assumption: str
    #: the time it recovers: [{"group", "pool", "ms"}] adding up to ms_per_step (rules/savings.py)
    recovers: list[dict[str, Any]] = field(default_factory=list)
    #: ids of the findings that recover some of the same time (their savings do not add up)
    overlaps: list[str] = field(default_factory=list)


@dataclass
class Table:
    """Evidence table: rows are lists aligned with columns (values are JSON scalars)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]


@dataclass
class TimeWindow:
    """A spot in the trace viewer: host, optional GPU, step, and the window in ms as that viewer counts them.

    XPlane: from the capture's start, the stock trace viewer's 0 (not the first event, 7-20 ms later in most real
    captures); PyTorch: from the trace's start, Perfetto's 0 (``HostReport.capture["time_base"]`` says which).
    """

    host: str
    label: str
    start_ms: float
    end_ms: float
    gpu: int | None = None
    step: int | None = None


@dataclass
class Action:
    """A recommended change; ``snippet`` is code or an env var the user can copy."""

    text: str
    snippet: str | None = None
    snippet_lang: Literal["python", "shell", "text"] | None = None


@dataclass
class Finding:
    """The output of one rule for one scope (session, host or GPU).

    A session-level finding merged from the same finding on several hosts has ``host`` None and ``hosts``
    the host names (see ``merge.merge_findings``); otherwise ``hosts`` is empty.
    """

    id: str  # stable: "<rule>" (session level, merged over hosts) or "<rule>:<host>" / "<rule>:<host>:<gpu>"
    rule: str
    severity: Severity
    title: str
    summary: str
    guide_section: str
    metric: Metric | None = None
    saving: Saving | None = None
    evidence: list[Table] = field(default_factory=list)
    windows: list[TimeWindow] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    host: str | None = None
    gpu: int | None = None
    hosts: list[str] = field(default_factory=list)  # merged over hosts: every host it was found on
    #: how sure the steps its per-step numbers rest on are (schema 1.2): "high" (the format's own step markers),
    #: "medium" (the program's spans, one pass), "low" (GPU busy clusters, the whole capture)
    confidence: str = "high"
    #: GPU memory the fix frees, in bytes (schema 1.3: the memory findings), None where it frees none or is no memory fix
    saving_bytes: int | None = None


@dataclass
class StepRow:
    """One step's non-overlapping breakdown (ms). Categories sum to ``step_ms``."""

    step: int
    start_ms: float
    step_ms: float
    breakdown: dict[str, float]
    gpu: int | None = None


@dataclass
class GpuSummary:
    gpu: int
    name: str
    compute_capability: str | None
    step_ms: float | None
    busy_share: float | None
    kernel_count: int
    collective_calls_per_step: float | None = None
    launch_skew_ms: float | None = None
    breakdown: dict[str, float] = field(default_factory=dict)
    #: the job's global rank driving this GPU (PyTorch ``distributedInfo.rank``), null unknown (schema 1.1)
    rank: int | None = None
    #: collective type -> [calls, ms, exposed ms, bytes per call or null, group size or null, transfer ms] per step on
    #: this GPU (transfer: the least time any GPU of the host spends in each call, summed -- the host's, where its GPUs'
    #: calls pair up, else the GPU's own ms; absent before 0.1.0+a35)
    #: (schema 1.1)
    collectives: dict[str, list[float | None]] = field(default_factory=dict)
    #: collective type -> the calls as bounded columns (``model.callrows``: {"steps", "count", "groups", "runs", "bytes",
    #: "ms"}, or past its cap {"steps", "count", "cut"}):
    #: each call of the kept steps on this GPU, in (group, step, start) order, its transfer the host's least in the call
    #: where its GPUs' calls pair up, else the GPU's own time -- what matches a call across host files (from 0.1.0+a35;
    #: ``metrics.job.JobView.transfer_ms``)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: where this GPU's memory goes (schema 1.3; ``metrics/memory.py``, docs/report-schema.md "GpuSummary.memory"):
    #: peak allocated / reserved bytes, capacity, when the peak falls, what holds it, the chart's series; null where
    #: the capture records no allocator events
    memory: dict[str, Any] | None = None
    #: ms per step this GPU idled while the host waited in a communication library's calls (``MPI_Wait``; from
    #: 0.1.0+a52; absent before: read as unknown): what the job splits into the transfer and the wait for a late rank
    host_calls_ms: float | None = None
    #: this GPU's kernels' longest single calls in the kept steps, longest first (at most 16): [kernel, call index
    #: (0-based among its calls), ms, the kernel's calls, that call's ms per step] -- what matches one slow call across
    #: host files (from 0.1.0+a78; absent before: unknown)
    longest_calls: list[list[Any]] | None = None
    #: this GPU's compute kernels' summed time in the kept steps, largest first (at most 16): [kernel, ms per step] --
    #: what places a rank's compute gap by kernel across host files (from 0.1.0+a80; absent before: unknown)
    kernel_ms: list[list[Any]] | None = None
    #: collective type -> the job's global ranks of every process group its calls ran in on this GPU, sorted, where
    #: every call's op records them (PyTorch 2.1+'s ``Process Group Ranks``; a type absent: unknown): the ranks its
    #: calls could have waited for (from 0.1.0+a84; absent before: unknown)
    collective_ranks: dict[str, list[int]] | None = None


@dataclass
class HostReport:
    host: str
    path: str
    size_bytes: int
    error: str | None = None
    capture: dict[str, Any] = field(default_factory=dict)  # length_ms, steady_state, ...
    steps: dict[str, Any] = field(default_factory=dict)  # source, count, dropped, note
    headline: list[Metric] = field(default_factory=list)
    breakdown_ms: dict[str, float] = field(default_factory=dict)  # average per step
    step_rows: list[StepRow] = field(default_factory=list)
    gpus: list[GpuSummary] = field(default_factory=list)
    kernels: Table | None = None
    ops: Table | None = None
    memcpy: Table | None = None
    kernel_durations_us: dict[str, Any] = field(default_factory=dict)  # histogram for the chart
    #: every kernel of the kept steps by class: [{"class", "kernels", "launches_per_step", "us_per_step"}]
    kernel_classes: list[dict[str, Any]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    #: step time if every warning/critical fix lands (rules/savings.achievable); {} without a step time
    achievable: dict[str, Any] = field(default_factory=dict)
    #: collectives per step and GPU by type: calls, time, exposed (no compute overlaps), transfer (schema 1.1)
    communication: Table | None = None
    #: AllReduce time expected from ``--params`` x 4 B / link bandwidth, per step (schema 1.1); None unknown
    expected_allreduce_ms: float | None = None
    #: the top GEMM shapes against their roofline, per step and GPU (schema 1.1; ``metrics/flops.py``)
    roofline: Table | None = None
    #: what the capture is (schema 1.2; ``job/``): kind (training / inference / serving / no_gpu / unknown) with its
    #: confidence and evidence, the serving engine, the phase (steady / warm-up / mixed) with its one-time costs, the
    #: framework version, and how sure the steps are (``step_source``, ``step_confidence``)
    job: dict[str, Any] = field(default_factory=dict)
    #: what the reader could not read of the file (cut off mid-write, corrupt bytes, malformed events), in words: the
    #: report covers only what was read, and a damaged host is never healthy (schema 1.1, from 0.1.0+a14)
    damage: list[str] = field(default_factory=list)
    #: the entries of ``damage`` that are no cut: the file was read whole, but its records contradict each other (a
    #: snapshot's history allocating beyond its segments, blocks that overlap), so its numbers are the file's own and
    #: may not be the GPU's, and nothing lies past the damage (a ``model.damage`` record of kind contradiction; schema 1.5, optional: a
    #: report without it holds cuts alone).  The rest of ``damage`` is a file cut short or partly unread
    contradictions: list[str] = field(default_factory=list)
    #: the entries of ``damage`` that are records left unread in a file read to its end (events without a numeric
    #: time skipped, a block whose size is no number left out): the numbers leave those records out, and nothing lies
    #: past them (a ``model.damage`` record of kind unreadable; schema 1.6, optional: a report without it holds none apart)
    unreadable: list[str] = field(default_factory=list)
    #: the file's damage, one typed record each (``model.damage.Damage``: kind -- cut, unreadable, contradiction --,
    #: a machine-readable code, its words, and where in the file where the reader knows it): what the verdict, the
    #: CLI's stderr, the MCP summary and the tab read.  An error host carries the record its reader's error names (a
    #: truncated protobuf, a corrupt database, a truncated pickle).  ``damage``, ``contradictions`` and
    #: ``unreadable`` are its words, kept for readers of schema 1.6 (schema 1.7, optional: a report without it has its
    #: records made from those lists, :meth:`records`)
    damage_records: list[Damage] = field(default_factory=list)

    def records(self) -> list[Damage]:
        """The host's damage as typed records: its own, else (a report of schema 1.6 or before) made from its
        ``damage`` words and the lists that named their kinds."""
        if self.damage_records:
            return list(self.damage_records)
        return from_legacy(self.damage or (), self.contradictions or (), self.unreadable or ())

    def cuts(self) -> list[str]:
        """The words of the host's damage that is a file cut short: a read stopped before the file's end."""
        return [d.detail for d in self.records() if d.kind == "cut"]

    def mean_step_ms(self) -> float | None:
        """The host's mean step: the one number every surface prints it from (h37-randjobs4) -- the metrics' step as
        the report keeps it (``achievable.step_ms``, the number the findings' words print), else, in a report without
        it, its ledger's parts summed (they add up to it).  Two homes printed one step two ways at a printing tie: the
        header summed the ledger's parts, each rounded to the ns (0.272501 ms, "273 us"), the achievable line the
        step (0.2725 ms, "272 us").  None: no step timed."""
        a = self.achievable.get("step_ms") if isinstance(self.achievable, dict) else None
        if a:
            return float(a)
        total = sum(v for v in (self.breakdown_ms or {}).values() if v)
        return total if total > 0 else None

    def to_json(self) -> str:
        """One host's report as JSON (the unit of the per-host cache a session report is merged from)."""
        return jsonout.dumps(self, default=_json_default)

    @classmethod
    def from_json(cls, text: str) -> "HostReport":
        return _host(json.loads(text))


@dataclass
class Report:
    run: str
    session: str
    hosts: list[HostReport]
    findings: list[Finding]  # all hosts, ranked by saving then guide order
    headline: list[Metric]
    healthy: bool
    analyzer_version: str
    generated_at: str
    schema_version: str = SCHEMA_VERSION
    notes: list[str] = field(default_factory=list)
    #: the slowest host's achievable step (a session steps at its slowest host's pace)
    achievable: dict[str, Any] = field(default_factory=dict)
    #: every rank (GPU of a host file) side by side, mean per step, when the session has 2+ (schema 1.1)
    ranks: Table | None = None
    #: every collective type of the job, per step (median rank), with its transfer and bus bandwidth (schema 1.1)
    collectives: Table | None = None
    #: one line: healthy, or the findings by severity with the top one's title and saving -- the same words in
    #: the tab, the CLI's text and markdown (``report.verdict``; schema 1.1)
    verdict: str = ""
    #: every number the tab's report view prints, as text the CLI's renderers wrote (``report.view.display``; from
    #: 0.1.0+a40): the tab formats no number of its own, so one quantity reads the same on screen and in the CLI
    display: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``dataclasses.asdict(self)`` without deep-copying the numbers and strings (``common.jsonout.plain``)."""
        return jsonout.plain(self)

    def to_json(self, indent: int | None = None) -> str:
        """``json.dumps(self.to_dict(), indent=indent, allow_nan=False)``, written straight from the dataclasses
        (``common.jsonout.dumps``: the same text, without the copy)."""
        return jsonout.dumps(self, indent=indent, default=_json_default)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Report":
        """The inverse of :meth:`to_dict` (e.g. a cached report's JSON back into a Report for the renderers).

        Unknown keys (a newer writer's optional fields) are ignored.
        """
        return _build(cls, d, hosts=[_host(h) for h in d.get("hosts") or []],
                      findings=[_finding(f) for f in d.get("findings") or []], ranks=_opt(Table, d.get("ranks")),
                      collectives=_opt(Table, d.get("collectives")),
                      headline=[_build(Metric, m) for m in d.get("headline") or []])

    @classmethod
    def from_json(cls, text: str) -> "Report":
        return cls.from_dict(json.loads(text))


def problem(cls: type, doc: Any) -> str | None:
    """The first way ``doc`` (parsed JSON) is not a ``cls`` (:class:`Report`, :class:`HostReport`, ...) as ``to_json``
    writes it, else None: every field without a default present, every field present of its declared type (a
    float field takes an int, an int field no bool; ``Any`` takes anything), nested dataclasses checked alike.

    Why: a report read back from a cache or a file is trusted by every renderer; ``{}`` or ``{"hosts": 5}`` under a
    valid cache header crashed every later ``report`` (issue 27 item 14).  Unknown keys are allowed, as in
    :meth:`Report.from_dict` (a newer writer's optional fields).

    A document is first checked by :func:`_checker`'s yes/no test, which builds no message (a 6 MB host report: 0.4 ->
    0.07 s); only one it refuses is walked again here to say where."""
    if _checker(cls)(doc):
        return None
    return _problem(cls, doc, cls.__name__)


@functools.lru_cache(maxsize=None)
def _checker(tp: Any) -> Callable[[Any], bool]:
    """``_problem(tp, v, ...) is None`` as a function of ``v``, made once per type: the same rules, without the path
    strings ``_problem`` formats for every value it visits.  A type ``_problem`` has no rule for is refused here, so
    that ``_problem`` raises its TypeError."""
    if tp is Any:
        return lambda v: True
    if dataclasses.is_dataclass(tp):
        return _dataclass_checker(tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        checks = tuple(_checker(a) for a in args)
        return lambda v: any(c(v) for c in checks)
    if origin is Literal:
        return lambda v: v in args
    if origin is list:
        item = _checker(args[0])
        return lambda v: isinstance(v, list) and all(map(item, v))
    if origin is dict:
        value = _checker(args[1])
        return lambda v: (isinstance(v, dict) and all(isinstance(k, str) for k in v) and all(map(value, v.values())))
    return _SCALAR_CHECKS.get(tp, lambda v: False)


_SCALAR_CHECKS: dict[Any, Callable[[Any], bool]] = {
    type(None): lambda v: v is None, bool: lambda v: isinstance(v, bool), str: lambda v: isinstance(v, str),
    int: lambda v: isinstance(v, int) and not isinstance(v, bool),
    float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def _dataclass_checker(tp: type) -> Callable[[Any], bool]:
    """A dataclass's check; its fields' checks are made at its first use (a type may name itself in a field)."""
    made: list[tuple[tuple[str, bool, Callable[[Any], bool]], ...]] = []

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return False
        if not made:
            made.append(tuple((f.name, f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
                               _checker(_hints(tp)[f.name])) for f in dataclasses.fields(tp)))
        for name, required, field_check in made[0]:
            if name in v:
                if not field_check(v[name]):
                    return False
            elif required:
                return False
        return True

    return check


def _problem(tp: Any, v: Any, where: str) -> str | None:
    if tp is Any:
        return None
    if dataclasses.is_dataclass(tp):
        if not isinstance(v, dict):
            return f"{where}: not an object"
        for f in dataclasses.fields(tp):
            if f.name not in v:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    return f"{where}: no {f.name!r}"
                continue
            bad = _problem(_hints(tp)[f.name], v[f.name], f"{where}.{f.name}")
            if bad:
                return bad
        return None
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return None if any(_problem(a, v, where) is None for a in args) else f"{where}: not {_type_name(tp)}"
    if origin is Literal:
        return None if v in args else f"{where}: not one of {', '.join(map(repr, args))}"
    if origin is list:
        if not isinstance(v, list):
            return f"{where}: not a list"
        return next((p for i, x in enumerate(v) if (p := _problem(args[0], x, f"{where}[{i}]"))), None)
    if origin is dict:
        if not isinstance(v, dict) or not all(isinstance(k, str) for k in v):
            return f"{where}: not an object"
        return next((p for k, x in v.items() if (p := _problem(args[1], x, f"{where}[{k!r}]"))), None)
    ok = {type(None): v is None, bool: isinstance(v, bool), str: isinstance(v, str),
          int: isinstance(v, int) and not isinstance(v, bool),
          float: isinstance(v, (int, float)) and not isinstance(v, bool)}.get(tp)
    if ok is None:
        raise TypeError(f"{where}: no check for {tp!r}")  # a new field type: teach _problem, not a silent pass
    return None if ok else f"{where}: not {_type_name(tp)}"


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _build(cls: type, d: dict[str, Any], **nested: Any) -> Any:
    """``cls(**d)`` keeping only ``cls``'s fields, with ``nested`` already-converted values."""
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in d.items() if k in names and k not in nested}, **nested)


def _opt(cls: type, d: dict[str, Any] | None) -> Any:
    return None if d is None else _build(cls, d)


def _finding(d: dict[str, Any]) -> Finding:
    return _build(Finding, d, metric=_opt(Metric, d.get("metric")), saving=_opt(Saving, d.get("saving")),
                  evidence=[_build(Table, t) for t in d.get("evidence") or []],
                  windows=[_build(TimeWindow, w) for w in d.get("windows") or []],
                  actions=[_build(Action, a) for a in d.get("actions") or []])


def _host(d: dict[str, Any]) -> HostReport:
    return _build(HostReport, d, headline=[_build(Metric, m) for m in d.get("headline") or []],
                  step_rows=[_build(StepRow, r) for r in d.get("step_rows") or []],
                  gpus=[_build(GpuSummary, g) for g in d.get("gpus") or []],
                  kernels=_opt(Table, d.get("kernels")), ops=_opt(Table, d.get("ops")), memcpy=_opt(Table, d.get("memcpy")),
                  communication=_opt(Table, d.get("communication")), roofline=_opt(Table, d.get("roofline")),
                  findings=[_finding(f) for f in d.get("findings") or []],
                  damage_records=[Damage.from_dict(x) for x in d.get("damage_records") or [] if isinstance(x, dict)])


def _json_default(o: Any) -> Any:
    # numpy scalars sneak in from the metrics; convert them instead of failing.
    if hasattr(o, "item"):
        return o.item()
    plain = getattr(o, "__json_plain__", None)  # a column table standing for a list of rows (model.steprows)
    if plain is not None:
        return plain()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
