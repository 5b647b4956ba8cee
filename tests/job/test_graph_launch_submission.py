"""A graph launch as long as its nodes' submission is the launch's own cost, paid every step -- not a first-time call
(issue #37, "tiny steps", "captures unlike ours": a window of one step makes every call in it once).

Found on ranonrkm/TriForce-legacy's ``trace_flash.json`` @f8260aa (no licence: read locally, SURVEY.md "survey26"):
one decode step of a 7B Llama replayed as a CUDA graph after the script's warm-up loop; ``cudaGraphLaunch`` takes
1.59 ms for the graph's 1,387 kernels (1.15 us a node), the GPU idle until it returns.  A runtime call of
milliseconds made once with the GPU idle read as a first-time call, and the report warned of a cold start ("profile
after warm-up") on a capture made after warm-up.

Truth by construction: a hand-written decode step -- three small kernels, one graph launch of 1,400 kernels sharing
its correlation id (as CUPTI records a graph's kernels), the host then waiting in ``cudaDeviceSynchronize``.  The
launch takes 1.6 ms: its submission (1.14 us a node).  Control: the same launch for a graph of 20 kernels (80 us a
node) is no submission's cost, and stays a first-time call.
"""

from __future__ import annotations

from tb_gpu_advisor.rules import evaluate
from tests.support import kineto_doc
from tests.support.graph_decode import decode_step


def _run(tmp_path, nodes: int):
    m = kineto_doc.host_metrics_of(tmp_path, decode_step(nodes))
    return m, evaluate(m)


def test_a_graph_launch_as_long_as_its_nodes_submission_is_no_cold_start(tmp_path):
    """Fails on main: the 1.6 ms launch of 1,400 nodes is "1 first-time runtime call (`cudaGraphLaunch`)", the phase
    cold, and a cold-start warning tells a capture made after warm-up to skip the warm-up."""
    m, findings = _run(tmp_path, 1400)
    assert m.job.phase.phase == "steady", m.job.phase.evidence
    assert "cudaGraphLaunch" not in m.job.phase.evidence
    assert not [f for f in findings if f.rule == "cold_start"], [(f.rule, f.summary) for f in findings]
    assert m.breakdown.startup == 0.0


def test_a_graph_launch_far_longer_than_its_nodes_stays_a_first_time_call(tmp_path):
    """Control (main too): the same 1.6 ms for 20 nodes -- 80 us a node, no submission's cost -- is still read as a
    first-time call."""
    m, _ = _run(tmp_path, 20)
    assert "cudaGraphLaunch" in m.job.phase.evidence
    assert m.breakdown.startup > 1.0
