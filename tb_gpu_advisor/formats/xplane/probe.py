"""Does an XPlane file have GPU activity?  A cheap look at plane headers (``formats.probe``).

This module reads only the XSpace's plane headers: an XSpace is ``repeated XPlane planes = 1`` (plus a
few short string fields), and each XPlane is written as ``id`` (1), ``name``
(2), ``lines`` (3) and its metadata maps (4, 5; writers differ in the order
of these).  For each top-level field, and for each field of a plane, we read
the tag and the length and seek past the payload; only a plane's name is
read.  So a file costs a few buffered reads per plane field (lines and
metadata entries), never its events; no numpy, no protobuf import.

A file "has GPU activity" when a ``/device:GPU:<n>`` plane with at least
one line is found (the same planes ``Timeline.gpu_planes`` reads).
"""

from __future__ import annotations

import re
from typing import BinaryIO

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.xplane.layout import viewer_json_host

#: A plane name longer than this is not a GPU's.
MAX_NAME_BYTES = 256
#: Fields walked per plane at most (its lines and metadata entries; each is a tag, a length and a seek).
MAX_PLANE_FIELDS = 200_000
#: At most this many planes are looked at per file (real captures have a handful to a few dozen).
MAX_PLANES = 4096
_GPU_PLANE = re.compile(rb"^/device:GPU:\d+$")
_SPACE_PLANES, _PLANE_NAME, _PLANE_LINES = 1, 2, 3


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


def has_gpu_activity(path: str) -> bool | None:
    """For one local XPlane file: True/False, or None when it cannot be told cheaply (unreadable, oddly laid out; a
    trace viewer JSON, whose planes are known only once it is parsed whole)."""
    if viewer_json_host(path.rstrip("/").rsplit("/", 1)[-1]) is not None:
        return None
    try:
        with fsio.open_binary(path) as f:  # a listed file: only below its logdir, only as listed
            f.seek(0, 2)
            size = f.tell()
            f.seek(0)
            return stream_has_gpu_activity(f, size)
    except (OSError, _Malformed, ValueError):
        return None
