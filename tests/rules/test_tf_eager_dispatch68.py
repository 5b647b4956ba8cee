"""TensorFlow's dispatch is its eager calls: a loop of a few eager ops too small for them reads the step-level verdict,
with one graph of the step as its first fix (issue #37 class 4; h37-dispatch68, after h37-native67 *Left*).

Main (225b624d) counted no TF dispatch (``Framework.step_calls`` was ``never`` for TF): a custom loop of three eager
ops on tiny tensors, 99 us of the eager runtime's host time a step against 9 us of GPU work, read 0 calls a step, so
no check read the step as too small for its dispatch.  Now ``tensorflow.is_step_call`` names the eager runtime's
``EagerLocalExecute: <op type>`` -- one per op or tf.function run from Python, as the real TF 2.21 captures record it
-- less the input pipeline's.

Truth by construction: ``synthetic.tfcapture.write_tiny_eager_loop`` -- 3 eager calls a step, each 33 us on the
host, 3 us kernels (too small); its control, 400 us kernels (not).  Real, by hand from the file:
``tests/fixtures/real/tf221_cpu_custom_loop.xplane.pb`` (TF 2.21, CPU) -- each of its 5 ``train`` steps runs
``EagerLocalExecute: IteratorGetNext`` (``next(iterator)``: the input's) and one
``EagerLocalExecute: __inference_train_step_2361`` (the step's tf.function): 1 call a step, whose time is the graph's
run on the executor's threads (waits for the GPU included), not dispatch: ``tensorflow.is_step_wait``.  The V100 BERT capture
(TF 2.4 graph steps) records no ``EagerLocalExecute`` at all: its reports stand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import tfcapture
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.frameworks import tensorflow
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.rules import launch_bound
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics

_REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "tf221_cpu_custom_loop.xplane.pb"


@pytest.fixture(scope="module")
def loops(tmp_path_factory):  # noqa: ANN001, ANN201
    root = tmp_path_factory.mktemp("tf_eager_loops")
    out = {}
    for run, kernel_us in (("tiny", 3.0), ("big", 400.0)):
        path = root / run / "plugins" / "profile" / "s1" / "host.xplane.pb"
        out[run] = (path, tfcapture.write_tiny_eager_loop(str(path), kernel_us=kernel_us))
    return out


@pytest.mark.parametrize("run", ["tiny", "big"])
def test_the_eager_loop_counts_its_eager_calls_as_dispatch(loops, run):
    """Fails on 225b624d: 0 calls a step."""
    path, t = loops[run]
    m = host_metrics(read_trace(str(path)))
    assert m.dispatch.calls_per_step == pytest.approx(t["calls_per_step"])
    assert m.dispatch.host_ms_per_step == pytest.approx(t["host_ms_per_step"], rel=0.02)
    assert m.breakdown.device_compute == pytest.approx(t["device_ms_per_step"], rel=0.02)
    assert launch_bound.step_level(m) is t["too_small"]


def test_the_tiny_eager_loop_is_told_its_dispatch_and_one_graph_first(loops):
    """Fails on 225b624d: "Ops run eagerly" read per op, no step-level reading of the step's 3 calls."""
    path, _ = loops["tiny"]
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "xplane"))
    assert rep.error is None, rep.error
    (f,) = [f for f in rep.findings if f.rule == "unexplained_idle"]
    assert f.metric.detail["dispatch_calls_per_step"] == 3.0
    assert "the dispatch of its 3 eager calls: 99 us on the host for 9 us of GPU compute" in f.summary, f.summary
    assert "runs as a graph" in f.actions[0].text and "@tf.function" in f.actions[0].snippet
    assert any("steps_per_execution" in (a.snippet or "") for a in f.actions)


def test_the_real_custom_loop_counts_its_function_call_not_its_input():
    """By hand: one ``__inference_train_step`` call a step; ``next(iterator)``'s ``IteratorGetNext`` is the input's."""
    m = host_metrics(read_trace(str(_REAL)))
    assert m.steps.count == 5 and m.dispatch.calls_per_step == pytest.approx(1.0)
    # the call runs the step's graph (its waits included): counted, its 1.02 ms a step never the dispatch's cost
    assert m.dispatch.host_ms_per_step == 0.0 and tensorflow.is_step_wait("EagerLocalExecute: __inference_f_12")
    assert tensorflow.is_step_call("EagerLocalExecute: _EagerConst")  # tf.constant: a call of the program's
    assert not tensorflow.is_step_call("EagerLocalExecute: IteratorGetNext")
    assert not tensorflow.is_step_call("EagerLocalExecute: OptionalGetValue")  # Keras 3's iterator
    assert not tensorflow.is_step_call("EagerExecute")  # the wrapper around it: counted once
