"""Under autocast, a weight's 16-bit copy told from an activation's cast (issue #37 class 5, h37-heldcol2).

``at::autocast::cached_cast`` casts every fp32 input of an op to 16 bits, and keeps (caches until the region exits)
only the casts of leaves that require grad: the weights.  Every cast runs through it, so its frame names the
activations' casts too.  Main booked every cast live at a peak as autocast's cache of the weights; with autograd on
the activations' casts are saved for the backward and freed with the graph -- ``inference_mode`` frees them, the
cache it does not.  A weight's copy has half its weight's bytes; an activation's cast halves no weight.

Truth: the model's own shapes (the copies of CS336's linear weights, counted from d_model, d_ff and the vocabulary),
the twins' peaks (the same loop with autograd on and under no_grad: the difference is what a forward kept for a
backward), and the generator's scenario (``synthetic.memsnapshot.forward_only(input_cast_mib=)``, by construction).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.memory.test_snapshot_forward_rebound import BF16, BF16_NO_GRAD, LARGE_CACHE, _analyze, _kept_findings, _replay
from tests.support.paths import FIXTURES

GIB = 2 ** 30
#: notHanmin's forward (``snapshots_wild/forward_autograd_cs336``): CS336's "xl" LM, 48 layers, d_model 1600,
#: d_ff 6400, vocabulary 10,000
XL_CACHE = 48 * (4 * 1600 * 1600 + 3 * 1600 * 6400) * 2 + 10_000 * 1600 * 2
FORWARD_AUTOGRAD = FIXTURES / "snapshots_wild" / "forward_autograd_cs336.pickle.gz"


def _cache_finding(rep):
    got = [f for f in rep.findings if f.id.endswith("#cast_cache_share")]
    assert len(got) == 1, [f.id for f in rep.findings]
    return got[0]


@pytest.mark.parametrize("path", [BF16, BF16_NO_GRAD], ids=["autograd", "no_grad"])
def test_the_cache_is_the_weights_copies_whatever_the_grad_mode(path: Path):
    """The cast cache at the peak is the bf16 copies of the model's linear weights, 1,913,036,800 bytes, with
    autograd on and under no_grad alike (main: 2,024,652,800 with autograd -- 289 casts of the inputs and attention
    scores with them -- and 1,918,156,800 under no_grad, the loss's fp32 cast of the logits)."""
    assert _cache_finding(_analyze(path)).metric.detail["cache_bytes"] == LARGE_CACHE


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
    attention's fp32 scores (48 x 25 MiB) and their bf16 casts (48 x 12.5 MiB) among them."""
    bd = _analyze(FORWARD_AUTOGRAD).gpus[0].memory["breakdown"]
    assert XL_CACHE <= bd["casts"] <= XL_CACHE + 48 * 512, (bd["casts"] / GIB, XL_CACHE / GIB)


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
