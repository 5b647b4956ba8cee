"""Every number the tab's report view prints, written here by the CLI's own formatters (``Report.display``).

The tab formats no number of its own (issue #37, "a quantity has one value on one screen"): its second home for
rounding (JavaScript's ``toFixed`` rounds a tie up where Python rounds it to even; its tables showed "0.84" as "84%"
and "12.345" as "12.3" beside the CLI's "84.0%" and "12.35") drifted from ``common.fmt`` whenever one side changed.
So the saving, the achievable step, each table's cells, the memory peak, the thresholds and the chart labels that
name a report value are built here with the functions ``render.to_text`` and ``to_markdown`` print them with, and the
tab shows these strings; it computes only what a chart needs (pixel positions, axis ticks).

:func:`display` is a pure function of the report, aligned with it: ``cards`` with ``headline``, ``findings`` with
``findings``, ``hosts`` with ``hosts`` (and each host's ``gpus`` and ``step_rows``), ``ranks`` and ``collectives``
with those tables' rows.
"""

from __future__ import annotations

from typing import Any

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.fmt import gb, ms, pct
from tb_gpu_advisor.model.schema import Finding, HostReport, Report, Table
from tb_gpu_advisor.report import render
from tb_gpu_advisor.metrics.memory import RETRY_CAPACITY
from tb_gpu_advisor.metrics.types import MEMORY_CATEGORIES
from tb_gpu_advisor.rules._memory import category_label, labels_for, shows_training
from tb_gpu_advisor.report.timeline import step_name
from tb_gpu_advisor.model.damage import KINDS
from tb_gpu_advisor.report.verdict import damage_records, damage_words, host_loop_words, host_words, one_pass, one_step


def table_cells(t: Table | None) -> dict[str, list]:
    """A table's column titles and cells as the text report prints an evidence table (``render.table_text``): shares
    as percentages, numbers to 2 decimals with thousands separators, a column of sub-millisecond times in us, names as
    written."""
    if t is None:
        return {"columns": [], "rows": []}
    cols, rows = render.table_text(t.columns, t.rows)
    return {"columns": cols, "rows": rows}


def _finding(report: Report, f: Finding) -> dict[str, Any]:
    one = one_step(report, f)
    saving = render.saving_text(f, one) if f.saving is not None else ""
    return {
        "saving": saving,  # "saves ~12.4 ms/step (31% of step)", as the text report's finding line
        "confidence": render.confidence_text(f, one),  # "low confidence (the pass)" on one pass, as the text says
        "saving_value": saving.removeprefix("saves ~"),
        "frees": f"frees ~{gb(f.saving_bytes)}" if f.saving_bytes else "",
        "freed": gb(f.saving_bytes) if f.saving_bytes else "",
        "threshold": render.threshold_text(f.metric) if f.metric is not None and f.metric.threshold is not None else "",
        "evidence": [table_cells(t) for t in f.evidence],
        "windows": [render.window_span(w) for w in f.windows],
        "window_names": _window_names(report, f),
    }


def _window_names(report: Report, f: Finding) -> list[str]:
    """Each of a finding's trace windows as the tab's buttons name it: the step it is ("step 10", or "the pass" where
    its host's one step is the pass an unmarked capture was read as: :func:`step_name`), "" for a window of no step
    (the tab numbers those).  Why: the tab composed "Show step 0" from the window's step id, an index of no step the
    capture marks, beside a label the report already says "the pass" in (h37-words22)."""
    passes = {h.host: one_pass(h) for h in report.hosts}
    return [step_name(w.step, passes.get(w.host, False)) if w.step is not None else "" for w in f.windows]


def memory_peak_text(m: dict, one: bool = False) -> str:
    """A GPU's peak in words: ``12.1 GiB allocated (14.0 GiB reserved) of 79.2 GiB, 1.20 ms into step 7`` -- the digits
    of the peak table's row (``render.memory_rows``); "into the pass" where ``one`` (the host's one step is an unmarked
    pass, ``verdict.one_pass``)."""
    if m.get("peak_step") is not None and m.get("peak_step_offset_ms") is not None:
        when = f"{ms(m['peak_step_offset_ms'])} into {step_name(m['peak_step'], one)}"
    elif m.get("peak_ms") is not None:
        when = f"at {ms(m['peak_ms'])}"
    else:
        when = f"in {m['peak_place']}" if m.get("peak_place") else "at the dump"
    above = " above the capture's start" if m.get("baseline") == "capture_start" else ""
    res = f" ({gb(m['peak_reserved_bytes'])} reserved)" if m.get("peak_reserved_bytes") is not None else ""
    at_most = "at most " if m.get("capacity_source") == RETRY_CAPACITY else ""  # an allocator's retry: a bound
    cap = f" of {at_most}{gb(m['capacity_bytes'])}" if m.get("capacity_bytes") else ""
    return f"{gb(m.get('peak_allocated_bytes'))} allocated{above}{res}{cap}, {when}"


