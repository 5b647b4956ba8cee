"""An XLA command buffer's kernels are labelled in the plane's vendor's words (h37-amd69): XLA's ROCm build records its
command buffers as HIP graphs (``RocmCommandBuffer``: ``hipGraph_t``), and an MI300X's kernel table said
"command_buffer_1 (CUDA graph)".  Truth by construction: ``synthetic.jaxcapture.JaxCapture`` with command buffers, on
an MI300X under ROCm and on an H100 (control)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from synthetic.jaxcapture import H100, MI300X_GPU, JaxCapture, JaxScenario, _async_loop, mlp_bf16_step, mlp_hlo
from tb_gpu_advisor.runtime.pipeline import analyze_host


@pytest.mark.parametrize(("rocm", "label"), [(True, "HIP graph"), (False, "CUDA graph")], ids=["mi300x", "h100"])
def test_a_command_buffers_kernels_are_named_in_the_gpus_words(tmp_path, rocm: bool, label: str) -> None:
    cap = JaxCapture(gpu=MI300X_GPU if rocm else H100, seed=0, step_annotation=True, command_buffers=True, rocm=rocm)
    kernels = mlp_bf16_step(4, command_buffers=True)
    cap.add_hlo(mlp_hlo(cap.module, kernels))
    _async_loop(cap, kernels, 4)
    (path,) = JaxScenario("cb", cap.finish(), cap.truth("cb", "command buffers", "trace_train")).write(tmp_path)
    rep = analyze_host(SimpleNamespace(host="jaxhost", path=str(path)))
    ops = {dict(zip(rep.kernels.columns, r))["op"] for r in rep.kernels.rows}
    assert ops == {f"jit_train_step/command_buffer_1 ({label})"}, ops


@pytest.mark.parametrize(("stats", "word"), [({}, "graph"), ({"device_vendor": "AMD"}, "HIP graph"),
                                              ({"gpu_device_name": "NVIDIA H100 80GB HBM3"}, "CUDA graph"),
                                              ({"gpu_device_name": "Graphics Device"}, "graph"),
                                              ({"gpu_device_name": "gfx942", "device_vendor": "AMD"}, "HIP graph"),
                                              ({"gpu_device_name": "Graphics Device", "device_vendor": "Nvidia"},
                                               "CUDA graph")],
                         ids=["unnamed", "amd", "h100", "unclaimed_name", "amd_by_vendor", "nvidia_by_vendor"])
def test_a_plane_naming_no_gpu_labels_its_command_buffers_neutrally(stats: dict, word: str) -> None:
    """A plane naming neither its device nor its vendor: "graph", not NVIDIA's default "CUDA graph" (h37-amd69 *Left*
    2), nor a device name no vendor claims (``Graphics Device``: h37-kind69 *Left* 3) -- the vendor the plane states
    then decides.  Base bf937833: "CUDA graph" for the unnamed plane; base dbf6cf15: "CUDA graph" for the unclaimed
    name, and the AMD vendor behind the unclaimed ``gfx942`` said "CUDA graph" too."""
    from tb_gpu_advisor.formats.xplane.adapter import _command_buffer_word

    assert _command_buffer_word(SimpleNamespace(stats=stats)) == word
