"""A native GPU-bound loop with no sync between its iterations, and the context created in a blocking first call
(issue #37, surveys h37-survey8 and h37-left9).

The real case (michaelmichaeln/Parallel-Sheet-Simulator ``report1.sqlite`` @fbdbcfe6, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``): an RTX 2080 cloth simulator, 1,201 iterations of two kernels launched back to back
(its log: "Done in 103.895 ms"), never reading a result back inside the loop; its first CUDA call, a blocking
``cudaMemcpyToSymbol``, lasts 77 ms: the context.  Main cut the loop into two GPU bursts of 55 ms and named no
start-up (the 77 ms read as a wait for GPU work outside the file).

By construction (``synthetic.nsysexport.write_native_loop``): the iterations, their GPU time and the context are known;
the same loop in a window opened mid-run is the control (its first call's wait is no context creation).
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host


def test_a_native_loop_is_stepped_by_its_iterations(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """No sync marks an iteration, yet the program launched every repeat itself and nothing else computes: the
    period of the launch sequence is the iteration, and each step is one iteration's GPU time."""
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_native_loop(path)
    host = first_host(path)
    assert host["steps"]["source"] == "repeated_launches"
    assert "iterations of its loop" in host["steps"]["note"]
    assert truth["iterations"] - 3 <= host["steps"]["count"] <= truth["iterations"] + 1
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["iteration_ms"], rel=0.05)


def test_the_context_created_in_a_blocking_first_call_is_start_up(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """The runtime initialised in the window, so its next call created the context, a blocking copy or not: that is
    start-up, named with its call, and no wait for GPU work outside the file."""
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_native_loop(path)
    job = first_host(path)["job"]
    assert job["phase"] != "steady"
    assert "context created" in job["phase_evidence"] and "`cudaMemcpyToSymbol`" in job["phase_evidence"]
    assert job["one_time_ms"] >= truth["context_ms"]
    assert job["unseen_gpu_ms"] == pytest.approx(0.0, abs=0.5)


def test_a_window_cut_mid_run_has_no_context_creation(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: the same loop in a window opened mid-run, whose first call waits for GPU work launched before it.
    No runtime start-up in the window, so no context: the wait stays a wait for work the file does not hold."""
    path = str(tmp_path / "cut.sqlite")
    truth = nx.write_native_loop(path, cut=True)
    host = first_host(path)
    assert "context" not in host["job"]["phase_evidence"]
    assert host["job"]["unseen_gpu_ms"] == pytest.approx(truth["waited_ms"], rel=0.05)
    assert host["steps"]["source"] == "repeated_launches"


def test_a_layered_models_one_call_is_still_no_loop(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: one call of a layered model (an embedding, 12 layers, a head): its layers repeat, launched by the
    program's own calls, but kernels outside them (the call's own first and last) say they are one call's layers."""
    path = str(tmp_path / "one_call.sqlite")
    nx.write_back_to_back_calls(path, calls=1)
    assert first_host(path)["steps"]["source"] != "repeated_launches"
