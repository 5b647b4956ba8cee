"""A pickle reader that builds plain data only: the safe way to open a memory snapshot someone else wrote.

``pickle.load`` runs code: a pickle names any importable callable (``GLOBAL`` / ``STACK_GLOBAL``) and calls it
(``REDUCE``, ``BUILD``, ``NEWOBJ`` ...), so opening an untrusted ``.pickle`` with it is running that file.  PyTorch's
``torch.cuda.memory._dump_snapshot`` pickles nothing but dicts, lists, tuples, strings, integers, floats, booleans and
None, so this reader interprets the opcodes that build those -- protocols 0 to 5 -- and refuses every other one
before anything is built: no class is ever looked up, no callable ever called, no extension registry or persistent
id consulted.  Unknown or malformed input is :class:`UnsafePickle` / ``ValueError``, never a partial result.

Bounded by construction (issue #39), so a hostile file costs time and memory in proportion to its size:

* a string's or number's length is checked against the bytes left before it is read; an integer is at most
  :data:`MAX_INT_BYTES` bytes; a text line at most :data:`MAX_LINE` (found in place, never copied first);
* memo references share objects, never copy them (PyTorch's own pickles share repeated frames), and a container
  is *sealed* once it is placed in another: it can no longer grow, so no cycle can be built and a container's
  nesting depth, known when it is placed, stays true.  Deeper than :data:`MAX_DEPTH` is refused -- a snapshot
  nests 7 deep, and every walk of the result (``hash``, ``==``, a pickler, a formatter) may then recurse safely;
* dict keys are strings or integers below 2**61 (their hashes cannot collide by design): no tuple is hashed, no
  crafted key collides, so building a dict is linear;
* at most :data:`MAX_OBJECTS` objects are built (strings, numbers, containers, and the references containers
  hold), so memory is bounded whatever the opcodes;
* the interpreter is one loop over the opcodes, with the MARK positions on a stack of their own: no recursion,
  no rescan of the stack.

Every limit a file reaches is :class:`PickleLimit`, naming the limit.

:func:`load` reads a pickle as a stream (twice, in chunks of :data:`CHUNK`; pytorch#176290: snapshots over 1 GB), so
memory holds what is built, the memo entries fetched again and one window, never the file; :func:`loads` takes
the whole bytes.  Both give the same value and the same error at the same byte.
"""

from __future__ import annotations

import struct
from itertools import repeat
from typing import Any, Callable

from tb_gpu_advisor.formats.snapshot import compiled

#: The largest integer a snapshot holds is a 64-bit address or size; a few more bytes are tolerated, no more.
MAX_INT_BYTES = 16
#: Text opcodes (protocol 0) end at a newline within this many bytes (a string: a frame's file path).
MAX_LINE = 1 << 20
#: Containers nested deeper are refused: a snapshot nests 7 deep (the top dict, ``segments``, a segment, its
#: ``blocks``, a block, its ``frames``, a frame); twice that and more leaves room for a future field.
MAX_DEPTH = 16
#: Objects built at most per byte of the file (each string, number, container and memo entry, and each reference a
#: container holds), and at least MIN_OBJECTS: real snapshots build one per 3 to 5 bytes (0.18-0.32 per byte on
#: seven of them), so a file building more is no snapshot, and memory stays within ~70 bytes an object.
OBJECTS_PER_BYTE = 1
MIN_OBJECTS = 1_000_000
#: Integer keys hash to themselves below this (Python hashes an int modulo 2**61 - 1): none can collide.
_MAX_INT_KEY = 1 << 60


class UnsafePickle(ValueError):
    """The pickle asks for something other than plain data (a global, a call, an object): refused, not run."""


