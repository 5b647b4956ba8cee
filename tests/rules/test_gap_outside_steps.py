"""A gap the guessed steps were cut at lies between them, and says so (issue #37, h37-left37).

``wild/vit_a4000_pageable_batch`` (kept; Aphelack/efficient-dl-systems, MIT): steps guessed from GPU bursts, cut at
the 3.78 s stretch in which the file records no event of any kind (h37-left30).  On main its gap note read "saves ~0
ms/step" and "Assuming the between-step gap shrinks to its input-wait part (host work moved out of the step ...)"
beside "this gap may lie inside one step": the gap is known to lie outside every step.  Truth from the file itself
(json): the stretch no event covers.  Control: the same capture with the stretch shortened to 10 ms, which stays in
its step (h37-left30), keeps the general words.

The file's first burst is the tail of an iteration launched before the window, dropped as partial since h37-left46, so
the file itself keeps one step and no gap: both read the capture with that tail's launches recorded
(``unrecorded.tail_launched``), its first step whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support import unrecorded

TRACE = unrecorded.VIT_PAGEABLE


_doc = unrecorded.load
_hole = unrecorded.longest_hole


def _gap_finding(path: Path):
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    (f,) = [f for f in rep.findings if f.rule == "step_gaps"]
    return f


def test_a_gap_cut_out_of_the_steps_is_said_to_lie_between_them(tmp_path):
    hole0, hole1 = _hole(_doc()["traceEvents"])
    path = tmp_path / TRACE.name
    unrecorded.tail_launched(_doc(), path)
    f = _gap_finding(path)
    outside = f.metric.detail["outside_steps_ms"]
    # the 3,779.8 ms nothing recorded, as the mean gap is taken: over the kept steps (h37-review14: a mean over the
    # gaps set against the mean gap over the steps read "123.6% of it" on rocprof_aiter_mi355x) -- all of the gap
    assert outside == pytest.approx(f.metric.detail["avg_gap_ms"], abs=1.0)
    assert (hole1 - hole0) / 1000 / outside == pytest.approx(round((hole1 - hole0) / 1000 / outside), abs=1e-3)
    assert f.severity == "info" and f.saving.ms_per_step == 0.0
    assert "may lie inside one step" not in f.summary, f.summary
    assert "lies between them, outside every step's window" in f.summary, f.summary
    assert "moved out of the step" not in f.saving.assumption, f.saving.assumption
    assert "not a step" in f.saving.assumption
    # what the time is, and how to see it: unrecorded, its first fix records the host
    assert "did not record" in f.summary and "Record" in f.actions[0].text, f.actions[0].text


def test_a_gap_inside_a_guessed_step_keeps_the_general_words(tmp_path):
    """Control: the stretch shortened to 10 ms stays in step 0's window: the gap may lie inside a step."""
    path = unrecorded.shortened(unrecorded.tail_launched(_doc()), 10_000.0, tmp_path / TRACE.name)
    f = _gap_finding(path)
    assert not f.metric.detail.get("outside_steps_ms"), f.metric.detail
    assert "may lie inside one step" in f.summary, f.summary
