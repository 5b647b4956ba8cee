"""One process's GPUs that allocate alike while one GPU's caching allocator holds far more in split blocks: the
imbalance read on the reserve in segments in use, and said so (issue #37, h37-snap59 *Left* 4).

By construction (``synthetic.memsnapshot.data_parallel(temps_mib=...)``): DataParallel over 3 GPUs, 16 layers of
200 MiB activations each; on GPU 1 alone each layer also makes and frees a 392 MiB temporary (its share's longer
sequences), so each next activation lands in the freed temporary's cached block and strands 192 MiB beside it.  The
generator counts each GPU's allocated peak (3.63 / 3.76 / 3.63 GiB: 1.04x, no bound passed) and its peak reserve in
segments holding an allocated block (3.63 / 6.57 / 3.63 GiB: 1.81x).  Base read the allocated peaks only and named
nothing.  Controls: the allocated imbalance still reads the allocated peaks (its detail says so); equal GPUs name
nothing.

Real: no public snapshot of one process's GPUs with split blocks on one of them was found (the routes are in
SURVEY.md, session 60); the one real multi-GPU snapshot (Constructor-Sun/code_location, no licence, local only) has
no segment history that covers its GPUs' whole use, so its finding keeps reading the allocated peaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.common.thresholds import T
from tests.support.snapshot_reports import report, written

REAL = Path("/work/wild58/snap58/real/constructor/memory_snapshot.pickle")
SPLIT = dict(chunks_mib=(3200, 3200, 3200), temps_mib=(0, 392, 0), layers=16, weights=2)


def imbalance(rep) -> list:  # noqa: ANN001 - the host's report
    return [f for f in rep.findings if f.rule == "memory_imbalance"]


def _median_others(values: list[int], top: int) -> float:
    others = sorted(v for i, v in enumerate(values) if i != top)
    return (others[len(others) // 2] + others[(len(others) - 1) // 2]) / 2


def test_split_blocks_on_one_gpu_read_the_reserve_in_use(tmp_path):
    sc = ms.data_parallel(**SPLIT)
    peaks, in_use = sc.truth["peaks"], sc.truth["in_use_peaks"]
    assert max(peaks) / _median_others(peaks, peaks.index(max(peaks))) < T("memory.imbalance.warning")
    (f,) = imbalance(report(written(tmp_path, sc)))
    assert f.gpu == 1
    assert f.metric.detail["reads"] == "reserved_in_use"
    assert f.metric.detail["peak_reserved_in_use_bytes"] == in_use[1]
    assert f.metric.value == pytest.approx(in_use[1] / _median_others(in_use, 1), rel=1e-3)
    assert f.saving_bytes == pytest.approx(in_use[1] - sum(in_use) / len(in_use), abs=1)
    assert "in segments that hold an allocated block" in f.summary and "allocated peak" in f.summary
    assert "expandable_segments" in f.actions[0].snippet
    assert "DistributedDataParallel" not in " ".join(a.text for a in f.actions)  # no batch or DDP advice: alike


def test_allocated_imbalance_still_reads_the_allocated_peaks_and_says_so(tmp_path):
    sc = ms.data_parallel(chunks_mib=(1024, 6144, 1024), temps_mib=(0, 0, 96))
    (f,) = imbalance(report(written(tmp_path, sc)))
    assert f.gpu == 1 and f.metric.detail["reads"] == "allocated"
    assert f.metric.detail["peak_allocated_bytes"] == sc.truth["peaks"][1]


def test_control_equal_gpus_name_nothing(tmp_path):
    sc = ms.data_parallel()
    assert not imbalance(report(written(tmp_path, sc)))


@pytest.mark.skipif(not REAL.exists(), reason="local-only real snapshot (no licence) absent")
def test_real_data_parallel_gnn_reads_allocated_and_says_so():
    (f,) = imbalance(report(REAL))
    assert f.gpu == 1 and f.metric.detail["reads"] == "allocated"
