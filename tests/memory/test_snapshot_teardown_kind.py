"""A forward benchmark written as plain functions, whose script frees its tensors before the dump, is read as the
forward passes its steps already say -- not "GPU work of an unknown kind" (issue #37 class 5; h37-wild56m; session
55's lead *Left* 2).

sungdk0822's CS336 attention sweep (wild ``snapshot_attn_*``, MIT) runs a hand-written attention 100 times forward
only: its frames name no module's forward (functional code), so the job reads its kind from the allocation pattern
(``job.kind._repeated_passes``: the same allocations in the same order, each pass freeing them all).  Its steps
(``job.iterations.snapshot_iterations``) read the passes up to the script's teardown (``_before_script_teardown``);
the kind read them from the whole history.  Rewritten by ``synthetic.memsnapshot.torn_down`` -- the same script with
``del q, k, v`` before its dump -- the level at the end fell to nothing, no pass came back to that floor, and the
report said "100 forward passes" as its steps beside a job "of an unknown kind".  Truth by construction: the untorn
history's reading.  Both now read the passes before the teardown (``job.iterations.framed_pass_phases``).  Control:
the untorn histories read inference, as before; a stackless history's passes keep their whole reading."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tests.support.paths import FIXTURES
from tests.support.snapshot_report import report as snapshot_report

WILD = FIXTURES / "wild"
SWEEPS = ("snapshot_attn_fwd_autograd", "snapshot_attn_sweep_cache", "snapshot_attn_sweep_rounding")


def _doc(folder: str) -> dict:
    src = next(p for p in (WILD / folder).iterdir() if ".pickle" in p.name)
    with gzip.open(src, "rb") if src.name.endswith(".gz") else open(src, "rb") as f:
        return pickle.load(f)


@pytest.mark.parametrize("folder", SWEEPS)
def test_functional_forward_passes_torn_down_keep_their_kind(tmp_path: Path, folder: str) -> None:
    doc = _doc(folder)
    whole, torn = snapshot_report(tmp_path, doc, "whole"), snapshot_report(tmp_path, ms.torn_down(doc), "torn")
    assert torn.job["kind"] == whole.job["kind"] == "inference", torn.job.get("summary")
    assert torn.steps["count"] == whole.steps["count"]
    assert [f.rule for f in torn.findings] == [f.rule for f in whole.findings]


def test_control_the_untorn_sweep_reads_its_passes_as_inference(tmp_path: Path) -> None:
    rep = snapshot_report(tmp_path, _doc(SWEEPS[0]), "whole")
    assert rep.job["kind"] == "inference" and rep.steps["count"] > 50
