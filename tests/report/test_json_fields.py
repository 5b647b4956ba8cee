"""The JSON report's fields agree with one another, the run and the hardware (h37-review4: every kept capture's JSON
report read field by field, as an agent or a CI job reads it).

The checker (``tests/support/json_fields.json_field_problems``) reads only ``Report.to_dict()``.  It is shown failing
on each pattern as main wrote it, then run over the kept captures that showed them on main;
``tests/report/test_properties.py`` runs it over every report of the corpus."""

from __future__ import annotations

import copy

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tests.support.json_fields import json_field_problems
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report


def _json(root, run: str | None = None) -> dict:
    """The JSON report of the one session under ``root`` (of run ``run`` where it holds several)."""
    (s,) = [s for s in discover(str(root)) if run is None or s.run == run]
    return session_report(s).to_dict()


def _host(**fields) -> dict:
    """A host's JSON whose fields agree: one GPU that ran work, 8 of 10 steps kept, a training job on it."""
    h = {"host": "h", "error": None,
         "capture": {"vendor": "NVIDIA", "steps_kept": 8, "steps_captured": 10, "note": "", "notes": []},
         "steps": {"source": "profiler_step", "count": 8, "found": 10, "dropped": [{"step": 0}, {"step": 9}]},
         "gpus": [{"gpu": 0, "kernel_count": 120, "busy_share": 0.9}],
         "job": {"kind": "training", "kind_evidence": "a backward pass"}}
    for k, v in fields.items():
        h[k] = {**h[k], **v} if isinstance(v, dict) else v
    return {"hosts": [h]}


def test_the_checker_sees_each_pattern():
    """Each pattern as main wrote it fails the checker; the agreeing fields pass."""
    assert not json_field_problems(_host())
    # a vendor claimed with no GPU that ran work (main: every CPU-only capture "NVIDIA")
    assert json_field_problems(_host(gpus=[]))
    assert json_field_problems(_host(gpus=[{"gpu": 0, "kernel_count": 0, "busy_share": None}]))
    assert not json_field_problems(_host(gpus=[], capture={"vendor": None}))
    # one step analysed (the whole capture), "0 kept" beside it (main: cuda_reduce_baseline)
    whole = {"source": "whole_capture", "count": 1, "found": 0, "dropped": []}
    assert json_field_problems(_host(steps=whole, capture={"steps_kept": 0, "steps_captured": 0}))
    assert not json_field_problems(_host(steps=whole, capture={"steps_kept": 1, "steps_captured": 0}))
    assert json_field_problems(_host(capture={"note": "only 0 steps kept; capture a few steady-state steps"}))
    assert not json_field_problems(_host(capture={"note": "only 8 steps kept; capture a few steady-state steps"}))
    assert json_field_problems(_host(steps={"dropped": []}))  # 10 found, none dropped, 8 kept
    # a CPU-only guess where the job says the GPU records were lost (main: lost_kernels_a100)
    lost = {"kind": "unknown", "kind_evidence": "the host launched 260 kernels, but the capture holds no GPU record"}
    cpu = {"kind": "no_gpu", "kind_evidence": "no kernel, copy or collective ran on any GPU: the work ran on the CPU"}
    guess = {"notes": ["no GPU kernels in this capture: device metrics are not available (CPU-only profile?)"]}
    assert json_field_problems(_host(job=lost, capture=guess))
    assert not json_field_problems(_host(job=cpu, capture=guess))
    # a steady state claimed for a cold start (main: cloverleaf_a100_cuda, its job's phase warm-up)
    cold = {"phase": "warm-up", "phase_evidence": "a cold start: 1 first-time runtime call (`cudaMalloc`)"}
    assert json_field_problems(_host(job=cold, capture={"steady_state": True}))
    assert not json_field_problems(_host(job=cold, capture={"steady_state": False}))
    assert not json_field_problems(_host(job={"phase": "steady"}, capture={"steady_state": True}))
    # a metric coloured past its finding's severity (main: jax_mi355x's MFU, a warning reading critical)
    mfu = {"id": "mfu_low:h", "severity": "warning", "metric": {"status": "critical"}}
    assert json_field_problems(_host(findings=[mfu]))
    assert json_field_problems({**_host(), "findings": [mfu]})  # the session's list too
    assert json_field_problems(_host(findings=[{**mfu, "severity": "info", "metric": {"status": "info"}}]))
    assert not json_field_problems(_host(findings=[{**mfu, "metric": {"status": "warning"}}]))
    assert not json_field_problems(_host(findings=[{**mfu, "severity": "info", "metric": {"status": "good"}}]))


