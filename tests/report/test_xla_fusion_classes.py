"""XLA fusion kernels classified by the opcodes their HLO fuses (issue #37, h37-xlafusion).

XLA names a fusion's kernel after its root instruction (``loop_add_fusion``, ``wrapped_transpose``) or only numbers
it (``fusion_338``); the kernel's class was read from that name, and the numbered ones -- Triton softmax fusions (two
reduces, an exponential, a divide) that held 22% of the real GPT step's GPU time -- were "other": no family claims
them.  The wrong assumption: that a kernel's name says its work.  The capture's HLO says it: a fusion holding a dot or
convolution is matrix work, one holding a reduce a reduction, one of element-wise and data-movement opcodes only
element-wise (``frameworks.xla.fusion_class``, XLA's HLO semantics).

Only the classes table moves: the matrix class keeps reading kernel names, as the savings' matmul pool
(``metrics.flops.gemm_events``) does, so the two agree -- the controls check matmul/conv is main's, us for us.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats.xplane import hlo
from tb_gpu_advisor.formats.xplane.adapter import xla_classes
from tb_gpu_advisor.frameworks import xla
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.run_report import run_report

REAL_JAX = SHARED_PROFILES / "real-h100-jax"
_real = pytest.mark.skipif(not REAL_JAX.is_dir(), reason="the shared real JAX captures are not here")


# ---------------------------------------------------------------------------------------------- the opcode facts

@pytest.mark.parametrize("opcodes, targets, want", [
    # a Triton softmax (fusion_338 of the GPT capture): reduces among element-wise maths -> a reduction
    ({"iota", "compare", "broadcast", "parameter", "bitcast", "constant", "select", "reduce", "subtract", "exponential",
      "divide", "convert"}, set(), "reduction"),
    # an optimizer's element-wise update, and a bare transpose: element-wise
    ({"parameter", "multiply", "add", "sqrt", "divide", "broadcast", "constant", "tuple"}, set(), "elementwise"),
    ({"parameter", "transpose"}, set(), "elementwise"),
    # a Triton GEMM fusion holds its dot; a reduce beside it does not make the matmul a reduction
    ({"parameter", "dot", "convert", "reduce"}, set(), "matmul/conv"),
    ({"parameter", "convolution"}, set(), "matmul/conv"),
    ({"parameter", "custom-call"}, {"__cublas$gemm"}, "matmul/conv"),
    # what none of the three is: a sort, a scatter that combines, a library call that is no matmul
    ({"parameter", "sort"}, set(), None),
    ({"parameter", "scatter", "add"}, set(), None),
    ({"parameter", "custom-call", "add"}, {"SomeLibraryCall"}, None),
])
def test_a_fusions_opcodes_state_its_class(opcodes, targets, want):
    assert xla.fusion_class(frozenset(opcodes), frozenset(targets)) == want


def test_a_fusion_name_whose_programs_disagree_states_no_class():
    """Kernels name their module, not the program: where two programs of one module name class a fusion apart, the
    kernel's class is not read from either (as ``xla_casts`` does for casts)."""
    a, b = hlo.ModuleWork(module="jit_f"), hlo.ModuleWork(module="jit_f")
    a.classes = {"fusion.1": "reduction", "fusion.2": "elementwise"}
    b.classes = {"fusion.1": "elementwise", "fusion.2": "elementwise"}
    assert xla_classes({"jit_f": [a, b]}) == {"jit_f/fusion.2": "elementwise"}


def test_the_stated_kind_keeps_names_for_matrix_work():
    """The HLO's reduction/element-wise class is the kernel's kind; its matrix class is not (the savings' matmul
    pool reads names); without an HLO class the name's kind stands."""
    assert frameworks.stated_kernel_kind("fusion_338", "reduction") == "reduction"
    assert frameworks.stated_kernel_kind("fusion_9", "matmul/conv") is None
    assert frameworks.stated_kernel_kind("triton_red_fused_sum_0", None) == "reduction"


# ---------------------------------------------------------------------------------------------- real captures

def _classes(logdir, run) -> dict[str, float]:
    """The first host's kernel time per class, us per step (the report's ``kernel_classes``)."""
    return {c["class"]: c["kernel_us_per_step"] for c in run_report(logdir, run).hosts[0].kernel_classes}


def _share(classes: dict[str, float], cls: str) -> float:
    return classes.get(cls, 0.0) / sum(classes.values())


