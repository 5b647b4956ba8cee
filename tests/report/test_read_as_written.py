"""Kept reports read as their user reads them (issue #37, h37-review10): four sentences that contradicted their own
numbers, their rule's promise or the capture, each now a property of ``tests/support/properties.py`` walked over every
report by ``tests/report/test_properties.py``.

* ``one-count`` -- the launch-bound finding's assumption counted the launches a fused graph still makes before the
  verdict decided what the wait is: ``wild/cloverleaf_a100_cuda`` read "the GPU waits for the host to dispatch each
  op ... 92 of 125 kernels per step" and assumed "(92 kernels per step)", its small ones, and saved for them; the
  nsys FSDP pair printed "980.5 kernels per step on average" and assumed "980".
* ``ceiling`` -- ``xla_not_used`` is "Never critical: the guide calls XLA optional", yet the raise to the savings
  made the lone V100 BERT's CRITICAL beside the criticals it out-saved.
* ``in-use`` -- the small-grid fix ended "or let torch.compile fuse the small ops" on ``wild/d2d_v100`` and
  ``h200_jobs/torch_compile_cudagraphs_inference``, whose traces show torch.compile in use; d2d_v100's in-use words
  claimed "Inductor's Triton kernels", of which its 2022 trace holds none (``CompiledFunction`` only).
* ``share-of`` -- step_gaps read "idle 131 us between steps on average (max 142 us), 21.1% of the 221 us step"
  (59% as printed): the share left out the 84 us of launch dispatch in each gap without saying so.
"""

from __future__ import annotations

import copy
import re

import pytest

from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.model.schema import Finding, Report
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.run_report import run_report, v100_bert_report
from tests.support.properties import (ceiling_problems, count_value_problems, in_use_problems, report_violations,
                                      share_of_time_problems)

_report = run_report


def _only(r: Report, rule: str) -> Finding:
    (f,) = [f for h in r.hosts for f in h.findings if f.rule == rule]
    return f


def _v100_bert(tmp_path_factory) -> Report:
    return v100_bert_report(tmp_path_factory.mktemp("lone"))


# --------------------------------------------------------------------------- one-count: launch_bound's assumption


def _fused_graph_saving(f: Finding) -> float:
    """What launch_bound's assumption says it saves, from its own detail: the wait less one launch's wait and 1 us
    for each launch a fused graph still makes -- every kernel where the title reads the wait as the host's cost per
    op, the small ones where it reads it as many small kernels."""
    d = f.metric.detail
    per_op = f.title.endswith("dispatch each op")
    launched = d["kernels_per_step"] if per_op else d["small_kernels_per_step"]
    wait = d["launch_wait_ms"]
    return wait - wait / d["kernels_per_step"] - launched * T("launch.fused_us_per_kernel") / 1000.0


@pytest.mark.parametrize("where, run", [(SHARED_PROFILES / "nsys", "fsdp_mfu_before")])
def test_launch_bound_assumes_the_launches_its_title_names(where, run):
    """fsdp_mfu_before's wait is the host's cost per op (its title): a fused graph still launches all its kernels,
    and the assumption and the saving say so (cloverleaf_a100_cuda was the vehicle until h37-pexsi booked its launch
    wait to its uploads' staging).  jax_mi300x was the second case until h37-calls67: its step-level launch wait is
    saved across steps (several steps per jitted call, no graph's one launch left) and told by its host-bound finding;
    its count said in that assumption is checked below."""
    if not where.is_dir():
        pytest.skip(f"{where} absent")
    r = _report(where, run)
    f = _only(r, "launch_bound")
    assert not count_value_problems("host", f)
    # beside it, where the host's GPUs meet at the collectives and one paces them, the others' wait for its launches
    # (h37-late67: fsdp_mfu_before's GPU1, 2.75 ms), said in the assumption
    paced = sum(x["ms"] for x in f.saving.recovers if x["pool"] == "gpu_wait")
    assert (paced > 0) == ("the pacing GPU's launches" in f.saving.assumption)
    assert f.saving.ms_per_step == pytest.approx(_fused_graph_saving(f) + paced, abs=0.003)


def test_launch_bound_of_many_small_kernels_keeps_its_saving():
    """Control: where the verdict keeps "many small kernels" (hf_generate_llama's decode), the assumption counts the
    small kernels, as before."""
    f = _only(_report(FIXTURES / "h200_jobs", "hf_generate_llama"), "launch_bound")
    assert not f.title.endswith("dispatch each op")
    assert not count_value_problems("host", f)
    assert f.saving.ms_per_step == pytest.approx(_fused_graph_saving(f), abs=0.0015)


