"""Autocast's cast cache told from a forward's kept tensors in a snapshot recorded without stacks (issue #37 class 5,
h37-castcache; h37-snapann's left (a)).

Under autocast each fp32 weight's 16-bit copy is made at its first use and held until the region exits.  With frames
the reader names it (``at::autocast::cached_cast``, or the Python-frames reading of ``_cast_copies``); without any
(``_record_memory_history(context=None)``) no allocation reads as the forward's, and the climb to the peak
(``metrics.memory._climb``) counted the cache as tensors kept for a backward: ``wild/snapshot_nograd_bf16`` and the
three ``wild/snapshot_autocast_cache_ctx*`` stripped of stacks were told "A forward pass keeps its tensors for a
backward that never runs ... run under inference mode" (warning) -- a no-grad forward whose frames read 231 MiB /
6.3 GiB of cache.  The reader now books, without stacks, one run of frees whose blocks are half a held weight each,
no more of a size than weights (one copy per weight), most outliving later blocks, and adding up to at least half
the 16-bit copies of the weights held before the history: exactly the frames' cache on the three CS336 2.7B files,
85 of the 86 copies on ``snapshot_nograd_bf16`` (one 0.75 MiB copy's weight was made in the history).

Controls: the stackless no-grad forwards (``forward_no_grad_cs336``, ``snapshot_inference_gpt``: 170 runs of 2-6
half-weight tensors, 3% of the weights' copies at most), the stackless training snapshots (``forward_autograd_cs336``,
``windows_training_cs336``), every file with its stacks, and generated forms with truth by construction."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import to_trace
from tests.support.paths import FIXTURES
from tests.support.snapshot_report import report

MiB = 2**20
WILD = FIXTURES / "wild"
NOGRAD = WILD / "snapshot_nograd_bf16" / "memory_forward_bf16_128.pickle"
CACHE = "cast_cache_share"


def _doc(path: Path) -> dict:
    data = path.read_bytes()
    return pickle.loads(gzip.decompress(data) if path.suffix == ".gz" else data)


def _ctx(ctx: int) -> Path:
    return next((WILD / f"snapshot_autocast_cache_ctx{ctx}").glob("*.pickle.gz"))


def _booked(doc: dict):
    """The reader's events booked as autocast's copies (``MemoryEvents.cast_copy``) and their bytes."""
    me = to_trace(doc, "h", "snap.pickle", 0).memory[0]
    cast = me.cast_copy.nonzero()[0]
    return cast.tolist(), int(me.delta[cast].sum())


def _cache_finding(rep) -> list:
    return [f for f in rep.findings if f.metric is not None and f.metric.id == CACHE]


def _kept_warning(rep) -> list:
    return [f for f in rep.findings if f.id.startswith("activation_memory") and f.severity != "info"]


@pytest.mark.parametrize("ctx", [128, 256, 512])
def test_cs336_forwards_without_stacks_hold_the_frames_cache_not_a_kept_forward(tmp_path: Path, ctx: int) -> None:
    """The very events the frames name (225 copies, 6.30 GiB over the history); held with the weights at the peak;
    no "kept for a backward"."""
    doc = _doc(_ctx(ctx))
    bare = ms.as_recorded(doc, context=None)
    framed, got = _booked(doc), _booked(bare)
    assert got == framed and len(got[0]) == 225 and got[1] >= 6400 * MiB
    rep = report(tmp_path, bare, "bare")
    assert not _kept_warning(rep), [(f.id, f.severity, f.title) for f in rep.findings]
    framed_bd, bare_bd = report(tmp_path, doc, "framed").gpus[0].memory["breakdown"], rep.gpus[0].memory["breakdown"]
    assert bare_bd["held"] == framed_bd["held"] >= 12.8 * 2**30  # the weights
    assert bare_bd["casts"] == framed_bd["casts"] >= 6.0 * 2**30  # the cache, this pass's: apart


@pytest.mark.skipif(not NOGRAD.is_file(), reason="wild fixture missing")
def test_the_no_grad_benchmark_without_stacks_names_its_cache_not_inference_mode(tmp_path: Path) -> None:
    """Inference (low, h37-snapann): the cache's info finding, as with its frames (231 MiB, 86 copies live at the
    peak there; 85 here: one 0.75 MiB copy's weight was made inside the history), where main warned of a forward kept
    for a backward and said to run under inference mode."""
    doc = _doc(NOGRAD)
    framed = _cache_finding(report(tmp_path, doc, "framed"))[0].metric.detail
    rep = report(tmp_path, ms.as_recorded(doc, context=None), "bare")
    assert rep.job["kind"] == "inference"
    assert not _kept_warning(rep), [(f.id, f.severity, f.title) for f in rep.findings]
    got = _cache_finding(rep)
    assert len(got) == 1 and got[0].severity == "info"
    d = got[0].metric.detail
    assert framed["cache_bytes"] - MiB <= d["cache_bytes"] <= framed["cache_bytes"]
    assert framed["cache_bytes"] >= 230 * MiB


def test_a_generated_autocast_forward_without_stacks_books_its_copies() -> None:
    """Truth by construction: 3 passes, each its own autocast region, each making 24 weights' copies freed in one
    run at the region's exit (``cast_bytes`` a pass): three regions, one copy per weight in each."""
    sc = ms.windows_autocast_forward(passes=3)
    got = _booked(ms.as_recorded(sc.doc, context=None))
    assert got[1] == 3 * sc.truth["cast_bytes"] > 0 and len(got[0]) == 3 * 24 and got == _booked(sc.doc)


