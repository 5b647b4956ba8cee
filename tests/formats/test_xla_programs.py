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


# ---------------------------------------------------------------------------------------------- executions
# A program's executions are its ``<module>:XLA GPU module`` host events, each tied to its program by the kernels its
# launch records ran -- not the count of its least launched instruction, which a ``lax.cond`` branch run in some
# executions undercounts (h37-xla68).  Truth by construction: the calls written, and the dot shapes given.

#: program id -> (m, k, n) of its one bf16 dot
STEP_SHAPES = {3: (1024, 512, 2048), 9: (2048, 1024, 4096)}
#: the calls, in order: the two programs in turn; program 3's branch (``multiply.4``, a ``lax.cond``'s true branch)
#: runs in its second call alone
STEP_CALLS = [3, 9] * 5
BRANCH_AT = 2


def _step_program(pid: int) -> bytes:
    """``jit_step``'s program ``pid``: its dot, and for program 3 a conditional whose true branch multiplies."""
    m, k, n = STEP_SHAPES[pid]
    mod = Module("jit_step")
    branches = []
    if pid == 3:
        for name in ("true", "false"):
            b = mod.computation(f"branch_{name}")
            x = b.param("x", shape("bf16", m, n))
            if name == "true":
                b.add("multiply.4", "multiply", shape("bf16", m, n), (x, x))
            branches.append(b.id)
    e = mod.computation("main")
    a, b_ = e.param("a", shape("bf16", m, k)), e.param("b", shape("bf16", k, n))
    dot = e.add("dot.1", "dot", shape("bf16", m, n), (a, b_), dot_dimension_numbers=dot_dims((1,), (0,)))
    if branches:
        p = e.param("p", shape("pred"))
        e.add("conditional.5", "conditional", shape("bf16", m, n), (p, dot, dot), called_computation_ids=branches)
    return mod.encode(e)


def _branching_capture(tmp_path, module_events: bool = True, calls: list[int] = STEP_CALLS) -> str:
    """Ten ``jit_step`` calls on one H100 (``calls``: each one's program; 3 and 9 in turn), each its own dot; program
    3's branch kernel in one of its calls."""
    from synthetic.jaxcapture import JaxCapture, JaxScenario, XlaKernel
    from synthetic.xla_kernels import GEMM_BF16

    cap = JaxCapture(seed=0, module="jit_step", function="step", program_id=3, jitter=0.0,
                     module_events=module_events)
    dot = XlaKernel(GEMM_BF16, "dot.1", "jit(step)/dot_general", 200.0, gemm=True)
    branch = XlaKernel("wrapped_multiply", "multiply.4", "jit(step)/cond/branch_1_fun/mul", 20.0)
    for i, pid in enumerate(calls):
        cap.execute([dot, branch] if i == BRANCH_AT else [dot], program_id=pid)
        cap.t += 400 * 1_000_000
    for pid in STEP_SHAPES:
        cap.space.plane("/host:metadata").event_stat(f"jit_step({pid})", "Hlo Proto", _step_program(pid))
    (path,) = JaxScenario("branching", cap.finish(), cap.truth("branching", "two programs", "trace_train")).write(tmp_path)
    return str(path)


def _step_flops(pid: int) -> float:
    m, k, n = STEP_SHAPES[pid]
    return 2.0 * m * k * n


def test_a_program_s_executions_are_its_execution_records_not_its_least_launched_instruction(tmp_path):
    """Programs 3 and 9 of one name in turn are one iteration a cycle (a step and its evaluation, h37-xla69: each
    execution's program is the one its kernels carry), so each of the 5 steps holds one execution of each program:
    its FLOPs are both dots'.  On main the branch kernel, run once, counted program 3's executions: 1 for 4, (1 x 2.1
    + 4 x 17.2) / 8 = 8.9 GFLOP a step for 9.7 (h37-xla68); on b2a0d583 every call was a step (8 kept, 9.7 GFLOP
    each: half an iteration's 19.3)."""
    m = host_metrics(read_trace(_branching_capture(tmp_path)))
    assert m.steps.count == len(STEP_CALLS) // 2
    assert "`jit_step(3)`" in m.steps.note and "`jit_step(9)`" in m.steps.note
    assert m.flops.trace_flops_per_step == pytest.approx(_step_flops(3) + _step_flops(9), rel=1e-6)
    assert "least launched" not in (m.flops.note or "")
    # the rooflines count each instruction's own calls: each dot once a step, and MFU's FLOPs the same work
    rows = sorted((r.flops_per_call, r.calls_per_step) for r in m.flops.top)
    assert rows == [(pytest.approx(_step_flops(p)), pytest.approx(1.0)) for p in (3, 9)]
    assert sum(r.calls_per_step * r.flops_per_call for r in m.flops.top) == pytest.approx(m.flops.trace_flops_per_step)


def test_control_a_name_recompiled_mid_window_stays_one_step_per_call(tmp_path):
    """The control: program 3 for four calls, then program 9 (a new input shape) for six -- no cycle, one module
    recompiled: each call a step (10, 8 kept), as on the Nsight export of the same loop."""
    calls = [3] * 4 + [9] * 6
    m = host_metrics(read_trace(_branching_capture(tmp_path, calls=calls)))
    assert m.steps.count == 8 and "`jit_step`" in m.steps.note
    kept = calls[1:-1]
    assert m.flops.trace_flops_per_step == pytest.approx(sum(_step_flops(p) for p in kept) / len(kept), rel=1e-6)


