"""A capture read as one pass says "the pass", never "step", in its tables' titles, findings and cards
(h37-onepass2, after h37-onepass).

h37-onepass filled the labels and meanings; the tables' titles ("Top GPU kernels (kept steps, all GPUs)", "Memory
copies per step", the rules' evidence "(kept steps, all GPUs)", "Input wait per step (ms)"), the MFU card's note "no
GPU kernels in kept steps" (``metrics.flops``) and a few sentences (a capped saving's "shortens the step", memory "held
across steps", the low-confidence cap's "rests on steps that are a guess", the cold start's "outside its steps", the
allocator's "the steps' one cudaFree call", the launch card's "one kernel a step") still named steps the capture does
not hold, beside findings saying "of the 79.7 ms pass".  Each is now composed from the window's one home
(``common.thresholds.of_window``: ``{kept}``, ``{per_step}``, ``{step}``; ``rules.base.Ctx.step_noun`` / ``one_pass``).

``tests.support.properties.one_pass_words_problems`` (``one-pass-words``, in ``report_violations``) reads every
one-pass host's titles, findings and cards for a step word, but for those a one-pass report needs (said why there).
"""

from __future__ import annotations

import dataclasses

import pytest

from tb_gpu_advisor.common.thresholds import of_window
from tb_gpu_advisor.model.schema import Finding, HostReport, Report
from tests.support.cli_report import kept_report
from tests.support.contradictions import _one_unmarked_pass
from tests.support.paths import FIXTURES
from tests.support.properties import one_pass_words_problems

WILD = FIXTURES / "wild"


def _finding(r: Report, rule: str) -> Finding:
    (f,) = [f for f in r.hosts[0].findings if f.rule == rule]
    return f


def _card(h: HostReport, mid: str) -> str:
    (m,) = [m for m in h.headline if m.id == mid]
    return " | ".join([m.meaning or "", *(v for v in (m.detail or {}).values() if isinstance(v, str))])


#: (run, what the report now says, where): each a one-pass capture whose report said a step on main (main's words in
#: the comment); one_pass_words_problems finds nothing on each now
_SAID = {
    # "Top GPU kernels (kept steps, all GPUs)", "Top ATen ops (kept steps, all GPUs)", "Memory copies per step";
    # allocator_churn's "the steps' one cudaFree call" and "leave the steady steps"
    "cold_a100_alexnet": lambda r: (r.hosts[0].kernels.title, r.hosts[0].ops.title, r.hosts[0].memcpy.title,
                                    _finding(r, "allocator_churn").summary,
                                    _finding(r, "allocator_churn").saving.assumption),
    # the MFU card's "no GPU kernels in kept steps"
    "cpu_model_a100": lambda r: (_card(r.hosts[0], "mfu"),),
    # input_bound's "Input wait per step (ms)", "over 1 step", "the previous step's compute"
    "loader_pass_rtx5070ti": lambda r: (_finding(r, "input_bound").evidence[0].title, _finding(r, "input_bound").summary,
                                        _finding(r, "input_bound").saving.assumption),
    # cold_start's "The window holds one-time costs outside its steps"
    "cuda_reduce_baseline": lambda r: (_finding(r, "cold_start").title,),
    # "A warning, not critical: it rests on steps that are a guess"; a capped saving's "shortens the step"
    "vit_a4000_avg_batch": lambda r: (_finding(r, "tensor_core_unused").summary,
                                      _finding(r, "tensor_core_unused").saving.assumption),
    # memory_near_capacity's "At the peak: held across steps (parameters, caches) ..."
    "vllm_mi300x_capture": lambda r: (_finding(r, "memory_near_capacity").summary,),
    # the launch card's "one kernel a step: batching launches into a graph ..."
    "matmul_rtx3060_laptop_pinned_sync": lambda r: (_card(r.hosts[0], "launch_wait_share"),),
}
_NOW = {
    "cold_a100_alexnet": ("Top GPU kernels (the pass, all GPUs)", "Top ATen ops (the pass, all GPUs)",
                          "Memory copies in the pass", "the pass's one cudaFree call runs", "calls leave the pass "),
    "cpu_model_a100": ("no GPU kernels in the pass",),
    "loader_pass_rtx5070ti": ("Input wait in the pass (ms)", "over the pass;", "the previous pass's compute"),
    "cuda_reduce_baseline": ("The window holds one-time costs outside the pass",),
    "vit_a4000_avg_batch": ("it rests on a pass that is a guess", "shortens the pass ("),
    "vllm_mi300x_capture": ("held from before the pass (parameters, caches)",),
    "matmul_rtx3060_laptop_pinned_sync": ("one kernel in the pass: batching launches",),
}


@pytest.mark.parametrize("run", sorted(_SAID))
def test_a_kept_one_pass_capture_says_the_pass(run: str) -> None:
    r = kept_report(WILD / run)
    (h,) = r.hosts
    assert _one_unmarked_pass(h), h.steps
    said = " || ".join(_SAID[run](r))
    for words in _NOW[run]:
        assert words in said, (words, said)
    assert one_pass_words_problems(h) == []


