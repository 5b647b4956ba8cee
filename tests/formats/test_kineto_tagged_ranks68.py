"""A fused file whose processes are not named still states each rank: TraceLens' ``TraceFuse`` tags every event with
``args.rank``; the reader takes a GPU's rank from its collective ops' tag where no process name says it (issue #37
deliverable 3; session 67 *Left*: "args.rank not read").

By construction: ``synthetic.torchtrace.write_late_rank_fused``, laid out as TraceFuse writes it (each event's
``args.rank``), with its ``process_name`` metadata events dropped -- the ranks 0-3 on GPUs 0-3.  Real: amd/HPCTrainingExamples ``MLExamples/TraceLens/fused_traces/merged_nccl_only.json.gz`` @82661816 (MIT,
4.4 kB; kept out of the repository as its fused file is: ``TB_GPU_ADVISOR_FUSED_NCCL_ONLY`` points at it), whose GPU
processes 2-5 are ranks 0-3 by their names and by their tags alike (its ``nccl:*`` GPU ranges carry the tag; its
kernels do too, but a kernel keeps no arguments).  Base 225b624d read it unnamed as {}.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from synthetic.torchtrace import write_late_rank_fused
from tb_gpu_advisor.formats.kineto.adapter import read_trace

NCCL_ONLY = Path(os.environ.get("TB_GPU_ADVISOR_FUSED_NCCL_ONLY")
                 or Path(__file__).resolve().parents[1] / "fixtures" / "real" / "tracelens_merged_nccl_only.json.gz")


def _unnamed(doc: dict) -> None:
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not (e.get("ph") == "M" and e.get("name") == "process_name")]


def test_a_fused_file_without_process_names_reads_its_ranks_from_the_tags(tmp_path):
    """Fails on base 225b624d: {} -- the four GPUs unranked."""
    path = tmp_path / "fused" / "merged_all_events.json"
    path.parent.mkdir()
    write_late_rank_fused(str(path))
    doc = json.loads(path.read_text())
    _unnamed(doc)
    path.write_text(json.dumps(doc))
    assert read_trace(str(path)).gpu_ranks == {0: 0, 1: 1, 2: 2, 3: 3}


@pytest.mark.skipif(not NCCL_ONLY.exists(), reason="the real NCCL-only fused file is kept out of the repository")
def test_the_real_collectives_only_file_reads_the_same_ranks_from_names_and_tags(tmp_path):
    with gzip.open(NCCL_ONLY) as fh:
        doc = json.load(fh)
    named = tmp_path / "named.json"
    named.write_text(json.dumps(doc))
    _unnamed(doc)
    unnamed = tmp_path / "unnamed.json"
    unnamed.write_text(json.dumps(doc))
    assert read_trace(str(named)).gpu_ranks == read_trace(str(unnamed)).gpu_ranks == {2: 0, 3: 1, 4: 2, 5: 3}
