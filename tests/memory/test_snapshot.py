"""PyTorch memory snapshots (``torch.cuda.memory._dump_snapshot`` pickles, issue #29): read safely, discovered by
content in a run folder, and an OOM named with what held the GPU.

The snapshots are written by ``synthetic/memsnapshot.py`` with the structure ``torch.cuda.memory._snapshot()``
returns and its allocator model's known numbers; the hostile pickles there run code under ``pickle.load`` (checked
here first, so the refusal is of something real), and must be refused by the reader without running.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.discover.logdir import discover, skipped
from tb_gpu_advisor.formats.snapshot.reader import SnapshotReadError, read_trace
from tb_gpu_advisor.formats.snapshot.unpickle import UnsafePickle, loads
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import REPO


def _write(tmp_path: Path, name: str, protocol: int = 4) -> tuple[Path, ms.Scenario]:
    sc = ms.SCENARIOS[name]()
    return Path(ms.write(str(tmp_path / f"{name}.pickle"), sc.doc, protocol=protocol)), sc


# --------------------------------------------------------------------------- the restricted unpickler

@pytest.mark.parametrize("protocol", range(0, pickle.HIGHEST_PROTOCOL + 1))
def test_every_protocol_reads_as_the_plain_data_pickled(protocol: int):
    """A real snapshot's structure, and a frame whose path is long (protocol 0 writes strings as text lines)."""
    sc = ms.oom_activations()
    assert loads(pickle.dumps(sc.doc, protocol=protocol)) == sc.doc
    doc = {"segments": [], "device_traces": [[{"action": "alloc", "addr": 1 << 47, "size": -1, "time_us": 1.5e15,
                                               "frames": [ms.frame("/" + "d" * 5000 + "/model.py", 7, "forward")]}]]}
    assert loads(pickle.dumps(doc, protocol=protocol)) == doc


def test_hostile_pickles_are_refused_without_running(tmp_path: Path):
    """Each code-running pickle does run under ``pickle.loads`` (its marker file appears), and is refused by the
    reader with the marker left absent; the other bad files are errors, never a partial result."""
    marker = tmp_path / "ran"
    bad = ms.hostile(str(marker))
    runs = [k for k in bad if k.startswith("reduce_")]
    for name in runs:
        pickle.loads(bad[name])  # noqa: S301 - the control: the file really runs code
        assert marker.exists(), name
        marker.unlink()
    for name, data in bad.items():
        if name == "shared_references":
            continue
        path = tmp_path / f"{name}.pickle"
        path.write_bytes(data)
        with pytest.raises(SnapshotReadError) as e:
            read_trace(str(path))
        assert not marker.exists(), name
        if name in runs:
            assert "refused" in str(e.value) and "GLOBAL" in str(e.value), name
    with pytest.raises(UnsafePickle):
        loads(bad["set_value"])


def test_shared_references_are_walked_within_bounds(tmp_path: Path):
    """A few kB whose memo references make a billion frames and a million entries: read in bounded work (the
    entries past the budget left out and said so), no frame list walked past its first frames."""
    path = tmp_path / "shared.pickle"
    path.write_bytes(ms.hostile(str(tmp_path / "ran"))["shared_references"])
    assert path.stat().st_size < 20_000
    tr = read_trace(str(path))
    assert tr.problems and "were read" in str(tr.problems[0])
    assert all(len(b.frames) <= 24 for bs in tr.snapshot.blocks.values() for b in bs)


def test_a_pickle_of_something_else_is_no_snapshot(tmp_path: Path):
    path = tmp_path / "model.pkl"
    path.write_bytes(pickle.dumps({"weights": [1.0, 2.0]}))
    with pytest.raises(SnapshotReadError, match="no memory snapshot"):
        read_trace(str(path))


