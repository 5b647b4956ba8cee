"""A native CUDA program's dispatch is its runtime calls: a loop too small for them gets the step-level verdict and its
sync-once fix in native words (issue #37 class 4; h37-native67).

Main (1dcda94e) counted only a framework's dispatch of compiled work (JAX's jitted calls, PyTorch's top-level ops) in
``metrics.Dispatch``: an Nsight export of a CUDA C++ loop read 0 calls a step, so ``launch_bound.step_level`` never
held and the native ``launch_bound:step_sync`` fix (h37-calls67) reached no report.  Now ``Framework.step_calls`` is
the native program's launches, copies and syncs; their host time is the calls' less the syncs'.

Truth by construction: ``write_synced_tiny_loop`` -- 3 kernels of 3 us a turn, each ``cudaLaunchKernel`` 8 us, one
``cudaDeviceSynchronize`` a turn: 4 calls, 24 us of host dispatch for 9 us of GPU work (too small); its control, the
same loop of 400 us kernels (not too small).  Real: wild ``counted_steps_rtx3090_solver`` -- by hand from its
sqlite, 11.6 launches and 5.4 syncs a 1.27 ms step, ~80 us of launch calls against 569 us of kernels: not too small.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import nsysexport
from tb_gpu_advisor import formats
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.rules import launch_bound
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics

_WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _metrics(root: str, run: str):  # noqa: ANN202
    (s,) = [s for s in discover(root) if s.run == run]
    return host_metrics(formats.read(s.hosts[0]))


@pytest.fixture(scope="module")
def loops(tmp_path_factory):  # noqa: ANN001, ANN201
    root = tmp_path_factory.mktemp("native_loops")
    truth = {}
    for run, kernel_us in (("tiny", 3.0), ("big", 400.0)):
        (root / run).mkdir()
        truth[run] = nsysexport.write_synced_tiny_loop(str(root / run / "loop.sqlite"), kernels=3, kernel_us=kernel_us)
    return root, truth


@pytest.mark.parametrize("run", ["tiny", "big"])
def test_the_native_loop_counts_its_runtime_calls_as_dispatch(loops, run):
    """Fails on main: 0 calls a step (no framework dispatch event)."""
    root, truth = loops
    m = _metrics(str(root), run)
    t = truth[run]
    assert m.dispatch.calls_per_step == pytest.approx(t["calls_per_turn"])
    assert m.dispatch.host_ms_per_step == pytest.approx(t["host_ms_per_turn"], rel=0.05)  # the sync's wait is not it
    assert m.breakdown.device_compute == pytest.approx(t["device_ms_per_turn"], rel=0.05)
    assert launch_bound.step_level(m) is t["too_small"]


def test_each_turns_first_launch_is_its_call_not_unrecorded_host_time(loops):
    """Fails on 225b624d (launch wait 10 us a turn, 12 us of ``other``): the GPU's idle inside each turn's first
    ``cudaLaunchKernel``, right after the sync, was booked as host time no event records; it is the call's own time,
    launch wait as the other launches' is (h37-dispatch68)."""
    root, truth = loops
    m = _metrics(str(root), "tiny")
    t = truth["tiny"]
    assert m.breakdown.launch_wait == pytest.approx(t["launch_wait_ms_per_turn"], abs=0.0005)
    # what is left outside every call: the host's own code, and the sync's 2 us after the GPU's last kernel
    assert m.breakdown.other == pytest.approx(t["own_ms_per_turn"] + 0.002, abs=0.0005)


def test_the_tiny_loop_is_told_to_sync_once_in_native_words(loops):
    """Fails on main: the launch check told "bigger kernels", no step-level verdict, no sync fix."""
    root, _ = loops
    path = root / "tiny" / "loop.sqlite"
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "nsys"))
    assert rep.error is None, rep.error
    (f,) = [f for f in rep.findings if f.rule == "launch_bound"]
    assert "too small for its dispatch" in f.summary and "4 runtime calls" in f.summary, f.summary
    fixes = " ".join(a.text + (a.snippet or "") for a in f.actions)
    assert "Synchronize once after the loop" in fixes and "cudaEventElapsedTime" in fixes, fixes
    assert "torch." not in fixes and ".item()" not in fixes


def test_the_real_solver_counts_its_calls_and_is_not_too_small():
    """wild ``counted_steps_rtx3090_solver``: its launches and syncs counted (main: 0), its step not too small for
    them by the ledger's numbers, so no step-level verdict (as on main)."""
    m = _metrics(str(_WILD), "counted_steps_rtx3090_solver")
    d = m.dispatch
    assert d.calls_per_step == pytest.approx(17.0, abs=0.5)
    assert 0.05 < d.host_ms_per_step < 0.12 < m.breakdown.device_compute
    assert not launch_bound.step_level(m)
