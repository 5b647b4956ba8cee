"""One slow call of one kernel: the metrics state it, the rule judges it and names it (h37-ranks57).

h37-imb56 dropped the compute gap of one slow call (``metrics.multigpu.compute_outlier``) -- judged in the metrics
stage, with the rule's ``gpu_imbalance.warning`` -- and the report said nothing of the call.  Now the metrics stage
states the facts whatever the thresholds (``MultiGpu.largest_call_excess``: kernel, GPUs, call index, its time on
each, the excess and the gap per step), ``gpu_imbalance`` judges them (``one_call``, ``gpu_imbalance.one_call_share``)
and says the call (an info finding, no saving): which kernel, which call, how long against its peer.

By construction (``synthetic.scenarios.two_ranks_one_slow_call``): two GPUs, the same work each step, one GEMM call of
20 ms on GPU0 in the first of 4 steps (200 us on GPU1).  Real (kept only locally, no licence): the compiled MoE's
two ranks in one folder (``.robustness/torch_compile_moe``): one ``cutlass_80_simt_sgemm_128x32`` call of 2.44 ms on
rank 0, 9.4 us on rank 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.common.thresholds import override
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report
from tests.support.cli_report import cli_report
from tests.support.paths import REPO

scenarios = pytest.importorskip("synthetic.scenarios")

MOE = REPO / ".robustness" / "torch_compile_moe"


def _written(tmp_path: Path, extra_work: bool = False) -> str:
    sc = scenarios.two_ranks_one_slow_call(extra_work=extra_work)
    (host, data), = list(sc.encode().items())[:1]
    p = tmp_path / f"{host}.xplane.pb"
    p.write_bytes(data)
    return str(p)


def test_the_slow_call_is_named_not_dropped(tmp_path: Path) -> None:
    """The report says which kernel, which call, and its time on each GPU; it claims no saving and no imbalance."""
    p = _written(tmp_path)
    m = host_metrics(read_trace(p), None)
    rep = host_report(m, 0)
    (f,) = [f for f in rep.findings if f.rule == "gpu_imbalance"]
    facts = m.multi_gpu.largest_call_excess
    assert f.severity == "info" and f.saving is None and f.gpu == 0
    assert f"`{facts['kernel']}` (call 1 of {facts['calls']})" in f.summary
    assert "19.5 ms on GPU0" in f.summary and "205 us on GPU1" in f.summary, f.summary
    assert f.metric.detail["one_call"]["kernel"] == facts["kernel"]


def test_the_metrics_state_facts_whatever_the_rules_thresholds(tmp_path: Path) -> None:
    """The metrics stage reads no threshold of the rule's: its facts are the same under any ``gpu_imbalance.*``
    (BASE: ``compute_outlier`` was None or not by ``gpu_imbalance.warning``)."""
    p = _written(tmp_path)
    plain = host_metrics(read_trace(p), None).multi_gpu.largest_call_excess
    with override(**{"gpu_imbalance.warning": 0.99}):
        strict = host_metrics(read_trace(p), None).multi_gpu.largest_call_excess
    assert plain is not None and plain == strict


@pytest.mark.parametrize("extra_work", [False, True])
def test_property_a_call_never_exceeds_its_whole(tmp_path: Path, extra_work: bool) -> None:
    """Consistency: the call's excess per step is at most the busiest GPU's compute, the gap at most that compute,
    the peer's call shorter than the busiest's; the judged share of the gap at most 1."""
    from tb_gpu_advisor.rules.gpu_imbalance import one_call

    m = host_metrics(read_trace(_written(tmp_path, extra_work)), None)
    facts = m.multi_gpu.largest_call_excess
    assert 0 < facts["excess_ms"] <= facts["compute_ms"] + 1e-9
    assert 0 < facts["gap_ms"] <= facts["compute_ms"] + 1e-9
    assert facts["peer_ms"] < facts["ms"]
    judged = one_call(facts)
    assert (judged is None) == extra_work  # 30% longer GEMMs every call: work, not the call
    if judged is not None:
        assert 0 < judged["share_of_gap"] <= 1.0 and 0 <= judged["imbalance_without"] < 1.0


@pytest.mark.skipif(not MOE.exists(), reason="the torch-compile-moe 2-rank capture is kept only locally (.robustness/, "
                                             "no licence)")
def test_the_compiled_moe_names_its_slow_sgemm() -> None:
    files = sorted(MOE.rglob("*2835[67]*.pt.trace.json"))
    if len(files) != 2 or files[0].parent != files[1].parent:
        pytest.skip("both ranks' files of the 23:03 job are not in one folder")
    report = cli_report(files[0].parent)
    (f,) = [f for f in report["findings"] if f["rule"] == "gpu_imbalance"]
    assert f["severity"] == "info" and "cutlass_80_simt_sgemm_128x32" in f["summary"]
    assert "2.44 ms on GPU0" in f["summary"], f["summary"]
