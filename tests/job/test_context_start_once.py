"""Where the runtime started in the window is searched once per analysis (h37-tidy).

Three readings ask where each thread's runtime started and which call created the context: the context's creation as
a one-time cost in a recorded call (``job.phase._context_calls``), in the driver's calls the capture skipped
(``_unrecorded_context``), and the calls the unseen-GPU-work reading leaves out (``unseen_gpu_work``).  Each scanned
the thread's runtime calls again.  Real Nsight exports whose runtime starts in the window (mmagic's one forward under
PyProf: its context made in ``ioctl`` calls the capture does not record; CloverLeaf's and an MPI SAXPY's context made
in their first runtime call): the search runs once, and the readings it feeds say what they said before."""

from __future__ import annotations

import numpy as np
import pytest

import tb_gpu_advisor.job.phase as phase
from tb_gpu_advisor import formats, frameworks
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.job import detect_job
from tb_gpu_advisor.model.trace import device_launches
from tests.support.paths import FIXTURES

CAPTURES = ["mmagic_a100_pyprof_forward", "cloverleaf_a100_cuda", "mpi_saxpy_a100_rank0"]


def _read(name: str):  # noqa: ANN202 - a Trace
    (session,) = discover(str(FIXTURES / "wild" / name))
    return formats.read(session.hosts[0])


@pytest.mark.parametrize("name", CAPTURES)
def test_the_runtime_start_is_searched_once_per_job(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    trace = _read(name)
    assert phase._runtime_starts(trace), "premise: the runtime starts in the window"
    calls = []
    real = phase._runtime_starts
    monkeypatch.setattr(phase, "_runtime_starts", lambda t: calls.append(1) or real(t))
    detect_job(trace, device_launches(trace.h, trace.devices), frameworks.detect_trace(trace))
    assert len(calls) == 1


@pytest.mark.parametrize("name", CAPTURES)
def test_the_shared_answer_is_each_readings_own(name: str) -> None:
    """Handed the one answer or asking on their own, the one-time costs and the unseen work are the same; the shared
    context calls are read-only, so the one-time costs' narrowing cannot reach the unseen-work reading."""
    trace = _read(name)
    fw = frameworks.detect_trace(trace)
    launches = device_launches(trace.h, trace.devices)
    started = phase.context_start(trace)
    assert started.calls.any() or started.starts
    assert not started.calls.flags.writeable
    before = started.calls.copy()
    shared, alone = phase.one_time_costs(trace, fw, launches, started), phase.one_time_costs(trace, fw, launches)
    np.testing.assert_array_equal(started.calls, before)
    assert (shared.evidence, shared.total_ms) == (alone.evidence, alone.total_ms)
    np.testing.assert_array_equal(shared.start, alone.start)
    for a, b in zip(phase.unseen_gpu_work(trace, launches, started), phase.unseen_gpu_work(trace, launches)):
        np.testing.assert_array_equal(a, b)
