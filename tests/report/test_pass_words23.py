"""The last "one step" words of a one-pass report (h37-words23, after h37-words22).

A capture read as one pass (``steps.types.UNMARKED_SOURCES``) marks no step, yet on main its step reading said "the
whole capture is analysed as one step" (``whole_capture``, in the steps note and the capture-quality note) or "the
capture holds one optimizer step ..., so it is one step" (``single_pass`` of a training iteration), and its cards'
meanings "share of the step the GPU spends executing kernels", "share of the step the GPU was idle ...", "FLOPs per
step / (step time x ...)" -- each beside findings that say "of the 28.5 ms pass".  Session 23 composes them: each
meaning is written with a ``{step}`` (the thresholds' table, the frameworks' input-wait words, the rules' device share)
or an f-string of the window's noun (the cards, MFU), filled at the one home -- ``rules.base.Ctx.window_words`` for a
finding's metric, ``Ctx.step_noun`` / ``Ctx.per_step`` for the cards -- never reworded after (session 22's
``str.replace`` of finished text broke ``tests/rules/test_words_composed_not_reworded.py`` and was reverted).  The
step reading says "one pass".  Controls: a marked multi-step capture keeps its cards' "share of the step" and "FLOPs
per step"; the threshold table's docs keep "share of the step".
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from tb_gpu_advisor.common.thresholds import THRESHOLDS
from tb_gpu_advisor.model.schema import Report
from tests.support.cli_report import first_report
from tests.support.contradictions import window_words_problems
from tests.support.paths import FIXTURES
from tests.support.unmarked_pass import GPT2, gpt2_as_unmarked_pass

WILD = FIXTURES / "wild"


def _report(path: Path) -> Report:
    if not path.is_dir():
        pytest.skip(f"{path} absent")
    return Report.from_dict(first_report(path))


def _meanings(rep: Report) -> dict[str, str]:
    (h,) = rep.hosts
    return {m.id: m.meaning for m in h.headline}


@pytest.fixture(scope="module")
def reduce_baseline() -> Report:
    """wild/cuda_reduce_baseline: no step marker, no repeating work -- the whole window is the one pass."""
    return _report(WILD / "cuda_reduce_baseline")


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """wild/gpt2_b200_one_step: one training iteration (one optimizer step), read as one unmarked pass
    (``tests.support.unmarked_pass``: its ``training_step`` range renamed after the pass's phases)."""
    if not GPT2.is_dir():
        pytest.skip(f"{GPT2} absent")
    return _report(gpt2_as_unmarked_pass(tmp_path_factory.mktemp("gpt2_pass")))


def test_a_whole_capture_is_analysed_as_one_pass(reduce_baseline: Report) -> None:
    """Main: "no step markers found, nor repeating GPU activity: the whole capture is analysed as one step" (the steps
    note) and "no step found: the whole capture is analysed as one step" (the capture-quality note)."""
    (h,) = reduce_baseline.hosts
    assert h.steps["source"] == "whole_capture" and h.steps["count"] == 1
    assert "the whole capture is analysed as one pass; per-step numbers are capture totals" in h.steps["note"]
    assert h.capture["note"].startswith("no step found: the whole capture is analysed as one pass;"), h.capture["note"]
    assert "as one pass (low confidence)" in h.job["summary"], h.job["summary"]
    assert "as one step" not in h.capture["note"] + h.steps["note"] + h.job["summary"]
    assert window_words_problems(reduce_baseline) == []


def test_one_time_costs_lie_outside_the_pass(reduce_baseline: Report) -> None:
    """Main: "5.8% of the capture window is one-time costs outside the 1 step analysed (...). The step spans 1.05 s of
    the 1.17 s window; ... No step counts them, so nothing is to save." on the one pass the window was read as."""
    note = next(f.summary for f in reduce_baseline.findings if f.rule == "cold_start" and f.severity == "info")
    assert "5.8% of the capture window is one-time costs outside the pass analysed (" in note, note
    assert "The pass spans 1.05 s of the 1.17 s window" in note and "The pass does not count them, so nothing" in note
    assert window_words_problems(reduce_baseline) == []


def test_a_one_optimizer_step_pass_is_one_pass(gpt2: Report) -> None:
    """Main: "the capture holds one optimizer step (an update runs once per iteration), so it is one step"."""
    (h,) = gpt2.hosts
    assert h.steps["source"] == "single_pass"
    assert "holds one optimizer step (an update runs once per iteration), so it is one pass, whatever" in \
        h.steps["note"], h.steps["note"]
    assert window_words_problems(gpt2) == []


def test_a_one_pass_hosts_cards_mean_shares_of_the_pass(gpt2: Report, reduce_baseline: Report) -> None:
    """Main: every card meant "share of the step ..." and the MFU card "FLOPs per step / (step time x ...)"; the
    findings' device-share metric "share of the step the device executes"."""
    m = _meanings(gpt2)
    assert m["device_step_share"] == "share of the pass the GPU spends executing kernels (guide 1: maximize)"
    assert m["launch_wait_share"].startswith("share of the pass the GPU was idle waiting for the host")
    assert m["input_wait_share"].startswith("share of the pass the GPU was idle while the training loop waited")
    assert m["mfu"].startswith("FLOPs in the pass / (pass time x the GPU's dense bf16 peak)"), m["mfu"]
    metrics = [f.metric.meaning for f in gpt2.findings if f.metric is not None and f.metric.id == "device_step_share"]
    assert metrics and all(x.startswith("share of the pass the device executes") for x in metrics), metrics
    assert _meanings(reduce_baseline)["device_step_share"].startswith("share of the pass ")


def test_marked_steps_keep_their_cards_meanings_control() -> None:
    """h200_memory/torch_mem_activations (ProfilerStep-marked steps): the cards still mean shares of the step (main's
    words, unchanged)."""
    m = _meanings(_report(FIXTURES / "h200_memory" / "torch_mem_activations"))
    assert m["device_step_share"] == "share of the step the GPU spends executing kernels (guide 1: maximize)"
    assert m["launch_wait_share"].startswith("share of the step the GPU was idle")
    assert m["mfu"].startswith("FLOPs per step / (step time x ") or "not" in m["mfu"], m["mfu"]


def test_the_checker_catches_mains_one_step_words(gpt2: Report) -> None:
    """The property's new parts can fail: main's words planted back into a copy of the one-pass report are found."""
    r = copy.deepcopy(gpt2)
    (h,) = r.hosts
    h.steps["note"] = h.steps["note"].replace("so it is one pass", "so it is one step")
    h.steps["note"] += "; the whole capture is analysed as one step"
    f0 = h.findings[0]  # the one-time costs' note as main wrote it, planted in any summary (the host's and the report's)
    for f1 in (x for x in [*h.findings, *r.findings] if x.id == f0.id):
        f1.summary += " 5.8% of the capture window is one-time costs outside the 1 step analysed. The step spans 1 s."
    card = next(m for m in h.headline if m.id == "device_step_share")
    card.meaning = card.meaning.replace("share of the pass", "share of the step")
    mfu = next(m for m in h.headline if m.id == "mfu")
    mfu.meaning = mfu.meaning.replace("FLOPs in the pass / (pass time", "FLOPs per step / (step time")
    shares = [f for f in [*h.findings, *r.findings] if f.metric is not None and f.metric.id == "device_step_share"]
    for f in shares:  # the host's and the report's copy
        f.metric.meaning = f.metric.meaning.replace("share of the pass", "share of the step")
    found = " | ".join(window_words_problems(r))
    for said in ("steps note: 'it is one step'", "steps note: 'analysed as one step'",
                 "device_step_share card meaning: 'share of the step'", "mfu card meaning: 'per step / (step time'",
                 f"{f.id} metric meaning: 'share of the step'", f"{f0.id} summary: 'the 1 step analysed'",
                 f"{f0.id} summary: 'The step spans'"):
        assert said in found, (said, found)


def _metric_meanings(rep: Report, metric_id: str | None = None) -> dict[str, str]:
    (h,) = rep.hosts
    return {f.id: f.metric.meaning for f in h.findings
            if f.metric is not None and (metric_id is None or f.metric.id == metric_id)}


def test_a_thresholds_meaning_is_said_of_the_pass() -> None:
    """wild/held_pass_rtx5070ti (one ViT pass, no step marked): the capture-quality metric takes its meaning from the
    threshold table (``capture.unseen_share``); main said "share of the step the host waits for GPU work the trace does
    not hold" beside a summary of the pass."""
    said = _metric_meanings(_report(WILD / "held_pass_rtx5070ti"))
    unseen = [v for k, v in said.items() if k.endswith("#before_capture_share")]
    assert unseen and unseen[0].startswith("share of the pass the host waits for GPU work the trace does not hold"), said
    assert not any("{step}" in v or "share of the step" in v for v in said.values()), said


def test_one_marked_step_says_the_jobs_word() -> None:
    """One marked step is said in the job's word, as its findings say "of the 19.1 ms engine step" (``Ctx.step_noun``):
    hf_qwen_h100's one ProfilerStep of a forward pass, vllm_b200_tp8's one engine step.  Main: "share of the step"."""
    qwen = _meanings(_report(WILD / "hf_qwen_h100"))
    assert qwen["device_step_share"] == "share of the forward pass the GPU spends executing kernels (guide 1: maximize)"
    assert qwen["launch_wait_share"].startswith("share of the forward pass the GPU was idle waiting for the host")
    vllm = _report(WILD / "vllm_b200_tp8")
    assert _meanings(vllm)["device_step_share"].startswith("share of the engine step the GPU spends executing")
    idle = _metric_meanings(vllm, "device_step_share")
    assert idle and all(v.startswith("share of the engine step the device executes") for v in idle.values()), idle


def test_the_threshold_table_keeps_the_step_in_its_docs() -> None:
    """Control: the docs' threshold table (``rules.docs``) says "share of the step", no placeholder reaches them."""
    t = THRESHOLDS["capture.unseen_share"]
    assert "{step}" in t.meaning  # the table writes the window as a placeholder ...
    assert t.meaning_of().startswith("share of the step the host waits for GPU work")  # ... the docs fill "step"
    assert t.meaning_of("pass").startswith("share of the pass the host waits")
    docs = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    assert "share of the step the host waits for GPU work" in docs and "{step}" not in docs


def test_the_checker_catches_an_unfilled_window(gpt2: Report) -> None:
    """The property catches a meaning that skipped the one home: a card's or a finding's metric's "{step}"."""
    r = copy.deepcopy(gpt2)
    (h,) = r.hosts
    card = next(m for m in h.headline if m.id == "device_step_share")
    card.meaning = "share of the {step} the GPU spends executing kernels"
    f0 = next(f for f in h.findings if f.metric is not None)
    for f in (x for x in [*h.findings, *r.findings] if x.id == f0.id and x.metric is not None):  # the host's, the report's
        f.metric.meaning = "share of the {step} the device executes"
    found = " | ".join(window_words_problems(r))
    assert "device_step_share card meaning: an unfilled '{step}'" in found, found
    assert f"{f0.id} metric meaning: an unfilled '{{step}}'" in found, found
