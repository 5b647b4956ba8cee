"""The job's capture advice on the served surfaces (h37-left43): the MCP server's ``capture_advice`` and the tab's
report payload print the advice composed for the job the report found -- its own loop -- never a text written for
another loop.

``wild/cold_a100_alexnet`` (PARAM's AlexNet: one measured forward pass, cold) was told by the MCP server to profile
``for step, (x, y) in enumerate(loader): train_step(x, y)`` beside fixes looping ``for batch in batches:
model(batch)``; the framework's own advice for a cold job looped ``run_one_step()``.  Both servers are the real ones:
the MCP server process driven by the SDK's client, the TensorBoard plugin with its real (isolated) analysis."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.plugin_client import PREFIX, make_client, poll_report
from tests.support.properties import profiled_loops

WILD = FIXTURES / "wild"
#: (run, the step its job loops): a cold forward pass, and a training iteration (control)
JOBS = [("cold_a100_alexnet", "model(batch)"), ("vit_a4000_avg_batch", "train_step(x, y)")]


def _strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from _strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from _strings(x)


@pytest.fixture(scope="module")
def mcp(tmp_path_factory):
    if importlib.util.find_spec("mcp") is None:
        pytest.skip("the MCP SDK is not installed (pip install -e '.[mcp]')")
    from tests.support.mcp_client import mcp_server

    with mcp_server(WILD, tmp_path_factory.mktemp("mcp-wild")) as client:
        yield client


@pytest.mark.parametrize(("run", "step"), JOBS)
def test_the_mcp_servers_capture_advice_loops_the_jobs_step(mcp, run, step):
    """Every profiled loop of the answer (the findings' fixes and "Recording a better capture") runs the job's step,
    and the guide's words name it (a forward pass is not told of training steps)."""
    text = mcp.text("capture_advice", run=run)
    assert set(profiled_loops(text)) == {step}
    assert ("training steps" in text) is (step == "train_step(x, y)")


@pytest.mark.parametrize(("run", "step"), JOBS)
def test_the_tabs_payload_loops_the_jobs_step(run, step):
    """The tab's report payload carries the job's capture advice (``job.capture_advice``) and loops no other step."""
    (s,) = [s for s in discover(str(WILD)) if s.run == run]
    client, _, _ = make_client(str(WILD))
    body = json.loads(poll_report(client, f"{PREFIX}/report?run={run}&session={s.session}").get_data(as_text=True))
    assert {x for t in _strings(body) for x in profiled_loops(t)} == {step}
    if step == "model(batch)":  # the new key (the control's training loop was the general advice's already)
        assert set(profiled_loops(body["hosts"][0]["job"]["capture_advice"])) == {step}
