"""A PyTorch memory snapshot (``torch.cuda.memory._dump_snapshot``) -> the neutral trace model.

The file is read with :mod:`.unpickle` (plain data only; a pickle that asks for anything else is refused unread).
What becomes of it:

* per GPU, :class:`~tb_gpu_advisor.model.trace.MemoryEvents` from its ``device_traces`` entry (the history
  ``_record_memory_history`` kept): ``alloc`` adds a block, ``free_completed`` (``free`` in PyTorch 2.0) removes it,
  ``segment_alloc`` / ``segment_map`` add reserved bytes, ``segment_free`` / ``segment_unmap`` remove them.  The
  totals are absolute: at the dump they are the segments' sizes and the active blocks' (``segments``), and each
  event's are those minus what came after it.
* :class:`~tb_gpu_advisor.model.trace.MemorySnapshot`: per GPU the state at the dump, its largest live blocks with
  their stack frames, every ``oom`` entry with what was live at that moment, and the allocator's settings.

A snapshot holds no kernel and no host event: its trace has a GPU table per device (empty) and no host events, and
the pipeline's memory metrics and rules read it (the step checks have nothing to say).  The walk over the data is
bounded by the file's size (:data:`WORK_PER_BYTE` entries, blocks and frames looked at per byte, at least
:data:`MIN_WORK`; :data:`MAX_FRAMES` frames an allocation; :data:`MAX_GPUS` devices): memo references make a small
file describe a huge tree, and a real snapshot spends several bytes on every frame it holds.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import io
import json
import os
import re
import tempfile
import zlib
from array import array
from collections.abc import Callable
from typing import Any

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.base import is_gzip, max_profile_bytes
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.formats.snapshot.capacity import Capacity, capacity_name, read_capacity
from tb_gpu_advisor.formats.snapshot.unpickle import PickleLimit, UnsafePickle, load, loads
from tb_gpu_advisor.formats.snapshot.layout import (PageError, PageStream, embedded_snapshot, is_drawn_page,
                                                    is_json_snapshot, is_page, is_zip, page_stream,
                                                    torch_save_member)
from tb_gpu_advisor.formats.snapshot.layout import host_name as layout_host_name
from tb_gpu_advisor.model.damage import Damage, contradiction, cut, unreadable
from tb_gpu_advisor.model.trace import (HOLDERS, MEMORY_PHASES, DeviceEvents, DeviceInfo, HostEvents, LiveStack,
                                       AllocRetry, MemoryEvents, MemorySnapshot, OutOfMemory,
                                       SnapshotBlock, Trace, pair_frees, rounded_blocks)

#: Entries, blocks and frames looked at per byte of the file (at least MIN_WORK); past it the rest is left out and
#: said so.  A real snapshot spends ~100 bytes on a block or an entry with its ~24 frames (memo references).
WORK_PER_BYTE = 1
MIN_WORK = 200_000
#: The longest history read: its times become picoseconds from its first event in int64 (106 days).
MAX_SPAN_US = (1 << 63) // 1_000_000
#: Devices read (a process sees a handful).
MAX_GPUS = 64
#: Stack frames kept per allocation (innermost first): enough to name the user's line.
MAX_FRAMES = 24
#: Raw frames looked at per allocation to find its Python ones: ``_record_memory_history(stacks="all")`` (the
#: default) puts ~30 C++ frames of the allocator and the dispatcher before the first Python one.
MAX_SCAN = 160
#: Live allocations kept per GPU at the dump, and per OOM at its moment.
TOP_BLOCKS = 20
#: Distinct allocating stacks of the live blocks kept per GPU (``MemorySnapshot.stacks``), those holding most bytes: a
#: job's state is a few large buffers (weights, KV cache, optimizer moments) from a few stacks.
MAX_STACKS = 64
#: Distinct ``external_annotations`` names kept (``Trace.producer["annotations"]``): the job's kind is in the first.
MAX_ANNOTATIONS = 256
#: OOMs read per GPU (the first ones: a job stops at its first, or retries a few times).
MAX_OOMS = 8
TIME_BASE = "the snapshot's first recorded allocator event (time_us)"
_ALLOC = ("alloc",)
_FREE = ("free_completed", "free")  # "free": PyTorch 2.0's single free action
_SEG_ADD = ("segment_alloc", "segment_map")
_SEG_DROP = ("segment_free", "segment_unmap")


#: An empty snapshot (no segment, no history): the allocator held no GPU memory when it was dumped and recorded none
#: before -- nothing to analyse, never "healthy" (angelolmn/HitsBE ``my_snapshot.pickle``, 465 bytes).
EMPTY = ("an empty memory snapshot: no segment and no recorded allocation -- the process held no GPU memory when it "
         "was dumped (no CUDA tensor made yet, or the work ran on another device or the CPU) and "
         "`torch.cuda.memory._record_memory_history()` recorded nothing; dump it after the GPU work, in the process "
         "that ran it")


class SnapshotReadError(ValueError):
    """The file is no memory snapshot we can read (or a pickle we refuse); the message says which file and why, and
    ``damage`` what its damage is where it is damaged (a cut gzip, a truncated pickle: ``model.damage``) -- None for a
    file refused whole (a hostile pickle, one over the limit) or of another kind."""

    def __init__(self, path: str, reason: str, damage: Damage | None = None):
        super().__init__(f"{path}: {reason}")
        self.path, self.reason, self.damage = path, reason, damage


#: The unpickler's words for a pickle that ends before its end (``unpickle`` and ``_cpickle.c`` say it alike:
#: "pickle truncated at byte N", "pickle truncated: a frame of ...", "pickle ends without STOP (truncated)").
_TRUNCATED = re.compile(r"truncated(?: at byte ([\d,]+)|: a frame of [\d,]+ bytes at byte ([\d,]+))?")


def pickle_damage(error: ValueError) -> Damage:
    """What a pickle the unpickler could not read is, as a damage record: a cut where it ended before its end (at the
    byte it names), else records that could not be read (a malformed opcode, a value of the wrong type).  Why read
    off the message: the compiled unpickler raises a plain ``ValueError`` in the words the Python one uses, and both
    are this package's own words (:data:`_TRUNCATED`)."""
    m = _TRUNCATED.search(str(error))
    if m is None:
        return unreadable("pickle_invalid", str(error))
    at = next((g for g in m.groups() if g), None)
    return cut("pickle_truncated", str(error), offset=int(at.replace(",", "")) if at else None)


class _OutOfRange(ValueError):
    """Byte counts whose totals no 64-bit allocator reaches (said as the file's error by :func:`to_trace`)."""


def read_trace(path: str, host: str | None = None, ranks: list[str] | None = None) -> Trace:
    """Read one snapshot pickle (plain or gzip) into a trace (``SnapshotReadError`` when it is none, or asks for more
    than data).  A pickle is read as a stream, never whole (:func:`.unpickle.load`: twice, in chunks; a gzip file is
    decompressed twice), so memory holds what is built and a window; so is a viewer page's base64
    (:func:`.layout.page_stream`); a remote file is first copied to a local temporary file in chunks
    (:func:`_local_copy`), fetched once.  A page of another shape (its base64 past its first MiB, PyTorch 2.0's drawn
    page) is read whole."""
    with _local_copy(path) as local:
        trace = _read_local(path, local, host or host_name(path))
    return with_capacity(trace, read_capacity(path))


def with_capacity(trace: Trace, caps: "tuple[Capacity, ...] | str | None") -> Trace:
    """``trace`` with the GPU's memory from the capacity file beside the snapshot (:mod:`.capacity`: one record, or one
    per GPU), where it can be that GPU's: a total under what the GPU already reserved (its segments at the dump or any
    moment of its history) is another GPU's record -- no part exceeds its whole -- and is left out with a note, as an
    unreadable file is.  A list's records of GPUs the snapshot does not hold are the machine's other GPUs, unsaid;
    a list none of whose GPUs the snapshot holds is said, as a lone record naming another GPU is."""
    if caps is None:
        return trace
    if isinstance(caps, str):
        # the record beside the snapshot left out whole, the snapshot read to its end: nothing lies past it (no cut)
        trace.problems.append(unreadable("capacity_file", caps, file=capacity_name(fsio.file_name(trace.path))))
        return trace
    held = {d.gpu for d in trace.devices}
    for cap in caps:
        for d in trace.devices:
            if cap.device is not None and d.gpu != cap.device:
                continue
            reserved = _peak_reserved(trace, d.gpu)
            if reserved > cap.total_bytes:
                trace.problems.append(contradiction(
                    "capacity_below_reserved", f"{cap.name} left out for GPU {d.gpu}: its total {cap.total_bytes / 2**30:,.2f} "
                    f"GiB is less than the {reserved / 2**30:,.2f} GiB the GPU's allocator reserved, "
                    "so it is another GPU's (or another process's) record"))
                continue
            d.info = dataclasses.replace(d.info, memory_bytes=cap.total_bytes)
            _outside(trace, d.gpu, cap)
    named = [c.device for c in caps if c.device is not None]
    if named and len(named) == len(caps) and not held & set(named):
        said = (f"GPU {named[0]}, which the snapshot does not hold" if len(named) == 1 else
                f"{_gpus(named)}, none of which the snapshot holds" + (f" (it holds {_gpus(sorted(held))})" if held else ""))
        trace.problems.append(contradiction("capacity_other_gpu", f"{caps[0].name} left out: it names {said}"))
    return trace


def with_job_capacity(trace: Trace, totals: "tuple[tuple[int, int], ...]", source: str) -> Trace:
    """``trace`` with each GPU's total memory as a linked capture of the same job lists it: ``totals`` (ordinal, total
    bytes), handed as numbers by the stage that linked the two (``HostFile.gpu_totals``, ``discover._same_job``: a
    Kineto trace's ``deviceProperties``, every GPU the process saw by the ordinal the allocator numbers it by), read
    from ``source`` (in words).  Why: a snapshot records the allocator, never the GPU's size, so its peak and OOM could
    only be judged against themselves; the trace of the same job on the same device states it.  Taken only for a GPU
    the capacity file beside the snapshot did not give, and through :func:`with_capacity`'s check (no total under what
    the allocator reserved).  No free bytes: what lay outside the allocator is not known from a trace."""
    caps = tuple(Capacity(total, -1, gid, source) for gid, total in totals
                 if any(d.gpu == gid and not d.info.memory_bytes for d in trace.devices))
    return with_capacity(trace, caps) if caps else trace


def _gpus(ids: list[int]) -> str:
    """"GPU 0" or "GPUs 0, 1": the count word fits the ids listed (h37-review36: "it holds GPU 0, 1")."""
    return f"GPU{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))}"


def _outside(trace: Trace, gpu: int, cap: "Capacity") -> None:
    """The GPU's bytes in use outside the caching allocator when the record was taken (``MemorySnapshot.outside``):
    ``mem_get_info``'s total less its free less what the allocator reserved at the dump -- the fix's snippet takes the
    record just before the dump, with no allocation between.  Where free and reserved together exceed the total, the
    record was taken at another moment (the allocator reserved more since): what lies outside is not known from it,
    and nothing is said of it but a note."""
    snap = trace.snapshot
    if cap.free_bytes < 0:
        return  # a trace's deviceProperties: the total alone, no free bytes at any moment
    if snap is None or gpu not in snap.state or (cap.device is None and len(snap.state) > 1):
        return  # the free bytes are one GPU's (``mem_get_info()`` of the current device): unnamed, not this one's
    outside = cap.total_bytes - cap.free_bytes - snap.state[gpu][0]
    if outside >= 0:
        snap.outside[gpu] = outside
    else:
        trace.notes.append(f"{cap.name}: its free bytes and the {snap.state[gpu][0] / 2**30:,.2f} GiB the allocator "
                           f"of GPU {gpu} reserved at the dump exceed its total by {-outside / 2**30:,.2f} GiB: it was "
                           "taken at another moment than the dump, so what other use held of the GPU is not known")


def _peak_reserved(trace: Trace, gpu: int) -> int:
    """The most bytes the GPU's allocator reserved that the snapshot shows (its history's peak, its dump's segments)."""
    seen = [trace.snapshot.state[gpu][0]] if trace.snapshot is not None and gpu in trace.snapshot.state else []
    me = trace.memory.get(gpu)
    if me is not None and len(me.reserved):
        seen.append(int(me.reserved.max()))
    if me is not None and len(me.allocated):
        seen.append(int(me.allocated.max()))
    return max(seen, default=0)


def _read_local(path: str, local: str, host: str) -> Trace:
    """:func:`read_trace` of ``path``'s bytes at ``local`` (``path`` itself where it is a local file)."""
    kind = _kind(path, local)
    if kind == "json":
        return _read_json(path, local, host)
    if kind != "whole":
        opened = (lambda: _Pass(path, local)) if kind == "pickle" else (lambda: _page_pass(path, local))
        try:
            cols = _Compactor()
            doc, size = load(opened, compact=cols)
        except SnapshotReadError:  # the file itself refused (its size, a cut gzip), as _read_bytes says it
            raise
        except PageError as e:  # the page holds no readable snapshot: the words its whole read says
            raise SnapshotReadError(path, str(e)) from None
        except UnsafePickle as e:
            raise SnapshotReadError(path, f"refused: {e} (the file was not run)") from e
        except PickleLimit as e:
            raise SnapshotReadError(path, f"refused: {e}; no memory snapshot asks for that (the file was not "
                                          "run)") from e
        except ValueError as e:
            raise SnapshotReadError(path, f"not a readable pickle: {e}", pickle_damage(e)) from e
        try:
            return to_trace(doc, host, path, size, work=max(MIN_WORK, WORK_PER_BYTE * size), cols=cols)
        finally:
            cols.release()
    data = _read_bytes(path, local)
    if is_page(data):  # PyTorch's memory viewer page: the snapshot is the pickle it embeds
        if is_drawn_page(data):  # PyTorch 2.0's: no snapshot, the history as the viewer drew it
            from tb_gpu_advisor.formats.snapshot.drawn import read_drawn  # it reads with this module's helpers

            return read_drawn(data, path, host)
        data = embedded_snapshot(data)
        if isinstance(data, str):
            raise SnapshotReadError(path, data)
    size = len(data)
    try:
        cols = _Compactor()
        doc = loads(data, compact=cols)
    except UnsafePickle as e:
        raise SnapshotReadError(path, f"refused: {e} (the file was not run)") from e
    except PickleLimit as e:
        raise SnapshotReadError(path, f"refused: {e}; no memory snapshot asks for that (the file was not run)") from e
    except ValueError as e:
        raise SnapshotReadError(path, f"not a readable pickle: {e}", pickle_damage(e)) from e
    del data  # the file's bytes are read: the walk below no longer holds them beside the tree (a peak of 2.2x the file,
    # not 2.7x: docs/robustness.md)
    try:
        return to_trace(doc, host, path, size, work=max(MIN_WORK, WORK_PER_BYTE * size), cols=cols)
    finally:
        cols.release()


#: The most bytes of a snapshot saved as JSON read: its text is parsed whole into Python's objects (~10 times its
#: bytes), where a pickle is streamed and its history compacted as it comes
JSON_MAX_BYTES = 256 * 2**20


def _read_json(path: str, local: str, host: str) -> Trace:
    """A snapshot saved as JSON text (``json.dump(torch.cuda.memory._snapshot(), f)``: the same dict, its frames
    records; ``layout.is_json_snapshot``), read whole.  Why: scripts that read a snapshot themselves save it so
    (PyTorch's own tests dump it with ``json.dumps``), and it was refused as "JSON without traceEvents: not a
    trace".  Past :data:`JSON_MAX_BYTES` it is refused in words that say how to save it as a pickle, read as a
    stream: a 1 GB history parsed whole holds ten times that."""
    data = _read_bytes(path, local)
    if len(data) > JSON_MAX_BYTES:
        raise SnapshotReadError(path, f"a memory snapshot saved as JSON, {len(data):,} bytes: over the "
                                      f"{JSON_MAX_BYTES:,} bytes read as JSON, which is parsed whole; save it with "
                                      "torch.cuda.memory._dump_snapshot(path) (a pickle, read as a stream)")
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as e:
        raise SnapshotReadError(path, f"a memory snapshot's JSON that does not parse: {e}") from None
    size = len(data)
    del data
    return to_trace(doc, host, path, size, work=max(MIN_WORK, WORK_PER_BYTE * size))


@contextlib.contextmanager
def _local_copy(path: str):
    """A local path to ``path``'s bytes: itself where it is local, else a temporary file its bytes are copied to in
    1 MiB parts (no more than the size limit and one byte: past it :class:`_Pass` refuses it in its words), removed
    after.  Why: ``fsio.open_binary`` holds a remote file whole in memory (an S3 snapshot of 1 GB: 1 GB before the
    read began), and a stream of it would fetch it once a pass."""
    if isinstance(path, fsio.Listed) or not fsio.is_remote(path):
        yield path
        return
    fd, local = tempfile.mkstemp(prefix="tb_gpu_advisor_snapshot_")
    try:
        with os.fdopen(fd, "wb") as out, fsio.open_stream(path) as f:
            left = max_profile_bytes() + 1
            while left > 0:
                part = f.read(min(_COPY_BYTES, left))
                if not part:
                    break
                out.write(part)
                left -= len(part)
        yield local
    finally:
        os.remove(local)


#: Bytes of a remote file fetched at a time (:func:`_local_copy`).
_COPY_BYTES = 1 << 20


def _page_pass(path: str, local: str) -> "PageStream":
    """One pass over the pickle a viewer page embeds (:func:`_kind` found it streams)."""
    stream = page_stream(_Pass(path, local))
    if stream is None:  # the file changed since it was looked at
        raise SnapshotReadError(path, "the page changed while it was read")
    return stream


def host_name(path: str) -> str:
    return layout_host_name(os.path.basename(path))


#: The start of a file looked at to tell a viewer page from a pickle (read as a stream).
_HEAD_BYTES = 1 << 16


def _kind(path: str, local: str) -> str:
    """How the file is read: ``"pickle"`` (streamed: :func:`.unpickle.load`), ``"page"`` (a viewer page whose
    embedded pickle is streamed: :func:`.layout.page_stream`), or ``"whole"`` (:func:`_read_bytes`): another page
    (PyTorch 2.0's drawn page; one whose base64 lies past its first MiB, or that ends within it), or a start of
    nothing but blanks (an empty file; a page after more than :data:`_HEAD_BYTES` of them)."""
    p = _Pass(path, local)
    try:
        head = p.read(_HEAD_BYTES)
        if head.lstrip()[:1] == b"{":  # JSON text, maybe: a read may return less than asked; its keys come first
            parts = [head]
            while sum(map(len, parts)) < _HEAD_BYTES and (more := p.read(_HEAD_BYTES - sum(map(len, parts)))):
                parts.append(more)
            head = b"".join(parts)
    finally:
        p.close()
    if not head.strip():
        return "whole"
    if is_json_snapshot(head):
        return "json"
    if not is_page(head):
        return "pickle"
    stream = page_stream(_Pass(path, local))
    if stream is None:
        return "whole"
    stream.close()
    return "page"


