"""An Nsight process recorded by its NVTX alone, named by the rank NCCL's own payloads give it, and read as a rank
where its range names differ from a GPU rank's only by their numbers (issue #37 class 2 at job scope; h37-nvtx62
*Left* 1 and 3).

Real: the CS336 overlapped-DDP export (``tests/fixtures/nsys_ranks/ddp_overlap_rtx3090.sqlite.gz``, Nsight 2026.3.1,
two processes, pids 13096 and 13097): NCCL writes a payload on its communicator calls, which the export keeps as JSON
(``NVTX_EVENTS.jsonText``, schema in ``NVTX_PAYLOAD_SCHEMA_ENTRIES``): read by hand with sqlite3,
``ncclCommInitRankConfig`` of pid 13096 is ``{"NCCL communicator ID":13429301450432826988,"No. of ranks":2,"Rank":0,
"CUDA device":0}`` and of pid 13097 ``{..., "No. of ranks":2,"Rank":1,"CUDA device":1}``.  Process 13097's CUDA side
is deleted in the test (``synthetic.nsysexport.unrecord_process``), its NVTX kept.

Generator (truth by construction): ``synthetic.nsysexport.write_beside_ranks`` with ``{rank}`` in its range names: each
rank writes its rank into its step and phase ranges (``rank0/forward`` beside ``rank1/forward``)."""

from __future__ import annotations

import gzip
import shutil
import sqlite3
from pathlib import Path

from synthetic import nsysexport as nx
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report.render import to_text
from tests.support.cli_report import ran_report

#: Each rank's step and phase ranges named with its rank (``rank1/forward``, ``rank1/train_step 3``).
RANK_NAMED = {"extra_ranges": ("rank{rank}/forward", "rank{rank}/backward", "rank{rank}/optimizer"),
              "step_range": "rank{rank}/train_step {k}"}

DDP = Path(__file__).resolve().parents[1] / "fixtures" / "nsys_ranks" / "ddp_overlap_rtx3090.sqlite.gz"


def _ddp(tmp_path: Path) -> Path:
    run = tmp_path / "ddp"
    run.mkdir()
    with gzip.open(DDP, "rb") as src, open(run / "ddp.sqlite", "wb") as dst:
        shutil.copyfileobj(src, dst)
    return run


def test_real_nvtx_only_process_is_named_by_its_nccl_rank(tmp_path):
    """Process 13097's CUDA side deleted: base named it "python (pid 13097)", though NCCL's payload on its
    ``ncclCommInitRankConfig`` says rank 1 of 2; now "rank 1 (python, pid 13097)" in the job line, the verdict and the
    report's labels, and the job's world size is the communicator's 2.  Fails on base."""
    run = _ddp(tmp_path)
    gone = nx.unrecord_process(str(run / "ddp.sqlite"), 13097)
    assert gone["CUPTI_ACTIVITY_KIND_KERNEL"] == 2326, gone
    rep = ran_report(run)[1]
    job = rep["hosts"][0]["job"]
    label = "rank 1 (python, pid 13097)"
    assert job.get("unrecorded_rank_labels") == [label], job
    assert f"{label}'s window holds no GPU work, though its NVTX ranges are a rank's" in job["summary"]
    assert f"{label}'s GPU work was not recorded" in rep["verdict"], rep["verdict"]
    assert job.get("job_ranks") == 2, job
    assert "(2 ranks on 1 host (1 recorded)" in to_text(Report.from_dict(rep)).splitlines()[0]


