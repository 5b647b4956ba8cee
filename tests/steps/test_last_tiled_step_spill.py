"""The last of steps tiled from one update's end to the next holds its predecessor's GPU spill once, not its own too
(h37-fwnvtx, issue #37 class 2).

The wrong assumption (``steps.place._place_windows``): *the last step ends where the work it launched ends on the
GPU*.  A step tiled start to next start (``step_end_events``: one optimizer step's end to the next's) holds at its
start the GPU work its predecessor launched and the GPU ran after that predecessor's window -- each tile is one
period.  Megatron-LM's optimizer step (``--profile --nvtx-ranges --record-shapes``) reads its found-inf flag back
(``.item()``) and then launches its 4 fused Adam kernels (0.24 ms) and returns: every update's kernels run 0.21 ms past
its end, in the next step.  The last step, stretched to its own Adam kernels' end, held that spill twice: ``--forms5``
seed 6128, 3 iterations of 3.343 ms read 3.343, 3.343, 3.550 ms (mean 3.412).  Now the stretch leaves out the least
spill every earlier step carried into the next (``steps.place._carried_spill``).

Truth by construction: ``synthetic.autograd_nvtx`` (``TRUTH``: the host's period, every iteration alike).  Controls:
``emit_nvtx`` loops that read their loss back after the update (the host waits for the GPU: no spill), a loop
updating its parameters itself (``repeated_launches``), DDP's two ranks, Lightning's iteration ranges."""

from __future__ import annotations

import pytest

from synthetic.randjobs import TRUTH, form5_job
from tests.support.random_jobs import report_of


def _read(tmp_path, form: str, steps: int, layers: int) -> tuple[dict, float, float]:  # noqa: ANN001 - pytest's
    h = report_of(form5_job("fwnvtx", form=form, steps=steps, layers=layers, ranks=1), str(tmp_path)).hosts[0]
    return h.steps, h.mean_step_ms(), TRUTH[0]["step_ms"]


@pytest.mark.parametrize("steps,layers", [(3, 3), (2, 3), (4, 3), (2, 1)])
def test_megatrons_last_update_spill_counts_once(tmp_path, steps: int, layers: int) -> None:  # noqa: ANN001
    """(3, 3) is the walk's seed 6128; main: 3.412, 3.446, 3.395, 1.756 ms against 3.343, 3.343, 3.343, 1.653."""
    found, mean, period = _read(tmp_path, "megatron_shapes", steps, layers)
    assert (found["source"], found["count"]) == ("step_end_events", steps), found
    assert mean == pytest.approx(period, rel=0.005), (mean, period)


@pytest.mark.parametrize("form,steps,source", [("emit_nvtx", 3, "step_end_events"), ("record_shapes", 4, "step_end_events"),
                                               ("manual_update", 4, "repeated_launches"), ("ddp", 3, "step_end_events"),
                                               ("lightning", 3, "iteration_range"), ("megatron", 4, "repeated_launches")])
def test_control_loops_read_as_before(tmp_path, form: str, steps: int, source: str) -> None:  # noqa: ANN001
    found, mean, period = _read(tmp_path, form, steps, 3)
    assert found["source"] == source, found
    assert mean == pytest.approx(period, rel=0.005), (mean, period)
