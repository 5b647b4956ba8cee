"""A profiler schedule the advice proposes fits the loop it runs under (issue #37, class 1; h37-schedfit).

torch.profiler's schedule counts prof.step() calls: wait, then warmup, then active.  A loop of fewer steps than their
sum ends before the window opens -- the failure ``loop_ended`` names (h37-survey55).  The generic advice for work of
no known kind asked ``schedule(wait=5, warmup=2, active=10)`` of ``for step in range(10)``: 17 steps of a 10-step
loop.  Laws here, over every fix and capture advice PyTorch composes: a loop of a stated count covers its schedule; a
loop of unknown length (a loader) is told the condition; a loop-ended window's fix, for a loop that ran N steps,
proposes no more than N.
"""

from __future__ import annotations

import re

import pytest

from tb_gpu_advisor.frameworks import pytorch

SCHEDULE = re.compile(r"wait, warmup, active = (\d+), (\d+), (\d+)|schedule\(wait=(\d+), warmup=(\d+), active=(\d+)")
RANGE = re.compile(r"for \w+ in range\((\d+)\)")
LOOPS = (pytorch.TRAINING_LOOP, pytorch.FORWARD_LOOP, pytorch.ANY_LOOP)


def _asked(code: str) -> int | None:
    """The steps a snippet's schedule asks (wait + warmup + active), None where it proposes none."""
    m = SCHEDULE.search(code)
    return None if m is None else sum(int(g) for g in m.groups() if g is not None)


def _advice() -> list[tuple[str, str]]:
    """Every snippet PyTorch's capture advice and fixes hold, for each loop and rank count, by key."""
    out = [("CAPTURE_INFERENCE", pytorch.CAPTURE_INFERENCE), ("CAPTURE_SHORT_INFERENCE", pytorch.CAPTURE_SHORT_INFERENCE)]
    for loop in LOOPS:
        for per_rank in (True, False):
            out.append((f"capture {loop.capture_header}", pytorch.capture(loop, per_rank)))
            out.extend((f"{k} {loop.capture_header}", a.snippet) for k, acts in
                       pytorch.looped_fixes(loop, per_rank).items() for a in acts if a.snippet)
        out.append((f"cold {loop.capture_header}", pytorch.capture_cold(loop)))
    out.extend((k, a.snippet) for k, acts in pytorch.FIXES.items() for a in acts if a.snippet)
    return [(k, code) for k, code in out if _asked(code) is not None]


def test_a_loop_of_a_stated_count_covers_the_schedule_it_runs_under():
    checked = 0
    for key, code in _advice():
        count = RANGE.search(code)
        if count is not None:
            checked += 1
            assert _asked(code) <= int(count.group(1)), (key, code)
    assert checked, "no advice loops a stated count"


def test_a_loop_of_unknown_length_is_told_what_its_schedule_must_fit():
    """A loop over a loader (or batches) has a length the advice does not know: the condition is said beside it --
    in words or as a check -- or the loop's own header states the inputs it needs (the forward passes' "8 or more
    inputs" under 1 + 2 + 5; main said 8 under a cold start's 2 + 3 + 5)."""
    for key, code in _advice():
        inputs = re.search(r"# (\d+) or more inputs", code)
        if inputs:
            assert _asked(code) <= int(inputs.group(1)), (key, code)
            continue
        said = re.search(r"wait \+ warmup \+ active = (\d+) steps", code)
        assert "wait + warmup + active <= len(loader)" in code or (said and int(said.group(1)) == _asked(code)), \
            (key, code)


def test_the_any_work_loop_runs_as_many_steps_as_its_schedule_asks():
    """The generic advice's own loop: ``range(10)`` under 5 + 2 + 10 asked 17 steps (main); its count is now the sum."""
    code = pytorch.capture(pytorch.ANY_LOOP, per_rank=False)
    assert "for step in range(17):" in code and "schedule(wait=5, warmup=2, active=10" in code, code
    assert "wait + warmup + active = 17 steps" in code, code


@pytest.mark.parametrize("steps", range(1, 12))
def test_a_loop_ended_fix_proposes_no_more_steps_than_the_loop_ran(steps):
    """``loop_ended/N`` (a window whose ``ProfilerStep#N`` found the input exhausted): the schedule proposed fits N,
    records at least one step, and is the general one where that already fits."""
    fw = pytorch.FRAMEWORK.for_job(())
    (fix,) = fw.fix(f"capture_quality:loop_ended/{steps}")
    wait, warmup, active = (int(g) for g in SCHEDULE.search(fix.snippet).groups()[:3])
    assert wait + warmup + active <= steps and active >= 1, (steps, fix.snippet)
    if steps >= sum(pytorch.LOOP_ENDED_SCHEDULE):
        assert (wait, warmup, active) == pytorch.LOOP_ENDED_SCHEDULE
    else:
        assert f"ran {steps} batch" in fix.text, fix.text


def test_fit_schedule_cuts_wait_first_then_warmup_then_active():
    assert pytorch.fit_schedule((5, 2, 10), 0) == (5, 2, 10)   # not known: as proposed
    assert pytorch.fit_schedule((5, 2, 10), 17) == (5, 2, 10)
    assert pytorch.fit_schedule((5, 2, 10), 12) == (0, 2, 10)
    assert pytorch.fit_schedule((5, 2, 10), 11) == (0, 1, 10)
    assert pytorch.fit_schedule((5, 2, 10), 3) == (0, 1, 2)
    assert pytorch.fit_schedule((5, 2, 10), 1) == (0, 0, 1)
    for steps in range(1, 40):
        for schedule in ((1, 1, 3), (5, 2, 10), (2, 3, 5), (0, 0, 1)):
            w, u, a = pytorch.fit_schedule(schedule, steps)
            assert 0 <= w and 0 <= u and 1 <= a and w + u + a <= max(steps, 1), (schedule, steps)
