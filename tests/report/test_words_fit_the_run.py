"""Words that fit the run (issue #37, h37-review10's leftovers): a fix's code in the spelling every framework version
the trace could be accepts, or both spellings with the version named where none does.

* ``wild/d2d_v100`` (2022) and ``wild/resnet_rtx2080ti_slow_workers`` date no PyTorch: on main their float16 fix
  said ``torch.amp.GradScaler('cuda')``, PyTorch 2.3's spelling; now ``torch.cuda.amp.GradScaler()``.
* the lone V100 BERT (TF 2.4) holds no version in its XPlane: on main ``@tf.function(jit_compile=True)`` (TF 2.5's
  spelling) stood alone; now a comment names TF 2.5 and TF 2.1-2.4's ``experimental_compile=True``.
"""

from __future__ import annotations


import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import pytorch, tensorflow
from tb_gpu_advisor.model.schema import Report
from tests.support.paths import DDP_EXPORT, FIXTURES, gunzipped
from tests.support.run_report import run_report, v100_bert_report
from tests.support.properties import report_violations
from tests.support.report_store import session_report

_report = run_report


def _code(r: Report) -> str:
    return "\n".join(a.snippet or "" for h in r.hosts for f in h.findings for a in f.actions)


@pytest.mark.parametrize("run", ["d2d_v100", "resnet_rtx2080ti_slow_workers"])
def test_an_undated_pytorch_trace_is_told_the_grad_scaler_every_version_has(run):
    code = _code(_report(FIXTURES / "wild", run))
    assert "torch.cuda.amp.GradScaler()" in code
    assert "torch.amp.GradScaler(" not in code


def test_a_trace_dated_2_3_or_newer_keeps_the_device_generic_grad_scaler():
    """The control: PyTorch 2.3 on (and every vendor but the two CUDA-API ones) keeps the fix as written."""
    fw = pytorch.FRAMEWORK
    a = fw.fix("loss_scaling_gaps")[0]
    for vendor in ("NVIDIA", "AMD"):
        assert fw.fit(a, vendor, (2, 3)) is a
        assert "torch.cuda.amp.GradScaler()" in (fw.fit(a, vendor, (2, 1)).snippet or "")
        assert "torch.cuda.amp.GradScaler()" in (fw.fit(a, vendor, None).snippet or "")
    assert fw.fit(pytorch.COMPILE, "NVIDIA", None) is pytorch.COMPILE


def test_tf_jit_compile_names_the_version_it_needs_on_an_undated_xplane(tmp_path):
    r = v100_bert_report(tmp_path)
    told = [a.snippet or "" for h in r.hosts for f in h.findings for a in f.actions
            if "jit_compile=True" in (a.snippet or "")]
    assert told
    for code in told:
        assert "TF 2.5 or newer" in code and "experimental_compile=True" in code
        assert code.count("TF 2.5 or newer") == 1


def test_tf_dated_2_5_or_newer_is_told_jit_compile_alone():
    fw = tensorflow.FRAMEWORK
    a = tensorflow.JIT_COMPILE
    assert fw.fit(a, "NVIDIA", (2, 5)) is a
    assert fw.fit(tensorflow.TF_FUNCTION, "NVIDIA", None) is tensorflow.TF_FUNCTION


# --------------------------------------------------------------------------- counts of one step, one other GPU


def _ddp(tmp_path) -> Report:
    """The kept CS336 DDP export, gunzipped (discovery names a ``.sqlite.gz`` and reads none)."""
    gunzipped(DDP_EXPORT, tmp_path / "ddp")
    (s,) = discover(str(tmp_path))
    return session_report(s)


def test_one_other_gpu_is_the_other_gpu_in_its_one_step(tmp_path):
    """ddp_overlap_rtx3090: two GPUs, one kept step.  Main: "AllReduce takes 27.8 ms per step ... the others spend
    33.6 ms more per step inside it"; now "AllReduce takes 27.8 ms in the pass ... the other GPU spends 33.6 ms more
    inside it" (no step is marked: the one step is the pass the capture was read as, h37-words3)."""
    r = _ddp(tmp_path)
    (f,) = [f for h in r.hosts for f in h.findings if f.rule == "allreduce_slow"]
    assert "the other GPU spends" in f.summary and "the others" not in f.summary
    assert "per step" not in f.summary and "in the pass" in f.summary and "ms step" not in f.summary
    assert not report_violations(r)  # the walk's properties (``the-others``, ``one-step``) hold on it


