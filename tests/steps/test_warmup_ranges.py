"""Steps inside a range the program names as its own warm-up are not the steady state it measures (issue #37, survey
h37-survey7a).

The real case (jsun-012/assignment2-systems ``result.sqlite`` @43119569, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``): a cs336 Transformer LM (121 M parameters, fp32, batch 4 x 512) on an RTX 3070 Ti
under ``nsys -t cuda,nvtx``: ``Run Benchmark`` holds a ``Warm-up`` range of five training steps (``Warm-up Step N``,
each a ``Forward`` and a ``Backward``, 223-773 ms), then ``Benchmark Forward Only``: ten ``Forward`` ranges of 66-68
ms -- the program's own stdout reports "Average: 67.57 ± 0.47" ms.  Main tiled all 15 ``Forward`` ranges into steps:
13 kept of a 117.2 ms average, half warm-up training steps, half the measured forwards.  Now 67.6 ms.

By construction (``synthetic.nsysexport.write_warmup_benchmark``): the same ranges, the forward's length known.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_report


def test_steps_in_the_programs_warm_up_range_are_dropped(tmp_path) -> None:  # noqa: ANN001 - pytest's
    path = str(tmp_path / "result.sqlite")
    truth = nx.write_warmup_benchmark(path)
    host = first_report(path)["hosts"][0]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["forward_ms"], rel=0.03)
    assert "inside the program's own `Warm-up` range" in host["steps"]["note"]
    # every kept step is a measured forward: none starts inside the warm-up
    assert host["steps"]["count"] <= truth["measured"]


@pytest.mark.parametrize("measured_backward", [False, True])
def test_the_job_is_the_kind_of_the_measured_iterations(tmp_path, measured_backward: bool) -> None:  # noqa: ANN001
    """The job kind is that of the iterations analysed: a warm-up of training steps before measured forwards leaves an
    inference job (its fixes a forward pass's), with the warm-up named; measured training steps stay training."""
    path = str(tmp_path / "result.sqlite")
    truth = nx.write_warmup_benchmark(path, measured_backward=measured_backward)
    job = first_report(path)["hosts"][0]["job"]
    assert job["kind"] == truth["kind"]
    if truth["kind"] == "inference":
        assert "`Warm-up`" in job["kind_evidence"] and "`Backward`" in job["kind_evidence"]


@pytest.mark.parametrize("name, warm", [("Warm-up", True), ("warmup", True), ("Warm-up Step 3", True),
                                        ("warm_up phase", True), ("Forward", False), ("swarm update", False),
                                        ("prewarmed cache", False)])
def test_warm_up_names(name: str, warm: bool) -> None:
    assert nvtx.is_warmup_name(name) is warm
