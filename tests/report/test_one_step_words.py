"""One-step captures say "of the 8.72 ms engine step", never "of each ... step" or "per step" (h37-left60).

~16 rules composed "of each X step" themselves, so a capture of one step (``wild/gpt2_b200_one_step``: "116 us per
step in 32-bit"; ``wild/sglang_b300_decode``: "11.7% of each 8.72 ms step") spoke of a mean over steps it does not
hold.  ``rules.base.Ctx.of_step`` / ``per_step`` / ``a_step`` are the phrase's one home, in the job's own word for
its step; the property ``one-step`` (tests/support/properties.py) walks every report.  Control: a capture of
several steps (``wild/cloverleaf_a100_cuda``, 8) still says "of each".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tb_gpu_advisor.common.fmt import ms
from tb_gpu_advisor.model.schema import Report
from tests.support.cli_report import cli_report
from tests.support.paths import FIXTURES
from tests.support.properties import one_step_problems
from tests.support.unmarked_pass import gpt2_as_unmarked_pass

WILD = FIXTURES / "wild"
ONE_STEP = ["gpt2_b200_one_step", "sglang_b300_decode", "nsfw_vit_h100", "part_forward_a100", "mcts_rtx3080_one_pass"]


@pytest.mark.parametrize("name", ONE_STEP)
def test_one_step_capture_says_the_step(name: str) -> None:
    if not (WILD / name).is_dir():
        pytest.skip("wild fixture absent")
    rep = Report.from_dict(cli_report(WILD / name))
    host = rep.hosts[0]
    assert host.steps["count"] == 1
    assert one_step_problems(host) == []


def test_the_job_word_for_its_one_step() -> None:
    """The job's word where the capture marks its one step (vLLM's one `execute_model` span, SGLang's one
    `step[DECODE bs=16]` -- its graph's kernels counted by the work its one launch starts, h37-xplane3: "engine
    step"); not where the one step is the pass the whole capture was read as, which its own note says may hold several
    calls launched back to back (vllm_mi300x_capture's pass of graph captures; h200_jobs
    torch_fp16_inference_unmarked: 10 forward calls)."""
    if not (WILD / "vllm_mi300x_decode").is_dir():
        pytest.skip("wild fixture absent")
    for run, marked in (("vllm_mi300x_decode", True), ("sglang_b300_decode", True), ("vllm_mi300x_capture", False)):
        host = cli_report(WILD / run)["hosts"][0]
        assert host["steps"]["count"] == 1
        step = next(c["detail"]["avg_step_ms"] for c in host["headline"] if c["id"] == "device_step_share")
        said = [f["summary"] for f in host["findings"] if f"of the {ms(step)} " in f["summary"]]
        assert said, run
        assert any(f"of the {ms(step)} engine step" in s for s in said) == marked, (run, said[:1])


def test_several_steps_keep_each() -> None:
    if not (WILD / "cloverleaf_a100_cuda").is_dir():
        pytest.skip("wild fixture absent")
    host = Report.from_dict(cli_report(WILD / "cloverleaf_a100_cuda")).hosts[0]
    assert host.steps["count"] > 1
    assert any("of each " in f.summary for f in host.findings)
    assert one_step_problems(host) == []


@pytest.mark.parametrize("run,unit,unmarked", [("gpt2_b200_one_step", "pass", True), ("gpt2_b200_one_step", "step", False),
                                               ("compiled_a100_triton", "step", False)])
def test_renderers_say_the_one_step(run: str, unit: str, unmarked: bool, tmp_path: Path) -> None:
    """The text and markdown reports' saving and the verdict say "of the step" for a one-step host, as its
    findings do (``report.verdict.one_step``); a several-step host keeps "/step" (the control).  The one pass an
    unmarked capture was read as (gpt2_b200_one_step with its range renamed after a phase, ``tests.support.
    unmarked_pass``: one iteration, no step mark) is "of the pass" (h37-words21); a step the capture marks
    (compiled_a100_triton's one ProfilerStep; gpt2_b200_one_step's one ``training_step`` range, h37-wild55k) stays
    "of the step"."""
    from tb_gpu_advisor.report import render

    if not (WILD / run).is_dir():
        pytest.skip("wild fixture absent")
    rep = Report.from_dict(cli_report(gpt2_as_unmarked_pass(tmp_path) if unmarked else WILD / run))
    text, md = render.to_text(rep, top=None), render.to_markdown(rep, top=None)
    assert "/step" not in text.split("HEADLINE")[0] and f"of the {unit})" in text
    saved = [line for line in md.splitlines() if line.startswith("- **Estimated saving:**")]
    assert saved and all(" per step " not in line and f" of the {unit} (" in line for line in saved)
    assert "/step" not in rep.verdict if isinstance(rep.verdict, str) else True
    several = Report.from_dict(cli_report(WILD / "cloverleaf_a100_cuda"))
    assert "/step (" in render.to_text(several, top=None)
