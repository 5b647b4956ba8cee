"""The rest of a one-step window's words, and a native program's 16-bit reason (h37-words24, after h37-words23).

1. h37-words23 composed "share of the {step}" in seven threshold meanings; the others said "share of step time"
   (``input_bound.warning``, ``excessive_memcpy.warning``, ``launch_bound.warning``, ``comm_exposed.warning``, ...),
   JAX's ``host_sync:meaning`` too, and the rules' metric labels "Input wait share of step", "Blocking copy time share
   of step", "Exposed communication share of step" -- beside summaries saying "of the 1.32 s pass" on a capture read as
   one pass.  Now each is written with a ``{step}`` and filled at the one home (``rules.base._in_words`` through
   ``Ctx.window_words`` for a host's finding, ``rules._job.job_finding`` for the job's); ``dtype_casts``' title "a
   large share of the {step}" likewise.  The docs fill "step": docs/rules.md keeps "share of step time".
2. The 16-bit card of a native program said "MatMul/Conv kernels are 0.0% of the kernel time" for a program whose one
   kernel ``mat_mult`` is 100% of it: the rule never ran (a GPU program's own code has no precision setting,
   ``frameworks.native``), and its families are libraries' GEMMs.  A rule the framework does not apply says the
   framework's reason (``rules.quiet_reason``).  Control: a PyTorch capture with no library GEMM keeps its reason.
"""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from tb_gpu_advisor.common.thresholds import THRESHOLDS, of_window
from tb_gpu_advisor.frameworks import jax as jax_fw
from tb_gpu_advisor.frameworks import native
from tb_gpu_advisor.model.schema import Finding, Report
from tb_gpu_advisor.rules.registry import REGISTRY
from tests.support.cli_report import first_report
from tests.support.contradictions import _one_unmarked_pass, window_words_problems
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"


def _report(path: Path) -> Report:
    if not path.is_dir():
        pytest.skip(f"{path} absent")
    return Report.from_dict(first_report(path))


def _by_rule(rep: Report, rule: str) -> list[Finding]:
    return [f for f in rep.findings if f.rule == rule and f.metric is not None]


@pytest.fixture(scope="module")
def loader_pass() -> Report:
    """wild/loader_pass_rtx5070ti: one ResNet-50 pass with its loader, no step marked (one pass): input_bound and
    excessive_memcpy fire, each with a threshold's "share of step time" meaning and a "share of step" label on main."""
    return _report(WILD / "loader_pass_rtx5070ti")


def test_a_one_pass_hosts_metrics_are_shares_of_the_pass(loader_pass: Report) -> None:
    """Main: "Input wait share of step" / "share of step time the GPUs are idle while the host waits for input ..." and
    "Blocking copy time share of step" / "share of step time in non-input memcpy ..." beside "of the ... pass"."""
    (h,) = loader_pass.hosts
    assert _one_unmarked_pass(h), h.steps
    (inp,) = _by_rule(loader_pass, "input_bound")
    assert inp.metric.label == "Input wait share of pass", inp.metric.label
    assert inp.metric.meaning.startswith("share of pass time the GPUs are idle while the host waits for input")
    (cp,) = _by_rule(loader_pass, "excessive_memcpy")
    assert cp.metric.label == "Blocking copy time share of pass", cp.metric.label
    assert cp.metric.meaning.startswith("share of pass time in non-input memcpy"), cp.metric.meaning
    assert window_words_problems(loader_pass) == []


def test_a_job_findings_label_is_of_the_pass() -> None:
    """wild/tp_rtx4090_two_ranks (two tensor-parallel ranks, one pass each): the session's exposed-communication
    finding said "Exposed communication share of step" / "share of step time in collective kernels ..."."""
    rep = _report(WILD / "tp_rtx4090_two_ranks")
    (f,) = _by_rule(rep, "comm_exposed")
    assert f.metric.label == "Exposed communication share of pass", f.metric.label
    assert f.metric.meaning.startswith("share of pass time in collective kernels"), f.metric.meaning
    assert window_words_problems(rep) == []


def test_jax_host_sync_meaning_names_the_window() -> None:
    """JAX's own host-sync meaning (a framework's words, not the table's) is written of the window too."""
    said = jax_fw.FRAMEWORK.label("host_sync:meaning")
    assert of_window(said, "pass").startswith("share of pass time the GPUs are idle after the program's waits"), said
    assert of_window(said).startswith("share of step time the GPUs are idle"), said


