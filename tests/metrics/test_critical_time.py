"""The GPU-critical part of kernel time (metrics/breakdown.critical_time, issue #37): a kernel's speed-up shortens
the step only by the time the GPU's next work was already waiting for it.  Checked against a plain loop on random
timelines, and on hand-built ones whose answer is known: a GPU-bound chain is all critical, a host-paced chain none."""

from __future__ import annotations

import numpy as np
import pytest

from tb_gpu_advisor.metrics.breakdown import critical_time
from tests.support.paths import FIXTURES


def _loop(start, end, ready, known, waited) -> list[float]:
    """The definition, one event at a time: the event's own slack to the next one's ready time, and the least slack
    of the GPU's frontier (the latest end so far) over the next ready time, where the GPU idled before the next
    event, from it to the first end the host waited for (h37-idle63: a gain at an event's end reaches the host only through every later slack)."""
    n = len(start)
    out = []
    for i in range(n):
        dur = max(0.0, float(end[i] - start[i]))
        own = dur if i + 1 == n or not known[i + 1] or waited[i] else min(dur, max(0.0, float(end[i] - ready[i + 1])))
        for j in range(i, n - 1):
            if waited[j]:
                break
            if known[j + 1] and start[j + 1] > max(end[:j + 1]):  # the GPU idled before j + 1
                own = min(own, max(0.0, float(max(end[:j + 1]) - ready[j + 1])))
        out.append(own)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_matches_the_loop_on_random_timelines(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 60))
    start = np.sort(rng.integers(0, 10_000, n)).astype(np.int64)
    end = start + rng.integers(0, 500, n)
    ready = start + rng.integers(-800, 300, n)
    known = rng.random(n) < 0.8
    waited = rng.random(n) < 0.2
    got = critical_time(start, end, ready, known, waited)
    assert got.tolist() == pytest.approx(_loop(start, end, ready, known, waited))


def _chain(gap: int, lead: int) -> tuple[np.ndarray, ...]:
    """Ten 100-long kernels ``gap`` apart, each launched ``lead`` before it starts (its launch call ends then)."""
    start = np.arange(10, dtype=np.int64) * (100 + gap)
    return start, start + 100, start - lead, np.ones(10, bool), np.zeros(10, bool)


def test_a_gpu_bound_chain_is_all_critical() -> None:
    """Back to back, each launched long before the previous one ends: every kernel delays the next."""
    assert critical_time(*_chain(gap=0, lead=500)).sum() == 1000


def test_a_host_paced_chain_with_gaps_is_not_critical() -> None:
    """Each kernel launched 5 after the previous one ended (the GPU idles 5 + launch): only the last counts, the one
    nothing follows (no measure caps it)."""
    crit = critical_time(*_chain(gap=20, lead=15))
    assert crit[:-1].sum() == 0 and crit[-1] == 100


def test_partly_waited_for_counts_the_overlap_only() -> None:
    """The next launch ends 30 before the kernel ends: 30 of its 100 are critical."""
    start = np.array([0, 110], np.int64)
    crit = critical_time(start, start + 100, np.array([-50, 70]), np.ones(2, bool), np.zeros(2, bool))
    assert crit.tolist() == [30, 100]


def test_unknown_launches_and_host_waits_do_not_cap() -> None:
    """Where the next launch is unknown, or the host was blocked waiting for the GPU (a sync returns when the queue
    drains, so the next launch follows the GPU), the whole kernel counts."""
    start, end, ready, known, waited = _chain(gap=20, lead=15)
    assert critical_time(start, end, ready, np.zeros(10, bool), waited).sum() == 1000
    assert critical_time(start, end, ready, known, np.ones(10, bool)).sum() == 1000


# ------------------------------------------------------------------------------------------- real traces

WILD = FIXTURES / "wild"


def _metrics(name: str):  # HostMetrics (imported lazily, as the pipeline is)
    from tb_gpu_advisor import formats
    from tb_gpu_advisor.discover.logdir import discover
    from tb_gpu_advisor.runtime.pipeline import host_metrics

    return host_metrics(formats.read(discover(str(WILD / name))[0].hosts[0]))


def test_a_real_host_paced_forward_pass_has_almost_no_critical_kernel_time() -> None:
    """wild/part_forward_a100: an eager inference pass, launch-bound (the GPU busy 16% of a 32.6 ms step, 559 kernels
    of ~9 us each after a launch of 20-40 us): nearly every next launch comes after the kernel before it ended.  At
    104 of its 574 drains the host records nothing for 40-200 us after (its Python between modules, untraced): a
    wait no event records could hide there, so the kernel before keeps the host's unrecorded time before the drain
    (h37-idle64: 0.41 of 5.20 ms; 5% before, when every late launch read as the host's pace)."""
    m = _metrics("part_forward_a100")
    assert m.breakdown.device_compute > 4.0
    assert m.compute_critical_ms < 0.1 * m.breakdown.device_compute


