"""Intel GPUs known as NVIDIA's and AMD's are (h37-intel2): the Data Center GPU Max peaks, a stack told from the card
by its memory, and fixes that name only what PyTorch's ``xpu`` device has at the trace's version.

Jobs built by ``synthetic.torchtrace`` and rewritten as PyTorch's ``xpupti`` plugin writes them (``as_xpu``): the truth
is by construction (the GEMMs' FLOPs and times are the generator's; the device is the one ``deviceProperties`` names).
Controls: the same jobs on CUDA, an Intel GPU the table does not hold, AMD's and NVIDIA's peaks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.torchtrace import as_xpu
from tb_gpu_advisor.devices import P_BF16, P_FP8, P_FP32, P_TF32, memory_bandwidth, peak_flops, unit_name
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.model.schema import Action
from tests.support.kineto_report import job_doc, report

MAX_1550 = "Intel(R) Data Center GPU Max 1550"
GIB = 1 << 30


def _report(tmp_path: Path, scenario: str, xpu: bool = True, version: str | None = None, **props):
    doc = job_doc(scenario)
    if xpu:
        as_xpu(doc)
        for p in doc["deviceProperties"]:
            p.update(props)
    if version is not None:
        doc["metadata"] = {"torch_env_info": {"torch_version": version}}
    return report(tmp_path / f"{scenario}-{xpu}-{version}-{len(props)}", doc, scenario)


def _mfu(rep):
    return next(m for m in rep.headline if m.id == "mfu")


def _fixes(rep, rule: str) -> list[Action]:
    return [a for f in rep.findings if f.rule == rule for a in f.actions]


# --- peaks ------------------------------------------------------------------------------------------------------------


def test_a_max_1550_card_s_mfu_is_its_flops_over_the_bf16_xmx_peak(tmp_path):
    """The generator's card reports 128 GiB: the whole Max 1550 (128 Xe cores x 1.6 GHz x 4,096 bf16 FLOP/clk)."""
    rep = _report(tmp_path, "healthy_bf16")
    m = _mfu(rep)
    assert rep.gpus[0].name == MAX_1550
    assert m.detail["peak_flops"] == pytest.approx(128 * 1.6e9 * 4096, rel=1e-3)
    assert "Max 1550" in m.detail["peak_source"] and "128 GiB" in m.detail["peak_source"]
    per_gpu_step = m.detail["flops_per_step"] / (rep.gpus[0].step_ms / 1e3)
    assert m.value == pytest.approx(per_gpu_step / m.detail["peak_flops"], rel=0.01)
    assert m.detail["memory_bandwidth"] == pytest.approx(3.2768e12)


def test_one_stack_of_a_max_1550_gets_half_the_card(tmp_path):
    """Level Zero's FLAT hierarchy shows each 64 GiB stack as a device under the card's name: half its peaks, and
    the stack's figures too where the trace gives no memory (the lowest: a gap to peak never overstated)."""
    card = _mfu(_report(tmp_path, "healthy_bf16")).detail
    stack = _mfu(_report(tmp_path, "healthy_bf16", totalGlobalMem=64 * GIB)).detail
    assert stack["peak_flops"] == pytest.approx(card["peak_flops"] / 2, rel=1e-3)
    assert stack["memory_bandwidth"] == pytest.approx(card["memory_bandwidth"] / 2)
    unknown = peak_flops(MAX_1550, None, P_BF16)
    assert unknown.model == "Max 1550 (one stack)" and "lowest figure" in unknown.source
    # memory tells variants apart only where the table gives it: an A100's 80 GiB changes nothing
    assert peak_flops("NVIDIA A100-SXM4-80GB", (8, 0), P_BF16, memory_bytes=80 * GIB).value == pytest.approx(312e12)


def test_max_1100_and_the_xe_hpc_dtypes():
    assert peak_flops("Intel(R) Data Center GPU Max 1100", None, P_BF16).value == pytest.approx(355.6e12)
    assert peak_flops("Intel(R) Data Center GPU Max 1100", None, P_TF32).value == pytest.approx(177.8e12)
    assert memory_bandwidth("Intel(R) Data Center GPU Max 1100", None).value == pytest.approx(1228.8e9)
    assert peak_flops("Intel(R) Data Center GPU Max 1100", None, P_FP8) is None  # Xe-HPC's XMX runs no fp8
    assert unit_name("Intel(R) Data Center GPU Max 1100", None) == "Xe core"


