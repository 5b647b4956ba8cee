"""The real two-rank TP capture (``wild/tp_rtx4090_two_ranks``, RTX 4090, PROVENANCE.md) with rank 1's trace rewritten
as if written without its GPU's activity (``synthetic.torchtrace.unrecord_gpu``) -- shared by the job-scope tests of a
rank whose GPU work was not recorded (h37-norank61, h37-verdict61)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tests.support.paths import FIXTURES

TP = FIXTURES / "wild" / "tp_rtx4090_two_ranks"
#: rank 1's file, the one rewritten
RANK1 = "llama_trace_4layers1_with_annotations.json.gz"


def tp_rank1_unrecorded(tmp_path: Path) -> Path:
    """A copy of the TP run in ``tmp_path/tp`` whose rank 1 has no GPU record; skips where the fixture is absent."""
    if not TP.is_dir():
        pytest.skip(f"{TP} absent")
    run = tmp_path / "tp"
    shutil.copytree(TP, run)
    tt.unrecord_gpu(str(run / RANK1))
    return run
