"""A memory snapshot's report tables speak the words of the build its findings speak: an Ascend NPU's snapshot has
"NPU memory (peak per NPU)", "NPUs on <host>", "active (any NPU work)", "NPU0" and "NPU:0"; a snapshot that names no
build "device"; NVIDIA's and a ROCm build's stay as they were (issue #37, "a finding never contradicts the hardware";
session 56's h37-wild56m *Left* 3).

Why it was missed: the vendor's words reached the findings, the cards and the kernel and op tables' titles
(h37-wild56m), but the text and markdown renderings' memory and device tables, the verdict line ("records memory and
no GPU work") and the metrics' name of a device the file does not name (``GPU:<n>``) were written in NVIDIA's
words whatever the host's ``capture.vendor``.

Scenarios: ``synthetic.memsnapshot.training_iterations`` as torch_npu dumps it (``as_npu``, its frames naming the
plug-in: "Huawei"), recorded with Python frames only on torch_npu's stream (no build named: "unnamed"); truth by
construction.  Controls: the CUDA and ROCm dumps of the same history keep "GPU"."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.devices import unnamed
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.report.render import to_markdown, to_text
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _docs() -> dict[str, dict]:
    doc = ms.training_iterations().doc
    return {"Huawei": ms.as_npu(doc, stream=ms.NPU_STREAM),
            "unnamed": ms.as_recorded(ms.as_npu(doc, stream=ms.NPU_STREAM), stacks="python"),
            "NVIDIA": doc, "AMD": ms.as_rocm(doc)}


def _report(tmp_path: Path, vendor: str):  # noqa: ANN202 - a Report
    path = ms.write(str(tmp_path / "snap.pickle"), _docs()[vendor])
    rep = analyze_session(".", "s", [HostFile("snap", path, Path(path).stat().st_size, 0, "snapshot")])
    assert rep.hosts[0].capture["vendor"] == vendor
    return rep


@pytest.mark.parametrize(("vendor", "word", "title"), [("Huawei", "NPU", "NPU memory (peak per NPU)"),
                                                       ("unnamed", "device", "Device memory (peak per device)")])
def test_the_tables_speak_the_builds_words(tmp_path: Path, vendor: str, word: str, title: str) -> None:
    rep = _report(tmp_path, vendor)
    assert [g.name for g in rep.hosts[0].gpus] == [f"{word}:0"]
    for text in (to_text(rep), to_markdown(rep)):
        lines = [line for line in text.splitlines() if not line.lstrip("#").lstrip().startswith("GPU Advisor")]
        # the unnamed build's legend names the GPUs its placeholder stands for, by design (devices.unnamed.LEGEND)
        lines = [line for line in lines if unnamed.LEGEND not in line]
        assert not [line for line in lines if "GPU" in line], [line for line in lines if "GPU" in line]
        assert title in text
        assert f"active (any {word} work)" in text
        assert f"{word}0" in text and f"no {word} work" in text


@pytest.mark.parametrize("vendor", ["NVIDIA", "AMD"])
def test_control_a_gpus_tables_say_gpu(tmp_path: Path, vendor: str) -> None:
    rep = _report(tmp_path, vendor)
    assert [g.name for g in rep.hosts[0].gpus] == ["GPU:0"]
    text = to_text(rep)
    assert "GPU memory (peak per GPU)" in text and "GPUs on snap" in text and "active (any GPU work)" in text
    assert "no GPU work" in text
