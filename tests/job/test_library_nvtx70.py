"""The NVTX a training library writes says the job where no op range does (issue #37 class 2, h37-nvtx70).

Each case is an Nsight export built with ``synthetic.nsysexport`` around the names the library pushes, read from its
own source, with no other evidence of the job: no ATen op range (nsys without ``--pytorch=autograd-nvtx``), generic
GEMM kernels.  Truth by construction: 8 iterations of the template's period, the job's kind.

* PyTorch Lightning's ``PyTorchProfiler(emit_nvtx=True)`` (Lightning-AI/pytorch-lightning @7f0c3436
  ``src/lightning/pytorch/profilers/pytorch.py:447``: ``record_function("[pl][profile]" + action_name)``) around its
  loop's actions: ``[pl][profile][_TrainingEpochLoop].train_dataloader_next`` (``loops/training_epoch_loop.py:254``)
  and ``[pl][profile]run_training_batch`` (``loops/training_epoch_loop.py:349``), each with autograd's ``, op_id = N``
  suffix under ``emit_nvtx``.  Base read "GPU work of an unknown kind": Lightning's phases were asked of PyTorch only,
  and with no ATen range the capture showed no framework -- though only a PyTorch program runs Lightning's loop;
* Megatron-LM's RL trainer (NVIDIA/Megatron-LM @d98e8a64 ``megatron/rl/rl_utils.py``, ``get_nvtx_range()`` of
  ``megatron/training/utils/common_utils.py:612``: ``rl/rollout-collection`` :811, ``rl/collect-rollouts`` :860,
  ``rl/get-logprobs`` :1115, ``rl/forward-pass`` :1116, ``rl/prepare-data-for-update`` :2278,
  ``rl/compute-logprobs`` :2405), pushed from ``training.py``'s ``train()`` only: base read its rollouts "inference"
  (forward matrix products, no gradient kernel) or "unknown", and called them the user's;
* FSDP1's ``FullyShardedDataParallel.forward`` (pytorch/pytorch ``torch/distributed/fsdp/fully_sharded_data_parallel.py``,
  ``FullyShardedDataParallel.forward``: ``record_function("FullyShardedDataParallel.forward")``) marking forward
  passes: base said "the user's NVTX ranges mark the forward pass".

Controls (right on base, unchanged): Lightning 1.x's bare ``run_training_batch``; the program's own ``forward`` ranges
stay the user's.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import assert_steps_right, written_hosts

#: Only the ranges speak: no ATen op ranges, no user step range.
_BARE = dict(step_range=None, autograd_nvtx=False)
_PL = "[pl][profile]"
CASES = {
    "lightning": dict(extra_ranges=(f"{_PL}[_TrainingEpochLoop].train_dataloader_next", f"{_PL}run_training_batch"),
                      range_starts=(1,)),
    # the same under emit_nvtx: record_function's ranges carry autograd's op_id suffix
    "lightning_op_id": dict(extra_ranges=(f"{_PL}[_TrainingEpochLoop].train_dataloader_next, op_id = 3",
                                          f"{_PL}run_training_batch, op_id = 4"), range_starts=(1,)),
    "megatron_rl_update": dict(extra_ranges=("rl/rollout-collection", "rl/prepare-data-for-update",
                                             "rl/compute-logprobs", "")),
    "megatron_rl_rollouts": dict(extra_ranges=("rl/collect-rollouts", "rl/get-logprobs", "rl/forward-pass")),
    "fsdp1_forward": dict(extra_ranges=("FullyShardedDataParallel.forward", "")),
    # controls
    "lightning_1x": dict(extra_ranges=("[_TrainingEpochLoop].train_dataloader_next", "run_training_batch"),
                         range_starts=(1,)),
    "own_forward": dict(extra_ranges=("forward", "")),
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Each case's first host as ``report PATH`` reads it, with the export's truth."""
    return written_hosts(tmp_path_factory.mktemp("library_nvtx70"), CASES,
                         lambda path, kw: nx.write(path, nx.NsysJob(steps=8, ops=9, **_BARE, **kw)))


@pytest.mark.parametrize("case", ["lightning", "lightning_op_id"])
def test_lightnings_own_loop_ranges_say_training_without_op_ranges(reports, case):
    """Base: "GPU work of an unknown kind" (fails on dbf6cf15)."""
    host, truth = reports[case]
    job = host["job"]
    assert job["kind"] == "training", job["summary"]
    assert "run_training_batch" in job["kind_evidence"]
    assert host["steps"]["source"] == "iteration_range"  # Lightning's own iteration range bounds the steps
    assert_steps_right(host, truth)


@pytest.mark.parametrize("case", ["megatron_rl_update", "megatron_rl_rollouts"])
def test_megatron_rl_trainers_ranges_say_training_and_are_megatrons(reports, case):
    """Base: "inference" (forward GEMMs, no gradient kernel) / "unknown" (fails on dbf6cf15)."""
    host, truth = reports[case]
    job = host["job"]
    assert job["kind"] == "training", job["summary"]
    assert "Megatron-LM's RL trainer's own NVTX ranges" in job["kind_evidence"]
    assert "the user's" not in job["kind_evidence"]
    assert_steps_right(host, truth)


def test_fsdps_forward_range_is_fsdps_not_the_users(reports):
    """Base: "the user's NVTX ranges mark the forward pass (`FullyShardedDataParallel.forward` ×8)" (fails on
    dbf6cf15).  Its forward alone stays no training (FSDP also shards models run forward only, h37-nvtx63)."""
    host, truth = reports["fsdp1_forward"]
    job = host["job"]
    assert job["kind"] != "training"
    assert "FSDP's own NVTX ranges" in job["kind_evidence"] and "the user's" not in job["kind_evidence"]
    assert_steps_right(host, truth)


def test_controls_read_as_before(reports):
    host, truth = reports["lightning_1x"]
    assert host["job"]["kind"] == "training" and "run_training_batch" in host["job"]["kind_evidence"]
    assert_steps_right(host, truth)
    host, truth = reports["own_forward"]
    assert host["job"]["kind"] == "inference" and "the user's NVTX ranges mark the forward pass" in \
        host["job"]["kind_evidence"]
    assert_steps_right(host, truth)
