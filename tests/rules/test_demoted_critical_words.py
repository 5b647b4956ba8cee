"""A critical finding the first-call rule makes a note drops the words that kept it critical (survey h37-survey39).

On a capture read whole as one pass of low confidence (no step marker, no kind of work named), a critical finding
that claims time per pass says why it keeps its grade ("Critical though the capture marks no step ...",
``rules.KEPT_ON_ONE_PASS``); on a window that is mostly start-up, the first-call rule (``rules._one_early_call``) makes a
finding of the host's time a note ("A note, not a problem ...").  Run the other way round, one summary said both
(h37-survey39's mmagic forward under PyProf).  The first-call note goes first, so only what stays critical keeps the
words.

Read before on the real ``wild/mmagic_a100_pyprof_forward`` with two job readings patched off; since h37-nsysos that
capture is a forward pass whose context is start-up, and no host-bound finding is left to demote there.  Here the
same shape is generated, its truth by construction (``synthetic.torchtrace.write_start_up_of_no_framework``: a CuPy-like
program's start-up -- the context in ``cudaMalloc``, four module loads of 4 ms, five first calls of 5 ms of traced
Python, no ATen op; the pass runs from the first kernel): the cold start (12 ms of module loads in the 32 ms pass)
stays critical and keeps the words; the host-bound finding (the first calls' 20 ms) is a note without them.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import rules
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _report(tmp_path: Path) -> tuple[dict, dict]:
    path = tmp_path / "node0_4300.1.pt.trace.json"
    truth = tt.write_start_up_of_no_framework(str(path))
    rep = analyze_session("startup", "s", [SimpleNamespace(host="h0", path=str(path), format="kineto", size=0)])
    return rep.to_dict(), truth


def test_the_premise_one_low_confidence_pass_mostly_start_up(tmp_path: Path) -> None:
    rep, truth = _report(tmp_path)
    host = rep["hosts"][0]
    assert host["job"]["kind"] == truth["kind"] and host["job"]["phase"] == truth["phase"]
    assert host["steps"]["source"] == "whole_capture" and host["steps"]["confidence"] == "low"
    assert host["breakdown_ms"]["startup"] == pytest.approx(truth["startup_in_pass_ms"], abs=0.05)
    assert host["breakdown_ms"]["host_compute"] == pytest.approx(truth["host_work_in_pass_ms"], abs=0.05)


def test_a_demoted_critical_drops_the_words_that_kept_it_critical(tmp_path: Path) -> None:
    rep, truth = _report(tmp_path)
    by_rule = {f["rule"]: f for f in rep["findings"]}
    host = by_rule["unexplained_idle"]  # the first calls' Python, more than half the GPU's idle: critical before
    assert "A note, not a problem" in host["summary"] and host["severity"] == "info"
    assert rules.KEPT_ON_ONE_PASS.strip() not in host["summary"], host["summary"]
    cold = by_rule["cold_start"]  # control: what stays critical keeps its words
    assert cold["severity"] == "critical" and rules.KEPT_ON_ONE_PASS.strip() in cold["summary"]
