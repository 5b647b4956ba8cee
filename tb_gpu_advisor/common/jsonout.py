"""Dataclasses straight to JSON: the text ``json.dumps(dataclasses.asdict(obj), ...)`` writes, without the round trip.

Why (issue #30 item 3): ``asdict`` copies the whole report -- every number through ``copy.deepcopy`` -- only for
``json.dumps`` to walk the copy again, and ``indent=`` sends ``json.dumps`` to its pure-Python encoder.  On the V100
BERT capture (~11,800 step rows) the two were a fifth of ``report --format json``.

* :func:`dumps` -- compact (``indent=None``): the C encoder walks the objects itself; a dataclass reaches its
  ``default`` hook, which hands back a shallow ``{field: value}`` dict (no copy of what lies below it).
* :func:`dumps` with ``indent``: the tree is walked here once; every list or dict holding only plain scalars (the
  step rows' breakdowns, table rows, ...) is written by the C encoder in one call, with the item separator of its
  depth, so the per-value work stays in C.
* A table kept as columns (``model.steprows.StepRowTable``) stands for a list of dataclasses: its
  ``__json_indented__(indent, level)`` writes the text of that list itself, and ``__json_plain__()`` gives the list of
  dicts (for :func:`plain` and the compact writer).
* :func:`plain` -- ``asdict``'s result (dicts, lists, tuples rebuilt; dataclasses as dicts) without deep-copying the
  leaves (numbers and strings are immutable).

Same output as ``json.dumps(asdict(obj), indent=indent, allow_nan=False, default=default)``, byte for byte:
``ensure_ascii``, the separators ``json`` picks for ``indent``, ``float.__repr__``, keys as ``json`` converts them,
NaN and infinity refused with ``ValueError``.  ``tests/test_jsonout.py`` holds it to that reference on real reports.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from json.encoder import c_make_encoder
from json.encoder import encode_basestring_ascii as _esc
from typing import Any

#: Values the C encoder writes as they are (no ``default``, no nesting): a container of only these is a leaf.
_SCALARS = frozenset({str, int, float, bool, type(None)})
#: dataclass -> its field names in declaration order (``dataclasses.fields``: what ``asdict`` walks), or None
_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _fields(tp: type) -> tuple[str, ...] | None:
    try:
        return _FIELDS[tp]
    except KeyError:
        names = tuple(f.name for f in dataclasses.fields(tp)) if dataclasses.is_dataclass(tp) else None
        _FIELDS[tp] = names
        return names


#: dataclass -> (field name, its JSON key with the key separator) of each field, or None
_KEYS: dict[type, tuple[tuple[str, str], ...] | None] = {}


def _keys(tp: type) -> tuple[tuple[str, str], ...] | None:
    try:
        return _KEYS[tp]
    except KeyError:
        names = _fields(tp)
        _KEYS[tp] = keys = None if names is None else tuple((n, _esc(n) + ": ") for n in names)
        return keys


def plain(obj: Any) -> Any:
    """``dataclasses.asdict(obj)`` for JSON: dataclasses as dicts, dicts/lists/tuples rebuilt (a caller may change the
    result without changing ``obj``), leaves shared rather than deep-copied."""
    tp = type(obj)
    if tp in _SCALARS:
        return obj
    names = _fields(tp)
    if names is not None:
        return {n: plain(getattr(obj, n)) for n in names}
    if tp is list:
        return [plain(v) for v in obj]
    if tp is dict:
        return {plain(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple, as asdict rebuilds it
        return tp(*[plain(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return tp(plain(v) for v in obj)
    if isinstance(obj, dict):
        if hasattr(tp, "default_factory"):  # defaultdict, as asdict rebuilds it
            out = tp(obj.default_factory)
            for k, v in obj.items():
                out[plain(k)] = plain(v)
            return out
        return tp((plain(k), plain(v)) for k, v in obj.items())
    as_plain = getattr(tp, "__json_plain__", None)
    if as_plain is not None:  # a table kept as columns (model.steprows): what asdict makes of the rows it stands for
        return as_plain(obj)
    return obj


def dumps(obj: Any, indent: int | str | None = None, default: Callable[[Any], Any] | None = None) -> str:
    """``json.dumps(dataclasses.asdict(obj), indent=indent, allow_nan=False, default=default)`` (``obj`` may also be
    a dict or list holding dataclasses), written without the copy."""
    if indent is None:
        return json.dumps(obj, allow_nan=False, default=_with_dataclasses(default))
    if c_make_encoder is None:  # an interpreter without json's C speedups: the reference itself
        return json.dumps(plain(obj), indent=indent, allow_nan=False, default=default)
    if not isinstance(indent, str):
        indent = " " * indent
    out: list[str] = []
    _Indented(indent, default).write(obj, 0, out)
    return "".join(out)


#: Pieces the indented writer holds before :func:`dump` writes them out.
_FLUSH_PIECES = 1 << 16


def dump(obj: Any, fp: Any, indent: int | str | None = None, default: Callable[[Any], Any] | None = None) -> None:
    """:func:`dumps` written to the text file ``fp``: the same text, the indented one a block of pieces at a time
    (between the items of an array), so the whole text is never in memory at once -- a 1 GB Nsight export's report
    holds ~0.3 GB of indented step rows, and as one string (with its pieces, then its encoding) it was the report
    command's memory peak (issue #38)."""
    if indent is None or c_make_encoder is None:
        fp.write(dumps(obj, indent, default))
        return
    if not isinstance(indent, str):
        indent = " " * indent
    out: list[str] = []
    writer = _Indented(indent, default)
    writer.sink = lambda: (fp.write("".join(out)), out.clear())
    writer.write(obj, 0, out)
    fp.write("".join(out))


