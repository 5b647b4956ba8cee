"""A TensorFlow step that already runs as a tf.function graph is never told to "run the step as a graph" (survey
h37-survey18: aoberai/chess-engine's Keras ``fit`` on TF 2.4, one batch profiled on an RTX 2060-class GPU --
``EagerExecute: __inference_train_function_1127`` around the graph executor's ops -- was told so in both its
host-bound and its launch-bound finding; the file has no licence, so the cause is tested by construction).

Truth by construction: the corpus's ``launch_bound`` step is a graph (``FunctionRun`` around the launch threads'
``ExecutorState::Process``, as TF 2.16+ writes it); the ``eager`` step runs op by op (``EagerExecute``, no graph run),
and keeps the fix."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.discover import logdir as discovery
from tb_gpu_advisor.frameworks import tensorflow as tf
from tb_gpu_advisor.runtime import pipeline

scenarios = pytest.importorskip("synthetic.scenarios")


def _findings(name: str, tmp_path) -> dict:
    sc = scenarios.SCENARIOS[name]()
    sc.write(tmp_path)
    (session,) = discovery.discover(str(tmp_path))
    report = pipeline.analyze_session(session.run, session.session, session.hosts)
    return {f.rule: f for f in report.findings}


def test_a_graph_step_is_not_told_to_become_a_graph(tmp_path):
    found = _findings("launch_bound", tmp_path)
    f = found["launch_bound"]
    texts = [a.text for a in f.actions]
    assert tf.TF_FUNCTION.text not in texts
    assert tf.JIT_COMPILE.text in texts  # the fix that fuses a graph's small ops is still given
    assert "tf.function graph" in f.summary  # and what shows the graph in use is said


def test_an_eager_step_keeps_the_fix(tmp_path):
    found = _findings("eager", tmp_path)
    assert tf.TF_FUNCTION.text in [a.text for a in found["launch_bound"].actions]


@pytest.mark.parametrize("name,graph", [("FunctionRun", True), ("EagerExecute: __inference_train_function_1127", True),
                                        ("EagerLocalExecute: __inference_train_step_42", True),
                                        ("EagerExecute", False), ("MatMul:MatMul", False), ("train", False)])
def test_graph_runs_are_known_by_name(name, graph):
    assert tf.is_function_call(name) is graph