#: Opcodes that would import or call something, or build a type the format never uses: refused on sight.
_REFUSED = {
    b"c": "GLOBAL (imports a name)", b"\x93": "STACK_GLOBAL (imports a name)", b"R": "REDUCE (calls a callable)",
    b"b": "BUILD (sets an object's state)", b"i": "INST (builds an object)", b"o": "OBJ (builds an object)",
    b"\x81": "NEWOBJ (builds an object)", b"\x92": "NEWOBJ_EX (builds an object)",
    b"\x82": "EXT1 (extension registry)", b"\x83": "EXT2 (extension registry)", b"\x84": "EXT4 (extension registry)",
    b"P": "PERSID (persistent id)", b"Q": "BINPERSID (persistent id)", b"\x8f": "EMPTY_SET", b"\x90": "ADDITEMS",
    b"\x91": "FROZENSET", b"\x96": "BYTEARRAY8", b"\x97": "NEXT_BUFFER", b"\x98": "READONLY_BUFFER",
    b"B": "BINBYTES", b"C": "SHORT_BINBYTES", b"\x8e": "BINBYTES8",
    # plain data, but never written by ``pickle.dump`` for plain data: only a hand-made file loops on them
    b"2": "DUP (pickle.dump never writes it)", b"0": "POP (pickle.dump writes it for recursive tuples only)",
    b"1": "POP_MARK (pickle.dump writes it for recursive tuples only)",
}


class PickleLimit(ValueError):
    """The pickle asks for more than a snapshot ever needs (nesting, objects, a key that hashes badly, a cycle):
    refused, with the limit it reached."""


class _Mark:
    """The stack marker of ``MARK``."""


_MARK = _Mark()


def loads(data: bytes, max_objects: int | None = None, compact: Callable[[dict, list], Any] | None = None) -> Any:
    """The plain value pickled in ``data``; :class:`UnsafePickle` for anything but plain data, :class:`PickleLimit`
    past a limit (``max_objects``: by default :data:`OBJECTS_PER_BYTE` per byte, at least :data:`MIN_OBJECTS`),
    ``ValueError`` for a truncated or malformed pickle.

    ``compact``: called with each dict as it is placed in a list, and the list (``compact(d, lst)``); what it
    returns (not None) is placed instead, so a reader keeps a few fields of a million trace entries, not the
    entries.  Only memo entries the file fetches again
    are kept (a first pass finds them): an object pickled once is freed when its reader is done with it.

    Where the compiled twin (``_cpickle.c``) is built it runs instead, with the same result and the same error on
    every input; this module's limits and helpers are handed to it on each call, so it follows them as they are."""
    if max_objects is None:
        max_objects = max(MIN_OBJECTS, OBJECTS_PER_BYTE * len(data))
    helpers = _c_helpers(max_objects) if _CPICKLE is not None else None
    if helpers is not None:
        return _CPICKLE.loads(bytes(data), max_objects, compact, helpers)
    return _Reader(data, max_objects, compact).run()


#: Bytes a streamed read takes from its source at a time (:func:`load`); a window never holds more than this plus
#: the one argument being read (a string, or a text line of at most :data:`MAX_LINE`).
CHUNK = 1 << 20


def load(open_pass: Callable[[], Any], max_objects: int | None = None, compact: Callable[[dict, list], Any] | None = None,
         chunk: int | None = None) -> tuple[Any, int]:
    """:func:`loads` of a pickle read as a stream, never whole: ``(value, its length in bytes)``.

    ``open_pass()`` opens one pass over the pickle's bytes: an object with ``read(n)`` (at most ``n`` bytes, ``b""``
    at the end; it may raise to refuse the file, e.g. past a size limit) and ``close()``.  It is called twice: a
    first pass finds the memo keys fetched again and the length (what :func:`loads` learns from the whole bytes),
    the second builds the value, in windows of ``chunk`` bytes (:data:`CHUNK`).  The same limits, the same value
    and the same error at the same byte as :func:`loads` on the whole bytes, on both the Python and compiled
    paths."""
    chunk = max(1, CHUNK if chunk is None else chunk)
    src = open_pass()
    try:
        if _CPICKLE is not None:
            bitmap, total = _CPICKLE.scan(src.read, chunk, MAX_LINE)
        else:
            keys, total = _scan_stream(src.read, chunk)
    finally:
        src.close()
    if max_objects is None:
        max_objects = max(MIN_OBJECTS, OBJECTS_PER_BYTE * total)
    helpers = _c_helpers(max_objects) if _CPICKLE is not None else None
    src = open_pass()
    try:
        if helpers is not None:
            return _CPICKLE.load(src.read, total, chunk, max_objects, compact, helpers, bitmap), total
        if _CPICKLE is not None:  # a caller's odd max_objects: the Python path reads, with the compiled pass's keys
            keys = {k for k in range(8 * len(bitmap)) if bitmap[k >> 3] >> (k & 7) & 1}
        reader = _Reader(b"", max_objects, compact, read=src.read, total=total, chunk=chunk, fetched=keys)
        return reader.run(), total
    finally:
        src.close()


