"""Fields of a trace entry the generator does not write, as PyTorch does (h37-snap62's audit; issue #37 class 5),
move no report.  Control (true on base too): it guards the reader's choice to read neither.

* PyTorch 2.4 on writes ``compile_context`` and ``user_metadata`` in every entry (``torch/csrc/cuda/memory_snapshot.cpp``;
  the real CS336 and H200 snapshots: ``"N/A"`` and ``""``).
* Recorded with ``context="all"`` (the default) a free carries the stack of the code that freed it, not the
  allocation's (``CUDACachingAllocator.cpp``: ``context ? context : block->context_when_allocated`` -- the allocation's
  only under ``context="alloc"``); the real snapshots' frees: 191 of 191, 1,280 of 1,280 differ from their allocation's.
  The generator writes the allocation's (the ``"alloc"`` form); the reader reads an allocation's stack from its
  allocation and a segment drop's from itself, never a free's."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_report import report

FREED_IN = [ms.frame("train.py", 77, "main")]


def _said(tmp_path: Path, doc: dict, name: str) -> tuple:
    (tmp_path / name).mkdir()
    rep = report(tmp_path / name, doc)  # each in its own folder, under one file name
    return rep.job["kind"], [(f.rule, f.severity, f.summary) for f in rep.findings]


@pytest.mark.parametrize("scenario", ["oom_activations", "rebound_autocast"])
def test_entry_fields_pytorch_adds_move_no_report(tmp_path: Path, scenario: str):
    sc = ms.oom_activations() if scenario == "oom_activations" else ms.windows_autocast_forward(grad=True, passes=3)
    keyed, freed = copy.deepcopy(sc.doc), copy.deepcopy(sc.doc)
    for e in (e for t in keyed["device_traces"] for e in t):
        e.update(compile_context="N/A", user_metadata="")
    for e in (e for t in freed["device_traces"] for e in t):
        if e["action"] in ("free_requested", "free_completed"):
            e["frames"] = FREED_IN
    want = _said(tmp_path, sc.doc, "as_generated")
    assert want[1]
    assert _said(tmp_path, keyed, "keyed") == want
    assert _said(tmp_path, freed, "freed") == want
