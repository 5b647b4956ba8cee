"""The precision and Tensor Core checks save the kept steps' kernel time, not a call's whole (the lead's session-22
review of h37-review21's "left": ``KernelStat.in_steps_us`` is the calls' time inside the kept steps, ``total_us`` each
call's whole, which may run past the last kept step; the class table read the former, the checks the latter).

On the real wild captures the part past the steps is small (d2d_v100's mixed-precision saving 36.50 -> 36.49 ms/step,
resnet50_num_workers_4's 29.90 -> 29.89), so the rule is shown by construction: a GEMM of 100 us whose last 40 us run
past the last kept step is 60 us of the steps."""

from __future__ import annotations

from types import SimpleNamespace

from tb_gpu_advisor.metrics.types import KernelStat
from tb_gpu_advisor.rules._kernels import kernel_mix


def _gemm(total_us: float, in_steps_us: float | None) -> KernelStat:
    return KernelStat(name="volta_sgemm_128x64_nn", op_name="aten::mm", op_type="mm", count=1, total_us=total_us,
                      avg_us=total_us, min_us=total_us, max_us=total_us, tensor_core=False, tc_eligible=True,
                      precision="fp32", elementwise=False, collective=False, in_steps_us=in_steps_us)


def test_a_gemm_running_past_the_last_step_counts_its_time_inside_the_steps():
    k = kernel_mix(SimpleNamespace(kernels=[_gemm(100.0, 60.0)]))
    assert (k.compute_us, k.eligible_us, k.eligible_32_us, k.eligible_no_tc_32_us) == (60.0, 60.0, 60.0, 60.0)


def test_control_a_call_with_no_inside_measure_counts_its_whole():
    """``in_steps_us`` None (a reader that splits nothing): the whole, as before."""
    k = kernel_mix(SimpleNamespace(kernels=[_gemm(100.0, None)]))
    assert k.compute_us == 100.0 and k.eligible_no_tc_32_us == 100.0
