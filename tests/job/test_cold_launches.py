"""A cold process's first launches read from their cause (issue #37 class 1/4, h37-coldstart).

Two misreadings survey h37-survey48 left:

* Better-Call-Paul/CUDA-Transformer's T4 ``layer_norm`` export (MIT, kept as ``wild/lazy_first_launch_t4``): the
  first ``cudaLaunchKernel`` takes 1,129 us (lazy loading, ``cuModuleGetLoadingMode`` recorded), the next two 17.9
  and 28.6 us.  ``job.phase`` took a launch for a module load only over ``max(1 ms, 100 x median launch)`` = 2.25 ms
  here, so the load stayed the steady launch path: critical launch-bound, "saves ~806 us (65%)" with a CUDA-graph
  fix that removes no module load.  ASSUMPTION that was wrong: only a launch 100x the typical one can be a load.  A
  launch of a millisecond with the GPU idle that ran its kernel's first run, longer than every launch by that call of
  a kernel already run, is the load by physics: a repeat launch has no module to load.
* Qcompiler/MIXQ's A100 ``src/benchmark/report1.sqlite`` (no licence: read locally, not kept): ``nsys`` launched the
  program, whose two launches load their modules (7.2 and 6.5 ms) and whose kernels start 0.42 and 1.48 ms after the
  launches returned, the GPU idle.  The report said "The capture opens while the GPU still runs earlier work".
  ASSUMPTION that was wrong: an idle GPU holding its first launched work may be running work from before the window.
  In a process whose runtime start-up the window holds, nothing was launched before it: the idle is the first use
  of what the launch loaded, a one-time cost of the load.

The exports by construction are ``synthetic.nsysexport.write_cold_launches``'s."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synthetic.nsysexport import write_cold_launches
from tests.support.cli_report import cli_report, first_host

LAYER_NORM = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "lazy_first_launch_t4" / "report1.sqlite"
BEFORE = "The capture opens while the GPU still runs earlier work"


def _cold(findings: list[dict]) -> dict:
    return next(f for f in findings if f["rule"] == "cold_start")


def test_the_kept_layer_norms_first_launch_is_its_module_load_not_the_launch_path():
    con = sqlite3.connect(LAYER_NORM)
    launches = [r[0] for r in con.execute(
        "SELECT r.end - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
        "WHERE s.value LIKE 'cudaLaunchKernel%' ORDER BY r.start")]
    kernels = {r[0] for r in con.execute("SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL")}
    assert launches == [1129315, 17903, 28570] and len(kernels) == 3  # the truth, by SQL on the file
    report = cli_report(LAYER_NORM)
    top = report["findings"][0]
    assert top["rule"] == "cold_start" and top["severity"] == "critical", (top["rule"], top["title"])
    assert "1 kernel launch of 1.1 ms with the GPU idle" in top["summary"], top["summary"]
    lb = [f for f in report["findings"] if f["rule"] == "launch_bound"]
    # what is left of the launch wait is the two quick launches' and the syncs': no critical, no 806 us saving
    assert all(f["severity"] != "critical" and f["saving"]["ms_per_step"] < 0.2 for f in lb), lb


def test_a_first_launch_over_a_millisecond_among_quick_ones_is_a_load_by_construction(tmp_path):
    truth = write_cold_launches(str(tmp_path / "cold.sqlite"))
    assert truth["load_launches_ms"] == [pytest.approx(1.1293)]
    cold = _cold(first_host(tmp_path / "cold.sqlite")["findings"])
    assert "1 kernel launch of 1.1 ms with the GPU idle" in cold["summary"], cold["summary"]


def test_a_first_launch_no_slower_than_a_repeat_launch_of_the_call_is_no_load(tmp_path):
    """Control: the same first launch where a later launch by the same call, of the kernel already run, stalls as
    long -- the launch path itself stalls there (preemption, a loaded host): nothing says a module loaded."""
    truth = write_cold_launches(str(tmp_path / "repeat.sqlite"), repeat_us=1200.0)
    assert truth["load_launches_ms"] == []
    findings = first_host(tmp_path / "repeat.sqlite")["findings"]
    assert not any("kernel launch of" in f["summary"] for f in findings if f["rule"] == "cold_start")


def test_the_gpu_idle_after_a_started_process_loads_its_modules_is_the_loads(tmp_path):
    truth = write_cold_launches(str(tmp_path / "mixq.sqlite"), launches_us=(7200.0, 20.0, 6500.0),
                                leads_us=(420.0, 2.0, 1480.0))
    findings = first_host(tmp_path / "mixq.sqlite")["findings"]
    assert not [f for f in findings if f["title"] == BEFORE]
    cold = _cold(findings)
    lead = sum(truth["load_leads_ms"])
    assert f"the GPU idle {lead:.1f} ms from the return of 2 first launches" in cold["summary"], cold["summary"]
    # the whole of the load's cost is booked as start-up: both launches and the idle after them
    assert cold["saving"]["ms_per_step"] >= sum(truth["load_launches_ms"]) + lead - 0.05


def test_a_window_opened_on_a_running_process_still_opens_on_earlier_work(tmp_path):
    """Control: without the runtime's start-up in the window the GPU may be finishing work launched before it."""
    write_cold_launches(str(tmp_path / "cut.sqlite"), launches_us=(20.0, 18.0, 25.0), leads_us=(1480.0,),
                        started=False)
    assert [f for f in first_host(tmp_path / "cut.sqlite")["findings"] if f["title"] == BEFORE]
