"""The uploads before a program's first kernel are the time its copies were issued or in flight, not the hull from the
first copy to the last: a real CUDA hash join (bwyogatama/Mordred-Deprecated, ``tests/fixtures/wild/PROVENANCE.md``)
uploads 128 x 4 MB in 0.12 s, then its host waits 4.65 s in ``getc`` on its standard input before the first query
copies its few small inputs and launches.  The hull read those 4.65 s as uploads ("131 copies to the device before the
first kernel (4.79 s)", a critical cold start).  The bound here is read off the file with sqlite3, independently of the
Advisor: no one-time cost can exceed the copies' and the runtime calls' own time before the first kernel."""

from __future__ import annotations

import json
import sqlite3

from tests.support.cli_report import in_process
from tests.support.paths import FIXTURES

RUN = FIXTURES / "wild" / "mordred_rtx6000_hashjoin"


def _one_time_bound_ms() -> float:
    """Every CUDA call before the first kernel plus every copy before it, in ms: all a cold start can hold here."""
    con = sqlite3.connect(RUN / "report1.sqlite")
    try:
        (first,), = con.execute("SELECT min(start) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall()
        (calls,), = con.execute("SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start < ?", (first,))
        (copies,), = con.execute("SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE start < ?", (first,))
    finally:
        con.close()
    return (calls + copies) / 1e6


def test_a_wait_on_standard_input_between_uploads_is_no_upload():
    out = in_process("report", RUN, "--format", "json")  # the command's main, in this process
    assert out.returncode == 0, out.stderr
    (report,) = json.loads(out.stdout)["reports"]
    (host,) = report["hosts"]
    bound = _one_time_bound_ms()
    assert 300 < bound < 1000  # the file's own numbers: ~0.1 s of uploads, 0.19 s of cudaMalloc, the copies' calls
    assert host["job"]["one_time_ms"] <= bound, host["job"]["phase_evidence"]
    assert host["job"]["phase"] != "warm-up"
    # no cold start is claimed: at most the info note of one-time costs outside the steps (h37-left23), no saving
    cold = [f for f in report["findings"] if f["rule"] == "cold_start"]
    assert all(f["severity"] == "info" and f["saving"] is None for f in cold), cold
