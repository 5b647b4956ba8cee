"""``torch.cuda.memory_snapshot()`` -- the public call, without ``_record_memory_history`` -- returns the segments
alone, a list; pickled, that is what people keep (issue #37 survey h37-survey-torch: Muduard/LayoutEditing's
``memory_snapshot.pkl``, no licence: checked, not kept -- 255 segments on GPU 1, 3.40 GiB reserved and 3.12 GiB in
allocated blocks, summed by hand).  Main refused it: "a pickle, but no memory snapshot".  It is read as the state at
the dump; here by construction from the generator's segments.
"""

from __future__ import annotations

import pickle
from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.snapshot.layout import sniff
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def test_a_pickled_list_of_segments_is_read_as_the_state_at_the_dump(tmp_path: Path):
    sc = ms.oom_activations()
    segments = sc.doc["segments"]
    path = tmp_path / "run1" / "memory_snapshot.pkl"
    path.parent.mkdir()
    path.write_bytes(pickle.dumps(segments, protocol=4))
    assert sniff(str(path)) is None
    assert [h.format for s in discover(str(tmp_path)) for h in s.hosts] == ["snapshot"]
    reserved = sum(s["total_size"] for s in segments)
    allocated = sum(b["size"] for s in segments for b in s["blocks"] if b["state"] == "active_allocated")
    rep = analyze_host(HostFile("memory_snapshot", str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    mem = rep.gpus[0].memory
    assert mem["peak_reserved_bytes"] == reserved and mem["peak_allocated_bytes"] == allocated, mem


def test_a_pickled_list_of_anything_else_is_still_no_snapshot(tmp_path: Path):
    path = tmp_path / "other.pkl"
    path.write_bytes(pickle.dumps([{"name": "x", "size": 1}], protocol=4))
    assert sniff(str(path)) is not None
