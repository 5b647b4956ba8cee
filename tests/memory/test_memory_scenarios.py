"""Generated PyTorch memory scenarios (synthetic/torchtrace.py, profile_memory=True) whose peaks are known by
construction: the simulated caching allocator's own peak is the report's, what holds it is what was put there, and
each scenario gets its memory finding with its fix (issue #29: activation-heavy -> checkpointing first among the
memory findings, fragmented -> expandable_segments, near-OOM -> sharding / offload)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from synthetic.memsnapshot import GiB
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

RUNS = ("memory_activation_heavy", "memory_fragmented", "memory_near_oom")
MEMORY_RULES = ("oom_snapshot", "activation_memory", "memory_fragmentation", "memory_near_capacity",
                "batch_size_headroom", "allocator_churn")
STEPS = 12


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict:
    out = {}
    d = tmp_path_factory.mktemp("mem")
    for run in RUNS:
        (path,) = tt.write_run(str(d), run, steps=STEPS)
        out[run] = analyze_host(HostFile(run, path, os.path.getsize(path), 0, "kineto"))
    return out


def _sim(run: str) -> tt.MemSim:
    return tt.simulate(run, STEPS)[0].mem


@pytest.mark.parametrize("run", RUNS)
def test_peaks_are_the_simulated_allocators(reports: dict, run: str):
    """The report's peaks are the caching allocator model's own maxima (not read from the file), to the byte; the
    step the peak falls in is a kept one, with its offset inside it."""
    sim = _sim(run)
    mem = reports[run].gpus[0].memory
    assert mem["peak_allocated_bytes"] == sim.peak_allocated and mem["peak_reserved_bytes"] == sim.peak_reserved
    assert mem["peak_step"] is not None and 0 <= mem["peak_step_share"] <= 1
    assert mem["start_bytes"] == tt.SCENARIOS[run].memory_held
    assert len(mem["step_peaks"]) == reports[run].steps["count"]


def test_what_holds_the_activation_heavy_peak(reports: dict):
    """Held across steps: the 12 GiB allocated before the capture; activations: the 24 layers' 2.2 GiB kept for the
    backward (allocator rounding aside); the op holding them: the forward's addmm."""
    extra = tt.SCENARIOS["memory_activation_heavy"].extra
    mem = reports["memory_activation_heavy"].gpus[0].memory
    assert mem["breakdown"]["held"] == extra["held_bytes"]
    assert mem["breakdown"]["activations"] == pytest.approx(extra["activation_bytes"], rel=0.001)
    assert mem["top"][0][:2] == ["aten::addmm", "activations"] and mem["top"][0][3] == 24


def _memory_findings(rep) -> list:
    return [f for f in rep.findings if f.rule in MEMORY_RULES]


def test_activation_heavy_gets_checkpointing_first(reports: dict):
    fs = _memory_findings(reports["memory_activation_heavy"])
    f = fs[0]
    assert f.rule == "activation_memory" and f.severity == "warning"
    assert "checkpoint(block, x, use_reentrant=False)" in f.actions[0].snippet
    act = tt.SCENARIOS["memory_activation_heavy"].extra["activation_bytes"]
    assert f.saving_bytes == pytest.approx(0.7 * act, rel=0.01)
    assert f.windows and f.windows[0].step == reports["memory_activation_heavy"].gpus[0].memory["peak_step"]
    assert {x.rule for x in fs} == {"activation_memory"}


def test_fragmented_gets_expandable_segments(reports: dict):
    """Reserved climbs ~20 GiB above anything allocated at once: the fragmentation finding, its saving that gap,
    its fix expandable segments; reserved moves between steps (segments asked for)."""
    rep = reports["memory_fragmented"]
    sim = _sim("memory_fragmented")
    (f,) = [x for x in rep.findings if x.rule == "memory_fragmentation"]
    assert f.severity == "warning" and f.saving_bytes == sim.peak_reserved - sim.peak_allocated > 15 * GiB
    assert f.actions[0].snippet == "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
    assert rep.gpus[0].memory["reserved_changes_per_step"] > 0
    assert _memory_findings(rep)[0].rule == "memory_fragmentation"


def test_near_oom_leads_with_sharding_the_state_held_across_steps(reports: dict):
    """94.7% of the GPU, 70 GiB of it held across steps: near capacity (warning, under the critical 97%), and the
    fix that frees the most shards or offloads that state -- not checkpointing the 4.8 GiB of activations."""
    rep = reports["memory_near_oom"]
    f = _memory_findings(rep)[0]
    assert f.rule == "memory_near_capacity" and f.severity == "warning"
    assert f.metric.detail["lever"] == "held" and "fully_shard" in f.actions[0].snippet
    assert f.saving_bytes == tt.SCENARIOS["memory_near_oom"].memory_held
    assert "run out of memory" in f.summary


def test_the_chart_series_keeps_every_peak(reports: dict):
    """At most memory.timeline_points points, the peak among them, every one a real state of the allocator."""
    for run, rep in reports.items():
        tl = rep.gpus[0].memory["timeline"]
        assert len(tl["t_ms"]) <= 600 and max(tl["allocated"]) == rep.gpus[0].memory["peak_allocated_bytes"], run
        assert tl["t_ms"] == sorted(tl["t_ms"])


def test_a_run_without_profile_memory_has_no_memory_block(tmp_path: Path):
    (path,) = tt.write_run(str(tmp_path), "healthy_bf16", steps=4)
    rep = analyze_host(HostFile("h", path, os.path.getsize(path), 0, "kineto"))
    assert rep.gpus[0].memory is None and not _memory_findings(rep)


def test_batch_headroom_frees_no_memory():
    """Issue #36: batch headroom read "frees ~52.8 GiB" on every run -- a larger batch uses the headroom, it frees none;
    the room stays in its summary ("could grow about 212.9x") and its metric."""
    import contextlib
    import io
    import json

    from tb_gpu_advisor.cli import main as cli
    from tb_gpu_advisor.rules import batch_size_headroom
    from tests.support.paths import SHARED_PROFILES

    run = SHARED_PROFILES / "real-h100-jax"
    if not run.is_dir():
        pytest.skip("needs ../shared/profiles/real-h100-jax")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        cli.main(["report", str(run), "--run", "healthy_bf16_nocb", "--cache-dir", "off", "--format", "json"])
    (f,) = [f for f in json.loads(buf.getvalue())["findings"] if f["rule"] == batch_size_headroom.ID]
    assert f["saving_bytes"] is None and "could grow about" in f["summary"]
