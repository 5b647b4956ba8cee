"""Two steps read from a loop's updates are placed on the GPU when the host runs ahead of it, as three are
(h37-forms12b, issue #37 class 2; h37-fwnvtx's left: ``emit_nvtx`` / ``record_shapes`` jobs of 2 iterations).

The wrong assumption (``steps.place._async_device_windows``): *every host window's spill past its end says whether
the host runs ahead*.  Every tiled step but the last ends where the next starts; the last ends where its own reading
ends it -- a loop read from its updates (``step_end_events``) runs its last to its read-back's end, which waited for
the GPU, so it spills nothing.  Of two steps the median spill is the mean of the first's and that zero, under the
bar: the host windows were kept, the first 0.745 ms from the capture's start to its update's end, the last 5.445 ms
without the loop's untraced 150 us turn after its read-back -- 3.095 ms of 3.17 (1.655 of 1.73 with one layer).
Now the test takes the spill of the steps with a next one (``steps.place._tiled_spill``), as three steps' median
already did: each GPU step from its work's first kernel to the next's, the last to its work's end and the gap every
earlier step shows.

Truth by construction: ``synthetic.autograd_nvtx`` (``TRUTH``: the host's period, every iteration alike).  Controls:
the same loops of 3 and 4 iterations, Megatron's ``--record-shapes`` (its spill counted once, h37-fwnvtx), DDP's
two ranks."""

from __future__ import annotations

import pytest

from synthetic.randjobs import TRUTH, form5_job
from tests.support.random_jobs import report_of


def _read(tmp_path, form: str, steps: int, layers: int) -> tuple[dict, float, float]:  # noqa: ANN001 - pytest's
    h = report_of(form5_job("fwnvtx", form=form, steps=steps, layers=layers, ranks=1), str(tmp_path)).hosts[0]
    return h.steps, h.mean_step_ms(), TRUTH[0]["step_ms"]


@pytest.mark.parametrize("form,layers", [("emit_nvtx", 3), ("record_shapes", 3), ("record_shapes", 1)])
def test_two_iterations_read_from_their_updates_are_the_period(tmp_path, form: str, layers: int) -> None:  # noqa: ANN001
    """Main: 3.095 / 3.095 / 1.655 ms against 3.17 / 3.17 / 1.73."""
    found, mean, period = _read(tmp_path, form, 2, layers)
    assert (found["source"], found["count"]) == ("step_end_events", 2), found
    assert mean == pytest.approx(period, rel=0.002), (mean, period)


@pytest.mark.parametrize("form,steps", [("emit_nvtx", 3), ("record_shapes", 4), ("megatron_shapes", 2), ("ddp", 2),
                                        ("ddp", 3)])
def test_controls_read_as_before(tmp_path, form: str, steps: int) -> None:  # noqa: ANN001
    found, mean, period = _read(tmp_path, form, steps, 3)
    assert (found["source"], found["count"]) == ("step_end_events", steps), found
    assert mean == pytest.approx(period, rel=0.002), (mean, period)
