"""A sync the program made is named by the op it called (h37-probe44s, issue #37 class 3; h37-probe43s's *Left* 3).

``preds.tolist()`` / ``.cpu()`` record ``aten::to`` > ``aten::_to_copy`` > ``aten::copy_`` with the device-to-host
copy and its ``cudaStreamSynchronize`` in the innermost op; ``.item()`` records ``aten::item`` >
``aten::_local_scalar_dense``.  The host_sync finding named each wait by the innermost op around it ("in aten::copy_
×1", "in aten::_local_scalar_dense ×1"): ops the program never called, and ``aten::copy_`` is also what an in-place
``x.copy_(y)`` or a copy to the device records.  Probe43s named an op's own read by the outermost op (``x[mask]``:
``aten::index``); every read is now named so.  Truth by construction: ``synthetic.torchtrace.write_read_to_host``
(the call is its ``op``) and ``write_sync_then_host_work`` (``.item()``).
"""

from __future__ import annotations

import re
from pathlib import Path

from synthetic import torchtrace as tt
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host


def _sync_finding(path: str):
    """The host_sync finding of the program's syncs in a written run's one rank file."""
    p = Path(path)
    rep = analyze_host(HostFile(p.name, str(p), p.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    found = [f for f in rep.findings if f.rule == "host_sync" and "#" not in f.id]
    assert len(found) == 1, [f.rule for f in rep.findings]
    return found[0]


def _named(summary: str) -> list[str]:
    """The ops the finding says the waits were in ("in aten::to ×1")."""
    said = re.search(r"\(in ([^;]*);", " ".join(summary.split()))
    assert said is not None, summary
    return [p.rsplit(" ×", 1)[0] for p in said.group(1).split(", ")]


def test_a_read_to_the_host_is_named_by_the_call_the_program_made(tmp_path: Path) -> None:
    truth = tt.write_read_to_host(str(tmp_path))
    f = _sync_finding(truth["paths"][0])
    assert f"{truth['reads_per_step']} time per step" in " ".join(f.summary.split())
    # main: ["aten::copy_"], the read's mechanism inside the call
    assert _named(f.summary) == [truth["op"]], f.summary


def test_an_item_is_named_by_aten_item(tmp_path: Path) -> None:
    truth = tt.write_sync_then_host_work(str(tmp_path))
    f = _sync_finding(truth["paths"][0])
    assert _named(f.summary) == ["aten::item"], f.summary  # main: aten::_local_scalar_dense