def _c_helpers(max_objects: Any) -> tuple | None:
    """What the compiled reader is handed: the exception classes, the helpers whose wording it must share, the
    limits; None where a number is out of its 64-bit range (a caller's odd ``max_objects``: the Python path reads)."""
    limits = (MAX_INT_BYTES, MAX_LINE, MAX_DEPTH, _MAX_INT_KEY)
    if not all(type(v) is int and -_C_RANGE < v < _C_RANGE for v in (max_objects, *limits)):
        return None
    return (UnsafePickle, PickleLimit, _too_many, _text_int, _quoted, _PLAIN, _Mark, _REFUSED, *limits)


def _too_many(max_objects: int) -> PickleLimit:
    return PickleLimit(f"more than {max_objects:,} objects (the limit: {OBJECTS_PER_BYTE} per byte of the file, at "
                       f"least {MIN_OBJECTS:,}; a snapshot builds one per 3 to 5 bytes)")


#: Per opcode, the bytes of its argument (fixed sizes), for the first pass; -1: a length-prefixed or text argument.
_ARG = [0] * 256
for _op, _n in ((0x80, 1), (0x95, 8), (0x4A, 4), (0x4B, 1), (0x4D, 2), (0x47, 8), (0x68, 1), (0x6A, 4), (0x71, 1),
                (0x72, 4), (0x82, 1), (0x83, 2), (0x84, 4)):
    _ARG[_op] = _n
for _op in (0x8C, 0x58, 0x8D, 0x8A, 0x8B, 0x55, 0x54, 0x43, 0x42, 0x8E, 0x96, 0x49, 0x4C, 0x46, 0x53, 0x56, 0x70, 0x67,
            0x50, 0x63, 0x69):
    _ARG[_op] = -1
_PREFIX = {0x8C: "<B", 0x55: "<B", 0x43: "<B", 0x8A: "<B", 0x58: "<I", 0x54: "<i", 0x42: "<I", 0x8B: "<i",
           0x8D: "<Q", 0x8E: "<Q", 0x96: "<Q"}


def fetched_keys(raw: bytes) -> set[int]:
    """The memo keys a pickle fetches (GET, BINGET, LONG_BINGET): a pass over its opcodes that builds nothing.  It
    stops at the first opcode it cannot step over; the second pass then says what is wrong there."""
    keys: set[int] = set()
    _scan(raw, 0, keys, True)
    return keys


