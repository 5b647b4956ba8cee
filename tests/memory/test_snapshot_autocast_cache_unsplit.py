"""autocast's weight cache in CS336's 2.7B forward is the weights' copies, not a forward kept for a backward
(issue #37, h37-survey42's left; h37-autocast).

QR-0W/Stanford-CS336's ``isolated_ctx{128,256,512}_mixed`` snapshots @835b528 (MIT, kept gzipped under
``tests/fixtures/wild/snapshot_autocast_cache_ctx*``): one forward under ``torch.no_grad()`` and bf16 autocast, Python
frames only.  Each fp32 weight's bf16 copy is cached until the region exits.  The 128 weights of 25 MiB sit in 26 MiB
blocks (the allocator leaves a large block whole where 1 MiB or less would remain), so their 12.5 MiB copies are half
the tensor, not half the block: main booked those 1.56 GiB as the forward's, and at context 512, with the pass's own
0.46 GiB, they passed the share of the peak that fires "a forward keeps its tensors for a backward" -- whose fix (no_grad)
the script already uses.  Truth read by hand: 224 copies (128 x 12.5 MiB, 96 x 50 MiB = 6.25 GiB) freed in one run at
the end; 12.8 GiB of weights from before the recording."""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
GiB = 2**30


def _report(ctx: int):
    path = next((WILD / f"snapshot_autocast_cache_ctx{ctx}").glob("*.pickle.gz"))
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


@pytest.mark.parametrize("ctx", [128, 256, 512])
def test_the_cache_is_booked_apart_from_the_weights(ctx: int) -> None:
    """Weights (12.8 GiB) and their copies (6.25 GiB) are what the peak holds; the pass's own tensors are the rest
    (main: 1.6-2.0 GiB of "activations", the 128 copies of the 25 MiB weights among them).  The copies are this pass's
    (the cache is emptied at the region's exit): booked apart, not held across steps (h37-snapleft)."""
    rep = _report(ctx)
    assert rep.job["kind"] == "inference"
    mem = rep.gpus[0].memory
    assert 12.8 * GiB <= mem["breakdown"]["held"] < 13 * GiB
    assert mem["breakdown"]["casts"] >= 6.0 * GiB
    assert mem["breakdown"]["activations"] < 0.5 * GiB


def test_no_forward_kept_for_a_backward_at_context_512() -> None:
    """The one context where main advised no_grad to a forward under no_grad."""
    rep = _report(512)
    # the cache's own finding (h37-cachefind: test_snapshot_autocast_cache_finding.py) is not a forward kept
    assert not [f for f in rep.findings if f.rule == "activation_memory" and f.metric.id != "cast_cache_share"]
