"""Protocol buffer messages built from field tables, in plain Python: what the XSpace and HLO schemas parse with where
the ``protobuf`` package is not installed.

Why: an XPlane capture is a protobuf, and every other capture the Advisor reads needs nothing beyond numpy.  A
Python that runs the Advisor without ``protobuf`` (installed with ``--no-deps``, vendored, a minimal image) read
every format but TensorFlow's and JAX's, which failed as a missing package.  The schemas (``xplane/schema.py``,
``xplane/hlo.py``) are tables of field numbers; this module gives each table a message class with the part of
protobuf's Python API the readers, writers and tests use -- ``FromString``, attributes, ``HasField``, repeated
fields with ``add``/``append``/``extend``, ``Clear``/``ClearField``/``CopyFrom``/``MergeFrom`` and ``SerializeToString`` --
and decodes as upb does:

* a known field with another wire type than its own is an unknown field, skipped (and not kept);
* a singular scalar's last occurrence wins; a singular message's occurrences merge; repeated numbers are read
  packed or not;
* a ``string`` must be UTF-8; a varint is at most ten bytes (bits past 64 dropped); ``int32`` keeps the low 32
  bits; groups of unknown fields are skipped whole; nesting deeper than :data:`MAX_DEPTH` is refused;
* anything else malformed (a tag of field 0, wire types 6 and 7, a length past the message) raises
  :class:`DecodeError`.

``tests/formats/test_protomsg.py`` holds both runtimes to the same messages and the same refusals, field by field,
on real captures, generated ones and hostile bytes.  upb is the faster (C) path and is used wherever it is
installed: ``xplane/schema.py`` chooses.
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Iterable, Iterator
from typing import Any

# FieldDescriptorProto's type and label numbers (google/protobuf/descriptor.proto): the facts both runtimes share.
TYPE_DOUBLE, TYPE_FLOAT, TYPE_INT64, TYPE_UINT64, TYPE_INT32 = 1, 2, 3, 4, 5
TYPE_BOOL, TYPE_STRING, TYPE_MESSAGE, TYPE_BYTES, TYPE_UINT32 = 8, 9, 11, 12, 13
LABEL_OPTIONAL, LABEL_REPEATED = 1, 3

#: (field name, number, type, label, message type name or None): one row of a schema's table.
Field = tuple[str, int, int, int, "str | None"]

#: Nesting of messages parsed at most (protobuf's Python default recursion limit).
MAX_DEPTH = 100
_VARINT, _FIXED64, _LEN, _START_GROUP, _END_GROUP, _FIXED32 = 0, 1, 2, 3, 4, 5
_U64 = (1 << 64) - 1
_VARINT_TYPES = frozenset({TYPE_INT64, TYPE_UINT64, TYPE_INT32, TYPE_BOOL, TYPE_UINT32})
_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")


class DecodeError(ValueError):
    """The bytes are not a well-formed message of the schema (what protobuf's ``message.DecodeError`` says)."""


def _varint(data: memoryview, i: int, end: int) -> tuple[int, int]:
    """(value, position after it) of the varint at ``data[i]``: at most ten bytes, bits past 64 dropped."""
    if i >= end:
        raise DecodeError("truncated varint")
    b = data[i]
    if b < 0x80:
        return b, i + 1
    value, shift, i = b & 0x7F, 7, i + 1
    while i < end:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value & _U64, i
        shift += 7
        if shift >= 70:
            raise DecodeError("varint longer than ten bytes")
    raise DecodeError("truncated varint")


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _scalar(ftype: int, raw: int) -> Any:
    """A varint's value as the field type reads it."""
    if ftype == TYPE_INT64:
        return _signed(raw, 64)
    if ftype == TYPE_INT32:
        return _signed(raw, 32)
    if ftype == TYPE_UINT32:
        return raw & 0xFFFFFFFF
    if ftype == TYPE_BOOL:
        return raw != 0
    return raw


def _skip_group(data: memoryview, i: int, end: int, number: int, depth: int) -> int:
    """Position after the group of field ``number`` whose start tag ends at ``i`` (its fields skipped unread)."""
    if depth > MAX_DEPTH:
        raise DecodeError("groups nested too deep")
    while i < end:
        tag, i = _varint(data, i, end)
        num, wt = tag >> 3, tag & 7
        if num == 0:
            raise DecodeError("field number 0")
        if wt == _END_GROUP:
            if num != number:
                raise DecodeError("end of a group that is not open")
            return i
        i = _skip(data, i, end, num, wt, depth + 1)
    raise DecodeError("group without its end")


def _skip(data: memoryview, i: int, end: int, number: int, wt: int, depth: int) -> int:
    """Position after the value of an unknown field (wire type ``wt``) starting at ``i``."""
    if wt == _VARINT:
        return _varint(data, i, end)[1]
    if wt == _LEN:
        n, i = _varint(data, i, end)
        j = i + n
    elif wt == _FIXED64:
        j = i + 8
    elif wt == _FIXED32:
        j = i + 4
    elif wt == _START_GROUP:
        return _skip_group(data, i, end, number, depth)
    else:
        raise DecodeError(f"wire type {wt} where a field belongs")
    if j > end:
        raise DecodeError("field runs past the end of its message")
    return j


class _FieldSpec:
    """One field of a message class: how it is decoded, held and written."""

    __slots__ = ("cls", "name", "number", "repeated", "type", "wire")

    def __init__(self, name: str, number: int, ftype: int, label: int) -> None:
        self.name, self.number, self.type = name, number, ftype
        self.repeated = label == LABEL_REPEATED
        self.cls: type[Message] | None = None  # message fields: set once every class of the table exists
        self.wire = (_VARINT if ftype in _VARINT_TYPES else _FIXED64 if ftype == TYPE_DOUBLE
                     else _FIXED32 if ftype == TYPE_FLOAT else _LEN)

    def default(self) -> Any:
        if self.type == TYPE_STRING:
            return ""
        if self.type == TYPE_BYTES:
            return b""
        if self.type in (TYPE_DOUBLE, TYPE_FLOAT):
            return 0.0
        if self.type == TYPE_BOOL:
            return False
        return 0


class Repeated(list):
    """A repeated field: a list with protobuf's ``add`` for message elements."""

    __slots__ = ("_cls",)

    def __init__(self, cls: type[Message] | None = None, items: Iterable[Any] = ()) -> None:
        super().__init__(items)
        self._cls = cls

    def add(self, **fields: Any) -> Message:
        """Append a new message element (its fields from ``fields``) and return it."""
        if self._cls is None:
            raise AttributeError("add() is for repeated message fields")
        item = self._cls(**fields)
        self.append(item)
        return item


class Message:
    """Base of the message classes :func:`build_classes` makes; their fields are its attributes.

    A field's value lives in the instance's ``__dict__`` once parsed or set (read at the speed of any attribute); an
    unset one reads as its default through ``__getattr__``, and a repeated or message field is created there on
    first use, as protobuf's are.  ``_present`` names the singular message fields parsed or merged in."""

    _fields: dict[str, _FieldSpec] = {}
    _by_number: dict[int, _FieldSpec] = {}
    _order: tuple[_FieldSpec, ...] = ()

    def __init__(self, **fields: Any) -> None:
        self.__dict__["_present"] = set()
        for name, value in fields.items():
            spec = self._spec(name)
            if spec.repeated:
                getattr(self, name).extend(value)
            elif spec.cls is not None:
                getattr(self, name).MergeFrom(value)
                self._present.add(name)
            else:
                setattr(self, name, value)

    @classmethod
    def _spec(cls, name: str) -> _FieldSpec:
        spec = cls._fields.get(name)
        if spec is None:
            raise AttributeError(f"{cls.__name__} has no field {name!r}")
        return spec

    def __getattr__(self, name: str) -> Any:  # only for a field not in __dict__: unset
        if name.startswith("_"):
            raise AttributeError(name)
        spec = self._spec(name)
        if spec.repeated:
            value: Any = Repeated(spec.cls)
        elif spec.cls is not None:
            value = spec.cls()
        else:
            return spec.default()
        self.__dict__[name] = value
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        spec = self._spec(name)
        if spec.repeated or spec.cls is not None:
            raise AttributeError(f"assignment to the {'repeated' if spec.repeated else 'message'} field {name!r}")
        self.__dict__[name] = _coerce(spec, value)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.SerializeToString() == other.SerializeToString()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # mutable, as protobuf's messages are

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in fields_of(self))
        return f"{type(self).__name__}({shown})"

    # -------------------------------------------------------------------------------------------------- presence

    def HasField(self, name: str) -> bool:
        """Whether the singular message field ``name`` was parsed, set or written into."""
        spec = self._spec(name)
        if spec.repeated or spec.cls is None:
            raise ValueError(f"HasField is for singular message fields, not {name!r}")
        if name in self._present:
            return True
        sub = self.__dict__.get(name)
        return sub is not None and sub.SerializeToString() != b""

    def ClearField(self, name: str) -> None:
        """Back to the field's default (an empty list, an unset message, zero)."""
        self._spec(name)
        self.__dict__.pop(name, None)
        self._present.discard(name)

    def Clear(self) -> None:
        """Every field back to its default."""
        self._clear()

    def CopyFrom(self, other: Message) -> None:
        """Become a copy of ``other`` (a message of the same class)."""
        if other is self:
            return
        self._clear()
        self.MergeFrom(other)

    def MergeFrom(self, other: Message) -> None:
        """Merge ``other`` in, as parsing its bytes after this message's would."""
        if type(other) is not type(self):
            raise TypeError(f"cannot merge a {type(other).__name__} into a {type(self).__name__}")
        self.MergeFromString(other.SerializeToString())

    def _clear(self) -> None:
        present = self._present
        present.clear()
        self.__dict__.clear()
        self.__dict__["_present"] = present

    # -------------------------------------------------------------------------------------------------- decoding

    @classmethod
    def FromString(cls, data: bytes | bytearray | memoryview) -> Message:
        """The message that ``data`` holds (:class:`DecodeError` when it holds none)."""
        msg = cls()
        msg.MergeFromString(data)
        return msg

    def ParseFromString(self, data: bytes | bytearray | memoryview) -> int:
        """Replace this message's fields with those ``data`` holds; the number of bytes read."""
        self._clear()
        return self.MergeFromString(data)

    def MergeFromString(self, data: bytes | bytearray | memoryview) -> int:
        """Merge the fields ``data`` holds into this message; the number of bytes read."""
        view = memoryview(data).cast("B") if not isinstance(data, bytes) else memoryview(data)
        self._merge(view, 0, len(view), 1)
        return len(view)

    def _merge(self, data: memoryview, i: int, end: int, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise DecodeError("messages nested too deep")
        by_number = self._by_number
        values = self.__dict__
        while i < end:
            tag, i = _varint(data, i, end)
            number, wt = tag >> 3, tag & 7
            if number == 0:
                raise DecodeError("field number 0")
            spec = by_number.get(number)
            if spec is None or (wt != spec.wire and not (spec.repeated and wt == _LEN and spec.wire != _LEN)):
                i = _skip(data, i, end, number, wt, depth)
                continue
            if wt == _LEN:
                n, i = _varint(data, i, end)
                j = i + n
                if j > end:
                    raise DecodeError("field runs past the end of its message")
                if spec.wire != _LEN:
                    _unpack(spec, data, i, j, self._repeated(spec))
                elif spec.cls is not None:
                    if spec.repeated:
                        item = spec.cls()
                        item._merge(data, i, j, depth + 1)
                        self._repeated(spec).append(item)
                    else:
                        sub = values.get(spec.name)
                        if sub is None:
                            sub = values[spec.name] = spec.cls()
                        sub._merge(data, i, j, depth + 1)
                        self._present.add(spec.name)
                else:
                    value = _text(spec, data[i:j])
                    if spec.repeated:
                        self._repeated(spec).append(value)
                    else:
                        values[spec.name] = value
                i = j
                continue
            if wt == _VARINT:
                raw, i = _varint(data, i, end)
                value = _scalar(spec.type, raw)
            else:
                j = i + (8 if wt == _FIXED64 else 4)
                if j > end:
                    raise DecodeError("field runs past the end of its message")
                value = (_DOUBLE if wt == _FIXED64 else _FLOAT).unpack_from(data, i)[0]
                i = j
            if spec.repeated:
                self._repeated(spec).append(value)
            else:
                values[spec.name] = value

    def _repeated(self, spec: _FieldSpec) -> Repeated:
        items = self.__dict__.get(spec.name)
        if items is None:
            items = self.__dict__[spec.name] = Repeated(spec.cls)
        return items

    # -------------------------------------------------------------------------------------------------- encoding

    def SerializeToString(self) -> bytes:
        """The message's bytes: fields in number order, proto3's defaults left out, numbers packed."""
        out = bytearray()
        values = self.__dict__
        for spec in self._order:
            if spec.name in values:
                _write(out, spec, values[spec.name], spec.name in self._present)
        return bytes(out)

    def ByteSize(self) -> int:
        return len(self.SerializeToString())


def _text(spec: _FieldSpec, raw: memoryview) -> str | bytes:
    if spec.type == TYPE_BYTES:
        return bytes(raw)
    try:
        return str(raw, "utf-8")
    except UnicodeDecodeError as e:
        raise DecodeError(f"field {spec.name!r} is a string of invalid UTF-8") from e


def _unpack(spec: _FieldSpec, data: memoryview, i: int, end: int, into: list) -> None:
    """Append the packed numbers in ``data[i:end]`` to ``into``."""
    if spec.wire == _VARINT:
        while i < end:
            raw, i = _varint(data, i, end)
            into.append(_scalar(spec.type, raw))
        return
    fmt = _DOUBLE if spec.wire == _FIXED64 else _FLOAT
    if (end - i) % fmt.size:
        raise DecodeError(f"packed field {spec.name!r} is not a whole number of values")
    into.extend(v for (v,) in fmt.iter_unpack(data[i:end]))


def _coerce(spec: _FieldSpec, value: Any) -> Any:
    """``value`` as the field holds it; a value of the wrong type is refused (as protobuf's setters do)."""
    if spec.type == TYPE_STRING:
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        if not isinstance(value, str):
            raise TypeError(f"{spec.name}: a str, not {type(value).__name__}")
        return value
    if spec.type == TYPE_BYTES:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise TypeError(f"{spec.name}: bytes, not {type(value).__name__}")
        return bytes(value)
    if spec.type in (TYPE_DOUBLE, TYPE_FLOAT):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{spec.name}: a number, not {type(value).__name__}")
        return float(value)
    if spec.type == TYPE_BOOL:
        return bool(value)
    try:
        value = operator.index(value)  # an int, numpy's too; not a float or a str
    except TypeError:
        raise TypeError(f"{spec.name}: an int, not {type(value).__name__}") from None
    lo, hi = _RANGES[spec.type]
    if not lo <= value <= hi:
        raise ValueError(f"{spec.name}: {value} is out of range")
    return value


_RANGES = {TYPE_INT64: (-(1 << 63), (1 << 63) - 1), TYPE_UINT64: (0, _U64),
           TYPE_INT32: (-(1 << 31), (1 << 31) - 1), TYPE_UINT32: (0, (1 << 32) - 1)}


def _put_varint(out: bytearray, value: int) -> None:
    value &= _U64
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)