def _scan(raw: bytes, pos: int, keys: set[int], final: bool) -> tuple[int, bool]:
    """:func:`fetched_keys`' pass over ``raw`` from ``pos``: (where it got to, whether it stopped for good).  Not
    ``final`` (more bytes follow), it returns at the start of an opcode whose argument ``raw`` does not hold yet
    (the caller reads on and calls again from there); the position may lie past the end (an argument skipped)."""
    end = len(raw)
    arg = _ARG
    while pos < end:
        at = pos
        op = raw[pos]
        pos += 1
        n = arg[op]
        if op == 0x68:
            if pos < end:
                keys.add(raw[pos])
            elif not final:
                return at, False
        elif op == 0x6A:
            if pos + 4 <= end:
                keys.add(int.from_bytes(raw[pos:pos + 4], "little"))
            elif not final:
                return at, False
        elif op == 0x2E:  # STOP
            return pos, True
        if n >= 0:
            pos += n
            continue
        fmt = _PREFIX.get(op)
        if fmt is not None:
            size = struct.calcsize(fmt)
            if pos + size > end:
                return (at, False) if not final else (pos, True)
            length = struct.unpack_from(fmt, raw, pos)[0]
            if length < 0:
                return pos, True
            pos += size + length
            continue
        nl = raw.find(b"\n", pos, pos + MAX_LINE)  # a text argument (two lines: GLOBAL, INST -- refused later)
        if nl < 0:
            return (at, False) if not final and end - pos < MAX_LINE else (pos, True)
        if op == 0x67:  # GET
            try:
                keys.add(int(raw[pos:nl]))
            except ValueError:
                return pos, True
        pos = nl + 1
        if op in (0x63, 0x69):
            return pos, True
    return pos, False


def _scan_stream(read: Callable[[int], bytes], chunk: int) -> tuple[set[int], int]:
    """:func:`fetched_keys` over a stream read ``chunk`` bytes at a time, and the stream's length (read to its end
    after the pass stops).  Holds one window: the chunk and an opcode cut by its start (a text line: at most
    :data:`MAX_LINE`)."""
    keys: set[int] = set()
    raw, pos, total, stopped = b"", 0, 0, False
    while True:
        part = read(chunk)
        total += len(part)
        if not part:
            if not stopped and pos < len(raw):
                _scan(raw, pos, keys, True)  # the last opcode, cut by the end: stepped over as on the whole bytes
            return keys, total
        if stopped:
            continue
        if pos >= len(raw):  # the window is read; an argument reaching past it is skipped in this part
            skip = pos - len(raw)
            if skip >= len(part):
                raw, pos = b"", skip - len(part)
                continue
            raw, pos = part, skip
        else:
            raw, pos = raw[pos:] + part, 0
        pos, stopped = _scan(raw, pos, keys, False)


_CONTAINERS = (list, dict, tuple)
_UNPACK_B, _UNPACK_H, _UNPACK_I, _UNPACK_i, _UNPACK_Q, _UNPACK_d = (
    struct.Struct(f).unpack_from for f in ("<B", "<H", "<I", "<i", "<Q", ">d"))


