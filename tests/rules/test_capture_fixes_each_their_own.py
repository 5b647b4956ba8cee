"""Each finding about the capture carries its own fix (issue #37, h37-review2's left on ``cold_a100_alexnet``).

Main's ``capture_quality@cold`` stood for every capture fix of a cold job, so PARAM's AlexNet capture (the kept
``wild/cold_a100_alexnet``: a 43 s window, one measured pass after a 12.7 s warm-up) printed "Skip the first calls"
under three findings: the cold start, "Too few forward passes" and "The capture is long" -- the last fix does not
shorten anything.  Now a tag's ``rule:variant@tag`` key replaces that variant only (``frameworks.base.for_job``):
the warm-up keeps "skip the first calls", the few passes get "profile several forward passes", and the long capture
says how torch.profiler records a short window (its ``schedule(wait, warmup, active, repeat=1)``).  Where one fix
does answer two capture findings (an Nsight window, a server's profiler routes), it is said once, under the first
listed, and the later finding refers to it by title (``rules.capture_fixes_said_once``; the property ``fix-once`` in
``tests/support/properties.py`` runs over every report)."""

from __future__ import annotations

import copy
import re

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import get as framework
from tests.support.paths import FIXTURES
from tests.support.properties import fix_once_problems
from tests.support.report_store import session_report


@pytest.fixture(scope="module")
def alexnet():
    s = discover(str(FIXTURES / "wild" / "cold_a100_alexnet"))[0]
    return session_report(s)


def _capture_findings(rep) -> dict[str, object]:
    fs = [f for f in rep.hosts[0].findings if f.rule in ("cold_start", "capture_quality")]
    return {(f.metric.id if f.metric else f.rule): f for f in fs}


def test_the_three_capture_findings_of_the_cold_pass_each_have_their_own_fix(alexnet):
    fs = _capture_findings(alexnet)
    assert {"steps_kept", "capture_seconds"} <= set(fs) and any(f.rule == "cold_start" for f in fs.values())
    texts = [tuple(a.text for a in f.actions) for f in fs.values()]
    assert all(texts) and len(set(texts)) == len(texts), texts  # no fix said twice
    cold = next(f for f in fs.values() if f.rule == "cold_start")
    assert cold.actions[0].text.startswith("Skip the first calls")


def test_the_long_captures_fix_says_how_to_record_a_shorter_window(alexnet):
    """The capture spans 43 s: its fix names the schedule's window and its snippet records a few passes, then stops."""
    long_ = _capture_findings(alexnet)["capture_seconds"]
    a = long_.actions[0]
    assert re.search(r"schedule\(wait, warmup, active", a.text) and "not the whole run" in a.text
    assert re.search(r"schedule\(wait=\d+, warmup=\d+, active=\d+, repeat=1\)", a.snippet)
    assert "forward passes" in a.text and "model(batch)" in a.snippet  # the inference job's words, not a train loop
    few = _capture_findings(alexnet)["steps_kept"]
    assert few.actions[0].text.startswith("Profile several forward passes")


def test_a_tags_variant_key_replaces_that_variant_only():
    """``rule:variant@tag`` alone leaves the rule's other variants as they were; ``rule@tag`` still rewrites them all
    (an inference job's capture fixes, none of them a training loop's)."""
    pt = framework("pytorch")
    general = {k: [a.text for a in pt.fix(f"capture_quality:{k}")] for k in ("few_steps", "long", "unsteady")}
    cold = pt.for_job(("cold",))
    assert [a.text for a in cold.fix("capture_quality:few_steps")] == general["few_steps"]
    assert [a.text for a in cold.fix("capture_quality:long")] == general["long"]
    assert cold.fix("capture_quality:unsteady")[0].text.startswith("Skip the first calls")
    both = pt.for_job(("inference", "cold"))
    texts = [both.fix(f"capture_quality:{k}")[0].text for k in ("few_steps", "long", "unsteady")]
    assert len(set(texts)) == 3 and "forward passes" in texts[0] and texts[2].startswith("Skip the first calls")
    assert "train_step" not in both.fix("capture_quality:unseen")[0].snippet  # rewritten whole by @inference


@pytest.mark.parametrize("name", ["nvfuser_h200_first_call", "sglang_mi300x_decode"])
def test_one_capture_fix_is_said_once_and_referred_to_after(name):
    """One fix answering two capture findings is printed under the first listed; the later one names it: the Nsight
    window after the warm-up over several steps (nvFuser's first calls: the cold start and the one pass), a serving
    engine's profiler routes (SGLang: the unseen GPU work and the few engine steps).  (The cold MI300X capture's
    "unsteady steps" were a whole step beside the last backward alone, 2.6 and 0.8 ms: h37-xplane3 drops that partial
    step, and its one steady step is too few, a fix of its own.)"""
    s = discover(str(FIXTURES / "wild" / name))[0]
    h = session_report(s).hosts[0]
    fs = [f for f in h.findings if f.rule in ("cold_start", "capture_quality") and f.severity != "ok"]
    refs = [f for f in fs if f.actions and f.actions[0].text.startswith("The fix under ")]
    assert refs, [f.actions[0].text[:40] for f in fs]
    for f in refs:
        title = f.actions[0].text.split('"')[1]
        first = next(g for g in fs if g.title == title)
        assert fs.index(first) < fs.index(f) and first.actions[0].snippet  # the fix itself, above, with its code
    assert not fix_once_problems(h.host, h.findings)


def test_the_checker_catches_a_capture_fix_printed_twice(alexnet):
    h = alexnet.hosts[0]
    fs = [copy.deepcopy(f) for f in h.findings]
    capture = [f for f in fs if f.rule in ("cold_start", "capture_quality")]
    assert not fix_once_problems(h.host, fs)
    capture[-1].actions = list(capture[0].actions)  # main's "Skip the first calls" under the long capture
    assert fix_once_problems(h.host, fs)
