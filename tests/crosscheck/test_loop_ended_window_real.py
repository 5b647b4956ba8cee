"""A window that opened after the loop's last batch is no model on the CPU (issue #37, class 1; h37-survey55).

ryienh/gnn-ops-benchmark ``log/tensorboard/AttentiveFPREG_FakeDataset_train/thetagpu11_934191.1644389933042.pt.trace.json``
(BSD-3-Clause, Argonne; kept as ``tests/fixtures/wild/loop_ended_a100_gnn``): a PyTorch Geometric AttentiveFP
training loop on an A100-SXM4-40GB (ThetaGPU), PyTorch 1.8-1.10, its model and each batch moved to ``cuda``
(``profile/profile_models.py``), profiled with ``schedule(wait=1, warmup=1, active=3, repeat=2)`` over a loader of 2
batches (128 fake graphs, 80% for training, batch 64).  Read by hand: the window holds one ``ProfilerStep#2``
(543 us) whose only op is one ``_SingleProcessDataLoaderIter.__next__`` (34 us) with nothing after it -- the fetch that
found the loader exhausted -- plus the ``aten::zeros`` / ``aten::empty`` / ``aten::zero_`` handles ``record_function``
makes in PyTorch 1.8-1.10, and the profiler's own ``cudaDeviceSynchronize`` as it stops; no kernel.  On main it read
"the work ran on the CPU ... move the model and its inputs there": the model was on the GPU, its steps ran before the
window.

Controls, built from the same file: a model op after the fetch (a model on the CPU) keeps main's reading; a second
fetch is a loop over its input, not its end; without the step marks nothing says the loop ended.
"""

from __future__ import annotations

import copy
import gzip
import json

from tests.support.paths import FIXTURES
from tests.support.run_report import capture_quality_finding, one_file_host

TRACE = FIXTURES / "wild" / "loop_ended_a100_gnn" / "thetagpu11_934191.1644389933042.pt.trace.json.gz"
FETCH = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
LOOP_ENDED = "The capture window opened after the loop's last batch: none of the job's steps in it"


def _doc() -> dict:
    with gzip.open(TRACE, "rt") as f:
        return json.load(f)


def _window_finding(tmp_path, doc: dict) -> dict:
    """The capture-quality finding of ``doc`` written as a one-file session."""
    path = tmp_path / "cut.pt.trace.json"
    path.write_text(json.dumps(doc))
    return capture_quality_finding(one_file_host(str(path), "kineto"))


def _fetch(doc: dict) -> dict:
    (e,) = [e for e in doc["traceEvents"] if e.get("name") == FETCH]
    return e


def _text(f: dict) -> str:
    return " ".join([f["summary"], *(a.get("text", "") + " " + (a.get("snippet") or "") for a in f["actions"])])


def test_a_window_after_the_last_batch_is_the_loops_end_not_a_model_on_the_cpu():
    host = one_file_host(str(TRACE), "kineto")
    job, f = host["job"], capture_quality_finding(host)
    assert job["kind"] == "no_gpu", job
    assert f["title"] == LOOP_ENDED, f["title"]
    said = _text(f)
    assert "`ProfilerStep#2`" in said and FETCH in said and "34 us" in said, said
    assert "ran on the CPU" not in said and "move the model" not in said.lower(), said
    assert "wait + warmup + active" in said and "len(loader)" in said, said


def test_a_model_op_after_the_fetch_is_a_model_on_the_cpu(tmp_path):
    doc = _doc()
    fetch = _fetch(doc)
    op = copy.deepcopy(fetch)
    op.update(name="aten::addmm", ts=fetch["ts"] + fetch["dur"] + 5, dur=40)
    doc["traceEvents"].append(op)
    f = _window_finding(tmp_path, doc)
    assert f["title"] != LOOP_ENDED and "ran on the CPU" in f["summary"], f


def test_a_second_fetch_is_a_loop_over_its_input_not_its_end(tmp_path):
    doc = _doc()
    fetch = _fetch(doc)
    again = copy.deepcopy(fetch)
    again.update(ts=fetch["ts"] - 80)  # inside the step, before the last one
    doc["traceEvents"].append(again)
    f = _window_finding(tmp_path, doc)
    assert f["title"] != LOOP_ENDED, f


