"""An OOM whose memory SDPA's math backend holds says so, with the bytes and the fused backend's fix (issue #37
class 5).

``F.scaled_dot_product_attention`` falls back to its math backend (``at::native::_scaled_dot_product_attention_math``)
where no fused kernel takes the call; that backend writes the whole (batch, heads, queries, keys) score matrix and
keeps its softmax for the backward, quadratic in the sequence.  Main booked those bytes as the forward's activations
and prescribed checkpointing (70% of the activations, with a recompute) or a smaller batch; the cheapest fix -- a
fused backend, which never writes the matrix -- went unnamed.  Truth by construction:
``synthetic.memsnapshot.oom_attention_math``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.model.schema import Finding
from tb_gpu_advisor.rules import oom_snapshot
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics


def _finding(path: Path) -> Finding:
    rep = analyze_host(HostFile("oom", str(path), path.stat().st_size, 0, "snapshot"))
    return next(f for f in rep.findings if f.rule == "oom_snapshot")


def test_the_bytes_the_math_backend_holds_at_the_oom(tmp_path: Path):
    sc = ms.oom_attention_math()
    assert sc.truth["oom"]
    (oom,) = read_trace(ms.write(str(tmp_path / "math.pickle"), sc.doc)).snapshot.ooms
    assert oom.live_by_holder == {"attention_math": {"forward": sc.truth["attention_math_bytes"]}}


def test_the_oom_finding_prescribes_a_fused_attention_backend_first(tmp_path: Path):
    """17.25 GiB of the math backend's matrices among 18 GiB of the forward's blocks: the fused backend frees them
    with no recompute; checkpointing frees 70% of the activations (main's cause, its saving 12.6 GiB, its first
    fix)."""
    sc = ms.oom_attention_math()
    f = _finding(Path(ms.write(str(tmp_path / "math.pickle"), sc.doc)))
    assert f.metric.detail["cause"] == "attention_math"
    assert f.saving_bytes == sc.truth["attention_math_bytes"]
    assert "scaled_dot_product_attention" in f.actions[0].text and "fused backend" in f.actions[0].text
    assert "_scaled_dot_product_attention_math" in f.summary


def test_control_python_frames_alone_show_no_backend(tmp_path: Path):
    """``stacks="python"``: the math backend's C++ frame is not recorded, so nothing is claimed (passes on main)."""
    sc = ms.oom_attention_math()
    path = Path(ms.write(str(tmp_path / "py.pickle"), ms.as_recorded(sc.doc, stacks="python")))
    f = _finding(path)
    assert "_scaled_dot_product_attention_math" not in f.summary
    assert "fused backend" not in f.actions[0].text


def test_control_an_oom_of_other_activations_is_unchanged(tmp_path: Path):
    """No attention in the stacks: checkpointing first, its saving 70% of the activations (passes on main)."""
    sc = ms.oom_activations()
    f = _finding(Path(ms.write(str(tmp_path / "acts.pickle"), sc.doc)))
    assert f.metric.detail["cause"] == "activations"
    assert "fused backend" not in " ".join(a.text for a in f.actions)


def test_control_the_flash_backend_fits(tmp_path: Path):
    """The same model with the fused backend runs no OOM: the bytes are the math backend's (by construction)."""
    assert not ms.oom_attention_math("flash").truth["oom"]


def test_the_words_fit_the_kind_the_snapshot_is_read_as(tmp_path: Path):
    """The finding and its fix say why the matrices were live in the words of the job's kind: the scenario's stacks
    show a forward only (no backward, no optimizer), so the report does not read training, and "kept for the
    backward" beside it was the report against itself (main: both the summary and the fix said it; h37-review32).
    The forward is still climbing at the OOM (the scenario's own truth: a training step's first forward), so the
    kind is not read (h37-probe42m: ``job.kind._forward_unended``); it was "inference".  Control: the same OOM read
    as training says the backward keeps them."""
    sc = ms.oom_attention_math()
    path = Path(ms.write(str(tmp_path / "math.pickle"), sc.doc))
    rep = analyze_host(HostFile("oom", str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.job["kind"] == "unknown", rep.job
    f = next(f for f in rep.findings if f.rule == "oom_snapshot")
    assert "kept for the backward" not in f.summary and "kept it for the backward" not in f.actions[0].text, f.summary
    assert "though the snapshot shows no backward" in f.summary, f.summary
    m = host_metrics(read_trace(str(path)))
    m = m[0] if isinstance(m, tuple) else m
    m.job.kind = dataclasses.replace(m.job.kind, kind="training")
    (f,) = oom_snapshot.check(m)
    assert "wrote and kept for the backward" in f.summary, f.summary
