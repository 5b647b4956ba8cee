"""A window at the loop's end whose GPU only drains the last step's queue holds none of the job's steps (issue #37,
class 1; h37-loopend2, h37-survey55's *Left* 1).

ryienh/gnn-ops-benchmark ``log/tensorboard/AttentiveFPREG_FakeDataset_train/thetagpu11_3884292.1644971077754.pt.trace.json``
(BSD-3-Clause, Argonne; kept as ``tests/fixtures/wild/loop_ended_backlog_a100_gnn``): the same AttentiveFP training
loop on an A100-SXM4-40GB as ``loop_ended_a100_gnn`` (2 batches, ``schedule(wait=1, warmup=1, active=3)``), read by
hand: one ``ProfilerStep#2`` (557 us) holding the exhausted DataLoader's ``__next__`` (42 us), ``record_function``'s
handle tensors, and the profiler's exit ``cudaDeviceSynchronize`` (56.7 ms); no launch, no copy call.  Yet the GPU
ran 964 kernels (53.5 ms), 14 copies and 20 memsets, all inside that sync, their correlation ids (10759-17235) on no
call of the window: the warm-up step's launches, queued before the window.  Main read "a training step" of 557 us,
input-bound by its 42 us fetch, the GPU idle for "what the capture did not record".

Wrong assumption: *the kernels of a window were launched in it*.  Controls cut from the same file: a launch call in
the window carrying a kernel's id (work of the window's own), and a model op after the fetch (a loop still running),
each keep a step of the job.
"""

from __future__ import annotations

import copy

from tests.support.paths import FIXTURES
from tests.support.run_report import capture_quality_finding, doc_host, gzip_json, one_file_host

TRACE = FIXTURES / "wild" / "loop_ended_backlog_a100_gnn" / "thetagpu11_3884292.1644971077754.pt.trace.json.gz"
FETCH = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
LOOP_ENDED = "The capture window opened after the loop's last batch: none of the job's steps in it"


def _text(f: dict) -> str:
    return " ".join([f["summary"], *(a.get("text", "") + " " + (a.get("snippet") or "") for a in f["actions"])])


def test_a_gpu_draining_the_last_steps_queue_is_the_loops_end_not_a_step():
    host = one_file_host(str(TRACE), "kineto")
    f = capture_quality_finding(host)
    assert f["title"] == LOOP_ENDED, f["title"]
    said = _text(f)
    assert "`ProfilerStep#2`" in said and FETCH in said and "42 us" in said, said
    assert "964 kernels (53.5 ms)" in said and "34 copies or memsets queued before the window" in said
    assert "exit sync (`cudaDeviceSynchronize`, 56.7 ms) waited for them" in said, said
    assert "holds no GPU work" not in said, said  # the GPU did work: the earlier step's
    assert "wait + warmup + active" in said and "len(loader)" in said and "(wait=0, warmup=1, active=1)" in said, said
    # no other check judges the drained queue as a step: no input-bound 42 us, no idle GPU in a 0.56 ms step
    assert [g["rule"] for g in host["findings"]] == ["capture_quality"], [g["title"] for g in host["findings"]]
    job = host["job"]
    assert job["marks_no_job_step"] is True and job["kind"] == "training", job
    assert job["summary"].startswith("Job: a training step, its GPU work queued before the window: none of the job's "
                                     "steps in it"), job["summary"]
    (gpu,) = host["gpus"]  # the row counts the kernels the finding counts, and no share of a step it has not
    assert gpu["kernel_count"] == 964 and gpu["busy_share"] is None and gpu["step_ms"] is None, gpu


