"""A memory snapshot saved as JSON text is read as the snapshot it is (h37-snap64; issue #37 class 5: a form of the dump
not covered).

Why: ``torch.cuda.memory._snapshot()`` returns plain data (dicts, lists, frames as ``filename/line/name`` records), and
scripts that read it themselves save it with ``json.dump`` (a public notebook: ``json.dump(torch.cuda.memory.
_snapshot(), open("bonk.json", "w"))``; PyTorch's own tests dump it with ``json.dumps``).  Such a file was refused:
"JSON without traceEvents: not a trace".  Truth by construction: the same generated snapshot pickled and as JSON
must read the same.  Past ``reader.JSON_MAX_BYTES`` (parsed whole, unlike a pickle's streamed read) it is refused in
words that say how to save it as a pickle.  The first two tests fail on base; the last is a control (JSON that is no
snapshot keeps the trace formats' words)."""

from __future__ import annotations

import json
from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.snapshot import reader
from tests.support.snapshot_reports import report, written


def _json_run(tmp_path: Path, doc: dict) -> Path:
    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    (run / "memory_snapshot.json").write_text(json.dumps(doc))
    return run / "memory_snapshot.json"


def test_a_snapshot_saved_as_json_reads_as_its_pickle(tmp_path: Path):
    sc = ms.training_iterations()
    path = _json_run(tmp_path, sc.doc)
    (s,) = discover(str(tmp_path / "logs"))
    assert [h.format for h in s.hosts] == ["snapshot"] and s.hosts[0].host == "memory_snapshot"
    as_json, as_pickle = report(path).gpus[0].memory, report(written(tmp_path, sc)).gpus[0].memory
    for key in ("peak_allocated_bytes", "peak_reserved_bytes", "breakdown", "top", "step_peaks"):
        assert as_json[key] == as_pickle[key], key
    assert as_json["breakdown"]["held"] == sc.truth["held"]


def test_a_json_snapshot_past_the_bound_is_refused_in_words(tmp_path: Path, monkeypatch):
    path = _json_run(tmp_path, ms.training_iterations().doc)
    monkeypatch.setattr(reader, "JSON_MAX_BYTES", 1000)
    try:
        reader.read_trace(str(path))
    except reader.SnapshotReadError as e:
        assert "saved as JSON" in str(e) and "_dump_snapshot" in str(e)
    else:
        raise AssertionError("a JSON snapshot past the bound was read whole")


def test_control_json_that_is_no_snapshot_is_left_to_the_trace_formats(tmp_path: Path):
    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"segments_per_epoch": 3, "blocks": 2}))
    assert not discover(str(tmp_path / "logs"))
