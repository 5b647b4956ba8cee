"""The gap finding's numbers are per kept step, and say so (h37-review8).

Since h37-left46 the gaps' time is averaged over the kept steps (each kept step's gap, a last one that ends the
capture holding none), so that it is a part of the step it is compared with; the sentences still said "of each gap"
and "a gap".  Where a capture has fewer gaps than kept steps the two differ: wild/streams_pinned_copies kept 2 steps
with one gap of 8.72 ms between them, and main read "`off the CPU (scheduler trace)` 4.14 ms a gap (8.27 ms at most
in one)" -- half of its only gap's 8.27 ms, called a gap's.  (Since h37-onepass32 that capture is one pass, its first
burst its uploads alone; wild/cuda_only_a4000_swin_fwd, 2 guessed steps with one gap, holds the case.)

Truth: the finding's own table of the gaps (every gap, with its length) and the kept step count."""

from __future__ import annotations

import re

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

_PER_STEP = re.compile(r"idle ([\d.]+) ms between steps on average \(max ([\d.]+) ms\)")
_UNRECORDED = re.compile(r"\(([\d.]+) ms a step: no runtime call")


def _gaps(run: str):
    s = discover(str(FIXTURES / "wild" / run))[0]
    h = session_report(s).hosts[0]
    (f,) = [f for f in h.findings if f.rule == "step_gaps"]
    (rows,) = [t.rows for t in f.evidence if t.title == "Longest gaps"]
    return h, f, rows


def test_one_gap_between_two_steps_is_said_per_step():
    # cuda_only_a4000_swin_fwd: 2 guessed steps, one gap (streams_pinned_copies until h37-onepass32 read it as one pass)
    h, f, rows = _gaps("cuda_only_a4000_swin_fwd")
    steps = h.steps["count"]
    assert steps == 2 and len(rows) == 1  # one gap, two kept steps
    text = " ".join(f.summary.split())
    said = _PER_STEP.search(text)
    assert said, text
    per_step, most = float(said.group(1)), float(said.group(2))
    assert most == pytest.approx(rows[0][2], abs=0.01)  # the one gap, in the table
    assert per_step * steps == pytest.approx(most, abs=0.02)  # the one gap's idle, over the two steps it is a part of
    unrecorded = _UNRECORDED.search(text)
    assert unrecorded, text
    assert float(unrecorded.group(1)) * steps == pytest.approx(rows[0][-1], abs=0.02)  # its unrecorded part likewise
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
