"""``input_bound`` says the input time of a capture read as one pass runs up to the pass's first launch, not "each
step's" (h37-probe47p: walk ``--xplane --seed 128000``, seed 128696).

Truth by construction (``synthetic.randjobs.jax_job``): one jitted call of a 3-layer bf16 MLP under XLA command
buffers, no step annotation and no module events, its 12-byte input put on the device first (PjRt's
``CommonPjRtClient::LinearizeIntoImpl`` on the host, ~21 us) and its loss read with ``block_until_ready``.  The
capture holds one unmarked pass (steps source ``whole_capture``), and the GPU waits for the put: input-bound, ~6% of
the ~343 us pass.  On 3b05c8b4 the summary read "the host's own ops before each step's first launch: ... -- the step
makes its input itself, over the pass": the ``one-pass-words`` law broke.  One step kept, marked or not, is named
in the job's word (``Ctx.step_noun``: the pass, the forward pass); the same job marked as 4 steps (the control)
keeps "each step's" words.
"""

from __future__ import annotations

import pytest

from synthetic import randjobs
from tb_gpu_advisor.model.schema import Finding, HostReport
from tests.support.cli_report import kept_report
from tests.support.paths import FIXTURES
from tests.support.properties import input_account_problems, one_pass_words_problems
from tests.support.random_jobs import reports_of

WILD = FIXTURES / "wild"

#: seed 128696's drawn parameters
ONE_PASS = {"steps": 1, "hosts": 1, "layers": 3, "fp32": False, "command_buffers": True,
            "marker": "none_no_module_events", "hlo": False, "scale": 0.0359, "host_us": 0.0, "put_bytes": 12,
            "read": "block", "allreduce_us": 17924.057, "no_gpu": False}


def _host(**over) -> HostReport:
    (r,) = reports_of(randjobs.jax_job(128696, **{**ONE_PASS, **over}))
    return r.hosts[0]


def _input_bound(h: HostReport) -> Finding:
    (f,) = [f for f in h.findings if f.rule == "input_bound"]
    return f


def test_a_one_pass_input_made_by_the_hosts_own_op_is_the_passs():
    h = _host()
    assert (h.steps["count"], h.steps["source"]) == (1, "whole_capture")
    f = _input_bound(h)
    assert f.metric.detail["input_wait_ms"] == pytest.approx(0.021, abs=0.002)  # PjRt's linearizing of the put
    assert "the host's own ops before the pass's first launch: `CommonPjRtClient::LinearizeIntoImpl`" in f.summary
    assert "-- the pass makes its input itself, over the pass" in f.summary
    assert "each step" not in f.summary
    assert one_pass_words_problems(h) == []
    assert input_account_problems(f.id, f) == []  # the law reads the pass's words as the wait's account


def test_one_marked_step_names_its_own_first_op():
    """The untraced lead's words (``_UNTRACED``) over one marked step: that step's first op, not "each step's"."""
    h = _host(marker="train")
    assert (h.steps["count"], h.steps["source"]) == (1, "trace_train")
    f = _input_bound(h)
    assert "the host time before the step's first op (" in f.summary
    assert input_account_problems(f.id, f) == []


def test_a_forward_pass_prepared_by_its_own_frames_is_the_forward_passs():
    """``wild/timesformer_h100_video`` (one ``ProfilerStep``, one forward pass of the HF pipeline): the pipeline's
    ``preprocess`` frame holds the time before the pass's first op.  3b05c8b4: "the host time before each step's
    first op, held by the program's own input preparation ... -- the step prepares its input itself" beside "of the
    382.5 ms forward pass"."""
    h = kept_report(WILD / "timesformer_h100_video").hosts[0]
    s = _input_bound(h).summary
    assert "of the 382.5 ms forward pass" in s
    assert "the host time before the forward pass's first op, held by the program's own input preparation" in s
    assert "-- the forward pass prepares its input itself, not an untraced loader" in s
    assert "each step" not in s and "the step" not in s


def test_marked_steps_keep_each_steps_words():
    h = _host(steps=4, marker="train")
    assert h.steps["count"] == 4
    assert "before each step's first op" in _input_bound(h).summary
