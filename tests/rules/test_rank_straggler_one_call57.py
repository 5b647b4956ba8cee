"""One slow call on one rank of a job spread over host files is no straggler rank (h37-ranks57).

``rank_straggler`` compares ranks across host files, where ``gpu_imbalance``'s call matching (one host's GPUs) cannot
reach: each GPU's report now lists its kernels' longest single calls (``GpuSummary.longest_calls``), and the rule
asks whether the late rank's lead is one of them -- the same judgement ``gpu_imbalance`` makes of one host's GPUs
(``gpu_imbalance.one_call_share``).  BASE (4b14b7a7): "A straggler rank ... rank 2" critical, "saves ~1.33 ms/step"
and a DistributedSampler for one 8 ms GEMM call in one of 6 kept steps.

By construction (``synthetic.torchtrace.write_one_slow_call``): 4 DDP ranks on 2 nodes, rank 2's first GEMM of step 4
8 ms longer; its control with rank 2 1.4x slower every step beside the same call (a straggler, still found).
"""

from __future__ import annotations

from pathlib import Path

from synthetic import torchtrace as tt
from tests.support.cli_report import first_report


def _rank_straggler(tmp_path: Path, slow: float) -> tuple[list[dict], dict]:
    tt.write_one_slow_call(str(tmp_path), slow=slow)
    report = first_report(tmp_path / "one_slow_call")
    return [f for f in report["findings"] if f["rule"] == "rank_straggler"], report


def test_one_slow_call_is_named_not_a_straggler(tmp_path: Path) -> None:
    found, report = _rank_straggler(tmp_path, 1.0)
    (f,) = found
    assert f["severity"] == "info" and f["saving"] is None, f
    assert "rank 2" in f["summary"] and "not a straggler" in f["title"]
    one = f["metric"]["detail"]["one_call"]
    assert one["ms"] > 8.0 and one["peer_ms"] < 0.5, one
    assert "DistributedSampler" not in str(report["findings"])


def test_control_a_rank_slower_every_step_is_still_a_straggler(tmp_path: Path) -> None:
    """Control (found on BASE too): rank 2 computes 1.4x longer every step beside the same slow call."""
    found, _ = _rank_straggler(tmp_path, 1.4)
    (f,) = found
    assert f["severity"] in ("warning", "critical") and "rank 2" in f["summary"]


def test_property_each_gpu_lists_its_longest_calls_longest_first(tmp_path: Path) -> None:
    """Consistency: each GPU's longest calls are bounded, longest first, each call at most its step's compute times
    the kept steps, and its per-step share at most its whole (a part never exceeds its whole)."""
    _, report = _rank_straggler(tmp_path, 1.0)
    for host in report["hosts"]:
        steps = host["steps"]["count"]
        for g in host["gpus"]:
            rows = g["longest_calls"]
            assert rows and len(rows) <= 16
            assert [r[2] for r in rows] == sorted((r[2] for r in rows), reverse=True)
            for kernel, i, ms, calls, per_step in rows:
                assert 0 <= i < calls and abs(per_step * steps - ms) < 1e-3
                assert per_step <= g["breakdown"]["device_compute"] + 1e-6
