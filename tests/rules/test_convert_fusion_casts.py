"""An XLA fusion named after its last convert is a cast only where its HLO converts and does nothing else (issue #37,
h37-convertfusion; survey h37-survey46, left 1).

XLA names a fusion after its root instruction.  JAX computes bf16 element-wise math in f32, so ``jnp.sin`` on a bf16
array is one ``loop_convert_fusion`` whose HLO is ``parameter, convert, sine, convert``: the name reads as a dtype
cast while the kernel is the op itself.  On the kept eager MI300X capture (TraceLens ``jax08_elementwise``) every
op's kernel is such a fusion, and main reported "Dtype casts take a large share of the step" at 661 us a step (32%,
critical).  ASSUMPTION that was wrong: a fusion's name says what it computes.  Where the capture carries the module's
HLO, a converting instruction's opcodes say it (``Trace.xla_casts`` -> ``KernelStat.hlo_cast``); where none does, the
name reading stays.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.hlo import fusions_module
from synthetic.jaxcapture import GEMM_BF16, JaxCapture, XlaKernel
from tb_gpu_advisor.formats.xplane import hlo
from tb_gpu_advisor.frameworks import xla
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.rules import dtype_casts
from tb_gpu_advisor.rules.base import Ctx
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

ELEMENTWISE = FIXTURES / "wild" / "jax_eager_mi300x_elementwise"
#: a jitted JAX train step on an H200 with command buffers: its kernels' op is the buffer, not the fusion
COMMAND_BUFFER = FIXTURES / "h200_waits" / "jax_train_no_wait"


def _metrics(run: Path):
    (path,) = run.glob("plugins/profile/*/*.xplane.pb*")
    return host_metrics(read_trace(str(path)))


def test_convert_fusions_that_compute_are_no_casts_on_the_eager_mi300x_capture() -> None:
    """jax_eager_mi300x_elementwise: the 45 ``loop_convert_fusion`` kernels run sin, cos, add, multiply ... between
    bf16 converts (their HLO, read by hand): none is a cast, and no dtype_casts finding is left (main: critical,
    661 us a step)."""
    m = _metrics(ELEMENTWISE)
    fusions = [k for k in m.kernels if k.name.startswith("loop_convert_fusion")]
    assert sum(k.count for k in fusions) == 45
    assert {k.hlo_cast for k in fusions} == {False}
    assert dtype_casts.check(m) == []


def test_a_command_buffer_kernel_finds_its_instruction_by_its_own_name() -> None:
    """h200_waits/jax_train_no_wait: under a command buffer the kernels' op is ``command_buffer_1``; the kernel
    ``loop_convert_fusion`` is the GELU (``multiply, add, tanh`` between converts: its HLO, read by hand), found by
    the name XLA gave it from its instruction -- no cast."""
    m = _metrics(COMMAND_BUFFER)
    (row,) = [k for k in m.kernels if k.name == "loop_convert_fusion"]
    assert row.op_type.startswith("command_buffer")
    assert row.hlo_cast is False
    assert row not in dtype_casts.cast_rows(m, Ctx(m))


def test_control_true_casts_stay_casts_on_a_rocm_jax_capture() -> None:
    """wild/jax_mi355x: its two ``wrapped_convert`` fusions of ``jit_loss_fn`` only convert (HLO): still the cast
    rows, as the name reading had them (passes on main too)."""
    m = _metrics(FIXTURES / "wild" / "jax_mi355x")
    rows = dtype_casts.cast_rows(m, Ctx(m))
    assert sorted(k.op_name for k in rows) == ["jit_loss_fn/wrapped_convert", "jit_loss_fn/wrapped_convert.1"]


def test_kernel_names_map_to_instruction_names() -> None:
    assert xla.kernel_instructions("wrapped_convert_25") == ("wrapped_convert_25", "wrapped_convert.25")
    assert xla.kernel_instructions("loop_convert_fusion") == ("loop_convert_fusion",)


def test_the_hlo_tells_a_cast_from_math_that_ends_in_a_convert() -> None:
    """Truth by construction: a fusion of converts and layout ops only is a cast, one that also computes is not, a
    fusion without a convert is not a converting instruction at all (absent), and a fusion nesting a computing one
    computes."""
    raw = fusions_module("jit_f", {
        "loop_convert_fusion": ("convert",),
        "loop_convert_fusion.1": ("convert", "sine", "convert"),
        "wrapped_convert": ("bitcast", "convert", "transpose"),
        "loop_add_fusion": ("add",),
    })
    assert hlo.module_work(raw).casts == {"loop_convert_fusion": True, "loop_convert_fusion.1": False,
                                          "wrapped_convert": True}


def _capture(tmp_path: Path, fused: tuple[str, ...] | None) -> Path:
    """A jitted bf16 step: a 300 us GEMM and a 200 us ``loop_convert_fusion``, 12 steps; its module's HLO makes the
    fusion ``fused`` (after its parameter), or the capture carries no HLO (None)."""
    cap = JaxCapture(seed=0, step_annotation=True)
    kernels = [XlaKernel(GEMM_BF16, "cublas-gemm.1", "jit(train_step)/dot_general", 300.0, gemm=True),
               XlaKernel("loop_convert_fusion", "loop_convert_fusion", "jit(train_step)/convert_element_type", 200.0)]
    if fused is not None:
        cap.add_hlo(fusions_module(cap.module, {"loop_convert_fusion": fused}))
    for _ in range(12):
        cap.begin_step()
        cap.execute(kernels)
        cap.end_step()
    run = tmp_path / "run"
    cap.finish().write(run / "plugins" / "profile" / "2026_01_01_00_00_00" / "jaxhost.xplane.pb")
    return run


@pytest.mark.parametrize("fused, casts", [
    (("convert",), True),  # a cast alone: still a cast, as its name says
    (("bitcast", "convert", "copy"), True),
    (None, True),  # no HLO: the name reading stays
    (("convert", "sine", "convert"), False),  # f32 math on bf16 data: the op, not a cast
    (("convert", "convert", "add", "convert"), False),
])
def test_a_convert_fusion_is_a_cast_by_what_it_computes(tmp_path: Path, fused: tuple[str, ...] | None,
                                                        casts: bool) -> None:
    """The 200 us fusion is 40% of each step's kernels: a dtype_casts finding exactly where it only converts."""
    m = _metrics(_capture(tmp_path, fused))
    (row,) = [k for k in m.kernels if k.name == "loop_convert_fusion"]
    assert row.hlo_cast is (None if fused is None else casts)
    assert row.count >= 10
    found = dtype_casts.check(m)
    assert bool(found) is casts
    if casts:
        assert found[0].metric.value > 0.25  # 200 us of ~500+ us: the cast share is read whole
