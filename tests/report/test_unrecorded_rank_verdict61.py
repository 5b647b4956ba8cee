"""The verdict and the title of a session holding a rank whose GPU work was not recorded (issue #37 class 1 at job
scope; h37-norank61 *Left* 4 and 5).

A rank's trace written with the GPU's activity off, or whose GPU records were lost, is a capture the report cannot
judge whole: its GPU time is unknown.  Base called such a session "Healthy: no check of the guide fired" wherever
every finding was a note (a DDP job given ``--params``), with ``healthy: true``, under a title that counted the
recorded ranks alone ("3 ranks on 1 host" of a 4-rank job).  Now the verdict says what the report cannot judge
("No problem found in the recorded ranks; rank 2 (node0_4102)'s GPU work was not recorded"), ``healthy`` is false,
and the title counts the job's ranks in the session's files and how many were recorded -- the same in the text, the
markdown and the JSON the tab reads.  Told apart by the rank's calls (``Job.unrecorded_rank_labels``: no runtime call,
or launches none of whose kernels was recorded), not by names: a node's rank whose window only started up beside a
loop keeps its rank 0's "Healthy" (h37-probe43w's test; the control here).

Truth by construction: ``synthetic.torchtrace`` DDP jobs whose slow rank is rewritten by ``unrecord_gpu`` (the same
work, its record gone).  Real: ``wild/tp_rtx4090_two_ranks`` (two TP ranks of one RTX 4090 node, PROVENANCE.md) with
rank 1's trace rewritten so in ``tmp_path``."""

from __future__ import annotations

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report.render import to_markdown, to_text
from tests.support.cli_report import ran_report
from tests.support.properties import unrecorded_rank_claims
from tests.support.unrecorded_rank import tp_rank1_unrecorded

#: the AllReduce's parameters: 32 MiB of fp32 gradients -- given, every finding of the job is a note
PARAMS = str(32 * 2 ** 20 // 4)


def _ddp(tmp_path, lost: bool = False) -> dict:
    """4 ranks on one node, rank 2 (1.5x compute) unrecorded (``lost``: its CUPTI records lost), read with ``--params``."""
    sc = tt.Scenario(4, tt.ddp(comm_us=150.0, slow_rank=2, slow=1.5), [], [], "DDP, a slow rank")
    paths = tt.write_run(str(tmp_path), sc, steps=8, run="ddp")
    tt.unrecord_gpu(next(p for p in paths if tt.doc_rank(p) == 2), lost=lost)
    return ran_report(tmp_path / "ddp", extra=("--params", PARAMS))[1]


def _surfaces(rep: dict) -> tuple[str, str]:
    r = Report.from_dict(rep)
    return to_text(r), to_markdown(r)


@pytest.mark.parametrize("lost", [False, True], ids=["cuda-off", "records-lost"])
def test_a_job_with_a_rank_unrecorded_is_not_healthy(tmp_path, lost):
    """Every finding a note (base: "Healthy: no check of the guide fired (2 notes)", healthy true, "3 ranks on 1
    host"): the verdict says the recorded ranks were judged and rank 2 was not recorded; the title counts 4 ranks, 3
    recorded; text and markdown say the same.  Fails on base."""
    rep = _ddp(tmp_path, lost)
    assert not [f for f in rep["findings"] if f["severity"] in ("critical", "warning")]
    assert rep["verdict"] == ("No problem found in the recorded ranks; rank 2 (node0_4102)'s GPU work was not "
                              "recorded (2 notes)"), rep["verdict"]
    assert rep["healthy"] is False
    assert rep["hosts"][0]["job"]["unrecorded_rank_labels"] == ["rank 2 (node0_4102)"]
    text, md = _surfaces(rep)
    head = text.splitlines()[0]
    assert "(4 ranks on 1 host (3 recorded), 6 steps each" in head, head
    assert f"FINDINGS: {rep['verdict']}" in text and "Healthy" not in text
    assert rep["verdict"] in md and "4 ranks on 1 host (3 recorded)" in md
    assert unrecorded_rank_claims(Report.from_dict(rep)) == []


def test_a_start_up_rank_beside_a_loop_stays_healthy(tmp_path):
    """Control (passes on base): a node's rank whose window ended in its start-up (CUDA calls that make memory and
    streams, no launch) was recorded -- the verdict stays rank 0's "Healthy", the title "1 host"."""
    truth = tt.write_mixed_window_run(str(tmp_path), one_node=True)
    rep = ran_report(truth["folder"])[1]
    assert rep["healthy"] and rep["verdict"] == "Healthy: no check of the guide fired", rep["verdict"]
    assert "unrecorded_rank_labels" not in rep["hosts"][0]["job"]
    assert to_text(Report.from_dict(rep)).splitlines()[0].endswith("(1 host, 6 steps, step 2.42 ms)")


def test_the_property_catches_a_healthy_verdict_with_a_rank_unrecorded(tmp_path):
    """The property ``no-gpu-rank`` finds base's words: "Healthy" and ``healthy`` true of such a session."""
    bad = Report.from_dict(_ddp(tmp_path))
    bad.healthy, bad.verdict = True, "Healthy: no check of the guide fired (2 notes)"
    problems = unrecorded_rank_claims(bad)
    assert any("called healthy" in p for p in problems) and any("verdict does not say" in p for p in problems)


def test_real_tp_ranks_one_unrecorded(tmp_path):
    """The real two-rank TP capture (RTX 4090) with rank 1 written without its CUDA activity: base's verdict named
    rank 0's cold start alone under "1 host"; now it says rank 1's GPU work was not recorded, ``healthy`` is false
    and the title counts 2 ranks, 1 recorded.  Fails on base."""
    rep = ran_report(tp_rank1_unrecorded(tmp_path))[1]
    assert rep["verdict"].endswith("; rank 1 (llama_trace_4layers1_with_annotations.json.gz)'s GPU work was not "
                                   "recorded"), rep["verdict"]
    assert rep["healthy"] is False
    text, md = _surfaces(rep)
    assert "(2 ranks on 1 host (1 recorded), start-up only" in text.splitlines()[0], text.splitlines()[0]
    assert rep["verdict"] in " ".join(text.split()) and rep["verdict"] in md
    assert unrecorded_rank_claims(Report.from_dict(rep)) == []