@pytest.mark.parametrize("name", ["forward_no_grad_cs336.pickle.gz", "forward_autograd_cs336.pickle.gz",
                                  "windows_training_cs336.pickle.gz"])
def test_stackless_forwards_and_training_book_no_cache(name: str) -> None:
    """Controls: a no-grad forward's half-weight tensors freed in pairs (3% of the weights' copies at most), and
    training runs (the autograd forward's cache, framed 770 copies, fails one copy per weight in its run: nothing
    booked, as on main; windows_training's pairs of 32 KiB log-softmax blocks are no weights' copies)."""
    assert _booked(ms.as_recorded(_doc(FIXTURES / "snapshots_wild" / name), context=None)) == ([], 0)


@pytest.mark.skipif(not (WILD / "snapshot_inference_gpt").is_dir(), reason="wild fixture missing")
def test_stackless_gpt2_inference_books_no_cache() -> None:
    path = next((WILD / "snapshot_inference_gpt").glob("*.pickle"))
    assert _booked(ms.as_recorded(_doc(path), context=None)) == ([], 0)


@pytest.mark.parametrize("sc", [ms.windows_autocast_forward(cast=False), ms.training_iterations(mib=32)],
                         ids=["no-cast", "training-half-weight-activations"])
def test_generated_histories_without_a_cache_book_none_stackless(sc: ms.Scenario) -> None:
    assert _booked(ms.as_recorded(sc.doc, context=None)) == ([], 0)


def test_copies_of_weights_made_inside_the_history_are_booked_without_stacks(tmp_path: Path) -> None:
    """h37-stackless2 (h37-castcache's left (a)): ``forward_only(cast_of_weights=True)`` -- the model's 24 fp32
    weights loaded inside the history (``context=None`` records no ``Module._apply`` frame to mark them), each cast
    its 16-bit copy, half its bytes, by construction.  Main looked for weights only before the history: nothing
    booked, and the no-grad forward was told its casts were "kept for a backward that never runs" (warning).  A block
    live at the dump and made before the copies can be the weight one copies: the same 48 copies (2 regions) as the
    frames book, the cache's info finding, no warning."""
    sc = ms.forward_only(grad=False, cast_mib=32, cast_of_weights=True)
    bare = ms.as_recorded(sc.doc, context=None)
    got = _booked(bare)
    assert got == _booked(sc.doc) and len(got[0]) == 48 and got[1] == 2 * sc.truth["cast_bytes"]
    rep = report(tmp_path, bare, "bare")
    assert not _kept_warning(rep), [(f.id, f.severity, f.title) for f in rep.findings]
    cache = _cache_finding(rep)
    assert len(cache) == 1 and cache[0].metric.detail["cache_bytes"] == sc.truth["cast_bytes"]


def test_casts_that_are_half_no_weight_are_no_cache_without_stacks(tmp_path: Path) -> None:
    """Control (both): 32 MiB casts beside 256 MiB weights -- no weight's 16-bit copy, by their bytes; only the cast's
    frame (``at::autocast::cached_cast``) names them, so without stacks no cast cache is booked or reported."""
    bare = ms.as_recorded(ms.forward_only(grad=False, cast_mib=32).doc, context=None)
    assert _booked(bare) == ([], 0)
    assert not _cache_finding(report(tmp_path, bare, "bare"))


def test_a_kept_graph_beside_copies_of_weights_made_in_the_history_still_warns(tmp_path: Path) -> None:
    """The same model with autograd on keeps every forward tensor to the pass's end: the copies are booked as the
    frames book them (main: none), and the tensors kept for a backward that never runs are still the warning (as on
    main: the control)."""
    sc = ms.forward_only(grad=True, cast_mib=32, cast_of_weights=True)
    bare = ms.as_recorded(sc.doc, context=None)
    assert _booked(bare) == _booked(sc.doc)
    assert _kept_warning(report(tmp_path, bare, "bare"))
