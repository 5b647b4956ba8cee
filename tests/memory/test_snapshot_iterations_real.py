"""The real snapshot behind ``test_snapshot_iterations.py``: ``wild/snapshot_adam_iterations`` (NiuHuangxiaozi/
assignment2-systems, MIT; PROVENANCE.md).  Three iterations of a hand-written Adam that re-makes each parameter and its
two moments out of place in every ``optimizer.step()``.  Read by hand (a replay of its allocator history): at the peak
(the second iteration's forward) the blocks live from ``optimizer.py`` -- the weights and both moments the first step
made -- are 3 x 86.6 MiB = 260 MiB, and autograd's saved tensors ~750 MiB.  Main booked the 260 MiB as "optimizer" and
said 4.31 MiB was held across steps: a snapshot has no step markers, but its ``external_annotations`` mark where each
optimizer step ended, and what is older than the last end before the peak was made by an earlier iteration.
"""

from __future__ import annotations

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import REPO

MiB = 1 << 20
PATH = REPO / "tests" / "fixtures" / "wild" / "snapshot_adam_iterations" / "forward_and_backward_memory_snapshot_200.pickle"


def test_the_previous_iterations_weights_and_adam_state_are_held_across_steps():
    rep = analyze_host(HostFile("snapshot_adam_iterations", str(PATH), PATH.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    bd = rep.gpus[0].memory["breakdown"]
    assert 3 * 86 * MiB <= bd["held"] <= 300 * MiB, bd  # weights + m + v from the first step (+ small earlier blocks)
    assert bd["activations"] >= 700 * MiB, bd
    assert bd["held"] + sum(v for k, v in bd.items() if k != "held") == rep.gpus[0].memory["peak_allocated_bytes"]
