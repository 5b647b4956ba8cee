"""The tab's own device labels arrive in the host's vendor's words (h37-snap58; session 57's h37-wild57m *Left* 3).

The text and markdown tables of an Ascend NPU's snapshot said "NPU0" and "active (any NPU work)" while the tab's
charts (``serve/static/charts.js``, ``views.js``) still wrote "GPU 0 memory", "GPU active" and "Per-GPU comparison":
the display sent no word for them.  ``display.hosts[].device_words`` now carries ``report.view.DEVICE_LABELS`` in the
host's vendor's words (the frontend's ``test/device_words.test.js`` draws them).  Scenarios: the generator's
training history as torch_npu dumps it and as an unnamed build's Python-only recording; truth by construction.
Control: the CUDA dump sends NVIDIA's labels as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.report.view import DEVICE_LABELS, display
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _shown(tmp_path: Path, doc: dict) -> dict:
    path = ms.write(str(tmp_path / "snap.pickle"), doc)
    rep = analyze_session(".", "s", [HostFile("snap", path, Path(path).stat().st_size, 0, "snapshot")])
    return display(rep)["hosts"][0]["device_words"]


@pytest.mark.parametrize(("how", "word"), [("npu", "NPU"), ("unnamed", "device")])
def test_an_npus_and_an_unnamed_builds_labels(tmp_path: Path, how: str, word: str) -> None:
    doc = ms.as_npu(ms.training_iterations().doc, stream=ms.NPU_STREAM)
    words = _shown(tmp_path, doc if how == "npu" else ms.as_recorded(doc, stacks="python"))
    assert words["device"] == word and words["devices"] == f"{word}s"
    assert words["comparison"] == f"Per-{word} comparison"
    assert words["skew"] == f"Launch skew vs. first {word}"
    assert not [v for v in words.values() if "GPU" in v]


def test_control_cuda_sends_nvidias_labels(tmp_path: Path) -> None:
    assert _shown(tmp_path, ms.training_iterations().doc) == DEVICE_LABELS
