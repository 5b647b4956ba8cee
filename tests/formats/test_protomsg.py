"""The plain-Python message runtime (``formats/protomsg.py``) against protobuf's upb, on the same bytes.

The independent reference is upb itself: both runtimes get each schema's table (XSpace's, XLA's HLO), parse the same
bytes -- every plane of real captures (an H200 JAX capture, a TF 2.21 capture, an MI300X JAX capture), every HLO
module they carry, and thousands of damaged copies -- and must give the same fields or both refuse.  Writing is held
to the same law: a message built through either runtime's API serializes to the same bytes.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest

from tb_gpu_advisor.formats import protomsg
from tb_gpu_advisor.formats.xplane import hlo, schema, wire

google_message = pytest.importorskip("google.protobuf.message")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CAPTURES = [
    next((FIXTURES / "h200_jobs" / "jax_jit_inference" / "plugins" / "profile").glob("*/vm.xplane.pb")),
    FIXTURES / "real" / "tf221_cpu_custom_loop.xplane.pb",
    next((FIXTURES / "wild" / "jax_mi300x" / "plugins" / "profile").glob("*/*.xplane.pb")),
]
UPB_X = schema.upb_classes("t/xspace_upb.proto", "t.upb.xspace", schema._MESSAGES)
PY_X = protomsg.build_classes("t/xspace_py.proto", "t.py.xspace", schema._MESSAGES)
UPB_H = schema.upb_classes("t/hlo_upb.proto", "t.upb.hlo", hlo._MESSAGES)
PY_H = protomsg.build_classes("t/hlo_py.proto", "t.py.hlo", hlo._MESSAGES)
REFUSED = (google_message.DecodeError, protomsg.DecodeError)


def tree(msg: Any, table: dict[str, list[protomsg.Field]], name: str) -> dict[str, Any]:
    """Every field of ``msg`` (either runtime) as plain values, read through the public API, from the table."""
    out: dict[str, Any] = {}
    for fname, _, ftype, label, type_name in table[name]:
        value = getattr(msg, fname)
        if label == protomsg.LABEL_REPEATED:
            items = [tree(v, table, type_name) if type_name else v for v in value]
            out[fname] = [("nan" if isinstance(v, float) and math.isnan(v) else v) for v in items]
        elif type_name:
            out[fname] = tree(value, table, type_name) if msg.HasField(fname) else None
        else:
            out[fname] = "nan" if isinstance(value, float) and math.isnan(value) else value
    return out


def both(data: bytes, upb: dict, py: dict, table: dict, name: str) -> tuple[Any, Any]:
    """Each runtime's reading of ``data`` as message ``name``: a tree, or "refused"."""
    got = []
    for classes in (upb, py):
        try:
            got.append(tree(classes[name].FromString(data), table, name))
        except REFUSED:
            got.append("refused")
    return got[0], got[1]


def planes(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return [bytes(data[s:e]) for num, wt, _, s, e in wire.walk_fields(memoryview(data), 0, len(data))
            if num == 1 and wt == 2]


def hlo_blobs(path: Path) -> list[bytes]:
    out = []
    for raw in planes(path):
        plane = UPB_X["XPlane"].FromString(raw)
        names = {e.key: e.value.name for e in plane.stat_metadata}
        out += [st.bytes_value for e in plane.event_metadata for st in e.value.stats
                if names.get(st.metadata_id) == "Hlo Proto" and st.bytes_value]
    return out


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.parts[-5] if "profile" in p.parts else p.name)
def test_every_plane_of_real_captures_reads_the_same(path: Path) -> None:
    raws = planes(path)
    assert raws
    for raw in raws:
        for view in ("XPlane", "LazyPlane"):
            a, b = both(raw, UPB_X, PY_X, schema._MESSAGES, view)
            assert a != "refused" and a == b
        lines = UPB_X["LazyPlane"].FromString(raw).lines
        for line in lines[:8]:
            a, b = both(line, UPB_X, PY_X, schema._MESSAGES, "LazyLine")
            assert a != "refused" and a == b


def test_every_hlo_module_of_a_real_jax_capture_reads_the_same() -> None:
    blobs = hlo_blobs(CAPTURES[0])
    assert len(blobs) >= 2  # the H200 capture's jitted modules
    for raw in blobs:
        for view in ("HloProto", "HloProtoSkim"):
            a, b = both(raw, UPB_H, PY_H, hlo._MESSAGES, view)
            assert a != "refused" and a == b


def _damaged(raw: bytes, rng: random.Random) -> bytes:
    """``raw`` cut, with bytes flipped, or with a run of bytes inserted or removed."""
    b = bytearray(raw)
    kind = rng.randrange(4)
    if kind == 0:
        return bytes(b[: rng.randrange(len(b))])
    if kind == 1:
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    at = rng.randrange(len(b))
    if kind == 2:
        return bytes(b[:at] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 12))) + b[at:])
    return bytes(b[:at] + b[at + rng.randint(1, 12):])