class _Pass:
    """One pass over a snapshot file's bytes, decompressed where it is gzip, ``read(n)`` at most ``n`` at a time:
    refused (:class:`SnapshotReadError`) past the size limit, or where a gzip file is cut off, empty or corrupt, in
    the words of :func:`_read_bytes` and :func:`_gunzipped` -- as the bytes come, never holding them.  A
    ``torch.save`` archive (``layout.torch_save_head``) is read as the pickle it holds, its member streamed."""

    def __init__(self, path: str, local: str | None = None):
        from tb_gpu_advisor.formats.gz import gunzip_reader  # the one bounded gzip reader

        self.path, self.limit, self.got = path, max_profile_bytes(), 0
        self.f = fsio.open_binary(path if local is None else local)
        try:
            self.size = _stream_size(self.f)
            if self.size is not None and self.size > self.limit:
                raise SnapshotReadError(path, f"over the {self.limit:,}-byte limit (raise "
                                              "TB_GPU_ADVISOR_MAX_PROFILE_BYTES to read it)")
            self.head = self.f.read(4)
            self.gz, self.member = is_gzip(self.head), None
            if self.gz:
                self.f.seek(0)
                self.head, self._gunzip = b"", gunzip_reader(self.f)
            elif is_zip(self.head):
                self.f.seek(0)
                self.head, self.member = b"", _torch_save_pickle(path, self.f)
        except BaseException:
            self.f.close()
            raise

    def read(self, n: int) -> bytes:
        if self.head:
            part, self.head = self.head[:n], self.head[n:]
        elif self.member is not None:
            part = _member_read(self.path, self.member, n, self.got)
        elif not self.gz:
            part = self.f.read(n)
        else:
            try:
                part = self._gunzip(n)
            except (EOFError, zlib.error):
                why = f"a gzip file cut off or corrupt after {self.got:,} bytes of its snapshot"
                raise SnapshotReadError(self.path, f"{why}: copy the whole file again (`gzip -t` tells)",
                                        cut("gzip_cut", why, offset=self.got)) from None
            if not part and not self.got:
                raise SnapshotReadError(self.path, "a gzip file with nothing in it")
        self.got += len(part)
        if self.got > self.limit:
            if self.gz:
                raise SnapshotReadError(self.path, f"a gzip file of {self.size or 0:,} bytes that decompresses past "
                                                   f"the {self.limit:,}-byte limit: refused, not inflated (a gzip "
                                                   "bomb, or a snapshot larger than the limit: raise "
                                                   "TB_GPU_ADVISOR_MAX_PROFILE_BYTES to read it)")
            raise SnapshotReadError(self.path, f"over the {self.limit:,}-byte limit (raise "
                                               "TB_GPU_ADVISOR_MAX_PROFILE_BYTES to read it)")
        return part

    def close(self) -> None:
        if self.member is not None:
            self.member.close()
        self.f.close()


def _torch_save_pickle(path: str, f: Any) -> Any:
    """The open member of a ``torch.save`` archive that holds its pickle (``<archive>/data.pkl``), read as a stream;
    :class:`SnapshotReadError` where the zip is cut off or holds none.  Why here: the archive is how the file is
    stored, as gzip is -- what it holds is read by the one pickle reader (both unpicklers alike)."""
    import zipfile

    try:
        zf = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        why = f"a zip archive (torch.save's) cut off or corrupt: {e}"
        raise SnapshotReadError(path, f"{why}: copy the whole file again (`unzip -t` tells)",
                                cut("zip_cut", why)) from None
    names = [i for i in zf.infolist() if torch_save_member(i.filename)]
    if not names:
        raise SnapshotReadError(path, "a zip archive holding no torch.save pickle (`<archive>/data.pkl`): give the "
                                      "snapshot itself (`torch.cuda.memory._dump_snapshot`'s pickle)")
    return zf.open(names[0])


def _member_read(path: str, member: Any, n: int, got: int) -> bytes:
    """``n`` bytes more of a ``torch.save`` archive's pickle; a member whose bytes do not match its record (a CRC, a
    bad deflate stream) is refused in words, as a cut gzip is."""
    import zipfile

    try:
        return member.read(n)
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as e:
        why = f"a zip archive (torch.save's) corrupt after {got:,} bytes of its snapshot: {e}"
        raise SnapshotReadError(path, f"{why}: copy the whole file again (`unzip -t` tells)",
                                cut("zip_cut", why, offset=got)) from None


def _stream_size(f: Any) -> int | None:
    """The bytes of an open file (its descriptor's size; a remote file's in-memory copy's), None where not known."""
    try:
        return os.fstat(f.fileno()).st_size
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        pass
    try:
        at = f.tell()
        end = f.seek(0, 2)
        f.seek(at)
        return end
    except (AttributeError, OSError, ValueError):
        return None


def _read_bytes(path: str, local: str | None = None) -> bytes:
    limit = max_profile_bytes()
    with fsio.open_binary(path if local is None else local) as f:
        data = _read_upto(f, limit + 1)
    if len(data) > limit:
        raise SnapshotReadError(path, f"over the {limit:,}-byte limit (raise TB_GPU_ADVISOR_MAX_PROFILE_BYTES to read it)")
    return _gunzipped(path, data, limit) if is_gzip(data) else data


def _gunzipped(path: str, data: bytes, limit: int) -> bytes:
    """The snapshot a gzip file holds (``snapshot.pickle.gz``: people compress them for upload), decompressed no
    further than the size limit a plain file has: a gzip bomb is refused, in words, not inflated."""
    from tb_gpu_advisor.formats.gz import gunzip_upto  # the one bounded gzip reader, loaded when needed

    out, cut = gunzip_upto(io.BytesIO(data), limit + 1)
    if len(out) > limit:
        raise SnapshotReadError(path, f"a gzip file of {len(data):,} bytes that decompresses past the {limit:,}-byte "
                                      "limit: refused, not inflated (a gzip bomb, or a snapshot larger than the limit: "
                                      "raise TB_GPU_ADVISOR_MAX_PROFILE_BYTES to read it)")
    if cut:  # a pickle is read to its end: a cut one cannot be (a plain cut pickle is refused the same)
        why = f"a gzip file cut off or corrupt after {len(out):,} bytes of its snapshot"
        raise SnapshotReadError(path, f"{why}: copy the whole file again (`gzip -t` tells)",
                                cut("gzip_cut", why, offset=len(out)))
    if not out:
        raise SnapshotReadError(path, "a gzip file with nothing in it")
    return out


def _read_upto(f: Any, n: int, chunk: int = 64 << 20) -> bytes:
    """At most ``n`` bytes of ``f``, in one read of its own size (plus one byte, to see it grew): ``f.read(n)`` would
    reserve all ``n`` (the 8 GiB limit) up front, which an address-space limit refuses however small the file, and
    chunks joined hold the file twice (an 85 MB viewer page peaked at 314 MB, 3.7 times it)."""
    rest = chunk
    try:
        chunk, rest = os.fstat(f.fileno()).st_size + 1, 1 << 20  # the rest: a file grown since, or nothing
    except (AttributeError, OSError, ValueError):  # a stream with no file descriptor: chunks of the default
        pass
    parts, got = [], 0
    while got < n:
        part = f.read(min(chunk, n - got))
        if not part:
            break
        parts.append(part)
        got += len(part)
        chunk = rest  # a read reserves its whole request: the one past the end costs no second file
    return parts[0] if len(parts) == 1 else b"".join(parts)


#: The first pickle of a legacy ``torch.save`` file (``torch/serialization.py``'s ``MAGIC_NUMBER``; then the protocol
#: version, the system's sizes, the object, its storages' keys -- five pickles, the reader reads one).
LEGACY_TORCH_SAVE_MAGIC = 0x1950A86A20F9469CFC6C


def to_trace(doc: Any, host: str, path: str, size: int, work: int = MIN_WORK, cols: "_Compactor | None" = None) -> Trace:
    """The trace of a snapshot's plain data (``torch.cuda.memory._snapshot()``'s dict); ``work``: the walk's bound;
    ``cols``: the compactor the pickle was read with (its lists hold :data:`ROW` for the entries it took)."""
    listed = isinstance(doc, list) and bool(doc) and all(isinstance(s, dict) and "total_size" in s for s in doc[:8])
    if listed:
        doc = {"segments": doc}  # ``torch.cuda.memory_snapshot()``: the segments alone, the state at the dump
    if doc == LEGACY_TORCH_SAVE_MAGIC and not isinstance(doc, bool):
        raise SnapshotReadError(path, "a torch.save file in the legacy format (`_use_new_zipfile_serialization=False`: "
                                      "its pickles follow a magic number), not read: save the snapshot with "
                                      "torch.cuda.memory._dump_snapshot(path), or torch.save's default (zip) format")
    if not isinstance(doc, dict) or not isinstance(doc.get("segments"), list):
        raise SnapshotReadError(path, "a pickle, but no memory snapshot (no `segments` list): not "
                                      "torch.cuda.memory._dump_snapshot's output")
    budget = _Budget(work)
    by_gpu: dict[int, list[dict]] = {}
    for seg in budget.each(doc["segments"]):
        if budget.shaped(seg, _SEGMENT, "segment"):
            by_gpu.setdefault(_int(seg.get("device"), 0), []).append(seg)
    traces = doc.get("device_traces") if isinstance(doc.get("device_traces"), list) else []
    gpus = sorted(set(by_gpu) | {g for g, t in enumerate(traces[:MAX_GPUS]) if t})[:MAX_GPUS]
    settings = doc.get("allocator_settings")
    snap = MemorySnapshot(settings={k: v for k, v in settings.items() if isinstance(k, str)
                                    and isinstance(v, (str, int, float, bool))} if isinstance(settings, dict) else {})
    _expandable_from_segments(snap.settings, by_gpu)
    contradict: list[Damage] = []  # the file read whole, its records contradicting each other
    entries = {g: _entries(traces[g] if g < len(traces) and isinstance(traces[g], list) else [], cols, budget)
               for g in gpus}
    for g in gpus:  # a list read as columns holds only ROW marks: emptied, as the file's bytes were dropped
        if isinstance(entries[g], _Rows):
            traces[g].clear()
    times = _times(entries)  # the first and the last time_us (empty: none)
    t0_us = min(times) if times else 0
    if times and max(times) - t0_us > MAX_SPAN_US:
        raise SnapshotReadError(path, f"its history spans {(max(times) - t0_us) / 86_400e6:,.0f} days (time_us "
                                      f"{t0_us:,} to {max(times):,}): no recording is that long; the times are damaged")
    memory: dict[int, MemoryEvents] = {}
    for g in gpus:
        segs = by_gpu.get(g, [])
        reserved = sum(_int(s.get("total_size"), 0) for s in segs)
        placed, rows = [], []  # rows: each segment's (address, size, bytes in blocks not free) at the dump
        for s in segs:
            mine = _placed(s, budget)
            placed += mine
            rows.append((_int(s.get("address"), -1), _int(s.get("total_size"), 0),
                         sum(_int(b.get("size"), 0) for b, _ in mine if b.get("state") != "inactive")
                         or max(_int(s.get("allocated_size"), 0), _int(s.get("active_size"), 0))))
        expandable = snap.settings.get("expandable_segments") is True or any(s.get("is_expandable") is True for s in segs)
        if not expandable:  # an expandable segment unmaps its free pages: no whole segment is cached
            snap.cached[g] = sum(size for _, size, used in rows if used == 0)
        blocks = [b for b, _ in placed]
        where = {id(b): at for b, at in placed}
        live = [b for b in blocks if b.get("state") == "active_allocated"]
        allocated = sum(_int(b.get("size"), 0) for b in live)
        free_blocks = [_int(b.get("size"), 0) for b in blocks if b.get("state") == "inactive"]
        if max(reserved, allocated) >= MAX_BYTES:
            raise SnapshotReadError(path, f"GPU {g}'s segments add up to {max(reserved, allocated) / 2**50:,.0f} PiB, "
                                          "more than a 64-bit address space holds: no allocator's record")
        if (held := sum(_int(b.get("size"), 0) for b in blocks)) > reserved:
            contradict.append(contradiction(
                "blocks_overlap", f"GPU {g}'s blocks hold {held / 2**20:,.1f} MiB, more than the {reserved / 2**20:,.1f} MiB "
                "its segments reserve: blocks that overlap (the allocator hands out no byte twice), so the "
                "file was edited or damaged"))
        snap.state[g] = (reserved, allocated, len(segs), max(free_blocks, default=0))
        dump = [_Live(_int(b.get("size"), 0), where[id(b)], _block_frames(b), None, budget,
                      _int(b.get("requested_size"), 0) or None) for b in live]
        snap.blocks[g] = [x.block(budget) for x in sorted(dump, key=lambda x: -x.size)[:TOP_BLOCKS]]
        snap.stacks[g] = _stacks(dump, budget)
        try:
            events, ooms, retries, off = _events(g, entries[g], t0_us, allocated, reserved, dump, budget,
                                                 None if expandable else rows, [(a, n) for a, n, _ in rows],
                                                 [s.get("stream") for s in segs])
        except _OutOfRange as e:
            raise SnapshotReadError(path, str(e)) from e
        if events is not None:
            memory[g] = events
            events.held_unseen = _held_unseen(events, dump)
            if unseen := _unseen_by_holder(events, dump, budget):
                snap.unseen_by_holder[g] = unseen
            if (late := _freed_unseen(events)) is not None:
                snap.begun_late[g] = (*late, len(entries[g]))
                snap.unseen_live[g] = _unseen_live(events, dump, budget)
            pending = sum(_int(b.get("size"), 0) for b in blocks if b.get("state") == "active_pending_free")
            if (short := history_short_of_dump(events, allocated + pending)) > 0:
                contradict.append(contradiction(
                    "history_short_of_dump", f"GPU {g}'s history ends with {short / 2**20:,.1f} MiB live that its segments do not hold "
                    "at the dump: the history stops before the dump (a cut or edited snapshot), so its totals "
                    "are counted from its own lowest point and the state at the dump is not its end"))
            elif (beyond := history_beyond_segments(events)) is not None:
                contradict.append(contradiction(
                    "history_beyond_segments", f"GPU {g}'s history allocates {beyond[0] / 2**20:,.1f} MiB more than its segments reserve "
                    f"({beyond[1] / 1e12:,.3f} s into it): the caching allocator places every block inside a "
                    f"segment it holds, so the history and the segments are {NOT_ONE_ALLOCATOR} (a generated "
                    "or edited snapshot) -- its levels are the history's own sums, not the GPU's"))
            elif off is not None:
                what, found = off
                contradict.append(contradiction(what, _off_words(g, found, events, what == OFF_STREAM), record=found[2]))
        snap.ooms.extend(ooms)
        snap.retries.extend(retries)
    snap.stackless = _stackless(memory, snap)
    snap.dump_stacks = snap.stackless and any(st.frames for stacks in snap.stacks.values() for st in stacks)
    snap.vendor = _vendor(budget, _drop_stacks(entries), by_gpu, _entry_streams(entries, cols))
    _sourced_by(memory, snap.vendor)
    files = _files(budget)
    snap.platform = _platform(files)
    snap.data_parallel = any(pytorch.data_parallel_file(name) for name in files)
    if budget.bad and not any(by_gpu.values()) and not any(entries.values()):
        raise SnapshotReadError(path, f"no segment or trace entry of a memory snapshot's shape: {budget.bad_text()}")
    if not gpus:
        raise SnapshotReadError(path, EMPTY)
    problems = [cut("work_budget", f"the snapshot describes more entries, blocks and frames than its size warrants: "
                    f"the first {work:,} were read")] if budget.left_out else []
    problems.extend(contradict)
    if budget.bad:
        problems.append(unreadable("wrong_type_fields", f"fields of the wrong type, left out: {budget.bad_text()}"))  # the rest read on
    if len(traces) > MAX_GPUS or len(by_gpu) > MAX_GPUS:
        problems.append(cut("too_many_devices", f"more than {MAX_GPUS} devices: the first {MAX_GPUS} were read"))
    span = (0, int((max(times) - t0_us) * 1_000_000)) if times else None
    devices = [DeviceEvents(**_empty_device(g)) for g in gpus]
    producer: dict[str, Any] = {"kind": "memory snapshot", "layout": _layout(doc, listed, by_gpu, entries)}
    notes = doc.get("external_annotations")
    if isinstance(notes, list):
        # the profiler's record_function ranges the allocator saw open (``Optimizer.zero_grad#AdamW.zero_grad``, a
        # DataLoader's ``__next__``): distinct names, first seen first
        named = [a.get("name") for a in budget.each(notes) if isinstance(a, dict)]
        producer["annotations"] = tuple(dict.fromkeys(n for n in named if isinstance(n, str) and n))[:MAX_ANNOTATIONS]
        snap.iteration_ends_ps = _iteration_ends(budget.each(notes), t0_us)
        snap.reset_ends_ps = _iteration_ends(budget.each(notes), t0_us, pytorch.is_grad_reset_event)
        snap.history_cut = _history_cut(snap.iteration_ends_ps, budget.each(notes), entries, times, t0_us)
        span = _span_with_notes(span, budget.each(notes), t0_us)
    return Trace(format="snapshot", host=host, path=path, size_bytes=size, h=_empty_host(), devices=devices,
                 num_events=sum(len(es) for es in entries.values()), span_ps=span, time_base=TIME_BASE,
                 memory=memory, snapshot=snap, problems=problems, producer=producer)


def _stackless(memory: dict[int, MemoryEvents], snap: MemorySnapshot) -> bool:
    """Whether the snapshot's history allocates and no allocation of it carries a stack frame
    (``MemorySnapshot.stackless``).  Why: ``_record_memory_history(context=None)`` records every event and no stack
    (its entries hold no ``frames``, its blocks an empty list), so every allocation reads as "other"; said apart from
    a ``stacks="python"`` record, whose allocations on autograd's engine thread alone hold no frame.  The blocks live
    at the dump are not asked: ``context="state"`` (and 2.0 without ``trace_alloc_record_context``) gives them their
    stacks and the history's entries none, and a history read as framed because its last blocks were left every
    iteration unread -- no step, no activations, no kept forward (h37-snap69: the same training loop with
    ``context="state"`` read "no step timed" where ``context=None`` read its 3 iterations)."""
    allocs = [me for me in memory.values() if (me.delta > 0).any()]
    if not allocs:
        return False
    return not any(name != "?" for me in allocs for name in me.op_names)


#: How deep in a stack the caching allocator's own frame lies: under the unwinder's two (``torch::unwind::unwind()``,
#: ``CapturedTraceback::gather``), the allocator's ``malloc`` comes next, innermost first.
_ALLOCATOR_DEPTH = 16


