"""The compiled snapshot pickle reader builds what the Python reader builds, and fails where and as it fails
(issue #38: the C twin of ``unpickle.loads``).

Why: ``formats/snapshot/_cpickle.c`` replaces the pure-Python interpreter on every memory snapshot the reader
opens, and its input is a file someone else wrote, so every value (types, dict order, shared containers), every
call of the reader's ``compact`` callback and every error (class and message) must be the Python path's: on real
snapshots, generated ones of every protocol, hostile pickles and mutations of them.  Both paths run in this process
through ``unpickle._CPICKLE`` (``tests/support/snapshot_paths.py``); ``make test`` runs this file again with
``TB_GPU_ADVISOR_PURE_PYTHON=1``.
"""

from __future__ import annotations

import os
import random

import pytest

from synthetic import hostile
from tb_gpu_advisor.formats.snapshot import compiled, reader, unpickle
from tests.support import snapshot_paths as sp
from tests.support.compiled import built, check_built_where_required, forced_pure_description, needs, version_text
from tests.support.paths import DEMO_LOGS, REPO, SHARED_PROFILES, TESTS

_cpickle = built("tb_gpu_advisor.formats.snapshot._cpickle")
needs_compiled = needs(_cpickle, "snapshot pickle reader")
#: every snapshot kept, each pickle once (``distinct_pickles``: a copy kept under another name is the same input)
FILES = sp.distinct_pickles(sp.snapshot_files([TESTS, DEMO_LOGS, SHARED_PROFILES]))
GENERATED = sp.each_generated()


def test_the_compiled_reader_is_built_where_required():
    """CI (``.ci/run`` sets TB_GPU_ADVISOR_REQUIRE_COMPILED) must test the compiled path, never skip it."""
    check_built_where_required(_cpickle, compiled, unpickle._CPICKLE)


@pytest.mark.same_on_both_paths
def test_version_names_the_snapshot_reader():
    assert ("memory snapshot reader: compiled (C)" if _cpickle else "memory snapshot reader: pure Python") in version_text()
    assert forced_pure_description("snapshot") == "memory snapshot reader: pure Python (TB_GPU_ADVISOR_PURE_PYTHON is set)"


@needs_compiled
@pytest.mark.same_on_both_paths  # compares both paths itself (unpickle._CPICKLE): the pure pass has no C side
@pytest.mark.parametrize("path", FILES, ids=lambda p: os.path.relpath(p, REPO.parent))
def test_every_snapshot_reads_alike(path):
    """Every snapshot of tests/, demo_logs/ and ../shared/profiles: the same value, sharing and compactor calls."""
    assert sp.compare(sp.read(path)) == []


@needs_compiled
@pytest.mark.same_on_both_paths  # compares both paths itself (unpickle._CPICKLE): the pure pass has no C side
@pytest.mark.parametrize("path", FILES[:3], ids=lambda p: p.name)
def test_every_snapshot_gives_the_same_trace(path, monkeypatch, tmp_path):
    """What the reader makes of each path's result: the same memory events and snapshot state."""
    plain = tmp_path / "s.pickle"
    plain.write_bytes(sp.read(path))
    got = []
    for c in (sp.CPICKLE, None):
        monkeypatch.setattr(unpickle, "_CPICKLE", c)
        t = reader.read_trace(str(plain))
        got.append((repr(t.snapshot), {g: (repr(m), m.t.tolist(), m.allocated.tolist(), m.op.tolist())
                                       for g, m in t.memory.items()}))
    assert got[0] == got[1]


@needs_compiled
@pytest.mark.same_on_both_paths  # compares both paths itself (sp.compare): under the pure switch, Python with Python
@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_and_hostile_pickles_read_alike(name):
    """Every scenario of synthetic/memsnapshot at protocols 0-5, both hostile generators, a large history."""
    assert sp.compare(GENERATED[name]) == []


