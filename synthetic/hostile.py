"""Hostile and broken ``.xplane.pb`` files, and a mutation fuzzer, for the robustness checks.

``KINDS`` maps a name to a function returning the bytes of one hand-made bad
file: each is a real protobuf XSpace (or a deliberately foreign one) built
from a small synthetic capture, then broken in one way an attacker or an
unlucky user would.  ``mutate`` derives a random variant of a seed file.
``analyse_bytes`` is what a report does with a file (read, metrics,
report JSON); the contract is that it returns a report or raises
``ProfileReadError``, nothing else (``scripts/robustness.py``,
``tests/runtime/test_robustness.py``).
"""

from __future__ import annotations

import os
import random
import struct
from functools import lru_cache
from typing import Callable

from synthetic import encode as enc
from tb_gpu_advisor.formats.xplane.schema import message_class

INT64_MAX = 2**63 - 1


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return enc.tag(number, 2) + enc.encode_varint(len(payload)) + payload


@lru_cache(maxsize=1)
def seed_capture() -> bytes:
    """A small GPU capture (host + one GPU + task environment), about 100 kB."""
    from synthetic.scenarios import launch_bound

    return next(iter(launch_bound(num_steps=3).encode().values()))


def _space(raw: bytes | None = None):
    return message_class("XSpace").FromString(raw if raw is not None else seed_capture())


def _edit(fn: Callable) -> Callable[[], bytes]:
    def make() -> bytes:
        sp = _space()
        fn(sp)
        return sp.SerializeToString()

    make.__doc__ = fn.__doc__
    return make


def _planes(sp, prefix: str):
    return [p for p in sp.planes if p.name.startswith(prefix)]


@_edit
def no_host_plane(sp) -> None:
    """A GPU capture without the host plane (host tracing off)."""
    for i in reversed(range(len(sp.planes))):
        if sp.planes[i].name.startswith("/host"):
            del sp.planes[i]


@_edit
def no_host_events(sp) -> None:
    """A host plane whose lines hold no events (host tracer level 0)."""
    for p in _planes(sp, "/host"):
        for ln in p.lines:
            del ln.events[:]


def _device_event(sp):
    return next(ev for p in _planes(sp, "/device") for ln in p.lines for ev in ln.events)


@_edit
def int64_max_duration(sp) -> None:
    _device_event(sp).duration_ps = INT64_MAX


@_edit
def int64_max_offset(sp) -> None:
    _device_event(sp).offset_ps = INT64_MAX


@_edit
def negative_duration(sp) -> None:
    _device_event(sp).duration_ps = -5


@_edit
def int64_max_line_timestamp(sp) -> None:
    _planes(sp, "/device")[0].lines[0].timestamp_ns = INT64_MAX


def _device_stat(value_field: str, value) -> Callable[[], bytes]:
    def make() -> bytes:
        sp = _space()
        p = _planes(sp, "/device")[0]
        ids = {m.value.name: m.key for m in p.stat_metadata}
        for st in p.stats:
            if st.metadata_id in (ids.get("compute_cap_major"), ids.get("compute_cap_minor")):
                st.Clear()
                st.metadata_id = ids["compute_cap_major"]
                setattr(st, value_field, value)
        return sp.SerializeToString()

    return make


@_edit
def event_metadata_id_max(sp) -> None:
    _device_event(sp).metadata_id = INT64_MAX


def _events(sp):
    """Every event of every line of every plane."""
    return (ev for p in sp.planes for ln in p.lines for ev in ln.events)


def _event_stats(sp):
    """Every event stat of every plane."""
    return (st for ev in _events(sp) for st in ev.stats)


@_edit
def stat_metadata_id_negative(sp) -> None:
    for st in _event_stats(sp):
        st.metadata_id = -1


@_edit
def ref_value_dangling(sp) -> None:
    for st in _event_stats(sp):
        st.ref_value = 987654321


@_edit
def all_metadata_removed(sp) -> None:
    for p in sp.planes:
        p.ClearField("event_metadata")
        p.ClearField("stat_metadata")


