"""A job rank whose GPU work was not recorded, beside ranks that ran it (issue #37 class 1 at job scope; h37-jax61
*Left* 4).

Real jobs write such a rank: its trace made with ``activities=[ProfilerActivity.CPU]`` or CUPTI's records lost, a
CPU-only process.  Its GPU time is unknown, not zero: it has no row of the ranks or GPUs table (no "slowest GPU", no
median dragged) -- as on base --, but the recorded ranks' collectives may hold their wait for it: the least time a
recorded rank spends in a call is no transfer when the rank that entered last is the unrecorded one.  Base read that
wait as a transfer: a DDP job whose slow rank's GPU side went unrecorded read "32 MiB per call at 38.0 GB/s of bus
bandwidth, 8.4% of the link" (critical) and, given the parameter count, "17.8x the expected" AllReduce (critical),
and said only "rank 2's window holds no GPU work: no GPU runtime call" -- not that its GPU side went unrecorded, nor
how to record it.  Now ``JobView.unrecorded`` holds such ranks: no bus bandwidth is read, the AllReduce is measured,
not judged, ``comm_exposed`` says its time may be waiting for them, and the job line says how to record them.

Truth by construction: ``synthetic.torchtrace`` DDP jobs whose slow rank (1.5x compute) is rewritten by
``unrecord_gpu`` -- the same work, its record gone; the fully recorded job is the control (its slow rank found).
Real: ``wild/tp_rtx4090_two_ranks`` (two TP ranks of one RTX 4090 node, PROVENANCE.md) with rank 1's trace rewritten
so in ``tmp_path``."""

from __future__ import annotations

from synthetic import torchtrace as tt
from tb_gpu_advisor.model.schema import Report
from tests.support.cli_report import ran_report
from tests.support.properties import unrecorded_rank_claims
from tests.support.unrecorded_rank import tp_rank1_unrecorded

