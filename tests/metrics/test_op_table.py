"""The op table's host side (issue #36 item 4: "occurrences 0, host ms 0" on every row of PyTorch, JAX and Nsight
captures): an op known from its kernels takes its occurrences and host time from the host events of its name; one
no host event names (an XLA HLO op) says unknown, never 0."""

from __future__ import annotations

import json

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.kineto import adapter as kineto_adapter
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.real_checks import REAL_JAX_SET


def test_pytorch_ops_count_their_host_events(tmp_path):
    """Every simulated step runs the same ops: each op's occurrences are its host ``cpu_op`` events per step (counted
    from the written JSON, apart from the reader) times the steps the report keeps, with host time > 0."""
    (path,) = tt.write_run(str(tmp_path), "healthy_bf16")
    doc = json.load(open(path))
    marks = [e for e in doc["traceEvents"] if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
    per_step: dict[str, float] = {}
    for e in doc["traceEvents"]:
        if e.get("cat") == "cpu_op" and any(m["ts"] <= e["ts"] < m["ts"] + m["dur"] for m in marks):
            per_step[e["name"]] = per_step.get(e["name"], 0) + 1 / len(marks)
    m = host_metrics(kineto_adapter.read_trace(path))
    with_kernels = [o for o in m.ops if o.kernel_count]
    assert with_kernels
    for o in with_kernels:
        assert o.occurrences == pytest.approx(per_step[o.op_name] * m.steps.count), o.op_name
        assert o.host_self_ms and o.host_self_ms > 0, o.op_name


@pytest.mark.skipif(not (REAL_JAX_SET / "TRUTH.json").exists(), reason=f"{REAL_JAX_SET} not present")
def test_hlo_ops_have_no_host_record_not_zero():
    """A jitted JAX program's ops run inside it: no host event is theirs, so the table says unknown (None)."""
    (s,) = [s for s in discover(str(REAL_JAX_SET)) if s.run == "healthy_bf16"]
    from tb_gpu_advisor import formats

    m = host_metrics(formats.read(s.hosts[0]))
    hlo = [o for o in m.ops if o.kernel_count]
    assert hlo and all(o.occurrences is None and o.host_self_ms is None for o in hlo)


def test_eager_host_time_counts_each_instant_once():
    """Issue #36 (part <= whole): an eager op nested in another was counted twice, corpus_tf/eager read "3.56 ms of
    host time in each 1.85 ms step".  Per step an eager MatMul of 300 us encloses an eager BiasAdd of 100 us: the
    host spends 300 us in eager ops, not 400."""
    from tb_gpu_advisor.formats.xplane.adapter import to_trace
    from tb_gpu_advisor.formats.xplane.reader import parse_timeline
    from tests.support.tiny_capture import Cap

    cap = Cap()
    for i in range(7):
        s = 1000 * i
        cap.host_ev("train", s, 900, step_num=i, _r=1)
        cap.host_ev("model/dense/MatMul:MatMul", s + 10, 300, is_eager=1)
        cap.host_ev("model/dense/BiasAdd:BiasAdd", s + 50, 100, is_eager=1)
        cap.kernel(s + 400, 100, launch_us=s + 350, name="b")
    e = host_metrics(to_trace(parse_timeline(cap.space.encode()))).eager
    assert e.per_step == pytest.approx(2.0) and e.time_ms_per_step == pytest.approx(0.300, abs=1e-6)
