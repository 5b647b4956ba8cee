"""Across host files (one file per node or rank), a straggler whose lead is compute is told where that compute lies,
by kernel, as ``gpu_imbalance`` tells it within one host file (h37-ranks59; h37-ranks58 *Left* 3).

By construction (``synthetic.torchtrace.write_one_slow_call(extra_us=0, slow=1.4)``): 4 DDP ranks on 2 nodes (two
host files), rank 2 runs every kernel of its forward and backward 1.4x as long, every step.  Its excess per step is
0.4 x each kernel's time: the forward GEMM 4 x 180 us x 0.4 = 288 us, the backward GEMMs 4 x 170 x 0.4 = 272 us and
4 x 160 x 0.4 = 256 us, the ReLU kernels (4 x 20 + 4 x 35) x 0.4 = 88 us, the sums 4 x 22 x 0.4 = 35.2 us -- 939.2
us in all, the three GEMMs 87% of it.  BASE (91102037): the finding says "mostly more compute" and names no kernel
(each GPU's report carried no per-kernel times: ``GpuSummary.kernel_ms`` is new).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.metrics.job import RankRow
from tests.support.cli_report import first_report


@pytest.fixture(scope="module")
def straggler(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("slow")
    tt.write_one_slow_call(str(out), extra_us=0.0, slow=1.4)
    report = first_report(out / "one_slow_call")
    (f,) = [f for f in report["findings"] if f["rule"] == "rank_straggler"]
    return f


def test_the_straggler_names_the_kernels_its_compute_lead_lies_in(straggler: dict) -> None:
    """The three GEMMs, each with its excess per step by construction (288, 272, 256 us), largest first."""
    text = straggler["summary"]
    named = [f"`{tt.GEMM_FWD}` (288 us more)", f"`{tt.GEMM_BWD[0]}` (272 us more)", f"`{tt.GEMM_BWD[1]}` (256 us more)"]
    assert "mostly more compute. It spends longer than the median other rank mostly in " in text, text
    positions = [text.find(n) for n in named]
    assert all(p > 0 for p in positions) and positions == sorted(positions), text


def test_control_the_saving_is_the_lead(straggler: dict) -> None:
    """Control (the same on BASE): the saving is the others' wait the lead explains, 0.4 x the 2.348 ms of compute
    (939 us), the kernels' words take nothing from it."""
    assert straggler["saving"]["ms_per_step"] == pytest.approx(0.939, abs=0.005)


def test_each_gpu_lists_its_kernel_times(tmp_path: Path) -> None:
    """Every GPU's summary lists its kernels' summed time per step, largest first, bounded: the slow rank's forward
    GEMM 4 x 180 x 1.4 = 1.008 ms, the others' 0.72 ms (BASE: no such list)."""
    tt.write_one_slow_call(str(tmp_path), extra_us=0.0, slow=1.4)
    report = first_report(tmp_path / "one_slow_call")
    for host in report["hosts"]:
        for g in host["gpus"]:
            rows = g["kernel_ms"]
            assert 0 < len(rows) <= 16 and [r[1] for r in rows] == sorted((r[1] for r in rows), reverse=True)
            gemm = dict(rows)[tt.GEMM_FWD]
            slow = host["host"] == "node1" and g["gpu"] == 0
            assert gemm == pytest.approx(1.008 if slow else 0.72, abs=1e-3), (host["host"], g["gpu"], gemm)


def _row(kernels: list | None) -> RankRow:
    return RankRow("h", 0, 10.0, 5.0, 1.0, 4.0, kernel_ms=kernels)


def test_a_kernel_a_peer_does_not_list_is_bounded_by_its_list() -> None:
    """Property of ``metrics.job.kernel_gap`` (new, by construction): a peer whose list is full without the kernel
    runs it at most as long as its lightest listed (the excess is the least); one whose list is short without it runs
    none of it; a report before 0.1.0+a80 (no list) gives no reading."""
    from tb_gpu_advisor.metrics.job import kernel_gap  # new here: the file's controls run on BASE

    slow = _row([["A", 3.0], ["B", 1.0]])
    full = _row([["B", 1.0], ["C", 0.5]])  # as long as the straggler's list: full, A at most 0.5 there
    short = _row([["B", 1.0]])  # shorter: runs no A
    by = kernel_gap(slow, [full, full, short])
    assert by["kernels"] == [["A", 2.5]] and by["more_kernels"] == 1 and by["less_ms"] == 0.0
    by = kernel_gap(slow, [short, short, full])
    assert by["kernels"] == [["A", 3.0]]
    assert kernel_gap(slow, [full, _row(None)]) is None
