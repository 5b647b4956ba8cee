"""The host ops that fill the gaps between steps, named by the step_gaps finding (issue #37 surveys: a gap filled by
``aten::randn`` on the CPU read only as "other host work").  Truth by construction: the generator puts three Keras
callbacks of 900, 1,400 and 700 us between every two steps (``synthetic.scenarios.step_gaps_callbacks``)."""

from __future__ import annotations

import pytest

from synthetic import scenarios
from tb_gpu_advisor import rules
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.metrics.breakdown import _runs
from tb_gpu_advisor.runtime.pipeline import host_metrics

BETWEEN_US = {"TensorBoard.on_train_batch_end": 1400.0, "ProgbarLogger.on_train_batch_end": 900.0,
              "MetricsCallback.on_train_batch_end": 700.0}


@pytest.fixture(scope="module")
def metrics(tmp_path_factory):
    path = scenarios.SCENARIOS["step_gaps_callbacks"]().write(tmp_path_factory.mktemp("gaps"))[0]
    return host_metrics(read_trace(str(path)))


def test_the_callbacks_are_the_gaps_ops_longest_first_at_their_built_length(metrics):
    names = [n for n, _ in metrics.gaps.top_ops]
    assert names == sorted(BETWEEN_US, key=lambda n: -BETWEEN_US[n])
    for name, ms_per_gap in metrics.gaps.top_ops:
        assert ms_per_gap == pytest.approx(BETWEEN_US[name] / 1000.0, rel=0.05), name
    # a part never exceeds its whole: one thread's outermost ops fill at most the gap
    assert sum(v for _, v in metrics.gaps.top_ops) <= metrics.gaps.avg_gap_ms * 1.0001


def test_the_finding_names_them_and_lists_them_as_evidence(metrics):
    (f,) = [f for f in rules.evaluate(metrics) if f.rule == "step_gaps"]
    assert all(f"`{name}`" in f.summary for name in BETWEEN_US), f.summary
    (t,) = [t for t in f.evidence if t.title.startswith("Host ops in the gaps")]
    assert [r[0] for r in t.rows] == [n for n, _ in metrics.gaps.top_ops]


def test_without_callbacks_no_op_is_named(tmp_path):
    path = scenarios.SCENARIOS["step_gaps_callbacks"](fixed=True).write(tmp_path)[0]
    m = host_metrics(read_trace(str(path)))
    assert not any(n in BETWEEN_US for n, _ in m.gaps.top_ops)


@pytest.mark.parametrize("keys, runs", [([], []), ([3], [(0, 1)]), ([1, 1, 2, 5, 5, 5], [(0, 2), (2, 3), (3, 6)])])
def test_runs_of_equal_keys(keys, runs):
    import numpy as np

    assert _runs(np.array(keys, dtype=np.int64)) == runs


def test_with_threads_side_by_side_the_named_ops_stay_within_the_gap(tmp_path):
    """nvFuser's first call (tests/fixtures/wild) had compiler threads running beside the Python thread that calls
    ``runFusionWithInputs``: counted over every thread, the named ops added up to 495 ms of a 412 ms gap.  That
    capture now reads as one pass (one iteration: h37-left13), with no gap to fill, so the case is built: the PyTorch
    loop whose next input ``aten::randn`` makes in the gap (30 ms of a 30.8 ms gap), with the same op copied onto two
    more threads at the same times.  One thread's outermost ops are named: 30 ms, not 90."""
    import json

    from synthetic import torchtrace
    from tb_gpu_advisor.formats.kineto.adapter import read_trace as read_kineto

    (path,) = torchtrace.write_run(str(tmp_path), "randn_next_input")
    doc = json.loads(open(path, encoding="utf-8").read())
    randn = [e for e in doc["traceEvents"] if e.get("name") == "aten::randn" and e.get("cat") == "cpu_op"]
    assert randn
    doc["traceEvents"] += [{**e, "tid": e["tid"] + k} for e in randn for k in (1, 2)]
    open(path, "w", encoding="utf-8").write(json.dumps(doc))
    m = host_metrics(read_kineto(path))
    assert [n for n, _ in m.gaps.top_ops] == ["aten::randn"]
    assert sum(v for _, v in m.gaps.top_ops) <= m.gaps.avg_gap_ms * 1.0001


def test_the_nvfuser_first_call_is_one_pass_with_no_gap_to_name():
    """The real export the check above was first seen on: one iteration of a loss forward and backward, read as one
    pass (its bursts mostly hold no gradient kernel), so there are no gaps between steps and no op named in them."""
    from tb_gpu_advisor.formats.nsys.reader import read_trace as read_nsys
    from tests.support.paths import FIXTURES

    m = host_metrics(read_nsys(str(FIXTURES / "wild" / "nvfuser_h200_first_call" / "report1.sqlite")))
    assert m.steps.source == "whole_capture" and m.steps.count == 1
    assert not m.gaps.top_ops
