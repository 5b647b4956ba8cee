"""The gap finding's numbers are per kept step, and say so (h37-review8).

Since h37-left46 the gaps' time is averaged over the kept steps (each kept step's gap, a last one that ends the
capture holding none), so that it is a part of the step it is compared with; the sentences still said "of each gap"
and "a gap".  Where a capture has fewer gaps than kept steps the two differ: wild/streams_pinned_copies keeps 2 steps
with one gap of 8.72 ms between them, and main read "`off the CPU (scheduler trace)` 4.14 ms a gap (8.27 ms at most
in one)" -- half of its only gap's 8.27 ms, called a gap's.

Truth: the finding's own table of the gaps (every gap, with its length) and the kept step count."""

from __future__ import annotations

import re

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES

_OS_WAIT = re.compile(r"`[^`]+` ([\d.]+) ms a step \(([\d.]+) ms at most in one gap\)")


def _gaps(run: str):
    s = discover(str(FIXTURES / "wild" / run))[0]
    h = analyze_session(s.run, s.session, s.hosts).hosts[0]
    (f,) = [f for f in h.findings if f.rule == "step_gaps"]
    (rows,) = [t.rows for t in f.evidence if t.title == "Longest gaps"]
    return h, f, rows


def test_one_gap_between_two_steps_is_said_per_step():
    h, f, rows = _gaps("streams_pinned_copies")
    steps = h.steps["count"]
    assert steps == 2 and len(rows) == 1  # one gap, two kept steps
    text = " ".join(f.summary.split())
    said = _OS_WAIT.search(text)
    assert said, text  # main: "4.14 ms a gap (8.27 ms at most in one)"
    per_step, most = float(said.group(1)), float(said.group(2))
    assert per_step * steps == pytest.approx(most, abs=0.02)  # the one gap's wait, over the two steps it is a part of
    assert "of each gap" not in text and " a gap " not in text


def test_as_many_gaps_as_steps_keep_their_numbers():
    """Control: wild/mordred_rtx6000_hashjoin's six kept steps each hold one of its six gaps: a step's mean is a
    gap's, the same number main printed."""
    h, f, rows = _gaps("mordred_rtx6000_hashjoin")
    assert len(rows) == h.steps["count"] == 6
    mean = sum(r[2] for r in rows) / len(rows)
    assert f.metric.detail["avg_gap_ms"] == pytest.approx(mean, rel=1e-3)
    said = re.search(r"`getc` ([\d.]+) ms", " ".join(f.summary.split()))
    (waits,) = [t.rows for t in f.evidence if t.title.startswith("OS waits")]
    assert said and float(said.group(1)) == pytest.approx(dict((r[0], r[1]) for r in waits)["getc"], abs=0.05)
