"""A window without GPU work times no step, so none is judged unsteady.

Survey h37-survey22: Lightning's ``PyTorchProfiler`` over a fit on a CPU (``wild/lightning_cpu_fit``: the fit's
start-up window of 480 ms beside four iterations of 20-38 ms) read on main as "no step: the window holds no GPU work"
in its header and, under it, "Step times vary by 156% (stddev / mean over 5 steps)" -- a report contradicting itself.
The steadiness note now follows the too-few-steps warning: neither where the window holds no GPU work.  Controls: the
same note on GPU work with the same spread (``tests/rules/test_rules.py::test_capture_quality``), and here by
construction.
"""

from __future__ import annotations

import dataclasses

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.rules import REGISTRY
from tests.support import lightning
from tests.support.rules_factory import healthy
from tests.support.report_store import session_report

UNSTEADY = "Step times are not steady"


def _titles(m) -> list[str]:
    return [f.title for f in REGISTRY["capture_quality"].check(m)]


def test_a_cpu_only_fit_is_not_called_unsteady(tmp_path):
    """The profiler's marks alone (Lightning's iteration ranges taken out: with them the four iterations are the steps,
    h37-left46), whose start-up window beside the iterations makes the spread."""
    lightning.without_iteration_ranges(tmp_path)
    (s,) = discover(str(tmp_path))
    rep = session_report(s).to_dict()
    (host,) = rep["hosts"]
    assert host["job"]["kind"] == "no_gpu" and host["capture"]["step_time_cv"] > 1.0  # the spread is there
    assert UNSTEADY not in [f["title"] for f in host["findings"]]


def test_the_same_spread_on_gpu_work_is_still_a_note():
    m = healthy()
    m.capture.step_time_cv = 0.9
    assert UNSTEADY in _titles(m)
    m.gpus = [dataclasses.replace(g, active=False) for g in m.gpus]
    assert UNSTEADY not in _titles(m)