def test_the_others_stay_plural_beside_several():
    from tb_gpu_advisor.rules.base import the_others

    assert the_others(1, "GPU", "spend", "the others spend") == "the other GPU spends"
    assert the_others(3, "GPU", "spend", "the others spend") == "the others spend"
    assert the_others(1, "rank", "wait") == "the other rank waits"
    assert the_others(7, "rank", "wait") == "the other 7 ranks wait"


def test_a_chain_that_runs_once_is_not_said_to_recur(tmp_path):
    """The one-step TF BERT: main "2 recurring chains ... The most frequent has 568 kernels and occurs 1 time in 1
    step"; now "2 chains ... The largest has 568 kernels and runs once in the step"."""
    (f,) = [f for h in v100_bert_report(tmp_path).hosts for f in h.findings
            if f.rule == "xla_not_used"]
    assert "recurring" not in f.summary and "1 time" not in f.summary and "runs once in the step" in f.summary


def test_chains_of_several_steps_still_recur():
    """The control: demo_logs' launch_bound run (8 steps) keeps "recurring chains ... occurs N times in 8 steps"."""
    from tb_gpu_advisor.discover.logdir import find_session
    from tests.support.paths import DEMO_LOGS

    s = find_session(discover(str(DEMO_LOGS)), "launch_bound", "2026_01_01_00_00_00")
    (f,) = [f for f in session_report(s).findings if f.rule == "xla_not_used"]
    assert "recurring chain" in f.summary and "The most frequent has" in f.summary


def test_job_rules_ask_the_job_for_the_step_phrase():
    """The job-scope rules (comm_exposed, comm_bandwidth_low, alltoall_imbalance, rank_straggler) wrote "of each ...
    step" / "per step" themselves; they ask :class:`JobView` now, which says "of the ... step" where every host kept
    one (the walk's ``one-step`` property reads the session's findings too)."""
    from tb_gpu_advisor.metrics.job import JobView, RankRow

    ranks = [RankRow("a", 0, 20.0, 10.0, 5.0, 5.0), RankRow("a", 1, 20.0, 10.0, 5.0, 5.0)]
    one = JobView("pytorch", ["H100"] * 2, ranks, one_step=True, kind="inference", kind_confidence="high")
    many = JobView("pytorch", ["H100"] * 2, ranks)
    assert one.of_step() == "of the 20.0 ms forward pass" and one.per_step == "in the forward pass"
    assert many.of_step() == "of each 20.0 ms step" and many.per_step == "per step"


# --------------------------------------------------------------------------- one quantity, one name


def test_the_allocator_limit_has_one_name_in_the_finding_and_the_table(tmp_path):
    """The TF BERT's BFC allocator may take 14.4 GiB of the V100's 15.8 GiB.  Main: the finding said "the 14.4 GiB its
    allocator took" (no reserved amount is recorded: "peak reserved n/a") and the table's "capacity" cell a bare
    "14.4 GiB"; now both say it is the allocator's limit."""
    from tb_gpu_advisor.report import render

    r = v100_bert_report(tmp_path)
    (f,) = [f for h in r.hosts for f in h.findings if f.rule == "batch_size_headroom"]
    assert "limit of its allocator" in f.summary and "allocator took" not in f.summary
    rows = render.memory_rows(r)
    assert rows and all(row[4].endswith("(allocator limit)") for row in rows)
    assert all(row[3] == "n/a" for row in rows)  # reserved unknown: the limit is not said to be taken


def test_a_capacity_that_is_the_device_s_memory_keeps_its_bare_cell():
    """The control: a Kineto capture's capacity is the GPU's memory (``device memory``): "its 79.2 GiB", no label."""
    from tb_gpu_advisor.report import render

    r = _report(FIXTURES / "wild", "d2d_v100")
    rows = render.memory_rows(r)
    assert all("allocator limit" not in row[4] for row in rows)
