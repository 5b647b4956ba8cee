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
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"


def _reading(folder: Path) -> list:
    """Each session's hosts (step count and source, job kind) and findings (id, severity), in order."""
    out = []
    for s in discover(str(folder)):
        rep = analyze_session(s.run, s.session, s.hosts).to_dict()
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
