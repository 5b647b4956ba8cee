"""PyTorch's fixes run the job's own loop (issue #37, h37-left29): the capture advice and every fix whose code loops
the step are composed from the parts the job chooses (``frameworks.pytorch.Loop``), not written for a training loop
and reworded for the two tags h37-left28 knew -- its other fixes (host_sync's, input_bound's) kept
``train_step(x, y)`` for every job.

Truth of the kept wild captures (tests/fixtures/wild/PROVENANCE.md): scattermoe_h200_item_sync is the ScatterMoE
*forward* (``sonicmoe/run.py``; no backward, no optimizer) whose host waits in ``aten::item`` -- the report calls it
GPU work of an unknown kind; ddp_a100_nccl a DDP training rank (NCCL AllReduces)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tb_gpu_advisor import formats, rules
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

PER_RANK = "one trace per rank"
TRAINING = "train_step("


def _report(run: str) -> Report:
    (s,) = [s for s in wild_sessions() if s.run == run]
    return session_report(s)


def _fixes(report: Report, rule: str) -> list:
    return [a for h in report.hosts for f in h.findings if f.rule == rule for a in f.actions]


def test_work_of_no_known_kind_reads_its_own_step_in_the_sync_fix():
    """scattermoe's forward (unknown kind to the report) was told ``loss = train_step(x, y)`` under its host-sync
    finding; it reads its own step now, the fix's words (text) unchanged."""
    r = _report("scattermoe_h200_item_sync")
    assert r.hosts[0].job["kind"] == "unknown"
    code = " ".join(a.snippet or "" for a in _fixes(r, "host_sync"))
    assert "run_one_step(batch)" in code and TRAINING not in code
    assert pytorch.NO_ITEM.text in [a.text for a in _fixes(r, "host_sync")]


def test_an_old_pytorchs_work_of_no_known_kind_is_told_autocast_around_its_step():
    """tests/fixtures/gaps/inference_rank_1 (HTA's rank 1 of an *inference* job, PyTorch 1.8-1.10; unknown kind to the
    report) was told ``scaler.scale(loss).backward()`` and ``scaler.step(optimizer)`` under its Tensor Core note.  That
    note no longer fires there (its one "16-bit GEMM off the Tensor Cores" is cuBLAS's k = 1 outer product, no Tensor
    Core work: h37-kernelfam2), so the fixes its job's tags compose are read from the framework."""
    (s,) = discover(str(FIXTURES / "gaps" / "inference_rank_1"))
    r = session_report(s)
    assert r.hosts[0].job["kind"] == "unknown" and "legacy" in r.hosts[0].job["tags"]
    fw = host_metrics(formats.read(s.hosts[0])).job.framework(pytorch.FRAMEWORK)
    code = " ".join(a.snippet or "" for k in ("tensor_core_unused", "tensor_core_unused:fp16")
                    for a in fw.fixes.get(k, ()))
    assert "torch.cuda.amp.autocast()" in code and "run_one_step(batch)" in code
    assert "GradScaler" not in code and ".backward(" not in code and "optimizer" not in code


def test_a_training_rank_keeps_its_training_loop_and_its_ranks():
    """Control (passes on main too): a DDP rank is told its training step and to trace every rank."""
    r = _report("ddp_a100_nccl")
    code = " ".join(a.snippet or "" for h in r.hosts for f in h.findings for a in f.actions)
    assert TRAINING in code and PER_RANK in code


#: the fixes whose code runs the step of the job's loop (or a capture schedule's loop)
LOOPED = ("input_bound", "input_bound:parallel", "host_op_placement", "host_sync", "host_sync:read_in_op",
          "excessive_memcpy", "excessive_memcpy:host_device", "step_gaps", "step_gaps:host_work", "capture_quality",
          "capture_quality:unseen", "capture_quality:long", "capture_quality:few_steps", "mixed_precision_off",
          "mixed_precision_off:fp16", "tensor_core_unused", "tensor_core_unused:fp16")


@pytest.mark.parametrize("tags", [("any_work",), ("inference",), ("inference", "legacy"), ("any_work", "legacy"),
                                  ("inference", "legacy", "cuda_amp"), ("any_work", "legacy", "cuda_amp")])
