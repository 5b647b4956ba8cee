"""What a synthetic scenario really contains: the numbers tests compare against.

Every number is measured from the events the generator actually wrote (not
from its plan), so a test that disagrees points at the analysis, not at
rounding in the generator.  Times are picoseconds; "per step" values are
means over all steps of the capture (the generator makes steps alike; see
``per_step`` for step-by-step values).

Definitions (the Advisor's metrics are expected to reproduce them):

* step: one host step marker (``Profiled batch`` / ``train``) and everything
  launched inside it; ``step_time_ps`` is marker start to next marker start
  (the last step: marker start to its end), so time between steps counts.
* device_compute_ps: summed kernel time on compute streams, collectives
  (``nccl*``) excluded (they are in ``collective_ps``).
* input_wait_ps: summed ``IteratorGetNextOp::DoCompute`` time.
* launch_wait_ps: GPU idle time between consecutive kernels of a step when
  the later kernel's host launch record ended after the earlier kernel had
  finished (the GPU waited for the host to launch).
* host_compute_ps: host work that launches nothing and waits for no input
  (ops placed on the host, callbacks, loss-scaling conditionals).
* memcpy_ps / memcpy_count: by direction ``H2D``, ``D2H``, ``D2D``, summed
  over GPUs; ``sync_memcpy_count``: those with ``async:0``.
* fp16_share / bf16_share: share of device compute time in kernels working
  in that type; ``stock_16bit_share``: what the stock tool's rule (name
  contains ``half``/``fp16``, or ``shape`` contains ``half``) yields.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tb_gpu_advisor import rules

#: Rule ids: the findings engine's registry (the one list of rules).
RULE_IDS = rules.RULE_IDS
SEVERITIES = ("critical", "warning", "info")


@dataclass
class Truth:
    """Known truth of one scenario capture (see module docstring for definitions)."""

    scenario: str
    description: str
    num_hosts: int
    gpus_per_host: int
    step_marker: str  # "keras3" (Profiled batch + FunctionRun _r) or "custom_loop" (train, _r=1)
    gpu_thread_mode: str  # "global" or "gpu_private"
    num_steps: int
    steady_steps: int  # what the stock tool keeps: first and last dropped when > 5 steps
    step_time_ps: float
    device_compute_ps: dict[int, float]  # per GPU id (host-local id for multi-host: host*100+gpu)
    collective_ps: dict[int, float]
    launch_wait_ps: dict[int, float]
    input_wait_ps: float
    host_compute_ps: float
    between_steps_ps: float  # host time after a step's marker ends and before the next begins
    memcpy_ps: dict[str, float]
    memcpy_count: dict[str, float]
    sync_memcpy_count: float
    fp16_share: float
    bf16_share: float
    stock_16bit_share: float
    tensor_core_kernels: frozenset[str]
    non_tensor_core_gemms: frozenset[str]
    kernel_counts: dict[str, int]  # whole capture, all GPUs and hosts
    kernel_time_ps: dict[str, int]
    allreduce_per_gpu_per_step: float
    eager_op_count: int
    host_op_count: int  # TF ops executed on the host per step (placement)
    device_op_count: int  # TF ops that launched GPU work per step
    findings: dict[str, str]  # rule id -> "critical" | "warning" | "info"; absent = ok
    dominant: str | None  # the rule expected first in the report, or None
    per_step: dict[str, list[float]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # host file names (without folder)

    def __post_init__(self) -> None:
        for rule, sev in self.findings.items():
            if rule not in RULE_IDS or sev not in SEVERITIES:
                raise ValueError(f"bad expected finding {rule}: {sev}")
        if self.dominant is not None and self.dominant not in self.findings:
            raise ValueError(f"dominant rule {self.dominant} is not an expected finding")
