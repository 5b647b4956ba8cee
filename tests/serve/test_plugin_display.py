"""The tab prints the report's own numbers (issue #37, "a quantity has one value on one screen").

``Report.display`` (``report.view.display``) holds every number the tab's report view prints, written by the CLI's
formatters; the window's ``display`` (``report.timeline.display``) every number of a step timeline.  The property: each
number the tab prints of a quantity the CLI reports appears with the same digits in the CLI's text or markdown of the
same report -- over every plugin fixture and every demo session the plugin serves.
"""

from __future__ import annotations

import json
import re

import pytest

from tb_gpu_advisor.discover import logdir as discovery
from tb_gpu_advisor.model import schema as rs
from tb_gpu_advisor.report import render
from tb_gpu_advisor.report.view import display, memory_peak_text
from tb_gpu_advisor.runtime import pipeline
from tests.support import plugin_fixtures
from tests.support.paths import DEMO_LOGS
from tests.support.plugin_client import PREFIX, get_json, make_client, poll_report

#: A number with its unit as the reports write them: "12.4 ms", "800 us", "31%", "19.5 GiB", "4,200", "6.10".
_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?: ?(?:ms|us|s|GiB|MiB|KiB|B|%)(?![A-Za-z]))?")


def _numbers(text: str) -> list[str]:
    return _NUMBER.findall(str(text))


def _one_step(r: rs.Report) -> rs.Report:
    for h in r.hosts:
        h.steps = {**h.steps, "count": 1}
    r.display = display(r)
    return r


def _tiny_saving(r: rs.Report) -> rs.Report:
    """The top finding saving 12 us of its step: under the server's floor, "<0.5%"."""
    r.findings[0].saving = rs.Saving(0.0123, 0.2, "x", [])
    r.display = display(r)
    return r


def _fixture_reports() -> dict[str, rs.Report]:
    out = {"one host": plugin_fixtures.report(), "two hosts": plugin_fixtures.report(hosts=("worker0", "worker1")),
           "one step kept": _one_step(plugin_fixtures.report()), "saving under the floor": _tiny_saving(plugin_fixtures.report())}
    for s in discovery.discover(str(DEMO_LOGS)):
        out[f"demo {s.run}"] = pipeline.analyze_session(s.run, s.session, list(s.hosts))
    return out


_REPORTS: dict[str, rs.Report] = {}


def _reports() -> dict[str, rs.Report]:
    if not _REPORTS:
        _REPORTS.update(_fixture_reports())
    return _REPORTS


def _printed_of_cli_quantities(r: rs.Report) -> list[str]:
    """The display's texts of what the CLI's text or markdown also prints: the achievable step, each finding's saving
    and the memory it frees, its first two evidence tables and first three windows (as markdown shows them), the
    memory peak table and each GPU's peak in words, the ranks and collectives, the GPUs and roofline tables."""
    d = r.display
    out = [d["achievable"]]
    for f in d["findings"]:
        out += [f["saving"], f["frees"], f["saving_value"], f["freed"], *f["windows"][:3]]
        out += [c for t in f["evidence"][:2] for row in t["rows"] for c in row[1:]]
    out += [c for row in d["memory"]["rows"] for c in row[1:]] + d["memory"]["notes"]
    out += [c for row in d["ranks"] for c in row[1:]] if len(d["ranks"]) <= render.RANKS_LISTED else []
    out += [c for row in d["collectives"] for c in row[1:]]
    for h in d["hosts"]:
        if not h:
            continue
        out += [c for row in h["gpus_table"]["rows"] for c in row[2:]]
        out += [c for row in h["roofline"]["rows"][:10] for c in row[2:]]
        out += [g["memory"]["peak"] for g in h["gpus"] if g["memory"]]
    return [x for x in out if x]


@pytest.mark.parametrize("name", ["one host", "two hosts", "one step kept", "saving under the floor"]
                         + [f"demo {s.run}" for s in discovery.discover(str(DEMO_LOGS))])
def test_every_number_the_tab_prints_reads_as_the_clis_report(name):
    r = _reports()[name]
    assert r.display, "merge_hosts and the fixtures write the display"
    said = render.to_text(r, top=None, evidence_rows=1000) + render.to_markdown(r, top=None, evidence_rows=1000)
    printed = _printed_of_cli_quantities(r)
    for text in printed:
        for n in _numbers(text):
            assert n in said, f"{name}: the tab prints {n!r} (in {text!r}), which the CLI's report never writes"
    # aligned with what it describes, so the tab reads the right one
    assert len(r.display["findings"]) == len(r.findings) and len(r.display["hosts"]) == len(r.hosts)
    assert len(r.display["cards"]) == len(r.headline)
    for h, dh in zip(r.hosts, r.display["hosts"]):
        if not h.error:
            assert len(dh["steps"]) == len(h.step_rows) and len(dh["gpus"]) == len(h.gpus)


