"""A memory snapshot whose allocator history kept only its last ``max_entries`` events says so, instead of reporting
the kept window's peak as the job's.

Real snapshot: cherryni2022/cs336-assignment2-system ``memory_nvtx_large_128_backward.pickle`` (``max_entries=10000``):
10 AdamW steps annotated over 5.8 s, 10,000 events kept of the last 128 ms (the last optimizer step only); main called
it a healthy training snapshot with a 15.1 GiB peak and no activations.  Truth here by construction
(``synthetic.memsnapshot.ring_buffer_training``)."""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot
from tb_gpu_advisor.formats.snapshot import reader
from tb_gpu_advisor import rules
from tb_gpu_advisor.rules.capture_quality import NO_CAPACITY_METRIC
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _findings(tmp_path: Path, sc: memsnapshot.Scenario):
    p = memsnapshot.write(str(tmp_path / "snap.pickle"), sc.doc)
    m = host_metrics(reader.read_trace(p))
    # the note on a peak of unknown capacity (``capture_quality.NO_CAPACITY_METRIC``, session 71) is not this file's
    return m, [f for f in rules.evaluate(m) if f.rule == "capture_quality" and f.metric.id != NO_CAPACITY_METRIC]


def test_a_history_cut_by_its_ring_buffer_is_said(tmp_path):
    sc = memsnapshot.ring_buffer_training(iterations=6, max_entries=60)
    assert sc.truth["cut"]
    m, found = _findings(tmp_path, sc)
    assert m.memory.history_cut is not None and m.memory.history_cut[0] == sc.truth["kept"]
    assert len(found) == 1 and found[0].severity == "warning"
    assert f"last {sc.truth['kept']:,} events" in found[0].summary
    assert any("max_entries" in (a.snippet or "") for a in found[0].actions)


def test_a_whole_history_is_not(tmp_path):
    """The control: the same loop with every event kept (passes on main too)."""
    sc = memsnapshot.ring_buffer_training(iterations=6, max_entries=None)
    assert not sc.truth["cut"]
    m, found = _findings(tmp_path, sc)
    assert not found and getattr(m.memory, "history_cut", None) is None
