"""An Nsight capture whose steps are NVTX iteration ranges reads its input wait as a marked step does (issue #37
class 2, h37-fwnvtx3; h37-review15's left).

The input wait is read from the pipeline's events, the framework's transfers, or a marked step's host time before its
first dispatch (``metrics.context._input_spans``).  Main took only the profilers' step markers (``ProfilerStep#N``,
Keras', TF's) as marked steps, so where an Nsight capture's steps are the program's own ``train_step`` ranges
(``nvtx_range``) or a framework's iteration range (Lightning's ``run_training_batch``, ``iteration_range``) and the
program loads its batch itself (no DataLoader event), the 400 us it fetches inside each range before its first op read
"not measured" and went to the ledger's other/host time.  Such a range holds the iteration's host side from its fetch
on as a marker does.  A guessed most-repeated range (``nvtx_top_range``) is never read so: it may be a forward.

By construction (``synthetic.autograd_nvtx``: ``step_range``, ``loader=False``); truth 400 us a step.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from synthetic import autograd_nvtx as an
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _host(tmp_path, **kw) -> dict:  # noqa: ANN001
    p = str(tmp_path / "job.sqlite")
    an.write(p, kw.pop("form", "emit_nvtx"), **kw)
    return analyze_session("w", "s", [SimpleNamespace(host="h0", path=p, format="nsys",
                                                      size=os.path.getsize(p))]).to_dict()["hosts"][0]


def _input(host: dict) -> dict:
    return next(c for c in host["headline"] if c["id"] == "input_wait_share")


@pytest.mark.parametrize("kw, source", [
    ({"step_range": "train_step"}, "nvtx_range"),
    ({"form": "lightning"}, "iteration_range"),
])
def test_an_iteration_ranges_fetch_before_its_first_op_is_input(tmp_path, kw: dict, source: str) -> None:  # noqa: ANN001
    host = _host(tmp_path, loader=False, **kw)
    assert host["steps"]["source"] == source
    # main: "n/a: not measured", the 400 us booked as other / host compute
    assert _input(host)["value"] is not None
    assert host["gpus"][0]["breakdown"]["input_wait"] == pytest.approx(0.400, abs=0.01)


def test_control_a_named_fetch_reads_as_before(tmp_path) -> None:  # noqa: ANN001
    """Control: with the DataLoader's ``__next__`` recorded, its time is the input wait, as on main."""
    host = _host(tmp_path, step_range="train_step")
    assert host["gpus"][0]["breakdown"]["input_wait"] == pytest.approx(0.402, abs=0.005)


def test_control_no_iteration_range_stays_not_measured(tmp_path) -> None:  # noqa: ANN001
    """Control: the same loop without a step range (steps from the optimizer's updates) bounds no fetch: its input
    wait stays "not measured"."""
    host = _host(tmp_path, loader=False)
    assert host["steps"]["source"] == "step_end_events"
    assert _input(host)["value"] is None
