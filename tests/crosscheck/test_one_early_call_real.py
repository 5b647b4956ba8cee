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

from tb_gpu_advisor.discover.logdir import discover
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report


def _events(folder: str) -> list[dict]:
    (path,) = (FIXTURES / folder).glob("*.pt.trace.json.gz")
    return [e for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("ph") == "X"]


def _report(folder: str) -> dict:
    parent, run = folder.split("/")
    (s,) = [s for s in discover(str(FIXTURES / parent)) if s.run == run]
    return session_report(s).to_dict()


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
