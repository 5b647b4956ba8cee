"""The words of a report fit the window it holds, beyond the findings' own (h37-words21, after h37-words20).

A capture read as one pass (``steps.types.UNMARKED_SOURCES``) marks no step, yet its text header read "1 host, 1 step,
step 432.6 ms", each saving "(54% of the step)", the verdict and "If every fix lands: step ~..." -- beside findings
saying "of the 432.6 ms pass".  Some rules wrote their own "off the step" / "(3% of the step)" (small_grid,
xla_not_used); ``rules.base.Ctx.step_noun`` is now their one home.  A possible first call's host-bound note offered
CUDA graphs before recording the steady state it says is missing; a kernel trace alone told how PyTorch places ops.
Controls: several steps keep "N steps, step X" and "/step"; a marked one step keeps "the step"; a capture with a host
keeps the framework's op-placement words; a host-bound finding of no first call keeps its launch fix first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report import render
from tests.support.cli_report import cli_report
from tests.support.contradictions import rendered_step_problems, window_words_problems
from tests.support.paths import FIXTURES
from tests.support.unmarked_pass import GPT2, gpt2_as_unmarked_pass

WILD = FIXTURES / "wild"


def _report(name: str, tmp_path: Path | None = None) -> Report:
    """The kept run's report; gpt2_b200_one_step, given ``tmp_path``, read as one unmarked pass
    (``tests.support.unmarked_pass``: its one ``training_step`` range marks its one step since h37-wild55k)."""
    if not (WILD / name).is_dir():
        pytest.skip("wild fixture absent")
    if name == GPT2.name and tmp_path is not None:
        return Report.from_dict(cli_report(gpt2_as_unmarked_pass(tmp_path)))
    return Report.from_dict(cli_report(WILD / name))


@pytest.mark.parametrize("name", ["rocprof_aiter_mi355x", "gpt2_b200_one_step", "tp_rtx4090_two_ranks"])
def test_a_one_pass_report_renders_the_pass(name: str, tmp_path: Path) -> None:
    """Main: "(1 host, 1 step, step 432.6 ms)", "If every fix lands: step ~...", "saves ~10.6 ms (94% of the step)"."""
    rep = _report(name, tmp_path)
    text = render.to_text(rep, top=None)
    head = text.splitlines()[0]
    # a pass that is the start-up (tp_rtx4090_two_ranks' cold forward, 43% one-time costs) says so (h37-startonly)
    assert "one pass of " in head and head.endswith((", no step marked)", ", no steady step)")), head
    assert head.count("step") == 1, head
    assert "of the pass)" in text or not any(f.saving for f in rep.findings)
    assert rendered_step_problems(rep) == [] and window_words_problems(rep) == []


def test_the_checker_reads_the_step_words_of_a_one_pass_report(tmp_path: Path) -> None:
    """The checker is no check that cannot fail: main's words in a one-pass report's text are each found."""
    rep = _report("gpt2_b200_one_step", tmp_path)
    real = render.to_text
    main_words = {"one pass of 11.3 ms, no step marked": "1 step, step 11.3 ms", "of the pass)": "of the step)",
                  "If every fix lands: pass ~": "If every fix lands: step ~"}

    def as_main(r: Report, *a, **k) -> str:
        out = real(r, *a, **k)
        for new, old in main_words.items():
            out = out.replace(new, old)
        return out

    try:
        render.to_text = as_main
        found = " ".join(rendered_step_problems(rep))
    finally:
        render.to_text = real
    assert "(header)" in found and "(every fix)" in found and "(saving)" in found


@pytest.mark.parametrize("name,unit", [("cloverleaf_a100_cuda", None), ("compiled_a100_triton", "step")])
def test_steps_the_capture_marks_keep_their_words_control(name: str, unit: str | None) -> None:
    rep = _report(name)
    text = render.to_text(rep, top=None)
    head = text.splitlines()[0]
    assert ", step " in head and "pass" not in head
    assert ("/step (" in text) if unit is None else ("of the step)" in text and "of the pass)" not in text)


def test_a_one_pass_rules_share_is_of_the_pass() -> None:
    """cuda_reduce_baseline (one pass of a CUDA sample): small_grid said "could take up to 1.00 s off the step"."""
    rep = _report("cuda_reduce_baseline")
    (f,) = [f for f in rep.hosts[0].findings if f.rule == "small_grid"]
    assert "off the pass (" in f.summary and "the step" not in f.summary


def test_a_possible_first_call_leads_with_the_steady_capture() -> None:
    """compiled_a100_triton: one torch.compile'd call, "this host time may be the first call's one-time cost", was told
    CUDA graphs first; it now points first to recording steady iterations (the few-steps finding's schedule fix,
    listed above it), then the launch fixes."""
    rep = _report("compiled_a100_triton")
    (f,) = [f for f in rep.hosts[0].findings if f.title.startswith("Host-bound")]
    assert "first call's one-time cost" in f.summary
    assert "steady iterations after warm-up" in f.actions[0].text and "Too few steps" in f.actions[0].text
    assert any("CUDA graphs" in a.text for a in f.actions[1:])


def test_a_host_bound_pass_of_no_first_call_keeps_its_fix_control() -> None:
    """cold_a100_alexnet: a pass its ranges bound after its warm-up forward is no first call: its fix is unchanged."""
    rep = _report("cold_a100_alexnet")
    (f,) = [f for f in rep.hosts[0].findings if f.title.startswith("Host-bound")]
    assert "first call's one-time cost" not in f.summary and "steady iterations" not in f.actions[0].text


@pytest.mark.parametrize("name,hostless", [("rocprof_aiter_mi355x", True), ("fsdp_mi350x_kernel_trace", True),
                                           ("cold_a100_alexnet", False)])
def test_a_kernel_trace_alone_tells_no_op_placement(name: str, hostless: bool) -> None:
    """Main: "PyTorch places each op on the device of its tensors" on a rocprof kernel trace alone (PyTorch named by
    its ATen kernels, no op recorded).  A capture with its host keeps the framework's words (the control)."""
    rep = _report(name)
    (card,) = [m for m in rep.hosts[0].headline if m.id == "host_op_share"]
    assert ("PyTorch places each op" in card.meaning) is not hostless
    assert ("nothing of the host" in card.meaning) is hostless
    assert not hostless or window_words_problems(rep) == []
