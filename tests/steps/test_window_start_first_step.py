"""A first step the capture window's start cuts is dropped (h37-walk24, ``scripts/randjobs.py --zero12`` walk seeds
70006, 70120, 70161, 70246).

DeepSpeed's ranges under gradient accumulation (ZeRO-1/2, one rank): ``steps.iterations._update_iterations`` runs each
step from the end of one update to the end of the next, the first from its first framework range less the lead every
later step shows before its first range -- never before the window's start (``job.structure.first_iteration_start``).
Where the loop's untraced Python after each update is longer than the window holds before the first micro-batch, the
floor cut the first step: seed 70120 read 10.76, 41.39, 41.39 ms, a mean of 31.18 ms against the job's 41.39 ms
period.  Wrong assumption: *a first step floored at the window's start is a whole step.*  Nsight exports by
construction (``synthetic.nsysexport.NsysJob``: 5 ms of the window before the loop, every iteration the period long).
"""

from __future__ import annotations

import numpy as np
import pytest

from synthetic import nsysexport as nx
from synthetic.randjobs import random_zero12_job
from tests.support.cli_report import first_host
from tests.support.random_jobs import check

_DS = ("DeepSpeedEngine.forward", "DeepSpeedEngine.backward")


def _host(tmp_path, untraced_ms: float):  # noqa: ANN001 - pytest's tmp_path
    """One rank, gradient accumulation 2 (its update launched outside DeepSpeed's ranges after every 2nd micro-batch),
    ``untraced_ms`` of the loop's own Python after each update."""
    path = tmp_path / "ds.sqlite"
    truth = nx.write(str(path), nx.NsysJob(steps=4, ops=18, step_range=None, autograd_nvtx=False,
                                           extra_ranges=_DS * 2 + ("",), range_domain="DeepSpeed",
                                           untraced_ms=untraced_ms))
    return first_host(path), truth


def test_a_first_iteration_the_window_would_cut_is_whole_by_its_silent_tails(tmp_path):  # noqa: ANN001
    """20 ms of untraced Python after each update, 5 ms of window before the first micro-batch: the first step this
    module's drop was made for (h37-walk24: main kept the window's 5 ms and the first iteration, 10.76 of 41.39 ms in
    seed 70120) is whole on the merged tree -- the silence the first cannot show as its lead ends each iteration that
    synced (``steps.iterations._with_silent_tails``, h37-zero12lead), which runs first -- so nothing is dropped and
    every step is the period."""
    host, truth = _host(tmp_path, 20.0)
    steps = host["steps"]
    assert steps["source"] == "nvtx_range" and steps["found"] == truth.steps == 4
    assert steps["dropped"] == [] and "window's start cuts it" not in steps["note"]
    rows = [r["step_ms"] for r in host["step_rows"] if r["gpu"] is None]  # the host-wide rows
    assert len(rows) == 4 and all(abs(ms - truth.step_ms) < 0.01 for ms in rows), (rows, truth.step_ms)


def test_control_a_lead_the_window_holds_keeps_the_first_step(tmp_path):  # noqa: ANN001
    """1 ms of untraced Python after each update: the window's 5 ms before the first micro-batch hold the lead, the
    first step is whole and kept (as on main)."""
    host, truth = _host(tmp_path, 1.0)
    assert host["steps"]["found"] == 4 and host["steps"]["dropped"] == []
    rows = [r["step_ms"] for r in host["step_rows"] if r["gpu"] is None]  # the host-wide rows
    assert len(rows) == 4 and all(abs(ms - truth.step_ms) < 0.01 for ms in rows), (rows, truth.step_ms)


@pytest.mark.parametrize("seed", [70006, 70120, 70161, 70246])
def test_the_walk_seeds_hold_every_law(seed):
    """The four ``--zero12`` seeds: main broke ``step-truth`` (mean step 80.14 / 98.46, 31.18 / 41.39, 49.69 / 52.59,
    145.9 / 152 ms)."""
    assert check(random_zero12_job(seed)) == []


def _reading(window_start_ps: int):
    """The parts of a reading the rule asks: its host source, its step ids, its trace's window start, its note."""
    from types import SimpleNamespace
    return SimpleNamespace(source="nvtx_range", ids=np.arange(4), note="", tiled_by_updates=False,
                           trace=SimpleNamespace(window_start_ps=lambda: window_start_ps))


@pytest.mark.parametrize(("window_start", "first_ms", "dropped"), [
    (0, 10.76, True),     # floored at the window's start, shorter than every later step: the window cut it
    (-1, 10.76, False),   # the window opened before it: whatever its length, the step started inside the window
    (0, 41.39, False),    # floored but as long as the later ones: whole
])
def test_the_rule_by_construction(window_start, first_ms, dropped):  # noqa: ANN001
    """``steps.drop._drop_window_start_first`` on steps built by hand (ps): a reading whose first step another reading
    has not made whole first (the update readings' silent tails do: test above) -- its three conditions each
    decide."""
    from tb_gpu_advisor.steps.drop import _drop_window_start_first
    from tb_gpu_advisor.steps.reading import _Kept
    period = int(41.39e9)
    he = np.array([int(first_ms * 1e9) + k * period for k in range(4)], dtype=np.int64)
    hs = np.r_[0, he[:-1]].astype(np.int64)
    kept, out, r = _Kept(np.arange(4), hs, he, {}), [], _reading(window_start)
    _drop_window_start_first(r, kept, out)
    assert (len(out) == 1) == dropped and kept.ids.size == (3 if dropped else 4)
    assert ("window's start cuts it" in r.note) == dropped
