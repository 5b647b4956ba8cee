"""A rank of the job recorded by its NVTX ranges alone, beside ranks whose GPU work was recorded, in one Nsight Systems
multi-process export (issue #37 class 2 at job scope; h37-norank61 *Left* 1).

Base read such an export as its recorded rank alone: the process whose CUDA side went unrecorded was said nowhere, so
the recorded rank's wait in its collectives printed as their transfer and the session could read "Healthy".  The
evidence that a process is a rank is what its ranges name -- the job's communication (NCCL's calls, a framework's
collectives) or the names the GPU ranks' work runs under -- never its calls: a launcher and a loader worker make no CUDA
call either, and stay silent.  Once read as a rank, it has the consequences Kineto's unrecorded rank has (h37-norank61,
h37-verdict61): a job line that says it and how to record it, a verdict never "Healthy", a title that counts it, no
transfer or bus bandwidth read off the recorded rank.

Truth by construction: ``synthetic.nsysexport.write_beside_ranks`` (two ranks, a launcher and a loader worker beside
them, a rank's CUDA side deleted by ``unrecord_process``).  Real: the shared 2xH100 FSDP export
(``/work/shared/profiles/nsys/fsdp_mfu_after/mfu_2gpu_after.sqlite``, processes 148 and 149) with process 149's CUDA
side deleted by the same ``unrecord_process`` in ``tmp_path`` (skipped where the shared file is absent)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report.render import to_text
from tests.support.cli_report import ran_report
from tests.support.properties import unrecorded_rank_claims

FSDP = Path("/work/shared/profiles/nsys/fsdp_mfu_after/mfu_2gpu_after.sqlite")


def _report(tmp_path: Path, name: str, **kw: object) -> tuple[dict, dict]:
    run = tmp_path / name
    run.mkdir()
    truth = nx.write_beside_ranks(str(run / "job.sqlite"), **kw)
    return ran_report(run)[1], truth


def _transfers(rep: dict) -> list:
    """The collectives table's "transfer ms" and "bus GB/s" cells."""
    tab = rep.get("collectives") or {}
    cols = tab.get("columns") or []
    return [row[cols.index(c)] for row in tab.get("rows") or () for c in ("transfer ms", "bus GB/s") if c in cols]


def _says_unrecorded(rep: dict, label: str) -> None:
    """The consequences of an unrecorded rank, as Kineto's has them."""
    job = rep["hosts"][0]["job"]
    assert job.get("unrecorded_rank_labels") == [label], job
    assert f"{label}'s window holds no GPU work, though its NVTX ranges are a rank's" in job["summary"]
    assert "record every rank's CUDA side" in job["summary"], job["summary"]
    assert not rep["healthy"] and not rep["verdict"].startswith("Healthy")
    assert rep["verdict"].endswith(f"{label}'s GPU work was not recorded") or \
        f"{label}'s GPU work was not recorded (" in rep["verdict"], rep["verdict"]
    assert "(2 ranks on 1 host (1 recorded)" in to_text(Report.from_dict(rep)).splitlines()[0]
    assert all(v is None for v in _transfers(rep)), _transfers(rep)
    assert unrecorded_rank_claims(Report.from_dict(rep)) == []


@pytest.mark.parametrize("kw, evidence", [
    ({"nccl_us": 200.0}, "the job's communication: `nccl:all_reduce` ×12"),
    ({"autograd_nvtx": False, "extra_ranges": ("forward", "backward", "optimizer"), "launcher": False,
      "worker": False}, "4 of the 4 range names GPU0's process launches its work under, numbers aside"),
], ids=["collectives", "same-work"])
def test_an_nvtx_only_rank_beside_a_gpu_rank_is_named(tmp_path, kw, evidence):
    """Rank 1's CUDA side deleted, its NVTX kept: read as a rank by its collectives' ranges, or (no collective) by
    naming every range GPU0's work runs under; said in the job line with its evidence, the session not healthy, the
    title "2 ranks on 1 host (1 recorded)", no transfer printed.  Base: "1 host", nothing said of pid 1001.  Fails
    on base.  (h37-nvtx63: the names compared by family, numbers aside: ``train_step 0`` ... ``train_step 11`` are one
    name, so 4 of 4 where whole names counted 15 of 15.)"""
    rep, truth = _report(tmp_path, "job", unrecorded=1, **kw)
    assert truth["deleted"]["CUPTI_ACTIVITY_KIND_KERNEL"] > 0
    _says_unrecorded(rep, "python3 (pid 1001)")
    assert evidence in rep["hosts"][0]["job"]["summary"], rep["hosts"][0]["job"]["summary"]
    for other in truth["not_ranks"]:  # the launcher and the loader worker beside it: no ranks
        assert other not in rep["hosts"][0]["job"]["summary"]


def test_a_launcher_and_a_loader_worker_beside_two_gpu_ranks_stay_silent(tmp_path):
    """Control (passes on base): a launcher with NVTX ranges of its own and a loader worker whose ranges are a few
    ops (one of them among the ranks') beside two recorded GPU ranks are no ranks: the report is the one of the two
    ranks alone -- title, verdict, findings, no job line of them."""
    alone, _ = _report(tmp_path, "alone", launcher=False, worker=False)
    beside, truth = _report(tmp_path, "beside")
    assert truth["not_ranks"] == ("python3 (pid 900)", "pt_data_worker (pid 1100)")
    job = beside["hosts"][0]["job"]
    assert "idle_rank_labels" not in job and "unrecorded_rank_labels" not in job, job
    assert not any(p in job["summary"] for p in truth["not_ranks"])
    assert beside["verdict"] == alone["verdict"] and beside["healthy"] == alone["healthy"]
    assert [(f["rule"], f["severity"]) for f in beside["findings"]] == [(f["rule"], f["severity"])
                                                                         for f in alone["findings"]]
    heads = [to_text(Report.from_dict(r)).splitlines()[0].split("(", 1)[1] for r in (alone, beside)]
    assert heads[0] == heads[1] and heads[0].startswith("2 ranks on 1 host, 10 steps each"), heads


def test_real_fsdp_export_with_one_process_cuda_unrecorded(tmp_path):
    """The shared 2xH100 FSDP export with process 149's CUDA side deleted (kernels 1,794, copies 452, fills 121, syncs
    168, runtime calls 3,344: its 8,557 NVTX ranges kept): base read "1 host, 4 steps" of process 148 alone, printed
    its AllToAll's 2.47 ms as their transfer and said nothing of 149; now 149 is a rank by its NCCL ranges, said
    unrecorded, with every consequence.  Fails on base."""
    if not FSDP.is_file():
        pytest.skip(f"{FSDP} absent")
    run = tmp_path / "fsdp"
    run.mkdir()
    shutil.copy(FSDP, run / FSDP.name)
    gone = nx.unrecord_process(str(run / FSDP.name), 149)
    assert gone == {"CUPTI_ACTIVITY_KIND_KERNEL": 1794, "CUPTI_ACTIVITY_KIND_MEMCPY": 452,
                    "CUPTI_ACTIVITY_KIND_MEMSET": 121, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": 168,
                    "CUPTI_ACTIVITY_KIND_RUNTIME": 3344}, gone
    rep = ran_report(run)[1]
    _says_unrecorded(rep, "python3 (pid 149)")
    assert "`ncclSend` ×60, `ncclRecv` ×60" in rep["hosts"][0]["job"]["summary"]