def test_a_count_said_twice_with_two_values_is_caught():
    # hf_generate_llama's decode since h37-calls67: jax_mi300x's launch finding, the vehicle before, is told inside
    # its host-bound finding, whose summary says no kernel count
    f = copy.deepcopy(_only(_report(FIXTURES / "h200_jobs", "hf_generate_llama"), "launch_bound"))
    said = "391 small kernels per step"
    assert said in f.saving.assumption
    f.saving.assumption = f.saving.assumption.replace(said, "390 small kernels per step")
    assert any(v.startswith("one-count") for v in count_value_problems("host", f))


# --------------------------------------------------------------------------- ceiling: what a rule promises


def test_xla_off_is_never_critical(tmp_path_factory):
    """The lone V100 BERT's XLA finding saves 51.7% beside criticals saving less: it stays a warning, as its rule
    promises; the criticals it out-saves stay critical (control: the raise still works for the others)."""
    r = _v100_bert(tmp_path_factory)
    (h,) = r.hosts
    xla = _only(r, "xla_not_used")
    assert xla.severity == "warning"
    assert not ceiling_problems(h.host, h.findings) and not ceiling_problems("session", r.findings)
    casts = _only(r, "dtype_casts")
    assert casts.severity == "critical" and casts.saving.percent_of_step < xla.saving.percent_of_step
    assert not [v for v in report_violations(r) if v.startswith(("order", "severity", "ceiling"))]


def test_a_grade_above_the_rules_promise_is_caught(tmp_path_factory):
    r = copy.deepcopy(_v100_bert(tmp_path_factory))
    _only(r, "xla_not_used").severity = "critical"
    assert any(v.startswith("ceiling") for v in report_violations(r))


# --------------------------------------------------------------------------- in-use: a fix the trace shows in use


@pytest.mark.parametrize("where", [("wild", "d2d_v100"), ("h200_jobs", "torch_compile_cudagraphs_inference")])
def test_a_compiled_trace_is_not_told_to_compile(where):
    """Both traces show torch.compile in use: the small-grid finding gives its other fixes and says why not that one."""
    r = _report(FIXTURES / where[0], where[1])
    (h,) = r.hosts
    assert "compiled" in h.capture["applied"]
    assert not in_use_problems(h.host, h)
    f = _only(r, "small_grid")
    assert "Already in use, so not suggested: torch.compile" in " ".join(f.summary.split())
    assert f.actions and not any("torch.compile" in a.text or "torch.compile(" in (a.snippet or "") for a in f.actions)


def test_an_eager_trace_is_still_told_to_compile():
    """Control: hta_v100 runs no compiled code; its small-grid finding keeps the compiler among its fixes."""
    r = _report(FIXTURES / "wild", "hta_v100")
    (h,) = r.hosts
    assert "compiled" not in (h.capture.get("applied") or {})
    assert any("torch.compile" in a.text or "torch.compile(" in (a.snippet or "") for a in _only(r, "small_grid").actions)


def test_the_in_use_words_say_what_the_trace_holds():
    """d2d_v100's trace shows torch.compile by its compiled functions alone (no ``triton_`` kernel): its words claim
    no Triton kernel; torch_compile_cudagraphs_inference ran Inductor's Triton kernels, and says so (control)."""
    d2d = _report(FIXTURES / "wild", "d2d_v100").hosts[0]
    assert not any(k[0].startswith("triton_") for k in (d2d.kernels.rows if d2d.kernels else []))
    assert "Triton kernels in the trace" not in d2d.capture["applied"]["compiled"]
    compiled = _report(FIXTURES / "h200_jobs", "torch_compile_cudagraphs_inference").hosts[0]
    assert "Triton kernels in the trace" in compiled.capture["applied"]["compiled"]


def test_a_compiler_told_again_is_caught():
    r = copy.deepcopy(_report(FIXTURES / "wild", "d2d_v100"))
    f = _only(r, "small_grid")
    f.actions[0].text += " Or let torch.compile fuse the small ops."
    assert any(v.startswith("in-use") for v in report_violations(r))


# --------------------------------------------------------------------------- share-of: a share of what it says


