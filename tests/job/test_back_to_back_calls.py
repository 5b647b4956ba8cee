"""A model called back to back, with no sync between its calls, is stepped by its calls (issue #37, survey h37-survey7a).

The real case (zx3xyy/assignment2-systems ``result.sqlite`` @9359e384, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``): an A100, a cs336 Transformer LM forward in fp32, 1 warm-up + 3 measured calls
(its log: "avg_time_ms 26.26"), no NVTX traced, in a 12.4 s window of start-up.  The host syncs only after the warm-up
and after the last call, so the waits mark no call; main cut the start-up's init kernels into 28 GPU-burst "steps" of
24.7 ms.  The launch sequence still shows the calls: 4 repeats of a 704-kernel sequence, each 12 layers of 58 kernels
between the call's own first and last kernels.  Now 3 steps of 26.2 ms (the warm-up dropped as cold).

By construction (``synthetic.nsysexport.write_back_to_back_calls``): the calls and their GPU time are known; one
call of the same model is the control (its layers repeat, but a layer is no step).
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host


def test_calls_launched_back_to_back_are_the_steps(tmp_path) -> None:  # noqa: ANN001 - pytest's
    path = str(tmp_path / "result.sqlite")
    truth = nx.write_back_to_back_calls(path)
    host = first_host(path)
    assert host["steps"]["source"] == "repeated_launches"
    assert host["steps"]["found"] == truth["calls"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["call_ms"], rel=0.05)


def test_one_call_of_a_layered_model_is_no_period(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Its layers repeat twelve times, but a layer is not a call: no steps from the period."""
    path = str(tmp_path / "result.sqlite")
    nx.write_back_to_back_calls(path, calls=1)
    assert first_host(path)["steps"]["source"] != "repeated_launches"
