"""One process's GPUs holding unequal memory is named, with its bytes and the fix (issue #37, h37-snap58 *Left* 5).

Real (Constructor-Sun/code_location ``memory_snapshot.pickle`` @52e52b2, no licence: local only, kept in the session's
scratch): a Qwen3 + GNN job under ``nn.DataParallel`` over 3 GPUs runs out of memory on GPU 1 (78.3 GiB allocated)
while GPU 0 peaks at 7.88 GiB and GPU 2 at 20.1 GiB -- the replicas' frames run through ``torch/nn/parallel/``
(``parallel_apply._worker``, ``replicate``), and GPU 1 is not the output device: its replica was given more of the
batch.  Base named the OOM only.

By construction (``synthetic.memsnapshot.data_parallel``): each GPU's allocated peak is the generator's own count;
DataParallel gathering 3 GiB of outputs on GPU 0 (GPU 0 fullest: DDP first), a batch split by count whose chunk on
GPU 1 holds 6 GiB (GPU 1 fullest: the batch split by bytes first), the same split by one process with no DataParallel
frame (the model's split balanced).  Controls: equal replicas, and a second GPU the process touched with a few
tensors, name nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.common.thresholds import T
from tests.support.snapshot_reports import report, written

REAL = Path("/work/wild58/snap58/real/constructor/memory_snapshot.pickle")


def imbalance(rep) -> list:  # noqa: ANN001 - the host's report
    return [f for f in rep.findings if f.rule == "memory_imbalance"]


def _is_truth(f, truth: dict) -> None:  # noqa: ANN001 - the finding
    peaks = truth["peaks"]
    top = truth["fullest"]
    others = sorted(p for i, p in enumerate(peaks) if i != top)
    median = (others[len(others) // 2] + others[(len(others) - 1) // 2]) / 2
    assert f.gpu == top
    assert f.metric.detail["peak_allocated_bytes"] == peaks[top]
    assert f.metric.value == pytest.approx(peaks[top] / median, rel=1e-3)
    assert f.saving_bytes == pytest.approx(peaks[top] - sum(peaks) / len(peaks), abs=1)


def test_data_parallel_gathering_on_gpu0_is_named_with_ddp_first(tmp_path):
    sc = ms.data_parallel(gather_mib=3072)
    (f,) = imbalance(report(written(tmp_path, sc)))
    _is_truth(f, sc.truth)
    assert f.gpu == 0 and f.metric.detail["data_parallel"]
    assert "output device" in f.summary
    assert "DistributedDataParallel" in f.actions[0].text
    assert any("loss inside the module's forward" in a.text for a in f.actions)


def test_data_parallel_uneven_split_is_named_with_the_batch_split_first(tmp_path):
    sc = ms.data_parallel(chunks_mib=(1024, 6144, 1024))
    (f,) = imbalance(report(written(tmp_path, sc)))
    _is_truth(f, sc.truth)
    assert f.gpu == 1 and f.severity == "warning"
    assert f.actions[0].text.startswith("Give each replica the same bytes of the batch")


def test_one_process_split_without_data_parallel_is_told_to_balance_its_split(tmp_path):
    sc = ms.data_parallel(chunks_mib=(1024, 6144, 1024), wrapped=False)
    (f,) = imbalance(report(written(tmp_path, sc)))
    _is_truth(f, sc.truth)
    assert not f.metric.detail["data_parallel"]
    assert "DataParallel" not in f.summary + " ".join(a.text for a in f.actions)
    assert "max_memory" in f.actions[0].text


def test_control_equal_replicas_name_nothing(tmp_path):
    sc = ms.data_parallel()
    assert max(sc.truth["peaks"]) / min(sc.truth["peaks"]) < T("memory.imbalance.warning")
    assert not imbalance(report(written(tmp_path, sc)))


def test_control_a_gpu_touched_by_a_few_tensors_is_not_a_replica(tmp_path):
    sc = ms.data_parallel(chunks_mib=(4096, 64), weights=2, weight_mib=64, wrapped=False)
    assert sc.truth["peaks"][1] < T("memory.imbalance.min_bytes") < sc.truth["peaks"][0]
    assert not imbalance(report(written(tmp_path, sc)))


@pytest.mark.skipif(not REAL.exists(), reason="local-only real snapshot (no licence) absent")
def test_real_data_parallel_gnn_names_gpu1s_78_gib():
    (f,) = imbalance(report(REAL))
    assert f.gpu == 1 and f.severity == "critical"
    assert f.metric.detail["peak_allocated_bytes"] / 2**30 == pytest.approx(78.3, abs=0.05)
    assert f.metric.value == pytest.approx(5.6, abs=0.05)  # 78.3 / median(7.88, 20.1)
    assert f.metric.detail["data_parallel"]
    assert "not the first GPU" in f.summary
