"""A JAX input wait inside the batch's own copy to the device is said as that copy (issue #37 class 4).

Real ``../shared/profiles/real-h100-jax`` runs.  ``implicit_numpy_input`` hands its jitted step a NumPy batch: the step's
first op starts 3 us into each ``train`` marker and the host's wait is PjRt's ``H2D Dispatch`` of the batch inside the
call.  Main named its 2.49 ms "the host time before each step's first op ... an untraced loader" and led with "prepare
batches in background workers"; the wait is the transfer, whose fix is putting the next batch on the device ahead.
Control: ``input_bound`` (12 ms of untraced loading before each step) keeps its lead and the loader's fix first.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report
from tests.support.real_checks import REAL_JAX_SET


def _input_finding(run: str):
    """The input_bound finding of one real JAX run (skipped where the shared profiles are not here)."""
    files = sorted((REAL_JAX_SET / run).glob("plugins/profile/*/*.xplane.pb"))
    if not files:
        pytest.skip(f"{REAL_JAX_SET / run} not here (the shared profiles are read in place)")
    m = host_metrics(read_trace(str(files[0])))
    found = [f for f in host_report(m, files[0].stat().st_size).findings if f.rule == "input_bound"]
    assert len(found) == 1
    return m, found[0]


def test_a_numpy_batch_copied_inside_the_jitted_call_is_said_as_its_transfer():
    m, f = _input_finding("implicit_numpy_input")
    assert m.input.transfer_ms_per_step == pytest.approx(f.saving.ms_per_step, rel=0.01)  # the whole wait
    assert m.input.lead_ms_per_step < 0.01  # no host time before the first op
    assert "before each step's first op" not in f.summary
    assert "transfer to the device" in f.summary
    assert "device_put" in (f.actions[0].snippet or "") and "NumPy" in f.actions[0].text


def test_control_an_untraced_loader_before_the_first_op_keeps_its_lead_and_the_loaders_fix():
    m, f = _input_finding("input_bound")
    assert m.input.lead_ms_per_step > 9.0  # the 12 ms sleep, less what the copy's worker holds beside it
    assert "before each step's first op" in f.summary
    assert "background workers" in f.actions[0].text
