"""The replay's grouping of calls by step (``metrics.comm.step_calls``) and the one keying of a rank's calls
(``metrics.job._keyed``) read what the scans they replaced read (h37-replay68)."""

import numpy as np

from tb_gpu_advisor.metrics.comm import step_calls
from tb_gpu_advisor.metrics.job import _keyed
from tb_gpu_advisor.model.callrows import call_columns


def test_each_steps_calls_are_the_scans_calls_in_their_order():
    rng = np.random.default_rng(68)
    for n in (0, 1, 7, 300):
        step = rng.integers(0, 9, n)
        want = [np.flatnonzero(step == st) for st in np.unique(step)]
        got = step_calls(step)
        assert len(got) == len(want)
        assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_a_calls_transfer_and_its_times_share_one_key():
    # two groups, a step whose group runs two calls of one size: the order within the group tells them apart
    rows = [("pg1", 3, 1024, 0.5), ("pg1", 3, 1024, 0.25), ("pg0", 3, 64, None), ("pg0", 4, 64, 0.125)]
    times = [(1.0, 1.5, 2.0), (2.0, 2.5, 3.0), (0.1, 0.2, 0.3), (4.0, 4.5, 5.0)]
    c = call_columns(rows, steps=2, times=times)
    keys, ms, kept = _keyed(c)
    tkeys, tvals, tkept = _keyed(c, times=True)
    assert keys == tkeys == [("pg0", 3, 0, 64), ("pg0", 4, 0, 64), ("pg1", 3, 0, 1024), ("pg1", 3, 1, 1024)]
    assert ms == [0.0, 0.125, 0.5, 0.25] and kept == tkept == 2
    assert tvals == [times[2], times[3], times[0], times[1]]
    assert _keyed(call_columns(rows, steps=2), times=True) is None  # a report without call times: no replay
