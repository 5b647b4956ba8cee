"""Steps from the period of the launch sequence (``job.period``), where no marker or span names them.

Real: our H200 captures (tests/fixtures/h200_jobs, PROVENANCE.md) -- a Hugging Face generate() of 32 tokens profiled
whole (1 prefill + 31 decode forwards, a sync on the stop flag after each), and 10 fp16 forward calls of a
TransformerEncoder launched back to back (no sync, and no op between calls: 60 identical layer ops).  Generated: the
decode_unmarked scenario, whose truth is known by construction.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from synthetic import torchtrace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

JOBS = FIXTURES / "h200_jobs"
TRUTH = json.loads((JOBS / "TRUTH.json").read_text())


def _report(path: Path):
    r = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert r.error is None, r.error
    return r


def test_a_generate_loop_has_one_step_per_decode_forward():
    """31 decode forwards follow the prefill, each after the host read the stop flag: the launch sequence repeats
    with that period, its repeats are the steps (the first and last dropped as partial), the prefill is left out, and
    every kept step is about as long as the others.  Confidence is medium: a period is evidence, not a marker."""
    (path,) = (JOBS / "hf_generate_llama").glob("*.pt.trace.json.gz")
    rep = _report(path)
    steps = rep.steps
    assert steps["source"] == "repeated_launches" and steps["confidence"] == "medium"
    assert 28 <= steps["found"] <= TRUTH["hf_generate_llama"]["decode_forwards"]
    # the first and last dropped as partial, and the one decode step that held 4.3 ms of the profiler's own buffer
    # requests (h37-survey45: no steady step)
    held = [d for d in steps["dropped"] if d["reason"].startswith("profiler:")]
    assert len(held) == 1 and steps["count"] == steps["found"] - 3
    gpu = [r.step_ms for r in rep.step_rows if r.gpu == 0]
    assert np.std(gpu) / np.mean(gpu) < 0.1
    assert rep.job["kind"] == "inference"


def test_layers_launched_back_to_back_are_no_steps():
    """Ten fp16 encoder calls with no sync between them hold 60 identical layer ops: the launch sequence cannot tell
    a layer from a call, so no period is taken for the step (the capture is one pass, and its note says several calls
    may read as one)."""
    (path,) = (JOBS / "torch_fp16_inference_unmarked").glob("*.pt.trace.json.gz")
    steps = _report(path).steps
    assert steps["source"] == "single_pass" and "several calls" in steps["note"]


def test_the_generated_decode_loop_finds_its_period(tmp_path: Path):
    """By construction: a prefill with kernels of its own, then one 25-kernel decode forward per token and a sync;
    the period is those 25 kernels and the prefill is not a step."""
    sc = torchtrace.SCENARIOS["decode_unmarked"]
    (path,) = torchtrace.write_run(str(tmp_path), "decode_unmarked", steps=12)
    steps = _report(Path(path)).steps
    assert steps["source"] == "repeated_launches"
    assert f"same {sc.extra['period_kernels']}-kernel launch sequence" in steps["note"]
    assert steps["found"] == 11 and steps["count"] == 9


@pytest.mark.parametrize("run", sorted(TRUTH), ids=str)
def test_h200_jobs_are_not_read_as_training_loops(run: str):
    """Each real job of the set: its kind is the one it was, no check it must not fire fires as a problem, and no fix
    repeats what the run already does (compiling a compiled run, a GradScaler for inference)."""
    t = TRUTH[run]
    path = next(p for p in (JOBS / run).rglob("*") if p.name.endswith((".pt.trace.json.gz", ".xplane.pb")))
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0,
                                "xplane" if path.name.endswith(".xplane.pb") else "kineto"))
    assert rep.error is None
    assert rep.job["kind"] == t["kind"]
    fired = {f.rule for f in rep.findings if f.severity in ("critical", "warning")}
    assert not fired & set(t.get("expect_not", []))
    advice = "\n".join(f"{a.text}\n{a.snippet}\n" for f in rep.findings for a in f.actions)
    for words in t.get("must_not_advise", []):
        assert words not in advice, (run, words)


def test_a_training_windows_layers_are_not_steps():
    """The real Nsight FSDP window (../shared/profiles/nsys, 2 x H100, activation checkpointing): FSDP's all-gather
    rate limit makes the host wait before each layer, so the layers repeat with a loop's waits -- 16 repeats of one
    157-kernel layer.  A training capture never takes its steps from the launch period."""
    from tests.support.paths import SHARED_PROFILES

    path = next((SHARED_PROFILES / "nsys" / "fsdp_mfu_before").glob("*.sqlite"), None)
    if path is None:
        pytest.skip("the shared Nsight captures are not here")
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "nsys"))
    assert rep.job["kind"] == "training" and rep.steps["source"] != "repeated_launches"


def test_a_cpu_only_run_is_said_to_have_run_on_the_cpu():
    """The CNN trained on the CPU (a GPU present, unused): no GPU runtime call at all, so the job ran on the CPU, and
    the capture finding says so, with the fix for a job that should have used the GPU."""
    (path,) = (JOBS / "torch_cpu_only").glob("*.pt.trace.json.gz")
    rep = _report(path)
    assert rep.job["kind"] == "no_gpu" and "ran on the CPU" in rep.job["kind_evidence"]
    (f,) = [f for f in rep.findings if f.rule == "capture_quality" and "No GPU activity" in f.title]
    assert "the work ran on the CPU" in f.summary and "move the model" in f.summary


def test_the_period_of_a_launch_sequence_by_construction():
    """``_period`` on sequences whose period is known: a 1,000-launch step repeated 200 times after a 300-launch
    prefix (the period, and the region without the prefix); random launches and one kernel over and over (no
    period); 450 tiny kernels and one other per step (451)."""
    from tb_gpu_advisor.job.period import _period

    rng = np.random.default_rng(0)
    step = rng.integers(0, 50, 1000)
    seq = np.r_[rng.integers(50, 60, 300), np.tile(step, 200)].astype(np.int64)
    p, first, length = _period(seq)
    assert p == 1000 and first == 300 and length == seq.size - 300
    assert _period(rng.integers(0, 2, 200_000).astype(np.int64)) is None
    assert _period(np.zeros(100_000, np.int64)) is None
    assert _period(np.tile(np.r_[np.zeros(450, np.int64), [1]], 400))[0] == 451
