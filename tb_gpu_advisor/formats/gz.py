"""The one bounded gzip reader every format reads through (a Kineto ``.pt.trace.json.gz``, a memory snapshot gzipped
for upload, ``formats.base``'s size-limited open): output made at most ``n`` bytes a call, so a gzip bomb is never
inflated past what was asked for, and what came before a cut or corrupt spot is kept.  Why its own module: a format's
reader imports no other format's (h37-debt45's *Left*: the snapshot reader had imported the Kineto parser for it)."""

from __future__ import annotations

import io
import zlib
from typing import IO, Callable

#: bytes read from the compressed stream at a time
_READ_BLOCK = 1 << 20


class Gunzip:
    """gzip decompression that hands out everything decoded before a cut-off or corrupt spot.

    ``gzip.GzipFile`` raises at a truncated stream and loses the data of the read that hit it; a trace whose
    writer was killed mid-file is common, and its whole events should still count.  Output is produced at
    most ``n`` bytes per read (``max_length``), so a gzip bomb is never inflated past what was asked for.

    What follows a member's end is read as its ``unused_data`` alone: CPython leaves it in ``unconsumed_tail`` as well
    (with ``max_length``), and fed back from there, NUL padding after the last member (which gzip(1) accepts) grew
    ``unused_data`` for ever -- the reader hung on such a file (h37-speed64).  A file cut off hands out all its
    text: zlib may hold text back at ``max_length`` after taking the last compressed byte (up to a match, 258 bytes),
    which it gives once asked again with no input -- before, the read said the file ended and lost it."""

    def __init__(self, raw: "Prefixed"):
        self._raw = raw
        self._d = zlib.decompressobj(wbits=31)
        self._pending = b""
        self._made = memoryview(b"")  # text decompressed before this reader took the stream over (:meth:`resumed`)
        self.done = False

    @classmethod
    def resumed(cls, d, made: bytes, rest: IO[bytes]) -> "Gunzip":  # noqa: ANN001 - a zlib decompressobj
        """The reader of a gzip stream whose first compressed bytes ``d`` (a ``zlib.decompressobj(wbits=31)``) already
        decompressed into ``made``, ``rest`` the compressed bytes after them: ``made`` handed out first, then the
        stream read on as :meth:`read` reads it (a further member, ``d``'s unconsumed input).  Why: a reader that
        decompressed a file's first MB to judge its trailer (``kineto.parse._declared_size``) decompressed it twice,
        the whole of a file under a MB (~0.9 s of CPU over the kept captures' 93 Kineto files)."""
        g = cls(Prefixed(b"", rest))
        g._d, g._made = d, memoryview(made)
        if d.eof:  # what follows its first member, as read() goes on after one
            g._pending = d.unused_data
        return g

    def read(self, n: int) -> bytes:
        if self._made:
            out = bytes(self._made[:n])
            self._made = self._made[n:] if len(self._made) > n else memoryview(b"")  # the text freed once handed out
            return out
        while not self.done:
            if not self._pending:
                self._pending = (b"" if self._d.eof else self._d.unconsumed_tail) or self._raw.read(_READ_BLOCK)
                if not self._pending:
                    if not self._d.eof:
                        out = self._d.decompress(b"", n)  # text zlib held back at ``n`` once it took the last input
                        if out:
                            return out
                        raise EOFError("compressed file ended before the end-of-stream marker was reached")
                    self.done = True
                    break
            data, self._pending = self._pending, b""
            if self._d.eof:  # between members: NUL padding skipped, as gzip(1) and Python's gzip skip it
                data = data.lstrip(b"\x00")
                if not data:
                    continue
                self._d = zlib.decompressobj(wbits=31)  # another member follows (or garbage: zlib.error)
            out = self._d.decompress(data, n)
            if self._d.eof:
                self._pending = self._d.unused_data
            if out:
                return out
        return b""


def gunzip_upto(raw: IO[bytes], n: int) -> tuple[bytes, bool]:
    """At most ``n`` bytes of the gzip file ``raw`` decompressed (every member, through :class:`Gunzip`: a gzip bomb
    is never inflated past ``n``), and whether its stream was cut off or corrupt before its end (what came before
    is kept).  Why here: the one home of reading gzip files, every format's (a Kineto trace, a memory snapshot people
    gzip for upload: ``snapshot.pickle.gz``)."""
    g = Gunzip(Prefixed(b"", raw))
    out = io.BytesIO()  # its getvalue() hands over its buffer: the text is held once, not twice as joined parts
    try:
        while out.tell() < n:
            part = g.read(min(n - out.tell(), 64 * _READ_BLOCK))
            if not part:
                break
            out.write(part)
    except (EOFError, zlib.error):
        return out.getvalue(), True
    return out.getvalue(), False


def gunzip_reader(raw: IO[bytes]) -> Callable[[int], bytes]:
    """``read(n)`` over the gzip file ``raw`` decompressed (every member, through :class:`Gunzip`), at most ``n``
    bytes a call, ``b""`` at its end; ``EOFError`` / ``zlib.error`` where it is cut off or corrupt.  For a reader that
    streams a large file rather than hold it (the memory snapshot reader)."""
    return Gunzip(Prefixed(b"", raw)).read


class Prefixed:
    """A stream whose first bytes were already read (the magic sniff works on non-seekable remote streams)."""

    def __init__(self, head: bytes, rest: IO[bytes]):
        self._head, self._rest = head, rest
        #: ``readinto`` where the rest has one (:meth:`_Parser._fill_into`), else None
        self.readinto = self._readinto if callable(getattr(rest, "readinto", None)) else None

    def _readinto(self, b: memoryview) -> int:
        """Bytes read into ``b`` (the sniffed head first, alone: a short read, as a file may give)."""
        if self._head:
            n = min(len(b), len(self._head))
            b[:n], self._head = self._head[:n], self._head[n:]
            return n
        return self._rest.readinto(b) or 0

    def read(self, n: int = -1) -> bytes:
        if not self._head:
            return self._rest.read(n)
        if n is None or n < 0:
            data, self._head = self._head + self._rest.read(), b""
            return data
        data, self._head = self._head[:n], self._head[n:]
        return data + (self._rest.read(n - len(data)) if len(data) < n else b"")
