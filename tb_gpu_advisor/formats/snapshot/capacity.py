"""The GPU's capacity recorded beside a memory snapshot: ``<snapshot name>.capacity.json`` (``pytorch.CAPACITY_SUFFIX``),
``{"total_bytes": ..., "free_bytes": ...}`` from ``torch.cuda.mem_get_info()``, as the Advisor's own fix for a snapshot
of unknown capacity tells users to write it (``pytorch.RECORD_CAPACITY``).

Why: a snapshot records the allocator, never the GPU's size, so its peak could only be judged against itself.  The file
is the user's and may be anything: it is read only as the snapshot is (below the logdir, never through a link out of
it: a :class:`~tb_gpu_advisor.common.fsio.Listed` sibling; a plain local path's sibling in its own folder, following
no link), at most :data:`MAX_FILE_BYTES`, and taken only when its numbers are a GPU's.  Anything else is left out with
a note in the trace's problems, never an error of the host.  Optional ``"device"``: the GPU index the numbers are of
(``torch.cuda.mem_get_info(device)``); without it they are each GPU's of the snapshot (the devices of one process
are alike on nearly every machine).  A list of such objects is one record per GPU (``mem_get_info(i)`` for each GPU
``i`` of the machine): each names its ``"device"``, once; the reader takes the entries of the snapshot's GPUs.  One
malformed entry leaves the whole record out, with the entry's number in the note (no GPU's capacity is taken from a
record that is wrong elsewhere).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.devices.peaks import MAX_DEVICE_BYTES
from tb_gpu_advisor.formats.snapshot.layout import capacity_name
from tb_gpu_advisor.frameworks.pytorch import CAPACITY_FREE, CAPACITY_TOTAL

#: ``json.dump`` of two numbers is ~60 bytes; a bigger file is no such record and is not read past this.
MAX_FILE_BYTES = 64 << 10
_DEVICE = "device"


@dataclass(frozen=True)
class Capacity:
    """A capacity file's numbers: the device's total and free bytes, and which GPU (None: each of the snapshot's)."""

    total_bytes: int
    free_bytes: int
    device: int | None = None
    name: str = ""


def read_capacity(path: str) -> tuple[Capacity, ...] | str | None:
    """The capacity file beside the snapshot at ``path``: its records (one, or one per GPU), None where there is none,
    else why it was left out, in words (never raises for what the file holds or how it is reached)."""
    beside = _beside(path)
    name = capacity_name(fsio.file_name(path))
    try:
        data = _read(beside)
    except FileNotFoundError:
        return None
    except Exception as e:  # noqa: BLE001 - a link out of the logdir, a FIFO, a store's error: left out, said so
        if fsio.is_remote(path):  # a store says "no such key" in its own words: no file is the common case, unsaid
            return None
        return f"{name} beside the snapshot was not read ({e})"
    if data is None:
        return None
    if len(data) > MAX_FILE_BYTES:
        return f"{name} is over {MAX_FILE_BYTES // 1024} KiB: no mem_get_info record, left out"
    got = parse(data)
    return tuple(Capacity(*g, name=name) for g in got) if isinstance(got, list) else f"{name} left out: {got}"


def parse(data: bytes) -> list[tuple[int, int, int | None]] | str:
    """``(total, free, device)`` of each record of a capacity file's bytes (an object: one; a list: one per GPU), else
    what is wrong with them, in words."""
    try:
        doc = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        return f"not JSON ({str(e)[:120]})"
    if isinstance(doc, dict):
        one = _entry(doc)
        return [one] if isinstance(one, tuple) else one
    if not isinstance(doc, list) or not doc:
        return (f'not a JSON object with "{CAPACITY_TOTAL}" and "{CAPACITY_FREE}", nor a list of them (one per '
                f'GPU, each with its "{_DEVICE}")')
    out: list[tuple[int, int, int | None]] = []
    for i, e in enumerate(doc, 1):
        got = _entry(e) if isinstance(e, dict) else f'not a JSON object with "{CAPACITY_TOTAL}" and "{CAPACITY_FREE}"'
        if isinstance(got, tuple) and got[2] is None and len(doc) > 1:
            got = f'no "{_DEVICE}": in a list of records each names the GPU its numbers are of'
        if isinstance(got, tuple) and any(o[2] == got[2] for o in out):
            got = f'GPU {got[2]} has a record already (entry {next(j for j, o in enumerate(out, 1) if o[2] == got[2])})'
        if isinstance(got, str):
            return f"entry {i} of {len(doc)}: {got}"
        out.append(got)
    return out


def _entry(doc: dict) -> tuple[int, int, int | None] | str:
    """``(total, free, device)`` of one record (one GPU's ``mem_get_info``), else what is wrong with it, in words."""
    total, free, device = doc.get(CAPACITY_TOTAL), doc.get(CAPACITY_FREE), doc.get(_DEVICE)
    if not _whole(total) or not _whole(free):
        return f'"{CAPACITY_TOTAL}" and "{CAPACITY_FREE}" must be whole numbers of bytes (torch.cuda.mem_get_info())'
    if not 0 < total <= MAX_DEVICE_BYTES:
        return f'"{CAPACITY_TOTAL}" {total:,} is no GPU\'s memory (0 < total <= {MAX_DEVICE_BYTES >> 40} TiB)'
    if not 0 <= free <= total:
        return f'"{CAPACITY_FREE}" {free:,} is not between 0 and the total {total:,}'
    if device is not None and (not _whole(device) or device < 0):
        return f'"{_DEVICE}" must be a GPU index (a whole number from 0)'
    return total, free, device


def _whole(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is no number of bytes")


def _beside(path: str) -> str:
    """The capacity file's path, reached as the snapshot is (``fsio.sibling``: a listed sibling below the same logdir;
    a plain local path's sibling in its own folder, following no link; an object store's object beside it)."""
    return fsio.sibling(path, capacity_name(fsio.file_name(path)))


def _read(path: str) -> bytes | None:
    """At most :data:`MAX_FILE_BYTES` and one byte of the file (None for a folder of that name: no record)."""
    if fsio.is_remote(path):
        return fsio.read_head(path, MAX_FILE_BYTES + 1)
    try:
        with fsio.open_binary(path) as f:
            return f.read(MAX_FILE_BYTES + 1)
    except IsADirectoryError:
        return None
