"""A snapshot recorded with ``_record_memory_history(context="state")`` is read as a history without stacks whose live
blocks carry theirs (issue #37 class 5, h37-snap69).

PyTorch's ``RecordContext::STATE`` gathers a stack for each block (``context_when_allocated``) and none for the trace's
entries (``torch/csrc/cuda/memory_snapshot.cpp``: an entry without context gets no ``frames`` key), so the history is
as bare as ``context=None``'s while the blocks at the dump each name their line.  Main asked "no allocation and no
live block carries a frame" before reading the history's pattern: with the live blocks framed, the history was read as
framed, every allocation "other", and a training loop that ``context=None`` reads as 3 iterations read "no step timed";
a real Windows training step read "inference" from the forward blocks live at its dump.  Truth by construction
(``synthetic.memsnapshot.training_iterations``) and the real ``snapshots_wild`` training step, each recorded both ways
(``as_recorded``)."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.rules.capture_quality import NO_STACKS_METRIC
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.snapshot_report import report

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "snapshots_wild"


def test_a_state_context_loop_reads_its_iterations_as_a_bare_history_does(tmp_path: Path):
    """The same loop recorded with ``context=None`` and ``context="state"``: the same steps from the same pattern, the
    same activations at the peak, and the note names the setting that dropped the history's stacks."""
    sc = ms.training_iterations()
    bare = report(tmp_path, ms.as_recorded(sc.doc, context=None), "bare")
    state = report(tmp_path, ms.as_recorded(sc.doc, context="state"), "state")
    assert bare.job["step_source"] == state.job["step_source"] == "memory_iterations"
    assert [r.start_ms for r in state.step_rows.rows()] == [r.start_ms for r in bare.step_rows.rows()]
    assert state.job["kind"] == "training"
    (note,) = [f for f in state.findings if f.rule == "capture_quality" and f.metric.id == NO_STACKS_METRIC]
    assert 'context="state"' in note.summary and "without context" not in note.summary


def test_a_real_training_step_recorded_with_state_context_is_training(tmp_path: Path):
    """The real Windows training step (Python frames only) with its entries' stacks dropped as ``context="state"``
    drops them: its history's walk back is the backward its live forward blocks were kept for -- training, as the
    same file without any stack reads, not the live blocks' "inference"."""
    with gzip.open(WILD / "windows_training_cs336.pickle.gz", "rb") as f:
        doc = pickle.load(f)
    rep = report(tmp_path, ms.as_recorded(doc, context="state", stacks="python"))
    assert rep.job["kind"] == "training", rep.job["kind_evidence"]


def test_a_one_event_history_is_said_as_enabled_state_keeps_it(tmp_path: Path):
    """``enabled="state"`` keeps the last event alone (a ring buffer of one): the loop's last event, a free, reads as a
    history begun late -- said as what the setting does, with the call that records the history, not as "a late start,
    more likely" of a ``max_entries`` that is no round number."""
    path = ms.write(str(tmp_path / "state.pickle"), ms.as_recorded(ms.training_iterations().doc, enabled="state"))
    note = host_metrics(read_trace(path)).memory.gpus[0].note
    assert '_record_memory_history(enabled="state") keeps (the last event alone' in note, note
    assert 'enabled="all", max_entries=100_000' in note and "more likely the first" not in note


def test_a_training_oom_recorded_with_state_context_is_training(tmp_path: Path):
    """By construction (``oom_activations``: a training step out of memory in its forward, Adam's state live): with
    ``context="state"`` only the live blocks name their maker -- 18 GiB of the forward's, 4 GiB of the optimizer's.
    The forward's are what a training step keeps for its backward; the optimizer's state says training (base: the
    forward's bytes outranked it, "inference")."""
    rep = report(tmp_path, ms.as_recorded(ms.oom_activations().doc, context="state"))
    assert rep.job["kind"] == "training", rep.job["kind_evidence"]
    assert "what a training step's forward keeps for its backward" in rep.job["kind_evidence"]


def test_a_real_one_event_history_is_said_so(tmp_path: Path):
    """The real SketchKV2 state (``wild/snapshot_llama_kvcache_state``, PROVENANCE): its history is one free of an 8-byte
    block it never allocated -- what ``enabled="state"`` keeps (its script's call is not in the repository; a
    recording begun just before the dump leaves the same).  Base: "... the run under way, or its ring buffer ... (1
    entry, no round max_entries: more likely the first)"."""
    path = WILD.parent / "wild" / "snapshot_llama_kvcache_state" / "my_snapshot.pickle"
    note = host_metrics(read_trace(str(path))).memory.gpus[0].note
    assert "the history holds one event" in note and 'enabled="state"' in note, note
    assert "more likely the first" not in note


def test_an_oom_recorded_with_state_context_names_its_live_blocks_from_the_dump(tmp_path: Path):
    """``oom_activations`` dumped at its OOM: with ``context="state"`` the entries carry no stack but the blocks live
    at the dump -- the same blocks -- do; what was live at the OOM is named by phase as the framed history names it
    (base: every byte "other", what frees the most 0 B).  Control: ``context=None`` names nothing."""
    doc = ms.oom_activations().doc
    framed, state, bare = (read_trace(ms.write(str(tmp_path / f"{n}.pickle"), d)).snapshot.ooms[0]
                           for n, d in (("framed", doc), ("state", ms.as_recorded(doc, context="state")),
                                        ("bare", ms.as_recorded(doc, context=None))))
    assert state.live_by_phase == framed.live_by_phase and set(framed.live_by_phase) - {"other"}
    assert set(bare.live_by_phase) == {"other"}
