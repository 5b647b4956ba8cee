"""The same job written by PyTorch 1.8-1.10 reads as the same job (issue #37, "right on captures unlike ours";
h37-probe52x's coverage matrix: no writer wrote the old schema, so every class read it through 3-4 real files).

Truth by construction: a job of ``synthetic.randjobs`` written as today's Kineto writes it and rewritten as PyTorch
1.8-1.9's (``synthetic.torchtrace.as_old_schema``: the old categories, ``record_function`` scopes as ops, the wall
clock's whole microseconds since 1970, no ``gpu_user_annotation``).  Three assumptions of the reader held only for
today's layout:

* ``ts`` times 1000 in a double is the nanosecond: past 2**53 ns (104 days) it is not, and the old ``ts`` is 1.6e15
  us -- each time read up to 128 ns off, a range ending where the next began overlapped it, and the next
  ``record_function`` step range, nested in it, was no step (14 steps of a 4-rank loop read as 2);
* a GPU row's category is ``kernel`` / ``gpu_memcpy``: the ranks are merged before the old names are renamed, so each
  rank of an old job's files "holds no GPU work: no GPU runtime call" beside its kernels;
* a ``record_function`` scope is a ``user_annotation``: before 1.11 it is an op like any other, so a loop's
  ``record_function("iteration")`` ranges were its repeated spans, not its step ranges, and a tiny host-paced loop
  read "Host-bound" where its twin reads launch-bound.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from synthetic import randjobs as R
from synthetic import torchtrace as T
from tb_gpu_advisor import formats
from tb_gpu_advisor.discover.logdir import discover
from tests.support.random_jobs import laws_broken
from tests.support.report_store import session_report


def _report(job: R.Job, folder: str, old: bool):
    run = R.write(job, folder)
    if old:
        assert T.rewrite_as_old_schema(run)
    (s,) = [s for s in discover(folder) if s.run == f"job{job.seed}"]
    return session_report(s)


def _reading(report) -> dict:
    h = report.to_dict()["hosts"][0]
    return {"kind": h["job"]["kind"], "steps": (h["steps"]["source"], h["steps"]["count"]),
            "findings": sorted((f["rule"], f["severity"]) for f in h["findings"])}


def test_the_wall_clocks_microseconds_are_read_to_the_nanosecond(tmp_path):
    """Each event's time is the whole microseconds written, and a step range that ends where the next one begins
    still does (on 4ae93328 each was up to 128 ns off its own way, ranges overlapping by tens of ns)."""
    run = R.write(R.kineto_job(marker="range", range_name="training_step", steps=8, loop_us=0.0), str(tmp_path))
    (path,) = T.rewrite_as_old_schema(run)
    (s,) = discover(str(tmp_path))
    trace = formats.read(s.hosts[0])
    h = trace.h
    ranges = np.array([i for i in trace.annotations if h.names[h.name[i]] == "training_step"])
    assert ranges.size == 8
    starts, ends = h.start[ranges].astype(np.int64), h.end[ranges].astype(np.int64)
    assert (starts[1:] == ends[:-1]).all(), list(zip(starts[1:] - ends[:-1]))
    assert (starts % 1_000_000 == 0).all()  # picoseconds of whole microseconds, as written
    with open(path, encoding="utf-8") as f:
        last_us = max(e["ts"] + e.get("dur", 0) for e in json.load(f)["traceEvents"] if "ts" in e)
    stamp_ms = int(os.path.basename(path).split(".")[1])  # the handler's export time, after the window's last event
    assert 0 < stamp_ms * 1000 - last_us <= 200_000, (stamp_ms, last_us)


def test_each_rank_of_an_old_jobs_files_ran_its_gpu_work(tmp_path):
    """4 ranks' files of PyTorch 1.8's: no rank is said to have held no GPU work, every rank's step ranges are its
    steps -- all 14 found, first and last dropped (on 4ae93328: "rank 0 (node0_4100)'s window holds no GPU work: no
    GPU runtime call" for each rank, and 2 steps)."""
    rep = _report(R.random_form5_job(37), str(tmp_path), old=True)
    h = rep.to_dict()["hosts"][0]
    assert "holds no GPU work" not in h["job"]["summary"], h["job"]["summary"]
    assert h["job"]["version"] == "PyTorch 1.8-1.10"
    assert (h["steps"]["source"], h["steps"]["count"]) == ("nvtx_range", 12), h["steps"]["note"]
    assert "(56 on 4 threads)" in h["steps"]["note"] and "dropped first and last of 14 steps" in h["steps"]["note"]
    assert not laws_broken(rep)


#: Single-process jobs of classes 1-4 (their seed's draw): a tiny host-paced loop marked by ``record_function(
#: "iteration")`` (class 4), a loop blocking on pageable uploads and reads under ``record_function("train_step")``
#: (class 3), one under ``ProfilerStep#N`` (class 3, a control), a window of the input pipeline alone and one of
#: start-up before the first kernel (class 1, controls).
SINGLE = {
    "tiny_iteration_ranges": R.random_form5_job(34),
    "blocking_copies_train_step_ranges": R.random_form5_job(15),
    "blocking_copies_profiler_steps": R.random_form5_job(10),  # control
    "input_only_window": R.random_form14_job(39),  # control
    "setup_window": R.random_form13_job(20),  # control
}


#: Several ranks' jobs stepped by ``prof.step()``: before 1.11 Kineto draws no ``ProfilerStep#N`` span on the GPU,
#: so each rank's steps were one host-wide window per step number (the earliest rank's start to the latest's end).
#: A rank pausing alone for a module load (forms16 ``kineto_rank_late``, forms17 ``kineto_rank_closed``) then read
#: ``gpu_imbalance`` and a critical ``host_sync`` on d4d3db12, and a 4-rank DDP job whose rank launches late
#: (default stream seed 28) ``unexplained_idle`` for its twin's ``launch_skew`` (h37-probe52x *Left* 1).  Each rank's
#: spans are now derived as Kineto derives them: the work each step launched.
RANKS = {
    "rank_pauses_alone": R.random_form16_job(14),
    "rank_pauses_then_closes_early": R.random_form17_job(7),
    "ddp_rank_launching_late": R.random_job(28),
}


@pytest.mark.parametrize("case", list(SINGLE) + list(RANKS))
def test_an_old_job_reads_as_its_twin_of_today(tmp_path, case):
    """The job, its steps and its findings (rule and severity) of the old file are its twin's, and no law breaks."""
    job = SINGLE.get(case) or RANKS[case]
    new = _report(job, str(tmp_path / "new"), old=False)
    old = _report(job, str(tmp_path / "old"), old=True)
    assert old.to_dict()["hosts"][0]["job"]["version"] == "PyTorch 1.8-1.10"
    assert _reading(old) == _reading(new)
    assert not laws_broken(old)


def test_an_old_inference_jobs_precision_fix_fits_its_forward_passes(tmp_path):
    """2 ranks' forward passes in fp32 on H100s, PyTorch 1.8's files: torch.cuda.amp's autocast, and no "training
    step" in its words (on 4ae93328: "a training step also scales its loss" -- the job-words law broken)."""
    rep = _report(R.random_form13_job(9), str(tmp_path), old=True)
    h = rep.hosts[0]
    assert h.job["kind"] == "inference"
    texts = [a.text for f in h.findings if f.rule == "mixed_precision_off" for a in f.actions]
    assert any("torch.cuda.amp" in t and "a forward pass needs no loss scaling" in t for t in texts), texts
    assert not laws_broken(rep)


def test_an_old_inference_jobs_exposed_collective_is_told_a_forward_passs_fix(tmp_path):
    """2 ranks' bf16 forward passes whose AllReduce is exposed, PyTorch 1.8's files (randjobs forms13 seed 31): the
    forward's own collectives issued asynchronously, never DDP's ``.backward()`` loop.  On d4d3db12 the old PyTorch's
    ``comm_exposed@legacy`` fix, applied after the inference one, replaced it: "loss_fn(model(x), y).backward()" to
    forward passes (the job-words law broken; h37-probe52x *Left* 5)."""
    job = R.random_form13_job(31)
    assert job.params["ranks"] == 2 and not job.params["train"] and job.params["comm_us"] > 0
    rep = _report(job, str(tmp_path), old=True)
    h = rep.hosts[0]
    assert h.job["kind"] == "inference"
    fixes = [a for f in [*h.findings, *rep.findings] if f.rule == "comm_exposed" for a in f.actions]
    assert fixes and all(".backward(" not in (a.snippet or "") for a in fixes), [a.snippet for a in fixes]
    assert any("async_op=True" in (a.snippet or "") for a in fixes)
    assert not laws_broken(rep)


def test_a_whole_microsecond_files_python_calls_are_no_measured_cost():
    """``wild/tiny_block_h100_infer`` writes whole microseconds since 1970 (1.75e15 us): its Python calls' cost is
    one its clock cannot resolve (``metrics.capture._call_period_us`` reads none off whole microseconds).  On
    4ae93328 the times' 128 ns of read-off made them fractional, and the finding said "at 1.02 us a call ... about
    170 us of this 733 us (23.2%)" -- a cost read off the reader's rounding."""
    from tb_gpu_advisor.runtime.pipeline import host_metrics
    from tests.support.paths import FIXTURES

    (s,) = discover(str(FIXTURES / "wild" / "tiny_block_h100_infer"))
    trace = formats.read(s.hosts[0])
    assert not np.any(trace.h.start % 1_000_000)  # whole microseconds, as written
    pt = host_metrics(trace).capture.python_tracing
    assert pt.calls_per_step > 200 and pt.call_us is None