def test_no_training_code_in_the_looped_fixes_of_work_that_is_not_training(tags):
    """Every fix composed from the job's loop, for every rule: an old PyTorch's forward passes were told the training
    loop's sync fix (``host_sync@legacy`` won over the inference one)."""
    fw = pytorch.FRAMEWORK.for_job(tags)
    code = {k: a.snippet for k in LOOPED if k in fw.fixes for a in fw.fixes[k] if a.snippet}
    assert code and not {k: c for k, c in code.items() if TRAINING in c or ".backward(" in c}


@pytest.mark.parametrize("tags", [("inference", "legacy"), ("any_work", "legacy"), ("inference", "legacy", "cuda_amp"),
                                  ("any_work", "alone", "legacy", "cuda_amp")])
def test_an_old_pytorchs_exposed_collectives_fix_fits_work_that_is_not_training(tags):
    """``comm_exposed@legacy`` (PyTorch before 2.0) is composed from the job's loop: DDP's overlap with a
    ``.backward()`` loop was every old job's fix, forward passes' too (d4d3db12; h37-probe52x *Left* 5)."""
    fixes = pytorch.FRAMEWORK.for_job(tags).fixes
    code = [a.snippet or "" for k in fixes if k.split(":")[0] == "comm_exposed" for a in fixes[k]]
    assert code and not [c for c in code if ".backward(" in c or TRAINING in c], code
    assert any("async_op=True" in c for c in code)


def test_an_old_pytorchs_training_step_keeps_ddps_overlap():
    """Control (passes on d4d3db12 too): a training job of an old PyTorch is told DDP's buckets and ``no_sync``,
    without 1.11's ``static_graph`` keyword."""
    (fix,) = pytorch.FRAMEWORK.for_job(("legacy",)).fixes["comm_exposed"]
    assert "no_sync()" in fix.snippet and "static_graph" not in fix.snippet


#: a training step's words in a fix's prose (``tests.support.contradictions``' law for forward passes)
_TRAINING_PROSE = ("training step", "in training", "optimizer update")


def test_an_old_pytorchs_forward_pass_is_told_no_training_step_in_its_precision_fixes():
    """torch.cuda.amp's autocast told forward passes "a training step also scales its loss (torch.cuda.amp's gradient
    scaler)" -- a PyTorch 1.8-1.10 inference trace (h37-probe52x: ``as_old_schema`` of randjobs forms13 seed 9, an
    H100); a forward pass needs no loss scaling, and is told so."""
    fw = pytorch.FRAMEWORK.for_job(("inference", "legacy", "cuda_amp"))
    texts = {k: a.text for k in fw.fixes if k.startswith(("mixed_precision_off", "tensor_core_unused"))
             for a in fw.fixes[k] if "autocast" in a.text}
    assert len(texts) == 4 and not {k: t for k, t in texts.items() if any(w in t for w in _TRAINING_PROSE)}, texts
    assert all("a forward pass needs no loss scaling" in t for t in texts.values())


@pytest.mark.parametrize("tags", [("any_work",), ("any_work", "legacy", "cuda_amp")])
def test_work_of_no_known_kind_keeps_the_training_steps_scaler_aside(tags):
    """Control (passes on 4ae93328 too): a step of no known kind may be a training step, and keeps its aside."""
    fw = pytorch.FRAMEWORK.for_job(tags)
    texts = [a.text for k in fw.fixes if k.startswith("mixed_precision_off") for a in fw.fixes[k]]
    assert any("a training step also scales its loss" in t for t in texts), texts


def test_the_general_fixes_are_the_training_loop():
    """The framework's own fixes (docs, a job with no tag) are the training loop's, "one trace per rank" included."""
    fw = pytorch.FRAMEWORK
    assert fw.capture_snippet == pytorch.capture(pytorch.TRAINING_LOOP, per_rank=True)
    assert PER_RANK in fw.capture_snippet and fw.fixes["host_sync"][0] == pytorch.NO_ITEM
    assert fw.for_job(()).fixes == {k: v for k, v in fw.fixes.items() if "@" not in k}


