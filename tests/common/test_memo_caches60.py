"""The answer maps of discovery and of the rules are one thread-safe bounded ``common.memo.Memo`` (h37-reads60; the
review of session 59 *Left*: ``kineto.layout._headers``/``_ends``, ``nsys.layout._headers`` and ``formats.probe._cache``
each kept their own dict, lock and bound, and ``frameworks.native.for_vendor`` built its answer anew on every ask).

Which fail on BASE (3416ad6f): the three ``Memo`` tests (no ``get`` default, no ``of``), the bounded header map (a
dict there: cleared whole at 50,000, not its oldest first), and ``for_vendor`` asked twice (a new Framework each time).
Controls (pass on base too): a probe's unknown answer (None) kept, headers read alike from many threads."""

from __future__ import annotations

import threading
from pathlib import Path

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.memo import Memo
from tb_gpu_advisor.formats import probe
from tb_gpu_advisor.formats.kineto import layout
from tb_gpu_advisor.frameworks import native

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def test_an_answer_of_none_is_told_from_a_key_never_asked():
    m: Memo = Memo(4)
    unasked = object()
    m.put("k", None)
    assert m.get("k", unasked) is None and m.get("other", unasked) is unasked


def test_answers_by_objects_are_kept_beside_them_and_by_values():
    m: Memo = Memo(8)
    made = []

    class Thing:  # unhashable by value, as a Framework holding dicts is
        __hash__ = None  # type: ignore[assignment]

    a = Thing()
    for values in ("x", "x", "y"):
        m.of((a,), lambda v=values: made.append(v) or f"{v}!", values)
    assert made == ["x", "y"]  # the second "x" is the first's answer
    assert m.of((a,), lambda: "new", "x") == "x!"
    b = Thing()
    assert m.of((b,), lambda: "b's", "x") == "b's"  # another object: its own answer


def test_an_objects_answer_is_not_handed_to_another_that_took_its_id():
    m: Memo = Memo(8)
    a = object()
    m.of((a,), lambda: "a's")
    key = ((id(a),), ())
    m.put(key, ((object(),), "stale"))  # as if ``a`` were collected and a new object took its id
    assert m.of((a,), lambda: "fresh") == "fresh"


def test_the_header_map_is_bounded_by_its_oldest_going_first(monkeypatch):
    monkeypatch.setattr(layout, "_headers", Memo(2))
    files = sorted((WILD / "dlrm_v100").glob("*.pt.trace.json.gz"))[:3]
    reads = []
    head = layout._head_bytes
    monkeypatch.setattr(layout, "_head_bytes", lambda p: reads.append(p) or head(p))
    for f in files:
        layout.read_header(str(f), f.stat().st_size, f.stat().st_mtime_ns)
    assert len(layout._headers) == 2
    for f in files[1:]:  # the two newest kept: not read again
        layout.read_header(str(f), f.stat().st_size, f.stat().st_mtime_ns)
    assert reads == [str(f) for f in files]


def test_a_vendors_native_framework_is_made_once():
    fw = native.FRAMEWORK
    first = native.for_vendor(fw, devices.amd)
    assert first is not fw and first.fixes != fw.fixes  # AMD's own fixes (rocprof, roctx) in place of CUDA's
    assert native.for_vendor(fw, devices.amd) is first
    assert native.for_vendor(native.NOT_LOADED, devices.amd) is not first


def test_a_probes_unknown_answer_is_kept(monkeypatch):
    # control (passes on base too)
    asked = []
    monkeypatch.setattr(probe, "file_has_gpu_activity", lambda path, fmt="xplane": asked.append(path))

    class H:
        path, size, mtime_ns, format = "/nowhere/reads60.pt.trace.json", 1, 1, "kineto"

    class S:
        run, session, hosts = "r", "s", [H()]

    assert probe.session_activity([S()]) == {("r", "s"): None}
    assert probe.session_activity([S()], budget_s=-1.0) == {("r", "s"): None}
    assert asked == [H.path]  # asked once; the second listing, past its budget, reads the kept answer


def test_headers_read_from_many_threads_are_one_answer():
    # control (passes on base too)
    f = sorted((WILD / "dlrm_v100").glob("*.pt.trace.json.gz"))[0]
    out = []
    threads = [threading.Thread(target=lambda: out.append(layout.read_header(str(f), f.stat().st_size, 7)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 8 and all(h == out[0] for h in out) and out[0].clock_ns is not None
