"""What holds memory is named for the job on every screen (h37-memkind37 *Left* 1): the rules' tables, the tab's
memory panel (``Report.display``), the chart's category names and the MCP server's tables all ask one home
(``rules._memory.shows_training``), so a job of forward passes only is never told its held memory is "optimizer
state", while a training job still is.

Real traces: ``tests/fixtures/h200_jobs/jax_jit_inference`` (a jitted forward on an H200, its HLO without a backward
pass: inference) and ``tests/fixtures/h200_memory/jax_mem_mlp`` (a jitted train step: training).  On main 86c361e0
the inference job's holders table on the tab said "Held across steps (parameters, optimizer state)".
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.serve.mcp_server import memory_text
from tests.support.contradictions import memory_words_problems
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report


def _report(path):
    (s,) = discover(str(path))
    return session_report(s)


def _tab_memory(report) -> dict:
    (g,) = [g for h in report.display["hosts"] for g in h["gpus"] if g.get("memory")]
    return g["memory"]


def test_an_inference_jobs_held_memory_is_no_optimizer_state_on_any_screen():
    r = _report(FIXTURES / "h200_jobs" / "jax_jit_inference")
    assert r.hosts[0].job["kind"] == "inference"
    tab = _tab_memory(r)
    holds = {row[1] for row in tab["top"]}
    assert "Held across steps (parameters, caches)" in holds, holds
    assert {c["id"]: c["label"] for c in tab["categories"]}["held"] == "Held across steps (parameters, caches)"
    assert "optimizer state" not in memory_text(r, "markdown")
    assert memory_words_problems(r) == []


def test_control_a_training_jobs_held_memory_keeps_training_names():
    r = _report(FIXTURES / "h200_memory" / "jax_mem_mlp")
    assert r.hosts[0].job["kind"] == "training"
    tab = _tab_memory(r)
    assert {c["id"]: c["label"] for c in tab["categories"]}["held"] == "Held across steps (parameters, optimizer state)"
    assert any(row[1] == "Held across steps (parameters, optimizer state)" for row in tab["top"]), tab["top"]


@pytest.mark.parametrize("kind, breakdown, training", [
    ("training", {}, True), ("inference", {"gradients": 5}, False), ("serving", {"optimizer": 1}, False),
    (None, {"held": 9}, False), (None, {"gradients": 3}, True), ("unknown", {"optimizer": 2}, True),
    ("unknown", {"gradients": 0, "optimizer": 0}, False)])
def test_one_home_reads_the_stored_report_as_the_rules_read_the_metrics(kind, breakdown, training):
    """By construction: the job's kind decides where known; a job of no known kind trains where its memory shows
    gradients or an optimizer step -- the same answer the report's views read from the stored report."""
    from types import SimpleNamespace

    from tb_gpu_advisor.report.view import memory_labels
    from tb_gpu_advisor.rules._memory import CATEGORY_LABELS, FORWARD_ONLY_LABELS, shows_training

    assert shows_training(kind, [breakdown]) is training
    h = SimpleNamespace(job={"kind": kind} if kind else {}, gpus=[SimpleNamespace(memory={"breakdown": breakdown})])
    assert memory_labels(h) == (CATEGORY_LABELS if training else FORWARD_ONLY_LABELS)