@pytest.mark.parametrize("root, run", [
    (FIXTURES / "wild" / "cpu_only_gloo", None),          # vendor "NVIDIA", no GPU
    (FIXTURES / "foreign", "mtia_inference"),             # vendor "NVIDIA" on an MTIA; "0 steps kept" beside 1; "CPU-only"
    (FIXTURES / "wild" / "cuda_reduce_baseline", None),   # "only 0 steps kept" beside "1 step", steps_kept 0 vs count 1
    (FIXTURES / "wild" / "lost_kernels_a100", None),      # "CPU-only profile?" where the GPU records were lost
    (FIXTURES / "wild" / "snapshot_inference_gpt", None), # a memory snapshot: vendor "NVIDIA" for a GPU with no work
    (FIXTURES / "wild" / "jax_mi355x", None),             # mfu_low a warning, its metric "critical"
    (FIXTURES / "wild" / "amd_mi250", None),              # launch_bound a note, its metric status "info"
    (FIXTURES / "wild" / "cloverleaf_a100_cuda", None),   # steady_state true, its job a cold start
])
def test_kept_captures_json_fields_agree(root, run):
    r = _json(root, run)
    assert r["hosts"] and not any(h.get("error") for h in r["hosts"])  # the capture was read, not an error
    assert not json_field_problems(r)


def test_a_report_whose_gpus_ran_work_names_their_vendor():
    """The fix drops the vendor only where no GPU ran work: an AMD capture still says AMD (its legend's words)."""
    r = _json(FIXTURES / "wild" / "amd_mi300x")
    assert [h["capture"]["vendor"] for h in r["hosts"]] == ["AMD"]
    bad = copy.deepcopy(r)
    bad["hosts"][0]["capture"]["steps_kept"] += 1
    assert json_field_problems(bad)  # the checker reads this report's fields


def test_the_checker_sees_a_finding_surer_than_its_steps():
    """``step-confidence``: a per-step finding no surer than its steps, none critical on low ones -- except a whole
    capture analysed as one step with no claim about its iterations (exact for the window)."""
    bursts = {"source": "gpu_busy_clusters", "count": 8, "found": 10, "dropped": [{"step": 0}, {"step": 9}],
              "confidence": "low"}
    crit = {"id": "mixed_precision_off:h", "rule": "mixed_precision_off", "severity": "critical", "confidence": "low"}
    warn = {**crit, "severity": "warning"}
    assert json_field_problems(_host(steps=bursts, findings=[crit]))
    assert json_field_problems(_host(steps=bursts, findings=[{**warn, "confidence": "high"}]))
    assert not json_field_problems(_host(steps=bursts, findings=[warn]))
    # about the capture itself, not per step: its own confidence
    assert not json_field_problems(_host(steps=bursts, findings=[{**crit, "id": "capture_quality:h",
                                                                  "rule": "capture_quality", "confidence": "high"}]))
    whole = {"source": "whole_capture", "count": 1, "found": 0, "dropped": [], "confidence": "low"}
    sure = {**crit, "confidence": "high"}
    assert not json_field_problems(_host(steps=whole, capture={"steps_kept": 1, "steps_captured": 0},
                                         findings=[sure]))
    assert json_field_problems(_host(steps={**whole, "iteration_guess": True},
                                     capture={"steps_kept": 1, "steps_captured": 0}, findings=[sure]))
    medium = {**bursts, "confidence": "medium"}
    assert json_field_problems(_host(steps=medium, findings=[sure]))
    assert not json_field_problems(_host(steps=medium, findings=[{**crit, "confidence": "medium"}]))


def test_a_window_read_as_one_guessed_iteration_holds_no_critical():
    """vit_a4000_avg_batch: the steps stage reads the window as one iteration from its GPU bursts (a copy burst joined
    to the one burst of kernels, h37-left30) -- a guess every per-step saving rests on.  On main its three
    findings (mixed precision, Tensor Cores, copies) were critical with "high" confidence beside the steps' "low"."""
    r = _json(FIXTURES / "wild" / "vit_a4000_avg_batch")
    (h,) = r["hosts"]
    assert h["steps"]["source"] == "whole_capture" and h["steps"]["iteration_guess"] is True
    per_step = {f["rule"]: f for f in h["findings"] if f["rule"] != "capture_quality"}
    assert {"mixed_precision_off", "tensor_core_unused", "excessive_memcpy"} <= set(per_step)
    assert {f["confidence"] for f in per_step.values()} == {"low"}
    assert {f["severity"] for f in per_step.values()} <= {"warning", "info"}
    assert "a guess" in per_step["mixed_precision_off"]["summary"]
    assert not json_field_problems(r)


