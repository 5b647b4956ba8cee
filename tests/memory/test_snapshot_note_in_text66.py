"""The text and markdown reports say what a GPU's memory numbers are of, as the tab does (h37-huntx66, issue #37
item 6, class 5: a snapshot judged on its own).

A GPU's memory note (``GpuMemory.note``: a history that began late or a full ring buffer, deltas only, parts read
from the allocation pattern) was printed by the tab's memory view alone; the CLI's text and markdown showed the peak
table without it.  Real: AntixK/ONNX-TensorRT-Dual-Serve ``assets/gpu_mem_snapshot.pickle`` (Apache-2.0, kept in
``wild/snapshot_tts_server_ring``): a LitServe TTS server's predict, recorded with
``_record_memory_history(max_entries=1000)`` -- the ring buffer full, its 1,000 events the last 11.9 ms of the
request, 5 blocks freed that it never saw made.  On main the text read "255 MiB ... at 7.06 ms" and nothing said the
request's start was lost (the history-cut warning needs the profiler's annotations, which this file has none of).

Truth by construction: ``synthetic.memsnapshot.ring_buffer_inference`` (no_grad forward passes, the last 100 events
kept, no annotation).  Controls: the same passes with every event kept say nothing; the tab's peak-table notes leave
the GPU's note to its memory view (said once there); a state without history is left to the no-history finding."""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.report.render import memory_notes, to_markdown, to_text
from tb_gpu_advisor.report.view import display
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES

TTS = FIXTURES / "wild" / "snapshot_tts_server_ring" / "gpu_mem_snapshot.pickle"


def _report(path: Path):  # noqa: ANN202 - a Report
    return analyze_session(".", "s", [HostFile("snap", str(path), path.stat().st_size, 0, "snapshot")])


def test_the_real_servers_full_ring_buffer_is_said_under_the_peak_table() -> None:
    rep = _report(TTS)
    for text in (to_text(rep), to_markdown(rep)):
        flat = " ".join(text.split())
        assert "holds exactly 1,000 entries" in flat, flat[:3000]
        assert "_record_memory_history(max_entries=1000)" in flat
    assert rep.hosts[0].job["kind"] == "inference"


def test_a_generated_ring_buffer_of_inference_passes_is_said(tmp_path: Path) -> None:
    sc = ms.ring_buffer_inference(max_entries=100)
    assert sc.truth["cut"] and sc.truth["kept"] == 100 and sc.truth["kind"] == "inference"
    rep = _report(Path(ms.write(str(tmp_path / "ring.pickle"), sc.doc)))
    flat = " ".join(to_text(rep).split())
    assert "holds exactly 100 entries" in flat and "never allocated" in flat


def test_control_the_whole_history_says_nothing(tmp_path: Path) -> None:
    sc = ms.ring_buffer_inference(max_entries=None)
    assert not sc.truth["cut"]
    rep = _report(Path(ms.write(str(tmp_path / "whole.pickle"), sc.doc)))
    assert "never allocated" not in to_text(rep) and memory_notes(rep) == []


def test_control_the_tab_says_it_once_in_the_gpus_memory_view() -> None:
    """The tab's peak-table notes leave the GPU's note out: its memory view prints ``memory.note`` (views.js)."""
    rep = _report(TTS)
    assert rep.hosts[0].gpus[0].memory["note"]
    assert not any("never allocated" in n for n in display(rep)["memory"]["notes"])


def test_control_a_state_without_history_is_left_to_its_finding(tmp_path: Path) -> None:
    sc = ms.state_only({"weights": 512 * ms.MiB})
    rep = _report(Path(ms.write(str(tmp_path / "state.pickle"), sc.doc)))
    assert rep.hosts[0].gpus[0].memory["note"] and memory_notes(rep) == []
