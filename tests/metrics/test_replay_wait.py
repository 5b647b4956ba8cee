"""The launch wait before graph replays and the kernels launched outside graphs (``metrics.breakdown.replay_wait``,
h37-left60), by construction: ``tests/support/graph_decode``'s decode step launches three fills one by one, then one
``cudaGraphLaunch`` of N kernels.  Only the three fills are launches a graph could still batch, whatever N; the wait
before the replay is a part of the ledger's launch wait (no part exceeds its whole)."""

from __future__ import annotations

import pytest

from tests.support import kineto_doc
from tests.support.graph_decode import decode_step


@pytest.mark.parametrize("nodes", [40, 100])
def test_only_the_launches_outside_the_graph_are_left_to_batch(tmp_path, nodes: int) -> None:  # noqa: ANN001
    m = kineto_doc.host_metrics_of(tmp_path, decode_step(nodes))
    assert m.steps.count == 1
    assert m.kernels_outside_graphs == pytest.approx(3.0)  # the fills, not the graph's N nodes
    assert 0.0 <= m.launch_wait_before_replay <= m.breakdown.launch_wait + 1e-9
