"""GPU bursts that run unlike work on a GPU idle nearly all their span are one pass, not iterations (h37-windows2,
issue #37 class 1: what the window holds).

The course's A10G capture ``induction_trace.json`` (Aldo-Zhang/CS521-mp2-private @9fa3c0d; no licence, read in
place, not kept): a ``torch.compile``d conv's first call, CUDA activity only -- 25 pairs of 4-byte pageable uploads
and device copies, a fill and its read-back twice, the compiled call's 3 ``triton_poi_fused_*`` kernels, then
cuBLAS's first ``ampere_sgemm_32x32_sliced1x4_tn`` (~70 us of GPU work in a 14.47 s window; 2.65 s of the host's
compiling before the Triton kernels).  Main cut 6 GPU bursts, kept 4 "steps" of 160.6 ms ("some of the same work
running in several of them": the fill ran twice) and said "If every fix lands: step ~3.44 ms instead of 160.6 ms".

The wrong assumption: repeated GPU bursts are iterations as soon as any work repeats across two of them.  A loop's
iterations repeat their kernels; here most of the kernel time runs in kernels only one burst runs, and the GPU works
0.002% of the bursts' span.  Built by ``synthetic.torchtrace.write_cuda_only_first_call`` (the real file's bursts,
truth by construction); the control is the same first call followed by 8 calls of the compiled model on a GPU as
idle: those bursts repeat their kernels and stay steps."""

from __future__ import annotations

from pathlib import Path

from synthetic.torchtrace import write_cuda_only_first_call
from tests.support.cli_report import first_host, first_report


def _write(tmp_path: Path, calls_after: int = 0) -> Path:
    path = tmp_path / "run" / "a10g.pt.trace.json"
    path.parent.mkdir(parents=True)
    write_cuda_only_first_call(str(path), calls_after=calls_after)
    return path


def test_a_first_calls_unlike_bursts_are_one_pass(tmp_path: Path):
    steps = first_host(_write(tmp_path))["steps"]
    assert (steps["source"], steps["count"]) == ("whole_capture", 1), steps
    note = steps["note"]
    assert "the GPU's 6 bursts are no iterations" in note, note
    assert "run in one burst only" in note and "not its steady state" in note, note


def test_the_window_is_said_to_be_a_first_call_with_the_steady_state_capture(tmp_path: Path):
    """The one-pass finding says why no step repeats (not "none of its GPU work repeats": the fill ran twice) and how
    to record steady steps: torch.profiler's schedule after warm-up."""
    (f,) = [f for f in first_report(_write(tmp_path))["findings"] if f["rule"] == "capture_quality"]
    summary = " ".join(f["summary"].split())
    assert "its 6 GPU bursts are no iterations" in summary and "a first call" in summary, summary
    assert "none of its GPU work repeats" not in summary
    snippet = " ".join(a["snippet"] or "" for a in f["actions"])
    assert "schedule(wait=" in snippet and "warmup=" in snippet and "active=" in snippet, snippet


def test_control_calls_after_the_first_keep_their_bursts_as_steps(tmp_path: Path):
    """The same first call, then 8 calls of the compiled model 50 ms apart: the GPU as idle, but the bursts repeat
    their kernels -- iterations, read as steps as before."""
    steps = first_host(_write(tmp_path, calls_after=8))["steps"]
    assert steps["source"] == "gpu_busy_clusters" and steps["count"] >= 5, steps
    assert "are no iterations" not in steps["note"]
