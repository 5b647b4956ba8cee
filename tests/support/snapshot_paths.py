"""Both snapshot pickle readers on one input, for the equality tests and ``scripts/snapshot_fuzz_equal.py``: the
compiled twin (``formats/snapshot/_cpickle.c``) and the Python reference (``unpickle._Reader``), through the module's
one switch (``unpickle._CPICKLE``), with what each built compared object by object -- types, values, dict order and
which containers are shared -- and the calls of the ``compact`` callback compared in order."""

from __future__ import annotations

import functools
import gzip
import math
import random
import struct
from pathlib import Path
from typing import Any

from tb_gpu_advisor.formats.snapshot import reader, unpickle

#: The compiled reader as built (None: not built, or TB_GPU_ADVISOR_PURE_PYTHON set).
CPICKLE = unpickle._CPICKLE


class Recording:
    """The reader's own compactor, logging each dict it is handed (its keys, in order), the list it goes into (by the
    order lists were first met), whether it took it and the row it made (its fields): the rows the lists' ROW marks
    stand for are compared here."""

    def __init__(self) -> None:
        self.inner = reader._Compactor()
        self.calls: list[tuple] = []
        self._lists: dict[int, tuple[list, int]] = {}  # id -> (the list, kept alive so no id is reused; its order)

    def __call__(self, d: dict, lst: list) -> Any:
        out = self.inner(d, lst)
        got = self._lists.setdefault(id(lst), (lst, len(self._lists)))
        row = self.inner.row(len(self.inner.action) - 1).fields() if out is not None else None
        self.calls.append((tuple(map(repr, d)), got[1], out is not None, row))
        return out


class CountingFile:
    """A file that records every read: how many bytes each asked for (-1: all) and got."""

    def __init__(self, f: Any, log: list[tuple[int, int]]):
        self._f, self._log = f, log

    def read(self, n: int = -1) -> bytes:
        out = self._f.read(n)
        self._log.append((n, len(out)))
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __enter__(self) -> "CountingFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._f.close()


def load_with(compiled: bool, data: bytes, compact: bool = True, **kw: Any) -> tuple[Any, list]:
    """What ``unpickle.loads`` gives on one path: the value or the exception, and the compactor's log."""
    saved = unpickle._CPICKLE
    unpickle._CPICKLE = CPICKLE if compiled else None
    rec = Recording() if compact else None
    try:
        return unpickle.loads(data, compact=rec, **kw), rec.calls if rec else []
    except Exception as e:  # noqa: BLE001 - the error is the result compared
        return e, rec.calls if rec else []
    finally:
        unpickle._CPICKLE = saved


def differences(fast: Any, ref: Any) -> list[str]:
    """Where two results differ (empty: the same): an error by class and message, a value by type, value, dict key
    order and sharing (a container met twice in one must be the one container met twice in the other)."""
    if isinstance(fast, BaseException) or isinstance(ref, BaseException):
        a = (type(fast).__name__, str(fast)) if isinstance(fast, BaseException) else ("value", "")
        b = (type(ref).__name__, str(ref)) if isinstance(ref, BaseException) else ("value", "")
        return [] if a == b else [f"compiled {a} vs python {b}"]
    out: list[str] = []
    pairs: dict[int, int] = {}
    keep: list[Any] = []  # every container met stays alive, so no id is reused during the walk
    todo = [(fast, ref, "$")]
    while todo and len(out) < 10:
        a, b, where = todo.pop()
        if isinstance(a, reader._Entry) and isinstance(b, reader._Entry):  # rows of two compactors: by their fields
            a, b = a.fields(), b.fields()
        if type(a) is not type(b):
            out.append(f"{where}: {type(a).__name__} vs {type(b).__name__}")
            continue
        if isinstance(a, (dict, list, tuple)):
            keep += (a, b)
            if id(a) in pairs:
                if pairs[id(a)] != id(b):
                    out.append(f"{where}: shared in one, not in the other")
                continue
            pairs[id(a)] = id(b)
            if isinstance(a, dict):
                ka, kb = list(a), list(b)
                if [(type(k), k) for k in ka] != [(type(k), k) for k in kb]:
                    out.append(f"{where}: keys {ka[:5]} vs {kb[:5]}")
                    continue
                todo += [(a[k], b[k], f"{where}[{k!r}]") for k in ka]
            elif len(a) != len(b):
                out.append(f"{where}: length {len(a)} vs {len(b)}")
            else:
                todo += [(x, y, f"{where}[{i}]") for i, (x, y) in enumerate(zip(a, b))]
        elif isinstance(a, float):
            if struct.pack("<d", a) != struct.pack("<d", b) and not (math.isnan(a) and math.isnan(b)):
                out.append(f"{where}: {a!r} vs {b!r}")
        elif a != b:
            out.append(f"{where}: {a!r} vs {b!r}")
    return out


