"""A capture recorded with CUDA tracing off is told to record again with the user's own command, CUDA traced beside
what it traced, and -- where its NVTX ranges mark the program's iterations -- the window on those ranges (issue #37
deliverable 1; h37-tracingoff2).

Wrong assumption on main: *a capture with tracing off keeps nothing of how it was made*, so its fix was the generic
``nsys profile -t cuda,nvtx -o run ./app``.  The export keeps the command line (``META_DATA_CAPTURE``:
``PROCESS_0:COMMAND`` / ``ARGUMENT_n``) and what it traced (``CAPTURE_EVENT_TYPE``), and its NVTX ranges name the
iteration to put the window on.
"""

from __future__ import annotations

import os
import shlex
import sqlite3

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys import reader
from tests.support.cli_report import first_report
from tests.support.paths import REPO

REAL = os.path.join(REPO, "tests", "fixtures", "wild", "tracing_off_nvtx_a10_train", "nvtx_result.sqlite")
JULIA = os.path.join(REPO, "tests", "fixtures", "nsys_windows", "tracing_off_julia.sqlite")


def _fix(path: str) -> dict:
    """The capture-quality finding's first fix of an export's report."""
    (f,) = [f for f in first_report(path)["findings"] if f["rule"] == "capture_quality"]
    return f["actions"][0]


def _by_hand(path: str) -> tuple[str, list[str]]:
    """The recorded command line and event types, read off the export with SQL."""
    con = sqlite3.connect(path)
    rows = dict(con.execute("SELECT name, value FROM META_DATA_CAPTURE WHERE name LIKE 'PROCESS_0:%'").fetchall())
    types = [v for (v,) in con.execute("SELECT value FROM META_DATA_CAPTURE WHERE name = 'CAPTURE_EVENT_TYPE'")]
    con.close()
    args = [rows[f"PROCESS_0:ARGUMENT_{i}"] for i in range(sum(k.startswith("PROCESS_0:ARGUMENT_") for k in rows))]
    return shlex.join([rows["PROCESS_0:COMMAND"], *args]), types


def test_the_reader_keeps_the_recorded_command_and_trace_list():
    """SQL on the real export: ``python benchmark.py`` under ``CAPTURE_EVENT_TYPE`` ``NvtxEvents`` alone."""
    command, types = _by_hand(REAL)
    assert (command, types) == ("python benchmark.py", ["NvtxEvents"])
    p = reader.read_trace(REAL).producer
    assert (p["program_command"], p["traced_apis"], p["retrace_apis"]) == (command, "nvtx", "cuda,nvtx")


