"""One rule for a step window's number (issue #37, h37-windows60): a finding names the ledger categories its time is
booked in and the time it claims of them; each window claims the finding's share of its step's categories -- the
text's value on a capture of one step, the steps' parts of it over several -- or says "(not measured per step)".

Base had two mechanisms and a third in one rule: ``step_windows(claim=False)`` with ``rules._unclaimed_by_others``
dropped the number (the small-grid kernels' "steps with the most kernel time, step 3", the syncs' "GPU idle, step 0",
the unrecorded time's "unrecorded host time, the pass" where a copy finding took a part of it), while
``rules._claimed_share`` scaled the host-bound and outside-wait windows and ``launch_bound`` scaled its own.

Truth by construction: the generator's ``small_grid`` step holds one 4-block kernel of ``SMALL_GRID_US`` a step, and
``sync_item``'s steps are alike (six syncs each), so every step's window is the per-step value its text says.  Real
kept traces: the MI210 GPU-only pass (``wild/mi210_gpu_only``), the A100 vector add
(``wild/extrap_ex_gpu_a100``), PEXSI's pass (``wild/pexsi_a100_pageable_sync``): one pass each, so the window prints
the text's value.  Each test fails on base (the window named its step alone).
"""

from __future__ import annotations

import re

import pytest

from synthetic import torchtrace as T
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Finding, HostReport
from tests.support.properties import said_per_step, window_value_problems
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

_CLAIM = re.compile(r"\(([\d.,]+) (us|ms|s)\)$")
_UNIT = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def _ms(label: str) -> float | None:
    m = _CLAIM.search(label)
    return float(m.group(1).replace(",", "")) * _UNIT[m.group(2)] if m else None


#: A kept real pass with a small-grid finding and one window (the MI210 run of a GPU-only ROCm trace).
_SMALL_GRID_PASS = "mi210_gpu_only"


def _said_ms(f: Finding) -> float:
    said = said_per_step(f.summary)
    assert said is not None, f.summary
    return float(said.group(1).replace(",", "")) * _UNIT[said.group(2).replace("µs", "us")]


def _generated(tmp_path, name: str, steps: int = 8) -> HostReport:  # noqa: ANN001
    T.write_run(str(tmp_path), name, steps=steps)
    (s,) = discover(str(tmp_path))
    (h,) = session_report(s).hosts
    return h


def _wild(run: str) -> HostReport:
    (s,) = [s for s in wild_sessions() if s.run == run]
    (h,) = session_report(s).hosts
    return h


def _one(h: HostReport, rule: str, suffix: str = "") -> Finding:
    (f,) = [f for f in h.findings if f.rule == rule and f.id.endswith(suffix) and (suffix or "#" not in f.id)]
    return f


def test_small_grid_windows_claim_the_built_kernels_time(tmp_path):
    """8 steps, each with one 4-block kernel of 1.5 ms: each window claims 1.50 ms (base: "steps with the most kernel
    time, step N", no value -- the ledger books the kernel with every other one)."""
    h = _generated(tmp_path, "small_grid")
    f = _one(h, "small_grid")
    assert _said_ms(f) == pytest.approx(T.SMALL_GRID_US / 1000, abs=0.005)
    assert len(f.windows) == 3
    for w in f.windows:
        assert _ms(w.label) == pytest.approx(T.SMALL_GRID_US / 1000, abs=0.005), w.label
    assert window_value_problems(h.host, h) == []


def test_small_grid_window_of_a_real_pass_prints_the_texts_value():
    """The MI210's one pass of small-grid kernels: its window says the text's time.  (The MI300X normalization test,
    ``cold_mi300x_norm``, held this case until h37-idle64 capped its small grids' saving by its host-paced pass: no
    small-grid finding there now.)"""
    h = _wild(_SMALL_GRID_PASS)
    f = _one(h, "small_grid")
    (w,) = f.windows
    assert _ms(w.label) == pytest.approx(_said_ms(f), abs=0.0005) and _said_ms(f) > 0
    assert window_value_problems(h.host, h) == []


def test_sync_windows_claim_the_syncs_idle_of_alike_steps(tmp_path):
    """``sync_item``: alike steps of six syncs each, so each step's window claims the text's idle after the syncs
    (base: "GPU idle, step N", no value: the step's whole idle only ranked the steps)."""
    h = _generated(tmp_path, "sync_item")
    f = _one(h, "host_sync")
    said = _said_ms(f)
    assert f.windows and all(_ms(w.label) == pytest.approx(said, rel=0.02) for w in f.windows), \
        (said, [w.label for w in f.windows])
    assert window_value_problems(h.host, h) == []