class _Reader:
    """One pass over the opcodes (the hot ones inline in :meth:`run`, the others in :meth:`rare`)."""

    def __init__(self, data: bytes, max_objects: int, compact: Callable[[dict, list], Any] | None = None,
                 read: Callable[[int], bytes] | None = None, total: int | None = None, chunk: int = CHUNK,
                 fetched: set[int] | None = None):
        #: the window of the input: ``raw[pos]`` is the byte at ``base + pos`` of ``total``; ``read`` (a stream) gives
        #: the bytes after it, ``chunk`` at a time (None: ``data`` is the whole pickle)
        self.raw = bytes(data)
        self.read, self.chunk = read, chunk
        self.base = 0
        self.total = len(self.raw) if total is None else total
        self.compact = compact
        if fetched is None and compact is not None and read is None:
            fetched = fetched_keys(self.raw)
        self.fetched = fetched if compact is not None else None  # None: keep every memo entry
        self.memoized = 0
        self.pos = 0
        self.stack: list[Any] = []
        self.marks: list[int] = []  # stack positions of the MARKs: popped in O(1), never searched for
        self.memo: dict[int, Any] = {}
        self.objects = 0
        self.max_objects = max_objects
        self.depth: dict[int, int] = {}  # id(container) -> its nesting depth (1: holds no container)
        #: ids of containers pushed a second time (memo GET, DUP): they can no longer change.  Python's pickler
        #: fetches a container only once it is complete, and a container placed in another leaves the stack, so
        #: the only way back to a placed container is such a fetch: no cycle, and every depth stays true.
        self.sealed: set[int] = set()
        self.last_memo: Any = None

    # -- input
    def at(self) -> int:
        """The byte of the pickle read next."""
        return self.base + self.pos

    def more(self, n: int) -> bool:
        """Whether the window holds ``n`` bytes from ``pos``, reading on from the stream (at least a chunk) where it
        does not and can; the bytes before ``pos`` are dropped."""
        have = len(self.raw) - self.pos
        if have >= n or self.read is None:
            return have >= n
        parts = [self.raw[self.pos:]] if have else []
        want = max(n, min(self.chunk, self.total - self.at())) - have  # no more than is left
        while want > 0:
            part = self.read(want)
            if not part:
                break
            parts.append(part)
            want -= len(part)
            have += len(part)
        self.base += self.pos
        self.raw, self.pos = b"".join(parts), 0
        return have >= n

    def need(self, n: int) -> None:
        """``n`` bytes are next in the window, else the pickle is truncated (said at the byte, of the whole)."""
        if n < 0 or n > self.total - self.at() or (self.pos + n > len(self.raw) and not self.more(n)):
            raise ValueError(f"pickle truncated at byte {self.at():,} (wants {n:,} more bytes)")

    def take(self, n: int) -> bytes:
        self.need(n)
        out = self.raw[self.pos:self.pos + n]
        self.pos += n
        return out

    def line(self) -> bytes:
        end = self.raw.find(b"\n", self.pos, self.pos + MAX_LINE)
        if end < 0 and len(self.raw) - self.pos < MAX_LINE and self.read is not None:
            self.more(min(MAX_LINE, self.total - self.at()))
            end = self.raw.find(b"\n", self.pos, self.pos + MAX_LINE)
        if end < 0:
            raise ValueError(f"pickle: no end of line within {MAX_LINE:,} bytes at byte {self.at():,}")
        return self.take(end + 1 - self.pos)[:-1]

    def u(self, unpack: Any, n: int) -> Any:
        self.need(n)
        v = unpack(self.raw, self.pos)[0]
        self.pos += n
        return v

    # -- what is built
    def too_many(self) -> PickleLimit:
        return _too_many(self.max_objects)

    def new(self, container: Any) -> Any:
        """A new, empty or just built container: counted and given its depth (its id's old entries dropped)."""
        self.objects += 1
        self.depth[id(container)] = 1
        self.sealed.discard(id(container))
        return container

    def place(self, parent: Any, items: list[Any] | tuple) -> None:
        """``items`` go into ``parent``: its depth is one more than the deepest's, counted as references."""
        if items:
            dget = self.depth.get
            d = max(map(dget, map(id, items), repeat(0, len(items)))) + 1
            if d > self.depth[id(parent)]:
                if d > MAX_DEPTH:
                    raise PickleLimit(f"containers nested more than {MAX_DEPTH} deep (the limit; a snapshot nests 7)")
                self.depth[id(parent)] = d
            self.objects += len(items)

    def grow(self, kind: type) -> Any:
        """The container on top of the stack, about to get items: one never fetched a second time."""
        target = self.top(kind)
        if id(target) in self.sealed:
            raise PickleLimit(f"a {kind.__name__} changed after it was shared (a cycle, or a shared object "
                              "rewritten: no snapshot does either)")
        return target

    def tuple_of(self, items: list[Any]) -> tuple:
        t = self.new(tuple(items))
        self.place(t, items)
        return t

    def fetch(self, v: Any) -> None:
        if type(v) in _CONTAINERS:
            self.sealed.add(id(v))
        self.stack.append(v)

    # -- stack
    def pop_mark(self) -> list[Any]:
        if not self.marks:
            raise ValueError("pickle: MARK expected on the stack")
        k = self.marks.pop()
        items = self.stack[k + 1:]
        del self.stack[k:]
        return items

    def pop(self) -> Any:
        if not self.stack or self.stack[-1] is _MARK:
            raise ValueError("pickle: stack underflow")
        return self.stack.pop()

    def top(self, kind: type) -> Any:
        if not self.stack or self.stack[-1] is _MARK or not isinstance(self.stack[-1], kind):
            raise ValueError(f"pickle: a {kind.__name__} expected on the stack")
        return self.stack[-1]

    def push_str(self, n: int) -> None:
        raw = self.take(n)
        try:
            self.stack.append(raw.decode("utf-8", "surrogatepass"))
        except UnicodeDecodeError as e:
            raise ValueError(f"pickle: a string that is not UTF-8 ({e})") from e
        self.objects += 1

    def push_long(self, n: int) -> None:
        if n > MAX_INT_BYTES:
            raise UnsafePickle(f"an integer of {n:,} bytes: no snapshot holds one")
        self.stack.append(int.from_bytes(self.take(n), "little", signed=True))
        self.objects += 1

    def setitems(self, d: dict, items: list[Any]) -> None:
        if len(items) % 2:
            raise ValueError("pickle: a dict of an odd number of items")
        for k in range(0, len(items), 2):
            key = items[k]
            if type(key) is not str and not (type(key) in (int, bool) and -_MAX_INT_KEY < key < _MAX_INT_KEY):
                raise PickleLimit(f"a dict key of type {type(key).__name__} (keys are strings or integers below "
                                  "2**60: anything else could cost more to hash than the file is long)")
            d[key] = items[k + 1]
        self.place(d, items[1::2])

    def compacted(self, items: list[Any], lst: list) -> list[Any]:
        """``items`` (placed in ``lst``) with each dict the reader's ``compact`` takes replaced by what it returns
        (``compact(d, lst)``); the dict's and its
        containers' bookkeeping dropped (a dict placed in a list leaves the stack: only a memo fetch brings it back,
        and a fetched one is never compacted)."""
        out = []
        depth, sealed, compact = self.depth, self.sealed, self.compact
        for x in items:
            if type(x) is dict and id(x) not in sealed:
                y = compact(x, lst)
                if y is not None:
                    for v in x.values():
                        if type(v) in _CONTAINERS and id(v) not in sealed:
                            depth.pop(id(v), None)
                    depth.pop(id(x), None)
                    x = y
            out.append(x)
        return out

    def memoize(self, key: int) -> None:
        """``pickle.dump`` memoizes each string and container once, under the next key: anything else (a number,
        the same object again, a key out of order) only a hand-made file does."""
        st = self.stack
        if not st or st[-1] is _MARK:
            raise ValueError("pickle: nothing to memoize")
        v = st[-1]
        memoizable = type(v) is str or type(v) in _CONTAINERS and not (type(v) is tuple and not v)
        if key != self.memoized or v is self.last_memo or not memoizable:
            raise PickleLimit(f"memo entry {key} of a {type(v).__name__} (pickle.dump memoizes each string and "
                              "container once, in order)")
        self.memoized += 1
        self.last_memo = v
        if self.fetched is None or key in self.fetched:
            self.objects += 1
            self.memo[key] = v

    def get(self, key: int) -> None:
        try:
            self.fetch(self.memo[key])
        except KeyError:
            raise ValueError(f"pickle: memo {key} read before it is written") from None

    # -- the interpreter
    def run(self) -> Any:
        """The hot opcodes of a snapshot (memo fetches, short strings, small ints, dicts and lists) inline."""
        st, marks = self.stack, self.marks
        while True:
            if self.objects > self.max_objects:
                raise self.too_many()
            pos, raw = self.pos, self.raw
            if pos >= len(raw):
                if not self.more(1):
                    raise ValueError("pickle ends without STOP (truncated)")
                pos, raw = self.pos, self.raw
            op = raw[pos]
            self.pos = pos + 1
            # the one-byte argument of the hot opcodes read in place where the window holds it (the window's bytes
            # are the file's: what ``need`` checks holds), else through ``u`` as every other argument
            short = pos + 2 <= len(raw)
            if op == 0x68 or op == 0x6A:  # h BINGET, j LONG_BINGET (a key of 1 or 4 bytes)
                end = pos + (2 if op == 0x68 else 5)
                if end <= len(raw):
                    self.pos = end
                    key = raw[pos + 1] if op == 0x68 else _UNPACK_I(raw, pos + 1)[0]
                    v = self.memo.get(key, _MARK)
                    if v is _MARK:
                        raise ValueError(f"pickle: memo {key} read before it is written")
                    if type(v) in _CONTAINERS:
                        self.sealed.add(id(v))
                    st.append(v)
                else:
                    self.get(self.u(_UNPACK_B, 1) if op == 0x68 else self.u(_UNPACK_I, 4))
            elif op == 0x94:  # MEMOIZE
                self.memoize(self.memoized)
            elif op == 0x8C:  # SHORT_BINUNICODE
                if short and pos + 2 + raw[pos + 1] <= len(raw):
                    end = pos + 2 + raw[pos + 1]
                    self.pos = end
                    try:
                        st.append(raw[pos + 2:end].decode("utf-8", "surrogatepass"))
                    except UnicodeDecodeError as e:
                        raise ValueError(f"pickle: a string that is not UTF-8 ({e})") from e
                    self.objects += 1
                else:
                    self.push_str(self.u(_UNPACK_B, 1))
            elif op == 0x4B:  # K BININT1
                if short:
                    self.pos = pos + 2
                    st.append(raw[pos + 1])
                else:
                    st.append(self.u(_UNPACK_B, 1))
            elif op == 0x28:  # ( MARK
                marks.append(len(st))
                st.append(_MARK)
            elif op == 0x7D:  # } EMPTY_DICT
                st.append(self.new({}))
            elif op == 0x5D:  # ] EMPTY_LIST
                st.append(self.new([]))
            elif op == 0x75:  # u SETITEMS
                items = self.pop_mark()
                self.setitems(self.grow(dict), items)
            elif op == 0x65:  # e APPENDS
                items = self.pop_mark()
                lst = self.grow(list)
                self.place(lst, items)
                lst.extend(self.compacted(items, lst) if self.compact is not None else items)
            elif op == 0x2E:  # . STOP
                value = self.pop()
                if st:
                    raise ValueError("pickle: values left on the stack at STOP")
                _check_plain(value)
                return value
            else:
                self.rare(op)

    def rare(self, code: int) -> None:  # noqa: C901 - one opcode per branch reads best as one table
        st = self.stack
        op = bytes([code])
        if op in _REFUSED:
            raise UnsafePickle(f"opcode {_REFUSED[op]} at byte {self.at() - 1:,}: a snapshot is plain data only")
        if op == b"\x80":  # PROTO
            if self.u(_UNPACK_B, 1) > 5:
                raise ValueError("pickle protocol above 5")
        elif op == b"\x95":  # FRAME: a length prefix, which must fit in the file
            n = self.u(_UNPACK_Q, 8)
            if n > self.total - self.at():
                raise ValueError(f"pickle truncated: a frame of {n:,} bytes at byte {self.at():,}, "
                                 f"{self.total - self.at():,} left")
        elif op == b"N":
            st.append(None)
        elif op == b"\x88":
            st.append(True)
        elif op == b"\x89":
            st.append(False)
        elif op == b"J":
            st.append(self.u(_UNPACK_i, 4))
            self.objects += 1
        elif op == b"M":
            st.append(self.u(_UNPACK_H, 2))
            self.objects += 1
        elif op == b"\x8a":
            self.push_long(self.u(_UNPACK_B, 1))
        elif op == b"\x8b":
            self.push_long(self.u(_UNPACK_i, 4))
        elif op == b"G":
            st.append(self.u(_UNPACK_d, 8))
            self.objects += 1
        elif op == b"I":
            st.append(_text_int(self.line()))
            self.objects += 1
        elif op == b"L":
            st.append(_text_int(self.line().rstrip(b"L")))
            self.objects += 1
        elif op == b"F":
            try:
                st.append(float(self.line()))
            except ValueError as e:
                raise ValueError(f"pickle: bad FLOAT ({e})") from e
            self.objects += 1
        elif op == b"X":
            self.push_str(self.u(_UNPACK_I, 4))
        elif op == b"\x8d":
            self.push_str(self.u(_UNPACK_Q, 8))
        elif op == b"V":
            try:
                st.append(self.line().decode("raw_unicode_escape"))
            except UnicodeDecodeError as e:
                raise ValueError(f"pickle: bad UNICODE ({e})") from e
            self.objects += 1
        elif op in (b"S", b"T", b"U"):  # protocol 0-2 byte strings: text in a snapshot written by Python 2 tools
            raw = _quoted(self.line()) if op == b"S" else self.take(
                self.u(_UNPACK_i, 4) if op == b"T" else self.u(_UNPACK_B, 1))
            st.append(raw.decode("latin-1"))
            self.objects += 1
        elif op == b")":
            st.append(())
        elif op == b"l":
            items = self.pop_mark()
            lst = self.new(items)
            self.place(lst, items)
            st.append(lst)
        elif op == b"t":
            st.append(self.tuple_of(self.pop_mark()))
        elif op == b"d":
            items = self.pop_mark()
            d = self.new({})
            self.setitems(d, items)
            st.append(d)
        elif op == b"\x85":
            st.append(self.tuple_of([self.pop()]))
        elif op == b"\x86":
            b_ = self.pop()
            st.append(self.tuple_of([self.pop(), b_]))
        elif op == b"\x87":
            c_, b_ = self.pop(), self.pop()
            st.append(self.tuple_of([self.pop(), b_, c_]))
        elif op == b"a":
            v = self.pop()
            lst = self.grow(list)
            self.place(lst, (v,))
            lst.append(self.compacted([v], lst)[0] if self.compact is not None else v)
        elif op == b"s":
            v, k = self.pop(), self.pop()
            self.setitems(self.grow(dict), [k, v])
        elif op == b"p":
            self.memoize(_text_int(self.line()))
        elif op == b"q":
            self.memoize(self.u(_UNPACK_B, 1))
        elif op == b"r":
            self.memoize(self.u(_UNPACK_I, 4))
        elif op == b"g":
            self.get(_text_int(self.line()))
        else:
            raise UnsafePickle(f"unknown opcode {op!r} at byte {self.at() - 1:,}")


