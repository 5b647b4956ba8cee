"""A late next launch is no proof that the host paced the GPU (issue #37 class 4, h37-idle64).

h37-idle63 bounded every GPU-side saving by the critical path: a chain of kernels that ends in the GPU's idle wait
for the host's next launch saves nothing when faster.  Its evidence that the host paced was only that the next launch
came after the GPU drained -- which a host that waited for the GPU without recording it (JAX's ``block_until_ready``,
a TensorFlow fetch of the step's outputs: a future the runtime's callback sets) shows as well: it read the README's
demo ``fp32_no_tensor_cores`` (a V100 step of 7.96 ms, 7.19 ms of it fp32 MatMul) as "mixed precision saves ~0" and
the run healthy, and it was reverted.  Now the cap holds only where the host is recorded at its own work (an op, a
runtime call, Python) when the GPU drains; an unrecorded stretch before the drain that lasts past a wake-up after it
is time the host may have waited, and the gain reaches it by that much (``metrics.breakdown._unrecorded_before``).

Truth by construction: ``synthetic.torchtrace.write_paced_fp32_gemms`` ("host": the host's recorded ops run through
every GPU idle -- faster GEMMs save nothing; "unrecorded": the same loop whose host waits for its GEMMs unrecorded --
each GEMM's time less its fast time), and the demo scenario beside its fixed twin (``synthetic.scenarios``: the
mixed-precision step at the speed-ups the rule assumes).  Real: ``tests/fixtures/wild/jax_mi355x``.
"""

from __future__ import annotations

import re

import pytest

from synthetic import torchtrace as tt
from synthetic.scenarios import SCENARIOS
from tb_gpu_advisor import formats
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

GPU_SIDE = ("mixed_precision_off", "tensor_core_unused")


def _speedup(f) -> float:
    """The speed-up the finding assumed (its words: "... run 14.8x faster ...")."""
    return float(re.search(r"run ([\d.]+)x faster", f.saving.assumption).group(1))


def _paced(tmp_path, bound: str):
    w = tt.write_paced_fp32_gemms(str(tmp_path), bound=bound)
    m = host_metrics(read_trace(w["paths"][0]))
    return w, m, {f.rule: f for f in evaluate(m) if f.rule in GPU_SIDE}


def test_a_wait_no_event_records_keeps_the_gemms_on_the_critical_path(tmp_path) -> None:
    """Fails on BASE (each chain's last GEMM read as slack: 1.0 of the 1.2 ms critical, the saving 5/6 of the truth)
    and on h37-idle63 (the chain bound read the whole chain as slack: saving ~0).  The host launches six 200 us fp32
    GEMMs after 3 ms of its own ops and then waits for them in a wait no event records; its next launch comes ~30 us
    after the GPU drained -- late, yet following the GPU: faster GEMMs shorten the step by their time less their
    fast time."""
    w, m, found = _paced(tmp_path, "unrecorded")
    assert m.headline.avg_step_ms == pytest.approx(3.0 + 1.2 + 0.1, abs=0.1)  # host work, then the chain waited for
    # all but each step's first GEMM's first 15 us, before its successor's launch returned (the base slack)
    assert m.compute_critical_share["matmul"] > 0.98
    assert set(found) == set(GPU_SIDE)
    for f in found.values():  # within the first GEMM's 15 us before its successor's launch returned
        assert f.saving.ms_per_step == pytest.approx(w["gemm_saving_ms"](_speedup(f)), rel=0.02)


def test_a_host_recorded_at_its_work_through_every_idle_gets_the_cap(tmp_path) -> None:
    """Fails on BASE (0.909 ms a step read as critical).  The same loop without the wait: the chain runs under the
    next step's recorded host ops, which cover every GPU drain -- faster GEMMs only lengthen the idle: ~0 saved."""
    w, m, found = _paced(tmp_path, "host")
    assert m.compute_critical_ms < 0.01 * w["gemm_ms"]
    for f in found.values():
        assert f.saving.ms_per_step == pytest.approx(0.0, abs=0.01)
        assert f.severity == "info"


def test_the_demo_s_fp32_step_saves_what_its_mixed_precision_twin_runs_faster(tmp_path) -> None:
    """Fails on h37-idle63 (saves ~0, the run healthy); a control on BASE.  ``fp32_no_tensor_cores`` (the README's
    demo: a TF custom loop on a V100 whose step ends when its GPU work does -- the host waits for the step's result
    with nothing recorded) and its fixed twin (fp16 Tensor Core GEMMs at the rule's own speed-ups) are written by
    one generator: the step the fix takes off is the difference of their steps, truth by construction."""
    steps = {}
    for fixed in (False, True):
        run = "fixed" if fixed else "fp32"
        SCENARIOS["fp32_no_tensor_cores"](fixed=fixed).write(tmp_path, run=run)
        m = host_metrics(formats.read(discover(str(tmp_path / run))[0].hosts[0]))
        steps[run] = (m, m.headline.avg_step_ms)
    m, step = steps["fp32"]
    truth = step - steps["fixed"][1]
    assert truth > 0.7 * step  # the GEMMs hold the step: the host waits for them
    f = next(x for x in evaluate(m) if x.rule == "mixed_precision_off")
    assert f.severity == "critical"
    assert f.saving.ms_per_step == pytest.approx(truth, rel=0.1)


def test_a_real_jax_loop_s_unrecorded_waits_keep_its_kernels_critical() -> None:
    """Fails on h37-idle63 (critical share 0.31 / 0.25, mfu_low a 72 us note: "healthy"); a control on BASE.
    ``wild/jax_mi355x`` read by hand: a JAX loop on an MI355X whose GPU idles 25 times; at 23 of those drains the
    python thread had recorded nothing since its last dispatch (median 109 us before the drain) and records nothing
    for tens of us after it -- the host waiting for its step's result, which JAX does not record (as the real
    H100 loops' ``block_until_ready``): the kernels before each drain stay on the critical path."""
    m = host_metrics(formats.read(discover(str(FIXTURES / "wild" / "jax_mi355x"))[0].hosts[0]))
    assert m.compute_critical_share["matmul"] > 0.95
    assert m.compute_critical_ms > 0.95 * m.breakdown.device_compute
