"""A round trip's copy back is the round trip's, not the step's input (issue #37 class 3: each wait belongs to its cause).

The assumption was that every copy of array data to the device is a batch the step waits for (``context._input_spans``
(c)): JAX's ``jnp.asarray`` of a NumPy result the step itself had copied out was "the batch's transfer to the device",
with a prefetch fix (real-h100-jax ``host_roundtrip``: an input_bound warning of 3.78 ms of each 26.6 ms step), while
the round trip's finding left that time out of its own.  Now the round trip's return leg -- from the copy out's end to
the copy back's end (``metrics.trips.return_legs``) -- is left out of the input spans, and its host time is the round
trip's.

Truth by construction (``synthetic.jaxcapture``): the same step written twice with the same 16 MiB copy to the device
-- once as the data of a copy out coming back after host work (a round trip: no input at all), once as a batch put
before the step's work with no copy out (an input: the GPU waits for its staging).  Real controls: ``host_roundtrip``
(no input wait, the round trip owns its leg) and ``implicit_numpy_input`` (a NumPy batch each step: all of its wait
the batch's transfer, as before).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report
from tests.support.round_trip_loop import real_jax_xplane, round_trip_loop
from tests.support.xplane_paths import written_capture



def _metrics_and_rules(p: Path):
    m = host_metrics(read_trace(str(p)))
    return m, {f.rule: f for f in host_report(m, p.stat().st_size).findings}


def test_a_copy_back_of_the_steps_own_data_is_no_input(tmp_path):
    """The round trip's loop has no input: its input wait is nil and input_bound does not fire; the round trip's idle
    holds the copy back's staging.  Main booked the put's staging as input (a wait of ~the staging time)."""
    m, found = _metrics_and_rules(written_capture(tmp_path, round_trip_loop(round_trip=True), "round_trip"))
    assert m.round_trip.steps_with >= 10
    assert m.breakdown.input_wait == pytest.approx(0.0, abs=1e-3), m.breakdown.input_wait
    assert "input_bound" not in found
    assert m.input.transfer_ms_per_step == pytest.approx(0.0, abs=1e-3)
    assert "host_op_placement" in found


def test_control_the_same_copy_as_a_batch_before_the_step_is_input(tmp_path):
    """The twin: the same 16 MiB put, with no copy out before it, is the step's input -- its wait is the batch's
    transfer (the put's staging), as it was before."""
    m, _ = _metrics_and_rules(written_capture(tmp_path, round_trip_loop(round_trip=False), "batch_put"))
    assert m.round_trip.steps_with == 0
    assert m.breakdown.input_wait > 0.05, m.breakdown.input_wait


def test_the_round_trip_owns_what_the_input_gave_back(tmp_path):
    """One account: the time the round trip's loop no longer books as input is the round trip's -- its idle grows by
    the copy back's staging, the wait its twin books as input (within the few microseconds of a dispatch)."""
    trip, _ = _metrics_and_rules(written_capture(tmp_path, round_trip_loop(round_trip=True), "round_trip"))
    twin, _ = _metrics_and_rules(written_capture(tmp_path, round_trip_loop(round_trip=False), "batch_put"))
    host_part = 1.5  # the host work between the copy out and the copy back, ms
    assert trip.round_trip.idle_ms_per_step >= host_part + 0.8 * twin.breakdown.input_wait, (
        trip.round_trip.idle_ms_per_step, twin.breakdown.input_wait)


def test_real_host_roundtrip_has_no_input_wait():
    """real-h100-jax host_roundtrip (device -> NumPy -> device mid-step, 16.8 MB out, 33.6 MB back as float32): no
    input exists in the program (its batch lives on the device); main read 3.78 ms a step as "the batch's transfer"
    and warned input_bound.  Its round trip now holds that leg: 19.6 -> 23.4 ms of idle a step."""
    m, found = _metrics_and_rules(real_jax_xplane("host_roundtrip"))
    assert m.breakdown.input_wait == pytest.approx(0.0, abs=0.05), m.breakdown.input_wait
    assert "input_bound" not in found
    assert m.round_trip.idle_ms_per_step > 22.0, m.round_trip.idle_ms_per_step
    assert found["host_op_placement"].saving.ms_per_step <= m.headline.avg_step_ms


def test_real_implicit_numpy_input_stays_input():
    """Control: a NumPy batch handed to jit each step copies in with no copy out before it -- input, all of it the
    batch's transfer, as before (2.49 ms)."""
    m, found = _metrics_and_rules(real_jax_xplane("implicit_numpy_input"))
    assert m.round_trip.steps_with == 0
    assert m.input.transfer_ms_per_step == pytest.approx(m.breakdown.input_wait, rel=0.02)
    assert m.breakdown.input_wait > 2.0
    assert "input_bound" in found