def test_the_drained_queue_times_no_step_anywhere_in_its_json():
    import os
    from types import SimpleNamespace

    from tb_gpu_advisor.runtime.pipeline import analyze_session
    from tests.support.properties import no_gpu_session_step_problems, no_gpu_step_problems

    report = analyze_session("w", "s", [SimpleNamespace(host="h0", path=str(TRACE), format="kineto",
                                                        size=os.path.getsize(TRACE))])
    (host,) = report.hosts
    assert no_gpu_step_problems("h0", host) == [] and no_gpu_session_step_problems(report) == []
    assert len(host.step_rows) == 0 and host.mean_step_ms() is None and not host.achievable, host.achievable
    shares = {c.id: c.value for c in host.headline}
    assert shares["device_step_share"] is None and shares["input_wait_share"] is None, shares


def test_a_launch_in_the_window_is_its_own_work_not_a_backlog(tmp_path):
    """Control: a ``cudaLaunchKernel`` inside the step carrying the first kernel's correlation id -- the window
    launched work, so its GPU work is not all queued before it: a step of the job, as main reads it."""
    doc = gzip_json(TRACE)
    ev = doc["traceEvents"]
    (sync,) = [e for e in ev if e.get("name") == "cudaDeviceSynchronize"]
    first = min((e for e in ev if e.get("cat") == "Kernel"), key=lambda e: e["ts"])
    (fetch,) = [e for e in ev if e.get("name") == FETCH]
    launch = copy.deepcopy(sync)
    launch.update(name="cudaLaunchKernel", ts=fetch["ts"] + fetch["dur"] + 2, dur=5)
    launch["args"] = {**sync["args"], "correlation": first["args"]["correlation"]}
    ev.append(launch)
    host = doc_host(tmp_path, doc)
    assert all(f["title"] != LOOP_ENDED for f in host["findings"]), [f["title"] for f in host["findings"]]
    assert "marks_no_job_step" not in host["job"] and host["step_rows"], host["job"]


def test_a_model_op_after_the_fetch_is_a_loop_still_running(tmp_path):
    """Control: an ``aten::addmm`` after the fetch -- the batch fetched was used, so the loop had not ended."""
    doc = gzip_json(TRACE)
    (fetch,) = [e for e in doc["traceEvents"] if e.get("name") == FETCH]
    op = copy.deepcopy(fetch)
    op.update(name="aten::addmm", ts=fetch["ts"] + fetch["dur"] + 5, dur=40)
    doc["traceEvents"].append(op)
    host = doc_host(tmp_path, doc)
    assert all(f["title"] != LOOP_ENDED for f in host["findings"]), [f["title"] for f in host["findings"]]
    assert "marks_no_job_step" not in host["job"] and host["step_rows"], host["job"]


def test_the_gpus_table_says_why_its_step_columns_are_empty():
    """The GPUs table's step and active columns are a step's length and a share of it: for the drained queue they
    are "-" beside the window's 964 kernels, and the text and markdown say why under the table (h37-loopstart,
    h37-loopend2's *Left* 1) -- main printed "-" with no word, beside a header of "no step"."""
    import os
    from types import SimpleNamespace

    from tb_gpu_advisor.report import render
    from tb_gpu_advisor.runtime.pipeline import analyze_session

    report = analyze_session("w", "s", [SimpleNamespace(host="h0", path=str(TRACE), format="kineto",
                                                        size=os.path.getsize(TRACE))])
    (gpu,) = report.hosts[0].gpus
    assert gpu.busy_share is None and gpu.step_ms is None and gpu.kernel_count == 964, gpu
    text, md = render.to_text(report), render.to_markdown(report)
    flat = " ".join(text.split())
    assert "step ms and active are a step's length and a share of it: this window holds none of the job's steps, " \
           "so they are '-'; kernels counts the window's, queued before it" in flat, text
    assert "this window holds none of the job's steps, so they are '-'" in md, md


def test_control_a_host_with_steps_has_no_such_legend():
    """Control: a host whose steps are timed has every column filled, and no legend under its GPUs table."""
    from tb_gpu_advisor.report import render
    from tests.support.run_report import run_report

    control = run_report(FIXTURES / "wild" / "hf_qwen_h100", ".")
    assert control.hosts[0].gpus[0].busy_share is not None
    assert "so they are '-'" not in render.to_text(control) + render.to_markdown(control)
