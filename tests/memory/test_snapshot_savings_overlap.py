"""Two memory findings that free the same bytes say so: a part never exceeds its whole (issue #37 class 5,
h37-probe42m).

A forward run with autograd on whose attention is computed op by op keeps the softmaxes in the graph: the kept
forward's finding (inference mode) and the attention finding (a fused kernel) each free them, and each saving is true
alone.  Main stated both as if they added -- on the real CS336 forward (wild/snapshot_forward_rebound_autograd)
8.16 GiB and 1.41 GiB against the 8.20 GiB its peak holds above the weights.  Here the attention finding says how much
of it, at least, the kept forward's fix frees too: the two savings' sum less that whole.  Control: a forward whose
peak holds no kept graph (wild/snapshot_attn_fwd_autograd) says nothing of an overlap."""

from __future__ import annotations

from pathlib import Path

from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
GIB = 2 ** 30


def _report(name: str):
    (path,) = (WILD / name).glob("*.pickle*")
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _by_cause(rep) -> dict:
    return {f.metric.detail.get("cause"): f for f in rep.findings if f.rule == "activation_memory"}


def test_the_attention_finding_names_what_it_shares_with_the_kept_forward():
    """The two savings add past what the peak holds above the held memory: the attention finding says the excess
    (within rounding), no more than its own saving."""
    rep = _report("snapshot_forward_rebound_autograd")
    found = _by_cause(rep)
    kept, math = found["forward_kept"], found["attention_math"]
    g = next(g.memory for g in rep.gpus if g.gpu == math.metric.detail["gpu"])
    whole = g["peak_allocated_bytes"] - g["breakdown"].get("held", 0)
    shared = math.saving_bytes + kept.saving_bytes - whole
    assert shared > 0, (math.saving_bytes / GIB, kept.saving_bytes / GIB, whole / GIB)  # the file's own truth
    assert "the two savings overlap, they do not add" in math.summary, math.summary
    said = float(math.summary.split("At least ")[1].split(" GiB")[0])
    assert abs(said - shared / GIB) <= 0.01, (said, shared / GIB)
    assert said * GIB <= math.saving_bytes


def test_control_no_kept_graph_no_overlap():
    found = _by_cause(_report("snapshot_attn_fwd_autograd"))
    assert "attention_math" in found and "forward_kept" not in found, list(found)
    assert "overlap" not in found["attention_math"].summary
