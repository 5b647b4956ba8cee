"""A range named like a step on a thread beside the loop marks no step (issue #37 class 2, h37-probe43n).

A loader thread marks each fetch ``batch`` (``nvtx.is_step_name`` reads ``batch`` as a step's name) and fills its
queue before the loop starts; the main thread launches every kernel (``synthetic.nsysexport
.write_loader_thread_batches``: 12 steps of ~8.03 ms, the GPU never waiting for input).  Main read the twelve 1 ms
fetches as the steps -- 11 steps of ~1.05 ms, "Input-bound" critical -- even where the main thread marked its own
``train_step {k}``.  A step's range holds the launches of its GPU work; ranges that hold none are left to the other
readings.  Control: a loader that fetches each batch during the step it feeds (one per step, concurrent) still
gives the steps their true length.
"""

from __future__ import annotations


import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host as _host


def _step_ms(host: dict) -> float:
    return next(m for m in host["headline"] if m["id"] == "device_step_share")["detail"]["avg_step_ms"]


@pytest.mark.parametrize("main_range", [None, "train_step {k}"])
def test_a_loaders_batches_fetched_ahead_are_no_steps(tmp_path, main_range) -> None:  # noqa: ANN001 - pytest's
    """The steps are the loop's (~8.03 ms), not the loader's 1 ms fetches; no input wait is claimed."""
    path = str(tmp_path / "loader.sqlite")
    truth = nx.write_loader_thread_batches(path, main_range=main_range)
    host = _host(path)
    assert "`batch`" not in host["steps"]["note"]
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.02)
    assert "input_bound" not in {f["rule"] for f in host["findings"]}


def test_a_loaders_batch_each_step_keeps_the_steps_length(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: one fetch inside each step on the loader's thread, concurrent with the launches: the steps hold the
    work and keep their length, as on main."""
    path = str(tmp_path / "loader.sqlite")
    truth = nx.write_loader_thread_batches(path, ahead=False)
    host = _host(path)
    assert _step_ms(host) == pytest.approx(truth.step_ms, rel=0.02)
    assert "input_bound" not in {f["rule"] for f in host["findings"]}