def compare(data: bytes, **kw: Any) -> list[str]:
    """Both paths on ``data``, with the reader's compactor and without: every difference, the compactor's calls
    included."""
    out = []
    for compact in (True, False):
        (fast, fast_calls), (ref, ref_calls) = (load_with(c, data, compact, **kw) for c in (True, False))
        out += [f"compact={compact}: {d}" for d in differences(fast, ref)]
        if fast_calls != ref_calls:
            out.append(f"compact={compact}: compactor calls differ ({len(fast_calls)} vs {len(ref_calls)})")
    return out


def read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


#: Opcodes with arguments, well-formed and not, for the pickle-aware mutations: every branch of both readers.
SNIPPETS = [
    b"(", b"e", b"u", b"a", b"s", b"l", b"t", b"d", b")", b"N", b"\x88", b"\x89", b"K\x05", b"M\x01\x02",
    b"J\xff\xff\xff\xff", b"\x8a\x00", b"\x8a\x09" + b"\xff" * 9, b"\x8a\x11" + b"\x01" * 17, b"\x8a\x08" + b"\x80" * 8,
    b"\x8b\xff\xff\xff\xff", b"\x8b\x02\x00\x00\x00\x01\x80", b"G" + struct.pack(">d", 1.5), b"G\x7f\xf8" + b"\x01" * 6,
    b"I01\n", b"I00\n", b"I 12 \n", b"I1_0\n", b"Ix\n", b"L123L\n", b"L-5\n", b"F1.5\n", b"F nan\n", b"Fx\n",
    b"Vab\\u00e9\n", b"Vab\\u12\n", b"S'x'\n", b"S\"a\\x41\"\n", b"S'x\n", b"S'\\u1234'\n", b"T\x01\x00\x00\x00x",
    b"T\xff\xff\xff\xff", b"U\x01\xe9", b"p0\n", b"p01\n", b"p99999999999999999999\n", b"g0\n", b"g01\n", b"g-1\n",
    b"q\x00", b"q\x07", b"r\x00\x00\x00\x00", b"h\x00", b"h\x03", b"j\x00\x00\x00\x00", b"j\xff\xff\xff\xff",
    b"\x94", b"\x85", b"\x86", b"\x87", b"0", b"1", b"2", b"c", b"\x93", b"R", b"\x95" + struct.pack("<Q", 4),
    b"\x95" + b"\xff" * 8, b"\x80\x06", b"\x80\x02", b"}", b"]", b"X\x02\x00\x00\x00\xc3\xa9", b"X\xff\xff\xff\x7f",
    b"\x8c\x01\xff", b"\x8c\x03\xed\xa0\x80", b"\x8d" + struct.pack("<Q", 1 << 60), b"\xa0", b"\xff", b".",
    b"\x8c\x01k", b"K\x00", b"}(\x8c\x01kK\x01u", b"](K\x01e", b"(K\x01K\x02t", b"(\x8c\x01kK\x01d",
]


