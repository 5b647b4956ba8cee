"""A :class:`~tb_gpu_advisor.report.diff.Diff` as text (terminal, CI logs) or Markdown (a pull-request comment).

Both read the same sections in the same order as the tab's diff view: the step time and its noise, predicted
vs realised savings, findings, memory (per GPU, and the sites holding most at the peak), breakdown, headline cards,
kernel classes, kernels, ops, GPUs, notes.  :func:`display` gives the same texts to the tab (the diff document's
``display``): the tab formats no number of its own (JavaScript's ``toFixed`` rounds a tie up where Python rounds it to
even: "0.125" was "0.13" on screen beside the CLI's "0.12").  Names
from the profiles go through ``render.md_inline``/``md_code`` in Markdown: a hostile kernel or host name stays text.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from tb_gpu_advisor.common.fmt import gb, ms, pct, plural
from tb_gpu_advisor.report.diff import Change, Diff, FindingChange, GpuMemoryChange, MemoryChange, nothing_compared
from tb_gpu_advisor.report.render import md_code, md_inline, md_table, text_table

_STATUS_WORDS = {"fixed": "fixed", "new": "new", "improved": "improved", "worse": "worse", "still": "still present"}
_CHANGE_WORDS = {"changed": "", "added": "added", "removed": "removed", "entered_top": "entered top 25",
                 "left_top": "left top 25"}


def _signed_ms(x: float | None) -> str:
    return "n/a" if x is None else ("+" if x > 0 else "") + ms(x) if x != 0 else "0"


def _signed_pct(x: float | None) -> str:
    return "n/a" if x is None else ("+" if x > 0 else "") + pct(x)


def _us(x: float | None) -> str:
    return "-" if x is None else f"{x:,.1f}"


def _signed_us(x: float | None) -> str:
    return "-" if x is None else f"{x:+,.1f}"


def headline_line(d: Diff) -> str:
    """The verdict in one line: step time before -> after, change, noise."""
    s = d.step
    none = nothing_compared(d)
    if none:
        return none
    if d.base.memory_only or d.new.memory_only:
        which = "both sides record" if d.base.memory_only and d.new.memory_only else \
            f"the {'base' if d.base.memory_only else 'new'} side records"
        return f"step time: not compared: {which} memory and no GPU work; compared by memory below"
    if s.verdict == "unknown":
        why = "; ".join(f"{w}: {x.error or x.window}" for w, x in (("base", d.base), ("new", d.new))
                        if x.error or x.window) or "no step time"
        return f"step time: {ms(s.base_ms)} -> {ms(s.new_ms)}: cannot compare ({why})"
    noise = (f"noise ±{ms(s.noise_ms)}" if s.noise_ms is not None else "noise unknown (fewer than 2 steps)")
    word = {"faster": "faster", "slower": "SLOWER", "unchanged": "no change beyond the noise"}[s.verdict]
    return (f"step time: {ms(s.base_ms)} -> {ms(s.new_ms)} ({_signed_ms(s.delta_ms)}, {_signed_pct(s.delta_share)}): "
            f"{word} ({noise})")


def _first_up(lines: list[str]) -> list[str]:
    """A paragraph of the tab opens with a capital, as the text's verdict line does; the words are the CLI's."""
    return [x[:1].upper() + x[1:] for x in lines[:1]] + lines[1:]


def verdict_line(d: Diff) -> str:
    """:func:`headline_line` as the text and the tab open with it."""
    line = headline_line(d)
    return line[:1].upper() + line[1:]


def comparable_lines(d: Diff) -> list[str]:
    """Not the same work: said before any number (issue #27 item 5), with the change per TFLOP where both give FLOPs."""
    if not d.incomparable:
        return []
    out = [f"NOT COMPARABLE: the two captures do different work ({'; '.join(d.incomparable)}): the step-time change "
           f"is not the code's alone"]
    p = d.per_tflop
    if p:
        out.append(f"per TFLOP of work: {p['base_ms_per_tflop']:.3g} -> {p['new_ms_per_tflop']:.3g} ms "
                   f"({_signed_pct(p['delta_share'])})")
    return out


def spread_line(d: Diff) -> str:
    """The per-step spread of each side; "" where a side has no steps to spread (memory alone is compared)."""
    if d.base.memory_only or d.new.memory_only:
        return ""

    def one(name: str, sp: Any) -> str:
        if sp is None:
            return f"{name}: no steps"
        std = "" if sp.std_ms is None else f", sd {ms(sp.std_ms)}"
        return f"{name}: {plural(sp.n, 'step')}, {ms(sp.min_ms)}-{ms(sp.max_ms)}{std}"
    return f"per-step spread: {one('base', d.base.spread)}; {one('new', d.new.spread)}"


def _ratio_words(c: Any) -> str:
    """"104% of predicted (within ±25%)": a calibration's ratio and its judgement, of time or of bytes alike."""
    ratio = "n/a" if c.ratio is None else f"{c.ratio * 100:.0f}% of predicted"
    tol = round(c.tolerance * 100)
    ok = "" if c.within is None else f" (within ±{tol}%)" if c.within else f" (off by more than ±{tol}%)"
    return ratio + ok


def calibration_lines(d: Diff) -> list[str]:
    c = d.calibration
    if c is None:
        return []
    return [f"fixed {_fixed_titles(d, c.findings)}: predicted saving {ms(c.predicted_ms)}/step, realised "
            f"{ms(c.realised_ms)}/step = {_ratio_words(c)}", c.note]


def memory_calibration_lines(d: Diff) -> list[str]:
    """The bytes the fixed memory findings said they free next to the peak the new side realised."""
    c = d.memory_calibration
    if c is None:
        return []
    gpu = "" if c.gpu is None else f" on GPU{c.gpu}"
    return [f"fixed {_fixed_titles(d, c.findings)}: predicted to free {gb(c.predicted_bytes)}{gpu}, realised "
            f"{gb(c.realised_bytes)} less {c.measure} = {_ratio_words(c)}", c.note]


def _signed_gb(x: float | None) -> str:
    return "-" if x is None else "0" if x == 0 else ("+" if x > 0 else "-") + gb(abs(x))


def _memory_value(r: MemoryChange, x: float | None) -> str:
    if x is None:
        return "-"
    return pct(x) if r.unit == "share" else gb(x)


def _memory_delta(r: MemoryChange) -> str:
    if r.delta is None:
        return "-"
    if r.unit == "share":
        return "0" if r.delta == 0 else ("+" if r.delta > 0 else "-") + pct(abs(r.delta))
    return _signed_gb(r.delta)


def _memory_gpu(m: GpuMemoryChange) -> str:
    return f"GPU{m.gpu}" if m.gpu == m.new_gpu else f"GPU{m.gpu} -> GPU{m.new_gpu}"


def _memory_sections(d: Diff) -> list[tuple[str, str, list[str], list[list[str]]]]:
    out = []
    for m in d.memory:
        if not m.rows:
            continue  # nothing both sides know (its note says what one lacks)
        out.append(("memory", f"GPU memory ({_memory_gpu(m)})", ["memory", "base", "new", "change"],
                    [[r.label, _memory_value(r, r.base), _memory_value(r, r.new), _memory_delta(r)] for r in m.rows]))
        if m.sites:
            out.append(("memory_sites", f"Allocation sites holding the most at the peak ({_memory_gpu(m)})",
                        ["site", "holds", "base", "new", "change", "status"],
                        [[x.site, x.category, gb(x.base_bytes) if x.base_bytes is not None else "-",
                          gb(x.new_bytes) if x.new_bytes is not None else "-", _signed_gb(x.delta_bytes),
                          _SITE_WORDS.get(x.status, x.status)] for x in m.sites]))
    return out


_SITE_WORDS = {"changed": "", "added": "added", "removed": "removed", "entered_top": "entered the top",
               "left_top": "left the top"}


def memory_notes(d: Diff) -> list[str]:
    return [f"{_memory_gpu(m)}: {n}" for m in d.memory for n in (m.note, m.capacity_note) if n]


def _fixed_titles(d: Diff, rules: list[str]) -> str:
    """The fixed findings by their titles (a calibration lists their rule ids, which are no words for a user)."""
    titles = {f.rule: f.title for f in d.findings if f.status == "fixed"}
    return "; ".join(f"'{titles.get(r, r)}'" for r in rules)


def _finding_row(f: FindingChange) -> list[str]:
    sev = f"{f.base_severity or '-'} -> {f.new_severity or '-'}"
    def one(t: float | None, b: int | None) -> str:
        return ms(t) if t is not None else f"frees {gb(b)}" if b else "-"
    saving = f"{one(f.base_saving_ms, f.base_saving_bytes)} -> {one(f.new_saving_ms, f.new_saving_bytes)}"
    gpu = "" if f.gpu is None else f" (GPU{f.gpu})"
    return [_STATUS_WORDS[f.status], sev, saving, f.title + gpu]


_FINDING_COLS = ["status", "severity", "saving/step", "finding"]


def _finding_cols(d: Diff) -> list[str]:
    """The findings' columns: "saving/step" names a time per step; where a finding's saving is memory, either."""
    if any(f.base_saving_bytes or f.new_saving_bytes for f in d.findings):
        return ["status", "severity", "saving/step or memory freed", "finding"]
    return _FINDING_COLS


def _change_rows(changes: Sequence[Change], fmt: Callable[[float | None], str], signed: Callable[[float | None], str],
                 hide_zero: bool = False) -> list[list[str]]:
    """``hide_zero``: a "changed" row whose change reads as zero at the table's precision ("+0.0") is no change, and
    is left out (issue #36: Compare listed kernels at +0.0).  A row that reads zero on both sides (a breakdown
    category neither run has: "0.000 0.000 +0.000") is left out always."""
    return [[c.label, fmt(c.base), fmt(c.new), signed(c.delta), _CHANGE_WORDS.get(c.status, c.status)] for c in changes
            if not (hide_zero and c.status == "changed" and _reads_zero(signed(c.delta)))
            and not (c.base is not None and c.new is not None and _reads_zero(fmt(c.base)) and _reads_zero(fmt(c.new)))]


def _reads_zero(text: str) -> bool:
    return re.fullmatch(r"[+\-−]?0(\.0*)?", text.strip()) is not None


def _ms2(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _signed_ms2(x: float | None) -> str:
    return "-" if x is None else f"{x:+.3f}"


def _metric_rows(d: Diff) -> list[list[str]]:
    word = {True: "better", False: "worse", None: ""}
    return [[m.label, f"{m.base_display} ({m.base_status})", f"{m.new_display} ({m.new_status})",
             "within the noise" if m.beyond_noise is False and m.new != m.base else word[m.better]] for m in d.headline]


def _gpu_rows(d: Diff) -> list[list[str]]:
    return [[f"GPU{g.gpu}", g.name or "-", f"{ms(g.base_step_ms)} -> {ms(g.new_step_ms)}",
             f"{pct(g.base_busy_share)} -> {pct(g.new_busy_share)}",
             f"{g.base_kernel_count if g.base_kernel_count is not None else '-'} -> "
             f"{g.new_kernel_count if g.new_kernel_count is not None else '-'}"] for g in d.gpus]


#: the unit of the diff's kernel tables: the classes, the kernels and the ops all count each microsecond of a GPU once
#: (kernels on concurrent streams share the time they overlap), so no kernel's row passes its class's (h37-coldshare34)
ONCE = "us/step, each microsecond once"


def _tables(d: Diff) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """(id, title, columns, rows) of every table, shared by text, Markdown and the tab (:func:`display`)."""
    return [
        ("findings", "Findings", _finding_cols(d), [_finding_row(f) for f in d.findings]),
        *_memory_sections(d),
        ("breakdown", "Step breakdown (ms/step)", ["category", "base", "new", "change", "status"],
         _change_rows(d.breakdown, _ms2, _signed_ms2)),
        ("headline", "Headline", ["metric", "base", "new", "better or worse"], _metric_rows(d)),
        ("kernel_classes", f"Kernel time by class ({ONCE})", ["class", "base", "new", "change", "status"],
         _change_rows(d.kernel_classes, _us, _signed_us, hide_zero=True)),
        ("kernels", f"Largest kernel changes ({ONCE})", ["kernel", "base", "new", "change", "status"],
         _change_rows(d.kernels, _us, _signed_us, hide_zero=True)),
        ("ops", f"Largest op changes (kernel {ONCE})", ["op", "base", "new", "change", "status"],
         _change_rows(d.ops, _us, _signed_us, hide_zero=True)),
        ("gpus", "GPUs", ["gpu", "name", "step", "active (any GPU work)", "kernels"], _gpu_rows(d)),
    ]


def _sections(d: Diff) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, columns, rows) of every table, shared by text and Markdown."""
    return [(title, cols, rows) for _, title, cols, rows in _tables(d)]


def display(d: Diff) -> dict[str, Any]:
    """Every text of the tab's diff view, as the CLI writes it (the document's ``display``; module doc): the verdict,
    what makes the captures not comparable, the spread, both calibrations, each table (the breakdown's as the labels of
    its bars too, a table whose every row read no change as one line) and the memory notes."""
    source = {"breakdown": d.breakdown, "kernel_classes": d.kernel_classes, "kernels": d.kernels, "ops": d.ops}
    tables = []
    for key, title, cols, rows in _tables(d):
        t: dict[str, Any] = {"id": key, "title": title, "columns": cols, "rows": rows}
        if key == "findings":
            t["row_status"] = [f.status for f in d.findings]
        if not rows and source.get(key):
            t["unchanged"] = f"{title}: no change at the table's precision"
        tables.append(t)
    return {"verdict": verdict_line(d), "comparable": comparable_lines(d), "spread": spread_line(d),
            "calibration": _first_up(calibration_lines(d)), "memory_calibration": _first_up(memory_calibration_lines(d)),
            "memory_notes": memory_notes(d), "tables": tables,
            "bars": {c.key: {"base": ms(c.base), "new": ms(c.new)} for c in d.breakdown}}


def _title(d: Diff) -> str:
    host = f" (host {d.base.host})" if d.base.host and d.base.host == d.new.host else \
        f" (hosts {d.base.host} -> {d.new.host})" if d.base.host or d.new.host else ""
    return f"{d.base.label} -> {d.new.label}{host}"


def to_text(d: Diff, max_name: int = 60) -> str:
    out = [f"GPU Advisor diff: {_title(d)}", "", *comparable_lines(d), verdict_line(d), *([spread_line(d)] if spread_line(d) else [])]
    cal = calibration_lines(d)
    if cal:
        out += ["", "PREDICTED VS REALISED"] + [f"  {x}" for x in cal]
    mcal = memory_calibration_lines(d)
    if mcal:
        out += ["", "PREDICTED VS REALISED MEMORY"] + [f"  {x}" for x in mcal]
    for title, cols, rows in _sections(d):
        if not rows:
            continue
        rows = [[(c[:max_name - 1] + "…") if len(c) > max_name else c for c in r] for r in rows]
        out += ["", title.upper()] + [f"  {x}" for x in text_table(cols, rows)]
    if d.notes or memory_notes(d):
        out += [""] + [f"Note: {n}" for n in memory_notes(d) + d.notes]
    return "\n".join(out).rstrip() + "\n"


def to_markdown(d: Diff) -> str:
    """For a pull-request comment: verdict and calibration first, then the tables (names escaped)."""
    out = [f"### GPU Advisor diff: {md_code(d.base.label)} → {md_code(d.new.label)}", "",
           *[f"> **{md_inline(x)}**" for x in comparable_lines(d)], *([""] if d.incomparable else []),
           f"**{md_inline(headline_line(d))}**", *(["", md_inline(spread_line(d))] if spread_line(d) else [])]
    cal = calibration_lines(d)
    if cal:
        out += ["", "**Predicted vs realised:** " + md_inline(cal[0]), "", f"_{md_inline(cal[1])}_"]
    mcal = memory_calibration_lines(d)
    if mcal:
        out += ["", "**Predicted vs realised memory:** " + md_inline(mcal[0]), "", f"_{md_inline(mcal[1])}_"]
    for title, cols, rows in _sections(d):
        if rows:
            out += ["", f"#### {title}", ""] + md_table(cols, rows)
    if d.notes or memory_notes(d):
        out += [""] + [f"> {md_inline(n)}" for n in memory_notes(d) + d.notes]
    return "\n".join(out).rstrip() + "\n"


def render(d: Diff, fmt: str) -> str:
    if fmt == "json":
        return d.to_json(indent=2) + "\n"
    if fmt == "markdown":
        return to_markdown(d)
    return to_text(d)


__all__ = ["to_text", "to_markdown", "render", "headline_line", "display"]