@pytest.mark.parametrize("logdir, run, gains, main_other, at_most, at_least, matmul_us", [
    # capture, the class that gains most, main's "other" share, its bound now, the gaining class's share now at least
    # (main's: 0.028, 0.039, 0.040, 0.066, 0.001, 0.090), main's matmul/conv us per step (a control)
    (REAL_JAX, "gpt_bf16", "reduction", 0.396, 0.005, 0.35, 12585.794),
    (REAL_JAX, "gpt_big", "reduction", 0.414, 0.005, 0.38, 22960.245),
    (REAL_JAX, "healthy_bf16", "elementwise", 0.060, 0.001, 0.09, 1891.171),
    (REAL_JAX, "healthy_bf16_nocb", "elementwise", 0.059, 0.001, 0.09, 1895.22),
    (REAL_JAX, "fp32_highest", "elementwise", 0.035, 0.01, 0.03, 14584.155),
    (FIXTURES / "h200_memory", "jax_mem_mlp", "elementwise", 0.076, 0.001, 0.13, 15185.301),
])
def test_xla_fusions_leave_other_for_the_class_their_hlo_states(logdir, run, gains, main_other, at_most, at_least,
                                                                matmul_us):
    if not (logdir / run).is_dir():
        pytest.skip(f"{logdir / run} is not here")
    c = _classes(logdir, run)
    assert _share(c, "other") <= at_most < main_other
    assert _share(c, gains) >= at_least
    assert c.get("matmul/conv") == pytest.approx(matmul_us, abs=1e-3)


@_real
def test_the_gpt_softmax_fusion_is_a_reduction_inside_a_command_buffer():
    """``fusion_338`` runs inside a command buffer: its op is the buffer, and its own name finds its instruction."""
    from tb_gpu_advisor import formats
    from tb_gpu_advisor.discover.logdir import discover
    from tb_gpu_advisor.runtime.pipeline import host_metrics

    s = next(s for s in discover(str(REAL_JAX / "gpt_bf16")))
    m = host_metrics(formats.read(s.hosts[0]))
    k = next(k for k in m.kernels if k.name == "fusion_338")
    assert "command_buffer" in k.op_name
    assert k.hlo_class == "reduction"
    assert not k.tc_eligible and not k.elementwise  # the name-read facts stay: only the class is the HLO's


#: The captures whose matmuls XLA fused (Triton GEMM fusions: ``gemm_fusion_dot`` on AMD, ``fusion_N`` on the H100).
_MATRIX_FUSIONS = {"gpt_bf16", "healthy_bf16_nocb", "jax_mi355x", "jax_mi300x"}


@pytest.mark.parametrize("logdir, run", [
    (REAL_JAX, "gpt_bf16"), (REAL_JAX, "healthy_bf16_nocb"), (REAL_JAX, "fp32_highest"),
    (FIXTURES / "h200_memory", "jax_mem_mlp"), (FIXTURES / "wild", "jax_mi355x"), (FIXTURES / "wild", "jax_mi300x"),
])
def test_every_fusion_the_hlo_calls_matrix_work_is_matrix_work_by_its_name(logdir, run):
    """The control behind keeping the HLO's matrix class out of the table: on the kept XLA captures (Triton GEMM
    fusions, cuBLAS calls, hipBLASLt on AMD), each kernel whose fusion holds a dot is already matmul/conv by its name,
    so the table and the savings' matmul pool lose none.  A capture where one is not fails here -- then the HLO's
    class must reach ``gemm_events`` too."""
    from tb_gpu_advisor import devices, formats
    from tb_gpu_advisor.discover.logdir import discover
    from tb_gpu_advisor.runtime.pipeline import host_metrics

    if not (logdir / run).is_dir():
        pytest.skip(f"{logdir / run} is not here")
    s = next(s for s in discover(str(logdir)) if s.run == run)
    m = host_metrics(formats.read(s.hosts[0]))
    matrix = [k for k in m.kernels if k.hlo_class == "matmul/conv"]
    assert bool(matrix) == (run in _MATRIX_FUSIONS)  # the others call cuBLAS / hipBLASLt as bare custom calls
    for k in matrix:
        assert devices.kernel_class(k.name, tensor_core=k.tensor_core, tc_eligible=k.tc_eligible,
                                    elementwise=k.elementwise, collective=k.collective) == "matmul/conv", k.name
