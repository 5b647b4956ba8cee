"""Every damaged file says what it is as one typed record, in every format, and no healthy report carries one
(h37-damage67; issue #37: "a damaged file is never healthy, and says what it is").

Before, damage travelled as strings: a plain ``str`` was a cut, the ``str`` subclasses ``Contradiction`` and
``Unreadable`` the other kinds, the report kept the kinds as lists of the same words -- and a file too damaged to read
at all (a truncated XPlane protobuf, a cut or corrupt Nsight export, a truncated snapshot pickle) was an error whose
report said nothing of the damage but in its message.  Now every reader produces ``model.damage.Damage`` records
(kind, machine-readable code, words, where in the file), the report keeps them (``HostReport.damage_records``, schema
1.7) -- an error host's too --, and the verdict, the CLI's stderr and the MCP summary read them.

Truth by construction, each from a real fixture of this repository: the wild AMD MI300X Kineto trace cut inside an
event (a cut, ``json_cut``, at the byte the reader names) and given one event whose time is no number (records left
unread); a real H200 XPlane cut in half (``protobuf_truncated``) and a fuzzed one (bytes that do not decode); a real
A100 Nsight export cut in half (``sqlite_cut_short``: the header says 40,960 bytes, 20,480 are there) and with its
second page overwritten (``sqlite_corrupt``); a real rocprof ``results.json`` cut in half (``json_cut``: "not JSON at
byte 27,017" before) and a real rocmProfileData database cut in half (``sqlite_cut_short``); a real memory
snapshot's pickle cut in half (``pickle_truncated``) and its gzip cut (``gzip_cut``); the generated Mosaic snapshot and the cut-history snapshot (contradictions).  A hostile
pickle is refused whole, no damage: it is never healthy and claims no kind.

Fail on base 15b35816: all of them -- the module imports ``model.damage``; with that import shimmed, every test
(the healthy controls too: base's HostReport has no ``damage_records``; a cut Nsight export read "database disk image
is malformed", an error host carried no record)."""

from __future__ import annotations

import gzip
import json
import os
import pickle
from pathlib import Path

import pytest

from tb_gpu_advisor.model.damage import CONTRADICTION, CUT, UNREADABLE, Damage
from tb_gpu_advisor.model.schema import HostReport, Report
from tb_gpu_advisor.report import merge
from tb_gpu_advisor.report.verdict import KIND_WORDS, VERDICT_WORDS
from tb_gpu_advisor.serve.mcp_server import summary_json
from tests.support.paths import DEMO_LOGS, FIXTURES
from tests.support.run_report import cli_report, fresh_report

AMD = FIXTURES / "wild" / "amd_mi300x" / "bert_small.pt.trace.json.gz"
XPLANE = FIXTURES / "h200_jobs" / "jax_jit_inference" / "plugins" / "profile" / "2026_11_27_14_54_27" / "vm.xplane.pb"
FUZZED = FIXTURES / "xplane_fuzz" / "plane_error_order.xplane.pb.gz"
NSYS = FIXTURES / "wild" / "extrap_ex_gpu_a100" / "ex-gpu.s100000.sqlite"
OTHELLO = FIXTURES / "snapshots_wild" / "state_before_training_othello.pickle.gz"
MOSAIC = FIXTURES / "snapshots_wild" / "generated_mosaic_test.pickle.gz"
CUT_HISTORY = FIXTURES / "snapshots_wild" / "mini_snapshot_cut.pickle"
ROCPROF = FIXTURES / "wild" / "rocprof_mxfp4_setup_gfx950" / "results.json.gz"
RPD = FIXTURES / "foreign" / "rocm_rpd_matmul" / "matmul_result.rpd"


def _run(tmp: Path, name: str, data: bytes) -> Path:
    run = tmp / "run" / ("plugins/profile/2026_01_01_00_00_00" if name.endswith(".xplane.pb") else "")
    run.mkdir(parents=True, exist_ok=True)
    (run / name).write_bytes(data)
    return tmp


