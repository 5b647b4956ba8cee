"""XSpace protobuf schema, built at run time from field numbers.

Why not a generated ``*_pb2.py``: generated modules pin the protobuf runtime
they were generated for (protobuf 5 rejects modules from protoc 3 and vice
versa), and TensorFlow's own module needs TensorFlow.  Building the
descriptors here from the field numbers (the only upstream *facts* we need)
works with every protobuf >= 3.20 runtime and keeps the upb C parser.
Where the ``protobuf`` package is not installed (or the Python path is
forced), the same tables become plain-Python message classes
(``formats/protomsg.py``): same fields, same API, same refusals;
``formats/compiled.py`` chooses (:func:`build_classes`).

Two families of messages share one wire format:

* ``full`` messages (``XSpace``, ``XPlane``, ...) mirror the upstream schema
  exactly; the corpus generator and tests write files with them.
* ``lazy`` views (``LazyPlane``, ``LazyLine``) declare the big repeated
  sub-messages (lines, events) as ``bytes``.  upb then parses a plane's
  metadata and a line's scalar fields without building a message per
  event, and tells the reader each event's length in C; the reader locates
  the events in the plane's buffer from those lengths and decodes the
  millions of them column-wise with numpy.  (The XSpace top level is
  walked by the reader itself, streaming one plane at a time.)  See
  ``reader.py``.
"""

from __future__ import annotations

import functools
from typing import Any

try:  # imported here, not on first use: an analysis worker imports nothing under its memory limit (runtime/isolation)
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from google.protobuf.message import DecodeError as _UpbDecodeError
except ImportError:  # protobuf is not installed: the plain-Python messages run (formats/compiled.protobuf_runtime)
    descriptor_pb2 = descriptor_pool = message_factory = _UpbDecodeError = None

from tb_gpu_advisor.common.memory import ensure_room_to_parse
from tb_gpu_advisor.formats import protomsg
from tb_gpu_advisor.formats.compiled import UPB, protobuf_runtime

_OPT, _REP = protomsg.LABEL_OPTIONAL, protomsg.LABEL_REPEATED
_I64, _U64, _DBL = protomsg.TYPE_INT64, protomsg.TYPE_UINT64, protomsg.TYPE_DOUBLE
_STR, _BYTES, _MSG = protomsg.TYPE_STRING, protomsg.TYPE_BYTES, protomsg.TYPE_MESSAGE

# (field name, number, type, label, message type name or None)
_Field = protomsg.Field


#: Catch these where a parse may meet bytes that are no message (``except DECODE_ERRORS``): upb's and ours.
DECODE_ERRORS: tuple[type[Exception], ...] = (protomsg.DecodeError,) + ((_UpbDecodeError,) if _UpbDecodeError else ())

# Field numbers of tensorflow.profiler XSpace (xla/tsl/profiler/protobuf/xplane.proto).
_MESSAGES: dict[str, list[_Field]] = {
    "XStat": [
        ("metadata_id", 1, _I64, _OPT, None),
        ("double_value", 2, _DBL, _OPT, None),
        ("uint64_value", 3, _U64, _OPT, None),
        ("int64_value", 4, _I64, _OPT, None),
        ("str_value", 5, _STR, _OPT, None),
        ("bytes_value", 6, _BYTES, _OPT, None),
        ("ref_value", 7, _U64, _OPT, None),
    ],
    "XEvent": [
        ("metadata_id", 1, _I64, _OPT, None),
        ("offset_ps", 2, _I64, _OPT, None),
        ("num_occurrences", 5, _I64, _OPT, None),
        ("duration_ps", 3, _I64, _OPT, None),
        ("stats", 4, _MSG, _REP, "XStat"),
    ],
    "XLine": [
        ("id", 1, _I64, _OPT, None),
        ("display_id", 10, _I64, _OPT, None),
        ("name", 2, _STR, _OPT, None),
        ("display_name", 11, _STR, _OPT, None),
        ("timestamp_ns", 3, _I64, _OPT, None),
        ("duration_ps", 9, _I64, _OPT, None),
        ("events", 4, _MSG, _REP, "XEvent"),
    ],
    "XEventMetadata": [
        ("id", 1, _I64, _OPT, None),
        ("name", 2, _STR, _OPT, None),
        ("display_name", 4, _STR, _OPT, None),
        ("metadata", 3, _BYTES, _OPT, None),
        ("stats", 5, _MSG, _REP, "XStat"),
        ("child_id", 6, _I64, _REP, None),
    ],
    "XStatMetadata": [
        ("id", 1, _I64, _OPT, None),
        ("name", 2, _STR, _OPT, None),
        ("description", 3, _STR, _OPT, None),
    ],
    # map<int64, X> entries are plain messages {key = 1; value = 2} on the wire.
    "EventMetadataEntry": [("key", 1, _I64, _OPT, None), ("value", 2, _MSG, _OPT, "XEventMetadata")],
    "StatMetadataEntry": [("key", 1, _I64, _OPT, None), ("value", 2, _MSG, _OPT, "XStatMetadata")],
    "XPlane": [
        ("id", 1, _I64, _OPT, None),
        ("name", 2, _STR, _OPT, None),
        ("lines", 3, _MSG, _REP, "XLine"),
        ("event_metadata", 4, _MSG, _REP, "EventMetadataEntry"),
        ("stat_metadata", 5, _MSG, _REP, "StatMetadataEntry"),
        ("stats", 6, _MSG, _REP, "XStat"),
    ],
    "XSpace": [
        ("planes", 1, _MSG, _REP, "XPlane"),
        ("errors", 2, _STR, _REP, None),
        ("warnings", 3, _STR, _REP, None),
        ("hostnames", 4, _STR, _REP, None),
    ],
}

