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
    most ``n`` bytes per read (``max_length``), so a gzip bomb is never inflated past what was asked for."""

    def __init__(self, raw: "Prefixed"):
        self._raw = raw
        self._d = zlib.decompressobj(wbits=31)
        self._pending = b""
        self.done = False

    def read(self, n: int) -> bytes:
        while not self.done:
            if not self._pending:
                self._pending = self._d.unconsumed_tail or self._raw.read(_READ_BLOCK)
                if not self._pending:
                    if not self._d.eof:
                        raise EOFError("compressed file ended before the end-of-stream marker was reached")
                    self.done = True
                    break
            data, self._pending = self._pending, b""
            out = self._d.decompress(data, n)
            if self._d.eof and self._d.unused_data.strip(b"\x00"):  # another gzip member follows
                rest = self._d.unused_data
                self._d = zlib.decompressobj(wbits=31)
                self._pending = rest
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
