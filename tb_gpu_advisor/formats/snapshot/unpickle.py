"""A pickle reader that builds plain data only: the safe way to open a memory snapshot someone else wrote.

``pickle.load`` runs code: a pickle names any importable callable (``GLOBAL`` / ``STACK_GLOBAL``) and calls it
(``REDUCE``, ``BUILD``, ``NEWOBJ`` ...), so opening an untrusted ``.pickle`` with it is running that file.  PyTorch's
``torch.cuda.memory._dump_snapshot`` pickles nothing but dicts, lists, tuples, strings, integers, floats, booleans and
None, so this reader interprets the opcodes that build those -- protocols 0 to 5 -- and refuses every other one
before anything is built: no class is ever looked up, no callable ever called, no extension registry or persistent
id consulted.  Unknown or malformed input is :class:`UnsafePickle` / ``ValueError``, never a partial result.

Bounds, so a hostile file costs no more than its size: a string's or number's length is checked against the bytes
left before it is read; an integer is at most :data:`MAX_INT_BYTES` bytes; a text line at most :data:`MAX_LINE`
(found in place, never copied first).
Memo references share objects (as PyTorch's own pickles do for repeated frames), so the *reader* of the result must
bound its walk (``formats/snapshot/reader.py`` does), not this module.
"""

from __future__ import annotations

import struct
from typing import Any

#: The largest integer a snapshot holds is a 64-bit address or size; a few more bytes are tolerated, no more.
MAX_INT_BYTES = 16
#: Text opcodes (protocol 0) end at a newline within this many bytes (a string: a frame's file path).
MAX_LINE = 1 << 20


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
}


class _Mark:
    """The stack marker of ``MARK``."""


_MARK = _Mark()


def loads(data: bytes) -> Any:
    """The plain value pickled in ``data``; :class:`UnsafePickle` for anything but plain data, ``ValueError`` for a
    truncated or malformed pickle."""
    return _Reader(data).run()