@_edit
def huge_hlo_op(sp) -> None:
    """An 80 kB ``hlo_op`` value that made the quadratic suffix regex take 35 s."""
    value = "a" + ".1" * 40000 + "x"
    for p in _planes(sp, "/device"):
        sid = max([m.key for m in p.stat_metadata] + [0]) + 1
        for k, name in ((sid, "hlo_op"), (sid + 1, "hlo_module")):
            entry = p.stat_metadata.add(key=k)
            entry.value.id, entry.value.name = k, name
        mid = sid + 1
        ev = next(ev for ln in p.lines for ev in ln.events)  # one event: a ~180 kB file
        ev.stats.add(metadata_id=sid, str_value=value)
        ev.stats.add(metadata_id=mid, str_value="jit_train_step")


@_edit
def every_plane_named_gpu(sp) -> None:
    for i, p in enumerate(sp.planes):
        p.name = f"/device:GPU:{i}"


@_edit
def duplicate_planes(sp) -> None:
    for p in list(sp.planes):
        sp.planes.add().CopyFrom(p)


@_edit
def overlapping_everything(sp) -> None:
    for ev in _events(sp):
        ev.offset_ps = 0
        ev.duration_ps = 10**12


@_edit
def zero_durations(sp) -> None:
    for ev in _events(sp):
        ev.duration_ps = 0


def varint_planes() -> bytes:
    """XSpace field 1 written as a varint (``08 00``)."""
    return b"\x08\x00"


def many_empty_gpu_planes(n: int = 100_000) -> bytes:
    """100k empty GPU planes in 2 MB (took 58 s)."""
    XPlane = message_class("XPlane")
    return b"".join(field(1, XPlane(id=i, name=f"/device:GPU:{i}").SerializeToString()) for i in range(n))


def empty_events(n: int = 500_000) -> bytes:
    """A host and a GPU line of ``n`` empty events each (2 bytes per event: 10 MB cost 530 MB)."""
    XPlane = message_class("XPlane")
    out = b""
    for i, (name, line) in enumerate((("/device:GPU:0", "stream"), ("/host:CPU", "host"))):
        ln = field(2, line.encode()) + b"\x22\x00" * n
        out += field(1, XPlane(id=i, name=name).SerializeToString() + field(3, ln))
    return out