def test_a_saving_is_the_text_reports_words_per_step_of_one_step_and_under_the_floor():
    reports = _reports()
    text = {k: render.to_text(reports[k], top=None) for k in ("one host", "one step kept", "saving under the floor")}
    assert reports["one host"].display["findings"][0]["saving"] == "saves ~12.4 ms/step (31% of step)"
    assert reports["one step kept"].display["findings"][0]["saving"] == "saves ~12.4 ms (31% of the step)"
    assert reports["saving under the floor"].display["findings"][0]["saving"] == "saves ~12 us/step (<0.5% of step)"
    for k, t in text.items():
        assert reports[k].display["findings"][0]["saving"] in t, k
    # the control: a memory finding frees bytes, and saves no time
    mem = next(i for i, f in enumerate(reports["one host"].findings) if f.saving_bytes)
    assert reports["one host"].display["findings"][mem]["saving"] == ""
    assert reports["one host"].display["findings"][mem]["frees"] == "frees ~5.25 GiB"


def test_the_memory_table_and_the_peak_say_the_same_digits():
    r = _reports()["one host"]
    d = r.display
    row = d["memory"]["rows"][0]
    # the text report's table (was "49%" on the tab beside the CLI's "49.4%")
    assert row == render.memory_rows(r)[0] and "49.4%" in row
    peak = d["hosts"][0]["gpus"][0]["memory"]["peak"]
    assert peak == "19.5 GiB allocated (19.8 GiB reserved) of 40.0 GiB, 18.0 ms into step 3"
    assert all(n in " ".join(row) for n in _numbers(peak) if n not in ("3",))


def test_a_history_without_times_says_where_its_peak_falls_by_order():
    # h37-left35: a PyTorch 2.0 snapshot records no times; peak_ms is null and peak_place says where
    m = {**plugin_fixtures.gpu_memory(), "peak_step": None, "peak_step_offset_ms": None, "peak_ms": None,
         "peak_place": "training iteration 4 of 4, event 122 of 131"}
    text = memory_peak_text(m)
    assert text.endswith("in training iteration 4 of 4, event 122 of 131")
    assert not re.search(r"at the dump|\d ms", text)
    assert memory_peak_text({**m, "peak_place": None}).endswith("at the dump")  # the control: nothing says where


def test_the_frontend_tests_hold_the_clis_text_of_their_report():
    """frontend/test/fixtures/report_text.json is the CLI's text and markdown of report.json, as this checkout writes
    them: the frontend tests check each number the tab prints of it against them."""
    with open(plugin_fixtures.REPORT_TEXT_FIXTURE_PATH, encoding="utf-8") as f:
        assert f.read() == plugin_fixtures.report_text_fixture_json()  # python -m tests.support.plugin_fixtures


def test_a_window_says_its_times_as_the_finding_names_them():
    doc = json.loads(plugin_fixtures.window_fixture_json())
    d = doc["display"]
    w = rs.TimeWindow(**doc["window"])
    assert d["span"] == render.window_span(w)  # the caption beside the finding's "Open in trace viewer (...)"
    assert [len(x) for x in d["lanes"]] == [len(lane["events"]) for lane in doc["lanes"]]
    assert len(d["idle"]) == len(doc["idle"]) and len(d["steps"]) == len(doc["steps"])
    assert [sorted(g["ms"]) for g in d["idle_ms"]] == [sorted(g["ms"]) for g in doc["idle_ms"]]


def test_the_served_report_carries_its_display():
    client, _, _ = make_client(str(DEMO_LOGS))
    runs = get_json(client, f"{PREFIX}/runs")["runs"]
    run = next(r for r in runs if r["run"] == "input_bound")
    query = f"run={run['run']}&session={run['sessions'][0]['session']}"
    doc = json.loads(poll_report(client, f"{PREFIX}/report?{query}").get_data(as_text=True))
    r = rs.Report.from_dict(doc)
    assert doc["display"]["achievable"] == render.achievable_text(r)
    assert [f["saving"] for f in doc["display"]["findings"]] == [render.saving_text(f) if f.saving else "" for f in r.findings]


def test_a_column_of_sub_ms_times_reads_in_us_on_every_surface():
    """A real Nsight capture's copies (cloverleaf on an A100, tests/fixtures/wild): its blocking copies took 0.92 ms and
    1.7 us per step, which the CLI printed "0.92" and "0.00" (the tab alone switched the column to us): the text, the
    markdown and the tab now print the one table (``render.table_text``)."""
    from tests.support.paths import FIXTURES

    s = next(iter(discovery.discover(str(FIXTURES / "wild" / "cloverleaf_a100_cuda"))))
    r = pipeline.analyze_session(s.run, s.session, list(s.hosts))
    i, f = next((i, f) for i, f in enumerate(r.findings) for t in f.evidence if "blocking ms" in t.columns)
    t = next(t for t in f.evidence if "blocking ms" in t.columns)
    shown = r.display["findings"][i]["evidence"][f.evidence.index(t)]
    col = t.columns.index("blocking ms")
    assert shown["columns"][col] == "blocking us"
    assert all(float(row[col]) == pytest.approx(1000 * raw[col], abs=0.05) for row, raw in zip(shown["rows"], t.rows))
    assert any(row[col] not in ("0", "0.0") and raw[col] < 0.005 for row, raw in zip(shown["rows"], t.rows))  # was "0.00"
    md = render.to_markdown(r, top=None)
    assert "| " + " | ".join(shown["columns"]) + " |" in md
    # the control: a column with a time of 1 ms or more stays in ms, a share as a percentage
    cols, rows = render.table_text(["gap ms", "busy share", "name"], [[0.5, 0.25, "a"], [1.5, 0.5, "b"]])
    assert cols == ["gap ms", "busy share", "name"] and rows == [["0.50", "25.0%", "a"], ["1.50", "50.0%", "b"]]
