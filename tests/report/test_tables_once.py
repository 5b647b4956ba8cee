"""A table's kernels never add up past the classes they are shown under (h37-coldshare34; h37-classsum33 *Left* 1).

Wrong assumption: *a kernel's own duration summed over its calls is its part of the kernel time a screen shows beside
the classes.*  h37-classsum33 made the kernel classes count each microsecond of a GPU once (kernels on concurrent
streams share the time they overlap), but the diff still printed its "Largest kernel changes" and "Largest op changes"
from the kernels table's ``total us`` and the ops table's ``kernel us`` -- each kernel's own duration, concurrent ones
each counted -- under "Kernel time by class": a diff of ``wild/extrap_parallel_kernels_gtx1060`` (five streams, one
777.0 ms pass) listed 895.6 ms/step of kernels under 467.9 ms/step of classes.  Now the kernels table carries
``wall us`` (``KernelStat.wall_us``) and the ops table ``kernel wall us`` (``OpStat.kernel_wall_us``), the same
shares the classes sum, and the diff reads them; ``total us`` / ``kernel us`` stay the own durations rates need, and
the roofline's ``ms/step`` (a rate's time) says it is each shape's own kernel time.

Truth by construction: :func:`synthetic.torchtrace.write_concurrent_streams` -- a GEMM beside three element-wise
kernels, 2 ms each, started together on four streams: each kernel's part of the step is 0.5 ms, its own time 2 ms.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.torchtrace import write_concurrent_streams
from tb_gpu_advisor.model.schema import KERNEL_WALL_US, WALL_US
from tb_gpu_advisor.report.diff import diff_reports
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.report.diff_render import display
from tests.support.properties import diff_table_whole_problems, table_whole_problems
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions


def _per(h) -> float:  # noqa: ANN001 - a HostReport
    return float(h.steps.get("count") or 1) * max(1, sum(1 for g in h.gpus if g.kernel_count))


def _column_ms(h, table: str, col: str) -> float:  # noqa: ANN001 - a HostReport
    t = getattr(h, table)
    i = t.columns.index(col)
    return sum(r[i] or 0.0 for r in t.rows) / _per(h) / 1000.0


def _classes_ms(h) -> float:  # noqa: ANN001 - a HostReport
    return sum(c["us_per_step"] for c in h.kernel_classes) / 1000.0


def test_five_streams_kernels_in_a_diff_are_no_more_than_their_classes() -> None:
    """The real capture: main's diff of it with itself listed kernels of 895.6 ms/step (``total us``) under classes of
    467.9 ms/step; here its kernels and ops read 467.9 ms/step, the classes' and the ledger's compute."""
    (s,) = [s for s in wild_sessions() if s.run == "extrap_parallel_kernels_gtx1060"]
    rep = session_report(s)
    (h,) = rep.hosts
    classes = _classes_ms(h)
    assert classes == pytest.approx(467.9, abs=0.1)
    assert _column_ms(h, "kernels", "total us") == pytest.approx(895.6, abs=0.1)  # own time: concurrent each counted
    assert _column_ms(h, "kernels", WALL_US) == pytest.approx(classes, rel=1e-4)
    assert _column_ms(h, "ops", KERNEL_WALL_US) == pytest.approx(classes, rel=1e-4)
    d = diff_reports(rep, rep).to_dict()
    kernels = sum(c["base"] or 0.0 for c in d["kernels"]) / 1000.0
    classes_d = sum(c["base"] or 0.0 for c in d["kernel_classes"]) / 1000.0
    assert kernels <= classes_d * 1.001, (kernels, classes_d)  # main: 895.6 > 467.9
    assert len(d["kernels"]) == 6 and diff_table_whole_problems(d) == [] and table_whole_problems(h) == []
    # the law catches main's diff: its kernels read from their own durations
    own = dict(d, kernels=[dict(c, base=c["base"] * 895.6 / 467.9) for c in d["kernels"]])
    assert diff_table_whole_problems(own)


def _session(folder: Path):  # noqa: ANN202 - a Report
    (s,) = discover(str(folder))
    return session_report(s)


@pytest.mark.parametrize("streams", [1, 4])
def test_concurrent_kernels_each_hold_their_share(tmp_path: Path, streams: int) -> None:
    """By construction, per step: each of ``streams`` kernels of 2 ms runs beside the others, so its part of the step
    is 2/``streams`` ms and its own time 2 ms.  Main: no ``wall us`` column; the diff's kernels read 2 ms each, 8 ms
    at 4 streams under 2 ms of classes.  One stream: the control, where the two agree."""
    (tmp_path / "run").mkdir()
    truth = write_concurrent_streams(str(tmp_path / "run" / "w.pt.trace.json"), streams=streams)
    rep = _session(tmp_path)
    (h,) = rep.hosts
    t, per = h.kernels, _per(h)
    wall = [r[t.columns.index(WALL_US)] / per / 1000.0 for r in t.rows]
    own = [r[t.columns.index("total us")] / per / 1000.0 for r in t.rows]
    assert len(wall) == streams if streams == 1 else len(wall) == 2, t.rows  # the GEMM, and one element-wise name
    assert sum(wall) == pytest.approx(truth["kernel_busy_ms"], rel=1e-3)
    assert sum(own) == pytest.approx(truth["summed_kernel_ms"], rel=1e-3)
    gemm = next(r for r in t.rows if "add" not in str(r[1]))
    assert gemm[t.columns.index(WALL_US)] / per / 1000.0 == pytest.approx(truth["class_ms"]["matmul/conv"], rel=1e-3)
    assert _column_ms(h, "ops", KERNEL_WALL_US) == pytest.approx(truth["kernel_busy_ms"], rel=1e-3)
    assert table_whole_problems(h) == []
    d = diff_reports(rep, rep).to_dict()
    kernels = sum(c["base"] or 0.0 for c in d["kernels"]) / 1000.0
    assert kernels == pytest.approx(truth["kernel_busy_ms"], rel=1e-3)  # main: 8.0 ms at 4 streams
    assert diff_table_whole_problems(d) == []
    titles = {t["id"]: t["title"] for t in display(diff_reports(rep, rep))["tables"]}  # the unit, said per table
    assert titles["kernel_classes"] == "Kernel time by class (us/step, each microsecond once)", titles
    assert titles["kernels"] == "Largest kernel changes (us/step, each microsecond once)", titles
    assert titles["ops"] == "Largest op changes (kernel us/step, each microsecond once)", titles
