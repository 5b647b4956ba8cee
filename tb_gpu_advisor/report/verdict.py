"""The verdict: one line saying how the session stands, the same in the tab, the CLI's text and markdown.

It is computed once per report (``Report.verdict``, set when hosts are merged) by :func:`verdict`, which the
renderers call too: every surface says the same words.
"""

from __future__ import annotations

from collections.abc import Sequence

from tb_gpu_advisor.common.fmt import ms
from tb_gpu_advisor.model.schema import Finding, Report

_SEVERITIES = ("critical", "warning", "info")


def _counts(findings: Sequence[Finding]) -> str:
    n = {k: 0 for k in _SEVERITIES}
    for f in findings:
        n[f.severity] = n.get(f.severity, 0) + 1
    parts = [f"{n[k]} {k}" for k in ("critical", "warning", "info") if n[k]]
    return ", ".join(parts) if parts else "no findings"


def failed_hosts(report: Report) -> list:
    """Hosts that could not be analysed (``HostReport.error``)."""
    return [h for h in report.hosts if h.error]


def verdict(report: Report) -> str:
    """Healthy, or how many findings of each severity with the top one's title and saving.  Never "healthy" when a
    host could not be analysed: bad input is no result."""
    real = [f for f in report.findings if f.severity != "ok"]
    failed = failed_hosts(report)
    n = len(report.hosts)
    if not report.hosts:
        return "not analysed — the session has no host file"
    if failed and len(failed) == n:
        return f"not analysed — {'the host' if n == 1 else f'all {n} hosts'} could not be analysed (error below)"
    bad = f"{len(failed)} of {n} host{'s' if n != 1 else ''} could not be analysed" if failed else ""
    actionable = [f for f in real if f.severity in ("critical", "warning")]
    if actionable:
        return f"{_counts(real)} — top: {_top(actionable)}" + (f"; {bad}" if bad else "")
    if failed:
        return f"no check fired on the {n - len(failed)} analysed host{'s' if n - len(failed) != 1 else ''}, but {bad}"
    # healthy means no warning or critical, whatever the notes (issue #27 item 8)
    notes = [f for f in real if f.severity == "info"]
    return "Healthy: no check of the guide fired" + (f" ({len(notes)} note{'s' if len(notes) != 1 else ''})"
                                                     if notes else "")


def _top(real: Sequence[Finding]) -> str:
    """The first actionable finding (the ranking puts them first): its title and what it saves."""
    f = real[0]
    s = f.saving
    return f.title + (f" (saves ~{ms(s.ms_per_step)}/step, {s.percent_of_step:.0f}%)" if s and s.ms_per_step else "")