def test_sync_window_of_a_real_pass_prints_the_texts_value():
    """The A100 vector add (one pass): the GPU idles 3.03 ms after the host's syncs; its window says 3.03 ms (base:
    "GPU idle, the pass")."""
    h = _wild("extrap_ex_gpu_a100")
    f = _one(h, "host_sync")
    (w,) = f.windows
    assert _ms(w.label) == pytest.approx(_said_ms(f), abs=0.005)
    assert window_value_problems(h.host, h) == []


def test_unrecorded_time_a_copy_finding_shares_is_the_windows_value_too():
    """PEXSI's pass: the copies claim the idle after their blocking calls, the unrecorded-time finding the rest,
    316.5 ms; its window claims that share of the pass's ``other`` (base: "unrecorded host time, the pass", the number
    dropped because the whole ``other`` was 316.9 ms)."""
    h = _wild("pexsi_a100_pageable_sync")
    f = _one(h, "unexplained_idle", "#unrecorded")
    said = float(f.metric.detail["unrecorded_ms"])
    (w,) = f.windows
    assert _ms(w.label) == pytest.approx(said, abs=0.05) and 300 < said < 330
    assert window_value_problems(h.host, h) == []


def test_a_time_the_ledger_does_not_hold_per_step_is_said_so(tmp_path):
    """host_sync's unrecorded-time note is measured apart from the ledger: its window says no value is measured per
    step, where base named the pass alone (the note's text says "X of each Y step")."""
    T.write_run(str(tmp_path), "synced_layers", steps=8)
    (s,) = discover(str(tmp_path))
    (h,) = session_report(s).hosts
    (note,) = [f for f in h.findings if f.id.endswith("#unrecorded_host_share")]
    assert said_per_step(note.summary) is not None
    assert [w.label for w in note.windows] == ["unrecorded host time, the pass (not measured per step)"]
    assert window_value_problems(h.host, h) == []


def test_the_property_flags_a_window_that_drops_its_number():
    """The property's new half: a finding that says its time per step and shows a step window with no value and no
    word of why is flagged (base's small-grid window on a real pass)."""
    import copy

    h = copy.deepcopy(_wild(_SMALL_GRID_PASS))
    f = _one(h, "small_grid")
    f.windows[0].label = "steps with the most kernel time, step 1"  # base's label
    (problem,) = window_value_problems(h.host, h)
    assert problem.startswith("one-value") and f.id in problem


def test_round_trip_windows_claim_its_host_work_not_the_copy_out(tmp_path):
    """``test_round_trip_leg_not_input``'s loop, built: each step copies 16 MiB out, runs 1.5 ms of host work, copies it
    back, then 2.5 ms of recorded host work after its GPU work.  The round trip's text says its idle; each alike
    step's window says the same (base: the step's copy out, ``other`` and every host op, the 2.5 ms after the GPU's
    work too -- over 4 ms for an idle under 2.5 ms)."""
    from tb_gpu_advisor.formats.xplane.adapter import read_trace
    from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report
    from tests.support.round_trip_loop import round_trip_loop
    from tests.support.xplane_paths import written_capture

    p = written_capture(tmp_path, round_trip_loop(round_trip=True), "round_trip")
    m = host_metrics(read_trace(str(p)))
    h = host_report(m, p.stat().st_size)
    f = _one(h, "host_op_placement")
    said = _said_ms(f)
    assert said == pytest.approx(m.round_trip.idle_ms_per_step, abs=0.05)
    assert f.windows and all(_ms(w.label) == pytest.approx(said, rel=0.03) for w in f.windows), \
        (said, [w.label for w in f.windows])
    assert window_value_problems(h.host, h) == []


def test_real_round_trip_windows_leave_the_copy_out_to_the_copies():
    """real-h100-jax ``host_roundtrip`` (13 alike steps of ~26.6 ms, 23.4 ms of host work with the GPU idle each):
    base's windows added each step's 16.8 MB copy out (step 1: 28.2 ms, 20% above the text's mean); now each is
    the step's share of the host work, within the steps' spread of the mean."""
    from tests.support.round_trip_loop import real_jax_xplane
    from tb_gpu_advisor.formats.xplane.adapter import read_trace
    from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report

    p = real_jax_xplane("host_roundtrip")
    h = host_report(host_metrics(read_trace(str(p))), p.stat().st_size)
    f = _one(h, "host_op_placement")
    said = _said_ms(f)
    assert 22.0 < said < 25.0
    assert all(_ms(w.label) <= 1.15 * said for w in f.windows), (said, [w.label for w in f.windows])