def test_the_check_reads_each_place_a_step_was_said() -> None:
    """main's words put back, one place at a time, on a one-pass host: each is found; the words a one-pass report
    needs ("no step markers found", "every per-step number is the pass's total", advice to record "a few
    steady-state steps", the "optimizer step") are not."""
    r = kept_report(WILD / "cold_a100_alexnet")
    h = r.hosts[0]
    assert one_pass_words_problems(h) == []
    f, tc = _finding(r, "allocator_churn"), _finding(r, "tensor_core_unused")
    broken = [
        dataclasses.replace(h, kernels=dataclasses.replace(h.kernels, title="Top GPU kernels (kept steps, all GPUs)")),
        dataclasses.replace(h, memcpy=dataclasses.replace(h.memcpy, title="Memory copies per step")),
        dataclasses.replace(h, findings=[dataclasses.replace(f, summary=f.summary + " Shapes change every step.")]),
        dataclasses.replace(h, findings=[dataclasses.replace(tc, evidence=[dataclasses.replace(
            tc.evidence[0], title="TC-eligible kernels not using Tensor Cores (kept steps, all GPUs)")])]),
        dataclasses.replace(h, headline=[dataclasses.replace(m, meaning="no GPU kernels in kept steps")
                                         for m in h.headline]),
    ]
    assert all(one_pass_words_problems(b) for b in broken), [one_pass_words_problems(b) for b in broken]
    needed = ("No step markers found: the whole capture is one pass; every per-step number is the pass's total. "
              "Capture a few steady-state steps, and its optimizer step.")
    assert one_pass_words_problems(dataclasses.replace(h, findings=[dataclasses.replace(f, summary=needed)])) == []


def test_the_check_reads_no_programs_dotted_name() -> None:
    """A name of the program's own quoted in a finding (DeepSpeed's ``DeepSpeedZeroOptimizer_Stage3.step``, where its
    host waited: the walk's ``--forms12`` seed 112161, 4 ranks of one ZeRO-3 pass) is its word, not a step the report
    says; the same summary saying "per step" after it is still found."""
    r = kept_report(WILD / "cold_a100_alexnet")
    h, f = r.hosts[0], _finding(r, "allocator_churn")
    named = "The host waited in the pass (in DeepSpeedZeroOptimizer_Stage3.step \u00d71; 20 us in the wait)."
    assert one_pass_words_problems(dataclasses.replace(h, findings=[dataclasses.replace(f, summary=named)])) == []
    said = dataclasses.replace(h, findings=[dataclasses.replace(f, summary=named + " It waits once per step.")])
    assert len(one_pass_words_problems(said)) == 1


def test_the_check_reads_no_host_of_several_steps() -> None:
    """The control: a host of several steps keeps every step word, and the check passes it by."""
    r = kept_report(WILD / "compiled_v100_param_allreduce")
    h = r.hosts[0]
    assert h.steps["count"] > 1
    assert h.kernels.title == "Top GPU kernels (kept steps, all GPUs)"
    assert h.memcpy.title == "Memory copies per step"
    said = " ".join(f.summary + " " + (f.saving.assumption if f.saving else "") for f in h.findings)
    assert "held across steps" in said and "shortens the step" in said
    assert one_pass_words_problems(h) == []


@pytest.mark.parametrize("run, words", [
    ("resnet_rtx2080ti_slow_workers", "Input wait per step (ms)"),  # 28 steps
    # 2 guessed steps (streams_pinned_copies until h37-onepass32, which reads its one pass as one)
    ("cuda_only_a4000_swin_fwd", "it rests on steps that are a guess"),
])
def test_hosts_of_steps_keep_their_words(run: str, words: str) -> None:
    r = kept_report(WILD / run)
    said = " ".join([f.summary for f in r.findings] + [t.title for f in r.findings for t in f.evidence])
    assert words in said


def test_the_window_words_fill_a_kept_window() -> None:
    """``{kept}`` is "kept steps" over steps, the one window's noun where the capture holds one (one home: every table
    title and note is filled by it)."""
    assert of_window("Top GPU kernels ({kept}, all GPUs)") == "Top GPU kernels (kept steps, all GPUs)"
    assert of_window("Top GPU kernels ({kept}, all GPUs)", "pass") == "Top GPU kernels (the pass, all GPUs)"
    assert of_window("Memory copies {per_step}", "forward pass") == "Memory copies in the forward pass"
    assert of_window("Memory copies {per_step}") == "Memory copies per step"


def test_a_one_pass_findings_confidence_is_of_the_pass() -> None:
    """The text, the markdown and the tab's words beside a low-confidence saving: "(the pass)" on a one-pass host
    (vit_a4000_avg_batch, its pass read from the GPU's bursts); main said "low confidence (steps)"."""
    from tb_gpu_advisor.report import render
    from tb_gpu_advisor.report.view import display

    r = kept_report(WILD / "vit_a4000_avg_batch")
    text, md = render.to_text(r, top=None), "\n".join(render.to_markdown(r, top=None).splitlines())
    assert "low confidence (the pass)" in text and "low confidence (the pass)" in md
    assert "confidence (steps)" not in text + md
    shown = [d["confidence"] for d in display(r)["findings"]]
    assert "low confidence (the pass)" in shown and "low confidence (steps)" not in shown


def test_a_guess_of_steps_keeps_its_confidence_words() -> None:
    """The control: cuda_only_a4000_swin_fwd's two steps guessed from the GPU's bursts are "low confidence (steps)"
    (streams_pinned_copies' until h37-onepass32 read its copies' burst as part of its one pass)."""
    from tb_gpu_advisor.report import render

    r = kept_report(WILD / "cuda_only_a4000_swin_fwd")
    assert r.hosts[0].steps["count"] > 1
    assert "low confidence (steps)" in render.to_text(r, top=None)
