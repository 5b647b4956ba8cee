"""A real capture rewritten the way another writer or setting records the same job reads as the capture itself
(issue #37; session 55's metamorphic checks, scripts in the notes).

Each test takes a kept real capture of ``tests/fixtures/wild``, rewrites it in a temporary folder as another real
writer would have written it -- nothing about the job changed, so the truth is the original's reading, by
construction -- and compares the two readings: each host's step count and source, the job's kind, and every
finding's id and severity.  The rewrites that moved a reading before the fixes:

* a legacy ``torch.autograd.profiler`` list (a bare JSON array) re-written with its keys sorted
  (``json.dump(sort_keys=True)``, ``jq -S``): each event opens with its ``args`` object, and the sniff that tells
  a Chrome array from other JSON asked for ``"ph"`` before any brace -- the file was left out as "JSON without
  traceEvents" (``formats.kineto.layout._CHROME_ARRAY``);
* rocprof's ``results.json`` re-written the same way: ``otherData`` (rocminfo's agents) comes before ``traceEvents``,
  and the reader asked for the file to open with ``{ "traceEvents":[`` -- the host was an error
  (``formats.rocprof.reader._events``).

Session 56's (h37-meta56):

* two ranks' files with their keys reversed -- the clock before ``traceEvents``, ``distributedInfo`` after it: the
  header's tail was read only where the head held no clock, and the ranks were two captures
  (``formats.kineto.layout._header_may_follow``);
* kernels, copies and memsets written without their ``correlation`` (the calls keep theirs): unlaunched, though the
  flow arrows (``ac2g``; PyTorch 1.8-1.10's ``async``/``launch``) name each call (``formats.kineto.parse.link_by_flows``);
* host spans written as ``B``/``E`` pairs: only ``X`` events were read (``formats.kineto.parse.completed_pairs``);
* times written as strings: still an error, now one that says why.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report

WILD = FIXTURES / "wild"


def _reading(folder: Path) -> list:
    """Each session's hosts (step count and source, job kind) and findings (id, severity), in order."""
    out = []
    for s in discover(str(folder)):
        rep = session_report(s).to_dict()
        for h in rep["hosts"]:
            assert not h.get("error"), h["error"]
            out.append((h["host"], (h.get("steps") or {}).get("count"), (h.get("steps") or {}).get("source"),
                        (h.get("job") or {}).get("kind")))
        out += sorted((f["id"], f["severity"]) for f in rep["findings"])
    return out


def test_a_legacy_list_with_its_keys_sorted_reads_as_written(tmp_path):
    src = WILD / "legacy_list_cudnn_convs"
    (name,) = [p.name for p in src.iterdir()]
    events = json.load(gzip.open(src / name, "rt"))
    assert isinstance(events, list) and next(iter(events[0])) == "name"  # PyTorch's order: name, ph, ts, ...
    with gzip.open(tmp_path / name, "wt") as f:
        json.dump(events, f, sort_keys=True)
    assert gzip.open(tmp_path / name, "rb").read(12) == b'[{"args": {}'
    whole = _reading(src)
    assert whole and whole[0][0] == "resnet_profile"
    assert _reading(tmp_path) == whole


def test_a_rocprof_trace_with_its_keys_sorted_reads_as_written(tmp_path):
    src = WILD / "rocprof_mxfp4_setup_gfx950"
    doc = json.load(gzip.open(src / "results.json.gz", "rt"))
    assert list(doc)[:2] == ["traceEvents", "otherData"]  # tblextr's order
    with gzip.open(tmp_path / "results.json.gz", "wt") as f:
        json.dump(doc, f, sort_keys=True)
    shutil.copy(src / "results.sysinfo.txt", tmp_path)
    whole = _reading(src)
    assert whole[0][1] == 1 and len(whole) > 2  # one host, its pass and findings
    assert _reading(tmp_path) == whole


def _reverse_keys(o):
    return {k: _reverse_keys(o[k]) for k in reversed(list(o))} if isinstance(o, dict) else o


def test_two_ranks_whose_header_keys_stand_around_their_events_are_one_job(tmp_path):
    src = WILD / "tp_rtx4090_two_ranks"
    for p in sorted(src.iterdir()):
        doc = json.load(gzip.open(p, "rt"))
        assert list(doc)[-1] == "baseTimeNanoseconds" and list(doc).index("distributedInfo") < list(doc).index(
            "traceEvents")  # Kineto's order: the ranks before the events, the clock after them
        doc["traceEvents"] = [_reverse_keys(e) for e in doc["traceEvents"]]
        with gzip.open(tmp_path / p.name, "wt") as f:
            json.dump(_reverse_keys(doc), f)  # the clock first, the ranks after the events
    whole = _reading(src)
    assert whole[0][0] == "llama_trace_4layers*_with_annotations"  # both ranks, one machine's host
    assert [[len(h.ranks) for h in s.hosts] for s in discover(str(tmp_path))] == [[2]]  # one session, its two ranks
    assert _reading(tmp_path) == whole


