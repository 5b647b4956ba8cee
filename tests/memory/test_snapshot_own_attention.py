"""A model's own attention writes the score matrices SDPA's math backend would: the snapshot's stacks say so too
(issue #37 class 5, survey h37-survey41m).

The real snapshot (srliu3264/cs336_hw2 ``results/mem_pickle/mem_xl_fwd_ctx2048.pickle`` @b1fa943d, MIT; kept gzipped
in tests/fixtures/wild/snapshot_own_attention_b200): ``benchmarking_script.py --size xl --mode forward
--context_length 2048 --memory_profile`` on a Modal B200 -- CS336's LM at its "xl" row here (d_model 2560, 32 layers,
32 heads, d_ff 10240: 12.8 GiB of fp32 weights), batch 4, one forward under ``torch.no_grad()`` after warm-up.  The
model's attention is its own (``model.py scaled_dot_product_attention``: an einsum, a ``torch.where`` mask, then
``nn_utils.py softmax``: ``x - max``, ``exp``, ``exp / sum``): at the peak (21.3 GiB) the softmax's three
(batch x heads x queries x keys) fp32 blocks, 2 GiB each, and its 1 MiB row sum are live beside the masked scores --
8 GiB of the 8.5 GiB above the weights is attention's score matrices, which a fused kernel never writes.  Main booked
them as plain activations and said nothing (its check knew only SDPA's math backend's C++ frame).

Truth from the script, not the Advisor: a score matrix is batch x heads x context^2 x 4 bytes; the softmax keeps
three of them and one row sum (batch x heads x context x 4 bytes) at the division.  The masked scores, made outside
the softmax, are not counted: the bytes said are a lower bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

OWN = FIXTURES / "wild" / "snapshot_own_attention_b200" / "mem_xl_fwd_ctx2048.pickle.gz"
CROSS_ENTROPY = FIXTURES / "wild" / "snapshot_cross_entropy_bf16" / "vanilla_ce_snapshot.pickle"
#: the script's run: batch 4, the "xl" row's 32 heads, context 2048, fp32
BATCH, HEADS, CONTEXT, FP32 = 4, 32, 2048, 4
SCORES = BATCH * HEADS * CONTEXT * CONTEXT * FP32
ROW_SUM = BATCH * HEADS * CONTEXT * FP32


def _analyze(path: Path):
    rep = analyze_host(HostFile(path.name.split(".")[0], str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _attention(rep) -> list:
    return [f for f in rep.findings if f.metric is not None and f.metric.detail.get("cause") == "attention_math"]


def test_a_models_own_softmax_inside_its_attention_is_attention_written_op_by_op():
    """Main: no finding, the 6 GiB booked as the forward's activations.  Here: the softmax's three score matrices
    and its row sum are attention's, said with the fused kernel's fix -- an inference run, so no checkpointing and
    no inference_mode advice beside it."""
    rep = _analyze(OWN)
    assert rep.job["kind"] == "inference"
    bd = rep.gpus[0].memory["breakdown"]
    assert bd["attention_math"] == 3 * SCORES + ROW_SUM
    (f,) = _attention(rep)
    assert f.saving_bytes == 3 * SCORES + ROW_SUM and f.severity == "info"  # a snapshot records no capacity
    assert "a softmax called as its own op inside an attention function" in f.summary
    assert "op by op, not by a fused kernel" in f.title and "SDPA ran its math backend" not in f.title
    assert "scaled_dot_product_attention in place of a hand-written" in f.actions[0].text
    assert not [g for g in rep.findings if g.rule == "activation_memory" and g is not f]


def test_control_a_softmax_outside_attention_is_no_score_matrix():
    """The control (as main): one bf16 ``F.cross_entropy`` over 128,000-way logits called from the script -- its
    ``log_softmax`` writes a vocabulary-wide block, under no attention function: nothing booked to attention."""
    rep = _analyze(CROSS_ENTROPY)
    assert "attention_math" not in rep.gpus[0].memory["breakdown"]
    assert not _attention(rep)


@pytest.mark.parametrize("names, scores", [
    (["softmax", "scaled_dot_product_attention", "forward"], True),  # CS336's own softmax in its own attention
    (["softmax", "eager_attention_forward", "forward"], True),  # Hugging Face's eager path (nn.functional.softmax)
    (["at::_softmax", "at::native::_scaled_dot_product_attention_math"], True),  # SDPA's math backend
    (["at::native::_scaled_dot_product_attention_math"], True),  # its other blocks (the scores' matmul)
    (["log_softmax", "cross_entropy", "forward"], False),  # a loss's softmax: no attention above it
    (["scaled_dot_product_attention", "forward"], False),  # attention's other blocks (its output, a fused kernel's)
    (["attention_mask", "softmax"], False),  # a softmax that calls attention code is not inside attention
])
def test_a_score_matrix_is_a_softmax_run_inside_attention(names: list[str], scores: bool):
    assert pytorch.writes_attention_scores(names) is scores
