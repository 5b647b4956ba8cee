"""A data-parallel library's own NVTX ranges are named as the library's, never "the user's NVTX ranges" (issue #37
class 2; h37-nvtx62 *Left* 4).

FSDP2 records ``FSDP::pre_forward (<module>)`` / ``FSDP::pre_backward (<module>)`` around each wrapped module's
forward and backward (``torch/distributed/fsdp/_fully_shard/_fsdp_state.py``; read off the shared 2xH100 FSDP export),
FSDP1 ``FullyShardedDataParallel._pre_forward`` / ``._pre_backward_hook`` (``fsdp/_runtime_utils.py``), DDP
``DistributedDataParallel.forward`` (``nn/parallel/distributed.py``): none is a range the program wrote.  Its forward
hooks alone are no training either (FSDP also shards models run forward only).  Generator (truth by construction):
``synthetic.nsysexport.write_layer_pass`` with each layer's range named as the library names it."""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host


@pytest.mark.parametrize("layer_range, writer", [
    ("FSDP::pre_backward (blocks.{i}._checkpoint_wrapped_module)", "FSDP"),
    ("FullyShardedDataParallel._pre_backward_hook (layers.{i})", "FSDP"),
    ("DistributedDataParallel.forward", "DDP"),
], ids=["fsdp2", "fsdp1", "ddp"])
def test_a_wrappers_ranges_are_the_wrappers(tmp_path, layer_range, writer):
    """Base: "the user's NVTX ranges name work only training does: `FSDP::pre_backward (blocks.0...` ×1"; now the
    library's own ranges.  Fails on base."""
    p = tmp_path / "pass.sqlite"
    nx.write_layer_pass(str(p), layer_range=layer_range)
    job = first_host(p)["job"]
    assert f"{writer}'s own NVTX ranges (around its own calls) name work only training does" in job["summary"], \
        job["summary"]
    assert "the user's NVTX ranges" not in job["summary"], job["summary"]


@pytest.mark.parametrize("layer_range", [nx.FSDP_LAYER_RANGE, "FullyShardedDataParallel._pre_forward (layers.{i})"],
                         ids=["fsdp2", "fsdp1"])
def test_fsdps_forward_hooks_alone_are_no_training(tmp_path, layer_range):
    """One forward of FSDP-wrapped layers and nothing else (no backward hook, no backward op, no optimizer: truth by
    construction): FSDP also shards models run forward only, so its forward hooks are no evidence of training --
    ``frameworks.pytorch._TRAINING`` already said so of its ops (``tests/job/test_sharded_forward.py``), but the range
    names' rule read "FSDP" in them: base "a training step [high confidence: the user's NVTX ranges name work only
    training does: `FSDP::pre_forward (blocks.0...`"; now no training is claimed.  Fails on base."""
    p = tmp_path / "fwd.sqlite"
    nx.write_layer_pass(str(p), layer_range=layer_range)
    job = first_host(p)["job"]
    assert job["kind"] != "training", job["summary"]
    assert "work only training does" not in job["summary"], job["summary"]


def test_the_programs_own_ranges_stay_the_users(tmp_path):
    """Control (passes on base): the program's own ``backward`` range keeps "the user's NVTX ranges"."""
    p = tmp_path / "own.sqlite"
    nx.write_layer_pass(str(p), layer_range="backward_layer_{i}")
    job = first_host(p)["job"]
    assert "the user's NVTX ranges name work only training does: `backward_layer_0`" in job["summary"], job["summary"]
