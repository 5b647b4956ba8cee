"""The MCP summary gives an agent the facts the tab shows of each host (issue #37, h37-surfaces31).

Wrong assumption on main (8b34bb94): *the job's line carries the host's facts*.  ``get_report(format='summary')``
quoted the job's line ("... its loop on the CPU: 4 marked steps of 88.0 ms on average, no GPU step.") but none of the
keys behind it or beside it: not ``job.host_loop`` / ``job.no_gpu_step`` (and "steps": 4 where the tab's host line
and the CLI's header say no step is timed), not where the steps came from (``recurring_events`` on the cold Swin
loop, low confidence), not the step's ledger the tab charts (``breakdown_ms``, ``memset`` beside the copies).  Real
traces, read through the real MCP SDK client: ``h200_jobs/torch_cpu_only`` (4 CPU steps, no GPU step) and
``wild/cold_loop_a4000_swin`` (steps found from recurring events; 0.3 us of fills a step).  The oracle is the CLI's
JSON report of the same run, key by key.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.support.cli_report import first_report
from tests.support.paths import FIXTURES

if importlib.util.find_spec("mcp") is None:
    pytest.skip("the MCP SDK is not installed", allow_module_level=True)

from tests.support.mcp_client import mcp_server  # needs the SDK

CASES = [(FIXTURES / "h200_jobs", "torch_cpu_only"), (FIXTURES / "wild", "cold_loop_a4000_swin")]


@pytest.mark.parametrize(("logdir", "run"), CASES, ids=[c[1] for c in CASES])
def test_the_summary_host_says_what_the_report_knows(tmp_path, logdir, run):
    rep = first_report(logdir / run)
    with mcp_server(logdir, tmp_path / "mcp") as client:
        summary = json.loads(client.text("get_report", run=run, format="summary"))
    for said, host in zip(summary["hosts"], rep["hosts"], strict=True):
        job, steps = host["job"], host["steps"]
        assert said.get("host_loop") == job.get("host_loop") and said.get("no_gpu_step") == job.get("no_gpu_step")
        assert said["step_source"] == steps["source_label"] and said["step_confidence"] == steps["confidence"]
        # no GPU step timed: none counted, as the tab's host line ("no step timed") and the CLI's header say
        assert said["steps"] == (0 if job.get("no_gpu_step") else steps["count"])
        ledger = {k: round(v, 4) for k, v in host["breakdown_ms"].items() if v > 0}
        assert said.get("breakdown_ms", {}) == ledger


def test_the_real_cases_hold_the_new_keys():
    """The cases exercise what main left out (else the test above could pass by saying nothing)."""
    cpu, cold = (first_report(d / r)["hosts"][0] for d, r in CASES)
    assert cpu["job"]["host_loop"] == {"steps": 4, "step_ms": 87.991} and cpu["job"]["no_gpu_step"]
    assert cold["steps"]["source"] == "recurring_events" and cold["breakdown_ms"]["memset"] > 0