def json_float(x: Any, nd: int = 4) -> float | None:
    """A number as the reports write it: rounded to ``nd`` decimals, None for None, NaN and infinity (JSON has
    neither: a report that wrote them would not parse)."""
    if x is None:
        return None
    x = float(x)
    return round(x, nd) if math.isfinite(x) else None


def _with_dataclasses(default: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    def hook(o: Any) -> Any:
        names = _fields(type(o))
        if names is not None and not isinstance(o, type):
            return {n: getattr(o, n) for n in names}
        as_plain = getattr(type(o), "__json_plain__", None)
        if as_plain is not None and not isinstance(o, type):
            return as_plain(o)
        if default is None:
            raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")
        return default(o)
    return hook


def _float(o: float) -> str:
    if not math.isfinite(o):
        raise ValueError("Out of range float values are not JSON compliant: " + repr(o))
    return float.__repr__(o)


def _key(k: Any) -> str:
    """A dict key as ``json`` writes it (its ``_iterencode_dict``'s conversions, ``skipkeys`` off)."""
    if isinstance(k, str):
        return _esc(k)
    if isinstance(k, float):
        return _esc(_float(k))
    if k is True:
        return '"true"'
    if k is False:
        return '"false"'
    if k is None:
        return '"null"'
    if isinstance(k, int):
        return _esc(int.__repr__(k))
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


class _Indented:
    """The indented writer: ``json``'s ``_make_iterencode`` layout (``[``/``{``, newline and indent before each item,
    ``,`` between, newline and the outer indent before the closing bracket, ``[]``/``{}`` when empty)."""

    def __init__(self, indent: str, default: Callable[[Any], Any] | None):
        self.indent = indent
        self.default = default
        self.newline = ["\n"]  # newline + indent of each depth
        self.leaf: list[Callable[[Any, int], Any]] = []  # the C encoder of each depth (item separator with newline)
        self.sink: Callable[[], Any] | None = None  # writes the pieces so far out and clears them (``dump``)

    def _nl(self, level: int) -> str:
        while len(self.newline) <= level:
            self.newline.append("\n" + self.indent * len(self.newline))
        return self.newline[level]

    def _leaf(self, level: int) -> Callable[[Any, int], Any]:
        while len(self.leaf) <= level:
            sep = "," + self._nl(len(self.leaf) + 1)
            self.leaf.append(c_make_encoder(None, self._no_default, _esc, None, ": ", sep, False, False, False))
        return self.leaf[level]

    @staticmethod
    def _no_default(o: Any) -> Any:  # a leaf holds only scalars; never called
        raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")

    def write(self, o: Any, level: int, out: list[str]) -> None:
        tp = type(o)
        if tp is str:
            out.append(_esc(o))
        elif tp is float:
            out.append(_float(o))
        elif tp is int:
            out.append(int.__repr__(o))
        elif o is None:
            out.append("null")
        elif o is True:
            out.append("true")
        elif o is False:
            out.append("false")
        elif tp is list or tp is tuple:
            self.array(o, level, out)
        elif tp is dict:
            self.mapping(o, level, out)
        else:
            keys = _keys(tp)
            if keys is not None and not isinstance(o, type):
                self.pairs([(k, getattr(o, n)) for n, k in keys], level, out)
            elif hasattr(tp, "__json_indented__") and not isinstance(o, type):
                self.table(o, level, out)
            elif isinstance(o, str):  # subclasses: json's order of isinstance checks
                out.append(_esc(o))
            elif isinstance(o, int):
                out.append(int.__repr__(o))
            elif isinstance(o, float):
                out.append(_float(o))
            elif isinstance(o, (list, tuple)):
                self.array(o, level, out)
            elif isinstance(o, dict):
                self.mapping(o, level, out)
            elif self.default is None:
                raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")
            else:
                self.write(self.default(o), level, out)

    def table(self, o: Any, level: int, out: list[str]) -> None:
        """A table that writes its own text from columns; a block at a time where it offers blocks, handed to the
        sink between them (``dump``), so its text is never whole in memory (~0.3 GB on a 1 GB Nsight export)."""
        blocks = getattr(o, "__json_indented_blocks__", None)
        if blocks is None or self.sink is None:
            out.append(o.__json_indented__(self.indent, level))
            return
        for text in blocks(self.indent, level):
            out.append(text)
            self.sink()

    def array(self, items: Any, level: int, out: list[str]) -> None:
        if not items:
            out.append("[]")
            return
        inner = self._nl(level + 1)
        scalars = _SCALARS
        for v in items:
            if type(v) not in scalars:
                break
        else:  # only scalars: the C encoder writes them with this depth's separator
            text = "".join(self._leaf(level)(items, 0))
            out.append("[" + inner + text[1:-1] + self._nl(level) + "]")
            return
        out.append("[" + inner)
        sep = "," + inner
        first = True
        sink = self.sink
        for v in items:
            if first:
                first = False
            else:
                out.append(sep)
            self.write(v, level + 1, out)
            if sink is not None and len(out) > _FLUSH_PIECES:
                sink()
        out.append(self._nl(level) + "]")

    def mapping(self, d: dict, level: int, out: list[str]) -> None:
        if not d:
            out.append("{}")
            return
        scalars = _SCALARS
        for k, v in d.items():
            if type(v) not in scalars or type(k) is not str:
                self.pairs([(_key(k) + ": ", v) for k, v in d.items()], level, out)
                return
        # every key a str and every value a scalar: the C encoder writes them with this depth's separator
        text = "".join(self._leaf(level)(d, 0))
        out.append("{" + self._nl(level + 1) + text[1:-1] + self._nl(level) + "}")

    def pairs(self, pairs: list[tuple[str, Any]], level: int, out: list[str]) -> None:
        """An object from (``"key": `` already written, value) pairs."""
        if not pairs:
            out.append("{}")
            return
        inner = self._nl(level + 1)
        out.append("{" + inner)
        sep = "," + inner
        first = True
        for k, v in pairs:
            if first:
                first = False
            else:
                out.append(sep)
            out.append(k)
            self.write(v, level + 1, out)
        out.append(self._nl(level) + "}")
