"""A blocking copy's hold is a wait for earlier work only as far as the GPU still ran some when its call began
(h37-huntkin64; issue #37 class 3, each wait to its cause).

A pageable upload (``x.to('cuda')``) waits for its stream to drain before the driver stages and moves it.  Where the
GPU's last work ended before the call, nothing is drained: the host is held for the copy's own staging and transfer,
and "each waits for its stream to drain" names a wait that did not happen (the real RTX 3080 loop of
h37-huntkin63, whose 8.5 MB uploads begin long after the GPU's last kernel: ``tests/crosscheck/
test_wild_pageable_mlp_rtx3080_63.py``).  Truth by construction: ``synthetic.torchtrace.write_pageable_upload_bound``
-- ``drained=True`` runs the host-bound loop's host ops after its GEMMs, so each upload finds the GPU idle; its twin
(host ops before the GEMMs) leaves the GEMMs queued when the next upload begins, the generator's ``drain_ms`` (the
stream's end less the host's clock at the upload op's start).
"""

from __future__ import annotations

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics

OWN = "each holds the host for its own transfer"
DRAIN = "each waits for its stream to drain"


def _read(tmp_path, bound: str, drained: bool):
    info = tt.write_pageable_upload_bound(str(tmp_path / f"{bound}_{int(drained)}"), bound=bound, drained=drained)
    (path,) = info["paths"]
    m = host_metrics(read_trace(path))
    (f,) = [f for f in evaluate(m) if f.rule == "excessive_memcpy"]
    return info, m, f


def test_an_upload_that_finds_the_gpu_idle_holds_the_host_for_its_own_transfer(tmp_path):
    """Fails on BASE (with this generator): "each waits for its stream to drain" where the GPU had nothing queued."""
    info, m, f = _read(tmp_path, "host", True)
    assert OWN in f.summary and DRAIN not in f.summary, f.summary
    assert info["drain_ms"] == 0.0
    assert m.syncs.copy_drain_ms_per_step == pytest.approx(0.0, abs=0.005)
    assert m.syncs.copy_held_ms_per_step == pytest.approx(info["copy_ms"], rel=0.1)  # the copy's own 400 us


@pytest.mark.parametrize("bound", ["host", "gpu"])
def test_an_upload_behind_queued_work_waits_for_the_drain_then_its_transfer(tmp_path, bound):
    """Fails on BASE (with this generator: the words named the drain alone, no split): the drain is the work the
    generator left queued at each upload, the rest of the hold the copy's own transfer."""
    info, m, f = _read(tmp_path, bound, False)
    assert f"{DRAIN}, then for its own transfer" in f.summary and OWN not in f.summary, f.summary
    assert info["drain_ms"] > 0.3
    assert m.syncs.copy_drain_ms_per_step == pytest.approx(info["drain_ms"], rel=0.02)
    own = m.syncs.copy_held_ms_per_step - m.syncs.copy_drain_ms_per_step
    assert own == pytest.approx(info["copy_ms"], rel=0.1)


def test_only_the_uploads_that_find_work_queued_are_said_to_wait_for_a_drain(tmp_path):
    """Fails on BASE (h37-huntkin64's Left 1: "each waits for its stream to drain" where only some did): every other
    upload finds the GPU idle by construction (``drained="alternate"``); the count that waited is the kept steps'
    share of queued uploads, and the words say that share, not "each"."""
    info = tt.write_pageable_upload_bound(str(tmp_path / "half"), bound="host", drained="alternate")
    (path,) = info["paths"]
    m = host_metrics(read_trace(path))
    (f,) = [f for f in evaluate(m) if f.rule == "excessive_memcpy"]
    waited = m.syncs.copy_drained_per_step
    assert 0.3 < waited < 0.7  # half the uploads, give or take the steps the stock rule drops
    assert any(info["drained_steps"]) and not all(info["drained_steps"])
    assert f"{waited / m.syncs.copy_calls_per_step:.0%} of them wait for their stream to drain" in f.summary, f.summary
    assert "the others find the GPU idle" in f.summary and DRAIN not in f.summary, f.summary


@pytest.mark.parametrize("drained", [True, False])
def test_the_count_that_waited_is_all_or_none_where_every_upload_is_alike(tmp_path, drained):
    """Control: where every upload finds the GPU idle (or busy), none (or all) of them are counted as drains."""
    info, m, _ = _read(tmp_path, "host", drained)
    assert m.syncs.copy_drained_per_step == pytest.approx(0.0 if drained else m.syncs.copy_calls_per_step)
