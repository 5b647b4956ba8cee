"""Our own H200 memory captures against numbers measured outside the profiler (issue #29's checks).

``tests/fixtures/h200_memory`` (PROVENANCE.md, TRUTH.json): PyTorch 2.11 training runs recorded with
``profile_memory=True``, an OOM snapshot (``_record_memory_history`` + ``_dump_snapshot`` under a 6 GiB memory cap)
with what torch's own ``_memory_viz`` printed about it on the same machine, and a JAX run's xplane.  The independent
numbers: ``torch.cuda.max_memory_allocated`` / ``max_memory_reserved`` and ``memory_stats()`` taken by the capture
script, the OOM's own message, ``_memory_viz stats`` / ``trace``, and ``jax.Device.memory_stats()``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

SET = FIXTURES / "h200_memory"
TRUTH = json.loads((SET / "TRUTH.json").read_text())
SNAPSHOT = SET / "torch_oom_snapshot" / "oom_snapshot.pickle"
GiB, MiB, KiB = 1 << 30, 1 << 20, 1 << 10


def _report(path: Path, fmt: str):
    r = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, fmt))
    assert r.error is None, r.error
    return r


def _torch(run: str):
    (path,) = (SET / run).glob("*.pt.trace.json.gz")
    return _report(path, "kineto")


@pytest.mark.parametrize("run", ["torch_mem_activations", "torch_mem_fragmented"])
def test_torch_peaks_are_what_the_allocator_measured(run: str):
    """The peak allocated and reserved bytes in the profiled window are torch.cuda.max_memory_allocated() and
    max_memory_reserved() over the same window (reset before it), within 1%; capacity is the H200's."""
    t = TRUTH[run]
    (gpu,) = [g for g in _torch(run).gpus if g.memory]
    mem = gpu.memory
    assert mem["peak_allocated_bytes"] == pytest.approx(t["max_memory_allocated"], rel=0.01)
    assert mem["peak_reserved_bytes"] == pytest.approx(t["max_memory_reserved"], rel=0.01)
    assert mem["capacity_bytes"] == pytest.approx(t["total_memory"], rel=0.01)


def test_growing_batches_fragment_and_get_expandable_segments():
    """Batches of growing length leave every earlier size cached: 30.5 GiB reserved for 5 GiB ever allocated at once.
    The fragmentation finding says so with the reserved-allocated gap measured by the allocator, and its fix is
    expandable segments."""
    t = TRUTH["torch_mem_fragmented"]
    rep = _torch("torch_mem_fragmented")
    (f,) = [f for f in rep.findings if f.rule == "memory_fragmentation"]
    assert f.saving_bytes == pytest.approx(t["max_memory_reserved"] - t["max_memory_allocated"], rel=0.02)
    assert "expandable_segments:True" in f.actions[0].snippet


def test_a_small_peak_asks_for_no_checkpointing():
    """The activation-heavy run holds 9 GiB of a 140 GiB H200: activations are the largest part of its step, but no
    memory is short, so no checkpointing (it costs compute) and no near-capacity warning; the headroom note grows the
    batch instead.  What lives across steps holds at least the parameters and Adam's state the script counted."""
    t = TRUTH["torch_mem_activations"]
    rep = _torch("torch_mem_activations")
    rules = {f.rule for f in rep.findings}
    assert not rules & {"activation_memory", "memory_near_capacity", "oom_snapshot"}
    assert "batch_size_headroom" in rules
    mem = next(g.memory for g in rep.gpus if g.memory)
    held = t["param_bytes"] + t["optimizer_state_bytes"]
    assert held <= mem["breakdown"]["held"] <= held + 1 * GiB  # + the input batch and autocast's weight copies
    assert mem["breakdown"]["activations"] > mem["breakdown"]["held"]


# --------------------------------------------------------------------------- the OOM snapshot

def _viz(cmd: str) -> str:
    return (SET / "torch_oom_snapshot" / f"memory_viz_{cmd}.txt").read_text()


def _gib(text: str, label: str) -> float:
    return float(re.search(rf"{label}: ([\d.]+)GiB", text).group(1))


def test_the_snapshot_state_is_the_allocators_and_memory_vizs():
    """At the dump: reserved and allocated bytes exactly as torch.cuda.memory_stats() gave them, the segment count
    and totals as ``python -m torch.cuda._memory_viz stats`` printed (to its 0.1 GiB), and as many history entries
    as ``_memory_viz trace`` listed."""
    t = TRUTH["torch_oom_snapshot"]
    tr = read_trace(str(SNAPSHOT))
    reserved, allocated, segments, _ = tr.snapshot.state[0]
    assert (reserved, allocated) == (t["reserved_at_dump"], t["allocated_at_dump"])
    stats = _viz("stats")
    assert segments == int(re.search(r"segments: (\d+)", stats).group(1))
    assert round(reserved / GiB, 1) == _gib(stats, "total_reserved")
    assert round(allocated / GiB, 1) == _gib(stats, "total_allocated")
    entries = int(re.search(r"(\d+) entries", _viz("trace")).group(1))
    assert tr.num_events == entries  # every entry, the oom among them