def test_kernels_written_without_their_correlation_are_linked_by_their_flow_arrows(tmp_path):
    src = WILD / "cold_mi300x_norm"
    (name,) = [p.name for p in src.iterdir()]
    doc = json.load(gzip.open(src / name, "rt"))
    work = [e for e in doc["traceEvents"] if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    assert work and all("correlation" in e["args"] for e in work)
    assert sum(e.get("cat") == "ac2g" and e.get("ph") == "f" for e in doc["traceEvents"]) >= len(work) // 2
    for e in work:
        del e["args"]["correlation"]  # the calls keep theirs, the arrows their ids
    with gzip.open(tmp_path / name, "wt") as f:
        json.dump(doc, f)
    whole = _reading(src)
    assert whole[0][2] == "annotation_spans" and ("launch_bound:normalization_layer_test", "critical") in whole
    assert _reading(tmp_path) == whole


def _as_begin_end(events: list, keep) -> list:
    """``events`` with each X event ``keep`` takes written as a B/E pair, in an order the Trace Event Format pairs back:
    per thread ends before begins at one instant, the inner end first, the outer begin first."""
    out, spans, n = [], {}, 0
    for e in events:
        if e.get("ph") == "X" and keep(e):
            spans.setdefault((e["pid"], e["tid"]), []).append(e)
        else:
            out.append((e.get("ts", -1), n, e))
            n += 1
    for evs in spans.values():
        stack = []
        for e in sorted(evs, key=lambda e: (e["ts"], -e["dur"])) + [None]:
            while stack and (e is None or stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]):
                s = stack.pop()
                out.append((s["ts"] + s["dur"], n, {"ph": "E", "pid": s["pid"], "tid": s["tid"], "ts": s["ts"] + s["dur"]}))
                n += 1
            if e is not None:
                assert not stack or e["ts"] + e["dur"] <= stack[-1]["ts"] + stack[-1]["dur"]  # nested
                out.append((e["ts"], n, {**{k: v for k, v in e.items() if k != "dur"}, "ph": "B"}))
                n += 1
                stack.append(e)
    return [e for _, _, e in sorted(out, key=lambda x: (x[0], x[1]))]


def test_host_spans_written_as_begin_end_pairs_read_as_complete_events(tmp_path):
    src = WILD / "amd_mi250"
    (name,) = [p.name for p in src.iterdir()]
    doc = json.load(gzip.open(src / name, "rt"))
    host = {e["pid"] for e in doc["traceEvents"] if e.get("cat") == "cpu_op"}
    doc["traceEvents"] = _as_begin_end(doc["traceEvents"], lambda e: e["pid"] in host and e.get("cat") != "python_function")
    assert sum(e["ph"] == "B" for e in doc["traceEvents"]) > 50 and not any(
        e["ph"] == "X" and e["pid"] in host and e.get("cat") in ("cpu_op", "cuda_runtime") for e in doc["traceEvents"])
    with gzip.open(tmp_path / name, "wt") as f:
        json.dump(doc, f)
    whole = _reading(src)
    assert whole[0][1:3] == (1, "profiler_step")
    assert _reading(tmp_path) == whole


def test_a_trace_whose_every_span_is_a_begin_end_pair_reads_as_written(tmp_path):
    src = WILD / "cpu_only_gloo"  # a CPU-only job: with its host spans as pairs, no X event is left
    (name,) = [p.name for p in src.iterdir() if ".pt.trace" in p.name]
    doc = json.load(gzip.open(src / name, "rt"))
    doc["traceEvents"] = _as_begin_end(doc["traceEvents"], lambda e: e.get("cat") != "python_function")
    assert not any(e["ph"] == "X" for e in doc["traceEvents"])
    with gzip.open(tmp_path / name, "wt") as f:
        json.dump(doc, f)
    whole = _reading(src)
    assert whole[0][1:] == (1, "profiler_step", "no_gpu")
    assert _reading(tmp_path) == whole


def test_pytorch_1_10_kernels_without_their_correlation_are_linked_by_their_launch_flows(tmp_path):
    src = WILD / "loop_ended_backlog_a100_gnn"  # PyTorch 1.10: flows of category "async", named "launch"
    (name,) = [p.name for p in src.iterdir()]
    doc = json.load(gzip.open(src / name, "rt"))
    work = [e for e in doc["traceEvents"] if e.get("cat") in ("Kernel", "Memcpy", "Memset")]
    assert work and not any(e.get("cat") == "ac2g" for e in doc["traceEvents"])
    for e in work:
        e["args"].pop("correlation", None)
    with gzip.open(tmp_path / name, "wt") as f:
        json.dump(doc, f)
    assert _reading(tmp_path) == _reading(src)


def test_times_written_as_strings_are_an_error_that_says_so(tmp_path):
    src = WILD / "amd_mi250"
    (name,) = [p.name for p in src.iterdir()]
    doc = json.load(gzip.open(src / name, "rt"))
    for e in doc["traceEvents"]:
        if isinstance(e.get("ts"), (int, float)):
            e["ts"] = str(e["ts"])  # no Kineto writes it: read as no time, and said
    with gzip.open(tmp_path / name, "wt") as f:
        json.dump(doc, f)
    (s,) = discover(str(tmp_path))
    (h,) = session_report(s).to_dict()["hosts"]
    assert "no numeric time" in h["error"] and "string" in h["error"]