def memory_label(category: Any, labels: dict[str, str] | None = None) -> str:
    """What holds a block, as the memory chart names it (``labels``: :func:`memory_labels` of its host; None: a
    training job's, ``legend.MEMORY_LABELS``), not its id ("gradients"): the peak's holders table and the OOM's live
    table are read beside that chart, one above the other -- each names a category as the chart does, so one panel
    never says "activations" and "Activations (forward pass)" of the same blocks (h37-review33).  An id no label names
    is shown as it is (``rules._memory.category_label``: one home)."""
    return category_label(category, labels)


def memory_labels(h: HostReport | None) -> dict[str, str]:
    """The memory categories' names for host ``h``'s job, read from the stored report as the rules read them from the
    metrics (``rules._memory.shows_training`` of its job's kind and its GPUs' peaks): a job of forward passes only is
    not told its held memory is optimizer state -- its holders table, its chart and the MCP server's tables said
    "Held across steps (parameters, optimizer state)" of an inference job's weights while its findings said
    "parameters, caches" (h37-memkind37 *Left* 1).  No host: a training job's names, the legend's."""
    if h is None:
        return labels_for(True)
    job = h.job if isinstance(h.job, dict) else {}
    return labels_for(shows_training(job.get("kind"), ((g.memory or {}).get("breakdown") for g in h.gpus)))


def _memory(m: dict, one: bool, labels: dict[str, str] | None = None) -> dict[str, Any]:
    bd = {k: v for k, v in (m.get("breakdown") or {}).items() if isinstance(v, (int, float)) and v > 0}
    total = sum(bd.values())
    return {
        "peak": memory_peak_text(m, one),
        # the chart's peak label: the kept step it falls in ("step 7", "the pass"), "" outside every kept step
        "peak_step_name": step_name(m["peak_step"], one) if m.get("peak_step") is not None else "",
        "peak_allocated": gb(m.get("peak_allocated_bytes")),
        "peak_reserved": gb(m.get("peak_reserved_bytes")) if m.get("peak_reserved_bytes") is not None else "",
        "capacity": gb(m["capacity_bytes"]) if m.get("capacity_bytes") else "",
        "peak_at": ms(m["peak_ms"]) if m.get("peak_ms") is not None else "",
        # the chart's time axis: its first and last event
        "first": ms(((m.get("timeline") or {}).get("t_ms") or [None])[0]),
        "last": ms(((m.get("timeline") or {}).get("t_ms") or [None])[-1]),
        "breakdown": {k: {"bytes": gb(v), "share": pct(v / total)} for k, v in bd.items()},
        # the chart's categories in its stacking order, named for this job (``legend.memory`` names a training job's)
        "categories": [{"id": c, "label": memory_label(c, labels)} for c in MEMORY_CATEGORIES],
        "top": [[str(op), memory_label(cat, labels), gb(b), f"{n:,}" if isinstance(n, int) else str(n)] for op, cat, b, n in m.get("top") or []],
        "ooms": [{"title": f"Out of memory: {gb(o.get('requested_bytes'))} could not be allocated ({gb(o.get('device_free_bytes'))} "
                           f"free, {gb(o.get('allocated_bytes'))} allocated, {gb(o.get('reserved_bytes'))} reserved)",
                  "live": [[gb(b), memory_label(c, labels), " ← ".join((fr or [])[:3])] for b, c, fr in o.get("live") or []]}
                 for o in m.get("ooms") or []],
    }


def _panel(step_ms: float, compute_ms: float) -> str:
    share = f" ({pct(compute_ms / step_ms)})" if step_ms > 0 else ""
    return f"device compute {ms(compute_ms)} of {ms(step_ms)} step{share}"


def _panels(h: HostReport) -> dict[str, str]:
    """The step chart's panel labels, by GPU ("" the host's mean): its step and device compute as the ledger holds
    them (the host's ``breakdown_ms``, each GPU's ``breakdown`` and ``step_ms``)."""
    out: dict[str, str] = {}
    total = sum(v for v in (h.breakdown_ms or {}).values() if v)
    if total > 0:
        step = (h.achievable or {}).get("step_ms") or total
        out[""] = _panel(step, (h.breakdown_ms or {}).get("device_compute") or 0.0)
    for g in h.gpus:
        if isinstance(g.step_ms, (int, float)) and g.breakdown:
            out[str(g.gpu)] = _panel(g.step_ms, (g.breakdown or {}).get("device_compute") or 0.0)
    return out


def _roof(h: HostReport) -> dict[str, str]:
    """The roofline chart's roof as the MFU card's note writes its peak (``render.mfu_note``): the peak of the GEMMs'
    own precision, else the GPU's best dense peak, in TFLOP/s; the memory bandwidth in TB/s; the ridge in FLOP/byte;
    the vector units' peak the depthwise rows are rated against (`vector_peak`), where the card gives it."""
    d = next((m.detail for m in h.headline if m.id == "mfu" and isinstance(m.detail, dict)), {})
    peak = d.get("dtype_peak_flops") or d.get("peak_flops")
    bw = d.get("memory_bandwidth")
    if not peak:
        return {}
    t = peak / 1e12
    out = {"peak": f"{t:.0f}" if t >= 10 else f"{t:.2g}"}
    if bw:
        out.update(bandwidth=f"{bw / 1e12:.2f}", ridge=f"{peak / bw:.0f}")
    vector = d.get("vector_peak_flops")  # the depthwise rows' roof (h37-roof68): three figures, an A100's "19.5"
    if vector:
        out["vector_peak"] = f"{vector / 1e12:.3g}"
    return out


