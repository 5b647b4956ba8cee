"""A window with CUDA tracing off still says what the job's own NVTX ranges hold (issue #37 classes 1 and 2).

``nsys profile -t nvtx`` records the program's ranges and nothing of CUDA's.  The kept real export
(``tests/fixtures/wild/tracing_off_nvtx_a10_train``, h37-survey57): a CS336 training benchmark on an A10 whose 45 NVTX
ranges are ``benchmark_iteration`` ×15 (median 209.5 ms), each holding ``forward`` and ``backward``.  On main the
report said only "CUDA tracing was off": the wrong assumption was that a window whose options say tracing was off holds
nothing else worth reading, where its ranges name the job's training loop and time each iteration on the host.
"""

from __future__ import annotations

import os
import shutil
import sqlite3

from synthetic import nsysexport as nx
from tests.support.cli_report import first_report
from tests.support.paths import REPO

REAL = os.path.join(REPO, "tests", "fixtures", "wild", "tracing_off_nvtx_a10_train", "nvtx_result.sqlite")
WINDOWS = os.path.join(REPO, "tests", "fixtures", "nsys_windows")


def _host(path: str) -> dict:
    """The report's one host of an export, with the report's findings in it."""
    rep = first_report(path)
    (host,) = rep["hosts"]
    return {**host, "findings": rep["findings"]}


def _window_finding(host: dict) -> dict:
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality"]
    return f


def test_tracing_off_export_names_the_training_loop_its_nvtx_ranges_time():
    """The iteration range around the training ranges, its count and median host length, beside tracing off."""
    host = _host(REAL)
    evidence = host["job"]["kind_evidence"]
    # the kind its ranges name (h37-tracingoff2: ``no_gpu`` before), its GPU side unrecorded
    assert (host["job"]["kind"], host["job"]["gpu_unrecorded"]) == ("training", True), host["job"]
    assert evidence.startswith("CUDA tracing was off (the capture's options)")
    assert "only NVTX ranges (45 ranges: `benchmark_iteration`, `forward`, `backward`)" in evidence, evidence
    assert ("which name a training loop: `benchmark_iteration` ×15 of 209.5 ms each (median), each holding "
            "`backward`") in evidence, evidence
    f = _window_finding(host)
    assert f["severity"] == "warning" and "Turn CUDA tracing on" in f["actions"][0]["text"]
    assert "`benchmark_iteration` ×15 of 209.5 ms" in f["summary"]


def test_without_the_iteration_range_the_training_ranges_are_timed_themselves(tmp_path):
    """The same export less its ``benchmark_iteration`` ranges: no range holds the ``backward`` ranges, so they are
    named and timed alone (median 136.1 ms), never an iteration read from the ``forward`` beside them."""
    path = str(tmp_path / "nvtx_result.sqlite")
    shutil.copy(REAL, path)
    con = sqlite3.connect(path)
    con.execute("DELETE FROM NVTX_EVENTS WHERE text = 'benchmark_iteration'")
    con.commit()
    con.close()
    evidence = _host(path)["job"]["kind_evidence"]
    assert "only NVTX ranges (30 ranges: `forward`, `backward`)" in evidence, evidence
    assert evidence.endswith("which name work only training does: `backward` ×15 of 136.1 ms each (median)"), evidence
    assert "training loop" not in evidence


def test_control_a_window_without_ranges_keeps_its_words():
    """Tracing off and no NVTX at all (a Julia program's real export, ``nsys_windows``): the words of main, unchanged
    -- passes on main too."""
    julia = _host(os.path.join(WINDOWS, "tracing_off_julia.sqlite"))["job"]["kind_evidence"]
    assert julia == "CUDA tracing was off (the capture's options): the window records no CUDA call, copy or kernel"


def test_generated_ranges_that_name_no_training_are_listed_and_say_none(tmp_path):
    """Truth by construction (``synthetic.nsysexport.write_window``): tracing off with ranges that name no training
    (``load batch`` / ``preprocess``) -- the ranges listed, no training said."""
    p = str(tmp_path / "tracing_off.sqlite")
    truth = nx.write_window(p, "tracing_off")
    evidence = _host(p)["job"]["kind_evidence"]
    assert evidence.endswith(f"; only NVTX ranges ({truth['nvtx_ranges']} ranges: `load batch`, `preprocess`)"), evidence
    assert "training" not in evidence


def test_tracing_off_marks_time_no_gpu_step_the_report_could_account():
    """One account of the window (the lead, after h37-survey57's *Left* 1): the title said "no step: the window holds no
    GPU work" while the JSON held 13 NVTX steps of 210.0 ms, step rows whose ledger booked 203.3 ms of each as host
    compute (the GPU's side unrecorded, not idle) and an account "achievable 210 ms".  The marks time iterations the
    job's words still state (above), but no GPU step: no step rows, no account, ``job.gpu_unrecorded``."""
    host = _host(REAL)
    assert host["job"].get("gpu_unrecorded") is True, host["job"]
    assert host["step_rows"] == [] and not host["achievable"], (host["step_rows"][:1], host["achievable"])
    # the kind its ranges name from h37-tracingoff2 (``no_gpu`` before): still no GPU step
    assert "training" == host["job"]["kind"] and "×15 of 209.5 ms" in host["job"]["kind_evidence"]
