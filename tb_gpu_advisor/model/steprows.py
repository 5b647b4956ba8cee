"""``HostReport.step_rows`` as columns: a sequence of StepRow made on demand, and written to JSON from its columns.

Why (issue #38 deliverable 4): the dense 100 MB benchmark capture has ~12,700 step rows.  A StepRow object and a
breakdown dict per row, then the indented JSON writer's walk over them, took ~110 ms of a report whose whole analysis
after the read should take 300.  The table holds the rounded numbers once; the JSON text is written from them in a
few C-level passes (:meth:`StepRowTable.__json_indented__`), byte for byte the text ``json.dumps`` writes for the
list of StepRow it stands for (``tests/model/test_steprows.py`` holds it to that reference).

Floats: ``json`` writes ``float.__repr__``.  msgspec (a core dependency) writes the same shortest round-trip digits
10-20x faster, and the same text wherever ``repr`` uses positional notation (1e-4 <= |x| < 1e16); the few values
outside that range (and every value when msgspec is missing) are written by ``float.__repr__`` itself.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Sequence
from json.encoder import encode_basestring_ascii as _esc
from typing import Any, TypeVar

import numpy as np

from tb_gpu_advisor.model.schema import StepRow


@functools.cache
def _msgspec_encode() -> Callable[[Any], bytes] | None:
    """msgspec's JSON encoder, imported at the first JSON write: a text report never waits for it (~6 ms of start-up
    with the ``decimal``, ``uuid`` and ``typing_extensions`` it imports, issue #38).  None without msgspec (a core
    dependency): every float then goes through ``float.__repr__``, the same text, slower."""
    try:
        from msgspec.json import encode
    except ImportError:  # pragma: no cover - exercised by the fallback test through _tokens(..., fast=False)
        return None
    return encode


_Row = TypeVar("_Row")


class RowTable(Sequence[_Row]):
    """Rows kept as columns that read as the list of row objects they replace: indexing makes the rows (once, by
    :meth:`rows`), and ``==`` compares row by row with such a list or another table."""

    __slots__ = ()

    def rows(self) -> list[_Row]:
        raise NotImplementedError

    def __getitem__(self, i):  # type: ignore[override]
        return self.rows()[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (RowTable, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class StepRowTable(RowTable[StepRow]):
    """Step rows as columns: ``step`` ids, ``gpu`` per row, and ``values`` -- (rows, 2 + categories) float64 of
    start_ms, step_ms and the breakdown in ``categories`` order, already rounded, NaN where the row holds None.

    Reads as the list of StepRow it replaces (iteration, indexing, ``len``, ``==`` with such a list, pickling);
    ``common.jsonout`` writes it from the columns (``__json_indented__``, ``__json_plain__``)."""

    __slots__ = ("_rows", "categories", "gpu", "step", "values")

    def __init__(self, step: np.ndarray, gpu: list[int | None], values: np.ndarray, categories: Sequence[str]) -> None:
        self.step = np.asarray(step, dtype=np.int64)
        self.gpu = list(gpu)
        self.values = np.asarray(values, dtype=np.float64).reshape(len(self.gpu), 2 + len(categories))
        self.categories = tuple(categories)
        self._rows: list[StepRow] | None = None

    def __len__(self) -> int:
        return len(self.gpu)

    def rows(self) -> list[StepRow]:
        """The StepRow objects (made once, on first use)."""
        if self._rows is None:
            cats = self.categories
            width = 2 + len(cats)
            vals = _nones(self.values)
            self._rows = [StepRow(step=s, start_ms=vals[k], step_ms=vals[k + 1],
                                  breakdown=dict(zip(cats, vals[k + 2:k + width])), gpu=g)
                          for s, g, k in zip(self.step.tolist(), self.gpu, range(0, len(vals), width))]
        return self._rows

    def __iter__(self) -> Iterator[StepRow]:
        return iter(self.rows())

    def __repr__(self) -> str:
        return f"StepRowTable({len(self)} rows)"

    def __reduce__(self):
        return StepRowTable, (self.step, self.gpu, self.values, self.categories)

    def column(self, name: str) -> list[float | None]:
        """One number of every row: ``start_ms``, ``step_ms`` or a breakdown category (None where the row has None)."""
        j = 0 if name == "start_ms" else 1 if name == "step_ms" else 2 + self.categories.index(name)
        return _nones(self.values[:, j])

    def __json_plain__(self) -> list[dict[str, Any]]:
        """``dataclasses.asdict`` of every row (``common.jsonout.plain``, and the compact writer)."""
        return [{"step": r.step, "start_ms": r.start_ms, "step_ms": r.step_ms, "breakdown": dict(r.breakdown),
                 "gpu": r.gpu} for r in self.rows()]

    def __json_indented__(self, indent: str, level: int) -> str:
        """The text ``json.dumps(self.__json_plain__(), indent=indent)`` writes for this list at nesting ``level``
        (the indentation of its closing bracket), built from the columns."""
        return "".join(self.__json_indented_blocks__(indent, level))

    def __json_indented_blocks__(self, indent: str, level: int) -> Iterator[str]:
        """:meth:`__json_indented__`'s text in pieces of :data:`_BLOCK_ROWS` rows, for a writer that streams them.

        Why blocks (issue #38): written whole, a 1 GB Nsight export's ~470 k rows were one list of ~15 M strings,
        ~6.6 M value tokens and a ~0.3 GB string copied twice more (the leading comma cut, the brackets added): 18x
        the CPU of a tenth of the rows.  A block's lists stay small, and no piece is copied after its join."""
        n = len(self)
        if not n:
            yield "[]"
            return

        def nl(k: int) -> str:
            return "\n" + indent * k

        row, field, cat = nl(level + 1), nl(level + 2), nl(level + 3)
        width = 2 + len(self.categories)
        # the constant text around each of a row's 3 + categories + 1 values, in order
        pieces = ["," + row + "{" + field + '"step": ', "," + field + '"start_ms": ', "," + field + '"step_ms": ']
        pieces += [("," + field + '"breakdown": {' + cat if i == 0 else "," + cat) + _esc(c) + ": "
                   for i, c in enumerate(self.categories)]
        pieces.append(field + "}," + field + '"gpu": ')
        k = len(pieces)
        stride = 2 * k + 1
        steps, gpus = self.step.tolist(), self.gpu
        for lo in range(0, n, _BLOCK_ROWS):
            hi = min(n, lo + _BLOCK_ROWS)
            b = hi - lo
            out: list[str] = [""] * (stride * b)
            for j, p in enumerate(pieces):
                out[2 * j::stride] = [p] * b
            if lo == 0:
                out[0] = "[" + pieces[0][1:]  # the first row: no comma before it, the list's bracket instead
            out[1::stride] = list(map(str, steps[lo:hi]))
            toks = _tokens(self.values[lo:hi])
            for j in range(width):
                out[2 * (j + 1) + 1::stride] = toks[j::width]
            out[2 * (k - 1) + 1::stride] = ["null" if g is None else str(g) for g in gpus[lo:hi]]
            out[2 * k::stride] = [row + "}"] * b
            if hi == n:
                out[-1] += nl(level) + "]"
            yield "".join(out)


#: Rows per block of :meth:`StepRowTable.__json_indented_blocks__`: ~0.6 MB of text, lists of ~130 k strings.
_BLOCK_ROWS = 4096


def _nones(a: np.ndarray) -> list[float | None]:
    """``a.ravel().tolist()`` with NaN as None (the table's spelling of a None value)."""
    vals = a.ravel().tolist()
    if np.isnan(a).any():
        vals = [None if math.isnan(v) else v for v in vals]
    return vals


def _tokens(a: np.ndarray, fast: bool = True) -> list[str]:
    """The JSON text of every value of ``a`` (row-major), as ``json`` writes it: ``float.__repr__``, ``null`` for NaN
    (the table's None).  Infinity never reaches here (rounding made it None)."""
    flat = np.ascontiguousarray(a, dtype=np.float64).ravel()
    if not flat.size:
        return []
    encode = _msgspec_encode() if fast else None
    if encode is not None:
        toks = encode(flat.tolist()).decode("ascii")[1:-1].split(",")  # msgspec writes NaN as null
        with np.errstate(invalid="ignore"):
            mag = np.abs(flat)
            odd = np.flatnonzero(((mag < 1e-4) & (mag > 0)) | (mag >= 1e16))
        for i in odd.tolist():  # repr's exponent notation (msgspec writes these differently)
            toks[i] = float.__repr__(float(flat[i]))
        return toks
    return ["null" if math.isnan(v) else float.__repr__(v) for v in flat.tolist()]