@pytest.mark.parametrize("doc", [
    # angelolmn/HitsBE ``my_snapshot.pickle`` @1854a6c (465 bytes, no licence: read, not kept) is this, with
    # PyTorch 2.5's ``allocator_settings`` and an empty ``external_annotations``: main called it healthy (exit 0)
    {"segments": [], "device_traces": [], "allocator_settings": {"expandable_segments": False},
     "external_annotations": []},
    {"segments": [], "device_traces": [[], []]},  # history on two devices, neither recorded anything
])
def test_an_empty_snapshot_is_an_error_not_healthy(tmp_path: Path, doc: dict):
    """A snapshot with no segment and no recorded entry holds nothing to analyse: an error that says why, so the
    command line exits 2 instead of reporting a healthy job."""
    path = Path(ms.write(str(tmp_path / "my_snapshot.pickle"), doc))
    with pytest.raises(SnapshotReadError, match="empty memory snapshot"):
        read_trace(str(path))
    rep = analyze_host(HostFile("empty", str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error and "empty memory snapshot" in rep.error and not rep.findings


# --------------------------------------------------------------------------- the reader's numbers

def test_state_and_oom_are_the_allocators(tmp_path: Path):
    """At the dump: reserved = the segments, allocated = the active blocks (the model's own counters); the OOM entry:
    the request, the driver's free bytes, where it was asked for; every event's totals, walked back from the dump,
    end at the dump's state and start at zero (the history covers the whole run)."""
    path, sc = _write(tmp_path, "oom_activations")
    tr = read_trace(str(path))
    t = sc.truth
    reserved, allocated, _, _ = tr.snapshot.state[0]
    assert (reserved, allocated) == (t["reserved"], t["allocated"])
    (oom,) = tr.snapshot.ooms
    assert (oom.requested, oom.device_free) == (t["requested"], t["device_free"])
    assert oom.frames[0] == "/usr/lib/python3/site-packages/torch/nn/modules/linear.py:125 forward"
    assert oom.live_by_phase["forward"] == t["live_activation_bytes"]
    assert oom.live_by_phase["parameters"] + oom.live_by_phase["optimizer"] == t["persistent_bytes"]
    me = tr.memory[0]
    assert int(me.allocated[-1]) == allocated and int(me.reserved[-1]) == reserved
    assert int(me.allocated[0] - me.delta[0]) == 0 and (me.allocated >= 0).all()


def test_the_oom_finding_names_the_failed_allocation_and_the_fix_that_frees_most(tmp_path: Path):
    """Activations were most of what lived: checkpointing, first; split memory that would have served the request:
    expandable segments.  Each finding is critical, names the request and its frame, and its saving is in bytes."""
    path, sc = _write(tmp_path, "oom_activations")
    rep = analyze_host(HostFile("oom", str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None and rep.capture["framework"] == "pytorch"
    f = rep.findings[0]
    assert f.rule == "oom_snapshot" and f.severity == "critical" and f.gpu == 0
    assert "Allocating 1.00 GiB on GPU 0 failed" in f.summary and "model.py:58 forward" in f.summary
    assert f.metric.detail["cause"] == "activations"
    assert f.saving_bytes == pytest.approx(0.7 * sc.truth["live_activation_bytes"], rel=0.01)
    assert "checkpoint(" in f.actions[0].snippet
    assert {x.rule for x in rep.findings} == {"oom_snapshot"}  # no near-capacity or headroom echo
    path, sc = _write(tmp_path, "fragmented")
    rep = analyze_host(HostFile("frag", str(path), path.stat().st_size, 0, "snapshot"))
    f = rep.findings[0]
    assert f.metric.detail["cause"] == "fragmentation" and "expandable_segments:True" in f.actions[0].snippet
    assert f.saving_bytes == sc.truth["reserved"] - sc.truth["allocated"]
    mem = rep.gpus[0].memory
    assert mem["ooms"][0]["requested_bytes"] == sc.truth["requested"]
    assert mem["capacity_bytes"] == sc.truth["reserved"] + sc.truth["device_free"]


# --------------------------------------------------------------------------- discovery and the CLI

def test_a_snapshot_in_a_run_folder_is_its_own_session(tmp_path: Path):
    """Recognised by content (any name ending .pickle/.pkl), a session of its own beside the run's trace; a pickle
    of something else is listed as skipped with why."""
    from synthetic import torchtrace

    torchtrace.write_run(str(tmp_path), "healthy_bf16", steps=4, run="run1")
    ms.write(str(tmp_path / "run1" / "oom_rank0.pickle"), ms.oom_activations().doc)
    (tmp_path / "run1" / "weights.pkl").write_bytes(pickle.dumps({"w": [0.5]}))
    sessions = [s for s in discover(str(tmp_path)) if s.run == "run1"]
    fmts = sorted(s.format for s in sessions)
    assert fmts == ["kineto", "snapshot"]
    snap = next(s for s in sessions if s.format == "snapshot")
    assert snap.session.endswith("_snapshot") and [h.host for h in snap.hosts] == ["oom_rank0"]
    assert any(p.endswith("weights.pkl") and "no memory snapshot" in why for p, why in skipped(str(tmp_path)))


def test_report_a_snapshot_file_from_the_command_line(tmp_path: Path):
    path, _ = _write(tmp_path / "run", "oom_activations")
    out = subprocess.run([sys.executable, "-m", "tb_gpu_advisor.cli.main", "report", str(path), "--format", "json"],
                         capture_output=True, text=True, cwd=REPO, timeout=300,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert out.returncode in (0, 1), out.stderr
    rep = json.loads(out.stdout)["reports"][0]
    assert rep["findings"][0]["rule"] == "oom_snapshot" and rep["hosts"][0]["gpus"][0]["memory"]["ooms"]


def test_a_capped_process_is_told_of_its_cap():
    """The driver had most of the GPU free when the request failed: a memory cap the process set refused it
    (generated as the real H200 capture happened, tests/fixtures/h200_memory).  The cap's fix comes first, then what
    frees the most (the activations: checkpointing), and the saving is that."""
    sc = ms.memory_cap()
    assert sc.truth["device_free"] > sc.truth["requested"]
    with tempfile.TemporaryDirectory() as d:
        path = Path(ms.write(os.path.join(d, "cap.pickle"), sc.doc))
        rep = analyze_host(HostFile("cap", str(path), path.stat().st_size, 0, "snapshot"))
    (f,) = rep.findings
    assert f.metric.detail["cause"] == "memory_cap" and "memory cap" in f.summary
    assert "set_per_process_memory_fraction" in f.actions[0].snippet and "checkpoint(" in f.actions[1].snippet
    assert f.saving_bytes == pytest.approx(0.7 * sc.truth["live_activation_bytes"], rel=0.01)
