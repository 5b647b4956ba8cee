"""Each rank's first launch loads its module while a peer's collective waits through it (h37-wild56r).

Real case (read locally, not kept: no licence): ykcai-daniel/torch-compile-moe @3f88d3dc,
``log_before/rank{0,1}/ip-172-31-15-66_2835{6,7}.*.pt.trace.json`` -- a 2-rank MoE (all-to-all through
``ncclDevKernel_SendRecv``) on two A100-SXM4-40GB, one ``moe_train_step``.  Each rank stalls 12.0-12.1 ms in one
``cudaLaunchKernel`` (the first ``AccumulateGrad`` add, a lazily loaded module) at the same moment; rank 1's GPU runs
4.36 + 4.44 ms of ``SendRecv`` through its load, waiting for rank 0 (the same exchange takes 10-20 us elsewhere in
the step).  BASE (057f92bf) took that waiting collective for the GPU's work ("a launch with the GPU busy": no module
load) -- rank 1's run: no one-time cost; both files in one folder: "phase one-pass: no one-time cost read", rank 1's
wait hiding rank 0's load too.  Now a cold start on each.

By construction (``synthetic.torchtrace.write_load_through_exchange``): every rank loads a module in a 12 ms first
launch at the same moment; each rank but 0 launched its ``SendRecv`` just before its load, so it runs through it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthetic import torchtrace as tt
from tests.support.cli_report import cli_report


def _ids(report: dict[str, Any]) -> set[str]:
    return {f["id"].split(":")[0] for f in report["findings"]}


def test_ranks_in_one_folder_read_their_loads_as_a_cold_start(tmp_path: Path) -> None:
    """Both ranks' files in one run: the loads are one-time costs (BASE: "one-pass: no one-time cost read",
    launch-bound with a CUDA-graph fix)."""
    tt.write_load_through_exchange(str(tmp_path))
    report = cli_report(tmp_path / "load_through_exchange")
    (host,) = report["hosts"]
    assert host["job"]["phase"] == "warm-up", host["job"]["phase_evidence"]
    assert "2 kernel launches" in host["job"]["phase_evidence"]
    assert "cold_start" in _ids(report)
    assert "launch_bound" not in _ids(report)


def test_the_waiting_rank_alone_reads_its_load(tmp_path: Path) -> None:
    """Rank 1's own folder (``rank_folders``): its GPU runs the exchange through its load, waiting for rank 0 -- its
    load is still a one-time cost (BASE: no one-time cost, its run read as steady)."""
    tt.write_load_through_exchange(str(tmp_path), rank_folders=True)
    report = cli_report(tmp_path / "load_through_exchange" / "rank1")
    (host,) = report["hosts"]
    assert host["job"]["phase"] == "warm-up", host["job"]["phase_evidence"]
    assert "cold_start" in _ids(report)


def test_the_rank_waited_for_reads_its_load(tmp_path: Path) -> None:
    """Control (passes on BASE too): rank 0, whose GPU runs nothing through its load, reads a cold start."""
    tt.write_load_through_exchange(str(tmp_path), rank_folders=True)
    report = cli_report(tmp_path / "load_through_exchange" / "rank0")
    assert "cold_start" in _ids(report)
