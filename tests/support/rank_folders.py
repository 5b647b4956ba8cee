"""A kept two-rank capture laid out one folder per rank, as ``tensorboard_trace_handler(f"{logdir}/rank{rank}")``
writes it."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

from tests.support.paths import FIXTURES

#: the real MIT pair of one machine's two ranks (its two files count on one clock, tests/formats/test_kineto_clock59.py)
PAIR = FIXTURES / "wild" / "tp_rtx4090_two_ranks"


def pair_in_folders(tmp: Path) -> Path:
    """The real pair, each rank's file in ``tmp/pair/rank<r>/`` (the rank its ``distributedInfo`` says); the root."""
    for path in sorted(PAIR.glob("*.json.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            rank = json.load(f)["distributedInfo"]["rank"]
        os.makedirs(tmp / "pair" / f"rank{rank}")
        shutil.copy(path, tmp / "pair" / f"rank{rank}" / path.name)
    return tmp / "pair"
