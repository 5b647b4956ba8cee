"""A kept real capture of one training iteration read as ONE UNMARKED PASS: ``wild/gpt2_b200_one_step``'s
``record_function("training_step")`` renamed after the pass's phases (``forward_backward``), the same bounds.

Why: the one-pass words' tests (h37-words21..23) read that capture as their one-pass exemplar.  Since h37-wild55k the
program's one step-named range marks the capture's one step (``steps.nvtx_ranges._annotation_steps``: "1 step", as one
``ProfilerStep#N`` is), so the kept file is a marked step; renamed after a phase (``frameworks.nvtx.is_pass_phase_name``,
no step name) the range still bounds the pass (``steps.passes``) and nothing else changes.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tests.support.paths import FIXTURES

GPT2 = FIXTURES / "wild" / "gpt2_b200_one_step"


def gpt2_as_unmarked_pass(dest: Path) -> Path:
    """``dest/gpt2_b200_one_step``: the kept files, each ``training_step`` range renamed ``forward_backward``."""
    run = dest / GPT2.name
    run.mkdir(parents=True, exist_ok=True)
    for path in GPT2.glob("*.pt.trace.json.gz"):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            doc = json.load(f)
        for e in doc["traceEvents"]:
            if e.get("name") == "training_step":
                e["name"] = "forward_backward"
        with gzip.open(run / path.name, "wt", encoding="utf-8") as f:
            json.dump(doc, f)
    return run
