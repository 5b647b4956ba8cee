"""One state, dumped by PyTorch 1.13, 2.0 and 2.1+, reads the same (h37-left45, issue #37 class 5 audit).

Before PyTorch 2.1 a live block's stack was not its ``frames`` but the newest entry of its ``history``
(``[{"addr", "real_size", "frames"}]``: ``CUDACachingAllocator.cpp`` prepends each allocation to a block's chain and
the snapshot walks it from the head), and 1.13's ``_snapshot()`` holds no ``device_traces``.  Main read ``frames``
only: a 1.13 or 2.0 dump's live blocks had no stack ("?"), so a serving state's kind was "unknown" and the gradients
``Module.to()`` moved with a model went unseen -- no finding where 2.1's dump of the same state has one.  And a dump
with no history entry at all (1.13, ``context="state"``) never looked for those gradients: the check lived on the
history's path only.  Truth by construction (``synthetic.memsnapshot.state_only``, ``moved_with_grads``,
``as_version``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.snapshot_report import report as snapshot_report

SERVING = {"weights": 2 * ms.GiB, "kv_vllm": 12 * ms.GiB, "weights_vllm": ms.GiB, "adam": ms.GiB, "ddp": ms.GiB // 2}


def _grads_finding(rep):
    return [f for f in rep.findings if f.rule == "activation_memory" and "gradients" in f.summary]


@pytest.mark.parametrize("version", ["1.13", "2.0"])
def test_an_older_dumps_live_blocks_keep_their_stacks(tmp_path: Path, version: str):
    sc = ms.state_only(SERVING)
    new = snapshot_report(tmp_path, sc.doc, "new")
    old = snapshot_report(tmp_path, ms.as_version(sc.doc, version), "old")
    assert new.job["kind"] == sc.truth["kind"] == "serving"  # the control: 2.1's layout (main too)
    assert old.job["kind"] == sc.truth["kind"], old.job
    labels = [t[0] for t in old.gpus[0].memory["top"]]
    assert labels == [t[0] for t in new.gpus[0].memory["top"]] and "/opt/rl/workers/rollout.py:77 __init__" in labels


@pytest.mark.parametrize("version", ["1.13", "2.0", "2.1 no history"])
def test_gradients_moved_with_the_model_are_found_in_every_layout(tmp_path: Path, version: str):
    sc = ms.moved_with_grads()
    doc = dict(sc.doc, device_traces=[[]]) if version == "2.1 no history" else ms.as_version(sc.doc, version)
    (f,) = _grads_finding(snapshot_report(tmp_path, doc, "old"))
    got = f.metric.detail
    assert (got["grads_bytes"], got["grads_blocks"]) == (sc.truth["grads_bytes"], sc.truth["grads_blocks"]), got


@pytest.mark.parametrize("version", ["2.1", "1.13"])
def test_a_model_moved_without_gradients_gets_no_such_finding(tmp_path: Path, version: str):
    """Control: the same model moved with no ``.grad`` set -- nothing to say, in either layout (main too)."""
    sc = ms.moved_with_grads(grads=False)
    doc = sc.doc if version == "2.1" else ms.as_version(sc.doc, version)
    assert not _grads_finding(snapshot_report(tmp_path, doc, "none"))
