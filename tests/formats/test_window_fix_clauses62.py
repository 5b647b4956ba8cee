"""A rank's job line ends with how to record its missing GPU side: the capture format's own short clause
(``Format.window_fix_clauses``), not a regex cut of its whole fix's text (h37-review61b *Left* 3 / job62 item 5:
``job.kind._record_fix`` split ``window_fixes``' first sentence at " -- " or ". " -- string surgery on another
home's words, which a reworded fix would cut mid-clause)."""

from __future__ import annotations

from tb_gpu_advisor.formats import REGISTRY


def test_every_format_that_fixes_a_rank_window_has_its_clause():
    """Each format whose ``window_fixes`` say how to record a window's missing GPU side ("cuda_unrecorded",
    "lost_records") says it in one clause as well: a whole clause, not a sentence, never a template left unfilled.
    Fails on base (no ``window_fix_clauses``)."""
    for fid, f in REGISTRY.items():
        for key in ("cuda_unrecorded", "lost_records"):
            if key not in f.window_fixes:
                continue
            clause = f.window_fix_clauses[key]
            assert clause and clause[0].islower() and not clause.endswith(".") and "{" not in clause, (fid, key)
            # the clause is the fix's own first step: its words open the fix
            assert f.window_fixes[key][0][0].lower().startswith(clause[:40].lower()), (fid, key)