# Lazy views: the same messages with their big repeated sub-message kept as raw bytes.
_LAZY_VIEWS: dict[str, tuple[str, str]] = {
    "LazyPlane": ("XPlane", "lines"),
    "LazyLine": ("XLine", "events"),
}
for _lazy, (_base, _raw_field) in _LAZY_VIEWS.items():
    _MESSAGES[_lazy] = [
        (name, num, _BYTES, _REP, None) if name == _raw_field else (name, num, ftype, label, tname)
        for name, num, ftype, label, tname in _MESSAGES[_base]
    ]

_PACKAGE = "tb_gpu_advisor.xspace"


def build_classes(file_name: str, package: str, messages: dict[str, list[_Field]]) -> dict[str, Any]:
    """Message classes of ``messages`` (name -> fields), built in a pool of their own.

    Shared by every schema this project reads from field numbers (XSpace here, XLA's HLO in ``hlo.py``).
    Proto3 semantics throughout: an enum is declared as ``int32`` (same varint on the wire), a oneof as its
    plain fields.  upb's classes where protobuf is installed, else plain-Python ones (:mod:`protomsg`).
    """
    if protobuf_runtime() != UPB:
        return protomsg.build_classes(file_name, package, messages)
    return upb_classes(file_name, package, messages)


def upb_classes(file_name: str, package: str, messages: dict[str, list[_Field]]) -> dict[str, Any]:
    """:func:`build_classes` on protobuf's runtime (upb): its descriptors built from the table."""
    fd = descriptor_pb2.FileDescriptorProto(name=file_name, package=package, syntax="proto3")
    for msg_name, fields in messages.items():
        msg = fd.message_type.add(name=msg_name)
        for name, number, ftype, label, type_name in fields:
            field = msg.field.add(name=name, number=number, type=ftype, label=label)
            if type_name:
                field.type_name = f".{package}.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{name}"))
        for name in messages
    }


@functools.lru_cache(maxsize=1)
def _classes() -> dict[str, Any]:
    # The XEvent oneof {offset_ps, num_occurrences} and XStat value oneof are
    # left as plain proto3 fields: same wire format, simpler to read.
    return build_classes("tb_gpu_advisor/xspace.proto", _PACKAGE, _MESSAGES)


def message_class(name: str) -> Any:
    """Return the protobuf message class ``name`` (e.g. ``"XSpace"``, ``"LazyLine"``)."""
    return _classes()[name]


def from_bytes(cls: Any, data) -> Any:
    """``cls.FromString(data)`` once there is room for upb's parse (a MemoryError otherwise:
    :func:`~tb_gpu_advisor.common.memory.ensure_room_to_parse`); every schema's messages are parsed through here."""
    ensure_room_to_parse(len(data))
    return cls.FromString(data)


def parse(name: str, data) -> Any:
    """The message ``name`` of this schema from ``data`` (:func:`from_bytes`)."""
    return from_bytes(_classes()[name], data)
