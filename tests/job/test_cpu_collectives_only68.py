"""A window of a CPU backend's collectives alone is said as such, with that case's fixes (issue #37 class 1, h37-gloo68).

Princeton COS 568's DistLM traces (Anderson-Lee-Git/COS568-DistLM-SP26 ``RTE/task_2a/trace_{0..3}.json``, 12-17 MB,
not fetched: h37-huntk68) hold BERT fine-tuning on 4 ranks over Gloo on the CPU, each parameter's gradient gathered
to rank 0 and scattered back: 69,038 ``gloo:gather`` / ``gloo:scatter`` annotations on two threads that are not the
main one, no op, no step mark, no GPU record, ``Op count`` 0.  On base such a window read "No GPU activity in the
capture ... Was the GPU visible to PyTorch?" with ``ProfilerActivity.<DEVICE>`` as the fix -- the advice of a GPU job
whose device records were lost.  It now reads as the job's reading decides it (``Kind.window`` "collectives_only",
``Kind.collectives_backend``): the collectives ran on the CPU by the backend's nature, none of the job's work was
recorded, and the fixes are the GPUs' own library for a GPU job and the job's own ops for the capture.

Generator (truth by construction): ``synthetic.torchtrace.write_collectives_only(backend="gloo" | "mpi")``, one rank's
trace of that job as the profiler kept it.  The real file could not be read here; the NCCL-only real filter keeps its
reading (``tests/report/test_collectives_only_one_pass67.py``, ``tests/rules/test_collectives_only66.py``).

Fail on base 87428cfe: the kind's window, the finding, the fixes and the title (the controls pass there).
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from synthetic.torchtrace import write_collectives_only
from tb_gpu_advisor.cli.report import exit_code
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.report.render import to_text
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics


def _rank(tmp_path, backend: str = "gloo", rank: int = 0, edit=None):
    path = tmp_path / f"trace_{rank}.json"
    truth = write_collectives_only(str(path), edit=edit, backend=backend, rank=rank, world=2)
    return path, truth


@pytest.mark.parametrize("backend,library", [("gloo", "Gloo"), ("mpi", "MPI")])
def test_a_cpu_backends_collectives_alone_are_said_with_that_cases_fixes(tmp_path, backend, library):
    """Fails on base: no window, "No GPU activity in the capture", the visible-GPU fix."""
    path, truth = _rank(tmp_path, backend)
    m = host_metrics(read_trace(str(path)))
    kind = m.job.kind
    assert (kind.kind, kind.window, getattr(kind, "collectives_backend", "")) == ("no_gpu", "collectives_only", library)
    assert not kind.times_gpu_step
    assert f"{truth['collectives']:,} {library} collectives" in kind.evidence
    assert all(f"`{name}` x{n:,}" in kind.evidence for name, n in truth["by_name"].items()), kind.evidence
    assert f"{truth['threads']} host threads" in kind.evidence and "no op" in kind.evidence
    assert m.capture.collectives_only == truth["collectives"]
    said = [f for f in evaluate(m) if f.severity != "ok"]
    assert [(f.rule, f.severity, f.metric.id) for f in said] == [("capture_quality", "warning", "collectives_only")]
    (f,) = said
    assert f"only {library}'s collectives, on the CPU" in f.title
    assert "visible" not in f.summary and "filtered" not in f.summary, f.summary
    assert f"its process group was made on {library} where" in f.summary  # PyTorch's words (its label), not the rule's
    code = "\n".join(a.snippet or "" for a in f.actions)
    assert "init_process_group(backend='nccl')" in code and ".to(local_rank" in code  # a GPU job: its library, device
    assert "schedule(" in code and "ProfilerActivity.CPU" in code  # the capture: the job's own ops and steps
    assert "is_available()" not in code  # not the lost-records fix


def test_a_session_of_gloo_ranks_is_titled_by_its_collectives_and_exits_as_no_gpu_work_does(tmp_path):
    """Fails on base: "no step: the window holds no GPU work" and "the work ran on the CPU" of an unrecorded job.
    The exit code is every window without GPU work's: 0, or 1 for a warning under ``--fail-on warning``."""
    paths = [_rank(tmp_path, rank=r)[0] for r in range(2)]
    rep = analyze_session("run", "s", [SimpleNamespace(host=p.stem, path=str(p), format="kineto") for p in paths])
    text = to_text(rep)
    assert "(2 hosts, Gloo collectives only, on the CPU: no GPU work, no step of the job in it)" in text.splitlines()[0]
    assert "Job: no GPU work: Gloo's collectives alone, on the CPU" in text
    assert "No GPU activity" not in text and "the work ran on the CPU" not in text, text
    h = json.loads(json.dumps(rep.to_dict()))["hosts"][0]
    assert h["job"]["collectives_backend"] == "Gloo" and h["job"]["no_gpu_step"] == "the window holds no GPU work"
    assert h["steps"]["found"] == 0 and "Gloo's collectives alone" in h["steps"]["note"]
    assert (exit_code([rep], None), exit_code([rep], "warning"), exit_code([rep], "critical")) == (0, 1, 0)


def _with_an_op(doc: dict) -> None:
    """The main thread's op beside the collectives: the window recorded the job's own work."""
    main = next(e for e in doc["traceEvents"] if e.get("name") == "thread_name" and e["tid"] == e["pid"])
    first = doc["traceEvents"][0]
    doc["traceEvents"].insert(0, {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": main["pid"],
                                  "tid": main["tid"], "ts": first["ts"] - 900.0, "dur": 800.0,
                                  "args": {"External id": 7, "Record function id": 0, "Ev Idx": 0}})


def test_collectives_beside_an_op_are_not_collectives_alone(tmp_path):
    """Control (passes on base): an op recorded beside the collectives is the job's own work on the CPU, which the
    other readers read (``wild/cpu_only_gloo``'s 10 all-reduces beside a step mark and its ops keep their reading)."""
    path, _ = _rank(tmp_path, edit=_with_an_op)
    m = host_metrics(read_trace(str(path)))
    assert m.job.kind.kind == "no_gpu" and m.job.kind.window != "collectives_only"
    assert not getattr(m.job.kind, "collectives_backend", "") and not m.capture.collectives_only
