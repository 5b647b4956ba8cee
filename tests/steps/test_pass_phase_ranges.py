"""One pass a program marks with ranges named after its phases (``forward``, ``backward``) is the step, not the whole
window: the set-up before it (process group, model, the parameters' broadcast) is no part of it.

Real capture: lizhieffe/assignment2-systems ``profiles/ddp53_profile.sqlite`` (CS336 overlapped DDP, 2 x RTX 3090):
``forward pass`` + ``backward pass`` once per rank, 539 ms, after 2.39 s of set-up; main read the whole 3.37 s
window as the step.  Truth here by construction (``synthetic.nsysexport``, ``NsysJob.setup_ms``)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.frameworks import nvtx
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics

_ONE_ITERATION = dict(steps=1, ranks=2, ops=60, autograd_nvtx=False, step_range=None, nccl_us=400.0,
                      extra_ranges=("forward", "backward"), comm_range="allreduce grads")


def _report(path: str) -> dict:
    return analyze_session("d", "s", [SimpleNamespace(host="h0", path=path, format="nsys", size=0)]).to_dict()["hosts"][0]


def test_the_pass_is_its_phase_ranges_not_the_set_up_before_them(tmp_path):
    """500 ms of set-up (a `broadcast params` range with one NCCL broadcast) before one forward + backward of ~20 ms:
    the step is the pass (on main 520 ms, with a critical host-bound finding made of the set-up)."""
    p = tmp_path / "setup.sqlite"
    truth = write(str(p), NsysJob(setup_ms=500.0, **_ONE_ITERATION))
    m = host_metrics(reader.read_trace(str(p)))
    assert m.steps.count == 1 and m.steps.source == "single_pass"
    assert m.headline.avg_step_ms == pytest.approx(truth.step_ms, rel=0.05)
    assert "`forward`, `backward`" in m.steps.note and "set-up before them is not the pass" in m.steps.note
    host = _report(str(p))
    assert "unexplained_idle" not in {f["rule"] for f in host["findings"]}


def test_without_set_up_the_pass_is_unchanged(tmp_path):
    """The control: the same pass with nothing before it reads the same step (passes on main too)."""
    p = tmp_path / "pass.sqlite"
    truth = write(str(p), NsysJob(**_ONE_ITERATION))
    m = host_metrics(reader.read_trace(str(p)))
    assert m.headline.avg_step_ms == pytest.approx(truth.step_ms, rel=0.05)
    assert "set-up" not in m.steps.note


@pytest.mark.parametrize("name, phase", [("forward pass", True), ("Backward", True), ("fwd", True),
                                         ("optimizer step", True), ("opt_step", True), ("transformer block forward", True),
                                         ("warm-up forward", False), ("ddp broadcast init params", False),
                                         ("forwarding table", False), ("attention sublayer", False)])
def test_phase_names(name, phase):
    assert nvtx.is_pass_phase_name(name) is phase
