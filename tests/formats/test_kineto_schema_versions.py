"""PyTorch profiler (Kineto) traces as other PyTorch versions, vendors and plugins write them (survey h37-survey27,
``tests/fixtures/wild/SURVEY.md`` "Kineto schema across versions").

Each trace is ``synthetic.torchtrace``'s (truth by construction), then written as Kineto's Intel GPU plugin
(``xpupti``, PyTorch 2.4 on) writes the same job (``synthetic.torchtrace.as_xpu``): the launching calls in category
``xpu_runtime`` (``urEnqueueKernelLaunch``), kernels and copies on a ``sycl queue``, copies named by PTI
(``Memcpy M2D (MEMORY -> DEVICE)``), SYCL's device properties.  The job is the same, so the report's numbers must be
the CUDA trace's (the control of each test), in Intel's words:

* main read no ``xpu_runtime`` call: an eager loop of 1,800 tiny kernels lost its 5.26 ms/step launch wait and read
  as "host-bound: the host's own work"; a healthy loop was told its host waits in scalar reads;
* main read PTI's copy names as kernels: a pageable batch's 1.45 ms/step blocking copy was no copy at all, and the
  report said only "the GPU idles while the host does what the capture did not record";
* main told an Intel GPU's user to ``x.to('cuda')``;
* PyTorch's own legacy export (``torch.autograd.profiler``'s ``export_chrome_trace``: a bare list of events, under
  the file name the user chose) was refused as "another tool's trace, not PyTorch's profiler".
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from synthetic.torchtrace import as_xpu
from tb_gpu_advisor import devices
from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.formats.kineto.layout import sniff
from tests.support.kineto_report import job_doc, report


def _report(tmp_path: Path, scenario: str, xpu: bool, **kw):
    doc = job_doc(scenario)
    if xpu:
        as_xpu(doc, **kw)
    return report(tmp_path / ("xpu" if xpu else "cuda"), doc, scenario)


def _text(rep) -> str:
    return " ".join(f"{f.title} {f.summary} " + " ".join(f"{a.text} {a.snippet or ''}" for a in f.actions)
                    for f in rep.findings)


def test_an_intel_gpus_launches_are_read_from_its_runtime_calls(tmp_path):
    cuda, xpu = _report(tmp_path, "tiny_ops", False), _report(tmp_path, "tiny_ops", True)
    assert xpu.gpus[0].name == "Intel(R) Data Center GPU Max 1550"
    assert cuda.breakdown_ms["launch_wait"] > 0.5 * cuda.gpus[0].step_ms  # the control: CUDA's eager loop waits on launches
    assert xpu.breakdown_ms["launch_wait"] == cuda.breakdown_ms["launch_wait"]
    assert [f.rule for f in xpu.findings] == [f.rule for f in cuda.findings]
    assert xpu.findings[0].rule == "launch_bound", [f.title for f in xpu.findings]


@pytest.mark.parametrize("plugin_names", [True, False], ids=["pti-memories", "first-plugin"])
def test_an_intel_gpus_pageable_copy_blocks_as_cudas_does(tmp_path, plugin_names):
    cuda = _report(tmp_path, "pageable_copy", False)
    xpu = _report(tmp_path, "pageable_copy", True, plugin_names=plugin_names)
    assert cuda.breakdown_ms["memcpy_h2d"] > 1.0  # the control
    assert xpu.breakdown_ms["memcpy_h2d"] == cuda.breakdown_ms["memcpy_h2d"]
    found = {f.rule: f for f in xpu.findings}
    assert xpu.findings[0].rule == "excessive_memcpy", [f.title for f in xpu.findings]
    assert "pageable host memory" in found["excessive_memcpy"].summary
    assert xpu.findings[0].saving.ms_per_step == pytest.approx(cuda.findings[0].saving.ms_per_step, abs=0.05)


def test_a_healthy_loop_on_an_intel_gpu_stays_healthy(tmp_path):
    cuda, xpu = _report(tmp_path, "healthy_bf16", False), _report(tmp_path, "healthy_bf16", True)
    assert [f.rule for f in cuda.findings] == ["healthy"]  # the control
    assert [f.rule for f in xpu.findings] == ["healthy"], [f.title for f in xpu.findings]


def test_an_intel_gpus_report_speaks_of_xpu_not_cuda(tmp_path):
    cuda, xpu = _report(tmp_path, "pageable_copy", False), _report(tmp_path, "pageable_copy", True)
    assert "'cuda'" in _text(cuda)  # the control: CUDA's advice names its device
    text = _text(xpu)
    assert "'xpu'" in text and "'cuda'" not in text and "torch.cuda" not in text, text
    for word in ("Tensor Core", "cuDNN", "NCCL", "nvidia-smi", "ProfilerActivity.CUDA"):
        assert word not in text, word


_PTI_COPIES = [("Memcpy M2D (MEMORY -> DEVICE)", "h2d", 1), ("Memcpy M2D", "h2d", 1), ("Memcpy H2D (HOST -> DEVICE)", "h2d", 0),
               ("Memcpy D2M (DEVICE -> MEMORY)", "d2h", 1), ("Memcpy D2H", "d2h", 0),
               ("Memcpy D2D (DEVICE -> DEVICE)", "d2d", 0), ("Memcpy S2D (SHARED -> DEVICE)", "other", 0)]


@pytest.mark.parametrize("name, direction", [(n, d) for n, d, _ in _PTI_COPIES] + [
    # the control: CUPTI's (and ROCm's) and XPlane's names as they were
    ("Memcpy HtoD (Pageable -> Device)", "h2d"), ("Memcpy DtoH (Device -> Pinned)", "d2h"), ("MemcpyH2D", "h2d")])
def test_copy_names_of_every_vendor_give_their_direction(name, direction):
    assert devices.copy_direction(name) == direction
    assert devices.kind_one(name) not in (devices.KIND_KERNEL, devices.KIND_COLLECTIVE)


@pytest.mark.parametrize("name, pageable", [(n, p) for n, _, p in _PTI_COPIES])
def test_ptis_system_memory_is_pageable(name, pageable):
    assert devices.copy_host_memory(name) == pageable


def test_the_plugin_leaves_the_cuda_trace_unchanged(tmp_path):
    """``as_xpu`` writes a copy; the CUDA document given to it is what the CUDA test reads (the generator's own control)."""
    doc = job_doc("pageable_copy", 2)
    before = copy.deepcopy(doc)
    assert as_xpu(copy.deepcopy(doc)) != before and doc == before


def _legacy_export(path: Path) -> Path:
    """What ``torch.autograd.profiler``'s ``export_chrome_trace`` writes (PyTorch <= 1.7, ``use_kineto=False`` since):
    a bare list, the host ops under the process ``"CPU functions"`` -- here cuDNN ops, GPU work whose side this
    profiler did not record (tests/formats/test_kineto_legacy.py reads the same under a handler's file name)."""
    ev, t = [], 100.0
    for op in ["aten::conv2d", "aten::cudnn_convolution", "aten::relu"] * 5:
        ev.append({"name": op, "ph": "X", "ts": t, "dur": 400.0, "tid": 1, "pid": "CPU functions", "args": {}})
        t += 500.0
    path.write_text(json.dumps(ev))
    return path


def test_pytorchs_legacy_export_under_the_users_file_name_is_read(tmp_path, capsys):
    path = _legacy_export(tmp_path / "trace.json")
    assert sniff(str(path)) is None
    assert cli(["report", str(path), "--format", "json", "--cache-dir", "off"]) == 0
    host = json.loads(capsys.readouterr().out)["reports"][0]["hosts"][0]
    assert host["error"] is None and host["findings"][0]["title"] == "The capture lost its GPU records", host
    # the control: another tool's bare list is still refused, in words that name it
    other = tmp_path / "gpu_trace.json"
    other.write_text(json.dumps([{"name": "[MEMCPY] HtoD", "ph": "X", "ts": 1.0, "dur": 8.0, "pid": 1, "tid": 7}]))
    assert "Chrome's JSON array form" in sniff(str(other))


def test_every_vendor_names_every_term_and_fix():
    """A rule asks the GPU's vendor for a term or a fix by NVIDIA's keys: Intel's module answers each in its own words."""
    for v in devices.VENDORS:
        assert set(v.TERMS) == set(devices.nvidia.TERMS) and set(v.FIXES) == set(devices.nvidia.FIXES), v.VENDOR
    assert not any("nvidia" in (a.snippet or "") + a.text.lower() for a in devices.intel.FIXES.values())


@pytest.mark.parametrize("scenario, rule", [("memory_activation_heavy", "activation_memory"),
                                            ("memory_fragmented", "memory_fragmentation")])
def test_an_intel_gpus_allocator_is_read_from_its_memory_events(tmp_path, scenario, rule):
    """``profile_memory=True`` on an Intel GPU writes ``[memory]`` events of ``Device Type`` 12 (c10's XPU): main read
    them as the CPU's allocator, so the GPU's memory findings vanished (and ``urQueueFinish`` read as a scalar read's
    wait).  Its capacity is the Max 1550's 128 GiB, not the H100's 80, so the severity may differ; the rule may not."""
    cuda, xpu = _report(tmp_path, scenario, False), _report(tmp_path, scenario, True)
    assert rule in [f.rule for f in cuda.findings]  # the control
    assert rule in [f.rule for f in xpu.findings], [f.title for f in xpu.findings]
    assert "host_sync" not in [f.rule for f in xpu.findings]


def test_an_intel_gpu_the_file_does_not_name_is_still_intels(tmp_path):
    """A trace whose ``deviceProperties`` is absent (a plugin or writer that leaves it out) still says its vendor by the
    plugin's own categories (``xpu_runtime``): the GPU is "Intel GPU", its advice Intel's -- main said ``x.to('cuda')``."""
    doc = as_xpu(job_doc("pageable_copy"))
    del doc["deviceProperties"]
    rep = report(tmp_path, doc, "h")
    assert rep.gpus[0].name == "Intel GPU", rep.gpus
    text = _text(rep)
    assert "'xpu'" in text and "'cuda'" not in text, text
    # the control: the CUDA trace without its properties stays an unnamed GPU, read as NVIDIA's (the profilers' default)
    cuda = job_doc("pageable_copy")
    del cuda["deviceProperties"]
    rep = report(tmp_path, cuda, "c")
    assert rep.gpus[0].name == "GPU:0" and "'cuda'" in _text(rep)
