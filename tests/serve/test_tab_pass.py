"""The tab names a one-pass capture's step "the pass", as the report's text does (h37-tabpass).

h37-words20/21 made every text of a report whose one step is the pass an unmarked capture was read as
(``steps.types.unmarked_pass``: ``steps.source`` ``whole_capture`` / ``single_pass``) say "the pass"; the tab still
drew "step 0" on the timeline's axis, "1 step" in the host line and "step N" at the memory peak, its words composed
from the step's index.  The server now names them (``report.timeline.step_name``, ``display.hosts[].one_pass``,
``display.hosts[].gpus[].memory.peak_step_name``) with the test the text uses.  Real one-pass capture:
``wild/cold_a100_alexnet``; control: the demo ``input_bound`` capture's marked steps.
"""

from __future__ import annotations

import json

from tb_gpu_advisor.report.view import _memory, memory_peak_text
from tests.support import plugin_fixtures


def test_the_frontends_pass_fixture_is_current() -> None:
    """frontend/test/fixtures/pass.json is what this checkout serves of the one-pass capture
    (``python -m tests.support.plugin_fixtures``)."""
    with open(plugin_fixtures.PASS_FIXTURE_PATH, encoding="utf-8") as f:
        assert f.read() == plugin_fixtures.pass_fixture_json()


def test_a_one_pass_capture_is_served_as_the_pass() -> None:
    doc = json.loads(plugin_fixtures.pass_fixture_json())
    assert doc["host"]["steps"]["source"] == "single_pass" and doc["host"]["steps"]["count"] == 1
    assert doc["shown"]["one_pass"] is True
    assert [s["step"] for s in doc["window"]["steps"]] == [0]  # the index the axis said as "step 0"
    assert [s["name"] for s in doc["window"]["display"]["steps"]] == ["the pass"]


def test_marked_steps_keep_their_numbers() -> None:
    """Controls: the demo capture's marked steps ("step 1" on the axis) and the fixture report's hosts (6 marked)."""
    window = json.loads(plugin_fixtures.window_fixture_json())
    assert [s["name"] for s in window["display"]["steps"]] == [f"step {s['step']}" for s in window["steps"]]
    report = json.loads(plugin_fixtures.fixture_json())
    assert [h.get("one_pass") for h in report["display"]["hosts"]] == [False, False]
    assert report["display"]["hosts"][0]["gpus"][0]["memory"]["peak_step_name"] == "step 3"


def test_the_memory_peak_of_a_pass_falls_in_the_pass() -> None:
    """Truth by construction: a peak inside the kept step 0 of a one-pass host is "into the pass", of a marked one
    "into step 0"; a peak outside every kept step names none."""
    m = plugin_fixtures.gpu_memory()
    m = {**m, "peak_step": 0}
    assert memory_peak_text(m, True).endswith("into the pass") and _memory(m, True)["peak_step_name"] == "the pass"
    assert memory_peak_text(m).endswith("into step 0") and _memory(m, False)["peak_step_name"] == "step 0"
    assert _memory({**m, "peak_step": None}, True)["peak_step_name"] == ""
