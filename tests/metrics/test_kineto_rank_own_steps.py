"""Several ranks' Kineto files, one per rank: each rank's host events lie in its own steps (issue #37 classes 1-2;
h37-probe44r).

Wrong assumption on main 6f44e79f: *a rank's host events lie in the host-wide step windows* -- there the steps are
each GPU's ``ProfilerStep#N`` device spans (``formats.kineto.adapter._rank_step_lines``), so the host-wide windows are
a union of every rank's spans in device time and no rank had windows of its own (``Steps.host_own`` empty); and each
GPU step ran from its span's start to the next span's, so the GPU's idle while its host ran a step's head lay in the
step before.  Rank 1 loading a module for 30 ms at the head of its ``ProfilerStep#7`` dropped step 6 (rank 0's step 6
held the load's start) where the rank alone drops 7.

By construction (``synthetic.torchtrace.write_rank_pause``: ranks with no collective, rank 1 alone loading a module
once): every GPU reads as its rank alone does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import first_host


def _read(root: Path, name: str, **kw: object) -> dict:
    tt.write_rank_pause(str(root), run=name, **kw)
    return first_host(root / name)


def _kept(host: dict, gpu: int) -> set[int]:
    return {r["step"] for r in host["step_rows"] if r["gpu"] == gpu}


def _gpu(host: dict, gpu: int) -> dict[str, float]:
    return next(g["breakdown"] for g in host["gpus"] if g["gpu"] == gpu)


@pytest.fixture(scope="module")
def alone(tmp_path_factory) -> dict:  # noqa: ANN001 - pytest's
    """The paused rank alone: the reading each GPU of the job must keep."""
    return _read(tmp_path_factory.mktemp("alone"), "alone", ranks=1, paused=0)


def test_a_ranks_one_time_cost_drops_its_own_step(tmp_path: Path, alone: dict) -> None:
    """Main (6f44e79f) dropped step 6 on both GPUs (rank 0's step 6 had begun when rank 1's load started) and kept
    rank 1's step 7 with its load; each rank's own ``ProfilerStep#N`` marks place it in rank 1's step 7."""
    kept = _kept(alone, 0)
    assert kept and tt.RANK_PAUSE_STEP not in kept  # control: the rank alone drops the step holding its load
    two = _read(tmp_path, "two", ranks=2, paused=1)
    for g in (0, 1):
        assert _kept(two, g) == kept, g
        assert _gpu(two, g)["startup"] == 0.0, g
    assert _gpu(two, 1) == pytest.approx(_gpu(alone, 0), abs=2e-3)


def test_a_gpus_idle_under_its_hosts_step_head_is_that_steps(tmp_path: Path, alone: dict) -> None:
    """With rank 1's load's step dropped, its GPU's step before it (its span to the next span's start) held the
    30 ms the GPU idled under the load: 3.33 ms a step of start-up on GPU 1.  A GPU step opens where its rank's host
    opened it, once the GPU's work before it is done."""
    two = _read(tmp_path, "two", ranks=2, paused=1)
    rows = {r["step"]: r["step_ms"] for r in two["step_rows"] if r["gpu"] == 1}
    own = {r["step"]: r["step_ms"] for r in alone["step_rows"] if r["gpu"] == 0}
    assert rows == pytest.approx(own, abs=2e-3)


def test_a_rank_two_steps_late_drops_its_own_step(tmp_path: Path, alone: dict) -> None:
    """Rank 1's capture opens two steps after rank 0's (its ``ProfilerStep#2`` and ``#3`` unrecorded) and it loads a
    module at the head of its step 7: the step dropped is its own 7, as alone, with no start-up on either GPU, and
    every step it recorded reads as alone.  Main (6f44e79f) dropped step 6.  Step 3, which rank 1's capture did not
    record, is dropped too (``steps.drop._drop_unrecorded``): kept, GPU 1's row took the host-wide window with no kernel
    in it, and its compute read 2.844 ms a step where every step runs 3.2 ms."""
    late = _read(tmp_path, "late", ranks=2, paused=1, late=2)
    own = {r["step"]: r["step_ms"] for r in alone["step_rows"] if r["gpu"] == 0}
    for g in (0, 1):
        assert _kept(late, g) == set(own) - {3}, g
        assert _gpu(late, g)["startup"] == 0.0, g
        rows = {r["step"]: r["step_ms"] for r in late["step_rows"] if r["gpu"] == g and r["step"] > 3}
        assert rows == pytest.approx({k: v for k, v in own.items() if k > 3}, abs=2e-3), g
    assert _gpu(late, 0) == pytest.approx(_gpu(alone, 0), abs=2e-3)


