"""A snapshot whose history stops before its dump (survey h37-survey17).  drisspg/transformer_nuggets keeps
``test/data/mini_snapshot.pickle`` (BSD-3-Clause; kept: ``snapshots_wild/mini_snapshot_cut.pickle``): a flex-attention
benchmark's snapshot cut to its first 50 events and re-dumped with its history first (``{"device_traces": ...,
"segments": ...}``).  The history converts a model (12 x 24 / 8 MiB, ``module.py convert``), makes a 128 MiB input
and compiles flex attention's block mask -- 384 MiB allocated and never freed -- while the segments say nothing is
allocated at the dump (14 segments, 402 MiB reserved, every block inactive).

Main refused the file ("a pickle, but no memory snapshot": the history's key opened it), and counted back from the
dump's empty state, its totals went negative (more freed than ever allocated): peak 32 kiB, and a
``memory_fragmentation`` note claimed 402 MiB (100%) sat in blocks no request fits.  The truth, replayed forward
here by hand from the file: 384.1 MiB at the history's end, 402 MiB reserved; a history that does not reach the dump
is damage, said so, never healthy."""

from __future__ import annotations

import pickle
from pathlib import Path

from tb_gpu_advisor.formats.snapshot.layout import sniff
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

CUT = FIXTURES / "snapshots_wild" / "mini_snapshot_cut.pickle"


class _PlainData(pickle.Unpickler):
    """The file's plain data only: any global refused (the test's own reading, not the Advisor's unpickler)."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"global {module}.{name}")


def _replayed(path: Path) -> tuple[int, int, int]:
    """(peak allocated, allocated at the history's end, allocated at the dump), forward from an empty allocator, in
    the allocator's blocks: an entry records the request, its block is it rounded up to 512 bytes (the dump holds no
    block the history made; h37-units63: two 4 B, two 16,640 B and three 256 B requests)."""
    with path.open("rb") as f:
        doc = _PlainData(f).load()
    now = peak = 0
    for e in doc["device_traces"][0]:
        block = max(512, -(-e["size"] // 512) * 512)
        now += block if e["action"] == "alloc" else -block if e["action"] == "free_completed" else 0
        peak = max(peak, now)
    dump = sum(b["size"] for s in doc["segments"] for b in s["blocks"] if b["state"] == "active_allocated")
    return peak, now, dump


def test_a_snapshot_redumped_with_its_history_first_is_still_a_snapshot():
    assert sniff(str(CUT)) is None


def test_a_history_that_stops_before_the_dump_is_damage_with_its_own_totals():
    peak, end, dump = _replayed(CUT)
    assert end > dump == 0  # by hand: the history leaves live what the dump does not hold
    rep = analyze_host(HostFile("mini_snapshot", str(CUT), CUT.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    mem = rep.gpus[0].memory
    assert mem["peak_allocated_bytes"] == peak, mem
    assert mem["peak_allocated_bytes"] <= mem["peak_reserved_bytes"] == 402 << 20, mem
    assert any("stops before the dump" in d for d in rep.damage), rep.damage
    assert "memory_fragmentation" not in {f.rule for f in rep.findings}  # (was f.rule_id: no findings on base)
