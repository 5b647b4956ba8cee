"""Both PyTorch JSON chunk decoders on one trace, and a field-by-field comparison of what they read (issue #38
items 2 and 5): the compiled scanner (``_cscan.c``) against the typed decode it stands in for."""

from __future__ import annotations

import dataclasses
import io
import math
import random
import re
from typing import Any

import numpy as np

from tb_gpu_advisor.formats.kineto import parse


def every_trace() -> list[str]:
    """Every PyTorch trace of ``tests/``, ``demo_logs/`` and ``../shared/profiles`` (where it is there), sorted: the
    files ``test_kineto_compiled`` reads on both paths, and a superset of those other reader tests compare on the
    compiled path alone (``test_kineto_fast_columns``: the pure-Python rerun leaves them to this comparison)."""
    from tests.support.paths import DEMO_LOGS, SHARED_PROFILES, TESTS

    roots = [TESTS, DEMO_LOGS] + ([SHARED_PROFILES] if SHARED_PROFILES.is_dir() else [])
    return sorted(str(p) for root in roots for pattern in ("*.pt.trace.json", "*.pt.trace.json.gz")
                  for p in root.rglob(pattern))


def read_both(source: str | bytes, chunk_bytes: int | None = None, **kw: Any) -> tuple[object, object]:
    """(compiled result, Python result) of :func:`parse.parse_trace` on ``source`` (a path, or a file's bytes):
    a KinetoTrace, or the error raised.  ``chunk_bytes``: the reader's chunk size for both reads (small chunks cut
    events, which both paths must read again alike), else the reader's own."""
    saved = parse.CHUNK_BYTES
    parse.CHUNK_BYTES = chunk_bytes or saved
    try:
        return read_with(True, source, **kw), read_with(False, source, **kw)
    finally:
        parse.CHUNK_BYTES = saved


def read_with(use_compiled: bool, source: str | bytes, **kw: Any) -> object:
    """Read ``source`` with the compiled scanner or without it; the KinetoTrace or the error.

    The scanner is put in place even where ``TB_GPU_ADVISOR_PURE_PYTHON`` turned it off for the process, so ``make
    test``'s pure rerun compares the same two paths.  ``workers`` defaults to 1 (the serial path; pass more to
    compare the worker processes' merge)."""
    saved = parse._CSCAN
    if use_compiled:
        from tb_gpu_advisor.formats.kineto import _cscan

        parse._CSCAN = _cscan
    else:
        parse._CSCAN = None
    kw.setdefault("workers", 1)
    try:
        src = io.BytesIO(source) if isinstance(source, bytes) else source
        return parse.parse_trace(src, name="<trace>" if isinstance(source, bytes) else None, **kw)
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return e
    finally:
        parse._CSCAN = saved


def differences(a: object, b: object) -> list[str]:
    """What differs between two results of :func:`read_both`: every field's value, dtype and dict order."""
    if isinstance(a, BaseException) or isinstance(b, BaseException):
        same = type(a) is type(b) and str(a) == str(b)
        return [] if same else [f"results differ: {a!r} vs {b!r}"]
    out = []
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        out += [f"{f.name}: {d}" for d in _diff(x, y)]
    return out


def _diff(x: Any, y: Any) -> list[str]:
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)):
            return [f"{type(x).__name__} vs {type(y).__name__}"]
        if x.dtype != y.dtype or x.shape != y.shape:
            return [f"{x.dtype}{x.shape} vs {y.dtype}{y.shape}"]
        if not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            bad = np.flatnonzero(x != y)[:3].tolist()
            return [f"values differ at rows {bad}"]
        return []
    if dataclasses.is_dataclass(x) and dataclasses.is_dataclass(y) and not isinstance(x, type):
        if type(x) is not type(y):
            return [f"{type(x).__name__} vs {type(y).__name__}"]
        return [d for f in dataclasses.fields(x) for d in _diff(getattr(x, f.name), getattr(y, f.name))]
    if isinstance(x, dict) and isinstance(y, dict):
        if list(x) != list(y):
            return ["keys or their order differ"]
        return [f"[{k!r}] {d}" for k in x for d in _diff(x[k], y[k])]
    if isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            return [f"length {len(x)} vs {len(y)}"]
        return [d for i, (u, v) in enumerate(zip(x, y)) for d in _diff(u, v)]
    if type(x) is float and type(y) is float and math.isnan(x) and math.isnan(y):
        return []  # NaN (the head's JSON may spell it) is NaN on both paths
    if type(x) is not type(y) or x != y:
        return [f"{x!r:.80} vs {y!r:.80}"]
    return []


#: Values a JSON-aware mutation puts in place of a field's value: every type and spelling the scanner must either
#: read as the typed decode does or hand back (escapes, ``\u``, numbers as strings, past 64 bits or a float's range,
#: nesting past its depth, raw control characters, bytes that are no UTF-8).
INTERESTING_VALUES = (
    b'"X"', b'"M"', b'"i"', b'"[memory]"', b"null", b"true", b"{}", b"[]", b'"12"', b'""', b"0", b"-0", b"1.5",
    b"-1", b"1e400", b"-1e400", b"1e-400", b"9223372036854775807", b"9223372036854775808", b"99999999999999999999",
    b"123456789012345678", b"1234567890123.4567891", b"0.1e1", b"1E+2", b"01", b"1.", b".5", b"+1", b"NaN",
    b"Infinity", b'"\\u0058"', b'"a\\"b"', b'"a\\\\b"', b'"\\x"', b'"\xff"', b'"\xed\xa0\x80"', b'"\xc3\xa9"',
    b'"\xf0\x9f\x98\x80"', b'"tab\there"', b'"\\n"', b'{"Input Dims": [[1, 2]], "Input type": ["float"]}',
    b'{"correlation": 5, "correlation": 6}', b'{"External id": -5, "external id": 7}', b'{"device": "cuda:0"}',
    b"[" * 40 + b"]" * 40, b"[" * 3000 + b"]" * 3000, b'{"a": ' * 40 + b"1" + b"}" * 40,
)
_FIELD = re.compile(rb'"(ph|name|cat|pid|tid|ts|dur|args|id|correlation|External id|external id|device|stream|bytes'
                    rb'|graph id|Input Dims|Device Id|Total Allocated|Addr|Bytes|grid|block)"\s*:\s*')


def mutate_json(rng: random.Random, data: bytes) -> bytes:
    """One to four JSON-aware mutations of a trace's text: a field's value replaced by one of
    :data:`INTERESTING_VALUES` (the next 1-12 bytes), a key written twice, a key escaped, a value moved."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        hits = [m for m in _FIELD.finditer(buf, rng.randrange(max(len(buf), 1)))][:8] or list(_FIELD.finditer(buf))[:8]
        if not hits:
            break
        m = rng.choice(hits)
        op = rng.randrange(4)
        if op == 0:
            end = m.end()
            while end < len(buf) and buf[end] not in b",}]":
                end += 1  # to the end of a scalar value
            buf[m.end():end] = rng.choice(INTERESTING_VALUES)
        elif op == 1:
            buf[m.start():m.start()] = m.group(0) + rng.choice(INTERESTING_VALUES) + b", "
        elif op == 2:
            buf[m.start() + 1:m.start() + 2] = b"\\u%04x" % buf[m.start() + 1]
        else:
            buf[m.end():m.end()] = rng.choice(INTERESTING_VALUES)[: rng.randint(1, 12)]
    return bytes(buf)