def test_a_rank_two_steps_late_reads_as_alone(tmp_path: Path, alone: dict) -> None:
    """The same late rank: both GPUs' per-step numbers are the rank alone's (3.2 ms of compute a step on GPU 1, not
    2.844 ms with a step it never recorded averaged in); the steps note says why step 3 was left out."""
    late = _read(tmp_path, "late", ranks=2, paused=1, late=2)
    for g in (0, 1):
        assert _gpu(late, g) == pytest.approx(_gpu(alone, 0), abs=2e-3), g
    assert "before GPU1's capture opened" in late["steps"]["note"]


@pytest.mark.parametrize("closed", [1, 2])
def test_a_rank_whose_capture_closed_early_reads_as_alone(tmp_path: Path, alone: dict, closed: int) -> None:
    """Rank 1's capture closes ``closed`` steps before rank 0's (its last ``ProfilerStep#N`` unrecorded; it runs 30 ms
    behind after its load).  Main (a3712eb4) kept those steps for GPU 1 on rank 0's spans, 30 ms before its own last
    one, out of order: with 2 closed GPU 1 read 2.133 ms of compute a step where every step runs 3.2 (3 of its 9
    steps empty).  Now the steps its capture closed before are dropped (``steps.drop._drop_unrecorded``) and every
    step each GPU keeps reads as the rank alone: its last recorded step runs to where its next would start."""
    early = _read(tmp_path, "early", ranks=2, paused=1, closed_early=closed)
    own = {r["step"]: r["step_ms"] for r in alone["step_rows"] if r["gpu"] == 0}
    last = max(own) + 1  # the capture's last step (the stock rule drops it)
    gone = set(range(last - closed + 1, last))  # rank 1's unrecorded steps the stock rule keeps
    for g in (0, 1):
        assert _kept(early, g) == set(own) - gone, g
        rows = {r["step"]: r["step_ms"] for r in early["step_rows"] if r["gpu"] == g}
        assert rows == pytest.approx({k: v for k, v in own.items() if k not in gone}, abs=2e-3), g
        assert _gpu(early, g) == pytest.approx(_gpu(alone, 0), abs=2e-3), g
    if gone:  # one closed step is the capture's last, which the stock rule drops: nothing more to say
        assert "not whole on GPU1: its process's capture closed before" in early["steps"]["note"]


@pytest.mark.parametrize("ranks", [2, 3])
def test_a_rank_that_leads_by_steps_and_opened_late_reads_as_opened_together(tmp_path: Path, ranks: int) -> None:
    """Rank 0 loads a module for 30 ms at the head of its step 3, so the last rank runs ~9 steps of 3.2 ms ahead of
    it; the last rank's capture opens 3 steps late (its steps 2-4 unrecorded).  Main (850d3394) started those steps'
    host-wide windows at rank 0's marks, after the last rank's own step 5 began: with 2 ranks the steps read out of
    order and the capture's last step 13 (the stock rule drops it as partial) was kept.  Now a rank's missing edge
    steps start at its own period (``steps.windows._group_lines``): each GPU keeps the steps both ranks' captures
    hold whole, those the job opened together keeps from step 5 on, each at the rank alone's 3.232 ms."""
    late = _read(tmp_path, "late", ranks=ranks, paused=0, step=3, late=3)
    both = _read(tmp_path, "both", ranks=ranks, paused=0, step=3)
    for g in range(ranks):
        whole = {r["step"]: r["step_ms"] for r in both["step_rows"] if r["gpu"] == g}
        rows = {r["step"]: r["step_ms"] for r in late["step_rows"] if r["gpu"] == g}
        assert list(rows) == sorted(k for k in whole if k >= 5), g
        assert rows == pytest.approx({k: v for k, v in whole.items() if k >= 5}, abs=2e-3), g
        assert _gpu(late, g)["device_compute"] == pytest.approx(3.2, abs=2e-3), g
    assert f"before GPU{ranks - 1}'s capture opened" in late["steps"]["note"]
