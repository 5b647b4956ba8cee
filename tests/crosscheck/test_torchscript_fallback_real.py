"""TorchScript's executor planning a graph for new shapes is compilation, not the host's steady work (issue #37,
class 4; h37-jitcompile).

ryienh/gnn-ops-benchmark ``log/tensorboard/AttentiveFPREG_FakeDataset_inf/thetagpu11_3733800.1646347140914.pt.trace.json``
(BSD-3-Clause, Argonne; kept as ``tests/fixtures/wild/torchscript_fallback_a100_gnn``): PyTorch Geometric's
AttentiveFP run forward under ``torch.no_grad()`` on an A100-SXM4-40GB (ThetaGPU), PyTorch 1.8-1.10.  Read by hand:
one ``ProfilerStep#2`` of 866.3 ms; PyG's scripted ``softmax`` is called 8 times, 5 of them in about 1 ms and 3 in
275-276 ms.  Each slow call holds two chains of nested ``fallback_function`` calls (the function TorchScript's
profiling executor calls when a guard on the shapes it profiled fails); in each chain one ``fallback_function`` runs
no op and no CUDA call for 134.8-139.8 ms, then the nested fallback runs the graph's ops (``aten::sub``,
``aten::exp``; ``aten::add``, ``aten::div``) in 0.2-0.3 ms.  The silence is the executor profiling and optimising
the fallback graph for the new shapes (a GNN's node count changes every batch) -- one-time per shape.  On main it
read critical "Host-bound ... saves ~818.4 ms (94%)" with the fix ``model = torch.jit.script(model)``: the model's
own scripted code is what spends the time.

Controls, from the same file: the 5 quick ``softmax`` calls hold 86 fallback functions that run ops with 18-78
us of their own each -- none is taken; and the same silences filled with ops are the program's
work, so the step is host-bound again.
"""

from __future__ import annotations

import copy

from tests.support.paths import FIXTURES
from tests.support.run_report import doc_host, gzip_json, one_file_host

TRACE = FIXTURES / "wild" / "torchscript_fallback_a100_gnn" / "thetagpu11_3733800.1646347140914.pt.trace.json.gz"


def _said(host: dict) -> str:
    return " ".join(f["summary"] + " " + " ".join(a.get("text", "") + " " + (a.get("code") or "")
                                                    for a in f["actions"]) for f in host["findings"])


def _silences(doc: dict) -> list[tuple[float, float]]:
    """(start, end) us of each stretch of a ``fallback_function`` with no event of its thread nested in it, 1 ms or
    longer: read from the file, as by hand."""
    ops = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") in ("Operator", "Runtime")]
    out = []
    for f in (e for e in ops if e["name"] == "fallback_function" and e["dur"] >= 1000):
        a, b = f["ts"], f["ts"] + f["dur"]
        kids = sorted((e["ts"], e["ts"] + e["dur"]) for e in ops if e is not f and e["tid"] == f["tid"]
                      and a <= e["ts"] and e["ts"] + e["dur"] <= b)
        at = a
        for s, t in kids + [(b, b)]:
            if s - at >= 1000:
                out.append((at, s))
            at = max(at, t)
    return out


def test_the_executors_silences_are_compilation_not_host_bound_work():
    host = one_file_host(str(TRACE), "kineto")
    job, top = host["job"], host["findings"][0]
    assert job["phase"] == "warm-up", job
    assert "6 stretches of TorchScript's executor" in job["phase_evidence"], job["phase_evidence"]
    assert 820.0 < job["one_time_ms"] < 825.0, job["one_time_ms"]  # 6 silences of 134.8-139.8 ms, read by hand
    assert top["rule"] == "cold_start", [f["rule"] for f in host["findings"]]
    assert not any(f["title"].startswith("Host-bound") for f in host["findings"]), [f["title"] for f in host["findings"]]
    # the model is already scripted: scripting it is no fix for the time its scripted code spends compiling
    assert "torch.jit.script" not in _said(host)


def test_fallbacks_that_run_ops_are_not_taken():
    """The 5 quick ``softmax`` calls' fallbacks (and each slow chain's outer and inner ones) run the graph: only
    the 6 silences, 2 per slow call, are compilation."""
    doc = gzip_json(TRACE)
    silences = _silences(doc)
    assert len(silences) == 6, silences
    fallbacks = [e for e in doc["traceEvents"] if e.get("name") == "fallback_function"]
    assert len(fallbacks) == 136
    job = one_file_host(str(TRACE), "kineto")["job"]
    assert abs(job["one_time_ms"] - sum(b - a for a, b in silences) / 1000) < 0.5, job


def test_the_same_silences_filled_with_ops_are_the_programs_work(tmp_path):
    """An op spanning each silence: the fallback function now runs the graph all along, and the step is host-bound
    as main read it -- the name alone takes nothing."""
    doc = gzip_json(TRACE)
    proto = next(e for e in doc["traceEvents"] if e.get("name") == "aten::exp")
    for a, b in _silences(doc):
        op = copy.deepcopy(proto)
        op.update(ts=a + 1, dur=b - a - 2, name="aten::cumsum")
        op.get("args", {}).pop("External id", None)
        doc["traceEvents"].append(op)
    host = doc_host(tmp_path, doc)
    assert "TorchScript's executor" not in host["job"]["phase_evidence"], host["job"]
    top = host["findings"][0]
    # no one-time cost is read; one pass, nothing repeats to show a steady state (h37-steady35)
    assert host["job"]["phase"] == "one-pass", host["job"]
    assert top["title"].startswith("Host-bound"), [f["title"] for f in host["findings"]]
    assert top["saving"]["ms_per_step"] > 800.0, top["saving"]  # main's 818.4 ms: the time is the ops' now
