"""Steps, metrics and the host report on the real TF 2.4 8 x V100 capture (one step, GPUs 4 and 6 active)."""

import json
from types import SimpleNamespace as NS

import pytest

from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.metrics.types import BREAKDOWN_CATEGORIES
from tb_gpu_advisor.runtime.pipeline import analyze_host, analyze_session, host_metrics
from tests.support.paths import REPO

V100 = REPO.parent / "shared" / "profiles" / "v100_bert_8gpu_tf24.xplane.pb"
pytestmark = pytest.mark.skipif(not V100.exists(), reason=f"real capture not found at {V100}")


@pytest.fixture(scope="module")
def hm():
    return host_metrics(read_trace(str(V100)))


def test_steps_from_steps_line(hm):
    assert hm.steps.source == "steps_line"
    assert (hm.steps.count, hm.steps.found, hm.steps.dropped) == (1, 1, [])
    gpus = {g.gpu: g for g in hm.gpus}
    assert hm.multi_gpu.active_gpus == [4, 6]
    assert gpus[4].step_ms == pytest.approx(19.865, abs=0.01)
    assert gpus[6].step_ms == pytest.approx(21.310, abs=0.01)  # the stock tool's 21.3 ms step


def test_breakdown_sums_to_step_and_device_compute_matches_stock(hm):
    for r in hm.steps_detail:
        assert sum(r.breakdown.as_dict().values()) == pytest.approx(r.step_ms, rel=1e-6)
    gpus = {g.gpu: g for g in hm.gpus}
    assert gpus[4].breakdown.device_compute == pytest.approx(14.825, abs=0.01)
    assert gpus[6].breakdown.device_compute == pytest.approx(14.865, abs=0.01)
    assert hm.breakdown.device_compute == pytest.approx(14.9, abs=0.1)  # stock: 14.9 ms


def test_headline_numbers_are_sensible(hm):
    h = hm.headline
    assert 0.6 < h.device_step_share < 0.8
    assert h.kernel_count == 1330 and h.fp16_kernel_count > 1300 and h.bf16_kernel_count == 0
    assert 0 <= h.launch_wait_share < 0.2 and 0 < h.input_wait_share < 0.2
    assert h.device_op_count > 1000 and h.host_op_count > 0
    assert hm.capture.gpu_thread_mode_private and hm.capture.too_short
    assert hm.memory.available and 0 < hm.memory.headroom_share < 1


def test_multi_gpu_shows_sequential_replicas(hm):
    mg = hm.multi_gpu
    assert mg.sequential is True and mg.concurrency == 0.0  # GPU:6 runs its step ~650 ms after GPU:4
    assert mg.launch_skew_ms == pytest.approx(647.6, abs=1)
    # the GPUs' step windows cover 1792.6 -> 2461.5 ms: the pigeonhole bound must use that, not the 20.6 ms mean step
    assert mg.step_span_ms == pytest.approx(668.87, abs=0.1)
    gpus = {g.gpu: g for g in hm.gpus}
    assert gpus[4].first_kernel_offset_ms == 0.0 and gpus[6].first_kernel_offset_ms == pytest.approx(647.6, abs=1)
    assert gpus[6].first_launch_offset_ms == pytest.approx(647.6, abs=1)
    # 665 + 18 of 688 launches per GPU come from tf_gpu_private_<gpu>; 5 from the tf_Compute pool
    assert gpus[4].launch_thread_private is True and gpus[6].launch_thread_private is True
    assert mg.idle_gpus == [0, 1, 2, 3, 5, 7]


def test_v100_reports_sequential_gpus_not_launch_skew():
    rep = analyze_host(NS(host="v100", path=str(V100), size=0))
    rules = {f.rule: f.severity for f in rep.findings}
    assert rules.get("sequential_gpus") == "critical" and "launch_skew" not in rules
    assert {g.gpu: g.launch_skew_ms for g in rep.gpus if g.launch_skew_ms is not None} == pytest.approx({4: 0.0, 6: 647.56}, abs=0.1)


def test_small_kernels_and_ops(hm):
    sk = hm.small_kernels
    assert sk.count > 1000 and 0.7 < sk.share_of_kernels < 0.9
    assert sk.top[0].op_type == "Cast"
    assert all(k.total_us > 0 and k.min_us <= k.avg_us <= k.max_us for k in hm.kernels)
    assert any(k.op_type for k in hm.kernels)


def test_report_is_json_and_bad_file_is_an_error():
    rep = analyze_session("run", "s", [NS(host="v100", path=str(V100)), NS(host="bad", path="/nonexistent/x.xplane.pb")])
    data = json.loads(rep.to_json())
    assert data["hosts"][0]["error"] is None and data["hosts"][1]["error"]
    assert {c["id"] for c in data["headline"]} >= {"device_step_share", "launch_wait_share", "input_wait_share"}
    h = data["hosts"][0]
    assert set(h["breakdown_ms"]) == set(BREAKDOWN_CATEGORIES)
    assert sum(h["kernel_durations_us"]["counts"]) == 1330


def test_analyze_host_never_raises(tmp_path):
    p = tmp_path / "junk.xplane.pb"
    p.write_bytes(b"\x00\x01garbage")
    assert analyze_host(NS(host="junk", path=str(p))).error