def _vendor(budget: "_Budget", drops: list[Any], by_gpu: dict[int, list[dict]], entry_streams: set[int]) -> str | None:
    """The vendor of the snapshot's GPUs as its own frames name it (``MemorySnapshot.vendor``): the allocations' and
    live blocks' stacks, and ``drops`` (the stacks of the segments given back: the program's ``empty_cache()``); None
    where none does.  Why: a snapshot records no GPU by name; a ROCm build's allocations run through
    ``c10::hip::HIPCachingAllocator``, and read without it, every snapshot was taken for NVIDIA's and an AMD GPU's user
    was told CUDA's settings.  A Python-only record of ``torch_npu`` (an Ascend NPU) names its device only where a
    stack runs through the plug-in's own ``torch.npu`` (``torch_npu/npu/memory.py: empty_cache``, in a ``segment_free``'s
    stack; h37-wild55v: codeasier/MemSnapDump's snapshots were told ``PYTORCH_CUDA_ALLOC_CONF``); where no frame names
    one, a snapshot whose segments and trace entries lie on no null stream is a build's that is unnamed
    (``devices.UNNAMED``), not CUDA's; ``entry_streams``: the streams its trace entries name (:func:`_entry_streams`)."""
    tops = {id(f): f for frames in (*budget.stacks(), *drops) if isinstance(frames, (list, tuple))
            for f in frames[:_ALLOCATOR_DEPTH] if isinstance(f, dict)}  # each distinct frame once
    named = devices.vendor_of_frames(_str(f.get("name"), "") + " " + _str(f.get("filename"), "") for f in tops.values())
    if named is not None:
        return named
    if any(pytorch.cuda_api_file(_str(f.get("filename"), "")) for f in tops.values()):
        # a stack through ``torch.cuda``'s own Python (a program's ``torch.cuda.empty_cache()``): the CUDA API's
        # build, on a side stream too (h37-huntsnap63: a Python-only CUDA job on ``torch.cuda.Stream()`` read "unnamed")
        return None
    # no frame names a build: the segments' streams still tell CUDA's apart (h37-wild56m).  CUDA's and HIP's default
    # stream is the null stream, which their allocators record as stream 0; torch_npu's default stream is one it
    # made (an ``aclrtStream`` handle, never 0).  A snapshot with segments none of which lies on stream 0 ran its
    # allocations on no CUDA device's default stream: its build is unnamed, and CUDA's words
    # (``PYTORCH_CUDA_ALLOC_CONF``, ``torch.cuda``, "GPU") may be wrong for it (codeasier/MemSnapDump's Python-only
    # Ascend snapshots).  A CUDA job that ran all its work on a side stream reads so too: told words true of every
    # build, never wrong ones.  The trace entries' streams count as the segments' do (h37-wild57m): a job torn down
    # with ``empty_cache()`` before its dump has no segment left, and its history alone says where it ran.
    # CUDA's default stream named by its handle counts as 0 does: ``cudaStreamPerThread`` (2, a per-thread build's
    # default stream) and ``cudaStreamLegacy`` (1) are CUDA's and HIP's alike (``devices.DEFAULT_STREAM_HANDLES``;
    # h37-copy71: a job on ``cudaStreamPerThread`` read as no CUDA build's)
    streams = {_int(s.get("stream"), 0) for segs in by_gpu.values() for s in segs} | entry_streams
    return devices.UNNAMED if streams and not streams & devices.DEFAULT_STREAM_HANDLES else None


def _entry_streams(entries: dict[int, "list | _Rows"], cols: "_Compactor | None") -> set[int]:
    """The streams the trace entries name (``stream``: the allocation's stream, CUDA's null stream recorded as 0):
    those its compactor saw (every row's) and those of the entries kept as dicts."""
    out = set(cols.streams) if cols is not None else set()
    for es in entries.values():
        if not isinstance(es, _Rows):
            out.update(s for e in es if not isinstance(e, _Entry) and type(s := e.get("stream")) is int)
    return out


def _sourced_by(memory: dict[int, MemoryEvents], vendor: str | None) -> None:
    """Each device's ``source`` in the code of the build that dumped it, where its frames name one
    (``torch.npu.memory._dump_snapshot`` for torch_npu's: h37-wild55v); as written (CUDA's, every build's name) else."""
    if vendor is None:
        return
    for me in memory.values():
        me.source = devices.vendor_code(devices.vendor_called(vendor), me.source)


def _drop_stacks(entries: dict[int, Any]) -> list[Any]:
    """The distinct stacks of the history's segment drops (``segment_free`` / ``segment_unmap``), every device's: the
    program's ``empty_cache()`` and the allocator's retries, whose frames no allocation shares."""
    out: dict[int, Any] = {}
    for es in entries.values():
        if isinstance(es, _Rows):
            codes = [i for i, a in enumerate(es.cols.actions) if a in _SEG_DROP]
            if not codes:
                continue
            frame = es.column("frame")
            picked = np.isin(es.column("action"), codes) & (frame >= 0)
            out.update((k, es.cols.frames[k]) for k in np.unique(frame[picked]).tolist())
            continue
        for e in es:
            if isinstance(e, (dict, _Entry)) and e.get("action") in _SEG_DROP and (f := e.get("frames")):
                out.setdefault(id(f), f)
    return list(out.values())


#: A Windows path: a drive letter (``C:\\Users\\...``, ``c:/...``) or a UNC share (``\\\\server\\...``).
_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")


def _platform(files: set[str]) -> str | None:
    """"Windows" where a Python frame's file (``files``: :func:`_files`) is a Windows path (``MemorySnapshot.platform``),
    else None.  Why: PyTorch
    builds expandable segments on the CUDA driver API, which its Windows builds leave out (``c10/cuda/CMakeLists.txt``
    defines ``PYTORCH_C10_DRIVER_API_SUPPORTED`` where ``NOT WIN32``; without it the setting warns "expandable_segments
    not supported on this platform" and is ignored), so a Windows user told to turn them on changes nothing."""
    return "Windows" if any(_WINDOWS_PATH.match(name) or "\\" in name for name in files) else None


def _files(budget: "_Budget") -> set[str]:
    """The files of the allocations' Python frames (those with a line: a C++ frame has none), each distinct frame
    looked at once (the stacks share them: the pickle's memo)."""
    frames = {id(f): f for st in budget.stacks() if isinstance(st, (list, tuple)) for f in st}
    return {_str(f.get("filename"), "") for f in frames.values() if isinstance(f, dict) and _int(f.get("line"), 0) > 0}


def _expandable_from_segments(settings: dict[str, Any], by_gpu: dict[int, list[dict]]) -> None:
    """``settings["expandable_segments"]`` from the segments' own ``is_expandable`` where the snapshot writes no
    ``allocator_settings`` (PyTorch 2.1 to the releases before it added them): every segment expandable says the
    allocator ran with ``expandable_segments:True``; none, that it did not.  Why: read without it, a 2.1 dump of an
    allocator already on expandable segments was told to turn them on."""
    if "expandable_segments" in settings:
        return
    flags = {s.get("is_expandable") for ss in by_gpu.values() for s in ss}
    if flags == {True} or flags == {False}:
        settings["expandable_segments"] = flags.pop()


def _placed(seg: dict, budget: "_Budget") -> list[tuple[dict, int]]:
    """A segment's blocks of the right shape, each with its address: its ``address`` (PyTorch 2.1 on), else its
    newest allocation's ``addr`` (1.13 and 2.0 keep it in ``history``), else the segment's address plus the sizes of
    the blocks before it (a block's bytes follow the one before it: the viewer's ``segsum`` places them so); -1
    where the segment has no address.

    Why: 1.13 and 2.0 blocks hold no ``address``.  Read as -1, every live block at the dump looked older than the
    history (no entry allocated its address), so what was live at an OOM counted the history's blocks twice."""
    at = _int(seg.get("address"), -1)
    out = []
    for b in budget.each(seg.get("blocks") or []):
        if not budget.shaped(b, _BLOCK, "block"):
            continue
        history = b.get("history")
        newest = history[0] if isinstance(history, list) and history and isinstance(history[0], dict) else {}
        own = b.get("address", newest.get("addr") if b.get("state") != "inactive" else None)
        out.append((b, _int(own, at)))
        if at >= 0:
            at += _int(b.get("size"), 0)
    return out


#: What only PyTorch 2.1 and later write in a snapshot (``torch/csrc/cuda/memory_snapshot.cpp``): a block's own
#: ``frames`` and ``requested_size``, a segment's ``is_expandable`` / ``segment_pool_id``, a trace entry's ``time_us``,
#: the ``allocator_settings`` and ``external_annotations`` of later releases.
_NEWER_BLOCK_KEYS = ("frames", "requested_size")
_NEWER_SEGMENT_KEYS = ("is_expandable", "segment_pool_id", "requested_size")
_NEWER_DOC_KEYS = ("allocator_settings", "external_annotations")


def _layout(doc: dict, listed: bool, by_gpu: dict[int, list[dict]], entries: dict[int, list]) -> str:
    """The PyTorch release whose layout the snapshot has, from what its keys say (none of them is a version):
    ``"2.1"`` (2.1 and later: :data:`_NEWER_BLOCK_KEYS` and the rest), ``"2.0"`` (blocks keep their stack in
    ``history``; ``device_traces`` without ``time_us``), ``"1.13"`` (``history``, and no ``device_traces`` at all: 1.13
    recorded no allocator events), ``"2.0 or older"`` (a list of segments with ``history``: the version that pickled
    ``memory_snapshot()`` is not said), ``""`` where nothing tells (a bare list of segments).  It picks the words of
    the call that records a history in that release (``frameworks.pytorch.record_history``)."""
    segs = [s for ss in by_gpu.values() for s in ss[:64]]
    blocks = [b for s in segs for b in (s.get("blocks") or [])[:64] if isinstance(b, dict)]
    newer = (any(k in doc for k in _NEWER_DOC_KEYS) or any(k in s for s in segs for k in _NEWER_SEGMENT_KEYS)
             or any(k in b for b in blocks for k in _NEWER_BLOCK_KEYS)
             or any(e.get("time_us") is not None for es in entries.values() for e in es[:64]))
    if newer:
        return "2.1"
    if any("history" in b for b in blocks):
        return "2.0 or older" if listed else "2.0" if "device_traces" in doc else "1.13"
    if listed:
        return ""
    return "2.0" if "device_traces" in doc else "1.13"


def _block_frames(b: dict) -> Any:
    """The stack that allocated a live block: its ``frames`` (PyTorch 2.1 on), else the newest entry of its
    ``history`` (PyTorch 1.13 and 2.0: ``[{"addr", "real_size", "frames"}]``, the allocator's chain of a block's
    allocations walked from its head, the latest first -- ``CUDACachingAllocator.cpp`` prepends each allocation's).

    Why: read as ``frames`` alone, a 1.13 / 2.0 snapshot's live blocks had no stack -- every one "?", its state's
    kind (serving, training) and the gradients ``Module.to()`` moved unseen: "healthy" where 2.1's dump of the same
    state is not."""
    frames = b.get("frames")
    if frames is not None:
        return frames
    history = b.get("history")
    if isinstance(history, list) and history and isinstance(history[0], dict):
        return history[0].get("frames")
    return None


class _Entry(int):
    """A trace entry kept as one row of its compactor's columns (:class:`_Compactor`), read like the dict (``get``):
    made only where an entry is looked at one by one (an OOM's history, a list that mixes rows and dicts), never held
    per entry -- the lists hold :data:`ROW` in its place.  Each compactor has its own subclass, whose ``cols`` is
    that compactor."""

    __slots__ = ()
    cols: "_Compactor"

    def get(self, key: str, default: Any = None) -> Any:
        v = self.cols.field(self, key)
        return default if v is None else v

    def fields(self) -> tuple:
        """The row's fields (:data:`_ENTRY_FIELDS`), None where absent."""
        return tuple(self.cols.field(self, k) for k in _ENTRY_FIELDS)

    def __contains__(self, value: Any) -> bool:  # as the tuple of its fields answers ``in``
        return value in self.fields()

    def __repr__(self) -> str:
        return f"_Entry{self.fields()!r}"


