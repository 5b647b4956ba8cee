"""A GPU known only by its memory beside a GPU that ran the recorded work (h37-memrow35 *Left* 3, h37-memkind36).

No kept real trace has one (every wild, shared and h200 Kineto trace was scanned for a ``[memory]`` device with no
kernel or copy beside devices with them: none), so the generator builds it with truth by construction
(``synthetic.torchtrace.write_memory_beside_work``): one process whose steps run on GPU 0 and which holds 20 GiB on
GPU 1, where it runs nothing.  Wrong assumption corrected: *the GPU whose memory is used most is the one whose batch
could grow* -- ``batch_size_headroom`` spoke of idle GPU 1 ("could grow about 3.6x ... A larger batch raises device
utilization"), a GPU that runs none of the steps.
"""

from __future__ import annotations

from synthetic import torchtrace as tt
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

#: Rules that speak of GPUs' work against each other: an idle GPU would be their subject.
MULTI_GPU_RULES = {"gpu_imbalance", "sequential_gpus", "launch_skew", "rank_straggler"}


def test_a_memory_only_gpu_beside_a_busy_one_gets_its_row_and_no_work_finding(tmp_path):
    """GPU 1 gets a row (the header's name, its allocator's peak, no step time, no kernels), GPU 0 keeps its work; no
    multi-GPU rule reads GPU 1 as idle, the GPU counts hold the busy GPU alone, and the headroom for a larger batch is
    GPU 0's (main: GPU 1's 20.0 GiB, "could grow about 3.6x")."""
    path = tmp_path / "w.pt.trace.json"
    truth = tt.write_memory_beside_work(str(path))
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    rows = {g.gpu: g for g in rep.gpus}
    assert sorted(rows) == sorted(truth["active"] + truth["memory_only"])
    (side,) = [rows[i] for i in truth["memory_only"]]
    assert side.name == tt.H100["name"] and side.kernel_count == 0 and side.step_ms is None and side.busy_share is None
    assert side.memory["peak_allocated_bytes"] == truth["peak_allocated_bytes"][side.gpu]
    assert side.memory["capacity_bytes"] == truth["device_bytes"]
    (busy,) = [rows[i] for i in truth["active"]]
    assert busy.kernel_count > 0 and busy.step_ms
    assert not MULTI_GPU_RULES & {f.rule for f in rep.findings}
    (room,) = [f for f in rep.findings if f.rule == "batch_size_headroom"]
    assert room.metric.detail["gpu"] == busy.gpu, room.summary
    assert f"GPU {side.gpu}" not in room.summary, room.summary
