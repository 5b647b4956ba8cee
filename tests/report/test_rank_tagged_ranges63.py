"""A rank whose CUDA side went unrecorded is a rank though its ranges name its own rank (h37-review63, reviewing
nvtx62's ``job.kind._rank_evidence``).

nvtx62 reads a process that ran no GPU work as a rank of the job where its NVTX ranges name at least
``job.rank_shared_work`` of the names a GPU's process launches its work under -- compared whole.  A DDP script that
tags its ranges with its rank (``rank1 forward`` beside rank 0's ``rank0 forward``, ``rank1 train_step 3``) shares no
whole name with rank 0, so base said nothing of rank 1: "1 host", its session read as the recorded rank's alone.  The
names compared but for their numbers (``frameworks.nvtx.number_family``) are the same program's.  The launcher and the
loader worker beside them stay silent: their names, numbers masked too, are none of the ranks' work.

Truth by construction: ``synthetic.nsysexport.write_beside_ranks`` (two or eight ranks, pid 1000 on, one rank's CUDA
side deleted; a launcher, pid 900, and a loader worker, pid 1100, no ranks), the ranges named with ``{rank}``."""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report.render import to_text
from tests.support.cli_report import ran_report

TAGGED = {"step_range": "rank{rank} train_step {k}",
          "extra_ranges": ("rank{rank} forward", "rank{rank} backward", "rank{rank} optimizer")}


@pytest.mark.parametrize("ranks, lost, autograd", [(2, 1, False), (2, 1, True), (8, 5, False)],
                         ids=["user-ranges", "autograd-nvtx", "8-ranks"])
def test_a_rank_whose_ranges_name_its_rank_is_a_rank(tmp_path, ranks, lost, autograd):
    """Base: the unrecorded rank (pid 1000 + ``lost``) said nowhere, the session not marked incomplete, the title
    counting the recorded ranks alone.  Fails on base."""
    run = tmp_path / "job"
    run.mkdir()
    truth = nx.write_beside_ranks(str(run / "job.sqlite"), ranks=ranks, unrecorded=lost, autograd_nvtx=autograd,
                                  **TAGGED)
    assert truth["deleted"]["CUPTI_ACTIVITY_KIND_KERNEL"] > 0
    rep = ran_report(run)[1]
    job = rep["hosts"][0]["job"]
    assert job.get("unrecorded_rank_labels") == [f"python3 (pid {1000 + lost})"], job
    assert f"{ranks} ranks on 1 host ({ranks - 1} recorded)" in to_text(Report.from_dict(rep)).splitlines()[0]
    assert "launches its work under, numbers aside: the same program" in job["summary"], job["summary"]
    assert not rep["healthy"]
    for other in truth["not_ranks"]:  # the launcher and the loader worker: no ranks
        assert other not in job["summary"], job["summary"]


def test_both_ranks_recorded_with_tagged_ranges_say_no_idle_rank(tmp_path):
    """Control (passes on base): both ranks recorded, the launcher and the worker beside them -- no process read as
    an idle rank."""
    run = tmp_path / "job"
    run.mkdir()
    nx.write_beside_ranks(str(run / "job.sqlite"), autograd_nvtx=False, **TAGGED)
    job = ran_report(run)[1]["hosts"][0]["job"]
    assert "idle_rank_labels" not in job and "unrecorded_rank_labels" not in job, job
