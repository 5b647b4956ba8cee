"""Analyze host files into the report: read -> steps -> metrics -> rules -> HostReport / Report.

``analyze_host`` never raises for a bad file: the HostReport carries ``error``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import operator
import os
from typing import Any, Callable, Iterable

import numpy as np

from tb_gpu_advisor import ANALYZER_VERSION, formats, frameworks, rules
from tb_gpu_advisor import kernel_classes as kc
from tb_gpu_advisor.fmt import pct as _pct
from tb_gpu_advisor.memory import release_free_heap
from tb_gpu_advisor.metrics.compute import compute_host_metrics
from tb_gpu_advisor.metrics.types import BREAKDOWN_CATEGORIES, HostMetrics, KernelDurations
from tb_gpu_advisor.report_schema import SEVERITY_ORDER, TABLE_ROWS, Finding, GpuSummary, HostReport, Metric, Report, Saving, StepRow, Table
from tb_gpu_advisor.rules.headline import CARD_RULE, grade_card
from tb_gpu_advisor.rules.savings import achievable, mark_overlaps, parts

TOP_N = TABLE_ROWS


def _f(x: Any, nd: int = 4) -> float | None:
    """JSON-safe float: None for None/NaN/inf."""
    if x is None:
        return None
    x = float(x)
    return round(x, nd) if math.isfinite(x) else None


def headline_cards(m: HostMetrics, findings: list[Finding]) -> list[Metric]:
    """The guide's overview numbers as cards, graded with the host's findings (rules/headline.py)."""
    h = m.headline
    fw = frameworks.get(m.capture.framework)
    cards = [
        Metric("device_step_share", "Device step-time share", _f(h.device_step_share), "share", _pct(h.device_step_share), "higher",
               meaning="share of the step the GPU spends executing kernels (guide 1: maximize)",
               detail={"avg_step_ms": _f(h.avg_step_ms), "device_compute_ms": _f(m.breakdown.device_compute)}),
        _not_applicable(fw, Metric("host_op_share", "Ops placed on host", _f(h.host_op_share_by_count), "share",
                                   _pct(h.host_op_share_by_count), "lower", meaning=fw.label("host_op_meaning"),
                                   detail={"by_time": _f(h.host_op_share_by_time), "host_ops": h.host_op_count,
                                           "device_ops": h.device_op_count})),
        Metric("sixteen_bit_share", "16-bit kernel time", _f(h.sixteen_bit_time_share), "share", _sixteen_display(h), "higher",
               meaning="share of GPU kernel time of known precision in fp16 or bf16 kernels (guide: how many kernels use fp16); "
                       "kernels whose name gives no dtype (compiler fusions, Triton GEMMs) are left out and counted in detail",
               detail={"fp16_kernels": h.fp16_kernel_count, "bf16_kernels": h.bf16_kernel_count, "kernels": h.kernel_count,
                       "fp16_share": _f(h.fp16_time_share), "bf16_share": _f(h.bf16_time_share),
                       "tensor_core_share": _f(h.tensor_core_time_share),
                       "unknown_precision_share": _f(h.unknown_precision_share)}),
        Metric("launch_wait_share", "Idle waiting for launch", _f(h.launch_wait_share), "share", _pct(h.launch_wait_share), "lower",
               meaning="share of the step the GPU was idle waiting for the host to launch the next kernel",
               detail={"ms_per_step": _f(m.breakdown.launch_wait)}),
        Metric("input_wait_share", "Waiting for input", _f(h.input_wait_share), "share", _pct(h.input_wait_share), "lower",
               meaning=fw.label("input_wait_meaning"),
               detail={"ms_per_step": _f(m.breakdown.input_wait)}),
    ]
    active = any(g.active for g in m.gpus)
    return [grade_card(c, findings, active, rules.quiet_reason(CARD_RULE[c.id], m) if c.id in CARD_RULE else "")
            for c in cards]


def _sixteen_display(h) -> str:
    """The 16-bit share, saying how much kernel time has no known precision."""
    unk = h.unknown_precision_share
    if h.sixteen_bit_time_share is None:
        return "n/a (no kernel of known precision)" if unk else _pct(None)
    return _pct(h.sixteen_bit_time_share) + (f" of known ({_pct(unk)} unknown)" if unk and unk >= 0.005 else "")


def _not_applicable(fw, card: Metric) -> Metric:
    """A card the framework has no meaning for: no value, "n/a" and the reason, never a red number."""
    if fw.applies(card.id):
        return card
    card.value = None
    card.display = "n/a"
    card.meaning = fw.not_applicable[card.id]
    card.detail = {"not_applicable": fw.not_applicable[card.id]}
    return card


def _kernel_table(m: HostMetrics, n: int = TOP_N) -> Table:
    cols = ["kernel", "op", "op type", "count", "total us", "avg us", "min us", "max us", "tensor core", "TC eligible", "precision", "launch latency us", "GPUs"]
    rows = [[k.name, k.op_name, k.op_type, k.count, _f(k.total_us, 3), _f(k.avg_us, 3), _f(k.min_us, 3), _f(k.max_us, 3), k.tensor_core,
             k.tc_eligible, k.precision, _f(k.launch_latency_avg_us, 3), ",".join(map(str, k.gpus))] for k in m.kernels[:n]]
    return Table("Top GPU kernels (kept steps, all GPUs)", cols, rows)


def _op_table(m: HostMetrics, n: int = TOP_N) -> Table:
    cols = ["op", "type", "on device", "occurrences", "host ms", "kernels", "kernel us", "TC eligible", "tensor core share", "precision", "eager"]
    rows = [[o.op_name, o.op_type, o.on_device, o.occurrences, _f(o.host_self_ms), o.kernel_count, _f(o.kernel_total_us, 3), o.tc_eligible,
             _f(o.tensor_core_share), o.precision, o.is_eager] for o in m.ops[:n]]
    return Table(frameworks.get(m.capture.framework).label("ops_table"), cols, rows)


def kernel_class_summary(m: HostMetrics) -> list[dict[str, Any]]:
    """Every kept-step kernel by class (kernel_classes.kernel_class), largest time first: complete where the
    kernel table stops at its top rows, so a diff sees every class change."""
    n = float(m.steps.count or 1)
    acc: dict[str, list[float]] = {}
    for k in m.kernels:
        c = kc.kernel_class(k.name, tensor_core=k.tensor_core, tc_eligible=k.tc_eligible, elementwise=k.elementwise,
                            collective=k.collective)
        a = acc.setdefault(c, [0, 0.0, 0.0])
        a[0] += 1
        a[1] += k.count
        a[2] += k.total_us
    rows = [{"class": c, "kernels": int(a[0]), "launches_per_step": _f(a[1] / n, 3), "us_per_step": _f(a[2] / n, 3)}
            for c, a in acc.items()]
    return sorted(rows, key=lambda r: -(r["us_per_step"] or 0.0))


def _memcpy_table(m: HostMetrics) -> Table:
    cols = ["direction", "count/step", "bytes/step", "ms/step", "sync/step", "sync share", "recurring", "exposed ms/step", "top ops"]
    rows = [[c.direction, _f(c.count_per_step, 2), _f(c.bytes_per_step, 0), _f(c.ms_per_step), _f(c.sync_count_per_step, 2), _f(c.sync_share),
             c.recurring, _f(c.blocking_ms_per_step), "; ".join(c.top_ops[:3])] for c in m.memcpy]
    return Table("Memory copies per step", cols, rows)


def kernel_histogram(k: KernelDurations) -> dict[str, Any]:
    """The report's kernel duration histogram (JSON: open last edge as null, totals rounded)."""
    return {
        "edges_us": [e if math.isfinite(e) else None for e in k.edges_us], "counts": list(k.counts),
        "total_us": [_f(t, 3) for t in k.total_us], "band_us": list(k.band_us),
        "below_band_count": k.below_band_count, "count": k.count,
    }


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def analyze_host(host_file, params: int | None = None) -> HostReport:
    """Analyze one host file (a ``discovery.HostFile``, or anything with ``host``, ``path`` and optionally ``format``
    and ``size``); errors land in ``HostReport.error``: a bad file must not break the session."""
    host, path = host_file.host, host_file.path
    size = int(getattr(host_file, "size", 0) or 0)
    try:
        trace = formats.read(host_file)
    except Exception as e:  # noqa: BLE001
        return HostReport(host=host, path=path, size_bytes=size or _size(path), error=str(e) or type(e).__name__)
    size = size or trace.size_bytes
    try:
        m = compute_host_metrics(trace, params)
        del trace  # the event tables, before the report is built (see memory.py)
        release_free_heap()
        m.host = host
        return build_host_report(m, size)
    except Exception as e:  # noqa: BLE001
        return HostReport(host=host, path=path, size_bytes=size, error=f"analysis failed: {type(e).__name__}: {e}")