def test_without_execution_records_the_count_falls_back_to_the_kernels_and_says_so(tmp_path):
    """The control: a capture whose host records no ``<module>:XLA GPU module`` event ties no execution to its
    program; the least launched instruction counts them, and the MFU note says what that assumed."""
    m = host_metrics(read_trace(_branching_capture(tmp_path, module_events=False)))
    assert "least launched instruction" in (m.flops.note or "")


# ---------------------------------------------------------------------------------------------- lax.cond branches
# A ``conditional`` runs one of its branches an execution; the HLO walk reaches them all.  Each branch's matmul was
# counted every execution: the FLOPs of the branch not taken in MFU (h37-xla69).  Truth by construction: which branch
# each call ran, the dot shapes given.

#: (n of the entry's square bf16 dot, of the true branch's, of the false branch's)
COND_N = (2048, 1024, 512)
#: per call: whether it took the true branch
COND_TAKEN = [i % 3 == 0 for i in range(10)]


def _cube(n: int) -> float:
    return 2.0 * n ** 3


def _cond_program() -> bytes:
    """``jit_step``: a dot, then ``lax.cond`` whose true branch is one dot and false branch another."""
    mod = Module("jit_step")
    branches = []
    for name, n, op in (("true", COND_N[1], "dot.2"), ("false", COND_N[2], "dot.3")):
        b = mod.computation(f"branch_{name}")
        x = b.param("x", shape("bf16", n, n))
        b.add(op, "dot", shape("bf16", n, n), (x, x), dot_dimension_numbers=dot_dims((1,), (0,)))
        branches.append(b.id)
    e = mod.computation("main")
    n = COND_N[0]
    a, b_ = e.param("a", shape("bf16", n, n)), e.param("b", shape("bf16", n, n))
    dot = e.add("dot.1", "dot", shape("bf16", n, n), (a, b_), dot_dimension_numbers=dot_dims((1,), (0,)))
    p = e.param("p", shape("pred"))
    e.add("conditional.5", "conditional", shape("bf16", n, n), (p, dot, dot), called_computation_ids=branches)
    return mod.encode(e)


def _cond_capture(tmp_path, hlo_ops: bool = True) -> str:
    """Ten ``jit_step`` calls on one H100, each its dot and the kernel of the branch it took (``COND_TAKEN``);
    ``hlo_ops`` off: every kernel named after a command buffer, as XLA's CUDA graphs name them (real-h100-jax)."""
    from synthetic.jaxcapture import JaxCapture, JaxScenario, XlaKernel
    from synthetic.xla_kernels import GEMM_BF16

    cap = JaxCapture(seed=0, module="jit_step", function="step", program_id=3, jitter=0.0)
    op = (lambda name: name) if hlo_ops else (lambda name: "command_buffer_1")
    dot = XlaKernel(GEMM_BF16, op("dot.1"), "jit(step)/dot_general", 200.0, gemm=True)
    true = XlaKernel(GEMM_BF16, op("dot.2"), "jit(step)/cond/branch_1_fun/dot_general", 40.0, gemm=True)
    false = XlaKernel(GEMM_BF16, op("dot.3"), "jit(step)/cond/branch_0_fun/dot_general", 10.0, gemm=True)
    for taken in COND_TAKEN:
        cap.execute([dot, true if taken else false])
        cap.t += 400 * 1_000_000
    cap.space.plane("/host:metadata").event_stat("jit_step(3)", "Hlo Proto", _cond_program())
    (path,) = JaxScenario("cond", cap.finish(), cap.truth("cond", "lax.cond", "trace_train")).write(tmp_path)
    return str(path)


def test_a_cond_counts_the_branch_its_kernels_ran(tmp_path):
    """Each call a step (8 kept of 10); a step's FLOPs are its dot and the branch it took: (2 x 2.1 + 6 x 0.27) / 8
    + 17.2 GFLOP.  Fails on b2a0d583: both branches every call (19.6 GFLOP a step)."""
    m = host_metrics(read_trace(_cond_capture(tmp_path)))
    assert m.steps.count == 8
    kept = COND_TAKEN[1:-1]
    want = _cube(COND_N[0]) + sum(_cube(COND_N[1] if t else COND_N[2]) for t in kept) / len(kept)
    assert m.flops.trace_flops_per_step == pytest.approx(want, rel=1e-6)
    assert "upper bound" not in (m.flops.note or "")


def test_control_kernels_that_name_no_instruction_count_every_branch_and_say_so(tmp_path):
    """The control: every kernel named after a command buffer -- nothing says which branch ran: both branches every
    call (the HLO's count, as before), said an upper bound."""
    m = host_metrics(read_trace(_cond_capture(tmp_path, hlo_ops=False)))
    assert m.flops.trace_flops_per_step == pytest.approx(sum(_cube(n) for n in COND_N), rel=1e-6)
    assert "upper bound" in (m.flops.note or "") and "`jit_step`" in m.flops.note