def mutate_pickle(rng: random.Random, data: bytes) -> bytes:
    """One to four pickle-aware mutations: an opcode snippet inserted or written over, an opcode byte replaced,
    a stretch repeated (deeper nesting, memo keys out of order) or cut."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(buf) + 1)
        op = rng.randrange(5)
        snip = rng.choice(SNIPPETS)
        if op == 0:
            buf[i:i] = snip
        elif op == 1:
            buf[i:i + len(snip)] = snip
        elif op == 2 and buf:
            buf[min(i, len(buf) - 1)] = rng.choice(b"()eualtd.}]\x94hjqrKMJ\x8a\x8b\x8c\x85\x86\x87NG")
        elif op == 3 and buf:
            j = rng.randrange(len(buf))
            buf[i:i] = buf[j:j + rng.randint(1, 64)]
        else:
            del buf[i:i + rng.randint(1, 16)]
    return bytes(buf)


def snapshot_files(roots: list[Path]) -> list[Path]:
    """Every memory snapshot under ``roots``: ``*.pickle``, ``*.pkl`` and their ``.gz``."""
    return sorted(p for root in roots if root.is_dir() for pattern in ("*.pickle", "*.pkl", "*.pickle.gz", "*.pkl.gz")
                  for p in root.rglob(pattern))


def _unpacked_size(path: Path) -> int:
    """The bytes :func:`read` gives of ``path``, from the file's size or a gzip's trailer (its size modulo 2**32):
    equal for two files of the same pickle, without unpacking either."""
    with open(path, "rb") as f:
        if f.read(2) != b"\x1f\x8b":
            return path.stat().st_size
        f.seek(-4, 2)
        return int.from_bytes(f.read(4), "little")


def distinct_pickles(paths: list[Path]) -> list[Path]:
    """``paths`` less each one whose pickle (:func:`read`'s bytes) an earlier one holds already: a reader test of its
    bytes would check the very same input again.  Why: three public snapshots are kept twice, under
    ``snapshots_wild/`` and as a ``wild/`` scenario (one gzipped, one not), and a comparison of both readers on each
    (``test_snapshot_compiled``) cost seconds per copy.  Only files of one unpacked size are unpacked and hashed."""
    import hashlib

    by_size: dict[int, list[Path]] = {}
    for p in paths:
        by_size.setdefault(_unpacked_size(p), []).append(p)
    seen, out = set(), []
    for p in paths:
        if len(by_size[_unpacked_size(p)]) > 1:
            digest = hashlib.sha256(read(p)).digest()
            if digest in seen:
                continue
            seen.add(digest)
        out.append(p)
    return out


def hostile_input_pickles() -> dict[str, bytes]:
    """The pickles of ``synthetic/hostile_inputs`` (a viewer page's: the one it embeds): snapshots whose values no
    allocator writes, a history put first, pickles a page carries."""
    from synthetic import hostile_inputs
    from tb_gpu_advisor.formats.snapshot.layout import embedded_snapshot, is_page

    out = {}
    for name, (_, _, make, _, _) in hostile_inputs.KINDS.items():
        data = make()
        data = embedded_snapshot(data) if is_page(data) else data
        if isinstance(data, bytes) and data[:1] == b"\x80":
            out[name] = data
    return out


def each_generated() -> dict[str, bytes]:
    """The generated snapshots (every scenario, protocols 0 to 5), the hostile pickles of both generators, and a
    small large-history file: a dict of this caller's own over bytes made once per process.

    Why once: two modules pick their inputs from it at collection (``test_snapshot_compiled``,
    ``test_snapshot_text_opcodes63``), which every pytest-xdist worker runs for every module; making the 122 pickles
    cost ~1.5 s of CPU each time (the collection's largest module-level cost after the real traces' byte search)."""
    return dict(_generated())


@functools.cache
def _generated() -> dict[str, bytes]:
    """:func:`each_generated`'s pickles, made once (bytes: no caller can change them)."""
    import os
    import pickle
    import tempfile

    from synthetic import hostile_pickles, memsnapshot
    out = {}
    for name, make in memsnapshot.SCENARIOS.items():
        doc = make().doc
        for proto in range(6):
            out[f"{name}/protocol{proto}"] = pickle.dumps(doc, protocol=proto)
    for name, (_, make) in hostile_pickles.PICKLES.items():
        out[f"hostile_pickles/{name}"] = make()
    out.update({f"hostile_inputs/{k}": v for k, v in hostile_input_pickles().items()})
    with tempfile.TemporaryDirectory() as tmp:
        out.update({f"memsnapshot.hostile/{k}": v for k, v in memsnapshot.hostile(os.path.join(tmp, "ran")).items()})
        path = os.path.join(tmp, "large.pickle")
        memsnapshot.write_large(path, 3000, stacks=20, depth=8, live=200)
        with open(path, "rb") as f:
            out["write_large/3000"] = f.read()
    return out

