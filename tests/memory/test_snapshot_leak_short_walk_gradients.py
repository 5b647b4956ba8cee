"""A 2-layer model's stackless backward whose gradients outweigh the activations it frees reads its walk (issue #37
class 5, h37-probe47x; the ``--forms18`` walk's seed 132066, form ``snapshot_stackless``).

Truth by construction (``synthetic.memsnapshot.training_iterations``, its ``leak`` truth, written as
``_record_memory_history(context=None)`` records it: ``as_recorded(context=None)``).  A model of 2 layers of 8-MiB
activations and 64-MiB weights walks back 2 saved blocks while it makes a 64-MiB gradient between their frees; on
4b65a0a3 that read as a forward's climb (``job.iterations._short_walk``: more made than freed), so no micro-batch
showed a backward -- no iteration, the leak unread.  A gradient is a block of its weight's size
(``_weight_sizes``): the weights, made before and never freed, name those sizes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import leaks, report, written

MiB = 1 << 20

#: forms18 132066 (``stacks="none"``) and its neighbours: micro-batches 1-3, a smaller leak, no held loss
BASE = dict(iterations=8, layers=2, mib=8, micro_batches=3, set_to_none=True, optimizer_temp=False, hold_loss=True,
            leak="list", leak_mib=16)
CASES = {
    "132066": ({}, (8, 3, 3 * 16 * MiB, 8 * 3 * 16 * MiB)),
    "2_micro": (dict(micro_batches=2), (8, 2, 2 * 16 * MiB, 8 * 2 * 16 * MiB)),
    "4_mib": (dict(leak_mib=4), (8, 3, 3 * 4 * MiB, 8 * 3 * 4 * MiB)),
    "no_held_loss": (dict(hold_loss=False), (8, 3, 3 * 16 * MiB, 8 * 3 * 16 * MiB)),
    "4_iterations": (dict(iterations=4), (4, 3, 3 * 16 * MiB, 4 * 3 * 16 * MiB)),
}


def _bare(kw: dict) -> ms.Scenario:
    sc = ms.training_iterations(**{**BASE, **kw})
    return ms.Scenario(ms.as_recorded(sc.doc, context=None), sc.truth)


@pytest.mark.parametrize("case", list(CASES))
def test_a_2_layer_leak_whose_gradients_outweigh_its_activations_reads_its_bytes(tmp_path: Path, case: str) -> None:
    kw, want = CASES[case]
    bare = _bare(kw)
    truth = bare.truth["leak"]
    assert (bare.truth["iterations"], truth["blocks_per_iteration"], truth["bytes_per_iteration"],
            truth["bytes_at_end"], truth["bytes_at_peak"]) == (*want, want[3]), truth
    rep = report(written(tmp_path, bare))
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", want[0]), rep.steps
    (f,) = leaks(rep)
    d = f.metric.detail
    assert (d["iterations"], d["blocks_per_iteration"], d["per_iteration_bytes"], d["leak_end_bytes"]) == want
    assert f.saving_bytes == want[3]


def test_control_the_same_loop_without_a_leak_reads_its_iterations_and_none(tmp_path: Path) -> None:
    """The weights-sized gradients make the walk, not a leak: the loop without one reads its 8 iterations, no leak."""
    rep = report(written(tmp_path, _bare(dict(leak=""))))
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", 8), rep.steps
    assert not leaks(rep)
