"""A test that runs the command's ``main`` in this process leaves nothing to the next test of its worker
(h37-review62; the second test fails on 2aa60c44).

Why: some 60 tests run ``main`` in process (``tests/support/cli_report.ran_report`` and its kin; session 62 moved
more there to save a fresh interpreter each).  ``main`` sets, for its worker processes, the settings' variables
(``--model-flops-per-step`` -> ``TB_GPU_ADVISOR_MODEL_FLOPS``) and the debug switch, and installs its stderr handler on
the root logger, bound to the ``sys.stderr`` of that moment -- the test's redirected buffer.  Only the cache folder's
variable was put back after each test (``tests/conftest.py``), so the next test of the worker analysed with the
earlier test's model FLOPs as its own setting (``test_mcp_server`` cleared it by hand), and its warnings went to the
dead buffer, so a check that a report logs nothing on stderr passed whatever it logged.

The tests run in file order on one worker (``--dist loadfile``); the first records what it saw before ``main`` ran.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from synthetic import torchtrace as tt
from tb_gpu_advisor.common import logs
from tb_gpu_advisor.common.thresholds import ENV_MODEL_FLOPS
from tests.support.cli_report import ran_report

_BEFORE: dict = {}


def _state() -> dict:
    root = logging.getLogger()
    return {"flops": os.environ.get(ENV_MODEL_FLOPS), "debug": os.environ.get(logs.ENV_DEBUG),
            "command_handlers": [h for h in root.handlers if logs.is_command_handler(h)], "root_level": root.level}


def test_a_report_run_in_process_with_a_setting(tmp_path: Path) -> None:
    _BEFORE.update(_state())
    tt.write_cuda_activity_off(str(tmp_path / "h.1.pt.trace.json"))
    code, rep = ran_report(tmp_path, extra=("--model-flops-per-step", "1e11"))
    assert code == 0 and rep["hosts"], rep
    during = _state()  # what main set for its workers: the setting, the debug switch, its stderr handler
    assert during["flops"] == repr(1e11) and during["debug"] == "0" and len(during["command_handlers"]) == 1


def test_the_next_test_sees_none_of_it() -> None:
    assert _BEFORE, "runs after test_a_report_run_in_process_with_a_setting, in file order"
    assert _state() == _BEFORE  # 2aa60c44: TB_GPU_ADVISOR_MODEL_FLOPS '100000000000.0', the handler left on root
