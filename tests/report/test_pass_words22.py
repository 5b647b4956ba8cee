"""A one-pass report never says "step 0", anywhere (h37-words22, after h37-words20/21 and h37-tabpass).

A capture read as one pass (``steps.types.UNMARKED_SOURCES``) numbers no step, yet on main its memory words said
"5.12 ms into step 0", the peak table (text, markdown, the tab) "step 0 +5.12 ms", the step reading's note "the first
step starts at its first work launched in the capture ... no part of the step" (made before any rule's ``Ctx``: it
now asks ``steps.types.unmarked_pass`` as every other surface does), the pass's phase ranges "the set-up before them
is not the step", the MFU card "GEMMs take 2.5% of the step: the rest of the step holds MFU down", the headroom "the
step's own 33.1 MiB", and the tab's window buttons "Show step 0" (now the server's ``display.findings[].window_names``,
its step hovers and memory bands ``display.hosts[].steps[].name``).  Each real capture below failed on main; the
controls (steps the capture marks) keep "step N".  The checker parts written for these words
(``contradictions._one_pass_step_words``, ``_tab_step_names``, ``_PEAK_AT_STEP``) are shown to catch main's words.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report import render
from tests.support.cli_report import first_report
from tests.support.contradictions import window_words_problems
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.unmarked_pass import GPT2, gpt2_as_unmarked_pass

WILD = FIXTURES / "wild"
NUMBERED = re.compile(r"(?<![\w.(])step \d+\b")


def _report(path: Path) -> Report:
    if not path.is_dir():
        pytest.skip(f"{path} absent")
    return Report.from_dict(first_report(path))


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """wild/gpt2_b200_one_step read as one unmarked pass (``tests.support.unmarked_pass``), its memory recorded."""
    if not GPT2.is_dir():
        pytest.skip(f"{GPT2} absent")
    return _report(gpt2_as_unmarked_pass(tmp_path_factory.mktemp("gpt2_pass")))


def test_a_one_pass_memory_peak_is_into_the_pass(gpt2: Report) -> None:
    """Main: "(0.0%, 5.12 ms into step 0, 9% of it)", the evidence's "peak at" cell alike, the peak table "step 0
    +5.12 ms", the headroom's "the step's own"."""
    (h,) = gpt2.hosts
    mem = next(f for f in h.findings if f.rule == "batch_size_headroom")
    assert "5.12 ms into the pass" in mem.summary and "the pass's own" in mem.summary, mem.summary
    cells = [c for t in mem.evidence for r in t.rows for c in r if isinstance(c, str)]
    assert any(c.startswith("5.12 ms into the pass") for c in cells), cells
    text, md = render.to_text(gpt2, top=None), render.to_markdown(gpt2, top=None)
    assert "the pass +5.12 ms" in text and "the pass +5.12 ms" in md
    assert gpt2.display["memory"]["rows"][0][6] == "the pass +5.12 ms"
    assert not NUMBERED.search(mem.summary + text + md)
    assert window_words_problems(gpt2) == []


def test_a_one_pass_mfu_card_says_the_rest_of_the_pass() -> None:
    """wild/part_forward_a100 (one forward pass, no step marked): main's card read "GEMMs take 2.5% of the step: the
    rest of the step holds MFU down"."""
    rep = _report(WILD / "part_forward_a100")
    (h,) = rep.hosts
    why = next(m for m in h.headline if m.id == "mfu").detail["not_flagged"]
    assert why == "GEMMs take 2.5% of the pass: the rest of the pass holds MFU down", why
    assert window_words_problems(rep) == []


@pytest.mark.parametrize("run", ["fsdp_mfu_before", "h100_fsdp_window"])
def test_a_one_pass_trimmed_head_starts_the_pass(run: str) -> None:
    """Nsight exports read as one pass whose window opens on work launched before it: main's note read "the first step
    starts at its first work launched in the capture ... no part of the step" (and "no part of a step" of the sync's
    wait on it); the times are unchanged."""
    rep = _report(SHARED_PROFILES / "nsys" / run)
    h = rep.hosts[0]
    note = h.steps["note"]
    assert "; the pass starts at its first work launched in the capture, after " in note, note
    assert "work from before the capture, no part of the pass" in note
    assert "first step" not in note and "part of the step" not in note and "part of a step" not in note
    assert window_words_problems(rep) == []


