"""A forward-only loop with autograd on holds two passes' tensors at its peak (issue #37 class 5, h37-survey52).

Two real snapshots of one program, Hyperion-shuo/assignment2-systems @ee486a41 (MIT, kept in
tests/fixtures/wild/snapshot_forward_rebound_{autograd,nograd}): ``basic_lm_memory_profile.py --size_name large
--context_length 512`` -- CS336's 36-layer LM (d_model 1280, fp32, batch 1), five warm-up passes, then one recorded
pass of ``logits = model(x); loss = cross_entropy(...)``: with autograd on and no backward (``--stage fw_with_grad``),
and under ``torch.no_grad()`` (``--stage fw``).  With autograd on, the previous pass's ``logits`` and ``loss`` keep
its graph until the new pass's ``logits`` replaces them, so the recorded pass's peak holds the weights, the previous
pass's graph (made before the recording began: the history only frees it) and the pass's own graph.  Under no_grad
the same loop peaks at the weights and one layer's tensors.  ``inference_mode`` frees the difference: both graphs.

Main read only the pass's own graph (the tensors whose allocation the history shows) as kept for nothing, and the
previous pass's as weights "held across steps": it advised ``inference_mode`` for half of what it frees, as info.
Truth below is replayed from the files themselves, not read from the Advisor; the generator's
(``synthetic.memsnapshot.forward_rebound``) is by construction."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.kept_reports import snapshot_report as _analyze
from tests.support.paths import FIXTURES
from tests.support.run_report import run_report

AUTOGRAD = FIXTURES / "wild" / "snapshot_forward_rebound_autograd" / "memory_snapshot_large_cl512_fw_with_grad.pickle.gz"
NO_GRAD = FIXTURES / "wild" / "snapshot_forward_rebound_nograd" / "memory_snapshot_large_cl512_fw.pickle.gz"
GIB = 2 ** 30


def _events(path: Path) -> tuple[list[dict], int]:
    """(the allocations and completed frees of GPU 0's history, each with ``block``: the bytes of its block, the bytes
    allocated at the dump).  An entry records the tensor's request, the dump's blocks the allocator's rounding: a
    block still live at the dump is its own ``size``, any other its request rounded up to 512 bytes (h37-units63:
    counting the dump's blocks back with the requests booked a 20,480,000 B logits' unsplit 20 MiB block's 491,520 B
    as held before the recording)."""
    with gzip.open(path, "rb") as f:
        snap = pickle.load(f)
    live = {b["address"]: b["size"] for s in snap["segments"] for b in s["blocks"] if b["state"] == "active_allocated"}
    events = [e for e in snap["device_traces"][0] if e["action"] in ("alloc", "free_completed")]
    last = {e["addr"]: i for i, e in enumerate(events)}
    for i, e in enumerate(events):
        kept = e["action"] == "alloc" and last[e["addr"]] == i and e["addr"] in live
        e["block"] = live[e["addr"]] if kept else max(512, -(-e["size"] // 512) * 512)
    return events, sum(s["allocated_size"] for s in snap["segments"])


def _replay(path: Path) -> tuple[int, int]:
    """(the allocated peak, the bytes of blocks made before the history and freed after its peak), from the file
    alone: the level before the history is the dump's bytes less the history's net change; a block whose first event
    is a free was made before the history began."""
    events, at_dump = _events(path)
    level = at_dump - sum(e["block"] if e["action"] == "alloc" else -e["block"] for e in events)
    peak, peak_i, seen, earlier = level, -1, set(), []
    for i, e in enumerate(events):
        level += e["block"] if e["action"] == "alloc" else -e["block"]
        if e["action"] == "free_completed" and e["addr"] not in seen:
            earlier.append((i, e["size"]))
        seen.add(e["addr"])
        if level > peak:
            peak, peak_i = level, i
    return peak, sum(size for i, size in earlier if i > peak_i)


def _kept_findings(rep) -> list:
    return [f for f in rep.findings if f.id.startswith("activation_memory") and "#" not in f.id]


def test_the_files_own_truth_two_graphs_at_the_peak():
    """The truth, by replay: 11.9 GiB with autograd on, 3.8 GiB under no_grad; 4.09 GiB of the autograd peak are
    blocks made before the recording and freed after the peak (the previous pass's graph)."""
    peak, earlier = _replay(AUTOGRAD)
    nograd_peak, _ = _replay(NO_GRAD)
    assert 11.8 * GIB < peak < 12.0 * GIB
    assert 3.7 * GIB < nograd_peak < 3.9 * GIB
    assert 4.0 * GIB < earlier < 4.2 * GIB


def test_inference_mode_frees_both_passes_graphs_not_one():
    """The saving is what no_grad takes off the peak (the twin's own peak), within 2%: main said ~4.07 GiB of ~8.09."""
    peak, earlier = _replay(AUTOGRAD)
    nograd_peak, _ = _replay(NO_GRAD)
    rep = _analyze(AUTOGRAD)
    kept = _kept_findings(rep)
    assert len(kept) == 1, [f.id for f in rep.findings]
    f = kept[0]
    truth = peak - nograd_peak
    assert abs(f.saving_bytes - truth) <= 0.02 * truth, (f.saving_bytes / GIB, truth / GIB)
    assert abs(f.metric.detail["earlier_pass_bytes"] - earlier) <= 0.01 * earlier
    assert "previous pass" in f.summary


def test_a_graph_freed_unused_is_proof_no_backward_came():
    """The previous pass's graph is freed by the next pass with no backward between: a warning, not the info kept for
    a graph still held at the dump (a backward may follow a dump; none followed that pass)."""
    f = _kept_findings(_analyze(AUTOGRAD))[0]
    assert f.severity == "warning"
    assert "never came" in f.summary


def test_control_the_same_loop_under_no_grad_keeps_nothing():
    """The twin: the same loop under no_grad frees each layer's tensors as it goes; its two blocks held from before
    the recording (the previous logits and loss) repeat no kept graph: no finding."""
    rep = _analyze(NO_GRAD)
    assert not [f.id for f in rep.findings if f.id.startswith("activation_memory")], [f.id for f in rep.findings]
    assert rep.gpus[0].memory["peak_allocated_bytes"] == _replay(NO_GRAD)[0]


@pytest.mark.parametrize("grad", [True, False], ids=["autograd", "no_grad"])
def test_generator_a_rebound_output_keeps_two_graphs_by_construction(tmp_path: Path, grad: bool):
    """The generator's loop (truth by construction): with autograd on, the saving is both graphs less the largest
    tensor and the earlier pass's bytes are one graph; under no_grad no finding."""
    sc = ms.forward_rebound(grad=grad)
    path = Path(ms.write(str(tmp_path / "rank0.pickle"), sc.doc))
    rep = _analyze(path)
    assert rep.gpus[0].memory["peak_allocated_bytes"] == sc.truth["peak_bytes"]
    kept = _kept_findings(rep)
    if not grad:
        assert not kept, [f.id for f in rep.findings]
        return
    assert len(kept) == 1, [f.id for f in rep.findings]
    f = kept[0]
    assert f.saving_bytes == sc.truth["kept_bytes"] + sc.truth["earlier_bytes"] - sc.truth["largest_bytes"]
    assert f.metric.detail["earlier_pass_bytes"] == sc.truth["earlier_bytes"]
    assert f.severity == "warning"


def _weights(path: Path) -> int:
    """The bytes held from before the recording that outlive the history (the weights), from the file alone: the
    level before the history less every block the history frees without having made it."""
    events, at_dump = _events(path)
    level = at_dump - sum(e["size"] if e["action"] == "alloc" else -e["size"] for e in events)
    seen: set[int] = set()
    for e in events:
        if e["action"] == "free_completed" and e["addr"] not in seen:
            level -= e["size"]
        seen.add(e["addr"])
    return level


def test_held_across_steps_is_the_weights_not_the_previous_graph():
    """The table's "held across steps" is the weights the no_grad twin holds (3.73 GiB), not weights and the previous
    pass's graph (main: 7.82 GiB); the activations column holds both graphs, the bytes the finding says are kept --
    one value for one quantity on every surface (h37-survey52's *Left* 3)."""
    from tb_gpu_advisor.common.fmt import gb
    from tb_gpu_advisor.report.render import MEMORY_COLS, memory_rows

    weights = _weights(NO_GRAD)  # the twin's: the same model, nothing kept from its previous pass but logits and loss
    assert 3.7 * GIB < weights < 3.8 * GIB
    rep = _analyze(AUTOGRAD)
    bd = rep.gpus[0].memory["breakdown"]
    assert abs(bd["held"] - weights) <= 0.01 * weights, (bd["held"] / GIB, weights / GIB)
    kept = _kept_findings(rep)[0].metric.detail["kept_bytes"]
    # the kept graph's softmaxes inside CS336's own attention are booked as attention's score matrices, the rest as
    # activations (h37-survey41m): the two together are the bytes the finding says are kept
    assert bd["activations"] + bd["attention_math"] == kept and bd["attention_math"] > 0
    report = run_report(FIXTURES / "wild", "snapshot_forward_rebound_autograd")  # the run the table is drawn from
    row = dict(zip(MEMORY_COLS, memory_rows(report)[0]))
    assert (row["held across steps"], row["activations"]) == (gb(bd["held"]), gb(bd["activations"]))


def test_generator_held_is_the_weights_by_construction(tmp_path: Path):
    """The generator's rebinding loop: held across steps is its weights exactly, the activations both graphs."""
    sc = ms.forward_rebound(grad=True)
    rep = _analyze(Path(ms.write(str(tmp_path / "rank0.pickle"), sc.doc)))
    bd = rep.gpus[0].memory["breakdown"]
    assert bd["held"] == sc.truth["params_bytes"]
    assert bd["activations"] == sc.truth["kept_bytes"] + sc.truth["earlier_bytes"]


BF16 = FIXTURES / "wild" / "snapshot_forward_rebound_bf16_autograd" / "memory_snapshot_large_cl128_fw_with_grad_bf16.pickle.gz"
BF16_NO_GRAD = FIXTURES / "wild" / "snapshot_forward_rebound_bf16_nograd" / "memory_snapshot_large_cl128_fw_bf16.pickle.gz"
#: the bf16 copies of the model's linear weights (``--size_name large``: 36 layers, d_model 1280, d_ff 5120 in three
#: SwiGLU matrices, a 10,000-word head), 2 bytes a value: autocast's cache, one copy per weight
LARGE_CACHE = 36 * (4 * 1280 * 1280 + 3 * 1280 * 5120) * 2 + 10_000 * 1280 * 2


def test_bf16_the_previous_graph_holds_its_casts_and_inference_mode_frees_them():
    """Under bf16 autocast (context 128) the previous pass's graph also holds the casts it saved for its backward:
    of the 2.27 GiB made before the recording and freed after the peak, 0.38 GiB repeat the graph's sizes and 1.89
    GiB the casts'.  Main counted neither the casts nor (0.76 GiB of an 8.28 GiB peak, under the share) the graph: no
    finding but the cast cache's.  The saving is now within 5% of what no_grad takes off the peak, never above it.
    Of the previous pass's casts, the weights' copies are the model's (h37-heldcol2: its activations' casts, in this
    pass's activations' cast sizes, are counted with its graph)."""
    peak, earlier = _replay(BF16)
    nograd_peak, _ = _replay(BF16_NO_GRAD)
    assert 8.2 * GIB < peak < 8.4 * GIB and 5.4 * GIB < nograd_peak < 5.6 * GIB
    kept = _kept_findings(_analyze(BF16))
    assert len(kept) == 1
    f, truth = kept[0], peak - nograd_peak
    assert abs(f.metric.detail["earlier_pass_bytes"] - earlier) <= 0.01 * earlier, (f.metric.detail, earlier / GIB)
    assert f.metric.detail["earlier_pass_cast_bytes"] == LARGE_CACHE
    assert 0.95 * truth <= f.saving_bytes <= truth, (f.saving_bytes / GIB, truth / GIB)
    assert f.severity == "warning" and "autocast casts" in f.summary


def test_bf16_held_across_steps_is_the_weights():
    """The table's held column under autocast: the twin's weights (main: 6.01 GiB, the previous casts and graph
    with them); the previous pass's casts are booked as casts, its graph as activations."""
    rep = _analyze(BF16)
    bd, weights = rep.gpus[0].memory["breakdown"], _weights(BF16_NO_GRAD)
    assert abs(bd["held"] - weights) <= 0.01 * weights, (bd["held"] / GIB, weights / GIB)
    d = _kept_findings(rep)[0].metric.detail
    assert bd["activations"] + bd.get("attention_math", 0) == d["kept_bytes"] - d["earlier_pass_cast_bytes"]


def test_control_bf16_under_no_grad_keeps_nothing_for_a_backward():
    """The twin under no_grad: autocast's cache is its only finding; held is its weights, no earlier pass counted."""
    rep = _analyze(BF16_NO_GRAD)
    assert not _kept_findings(rep), [f.id for f in rep.findings]
    assert rep.gpus[0].memory["breakdown"]["held"] == pytest.approx(_weights(BF16_NO_GRAD), rel=0.01)


# --- under autocast, a weight's 16-bit copy told from an activation's cast (issue #37 class 5, h37-heldcol2) --------
# ``at::autocast::cached_cast`` casts every fp32 input of an op to 16 bits, and keeps (caches until the region exits)
# only the casts of leaves that require grad: the weights.  Every cast runs through it, so its frame names the
# activations' casts too.  Main booked every cast live at a peak as autocast's cache of the weights; with autograd on
# the activations' casts are saved for the backward and freed with the graph -- ``inference_mode`` frees them, the
# cache it does not.  A weight's copy has half its weight's bytes; an activation's cast halves no weight.
#
# Truth: the model's own shapes (the copies of CS336's linear weights, counted from d_model, d_ff and the vocabulary),
# the twins' peaks (the same loop with autograd on and under no_grad: the difference is what a forward kept for a
# backward), and the generator's scenario (``synthetic.memsnapshot.forward_only(input_cast_mib=)``, by construction).

#: notHanmin's forward (``snapshots_wild/forward_autograd_cs336``): CS336's "xl" LM, 48 layers, d_model 1600,
#: d_ff 6400, vocabulary 10,000
XL_CACHE = 48 * (4 * 1600 * 1600 + 3 * 1600 * 6400) * 2 + 10_000 * 1600 * 2
FORWARD_AUTOGRAD = FIXTURES / "snapshots_wild" / "forward_autograd_cs336.pickle.gz"


def _cache_finding(rep):
    got = [f for f in rep.findings if f.id.endswith("#cast_cache_share")]
    assert len(got) == 1, [f.id for f in rep.findings]
    return got[0]


@pytest.mark.parametrize("path,unsplit", [(BF16, 2 * (3_932_160 - 3_276_800) + (14_155_776 - 13_107_200)),
                                          (BF16_NO_GRAD, 0)], ids=["autograd", "no_grad"])
def test_the_cache_is_the_weights_copies_whatever_the_grad_mode(path: Path, unsplit: int):
    """The cast cache at the peak is the bf16 copies of the model's linear weights, 1,913,036,800 bytes, with
    autograd on and under no_grad alike (main: 2,024,652,800 with autograd -- 290 casts of the inputs, the attention
    scores and the logits with them -- and 1,918,156,800 under no_grad, the loss's fp32 cast of the logits) -- in the
    blocks that hold them (h37-snap64): with autograd, three of them live at the dump in blocks the allocator left
    unsplit, the dump's own ``size`` over its ``requested_size`` (two 3,276,800 B copies in 3,932,160 B blocks, one
    13,107,200 B in 14,155,776 B)."""
    assert _cache_finding(_analyze(path)).metric.detail["cache_bytes"] == LARGE_CACHE + unsplit


def test_inference_mode_saving_is_the_twins_difference():
    """What ``inference_mode`` frees is the twins' peak difference, 2.77 GiB: within 2% and never above (main: 2.65
    GiB, short by this pass's activations' casts, 0.10 GiB, read as the weights' cache)."""
    truth = _replay(BF16)[0] - _replay(BF16_NO_GRAD)[0]
    f = _kept_findings(_analyze(BF16))[0]
    assert 0.98 * truth <= f.saving_bytes <= truth, (f.saving_bytes / GIB, truth / GIB)


def test_a_training_forwards_casts_of_activations_are_activations():
    """A training loop's forward dumped before its backward (CS336 "xl", bf16, autograd on): the casts live at the
    peak are the weights' copies (385: 48 x 7 matrices and the head; 48 tiny 512-byte casts share the least block
    with a weight's and stay with them) -- main booked 5.01 GiB, with the inputs' casts (241 x 3.1 MiB), the
    attention's fp32 scores (48 x 25 MiB) and their bf16 casts (48 x 12.5 MiB) among them.  Counted in the blocks
    that hold them (h37-snap64): 68 copies live at the dump in blocks the allocator left unsplit, the dump's own
    ``size`` over its ``requested_size`` -- 44 of 20,480,000 B in 20,971,520 B blocks, 8 in 20,709,376 B, 14 of
    5,120,000 B in 5,611,520 B, 2 in 5,758,976 B: 31,621,120 B over the copies' bytes."""
    bd = _analyze(FORWARD_AUTOGRAD).gpus[0].memory["breakdown"]
    unsplit = 44 * 491_520 + 8 * 229_376 + 14 * 491_520 + 2 * 638_976
    assert XL_CACHE + unsplit <= bd["casts"] <= XL_CACHE + unsplit + 48 * 512, (bd["casts"] / GIB, XL_CACHE / GIB)


@pytest.mark.parametrize("grad", [True, False], ids=["autograd", "no_grad"])
def test_generator_an_inputs_cast_is_no_weights_copy(tmp_path: Path, grad: bool):
    """By construction: each layer casts its weight (cached, half the weight's bytes) and its input (3 MiB, half no
    weight).  The cache is the weights' casts alone; with autograd on the inputs' casts are kept with the layers'
    tensors for the backward, and the finding counts them."""
    sc = ms.forward_only(grad=grad, layers=8, mib=8, passes=2, cast_mib=32, cast_of_weights=True, input_cast_mib=3)
    rep = _analyze(Path(ms.write(str(tmp_path / "rank0.pickle"), sc.doc)))
    assert rep.gpus[0].memory["breakdown"]["casts"] == sc.truth["cast_bytes"]
    assert _cache_finding(rep).metric.detail["cache_bytes"] == sc.truth["cast_bytes"]
    kept = _kept_findings(rep)
    if grad:
        assert [f.metric.detail["kept_bytes"] for f in kept] == [sc.truth["kept_bytes"]]
    else:
        assert not kept, [f.id for f in rep.findings]


def test_control_casts_that_halve_no_weight_in_evidence_stay_the_cache(tmp_path: Path):
    """Where no cast halves a weight the snapshot holds (the generator's 256 MiB weights, 16 MiB casts: only the
    frame names them), the weights are not in evidence and every cast stays booked as the cache, as before."""
    sc = ms.forward_only(grad=False, cast_mib=16, passes=1)
    rep = _analyze(Path(ms.write(str(tmp_path / "rank0.pickle"), sc.doc)))
    assert rep.gpus[0].memory["breakdown"]["casts"] == sc.truth["cast_bytes"]
