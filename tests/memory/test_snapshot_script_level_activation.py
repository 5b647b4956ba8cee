"""A tensor the backward frees is an activation, whatever code made it (issue #37, survey h37-survey20).

The real class: mryab/efficient-dl-systems ``week06_dl_arithmetic/seminar/cross_entropy/vanilla_ce_snapshot.pickle``
@9f1fd56 (MIT, kept: ``wild/snapshot_cross_entropy_bf16``) -- ``profile_vanilla_ce.py`` makes bf16 logits of
1024 x 128,000 (262,144,000 bytes) that require grad, calls ``F.cross_entropy`` from the script itself (no module, so
no ``forward`` frame) and ``loss.backward()``.  The loss keeps its log-softmax (the same 262,144,000 bytes) for the
backward, which frees it after making the logits' gradient: 1000 MiB at the peak = logits + log-softmax + two
gradients.  Main booked the log-softmax "other" and showed no activations.  Here the kept snapshot and, by
construction, the controls: the model's input (never freed) and last step's batch (freed after the next forward
began) are not activations.
"""

from __future__ import annotations

from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

#: 1024 x 128,000 bf16: the logits, the log-softmax and each gradient of ``profile_vanilla_ce.py``.
LOGITS_BYTES = 1024 * 128_000 * 2


def _memory(path: str) -> dict:
    rep = analyze_host(HostFile("snapshot", path, Path(path).stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep.gpus[0].memory


def test_a_loss_called_from_the_script_keeps_its_log_softmax_as_an_activation():
    mem = _memory(str(FIXTURES / "wild" / "snapshot_cross_entropy_bf16" / "vanilla_ce_snapshot.pickle"))
    assert mem["peak_allocated_bytes"] >= 4 * LOGITS_BYTES, mem["peak_allocated_bytes"]
    assert mem["breakdown"].get("activations") == LOGITS_BYTES, mem["breakdown"]
    # the two gradients, and the backward's 2-byte seed (``_make_grads``: the loss's ones)
    assert 2 * LOGITS_BYTES <= mem["breakdown"].get("gradients", 0) < 2 * LOGITS_BYTES + 1024, mem["breakdown"]


#: A line of the user's script, outside any module: no ``forward`` frame, so its allocations' phase is "other".
SCRIPT = [*ms.ALLOCATOR_CPP, ms.frame("/usr/lib/python3/site-packages/torch/nn/functional.py", 3504, "cross_entropy"),
          ms.frame("train.py", 20, "<module>")]
INPUT = [*ms.ALLOCATOR_CPP, ms.frame("train.py", 12, "<module>")]


def _write(tmp: Path, steps: int) -> str:
    """``steps`` iterations of: a batch made by the script, a script-level op on it kept for the backward (64 MiB),
    the backward's gradient (32 MiB), then the next batch replaces the last one after the next op ran."""
    a = ms.Allocator(80 * ms.GiB)
    batch = None
    for _ in range(steps):
        new = a.malloc(16 * ms.MiB, INPUT)
        kept = a.malloc(64 * ms.MiB, SCRIPT)
        if batch is not None:
            a.free(batch)  # last step's batch: freed in this step's forward, not by a backward
        batch = new
        g = a.malloc(32 * ms.MiB, ms.GRADIENT)
        a.free(kept)
        a.free(g)
    return ms.write(str(tmp / "snapshot.pickle"), ms.snapshot([a]))


def test_only_what_the_backward_frees_is_booked_an_activation(tmp_path: Path):
    mem = _memory(_write(tmp_path, steps=3))
    bd = mem["breakdown"]
    assert bd.get("activations") == 64 * ms.MiB, bd
    assert bd.get("gradients") == 32 * ms.MiB, bd
    # the batches (one live, one not yet freed at the first peak) stay where their stacks put them
    assert bd.get("activations", 0) + bd.get("gradients", 0) + bd.get("other", 0) + bd.get("held", 0) \
        == mem["peak_allocated_bytes"], bd
    assert bd.get("other", 0) + bd.get("held", 0) >= 16 * ms.MiB, bd
