"""Cross-check against the stock xprof converter where the definitions coincide (runs it on temp copies)."""


import pytest

pytest.importorskip("xprof.convert.raw_to_tool_data")

from tb_gpu_advisor.formats.xplane.adapter import read_trace  # noqa: E402
from tb_gpu_advisor.runtime.pipeline import host_metrics  # noqa: E402
from tests.support.paths import REPO
from tests.support.stock_tool import stock_tools  # noqa: E402

V100 = REPO.parent / "shared" / "profiles" / "v100_bert_8gpu_tf24.xplane.pb"


def _overview(ov):
    tables = ov if isinstance(ov, list) else [ov]
    return tables


@pytest.mark.skipif(not V100.exists(), reason="real capture not available")
def test_v100_against_stock():
    stock = stock_tools([str(V100)])
    hm = host_metrics(read_trace(str(V100)))
    ov = _overview(stock["overview_page"])
    props = ov[1]["p"]  # the step-time table's summary (averages over the stock tool's steps)
    rows = ov[1]["rows"]
    cols = [c["id"] for c in ov[1]["cols"]]
    row = {c: v["v"] if isinstance(v, dict) else v for c, v in zip(cols, rows[0]["c"])}
    # stock merges GPUs into one step: its step time is the longest GPU's, device compute the GPUs' mean
    assert float(row["stepTimeMs"]) == pytest.approx(hm.multi_gpu.step_ms_max, abs=0.1)
    assert float(row["deviceComputeTimeMs"]) == pytest.approx(hm.breakdown.device_compute, abs=0.1)
    # kernel stats: same number of kernel launches and the same total kernel time
    ks = stock["kernel_stats"]
    kt = ks[0] if isinstance(ks, list) else ks
    kcols = [c["id"] for c in kt["cols"]]
    occ_i = next(i for i, c in enumerate(kcols) if "occurrences" in c.lower())
    tot_i = next(i for i, c in enumerate(kcols) if "total_duration" in c.lower())
    occ = sum(int(r["c"][occ_i]["v"]) for r in kt["rows"])
    tot = sum(float(r["c"][tot_i]["v"]) for r in kt["rows"])
    ours = sum(k.count for k in hm.kernels)
    assert occ == ours
    assert tot == pytest.approx(sum(k.total_us for k in hm.kernels), rel=0.01)
    # the summary averages (printed to 0.1 ms) agree with ours, over the same steps (was: `step_p is not None`,
    # true of any dict)
    assert len(rows) == hm.steps.count
    assert float(props["steptime_ms_average"]) == pytest.approx(hm.multi_gpu.step_ms_max, abs=0.1)
    assert float(props["device_compute_time_ms_avg"]) == pytest.approx(hm.breakdown.device_compute, abs=0.1)