class _Reader:
    def __init__(self, data: bytes):
        self.raw = bytes(data)
        self.data = memoryview(self.raw)
        self.pos = 0
        self.stack: list[Any] = []
        self.memo: dict[int, Any] = {}

    # -- input
    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"pickle truncated at byte {self.pos:,} (wants {n:,} more bytes)")
        out = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return out

    def line(self) -> bytes:
        end = self.raw.find(b"\n", self.pos, self.pos + MAX_LINE)
        if end < 0:
            raise ValueError(f"pickle: no end of line within {MAX_LINE:,} bytes at byte {self.pos:,}")
        return self.take(end + 1 - self.pos)[:-1]

    def u(self, fmt: str) -> int:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    # -- stack
    def pop_mark(self) -> list[Any]:
        for k in range(len(self.stack) - 1, -1, -1):
            if self.stack[k] is _MARK:
                items = self.stack[k + 1:]
                del self.stack[k:]
                return items
        raise ValueError("pickle: MARK expected on the stack")

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

    def push_long(self, n: int) -> None:
        if n > MAX_INT_BYTES:
            raise UnsafePickle(f"an integer of {n:,} bytes: no snapshot holds one")
        self.stack.append(int.from_bytes(self.take(n), "little", signed=True))

    # -- the interpreter
    def run(self) -> Any:  # noqa: C901 - one opcode per branch reads best as one table
        st = self.stack
        while True:
            if self.pos >= len(self.data):
                raise ValueError("pickle ends without STOP (truncated)")
            op = self.take(1)
            if op in _REFUSED:
                raise UnsafePickle(f"opcode {_REFUSED[op]} at byte {self.pos - 1:,}: a snapshot is plain data only")
            if op == b".":  # STOP
                value = self.pop()
                if st:
                    raise ValueError("pickle: values left on the stack at STOP")
                _check_plain(value)
                return value
            if op == b"\x80":  # PROTO
                if self.u("<B") > 5:
                    raise ValueError("pickle protocol above 5")
            elif op == b"\x95":  # FRAME: a length prefix only
                self.u("<Q")
            elif op == b"(":
                st.append(_MARK)
            elif op == b"0":
                self.pop()
            elif op == b"1":
                self.pop_mark()
            elif op == b"2":  # DUP
                st.append(self.top(object))
            elif op == b"N":
                st.append(None)
            elif op == b"\x88":
                st.append(True)
            elif op == b"\x89":
                st.append(False)
            elif op == b"J":
                st.append(self.u("<i"))
            elif op == b"K":
                st.append(self.u("<B"))
            elif op == b"M":
                st.append(self.u("<H"))
            elif op == b"\x8a":
                self.push_long(self.u("<B"))
            elif op == b"\x8b":
                self.push_long(self.u("<i"))
            elif op == b"G":
                st.append(self.u(">d"))
            elif op == b"I":
                st.append(_text_int(self.line()))
            elif op == b"L":
                st.append(_text_int(self.line().rstrip(b"L")))
            elif op == b"F":
                try:
                    st.append(float(self.line()))
                except ValueError as e:
                    raise ValueError(f"pickle: bad FLOAT ({e})") from e
            elif op == b"X":
                self.push_str(self.u("<I"))
            elif op == b"\x8c":
                self.push_str(self.u("<B"))
            elif op == b"\x8d":
                self.push_str(self.u("<Q"))
            elif op == b"V":
                try:
                    st.append(self.line().decode("raw_unicode_escape"))
                except UnicodeDecodeError as e:
                    raise ValueError(f"pickle: bad UNICODE ({e})") from e
            elif op in (b"S", b"T", b"U"):  # protocol 0-2 byte strings: text in a snapshot written by Python 2 tools
                raw = _quoted(self.line()) if op == b"S" else self.take(self.u("<i") if op == b"T" else self.u("<B"))
                st.append(raw.decode("latin-1"))
            elif op == b"]":
                st.append([])
            elif op == b"}":
                st.append({})
            elif op == b")":
                st.append(())
            elif op == b"l":
                st.append(self.pop_mark())
            elif op == b"t":
                st.append(tuple(self.pop_mark()))
            elif op == b"d":
                items = self.pop_mark()
                st.append(_pairs({}, items))
            elif op == b"\x85":
                st.append((self.pop(),))
            elif op == b"\x86":
                b_ = self.pop()
                st.append((self.pop(), b_))
            elif op == b"\x87":
                c_, b_ = self.pop(), self.pop()
                st.append((self.pop(), b_, c_))
            elif op == b"a":
                v = self.pop()
                self.top(list).append(v)
            elif op == b"e":
                items = self.pop_mark()
                self.top(list).extend(items)
            elif op == b"s":
                v, k = self.pop(), self.pop()
                _pairs(self.top(dict), [k, v])
            elif op == b"u":
                items = self.pop_mark()
                _pairs(self.top(dict), items)
            elif op in (b"p", b"q", b"r", b"\x94"):  # PUT, BINPUT, LONG_BINPUT, MEMOIZE
                key = (len(self.memo) if op == b"\x94" else _text_int(self.line()) if op == b"p"
                       else self.u("<B") if op == b"q" else self.u("<I"))
                if not st or st[-1] is _MARK:
                    raise ValueError("pickle: nothing to memoize")
                self.memo[key] = st[-1]
            elif op in (b"g", b"h", b"j"):  # GET, BINGET, LONG_BINGET
                key = _text_int(self.line()) if op == b"g" else self.u("<B") if op == b"h" else self.u("<I")
                if key not in self.memo:
                    raise ValueError(f"pickle: memo {key} read before it is written")
                st.append(self.memo[key])
            else:
                raise UnsafePickle(f"unknown opcode {op!r} at byte {self.pos - 1:,}")


def _pairs(d: dict, items: list[Any]) -> dict:
    if len(items) % 2:
        raise ValueError("pickle: a dict of an odd number of items")
    for k in range(0, len(items), 2):
        try:
            d[items[k]] = items[k + 1]
        except TypeError as e:  # a list as a key
            raise ValueError(f"pickle: a key that is no plain value ({e})") from e
    return d


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
        if not isinstance(v, _PLAIN) or isinstance(v, _Mark):
            raise UnsafePickle(f"a {type(v).__name__} in the pickle")
        if isinstance(v, (dict, list, tuple)):
            if id(v) in seen:
                continue
            seen.add(id(v))
            todo.extend(v.keys() if isinstance(v, dict) else ())
            todo.extend(v.values() if isinstance(v, dict) else v)