def test_the_oom_is_the_one_torch_raised():
    """The failed request and the allocator's state at that moment are the OutOfMemoryError's own message: 512 MiB
    asked, 5.56 GiB allocated, 640 KiB reserved but unallocated, 133.49 GiB free on the device."""
    msg = TRUTH["torch_oom_snapshot"]["oom_message"]
    (oom,) = read_trace(str(SNAPSHOT)).snapshot.ooms
    asked = float(re.search(r"Tried to allocate ([\d.]+) MiB", msg).group(1))
    assert oom.requested == asked * MiB
    assert oom.allocated / GiB == pytest.approx(float(re.search(r"([\d.]+) GiB is allocated by PyTorch", msg)
                                                      .group(1)), abs=0.005)
    cached = float(re.search(r"([\d.]+) KiB is reserved by PyTorch but unallocated", msg).group(1))
    assert oom.reserved - oom.allocated == cached * KiB
    assert oom.device_free / GiB == pytest.approx(float(re.search(r"of which ([\d.]+) GiB is free", msg).group(1)),
                                                  abs=0.005)


def test_the_oom_finding_blames_the_cap_and_names_the_users_line():
    """The driver had 133 GiB free: a cap refused the request (the script capped the process at 6 GiB), not
    fragmentation (640 KiB cached).  The failed allocation is named at the user's line through torch's relu, not at
    the caching allocator's C++ frames; what lived is booked to the forward's activations, the optimizer's state and
    the parameters from their stacks (the backward's on autograd's C++ thread); the fixes are the cap's, then
    checkpointing's."""
    rep = _report(SNAPSHOT, "snapshot")
    f = rep.findings[0]
    assert f.rule == "oom_snapshot" and f.severity == "critical" and f.confidence != "low"
    assert f.metric.detail["cause"] == "memory_cap"
    assert "functional.py:1723 relu" in f.summary and "capture_mem.py:126" in f.summary
    assert "set_per_process_memory_fraction" in f.actions[0].snippet
    assert any("checkpoint(" in a.snippet for a in f.actions[1:])
    (oom,) = read_trace(str(SNAPSHOT)).snapshot.ooms
    live = oom.live_by_phase
    assert live["forward"] > live["optimizer"] > 0 and live["parameters"] == TRUTH["torch_oom_snapshot"]["param_bytes"]
    assert 2 * live["parameters"] == pytest.approx(live["optimizer"], rel=0.01)  # Adam: two moments per parameter
    assert rep.job["kind"] == "training"


# --------------------------------------------------------------------------- JAX

def test_jax_peak_is_the_devices_memory_stats():
    """The xplane's allocator events give the peak jax.Device.memory_stats() reported (peak_bytes_in_use) and its
    bytes_limit as capacity, within 1%."""
    t = TRUTH["jax_mem_mlp"]["memory_stats_after"]
    (path,) = (SET / "jax_mem_mlp").glob("plugins/profile/*/*.xplane.pb")
    mem = next(g.memory for g in _report(path, "xplane").gpus if g.memory)
    assert mem["peak_allocated_bytes"] == pytest.approx(t["peak_bytes_in_use"], rel=0.01)
    assert mem["capacity_bytes"] == pytest.approx(t["bytes_limit"], rel=0.01)


def test_jax_memory_is_placed_at_the_gpu_work_it_served_not_at_dispatch():
    """gpt_bf16 (issue #36): JAX dispatched its 13 steps in the capture's first 20 ms while the GPU ran them over
    450 ms, and XLA records each step's buffers at dispatch: the chart covered 12.2-32.5 ms.  Placed at the GPU work
    of their call, the allocations span the GPU's steps, and the peak lies inside a kept step, before its end.  The
    59.4 GiB allocator limit says it is 75% of the H100's 79.2 GiB."""
    from tb_gpu_advisor.discover.logdir import discover
    from tests.support.report_store import session_report
    from tests.support.real_checks import REAL_JAX_SET

    if not (REAL_JAX_SET / "gpt_bf16").is_dir():
        pytest.skip(f"{REAL_JAX_SET} not present")
    (s,) = [s for s in discover(str(REAL_JAX_SET)) if s.run == "gpt_bf16"]
    rep = session_report(s)
    h = rep.hosts[0]
    m = h.gpus[0].memory
    steps = [r for r in h.step_rows if r.gpu == 0] or [r for r in h.step_rows if r.gpu is None]
    t = m["timeline"]["t_ms"]
    assert min(t) <= steps[0].start_ms and max(t) >= steps[-1].start_ms, (min(t), max(t), steps[0].start_ms)
    peak = next(r for r in steps if r.step == m["peak_step"])
    assert 0 <= m["peak_step_offset_ms"] < peak.step_ms
    assert peak.start_ms - 1e-3 <= m["peak_ms"] < peak.start_ms + peak.step_ms  # rounded to 0.1 us
    headroom = next(f for f in h.findings if f.rule == "batch_size_headroom")
    assert "75% of the GPU's 79.2 GiB" in headroom.summary