@needs_compiled
@pytest.mark.same_on_both_paths  # compares both paths itself (unpickle._CPICKLE): the pure pass has no C side
def test_mutations_read_alike():
    """Pickle-aware and byte mutations of small snapshots: the same value or the same error, every time."""
    rng = random.Random(38)
    seeds = [GENERATED[k] for k in ("oom_activations/protocol4", "fragmented/protocol0", "memory_cap/protocol2",
                                    "write_large/3000")] + [sp.read(TESTS / "fixtures/snapshots_wild/"
                                                                    "windows_training_cs336.pickle.gz"),
                                                            sp.read(TESTS / "fixtures/snapshots_wild/"
                                                                    "mini_snapshot_cut.pickle")]  # history first
    seeds = [s[:40_000] + s[-2_000:] if len(s) > 60_000 else s for s in seeds]  # cut ones too: errors deep inside
    for _ in range(300):
        base = rng.choice(seeds)
        data = sp.mutate_pickle(rng, base) if rng.random() < 0.6 else hostile.mutate(rng, base, seeds)
        assert sp.compare(data) == [], data


@needs_compiled
@pytest.mark.same_on_both_paths  # compares both paths itself (sp.compare): under the pure switch, Python with Python
@pytest.mark.parametrize("max_objects", [0, 1, 7, 50, 333, 10_000])
def test_the_object_limit_is_reached_at_the_same_opcode(max_objects):
    data = GENERATED["oom_activations/protocol4"]
    assert sp.compare(data, max_objects=max_objects) == []


@needs_compiled
@pytest.mark.same_on_both_paths  # compares both paths itself (sp.compare): under the pure switch, Python with Python
@pytest.mark.parametrize("limit, value", [("MAX_DEPTH", 3), ("MAX_INT_BYTES", 2), ("MAX_LINE", 3),
                                          ("_MAX_INT_KEY", 5)])
def test_the_compiled_reader_follows_the_limits_as_set(monkeypatch, limit, value):
    """The limits are handed over on each call: set lower, both paths refuse at the same place."""
    monkeypatch.setattr(unpickle, limit, value)
    for name in ("oom_activations/protocol0", "oom_activations/protocol4", "fragmented/protocol1"):
        assert sp.compare(GENERATED[name]) == []


@needs_compiled
def test_odd_max_objects_take_the_python_path():
    """A ``max_objects`` past 64 bits, or no int at all, is read by the Python path (the C one takes int64)."""
    data = GENERATED["fragmented/protocol4"]
    for m in (1 << 70, 10.5):
        fast, ref = (sp.load_with(c, data, max_objects=m)[0] for c in (True, False))
        assert sp.differences(fast, ref) == []


@needs_compiled
def test_the_compiled_path_really_runs(monkeypatch):
    """Equality proves nothing if the Python reader ran both times."""
    def refuse(*a, **k):
        raise AssertionError("the Python reader ran")

    if sp.CPICKLE is None:
        pytest.skip("TB_GPU_ADVISOR_PURE_PYTHON is set: the Python reader is the one that runs")
    monkeypatch.setattr(unpickle, "_Reader", refuse)
    for path in FILES:
        assert isinstance(unpickle.loads(sp.read(path), compact=reader._Compactor()), dict)


@needs_compiled
def test_any_buffer_reads_as_its_bytes():
    data = GENERATED["memory_cap/protocol5"]
    for form in (bytearray(data), memoryview(data)):
        assert sp.differences(sp.load_with(True, form)[0], sp.load_with(False, data)[0]) == []
    for bad in ("text", None):
        assert sp.differences(sp.load_with(True, bad)[0], sp.load_with(False, bad)[0]) == []


@needs_compiled
def test_the_collector_is_paused_only_while_reading():
    """The compiled reader pauses the cyclic collector while it builds (nothing it builds can hold a cycle) and
    leaves it as it found it: on, off, and after an error."""
    import gc

    was = gc.isenabled()
    try:
        for on in (True, False):
            (gc.enable if on else gc.disable)()
            sp.load_with(True, GENERATED["fragmented/protocol4"])
            assert isinstance(sp.load_with(True, GENERATED["hostile_pickles/cycle_self_list"])[0], ValueError)
            assert gc.isenabled() is on
    finally:
        (gc.enable if was else gc.disable)()