def test_a_pass_of_the_programs_phase_ranges_is_the_pass() -> None:
    """wild/cold_a100_alexnet: the pass is its own phase ranges; main: "the 12,840.9 ms of set-up before them is not
    the step".  The tab's buttons of its windows are the server's "the pass" (was "Show step 0"), its step row too."""
    rep = _report(WILD / "cold_a100_alexnet")
    (h,) = rep.hosts
    assert "the 12,840.9 ms of set-up before them is not the pass" in h.steps["note"], h.steps["note"]
    shown = [(f, d) for f, d in zip(rep.findings, rep.display["findings"]) if f.windows]
    assert shown and all(d["window_names"] == ["the pass"] * len(f.windows) for f, d in shown)
    assert {st["name"] for st in rep.display["hosts"][0]["steps"]} == {"the pass"}
    assert window_words_problems(rep) == []


def test_marked_steps_keep_their_numbers_control() -> None:
    """h200_memory/torch_mem_activations (ProfilerStep-marked steps): the peak stays "into step 5" / "step 5 +20.8
    ms" (as on main)."""
    rep = _report(FIXTURES / "h200_memory" / "torch_mem_activations")
    text = render.to_text(rep, top=None)
    assert "step 5 +20.8 ms" in text
    assert any("into step 5" in f.summary for f in rep.findings)
    assert window_words_problems(rep) == []


def test_the_tab_names_marked_steps_by_number() -> None:
    """The tab's new names (``display.findings[].window_names``, ``display.hosts[].steps[].name``) of marked steps are
    "step N", as the buttons and hovers composed them before."""
    rep = _report(FIXTURES / "h200_memory" / "torch_mem_activations")
    names = [n for d in rep.display["findings"] for n in d["window_names"] if n]
    assert names and all(re.fullmatch(r"step \d+", n) for n in names), names
    assert all(re.fullmatch(r"step \d+", st["name"]) for st in rep.display["hosts"][0]["steps"] if st)


def test_the_checker_catches_mains_words_of_a_one_pass_report(gpt2: Report) -> None:
    """The property's new parts can fail: main's words planted back into a copy of the one-pass report are found."""
    r = copy.deepcopy(gpt2)
    (h,) = r.hosts
    for mem in (f for f in [*h.findings, *r.findings] if f.rule == "batch_size_headroom"):  # the host's and the report's
        mem.summary = mem.summary.replace("into the pass", "into step 0").replace("the pass's own", "the step's own")
    h.steps["note"] += "; the first step starts at its first work launched in the capture: no part of the step"
    next(m for m in h.headline if m.id == "mfu").detail["not_flagged"] = "GEMMs take 2.5% of the step: the rest ..."
    r.display["findings"][0]["window_names"] = ["step 0"] * len(r.findings[0].windows)
    found = " | ".join(window_words_problems(r))
    for said in ("'step 0' of a one-pass host", "'the step's' of a one-pass host", "'the first step'",
                 "'no part of the step'", "one-pass card: '% of the step'", "tab: 'step 0'"):
        assert said in found, (said, found)
    real = render.memory_rows
    try:  # the peak table as main wrote it, in the text and markdown
        render.memory_rows = lambda rep: [[*row[:6], row[6].replace("the pass", "step 0"), *row[7:]]
                                          for row in real(rep)]
        assert "'step 0 +5.12 ms' (peak at)" in " ".join(window_words_problems(gpt2))
    finally:
        render.memory_rows = real


def test_a_one_pass_window_opening_on_earlier_work_speaks_of_the_pass() -> None:
    """wild/held_pass_rtx5070ti (one pass of a ViT-B/16 whose window opens on work launched before it): main's note
    said "The host meanwhile goes on with the step's own launches ... not as this step's launch or host overhead; the
    step's own work is the other 13.0 ms" beside "of the 28.5 ms pass"."""
    rep = _report(WILD / "held_pass_rtx5070ti")
    note = next(f for f in rep.findings if f.id.endswith("#before_capture_share")).summary
    assert "of the 28.5 ms pass" in note and "the pass's own work is the other 13.0 ms" in note, note
    assert "the step" not in note and "this step" not in note, note
    assert window_words_problems(rep) == []