def test_the_real_tracing_off_export_is_told_its_own_command_and_iteration_range():
    """15 ``benchmark_iteration`` ranges, the first 780.3 ms against a median of 209.5 ms (SQL: the only one over
    1.5x the median): a report for each of the first 3 ranges, the warm-up and two steady ones."""
    con = sqlite3.connect(REAL)
    lengths = [(e - s) / 1e6 for s, e in con.execute(
        "SELECT start, end FROM NVTX_EVENTS WHERE text = 'benchmark_iteration' ORDER BY start")]
    con.close()
    median = sorted(lengths)[len(lengths) // 2]
    warm = next(k for k, x in enumerate(lengths) if x <= 1.5 * median)
    assert (len(lengths), warm) == (15, 1)
    fix = _fix(REAL)
    assert "recorded with -t nvtx" in fix["text"] and "-t cuda,nvtx" in fix["text"], fix["text"]
    first = fix["snippet"].splitlines()[0]
    # one window (h37-tracingoff3), no longer a report per range: tests/job/test_tracing_off_window.py reads its numbers
    assert first.startswith("nsys profile -t cuda,nvtx --delay="), first
    assert "repeat-shutdown" not in fix["snippet"]
    assert f"the first ran {lengths[0]:.1f} ms against a median of {median:.1f} ms" in first, first
    assert "./app" not in fix["snippet"]


def test_control_the_julia_export_keeps_its_meaning_with_its_own_command():
    """Tracing off, no NVTX range (a Julia program's real export): the window and its words unchanged, the fix its own
    command (``julia your_script.jl``, SQL), CUDA traced beside NVTX -- no capture range where none marks an
    iteration."""
    command, _ = _by_hand(JULIA)
    rep = first_report(JULIA)
    job = rep["hosts"][0]["job"]
    assert job["kind"] == "no_gpu"
    assert job["kind_evidence"] == ("CUDA tracing was off (the capture's options): the window records no CUDA call, "
                                    "copy or kernel")
    fix = _fix(JULIA)
    assert fix["snippet"].splitlines()[0].startswith(f"nsys profile -t cuda,nvtx -o run {command}   #"), fix["snippet"]
    assert "--capture-range" not in fix["snippet"]


@pytest.mark.parametrize("warmup", [0, 1, 3])
def test_generated_loop_the_fix_names_the_program_and_the_range(tmp_path, warmup):
    """Truth by construction (``synthetic.nsysexport.write_tracing_off_loop``): the command with an argument that
    needs quoting and a range name with a space, both kept as a shell reads them in the fix."""
    p = str(tmp_path / "loop.sqlite")
    truth = nx.write_tracing_off_loop(p, command=("python", "train.py", "--tag", "run a"), iteration="train step",
                                      warmup=warmup, iterations=40)
    fix = _fix(p)
    first = fix["snippet"].splitlines()[0]
    assert first.startswith(f"nsys profile -t {truth['retrace']} --delay="), first
    assert f" -o run {truth['program']}   #" in first and f"`{truth['iteration']}`" in first, first
    assert ("no iteration ran over" in first) == (not warmup), first
    assert f"recorded with -t {truth['traced']}" in fix["text"]


def test_generated_command_without_iterations_names_the_program_alone(tmp_path):
    """The same command, its ranges none that name training (``write_window``'s ``load batch`` / ``preprocess``):
    the program retraced, no capture range."""
    p = str(tmp_path / "window.sqlite")
    nx.write_window(p, "tracing_off")
    fix = _fix(p)
    assert fix["snippet"].splitlines()[0].startswith("nsys profile -t cuda,nvtx -o run python3   #"), fix["snippet"]
    assert "--capture-range" not in fix["snippet"]


# --------------------------------------------------------------------------- the kind its ranges name (deliverable 2)

def _session(path: str):  # noqa: ANN202 - runtime's Report
    """The whole report of one export, as the pipeline builds it (the laws read it)."""
    from types import SimpleNamespace

    from tb_gpu_advisor.runtime.pipeline import analyze_session

    return analyze_session("w", "s", [SimpleNamespace(host="h0", path=path, format="nsys",
                                                      size=os.path.getsize(path))])


def _no_step_anywhere(report) -> None:  # noqa: ANN001 - runtime's Report
    """No GPU step in the host's JSON and the laws hold (``no-gpu-step`` of the host and the session among them)."""
    from tests.support.properties import no_gpu_session_step_problems, no_gpu_step_problems, report_violations

    (host,) = report.hosts
    assert len(host.step_rows) == 0 and host.mean_step_ms() is None and not host.achievable, host.achievable
    assert no_gpu_step_problems("h0", host) == [] and no_gpu_session_step_problems(report) == []
    assert report_violations(report) == []


def test_the_real_export_is_a_training_job_whose_gpu_side_went_unrecorded():
    """SQL: 15 ``backward`` ranges, each inside a ``benchmark_iteration`` (the job is training); no CUDA table, the
    options' ``COLLECT_CUDA_TRACE`` false.  The kind is training, the window tracing off, no step timed anywhere --
    the title "no step", the job line saying the GPU work was not recorded."""
    con = sqlite3.connect(REAL)
    inside = con.execute("SELECT count(*) FROM NVTX_EVENTS b JOIN NVTX_EVENTS i ON i.text = 'benchmark_iteration' "
                         "AND b.start >= i.start AND b.end <= i.end WHERE b.text = 'backward'").fetchone()[0]
    cuda = {t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE name LIKE 'CUPTI_ACTIVITY_KIND_%'")}
    con.close()
    assert inside == 15 and not cuda
    report = _session(REAL)
    (host,) = report.hosts
    assert (host.job["kind"], host.job.get("gpu_unrecorded")) == ("training", True), host.job
    assert host.job["summary"].startswith("Job: training steps, their GPU work not recorded ["), host.job["summary"]
    _no_step_anywhere(report)
    (f,) = [f for f in report.findings if f.rule == "capture_quality"]
    assert f.title == "CUDA tracing was off: the capture holds no GPU work"
    assert [x.rule for x in report.findings] == ["capture_quality"]


def test_generated_loop_reads_as_training_with_no_step(tmp_path):
    """Truth by construction: a training loop's NVTX ranges under ``-t nvtx`` are a training job, no step timed."""
    p = str(tmp_path / "loop.sqlite")
    nx.write_tracing_off_loop(p)
    report = _session(p)
    (host,) = report.hosts
    assert (host.job["kind"], host.job.get("gpu_unrecorded")) == ("training", True), host.job
    _no_step_anywhere(report)


def test_generated_ranges_that_name_no_training_stay_no_gpu(tmp_path):
    """Control: tracing off under ranges that name no work (``load batch`` / ``preprocess``) keeps ``no_gpu``."""
    p = str(tmp_path / "window.sqlite")
    nx.write_window(p, "tracing_off")
    (host,) = _session(p).hosts
    assert (host.job["kind"], host.job.get("gpu_unrecorded")) == ("no_gpu", True), host.job
