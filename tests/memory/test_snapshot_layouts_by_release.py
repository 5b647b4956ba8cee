"""Memory snapshots of every PyTorch release, read as their release wrote them (issue #37 class 5, h37-snap3).

No real 1.13 or 2.0 snapshot was ever found publicly; their layouts come from upstream's own descriptions (the
"Debugging PyTorch memory use with snapshots" post of Aug 2022: ``Segment`` / ``Block`` with ``history`` of
``addr``, ``real_size``, ``frames``, no block ``address``; "Visualizing PyTorch memory usage over time", Dec 2022:
``device_traces`` of ``TraceEntry`` without ``time_us``; the 2.0-era ``_memory_viz.py`` placing blocks by their
sizes from the segment's address) and are written by ``synthetic.memsnapshot.as_version`` with truth by
construction.  What was wrong on main:

* 1.13 / 2.0 blocks hold no ``address``: read as -1, every block live at the dump looked older than the history,
  so what was live at a 2.0 OOM counted the history's blocks twice (18 GiB of activations read as 36);
* a snapshot without history (1.13's ``_snapshot()``, 2.0 without a trace, 2.1's ``context="state"``) read
  "Healthy: no check of the guide fired" though no check that needs the history could run, and its note offered
  ``_record_memory_history()`` -- a TypeError before 2.1 -- whatever the release;
* a 2.1 dump whose segments say ``is_expandable`` but that writes no ``allocator_settings`` was told to turn on
  expandable segments.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.cli import main as cli
from tests.support.paths import FIXTURES
from tests.support.snapshot_report import report

VERL_STATE = FIXTURES / "wild" / "snapshot_verl_rollout_state" / "mem.pickle"


def _read(tmp_path: Path, doc, name: str):
    return read_trace(ms.write(str(tmp_path / f"{name}.pickle"), doc))


def _no_history(rep):
    return [f for f in rep.findings if f.rule == "capture_quality" and f.metric and f.metric.id == "history_events"]


@pytest.mark.parametrize("scenario", ["oom_activations", "fragmented"])
def test_an_old_dumps_blocks_are_placed_without_their_address(tmp_path: Path, scenario: str):
    """2.0's blocks hold no ``address``: placed from ``history[0]["addr"]`` (or their segment's address plus the
    blocks before them), what was live at the OOM is 2.1's, each block once.  Main doubled it."""
    sc = ms.SCENARIOS[scenario]()
    old = ms.as_version(sc.doc, "2.0")
    assert not any("address" in b for s in old["segments"] for b in s["blocks"])  # the 2.0 layout, by construction
    new_oom, old_oom = _read(tmp_path, sc.doc, "new").snapshot.ooms[0], _read(tmp_path, old, "old").snapshot.ooms[0]
    assert old_oom.live_by_phase == new_oom.live_by_phase
    assert sum(old_oom.live_by_phase.values()) == sc.truth["allocated"]  # every live byte once, as the dump holds


def test_blocks_without_history_are_placed_by_their_segment(tmp_path: Path):
    """A 1.13 dump without ``_record_memory_history`` has neither: its blocks follow one another from the segment's
    address, as the viewer's ``segsum`` reads them."""
    doc = ms.as_version(ms.oom_activations().doc, "1.13")
    for seg in doc["segments"]:
        for b in seg["blocks"]:
            b.pop("history", None)
    tr = _read(tmp_path, doc, "bare")
    live = sum(b["size"] for s in doc["segments"] for b in s["blocks"] if b["state"] == "active_allocated")
    assert tr.snapshot.state[0][1] == live and all(b.address >= ms.BASE_ADDR for b in tr.snapshot.blocks[0])


@pytest.mark.parametrize("version, layout", [("2.1", "2.1"), ("2.0", "2.0"), ("1.13", "1.13"),
                                             ("2.0 list", "2.0 or older"), ("bare list", "")])
def test_the_release_is_told_by_the_keys_it_wrote(tmp_path: Path, version: str, layout: str):
    doc = ms.forward_only().doc
    if version in ("2.0", "1.13"):
        doc = ms.as_version(doc, version)
    elif version == "2.0 list":  # torch.cuda.memory_snapshot() of 2.0, pickled by hand: segments with history
        doc = ms.as_version(doc, "2.0")["segments"]
    elif version == "bare list":  # segments with nothing of a release's own: no history, no 2.1 key
        doc = [{k: v for k, v in s.items() if k in ("device", "address", "total_size", "allocated_size",
                                                      "active_size", "stream", "segment_type")}
               | {"blocks": [{"size": b["size"], "state": b["state"]} for b in s["blocks"]]}
               for s in ms.as_version(doc, "1.13")["segments"]]
    assert _read(tmp_path, doc, "v").producer["layout"] == layout


