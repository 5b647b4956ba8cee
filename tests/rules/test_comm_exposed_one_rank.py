"""One rank's file of a multi-rank job: the exposed-communication finding's step is this rank's, one of the group its
collectives' messages name -- not "the GPU", the words of a one-GPU job (h37-review2's left).  The group size is
checked against the trace's own ``distributedInfo.world_size``, read here from the file, not through the package."""

from __future__ import annotations

import gzip
import json
import re

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tests.support.contradictions import context_problems
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

RANK_FILES = ["ddp_mi300x_actckpt", "dlrm_a100_alltoall", "torchrec_a100_stalls", "torchrec_shampoo_128",
              "tp_rtx4090_cold_forward"]


def _world_size(run: str) -> int:
    path = next((FIXTURES / "wild" / run).rglob("*.pt.trace.json*"))
    with (gzip.open(path, "rt") if path.suffix == ".gz" else open(path)) as fh:
        return json.load(fh)["distributedInfo"]["world_size"]


@pytest.mark.parametrize("run", RANK_FILES)
def test_one_ranks_collectives_are_said_of_this_rank(run):
    s = discover(str(FIXTURES / "wild" / run))[0]
    rep = session_report(s)
    f = next(f for f in rep.findings if f.rule == "comm_exposed")
    assert f.metric.detail["ranks"] == 1
    # the job's word for its step: tp_rtx4090_cold_forward marks none, its one step is the pass it was read as: "of the
    # 819.9 ms pass" (h37-words2: the job rules ask ``JobView.of_step``; h37-words3: an unmarked step is "pass")
    assert re.search(rf"(?:step|forward pass|pass) \(this rank of {_world_size(run)}\)", f.summary)
    assert "(the GPU)" not in f.summary
    assert not [p for p in context_problems(rep) if "comm_exposed" in p]


def test_the_checker_catches_the_one_gpu_words_on_one_rank():
    s = discover(str(FIXTURES / "wild" / "torchrec_a100_stalls"))[0]
    rep = session_report(s)
    f = next(f for f in rep.findings if f.rule == "comm_exposed")
    f.summary = f.summary.replace("(this rank of 16)", "(the GPU)")  # main's words
    assert [p for p in context_problems(rep) if "comm_exposed" in p]
