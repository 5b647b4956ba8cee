"""A memory snapshot saved under a ``.json`` name is read as the snapshot it is (issue #37 class 5).

``torch.cuda.memory._dump_snapshot(path)`` pickles to whatever path it is given; a real training job's OOM snapshot
was committed as ``memory_snapshot.json`` (tests/fixtures/wild/SURVEY.md, session 30, h37-survey64:
Nesta-gitU/discrete_diffusion) and was left out as "JSON without traceEvents: not a trace" -- the assumption that a
``.json`` name holds JSON.  The content decides: the snapshot's layout is asked after the trace formats refuse the
file, so a JSON file that is no trace keeps the trace formats' words.  Truth by construction:
``synthetic.memsnapshot.oom_activations``.
"""

from __future__ import annotations

import json
from pathlib import Path

from synthetic import memsnapshot as ms
from synthetic import torchtrace
from tb_gpu_advisor.discover.logdir import discover, skipped
from tb_gpu_advisor.runtime.pipeline import analyze_host


def test_a_snapshot_named_json_is_its_own_snapshot_session(tmp_path: Path):
    sc = ms.oom_activations()
    ms.write(str(tmp_path / "run1" / "memory_snapshot.json"), sc.doc)
    (snap,) = [s for s in discover(str(tmp_path)) if s.run == "run1"]
    assert snap.format == "snapshot" and [h.host for h in snap.hosts] == ["memory_snapshot"]
    rep = analyze_host(snap.hosts[0])
    assert rep.error is None and rep.findings[0].rule == "oom_snapshot"
    assert rep.gpus[0].memory["ooms"][0]["requested_bytes"] == sc.truth["requested"]


def test_control_json_that_is_no_trace_keeps_the_trace_formats_words(tmp_path: Path):
    """A config file and a trace beside the snapshot: the trace read as Kineto's, the config left out as before."""
    torchtrace.write_run(str(tmp_path), "healthy_bf16", steps=4, run="run1")
    (tmp_path / "run1" / "config.json").write_text(json.dumps({"lr": 0.001, "batch_size": 32}))
    ms.write(str(tmp_path / "run1" / "memory_snapshot.json"), ms.oom_activations().doc)
    fmts = sorted(s.format for s in discover(str(tmp_path)) if s.run == "run1")
    assert fmts == ["kineto", "snapshot"]
    why = dict(skipped(str(tmp_path)))
    assert why.get("run1/config.json") == "JSON without traceEvents: not a trace"