@pytest.mark.parametrize("name", ["Intel(R) Arc(TM) A770 Graphics", "Intel(R) Graphics [0x7d55]", "Intel GPU"])
def test_an_intel_gpu_the_table_lacks_says_nothing_of_its_peaks(tmp_path, name):
    """The control: no figure guessed for a GPU whose peaks are not tabled (its report as on main)."""
    assert peak_flops(name, None, P_BF16) is None and memory_bandwidth(name, None) is None
    assert unit_name(name, None) == "SM"
    rep = _report(tmp_path, "healthy_bf16", name=name)
    assert rep.gpus[0].name == name and _mfu(rep).detail.get("peak_flops") is None


def test_nvidia_and_amd_peaks_unchanged():
    assert peak_flops("NVIDIA H100 80GB HBM3", (9, 0), P_BF16).value == pytest.approx(989.4e12)
    assert peak_flops("AMD Instinct MI300X", (9, 4), P_FP32).value == pytest.approx(163.4e12)


# --- advice -----------------------------------------------------------------------------------------------------------


def test_an_undated_xpu_trace_is_told_no_graph_capture(tmp_path):
    """torch.compile's reduce-overhead records no graph on XPU, and torch.xpu.graph came with PyTorch 2.11: a trace
    that does not date PyTorch is told neither.  The CUDA job (the control) keeps its CUDA graphs."""
    cuda, xpu = _report(tmp_path, "tiny_ops", xpu=False), _report(tmp_path, "tiny_ops")
    assert xpu.findings[0].rule == cuda.findings[0].rule == "launch_bound"
    assert any("reduce-overhead" in (a.snippet or "") for a in _fixes(cuda, "launch_bound"))
    snippets = " ".join(a.snippet or "" for f in xpu.findings for a in f.actions)
    assert "reduce-overhead" not in snippets and ".graph(" not in snippets
    assert _fixes(xpu, "launch_bound")  # the general fixes stay


def test_pytorch_2_11_on_xpu_is_told_torch_xpu_graph(tmp_path):
    fixes = _fixes(_report(tmp_path, "tiny_ops", version="2.11.0+xpu"), "launch_bound")
    code = " ".join(a.snippet or "" for a in fixes)
    assert "torch.xpu.graph(g)" in code and "torch.xpu.XPUGraph()" in code and "reduce-overhead" not in code
    older = _fixes(_report(tmp_path, "tiny_ops", version="2.8.0+xpu"), "launch_bound")
    assert not any("graph" in (a.snippet or "") for a in older)


def test_fit_leaves_other_vendors_and_other_fixes_alone():
    fw = pytorch.FRAMEWORK
    for a in (pytorch.CUDA_GRAPHS, pytorch.COMPILE):
        assert fw.fit(a, "NVIDIA", None) is a and fw.fit(a, "AMD", (2, 1)) is a
    assert fw.fit(pytorch.COMPILE, "Intel", None) is pytorch.COMPILE
    assert fw.fit(pytorch.CUDA_GRAPHS, "Intel", (2, 12)) is pytorch.XPU_GRAPHS
    assert fw.fit(pytorch.CUDA_GRAPHS, "Intel", (2, 10)) is None


def test_an_xpu_job_is_not_told_cuda_s_sync_debug_mode(tmp_path):
    """``torch.xpu.set_sync_debug_mode`` is no PyTorch API: the host-sync fix that is only that call is left out, the
    one that ends with it keeps its other lines.  The CUDA job (the control) keeps it."""
    cuda, xpu = _report(tmp_path, "sync_item", xpu=False), _report(tmp_path, "sync_item")
    assert xpu.findings[0].rule == cuda.findings[0].rule == "host_sync"
    assert any("set_sync_debug_mode" in (a.snippet or "") for a in _fixes(cuda, "host_sync"))
    kept = _fixes(xpu, "host_sync")
    assert kept and not any("set_sync_debug_mode" in (a.snippet or "") or "sync debug mode" in a.text for a in kept)
    fitted = pytorch.FRAMEWORK.fit(pytorch.OUTPUT_SIZE_READ, "Intel", (2, 12))
    assert "scatter_add_" in fitted.snippet and "set_sync_debug_mode" not in fitted.snippet