def test_real_rank_alone_knows_its_world_from_nccl(tmp_path):
    """Process 13097 deleted whole (every row of it): the export holds rank 0 alone; NCCL's communicator says the job
    has 2 ranks (``job_ranks`` 2; base: absent).  Fails on base."""
    run = _ddp(tmp_path)
    con = sqlite3.connect(run / "ddp.sqlite")
    for (table,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        cols = {r[1] for r in con.execute(f'PRAGMA table_info("{table}")')}
        col = "globalTid" if "globalTid" in cols else "globalPid" if "globalPid" in cols else None
        if col:
            con.execute(f'DELETE FROM "{table}" WHERE ({col} >> 24) & 16777215 = 13097')
    con.commit()
    con.close()
    rep = ran_report(run)[1]
    assert rep["hosts"][0]["job"].get("job_ranks") == 2, rep["hosts"][0]["job"]
    assert "unrecorded_rank_labels" not in rep["hosts"][0]["job"]


def test_a_rank_whose_range_names_carry_its_rank_is_a_rank(tmp_path):
    """Each rank writes its rank into its ranges (``rank1/forward``, ``rank1/train_step 3``; no collective): rank 1's
    CUDA side deleted.  Base compared whole names -- none of rank 1's is rank 0's (2 of 15 alike, the ops') -- and
    said nothing of pid 1001; by family (numbers aside) its names are rank 0's.  Fails on base."""
    run = tmp_path / "job"
    run.mkdir()
    nx.write_beside_ranks(str(run / "job.sqlite"), unrecorded=1, autograd_nvtx=False,
                          **RANK_NAMED, launcher=False, worker=False)
    con = sqlite3.connect(run / "job.sqlite")
    names = {t for (t,) in con.execute("SELECT DISTINCT text FROM NVTX_EVENTS WHERE text LIKE 'rank1/%'")}
    con.close()
    assert {"rank1/forward", "rank1/train_step 3"} <= names, names
    rep = ran_report(run)[1]
    job = rep["hosts"][0]["job"]
    assert job.get("unrecorded_rank_labels") == ["python3 (pid 1001)"], job
    assert "range names GPU0's process launches its work under, numbers aside" in job["summary"], job["summary"]


def test_a_launcher_and_worker_stay_no_ranks_by_family(tmp_path):
    """Control (passes on base): with every rank's ranges named with its rank, the launcher (its own ranges) and the
    loader worker (a few ops) beside two recorded ranks are still no ranks."""
    run = tmp_path / "beside"
    run.mkdir()
    truth = nx.write_beside_ranks(str(run / "job.sqlite"), autograd_nvtx=False,
                                  **RANK_NAMED)
    job = ran_report(run)[1]["hosts"][0]["job"]
    assert "idle_rank_labels" not in job, job
    assert not any(p in job["summary"] for p in truth["not_ranks"])


def _nvtx_rows_of(run: Path, pid: int) -> tuple[sqlite3.Connection, list[str], list[tuple]]:
    con = sqlite3.connect(run / "ddp.sqlite")
    cols = [r[1] for r in con.execute('PRAGMA table_info("NVTX_EVENTS")')]
    rows = con.execute(f'SELECT * FROM NVTX_EVENTS WHERE (globalTid >> 24) & 16777215 = {pid}').fetchall()
    return con, cols, rows


def test_two_processes_claiming_one_nccl_rank_are_named_by_neither(tmp_path):
    """Hostile/other jobs (h37-rev63b): a second NVTX-only process (pid 13098, a copy of 13097's NVTX rows) claims
    rank 1 of the same 2-rank communicator as 13097 -- two processes cannot be one communicator's rank 1 (two jobs on
    one machine, or a subgroup's communicator taken for the world's).  Base named both "rank 1 (...)"; a rank claimed
    by two processes names neither.  Fails on base."""
    run = _ddp(tmp_path)
    nx.unrecord_process(str(run / "ddp.sqlite"), 13097)
    con, cols, rows = _nvtx_rows_of(run, 13097)
    g = cols.index("globalTid")
    shift = (13098 - 13097) << 24
    con.executemany(f'INSERT INTO NVTX_EVENTS ({", ".join(cols)}) VALUES ({", ".join("?" * len(cols))})',
                    [tuple(v + shift if i == g else v for i, v in enumerate(r)) for r in rows])
    con.commit()
    con.close()
    rep = ran_report(run)[1]
    text = str(rep)
    assert "13098" in text, "the copied process is read"
    assert "rank 1 (python, pid 13097)" not in text and "rank 1 (pid 13098)" not in text, text[:3000]


def test_an_nccl_world_past_an_int_is_no_world(tmp_path):
    """Hostile (h37-rev63b): a payload whose "No. of ranks" is 10**30 (NCCL's count is a C int) made the job's world
    10**30 ranks (``job_ranks``) and the process its rank; now the payload is not read: the world stays the real
    communicator's 2.  Fails on base."""
    run = _ddp(tmp_path)
    nx.unrecord_process(str(run / "ddp.sqlite"), 13097)
    con, cols, rows = _nvtx_rows_of(run, 13096)
    j = cols.index("jsonText")
    bad = [r for r in rows if r[j] and '"No. of ranks"' in r[j]][0]
    text = bad[j].replace('"No. of ranks":2', f'"No. of ranks":{10 ** 30}')
    assert text != bad[j], bad[j]
    con.execute(f'INSERT INTO NVTX_EVENTS ({", ".join(cols)}) VALUES ({", ".join("?" * len(cols))})',
                tuple(text if i == j else v for i, v in enumerate(bad)))
    con.commit()
    con.close()
    rep = ran_report(run)[1]
    assert rep["hosts"][0]["job"].get("job_ranks") == 2, rep["hosts"][0]["job"]