def test_damaged_planes_and_modules_are_refused_or_read_alike() -> None:
    rng = random.Random(71)
    cases = [(raw, "XPlane", UPB_X, PY_X, schema._MESSAGES) for p in CAPTURES for raw in planes(p) if len(raw) < 60_000]
    cases += [(raw, "HloProto", UPB_H, PY_H, hlo._MESSAGES) for raw in hlo_blobs(CAPTURES[0])[:3]]
    refused = read = 0
    for i in range(600):
        raw, name, upb, py, table = cases[i % len(cases)]
        bad = _damaged(raw, rng)
        a, b = both(bad, upb, py, table, name)
        assert a == b, (name, i)
        refused += a == "refused"
        read += a != "refused"
    assert refused > 50 and read > 50  # both outcomes were met: the law was tested both ways


@pytest.mark.parametrize("data", [
    b"\x00",                       # field number 0
    b"\x0f",                       # wire type 7
    b"\x12\x05ab",                 # a length past the end
    b"\x08" + b"\xff" * 11,         # a varint of eleven bytes
    b"\x12\x02\xc3\x28",           # a name of invalid UTF-8
    b"\x1b\x08\x01\x1c",           # a group of an unknown kind holding a varint: skipped whole
    b"\x1b\x08\x01",               # a group never ended
    b"\x0c",                       # the end of a group never opened
    b"\x08\x96\x01\x08\x07",       # id twice: the last wins
    b"\x10\x05",                   # name (field 2) as a varint: an unknown field
    b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # id -1 (ten bytes)
])
def test_edge_bytes_of_a_plane_read_alike(data: bytes) -> None:
    a, b = both(data, UPB_X, PY_X, schema._MESSAGES, "XPlane")
    assert a == b


def test_packed_and_unpacked_repeated_numbers_read_alike() -> None:
    unpacked = b"\x30\x03\x30\x04"  # XEventMetadata.child_id = [3, 4], one tag each
    packed = b"\x32\x02\x03\x04"    # the same, packed
    for data in (unpacked, packed, unpacked + packed):
        a, b = both(data, UPB_X, PY_X, schema._MESSAGES, "XEventMetadata")
        assert a == b and a["child_id"][:2] == [3, 4]


def _build(classes: dict) -> bytes:
    """An XSpace written through the runtime's API, as the generators and ``viewer_json`` write one."""
    space = classes["XSpace"]()
    plane = space.planes.add(id=3, name="/device:GPU:0")
    plane.stat_metadata.add(key=1).value.name = "correlation_id"
    meta = plane.event_metadata.add(key=7)
    meta.value.name = "volta_sgemm_128x64_nn"
    meta.value.stats.add(metadata_id=1, bytes_value=b"\x00\x01")
    meta.value.child_id.extend([5, 6])
    line = plane.lines.add(id=1, name="Stream #7", timestamp_ns=1_700_000_000_000_000_000)
    for k in range(3):
        ev = line.events.add(metadata_id=7, offset_ps=1000 * k, duration_ps=-5 if k == 2 else 900)
        ev.stats.add(metadata_id=1, uint64_value=2**64 - 1 - k)
        ev.stats.add(metadata_id=1, double_value=-0.0 if k else 2.5)
    space.hostnames.append("vm")
    space.warnings.extend(["w1", "ü"])
    return space.SerializeToString()


def test_a_message_written_through_either_runtime_is_the_same_bytes() -> None:
    data = _build(PY_X)
    assert data == _build(UPB_X)
    a, b = both(data, UPB_X, PY_X, schema._MESSAGES, "XSpace")
    assert a == b and a["planes"][0]["lines"][0]["events"][2]["duration_ps"] == -5


def test_copy_merge_and_clear_follow_protobuf() -> None:
    for classes in (UPB_X, PY_X):
        a = classes["XSpace"].FromString(_build(classes))
        b = classes["XSpace"]()
        b.CopyFrom(a)
        b.MergeFrom(a)
        assert len(b.planes) == 2 and b.hostnames[:] == ["vm", "vm"]
        b.ClearField("planes")
        assert len(b.planes) == 0
        entry = classes["EventMetadataEntry"]()
        assert not entry.HasField("value")
        entry.value.name = "x"
        assert entry.HasField("value")
    with pytest.raises(AttributeError):
        PY_X["XLine"]().no_such_field  # noqa: B018 - the read is the test
    with pytest.raises(TypeError):
        PY_X["XLine"]().name = 5
