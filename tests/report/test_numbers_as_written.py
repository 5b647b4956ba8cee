"""Numbers and labels a user reads as written (issue #37, h37-words3): four classes, each fixed at its cause and walked
over every report as a property of ``tests/support/properties.py`` (``tests/report/test_properties.py``).

* ``whole-count`` / ``per-rank`` -- a count per step is per rank, as the times are: where it is not whole it says what
  it is a mean of, in one home (``rules.base.Ctx.count_per_step`` / ``mean_words``).  The lone V100 BERT (two
  replicas, one step) read "424.5 TF ops in the step" and "292.5 calls in the step on average" -- a mean of one step
  over nothing said; now "... in the step on average over its 2 GPUs".  Copies per step had no total to check them
  against: ``excessive_memcpy``'s detail holds ``copies_per_step`` and ``copies`` (``MemcpyStat.count``).
* ``one-step`` over the job's tables -- "GPUs (mean per step)", "Collectives per step (median rank)" where every host
  kept one step: now "GPUs (in the step)" (``metrics.job.JobView.scope``).
* ``one-value`` over several steps -- a window's label claims a part of its finding's time: d2d_v100's small-grid
  finding (5.74 ms a step over 4 steps) showed "kernels, step 1010 (90.2 ms)", every kernel's time; the windows whose
  share of its step is the finding's share of the kernel time (``rules.base.step_windows(draws=..., claimed_ms=...)``).
* ``one-step`` on an unmarked capture -- the one pass a capture with no step marker was read as may hold several calls
  of the model: torch_fp16_inference_unmarked (10 forward calls) read "of the 36.6 ms step" and "Only 1 forward pass
  was kept"; now "of the 36.6 ms pass" and "No forward pass is marked: the capture is read as one pass"
  (``metrics.job.step_word``).
"""

from __future__ import annotations

import copy
import re

import pytest

from tb_gpu_advisor.model.schema import Finding, Report
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.properties import (per_rank_problems, report_violations, table_scope_problems, unmarked_problems,
                                      window_value_problems)
from tests.support.run_report import run_report, v100_bert_report


def _only(r: Report, rule: str) -> Finding:
    (f,) = [f for h in r.hosts for f in h.findings if f.rule == rule]
    return f


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Report:
    return v100_bert_report(tmp_path_factory.mktemp("lone"))


def _said(f: Finding) -> str:
    return " ".join(f.summary.split())


# --------------------------------------------------------------------------- a count per rank says it is a mean


def test_a_mean_of_one_step_names_the_gpus_it_is_over(bert):
    """Two replicas ran 827 host-placed ops in the one step: 413.5 each, said as a mean over the 2 GPUs (main: "424.5
    TF ops in the step", of 849 before h37-xla64 read 22 of them as tf.data's function ops: input work); the
    launch-bound top offender likewise (main: "292.5 calls in the step on average")."""
    (h,) = bert.hosts
    host_ops = _only(bert, "host_op_placement")
    assert host_ops.metric.detail["host_ops_per_step"] == pytest.approx(413.5)
    assert "413.5 TF ops in the step on average over its 2 GPUs run on the host" in _said(host_ops)
    assert "292.5 calls in the step on average over its 2 GPUs" in _said(_only(bert, "launch_bound"))
    assert not [v for v in report_violations(bert) if v.startswith(("whole-count", "per-rank"))]


def test_a_mean_that_does_not_say_over_what_is_caught(bert):
    r = copy.deepcopy(bert)
    f = _only(r, "host_op_placement")
    f.summary = f.summary.replace(" on average over its 2 GPUs", "")  # as main printed it
    assert any(v.startswith("whole-count") and f.id in v for v in report_violations(r))
    f = _only(r, "launch_bound")
    f.summary = f.summary.replace(" on average over its 2 GPUs", " on average")  # a mean of one step, over what?
    assert any(v.startswith("whole-count") and "292.5 calls" in v for v in report_violations(r))


def test_a_whole_count_and_a_one_gpu_mean_say_no_gpus():
    """Controls: h200_waits' ``torch_numpy_read`` whole "N of M kernels per step" says no mean (cloverleaf's "92 of
    125" was the vehicle until h37-pexsi booked its launch wait to its uploads' staging); jax_mi300x's one GPU over 16
    steps says "per step on average", no GPUs (its launch wait's words, told by the host-bound finding since
    h37-calls67)."""
    whole = _said(_only(run_report(FIXTURES / "h200_waits", "torch_numpy_read"), "launch_bound"))
    assert re.search(r"\b\d+ of \d+ kernels per step \(", whole) and "on average" not in whole.split("(")[1]
    jax = _only(run_report(FIXTURES / "wild", "jax_mi300x"), "unexplained_idle")
    assert "per step on average" in _said(jax) + " " + jax.saving.assumption
    assert "over its" not in _said(jax) + " " + jax.saving.assumption


def _fsdp_window() -> Report:
    if not (SHARED_PROFILES / "nsys" / "h100_fsdp_window").is_dir():
        pytest.skip("../shared/profiles is not beside this checkout")
    return run_report(SHARED_PROFILES / "nsys", "h100_fsdp_window")