class _RowMark(int):
    """What a list holds in place of each trace entry its compactor took (:data:`ROW`, one object for all): the
    entry is the next row of that list's runs (:meth:`_Compactor.rows_of`).  An int to the unpickler's check of plain
    data, equal only to itself (``list.count``)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return other is self

    def __ne__(self, other: object) -> bool:
        return other is not self

    __hash__ = int.__hash__

    def __repr__(self) -> str:
        return "ROW"


ROW = _RowMark(-1)

_ENTRY_FIELDS = ("action", "addr", "size", "time_us", "frames", "device_free")
_NUMBERS = ("addr", "size", "time_us")  # >= 0 by _RANGE: -1 stands for absent
#: Distinct streams a history's entries are told apart by (an int16 index each); past it an entry's stream reads as
#: unnamed -- no job runs its allocations on thousands of streams, and an unnamed stream is checked against every
#: segment of its device, as before streams were read.
_MAX_STREAMS = 32767
_CATEGORY = {**{a: 1 for a in _ALLOC}, **{a: 2 for a in _FREE}, **{a: 3 for a in _SEG_ADD},
             **{a: 4 for a in _SEG_DROP}, "oom": 5}


class _Compactor:
    """Turns each trace entry (a dict with a string ``action``, fields of the right types, an integer time) into a row
    of columns as the unpickler places it in a list -- its numbers 8 bytes each, its action one byte and its stack a
    4-byte index (a stack one tuple shared by every entry of the same frames), ``device_free`` (an OOM's) kept by row
    -- and puts :data:`ROW` in the list in its place: a snapshot's history costs its columns and one list slot an
    entry, no Python object per entry.  Which rows a list holds is kept as runs (the list, its first row): appends to
    one list come in order, so its ``ROW`` marks are its runs' rows in order.  Other dicts stay as they are."""

    def __init__(self) -> None:
        self.stacks: dict[tuple[int, ...], int] = {}  # ids of a stack's frames -> its index in ``frames``
        self.frames: list[tuple] = []  # the one tuple of each stack's frames (keeps them alive)
        self.actions: list[str] = []
        self._action: dict[str, int] = {}
        self.action, self.frame = array("b"), array("i")
        self.numbers = {k: array("q") for k in _NUMBERS}
        self.device_free: dict[int, int] = {}
        #: the distinct streams the entries name (:func:`_vendor`: whether any lies on CUDA's null stream)
        self.streams: set[int] = set()
        #: per row, its stream as an index in ``stream_values`` (-1: none named): the allocator's pool an allocation
        #: was carved from is its stream's (:func:`history_off_stream_segments`); two bytes an entry
        self.stream, self.stream_values, self._stream_id = array("h"), [], {}
        self.runs: list[tuple[list, int]] = []  # (a list, the row its next ROW marks begin): one per change of list
        self.row = type("_Entry", (_Entry,), {"__slots__": (), "cols": self})

    def __call__(self, d: dict, lst: list) -> _RowMark | None:
        # :func:`_shape_error` of ``d`` against :data:`_ENTRY`, spelled out for the fields at hand (one call per entry
        # of a history of millions): the action a string, each number absent or an int of its :data:`_RANGE` -- a
        # float time (allowed by the shape, read as none) stays in its dict too -- the frames absent or a list
        get = d.get
        name, size, addr, t, frames, free = (get("action"), get("size"), get("addr"), get("time_us"), get("frames"),
                                             get("device_free"))
        if type(d) is not dict or type(name) is not str or (frames is not None and type(frames) is not list) or \
                (size is not None and (type(size) is not int or not 0 <= size < MAX_BYTES)) or \
                (addr is not None and (type(addr) is not int or not 0 <= addr < MAX_BYTES)) or \
                (free is not None and (type(free) is not int or not 0 <= free < MAX_BYTES)) or \
                (t is not None and (type(t) is not int or not 0 <= t < _MAX_TIME)):
            return None
        action = self._action.get(name)
        if action is None:
            if len(self.actions) >= 127:  # one byte an action: a 128th distinct one stays a dict
                return None
            action = self._action[name] = len(self.actions)
            self.actions.append(name)
        stack = -1
        if type(frames) is list:
            key = tuple(map(id, frames))
            stack = self.stacks.get(key, -1)
            if stack < 0:
                stack = self.stacks[key] = len(self.frames)
                self.frames.append(tuple(frames))
        row = len(self.action)
        if not self.runs or self.runs[-1][0] is not lst:
            self.runs.append((lst, row))
        self.action.append(action)
        self.frame.append(stack)
        numbers = self.numbers
        numbers["addr"].append(-1 if addr is None else addr)
        numbers["size"].append(-1 if size is None else size)
        numbers["time_us"].append(-1 if t is None else t)
        if free is not None:
            self.device_free[row] = free
        if type(stream := get("stream")) is int:
            self.streams.add(stream)
            sid = self._stream_id.get(stream)
            if sid is None:
                sid = -1 if len(self.stream_values) >= _MAX_STREAMS else len(self.stream_values)
                if sid >= 0:
                    self._stream_id[stream] = sid
                    self.stream_values.append(stream)
            self.stream.append(sid)
        else:
            self.stream.append(-1)
        return ROW

    def release(self) -> None:
        """Unlink the compactor from its row class (each refers to the other), so its columns -- ~29 bytes an entry,
        the bytes the trace model's events were built from -- are freed when the read returns, not at the garbage
        collector's next full pass, which came during the analysis that follows (a 1,000,000-entry history: 19 MB
        beside its peak).  Only columns the events view (an address column taken whole) stay, held by them."""
        self.row.cols = None
        self.row = None

    def field(self, row: int, key: str) -> Any:
        """One field of a row; None where the entry had none."""
        if key == "action":
            return self.actions[self.action[row]]
        if key == "frames":
            k = self.frame[row]
            return None if k < 0 else self.frames[k]
        if key == "device_free":
            return self.device_free.get(row)
        if key == "stream":
            k = self.stream[row]
            return None if k < 0 else self.stream_values[k]
        col = self.numbers.get(key)
        if col is None:
            return None
        v = col[row]
        return None if v < 0 else v

    def rows_of(self, lst: list) -> np.ndarray:
        """The rows of ``lst``'s ROW marks, in order (int64)."""
        ends = [r for _, r in self.runs[1:]] + [len(self.action)]
        parts = [np.arange(start, end, dtype=np.int64) for (x, start), end in zip(self.runs, ends) if x is lst]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def contiguous(self, lst: list) -> tuple[int, int] | None:
        """(first row, end) where ``lst``'s rows are one run, else None."""
        ends = [r for _, r in self.runs[1:]] + [len(self.action)]
        mine = [(start, end) for (x, start), end in zip(self.runs, ends) if x is lst]
        return mine[0] if len(mine) == 1 else None


class _Rows:
    """A device's trace entries that are all rows of one compactor (the lists of a snapshot as PyTorch writes them):
    read as column slices, never an object per entry; indexing or iterating makes each row's :class:`_Entry`."""

    __slots__ = ("cols", "rows")

    def __init__(self, cols: _Compactor, rows: "np.ndarray | slice"):
        self.cols, self.rows = cols, rows  # a slice where the rows are one run (the columns viewed, not copied)

    def __len__(self) -> int:
        r = self.rows
        return len(range(*r.indices(len(self.cols.action)))) if isinstance(r, slice) else int(r.size)

    def column(self, name: str) -> np.ndarray:
        """A column of these rows: ``action`` (int8 index in ``cols.actions``), ``frame`` (int32 stack, -1 none),
        or one of :data:`_NUMBERS` (int64, -1 absent); a view where the rows are one run."""
        buf = (self.cols.action if name == "action" else self.cols.frame if name == "frame" else
               self.cols.stream if name == "stream" else self.cols.numbers[name])
        dtype = np.int8 if name == "action" else np.int32 if name == "frame" else np.int16 if name == "stream" else np.int64
        return np.frombuffer(buf, dtype=dtype)[self.rows]

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            start, stop, step = k.indices(len(self))
            if step != 1:
                return list(self)[k]
            r = self.rows
            if isinstance(r, slice):
                return _Rows(self.cols, slice(r.start + start, r.start + max(start, stop)))
            return _Rows(self.cols, r[start:stop])
        r = self.rows
        k = range(len(self))[k]
        return self.cols.row(r.start + k if isinstance(r, slice) else int(r[k]))

    def __iter__(self):
        r = self.rows
        make = self.cols.row
        for k in (range(r.start, r.start + len(self)) if isinstance(r, slice) else r.tolist()):
            yield make(k)


class _Live:
    """A live block before it is a :class:`SnapshotBlock`: its frames are formatted only for the few kept."""

    __slots__ = ("size", "address", "raw", "time_ps", "phase", "requested")

    def __init__(self, size: int, address: int, raw: Any, time_ps: int | None, budget: "_Budget",
                 requested: int | None = None):
        self.size, self.address, self.raw, self.time_ps = size, address, raw, time_ps
        self.phase = MEMORY_PHASES[budget.phase(raw)]
        #: the bytes the tensor asked for (``requested_size``, PyTorch 2.1+), ``size`` where the file says nothing:
        #: the allocator rounds a block up, and leaves a large one unsplit when less than 1 MiB of its segment is left
        self.requested = requested if requested is not None and 0 < requested <= size else size

    @classmethod
    def freed(cls, size: int, address: int) -> "_Live":
        """A block the history freed, known by its free alone (:func:`_torn_down`): no stack, no time, and the bytes
        its tensor asked for unknown (``requested`` 0: :func:`_copy_blocks` takes every request the block could hold)."""
        out = cls.__new__(cls)
        out.size, out.address, out.raw, out.time_ps, out.requested = size, address, None, None, 0
        out.phase = "other"
        return out

    def block(self, budget: "_Budget") -> SnapshotBlock:
        frames = budget.frames(self.raw, spend=False)
        return SnapshotBlock(size=self.size, requested=self.requested, address=self.address, frames=frames,
                             time_ps=self.time_ps, phase=self.phase, label=budget.label(self.raw))


def _stacks(live: list[_Live], budget: "_Budget") -> list[LiveStack]:
    """The live blocks grouped by the stack that allocated them, most bytes first (:data:`MAX_STACKS`).  Blocks
    share a stack's frames (the same list, or equal frames): each distinct list is formatted once."""
    by_list: dict[int, tuple[Any, list[_Live]]] = {}
    for b in live:
        by_list.setdefault(id(b.raw), (b.raw, []))[1].append(b)
    grouped: dict[tuple[str, ...], list[int]] = {}  # frames -> [bytes, blocks, phase index]
    for raw, blocks in by_list.values():
        frames = tuple(budget.frames(raw))
        got = grouped.setdefault(frames, [0, 0, MEMORY_PHASES.index(blocks[0].phase)])
        got[0] += sum(b.size for b in blocks)
        got[1] += len(blocks)
    top = sorted(grouped.items(), key=lambda kv: -kv[1][0])[:MAX_STACKS]
    return [LiveStack(size=v[0], blocks=v[1], frames=k, phase=MEMORY_PHASES[v[2]], label=_user_frame(list(k)))
            for k, v in top]


def _events(gpu: int, entries: list[dict], t0_us: int, allocated_end: int, reserved_end: int, dump: list[_Live],
            budget: "_Budget", segments: list[tuple[int, int, int]] | None = None,
            spans: list[tuple[int, int]] | None = None, span_streams: list[Any] | None = None
            ) -> tuple[MemoryEvents | None, list[OutOfMemory], list[AllocRetry],
                       tuple[str, tuple[int, int, int]] | None]:
    """One device's trace as events with absolute totals, its OOMs with what was live at each, its allocator's
    retries (:func:`_retries`) and its allocations in no segment -- (:data:`OFF_SEGMENTS`, :func:`history_off_segments`
    of ``spans``: the dump's (address, total_size) of each segment, expandable or not), else in none of their own
    stream's (:data:`OFF_STREAM`, :func:`history_off_stream_segments`; ``span_streams``: each segment's ``stream``);
    ``segments``: the dump's (address, size, bytes not free) of each segment, from which the cache after each event is
    counted back."""
    if isinstance(entries, _Rows):
        t, d, rd, at, stack, ooms, retried, streams = _row_events(entries, t0_us)
    else:
        t, d, rd, at, stack, ooms, retried, streams = _dict_events(entries, t0_us)
    if not t.size and not ooms:
        return None, [], [], None
    if np.abs(d).sum(dtype=np.float64) + np.abs(rd).sum(dtype=np.float64) >= 2.0**62:  # totals would wrap in int64
        raise _OutOfRange(f"GPU {gpu}'s history allocates and frees more than 2**62 bytes: no allocator's record")
    # totals after each event: the dump's, less everything that came after the event -- in the allocator's unit
    # (its blocks), as the dump and the segments count; the entries' requests (``d``) stay for matching sizes
    over = _block_over(d, at, dump)
    held = _block_deltas(d, over)
    alloc, res = _totals(allocated_end, held), _totals(reserved_end, rd)
    anchored = _anchored(alloc, held), _anchored(res, rd)
    whole = anchored[0] is alloc and anchored[1] is res  # the history reaches the dump: segments follow it back
    alloc, res = anchored
    cached = _cached(segments, held, rd, at) if segments is not None and whole and t.size else None
    off = _off(spans, span_streams, d, rd, at, streams)
    del held, streams
    retries = _retries(gpu, t, rd, res, retried)
    labels: dict[str, int] = {}
    label_of: dict[int, int] = {}  # id(frames list) -> label id: shared frame lists are labelled once
    # each distinct stack labelled once, in the order the allocations first use it
    stacks, ids = stack
    used, first = np.unique(ids[ids >= 0], return_index=True)
    used = used[np.argsort(first, kind="stable")].tolist()
    op_of = np.full(len(stacks) + 1, -1, dtype=np.int32)  # the last: no stack (-1)
    phase_of = np.full(len(stacks) + 1, MEMORY_PHASES.index("other"), dtype=np.int8)
    for k in used:
        f = stacks[k]
        key = id(f)
        if key not in label_of:
            label_of[key] = labels.setdefault(budget.label(f, spend=True), len(labels))
        op_of[k] = label_of[key]
        phase_of[k] = budget.phase(f)
    bare_of = np.ones(len(stacks) + 1, dtype=bool)  # per stack (the last: none): it holds no frame at all
    bare_of[used] = [not stacks[k] for k in used]
    cached_of = np.zeros(len(stacks) + 1, dtype=bool)  # per stack: it runs through autocast's cast cache
    cached_of[used] = [budget.stack_of(stacks[k], _autocast_cached) for k in used]
    holder_of = np.full(len(stacks) + 1, -1, dtype=np.int8)  # per stack: the maker it names (HOLDERS), -1 none
    holder_of[used] = [HOLDERS.index(h) if (h := budget.stack_of(stacks[k], _holder)) else -1 for k in used]
    op, phase, bare, cast = op_of[ids], phase_of[ids], bare_of[ids], cached_of[ids] & (d > 0)
    holder = holder_of[ids]
    kept = _held_by_lifetime(d, at, phase, op, [name in ("", "?") for name in labels])
    phase[kept] = MEMORY_PHASES.index("parameters")
    _activation_casts(d, at, phase, cast, dump, _uncached_phases(stacks, used, cached_of, budget)[ids])
    del ids
    # the blocks a copy may be of: those held at the dump; where it holds none, those the script's teardown freed
    weights = dump if _held_blocks(d, at, phase, dump) else dump + _torn_down(d, at)
    cast[_cast_copies(d, at, phase, [stacks[k] for k in used], weights, bare)] = True
    events = MemoryEvents(
        gpu=gpu, source="PyTorch memory snapshot (torch.cuda.memory._dump_snapshot)", baseline="absolute",
        t=t, delta=d, allocated=alloc, reserved=res, addr=at,
        op=op, phase=phase, op_names=list(labels), cast_copy=cast, by_lifetime=kept, holder=holder,
        cached=cached, block_unit=_BLOCK_ROUND, block_over=over if over[0].size else None
    ) if t.size else None
    out = []
    last = _last_allocations(entries) if ooms else {}
    for k, i, e in ooms:
        before = k - 1
        live, by_phase, by_holder = _live_at(entries[:i], dump, t0_us, budget, kept, last)
        out.append(OutOfMemory(
            gpu=gpu, requested=_int(e.get("size"), 0), device_free=_int(e.get("device_free"), -1),
            allocated=int(alloc[before]) if before >= 0 else allocated_end,
            reserved=int(res[before]) if before >= 0 else reserved_end, frames=budget.frames(e.get("frames"), spend=False),
            time_ps=_time_ps(e, i, t0_us), live=live, live_by_phase=by_phase, label=budget.label(e.get("frames")),
            live_by_holder=by_holder))
    return events, out, retries, off


def _frame_dicts(frames: Any) -> list[dict]:
    """A raw stack's frames that are records (a hostile or damaged stack may hold anything, or be no list)."""
    return [f for f in frames if isinstance(f, dict)] if isinstance(frames, (list, tuple)) else []


def _frame_names(frames: Any) -> list[str]:
    """The function names of a raw stack's frames, innermost first."""
    return [n for f in _frame_dicts(frames) if isinstance(n := f.get("name"), str)]


def _empties_cache(names: list[str]) -> bool:
    """The program handing the cache back: ``torch.cuda.empty_cache()`` (its Python frame) or the C++
    ``emptyCache`` under it."""
    return any(n == "empty_cache" or "emptyCache" in n for n in names)


def _in_allocation(frames: Any) -> bool:
    """Whether a segment was given back from inside an allocation: its stack runs through the caching allocator's
    ``malloc`` (``DeviceCachingAllocator::malloc`` releasing its cache after the driver refused it memory, then
    asking again), not through ``emptyCache`` (the program handing the cache back)."""
    names = _frame_names(frames)
    return any("CachingAllocator" in n and "::malloc(" in n for n in names) and not _empties_cache(names)


def _stack_key(frames: Any) -> tuple:
    """A stack as a value (file, function, line per frame), to tell whether two events came from one call."""
    return tuple((f.get("filename"), f.get("name"), f.get("line")) for f in _frame_dicts(frames))


def _same_call_retries(drop: np.ndarray, add: np.ndarray, frames_at: Callable[[int], Any],
                       records_frames: bool) -> np.ndarray:
    """Per event: a segment given back inside the allocation that made the segment right after it -- each run of
    consecutive drops (``drop``, bool per event) followed at once by a segment made (``add``) with the very stack of
    every drop in the run, none of them the program's ``empty_cache``.

    Why: a snapshot recorded with Python frames only (``stacks="python"``, or any snapshot taken on Windows, where
    PyTorch unwinds no C++) has no ``DeviceCachingAllocator::malloc`` frame to tell a retry by
    (:func:`_in_allocation`): a 2.7B model's SGD step at its GPU's limit, its 266 segments given back in the
    backward, read healthy with its C++ frames dropped.  One call recorded the drops and the segment asked for again,
    so they share its stack; the program's own ``empty_cache()`` carries that frame, and another call's segment
    another stack.  A backward's allocations run on autograd's thread, where no Python frame is: a run recorded with
    no frame at all is the allocator's own only where the snapshot records frames elsewhere (``records_frames``) --
    in a snapshot with no stacks at all the program's ``empty_cache()`` looks the same (h37-wild53 *Left*)."""
    out = np.zeros(drop.size, dtype=bool)
    idx = np.flatnonzero(drop)
    if not idx.size:
        return out
    for run in np.split(idx, np.flatnonzero(np.diff(idx) > 1) + 1):
        after = int(run[-1]) + 1
        if after >= drop.size or not add[after]:
            continue
        key = _stack_key(frames_at(after))
        if not key and not records_frames:
            continue
        frames = [frames_at(int(k)) for k in run]
        if all(_stack_key(f) == key and not _empties_cache(_frame_names(f)) for f in frames):
            out[run] = True
    return out


def _retries(gpu: int, t: np.ndarray, rd: np.ndarray, res: np.ndarray, retried: np.ndarray) -> list[AllocRetry]:
    """Each run of consecutive events that give a segment back from inside an allocation (``retried``), as one
    retry: the reserved bytes just before it, the bytes and segments given back, and the segment asked for again
    right after (the request the driver had refused)."""
    idx = np.flatnonzero(retried)
    if not idx.size:
        return []
    runs = np.split(idx, np.flatnonzero(np.diff(idx) > 1) + 1)
    out = []
    for run in runs:
        first, last = int(run[0]), int(run[-1])
        released = int(-rd[run].sum())
        asked = int(rd[last + 1]) if last + 1 < len(rd) and rd[last + 1] > 0 else None
        out.append(AllocRetry(gpu=gpu, time_ps=int(t[first]), reserved=int(res[first]) - int(rd[first]),
                              released=released, segments=len(run), span_ps=int(t[last] - t[first]),
                              requested=asked))
    return out


def _block_over(d: np.ndarray, addr: np.ndarray, dump: list[_Live]) -> tuple[np.ndarray, np.ndarray]:
    """The allocations whose block is not their request rounded up to the least block (``MemoryEvents.block_over``):
    (sorted event indices, the block's bytes).  Why: PyTorch's caching allocator records an allocation's request
    (``orig_size``) and both of its frees with the block's ``requested_size`` (the same request), while the dump's
    blocks and segments count the block -- the request rounded up to 512 bytes (``kMinBlockSize``), and a large block
    left unsplit up to 1 MiB over.  Totals counted back from the dump's blocks with the requests were off by every
    rounding after the event: a history of 6,000 tensors of 100 bytes under 5 MiB, begun empty, read 30,000 B live
    before its first event.  A block still live at the dump is its own bytes (the last allocation at its address,
    not freed after); any other is its request rounded up to 512 bytes -- an allocation and its free alike, so they
    cancel (an unsplit block freed before the dump is short of its true bytes by at most 1 MiB;
    ``roundup_power2_divisions`` is not read)."""
    none = np.zeros(0, np.int64), np.zeros(0, np.int64)
    if not dump or not d.size:
        return none
    size_at = {b.address: b.size for b in dump}
    heads = np.array(sorted(size_at), dtype=np.int64)
    at = np.searchsorted(heads, addr)
    np.minimum(at, heads.size - 1, out=at)
    on = np.flatnonzero((heads[at] == addr) & (d != 0))  # the events at a live block's address: few
    del at
    rev = addr[on][::-1]
    seen, first = np.unique(rev, return_index=True)
    last = on[on.size - 1 - first]  # per address (``seen``): its last allocation or free
    known = np.array([size_at[a] for a in seen.tolist()], dtype=np.int64)
    take = (d[last] > 0) & (known >= d[last])
    idx, size = last[take], known[take]
    differs = size != rounded_blocks(d[idx], _BLOCK_ROUND)
    order = np.argsort(idx[differs])
    return idx[differs][order], size[differs][order]


def _block_deltas(d: np.ndarray, over: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """Per event, the bytes of the block it allocates (+) or frees (-): what the device holds, where ``d`` holds what
    the tensor asked for -- each request rounded up to the least block, those ``over`` names their block's bytes."""
    out = rounded_blocks(d, _BLOCK_ROUND)
    out[over[0]] = over[1]
    return out


def _totals(end: int, deltas: np.ndarray) -> np.ndarray:
    """The total after each event: the dump's (``end``), less everything that came after the event."""
    if not deltas.size:
        return deltas
    out = np.cumsum(deltas)  # up to each event; the whole history's sum less it is what came after
    out += end - int(out[-1])
    return out


#: Entry categories by action (:func:`_row_events`): 1 alloc, 2 free, 3 segment made, 4 segment dropped, 5 OOM.
_SIGN = np.array([0, 1, -1, 1, -1, 0], dtype=np.int64)


def _row_events(rows: "_Rows", t0_us: int) -> tuple:
    """:func:`_dict_events` of a compactor's rows, column by column: no object per entry, and each column a view
    where it is the compactor's own (the rows one run, every entry an event)."""
    cols = rows.cols
    cat_of = np.array([_CATEGORY.get(a, 0) for a in cols.actions] + [0], dtype=np.int8)
    cat = cat_of[rows.column("action")]
    kept = (cat >= 1) & (cat <= 4)
    sel = slice(None) if kept.all() else np.flatnonzero(kept)
    ooms = [(int(np.count_nonzero(kept[:i])), i, rows[i]) for i in np.flatnonzero(cat == 5)[:MAX_OOMS].tolist()]
    del kept
    cat = cat[sel]
    time = rows.column("time_us")[sel]
    timed = time >= 0
    if timed.all():
        t = time - t0_us
    else:  # an entry without a time is placed 1 us an entry (its place among the entries)
        t = np.where(timed, time - t0_us, np.arange(len(rows), dtype=np.int64)[sel])
    del time, timed
    t *= 1_000_000
    d = np.maximum(rows.column("size")[sel], 0)  # absent (-1): 0
    d *= _SIGN[cat]
    seg = cat >= 3
    rd = np.where(seg, d, 0)
    d[seg] = 0
    del seg
    at = rows.column("addr")[sel]
    frame = rows.column("frame")[sel]
    ids = np.where(cat == 1, frame, np.int32(-1))
    dropped = np.flatnonzero((cat == 4) & (frame >= 0))
    retried = np.zeros(len(cat), dtype=bool)
    if dropped.size:
        inside = {int(k): _in_allocation(cols.frames[k]) for k in np.unique(frame[dropped]).tolist()}
        retried[dropped] = [inside[int(k)] for k in frame[dropped].tolist()]
    if (cat == 4).any():
        used = np.unique(ids[ids >= 0]).tolist()
        retried |= _same_call_retries(cat == 4, cat == 3, lambda k: cols.frames[frame[k]] if frame[k] >= 0 else None,
                                      any(cols.frames[k] for k in used))
    return t, d, rd, at, (cols.frames, ids), ooms, retried, (rows.column("stream")[sel], cols.stream_values)


def _dict_events(entries: list, t0_us: int) -> tuple:
    """Per event (an allocation, a free, a segment made or dropped): its time (ps), bytes allocated (+) or freed (-),
    bytes reserved or released, address, and its stack (the distinct stacks, and per event an index in them or -1:
    only allocations have one); and the first OOMs as (events before it, its place, the entry)."""
    t, delta, res_delta, addr = array("q"), array("q"), array("q"), array("q")
    stacks: list = []
    index: dict[int, int] = {}
    ids = array("i")
    retried = array("b")
    segment = array("b")  # per event: 1 a segment made, -1 one given back, 0 an allocation or a free
    seg_frames: dict[int, Any] = {}  # per segment event: its stack
    ooms: list[tuple[int, int, Any]] = []
    streams, stream_values, stream_id = array("h"), [], {}  # per event: its stream's index in stream_values, -1 none
    for i, e in enumerate(entries):
        action = e.get("action")
        size = _int(e.get("size"), 0)
        if action in _ALLOC or action in _FREE or action in _SEG_ADD or action in _SEG_DROP:
            t.append(_time_ps(e, i, t0_us))
            sign = 1 if action in _ALLOC or action in _SEG_ADD else -1
            is_seg = action in _SEG_ADD or action in _SEG_DROP
            delta.append(0 if is_seg else sign * size)
            res_delta.append(sign * size if is_seg else 0)
            addr.append(_int(e.get("addr"), -1))
            streams.append(_stream_index(e.get("stream"), stream_values, stream_id))
            retried.append(action in _SEG_DROP and _in_allocation(e.get("frames")))
            segment.append(0 if not is_seg else sign)
            if is_seg:
                seg_frames[len(t) - 1] = e.get("frames")
            f = e.get("frames") if action in _ALLOC else None
            if f is None:
                ids.append(-1)
            else:
                k = index.get(id(f))
                if k is None:
                    k = index[id(f)] = len(stacks)
                    stacks.append(f)
                ids.append(k)
        elif action == "oom" and len(ooms) < MAX_OOMS:
            ooms.append((len(t), i, e))
    seg = np.frombuffer(segment, dtype=np.int8)
    same_call = _same_call_retries(seg < 0, seg > 0, seg_frames.get, any(stacks))
    # the columns seen as numpy arrays in place (``frombuffer``: the array's own bytes, not a copy of them)
    return (np.frombuffer(t, dtype=np.int64), np.frombuffer(delta, dtype=np.int64),
            np.frombuffer(res_delta, dtype=np.int64), np.frombuffer(addr, dtype=np.int64),
            (stacks, np.frombuffer(ids, dtype=np.int32)), ooms,
            np.frombuffer(retried, dtype=np.int8).astype(bool) | same_call,
            (np.frombuffer(streams, dtype=np.int16), stream_values))


def _stream_index(stream: Any, values: list[int], ids: dict[int, int]) -> int:
    """``stream``'s index in ``values`` (added where new), -1 where the entry names none (or past
    :data:`_MAX_STREAMS`)."""
    if type(stream) is not int:
        return -1
    k = ids.get(stream)
    if k is None and len(values) < _MAX_STREAMS:
        k = ids[stream] = len(values)
        values.append(stream)
    return -1 if k is None else k


def _cached(segments: list[tuple[int, int, int]], d: np.ndarray, rd: np.ndarray, addr: np.ndarray) -> np.ndarray | None:
    """Per event, the bytes reserved in segments that hold no allocated block after it (``MemoryEvents.cached``),
    counted back from the dump: each segment's bytes in use at the dump, less the allocations made in it after each
    event, plus the frees; a ``segment_alloc`` undone removes its segment, a ``segment_free`` undone puts it back
    empty.  None where the history does not fit the segments (a block outside every segment, a segment made twice,
    more freed in one than it held): the cache is then not known, never guessed."""
    if any(a < 0 for a, _, _ in segments):
        return None
    seg = {a: [size, used] for a, size, used in segments}
    starts = sorted(seg)
    cached = sum(size for size, used in seg.values() if used == 0)
    n = int(d.shape[0])
    out = np.zeros(n, dtype=np.int64)
    step = 1 << 16  # the columns as Python ints a window at a time (a list of ints costs ~40 bytes a value)
    for k in range(n - 1, -1, -1):
        j = k % step
        if j == step - 1 or k == n - 1:
            lo = k - j
            dl, rl, al = (c[lo:k + 1].tolist() for c in (d, rd, addr))
        out[k] = cached
        a = al[j]
        if rl[j] > 0:  # a segment_alloc undone: the segment did not exist before it
            got = seg.pop(a, None)
            if got is None:
                return None
            starts.pop(bisect.bisect_left(starts, a))
            cached -= got[0] if got[1] == 0 else 0
        elif rl[j] < 0:  # a segment_free undone: it existed before, empty
            if a in seg:
                return None
            seg[a] = [-rl[j], 0]
            bisect.insort(starts, a)
            cached -= rl[j]
        elif dl[j]:
            i = bisect.bisect_right(starts, a) - 1
            if i < 0 or a >= starts[i] + seg[starts[i]][0]:
                return None
            s = seg[starts[i]]
            was = s[1]
            s[1] -= dl[j]  # an allocation undone frees its bytes, a free undone holds them again
            if s[1] < 0:
                return None
            cached += s[0] if s[1] == 0 and was > 0 else -s[0] if was == 0 and s[1] > 0 else 0
    return out


def _anchored(totals: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """Totals that never go below zero.  Counted back from the dump, a history that does not end at the dump (a
    snapshot cut to its first events and re-dumped: drisspg/transformer_nuggets' ``mini_snapshot.pickle`` allocates
    384 MiB it never frees, yet its segments hold nothing) goes negative -- more freed than was ever allocated.  Its
    totals are then its own, counted from its lowest point: the least memory the history allows.  The total before
    the first event (``totals[0] - deltas[0]``) counts too: a history of one allocation the dump does not hold is
    short of it by that allocation."""
    low = min(int(totals.min()), int(totals[0] - deltas[0])) if totals.size else 0
    return totals - low if low < 0 else totals


def _freed_unseen(events: MemoryEvents) -> tuple[int, int] | None:
    """(blocks, bytes) the history frees whose address it never allocated before, None where it frees none such:
    the first event at such an address is a free.  Why: every block an allocator frees it allocated first, so a
    history that frees one it never allocated began after that block was made (``MemorySnapshot.begun_late``)."""
    freed = events.unseen_frees()
    return (int(freed.size), int(-events.delta[freed].sum())) if freed.size else None


#: What the read's damage says of a history that allocates beyond its segments (:func:`history_beyond_segments`): the
#: words a report's peak allocated above its peak reserved must stand beside (``tests/support/properties``' one-unit).
NOT_ONE_ALLOCATOR = "not one allocator's record"


def history_beyond_segments(events: MemoryEvents, window: int = 1 << 20) -> tuple[int, int] | None:
    """(bytes, ps) of the most a history holds allocated beyond what its segments reserve, and when (ps from its
    first event); None where it never holds more.  The caching allocator carves every block out of a segment it
    holds, so a recorded history never allocates more than it reserves; one that does was not written by the
    allocator whose segments the file holds -- a generated snapshot (facebookresearch/mosaic's test fixture: random
    allocations at addresses no segment covers, beside five 50 MiB segments, read "2.10 GiB allocated, 250 MiB
    reserved" without a word) or an edited one.  Counted a ``window`` of events at a time: no column-sized
    temporary on a long history."""
    best, at = 0, -1
    for lo in range(0, int(events.allocated.shape[0]), window):
        over = events.allocated[lo:lo + window] - events.reserved[lo:lo + window]
        k = int(np.argmax(over))
        if over[k] > best:
            best, at = int(over[k]), lo + k
    return (best, int(events.t[at])) if at >= 0 else None


def history_off_segments(spans: list[tuple[int, int]], d: np.ndarray, rd: np.ndarray, addr: np.ndarray,
                         window: int = 1 << 16) -> tuple[int, int, int] | None:
    """(allocations, bytes, index of the first) of a history's allocations that lie in no segment the file knows of,
    None where every one lies in one (or where a segment's address is unknown: nothing to place them by).

    Why: the caching allocator carves every block out of a segment it holds, so each allocation's ``[addr, addr +
    size)`` lies inside a segment of its device -- one held at the dump (``spans``: each segment's address and
    ``total_size``; an expandable segment's mapped range reads as one), or one the history itself makes or gives back
    (``segment_alloc`` / ``segment_free``, ``segment_map`` / ``segment_unmap``: ``rd`` non-zero, its address and
    bytes).  Any segment ever known counts, whenever it lived: the test asks only what no allocator's record can
    hold -- a block at an address none of its segments ever covered (a generated history: facebookresearch/mosaic's
    writer places its allocations at random addresses).  :func:`history_beyond_segments` catches such a history only
    where it allocates more than the segments reserve; this catches it within its reserve too.  The segments as
    sorted merged ranges and ``np.searchsorted`` over the allocations a ``window`` at a time: memory bounded by the
    segments, not the history.  A segment's address past a signed 64-bit integer (the reader takes any whole number
    a pickle holds) places nothing either, and every end is held at the largest one: a damaged ``address`` of 2**64
    raised OverflowError and lost the whole file (h37-review66)."""
    if any(not 0 <= a <= _TOP for a, _ in spans):
        return None
    seg = np.flatnonzero((rd != 0) & (addr >= 0))
    lo = np.concatenate([np.array([a for a, n in spans if n > 0], dtype=np.int64), addr[seg]])
    hi = np.concatenate([np.array([min(a + n, _TOP) for a, n in spans if n > 0], dtype=np.int64),
                         _end(addr[seg], np.abs(rd[seg]))])
    starts, ends = _merged_ranges(lo, hi)
    count, total, first = 0, 0, -1
    for w in range(0, int(d.shape[0]), window):
        dw, aw = d[w:w + window], addr[w:w + window]
        made = np.flatnonzero((dw > 0) & (aw >= 0))
        a, n = aw[made], dw[made]
        k = np.searchsorted(starts, a, side="right") - 1
        inside = (k >= 0) & (_end(a, n) <= ends[np.maximum(k, 0)]) if starts.size else np.zeros(a.size, bool)
        off = made[~inside]
        if off.size:
            count, total = count + int(off.size), total + int(dw[off].sum())
            first = w + int(off[0]) if first < 0 else first
    return (count, total, first) if count else None


def _off(spans: list[tuple[int, int]] | None, span_streams: list[Any] | None, d: np.ndarray, rd: np.ndarray,
         at: np.ndarray, streams: tuple[np.ndarray, list[int]]) -> tuple[str, tuple[int, int, int]] | None:
    """A history's allocations that no segment of their device holds (:data:`OFF_SEGMENTS`), else that none of
    their own stream's holds (:data:`OFF_STREAM`); None where every one lies in its pool, or the segments are not
    known (an expandable segment's pages: ``spans`` None)."""
    if spans is None:
        return None
    off = history_off_segments(spans, d, rd, at)
    if off is not None:
        return OFF_SEGMENTS, off
    pooled = history_off_stream_segments(spans, span_streams or [None] * len(spans), d, rd, at, *streams)
    return (OFF_STREAM, pooled) if pooled is not None else None


#: The damage codes of :func:`_off`: allocations in no segment of their device, or in none of their stream's.
OFF_SEGMENTS, OFF_STREAM = "history_off_segments", "history_off_stream_segments"


def history_off_stream_segments(spans: list[tuple[int, int]], span_streams: list[Any], d: np.ndarray, rd: np.ndarray,
                                addr: np.ndarray, streams: np.ndarray, values: list[int],
                                window: int = 1 << 16) -> tuple[int, int, int] | None:
    """(allocations, bytes, index of the first) of a history's allocations that lie in no segment of their own
    stream, None where every one does -- or where no two streams are named (one pool: :func:`history_off_segments`
    said it all).

    Why per stream: the caching allocator keeps its pools per (device, stream) -- a block is carved from a segment
    of the stream it is allocated on (``Block::stream`` is its segment's; a free block is found only among its
    stream's), so an allocation that lies in a segment of another stream was not made by the allocator whose
    segments the file holds.  Every snapshot PyTorch writes names the stream of each segment (``segments[].stream``)
    and of each trace entry (``device_traces[][].stream``); an entry or a segment naming none (an older or a foreign
    writer) is checked against every segment of its device, as :func:`history_off_segments` checks.  The segments a
    stream holds are the dump's of that stream and those its history makes or gives back on it (``rd`` non-zero).
    ``streams``: per event, its stream's index in ``values`` (-1: none named).  Counted a ``window`` of events at a
    time, as :func:`history_off_segments`."""
    ids = {v: i for i, v in enumerate(values)}
    span_ids = np.array([ids.setdefault(v, len(ids)) if type(v) is int else -1 for v in span_streams], dtype=np.int32)
    seg = np.flatnonzero((rd != 0) & (addr >= 0))
    sized = np.array([n > 0 for _, n in spans], dtype=bool)
    owner = np.concatenate([span_ids[sized], streams[seg].astype(np.int32)])
    made = (d > 0) & (addr >= 0)
    pools = np.unique(streams[made])
    named = np.unique(owner[owner >= 0])
    if np.union1d(pools[pools >= 0], named).size < 2:
        return None
    lo = np.concatenate([np.array([a for a, n in spans if n > 0], dtype=np.int64), addr[seg]])
    hi = np.concatenate([np.array([min(a + n, _TOP) for a, n in spans if n > 0], dtype=np.int64),
                         _end(addr[seg], np.abs(rd[seg]))])
    # a stream's pool: its segments and those naming no stream; an allocation naming none: every segment
    held = {int(p): _merged_ranges(lo[mask], hi[mask])
            for p in pools.tolist() for mask in [(owner == p) | (owner < 0) if p >= 0 else np.ones(owner.size, bool)]}
    count, total, first = 0, 0, -1
    for w in range(0, int(d.shape[0]), window):
        dw, aw, sw = d[w:w + window], addr[w:w + window], streams[w:w + window]
        for p, (starts, ends) in held.items():
            mine = np.flatnonzero((dw > 0) & (aw >= 0) & (sw == p))
            off = mine[~_inside(starts, ends, aw[mine], dw[mine])]
            if off.size:
                count, total = count + int(off.size), total + int(dw[off].sum())
                first = w + int(off[0]) if first < 0 else min(first, w + int(off[0]))
    return (count, total, first) if count else None


def _inside(starts: np.ndarray, ends: np.ndarray, a: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per allocation ``[a, a + n)``: whether it lies inside one of the sorted, disjoint ranges ``[starts, ends)``."""
    if not starts.size:
        return np.zeros(a.size, bool)
    k = np.searchsorted(starts, a, side="right") - 1
    return (k >= 0) & (_end(a, n) <= ends[np.maximum(k, 0)])


#: The largest address a signed 64-bit column holds (:func:`history_off_segments`).
_TOP = int(np.iinfo(np.int64).max)


def _end(at: np.ndarray, size: np.ndarray) -> np.ndarray:
    """``at + size`` (both not negative) held at :data:`_TOP`: an end past it wrapped negative, and a block at the top
    of the range read as inside every segment."""
    return np.where(at > _TOP - size, _TOP, at + size)


def _merged_ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of the ranges ``[lo, hi)`` as sorted, disjoint ranges (starts, ends): touching or overlapping ones
    joined (a segment made, given back and made again at the same address; an expandable segment's pages mapped
    beside its range)."""
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    if not lo.size:
        return lo, hi
    reach = np.maximum.accumulate(hi)
    new = np.ones(lo.size, bool)
    new[1:] = lo[1:] > reach[:-1]
    group = np.cumsum(new) - 1
    ends = np.zeros(int(group[-1]) + 1, dtype=np.int64)
    np.maximum.at(ends, group, hi)
    return lo[new], ends


def _off_words(gpu: int, off: tuple[int, int, int], events: MemoryEvents, own_stream: bool = False) -> str:
    """:func:`history_off_segments`' finding in the damage's words; ``own_stream``:
    :func:`history_off_stream_segments`' (each lies in a segment of the GPU, none of its own stream's)."""
    n, size, first = off
    where = "none of the segments of its own stream covers" if own_stream else "none of its segments covers"
    rule = ("carves every block from a segment of the stream it is allocated on" if own_stream else
            "places every block inside a segment it holds")
    return (f"GPU {gpu}'s history allocates {n:,} block{'s' if n != 1 else ''} ({size / 2**20:,.1f} MiB) at addresses "
            f"{where} (the first {int(events.t[first]) / 1e12:,.3f} s into it): the caching "
            f"allocator {rule}, so the history and the segments are "
            f"{NOT_ONE_ALLOCATOR} (a generated or edited snapshot) -- its levels are the history's own sums, not the "
            "GPU's")


def history_short_of_dump(events: MemoryEvents, held_end: int) -> int:
    """The bytes a history's last event leaves live beyond what the dump holds (``held_end``: its allocated blocks
    and those freed on a stream but not yet completed): more than zero only when the history does not reach the
    dump -- every block it allocated and did not free is one of those at the dump, so can be no more."""
    return int(events.allocated[-1]) - held_end if events.allocated.size else 0


def _cast_copies(delta: np.ndarray, addr: np.ndarray, phase: np.ndarray, raw: list, dump: list[_Live],
                 bare: np.ndarray) -> np.ndarray:
    """Book autocast's cast copies as the parameters' where the snapshot records Python frames only (Windows writes no
    C++ frames, so ``at::autocast::cached_cast`` is never seen): ``phase`` is changed in place; returns the indices
    of the events booked (``MemoryEvents.cast_copy``: what the cache costs is a finding of its own).

    Why: under autocast each fp32 parameter's 16-bit copy is made by the first op that uses it in the region -- in a
    module's forward, so its frames read as an activation's -- kept for the whole region, and all freed at its exit
    (``autocast_mode.cpp``: the cache is cleared when the outermost region ends).  LilySu's bf16 forward under
    ``no_grad`` read 3.07 GiB of such copies as activations (survey h37-survey9).  Three facts together tell a copy,
    none alone: a forward allocation of half the bytes of a block held since before the history (an fp32
    parameter: no history entry allocated it, or ``Module._apply`` moved it; half its block, or half the bytes its
    tensor asked for, rounded as the allocator rounds: :func:`_copy_blocks`); freed in one run of frees with no allocation between, with the other
    such blocks (the region's exit) -- or still live at the dump -- most of them having outlived forward tensors made
    after them; and, in that run, no more blocks of a size than held blocks of twice it (one copy per parameter).
    ``bare``: per event, its stack holds no frame (autograd's engine thread under ``stacks="python"``): a run that
    follows such an allocation made after the blocks is a backward's, which frees the forward's saved activations
    (:func:`_backward_before`), not a region's exit."""
    fwd = MEMORY_PHASES.index("forward")
    booked: list[np.ndarray] = [np.zeros(0, np.int64)]
    if not dump or _has_cpp_frames(raw):
        return booked[0]
    if bare.size and bare.all() and not any(b.raw for b in dump):  # ``context=None``: no phase tells the forward's
        return _bare_cast_copies(delta, addr, phase, dump)
    if not (phase == fwd).any():
        return booked[0]
    held = _copy_counts(_held_blocks(delta, addr, phase, dump))
    alloc = np.flatnonzero(delta > 0)
    cand = alloc[(phase[alloc] == fwd) & np.isin(delta[alloc], np.fromiter(held, np.int64, len(held)))]
    if cand.size < 2:
        return booked[0]
    free_at = pair_frees(delta, addr)
    outlived = _outlives_later(alloc[phase[alloc] == fwd], free_at)
    runs = np.searchsorted(alloc, free_at[cand])  # allocations before each free: frees with none between share it
    for run in np.unique(runs).tolist():
        mine = cand[runs == run]
        if _backward_before(mine, free_at, alloc, bare):
            continue
        mine = _without_strays(mine, delta, held)
        if mine.size >= 2 and 2 * int(outlived[mine].sum()) >= mine.size and _passes_copies(delta[mine], held):
            phase[mine] = MEMORY_PHASES.index("parameters")
            booked.append(mine)
    return np.concatenate(booked)


def _passes_copies(sizes: np.ndarray, held: dict[int, int]) -> bool:
    """Whether one run's copies (``sizes``, in the order they were made) are one copy per weight
    (:func:`_one_per_weight`), or several passes' caches each of one copy per weight: the run cut into ``g`` equal
    parts in the order made, ``g`` the fewest its most repeated size asks, every part holds the same sizes.

    Why: a loop that rebinds ``logits = model(x)`` with autograd on frees the previous pass's graph -- its autocast
    copies among them -- only once the next pass has returned, after the history's last allocation; that pass's
    graph, still live at the dump or freed by the script's teardown, ends in the same run of frees.  Two recorded
    passes held two copies per weight in one run, so no copy was booked and the cache read as activations
    (``synthetic.memsnapshot.windows_autocast_forward(grad=True, passes=3)``; h37-snap60's *Left* 4).  A model's
    passes make the same copies, in the same order: each part the same sizes is what passes repeat, and tensors that
    merely share a copy's size do not line up so."""
    if _one_per_weight(sizes, held):
        return True
    uniq, counts = np.unique(sizes, return_counts=True)
    g = max(-(-int(c) // max(held.get(int(sz), 0), 1)) for sz, c in zip(uniq.tolist(), counts.tolist()))
    if sizes.size % g:
        return False
    parts = np.sort(sizes.reshape(g, -1), axis=1)
    return bool((parts == parts[0]).all()) and _one_per_weight(parts[0], held)


#: the most of a run's bytes that the sizes it holds more blocks of than weights could have a copy of
#: (:func:`_without_strays`) may weigh for the rest to be read as a cache's copies
_STRAY_SHARE = 0.1


def _without_strays(mine: np.ndarray, delta: np.ndarray, held: dict[int, int]) -> np.ndarray:
    """``mine`` (one run's candidate copies) less the sizes it holds more often than weights could have a copy of
    them, where those weigh under :data:`_STRAY_SHARE` of its bytes; else ``mine`` as it is.

    Why: one copy per weight (:func:`_one_per_weight`) was asked of the whole run, and a forward's small tensors
    whose bytes happen to be half a small weight's (a 16 KiB and a 512 B one, 109 of them, beside 253 copies of
    1.78 GiB) failed it for every copy: a bf16 forward under autograd read with Python frames only (``stacks="python"``
    or Windows) booked no cache, and counted it as 1.78 GiB of activations kept for a backward (a metamorphic check
    on ``snapshot_forward_rebound_bf16_autograd`` with its C++ frames dropped).  Sizes that break the bound cannot be
    the cache's alone; where they are a small part of the run's bytes they are tensors of their own, and the rest are
    still held to the bound.  Where they weigh more the run is left whole, and fails the bound as before."""
    sizes = delta[mine]
    uniq, counts = np.unique(sizes, return_counts=True)
    over = uniq[counts > np.fromiter((held.get(int(s), 0) for s in uniq.tolist()), np.int64, uniq.size)]
    if not over.size:
        return mine
    stray = np.isin(sizes, over)
    if int(sizes[stray].sum()) >= _STRAY_SHARE * int(sizes.sum()):
        return mine
    return mine[~stray]


#: the least share of the 16-bit copies of every block held since before the history that one run of frees must
#: release to be read, without stacks, as an autocast region's cache (:func:`_bare_cast_copies`)
_BARE_CACHE_SHARE = 0.5


def _bare_cast_copies(delta: np.ndarray, addr: np.ndarray, phase: np.ndarray, dump: list[_Live]) -> np.ndarray:
    """The allocations of a history recorded with no frame at all (``_record_memory_history(context=None)``) that
    are autocast's cached copies of the weights, booked as the parameters' (``phase`` is changed in place); the
    indices of those events (``MemoryEvents.cast_copy``).

    Why: with no frame no allocation reads as the forward's, so :func:`_cast_copies`' phase test finds nothing, and
    the climb to the peak (``metrics.memory._climb``) counts the cache -- a copy of each weight made at its first use
    and held to the region's exit -- as activations kept for a backward: the stackless ``snapshot_nograd_bf16`` and
    the three ``snapshot_autocast_cache_ctx*`` were told to run under inference mode (h37-snapann's left (a)).  The
    size test alone (half a held block) also matches a no-grad forward's own tensors (CS336's ``forward_no_grad``:
    170 runs of 2 to 6 of them), so three accounting bounds stand in for the frames: (1) one run of frees (the
    region's exit) releases the copies, each size no more often than weights that have it (one copy per weight);
    (2) most of them outlived blocks made after them (:func:`_outlives_later`), as a cache does and a layer's
    output does not; (3) the run releases at least :data:`_BARE_CACHE_SHARE` of the bytes a 16-bit copy of every
    block live at the dump would take -- a region under autocast casts the model's weights, not two of them
    (measured: 92% and 98% on the four real caches; 3% at most in the no-grad forwards).  The weights a copy may be
    of are the blocks live at the dump made before the run's first copy (:func:`_made_at`): before the history, or
    loaded inside it, which no frame marks without stacks (``forward_only(cast_of_weights=True)``: main booked none
    and warned of a forward kept for a backward, h37-stackless2).  A history that also holds an optimizer's state
    falls under the third bound and is left as before: a moment is a weight's size, and nothing in the segments
    (size, request, stream, pool, address) tells it from the weight."""
    made = _made_at(delta, addr, dump)
    alloc = np.flatnonzero(delta > 0)
    every = _copy_counts(dump)
    whole = sum(b.size // 2 for b in dump)  # all it holds: a training run's state made after a copy weighs too
    cand = alloc[np.isin(delta[alloc], np.fromiter(every, np.int64, len(every)))]
    if cand.size < 2:
        return np.zeros(0, np.int64)
    free_at = pair_frees(delta, addr)
    outlived = _outlives_later(alloc, free_at)
    runs = np.searchsorted(alloc, free_at[cand])  # allocations before each free: frees with none between share it
    mines = {run: cand[runs == run] for run in np.unique(runs).tolist()}
    # A copy is made after its weight: each run's weights are the blocks made before its first copy.  The runs taken
    # by their first copy, those blocks only grow: each block's copies are counted once, not once per run (a
    # stackless 2.7B forward's 916 runs over 2,600 blocks: 6.5 s, h37-speed60).
    copies = [_copy_blocks(b.size, b.requested) for b in dump]
    by_made = sorted(range(len(dump)), key=made.__getitem__)
    held: dict[int, int] = {}
    counted = 0
    booked: dict[int, np.ndarray] = {}
    for run in sorted(mines, key=lambda r: int(mines[r][0])):  # ``cand`` ascends: a run's first copy is its first
        mine = mines[run]
        while counted < len(by_made) and made[by_made[counted]] < int(mine[0]):
            for c in copies[by_made[counted]]:
                held[c] = held.get(c, 0) + 1
            counted += 1
        mine = mine[np.fromiter((d in held for d in delta[mine].tolist()), bool, mine.size)]
        if mine.size >= 2 and 2 * int(outlived[mine].sum()) >= mine.size and _one_per_weight(delta[mine], held) \
                and int(delta[mine].sum()) >= _BARE_CACHE_SHARE * whole > 0:
            phase[mine] = MEMORY_PHASES.index("parameters")  # held with the weights, as the frames' reading books them
            booked[run] = mine
    return np.concatenate([np.zeros(0, np.int64)] + [booked[r] for r in sorted(booked)])


def _torn_down(delta: np.ndarray, addr: np.ndarray) -> list[_Live]:
    """The blocks the history's teardown freed that it never allocated: the frees after its last allocation
    (``del model`` after the loop, before the dump) of blocks made before the history -- the weights a script held
    to its end, as :class:`_Live` blocks (no stack: the frees carry the teardown's, not the weight's).  Read only
    where the dump holds no weight (a history that keeps its model to the dump is read as before).

    Why: autocast's cast copies are told by the weights they copy (:func:`_cast_copies`, :func:`_activation_casts`:
    half a weight's bytes), and the weights were read off the blocks live at the dump alone; a script that frees its
    model before dumping (session 55 lead's teardown; ``synthetic.memsnapshot.torn_down``) left none, and its cache
    -- the same history -- read as activations (h37-wild57m; session 56's h37-wild56m *Left* 4)."""
    end = _last_positive(delta)
    tail = np.flatnonzero(delta[end + 1:] < 0) + end + 1 if end >= 0 else np.zeros(0, np.int64)
    if not tail.size:
        return []
    before = _last_allocation(delta, addr, addr[tail]) < 0  # made before the history
    made = tail[before][~_twins(-delta[tail[before]], delta)]
    return [_Live.freed(-int(delta[k]), int(addr[k])) for k in made.tolist()]


#: Events a window of the history (:func:`_last_positive`, :func:`_twins`, :func:`_last_allocation`): each reads the
#: whole history a window at a time, no whole-history temporary beside its columns (h37-snap60).
_WINDOW = 1 << 20


def _last_positive(delta: np.ndarray) -> int:
    """The history's last allocation (-1: none), a window at a time from the end (no whole-history index array)."""
    for e in range(delta.size, 0, -_WINDOW):
        hit = np.flatnonzero(delta[max(e - _WINDOW, 0):e] > 0)
        if hit.size:
            return int(hit[-1]) + max(e - _WINDOW, 0)
    return -1


def _twins(sizes: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Per block of ``sizes`` (made before the history, freed after its last allocation, in the order freed): whether
    it is the twin of one of the history's own allocations (``delta`` > 0, their bytes) -- as many of each size as
    the history allocated, the first freed.

    Why: a loop whose pass rebinds its output (``logits = model(x)`` with autograd on) frees the previous pass's graph
    after this pass's last allocation, and that graph -- activations and autocast's copies, made before the history --
    is what this pass allocates again, size for size; read as the teardown's weights, its 1,233 blocks beside 331
    weights gave a copy's half to most activations, and the run of copies failed the one-copy-per-weight bound
    (``snapshot_forward_rebound_bf16_autograd`` with Python frames only, torn down: its cache note lost, sessions
    57-59 *Left*).  A weight whose size the pass also allocates is taken with them, up to that many (there: 36 of 73
    norm weights of 5 KiB, whose copies weigh nothing); the first freed go, as the rebinding frees before the
    teardown."""
    out = np.zeros(sizes.size, bool)
    if not sizes.size:
        return out
    size = np.unique(sizes)
    count = np.zeros(size.size, np.int64)
    for s in range(0, delta.size, _WINDOW):  # the history's allocations of those sizes, counted a window at a time
        d = delta[s:s + _WINDOW]
        d = d[d > 0]
        at = np.minimum(np.searchsorted(size, d), size.size - 1)
        count += np.bincount(at[size[at] == d], minlength=size.size)
    order = np.argsort(sizes, kind="stable")  # each size's blocks in the order freed
    ordered = sizes[order]
    first = np.searchsorted(ordered, ordered, side="left")
    rank = np.arange(sizes.size) - first  # place among the blocks of its size
    at = np.searchsorted(size, ordered)
    known = (at < size.size) & (size[np.minimum(at, size.size - 1)] == ordered)
    out[order] = known & (rank < np.where(known, count[np.minimum(at, size.size - 1)], 0))
    return out


def _last_allocation(delta: np.ndarray, addr: np.ndarray, addresses: np.ndarray) -> np.ndarray:
    """Per address of ``addresses``, the event that allocated a block there last (-1: none in the history).

    Why a window of the history at a time, looked up among the few addresses asked: a history's read costs its columns
    and a few arrays per entry, never an object per entry (``test_snapshot_columns``: a dict of 50,000 addresses
    tripled the read's growth per entry), and the whole history's allocations sorted by address at once -- their
    indices, addresses and order, ~24 bytes an event -- set the reader's peak (a 1 GB history: 600 MB read, 438
    before the teardown's weights were read; h37-snap60)."""
    q = np.asarray(addresses, np.int64)
    if not q.size:
        return np.full(0, -1, np.int64)
    asked, inverse = np.unique(q, return_inverse=True)
    last = np.full(asked.size, -1, np.int64)
    for s in range(0, addr.size, _WINDOW):
        a = addr[s:s + _WINDOW]
        at = np.minimum(np.searchsorted(asked, a), asked.size - 1)
        hit = np.flatnonzero((asked[at] == a) & (delta[s:s + _WINDOW] > 0))
        np.maximum.at(last, at[hit], hit + s)
    return last[inverse.reshape(-1)]



def _made_at(delta: np.ndarray, addr: np.ndarray, dump: list[_Live]) -> list[int]:
    """Per block live at the dump, the event that allocated it last (-1: before the history).  Why: without frames
    nothing marks the weights a history made (a model loaded with ``context=None`` recording: no ``Module._apply``
    frame), but a block still live at the dump that was made before an autocast region's copies could be the weight
    one of them copies, and a block made after could not -- the order is physics where the frames are absent."""
    return _last_allocation(delta, addr, np.array([b.address for b in dump], np.int64)).tolist()


def _held_blocks(delta: np.ndarray, addr: np.ndarray, phase: np.ndarray, dump: list[_Live],
                 cast: np.ndarray | None = None) -> list[_Live]:
    """The parameters live at the dump: blocks no history entry allocated (made before it), or moved to the GPU in
    it by ``Module._apply`` (a parameters-phase allocation of the block's or the tensor's bytes: a trace entry records
    the request) -- not a cast autocast made (``cast``: booked with the parameters too, yet a copy, never a weight)."""
    made = _last_allocation(delta, addr, np.array([b.address for b in dump], np.int64)).tolist()  # its last allocation
    params = MEMORY_PHASES.index("parameters")
    out = []
    for b, k in zip(dump, made):
        if k < 0 or (phase[k] == params and delta[k] in (b.size, b.requested) and (cast is None or not cast[k])):
            out.append(b)
    return out


def _held_by_lifetime(delta: np.ndarray, addr: np.ndarray, phase: np.ndarray, op: np.ndarray | None = None,
                      unnamed: list[bool] | None = None) -> np.ndarray:
    """Per event: an allocation its frames leave "other" that is held across steps by its lifetime -- made before the
    history's first forward allocation and never freed in the history.

    Why: the frames name how parameters reach the GPU only for the calls we know (``Module._apply``, a PyTorch
    module's constructor); a checkpoint's loader puts each weight there with a tensor's ``.to()``/``copy_`` under its
    own name (Hugging Face's ``from_pretrained(device_map=...)`` through accelerate's ``set_module_tensor_to_device``,
    safetensors' ``load_file(device=)``, ``torch.load(map_location="cuda")``, a user's loader), and no list of
    loaders is whole.  What a block is, is read off its life instead: the weights (and buffers) are made before the
    first forward reads them and outlive every step; a loader's staging buffer is freed before the forward (not
    kept), an optimizer's state is made in its first ``step`` (after the forward; its frames say ``torch/optim``
    where there are frames), a batch is freed when the next replaces it.  Where no allocation is a forward's (no
    frames at all: ``context=None``, or a model called outside ``nn.Module``) nothing marks the first pass: left as
    the frames say.

    A weight is made once.  A block whose user line (``op``, the label ids; ``unnamed``: per label, it names no
    line) allocates its bytes again after the first forward, each later block kept to the dump too, is the first of
    a loop's repeats -- the history began at an iteration's start, and the block is that iteration's (a tensor each
    iteration makes before its forward and keeps: a leak's first round), not a weight.  Why: Ascend's
    ``memory_leaks_demo.py`` (codeasier/MemSnapDump's test snapshots, recorded from its loop's first iteration)
    keeps a 40-MiB tensor from ``train_one_step``'s line 11 every iteration; the first was booked a weight, leaving
    2 rounds of the leak check's 3, and the 120 MiB the loop kept read "no memory check fired" (h37-wild54m)."""
    out = np.zeros(delta.size, dtype=bool)
    fwd = np.flatnonzero((delta > 0) & (phase == MEMORY_PHASES.index("forward")))
    if not fwd.size:
        return out
    first = int(fwd[0])
    cand = np.flatnonzero(delta[:first] > 0)
    cand = cand[(phase[cand] == MEMORY_PHASES.index("other")) & (addr[cand] >= 0)]  # a block we can follow
    if not cand.size:
        return out
    freed = pair_frees(delta, addr)
    cand = cand[freed[cand] == delta.size]
    if op is not None and unnamed is not None and cand.size:
        cand = cand[~_repeated_later(delta, op, unnamed, freed, first, cand)]
    out[cand] = True
    return out


def _repeated_later(delta: np.ndarray, op: np.ndarray, unnamed: list[bool], freed: np.ndarray, first: int,
                    cand: np.ndarray) -> np.ndarray:
    """Per block of ``cand`` (made before event ``first``, the history's first forward allocation, and never freed):
    whether its user line allocates its bytes again after ``first`` and keeps every such later block to the dump
    (``freed``: :func:`_frees`) -- per-iteration work, not a weight (:func:`_held_by_lifetime`).  A block no line
    names (a history without stacks: every allocation one site) is never so read."""
    named = np.zeros(len(unnamed) + 1, dtype=bool)  # the last: op -1, no stack
    named[:len(unnamed)] = ~np.asarray(unnamed, dtype=bool)
    later = np.flatnonzero(delta[first:] > 0) + first
    later = later[named[op[later]]]
    if not later.size:
        return np.zeros(cand.size, dtype=bool)
    key = op.astype(np.int64) * (1 << 40) + delta
    kept_keys = np.unique(key[later[freed[later] == delta.size]])
    freed_keys = np.unique(key[later[freed[later] != delta.size]])
    mine = key[cand]
    return named[op[cand]] & np.isin(mine, kept_keys) & ~np.isin(mine, freed_keys)


def _uncached_phases(stacks: list, used: list[int], cached_of: np.ndarray, budget: "_Budget") -> np.ndarray:
    """Per stack (the last: none), the phase its frames give past autocast's cast (the module's forward that cast
    an activation), for the stacks that run through the cast cache (``cached_of``); -1 for the others."""
    out = np.full(len(stacks) + 1, -1, dtype=np.int8)
    for k in used:
        if cached_of[k]:
            out[k] = budget.phase_past_cache(stacks[k])
    return out


def _activation_casts(delta: np.ndarray, addr: np.ndarray, phase: np.ndarray, cast: np.ndarray, dump: list[_Live],
                      uncached: np.ndarray) -> None:
    """Unbooks, in place, the casts through autocast's cache (``cast``, ``phase``) that copy no parameter: their
    bytes are half of no weight's block.  They are activations' casts, booked to the phase their frames give past the
    cast (``uncached``: the module's forward).

    Why: ``at::autocast::cached_cast`` casts every fp32 input of an op; it *keeps* only the casts of leaves that
    require grad (the weights), yet every cast it makes runs through it, so its frame alone read the activations'
    casts -- under autograd saved for the backward, freed with the graph -- as the weights' cache.  Hyperion-shuo's
    CS336 forward with autograd under bf16 (h37-heldcol's *Left*): 543 casts live at the peak, 290 of them
    (253 x 0.3125 MiB, the 128 x 1280 inputs; 36 x 0.625 MiB, the attention scores; the logits' fp32 cast for the
    loss) in sizes no weight halves, the other 253 the bf16 copies of its linear weights; ``inference_mode`` frees
    the 290, and the saving stayed short of the twins' difference by their bytes.  A 16-bit copy of a weight takes half its weight's bytes (:func:`_copy_blocks`): physics, not a
    name.  The weights are the blocks held since before the history or moved in by ``Module._apply``
    (:func:`_held_blocks`); where none of the casts halves one of them the weights are not in evidence (freed before
    the dump, or made by code no frame marks) and every cast is left as the cache, as before."""
    at = np.flatnonzero(cast)
    if not at.size:
        return
    held = _copy_counts(_held_blocks(delta, addr, phase, dump, cast))
    copy = np.isin(delta[at], np.fromiter(held, np.int64, len(held)))
    if not copy.any() or copy.all():
        return
    other = at[~copy]
    cast[other] = False
    phase[other] = uncached[other]


def _copy_counts(blocks: list[_Live]) -> dict[int, int]:
    """A copy's block bytes -> how many of ``blocks`` (fp32 parameters) could have a 16-bit copy of them."""
    held: dict[int, int] = {}
    for b in blocks:
        for c in _copy_blocks(b.size, b.requested):
            held[c] = held.get(c, 0) + 1
    return held


def _one_per_weight(sizes: np.ndarray, held: dict[int, int]) -> bool:
    """Whether no size among ``sizes`` (one run's copies) occurs more often than parameters could have a copy of it:
    autocast caches one copy per weight per region."""
    uniq, counts = np.unique(sizes, return_counts=True)
    return all(c <= held.get(int(sz), 0) for sz, c in zip(uniq.tolist(), counts.tolist()))


#: the caching allocator's least block: every block's bytes are a multiple of it (``kMinBlockSize``)
_BLOCK_ROUND = 512


def _copy_blocks(size: int, requested: int) -> set[int]:
    """The bytes of the block a 16-bit copy of a 32-bit tensor held in a block of ``size`` bytes (``requested`` of
    them asked for) gets: half of the block, as before, and half of the tensor's own bytes rounded up to the
    allocator's least block.  Why: a large block is left unsplit when less than 1 MiB of its segment would remain, so
    a 25 MiB fp32 weight sits in a 26 MiB block while its bf16 copy is 12.5 MiB -- CS336's 2.7B model under autocast
    (h37-autocast): 128 of its 224 weights' copies were missed by the block's half alone."""
    out = {size // 2} if size % 2 == 0 else set()
    if requested <= 0:  # a block known by its free alone (:meth:`_Live.freed`): any request it could have held
        least = max(1, size - _UNSPLIT) if size > _UNSPLIT else size - _BLOCK_ROUND + 1
        lo = -(-((least + 1) // 2) // _BLOCK_ROUND) * _BLOCK_ROUND
        return out | set(range(max(lo, _BLOCK_ROUND), size // 2 + 1, _BLOCK_ROUND))
    half = (requested + 1) // 2
    out.add(-(-half // _BLOCK_ROUND) * _BLOCK_ROUND)
    return out


#: the most a large block may exceed its tensor's rounded request: the allocator leaves a block unsplit when what
#: would remain of it is no more than this (``kSmallSize``, 1 MiB) -- a request lies within it below its block
_UNSPLIT = 1 << 20


def _backward_before(mine: np.ndarray, free_at: np.ndarray, alloc: np.ndarray, bare: np.ndarray) -> bool:
    """Whether an allocation with no frame lies after the last of the blocks ``mine`` was made and before the first
    is freed.  Why: autocast's cache is freed when its region exits, before ``loss.backward()`` runs; a backward
    recorded with ``stacks="python"`` allocates on autograd's engine thread, with no frame, and frees the forward's
    saved activations between those allocations and in runs after them -- activations exactly half a weight's bytes
    (``training_iterations(mib=32)``: 96 MiB of them) read as the cast copies of the weights (h37-snapforms)."""
    first_free = int(free_at[mine].min())
    between = alloc[(alloc > int(mine.max())) & (alloc < first_free)]
    return bool(bare[between].any())


def _outlives_later(fwd: np.ndarray, free_at: np.ndarray) -> np.ndarray:
    """Bool per event (True only for forward allocations ``fwd``, ascending): some forward allocation made after it
    was freed before it -- it stayed while later layers made and freed their tensors, as a cached copy does and as the
    last layer's outputs, freed together at the pass's end, do not."""
    out = np.zeros(free_at.size, bool)
    if fwd.size < 2:
        return out
    later_min = np.minimum.accumulate(free_at[fwd][::-1])[::-1]  # the earliest free among allocations from k on
    out[fwd[:-1]] = later_min[1:] < free_at[fwd[:-1]]
    return out


def _has_cpp_frames(raw: list) -> bool:
    """Whether any allocation's stack holds a C++ frame (a ``stacks="all"`` record): a frame whose file is no Python
    source (``.py``) nor code Python compiled from a string (``<string>``, ``<frozen ...>``)."""
    return any(isinstance(f, (list, tuple)) and any(isinstance(x, dict) and not _python_file(_str(x.get("filename"), ""))
                                                    for x in f[:MAX_SCAN]) for f in raw if f)


def _python_file(name: str) -> bool:
    return name.endswith(".py") or name.startswith("<")


def _last_allocations(entries: Any) -> dict[int, int]:
    """Per address, the index of the history's last allocation there: the allocation a block live at the dump at that
    address came from (:func:`_live_at`)."""
    return {_int(e.get("addr"), -1): i for i, e in enumerate(entries) if e.get("action") in _ALLOC}


def _live_at(before: list[dict], dump: list[_Live], t0_us: int, budget: "_Budget",
             kept: np.ndarray | None = None, last: dict[int, int] | None = None
             ) -> tuple[list[SnapshotBlock], dict[str, int], dict[str, dict[str, int]]]:
    """What was live after the entries ``before``: the blocks they allocated and had not freed, and those live at
    the dump that the trace never allocated (older than its history).  The largest, every one's bytes by phase, and
    by holder and phase the bytes whose maker the stacks name (:func:`_holder`); ``kept``: per event, an allocation
    held across steps by its lifetime (:func:`_held_by_lifetime`), booked with the parameters as the events are.

    An allocation whose entry carries no stack that is the history's last at its address (``last``:
    :func:`_last_allocations`) made the block live there at the dump, whose stack it takes.  Why:
    ``_record_memory_history(context="state")`` gives the blocks their stacks and the entries none, and an OOM
    observer's dump holds the blocks live at the OOM -- an OOM's live bytes were "allocations of no known phase",
    what frees the most 0 B, where the dump names every one (h37-snap69: ``oom_activations``)."""
    dump_at = {b.address: b for b in dump} if last else {}
    live: dict[int, _Live] = {}
    seen: set[int] = set()
    k = -1  # the event index (:func:`_dict_events` counts the same actions)
    for i, e in enumerate(before):
        action = e.get("action")
        a = _int(e.get("addr"), -1)
        k += action in _ALLOC or action in _FREE or action in _SEG_ADD or action in _SEG_DROP
        if action in _ALLOC:
            seen.add(a)
            asked = _int(e.get("size"), 0)  # the request: its block, the unit of the OOM's totals, holds it rounded
            frames = e.get("frames")
            if not frames and a in dump_at and last.get(a) == i:
                frames = dump_at[a].raw  # the block live at the dump this allocation made: its stack
            live[a] = _Live(int(rounded_blocks(np.array([asked], np.int64), _BLOCK_ROUND)[0]), a, frames,
                            _time_ps(e, i, t0_us), budget, requested=asked)
            if kept is not None and 0 <= k < kept.size and kept[k]:
                live[a].phase = "parameters"
        elif action in _FREE:
            live.pop(a, None)
    blocks = [*live.values(), *(b for b in dump if b.address not in seen)]
    by_phase: dict[str, int] = {}
    for b in blocks:
        by_phase[b.phase] = by_phase.get(b.phase, 0) + b.size
    by_holder: dict[str, dict[str, int]] = {}
    holder_of: dict[int, str] = {}
    for b in blocks:
        h = holder_of[id(b)] = budget.stack_of(b.raw, _holder)
        if h:
            mine = by_holder.setdefault(h, {})
            mine[b.phase] = mine.get(b.phase, 0) + b.size
    top = []
    for b in sorted(blocks, key=lambda b: -b.size)[:TOP_BLOCKS]:
        top.append(b.block(budget))
        top[-1].holder = holder_of[id(b)]
    return top, by_phase, by_holder


def _unseen_by_holder(events: MemoryEvents, dump: list[_Live], budget: "_Budget") -> dict[str, int]:
    """Bytes per maker (``HOLDERS``) of the blocks live at the dump at an address no event of the history touches.
    Why: the history books what it never saw allocated as one remainder, held across steps; a block its stack names
    (a KV cache made before ``_record_memory_history`` began: SketchKV's 2.7 GiB) was then read as the weights.  An
    allocator frees a block before it reuses its address, so a block live at the dump whose address the history
    never names was allocated before the history and live at every one of its events."""
    if not dump:
        return {}
    # the addresses as arrays, not a set of Python ints: the history may hold millions of entries, and a set costs
    # some 60 bytes an address where the reader's columns cost 29 an entry (test_snapshot_columns' bound)
    live = np.fromiter((x.address for x in dump), np.int64, len(dump))
    unseen = ~np.isin(live, events.addr[events.addr >= 0])
    out: dict[str, int] = {}
    for x, fresh in zip(dump, unseen.tolist()):
        if fresh and (h := budget.stack_of(x.raw, _holder)):
            out[h] = out.get(h, 0) + x.size
    return out


def _held_unseen(events: MemoryEvents, dump: list[_Live]) -> np.ndarray:
    """The requests (``_Live.requested``) of the blocks live at the dump at an address no event of the history
    touches (``MemoryEvents.held_unseen``): made before the history and live through all of it.  Why their sizes: the
    history's own entries record requests, and a pass's blocks are told from the weights by repeating them
    (``job.iterations.earlier_pass_held``): a forward-only loop with autograd on, dumped before its output is rebound,
    holds the previous pass's graph to the dump (saravargas88's 2.7B benchmark: 773 blocks, 5.23 GiB, the sizes of
    the recorded pass's 773), which no free of the history shows."""
    if not dump:
        return np.zeros(0, np.int64)
    live = np.fromiter((x.address for x in dump), np.int64, len(dump))
    unseen = ~np.isin(live, events.addr[events.addr >= 0])
    return np.fromiter((x.requested for x, fresh in zip(dump, unseen.tolist()) if fresh), np.int64)


def _unseen_live(events: MemoryEvents, dump: list[_Live], budget: "_Budget") -> dict[tuple[str, int], int]:
    """Blocks live at the dump at an address no event of the history touches, counted by the user's line that made
    them (as the history's events name theirs: ``MemoryEvents.op_names``) and their bytes
    (``MemorySnapshot.unseen_live``).  Why: a history that begins late shows a leak's last passes only; the blocks
    its earlier passes kept are still live at the dump, made at the same line with the same bytes."""
    if not dump:
        return {}
    live = np.fromiter((x.address for x in dump), np.int64, len(dump))
    unseen = ~np.isin(live, events.addr[events.addr >= 0])
    out: dict[tuple[str, int], int] = {}
    for x, fresh in zip(dump, unseen.tolist()):
        if fresh:
            key = (budget.label(x.raw, spend=True), x.size)
            out[key] = out.get(key, 0) + 1
    return out


def _holder(frames: Any) -> str:
    """The maker of a block its stack names apart from its phase (``HOLDERS``), "" for none: SDPA's math backend
    (:func:`_attention_math`) before a KV cache's code (:func:`_kv_cache`) -- a cache's update that attends through
    the math backend makes its scores there, not its cache."""
    return "attention_math" if _attention_math(frames) else "kv_cache" if _kv_cache(frames) else ""


def _kv_cache(frames: Any) -> bool:
    """Whether an allocation's stack runs through a KV cache's code (``pytorch.is_kv_cache_frame``, the first
    :data:`MAX_SCAN` frames).  Why: a cache preallocated before the first forward (vLLM and SGLang after their
    profiling pass, a static cache, gpt-fast's ``setup_caches``) lives as long as the weights and was read as them
    (:func:`_held_by_lifetime`), and one grown token by token in the forward (``generate()``'s ``DynamicCache``) as
    its activations; at an OOM neither kind's fix (sharding, checkpointing) shrinks it."""
    if not isinstance(frames, (list, tuple)):
        return False
    return any(isinstance(f, dict) and pytorch.is_kv_cache_frame(_str(f.get("filename"), ""), _str(f.get("name"), ""))
               for f in frames[:MAX_SCAN])


def _attention_math(frames: Any) -> bool:
    """Whether an allocation's stack is attention computed op by op (``pytorch.writes_attention_scores``, the first
    :data:`MAX_SCAN` frames): SDPA's math backend, or a softmax run as its own op inside an attention function.  Why:
    either writes the attention's scores and probabilities to memory, quadratic in the sequence, and autograd keeps
    them for the backward where it records the forward; a fused kernel keeps neither -- at an OOM, the fix that needs
    no recompute and no smaller batch.  The math backend shows only in C++ frames (``stacks="all"``); a model's own
    attention and softmax show in its Python frames too."""
    if not isinstance(frames, (list, tuple)):
        return False
    return pytorch.writes_attention_scores([_str(f.get("name"), "") for f in frames[:MAX_SCAN] if isinstance(f, dict)])


def _iteration_ends(notes: Any, t0_us: int,
                    said: Callable[[str], bool] = pytorch.is_step_end_event) -> tuple[int, ...]:
    """When the optimizer's steps ended (ps from the first entry), sorted: each ends an iteration of the job (``said``:
    the ranges whose ends are read, the steps by default).  Only annotations with a time on the entries' clock
    (``time_us``) count."""
    ends = {(_int(a.get("time_us"), -1) - t0_us) * 1_000_000 for a in notes
            if isinstance(a, dict) and a.get("stage") == "END" and _on_clock(a.get("time_us"), t0_us)
            and isinstance(a.get("name"), str) and said(a["name"])}
    return tuple(sorted(ends))[:MAX_ANNOTATIONS]


def _span_with_notes(span: tuple[int, int] | None, notes: Any, t0_us: int) -> tuple[int, int] | None:
    """The history's span (ps from its first entry) run on to its last annotation on the entries' clock.

    Why: an annotation is recorded on the entries' clock like an allocation -- wrong assumption *a snapshot's time ends
    with its last allocator entry*.  An optimizer step that frees nothing ends after the last entry, and the iteration
    it closes (``iteration_ends_ps``) then ran past the capture: wild/snapshot_adam_iterations' step 2 ended at 1019.590
    ms of a 1019.517 ms capture (h37-audit31)."""
    if span is None:
        return None
    last = max((_int(a.get("time_us"), -1) for a in notes if isinstance(a, dict) and _on_clock(a.get("time_us"), t0_us)),
               default=None)
    return span if last is None else (span[0], max(span[1], (last - t0_us) * 1_000_000))


def _on_clock(t: Any, t0_us: int) -> bool:
    """Whether an annotation's ``time_us`` is a time on the entries' clock: an integer within the longest history
    (:data:`MAX_SPAN_US`) of their first, so its picoseconds fit the trace model's int64."""
    return type(t) is int and t >= 0 and abs(t - t0_us) <= MAX_SPAN_US


def _entries(items: list, cols: "_Compactor | None", budget: "_Budget") -> "list | _Rows":
    """A device's trace entries of the right shape, as far as the budget walks: a list whose every item is a row
    (:data:`ROW`) is read as its compactor's columns (:class:`_Rows`), counted against the budget as one walk counts
    them; any other list item by item, each ROW made its row's :class:`_Entry`."""
    n = len(items)
    if cols is not None and n and items.count(ROW) == n:
        take = max(0, min(n, budget.limit - budget.n))
        budget.n += take
        if take < n:
            budget.left_out = True
        span = cols.contiguous(items)
        if span is not None and span[1] - span[0] == n:
            return _Rows(cols, slice(span[0], span[0] + take))
        rows = cols.rows_of(items)
        if rows.size != n:
            raise ValueError("a list's rows are not its compactor's")
        return _Rows(cols, rows[:take])
    rows = iter(cols.rows_of(items).tolist()) if cols is not None and ROW in items else iter(())
    out = []
    for e in budget.each(items):
        if e is ROW and cols is not None:
            out.append(cols.row(next(rows)))
        elif budget.shaped(e, _ENTRY, "trace entry"):
            out.append(e)
    return out


def _times(entries: dict[int, "list | _Rows"]) -> "array[int]":
    """The first and the last ``time_us`` of the entries (empty where none has one)."""
    lo, hi = None, None
    for es in entries.values():
        if isinstance(es, _Rows):
            t = es.column("time_us")
            t = t[t >= 0]
        else:
            t = np.fromiter((t for e in es if (t := _int(e.get("time_us"), -1)) >= 0), np.int64)
        if t.size:
            a, b = int(t.min()), int(t.max())
            lo, hi = a if lo is None else min(lo, a), b if hi is None else max(hi, b)
    return array("q") if lo is None else array("q", (lo, hi))


def _history_cut(ends: tuple[int, ...], notes: Any, entries: dict, times: "array[int]",
                 t0_us: int) -> tuple[int, float, float] | None:
    """(entries kept, ms they span, ms the annotations span) where the allocator's history lost its start, else None.

    Why: ``_record_memory_history(max_entries=N)`` keeps its last N events in a ring buffer, while the profiler's
    annotations (``Optimizer.step#AdamW.step``) are kept apart.  A whole iteration -- from one optimizer step's end to
    the next, a forward and a backward that allocate -- ending before the first kept event shows the buffer dropped
    the events of that iteration and everything before it (CS336 snapshots at ``max_entries=10000``: the last AdamW
    step's 128 ms kept of a 5.8 s recording), so the peak it shows is its window's, not the job's."""
    if len([e for e in ends if e < 0]) < 2 or not times:
        return None
    starts = [a["time_us"] for a in notes if isinstance(a, dict) and _on_clock(a.get("time_us"), t0_us)]
    first = min(t for t in starts if t >= 0)
    kept = sum(len(es) for es in entries.values())
    return kept, (max(times) - t0_us) / 1000.0, (max(max(times), max(starts)) - first) / 1000.0


def _time_ps(e: dict, index: int, t0_us: int) -> int:
    """An entry's time from the first one (``time_us``); snapshots before PyTorch 2.1 have none: 1 us an entry."""
    t = _int(e.get("time_us"), -1)
    return (t - t0_us) * 1_000_000 if t >= 0 else index * 1_000_000


def _python_frames(frames: Any, budget: "_Budget | None" = None, limit: int = MAX_FRAMES) -> list[dict]:
    """The frames that say where an allocation came from, innermost first, at most :data:`MAX_FRAMES`: the Python
    ones where the stack has any (a ``stacks="all"`` record leads with the caching allocator's and ATen's C++ frames,
    which every allocation shares), else the C++ ones (``stacks="python"`` off, or a C++-only caller); at most
    ``limit``."""
    if not isinstance(frames, (list, tuple)):
        return []
    scanned = frames[:MAX_SCAN]
    if budget is not None:
        budget.spend(len(scanned))
        fs = [f for f in scanned if budget.frame_shaped(f)]
    else:
        fs = [f for f in scanned if _shape_error(f, _FRAME) is None]
    py = [f for f in fs if _str(f.get("filename"), "").endswith(".py")]
    return (py or fs)[:limit]


def _frames(frames: Any, budget: "_Budget | None" = None) -> list[str]:
    """``file:line function`` of :func:`_python_frames`."""
    return _texts(_python_frames(frames, budget))


def _texts(fs: list[dict]) -> list[str]:
    """``file:line function`` of each frame record."""
    return [f"{_str(f.get('filename'))}:{_int(f.get('line'), 0)} {_str(f.get('name'))}" for f in fs]


#: Frames of the framework itself: the user's own line is the first frame outside them.
_LIBRARY = ("/torch/", "\\torch\\", "<frozen", "<built-in", "/site-packages/", "\\site-packages\\", "/dist-packages/",
            ".cpp", ".h:",
            "??")


#: In a C++-only stack (autograd's engine thread runs the backward pass without a Python frame): the autograd node
#: that allocated (``torch::autograd::generated::MmBackward0::apply``), else the ATen op (``at::_ops::mm::call``).
_FILE = re.compile(r"^(.*?):\d+ ")
_CPP_NODE = re.compile(r"torch::autograd::generated::(\w+)::apply")
_CPP_OP = re.compile(r"at::_ops::(\w+?)(?:_[A-Z]\w*)?::call\(")


def _is_python(frame: str) -> bool:
    """Whether a ``file:line function`` frame is a Python source line (not a C++ frame of the framework)."""
    m = _FILE.match(frame)
    return m is not None and m.group(1).endswith(".py")


def user_frame(frames: list[str]) -> str:
    """An allocation's label: the innermost frame of the user's code; in a C++-only stack its autograd node or ATen
    op; else the innermost frame."""
    mine = next((f for f in frames if _is_python(f) and not any(x in f for x in _LIBRARY)), None)
    if mine is not None:
        return mine
    for pattern, form in ((_CPP_NODE, "{} (autograd)"), (_CPP_OP, "aten::{}")):
        hit = next((m for f in frames if (m := pattern.search(f))), None)
        if hit is not None:
            return form.format(hit.group(1))
    return frames[0] if frames else "?"


_user_frame = user_frame


def _phase(frames: Any, budget: "_Budget | None" = None, through_cache: bool = True) -> int:
    """The phase of an allocation from its stack (``MEMORY_PHASES``), read off the raw frames: autograd's engine, in
    Python or on its C++ thread (backward), ``torch/optim`` (optimizer), a module's ``_apply``/``convert`` (``model.to("cuda")``: parameters), a
    PyTorch module's constructor (a model built on the GPU: parameters, :func:`_places_parameters`), a module's
    forward, else other.  The innermost of them decides: ``optimizer.step(closure)`` runs the closure's
    forward and backward inside the step (PyTorch Lightning's automatic optimization, LBFGS), so a module's call
    below the optimizer's frame is the forward's, not the optimizer's state.  A cast autocast keeps for its whole region (``at::autocast::cached_cast``: a 16-bit
    copy of a parameter, made once and reused by every call) is a parameter's copy, not the forward's activation --
    unless ``through_cache`` is off: the phase of the code that cast (an activation's cast, :func:`_activation_casts`)."""
    if through_cache and _autocast_cached(frames):
        return MEMORY_PHASES.index("parameters")
    return _phase_of(_python_frames(frames, budget, limit=MAX_SCAN))  # autograd's engine lies ~30 C++ frames deep


def _phase_of(fs: list[dict]) -> int:
    """:func:`_phase` of a stack's :func:`_python_frames` (up to :data:`MAX_SCAN`), past autocast's cast cache."""
    if not fs:
        return MEMORY_PHASES.index("other")
    forward = module = False
    for f in fs:
        fn, name = _str(f.get("filename"), "").replace("\\", "/"), _str(f.get("name"), "")  # Windows paths too
        if "autograd/graph.py" in fn or "autograd/__init__.py" in fn or name == "_engine_run_backward" \
                or (fn.endswith("torch/_tensor.py") and name == "backward") \
                or name.startswith("torch::autograd::Engine::"):
            return MEMORY_PHASES.index("backward")
        if "/torch/optim/" in fn:
            if forward or module:  # a closure's forward inside ``step`` (Lightning's automatic optimization, LBFGS)
                break
            return MEMORY_PHASES.index("optimizer")
        module = module or _places_parameters(fn, name, forward)
        forward = forward or name == "forward" or name.endswith("_call_impl")
    if module:
        return MEMORY_PHASES.index("parameters")
    return MEMORY_PHASES.index("forward" if forward else "other")


def _places_parameters(filename: str, name: str, below_forward: bool) -> bool:
    """Whether a frame puts a module's parameters on the GPU: ``Module._apply``/``convert`` (``model.to("cuda")``
    moves them), or a PyTorch module's constructor (``torch/nn/modules/*.py``'s ``__init__``) with no forward frame
    inside it (``below_forward``: the innermost phase frame decides).

    Why the constructor: ``nn.Linear(..., device="cuda")``, and every module made under ``with torch.device("cuda"):``
    (litgpt's ``init_module``, gpt-fast), allocates its parameters and buffers in its constructor, where no
    ``Module._apply`` ever runs; what a PyTorch module's constructor allocates is the module's state, held as moved
    parameters are.  A user's own ``__init__`` may run anything (a forward to probe a shape, a cache), so only
    PyTorch's own modules' constructors say so."""
    if "nn/modules/module.py" in filename and name in ("_apply", "convert"):
        return True
    return not below_forward and name == "__init__" and "torch/nn/modules/" in filename


#: autocast's cast cache, in a ``stacks="all"`` record's C++ frames: where it allocates, the block is a cast autocast
#: made -- a parameter's 16-bit copy kept until the autocast region ends (``aten/src/ATen/autocast_mode.cpp``) where
#: its bytes halve a weight's, else an activation's cast it does not keep (:func:`_activation_casts`).
_AUTOCAST_CACHE = "autocast::cached_cast"


def _autocast_cached(frames: Any) -> bool:
    """Whether an allocation's stack runs through autocast's cast cache (the first :data:`MAX_SCAN` frames)."""
    if not isinstance(frames, (list, tuple)):
        return False
    return any(isinstance(f, dict) and _AUTOCAST_CACHE in _str(f.get("name"), "") for f in frames[:MAX_SCAN])


#: The fields the reader uses, and their types (a field may be absent: older PyTorch versions write fewer).
_SEGMENT = {"device": int, "total_size": int, "blocks": list}
_BLOCK = {"size": int, "state": str, "address": int, "frames": list, "history": list}
_ENTRY = {"action": str, "size": int, "addr": int, "time_us": int, "frames": list, "device_free": int}
_FRAME = {"filename": str, "name": str, "line": int}


#: The values an allocator can write in an integer field, ``[low, high)``.  Byte counts and addresses lie in a 64-bit
#: machine's widest virtual address space (57 bits, 5-level paging): no allocation, segment or address lies past it,
#: so a larger or negative one is damage, never a number to add up (2**100 bytes ended the read in numpy's
#: OverflowError).  A device is c10's ``DeviceIndex`` (an int8); a time is microseconds of the Unix epoch, exact in a
#: double (a float time is read as none, as before).
MAX_BYTES = 1 << 57
_MAX_TIME = 1 << 53
_RANGE = {"size": (0, MAX_BYTES), "total_size": (0, MAX_BYTES), "addr": (0, MAX_BYTES), "address": (0, MAX_BYTES),
          "device_free": (0, MAX_BYTES), "device": (0, 128), "time_us": (0, _MAX_TIME)}


def _shape_error(v: Any, fields: dict[str, type]) -> str | None:
    """None when ``v`` is a dict whose fields (where present) have their types and ranges, else the first that does
    not."""
    if type(v) is not dict:
        return f"a {type(v).__name__}"
    for k, kind in fields.items():
        x = v.get(k)
        if x is None:
            continue
        if type(x) is not kind and not (kind is int and type(x) is float and k == "time_us"):
            return f"`{k}` a {type(x).__name__}"
        low, high = _RANGE.get(k, (None, None))
        if low is not None and not low <= x < high:  # NaN compares false: out of range too
            return f"`{k}` out of range ({_clip_text(x)})"
    return None


def _clip_text(x: int | float) -> str:
    """A value for a message: an integer of a hundred digits is said by its size (``int.__str__`` is quadratic)."""
    if type(x) is int and abs(x) >= 1 << 64:
        return f"{'-' if x < 0 else ''}a {abs(x).bit_length()}-bit integer"
    return f"{x:,}" if type(x) is int else str(x)


def _int(v: Any, default: int) -> int:
    return v if type(v) is int else default


def _str(v: Any, default: str = "?") -> str:
    """A string field as it is, else ``default``: never ``str()`` of a container (memo references can make a list
    of a few bytes print as 2**60 characters)."""
    return v if type(v) is str else default


_UNSET = object()


class _Stack:
    """One distinct stack of a read -- its frame objects, in order -- and what the reader makes of it, each made once
    (:meth:`_Budget.stack`).  Why: a snapshot's thousands of allocations and live blocks share a few dozen stacks; the
    pickle's memo shares each frame dict, and a live block holds its own list of the frames its allocation's has
    (wild forward_autograd_cs336: 3,043 lists, 51 stacks), so each list read alone made the same frames over again."""

    __slots__ = ("frames", "scanned", "bad", "done")

    def __init__(self, frames: list | tuple) -> None:
        scanned = frames[:MAX_SCAN]
        self.frames, self.scanned = frames, len(scanned)
        #: the frames :func:`_python_frames` finds of the wrong shape, in order: counted at every read, as it counts them
        self.bad = [f for f in scanned if _shape_error(f, _FRAME) is not None]
        self.done: dict[Any, Any] = {}

    def of(self, fn: Callable[[Any], Any]) -> Any:
        """``fn(frames)``, made once (``fn`` reads the frames alone)."""
        got = self.done.get(fn, _UNSET)
        if got is _UNSET:
            got = self.done[fn] = fn(self.frames)
        return got

    def python(self) -> list[dict]:
        """:func:`_python_frames` up to :data:`MAX_SCAN`."""
        return self.of(_python_frames_scanned)

    def texts(self) -> list[str]:
        """:func:`_frames` (the caller's own list)."""
        return list(self._texts())

    def _texts(self) -> list[str]:
        got = self.done.get("texts")
        if got is None:  # the first MAX_FRAMES of the frames scanned are _python_frames' own
            got = self.done["texts"] = _texts(self.python()[:MAX_FRAMES])
        return got

    def label(self) -> str:
        """:func:`user_frame` of :func:`_frames`."""
        got = self.done.get("label")
        if got is None:
            got = self.done["label"] = user_frame(self._texts())
        return got

    def phase(self, through_cache: bool = True) -> int:
        """:func:`_phase`."""
        key = ("phase", through_cache)
        got = self.done.get(key, _UNSET)
        if got is _UNSET:
            cast = through_cache and self.of(_autocast_cached)
            got = self.done[key] = MEMORY_PHASES.index("parameters") if cast else _phase_of(self.python())
        return got


def _python_frames_scanned(frames: Any) -> list[dict]:
    return _python_frames(frames, limit=MAX_SCAN)


class _Budget:
    """Counts the entries, blocks and frames walked; past ``limit`` the walk stops (``left_out``).  It also holds
    the read's :class:`_Stack` of each stack (:meth:`stack`), so each is read once and counted as each read of it
    counts (:meth:`_spend_frames`)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.n = 0
        self.left_out = False
        self.bad: dict[str, tuple[int, str]] = {}  # what -> (how many of the wrong shape, the first's fault)
        #: id(frames) -> [frames, its _Stack (None: no list), its phase (None: not asked)]: a shared list is read once
        self._seen: dict[int, list] = {}
        self._stacks: dict[tuple[int, ...], _Stack] = {}  # the ids of a stack's frames -> its _Stack
        self._good_frames: dict[int, Any] = {}  # id(frame) -> frame: a frame dict shared by many stacks, seen well-shaped

    def _entry(self, frames: Any) -> list:
        got = self._seen.get(id(frames))
        if got is None or got[0] is not frames:
            st = None
            if isinstance(frames, (list, tuple)):
                key = tuple(map(id, frames))  # the same frame objects in the same order: one stack (kept alive here)
                st = self._stacks.get(key)
                if st is None:
                    st = self._stacks[key] = _Stack(frames)
            got = self._seen[id(frames)] = [frames, st, None]
        return got

    def stack(self, frames: Any) -> "_Stack | None":
        """The :class:`_Stack` of a raw stack; None where it is no list (nothing to read)."""
        return self._entry(frames)[1]

    def _spend_frames(self, st: "_Stack | None") -> None:
        """What :func:`_python_frames` counts of one read of a stack: its frames looked at, each of the wrong shape."""
        if st is not None:
            self.n += st.scanned
            for f in st.bad:
                self.frame_shaped(f)

    def phase(self, frames: Any) -> int:
        """:func:`_phase` of a raw stack, counted the first time the list is read."""
        got = self._entry(frames)
        if got[2] is None:
            st = got[1]
            got[2] = MEMORY_PHASES.index("other") if st is None else st.phase()
            if st is not None and not st.of(_autocast_cached):  # the cast cache's phase reads no frame
                self._spend_frames(st)
        return got[2]

    def phase_past_cache(self, frames: Any) -> int:
        """:func:`_phase` of a raw stack past autocast's cast cache (``through_cache=False``), counted."""
        st = self.stack(frames)
        self._spend_frames(st)
        return MEMORY_PHASES.index("other") if st is None else st.phase(through_cache=False)

    def frames(self, raw: Any, spend: bool = True) -> list[str]:
        """:func:`_frames` of a raw stack; counted as ``_frames(raw, budget)`` counts it where ``spend``."""
        st = self.stack(raw)
        if spend:
            self._spend_frames(st)
        return [] if st is None else st.texts()

    def label(self, raw: Any, spend: bool = False) -> str:
        """:func:`user_frame` of :meth:`frames`."""
        st = self.stack(raw)
        if spend:
            self._spend_frames(st)
        return "?" if st is None else st.label()

    def stack_of(self, raw: Any, fn: Callable[[Any], Any]) -> Any:
        """``fn(raw)`` for a function of a stack's frames alone, made once per stack."""
        st = self.stack(raw)
        return fn(raw) if st is None else st.of(fn)

    def stacks(self) -> list[Any]:
        """Every distinct stack read for a phase: the history's allocations' and the blocks live at the dump."""
        out = {id(st): st.frames for _, st, phase in self._seen.values() if st is not None and phase is not None}
        return list(out.values())

    def spend(self, k: int) -> None:
        self.n += k

    def frame_shaped(self, f: Any) -> bool:
        """:meth:`shaped` for a stack frame; a frame dict the pickle shares between many stacks is checked once
        (kept here, so its ``id`` names it while the read lasts; a frame of the wrong shape is counted every time)."""
        got = self._good_frames.get(id(f))
        if got is not None and got is f:
            return True
        if self.shaped(f, _FRAME, "frame"):
            self._good_frames[id(f)] = f
            return True
        return False

    def shaped(self, v: Any, fields: dict[str, type], what: str) -> bool:
        """Whether ``v`` has the shape of ``what``; if not, counted (with the first example) to be said once."""
        if isinstance(v, _Entry):  # checked as it was read
            return True
        why = _shape_error(v, fields)
        if why is None:
            return True
        got = self.bad.get(what)
        self.bad[what] = (got[0] + 1, got[1]) if got else (1, why)
        return False

    def bad_text(self) -> str:
        return "; ".join(f"{n:,} {_plural(what) if n > 1 else what} (e.g. {why})" for what, (n, why) in self.bad.items())

    def each(self, items: Any):
        if not isinstance(items, list):
            return
        for x in items:
            if self.n >= self.limit:
                self.left_out = True
                return
            self.n += 1
            yield x


def _plural(what: str) -> str:
    """``trace entries``, ``blocks``."""
    return what[:-1] + "ies" if what.endswith("y") else what + "s"


def _empty_host() -> HostEvents:
    z = np.zeros(0, np.int64)
    m = np.zeros(0, np.int8)
    return HostEvents(start=z, end=z.copy(), name=np.zeros(0, np.int16), line=np.zeros(0, np.int16), corr=m,
                      group_id=m, step_num=m, iter_num=m, root=m, is_eager=m, names=[], line_names=[])


def _empty_device(gpu: int) -> dict[str, Any]:
    z = np.zeros(0, np.int64)
    m = np.zeros(0, np.int8)
    return dict(gpu=gpu, info=DeviceInfo(), names=[], strings=[], start=z, end=z.copy(), name=np.zeros(0, np.int16),
                kind=m, stream=m, stream_names=[], corr=m, group_id=m, op_text=[], op_idx=np.zeros(0, np.int16),
                shape_sid=m, long_name_sid=m, graph_id=m, **DeviceEvents.copy_columns(z, m))
