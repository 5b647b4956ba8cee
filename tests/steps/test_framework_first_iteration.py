"""The first iteration a framework's ranges mark holds the loop's own work before its engine's ``forward``
(h37-randjobs12, ``scripts/randjobs.py --forms12`` walk seed 84).

``steps.iterations._framework_iterations`` (h37-nvtx22) runs each step from the end of one iteration-closing range
(DeepSpeed's ZeRO-3 optimizer ``step``) to the end of the next, so every later step holds the loop's wait for its
batch before the engine's ``forward``; the first ran from the thread's first framework range alone and left that wait
out.  Nsight exports by construction (``synthetic.nsysexport.NsysJob``: no ATen op range, only DeepSpeed's ranges,
gradient accumulation 4), every iteration the period long.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host

_DS = ("DeepSpeedEngine.forward", "DeepSpeedEngine.backward", "DeepSpeedZeroOptimizer_Stage3.step")


def _host(tmp_path, **kw):  # noqa: ANN001 - pytest's tmp_path
    path = tmp_path / "ds.sqlite"
    truth = nx.write(str(path), nx.NsysJob(steps=3, ops=18, step_range=None, autograd_nvtx=False,
                                           extra_ranges=_DS[:2] * 4 + _DS[2:], **kw))
    return first_host(path), truth


@pytest.mark.parametrize("domain", [None, "DeepSpeed"])
def test_the_first_iteration_holds_its_batch_wait(tmp_path, domain):  # noqa: ANN001
    """2 ms waiting for the DataLoader before each iteration's first ``forward``: main read the first step 7.427 ms
    of the 9.427 ms period (the later two whole)."""
    host, truth = _host(tmp_path, input_ms=2.0, range_domain=domain)
    assert host["steps"]["found"] == truth.steps == 3
    rows = [r["step_ms"] for r in host["step_rows"]]
    assert rows and all(abs(ms - truth.step_ms) < 0.01 for ms in rows), (rows, truth.step_ms)


def test_control_no_wait_before_the_forward(tmp_path):  # noqa: ANN001
    """No work of the loop's before the engine's ``forward``: the first step starts at it, as on main."""
    host, truth = _host(tmp_path)
    rows = [r["step_ms"] for r in host["step_rows"]]
    assert rows and all(abs(ms - truth.step_ms) < 0.01 for ms in rows), (rows, truth.step_ms)
