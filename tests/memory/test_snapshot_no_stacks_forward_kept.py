"""A forward kept for a backward that never runs, in a snapshot recorded without stacks (h37-snap22).

``_record_memory_history(context=None)`` records every event and no frame, so no allocation reads as the forward's
and the forward-kept check (``activation_memory``'s ``forward_kept``) had nothing to count: a forward-only benchmark
with autograd on, 9 GiB of its graph dropped unused, read "no finding" beside the note that its stacks are missing.
The pattern shows it without them: a forward climbs from the level held between passes (the weights), and the blocks
of that climb live at the peak are what it kept (``metrics.memory._climb``); no backward freed them when they go in
one run with no allocation between (a backward frees them one by one while it makes gradients).

Truth by construction: ``synthetic.memsnapshot.forward_only`` as ``context=None`` writes it (96 tensors, 9 GiB kept
beside 2 GiB of weights).  Controls (no finding on main either): the same under ``no_grad`` (a few blocks live at a
time), a training step without stacks (its backward frees them), and the kept CS336 snapshots rewritten without
stacks -- GPT-2 medium under ``inference_mode``, and the forward with autograd dumped before its backward (held at
the dump: with no floor after the peak, nothing tells its activations from its weights, so it is not judged)."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.runtime.pipeline import analyze_host

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "snapshots_wild"


def _kept(tmp_path: Path, doc: dict) -> list[Finding]:
    path = Path(ms.write(str(tmp_path / "snap.pickle"), ms.as_recorded(doc, context=None)))
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return [f for f in rep.findings if f.rule == "activation_memory" and f.metric is not None
            and f.metric.detail.get("cause") == "forward_kept"]


def test_a_forward_graph_dropped_unused_is_found_without_stacks(tmp_path: Path) -> None:
    sc = ms.forward_only()
    found = _kept(tmp_path, sc.doc)
    assert len(found) == 1 and found[0].severity == "warning"
    detail = found[0].metric.detail
    assert detail["kept_bytes"] == sc.truth["kept_bytes"] and detail["kept_blocks"] == 96
    assert detail["largest_bytes"] == sc.truth["largest_bytes"]
    assert "read from the allocation pattern" in found[0].summary
    assert any("inference_mode" in (a.snippet or "") + a.text for a in found[0].actions)


@pytest.mark.parametrize("doc", [ms.forward_only(grad=False).doc, ms.windows_training().doc],
                         ids=["no_grad", "training"])
def test_no_forward_kept_where_none_was(tmp_path: Path, doc: dict) -> None:
    assert not _kept(tmp_path, doc)


@pytest.mark.parametrize("name", ["forward_no_grad_cs336", "forward_autograd_cs336"])
def test_the_real_forwards_without_stacks_are_not_judged_kept(tmp_path: Path, name: str) -> None:
    doc = pickle.loads(gzip.decompress((WILD / f"{name}.pickle.gz").read_bytes()))
    assert not _kept(tmp_path, doc)
