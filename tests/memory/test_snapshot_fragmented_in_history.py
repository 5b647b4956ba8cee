"""A real snapshot whose reserve grows in its history for a request no free block fits: the first real positive
control for ``memory_fragmentation``'s in-history case (h37-survey60; h37-survey56's *Left* 3; issue #37 class 5).

Zhangkuns/Standford_CS336_LanguageModelingfromScratch (MIT, ``wild/snapshot_fragmented_in_history``, its home paths
redacted): CS336's ``benchmark_memory.py --mode fwd`` at 256 tokens -- five ``no_grad`` passes recorded after its
warm-up, ``synchronize()`` and ``empty_cache()``.  Read by hand from the pickle (the history replayed over the dump's
blocks): 432 MiB reserved and 408.4 MiB allocated before the history; the first pass asks for four 128 MiB blocks (the
attention scores) and the allocator makes a 128 MiB segment for each.  Three of them grow the reserve because the
large pool's free bytes (126.4 MiB) are short of the request; the fourth, after the peak, is made while the large
pool holds 254.4 MiB free in blocks of at most 112 MiB: no free block fits, so the reserve reaches 944 MiB beside a
689.0 MiB allocated peak -- 255 MiB (27.0%) reserved beyond anything allocated at once.  The other kept snapshots are
controls: whole free segments (``snapshot_attn_sweep_cache``) and segment rounding (``snapshot_attn_sweep_rounding``).
These pass on main too: they pin a reading that was right, on the first real file that shows it.
"""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

FWD_256 = FIXTURES / "wild" / "snapshot_fragmented_in_history" / "fwd_256.pickle.gz"
MIB = 1 << 20
SMALL_SEGMENT = 2 * MIB  # the small pool's segment: no large request is served there


def _replay(path: Path) -> dict:
    """The history replayed by hand: the live blocks before it (the dump's, less what the history made, plus what it
    freed), then each large segment made -- the request it served, the large pool's free bytes and its largest free
    gap then -- and the most allocated at once and reserved at most."""
    doc = pickle.loads(gzip.decompress(path.read_bytes()))
    events = doc["device_traces"][0]
    live = {}
    for seg in doc["segments"]:
        addr = seg["address"]
        for block in seg["blocks"]:
            if block["state"].startswith("active"):
                live[addr] = block["size"]
            addr += block["size"]
    for e in reversed(events):
        if e["action"] == "alloc":
            live.pop(e["addr"], None)
        elif e["action"] == "free_completed":
            live[e["addr"]] = e["size"]
    made_in_history = {e["addr"] for e in events if e["action"] == "segment_alloc"}
    segments = {s["address"]: s["total_size"] for s in doc["segments"] if s["address"] not in made_in_history}
    made, peak, reserved_max = [], sum(live.values()), sum(segments.values())
    for i, e in enumerate(events):
        if e["action"] == "segment_alloc":
            if e["size"] != SMALL_SEGMENT:
                request = next(x["size"] for x in events[i + 1:] if x["action"] == "alloc")
                gaps = _free_gaps(segments, live)
                made.append((request, sum(gaps), max(gaps, default=0)))
            segments[e["addr"]] = e["size"]
            reserved_max = max(reserved_max, sum(segments.values()))
        elif e["action"] == "alloc":
            live[e["addr"]] = e["size"]
            peak = max(peak, sum(live.values()))
        elif e["action"] == "free_completed":
            live.pop(e["addr"], None)
    return {"made": made, "peak": peak, "reserved_max": reserved_max}


def _free_gaps(segments: dict[int, int], live: dict[int, int]) -> list[int]:
    """The free stretches of the large pool's segments between their live blocks."""
    gaps = []
    for start, size in segments.items():
        if size == SMALL_SEGMENT:
            continue
        at = start
        for addr, n in sorted((a, n) for a, n in live.items() if start <= a < start + size):
            if addr > at:
                gaps.append(addr - at)
            at = max(at, addr + n)
        if start + size > at:
            gaps.append(start + size - at)
    return gaps


def test_the_files_own_truth_a_segment_made_while_free_bytes_held_the_request() -> None:
    """By hand: four 128 MiB segments, three for requests the large pool's free bytes could not hold, one for a
    request they could but no free block fitted; 944 MiB reserved at most beside a 689 MiB allocated peak."""
    truth = _replay(FWD_256)
    assert [r for r, _, _ in truth["made"]] == [128 * MIB] * 4
    split = [(free, largest) for request, free, largest in truth["made"] if free >= request > largest]
    assert len(split) == 1 and split[0][1] == 112 * MIB, truth["made"]
    assert (truth["reserved_max"], round(truth["peak"] / MIB, 1)) == (944 * MIB, 689.0)


def test_fragmentation_is_named_with_the_reserve_beyond_the_allocated_peak() -> None:
    """The finding reads the same two numbers as the replay, as info (the GPU's capacity is not in a snapshot), and
    saves their difference: expandable segments let freed space serve a request of any size."""
    truth = _replay(FWD_256)
    rep = analyze_host(HostFile("fwd_256", str(FWD_256), FWD_256.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    frag = [f for f in rep.findings if f.id.startswith("memory_fragmentation")]
    assert len(frag) == 1, [f.id for f in rep.findings]
    f = frag[0]
    assert f.severity == "info"
    assert (f.metric.detail["peak_reserved_bytes"], f.metric.detail["peak_allocated_bytes"]) == \
        (truth["reserved_max"], truth["peak"])
    assert f.saving_bytes == truth["reserved_max"] - truth["peak"]