def test_dtype_casts_title_says_the_jobs_window() -> None:
    """The synthetic autocast forward pass, one ProfilerStep (one marked step of an inference job): its findings say
    "of the ... forward pass"; main's title said "Dtype casts take a large share of the step".  The registered title
    (docs, MCP) keeps "the step"."""
    from synthetic import torchtrace as tt
    from tb_gpu_advisor.runtime.pipeline import analyze_session

    with tempfile.TemporaryDirectory() as d:
        (path,) = tt.write_run(d, "autocast_forward", steps=1, run="casts_one")
        rep = analyze_session("casts_one", "s", [SimpleNamespace(host="h0", path=path, format="kineto", size=0)])
    (f,) = [f for f in rep.findings if f.rule == "dtype_casts"]
    assert "of the" in f.summary and "forward pass" in f.summary, f.summary
    assert f.title == "Dtype casts take a large share of the forward pass", f.title
    assert f.metric.meaning.startswith("share of forward pass time in dtype-conversion kernels"), f.metric.meaning
    assert REGISTRY["dtype_casts"].title == "Dtype casts take a large share of the step"


def test_the_docs_keep_share_of_step_time() -> None:
    """Control: the threshold table's docs fill "step" (``Threshold.meaning_of``); no placeholder reaches them."""
    t = THRESHOLDS["input_bound.warning"]
    assert "{step}" in t.meaning and t.meaning_of().startswith("share of step time the GPUs are idle while the host")
    docs = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    assert "share of step time the GPUs are idle while the host waits for input" in docs and "{step}" not in docs
    assert "Dtype casts take a large share of the step" in docs


def test_the_checker_catches_mains_share_of_step(loader_pass: Report) -> None:
    """The property's new part can fail: main's label and meaning planted back into a copy of the one-pass report."""
    r = copy.deepcopy(loader_pass)
    (h,) = r.hosts
    fid = _by_rule(r, "input_bound")[0].id
    for f in (x for x in [*h.findings, *r.findings] if x.id == fid):  # the host's and the report's copy
        f.metric.label = "Input wait share of step"
        f.metric.meaning = f.metric.meaning.replace("share of pass time", "share of step time")
    found = " | ".join(window_words_problems(r))
    assert f"{fid} metric label meaning: 'share of step'" in found, found
    assert f"{fid} metric meaning: 'share of step'" in found, found


def test_the_checker_catches_an_unfilled_label(loader_pass: Report) -> None:
    r = copy.deepcopy(loader_pass)
    (h,) = r.hosts
    fid = _by_rule(r, "excessive_memcpy")[0].id
    for f in (x for x in [*h.findings, *r.findings] if x.id == fid):
        f.metric.label = "Blocking copy time share of {step}"
    assert f"{fid} metric label meaning: an unfilled '{{step}}'" in " | ".join(window_words_problems(r))


def _sixteen_bit_reason(rep: Report) -> str:
    (h,) = rep.hosts
    (card,) = [m for m in h.headline if m.id == "sixteen_bit_share"]
    return str((card.detail or {}).get("not_flagged", ""))


def test_a_native_programs_own_matmul_is_not_0_percent_matmul() -> None:
    """wild/matmul_rtx3060_laptop_pinned_sync: one kernel, the program's own ``mat_mult``, 100% of the kernel time.
    Main: "MatMul/Conv kernels are 0.0% of the kernel time, under the 10.0% at which precision limits the step"."""
    said = _sixteen_bit_reason(_report(WILD / "matmul_rtx3060_laptop_pinned_sync"))
    assert said == native.FRAMEWORK.not_applicable["mixed_precision_off"], said
    assert "precision setting (its precision is the algorithm's)" in said and "MatMul/Conv" not in said


def test_a_framework_capture_without_library_gemms_keeps_its_reason_control() -> None:
    """wild/cold_mi300x_norm (PyTorch, a normalization layer's kernels, no GEMM): the rule ran and was quiet for the
    reason it states -- unchanged."""
    said = _sixteen_bit_reason(_report(WILD / "cold_mi300x_norm"))
    assert said.startswith("MatMul/Conv kernels are 0.0% of the kernel time, under the 10.0%"), said