def _put_value(out: bytearray, spec: _FieldSpec, value: Any) -> None:
    """One value's payload (after its tag)."""
    if spec.wire == _VARINT:
        _put_varint(out, int(value))
    elif spec.wire == _FIXED64:
        out += _DOUBLE.pack(value)
    elif spec.wire == _FIXED32:
        out += _FLOAT.pack(value)
    else:
        raw = value.SerializeToString() if spec.cls is not None else (
            value.encode("utf-8") if isinstance(value, str) else bytes(value))
        _put_varint(out, len(raw))
        out += raw


def _write(out: bytearray, spec: _FieldSpec, value: Any, present: bool) -> None:
    """Append field ``spec`` holding ``value`` (a singular message is written when present or not empty)."""
    if spec.repeated:
        if not value:
            return
        if spec.wire != _LEN:  # proto3 packs repeated numbers
            body = bytearray()
            for item in value:
                _put_value(body, spec, item)
            _put_varint(out, spec.number << 3 | _LEN)
            _put_varint(out, len(body))
            out += body
            return
        for item in value:
            _put_varint(out, spec.number << 3 | _LEN)
            _put_value(out, spec, item)
        return
    if spec.cls is not None:
        raw = value.SerializeToString()
        if not raw and not present:
            return
        _put_varint(out, spec.number << 3 | _LEN)
        _put_varint(out, len(raw))
        out += raw
        return
    if _is_default(spec, value):
        return
    _put_varint(out, spec.number << 3 | spec.wire)
    _put_value(out, spec, value)


