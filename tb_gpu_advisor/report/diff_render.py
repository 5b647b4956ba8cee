"""A :class:`~tb_gpu_advisor.report.diff.Diff` as text (terminal, CI logs) or Markdown (a pull-request comment).

Both read the same sections in the same order as the tab's diff view: the step time and its noise, predicted
vs realised savings, findings, breakdown, headline cards, kernel classes, kernels, ops, GPUs, notes.  Names
from the profiles go through ``render.md_inline``/``md_code`` in Markdown: a hostile kernel or host name stays text.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from tb_gpu_advisor.common.fmt import ms, pct, plural
from tb_gpu_advisor.report.diff import Change, Diff, FindingChange
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
    if s.verdict == "unknown":
        why = "; ".join(f"{w}: {x.error or x.window}" for w, x in (("base", d.base), ("new", d.new))
                        if x.error or x.window) or "no step time"
        return f"step time: {ms(s.base_ms)} -> {ms(s.new_ms)}: cannot compare ({why})"
    noise = (f"noise ±{ms(s.noise_ms)}" if s.noise_ms is not None else "noise unknown (fewer than 2 steps)")
    word = {"faster": "faster", "slower": "SLOWER", "unchanged": "no change beyond the noise"}[s.verdict]
    return (f"step time: {ms(s.base_ms)} -> {ms(s.new_ms)} ({_signed_ms(s.delta_ms)}, {_signed_pct(s.delta_share)}): "
            f"{word} ({noise})")


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
    def one(name: str, sp: Any) -> str:
        if sp is None:
            return f"{name}: no steps"
        std = "" if sp.std_ms is None else f", sd {ms(sp.std_ms)}"
        return f"{name}: {plural(sp.n, 'step')}, {ms(sp.min_ms)}-{ms(sp.max_ms)}{std}"
    return f"per-step spread: {one('base', d.base.spread)}; {one('new', d.new.spread)}"


def calibration_lines(d: Diff) -> list[str]:
    c = d.calibration
    if c is None:
        return []
    ratio = "n/a" if c.ratio is None else f"{c.ratio * 100:.0f}% of predicted"
    ok = "" if c.within is None else (" (within ±%d%%)" % round(c.tolerance * 100) if c.within
                                      else " (off by more than ±%d%%)" % round(c.tolerance * 100))
    return [f"fixed {_fixed_titles(d)}: predicted saving {ms(c.predicted_ms)}/step, realised "
            f"{ms(c.realised_ms)}/step = {ratio}{ok}", c.note]


def _fixed_titles(d: Diff) -> str:
    """The fixed findings by their titles (the calibration lists their rule ids, which are no words for a user)."""
    titles = {f.rule: f.title for f in d.findings if f.status == "fixed"}
    return "; ".join(f"'{titles.get(r, r)}'" for r in d.calibration.findings)


def _finding_row(f: FindingChange) -> list[str]:
    sev = f"{f.base_severity or '-'} -> {f.new_severity or '-'}"
    saving = f"{ms(f.base_saving_ms) if f.base_saving_ms is not None else '-'} -> " \
             f"{ms(f.new_saving_ms) if f.new_saving_ms is not None else '-'}"
    gpu = "" if f.gpu is None else f" (GPU{f.gpu})"
    return [_STATUS_WORDS[f.status], sev, saving, f.title + gpu]


_FINDING_COLS = ["status", "severity", "saving/step", "finding"]


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
    return [[m.label, f"{m.base_display} ({m.base_status})", f"{m.new_display} ({m.new_status})", word[m.better]]
            for m in d.headline]


def _gpu_rows(d: Diff) -> list[list[str]]:
    return [[f"GPU{g.gpu}", g.name or "-", f"{ms(g.base_step_ms)} -> {ms(g.new_step_ms)}",
             f"{pct(g.base_busy_share)} -> {pct(g.new_busy_share)}",
             f"{g.base_kernel_count if g.base_kernel_count is not None else '-'} -> "
             f"{g.new_kernel_count if g.new_kernel_count is not None else '-'}"] for g in d.gpus]


def _sections(d: Diff) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, columns, rows) of every table, shared by text and Markdown."""
    return [
        ("Findings", _FINDING_COLS, [_finding_row(f) for f in d.findings]),
        ("Step breakdown (ms/step)", ["category", "base", "new", "change", "status"], _change_rows(d.breakdown, _ms2, _signed_ms2)),
        ("Headline", ["metric", "base", "new", "better or worse"], _metric_rows(d)),
        ("Kernel time by class (us/step)", ["class", "base", "new", "change", "status"],
         _change_rows(d.kernel_classes, _us, _signed_us, hide_zero=True)),
        ("Largest kernel changes (us/step)", ["kernel", "base", "new", "change", "status"],
         _change_rows(d.kernels, _us, _signed_us, hide_zero=True)),
        ("Largest op changes (kernel us/step)", ["op", "base", "new", "change", "status"],
         _change_rows(d.ops, _us, _signed_us, hide_zero=True)),
        ("GPUs", ["gpu", "name", "step", "active (any GPU work)", "kernels"], _gpu_rows(d)),
    ]


def _title(d: Diff) -> str:
    host = f" (host {d.base.host})" if d.base.host and d.base.host == d.new.host else \
        f" (hosts {d.base.host} -> {d.new.host})" if d.base.host or d.new.host else ""
    return f"{d.base.label} -> {d.new.label}{host}"


def to_text(d: Diff, max_name: int = 60) -> str:
    out = [f"GPU Advisor diff: {_title(d)}", "", *comparable_lines(d),
           headline_line(d).upper()[:1] + headline_line(d)[1:], spread_line(d)]
    cal = calibration_lines(d)
    if cal:
        out += ["", "PREDICTED VS REALISED"] + [f"  {x}" for x in cal]
    for title, cols, rows in _sections(d):
        if not rows:
            continue
        rows = [[(c[:max_name - 1] + "…") if len(c) > max_name else c for c in r] for r in rows]
        out += ["", title.upper()] + [f"  {x}" for x in text_table(cols, rows)]
    if d.notes:
        out += [""] + [f"Note: {n}" for n in d.notes]
    return "\n".join(out).rstrip() + "\n"


def to_markdown(d: Diff) -> str:
    """For a pull-request comment: verdict and calibration first, then the tables (names escaped)."""
    out = [f"### GPU Advisor diff: {md_code(d.base.label)} → {md_code(d.new.label)}", "",
           *[f"> **{md_inline(x)}**" for x in comparable_lines(d)], *([""] if d.incomparable else []),
           f"**{md_inline(headline_line(d))}**", "", md_inline(spread_line(d))]
    cal = calibration_lines(d)
    if cal:
        out += ["", "**Predicted vs realised:** " + md_inline(cal[0]), "", f"_{md_inline(cal[1])}_"]
    for title, cols, rows in _sections(d):
        if rows:
            out += ["", f"#### {title}", ""] + md_table(cols, rows)
    if d.notes:
        out += [""] + [f"> {md_inline(n)}" for n in d.notes]
    return "\n".join(out).rstrip() + "\n"


def render(d: Diff, fmt: str) -> str:
    if fmt == "json":
        return d.to_json(indent=2) + "\n"
    if fmt == "markdown":
        return to_markdown(d)
    return to_text(d)


__all__ = ["to_text", "to_markdown", "render", "headline_line"]