def test_without_the_step_marks_nothing_says_the_loop_ended(tmp_path):
    doc = _doc()
    doc["traceEvents"] = [e for e in doc["traceEvents"] if not str(e.get("name", "")).startswith("ProfilerStep#")]
    f = _window_finding(tmp_path, doc)
    assert f["title"] != LOOP_ENDED, f


def test_the_fix_proposes_a_schedule_the_loop_that_ended_could_run(tmp_path):
    """h37-schedfit: the loop ran 2 batches (``ProfilerStep#2`` found the loader exhausted); main's fix proposed
    ``wait, warmup, active = 1, 1, 3`` -- 5 steps of a 2-step loop, the failure the finding names.  Now its schedule
    fits the 2 steps the window numbers.  Control: the same window numbered ``ProfilerStep#7`` (a loop of 7 steps,
    which the general schedule fits) keeps the general schedule, with the condition to check."""
    f = capture_quality_finding(one_file_host(str(TRACE), "kineto"))
    assert _schedule(f) == (0, 1, 1), _text(f)
    assert "ran 2 batches" in _text(f), _text(f)

    doc = _doc()
    for e in doc["traceEvents"]:
        if e.get("name") == "ProfilerStep#2":
            e["name"] = "ProfilerStep#7"
    g = _window_finding(tmp_path, doc)
    assert g["title"] == LOOP_ENDED, g["title"]
    assert _schedule(g) == (1, 1, 3) and "batches (`ProfilerStep#" not in _text(g), _text(g)
    assert "assert wait + warmup + active <= len(loader)" in _text(g), _text(g)


def _schedule(f: dict) -> tuple[int, ...]:
    """The (wait, warmup, active) a finding's fix proposes."""
    (code,) = [a["snippet"] for a in f["actions"] if "wait, warmup, active = " in (a.get("snippet") or "")]
    return tuple(int(x) for x in code.split("wait, warmup, active = ", 1)[1].split("\n", 1)[0].split(", "))


def test_a_short_window_states_its_length_in_a_unit_that_shows_it():
    """h37-survey55's Left 3: this 0.8 ms window read "This 0.00 s window"; a length says what it is (``ms()``)."""
    said = capture_quality_finding(one_file_host(str(TRACE), "kineto"))["summary"]
    assert "0.00 s" not in said and "This 797 us window" in said, said


def test_the_loops_end_times_no_step_anywhere_in_its_json():
    """The loop's end marks one step (``ProfilerStep#2``, 0.54 ms: the fetch that found the input exhausted): none of
    the job's steps, as the finding says.  Merged, the report's JSON still held it as the step -- one step row, a card's
    ``avg_step_ms`` 0.543, an account of a 0.543 ms step -- under the title "no step: the window holds no GPU work"."""
    import os
    from types import SimpleNamespace

    from tb_gpu_advisor.runtime.pipeline import analyze_session
    from tests.support.properties import no_gpu_session_step_problems, no_gpu_step_problems

    report = analyze_session("w", "s", [SimpleNamespace(host="h0", path=str(TRACE), format="kineto",
                                                        size=os.path.getsize(TRACE))])
    (host,) = report.hosts
    assert host.job["marks_no_job_step"] is True, host.job
    assert no_gpu_step_problems("h0", host) == [] and no_gpu_session_step_problems(report) == []
    assert len(host.step_rows) == 0 and host.mean_step_ms() is None and not host.achievable, host.achievable
    assert all(c.detail.get("avg_step_ms") is None for c in host.headline if isinstance(c.detail, dict))


def test_the_law_holds_the_loops_end_to_no_step():
    """The law can fail here: the same report with its marked step put back in the account."""
    import dataclasses
    import os
    from types import SimpleNamespace

    from tb_gpu_advisor.runtime.pipeline import analyze_session
    from tests.support.properties import no_gpu_step_problems

    report = analyze_session("w", "s", [SimpleNamespace(host="h0", path=str(TRACE), format="kineto",
                                                        size=os.path.getsize(TRACE))])
    (host,) = report.hosts
    kept = dataclasses.replace(host, achievable={"step_ms": 0.543, "achievable_step_ms": 0.543})
    assert no_gpu_step_problems("h0", kept) == ["no-gpu-step: h0: a mean step of 0.54 ms in a window without GPU work",
                                                "no-gpu-step: h0: the account holds a step of 0.54 ms in a window "
                                                "without GPU work"]
