"""A forward under autograd recorded without stacks: its layers are no training iterations, the graph it keeps no
leak (issue #37 class 5; session 54's metamorphic checks).

Each real snapshot of tests/fixtures/wild rewritten as ``_record_memory_history(context=None)`` writes it (no frame
anywhere) and read against itself whole.  CS336's 2.7B forward-only benchmark under autograd
(``snapshot_forward_autograd_2p7b``; the program rebinds its output, so the history holds one pass's climb through
its 32 layers, then the previous pass's graph -- 773 blocks made before the recording, 5.23 GiB -- freed in one run)
read, without its frames, as "training steps" of 29 iterations and a 3.63 GiB leak, its finding "Accumulate
numbers, not tensors", where the whole reads "a forward pass keeps its tensors for a backward that never runs".

* Each layer repeats the same 56 allocations and frees its temporaries last-in first-out while it makes the tensors
  it saves: the walk back a backward makes (``job.iterations._walk``).  But a backward frees what its forward saved,
  and each layer ends at its own peak, 166 MiB above the last: ``job.iterations._holds_its_climb``.
* A leak keeps its blocks for good; the history freed an earlier pass's blocks of every kept size in one run when
  the output was rebound: ``metrics.memory._pass_replaced``.

Generator: ``synthetic.memsnapshot.forward_rebound(temps=...)``, each layer's temporaries freed last-in first-out
while it makes the tensors it keeps (truth by construction: inference, the pass's kept bytes); its twin without
temporaries read right before.  Controls: stackless training loops that leak still read their iterations and leak."""

from __future__ import annotations

import gzip
import os
import pickle

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"


def _report(tmp_path, name: str, doc: dict):
    path = ms.write(str(tmp_path / f"{name}.pickle"), doc)
    rep = analyze_host(HostFile(name, path, os.path.getsize(path), 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _stackless_real(tmp_path, folder: str):
    src = next(p for p in (WILD / folder).iterdir() if ".pickle" in p.name)
    with gzip.open(src, "rb") if src.name.endswith(".gz") else open(src, "rb") as f:
        doc = pickle.load(f)
    return _report(tmp_path, folder, ms.as_recorded(doc, context=None))


@pytest.mark.parametrize("folder", ["snapshot_forward_autograd_2p7b", "snapshot_forward_rebound_autograd"])
def test_a_real_forward_under_autograd_without_stacks_keeps_its_graph_and_leaks_nothing(tmp_path, folder):
    rep = _stackless_real(tmp_path, folder)
    rules = [f.rule for f in rep.findings]
    assert "memory_leak" not in rules
    assert rep.findings[0].rule == "activation_memory" and rep.findings[0].severity == "warning"
    assert rep.findings[0].metric.detail.get("cause") == "forward_kept"
    assert rep.job["kind"] != "training"
    assert rep.steps.get("source") != "memory_iterations"


@pytest.mark.parametrize("temps", [4, 6])
def test_generated_forward_layers_with_temporaries_read_as_one_kept_pass(tmp_path, temps):
    sc = ms.forward_rebound(temps=temps, layers=24)
    rep = _report(tmp_path, "rebound", ms.as_recorded(sc.doc, context=None))
    assert "memory_leak" not in {f.rule for f in rep.findings}
    assert rep.job["kind"] != "training"
    kept = [f for f in rep.findings if f.rule == "activation_memory"]
    assert kept and kept[0].metric.detail.get("cause") == "forward_kept"
    d = kept[0].metric.detail
    assert d["kept_bytes"] == sc.truth["kept_bytes"] + sc.truth["earlier_bytes"]
    assert d["earlier_pass_bytes"] == sc.truth["earlier_bytes"]


def test_control_a_stackless_training_loop_that_leaks_still_reads_its_leak(tmp_path):
    sc = ms.training_iterations(6, layers=6, mib=8, leak="list")
    rep = _report(tmp_path, "leaky", ms.as_recorded(sc.doc, context=None))
    leak = [f for f in rep.findings if f.rule == "memory_leak"]
    assert leak and rep.job["kind"] == "training"
    d = leak[0].metric.detail
    assert (d["per_iteration_bytes"], d["leak_end_bytes"]) == (sc.truth["leak"]["bytes_per_iteration"],
                                                              sc.truth["leak"]["bytes_at_end"])
