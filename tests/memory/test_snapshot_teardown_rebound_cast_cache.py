"""A forward loop with autograd on that rebinds its output, under autocast, recorded with Python frames only and
torn down before its dump, keeps its cast-cache note (issue #37; sessions 57-59 *Left*: "a Python-only autograd
forward under autocast torn down loses its cast-cache note").

Why it was lost (``formats.snapshot.reader._torn_down``): the weights of a torn-down history are read off the frees
after its last allocation of blocks made before it -- but a pass that rebinds ``logits = model(x)`` frees the
previous pass's graph there too, and that graph (activations and autocast's copies, made before the recording) was
taken for weights: 1,564 "weights" beside 331, every one's copy size only bounded, so the forward's activations
matched their halves and the run of copies failed the one-copy-per-weight bound.  The previous graph is what this pass
allocates again, size for size (``reader._twins``).

Real: ``tests/fixtures/wild/snapshot_forward_rebound_bf16_autograd`` (Hyperion-shuo/assignment2-systems, MIT), as
``_record_memory_history(stacks="python")`` writes it (``synthetic.memsnapshot.as_recorded``), then torn down
(``synthetic.memsnapshot.torn_down``): its cache is the bf16 copies of the "large" LM's linear weights,
36 x (4 x 1280^2 + 3 x 1280 x 5120) x 2 + 10,000 x 1280 x 2 = 1,913,036,800 bytes in 253 blocks, as untorn (read by
hand in h37-snapforms: ``test_snapshot_forward_rebound``).  By construction: ``windows_autocast_forward(grad=True,
passes=2)`` -- 24 fp32 weights of 16 MiB, one recorded pass keeping its 8 MiB copies and outputs for a backward, the
first pass's graph made before the recording and freed at the rebinding -- 24 copies, 192 MiB.  Control: the same
histories untorn."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
BF16 = WILD / "snapshot_forward_rebound_bf16_autograd" / "memory_snapshot_large_cl128_fw_with_grad_bf16.pickle.gz"
LARGE_CACHE = 36 * (4 * 1280 * 1280 + 3 * 1280 * 5120) * 2 + 10_000 * 1280 * 2


def _cache(tmp_path: Path, doc: dict) -> dict | None:
    path = Path(ms.write(str(tmp_path / "snap.pickle"), doc))
    rep = analyze_host(HostFile("snap", str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    got = [f for f in rep.findings if f.id.endswith("#cast_cache_share")]
    return got[0].metric.detail if got else None


def _real() -> dict:
    with gzip.open(BF16, "rb") as f:
        return ms.as_recorded(pickle.load(f), stacks="python")


def test_real_rebound_autograd_forward_torn_down_keeps_its_cache(tmp_path: Path) -> None:
    got = _cache(tmp_path, ms.torn_down(_real()))
    assert got is not None
    assert (got["cache_bytes"], got["cache_blocks"]) == (LARGE_CACHE, 253)


def test_generated_rebound_autograd_forward_torn_down_keeps_its_cache(tmp_path: Path) -> None:
    sc = ms.windows_autocast_forward(grad=True, passes=2)  # Python frames only, as Windows records
    got = _cache(tmp_path, ms.torn_down(sc.doc))
    assert got is not None
    assert (got["cache_bytes"], got["cache_blocks"]) == (sc.truth["cast_bytes"], 24)


def test_control_untorn_histories_read_as_before(tmp_path: Path) -> None:
    sc = ms.windows_autocast_forward(grad=True, passes=2)
    assert _cache(tmp_path, sc.doc)["cache_bytes"] == sc.truth["cast_bytes"]
    # in the blocks that hold it (h37-snap64): three copies live at the dump in blocks the allocator left unsplit, the
    # dump's ``size`` over its ``requested_size`` (2 x 3,932,160 for 3,276,800 B; 14,155,776 for 13,107,200 B); torn
    # down, those blocks are freed before the dump, which no longer shows them: their requests rounded, LARGE_CACHE
    assert _cache(tmp_path, _real())["cache_bytes"] == LARGE_CACHE + 2 * (3_932_160 - 3_276_800) + (14_155_776 - 13_107_200)
