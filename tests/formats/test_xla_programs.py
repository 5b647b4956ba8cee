"""One XLA module name compiled into several programs, each its own work: kernels find their own program's rows.

JAX compiles a module name into a program per input shape -- every un-jitted ``jnp.dot`` is a ``jit_dot``, a jitted
step is retraced for a smaller last batch -- and the profiler names each program on ``/host:metadata`` after the
module and its id (``jit_dot(79)``), the id each of its kernels carries (``program_id``).  Read by name, the last
compiled program stood for all: every GEMM kernel of ``wild/jax_mi300x``'s six ``jit_dot`` programs took the last
one's shape (bf16[16384,1024]x[1024,4096], 137 GFLOP), so its roofline showed one shape of six, 0.9 calls a step,
and MFU counted 137 GFLOP for each execution whatever its shape (h37-huntx67, read by hand).

Truth: the capture itself, read by hand (each program's dot shape from its HLO, the calls' order from the Python
trace: six shapes, each called three times in turn), and a capture built here whose programs' shapes are given.
Both real-file tests fail on main 776bb150 (one roofline row; 137.4 GFLOP a step); the built one's split case too.
"""

from __future__ import annotations

import glob

import pytest

from synthetic.builder import SpaceBuilder
from synthetic.hlo import Module, dot_dims, shape
from tb_gpu_advisor.formats.xplane.adapter import read_trace, to_trace
from tb_gpu_advisor.formats.xplane.reader import parse_timeline
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

REAL = sorted(glob.glob(str(FIXTURES / "wild" / "jax_mi300x" / "**" / "*.xplane.pb"), recursive=True))
#: program id -> (m, k, n) of its one bf16 dot, as each program's HLO on /host:metadata states it
SHAPES = {5: (256, 256, 256), 21: (1024, 1024, 1024), 34: (4096, 4096, 4096), 49: (8192, 4096, 8192),
          64: (2048, 8192, 2048), 79: (16384, 1024, 4096)}
#: the calls in the order the Python trace shows them (``run_gemms``: each shape three times, in compile order)
CALLS = [pid for pid in SHAPES for _ in range(3)]


def _flops(pid: int) -> float:
    m, k, n = SHAPES[pid]
    return 2.0 * m * k * n


@pytest.mark.skipif(not REAL, reason="wild/jax_mi300x fixture absent")
def test_each_real_gemm_kernel_finds_its_own_program_s_shape():
    fl = host_metrics(read_trace(REAL[0])).flops
    labels = {r.label: r for r in fl.top}
    assert len(labels) >= 5  # the six shapes' GEMMs (the 256-cube one may fall below the table's top)
    for pid in (21, 34, 49, 64, 79):
        m, k, n = SHAPES[pid]
        (row,) = [r for lab, r in labels.items() if f"bf16[{m},{k}]x[{k},{n}]" in lab]
        assert row.flops_per_call == pytest.approx(_flops(pid))
        assert row.tflops_per_s <= row.attainable_tflops_per_s  # no shape above the GPU's peak


@pytest.mark.skipif(not REAL, reason="wild/jax_mi300x fixture absent")
def test_the_real_step_flops_are_each_program_s_own():
    fl = host_metrics(read_trace(REAL[0])).flops
    kept = CALLS[1:-1]  # steps are the 18 jit_dot executions, the first and last dropped
    assert fl.trace_flops_per_step == pytest.approx(sum(_flops(p) for p in kept) / len(kept), rel=1e-6)


def _dot_program(m: int, k: int, n: int) -> bytes:
    mod = Module("jit_dot")
    e = mod.computation("main")
    a, b = e.param("a", shape("bf16", m, k)), e.param("b", shape("bf16", k, n))
    e.add("dot.1", "dot", shape("bf16", m, n), (a, b), dot_dimension_numbers=dot_dims((1,), (0,)))
    return mod.encode()


def _capture(programs: dict[int, tuple[int, int, int]]) -> object:
    """One GPU, each program's HLO on /host:metadata and one kernel of each carrying its module and program."""
    sb = SpaceBuilder("host")
    meta = sb.plane("/host:metadata")
    for pid, (m, k, n) in programs.items():
        meta.event_stat(f"jit_dot({pid})", "Hlo Proto", _dot_program(m, k, n))
    gpu = sb.plane("/device:GPU:0")
    gpu.add_stat("compute_cap_major", 9)
    gpu.add_stat("compute_cap_minor", 0)
    line = gpu.line("Stream #14(Compute)")
    for i, pid in enumerate(programs):
        line.add("gemm_kernel", (1 + i) * 1_000_000, 500_000, correlation_id=i + 1, hlo_op="dot.1",
                 hlo_module="jit_dot", program_id=pid)
    return to_trace(parse_timeline(sb.encode()))


def test_programs_with_different_work_are_read_apart():
    tr = _capture({3: (64, 32, 16), 9: (128, 256, 512)})
    fo = tr.flop_ops
    by_module = dict(zip(fo.module, fo.flops.tolist()))
    assert by_module == {"jit_dot(3)": 2.0 * 64 * 32 * 16, "jit_dot(9)": 2.0 * 128 * 256 * 512}
    d = tr.devices[0]
    assert [d.op_text[i] for i in d.op_idx.tolist()] == ["jit_dot(3)/dot.1:dot", "jit_dot(9)/dot.1:dot"]


def test_programs_doing_the_same_work_stay_one_module():
    """The control: a name recompiled to the same work (another device, a cache miss) keeps its name everywhere."""
    tr = _capture({3: (64, 32, 16), 9: (64, 32, 16)})
    assert set(tr.flop_ops.module) == {"jit_dot"}
    d = tr.devices[0]
    assert {d.op_text[i] for i in d.op_idx.tolist()} == {"jit_dot/dot.1:dot"}
