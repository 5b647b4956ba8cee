"""AllReduce calls that compute separates are no calls to pack: ``allreduce_extra`` says the runs, not "expected 1".

h37-hunt71a's *Left*: the real Megatron-LM tensor-parallel pair (``wild/megatron_tp2_v100_turns``, BSD-3) makes 13
AllReduce calls a step -- the tensor-parallel all-reduces of the forward, the backward and the vocab-parallel loss,
each after the compute that made its input, and no gradient all-reduce at all (TP=2, no data parallelism) -- and read
"13 AllReduce calls in the step (expected 1 with NCCL)", as if one packed call could carry them all.  Its saving was
already the one call that follows another with no compute between (the comm model's runs); now its words say so.
Control: a loop whose calls all run back to back (the rule's own unit case) keeps "expected 1 with NCCL".
"""

from __future__ import annotations

import json

from tb_gpu_advisor.rules import REGISTRY
from tests.support.cli_report import in_process
from tests.support.paths import FIXTURES
from tests.support.rules_factory import multi


def _allreduce_extra(run_name: str) -> dict:
    out = in_process("report", str(FIXTURES / "wild"), "--run", run_name, "--format", "json", "--cache-dir", "off")
    (f,) = [f for f in json.loads(out.stdout)["findings"] if f["rule"] == "allreduce_extra"]
    return f


def test_tensor_parallel_calls_read_as_runs_compute_separates() -> None:
    f = _allreduce_extra("megatron_tp2_v100_turns")
    assert "expected 1" not in f["summary"], f["summary"]
    assert "13 AllReduce calls" in f["summary"] and "in 12 runs that compute separates" in f["summary"]
    assert "1 call with no compute between it and the call before it" in f["summary"]
    assert "the gradients are reduced in one packed AllReduce" not in f["saving"]["assumption"]
    # the saving is the one packable call's share of the calls' exposed time, never more than that time
    assert 0 < f["saving"]["ms_per_step"] <= 24.2 / 13 + 0.01


def test_calls_back_to_back_keep_expected_one() -> None:
    (f,) = REGISTRY["allreduce_extra"].check(multi(calls=6.0, ar_ms=0.6))
    assert "expected 1 with NCCL" in f.summary and "runs that compute separates" not in f.summary
