"""MFU's note where the program does no matmul at all (survey h37-survey32).

wrf-gpu/wrf_gpu's solver bake-off logdir (JAX 0.10, RTX 5090; AGPL, read in ``.robustness/``) runs four jitted
tridiagonal solvers: element-wise loop fusions, slices and device copies, not one dot or convolution.  Its HLO is in
the capture and its ``<module>:XLA GPU module`` events are too, yet main's headline said MFU was n/a because "no
execution of a module with matmul work was found in the kept steps (no `<module>:XLA GPU module` host event)" -- a
cause the file contradicts.  The assumption: *a capture with HLO but no traced FLOPs lacks its module events*.  Where
the HLO holds no matmul or convolution in any module, there are no FLOPs MFU counts, and the note says so.

Truth by construction (``synthetic.jaxcapture``); the control: the same loop whose HLO holds the MLP's dots gets its
FLOPs and an MFU, as before.
"""

from __future__ import annotations

from synthetic import hlo as H
from synthetic import jaxcapture as jc
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _elementwise_hlo(module: str) -> bytes:
    """A module of element-wise work only: ``x * x + x``, as a solver's loop body is."""
    mod = H.Module(module)
    e = mod.computation("main")
    x = e.param("x", H.shape("f32", 1024, 1024))
    m = e.add("multiply.1", "multiply", H.shape("f32", 1024, 1024), (x, x))
    e.add("add.1", "add", H.shape("f32", 1024, 1024), (m, x))
    return mod.encode(e)


def _metrics(tmp_path, hlo: bytes | None):
    cap = jc.JaxCapture(step_annotation=True, command_buffers=True)
    kernels = jc.mlp_bf16_step(4, command_buffers=True)
    cap.add_hlo(hlo if hlo is not None else jc.mlp_hlo(cap.module, kernels))
    jc._async_loop(cap, kernels, 8)
    sc = jc.JaxScenario("flops", cap.finish(), cap.truth("flops", "", "trace_train"))
    (path,) = sc.write(tmp_path)
    return host_metrics(read_trace(str(path)))


def test_a_program_without_matmuls_has_no_mfu_and_says_why(tmp_path):
    m = _metrics(tmp_path, _elementwise_hlo(jc.JaxCapture().module))
    assert m.flops.flops_per_step is None
    note = m.flops.note or ""
    # main: "... (no `<module>:XLA GPU module` host event)", where the capture holds one per step
    assert "XLA GPU module" not in note, note
    assert "no matmul or convolution" in note and "MFU does not apply" in note


def test_control_the_mlp_hlo_still_gives_flops(tmp_path):
    m = _metrics(tmp_path, None)
    assert m.flops.flops_per_step and m.flops.flops_per_step > 0
    assert "no matmul or convolution" not in (m.flops.note or "")
