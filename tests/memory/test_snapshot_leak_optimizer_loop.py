"""A hand-written optimizer's first step, looping over its parameters, is no leak (issue #37 class 5, h37-snap58).

Real (kkaitlyn111/cs336-a2-systems ``memory_files/memory_ctx128_fullstep_.pickle``, no licence: local only, kept in
the session's scratch): one training step of CS336's 2.7B LM recorded from a fresh ``AdamW`` -- ``zero_grad``,
forward, loss, backward, the step.  The optimizer's loop makes each parameter's m and v (``optimizers.py:82, 84``)
on its first call and an update temporary (line 100) its variable holds into the next parameter's turn; the
backward keeps each norm's gradient (``aten::sum_dim``).  Base read each parameter's turn as an iteration: "a leak
-- each of 128 iterations allocates 7 blocks ... 25.0 GiB kept", a warning, on a one-step history.

By construction (``synthetic.memsnapshot.training_iterations(per_param_step=True)``): the same optimizer loop over
8 parameters, 1 or 3 iterations; the moments are the first step's state, made once -- the truth holds no leak.
Control: the same loop with a list that keeps each iteration's output still reads that leak."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_reports import assert_leak_is_truth, leaks, report, written

REAL = Path("/work/wild58/snap58/real/kk/memory_files_memory_ctx128_fullstep_.pickle")


@pytest.mark.parametrize("iterations,set_to_none", [(1, True), (1, False), (3, True)])
def test_an_optimizers_loop_over_its_parameters_is_no_leak(tmp_path, iterations, set_to_none):
    sc = ms.training_iterations(iterations=iterations, params=8, param_mib=16, per_param_step=True,
                                set_to_none=set_to_none)
    assert sc.truth["leak"] is None
    assert not leaks(report(written(tmp_path, sc)))


def test_control_a_leak_beside_the_loop_is_still_named(tmp_path):
    sc = ms.training_iterations(iterations=4, params=8, param_mib=16, per_param_step=True, leak="list")
    (f,) = leaks(report(written(tmp_path, sc)))
    assert_leak_is_truth(f, sc.truth["leak"], 4)


@pytest.mark.skipif(not REAL.exists(), reason="local-only real snapshot (no licence) absent")
def test_real_one_step_of_a_fresh_adamw_keeps_no_leak():
    assert not leaks(report(REAL))
