"""Metric gaps closed: GPU concurrency, per-GPU start offsets, kernel shapes, memcpy ops, private launch threads,
AllReduce bytes.  Synthetic scenarios whose construction fixes the answer, plus small unit cases."""

import numpy as np
import pytest

from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.metrics.kernels import shape_dims
from tb_gpu_advisor.model.columns import union_by_key
from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report

scenarios = pytest.importorskip("synthetic.scenarios")


@pytest.fixture(scope="module")
def metrics(tmp_path_factory):
    cache: dict = {}

    def get(name, params=None):
        key = (name, params)
        if key not in cache:
            sc = scenarios.SCENARIOS[name]()
            tmp = tmp_path_factory.mktemp(name)
            (host, data), = list(sc.encode().items())[:1]
            p = tmp / f"{host}.xplane.pb"
            p.write_bytes(data)
            cache[key] = host_metrics(read_trace(str(p)), params)
        return cache[key]

    return get


# -- 1. concurrency = overlap of the GPUs' busy windows --------------------------------------------------------


def test_union_by_key_merges_within_keys_only():
    k = np.array([1, 0, 0, 1, 0, 2, 1])
    s = np.array([100, 0, 5, 150, 10, 3, 200])  # key 0: [0,10) [5,8) [10,30) touch -> one; key 1 [200,..) touches
    e = np.array([200, 10, 8, 160, 30, 4, 210])
    uk, us, ue = union_by_key(k, s, e)
    assert uk.tolist() == [0, 1, 2] and us.tolist() == [0, 100, 3] and ue.tolist() == [30, 210, 4]
    # a later key whose intervals lie *before* an earlier key's must not inherit its running max
    uk, us, ue = union_by_key(np.array([0, 1, 1]), np.array([1000, 0, 50]), np.array([2000, 10, 60]))
    assert uk.tolist() == [0, 1, 1] and us.tolist() == [1000, 0, 50] and ue.tolist() == [2000, 10, 60]


def test_sequential_gpus_have_low_concurrency(metrics):
    mg = metrics("multi_gpu_sequential").multi_gpu
    assert mg.concurrency is not None and mg.concurrency < 0.2  # was ~1.0 (pairwise [first, last] spans)
    assert mg.sequential is True


@pytest.mark.parametrize("name", ["multi_gpu_balanced", "multi_gpu_gpu0_oversubscribed", "multi_gpu_extra_allreduce"])
def test_concurrent_gpus_have_high_concurrency(metrics, name):
    mg = metrics(name).multi_gpu
    assert mg.concurrency > 0.95 and mg.sequential is False
    assert mg.step_span_ms == pytest.approx(metrics(name).headline.avg_step_ms, rel=1e-6)  # host windows


def test_launch_skew_is_not_sequential(metrics):
    mg = metrics("multi_gpu_launch_skew").multi_gpu
    assert 0.5 < mg.concurrency < 0.95 and mg.sequential is False


# -- 2. per-GPU first kernel / first launch offsets ------------------------------------------------------------


def test_first_offsets_per_gpu(metrics):
    m = metrics("multi_gpu_launch_skew")  # GPU1 delayed 1.5 ms, GPU2 +40 us, GPU3 +80 us (host delays)
    off = {g.gpu: g.first_kernel_offset_ms for g in m.gpus}
    loff = {g.gpu: g.first_launch_offset_ms for g in m.gpus}
    assert off[0] == pytest.approx(0.0, abs=0.01) and off[1] == pytest.approx(1.5, abs=0.05)
    assert loff[1] == pytest.approx(1.5, abs=0.05) and loff[3] == pytest.approx(0.08, abs=0.01)
    assert max(off.values()) == pytest.approx(m.multi_gpu.launch_skew_ms, abs=0.05)
    rep = host_report(m, 0)
    assert {g.gpu: g.launch_skew_ms for g in rep.gpus}[1] == pytest.approx(1.5, abs=0.05)


def test_single_gpu_has_no_offsets(metrics):
    (g,) = [g for g in metrics("ideal").gpus if g.active]
    assert g.first_kernel_offset_ms is None and g.first_launch_offset_ms is None


# -- 3. kernel shapes / dims -----------------------------------------------------------------------------------


def test_shape_dims_parsing():
    assert shape_dims("(half[256,1001];half[1001,1001])") == [256, 1001]
    assert shape_dims("%dot.3 = f16[8,1001]{1,0} dot(f16[8,64]{1,0} %a, ...)") == [8, 1001, 64]
    assert shape_dims("(int8[32,64])") == [32, 64]  # the 8 of int8 is not a dim
    assert shape_dims("(float[])") is None and shape_dims(None) is None


def test_kernel_rows_carry_shape_and_misaligned_dims_lists_them(metrics):
    m = metrics("fp16_misaligned")
    rows = [k for k in m.kernels if k.tc_eligible and not k.tensor_core and k.precision == "fp16"]
    assert rows and all(k.shape == "(half[256,1001];half[1001,1001])" and k.dims == [256, 1001] for k in rows)
    rep = host_report(m, 0)
    (f,) = [f for f in rep.findings if f.rule == "misaligned_dims"]
    assert {r[-1] for r in f.evidence[0].rows} == {"1001"}


# -- 4. memcpy attributed to the launching TF op ---------------------------------------------------------------


def test_memcpy_top_ops_from_enclosing_host_op(metrics):
    mc = {c.direction: c for c in metrics("host_placement").memcpy}
    assert "model/unique_0/Unique" in mc["d2h"].top_ops
    assert "IteratorGetNext/_2" in mc["h2d"].top_ops  # `name:_Send` rendezvous op around the input copy


# -- 5. private launch threads by majority ---------------------------------------------------------------------


def test_launch_thread_private_by_majority(metrics):
    balanced = [g for g in metrics("multi_gpu_balanced").gpus if g.active]
    skewed = [g for g in metrics("multi_gpu_launch_skew").gpus if g.active]
    assert len(balanced) >= 2 and len(skewed) >= 2  # else all()/not any() below hold vacuously
    assert all(g.launch_thread_private for g in balanced)
    assert not any(g.launch_thread_private for g in skewed)


# -- 6. AllReduce bytes ----------------------------------------------------------------------------------------


def test_allreduce_bytes_from_user_params(metrics):
    m = metrics("multi_gpu_balanced", params=25_000_000)
    assert m.multi_gpu.allreduce_bytes_per_step == 1e8 and m.multi_gpu.params_source == "user"
    active = [g for g in m.gpus if g.active]
    assert len(active) >= 2 and all(g.allreduce_bytes_per_step == 1e8 for g in active)
    assert metrics("multi_gpu_balanced").multi_gpu.allreduce_bytes_per_step is None
