"""An export of 2020 keeps no capture options, but Nsight's CUDA injection wrote, among its strings, how many CUDA
events it collected: where it says "No CUDA events collected", CUDA was traced and the program made no CUDA call
(issue #37 item 6, h37-survey67).

quasiben/nvtx-examples (read locally: no licence) commits exports of Nsight 2020 with their ``run.sh``:
``multiprocessing.sqlite`` (``-t nvtx,osrt,cuda``, a NumPy program in spawned processes) and
``cpython-nvtx-patch.sqlite`` (``-t nvtx,osrt,cuda``, a patched CPython's NVTX ranges over a dict loop; the CUDA
driver's ``cuda-EvtHandlr`` thread in its process) hold NVTX ranges, no CUDA table, and the string "No CUDA events
collected. Does the process use CUDA?"; ``quickstart.sqlite`` (``-t nvtx,osrt``) holds neither.  Main said of the
first "the export does not record whether CUDA tracing was on, and no CUDA table at all is what tracing NVTX alone
leaves" and of the second "CUDA was not traced" with a fix to trace CUDA.  ASSUMPTION that was wrong: an export
without capture options cannot say whether CUDA was traced -- the profiler's own end-of-session message says it.

Truth by construction: ``synthetic.nsysexport.write_window`` (``options=False``, ``collected``)."""

from __future__ import annotations

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host

NONE_COLLECTED = "No CUDA events collected. Does the process use CUDA?"


def _job(path) -> dict:
    return first_host(path)["job"]


def test_the_profilers_none_collected_message_says_cuda_was_traced(tmp_path):
    p = tmp_path / "multiprocessing.sqlite"
    nx.write_window(str(p), "nvtx_only", options=False, collected=NONE_COLLECTED)
    job = _job(p)
    assert job["kind"] == "no_gpu", job
    assert "with CUDA tracing on" in job["kind_evidence"], job["kind_evidence"]
    assert "does not record whether CUDA tracing was on" not in job["kind_evidence"]


def test_with_the_drivers_thread_too_the_program_made_no_cuda_call(tmp_path):
    """The driver's thread in the program's process said "CUDA was not traced"; the profiler says it was, and
    collected nothing: no GPU work, not GPU work gone unrecorded."""
    p = tmp_path / "cpython.sqlite"
    nx.write_window(str(p), "nvtx_only", options=False, driver_thread="program", collected=NONE_COLLECTED)
    job = _job(p)
    assert job["kind"] == "no_gpu" and "with CUDA tracing on" in job["kind_evidence"], job
    assert "CUDA was not traced" not in job["kind_evidence"]


def test_control_without_the_message_the_export_still_cannot_say(tmp_path):
    """Control: the same old export without the message (``-t nvtx,osrt``: quickstart) keeps the hedged reading."""
    p = tmp_path / "quickstart.sqlite"
    nx.write_window(str(p), "nvtx_only", options=False)
    assert "does not record whether CUDA tracing was on" in _job(p)["kind_evidence"]
