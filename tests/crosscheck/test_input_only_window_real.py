"""A window that only loads data is no start-up (issue #37, deliverable 1; h37-survey53).

slpkite108/DET_SEG ``dataloader_trace.json`` (MIT; kept as ``tests/fixtures/wild/input_only_rtx4090_unetr``): a
SlimUNETR data-loading check on an RTX 4090 whose model call is commented out.  Read by hand: 13 DataLoader
``__next__`` calls (13.76 s of waiting, worker start and one refill), 24 synchronous copies of the batches to GPU 3
(``.to(device)``: 67 MB image + 134 MB label a batch, 2.25 GiB, each waited for by ``cudaStreamSynchronize``), no
kernel.  On main it was "The capture window ended during start-up: no GPU work launched yet", told to skip start-up
with the profiler's schedule -- where the loop turned twelve times and never ran the model.

Controls, built from the same file: cut before its second fetch it is start-up again (one batch fetched, the first
step not yet launched); with a matmul op in it a model ran, on the CPU, and it is no loop without a model.
"""

from __future__ import annotations

import gzip
import json
import os
from types import SimpleNamespace

from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES

TRACE = FIXTURES / "wild" / "input_only_rtx4090_unetr" / "dataloader_trace.pt.trace.json.gz"
FETCH = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"


def _doc() -> dict:
    with gzip.open(TRACE, "rt") as f:
        return json.load(f)


def _analyzed(path: str):  # noqa: ANN202 - a Report
    hosts = [SimpleNamespace(host="h0", path=path, format="kineto", size=os.path.getsize(path))]
    return analyze_session("w", "s", hosts)


def _report(path: str) -> dict:
    rep = _analyzed(path).to_dict()
    (host,) = rep["hosts"]
    assert host["error"] is None, host["error"]
    return {**host, "findings": rep["findings"]}


def _written(tmp_path, doc: dict) -> str:
    path = str(tmp_path / "cut.pt.trace.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def _window_finding(host: dict) -> dict:
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality"]
    return f


def test_a_real_loop_that_only_loads_batches_is_named_so_not_start_up():
    host = _report(str(TRACE))
    job, f = host["job"], _window_finding(host)
    assert job["kind"] == "no_gpu", job
    evidence = job["kind_evidence"]
    assert evidence.startswith("the input pipeline only: 13 batch fetches"), evidence
    assert "24 copies, 2.25 GiB in all, on GPU 3" in evidence and "start-up" not in evidence, evidence
    assert f["severity"] == "warning" and "input pipeline" in f["title"] and "start-up" not in f["title"], f["title"]
    fix = " ".join(a["text"] for a in f["actions"])
    assert "run the model on each batch inside the profiled block" in fix, fix
    assert "skip start-up" not in fix, fix


def test_the_same_window_cut_before_its_second_fetch_is_start_up(tmp_path):
    doc = _doc()
    second = sorted(e["ts"] for e in doc["traceEvents"] if e.get("name") == FETCH)[1]
    doc["traceEvents"] = [e for e in doc["traceEvents"] if "ts" not in e or e["ts"] < second]
    job = _report(_written(tmp_path, doc))["job"]
    assert job["kind"] == "no_gpu" and job["kind_evidence"].startswith("start-up only:"), job["kind_evidence"]


def test_the_same_window_with_a_matmul_on_the_cpu_is_no_loop_without_a_model(tmp_path):
    doc = _doc()
    first = min(e["ts"] for e in doc["traceEvents"] if e.get("name") == FETCH)
    tid = next(e["tid"] for e in doc["traceEvents"] if e.get("name") == FETCH)
    doc["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1743389, "tid": tid,
                               "ts": first - 100, "dur": 50, "args": {"External id": 99999}})
    job = _report(_written(tmp_path, doc))["job"]
    assert "input pipeline only" not in job["kind_evidence"], job["kind_evidence"]


