"""The session title counts the job's ranks its files hold of the job's world size where the files say it (Kineto's
``distributedInfo.world_size``): a 4-rank job whose folder holds 2 ranks' traces read "2 ranks on 1 host" on base, a
job no larger than what was captured; now "2 of 4 ranks on 1 host" (h37-verdict61 *Left* 1).  No size the files do
not give: a format without a world size keeps the count of what was read.  Truth by construction:
``synthetic.torchtrace`` writes a 4-rank DDP job (every file's ``distributedInfo.world_size`` 4), two files removed."""

from __future__ import annotations

import os

from synthetic import torchtrace as tt
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report.render import to_text
from tests.support.cli_report import ran_report


def _title(tmp_path, keep: tuple[int, ...], unrecorded: int | None = None) -> tuple[str, dict]:
    sc = tt.Scenario(4, tt.ddp(comm_us=150.0, slow_rank=2, slow=1.5), [], [], "DDP, a slow rank")
    paths = tt.write_run(str(tmp_path), sc, steps=8, run="ddp")
    for p in paths:
        if tt.doc_rank(p) not in keep:
            os.remove(p)
        elif tt.doc_rank(p) == unrecorded:
            tt.unrecord_gpu(p)
    rep = ran_report(tmp_path / "ddp")[1]
    return to_text(Report.from_dict(rep)).splitlines()[0], rep


def test_two_of_four_ranks(tmp_path):
    """Fails on base ("2 ranks on 1 host")."""
    head, rep = _title(tmp_path, (0, 2))
    assert "(2 of 4 ranks on 1 host, 6 steps each" in head, head
    assert {h["job"]["job_ranks"] for h in rep["hosts"]} == {4}


def test_three_of_four_with_one_unrecorded(tmp_path):
    """Fails on base ("3 ranks on 1 host (2 recorded)")."""
    head, _ = _title(tmp_path, (0, 1, 2), unrecorded=2)
    assert "(3 of 4 ranks on 1 host (2 recorded)" in head, head


def test_every_rank_here_names_no_world(tmp_path):
    """Control (passes on base): all 4 files -- "4 ranks", no "of"."""
    head, _ = _title(tmp_path, (0, 1, 2, 3))
    assert "(4 ranks on 1 host, 6 steps each" in head, head
