"""Autocast's cast cache is read the same in a snapshot whose script freed its model before the dump (a teardown:
``del model`` after the loop) as in the same history without it (issue #37; session 56's h37-wild56m *Left* 4,
session 55 lead's *Left* 2).

Why it was missed: a cast copy is told by the weight it copies -- half that weight's bytes
(``formats.snapshot.reader._cast_copies``, ``_bare_cast_copies``) -- and the weights were read off the blocks live
at the dump alone.  After a teardown none is live, so the cache (one copy per weight, held to the region's exit) read
as a forward's activations: the stackless ``snapshot_autocast_cache_ctx128`` torn down lost its
``cast_cache_share`` note, the bf16 no-grad forward recorded with Python frames likewise.  The weights are still in
the history: the teardown's frees, after its last allocation, of blocks it never allocated
(``reader._torn_down``), each known by its block's bytes alone (the request any request the block could hold).

Scenarios: the kept real sets and ``synthetic.memsnapshot.windows_autocast_forward``, each torn down by
``synthetic.memsnapshot.torn_down`` (the same history, then every block live at the dump freed: truth by
construction, the cache is the same).  Control: the histories as recorded (no teardown) read as before."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
CACHE = "cast_cache_share"


def _real(folder: str, stacks: str = "all") -> dict:
    path = next((WILD / folder).glob("*.pickle*"))
    with (gzip.open if path.suffix == ".gz" else open)(path, "rb") as f:
        return ms.as_recorded(pickle.load(f), stacks=stacks)


def _cache_share(tmp_path: Path, doc: dict) -> float | None:
    path = Path(ms.write(str(tmp_path / "snap.pickle"), doc))
    rep = analyze_host(HostFile("snap", str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    found = [f for f in rep.findings if f.id.endswith(f"#{CACHE}")]
    return found[0].metric.value if found else None


CASES = {
    "ctx128_stackless": lambda: _real("snapshot_autocast_cache_ctx128"),
    "bf16_nograd_python": lambda: _real("snapshot_forward_rebound_bf16_nograd", stacks="python"),
    "windows_all": lambda: ms.windows_autocast_forward().doc,
    "windows_python": lambda: ms.as_recorded(ms.windows_autocast_forward().doc, stacks="python"),
    "windows_stackless": lambda: ms.as_recorded(ms.windows_autocast_forward().doc, context=None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_torn_down_history_keeps_its_cast_cache(tmp_path: Path, case: str) -> None:
    doc = CASES[case]()
    kept = _cache_share(tmp_path, doc)
    assert kept is not None
    assert _cache_share(tmp_path, ms.torn_down(doc)) == pytest.approx(kept, rel=0.02)


def test_control_a_model_kept_to_the_dump_reads_as_before(tmp_path: Path) -> None:
    """Control: each history as recorded (its weights live at the dump) books its cache."""
    assert all(_cache_share(tmp_path, CASES[c]()) is not None for c in sorted(CASES))
