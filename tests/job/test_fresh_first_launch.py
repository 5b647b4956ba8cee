"""A process's first launch on its GPU, in a window that holds its start-up, waits on nothing from before the capture
(issue #37 class 1, h37-survey63).

max-zhao0's TAC-HEP ``mm_cuda`` export (a T4 shared by a course's jobs; ``nsys`` started the program, its context made
in the first ``cudaMallocManaged``; no licence: read locally, not kept): the first ``cudaLaunchKernel`` takes 516 us
(``cuLibraryLoadData`` just before it: the module loaded lazily) against 13 and 52 us for the next two, and the kernel
starts 400 us after the call returned.  The report read "The capture opens while the GPU still runs earlier work"
for 915 us -- the call and the idle after it -- while its cold-start finding booked the same 400 us as "the first
use of what the call set up, with nothing launched before the start-up to wait on".  ASSUMPTION that was wrong: the
idle before the capture's first GPU work, that work launched, may be work queued before the window opened.  A GPU
whose first work a process launched after starting its runtime in the window had nothing queued: the ledger books
no work from before the capture there, and the first launch call (the GPU idle through it, nothing before it to
run) is a one-time cost with the idle after it.

The exports by construction are ``synthetic.nsysexport.write_cold_launches``'s."""

from __future__ import annotations

import pytest

from synthetic.nsysexport import write_cold_launches
from tests.support.cli_report import first_host

BEFORE = "The capture opens while the GPU still runs earlier work"
SHAPE = {"launches_us": (516.0, 13.0, 52.0), "leads_us": (400.0, 2.0, 2.0)}


def test_a_started_processs_first_launch_waits_on_no_work_from_before_the_capture(tmp_path):
    truth = write_cold_launches(str(tmp_path / "fresh.sqlite"), **SHAPE)
    assert truth["load_launches_ms"] == [] and truth["first_call_ms"] == pytest.approx(0.516)
    host = first_host(tmp_path / "fresh.sqlite")
    assert not [f for f in host["findings"] if f["title"] == BEFORE], [f["summary"] for f in host["findings"]]
    # nothing of the pass is booked as work the capture does not hold
    assert host["breakdown_ms"]["unseen"] == pytest.approx(0.0, abs=0.005), host["breakdown_ms"]
    cold = next(f for f in host["findings"] if f["rule"] == "cold_start")
    assert "the GPU idle 0.5 ms inside 1 first launch call of a process on its GPU" in cold["summary"], cold["summary"]
    assert "the GPU idle 0.4 ms from the return of 1 first launch" in cold["summary"], cold["summary"]
    # the call and the idle after it, both one-time costs, once each
    first = truth["first_call_ms"] + truth["first_lead_ms"]
    assert host["breakdown_ms"]["startup"] == pytest.approx(first, abs=0.01), host["breakdown_ms"]
    assert cold["saving"]["ms_per_step"] == pytest.approx(first, abs=0.01)


def test_a_window_opened_on_a_running_process_keeps_the_earlier_work_reading(tmp_path):
    """Control: the same launches in a window that opens on a process already running (no runtime start-up in it):
    the GPU may be finishing work launched before the window, and the note stays."""
    truth = write_cold_launches(str(tmp_path / "cut.sqlite"), started=False, **SHAPE)
    assert truth["first_call_ms"] == 0.0
    host = first_host(tmp_path / "cut.sqlite")
    assert [f for f in host["findings"] if f["title"] == BEFORE]
    assert host["breakdown_ms"]["unseen"] > 0.4, host["breakdown_ms"]