def test_the_gaps_share_is_of_the_time_it_names():
    """The share is of the gap less what other checks own; the sentence now names that part, and the printed share
    is the metric's own (control: the judged share is unchanged)."""
    f = _only(_report(FIXTURES / "h200_jobs", "torch_compile_cudagraphs_inference"), "step_gaps")
    assert not share_of_time_problems("host", f)
    d = f.metric.detail
    assert d["launch_ms"] > 0.05 * d["avg_gap_ms"]  # the dispatch the share leaves out: named, with its number
    assert "of it the next work's dispatch" in " ".join(f.summary.split())
    assert f"{100 * f.metric.value:.1f}% of the" in " ".join(f.summary.split())


def test_a_share_of_an_unnamed_part_is_caught():
    f = copy.deepcopy(_only(_report(FIXTURES / "h200_jobs", "torch_compile_cudagraphs_inference"), "step_gaps"))
    f.summary = re.sub(r" \(\d+ us of it [^)]*\)", "", f.summary)  # the share as main printed it: its part unsaid
    assert any(v.startswith("share-of") for v in share_of_time_problems("host", f))


@pytest.mark.parametrize("where, run", [(FIXTURES / "wild", "lazy_first_launch_t4"), (FIXTURES / "waits", "event_sync_a100")])
def test_launch_bound_of_a_few_kernels_is_not_titled_many(where, run):
    """(h37-auditleft31) Real captures of 3 and 4 kernels a step (read by hand: lazy_first_launch_t4's loop launches
    3 kernels an iteration, event_sync_a100's 4): the title follows the count its own summary states."""
    f = _only(_report(where, run), "launch_bound")
    assert f.metric.detail["kernels_per_step"] <= T("launch_bound.step_calls")
    assert "many" not in f.title, f.title  # main: "Launch-bound: many small kernels, ..."
    assert "few kernels" in f.title


@pytest.mark.parametrize("where, run, trains", [(FIXTURES / "wild", "hf_qwen_h100", False),
                                                (FIXTURES / "h200_jobs", "torch_compile_cudagraphs_inference", False),
                                                (FIXTURES / "wild", "d2d_v100", True)])
def test_small_grids_fix_fits_the_job(where, run, trains):
    """(h37-auditleft31) ``small_grid``'s example batches a per-parameter update (``torch._foreach_mul_(params,
    0.9)``, an optimizer's code) only to a training job: hf_qwen_h100's forward passes and the compiled inference
    were shown it on main.  The control, d2d_v100 (a training loop), keeps it."""
    f = _only(_report(where, run), "small_grid")
    code = " ".join(a.snippet or "" for a in f.actions)
    assert ("_foreach_mul_(params" in code) == trains, code  # main: in every job's fix
    assert "torch.stack(items)" in code


@pytest.mark.parametrize("where, run, hedged", [(FIXTURES / "h200_waits", "jax_train_float_loss", False),
                                                (FIXTURES / "h200_memory", "jax_mem_mlp", False),
                                                (FIXTURES / "h200_jobs", "jax_jit_inference", True)])
def test_jax_batch_size_hedge_only_where_the_kind_is_unknown(where, run, hedged):
    """(h37-auditleft31) JAX's ``batch_size_headroom`` said "(in training, check convergence ...)" to jobs read as
    training at high confidence (a hedge for work of no known kind): a training job is told to check convergence,
    plainly.  The control: a forward pass read at low confidence (no ``inference`` tag: work of no known kind)
    keeps the hedge."""
    r = _report(where, run)
    f = _only(r, "batch_size_headroom")
    text = " ".join(a.text for a in f.actions)
    assert ("in training," in text) == hedged, text  # main: the hedge in every JAX job's fix
    assert "check convergence" in text


def test_step_gap_share_keeps_the_parts_it_does_not_say():
    """(h37-auditleft31) "idle G between steps ..., S of the step outside input wait": where no other part is said,
    S is G less the input wait, of the cycle -- one value.  wild/cuda_only_a4000_swin_fwd read "idle 1.64 ms ...
    13.7% of the 11.5 ms step" on main, its 62 us of dispatch (under a twentieth of the gap) out of the share and
    said nowhere: 1.64 / 11.52 is 14.3%."""
    f = _only(_report(FIXTURES / "wild", "cuda_only_a4000_swin_fwd"), "step_gaps")
    d = f.metric.detail
    assert " of it " not in f.summary.split(" outside input wait")[0], f.summary  # no part said beside the share
    want = (d["avg_gap_ms"] - d["input_wait_ms"]) / d["avg_cycle_ms"]
    assert f.metric.value == pytest.approx(want, abs=6e-4), (f.metric.value, want)  # main: 0.1373 for 0.1427