#: DDP, 4 ranks; rank ``SLOW`` computes 1.5x longer, so the others wait for it in each step's AllReduce (150 us)
SLOW = 2
#: the AllReduce's parameters: 32 MiB of fp32 gradients
PARAMS = str(32 * 2 ** 20 // 4)


def _job(tmp_path, nodes: int = 1, ranks: int = 4, unrecorded: int | None = SLOW, lost: bool = False,
         params: bool = False, slow: int = SLOW) -> dict:
    sc = tt.Scenario(ranks, tt.ddp(comm_us=150.0, slow_rank=slow, slow=1.5), [], [], "DDP, a slow rank",
                     nodes=nodes)
    paths = tt.write_run(str(tmp_path), sc, steps=8, run="ddp")
    if unrecorded is not None:
        tt.unrecord_gpu(next(p for p in paths if tt.doc_rank(p) == unrecorded), lost=lost)
    return ran_report(tmp_path / "ddp", extra=("--params", PARAMS) if params else ())[1]


def _rules(rep: dict) -> dict[str, dict]:
    return {f["rule"]: f for f in rep["findings"]}


def _job_lines(rep: dict) -> str:
    return " ".join(h["job"]["summary"] for h in rep["hosts"] if h.get("job"))


def test_a_slow_rank_with_cuda_unrecorded_reads_no_transfer(tmp_path):
    """Rank 2 (the slow one) profiled with the CPU's activity alone: no bus bandwidth is read off the others' wait for
    it (base: comm_bandwidth_low critical, 38.0 GB/s), comm_exposed says the wait may be its, the job line says its
    GPU side was not recorded and how to record it, and no table gives it a row.  Fails on base."""
    rep = _job(tmp_path)
    rules = _rules(rep)
    assert "comm_bandwidth_low" not in rules
    said = rules["comm_exposed"]["summary"]
    assert "The GPU work of rank 2 (node0_4102) is not recorded" in said, said
    assert "may be waiting for it" in said and "profile every rank" not in said
    line = _job_lines(rep)
    assert "rank 2 (node0_4102)'s window holds no GPU work: no GPU runtime call, kernel or copy: its GPU side was " \
           "not recorded, or the process used no GPU; record the GPU's side: put ProfilerActivity.CUDA among the " \
           "profiler's activities" in line, line
    assert [r[0] for r in rep["ranks"]["rows"]] == [f"rank {k} (node0/GPU{k})" for k in (0, 1, 3)]
    assert [g["gpu"] for g in rep["hosts"][0]["gpus"] if g["kernel_count"]] == [0, 1, 3]
    (row,) = rep["collectives"]["rows"]
    assert row[2] == 32 * 2 ** 20 and row[6] is None  # the message kept, no bus GB/s read off it
    assert row[5] is None  # nor a transfer: the least time may be the wait for rank 2 (h37-review61b; base 1.324)
    assert unrecorded_rank_claims(Report.from_dict(rep)) == []


def test_the_allreduce_is_not_judged_slow_on_a_wait_for_an_unrecorded_rank(tmp_path):
    """Given the parameter count, base judged the recorded ranks' 1.32 ms wait "17.8x the expected" 75 us (critical,
    saving 1.25 ms a step); the AllReduce is measured, not judged, and claims no saving.  Fails on base."""
    rules = _rules(_job(tmp_path, params=True))
    f = rules["allreduce_slow"]
    assert f["severity"] == "info" and not f.get("saving"), f
    assert "the expected" not in f["summary"] and "not judged against its expected time" in f["summary"]
    assert "rank 2 (node0_4102)" in f["summary"]


def test_lost_gpu_records_say_so_with_the_fix(tmp_path):
    """Rank 2's CUPTI records lost (its runtime calls kept): its launches queued kernels none recorded, said with the
    format's fix for lost records.  Fails on base (base: "... no kernel" and nothing more)."""
    rep = _job(tmp_path, lost=True)
    line = _job_lines(rep)
    assert "rank 2 (node0_4102)'s window holds no GPU work:" in line
    assert "launches queued kernels, none recorded: its GPU's records were lost; record fewer steps at a time" in line
    assert "comm_bandwidth_low" not in _rules(rep)


def test_a_whole_node_unrecorded_is_named_by_its_host(tmp_path):
    """Two nodes of one rank each, node1's rank (the slow one) unrecorded: its host file holds no GPU work, and the
    job's collectives are read as above, naming that host.  Fails on base."""
    rep = _job(tmp_path, nodes=2, ranks=2, unrecorded=1, slow=1)
    rules = _rules(rep)
    idle = [h["host"] for h in rep["hosts"] if not any(g["kernel_count"] for g in h["gpus"])]
    assert len(idle) == 1
    assert "comm_bandwidth_low" not in rules
    assert f"The GPU work of {idle[0]} is not recorded" in rules["comm_exposed"]["summary"]
    assert unrecorded_rank_claims(Report.from_dict(rep)) == []


def test_every_rank_recorded_finds_the_slow_rank(tmp_path):
    """Control (passes on base): the same job with every rank recorded finds rank 2 the slow one and says nothing of
    unrecorded ranks."""
    rep = _job(tmp_path, unrecorded=None)
    top = rep["findings"][0]
    assert top["rule"] == "gpu_imbalance" and "GPU2" in top["title"], top["title"]
    assert "not recorded" not in " ".join(f["summary"] for f in rep["findings"])


def test_the_property_catches_a_transfer_read_with_a_rank_unrecorded(tmp_path):
    """The property ``no-gpu-rank`` (``report_violations``) finds base's sentence and the rank's row, and lets a job of
    recorded ranks read its bandwidth (a control of the property itself)."""
    rep = _job(tmp_path)
    bad = Report.from_dict(rep)
    bad.findings[0].summary += " AllReduce moves 32 MiB per call at 38.0 GB/s of bus bandwidth."
    bad.ranks.rows.append(["rank 2 (node0_4102)", 5.0, 3.5, 0.1, 0.0, 4.9])
    problems = unrecorded_rank_claims(bad)
    assert any("reads a transfer" in p for p in problems) and any("ranks table row" in p for p in problems)
    for h in bad.hosts:
        (h.job or {}).pop("idle_rank_labels", None)
    assert unrecorded_rank_claims(bad) == []


def test_real_tp_ranks_one_unrecorded(tmp_path):
    """The real two-rank TP capture (RTX 4090) with rank 1 written without its CUDA activity: rank 0's exposed
    collectives say rank 1's GPU work was not recorded -- not "One rank's trace cannot tell ...: profile every rank"
    of a job whose every rank was profiled -- and the job line how to record it.  Fails on base."""
    rep = ran_report(tp_rank1_unrecorded(tmp_path))[1]
    said = _rules(rep)["comm_exposed"]["summary"]
    assert "profile every rank" not in said
    assert "The GPU work of rank 1 (llama_trace_4layers1_with_annotations.json.gz) is not recorded" in said, said
    assert "put ProfilerActivity.CUDA among the profiler's activities" in _job_lines(rep)
    assert unrecorded_rank_claims(Report.from_dict(rep)) == []
