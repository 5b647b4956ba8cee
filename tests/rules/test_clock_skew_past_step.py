"""GPU work recorded a step or more from its launch: the capture's clocks disagree by more than the step, so no GPU
idle measured against the host's work stands -- the findings that measure it are not given, and the clock note
(a warning then, ``capture_quality.unmeasured_across_clocks``) says which and why.

Truth by construction: ``synthetic/torchtrace``'s scenarios (an input-bound loop, a ``.item()`` sync every step,
300 tiny launches) written once as recorded and once with every GPU event moved earlier by ``shift`` (the GPU's
clock wrong by that much; the host's events, step marks and launches unchanged).  Before (h37-hostile's left):
kernels 10 s before their launches read as critical input-bound (73% of the step) beside an info note.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.discover.logdir import discover
from tests.support.report_store import session_report

ACROSS = ("input_bound", "host_sync", "launch_bound", "step_gaps", "unexplained_idle")


def _report(tmp_path: Path, scenario: str, shift_us: float) -> dict:
    (r,) = tt.simulate(scenario, 12)
    for e in r.gpu:
        e["ts"] -= shift_us
    for e in r.flows:
        if e.get("ph") == "f":  # the flow's GPU end
            e["ts"] -= shift_us
    run = tmp_path / scenario
    run.mkdir(parents=True)
    (run / "w.1.pt.trace.json").write_text(tt._dumps(tt.trace_doc(r, 1)))
    s = next(iter(discover(str(tmp_path))))
    return session_report(s).to_dict()


def _rules(rep: dict) -> set[str]:
    return {f["rule"] for f in rep["findings"]}


def _skew(rep: dict) -> dict | None:
    return next((f for f in rep["findings"] if f["metric"] and f["metric"]["id"] == "clock_skew_us"), None)


@pytest.mark.parametrize("scenario, fires", [("input_bound", "input_bound"), ("sync_item", "host_sync"),
                                             ("tiny_ops", "launch_bound")])
def test_a_clock_10_s_off_gives_no_finding_measured_across_it(tmp_path: Path, scenario: str, fires: str):
    assert fires in _rules(_report(tmp_path / "on", scenario, 0.0))  # the truth recorded on one clock
    rep = _report(tmp_path / "off", scenario, 10e6)
    assert not _rules(rep) & set(ACROSS), _rules(rep)
    note = _skew(rep)
    assert note is not None and note["severity"] == "warning"
    assert "disagree by at least 10.00 s" in note["summary"]
    assert "The disagreement is longer than the step" in note["summary"]
    assert not rep["healthy"]


def test_the_note_names_what_it_did_not_give(tmp_path: Path):
    note = _skew(_report(tmp_path, "input_bound", 10e6))
    assert '"Input-bound: the GPU waits for the input pipeline"' in note["summary"] and "are not given" in note["summary"]
    assert "x the 13.7 ms step" in note["summary"]


def test_a_skew_under_the_step_keeps_the_findings_beside_an_info_note(tmp_path: Path):
    # 2 ms off on a 13.7 ms step: every interval uncertain by 2 ms, the 10 ms input wait still measured
    rep = _report(tmp_path, "input_bound", 2000.0)
    assert "input_bound" in _rules(rep)
    note = _skew(rep)
    assert note is not None and note["severity"] == "info" and "longer than the step" not in note["summary"]