def test_a_whole_capture_with_no_claim_about_iterations_keeps_its_findings_sure():
    """Control: cuda_reduce_baseline has no step and no repeating work: the window is analysed as one step, its
    numbers exact for it, no iteration claimed -- its critical stays, at high confidence (on main and here)."""
    r = _json(FIXTURES / "wild" / "cuda_reduce_baseline")
    (h,) = r["hosts"]
    assert h["steps"]["source"] == "whole_capture" and h["steps"]["confidence"] == "low"
    assert not h["steps"].get("iteration_guess")
    crit = [f for f in h["findings"] if f["severity"] == "critical"]
    assert crit and all(f["confidence"] == "high" for f in crit)


@pytest.mark.parametrize("run", ["gpu_events_stripped", "nvfuser_h200_first_call", "vit_a4000_avg_batch",
                                 "cold_a100_alexnet", "dlrm_v100"])
def test_the_job_line_tells_the_job_the_report_found(run):
    """``job-agree`` / ``count-agree`` (h37-left43).  gpu_events_stripped (a DDP training rank whose GPU records were
    lost; its host holds ``Optimizer.step#FusedAdam.step`` and ``## backward ##``) read "GPU work of an unknown kind"
    above a training loop's fixes; nvfuser_h200_first_call and vit_a4000_avg_batch "training steps" beside a window
    of at most one iteration; cold_a100_alexnet "forward passes" beside its one pass; dlrm_v100's ranks "training
    steps" beside their one ProfilerStep each."""
    r = _json(FIXTURES / "wild" / run)
    assert r["hosts"] and not json_field_problems(r)


def test_lost_gpu_records_read_as_the_work_the_host_names():
    """gpu_events_stripped's job line names the training the host's events show, with the optimizer's step as its
    evidence (the name that says training plainly, not the DDP wrapper's forward); JSON kind stays the GPU's reading."""
    (h,) = _json(FIXTURES / "wild" / "gpu_events_stripped")["hosts"]
    assert h["job"]["kind"] == "unknown" and h["job"]["host_kind"] == "training"
    line = h["job"]["summary"]
    assert line.startswith("Job: a training step, as the host's events name the work [low confidence:")
    assert "`Optimizer.step#FusedAdam.step`" in line and "unknown kind" not in line


@pytest.mark.parametrize("run, starts", [("ddp_a100_nccl", "Job: training steps ["),
                                         ("lightning_cpu_fit", "Job: no GPU work ["),
                                         ("scattermoe_h200_item_sync", "Job: GPU work of an unknown kind [")])
def test_the_job_line_of_other_jobs_is_unchanged(run, starts):
    """Controls (the same on main): a rank of many steps keeps the plural; a CPU-only capture keeps "no GPU work"
    (its host kind in its evidence); work of no known kind whose host names nothing stays unknown."""
    r = _json(FIXTURES / "wild" / run)
    assert [h["job"]["summary"][:len(starts)] for h in r["hosts"]] == [starts] * len(r["hosts"])
    assert not json_field_problems(r)


def test_the_checker_sees_a_job_line_that_tells_another_job():
    """The job line "unknown" beside a host kind; a fix looping another job's step; a plural beside one step."""
    job = {"kind": "unknown", "host_kind": "training", "tags": [], "summary": "Job: GPU work of an unknown kind [low]"}
    assert json_field_problems(_host(job=job))
    assert not json_field_problems(_host(job={**job, "summary": "Job: training steps, as the host's events name"}))
    loop = {"id": "host_sync:h", "rule": "host_sync", "actions": [{"text": "t", "snippet": "out = run_one_step(batch)"}]}
    assert json_field_problems(_host(job={"summary": "Job: training steps [high]"}, findings=[loop]))
    assert not json_field_problems(_host(job={"kind": "unknown", "summary": "Job: GPU work of an unknown kind"},
                                         findings=[loop]))
    one = {"source": "profiler_step", "count": 1, "found": 1, "dropped": []}
    ones = {"steps_kept": 1, "steps_captured": 1}
    assert json_field_problems(_host(steps=one, capture=ones, job={"summary": "Job: training steps [high]"}))
    assert not json_field_problems(_host(steps=one, capture=ones, job={"summary": "Job: a training step [high]"}))
