"""The ``order`` law holds the whole order the heading names (docs/rules.md, Ranking; ``rules.rank``), not only its
savings (h37-hostalloc32).

``tests/support/properties.order_problems`` checked that the findings that say what the capture is come first and
that savings never rise after them.  Two parts of the stated order went unchecked: among the findings that save no
step time, severity comes first (a warning about the capture above a note), and the leading findings have an order
of their own (a run that failed, then a capture that lost GPU records, then a warm-up capture).  A ranking that
listed a note above a warning of no saving, or a warm-up above the program's death, read as lawful.  The law is
checked on every report by ``tests/report/test_properties.py``'s walk; here it catches each misorder, and holds on
``rules.rank``'s own order of findings drawn at random.
"""

from __future__ import annotations

import random

from tb_gpu_advisor.model.schema import Finding, Metric, Saving
from tb_gpu_advisor.rules import rank
from tests.support.properties import order_problems

STEP_MS = 100.0


def _f(rule: str, severity: str, ms: float | None = None, metric: str | None = None, phase: str | None = None,
       n: int = 0) -> Finding:
    """A finding of ``rule`` on host ``h``, saving ``ms`` of a 100 ms step (None: no saving)."""
    saving = None if ms is None else Saving(ms_per_step=ms, percent_of_step=ms / STEP_MS * 100, assumption="")
    m = None if metric is None and phase is None else Metric(
        id=metric or "x", label="", value=None, unit="share", display="", detail={"phase": phase} if phase else {})
    return Finding(id=f"{rule}#{n}:h", rule=rule, severity=severity, title=rule, summary="", guide_section="",
                   metric=m, saving=saving, host="h")


def _misorders(findings: list[Finding]) -> list[str]:
    """The law's complaints about the order alone (not about grades: "a milder finding saves more")."""
    return [v for v in order_problems("h", findings) if "ranked above" in v or "listed above" in v or "not first" in v]


def test_a_note_above_a_warning_neither_saving_is_caught():
    """Main: no complaint -- the law compared savings only, and 0 == 0 (a warning of the steps, not about the capture,
    which leads where nothing saves)."""
    warning, note = _f("excessive_memcpy", "warning"), _f("small_grid", "info")
    assert _misorders([note, warning]), "a note of no saving above a warning of none"
    assert not _misorders([warning, note])


def test_a_warm_up_above_the_programs_death_is_caught():
    """Main: no complaint -- the law held only that the leading findings come first, in any order."""
    died = _f("capture_quality", "critical", metric="program_failed")
    warm = _f("cold_start", "warning", phase="warm-up")
    lost = _f("capture_quality", "warning", metric="lost_launch_share")
    assert _misorders([warm, died]) and _misorders([died, warm, lost])
    assert not _misorders([died, lost, warm])


def _drawn(rng: random.Random, n: int) -> list[Finding]:
    """``n`` findings of rules, grades and savings drawn at random, the leading kinds among them."""
    kinds = [("host_sync", None, None), ("small_grid", None, None), ("excessive_memcpy", None, None),
             ("capture_quality", None, None), ("capture_quality", "program_failed", None),
             ("capture_quality", "lost_launch_share", None), ("cold_start", None, "warm-up"),
             ("cold_start", None, "mixed"), ("allocator_churn", None, None)]
    out = []
    for i in range(n):
        rule, metric, phase = rng.choice(kinds)
        sev = "critical" if metric == "program_failed" else rng.choice(("critical", "warning", "info"))
        ms = rng.choice((None, 0.0, 0.004, 1.0, 2.5, 2.5, 10.0, 37.2))
        out.append(_f(rule, sev, ms, metric, phase, i))
    return out


def test_the_rankings_own_order_holds_the_law():
    """``rules.rank`` over findings drawn at random (500 draws of 2-7): its order is one the law accepts -- the law
    and the ranking read one stated order."""
    rng = random.Random(37)
    for _ in range(500):
        drawn = _drawn(rng, rng.randint(2, 7))
        ranked = rank(drawn)
        assert not _misorders(ranked), ([(f.id, f.severity, f.saving and f.saving.ms_per_step) for f in ranked],
                                        _misorders(ranked))


def _unrecorded() -> Finding:
    """The warning that the GPU idles while the host does what the capture did not record: no saving."""
    f = _f("unexplained_idle", "warning")
    f.id = "unexplained_idle:h#unrecorded"
    return f


def test_host_time_the_capture_did_not_record_ranks_as_a_warning_about_the_capture():
    """h37-serve34 (YiconRain's SGLang 27B prefill: a launch wait saving 3.10 ms, "Kernels too small" saving 1.26 ms,
    34.1 ms of the pass unrecorded).  Main: the unrecorded warning, counted as saving 0, last under the note."""
    launch, grid, unseen = _f("launch_bound", "warning", 3.10), _f("small_grid", "info", 1.26), _unrecorded()
    assert [f.id for f in rank([grid, unseen, launch])] == [launch.id, unseen.id, grid.id]
    assert not _misorders([launch, unseen, grid]) and _misorders([launch, grid, unseen])
    note_only = rank([_f("small_grid", "info", 1.26), _unrecorded()])  # no warning saves: it is the one problem
    assert note_only[0].id.endswith("#unrecorded") and not _misorders(note_only)