_BD_VALUES = operator.attrgetter(*BREAKDOWN_CATEGORIES)


def round6(values: np.ndarray) -> list[float | None]:
    """``[_f(x, 6) for x in values.ravel()]`` -- Python's ``round(x, 6)``, None for NaN/inf -- vectorized.

    ``round(x, 6)`` is the double nearest to N/10**6, N = x*10**6 rounded half-even from x's exact
    value; ``rint(x * 1e6) / 1e6`` is exactly that (the division is correctly rounded) unless the
    rounding error of ``x * 1e6`` (below |x * 1e6| * 2**-52) reaches the nearest half-integer, where
    rint could round the other way.  Those few values (and NaN, inf, |x * 1e6| >= 2**52) go
    through Python's ``round``: every result is bit-identical to it.
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    y = x * 1e6
    out = (np.rint(y) / 1e6).tolist()
    with np.errstate(invalid="ignore"):
        tie_dist = np.abs(y - np.floor(y) - 0.5)
        exact = (np.abs(y) < 2.0 ** 52) & (tie_dist > np.abs(y) * 2.0 ** -52 + 1e-9)
    for i in np.flatnonzero(~exact).tolist():
        v = float(x[i])
        out[i] = round(v, 6) if math.isfinite(v) else None
    return out


def _step_rows(rows) -> list[StepRow]:
    """StepRows of ``steps_detail``: ``_f(x, 6)`` of every number (tens of thousands of rows: rounded at once,
    :func:`round6`).  A None becomes NaN in the float matrix, and so None again, as ``_f`` makes it."""
    cats = BREAKDOWN_CATEGORIES
    width = 2 + len(cats)
    mat = np.array([(r.start_ms, r.step_ms, *_BD_VALUES(r.breakdown)) for r in rows], dtype=np.float64).reshape(len(rows), width)
    vals = round6(mat)
    return [StepRow(step=r.step, start_ms=vals[k], step_ms=vals[k + 1], breakdown=dict(zip(cats, vals[k + 2:k + width])), gpu=r.gpu)
            for r, k in zip(rows, range(0, len(vals), width))]


def build_host_report(m: HostMetrics, size: int) -> HostReport:
    findings = rules.evaluate(m)
    for f in findings:
        f.host = f.host or m.host
    steps_rows = _step_rows(m.steps_detail)
    gpus = [GpuSummary(gpu=g.gpu, name=g.name, compute_capability=g.compute_capability, step_ms=_f(g.step_ms, 6), busy_share=_f(g.busy_share),
                       kernel_count=g.kernel_count, collective_calls_per_step=_f(g.collective_calls_per_step),
                       launch_skew_ms=_f(g.first_kernel_offset_ms), breakdown={k: _f(v, 6) for k, v in g.breakdown.as_dict().items()})
            for g in m.gpus]
    cap = m.capture
    det = m.steps
    return HostReport(
        host=m.host, path=m.path, size_bytes=size,
        capture={"length_ms": _f(cap.length_ms, 3), "steps_captured": cap.steps_captured, "steps_kept": cap.steps_kept,
                 "steady_state": cap.steady_state, "step_time_cv": _f(cap.step_time_cv), "too_short": cap.too_short, "too_long": cap.too_long,
                 "num_events": cap.num_events, "gpu_thread_mode_private": cap.gpu_thread_mode_private, "note": cap.note,
                 "framework": cap.framework, "framework_name": frameworks.get(cap.framework).name,
                 "memory_headroom": _f(m.memory.headroom_share), "notes": m.notes},
        steps={"source": det.source, "count": det.count, "found": det.found, "note": det.note, "mapped_via": det.mapped_via,
               "dropped": [{"step": d.step, "reason": d.reason} for d in det.dropped]},
        headline=headline_cards(m, findings),
        breakdown_ms={k: _f(v, 6) for k, v in m.breakdown.as_dict().items()},
        step_rows=steps_rows, gpus=gpus, kernels=_kernel_table(m), ops=_op_table(m), memcpy=_memcpy_table(m),
        kernel_durations_us=kernel_histogram(m.kernel_durations), kernel_classes=kernel_class_summary(m), findings=findings,
        achievable=achievable(m.headline.avg_step_ms, m.breakdown.as_dict(), findings),
    )


def _host_steps(hr: HostReport) -> int:
    try:
        return max(1, int((hr.steps or {}).get("count") or 0))
    except (TypeError, ValueError):
        return 1


def _merged_evidence(per_host: list[tuple[str, Finding]]) -> list[Table]:
    """Evidence of one finding on several hosts: tables of the same title and columns concatenated with a leading
    ``host`` column (in host order); a table whose columns differ between hosts stays a table per host."""
    out: list[Table] = []
    by_key: dict[tuple[str, tuple], Table] = {}
    titles_cols: dict[str, set] = {}
    for _, f in per_host:
        for t in f.evidence:
            titles_cols.setdefault(t.title, set()).add(tuple(t.columns))
    for host, f in per_host:
        for t in f.evidence:
            if len(titles_cols[t.title]) == 1:
                key = (t.title, tuple(t.columns))
                m = by_key.get(key)
                if m is None:
                    m = by_key[key] = Table(t.title, ["host", *t.columns], [])
                    out.append(m)
                m.rows.extend([host, *r] for r in t.rows)
            else:
                out.append(Table(f"{t.title} ({host})", list(t.columns), [list(r) for r in t.rows]))
    return out


def _merge_group(per_host: list[tuple[HostReport, Finding]]) -> Finding:
    """One session-level finding for the same finding on several hosts (see :func:`merge_findings`)."""
    # the representative: the worst host (severity, then saving), whose summary, metric and actions are shown
    def worst(hf):
        f = hf[1]
        return (SEVERITY_ORDER.get(f.severity, 9), -(f.saving.ms_per_step if f.saving else 0.0))

    rep_hr, rep = min(per_host, key=worst)
    hosts = [hr.host for hr, _ in per_host]
    others = [h for h in hosts if h != rep_hr.host]
    summary = f"{rep.summary} (Numbers from {rep_hr.host}; the same finding on {', '.join(others)}.)"
    saving = None
    with_saving = [(hr, f) for hr, f in per_host if f.saving is not None]
    if with_saving:
        w = [_host_steps(hr) for hr, _ in per_host]
        tot = float(sum(w))
        ms_ = sum(wi * (f.saving.ms_per_step if f.saving else 0.0) for wi, (_, f) in zip(w, per_host)) / tot
        pc = sum(wi * (f.saving.percent_of_step if f.saving else 0.0) for wi, (_, f) in zip(w, per_host)) / tot
        each = ", ".join(f"{hr.host} {f.saving.ms_per_step:g} ms" if f.saving else f"{hr.host} none" for hr, f in per_host)
        base = rep.saving or with_saving[0][1].saving
        saving = Saving(ms_per_step=round(ms_, 3), percent_of_step=round(pc, 2),
                        recovers=parts(ms_, [(r["group"], r["pool"], r["ms"]) for r in base.recovers]),
                        assumption=f"{rep.saving.assumption if rep.saving else with_saving[0][1].saving.assumption}; "
                                   f"session saving = mean over the {len(per_host)} hosts weighted by their kept steps "
                                   f"({each})")
    metric = rep.metric
    if metric is not None:
        per = {hr.host: (f.metric.value if f.metric else None) for hr, f in per_host}
        metric = dataclasses.replace(metric, detail={**(metric.detail or {}), "per_host": per})
    actions, seen = [], set()
    for _, f in [(rep_hr, rep)] + [hf for hf in per_host if hf[1] is not rep]:
        for a in f.actions:
            if a.text not in seen:
                seen.add(a.text)
                actions.append(a)
    gpus = {f.gpu for _, f in per_host}
    return Finding(
        id=rep.id, rule=rep.rule, severity=rep.severity, title=rep.title, summary=summary, guide_section=rep.guide_section,
        metric=metric, saving=saving, evidence=_merged_evidence([(hr.host, f) for hr, f in per_host]),
        windows=[w for _, f in per_host for w in f.windows], actions=actions, host=None,
        gpu=gpus.pop() if len(gpus) == 1 else None, hosts=hosts,
    )


def merge_findings(host_reports: list[HostReport]) -> list[Finding]:
    """Session findings: one finding per problem, not one per host.

    Findings of the same rule and title (the same kind of problem; rules that name a GPU in the title, like
    ``gpu_imbalance``, stay apart) found on two or more hosts become one session-level finding: the worst
    severity; summary, metric and actions of the worst host (the metric's ``detail.per_host`` has every
    host's value); the saving as the mean over those hosts weighted by their kept steps (the assumption says
    so; a host without a saving counts 0); evidence tables concatenated with a ``host`` column (a table per
    host where the columns differ); the windows of every host; ``host`` None and ``hosts`` the host names.
    A finding on one host only is kept as it is.  ``HostReport.findings`` are not touched.
    """
    groups: dict[tuple[str, str], list[tuple[HostReport, Finding]]] = {}
    order: list[tuple[str, str]] = []
    for hr in host_reports:
        for f in hr.findings:
            key = (f.rule, f.title)
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append((hr, f))
    out: list[Finding] = []
    used: set[str] = set()
    for key in order:
        g = groups[key]
        hosts = [hr.host for hr, _ in g]
        if len(g) < 2 or len(set(hosts)) != len(hosts):  # one host, or one host twice: nothing to merge
            out.extend(f for _, f in g)
            continue
        m = _merge_group(g)
        # id: "<rule>" plus the host finding's "#..." suffix (secondary finding, "#error"); unique in the session
        suffix = m.id.partition("#")[2]
        cand = [f"{key[0]}#{suffix}" if suffix else key[0]]
        if m.metric is not None:
            cand.append(f"{cand[0]}#{m.metric.id}")
        cand += [f"{cand[0]}#{i}" for i in range(2, len(order) + 2)]
        m.id = next(c for c in cand if c not in used)
        used.add(m.id)
        out.append(m)
    return out


def merge_hosts(run: str, session: str, host_reports: list[HostReport]) -> Report:
    """Session report: aggregate headline (mean of hosts' values), findings merged across hosts
    (:func:`merge_findings`) and ranked.

    ``healthy`` only when every host was analysed (a host with ``error`` makes the session not healthy:
    bad input is never reported as "no problems") and no finding is a warning or critical."""
    ok = [h for h in host_reports if h.error is None]
    findings = rules.rank(merge_findings(host_reports))
    mark_overlaps(findings)
    headline: list[Metric] = []
    if len(ok) == 1:
        headline = list(ok[0].headline)  # one host: its cards as they are (display and detail included)
    elif ok:
        for card in ok[0].headline:
            vals = [c.value for h in ok for c in h.headline if c.id == card.id and c.value is not None]
            v = sum(vals) / len(vals) if vals else None
            detail: dict = {"hosts": len(vals)}
            if v is None and "not_applicable" in (card.detail or {}):
                detail["not_applicable"] = card.detail["not_applicable"]
            headline.append(grade_card(Metric(card.id, card.label, _f(v), card.unit, _pct(v) if card.unit == "share" else str(v),
                                              card.good_direction, "unknown", card.meaning, card.threshold, detail),
                                       findings, any(h.gpus for h in ok)))
    notes = [f"{h.host}: could not be analysed: {h.error}" for h in host_reports if h.error]
    # bad input is never healthy: every host must have been analysed (and there must be one)
    healthy = bool(ok) and len(ok) == len(host_reports) and not any(f.severity in ("critical", "warning") for f in findings)
    # a session steps at its slowest host's pace: its achievable step is the slowest host's
    slowest = max((h.achievable for h in ok if h.achievable), key=lambda a: a["achievable_step_ms"], default={})
    return Report(run=run, session=session, hosts=host_reports, findings=findings, headline=headline, healthy=healthy,
                  analyzer_version=ANALYZER_VERSION, generated_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), notes=notes,
                  achievable=dict(slowest))


def analyze_session(run: str, session: str, host_files: Iterable, progress: Callable[[str, float], None] | None = None,
                    params: int | None = None) -> Report:
    files = list(host_files)
    reports = []
    for i, hf in enumerate(files):
        if progress:
            progress(f"analysing {hf.host} ({i + 1}/{len(files)})", i / max(len(files), 1))
        reports.append(analyze_host(hf, params=params))
    if progress:
        progress("done", 1.0)
    return merge_hosts(run, session, reports)


__all__ = ["analyze_host", "merge_hosts", "merge_findings", "analyze_session", "headline_cards", "BREAKDOWN_CATEGORIES"]