def test_a_loop_without_a_kernel_times_no_gpu_step():
    """The job reads no GPU work (the title: "no step: the window holds no GPU work"), so no GPU step is timed: main
    cut the window's 24 uploads into 3 "GPU burst" steps (86.6 ms, 5.46 s, 5.63 s) and the GPUs table showed "step ms
    3,727.67" on the same screen.  The steps ask the job's reading: the whole window, one pass, and no GPU row's step."""
    (host,) = _analyzed(str(TRACE)).hosts
    assert host.job["kind"] == "no_gpu", host.job
    assert host.steps["source"] != "gpu_busy_clusters", host.steps  # main: gpu_busy_clusters, 3 steps
    assert [g.step_ms for g in host.gpus] == [None], [g.step_ms for g in host.gpus]  # main: [3727.669013]
    from tests.support.properties import no_gpu_step_problems

    assert no_gpu_step_problems(host.host, host) == []


def test_the_law_sees_a_gpu_step_timed_under_no_step():
    """The law can fail: the same report with its GPU row given a step, or its steps said read from bursts."""
    import dataclasses

    from tests.support.properties import no_gpu_step_problems

    (host,) = _analyzed(str(TRACE)).hosts
    timed = dataclasses.replace(host, gpus=[dataclasses.replace(g, step_ms=3727.67) for g in host.gpus])
    assert [v.split(":")[0] for v in no_gpu_step_problems("h0", timed)] == ["no-gpu-step"]
    bursts = dataclasses.replace(host, steps={**host.steps, "source": "gpu_busy_clusters"})
    assert no_gpu_step_problems("h0", bursts) == [
        "no-gpu-step: h0: steps read from the GPU's bursts in a window without GPU work"]


def test_page_locking_in_a_window_cut_from_a_running_process_is_no_context_creation(tmp_path):
    """Cut before its second fetch the window is start-up, and main named its longest call of 10 ms or more -- a
    267 ms ``cudaHostAlloc`` among 17 page-locking siblings of 16-54 ms -- "the CUDA context's creation".  The window
    records no runtime initialisation (the context was made before it: the model's ``accelerator.prepare``), so no
    call created it here (``job.phase.context_start``); the climate U-Net's ``cudaFree`` keeps its words
    (tests/job/test_window_kinds.py)."""
    doc = _doc()
    second = sorted(e["ts"] for e in doc["traceEvents"] if e.get("name") == FETCH)[1]
    doc["traceEvents"] = [e for e in doc["traceEvents"] if "ts" not in e or e["ts"] < second]
    evidence = _report(_written(tmp_path, doc))["job"]["kind_evidence"]
    assert evidence.startswith("start-up only:") and "`cudaHostAlloc` ×" in evidence, evidence
    assert "context's creation" not in evidence, evidence  # main: "`cudaHostAlloc` ×… (…: the CUDA context's creation"


def test_a_loop_without_a_kernel_holds_no_step_anywhere_in_its_json():
    """h37-nogpu2: the GPUs table's step was nulled apart (``report.build``) while the same JSON kept the one pass as a
    step -- main: 1 step row of 5,723.57 ms, ``achievable.step_ms`` 5723.573024 (host and session), the device-share
    card's ``avg_step_ms`` 5723.573 -- under a title that says "no step".  The metrics stage decides once
    (``metrics.compute.gpu_step_timed``), and every part of the JSON reads that one value."""
    report = _analyzed(str(TRACE))
    (host,) = report.hosts
    rep = report.to_dict()
    assert len(host.step_rows) == 0, len(host.step_rows)  # main: 1
    assert host.achievable == {} and rep["achievable"] == {}, (host.achievable, rep["achievable"])
    assert host.mean_step_ms() is None, host.mean_step_ms()  # main: 5723.573024
    assert [c.detail.get("avg_step_ms") for c in host.headline if "avg_step_ms" in (c.detail or {})] == [None]
    assert rep["hosts"][0]["gpus"][0]["step_ms"] is None
    assert rep["display"]["achievable"] == "" and rep["display"]["hosts"][0]["steps"] == []
    from tests.support.properties import no_gpu_session_step_problems, no_gpu_step_problems

    assert no_gpu_step_problems(host.host, host) == [] and no_gpu_session_step_problems(report) == []
    # what the window holds stays: its length and its copies
    assert rep["hosts"][0]["capture"]["length_ms"] > 19_000 and rep["hosts"][0]["memcpy"], rep["hosts"][0]["capture"]


