"""A training loop that keeps bytes every iteration is named (issue #37 class 5, h37-probe42k).

By construction (``synthetic.memsnapshot.training_iterations(leak=...)``): each iteration keeps its output in a list
(``"list"``), or sums an evaluation's loss without ``.item()`` so the sum holds each evaluation's graph (``"graph"``):
the level between iterations rises by the same bytes every iteration.  Main (f6bb69b3) said "come back down to it"
and found nothing.  Here a ``memory_leak`` finding names the bytes each iteration keeps, the sites, and PyTorch's
fixes (``.item()`` / ``.detach()``, no outputs kept in a list); its saving is the kept bytes live at the peak, as the
generator counted them.  Controls: the same loop without the leak, and real snapshots (training loops, whose level
between iterations is flat, and forwards whose layers each keep their graph's share) get no such finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.common.fmt import gb
from tests.support.snapshot_reports import assert_leak_is_truth, leaks as _leaks, report as _report, written as _written

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize("cause", ["list", "graph"])
@pytest.mark.parametrize("iterations", [4, 6])
def test_a_leak_is_named_with_its_bytes(tmp_path, cause, iterations):
    sc = ms.training_iterations(iterations=iterations, leak=cause)
    truth = sc.truth["leak"]
    (f,) = _leaks(_report(_written(tmp_path, sc)))
    assert_leak_is_truth(f, truth, iterations)
    assert "every iteration" in f.summary


def test_the_fixes_are_pytorchs(tmp_path):
    (f,) = _leaks(_report(_written(tmp_path, ms.training_iterations(iterations=5, leak="list"))))
    texts = " ".join(a.text + "\n" + (a.snippet or "") for a in f.actions)
    assert "loss.item()" in texts and "detach()" in texts and "outputs.append" in texts


def test_control_a_loop_without_a_leak(tmp_path):
    for sc in (ms.training_iterations(iterations=6), ms.training_iterations(iterations=4, micro_batches=3),
               ms.training_iterations(iterations=4, set_to_none=False)):
        assert not _leaks(_report(_written(tmp_path, sc)))


REAL = ["snapshots_wild/windows_training_cs336.pickle.gz", "snapshots_wild/forward_autograd_cs336.pickle.gz",
        "wild/snapshot_adam_iterations/forward_and_backward_memory_snapshot_200.pickle",
        "wild/snapshot_attention_bwd/mem_snapshot.pickle", "wild/snapshot_sync_after_step/bwd_128.pickle.gz",
        "wild/snapshot_transformer_from_start/visual_mem_2025_12_26_14_31_10.pickle.gz",
        "wild/snapshot_windows_gpt/memory_snapshot.pickle", "wild/snapshot_compiled_gpt2/memory_snapshot.pickle",
        "wild/snapshot_forward_rebound_autograd/memory_snapshot_large_cl512_fw_with_grad.pickle.gz",
        "h200_memory/torch_oom_snapshot/oom_snapshot.pickle"]


@pytest.mark.parametrize("name", REAL)
def test_control_real_snapshots_keep_no_leak(name):
    path = FIXTURES / name
    if not path.exists():
        pytest.skip(f"{name} not in this checkout")
    assert not _leaks(_report(path))


def test_the_steps_line_says_the_level_rises_beside_a_leak(tmp_path):
    """The steps line read a leaking loop's iterations as climbing from the level held between them "and come back
    down to it" while the leak finding beside it said each keeps bytes nothing frees (h37-review43's brief).  Now it
    says the level rises, by the bytes the generator keeps each iteration; a loop without a leak keeps its words."""
    sc = ms.training_iterations(iterations=6, leak="list")
    rep = _report(_written(tmp_path, sc))
    per = sc.truth["leak"]["bytes_per_iteration"]
    assert _leaks(rep)
    assert f"the level rises {gb(per)} an iteration" in rep.steps["note"], rep.steps["note"]
    ok = _report(Path(ms.write(str(tmp_path / "ok.pickle"), ms.training_iterations(iterations=6).doc)))
    assert "come back down to it;" in ok.steps["note"] and "rises" not in ok.steps["note"], ok.steps["note"]
