"""Host time the profiler did not record, on an Nsight export that traced OS runtime calls (issue #37 class 3,
h37-osrt).

The real case (wrf-gpu/wrf_gpu @e16ccc3e ``.agent/sprints/2026-05-25-m6-perf-design/artifacts/
proof_solver_bakeoff_nsight.sqlite``, AGPL, so not kept: ``tests/fixtures/wild/SURVEY.md``, "h37-osrt"): a JAX
solver bake-off under ``nsys profile --trace=cuda,nvtx,osrt`` (1 us threshold, no context switches).  Between its
jitted calls the launching thread has ~1.0 ms a step covered by no CUDA call, no NVTX range and no OS call.  Main read
that time as possibly a wait (only a scheduler trace counted it as the host running) and left the host-bound loop
unsaid: "The GPU idles while the host does what the capture did not record".  A thread that waits for something
outside the program waits in a system call, which such a trace records; what no call covers is the thread running.

By construction (``synthetic.nsysexport.write_osrt_host_work_window`` / ``write_untraced_host_loop``): the host's
untraced time is known, and whether the thread ran through it or sat in a traced ``poll`` / ``pthread_cond_wait``.
Controls: the same exports without the OS runtime's rows or without the settings that say it was traced (nothing
tells a wait from work: unchanged), with a threshold too long to hold every wait, and the traced wait (waiting, not
running).
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.metrics.compute import waits_traced
from tests.support.cli_report import first_report


def _bound(rep: dict) -> list[dict]:
    return [f for f in rep["findings"] if f["title"].startswith("Host-bound")]


def _unrecorded(rep: dict) -> list[dict]:
    return [f for f in rep["findings"] if f["id"].endswith("#unrecorded")]


def test_the_os_runtime_setting_is_read_from_the_export(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "report1.sqlite")
    nx.write_osrt_host_work_window(path, threshold_ns=1500)
    tr = reader.read_trace(path)
    assert tr.producer["os_runtime_trace"] == "on" and tr.producer["os_runtime_threshold_ns"] == "1500"
    assert waits_traced(tr) == "os runtime"
    bare = str(tmp_path / "bare.sqlite")
    nx.write_osrt_host_work_window(bare, settings=False)
    tr = reader.read_trace(bare)
    assert "os_runtime_trace" not in tr.producer and tr.host_waits is not None  # rows, but no setting: not assumed
    assert waits_traced(tr) == ""


def test_untraced_host_time_under_an_osrt_trace_is_host_bound(tmp_path) -> None:  # noqa: ANN001
    """On main: "the host's own code, or a wait ... the capture traced no context switches", no host-bound."""
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_osrt_host_work_window(path)
    rep = first_report(path)
    (f,) = _bound(rep)
    assert not _unrecorded(rep)
    assert f["saving"]["ms_per_step"] == pytest.approx(truth["ran_ms"], rel=0.01)
    assert "the OS runtime trace, which records every OS call of 1.0 us or longer, holds none" in f["summary"]
    assert "NVTX" in f["actions"][0]["text"]  # the code no event records is seen first


@pytest.mark.parametrize("kw", [dict(osrt=False, settings=False), dict(settings=False), dict(threshold_ns=1_000_000)],
                         ids=["no_osrt", "rows_without_setting", "threshold_1ms"])
def test_without_a_whole_osrt_trace_the_time_stays_unknown(tmp_path, kw) -> None:  # noqa: ANN001
    path = str(tmp_path / "report1.sqlite")
    nx.write_osrt_host_work_window(path, **kw)
    rep = first_report(path)
    assert not _bound(rep)
    (f,) = _unrecorded(rep)
    assert "cannot tell which" in f["summary"]


@pytest.mark.parametrize("wait", nx.OSRT_WAITS)
def test_a_traced_wait_is_waiting_not_running(tmp_path, wait) -> None:  # noqa: ANN001
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_osrt_host_work_window(path, wait=wait)
    rep = first_report(path)
    assert not _bound(rep) and not _unrecorded(rep)
    (f,) = [x for x in rep["findings"] if x["id"].endswith("#outside_wait")]
    assert f["saving"]["ms_per_step"] == pytest.approx(truth["host_time_ms"], rel=0.01)
    assert f"`{wait}`" in f["summary"]


def _gaps(rep: dict) -> dict:
    (f,) = [f for f in rep["findings"] if f["rule"] == "step_gaps"]
    return f


def test_a_loops_untraced_gaps_under_an_osrt_trace_are_the_hosts_code(tmp_path) -> None:  # noqa: ANN001
    """On main: a warning, "likely the host waiting for a source that paces the loop ... or else its own code"."""
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_untraced_host_loop(path)
    f = _gaps(first_report(path))
    assert f["severity"] == "critical"
    assert f["metric"]["detail"]["unexplained_ms"] == pytest.approx(truth["ran_ms"], rel=0.03)
    assert "the host's own code, which the capture did not record" in f["summary"]
    assert "paces the loop" not in f["summary"] and "no context switches" not in f["summary"]


def test_a_loops_untraced_gaps_without_osrt_stay_unknown(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "report1.sqlite")
    nx.write_untraced_host_loop(path, osrt=False, settings=False)
    f = _gaps(first_report(path))
    assert "no context switches to tell them apart" in f["summary"]


@pytest.mark.parametrize("wait", nx.OSRT_WAITS)
def test_a_loops_traced_waits_are_waits(tmp_path, wait) -> None:  # noqa: ANN001
    path = str(tmp_path / "report1.sqlite")
    truth = nx.write_untraced_host_loop(path, wait=wait)
    f = _gaps(first_report(path))
    assert f["metric"]["detail"]["outside_wait_ms"] == pytest.approx(truth["host_untraced_ms"], rel=0.03)
    assert "did not record" not in f["summary"] and f"`{wait}`" in f["summary"]
