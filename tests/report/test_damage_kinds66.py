"""Damage says what it is, on every surface: records skipped in a file read to its end are no cut, and a file read
whole whose records contradict each other is no partial report (h37-damage66; issue #37, "a damaged file is never
healthy; bad input gets a clear error").

h37-damage65 told a file read whole whose records contradict each other apart from a cut file in the note, the tab and
the CLI's stderr, but left two things: (1) the verdict still began "partial: the file is damaged" for it (its numbers
hold all of the file: nothing is partial, they are the file's own); (2) a Kineto trace with one bad event in the middle
of an otherwise whole JSON -- skipped, the rest read on to the end -- still got the cut's words: "only partly read ...
whatever the file recorded past the damage (steps, kernels, whole GPUs) is missing", sending the reader for a longer
copy that does not exist.  Now the reader marks such records (``model.trace.Unreadable``), the report keeps them apart
(``HostReport.unreadable``, schema 1.6), and each surface words each kind: the verdict (``VERDICT_WORDS``: "partial:
some of the file's records could not be read (...)", "damaged: the file's records contradict each other (...)"), the
note, the CLI's stderr, the MCP summary and the tab (``display.hosts[].damage``: the note's words, one home).

Truth by construction: one event of the real AMD MI300X trace given a ``ts`` that is no number (the reader skips it
and reads on; the file ends where it ended); one given a start a year from the rest.  Fail on base: every test but the
cut control (base: the cut's words for the skipped event, "partial: the file is damaged" for the contradiction, no
``unreadable`` field, no ``display.hosts[].damage``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tb_gpu_advisor.model.damage import as_damage, contradiction, unreadable
from tb_gpu_advisor.model.schema import HostReport
from tb_gpu_advisor.model.trace import cuts
from tb_gpu_advisor.report import merge, render
from tb_gpu_advisor.report.verdict import damage_note
from tb_gpu_advisor.serve.mcp_server import summary_json
from tests.support.paths import FIXTURES
from tests.support.run_report import cli_report, fresh_report

AMD = FIXTURES / "wild" / "amd_mi300x" / "bert_small.pt.trace.json.gz"
MOSAIC = FIXTURES / "snapshots_wild" / "generated_mosaic_test.pickle.gz"
UNREAD = "read to its end, but some of its records could not be read"
NOTHING_PAST = "every number leaves those records out, and nothing lies past them"
CUT = "the file is damaged and was only partly read"
PAST = "past the damage"


def _logdir(tmp_path: Path, name: str, data: bytes) -> Path:
    run = tmp_path / "run"
    run.mkdir(parents=True, exist_ok=True)
    (run / name).write_bytes(data)
    return tmp_path


def _amd_with(tmp_path: Path, **field) -> Path:
    """The real AMD trace with one complete event in the middle of its events given ``field`` (its JSON otherwise
    whole, read to its end)."""
    doc = json.loads(gzip.decompress(AMD.read_bytes()))
    events = doc["traceEvents"]
    middle = [e for e in events[len(events) // 3: 2 * len(events) // 3]
              if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "python_function")]
    middle[len(middle) // 2].update(field)
    return _logdir(tmp_path, "vm.1700000000000.pt.trace.json", json.dumps(doc).encode())


def test_a_kineto_event_skipped_mid_file_is_unreadable_not_cut(tmp_path):
    logdir = _amd_with(tmp_path, ts="soon")
    report = fresh_report(logdir)
    (h,) = report.hosts
    assert h.damage == h.unreadable == ["1 events without a numeric time or not objects were skipped"], h.damage
    assert h.contradictions == [] and not report.healthy
    note = damage_note(h)
    assert note == (f"{h.host}: the file is damaged: {UNREAD}: 1 events without a numeric time or not objects were "
                    f"skipped; {NOTHING_PAST}")  # base: "... only partly read ... past the damage ..."
    assert report.verdict.startswith("partial: some of the file's records could not be read (1 events without"), \
        report.verdict
    text = " ".join(render.to_text(report).split())
    assert UNREAD in text and PAST not in text and CUT not in text
    assert report.display["hosts"][0]["damage"]["title"] == f"Damaged file: {UNREAD}"
    code, _, err = cli_report(logdir)
    assert code == 2 and f"the file is damaged: {UNREAD}: 1 events" in err and "partial" not in err, err


def test_a_kineto_event_a_year_from_the_rest_is_skipped_not_cut(tmp_path):
    report = fresh_report(_amd_with(tmp_path, ts=1e9 + 365 * 86_400e6))
    (h,) = report.hosts
    assert h.damage == h.unreadable and len(h.damage) == 1 and "more than a day from the other events" in h.damage[0]
    assert PAST not in damage_note(h) and UNREAD in damage_note(h), damage_note(h)


def test_the_verdict_says_a_file_whose_records_contradict_each_other_is_so(tmp_path):
    report = fresh_report(_logdir(tmp_path, "mosaic.pickle", gzip.decompress(MOSAIC.read_bytes())))
    assert report.verdict.startswith("damaged: the file's records contradict each other (GPU 0's history allocates "
                                     "1,900.9 MiB more"), report.verdict  # base: "partial: the file is damaged (..."
    assert "partial" not in report.verdict
    words = report.display["hosts"][0]["damage"]
    assert words["title"] == "Damaged file: read whole, but its records contradict each other"
    assert words["contradiction"].endswith("so its numbers are the file's own and may not be the GPU's.")
    assert "cut" not in words and "unreadable" not in words
    summary = json.loads(summary_json(report))  # the MCP answer: the same verdict, the kind kept
    assert summary["verdict"] == report.verdict and summary["hosts"][0]["contradictions"] == report.hosts[0].damage
    # the text report points to its DAMAGED FILE paragraph with the kind's own words
    assert "FINDINGS: damaged: the file's records contradict each other (see DAMAGED FILE below)" in \
        render.to_text(report)


def _host(name: str, damage: list[str], contradictions=(), unreadable=()) -> HostReport:
    return HostReport(host=name, path=name, size_bytes=1, damage=damage, contradictions=list(contradictions),
                      unreadable=list(unreadable))


def test_several_hosts_are_damaged_or_partial_by_their_kinds():
    overlap = "GPU 0's blocks overlap"
    clean = _host("c", [])
    both = merge.merge_hosts("r", "s", [_host("a", [overlap], [overlap]), _host("b", [overlap], [overlap]), clean])
    assert both.verdict.startswith("damaged: 2 of 3 host files' records contradict each other (a, b)"), both.verdict
    cut = merge.merge_hosts("r", "s", [_host("a", [overlap], [overlap]), _host("b", ["cut off at byte 9"]), clean])
    assert cut.verdict.startswith("partial: 2 of 3 host files are damaged (a, b)"), cut.verdict
    one = merge.merge_hosts("r", "s", [_host("a", ["x skipped", overlap], [overlap], ["x skipped"])])
    assert one.verdict.startswith("partial: some of the file's records could not be read (x skipped)"), one.verdict


def test_the_three_kinds_say_each_in_order():
    h = _host("a", ["cut off at byte 9", "x skipped", "blocks overlap"], ["blocks overlap"], ["x skipped"])
    note = damage_note(h)
    assert note.index("cut off at byte 9") < note.index(PAST) < note.index("x skipped") < note.index(NOTHING_PAST) \
        < note.index("blocks overlap"), note
    assert "What was read also holds records that could not be read: x skipped" in note


def test_a_worker_named_entry_keeps_its_kind():
    """Several ranks' Kineto files read as one (``formats.kineto.ranks``): each entry named by its worker keeps its
    kind."""
    named = [as_damage(p).reworded(f"worker0: {p}") for p in (unreadable("x", "x skipped"), contradiction("y", "y"),
                                                                "cut at byte 9")]
    assert [p.kind for p in named] == ["unreadable", "contradiction", "cut"]  # h37-damage67: typed records
    assert cuts(named) == ["worker0: cut at byte 9"]


def test_control_a_cut_kineto_trace_keeps_the_cut_words(tmp_path):
    raw = gzip.decompress(AMD.read_bytes())
    report = fresh_report(_logdir(tmp_path, "vm.1700000000000.pt.trace.json", raw[: int(len(raw) * 0.62)]))
    (h,) = report.hosts
    assert h.damage and h.unreadable == [] and h.contradictions == [], h.damage
    assert report.verdict.startswith("partial: the file is damaged (the trace is cut off at byte"), report.verdict
    assert CUT in damage_note(h) and PAST in damage_note(h)
    assert report.display["hosts"][0]["damage"]["title"] == "Damaged file: only partly read"


def test_gpu_records_skipped_as_unreadable_may_be_among_them(tmp_path):
    """Every GPU record of the real AMD trace given a ``ts`` that is no number: the reader skips them and reads on to
    the end.  The GPU records are among the records it could not read -- not "lost by the capture" (what reading the
    skipped records as no damage said), nor lying "past the damage" (base: the skipped records told as a cut)."""
    doc = json.loads(gzip.decompress(AMD.read_bytes()))
    gpu = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")
    n = 0
    for e in doc["traceEvents"]:
        if e.get("cat") in gpu:
            e["ts"], n = "later", n + 1
    report = fresh_report(_logdir(tmp_path, "vm.1700000000000.pt.trace.json", json.dumps(doc).encode()))
    (h,) = report.hosts
    assert h.damage == h.unreadable == [f"{n} events without a numeric time or not objects were skipped"], h.damage
    (f,) = [f for f in report.findings if f.rule == "capture_quality" and "GPU record" in f.title]
    assert f.title == "No GPU record among the records that could be read", f.title
    assert "may well be among them" in f.summary and PAST not in f.summary, f.summary
    assert "a profiler writes none such" in f.actions[0].text
