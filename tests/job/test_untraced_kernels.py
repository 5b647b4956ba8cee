"""A sync that waits on the GPU with none of its recorded work in flight: kernels the profiler did not record, not a
start-up window (survey h37-survey10).

The real case (unschlagbar/neural-networks ``prof.sqlite`` @8a932c5, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``, "Survey h37-survey10"): ``kern_prof 1024 40``, a Rust LSTM trainer on an RTX 5080,
3 warm-up and 40 training steps.  The export holds 4 ``cuModuleLoadData``, 135 uploads and 405 memsets, no launch and
no kernel, a final ``cudaDeviceSynchronize`` of 2.84 ms that starts 5.6 ms after the last recorded copy ended, and the
teardown (``cuModuleUnload``).  Main read it as "start-up only ... no kernel was launched in the window".

By construction (``synthetic.nsysexport.write_untraced_kernels``): the steps' kernels are left out of the file; the
same program with them recorded, and one whose sync returns at once, are the controls.
"""

from __future__ import annotations

from synthetic import nsysexport as nx
from tests.support.cli_report import ran_report


def _report(path: str) -> tuple[int, dict]:
    return ran_report(path)


def test_a_sync_waiting_on_unrecorded_work_is_lost_records(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """The sync waited 2.8 ms with no recorded GPU work in flight: the GPU ran work the file lacks, so the window is
    no start-up, and the report says the GPU's records were lost (not "no GPU work")."""
    path = str(tmp_path / "prof.sqlite")
    truth = nx.write_untraced_kernels(path)
    rc, report = _report(path)
    job = report["hosts"][0]["job"]
    assert job["kind"] == "unknown"
    assert "`cudaDeviceSynchronize` waited 2.8 ms" in job["kind_evidence"]
    assert "start-up only" not in job["kind_evidence"]
    assert report["findings"][0]["title"] == "The capture lost its GPU records"
    assert "--trace=cuda" in report["findings"][0]["actions"][0]["text"]  # the tracing to change, not the window
    assert not truth["kernels_recorded"] and rc == 0


def test_recorded_kernels_and_a_sync_returning_at_once_are_unchanged(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Controls: the same program with its kernels recorded is GPU work of its own; one whose final sync returns at
    once (nothing unrecorded ran) is still a start-up window."""
    traced, idle = str(tmp_path / "traced.sqlite"), str(tmp_path / "idle.sqlite")
    nx.write_untraced_kernels(traced, traced=True)
    nx.write_untraced_kernels(idle, steps=2, wait_ms=0.0)
    job = _report(traced)[1]["hosts"][0]["job"]
    assert "holds no record" not in job["kind_evidence"]
    assert job["kind"] == "unknown" and "start-up only" not in job["kind_evidence"]
    job = _report(idle)[1]["hosts"][0]["job"]
    assert job["kind"] == "no_gpu" and job["kind_evidence"].startswith("start-up only")