def _is_default(spec: _FieldSpec, value: Any) -> bool:
    if spec.wire in (_FIXED64, _FIXED32):  # -0.0 is written, as upb does (its bytes are not zero)
        return value == 0 and struct.pack("<d", value) == b"\0" * 8
    return not value


def build_classes(file_name: str, package: str, messages: dict[str, list[Field]]) -> dict[str, type[Message]]:
    """Message classes of ``messages`` (name -> its fields), each a :class:`Message`; ``file_name`` and ``package``
    name them as protobuf's descriptors would (``package.Name``)."""
    classes: dict[str, type[Message]] = {}
    specs: dict[str, list[tuple[_FieldSpec, str | None]]] = {}
    for name, fields in messages.items():
        rows = [(_FieldSpec(fname, number, ftype, label), type_name)
                for fname, number, ftype, label, type_name in fields]
        specs[name] = rows
        classes[name] = type(name, (Message,), {
            "__module__": __name__,
            "__qualname__": f"{package}.{name}",
            "_fields": {spec.name: spec for spec, _ in rows},
            "_by_number": {spec.number: spec for spec, _ in rows},
            "_order": tuple(sorted((spec for spec, _ in rows), key=lambda s: s.number)),
            "DESCRIPTOR_FILE": file_name,
        })
    for name, rows in specs.items():
        for spec, type_name in rows:
            if type_name is not None:
                if type_name not in classes:
                    raise KeyError(f"{name}.{spec.name}: no message {type_name!r} in the table")
                spec.cls = classes[type_name]
    return classes


def fields_of(msg: Message) -> Iterator[tuple[str, Any]]:
    """(name, value) of each field ``msg`` holds, in number order (for tests comparing two runtimes)."""
    values = msg.__dict__
    for spec in msg._order:
        if spec.name in values:
            yield spec.name, values[spec.name]
