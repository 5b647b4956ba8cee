"""Reports to dicts and indented JSON, byte for byte as ``dataclasses.asdict`` and ``json.dumps`` write them, faster.

Why: a report holds tens of thousands of small objects (per-step rows of every GPU, gaps, memcpy rows): 200k
values on a 100 MB capture.  ``dataclasses.asdict`` deep-copies every leaf (``copy.deepcopy`` of each str and
float), and ``json.dumps`` with ``indent`` runs the standard library's pure-Python encoder (its C encoder has
no indentation before Python 3.14), a chain of generators per nesting level.  Measured on the 100 MB ``tf``
benchmark capture's report (5 MB of JSON): asdict 0.45 s and dumps 0.27 s of CPU, against 0.12 s and 0.12 s
here.

:func:`as_dict` returns what ``dataclasses.asdict`` returns (leaves of immutable built-in types are shared
instead of copied: they cannot change).  :func:`dumps` returns what ``json.dumps(obj, indent=indent,
allow_nan=False, default=default)`` returns for the types reports hold (dict, list, tuple, str, int, float,
bool, None, and whatever ``default`` converts); the tests hold it to ``json.dumps`` on such values.  It does not
detect reference cycles (a report has none): a cycle raises RecursionError instead of ValueError.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring_ascii
from typing import Any

_ATOMS = (str, int, float, bool, type(None))
_fields_of: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _fields_of.get(cls)
    if names is None:
        names = _fields_of[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def as_dict(obj: Any) -> Any:
    """``dataclasses.asdict(obj)`` (the same dicts, lists and values; immutable leaves not copied)."""
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        raise TypeError("as_dict() should be called on dataclass instances")
    return _inner(obj)


def _inner(obj: Any) -> Any:
    t = type(obj)
    if t in _ATOMS:
        return obj
    if t is list:
        return [_inner(v) for v in obj]
    if t is dict:
        return {_inner(k): _inner(v) for k, v in obj.items()}
    if hasattr(t, "__dataclass_fields__") and not isinstance(obj, type):
        return {name: _inner(getattr(obj, name)) for name in _field_names(t)}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple, rebuilt from its converted fields
        return t(*[_inner(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return t(_inner(v) for v in obj)
    if isinstance(obj, dict):
        if hasattr(t, "default_factory"):  # a defaultdict, as dataclasses.asdict rebuilds it
            out = t(obj.default_factory)
            for k, v in obj.items():
                out[_inner(k)] = _inner(v)
            return out
        return t((_inner(k), _inner(v)) for k, v in obj.items())
    return copy.deepcopy(obj)


def dumps(obj: Any, indent: int, default: Callable[[Any], Any]) -> str:
    """``json.dumps(obj, indent=indent, allow_nan=False, default=default)``, for report-shaped values."""
    out: list[str] = []
    _encode(obj, out, "\n", " " * indent, default, {})
    return "".join(out)


def _flat_encoder(item_separator: str, default: Callable[[Any], Any]):
    """The standard library's C encoder writing one container's items separated by ``item_separator``: a
    container of scalars only is then one C call, its items on their own lines as the indenting encoder puts them."""
    if c_make_encoder is None:  # a Python without the _json accelerator: the plain path
        return None
    return c_make_encoder(None, default, encode_basestring_ascii, None, ": ", item_separator, False, False, False)


_SCALARS = frozenset((str, int, float, bool, type(None)))
_STR = frozenset((str,))


_CONSTANTS = {True: "true", False: "false"}


def _float(o: float) -> str:
    if not math.isfinite(o):
        raise ValueError("Out of range float values are not JSON compliant: " + repr(o))
    return float.__repr__(o)


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, float):
        return _float(k)
    if k is True or k is False:
        return _CONSTANTS[k]
    if k is None:
        return "null"
    if isinstance(k, int):
        return int.__repr__(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def _encode(o: Any, out: list[str], newline: str, step: str, default: Callable[[Any], Any], flat: dict) -> None:
    """Append ``o`` encoded at the nesting whose line break (with its indentation) is ``newline`` (``flat``: the
    C encoders of containers of scalars, by their items' line break)."""
    append = out.append
    if isinstance(o, str):
        append(encode_basestring_ascii(o))
    elif o is None:
        append("null")
    elif o is True or o is False:
        append(_CONSTANTS[o])
    elif isinstance(o, int):
        append(int.__repr__(o))
    elif isinstance(o, float):
        append(_float(o))
    elif isinstance(o, (list, tuple)):
        if not o:
            append("[]")
            return
        inner = newline + step
        if _SCALARS.issuperset(map(type, o)):  # a C-level pass, no generator frames
            enc = flat[inner] if inner in flat else flat.setdefault(inner, _flat_encoder("," + inner, default))
            if enc is not None:
                append("[" + inner + "".join(enc(o, 0))[1:-1] + newline + "]")
                return
        append("[" + inner)
        first = True
        for v in o:
            if not first:
                append("," + inner)
            first = False
            _encode(v, out, inner, step, default, flat)
        append(newline + "]")
    elif isinstance(o, dict):
        if not o:
            append("{}")
            return
        inner = newline + step
        if _STR.issuperset(map(type, o)) and _SCALARS.issuperset(map(type, o.values())):
            enc = flat[inner] if inner in flat else flat.setdefault(inner, _flat_encoder("," + inner, default))
            if enc is not None:
                append("{" + inner + "".join(enc(o, 0))[1:-1] + newline + "}")
                return
        append("{" + inner)
        first = True
        for k, v in o.items():
            if not first:
                append("," + inner)
            first = False
            append(encode_basestring_ascii(_key(k)) + ": ")
            _encode(v, out, inner, step, default, flat)
        append(newline + "}")
    else:
        _encode(default(o), out, newline, step, default, flat)
