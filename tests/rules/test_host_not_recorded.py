"""Kernel traces alone (issue #37 class 1, h37-hostless): the capture recorded the GPU's kernels and nothing of the
host, so the host's time is unobserved -- not time the host was recorded spending on something the capture does not
name.

The wrong assumption: *every capture recorded the host, so GPU idle no host event covers is the host's own code or a
wait the capture did not name*.  Main told ``wild/rocprof_aiter_mi355x`` (rocprof ``--stats``, no ``--hip-trace``)
"for 432.4 ms of it (99.9%) no runtime call, op, range or OS call of the capture covers the host's time: the host's own
code, or a wait ... the capture traced no context switches, so it cannot tell which", and
``wild/llamacpp_rocprof_r9700``'s gap note "it records the host's time (its code or a wait)".  The truth: no host
trace was there to record a call, a range or a context switch; the fix is to record the host's side at all (rocprof
``--hip-trace``), which the findings now put first.  Whether the host was recorded is one metrics fact
(``HostMetrics.host_recorded``), asked by the rules and the launch card.

Control: ``wild/vit_a4000_avg_batch`` (a Kineto trace with its host) keeps its unrecorded-host words and its fix.
"""

from __future__ import annotations

from tb_gpu_advisor.rules.base import NO_HOST
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"


def _host(run: str):
    (h,) = run_report(WILD, run).hosts
    return h


def _finding(run: str, rule: str, suffix: str = ""):
    (f,) = [f for f in _host(run).findings if f.rule == rule and f.id.endswith(suffix)]
    return f


def test_unrecorded_idle_says_the_capture_recorded_nothing_of_the_host():
    f = _finding("rocprof_aiter_mi355x", "unexplained_idle", "#unrecorded")
    assert NO_HOST in f.summary and "unobserved" in f.summary
    # main: "the capture traced no context switches, so it cannot tell which" -- as if the host had been recorded
    assert "context switches" not in f.summary and "covers the host's time" not in f.summary
    assert "recorded nothing of the host" in f.title
    # the fix records the host's side first: the HIP calls (each launch) and the roctx ranges
    assert f.actions[0].text.startswith("Record the host's side")
    assert "--hip-trace" in f.actions[0].snippet and "--roctx-trace" in f.actions[0].snippet
    assert f.metric.detail["unrecorded_ms"] > 400  # the numbers stay: 432.4 ms of the 432.6 ms pass


def test_gap_note_and_verdict_say_what_the_window_holds():
    gaps = _finding("llamacpp_rocprof_r9700", "step_gaps")
    assert NO_HOST in gaps.summary and "did not observe" in gaps.summary
    # main: "... the capture traced no context switches to tell them apart ... it records the host's time"
    assert "context switches" not in gaps.summary and "records the host's time" not in gaps.summary
    assert gaps.actions[0].text.startswith("Record the host's side")
    verdict = _finding("llamacpp_rocprof_r9700", "unexplained_idle")
    # main: "open the trace viewer ... look at what the host does while the GPU idles" -- on a trace with no host
    assert NO_HOST in verdict.summary and "trace viewer" not in verdict.summary


def test_launch_card_is_not_measured_without_a_host():
    (card,) = [c for c in _host("rocprof_aiter_mi355x").headline if c.id == "launch_wait_share"]
    assert card.value is None and card.display == "n/a"


def test_a_capture_with_its_host_keeps_its_words_control():
    f = _finding("vit_a4000_avg_batch", "unexplained_idle", "#unrecorded")
    assert "no runtime call, op, range or OS call of the capture covers the host's time" in f.summary
    assert NO_HOST not in f.summary
    assert not f.actions[0].text.startswith("Record the host's side")
    (card,) = [c for c in _host("vit_a4000_avg_batch").headline if c.id == "launch_wait_share"]
    assert card.value is not None


def test_host_recorded_is_one_metrics_fact_and_rocprofv3_records_the_runtime():
    """``rocprofv3 --kernel-trace`` alone (wild/fsdp_mi350x_kernel_trace): the metrics say the host was not recorded,
    and the way to record it is rocprofv3's own (``--runtime-trace``), not rocprof v1's ``--hip-trace``."""
    from tb_gpu_advisor import formats
    from tb_gpu_advisor.discover.logdir import discover
    from tb_gpu_advisor.rules.base import Ctx
    from tb_gpu_advisor.runtime.pipeline import host_metrics

    (s,) = [s for s in discover(str(WILD)) if s.run == "fsdp_mi350x_kernel_trace"]
    (hf,) = s.hosts
    m = host_metrics(formats.read(hf))
    assert m.host_recorded is False
    assert Ctx(m).no_host == NO_HOST
    first = Ctx(m).record_host_fix()[0]
    assert first.text.startswith("Record the host's side") and "--runtime-trace" in first.snippet
    assert "--hip-trace" not in first.snippet
