"""One early call is no steady step: its host time is a note, not a problem (issue #37, the known miss
``wild/compiled_a100_triton``), on real traces.

``wild/compiled_a100_triton`` (HTA's Triton example, MIT): one ``ProfilerStep#1`` holding one ``torch.compile``'d call:
``TorchDynamo Cache Lookup``, a ``Torch-Compiled Region`` of 1.35 ms whose host works 1.21 ms with no runtime call and
no ATen op before its only kernel (``triton_poi_fused_add_cos_sin_0``, 2 us, launched once in the capture).  Read
straight from its JSON here.  At most one iteration ran before that step, and no kernel repeats: nothing shows a
steady step, and the host time before a kernel's only launch is what a first call spends once (Inductor loads its
Triton kernels on their first run).  Main made it a critical host-bound step (75%) and a launch-bound warning for one
kernel, whose launch a graph would still make.  ``fixtures/waits/event_sync_a100`` is the other side: one step too,
but ``ProfilerStep#100`` (99 iterations before it): its host-bound finding stays critical.
"""

from __future__ import annotations

import gzip
import json

import numpy as np

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.job import kind, phase
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES


def _events(folder: str) -> list[dict]:
    (path,) = (FIXTURES / folder).glob("*.pt.trace.json.gz")
    return [e for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("ph") == "X"]


def _report(folder: str) -> dict:
    parent, run = folder.split("/")
    (s,) = [s for s in discover(str(FIXTURES / parent)) if s.run == run]
    return analyze_session(s.run, s.session, s.hosts).to_dict()


def test_the_files_own_evidence_one_step_numbered_1_with_one_kernel_launched_once():
    ev = _events("wild/compiled_a100_triton")
    assert [e["name"] for e in ev if e["name"].startswith("ProfilerStep#")] == ["ProfilerStep#1"]
    assert [e["name"] for e in ev if e.get("cat") == "kernel"] == ["triton_poi_fused_add_cos_sin_0"]
    region = next(e for e in ev if e["name"].startswith("Torch-Compiled Region"))
    first_inside = min(e["ts"] for e in ev if e["ts"] > region["ts"] and e is not region)
    assert first_inside - region["ts"] > 1000  # > 1 ms of the region's host with nothing recorded under it


def test_one_early_call_makes_its_host_time_a_note_and_launches_no_finding():
    rep = _report("wild/compiled_a100_triton")
    bad = [f for f in rep["findings"] if f["severity"] in ("critical", "warning")]
    assert [f["rule"] for f in bad] == ["capture_quality"], [(f["rule"], f["severity"]) for f in bad]
    host = next(f for f in rep["findings"] if f["rule"] == "unexplained_idle")
    assert host["severity"] == "info" and "first call's one-time cost" in host["summary"], host["summary"]
    assert not any(f["rule"] == "launch_bound" for f in rep["findings"])


def test_a_single_later_step_is_still_judged():
    ev = _events("waits/event_sync_a100")
    assert [e["name"] for e in ev if e["name"].startswith("ProfilerStep#")] == ["ProfilerStep#100"]
    rep = _report("waits/event_sync_a100")
    top = rep["findings"][0]
    assert top["rule"] == "unexplained_idle" and top["severity"] == "critical", (top["rule"], top["severity"])
    assert "one-time cost" not in top["summary"]


def test_a_demoted_critical_drops_the_words_that_kept_it_critical(monkeypatch):
    """``wild/mmagic_a100_pyprof_forward`` (one forward pass under PyProf's NVTX, start-up only): its host-bound
    finding, critical on the unmarked pass ("Critical though the capture marks no step ..."), is a note once the
    window reads as the process's first calls -- and said both ("Critical though ... A note, not a problem") before
    h37-survey39.  Control: its cold-start finding stays critical and keeps those words.

    Read as the job stage read it before h37-nsysos: the context's ``ioctl`` outside any recorded call left to the
    host (``job.phase._unrecorded_context`` off) and the pass of no known kind (``job.kind._recorded_ops_forward``
    off).  Since then that second of start-up is the cold start's, the host's remaining work is under half the GPU's
    idle, the pass is a forward pass (its steps no longer guessed), and no host-bound finding is left to demote on
    this capture -- the rules' order is what is tested here, on the real capture's reading that exercised it."""
    empty = np.zeros(0, np.int64)
    monkeypatch.setattr(phase, "_unrecorded_context", lambda trace, ctx: (empty, empty, []))
    monkeypatch.setattr(kind, "_recorded_ops_forward", lambda trace, fw: "")
    rep = _report("wild/mmagic_a100_pyprof_forward")
    notes = [f for f in rep["findings"] if "A note, not a problem" in f["summary"]]
    assert notes and all(f["severity"] == "info" for f in notes)
    assert not [f["rule"] for f in notes if "Critical though" in f["summary"]]
    cold = next(f for f in rep["findings"] if f["rule"] == "cold_start")
    assert cold["severity"] == "critical" and "Critical though the capture marks no step" in cold["summary"]
