"""A capture read as one pass says no step in its labels and meanings, and the precision card says what it knows
(h37-onepass, after h37-words23 / h37-words24).

1. The labels that open with the step ("Step time in dtype casts", "Device step-time share", "Step time fusing
   element-wise chains would save", "Step share of the kernels fused attention does not run") and the meanings of a
   number "per step" (``rank_straggler.warning``, ``gpu_imbalance.warning``, ``launch_skew.warning``; the MFU card's
   "give the model's FLOPs per step and GPU") spoke of a step a one-pass capture does not hold, beside summaries of
   "the 3.72 ms pass".  ``common.thresholds.of_window`` now fills ``{Step}`` and ``{per_step}`` too, from the one
   home (``Ctx.window_words``, ``rules._job.job_finding``); the docs fill "step" and "per step".
   ``contradictions._CARD_STEP`` reads those words in every one-pass label and meaning, so the walks and
   ``test_properties`` check it on every report they draw.
2. The precision card of wild/rocprof_mxfp4_setup_gfx950 (an MXFP4 benchmark's set-up: random ``unsigned char``
   bytes shifted and OR-ed, no multiply) said "n/a: no dtype known" though every kernel's name types its bytes:
   it now says "n/a: integer byte data only" (``devices.integer_data_one``, ``Headline.integer_data_share``).

The one-pass captures of the rules no kept trace shows on one pass are synthetic: a torchtrace scenario of one step
with its ``ProfilerStep`` markers removed, so the truth (no step marked, one pass) is by construction.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from tb_gpu_advisor.common.thresholds import THRESHOLDS
from tb_gpu_advisor.model.schema import Report
from tests.support.cli_report import first_report, kept_report
from tests.support.contradictions import _one_unmarked_pass, window_words_problems
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"
#: a step named as the window a number is of, in a label or a meaning (the count "Steps kept" and "fewer complete
#: steps than this" of the capture-quality finding are about the step reading itself)
_STEP_UNIT = re.compile(r"\b[Ss]tep[- ](?:time|share)\b|\bper step\b|\bof (?:the )?step\b|\bthe step's\b")


def _unmarked(tmp: Path, scenario: str, steps: int = 1) -> Report:
    """The synthetic ``scenario`` of ``steps`` steps with no step marker (its ``ProfilerStep`` spans removed)."""
    from synthetic import torchtrace as tt

    for p in tt.write_run(str(tmp), scenario, steps=steps, run=scenario):
        doc = json.loads(Path(p).read_text(encoding="utf-8"))
        doc["traceEvents"] = [e for e in doc["traceEvents"] if not str(e.get("name", "")).startswith("ProfilerStep")]
        Path(p).write_text(json.dumps(doc), encoding="utf-8")
    return Report.from_dict(first_report(tmp / scenario))


@pytest.mark.parametrize("scenario, rule", [
    ("autocast_forward", "dtype_casts"),  # "Step time in dtype casts"
    ("ddp_straggler", "gpu_imbalance"),  # "(busiest - its peers' median) / busiest, per step"
    ("ddp_2x8_slow_rank", "rank_straggler"),  # "... above the other ranks' median, per step" (a job finding)
    ("ddp_launch_skew", "launch_skew"),  # "average spread of the GPUs' first-kernel start per step"
])
def test_a_one_pass_findings_metric_says_the_pass(tmp_path: Path, scenario: str, rule: str) -> None:
    rep = _unmarked(tmp_path, scenario)
    assert rep.hosts and all(_one_unmarked_pass(h) for h in rep.hosts), [h.steps for h in rep.hosts]
    (f,) = [f for f in rep.findings if f.rule == rule]
    said = f"{f.metric.label} | {f.metric.meaning}"
    assert not _STEP_UNIT.search(said), said
    assert "pass" in said, said
    assert window_words_problems(rep) == []


@pytest.mark.parametrize("run", ["rocprof_mxfp4_setup_gfx950",  # xla_not_used's "Step time fusing ..."; MFU card
                                 "xdit_flux_mi300x_capture",  # unfused_attention's "Step share of the kernels ..."
                                 "loader_pass_rtx5070ti",  # input_bound's "before the step's first op"
                                 "cuda_reduce_baseline"])  # "Device step-time share"; MFU "FLOPs per step and GPU"
def test_kept_one_pass_captures_label_the_pass(run: str) -> None:
    """Real captures read as one pass: every card's and finding metric's label and meaning is of the pass (main: the
    device-share card "Device step-time share" on each, and the words in the comments)."""
    rep = kept_report(WILD / run)
    (h,) = rep.hosts
    assert _one_unmarked_pass(h)
    said = [(m.label, m.meaning) for m in h.headline] + [(f.metric.label, f.metric.meaning) for f in rep.findings
                                                         if f.metric is not None and f.rule != "capture_quality"]
    assert [s for s in said if _STEP_UNIT.search(" | ".join(s))] == []
    assert window_words_problems(rep) == []
    assert h.headline[0].label == "Device pass-time share"


def test_one_marked_forward_pass_labels_say_it() -> None:
    """wild/hf_qwen_h100 (one ``ProfilerStep`` of a model's forward pass): its findings say "of the ... forward pass";
    main's labels "Device step-time share", "Step time fusing element-wise chains would save"."""
    rep = kept_report(WILD / "hf_qwen_h100")
    (h,) = rep.hosts
    assert h.headline[0].label == "Device forward-pass-time share"
    (f,) = [f for f in rep.findings if f.rule == "xla_not_used"]
    assert f.metric.label == "Forward pass time fusing element-wise chains would save" and "forward pass" in f.summary


def test_a_multi_step_capture_keeps_its_step_words_control(tmp_path: Path) -> None:
    """Control: the same DDP job, 6 marked steps: "per step" and "Device step-time share" as before."""
    from synthetic import torchtrace as tt

    tt.write_run(str(tmp_path), "ddp_straggler", steps=6, run="ddp")
    rep = Report.from_dict(first_report(tmp_path / "ddp"))
    (f,) = [f for f in rep.findings if f.rule == "gpu_imbalance"]
    assert f.metric.meaning == "(busiest GPU's compute - the median of its peers') / busiest GPU's compute, per step"
    assert all(h.headline[0].label == "Device step-time share" for h in rep.hosts)


def test_the_docs_keep_per_step() -> None:
    """Control: the threshold table's docs fill "step" and "per step" (``Threshold.meaning_of``)."""
    assert THRESHOLDS["gpu_imbalance.warning"].meaning_of() == \
        "(busiest GPU's compute - the median of its peers') / busiest GPU's compute, per step"
    docs = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    assert "busiest GPU's compute, per step" in docs and "first-kernel start per step, as a share of step time" in docs
    assert THRESHOLDS["headline.device_step_share.warning"].meaning_of() == \
        "device step-time share below this -> amber card"
    assert not re.search(r"\{(?:step|Step|per_step)\}", docs)


def test_a_one_marked_steps_straggler_meaning_says_in_the_step() -> None:
    """wild/dlrm_v100 (8 ranks, one marked step each): its summary says "in the step"; main's meaning "per step"."""
    rep = kept_report(WILD / "dlrm_v100")
    (f,) = [f for f in rep.findings if f.rule == "rank_straggler"]
    assert "in the step" in f.summary and f.metric.meaning.endswith("median, in the step"), f.metric.meaning


def test_the_checker_catches_mains_step_label() -> None:
    """The property's new part can fail: main's card label and straggler meaning planted into the one-pass report."""
    rep = kept_report(WILD / "rocprof_mxfp4_setup_gfx950")
    r = copy.deepcopy(rep)
    r.hosts[0].headline[0].label = "Device step-time share"
    r.hosts[0].headline[0].meaning = "a rank's extra time before the collectives, per step"
    found = " | ".join(window_words_problems(r))
    assert "device_step_share card label meaning: 'step-time'" in found, found
    assert "device_step_share card meaning: 'per step'" in found, found
    assert window_words_problems(rep) == []


def _precision_card(run: str):  # noqa: ANN202 - a Metric
    (h,) = kept_report(WILD / run).hosts[:1]
    (c,) = [m for m in h.headline if m.id == "sixteen_bit_share"]
    return c


def test_typed_bytes_are_said_not_denied() -> None:
    """wild/rocprof_mxfp4_setup_gfx950: all 10 kernels move ``unsigned char`` bytes (random fill, OR, shift), no
    arithmetic the card asks a precision of; main: "n/a: no dtype known"."""
    c = _precision_card("rocprof_mxfp4_setup_gfx950")
    assert c.value is None and c.display == "n/a: integer byte data only", c.display
    assert c.detail["integer_data_share"] == pytest.approx(1.0) and c.detail["unknown_precision_share"] == 1.0
    assert "8-bit" not in c.display  # not the card's word for 8-bit arithmetic (h37-int8share)


@pytest.mark.parametrize("run, display", [
    ("cuda_reduce_baseline", "n/a: no dtype known"),  # a reduce kernel whose name gives no type at all
    ("part_forward_a100", "96.1% known: 63.3% 16-bit"),  # index copies' ``char*`` beside known fp16/fp32 kernels
])
def test_control_other_cards_keep_their_display(run: str, display: str) -> None:
    """A card with known precision says its shares and no integer-data detail, even where some bytes are typed."""
    c = _precision_card(run)
    assert c.display == display and "integer_data_share" not in c.detail