def group_wire_type() -> bytes:
    raw = bytearray(seed_capture())
    raw[len(raw) // 2] = 0x0B  # a start-group tag in the middle of a plane
    return bytes(raw)


def deep_nesting() -> bytes:
    payload = b""
    for _ in range(2000):
        payload = field(1, payload)
    return payload


KINDS: dict[str, Callable[[], bytes]] = {
    "varint_planes": varint_planes,
    "no_host_plane": no_host_plane,
    "no_host_events": no_host_events,
    "int64_max_duration": int64_max_duration,
    "int64_max_offset": int64_max_offset,
    "int64_max_line_timestamp": int64_max_line_timestamp,
    "negative_duration": negative_duration,
    "nan_compute_capability": _device_stat("double_value", float("nan")),
    "inf_compute_capability": _device_stat("double_value", float("inf")),
    "huge_double_compute_capability": _device_stat("double_value", 1e300),
    "string_compute_capability": _device_stat("str_value", "eight"),
    "event_metadata_id_max": event_metadata_id_max,
    "stat_metadata_id_negative": stat_metadata_id_negative,
    "ref_value_dangling": ref_value_dangling,
    "all_metadata_removed": all_metadata_removed,
    "huge_hlo_op": huge_hlo_op,
    "every_plane_named_gpu": every_plane_named_gpu,
    "duplicate_planes": duplicate_planes,
    "overlapping_everything": overlapping_everything,
    "zero_durations": zero_durations,
    "many_empty_gpu_planes": many_empty_gpu_planes,
    "empty_events": empty_events,
    "group_wire_type": group_wire_type,
    "deep_nesting": deep_nesting,
    "truncated_half": lambda: seed_capture()[: len(seed_capture()) // 2],
    "empty_file": lambda: b"",
    "zeros": lambda: b"\x00" * 4096,
    "text": lambda: b"not a profile\n" * 100,
}


# -- mutation fuzzing -------------------------------------------------------------------------------

_INTERESTING_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0x08, 0x0A, 0x22, 0x10, 0x18)
_INTERESTING_CHUNKS = (
    enc.encode_varint(INT64_MAX), enc.encode_varint(2**64 - 1), enc.encode_varint(2**63),
    struct.pack("<d", float("nan")), struct.pack("<d", float("inf")), struct.pack("<d", -1e308),
    b"\x08\x00", b"\x0b", b"\x0c", b"\x22\x00" * 8, b"\xff" * 10,
)


def mutate(rng: random.Random, data: bytes, others: list[bytes] | None = None) -> bytes:
    """One to four random mutations of ``data``: bit flips, interesting bytes/values, cuts, splices."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not buf:
            buf += bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
            continue
        i = rng.randrange(len(buf))
        op = rng.randrange(9)
        if op == 0:
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            buf[i] = rng.choice(_INTERESTING_BYTES)
        elif op == 2:
            buf[i] = rng.randrange(256)
        elif op == 3:
            chunk = rng.choice(_INTERESTING_CHUNKS)
            buf[i : i + len(chunk)] = chunk
        elif op == 4:
            chunk = rng.choice(_INTERESTING_CHUNKS)
            buf[i:i] = chunk
        elif op == 5:
            del buf[i : i + rng.randint(1, 64)]
        elif op == 6:
            j = rng.randrange(len(buf))
            buf[i:i] = buf[j : j + rng.randint(1, 256)]
        elif op == 7:
            del buf[i:]
        elif others:
            other = rng.choice(others)
            j = rng.randrange(len(other)) if other else 0
            buf[i:] = other[j:]
    return bytes(buf)


_INTERESTING_INTS = (0, 1, -1, 2, 7, 255, 2**31 - 1, 2**32, INT64_MAX, -INT64_MAX - 1, 10**12, 10**18, -(10**18))
_INTERESTING_FLOATS = (float("nan"), float("inf"), float("-inf"), 0.0, -1.0, 1e300, 5e-324)


def mutate_structured(rng: random.Random, data: bytes) -> bytes:
    """Parse ``data`` as an XSpace and set one to eight random fields of planes, lines, events or stats
    to extreme values (or drop / duplicate them): well-formed files that reach the analysis."""
    try:
        sp = _space(data)
    except Exception:  # noqa: BLE001 - not parseable: byte mutations only
        return mutate(rng, data)
    planes = list(sp.planes)
    if not planes:
        return mutate(rng, data)
    for _ in range(rng.randint(1, 8)):
        p = rng.choice(planes)
        lines = list(p.lines)
        events = [ev for ln in lines for ev in ln.events]
        stats = [st for ev in events for st in ev.stats] + list(p.stats)
        op = rng.randrange(10)
        if op == 0 and events:
            try:
                setattr(rng.choice(events), rng.choice(("metadata_id", "offset_ps", "duration_ps")),
                        rng.choice(_INTERESTING_INTS))
            except ValueError:
                pass
        elif op == 1 and lines:
            ln = rng.choice(lines)
            try:
                setattr(ln, rng.choice(("id", "timestamp_ns", "duration_ps")), rng.choice(_INTERESTING_INTS))
            except ValueError:
                pass
        elif op == 2 and stats:
            st = rng.choice(stats)
            which = rng.choice(("double_value", "int64_value", "uint64_value", "str_value", "ref_value", "metadata_id"))
            if which == "double_value":
                st.double_value = rng.choice(_INTERESTING_FLOATS)
            elif which == "str_value":
                st.str_value = rng.choice(("", "x" * rng.randint(1, 5000), ".1" * 2000, "\u00e9\x00", "nan"))
            elif which == "uint64_value":
                st.uint64_value = rng.choice((0, 1, 2**64 - 1, 2**63))
            else:
                try:
                    setattr(st, which, rng.choice(_INTERESTING_INTS))
                except ValueError:  # out of the field's range (uint64 ref_value): the writer refuses too
                    pass
        elif op == 3 and lines:
            ln = rng.choice(lines)
            del ln.events[rng.randrange(len(ln.events) + 1):]
        elif op == 4:
            p.name = rng.choice(("/host:CPU", "/device:GPU:0", "/device:GPU:99", "", "Task Environment",
                                 "/device:TPU:0", p.name + "x"))
        elif op == 5 and lines:
            rng.choice(lines).name = rng.choice(("", "Steps", "XLA Ops", "XLA Modules", "python", "Stream #1"))
        elif op == 6 and len(p.event_metadata):
            entry = rng.choice(list(p.event_metadata))
            entry.value.name = rng.choice(("", "Memcpy HtoD", "ncclAllReduce", "train", "Iterator::GetNext",
                                           "volta_h884gemm", "fusion.1", "\x00", "a" * 1000))
        elif op == 7 and events:
            ln = rng.choice(lines)
            if ln.events:
                ln.events.add().CopyFrom(rng.choice(list(ln.events)))
        elif op == 8 and len(sp.planes) > 1:
            del sp.planes[rng.randrange(len(sp.planes))]
            planes = list(sp.planes)
        elif op == 9 and len(p.stat_metadata):
            rng.choice(list(p.stat_metadata)).value.name = rng.choice(
                ("tf_op", "correlation_id", "kernel_details", "hlo_op", "hlo_module", "step_num", "_r", "group_id",
                 "compute_cap_major", "memory_size", "shape", "memcpy_details"))
    return sp.SerializeToString()


def analyse_bytes(data: bytes, path: str = "<fuzz>") -> str:
    """What a report does with a file: read, metrics, report JSON.  Raises ProfileReadError for bad files."""
    import io

    from tb_gpu_advisor.formats.xplane.adapter import (
        USED_STATS,
        profile_problem,
        to_trace,
    )
    from tb_gpu_advisor.formats.xplane.reader import ProfileReadError, _parse
    from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report

    tl = _parse(io.BytesIO(data), len(data), path, USED_STATS)
    if len(data) == 0:
        raise ProfileReadError(path, "file is empty")
    problem = profile_problem(tl)
    if problem is not None:
        raise ProfileReadError(path, problem)
    from tb_gpu_advisor.report.merge import merge_hosts
    from tb_gpu_advisor.report.render import to_markdown

    m = host_metrics(to_trace(tl, release=True), None)
    report = merge_hosts("run", "session", [host_report(m, len(data))])
    to_markdown(report)  # what /report.md serves
    return report.to_json()


# -- hostile Nsight Systems exports (SQLite), issue #39: what a file can define that a reader must never run -----
#
# Each ``SQLITE_KINDS`` entry writes one file at the path it is given.  An SQLite file defines more than data: views
# (a query SQLite runs whenever one is read), triggers, virtual tables (a module's code behind a table name),
# generated columns; its schema may hold names that are no UTF-8.  A reader that asks for a table by name gets
# whatever the file put there.

#: A view body SQLite never finishes: an endless recursive CTE, each row a fresh 1 kB string.
ENDLESS_ROWS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
#: The marker written where a name must not be UTF-8 (patched to :data:`NOT_UTF8` bytes, same length).
_NAME_MARK = b"ZZZZ_NAME_TO_PATCH"
NOT_UTF8 = b"\xff\xfe\x80 not utf8 \xc3(\xa0xy"


def sqlite_export(path: str, steps: int = 3) -> str:
    """A small valid export (``synthetic.nsysexport``, one rank) at ``path``: the base every hostile one edits."""
    from synthetic.nsysexport import NsysJob, write

    _fresh(path)
    write(path, NsysJob(steps=steps, ops=4))
    return path


def _fresh(path: str) -> None:
    if os.path.exists(path):
        os.remove(path)


def _sql(path: str, *statements: str) -> str:
    """Run ``statements`` on the file at ``path`` (made if missing) and compact it; returns ``path``."""
    from synthetic import sqlitefile

    con = sqlitefile.connect(path)
    try:
        for s in statements:
            con.execute(s)
        con.commit()
        con.execute("VACUUM")
    finally:
        con.close()
    return path


def _minimal_export(path: str, *statements: str) -> str:
    """An 8 kB file that Nsight's own tables make an export (``META_DATA_EXPORT``), plus ``statements``."""
    _fresh(path)
    return _sql(path, "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT)",
                "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.25.0')", *statements)


def sqlite_endless_env_view(path: str) -> str:
    """``TARGET_INFO_SYSTEM_ENV`` an endless recursive view in an 8 kB export: read while the logdir is listed, it
    grew TensorBoard ~97 MB/s and hung every request."""
    return _minimal_export(path, "CREATE VIEW TARGET_INFO_SYSTEM_ENV AS " + ENDLESS_ROWS
                           + "SELECT 'Hostname' AS name, printf('%.1000c', 'x') || n AS value FROM r")


def sqlite_endless_kernel_view(path: str) -> str:
    """A valid export whose kernel table is an endless view with the kernel columns: hung the analysis."""
    sqlite_export(path)
    return _sql(path, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL",
                "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS " + ENDLESS_ROWS
                + "SELECT n * 1000 AS start, n * 1000 + 500 AS end, 0 AS deviceId, 0 AS streamId, n AS correlationId, "
                "0 AS globalPid, 1 AS demangledName, 1 AS shortName, 0 AS graphId FROM r")


def sqlite_endless_strings_view(path: str) -> str:
    """``StringIds`` an endless view (every name is read through it)."""
    sqlite_export(path)
    return _sql(path, "DROP TABLE StringIds", "CREATE VIEW StringIds AS " + ENDLESS_ROWS
                + "SELECT n AS id, printf('%.1000c', 'k') AS value FROM r")


def sqlite_trigger(path: str) -> str:
    """A trigger on a table the reader reads (it fires only on writes: a reader that writes nothing never runs it)."""
    sqlite_export(path)
    return _sql(path, "CREATE TRIGGER t AFTER INSERT ON StringIds BEGIN " + "SELECT 1; " + "END")


def sqlite_virtual_kernels(path: str) -> str:
    """The kernel table a virtual table (``fts5``): a module's code, not rows of the file."""
    sqlite_export(path)
    return _sql(path, "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL",
                "CREATE VIRTUAL TABLE CUPTI_ACTIVITY_KIND_KERNEL USING fts5(start, end, deviceId, demangledName)")


def sqlite_generated_names(path: str) -> str:
    """A kernel table whose ``demangledName`` is a generated column: each row read computes a 100 MB text."""
    sqlite_export(path)
    return _sql(path, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k_old",
                "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId "
                "INTEGER, correlationId INTEGER, globalPid INTEGER, shortName INTEGER, graphId INTEGER, "
                "demangledName AS (length(zeroblob(100000000))))",
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT start, end, deviceId, streamId, correlationId, "
                "globalPid, shortName, graphId FROM k_old", "DROP TABLE k_old")


def sqlite_not_utf8_table_name(path: str) -> str:
    """A valid export plus a table whose name is no UTF-8: every route of the tab returned 500, the CLI said
    "cannot list" and hid the good runs."""
    sqlite_export(path)
    _sql(path, f'CREATE TABLE "{_NAME_MARK.decode()}" (x)')
    return _patch(path, _NAME_MARK, NOT_UTF8)


def sqlite_not_utf8_in_minimal(path: str) -> str:
    """The 8 kB export with a table whose name is no UTF-8."""
    _minimal_export(path, f'CREATE TABLE "{_NAME_MARK.decode()}" (x)')
    return _patch(path, _NAME_MARK, NOT_UTF8)


def sqlite_malformed_schema_not_utf8(path: str) -> str:
    """A valid export whose schema has a statement SQLite cannot parse, quoting bytes that are no UTF-8: SQLite's
    error message carries them, and Python's decoding of that message raised UnicodeDecodeError (not an
    ``sqlite3.Error``) -- the listing failed, every route of the tab returned 500, the CLI exited 1 with a
    traceback."""
    sqlite_export(path)
    _sql(path, f"CREATE TABLE extra (x INTEGER, y {_NAME_MARK.decode()})")
    return _patch(path, _NAME_MARK, b"NOT \xde\xad\xbe\xef\xff\xfe" + b"z" * 8)  # "y NOT <bytes>": a syntax error


def _patch(path: str, old: bytes, new: bytes) -> str:
    assert len(old) == len(new)
    with open(path, "rb") as f:
        data = f.read()
    assert old in data
    with open(path, "wb") as f:
        f.write(data.replace(old, new))
    return path


def sqlite_huge_env_value(path: str, mb: int = 64) -> str:
    """One ``TARGET_INFO_SYSTEM_ENV`` value of ``mb`` MB (the listing reads the host name from this table)."""
    return _minimal_export(path, "CREATE TABLE TARGET_INFO_SYSTEM_ENV (name TEXT, value TEXT)",
                           f"INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES ('Hostname', printf('%.{mb << 20}c', 'h'))")


def sqlite_truncated(path: str) -> str:
    """A valid export cut in half (a copy still being written)."""
    sqlite_export(path, steps=40)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    return path


#: name -> writer of one hostile SQLite file (the robustness campaign and ``tests/formats/test_nsys_hostile.py``).
SQLITE_KINDS: dict[str, Callable[[str], str]] = {
    "endless_env_view": sqlite_endless_env_view,
    "endless_kernel_view": sqlite_endless_kernel_view,
    "endless_strings_view": sqlite_endless_strings_view,
    "trigger": sqlite_trigger,
    "virtual_kernels": sqlite_virtual_kernels,
    "generated_names": sqlite_generated_names,
    "not_utf8_table_name": sqlite_not_utf8_table_name,
    "not_utf8_in_minimal": sqlite_not_utf8_in_minimal,
    "malformed_schema_not_utf8": sqlite_malformed_schema_not_utf8,
    "huge_env_value": sqlite_huge_env_value,
    "truncated": sqlite_truncated,
}


# -- runaway work for the isolation tests (module level: the analysis child process imports them) -----------


def busy_loop(seconds: float, progress=None) -> str:
    """A runaway pure-Python loop: holds the GIL of its own process only."""
    import time

    t = time.monotonic()
    while time.monotonic() - t < seconds:
        pass
    return "done"


def memory_hog(mb: int, progress=None) -> int:
    """Allocates ``mb`` MiB: runs a limited child out of memory."""
    return len(bytearray(mb << 20))


def segfault(progress=None) -> None:
    """Dies of ``SIGSEGV`` (a read of address 0): what a C stack overflow on deeply nested input does to a worker."""
    import ctypes

    ctypes.string_at(0)


# -- the harness both robustness tools share: a logdir of hostile files, the real plugin serving it ---------------

#: Session folder name of every capture the robustness tools write.
SESSION = "2024_01_01_00_00_00"


def write_capture(logdir, run: str, data: bytes, age_s: float = 60.0, session: str = SESSION,
                  host: str = "host") -> str:
    """Write ``data`` as ``<logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb``; returns its path.

    ``age_s`` back-dates the file (seconds) so the plugin sees a settled capture, not one still being
    written; 0 leaves the modification time as it is."""
    import os
    import time

    path = os.path.join(str(logdir), run, "plugins", "profile", session, f"{host}.xplane.pb")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    if age_s:
        past = time.time() - age_s
        os.utime(path, (past, past))
    return path


def plugin_app(logdir, cache_dir: str | None = None, **plugin_kw):
    """TensorBoard's WSGI app with the real Advisor plugin on ``logdir`` (analyses in limited worker processes
    unless ``analyzer=`` is given), and its ReportService: ``(app, service)``.  ``cache_dir`` None: no disk cache."""
    import argparse

    from tensorboard.backend import application
    from tensorboard.plugins import base_plugin

    from tb_gpu_advisor.runtime import cache as cache_mod
    from tb_gpu_advisor.serve import plugin as plugin_mod
    from tb_gpu_advisor.serve.service import ReportService

    flags = argparse.Namespace(gpu_advisor_cache_dir=cache_dir or "off")
    service = ReportService(store=cache_mod.open_store(cache_dir) if cache_dir else None, wait_s=0.05)
    plugin = plugin_mod.GpuAdvisorPlugin(base_plugin.TBContext(logdir=str(logdir), flags=flags), service=service,
                                         **plugin_kw)
    return application.TensorBoardWSGI([plugin]), service


# -- hostile memory-snapshot pickles (issue #39 item 4): their own module, named here with the other corpora -------

from synthetic.hostile_pickles import PICKLES as SNAPSHOT_PICKLES  # noqa: E402,F401

# -- the inputs of sessions 36-37 (viewer pages, snapshot values, LFS pointers, memory timelines): their own module ------

from synthetic.hostile_inputs import KINDS as NEW_INPUT_KINDS  # noqa: E402,F401