def test_the_law_sees_a_step_left_anywhere_in_the_json():
    """The law can fail on each part of the JSON that held main's step: the account (host and session), a card."""
    import dataclasses

    from tb_gpu_advisor.model.schema import Metric
    from tests.support.properties import no_gpu_session_step_problems, no_gpu_step_problems

    report = _analyzed(str(TRACE))
    (host,) = report.hosts
    account = {"step_ms": 5723.573024, "achievable_step_ms": 5723.573}
    kept = dataclasses.replace(host, achievable=account)
    assert no_gpu_step_problems("h0", kept) == [
        "no-gpu-step: h0: a mean step of 5,723.57 ms in a window without GPU work",
        "no-gpu-step: h0: the account holds a step of 5,723.57 ms in a window without GPU work"]
    card = Metric(id="device_step_share", label="", value=None, unit="", display="", detail={"avg_step_ms": 5723.573})
    carded = dataclasses.replace(host, headline=[card])
    assert no_gpu_step_problems("h0", carded) == [
        "no-gpu-step: h0: card device_step_share holds a step of 5,723.57 ms in a window without GPU work"]
    session = dataclasses.replace(report, achievable=account)
    assert no_gpu_session_step_problems(session) == [
        "no-gpu-step: session: the account holds a step of 5,723.57 ms in a window without GPU work"]


def test_a_loop_without_a_kernel_states_no_time_per_step_on_its_cards():
    """h37-walk13: with its step dropped (``metrics.compute.gpu_step_timed``), the input and launch cards still said
    ``ms_per_step`` 0.0 and the device-share card ``device_compute_ms`` 0.0 -- times per step of a step the window
    does not hold, beside that card's own null ``avg_step_ms``.  Each is null now, on the host's cards and the
    session's, and the ``no-gpu-step`` law holds."""
    from tests.support.properties import no_gpu_session_step_problems, no_gpu_step_problems

    report = _analyzed(str(TRACE))
    (host,) = report.hosts
    for cards in (host.headline, report.headline):
        said = {(c.id, k): c.detail[k] for c in cards for k in ("ms_per_step", "device_compute_ms")
                if k in (c.detail or {})}
        # main: input_wait_share and launch_wait_share 0.0 ms per step, device_step_share 0.0 ms of device compute
        assert said and set(said.values()) == {None}, said
    assert no_gpu_step_problems(host.host, host) == [] and no_gpu_session_step_problems(report) == []


def test_the_law_sees_a_time_per_step_on_a_card():
    """The law can fail on a card's time per step, of the host and of the session."""
    import dataclasses

    from tb_gpu_advisor.model.schema import Metric
    from tests.support.properties import no_gpu_session_step_problems, no_gpu_step_problems

    report = _analyzed(str(TRACE))
    (host,) = report.hosts
    card = Metric(id="input_wait_share", label="", value=None, unit="", display="", detail={"ms_per_step": 0.0})
    assert no_gpu_step_problems("h0", dataclasses.replace(host, headline=[card])) == [
        "no-gpu-step: h0: card input_wait_share holds ms_per_step 0.0 in a window without GPU work"]
    assert no_gpu_session_step_problems(dataclasses.replace(report, headline=[card])) == [
        "no-gpu-step: session: card input_wait_share holds ms_per_step 0.0 in a window without GPU work"]
