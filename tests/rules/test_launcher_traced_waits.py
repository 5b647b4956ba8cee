"""A Python launcher's time where the capture traces the host's waits (issue #37 class 3, h37-launcherhb).

Under Nsight with ``-t osrt`` (or context switches) the unrecorded-idle warning is silent and the host-bound finding
names the time no event records, the thread on the CPU.  The silence before a bare driver launch there may be the
thread blocked in a traced OS call (``poll``, ``read``), which runs no launcher: the launcher's part is the silence
less its thread's traced waits, one measure (``metrics.syncs.launcher_silence``) for every finding that names it.
Truth by construction: ``synthetic.nsysexport.write_launcher_waits`` -- launches after untraced silences (the
launcher's) and after traced ``poll`` waits (not the launcher's), mixed in one step.  Controls: every launch after a
traced wait (nothing named), and the launcher's time where no wait lies before any launch (as before)."""

from __future__ import annotations

import pytest

from synthetic.nsysexport import write_launcher_waits
from tests.support.cli_report import first_report

WORDS = "launched straight through the driver"
#: launches after the launcher's own silence and after a traced ``poll``, in one step; the waited ones' launcher part
#: after the wait (``after_wait_us``) where given
MIXED = {"launches": 3, "waited": 1, "launcher_us": 50.0, "wait_us": 40.0}


def _report(tmp_path, **kw) -> tuple[dict, dict]:
    """(the report, the generator's truth) of one generated export."""
    run = tmp_path / "run"
    run.mkdir()
    truth = write_launcher_waits(str(run / "bench.sqlite"), **kw)
    return first_report(run), truth


def _one(report: dict, title: str) -> dict:
    (f,) = [f for f in report["findings"] if f["title"].startswith(title)]
    return f


@pytest.mark.parametrize("kw", [MIXED, {**MIXED, "after_wait_us": 20.0}], ids=["wait_then_launch", "wait_then_launcher"])
def test_host_bound_names_the_launchers_part_less_the_traced_waits(tmp_path, kw):
    """Fails on main (no launcher named by the host-bound finding; main's measure also counted the 40 us ``poll``
    before each waited launch: 0.19 ms and 4 launches where the truth is 0.15 and 3).  The launcher's time and
    launches are the generator's -- the silences' untraced part only --, a part of the finding's unrecorded time, in
    the framework's words, with its fix after the record-the-host fix."""
    report, truth = _report(tmp_path, **kw)
    f = _one(report, "Host-bound")
    detail = f["metric"]["detail"]
    assert detail["launcher_ms"] == pytest.approx(truth["launcher_ms_per_step"], abs=2e-3)
    assert detail["launcher_launches_per_step"] == truth["launcher_launches_per_step"]
    assert WORDS in f["summary"] and "Triton" in f["summary"]
    # a part of the unrecorded time the finding names, which excludes the traced waits
    assert detail["launcher_ms"] <= detail["unrecorded_ms"] <= truth["untraced_ms_per_step"] + 2e-3
    texts = [a["text"] for a in f["actions"]]
    launcher = [i for i, t in enumerate(texts) if "Python launcher" in t]
    assert launcher and launcher[0] == 1 and texts[0].startswith("Record"), texts
    assert not [g for g in report["findings"] if g["id"].endswith("#unrecorded")]  # the waits are traced: one home


def test_recorded_waits_are_no_launchers_time_where_not_all_are_traced(tmp_path):
    """Fails on main (0.182 ms named, of a measure of 0.19 ms and 4 launches: the ``poll`` counted).  The export's
    options do not say the OS runtime was traced, so the unrecorded-idle warning names the time, yet the ``poll`` rows
    it holds are still waits, never the launcher's."""
    report, truth = _report(tmp_path, settings=False, **MIXED)
    detail = _one(report, "The GPU idles while the host does what")["metric"]["detail"]
    assert detail["launcher_ms"] == pytest.approx(truth["launcher_ms_per_step"], abs=2e-3)
    assert detail["launcher_launches_per_step"] == truth["launcher_launches_per_step"]


@pytest.mark.parametrize("settings", [True, False], ids=["traced", "rows_only"])
def test_no_launcher_where_every_launch_follows_a_traced_wait(tmp_path, settings):
    """Every bare driver launch follows a traced ``poll`` right up to the call: no launcher's time, in any finding.
    ``traced`` is a control (it passes on main too: main's host-bound finding named no launcher at all, though its
    measure held 0.2 ms and 4 launches); ``rows_only`` fails on main, whose unrecorded-idle warning named the 4
    ``poll`` waits as a Python launcher's time."""
    report, truth = _report(tmp_path, settings=settings, launches=0, waited=4, wait_us=50.0, between_us=200.0)
    assert truth["launcher_ms_per_step"] == 0
    named = [f["id"] for f in report["findings"]
             if "launcher_ms" in ((f.get("metric") or {}).get("detail") or {}) or WORDS in f["summary"]]
    assert not named
    assert report["findings"]  # the host's time is still read: the control exercises the findings, not an empty report


@pytest.mark.parametrize("kw", [MIXED, {**MIXED, "settings": False}], ids=["traced", "rows_only"])
def test_traced_waits_reports_hold_every_property(tmp_path, kw):
    """The report properties (tests/support/properties.py; ``launcher<=unrecorded``: the host-bound finding's launcher
    part within its own unrecorded whole) on the generated exports, which the walk of tests/report/test_properties.py
    does not hold; the law fails where the part is made larger than its whole."""
    from tb_gpu_advisor.discover.logdir import discover
    from tests.support.report_store import session_report
    from tests.support.properties import launcher_part_problems, report_violations

    write_launcher_waits(str(tmp_path / "bench.sqlite"), **kw)
    (s,) = discover(str(tmp_path))
    rep = session_report(s)
    (f,) = [f for f in rep.hosts[0].findings if f.metric and (f.metric.detail or {}).get("launcher_ms")]
    assert report_violations(rep) == []
    f.metric.detail["launcher_ms"] = f.metric.detail["unrecorded_ms"] * 2
    assert launcher_part_problems("h", rep.hosts[0])
