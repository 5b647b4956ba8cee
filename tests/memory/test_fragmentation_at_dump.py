"""A snapshot without allocation history holds only the state at the dump: what was ever allocated at once is not in
it, so the reserved-but-free bytes at the dump are no evidence of fragmentation -- they may be the cache of an earlier,
higher use.  Issue #37 survey h37-survey4a: Maphsge4/select_n ``snapshot.pickle`` @dec166a (no licence: read, not
kept) holds 5.18 GiB reserved and 0.51 GiB allocated on GPU 1 and an empty history; 4.62 GiB of the gap are wholly free
segments, one of them a single 3.07 GiB block that fits any request up to that size (read by hand).  Main said "never
has more than 520 MiB allocated at once ... sit in split, cached blocks no later request fits".  Here by construction
from the generator's fragmented scenario, with and without its history.
"""

from __future__ import annotations

import copy
from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _rules(tmp_path: Path, doc: dict, name: str) -> list[str]:
    path = ms.write(str(tmp_path / f"{name}.pickle"), doc)
    rep = analyze_host(HostFile(name, path, Path(path).stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return [f.rule for f in rep.findings]


def test_the_gap_at_the_dump_alone_is_not_called_fragmentation(tmp_path: Path):
    doc = copy.deepcopy(ms.fragmented().doc)
    doc["device_traces"] = [[] for _ in doc["device_traces"]]
    assert "memory_fragmentation" not in _rules(tmp_path, doc, "state_only")


def test_with_its_history_the_gap_is_the_cache_of_the_earlier_peak(tmp_path: Path):
    """The same allocator with its history (its failed request dropped): 6 GiB were allocated at once before three
    blocks of four were freed, so the reserved bytes never exceeded the allocated peak -- no fragmentation, which is
    what the state at the dump alone could not tell.  (Fragmentation with history still fires:
    ``test_memory_scenarios.py::test_fragmented_gets_expandable_segments``.)"""
    doc = copy.deepcopy(ms.fragmented().doc)
    doc["device_traces"] = [[e for e in tr if e["action"] != "oom"] for tr in doc["device_traces"]]
    assert any(doc["device_traces"])
    assert "memory_fragmentation" not in _rules(tmp_path, doc, "with_history")


def test_a_history_that_never_rises_above_its_start_does_not_know_the_peak(tmp_path: Path):
    """Recording started just before the dump: the history holds one free, so the most ever allocated at once was
    reached before it and the gap is no evidence.  jogregoire/How-Diffusion-Models-Work ``my_snapshot.pickle``
    @509f225 (no licence: read, not kept; a Windows DDPM sampler, 13.8 MiB allocated in 32 MiB reserved -- one
    20 MiB segment half used, three empty 2 MiB small segments -- and a history of one 12 KiB free): main called
    18.2 MiB "split, cached blocks no later request fits".  Here the generator's fragmented allocator with the same
    kind of history: one free of a block the history never allocated."""
    doc = copy.deepcopy(ms.fragmented().doc)
    t0 = min(e["time_us"] for tr in doc["device_traces"] for e in tr)
    doc["device_traces"] = [[{"action": "free_completed", "addr": 1 << 40, "size": 12288, "stream": 0,
                              "time_us": t0, "frames": []}]]
    assert "memory_fragmentation" not in _rules(tmp_path, doc, "one_free")
