"""Predicted vs realised savings on before/after pairs whose fix is known (docs/diff.md's calibration table).

Two kinds of pair:

* **synthetic** -- every scenario of :data:`~synthetic.scenarios.FIXES` and its ``fixed=True``
  twin: the same capture with exactly the guide's fix applied, so the realised change is the fix's by
  construction.  Where the fix changes kernel speed, the twin runs at the rule's assumed speedup: those rows
  check the saving arithmetic (the right time, not counted twice), not the speedup itself.
* **real** -- pairs of real captures (``../shared/profiles/real-h100-jax``) that differ in one known way.

``scripts/calibration.py`` prints the table; ``tests/report/test_diff.py`` checks every synthetic row is within the
tolerance and the real ones where their profiles are present.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable

from synthetic.scenarios import FIXES, SCENARIOS
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.discover import logdir as discovery
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report.diff import Diff, diff_reports
from tb_gpu_advisor.runtime import pipeline


@dataclass(frozen=True)
class RealPair:
    base: str
    new: str
    change: str
    #: the new run's step time is multiplied by this before comparing (same model, another batch size)
    new_scale: float = 1.0


#: real pairs that differ in one known way (runs of real-h100-jax and real-h100-torch; TRUTH.json describes each)
REAL_PAIRS: tuple[RealPair, ...] = (
    RealPair("input_bound", "healthy_bf16", "12 ms host input stall removed (same bf16 MLP, batch 4096)"),
    RealPair("healthy_bf16_nocb", "healthy_bf16", "XLA command buffers (CUDA graphs) on; no finding predicted"),
    RealPair("fp32_highest", "healthy_bf16", "fp32 precision=HIGHEST to bf16; batch 2048 vs 4096, so the new step "
             "is halved (per-sample comparison)", new_scale=0.5),
    RealPair("torch_fp32", "torch_healthy_bf16", "PyTorch nn.Linear MLP in fp32 without TF32 to bf16 autocast (same model "
             "and batch)"),
)


@dataclass
class Row:
    kind: str  # "synthetic" | "real"
    pair: str  # "base -> new"
    change: str
    fixed: list[str]  # rules the diff reports fixed
    base_ms: float | None
    new_ms: float | None
    predicted_ms: float | None
    realised_ms: float | None
    ratio: float | None
    within: bool | None
    #: the rule the pair was built to fix is reported fixed (synthetic); None for real pairs
    expected_fixed: bool | None = None


def _row(kind: str, pair: str, change: str, d: Diff, new_scale: float = 1.0, expected: str | None = None) -> Row:
    c = d.calibration
    new_ms = None if d.new.step_ms is None else d.new.step_ms * new_scale
    realised = None if d.base.step_ms is None or new_ms is None else d.base.step_ms - new_ms
    predicted = c.predicted_ms if c else None
    ratio = realised / predicted if predicted and realised is not None else None
    within = None if ratio is None else abs(ratio - 1.0) <= T("diff.calibration_tolerance")
    fixed = sorted({f.rule for f in d.findings if f.status == "fixed"})
    return Row(kind, pair, change, fixed, d.base.step_ms, None if new_ms is None else round(new_ms, 4), predicted,
               None if realised is None else round(realised, 4), None if ratio is None else round(ratio, 3), within,
               None if expected is None else expected in fixed)


def _report(logdir: str, run: str) -> Report:
    session = next(s for s in discovery.discover(logdir) if s.run == run)
    return pipeline.analyze_session(session.run, session.session, session.hosts)


def synthetic_rows(workdir: str, names: Iterable[str] | None = None) -> list[Row]:
    """One row per scenario with a fix: the scenario against its fixed twin (written under ``workdir``)."""
    rows = []
    for name in names or FIXES:
        SCENARIOS[name]().write(workdir, run=f"{name}__before")
        SCENARIOS[name](fixed=True).write(workdir, run=f"{name}__after")
        d = diff_reports(_report(workdir, f"{name}__before"), _report(workdir, f"{name}__after"))
        rows.append(_row("synthetic", f"{name} -> {name} fixed", SCENARIOS[name]().truth.description, d,
                         expected=FIXES[name]))
    return rows


def real_rows(profiles: str) -> list[Row]:
    """The :data:`REAL_PAIRS` found in ``profiles`` (a logdir of real captures); pairs not there are skipped."""
    runs = {s.run for s in discovery.discover(profiles)} if os.path.isdir(profiles) else set()
    rows = []
    for p in REAL_PAIRS:
        if p.base in runs and p.new in runs:
            d = diff_reports(_report(profiles, p.base), _report(profiles, p.new))
            rows.append(_row("real", f"{p.base} -> {p.new}", p.change, d, new_scale=p.new_scale))
    return rows


def as_markdown(rows: Iterable[Row]) -> str:
    tol = round(T("diff.calibration_tolerance") * 100)
    out = ["| kind | pair | fixed | step before -> after ms | predicted ms | realised ms | realised/predicted | "
           f"within ±{tol}% |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        num = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
        out.append(f"| {r.kind} | {r.pair} | {', '.join(r.fixed) or '-'} | {num(r.base_ms)} -> {num(r.new_ms)} | "
                   f"{num(r.predicted_ms)} | {num(r.realised_ms)} | {'-' if r.ratio is None else f'{r.ratio:.2f}'} | "
                   f"{'-' if r.within is None else ('yes' if r.within else 'NO')} |")
    return "\n".join(out)
