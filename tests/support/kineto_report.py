"""A generated PyTorch profiler trace (``synthetic.torchtrace``), rewritten as a test wants it (another vendor's
plugin, another PyTorch's metadata, a field left out), analysed as one host: the vendor and version tests share its
write and its read instead of each spelling them out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthetic.torchtrace import simulate, trace_doc, write_doc
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def job_doc(scenario: str, steps: int = 8) -> dict[str, Any]:
    """The trace of ``scenario``'s one rank over ``steps`` steps, CUDA's as Kineto writes it: a fresh document each
    call, for the test to rewrite."""
    return trace_doc(simulate(scenario, steps)[0], 1)


def report(folder: Path, doc: dict[str, Any], name: str) -> Any:
    """The host report of ``doc`` written as ``folder/<name>_4100.<id>.pt.trace.json`` (the folder made); a read
    error fails the test here, where it is named, rather than as a missing GPU or step later."""
    folder.mkdir(parents=True, exist_ok=True)
    path = write_doc(str(folder / f"{name}_4100.1795380384283992405.pt.trace.json"), doc)
    rep = analyze_host(HostFile(f"{name}_4100", path, Path(path).stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    return rep