def test_a_real_gpu_bound_step_is_almost_all_critical() -> None:
    """wild/hf_qwen_h100: the device executes 91% of the step, its launches run ahead of the GPU: a faster kernel
    shortens the step, so nearly all its kernel time is critical."""
    m = _metrics("hf_qwen_h100")
    assert m.compute_critical_ms > 0.95 * m.breakdown.device_compute


def test_a_real_capped_saving_says_so_and_stays_within_the_critical_time() -> None:
    """wild/amd_mi250 (a tiny host-paced loop on an MI250): mixed precision's kernel-time claim is cut to the ~4 us of
    kernel time the next work waited for, and its assumption says what the rest waits on."""
    from tb_gpu_advisor import rules

    m = _metrics("amd_mi250")
    f = next(x for x in rules.evaluate(m) if x.rule == "mixed_precision_off")
    assert f.saving.ms_per_step <= m.compute_critical_ms + 1e-3
    assert "next work waited for" in f.saving.assumption and f.severity == "info"


# ------------------------------------------------------------------------------------------- per kernel class

def test_the_cap_keeps_each_claim_s_own_class_share() -> None:
    """``rules/base.critical_cap`` per kernel class, by hand: GEMMs all critical, element-wise kernels none; a fix
    claiming 3 ms on GEMMs and 1 ms on element-wise kernels saves the 3 ms, though the step's 8 ms of critical kernel
    time (all GEMM) would have let the whole 4 ms through a step-wide cap."""
    from tb_gpu_advisor.rules.base import critical_cap

    claims = [("compute", "tc_eligible_kernels", 3.0), ("compute", "non_matmul_kernels", 1.0)]
    v, out, cut = critical_cap(4.0, claims, 8.0, {"matmul": 1.0, "other": 0.0})
    assert (v, cut) == pytest.approx((3.0, 1.0))
    assert dict((p, x) for _, p, x in out) == pytest.approx({"tc_eligible_kernels": 3.0, "non_matmul_kernels": 0.0})
    half = critical_cap(4.0, claims, 8.0, {"matmul": 0.5, "other": 1.0})  # half of each GEMM's time is critical
    assert half[0] == pytest.approx(0.5 * 3.0 + 1.0)
    assert critical_cap(4.0, claims, 2.0, {"matmul": 1.0, "other": 1.0})[0] == pytest.approx(2.0)  # step cap binds
    assert critical_cap(4.0, claims + [("launch", "launch", 1.0)], 8.0, {"matmul": 1.0, "other": 0.0})[2] == 0.0


def _gemms_then_a_paced_chain(r) -> None:
    """Ten fp32 GEMMs of 400 us launched back to back (the host runs ahead: each waits for the one before), a
    sync, then twenty 50 us element-wise kernels each launched 100 us of Python after the one before (the GPU idles
    between them), and a sync."""
    from synthetic import torchtrace as tt

    for _ in range(10):
        r.kernel("aten::mm", tt.FP32_GEMM, 400.0, launch_us=14.0)
    r.sync()
    for i in range(20):
        r.kernel(tt.EAGER_CHAIN_OPS[i % 4], tt.EAGER_CHAIN_KERNELS[i % 4], tt.EAGER_CHAIN_US, launch_us=14.0)
        r.cpu("aten::view", 100.0)
    r.sync()


def test_by_construction_mixed_precision_saves_only_on_its_critical_gemms(tmp_path) -> None:
    """The step's GEMMs are all critical and its element-wise kernels none, by construction.  Mixed precision claims
    the GEMMs' Tensor-Core speed-up and the element-wise kernels' halved bytes; only the first shortens the step.
    A step-wide cap (the step's 4 ms of critical kernel time) let both through."""
    from types import SimpleNamespace

    from synthetic import torchtrace as tt
    from tb_gpu_advisor import formats
    from tb_gpu_advisor.discover.logdir import discover
    from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics

    sc = tt.Scenario(1, tt._single(_gemms_then_a_paced_chain), [], [], "GEMMs critical, element-wise paced",
                     dtype="float32")
    (path,) = tt.write_run(str(tmp_path), sc, steps=8, run="mixed")
    rep = analyze_session("mixed", "s", [SimpleNamespace(host="h0", path=path, format="kineto", size=0)]).to_dict()
    f = next(x for x in rep["findings"] if x["rule"] == "mixed_precision_off")
    claims = {c["pool"]: c["ms"] for c in f["saving"]["recovers"]}
    assert claims.get("non_matmul_kernels", 0.0) == pytest.approx(0.0, abs=1e-3), claims
    assert f["saving"]["ms_per_step"] == pytest.approx(claims["tc_eligible_kernels"], rel=1e-3)
    assert "0.0% of the other kernels' time" in f["saving"]["assumption"]
    m = host_metrics(formats.read(discover(str(tmp_path))[0].hosts[0]))
    assert m.compute_critical_share == pytest.approx({"matmul": 1.0, "other": 0.0}, abs=0.01)
