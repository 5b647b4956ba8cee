"""A file read whole whose records contradict each other is not told as a file cut short (h37-damage65).

Every damage entry was told as a cut: "the file is damaged and was only partly read ... whatever the file recorded
past the damage (steps, kernels, whole GPUs) is missing".  That fits a trace cut off mid-write; it is wrong for a
file read to its end whose records disagree -- facebookresearch/mosaic's generated snapshot, whose history allocates
1,900.9 MiB more than its segments reserve, or a snapshot whose blocks overlap: there is no "past the damage" to
copy again, and what is wrong is that its numbers are the file's own and may not be the GPU's.

Now the reader marks such an entry where it finds it (``model.trace.Contradiction``), the report keeps it apart
(``HostReport.contradictions``, schema 1.5) and every surface says "read whole, but its records contradict each
other: <what>; its numbers are the file's own and may not be the GPU's" -- the cut's words stay for a cut, and a
file with both says both.  The exit code is the same (2: a damaged file).

Truth by construction: the overlapping blocks are a copy of a block written into its own segment (the allocator hands
out no byte twice); the partly read snapshot has one block whose ``size`` is a string (left out, so not read); the
negative duration is one event of the real AMD MI300X trace given ``dur`` -5.  Fail on base: every test that asks
for the new words or the ``contradictions`` field (base says "only partly read" and "past the damage" for all)."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.schema import HostReport, Report, problem
from tb_gpu_advisor.report import merge, render
from tb_gpu_advisor.report.verdict import damage_note
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES
from tests.support.run_report import cli_report, fresh_report

MOSAIC = FIXTURES / "snapshots_wild" / "generated_mosaic_test.pickle.gz"
AMD = FIXTURES / "wild" / "amd_mi300x" / "bert_small.pt.trace.json.gz"
WHOLE = "read whole, but its records contradict each other"
OWN = "its numbers are the file's own and may not be the GPU's"
CUT = "the file is damaged and was only partly read"
PAST = "past the damage"
UNREAD = "read to its end, but some of its records could not be read"
NOTHING_PAST = "every number leaves those records out, and nothing lies past them"


def _snapshot(path: Path) -> HostReport:
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _doc(overlap: bool = False, bad_field: bool = False) -> dict:
    """A state-only snapshot (4 blocks of weights in their segments), with a block copied into its own segment
    (``overlap``: more bytes in blocks than the segment reserves) and/or a block whose size is a string
    (``bad_field``: left out, so the file is not read whole)."""
    doc = copy.deepcopy(ms.state_only({"weights": 64 * ms.MiB}, history=True).doc)
    seg = doc["segments"][0]
    if overlap:
        seg["blocks"].append(dict(seg["blocks"][0]))
    if bad_field:
        seg["blocks"].append({"size": "x", "state": "active_allocated"})
    return doc


def _written(tmp_path: Path, doc: dict) -> Path:
    return Path(ms.write(str(tmp_path / "snap.pickle"), doc))


def _assert_contradicting_only(rep: HostReport, what: str) -> None:
    assert rep.damage and rep.contradictions == rep.damage, rep.damage
    note = damage_note(rep)
    assert f"the file is damaged: {WHOLE}: " in note and what in note and note.endswith(OWN), note
    assert CUT not in note and PAST not in note, note


def test_the_mosaic_snapshot_is_read_whole_and_contradicts_itself():
    rep = _snapshot(MOSAIC)
    _assert_contradicting_only(rep, "1,900.9 MiB more than its segments reserve")


def test_overlapping_blocks_are_read_whole_and_contradict_each_other(tmp_path):
    rep = _snapshot(_written(tmp_path, _doc(overlap=True)))
    _assert_contradicting_only(rep, "blocks that overlap")


def test_a_snapshot_with_a_block_left_out_is_read_to_its_end_not_cut(tmp_path):
    """A block left out (a field of the wrong type) is a record not read in a file read to its end (h37-damage66:
    ``HostReport.unreadable``): nothing lies past it, so no cut's words -- nor a contradiction's."""
    rep = _snapshot(_written(tmp_path, _doc(bad_field=True)))
    assert rep.damage and rep.unreadable == rep.damage and rep.contradictions == [], rep.damage
    note = damage_note(rep)
    assert UNREAD in note and "fields of the wrong type" in note and note.endswith(NOTHING_PAST), note
    assert CUT not in note and PAST not in note and "contradict" not in note, note


def test_a_file_with_both_kinds_says_both(tmp_path):
    rep = _snapshot(_written(tmp_path, _doc(overlap=True, bad_field=True)))
    assert len(rep.damage) == 2 and len(rep.contradictions) == 1 and "overlap" in rep.contradictions[0]
    assert len(rep.unreadable) == 1 and "fields of the wrong type" in rep.unreadable[0]
    note = damage_note(rep)
    assert UNREAD in note and "also contradicts itself" in note and note.endswith(OWN), note
    assert CUT not in note and PAST not in note, note
    # the records left unread first, then the contradiction, once
    assert note.index("fields of the wrong type") < note.index(NOTHING_PAST) < note.index("blocks that overlap"), note


def test_a_cut_and_a_contradiction_say_both():
    cut, overlap = "the trace is cut off at byte 1,024, inside an event", "GPU 0's blocks overlap"
    rep = HostReport(host="a", path="a", size_bytes=1, damage=[cut, overlap], contradictions=[overlap])
    note = damage_note(rep)
    assert CUT in note and PAST in note and "also contradicts itself" in note and note.endswith(OWN), note
    # the cut's paragraph names the cut only: the contradiction follows it, once
    assert note.index(cut) < note.index(PAST) < note.index(overlap), note


def _logdir(tmp_path: Path, name: str, data: bytes) -> Path:
    run = tmp_path / "run"
    run.mkdir(parents=True, exist_ok=True)
    (run / name).write_bytes(data)
    return tmp_path


_report, _cli = fresh_report, cli_report


def test_every_surface_says_the_mosaic_is_read_whole_and_exits_2_as_before(tmp_path):
    logdir = _logdir(tmp_path, "mosaic.pickle", gzip.decompress(MOSAIC.read_bytes()))
    report = _report(logdir)
    # the verdict says what the file is (h37-damage66; "partial: the file is damaged" before)
    assert not report.healthy and report.verdict.startswith("damaged: the file's records contradict each other (GPU 0")
    text, md = render.to_text(report), " ".join(render.to_markdown(report).split())
    for said in (" ".join(text.split()), md, " ".join(report.notes)):
        assert WHOLE in said and OWN in said and PAST not in said and CUT not in said
    code, _, err = _cli(logdir)
    assert code == 2  # a damaged file, as before
    assert f"the file is damaged: {WHOLE}: GPU 0's history allocates" in err and "partial" not in err, err
    code, out, _ = _cli(logdir, "--format", "json")
    doc = json.loads(out)
    host = doc["hosts"][0]
    assert code == 2 and doc["schema_version"] == "1.7" and host["contradictions"] == host["damage"]
    assert [(d["kind"], d["what"]) for d in host["damage_records"]] == [("contradiction", "history_beyond_segments")]


_SESSION = {"run": "r", "session": "s", "healthy": False, "analyzer_version": "x", "generated_at": "now"}


def test_the_json_keeps_the_kind_and_an_older_report_is_cut_alone():
    rep = _snapshot(MOSAIC)
    doc = json.loads(rep.to_json())
    assert problem(HostReport, doc) is None
    back = Report.from_dict({**_SESSION, "hosts": [doc]}).hosts[0]
    assert back.contradictions == rep.contradictions and damage_note(back) == damage_note(rep)
    del doc["contradictions"], doc["damage_records"]  # a report written before schema 1.5: every entry a cut, as it was
    # told then
    old = Report.from_dict({**_SESSION, "hosts": [doc]}).hosts[0]
    assert old.contradictions == [] and CUT in damage_note(old) and PAST in damage_note(old)


def test_a_session_note_tells_the_kind():
    whole = HostReport(host="a", path="a", size_bytes=1, damage=["GPU 0's blocks overlap"],
                       contradictions=["GPU 0's blocks overlap"])
    report = merge.merge_hosts("r", "s", [whole])
    assert not report.healthy
    assert any(n.startswith(f"a: the file is damaged: {WHOLE}: GPU 0's blocks overlap; {OWN}") for n in report.notes)


def test_a_cut_kineto_trace_still_says_only_partly_read(tmp_path):
    raw = gzip.decompress(AMD.read_bytes())
    report = _report(_logdir(tmp_path, "vm.1700000000000.pt.trace.json", raw[: int(len(raw) * 0.62)]))
    (h,) = report.hosts
    assert h.damage and h.contradictions == [], h.damage
    assert CUT in damage_note(h) and PAST in damage_note(h) and "contradict" not in damage_note(h)


def test_a_kineto_event_that_ends_before_it_starts_is_a_contradiction(tmp_path):
    """A whole Kineto trace with one negative duration: read to its end, one record contradicting itself."""
    doc = json.loads(gzip.decompress(AMD.read_bytes()))
    event = next(e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("dur", 0) > 0)
    event["dur"] = -5
    report = _report(_logdir(tmp_path, "vm.1700000000000.pt.trace.json", json.dumps(doc).encode()))
    (h,) = report.hosts
    assert h.contradictions == [d for d in h.damage if "negative duration" in d] != [], h.damage
    assert WHOLE in damage_note(h) and PAST not in damage_note(h), damage_note(h)


def test_gpu_records_missing_from_a_file_read_whole_are_not_sought_past_a_damage(tmp_path):
    """The job reads a file read whole as holding all it recorded: with its GPU records gone (the kernels and copies
    taken out of the real AMD trace, its runtime calls kept) and one event ending before it starts, the capture lost
    its GPU records -- not "No GPU record in the part of the damaged file that was read" (base: the negative
    duration made ``job.damaged`` and sent the reader after a longer copy that does not exist)."""
    doc = json.loads(gzip.decompress(AMD.read_bytes()))
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset",
                                                                                "gpu_user_annotation")]
    next(e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e["dur"] > 0)["dur"] = -5
    report = _report(_logdir(tmp_path, "vm.1700000000000.pt.trace.json", json.dumps(doc).encode()))
    (h,) = report.hosts
    titles = [f.title for f in report.findings if f.rule == "capture_quality"]
    assert titles == ["The capture lost its GPU records"], titles
    assert not h.job.get("damaged") and h.contradictions == h.damage != [], (h.damage, h.job)


def test_the_claim_names_the_device_in_its_vendors_words():
    """An Ascend NPU's snapshot whose records contradict each other: its numbers may not be the NPU's."""
    npu = HostReport(host="n", path="n", size_bytes=1, capture={"vendor": "Huawei"}, damage=["NPU 0's blocks overlap"],
                     contradictions=["NPU 0's blocks overlap"])
    assert damage_note(npu).endswith("its numbers are the file's own and may not be the NPU's"), damage_note(npu)