def _amd_untimed() -> bytes:
    doc = json.loads(gzip.decompress(AMD.read_bytes()))
    events = doc["traceEvents"]
    middle = [e for e in events[len(events) // 3: 2 * len(events) // 3] if e.get("ph") == "X"]
    middle[len(middle) // 2]["ts"] = "soon"
    return json.dumps(doc).encode()


def _half(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _page_overwritten(data: bytes) -> bytes:
    out = bytearray(data)
    out[4096:8192] = b"\xff" * 4096  # the second page (of 4 KiB): a b-tree page no SQLite wrote
    return bytes(out)


#: name -> (file name, its bytes, the kind, the code, whether the host is an error, the byte offset named or None)
CASES = {
    "kineto_cut": ("vm.1700000000000.pt.trace.json", lambda: gzip.decompress(AMD.read_bytes())[:744_900],
                   CUT, "json_cut", False, 744_866),
    "kineto_untimed": ("vm.1700000000000.pt.trace.json", _amd_untimed, UNREADABLE, "untimed_events", False, None),
    "xplane_cut": ("vm.xplane.pb", lambda: _half(XPLANE.read_bytes()), CUT, "protobuf_truncated", True, 4),
    "xplane_fuzzed": ("vm.xplane.pb", lambda: gzip.decompress(FUZZED.read_bytes()), UNREADABLE, "protobuf_invalid",
                      True, None),
    "nsys_cut": ("ex-gpu.sqlite", lambda: _half(NSYS.read_bytes()), CUT, "sqlite_cut_short", True, 20_480),
    "nsys_corrupt": ("ex-gpu.sqlite", lambda: _page_overwritten(NSYS.read_bytes()), UNREADABLE, "sqlite_corrupt", True,
                     None),
    "rocprof_cut": ("results.json", lambda: _half(gzip.decompress(ROCPROF.read_bytes())), CUT, "json_cut", True, None),
    "rpd_cut": ("matmul_result.rpd", lambda: _half(RPD.read_bytes()), CUT, "sqlite_cut_short", True, 49_152),
    "pickle_cut": ("snapshot.pickle", lambda: _half(gzip.decompress(OTHELLO.read_bytes())), CUT, "pickle_truncated",
                   True, 11),
    "pickle_gz_cut": ("snapshot.pickle.gz", lambda: _half(OTHELLO.read_bytes()), CUT, "gzip_cut", True, None),
    "snapshot_generated": ("snapshot.pickle", lambda: gzip.decompress(MOSAIC.read_bytes()), CONTRADICTION,
                           "history_beyond_segments", False, None),
    "snapshot_cut_history": ("snapshot.pickle", CUT_HISTORY.read_bytes, CONTRADICTION, "history_short_of_dump", False,
                             None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_damaged_file_is_never_healthy_and_says_its_kind(tmp_path, case):
    name, data, kind, what, error, offset = CASES[case]
    report = fresh_report(_run(tmp_path, name, data()))
    (h,) = report.hosts
    records = h.records()
    assert not report.healthy and not report.verdict.startswith(("Healthy", "No ")), (case, report.verdict)
    assert records and records[0].kind == kind and records[0].what == what, (case, records)
    if offset is not None:
        assert records[0].offset == offset, (case, records)
    assert bool(h.error) == error, (case, h.error)
    # the verdict says the kind: its words (VERDICT_WORDS), an error host's with what the file is (KIND_WORDS)
    assert report.verdict.startswith(VERDICT_WORDS[kind]) if not error else KIND_WORDS[kind] in report.verdict, \
        (case, report.verdict)
    # the JSON keeps the records, and reads them back as they were
    doc = json.loads(report.to_json())
    assert doc["schema_version"] == "1.7"
    assert Report.from_dict(doc).hosts[0].damage_records == records
    # the MCP summary hands an agent the kind and code, not only the words
    said = json.loads(summary_json(report))["hosts"][0]["damage_records"]
    assert (said[0]["kind"], said[0]["what"]) == (kind, what), said


def test_the_cli_names_an_unreadable_files_damage_on_stderr(tmp_path):
    code, _, err = cli_report(_run(tmp_path, "snapshot.pickle", _half(gzip.decompress(OTHELLO.read_bytes()))))
    assert code == 2 and "[damage: cut, pickle_truncated at byte 11]" in err, err


def test_a_hostile_pickle_is_refused_never_healthy_and_claims_no_damage(tmp_path):
    """A pickle that imports a name is refused whole (the file was not run): no record says it is cut, unreadable or
    contradicting -- it is no damaged snapshot but no snapshot at all -- and it is never healthy."""
    doc = pickle.loads(gzip.decompress(OTHELLO.read_bytes()))
    doc["device_traces"][0][0]["frames"] = os.system  # pickled as a global: a name the reader would import
    report = fresh_report(_run(tmp_path, "snapshot.pickle", pickle.dumps(doc)))
    (h,) = report.hosts
    assert not report.healthy and "refused" in h.error and h.records() == []


@pytest.mark.parametrize("logdir,run", [(DEMO_LOGS, "ideal"), (FIXTURES / "wild", "compiled_mi300x_attn")])
def test_control_a_healthy_report_carries_no_damage_record(logdir, run):
    from tests.support.run_report import fresh_run_report

    report = fresh_run_report(logdir, run)
    assert report.healthy and all(h.damage_records == [] and h.records() == [] for h in report.hosts)


def test_a_host_with_a_record_alone_is_never_healthy():
    """Healthy is decided on the records, not on the words: a host whose only damage is a record (no ``damage``
    words) is damaged."""
    h = HostReport(host="a", path="a", size_bytes=1,
                   damage_records=[Damage(UNREADABLE, "untimed_events", "3 events without a numeric time")])
    report = merge.merge_hosts("r", "s", [h])
    assert not report.healthy and report.verdict.startswith(VERDICT_WORDS[UNREADABLE]), report.verdict


def test_a_capacity_file_that_does_not_parse_is_a_record_left_out_not_a_cut(tmp_path):
    """The GPU's capacity beside a snapshot (``memory_snapshot.capacity.json``) that is no JSON is left out whole, the
    snapshot read to its end: records left unread, of that file -- not "only partly read ... past the damage", as the
    plain string (a cut) said before."""
    from tb_gpu_advisor.formats.snapshot.capacity import capacity_name

    logdir = _run(tmp_path, "snapshot.pickle", gzip.decompress(OTHELLO.read_bytes()))
    (tmp_path / "run" / capacity_name("snapshot.pickle")).write_text("{not json")
    report = fresh_report(logdir)
    (d,) = report.hosts[0].records()
    assert (d.kind, d.what, d.file) == (UNREADABLE, "capacity_file", capacity_name("snapshot.pickle")), d
    assert report.verdict.startswith(VERDICT_WORDS[UNREADABLE]) and not report.healthy, report.verdict