def test_copies_per_step_have_their_total():
    """h100_fsdp_window (two processes, one GPU each, one pass): the copies the finding counts per step are the kept
    copies of both ranks over 2 GPUs -- checked against the total its detail now holds (main held none)."""
    r = _fsdp_window()
    (h,) = r.hosts
    f = _only(r, "excessive_memcpy")
    d = f.metric.detail
    assert d["copies"]["h2d"] > 0 and d["copies_per_step"]["h2d"] == pytest.approx(d["copies"]["h2d"] / 2)
    assert per_rank_problems(h) == []
    f.metric.detail = dict(d, copies_per_step=dict(d["copies_per_step"], h2d=d["copies"]["h2d"]))  # every rank's
    assert any(v.startswith("per-rank") and "h2d copies" in v for v in per_rank_problems(h))
    f.metric.detail = {k: v for k, v in d.items() if k not in ("copies", "copies_per_step")}  # as on main
    assert any("no total" in v for v in per_rank_problems(h))
    f.metric.detail = d


# --------------------------------------------------------------------------- job tables say what their numbers are


def test_the_job_tables_of_one_step_say_the_step(bert):
    """The lone BERT kept one step: its GPUs table is that step's (main: "GPUs (mean per step)")."""
    assert bert.ranks is not None and bert.ranks.title == "GPUs (in the step)"
    assert table_scope_problems(bert) == []
    r = copy.deepcopy(bert)
    r.ranks.title = "GPUs (mean per step)"
    assert any(v.startswith("one-step") and "mean per step" in v for v in table_scope_problems(r))


def test_the_job_tables_of_several_steps_keep_per_step():
    """Control: d2d_v100 kept 4 steps: its job's collectives stay "per step (median rank)"."""
    r = run_report(FIXTURES / "wild", "d2d_v100")
    assert r.collectives is not None and r.collectives.title == "Collectives per step (median rank)"
    assert table_scope_problems(r) == []


# --------------------------------------------------------------------------- a window claims its finding's time


def test_a_window_claims_no_time_its_finding_does_not_hold():
    """d2d_v100's small-grid kernels take 5.7 ms a step; main's windows once claimed each step's every kernel (90.2 ms,
    127.3 ms, 73.4 ms), then named their step alone; now each claims the small-grid kernels' share of its step's kernel
    time (h37-windows60), a part of the finding's time over the 4 steps.  Control: the copies' windows keep their time,
    a part of the copies' own."""
    r = run_report(FIXTURES / "wild", "d2d_v100")
    (h,) = r.hosts
    small = _only(r, "small_grid")
    said = float(re.search(r"\(([\d.]+) ms per step\)", small.summary).group(1))
    claimed = [float(re.search(r"\(([\d.]+) ms\)$", w.label).group(1)) for w in small.windows]
    assert len(claimed) == 3 and sum(claimed) <= 4 * said and all(c < 2 * said for c in claimed), (said, claimed)
    copies = _only(r, "excessive_memcpy")
    assert all(re.search(r", step \d+ \([\d.]+ ms\)$", w.label) for w in copies.windows)
    assert window_value_problems(h.host, h) == []


def test_a_window_claiming_more_than_its_finding_is_caught():
    r = copy.deepcopy(run_report(FIXTURES / "wild", "d2d_v100"))
    (h,) = r.hosts
    small = _only(r, "small_grid")
    for w, t in zip(small.windows, ("90.2 ms", "127.3 ms", "73.4 ms")):  # main's labels
        w.label = f"kernels, step {w.step} ({t})"
    assert any(v.startswith("one-value") and small.id in v for v in window_value_problems(h.host, h))


# --------------------------------------------------------------------------- an unmarked capture's step is a pass


def test_an_unmarked_capture_says_the_pass():
    """torch_fp16_inference_unmarked: ten forward calls, no step marker, read as one pass."""
    r = run_report(FIXTURES / "h200_jobs", "torch_fp16_inference_unmarked")
    (h,) = r.hosts
    assert h.steps["source"] == "single_pass"
    assert "read as one pass" in h.steps["note"]
    launch = _only(r, "launch_bound")
    assert re.search(r"% of the [\d.]+ ms pass \(", _said(launch)) and "in the pass" in _said(launch)
    cq = _only(r, "capture_quality")
    assert cq.title == "No forward pass is marked: the capture is read as one pass"
    assert "Only 1" not in cq.summary
    assert unmarked_problems(h) == []
    f = copy.deepcopy(launch)
    f.summary = f.summary.replace(" ms pass", " ms step")  # as main printed it
    h2 = copy.deepcopy(h)
    h2.findings = [f]
    assert any(v.startswith("one-step") for v in unmarked_problems(h2))


def test_a_marked_step_keeps_the_job_word():
    """Control: vllm_mi300x_decode marks its one engine step (`execute_model`): "engine step" stays."""
    if not (FIXTURES / "wild" / "vllm_mi300x_decode").is_dir():
        pytest.skip("wild fixture absent")
    r = run_report(FIXTURES / "wild", "vllm_mi300x_decode")
    (h,) = r.hosts
    assert any("engine step" in f.summary for f in h.findings)
    assert unmarked_problems(h) == []