def _text_int(raw: bytes) -> int | bool:
    if raw == b"01":
        return True
    if raw == b"00":
        return False
    if len(raw) > 2 * MAX_INT_BYTES + 2:
        raise UnsafePickle("a text integer longer than any a snapshot holds")
    try:
        return int(raw)
    except ValueError as e:
        raise ValueError(f"pickle: bad integer {raw[:20]!r}") from e


def _quoted(raw: bytes) -> bytes:
    if len(raw) < 2 or raw[:1] != raw[-1:] or raw[:1] not in (b"'", b'"'):
        raise ValueError("pickle: STRING without quotes")
    return raw[1:-1].decode("unicode_escape").encode("latin-1")


_PLAIN = (dict, list, tuple, str, int, float, bool, type(None))


def _check_plain(value: Any) -> None:
    """Every object the result holds is plain data (the opcodes allowed can build nothing else; this says so)."""
    seen: set[int] = set()
    todo = [value]
    while todo:
        v = todo.pop()
        t = type(v)
        if t is str or t is int or t is float or t is bool or v is None:  # most of a snapshot: plain, no container
            continue
        if not isinstance(v, _PLAIN) or isinstance(v, _Mark):
            raise UnsafePickle(f"a {type(v).__name__} in the pickle")
        if isinstance(v, (dict, list, tuple)):
            if id(v) in seen:
                continue
            seen.add(id(v))
            todo.extend(v.keys() if isinstance(v, dict) else ())
            todo.extend(v.values() if isinstance(v, dict) else v)


#: Numbers the compiled reader takes (a signed 64-bit integer, with room for its sums).
_C_RANGE = 1 << 62
#: The compiled twin of :func:`loads`, or None: not built, or ``TB_GPU_ADVISOR_PURE_PYTHON`` set.
_CPICKLE = compiled.load()
