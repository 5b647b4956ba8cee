"""The kept Lightning capture (``wild/lightning_cpu_fit``) and its copy without Lightning's iteration ranges: what the
profiler's ``ProfilerStep`` marks alone give, where a test is about those marks, not about the iterations."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tb_gpu_advisor.frameworks import pytorch
from tests.support.paths import FIXTURES

KEPT = FIXTURES / "wild" / "lightning_cpu_fit"


def kept_trace() -> Path:
    (path,) = KEPT.glob("*.pt.trace.json.gz")
    return path


def without_iteration_ranges(out_dir: Path) -> Path:
    """The kept trace, its ``[pl][profile]run_training_batch`` ranges (``frameworks.pytorch.is_iteration_range``)
    removed, written under ``out_dir`` with the kept file's name (gzipped)."""
    path = kept_trace()
    doc = json.loads(gzip.decompress(path.read_bytes()))
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not pytorch.is_iteration_range(str(e.get("name", "")))]
    out = out_dir / path.name
    out.write_bytes(gzip.compress(json.dumps(doc).encode()))
    return out
