"""Savings that add up (rules/savings.py), checked on any report: the corpus, the JAX scenarios, demo and real runs."""

from __future__ import annotations

from tb_gpu_advisor.rules.savings import GROUPS

_BAD = ("critical", "warning", "info")  # every saving counts, info included (issue #36)


def savings_problems(where: str, findings, achievable: dict, breakdown_ms: dict | None) -> list[str]:
    """Every way one host's (or a session's) savings fail to add up; empty = they add up."""
    out = []
    bad = [f for f in findings if f.saving is not None and f.severity in _BAD]
    for f in bad:
        parts = sum(r["ms"] for r in f.saving.recovers)
        if not f.saving.recovers or abs(parts - f.saving.ms_per_step) > 0.002 * max(1, len(f.saving.recovers)):
            out.append(f"{where}: {f.id} recovers {parts:.3f} ms for a {f.saving.ms_per_step:.3f} ms saving")
        for o in bad:
            shared = {(r["group"], r["pool"]) for r in f.saving.recovers} & {(r["group"], r["pool"]) for r in o.saving.recovers}
            if o is not f and shared and o.id not in f.saving.overlaps:
                out.append(f"{where}: {f.id} and {o.id} recover {sorted(shared)} but do not say they overlap")
    if not bad:
        return out
    if not achievable:
        return out + [f"{where}: findings with savings but no achievable step time"]
    a = achievable
    left = a["achievable_step_ms"]
    if left is None and not a.get("reason"):  # withheld (a start-up-only window) only where the account says why
        out.append(f"{where}: no achievable step and no reason")
    if left is not None and not (0 <= left <= a["step_ms"] + 1e-6):
        out.append(f"{where}: achievable {left} outside [0, step {a['step_ms']}]")
    if a["recoverable_ms"] > a["step_ms"] + 1e-6:
        out.append(f"{where}: recoverable {a['recoverable_ms']} exceeds the step {a['step_ms']}")
    if left is not None and left + 1e-6 < a["floor_ms"]:
        out.append(f"{where}: achievable {left} below the remaining device work {a['floor_ms']}")
    if breakdown_ms is not None:
        for g, v in a["by_group"].items():
            measured = sum(float(breakdown_ms.get(c) or 0.0) for c in GROUPS[g])
            if v > measured + 0.002:
                out.append(f"{where}: group {g} recovers {v} ms of {measured:.3f} ms measured")
    return out


def report_savings_problems(report) -> list[str]:
    """:func:`savings_problems` for every analysed host of a session report, and for the session."""
    out = []
    for h in report.hosts:
        if h.error is None:
            out += savings_problems(h.host, h.findings, h.achievable, h.breakdown_ms)
    ok = [h for h in report.hosts if h.error is None]
    if ok:
        out += savings_problems("session", report.findings, report.achievable,
                                ok[0].breakdown_ms if len(ok) == 1 else None)
    return out
