"""A rank of a larger job whose capture window ran no collective is still one rank of N (issue #37, h37-left33).

By construction from a real file: ``wild/ddp_mi300x_actckpt`` is rank 0 of an 8-rank DDP job (``distributedInfo``
world 8) whose three training steps run 17 RCCL kernels.  With every collective taken out (its kernels and their
launches, the ``nccl:`` / ``c10d::`` ops, ``record_param_comms``) nothing but the header says the job: a DDP rank's
window that holds no gradient bucket's AllReduce (a forward-only step, gradient accumulation's ``no_sync``) looks so.  The report must still say the file is
rank 0 of 2 and keep the capture advice of a job of ranks, and invent no collective finding.  Control: the same file
whose header says a job of one rank reads as a process alone, as before.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from tests.support.cli_report import first_host
from tests.support.paths import FIXTURES

SOURCE = FIXTURES / "wild" / "ddp_mi300x_actckpt" / "rank0_iter16_18.542.pt.trace.json.gz"
_COMM = re.compile(r"^(?:ncclDevKernel|nccl:|c10d::|record_param_comms)")
_COMM_RULES = {"comm_exposed", "rank_straggler", "node_straggler", "alltoall_imbalance", "comm_bandwidth_low",
               "allreduce_extra", "allreduce_slow", "launch_skew", "gpu_imbalance"}


def _write(tmp_path: Path, world: int) -> Path:
    """The kept rank file without its collectives, its header's world size ``world``."""
    with gzip.open(SOURCE, "rt") as f:
        doc = json.load(f)
    assert doc["distributedInfo"]["rank"] == 0 and doc["distributedInfo"]["world_size"] == 8
    comm = [e for e in doc["traceEvents"] if _COMM.search(str(e.get("name", "")))]
    assert sum(e.get("cat") == "kernel" for e in comm) == 17
    launches = {e["args"]["correlation"] for e in comm if e.get("cat") == "kernel"}
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not _COMM.search(str(e.get("name", "")))
                          and (e.get("args") or {}).get("correlation") not in launches]
    doc["distributedInfo"]["world_size"] = world
    run = tmp_path / "run"
    run.mkdir()
    path = run / SOURCE.name.removesuffix(".gz")
    path.write_text(json.dumps(doc))
    return path


def _text(host: dict) -> str:
    return json.dumps(host)


def test_a_rank_whose_window_ran_no_collective_is_still_one_rank_of_the_job(tmp_path: Path) -> None:
    host = first_host(_write(tmp_path, 8))
    job = host["job"]
    assert job["part_of_job"].startswith("rank 0 of a job of 8 ranks"), job
    assert "rank 0 of a job of 8 ranks" in job["summary"]
    assert "one trace per rank" in _text(host)  # the capture advice of a job of ranks, not of one process
    assert not {f["rule"] for f in host["findings"]} & _COMM_RULES  # nothing here measured a collective


def test_a_process_alone_says_no_job_and_no_ranks(tmp_path: Path) -> None:
    host = first_host(_write(tmp_path, 1))
    assert not host["job"].get("part_of_job")
    assert "of a job of" not in host["job"]["summary"]
    assert "one trace per rank" not in _text(host)
