"""A forward loop with autograd on that rebinds its output under autocast, recorded with Python frames only (Windows,
``stacks="python"``) over two or more passes, keeps its cast-cache note (h37-snap60's *Left* 4; issue #37 class 5).

Why it was lost (``formats.snapshot.reader._cast_copies``): a copy is told by one run of frees that releases, one copy
per weight, blocks half a weight's size.  ``logits = model(x)`` frees the previous pass's graph -- its autocast copies
among them -- only once the next pass has returned: after the history's last allocation, in the same run as the last
pass's graph (live at the dump, or freed by the script's teardown).  Two passes' copies in one run broke the
one-copy-per-weight bound, so none was booked.  A model's passes make the same copies in the same order
(``reader._passes_copies``: the run cut into equal parts that each hold the same sizes).

By construction: ``synthetic.memsnapshot.windows_autocast_forward(grad=True, passes=P)`` -- 24 fp32 weights of
16 MiB, each pass keeping its 24 bf16 copies of 8 MiB and its outputs in its graph until the next pass returns; the
first pass made before the recording.  At the peak (the last two graphs live) the history's copies are two passes'
(48 blocks, 384 MiB) from P = 3 on; one pass's (24, 192 MiB) at P = 2.  Fails on base for P = 3 and 4, untorn and
torn down; P = 2 is the control (the real file with one recorded pass is
``test_snapshot_teardown_rebound_cast_cache.py``'s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_report import report


def _cache(tmp_path: Path, doc: dict) -> dict | None:
    got = [f for f in report(tmp_path, doc).findings if f.id.endswith("#cast_cache_share")]
    return got[0].metric.detail if got else None


@pytest.mark.parametrize("passes", [3, 4])
@pytest.mark.parametrize("torn", [False, True])
def test_rebinding_passes_keep_their_cache(tmp_path: Path, passes: int, torn: bool) -> None:
    sc = ms.windows_autocast_forward(grad=True, passes=passes)
    got = _cache(tmp_path, ms.torn_down(sc.doc) if torn else sc.doc)
    assert got is not None
    assert got["cache_bytes"] == sc.truth["cast_peak_bytes"] == 2 * sc.truth["cast_bytes"]
    assert got["cache_blocks"] == 48


def test_control_one_recorded_pass(tmp_path: Path) -> None:
    sc = ms.windows_autocast_forward(grad=True, passes=2)
    got = _cache(tmp_path, sc.doc)
    assert (got["cache_bytes"], got["cache_blocks"]) == (sc.truth["cast_peak_bytes"], 24)


def test_control_outputs_sized_as_copies_stay_activations(tmp_path: Path) -> None:
    """A forward with no cast whose outputs are half a weight's size, kept by each pass's graph: no cache."""
    sc = ms.windows_autocast_forward(grad=True, passes=3, cast=False, act_mib=8)
    assert _cache(tmp_path, sc.doc) is None