@pytest.mark.parametrize("version", ["1.13", "2.0", "2.1"])
def test_a_snapshot_without_history_says_so_with_its_releases_call(tmp_path: Path, version: str, capsys):
    """The forward that keeps 9 GiB for no backward, dumped without history: a note (never "Healthy") that the peak
    and what a forward kept are unknown, and how that release records them -- 1.13 has no events at all (move to
    2.0), 2.0 names ``trace_alloc_max_entries``, 2.1 ``enabled="all"``.  Main: "Healthy", and
    ``_record_memory_history()`` for every release."""
    doc = ms.forward_only().doc
    doc = ms.as_version(doc, version) if version != "2.1" else copy.deepcopy(doc)
    if version != "1.13":
        doc["device_traces"] = [[]]  # dumped without a trace (2.0's default keeps none; 2.1's context="state")
    rep = report(tmp_path, doc, f"v{version.replace('.', '')}")
    (f,) = _no_history(rep)
    assert f.severity == "info"
    text = f.actions[0].text + (f.actions[0].snippet or "")
    want = pytorch.RECORD_HISTORY_20 if version in ("1.13", "2.0") else pytorch.RECORD_HISTORY_21
    assert f.actions[0].snippet.startswith(want), f.actions[0].snippet
    assert ("Move to PyTorch 2.0" in text) == (version == "1.13")
    assert "_record_memory_history()" not in text + rep.gpus[0].memory["note"]
    cli.main(["report", str(tmp_path / f"v{version.replace('.', '')}.pickle"), "--cache-dir", "off"])
    (line,) = [x for x in capsys.readouterr()[0].splitlines() if x.startswith("FINDINGS:")]
    assert "Healthy" not in line and "holds no allocation history" in line, line


def test_a_snapshot_with_history_gets_no_such_note(tmp_path: Path):
    """Control: the same job with its history (2.1 and 2.0 layouts) -- the forward-kept finding, no note."""
    sc = ms.forward_only()
    for doc in (sc.doc, ms.as_version(sc.doc, "2.0")):
        rep = report(tmp_path, doc, "hist")
        assert not _no_history(rep)
        assert [f for f in rep.findings if f.rule == "activation_memory"]


def test_a_real_state_dump_gets_the_note_in_2_1s_words_whatever_the_engine(tmp_path: Path):
    """verl's rollout worker (a real 2.1+ dump, ``context="state"``, a vLLM engine on the GPU): the note with 2.1's
    call -- the engine's "profile the running server" advice replaces its other capture fixes, never this one."""
    from tb_gpu_advisor.model.logdir import HostFile
    from tb_gpu_advisor.runtime.pipeline import analyze_host

    rep = analyze_host(HostFile("mem", str(VERL_STATE), VERL_STATE.stat().st_size, 0, "snapshot"))
    (f,) = _no_history(rep)
    assert f.actions[0].snippet.startswith(pytorch.RECORD_HISTORY_21)
    # and the capacity beside the dump, which the note says the file lacks (session 71: an engine's advice dropped it)
    assert f.actions[1:] == [pytorch.RECORD_CAPACITY]


def test_segments_that_say_expandable_stand_for_the_missing_settings(tmp_path: Path):
    """A fragmented OOM on an allocator already on expandable segments, dumped by a release that writes
    ``is_expandable`` per segment and no ``allocator_settings``: the fix is not offered again.  Control: the same
    dump on fixed segments keeps it."""
    sc = ms.fragmented()
    on = copy.deepcopy(sc.doc)
    on.pop("allocator_settings")
    for seg in on["segments"]:
        seg["is_expandable"] = True
    off = copy.deepcopy(sc.doc)
    off.pop("allocator_settings")

    def oom_fixes(doc, name):
        (f,) = [f for f in report(tmp_path, doc, name).findings if f.rule == "oom_snapshot"]
        return f, [a.text for a in f.actions]

    f_on, fixes_on = oom_fixes(on, "on")
    f_off, fixes_off = oom_fixes(off, "off")
    expandable = pytorch.EXPANDABLE.text
    assert expandable in fixes_off and expandable not in fixes_on
    assert "already used expandable segments" in f_on.summary and "already" not in f_off.summary
