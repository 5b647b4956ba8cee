"""launch_bound on work already replayed from graphs (h37-left60): a graph saves only over the launches not already
in graphs; the GPU's wait before a replay is the host preparing it, with the engine's fix.

``wild/sglang_b300_decode`` (an SGLang decode step on a B300, one engine step, 98% of its kernel time in CUDA
graphs): main booked its 1.02 ms launch wait as per-kernel launches and claimed 349 us from "one launch a step (a
graph's)" for 673 small kernels -- kernels a graph already launches once.  The wait, read against the next work,
comes almost all before the graph replays.  Controls: a step with no graph (``nsfw_vit_h100``, eager ViT) keeps the
per-kernel reading and its saving's words; a compiled loop whose wait is mostly before its own launches
(``h200_jobs/torch_compile_cudagraphs_inference``) is not read as a replay's preparation.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor.frameworks import engines
from tests.support.cli_report import cli_report
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"


def _launch(path) -> dict | None:  # noqa: ANN001
    host = cli_report(path)["hosts"][0]
    return next((f for f in host["findings"] if f["rule"] == "launch_bound"), None)


@pytest.mark.skipif(not (WILD / "sglang_b300_decode").is_dir(), reason="wild fixture absent")
def test_wait_before_replays_is_the_hosts_preparation() -> None:
    f = _launch(WILD / "sglang_b300_decode")
    assert f is not None
    d = f["metric"]["detail"]
    wait, replay = d["launch_wait_ms"], d["launch_wait_before_replay_ms"]
    # by accounting: the idle before the graphs' kernels is most of the wait (the engine prepares each replay)
    assert 0.5 * wait <= replay <= wait
    # the launches left to batch are those not in graphs: fewer than the step's kernels
    assert d["kernels_outside_graphs_per_step"] < d["kernels_per_step"]
    assert "before a replay" in f["summary"] and "not a launch per kernel" in f["summary"]
    # the graph part of the saving is only over the launches not already in graphs; the rest is the replays'
    # preparation overlapped with the GPU's work, at most that wait
    assert "not already in graphs" in f["saving"]["assumption"]
    assert f["saving"]["ms_per_step"] <= wait + 1e-3
    # the fix is the engine's own (its overlap scheduling), asked of frameworks/, not bigger kernels or a graph
    sglang = engines.by_id("sglang")
    assert [a["text"] for a in f["actions"]] == [a.text for a in sglang.fixes["launch_bound"]]
    assert f["severity"] == "info"


@pytest.mark.skipif(not (WILD / "nsfw_vit_h100").is_dir(), reason="wild fixture absent")
def test_no_graph_keeps_the_per_kernel_reading() -> None:
    f = _launch(WILD / "nsfw_vit_h100")
    assert f is not None
    assert "launch_wait_before_replay_ms" not in f["metric"]["detail"]
    assert "before a replay" not in f["summary"] and "not already in graphs" not in f["saving"]["assumption"]
    # an upper bound, said so (h37-comm3: "at most:"); no replay to measure a node's cost on, the fused charge alone
    assert f["saving"]["assumption"].startswith("at most: the launch wait reduced to one launch")
    assert "this capture's replays" not in f["saving"]["assumption"]


@pytest.mark.skipif(not (FIXTURES / "h200_jobs" / "torch_compile_cudagraphs_inference").is_dir(),
                    reason="fixture absent")
def test_wait_mostly_before_own_launches_is_no_replay() -> None:
    f = _launch(FIXTURES / "h200_jobs" / "torch_compile_cudagraphs_inference")
    if f is None:
        return  # no launch-bound finding: nothing read as a replay's preparation either
    assert f["title"] != "The GPU waits while the host prepares each graph replay"
    assert "before a replay" not in f["summary"]


def test_no_graph_saving_where_no_graph_fix_fits(tmp_path) -> None:  # noqa: ANN001
    """The same question on an Intel GPU whose trace does not date PyTorch: its graph API (torch.xpu.graph, 2.11 on)
    is not told, so no listed fix records a graph, and the saving may not assume one (main: 4.94 ms "launch wait
    reduced to one launch a step (a graph's)" beside fixes with no graph).  Control: the same job on CUDA keeps its
    graph fix and the saving it gives."""
    from synthetic import torchtrace as tt
    from tb_gpu_advisor.frameworks import pytorch
    from tb_gpu_advisor.model.schema import Action

    def graphs(actions: list[dict]) -> bool:  # a fix whose code records a graph, in the device's own spelling
        return any(pytorch.fix_introduces(Action(**a)) == ("cuda_graphs",) or "graph" in (a["snippet"] or "").lower()
                   for a in actions)

    tt.write_run(str(tmp_path / "xpu"), "tiny_ops", steps=8, xpu=True)
    tt.write_run(str(tmp_path / "cuda"), "tiny_ops", steps=8)
    xpu, cuda = _launch(tmp_path / "xpu" / "tiny_ops"), _launch(tmp_path / "cuda" / "tiny_ops")
    assert xpu is not None and cuda is not None
    assert not graphs(xpu["actions"])
    assert xpu["saving"] is None and "no saving from batching" in xpu["summary"]
    assert graphs(cuda["actions"])
    assert cuda["saving"] is not None and cuda["saving"]["ms_per_step"] > 0


# ------------------------------------------------------------------------------------------------ h37-comm3


@pytest.mark.skipif(not (WILD / "sglang_b300_decode").is_dir(), reason="wild fixture absent")
def test_a_replays_node_cost_is_measured_and_the_saving_is_an_upper_bound() -> None:
    """A replayed graph still runs each node at the device's own rate: the saving charges every launch it batches
    the fused graph's per-node cost, or what this capture's own replays pay per node where that is more, and says it
    is an upper bound.  sglang_b300_decode's replays (676 kernels in one) start each node 1.15 us before the last
    ends (programmatic dependent launch): measured, said, and the charge stays the fused graph's (main: "launch wait
    reduced to ...", no measure, no bound said)."""
    f = _launch(WILD / "sglang_b300_decode")
    d, a = f["metric"]["detail"], f["saving"]["assumption"]
    gap = d["graph_node_gap_us"]
    assert gap is not None and gap < 0  # the next node starts before the last ends: overlapped, not a launch each
    assert a.startswith("at most: the launch wait reduced") and f"start each node {-gap:.2f} us before the last" in a, a
    assert "1 us/kernel a replayed graph still pays per node" in a  # never below the fused graph's charge


def test_a_node_cost_over_the_fused_charge_tightens_the_bound() -> None:
    # by physics: what a replay still pays per node is at least the fused graph's charge and at least what the
    # capture's replays measure; a negative gap (overlapped nodes) charges the fused cost, not less
    from types import SimpleNamespace

    from tb_gpu_advisor.common.thresholds import T
    from tb_gpu_advisor.rules.launch_bound import _node_us
    fused = T("launch.fused_us_per_kernel")
    assert _node_us(SimpleNamespace(graph_node_gap_us=None)) == fused
    assert _node_us(SimpleNamespace(graph_node_gap_us=-1.15)) == fused
    assert _node_us(SimpleNamespace(graph_node_gap_us=fused + 4.0)) == fused + 4.0