#: Up to this many steps the step chart draws a bar per step, whose hover says its times (``charts.js``
#: ``MAX_STEP_BARS``); beyond, its bars are means of several steps, which say no time of their own: none is written.
STEP_BARS = 120


def _steps(h: HostReport) -> list[dict[str, Any]]:
    """Per step row: its step and breakdown (the step chart's hovers, where it draws a bar per step) and, for a host-wide
    row of a host whose GPUs record memory, its span (the memory chart's step bands), with the step's name for both
    (:func:`step_name`); ``{}`` where none is drawn."""
    bars = len({r.step for r in h.step_rows}) <= STEP_BARS
    bands = any(g.memory for g in h.gpus)
    one = one_pass(h)
    out = []
    for r in h.step_rows:
        d: dict[str, Any] = {}
        if bars:
            d.update(step=ms(r.step_ms), breakdown={k: ms(v) for k, v in (r.breakdown or {}).items() if v})
        if bands and r.gpu is None:
            d["span"] = f"{ms(r.start_ms)}–{ms(r.start_ms + r.step_ms)}"
        if d:  # the bar's hover and the band's title name the step as the text does: "the pass" on one unmarked pass
            d["name"] = step_name(r.step, one)
        out.append(d)
    return out


#: The tab's own labels of a host's devices (``serve/static/charts.js`` ``DEVICE_WORDS``, NVIDIA's words as written),
#: sent in the host's vendor's words (``verdict.host_words``).  Why: the text report's tables said "NPU0" and
#: "active (any NPU work)" for an Ascend NPU's snapshot, while the tab's charts still said "GPU 0 memory", "GPU active"
#: and "Per-GPU comparison" (h37-wild57m *Left* 3; h37-snap58).
DEVICE_LABELS = {"device": "GPU", "devices": "GPUs", "active": "GPU active: kernels, copies, collectives",
                 "skew": "Launch skew vs. first GPU", "comparison": "Per-GPU comparison"}


def _host(h: HostReport) -> dict[str, Any]:
    if h.error:
        return {}
    capture = h.capture if isinstance(h.capture, dict) else {}
    return {
        "capture": ms(capture["length_ms"]) if capture.get("length_ms") is not None else "",
        "tables": {k: table_cells(getattr(h, k)) for k in ("kernels", "ops", "memcpy")},
        # the roofline as the text report lists it (its columns, its digits), every row
        "roofline": {"columns": list(render.ROOF_COLS), "rows": render.roofline_rows(h, n=None)},
        "roof": _roof(h),
        # the GPUs as the text report's table of them (``render.gpu_rows``): the per-GPU chart's values
        "gpus_table": {"columns": list(render.GPU_COLS), "rows": render.gpu_rows(h.gpus)},
        # the tab's own labels of the host's devices in its vendor's words (charts.js DEVICE_WORDS: "NPU 0")
        "device_words": {k: host_words(h)(v) for k, v in DEVICE_LABELS.items()},
        # a damaged file's notice, by its damage's kind, in the note's words (``verdict.damage_words``; h37-damage66)
        **({"damage": {**damage_words(h), "kinds": sorted({d.kind for d in records}, key=KINDS.index)}}
           if (records := damage_records(h)) and not h.error else {}),
        # each GPU's name as a sentence says it (an inferred name's model, ``devices.said_name``): the host line and
        # the per-GPU chart's hover say it so, the GPUs table keeps the reasons (h37-surfaces31)
        "gpus": [{"gpu": g.gpu, "name": devices.said_name(g.name) or "",
                  "memory": _memory(g.memory, one_pass(h), memory_labels(h)) if g.memory else None} for g in h.gpus],
        # the host's one step is the pass an unmarked capture was read as: the tab's host line says "one pass"
        "one_pass": one_pass(h),
        # a window without GPU work that marks its loop: the loop on the CPU, as the job's line says it (h37-tidy30)
        **({"host_loop": loop} if (loop := host_loop_words(h.job or {})) else {}),
        "steps": _steps(h),
        "panels": _panels(h),
    }


def display(report: Report) -> dict[str, Any]:
    """Every number of the tab's report view as text (module doc)."""
    rv = render.ranks_view(report)
    return {
        "achievable": render.achievable_text(report),
        "cards": [{"threshold": render.threshold_text(m) if m.threshold is not None else ""} for m in report.headline],
        "findings": [_finding(report, f) for f in report.findings],
        "memory": {"columns": list(render.MEMORY_COLS), "rows": render.memory_rows(report),
                   "notes": render.memory_notes(report, gpu_notes=False)},  # the GPU's view prints its note
        "ranks": render.rank_cells(report.ranks) if rv is not None else [],
        "collectives": render.name_cells(report.collectives) if report.collectives is not None else [],
        "hosts": [_host(h) for h in report.hosts],
    }


__all__ = ["display", "memory_peak_text", "table_cells"]
