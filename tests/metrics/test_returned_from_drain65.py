"""A host that returns from a call held through the GPU's drain was waiting for the GPU (issue #37 class 4, h37-rev64a).

h37-idle64 capped a kernel's saving by the critical path only where the host is recorded at its own work when the GPU
drains, or back at it within ``metrics.unrecorded_wake_us`` of the drain (running through it, not woken by it).  A
TensorFlow loop whose ``FunctionRun`` returns once its step's GPU work drains (the host fetching the step's outputs)
and whose Python thread then runs a Keras callback (``TensorBoard.on_train_batch_end``) a few us later read as the
second: the host "back at its work" right after the drain -- and the demo's fp32 V100 MatMuls saved ~0.  The host
was inside the call through the drain and left it after: released by the GPU, however soon its next work follows
(``metrics.breakdown._returned_between``, ``host_thread_calls``).

Truth by construction: the demo scenario ``fp32_no_tensor_cores`` (``callback_us``: a recorded callback after each
step, in the fixed twin too) beside its mixed-precision twin, one generator: the saving is the difference of their
steps.  The twin with the host genuinely busy through the drain: ``synthetic.torchtrace.write_paced_fp32_gemms``
("callback": the host launches six fp32 GEMMs, then its recorded ops run through their drain; ``prof.step()``'s range
spans the drain and ends after the host's work) -- faster GEMMs save nothing.
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

GPU_SIDE = ("mixed_precision_off", "tensor_core_unused")


def _demo(tmp_path, callback_us: float) -> tuple[float, float, object]:
    """(the fp32 step's mixed-precision saving as found, the truth: its step less its fixed twin's, the finding)."""
    steps, metrics = {}, {}
    for fixed in (False, True):
        run = f"{'fixed' if fixed else 'fp32'}_{int(callback_us)}"
        SCENARIOS["fp32_no_tensor_cores"](fixed=fixed, callback_us=callback_us).write(tmp_path, run=run)
        metrics[fixed] = host_metrics(formats.read(discover(str(tmp_path / run))[0].hosts[0]))
        steps[fixed] = metrics[fixed].headline.avg_step_ms
    f = next(x for x in evaluate(metrics[False]) if x.rule == "mixed_precision_off")
    return f.saving.ms_per_step, steps[False] - steps[True], f


def test_a_callback_after_the_step_s_return_keeps_the_gemms_critical(tmp_path) -> None:
    """Fails on BASE (saving 0.0 ms, severity info: the callback 4 us after the drain read as the host running
    through it).  The demo's loop with a 300 us recorded callback after each step saves what its fixed twin runs
    faster (~6.4 ms), as the callback-free loop does; the callback-free loop is unchanged (a control on BASE)."""
    plain, plain_truth, f0 = _demo(tmp_path, 0.0)
    saving, truth, f = _demo(tmp_path, 300.0)
    assert f0.severity == "critical"
    assert plain == pytest.approx(plain_truth, rel=0.1)
    assert f.severity == "critical"
    assert saving == pytest.approx(truth, rel=0.1)
    assert saving == pytest.approx(plain, rel=0.05)  # the callback after the step takes nothing off the GPU's saving


def test_a_host_busy_through_the_drain_still_gets_the_cap(tmp_path) -> None:
    """A control on BASE.  The host's recorded work runs through every drain; the step's range returns after it, but
    after the host's work, not between the drain and the host's next work: no release -- faster GEMMs save ~0."""
    w = tt.write_paced_fp32_gemms(str(tmp_path), bound="callback")
    m = host_metrics(read_trace(w["paths"][0]))
    assert m.headline.avg_step_ms == pytest.approx(3.0 + 6 * 0.013 + 0.01, abs=0.05)  # the host's work and launches
    assert m.compute_critical_ms < 0.01 * w["gemm_ms"]
    found = {f.rule: f for f in evaluate(m) if f.rule in GPU_SIDE}
    assert set(found) == set(GPU_SIDE)
    for f in found.values():
        speedup = float(re.search(r"run ([\d.]+)x faster", f.saving.assumption).group(1))
        assert f.saving.ms_per_step == pytest.approx(w["gemm_saving_ms"](speedup), abs=0.01)
        assert f.severity == "info"
