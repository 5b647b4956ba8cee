"""Does a capture have GPU activity?  A cheap look at plane headers, for ``/runs``.

The Advisor tab opens on the newest session *with GPU activity*, not on a
CPU-only capture that happens to be newer.  Deciding that from a full
analysis would mean analysing every session, so this module reads only the
XSpace's plane headers: an XSpace is ``repeated XPlane planes = 1`` (plus a
few short string fields), and each XPlane is written as ``id`` (1), ``name``
(2), ``lines`` (3) and its metadata maps (4, 5; writers differ in the order
of these).  For each top-level field, and for each field of a plane, we read
the tag and the length and seek past the payload; only a plane's name is
read.  So a file costs a few buffered reads per plane field (lines and
metadata entries), never its events; no numpy, no protobuf import.

A session "has GPU activity" when a ``/device:GPU:<n>`` plane with at least
one line is found in one of its host files (the same planes
``Timeline.gpu_planes`` reads).  Answers are ``True``, ``False``, or ``None``
for unknown: remote files (reading them means downloading them), unreadable
or oddly laid out files, and anything left once the time budget of one
request is spent -- the listing is probed newest session first, so the
sessions the tab chooses between are the ones answered first.  Results are
cached by the file's identity (path, size, mtime), so the page's later
``/runs`` requests cost nothing.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any, BinaryIO, Iterable

from tb_gpu_advisor.common import fsio

#: A plane name longer than this is not a GPU's.
MAX_NAME_BYTES = 256
#: Fields walked per plane at most (its lines and metadata entries; each is a tag, a length and a seek).
MAX_PLANE_FIELDS = 200_000
#: Time one ``/runs`` request may spend probing files not seen before (seconds).
DEFAULT_BUDGET_S = 0.3
#: At most this many planes are looked at per file (real captures have a handful to a few dozen).
MAX_PLANES = 4096
_CACHE_MAX = 20_000
_GPU_PLANE = re.compile(rb"^/device:GPU:\d+$")
_SPACE_PLANES, _PLANE_NAME, _PLANE_LINES = 1, 2, 3

_cache: dict[tuple, bool | None] = {}
_cache_lock = threading.Lock()


class _Malformed(Exception):
    pass


def _varint(read) -> int | None:
    """A varint from ``read(1)``; None at a clean end of file."""
    value = shift = 0
    while True:
        b = read(1)
        if not b:
            if shift == 0:
                return None
            raise _Malformed("truncated varint")
        value |= (b[0] & 0x7F) << shift
        if b[0] < 0x80:
            return value
        shift += 7
        if shift > 63:
            raise _Malformed("varint too long")


def _len_fields(f: BinaryIO, end: int, max_fields: int):
    """(field number, length) of each length-delimited field from ``f``'s position up to ``end``, payload unread.

    Varint and fixed-size fields are skipped.  The caller reads or seeks past each payload before asking for the
    next field.  Raises :class:`_Malformed` on another wire type, a field past ``end`` or more than ``max_fields``.
    """
    fields = 0
    while f.tell() < end:
        fields += 1
        if fields > max_fields:
            raise _Malformed("too many fields")
        tag = _varint(f.read)
        if tag is None:
            return
        number, wt = tag >> 3, tag & 7
        if wt == 0:
            _varint(f.read)
            continue
        if wt in (1, 5):
            f.seek(8 if wt == 1 else 4, 1)
            continue
        if wt != 2:
            raise _Malformed(f"wire type {wt}")
        n = _varint(f.read)
        if n is None or f.tell() + n > end:
            raise _Malformed("field runs past its message")
        yield number, n


def _plane_is_active_gpu(f: BinaryIO, end: int) -> bool:
    """Reads one XPlane's fields from ``f`` (positioned at its start) up to ``end``, skipping payloads.

    True when it is named ``/device:GPU:<n>`` and has a ``lines`` field.
    Stops at the first answer: a name that is not a GPU's, or a GPU's name and a line.
    """
    name, has_lines = None, False
    for number, n in _len_fields(f, end, MAX_PLANE_FIELDS):
        if number == _PLANE_NAME:
            if n > MAX_NAME_BYTES:
                return False
            name = f.read(n)
            if not _GPU_PLANE.match(name):
                return False
        else:
            has_lines = has_lines or number == _PLANE_LINES
            f.seek(n, 1)
        if name is not None and has_lines:
            return True
    return False


def stream_has_gpu_activity(f: BinaryIO, size: int) -> bool:
    """True when the XSpace in ``f`` has a ``/device:GPU:N`` plane with lines (see the module doc)."""
    planes = 0
    for number, length in _len_fields(f, size, 1 << 62):
        start = f.tell()
        if number == _SPACE_PLANES:
            planes += 1
            if planes > MAX_PLANES:
                raise _Malformed("too many planes")
            if _plane_is_active_gpu(f, start + length):
                return True
        f.seek(start + length)
    return False


#: How much of a PyTorch trace is searched for a GPU event before answering "unknown".
KINETO_PROBE_BYTES = 64 << 20
_KINETO_GPU = (b'"cat": "kernel"', b'"cat":"kernel"', b'"cat": "gpu_memcpy"', b'"cat":"gpu_memcpy"')


def kineto_has_gpu_activity(path: str) -> bool | None:
    """For one local PyTorch trace (plain or gzip): True when a kernel or copy event appears in its first
    :data:`KINETO_PROBE_BYTES`; False when the whole (smaller) file has none; None when it cannot be told."""
    import gzip

    try:
        with open(fsio.local_path(path), "rb") as raw:
            gz = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            f = gzip.GzipFile(fileobj=raw) if gz else raw
            data = f.read(KINETO_PROBE_BYTES + 1)
    except (OSError, EOFError, ValueError):
        return None
    if any(m in data for m in _KINETO_GPU):
        return True
    return False if len(data) <= KINETO_PROBE_BYTES else None


def file_has_gpu_activity(path: str, fmt: str = "xplane") -> bool | None:
    """For one local host file: True/False, or None when it cannot be told cheaply."""
    if fsio.is_remote(path):
        return None
    if fmt == "kineto":
        return kineto_has_gpu_activity(path)
    try:
        with open(fsio.local_path(path), "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(0)
            return stream_has_gpu_activity(f, size)
    except (OSError, _Malformed, ValueError):
        return None


def session_activity(sessions: Iterable[Any], budget_s: float = DEFAULT_BUDGET_S,
                     clock=time.monotonic) -> dict[tuple[str, str], bool | None]:
    """(run, session) -> True (a host has GPU activity), False (none has), None (unknown).

    ``sessions`` are ``discovery.Session``.  Newest sessions are probed
    first; files not cached are probed only while ``budget_s`` lasts.
    """
    ordered = sorted(sessions, key=lambda s: max((h.mtime_ns for h in s.hosts), default=0), reverse=True)
    deadline = clock() + budget_s
    out: dict[tuple[str, str], bool | None] = {}
    for s in ordered:
        answers = []
        for h in s.hosts:
            key = (h.path, h.size, h.mtime_ns)
            with _cache_lock:
                known = key in _cache
                answer = _cache.get(key)
            if not known:
                if clock() > deadline:
                    answers.append(None)
                    continue
                answer = file_has_gpu_activity(h.path, getattr(h, "format", "xplane"))
                with _cache_lock:
                    if len(_cache) >= _CACHE_MAX:
                        _cache.clear()
                    _cache[key] = answer
            answers.append(answer)
            if answer:
                break
        out[(s.run, s.session)] = True if any(answers) else (False if answers and all(a is False for a in answers) else None)
    return out