def _metrics(processes: int, gpus: int, collectives: float, job_ranks: int | None = None) -> SimpleNamespace:
    """What ``rules.base.framework`` reads of a host's metrics: its framework (and the one that ran the work, none
    other here), processes, GPUs (their vendor: none named, NVIDIA's words), collectives and the job size its header
    names."""
    job = SimpleNamespace(framework=lambda fw, alone=False, work=None: fw.for_job(("alone",) if alone else ()),
                          kind=SimpleNamespace(runtime_vendor="", untraced_backend="", window=""), gpus_listed="",
                          gpu_vendor="")
    return SimpleNamespace(capture=SimpleNamespace(framework="pytorch", work_framework=""), job=job, gpus=[],
                           memory=SimpleNamespace(vendor=None),
                           multi_gpu=SimpleNamespace(processes=processes, active_gpus=list(range(gpus)),
                                                     collective_calls_per_gpu_step=collectives,
                                                     job_ranks=job_ranks))


@pytest.mark.parametrize("processes, gpus, collectives, job_ranks, per_rank", [
    (1, 2, 4.0, None, False),  # DataParallel / a MirroredStrategy worker: its collectives are among its own GPUs
    (1, 1, 0.0, None, False),  # one process, one GPU, no collective (mi210_gpu_only)
    (1, 1, 0.0, 8, True),      # a DDP rank whose window ran no collective: its header names a job of 8 (h37-left33)
    (1, 1, 4.0, None, True),   # a DDP rank's file: its collectives talk to the other ranks
    (2, 2, 4.0, None, True),   # two processes on one host
    (0, 0, 0.0, None, True),   # a CPU-only capture counts no GPU process (cpu_only_gloo, a gloo rank of 300)
])
def test_one_process_driving_several_gpus_is_told_nothing_of_ranks(processes, gpus, collectives, job_ranks,
                                                                   per_rank):
    """h37-left28 left: one process that drives several GPUs and runs collectives among them read "one trace per
    rank" (``alone`` asked for no collective at all)."""
    fw = rules.base.framework(_metrics(processes, gpus, collectives, job_ranks))  # type: ignore[arg-type]
    assert (PER_RANK in fw.capture_snippet) is per_rank


@pytest.mark.parametrize(("tags", "step"), [(("inference", "cold"), pytorch.FORWARD_LOOP.capture_step),
                                            (("cold",), pytorch.TRAINING_LOOP.capture_step),
                                            (("any_work", "cold", "alone"), pytorch.ANY_LOOP.capture_step)])
def test_a_cold_jobs_capture_advice_loops_its_own_step(tags, step):
    """A cold job's capture advice (``capture_snippet``, what the MCP server and the tab show) was a fixed text that
    looped ``run_one_step()`` whatever the job (``job_captures["cold"]``, applied after the composed advice): it is now
    the cold schedule around the job's own loop, the one the cold fix quotes."""
    fw = pytorch.FRAMEWORK.for_job(tags)
    assert step in fw.capture_snippet and "schedule(wait=2, warmup=3" in fw.capture_snippet
    assert fw.capture_snippet == fw.fix("capture_quality:unsteady")[0].snippet


def test_a_cold_serving_job_keeps_its_servers_words():
    """A serving engine recorded cold (vllm_mi300x_capture's tags: inference, serving, cold) is profiled through its
    server's routes: the cold tag, applied last, replaced that advice with a loop of ``run_one_step()`` and added the
    loop's cold fix beside the serving one."""
    fw = pytorch.FRAMEWORK.for_job(("inference", "serving", "cold"))
    assert fw.capture_snippet == pytorch.CAPTURE_SERVING
    assert all("prof.step()" not in (a.snippet or "") for k in fw.fixes if k.startswith("capture_quality")
               for a in fw.fixes[k])


def test_the_warm_jobs_advice_is_unchanged():
    """Control: a warm job's advice is the steady-state capture of its loop, an inference job's the forward passes'."""
    assert pytorch.FRAMEWORK.for_job(()).capture_snippet == pytorch.capture(pytorch.TRAINING_LOOP, per_rank=True)
    assert pytorch.FRAMEWORK.for_job(("inference",)).capture_snippet == pytorch.CAPTURE_INFERENCE
    assert pytorch.FRAMEWORK.for_job(("inference", "serving")).capture_snippet == pytorch.CAPTURE_SERVING
