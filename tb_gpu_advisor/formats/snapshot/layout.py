"""Where memory snapshots lie: any ``*.pickle`` / ``*.pkl`` in a run folder whose content is one (a ``*.json`` too,
once the trace formats refused it: :data:`MISNAMED_SUFFIXES`; a ``*.pt`` / ``*.pth`` saved with ``torch.save``:
:data:`TORCH_SAVE_SUFFIXES`, any other file of those names left out without a word).

``torch.cuda.memory._dump_snapshot(path)`` writes wherever it is told (people keep them beside their logs and traces),
so a name claims nothing: a pickle is a snapshot when its first bytes say so (:func:`sniff`: a pickle whose top-level
dict opens with the ``segments`` key and names the snapshot's own keys, or, pickled from the public
``torch.cuda.memory_snapshot()``, a list of segments).  Each snapshot is a session of its own,
named after its file's time with ``_snapshot`` appended (it never joins a trace's session), its one host the file's
name without the suffix.  Never below a ``plugins`` folder (other tools' assets).

PyTorch's own viewer also saves a snapshot as one self-contained page (``torch.cuda._memory_viz``'s ``trace_plot`` /
``segment_plot``, the pages its blog posts link): an ``.html`` whose script hands ``MemoryViz.js`` the pickle in base64
(``const local_files = [{"name": "snapshot.pickle", "base64": "..."}]``).  That pickle is the snapshot, read as one
(:func:`embedded_snapshot`; survey h37-survey17: the "Understanding GPU Memory 1" blog's ResNet-50 ``snapshot.html``).
PyTorch 2.0's page of that name held no pickle but the history as it drew it (:func:`is_drawn_page`): read by
``drawn``.
"""

from __future__ import annotations

import binascii
import io
import os
import re

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats import memory_timeline
from tb_gpu_advisor.frameworks.pytorch import CAPACITY_SUFFIX
from tb_gpu_advisor.formats.base import Found, Groups, RunFolderLayout, is_gzip, session_name
from tb_gpu_advisor.model.logdir import ROOT_RUN, HostFile

SUFFIXES = (".pickle", ".pkl")
#: The same gzipped for upload (``snapshot.pickle.gz``): read through the one gzip reader (``formats.gz.gunzip_upto``).
GZ_SUFFIXES = tuple(s + ".gz" for s in SUFFIXES)
#: The viewer's page that embeds a snapshot (``torch.cuda._memory_viz``): a snapshot only when its script says so.
HTML_SUFFIX = ".html"
#: ``_dump_snapshot(path)`` pickles whatever the path's suffix says: a snapshot saved as ``memory_snapshot.json`` is a
#: pickle all the same (survey h37-survey64: Nesta-gitU/discrete_diffusion's OOM snapshot).  Such a name is asked
#: here only after the trace formats refused it (the registry's order), so a JSON file keeps their words.
MISNAMED_SUFFIXES = (".json",)
EXPECTED = "<run>/<name>.pickle (torch.cuda.memory._dump_snapshot)"
#: How much of a file's start is read to tell a snapshot.
SNIFF_BYTES = 4096
_PICKLE_START = re.compile(rb"^\x80[\x02-\x05]|^\(dp0|^\}")
#: Keys only a snapshot's segments and blocks hold, one of which is in any snapshot's first kilobytes.
_SNAPSHOT_KEYS = (b"segments",)
_SEGMENT_KEYS = (b"total_size", b"device_traces", b"allocated_size", b"segment_type", b"blocks")
#: A snapshot re-dumped by a script of its own may put its history first (``{"device_traces": ..., "segments": ...}``:
#: survey h37-survey17, drisspg/transformer_nuggets' ``test/data/mini_snapshot.pickle``, cut to its first 50 events):
#: the history's key then opens the dict, and its first entry's own keys follow it.
_HISTORY_KEY = b"device_traces"
_TRACE_ENTRY_KEYS = (b"action", b"addr", b"size")
#: ``torch.cuda.memory_snapshot()`` (the public call, no history) returns the segments alone: a pickled list (``]``
#: after the protocol and frame opcodes) whose first dict opens with a segment's own keys.
_SEGMENT_LIST = re.compile(rb"^\x80[\x02-\x05](?:\x95.{8})?(?:\]|\(l)", re.S)
_LIST_SEGMENT_KEYS = (b"device", b"total_size")
#: ``json.dump(torch.cuda.memory._snapshot(), f)``: the same dict as JSON text (its keys in the dict's order,
#: ``segments`` first), which a script saves where it wants to read the snapshot itself (h37-snap64)
_JSON_START = re.compile(rb"^\s*\{\s*\"(segments|device_traces)\"\s*:")


def is_json_snapshot(head: bytes) -> bool:
    """Whether a file's start (decompressed) is a snapshot's dict as JSON text (:data:`_JSON_START`) with a segment's
    or the history's keys in its first bytes."""
    return bool(_JSON_START.match(head)) and any(b'"' + k + b'"' in head for k in _SEGMENT_KEYS)


#: ``torch.cuda._memory_viz._format_viz``'s page: the viewer's module, then the pickle as the first local file.
_VIZ_PAGE = re.compile(rb"MemoryViz\.js")
_VIZ_FILES = re.compile(rb"const\s+local_files\s*=\s*")
#: The first local file, up to its base64 text: ``[{"name": "snapshot.pickle", "base64": "`` (``_format_viz``'s
#: ``json.dumps``), read in place -- decoding a page to text and parsing it as JSON cost four times the page (a 266 MB
#: page: 1.0 GB; 200 MB of bytes no UTF-8 after a small one: 0.84 GB), the base64 itself is all that is needed.
_FIRST_FILE = re.compile(rb'\[\s*\{\s*"name"\s*:\s*"(?:[^"\\]|\\.){0,4096}"\s*,\s*"base64"\s*:\s*"')
_BASE64 = re.compile(rb"[A-Za-z0-9+/]*={0,2}")
_PAGE_START = re.compile(rb"\s*<")
#: The start of a viewer page read before its snapshot is streamed (:func:`page_stream`): a page whose base64 begins
#: past it, or that ends within it, is read whole (:func:`embedded_snapshot`).  ``_format_viz``'s page puts it after
#: ~400 bytes of HTML.
PAGE_HEAD_BYTES = 1 << 20
#: Bytes of a page read at a time by :class:`PageStream` (its base64 decoded a part at a time).
_B64_STEP = 1 << 20
_NOT_BASE64 = "PyTorch's memory viewer page, but its snapshot is not base64 where the viewer puts it"
_CUT_PAGE = "PyTorch's memory viewer page cut off inside its snapshot (the page ends before the base64 does)"
_UNREADABLE = "PyTorch's memory viewer page with an unreadable snapshot"
_B64_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
NOT_VIZ_PAGE = ("an HTML page, not PyTorch's memory viewer page with a snapshot in it (`torch.cuda._memory_viz`'s "
                "`trace_plot`): give the snapshot itself (`torch.cuda.memory._dump_snapshot`'s pickle)")
#: PyTorch 2.0's ``trace_plot`` page drew the allocations itself (``let alloc_data = {"actions": ...}``: sizes and
#: stacks in the order they were made and freed, no segment, no snapshot): read by ``drawn`` (survey h37-survey17:
#: zdevito/zdevito.github.io's ``assets/trace.html``, ``assets/cudagraph.html``).
_DRAWN_PAGE = re.compile(rb"let\s+alloc_data\s*=\s*\{")


#: ``torch.save(torch.cuda.memory._snapshot(), path)``: a zip archive (PyTorch 1.6+'s format, ``PyTorchFileWriter``)
#: whose first member is ``<archive>/data.pkl`` -- the dict pickled by ``pickle.Pickler`` (protocol 2), stored
#: uncompressed -- beside ``byteorder``, ``version`` and ``.data/serialization_id``; a dict of plain data has no
#: tensor to give a ``data/<n>`` member.
ZIP_START = b"PK\x03\x04"
TORCH_SAVE_MEMBER = "data.pkl"
#: A local file header's fixed bytes (signature .. extra field length), before its name.
_ZIP_HEADER = 30
NOT_TORCH_SAVE = (f"a zip archive, but not torch.save's (its first member is no `<archive>/{TORCH_SAVE_MEMBER}` stored "
                  "as is): give the snapshot itself (`torch.cuda.memory._dump_snapshot`'s pickle)")


def is_zip(head: bytes) -> bool:
    """Whether a file's first bytes open a zip archive (a local file header): ``torch.save``'s default format."""
    return head.startswith(ZIP_START)


def torch_save_member(name: str) -> bool:
    """Whether a zip member's name is the pickle of a ``torch.save`` archive (``<archive>/data.pkl``)."""
    parts = name.split("/")
    return len(parts) == 2 and parts[1] == TORCH_SAVE_MEMBER


def torch_save_head(head: bytes) -> bytes | str:
    """The start of the pickle a ``torch.save`` archive holds, from the archive's start (its first local file header:
    the pickle is its first member, stored uncompressed), or why not, in words.  Why: a snapshot saved with
    ``torch.save`` instead of ``pickle.dump`` is the same dict in a zip, and was left out as "not a pickle"."""
    if len(head) < _ZIP_HEADER:
        return NOT_TORCH_SAVE
    method = int.from_bytes(head[8:10], "little")
    name_len, extra_len = int.from_bytes(head[26:28], "little"), int.from_bytes(head[28:30], "little")
    name = head[_ZIP_HEADER:_ZIP_HEADER + name_len].decode("utf-8", "replace")
    if method != 0 or not torch_save_member(name):
        return NOT_TORCH_SAVE
    return head[_ZIP_HEADER + name_len + extra_len:]


def is_pickle_name(name: str) -> bool:
    suffixes = (*SUFFIXES, *GZ_SUFFIXES)
    return name.endswith(suffixes) and len(name) > max(len(s) for s in suffixes if name.endswith(s))


#: ``torch.save``'s own names (its documentation: "a common PyTorch convention is to save tensors using .pt file
#: extension"): ``torch.save(torch.cuda.memory._snapshot(), "memory_snapshot.pt")`` writes a snapshot under one.  Most
#: files so named are checkpoints, so the content alone says: an archive whose pickle opens a snapshot is read; any
#: other is anyone's, left out without a word (a run folder's ``model.pt`` is no profile left out).
TORCH_SAVE_SUFFIXES = (".pt", ".pth")


def is_torch_save_name(name: str) -> bool:
    return name.endswith(TORCH_SAVE_SUFFIXES) and len(name) > max(
        len(s) for s in TORCH_SAVE_SUFFIXES if name.endswith(s))


#: The first pickle of a legacy ``torch.save`` file (``torch/serialization.py``'s ``MAGIC_NUMBER``, protocol 2, as its
#: first bytes: ``reader.LEGACY_TORCH_SAVE_MAGIC`` unpickled).
LEGACY_TORCH_SAVE_HEAD = b"\x80\x02\x8a\n" + (0x1950A86A20F9469CFC6C).to_bytes(10, "little") + b"."

#: What a ``torch.save`` file that holds no memory snapshot is, given by path (``report model.pt``): most files of
#: those names are checkpoints, so it is named as one rather than "not a profile this tool reads" (in a logdir walk it
#: is left out without a word: :meth:`SnapshotLayout.sniff`).
CHECKPOINT = ("a torch.save checkpoint (model/optimizer state), not a memory snapshot: save the snapshot with "
              "torch.cuda.memory._dump_snapshot(path), or torch.save(torch.cuda.memory._snapshot(), path), and give "
              "that file")


def is_suffixless(name: str) -> bool:
    """A name with no suffix (no ``.`` at all: no dotfile either): ``_dump_snapshot("mem")``,
    ``torch.save(torch.cuda.memory._snapshot(), f"ss_{epoch}")``.  The content alone says: a run folder's suffixless
    file is sniffed (its first :data:`SNIFF_BYTES`, nothing unpickled) and read only when those bytes open a snapshot;
    any other (a ``README``, a ``checkpoint`` index, a program) is anyone's, left out without a word."""
    return bool(name) and "." not in name


def is_checkpoint_head(head: bytes) -> bool:
    """Whether a file's first :data:`SNIFF_BYTES` are a ``torch.save`` file's (its zip archive holding
    ``<archive>/data.pkl``, or the legacy format's magic number first) -- asked only of one :func:`sniff_head` found
    holds no snapshot."""
    return (is_zip(head) and not isinstance(torch_save_head(head), str)) or head.startswith(LEGACY_TORCH_SAVE_HEAD)


def is_misnamed(name: str) -> bool:
    """A name a snapshot is sometimes saved under though it is no pickle's (:data:`MISNAMED_SUFFIXES`): the content
    decides."""
    return name.endswith(MISNAMED_SUFFIXES) and len(name) > max(len(s) for s in MISNAMED_SUFFIXES if name.endswith(s))


def is_page_name(name: str) -> bool:
    return name.endswith(HTML_SUFFIX) and len(name) > len(HTML_SUFFIX)


def is_page(data: bytes) -> bool:
    """Whether a file's bytes are an HTML page (a snapshot pickle never starts with ``<``); looked at in place
    (``lstrip`` copies a page that opens with a newline, as the viewer's does)."""
    return _PAGE_START.match(data) is not None


def is_drawn_page(data: bytes) -> bool:
    """Whether a page is PyTorch 2.0's drawn memory trace (read by ``drawn``), not a viewer page with a snapshot."""
    head = data[:SNIFF_BYTES]
    return not _VIZ_PAGE.search(head) and _DRAWN_PAGE.search(head) is not None


def embedded_snapshot(data: bytes, whole: bool = True) -> bytes | str:
    """The pickle a memory viewer page embeds, else why there is none, in words.

    ``whole=False`` reads a page's start only: the base64 up to where it was cut, decoded in whole 4-character
    groups -- enough for :func:`sniff`'s look at the pickle's first bytes."""
    if not _VIZ_PAGE.search(data[:SNIFF_BYTES]):
        return _other_page(data[:SNIFF_BYTES])
    at = _VIZ_FILES.search(data)
    if at is None:
        return "PyTorch's memory viewer page, but no snapshot in it (no `local_files`)"
    m = _FIRST_FILE.match(data, at.end())
    if m is None:
        return _NOT_BASE64
    end = data.find(b'"', m.end())
    if end < 0 and whole:
        return _CUT_PAGE
    text = memoryview(data)[m.end():end if end >= 0 else len(data)]  # a view: the page's bytes are not copied
    if not whole:
        text = text[: len(text) // 4 * 4]
    if not _BASE64.fullmatch(text):
        return _NOT_BASE64
    return _b64(text) or _UNREADABLE


class PageError(ValueError):
    """A viewer page read as a stream holds no readable snapshot; the message is :func:`embedded_snapshot`'s words
    for the same page."""


class PageStream:
    """``read(n)`` of the pickle a viewer page embeds, decoded from its base64 as the page is read (``src``: one pass
    over the page's bytes, ``read(n)`` and ``close()``), never holding the page or the pickle: what
    :func:`embedded_snapshot` gives of the whole page, or :class:`PageError` with its words, raised where the stream
    reaches the fault (a snapshot reader's first pass reads to the end before it builds anything).

    Why: a page is the snapshot base64-encoded -- 4/3 of the pickle -- and read whole it was held as bytes beside the
    decoded pickle beside what the reader builds (2.3x the page), where a pickle file is streamed (pytorch#176290)."""

    def __init__(self, src, rest: bytes):
        self.src, self.raw = src, rest
        self.data = b""  # base64 characters checked, not yet decoded (fewer than a group, between parts)
        self.pad = b""  # the ``=`` read so far: only more ``=`` (two at most), then the closing quote, may follow
        self.bad = False  # a character no base64 holds: said once the page's end or the quote is found, as whole
        self.out, self.got, self.done = b"", 0, False

    def read(self, n: int) -> bytes:
        while len(self.out) < n and not self.done:
            self._more()
        part, self.out = self.out[:n], self.out[n:]
        return part

    def _more(self) -> None:
        """The next part of the page: checked, and its whole groups decoded (at the closing quote: the rest, with
        its padding)."""
        raw, self.raw = self.raw or self.src.read(_B64_STEP), b""
        if not raw:
            raise PageError(_CUT_PAGE)  # as whole: a page cut before its quote is "cut off", whatever it holds
        end = raw.find(b'"')
        self._check(raw if end < 0 else raw[:end])
        if end < 0:
            if not self.bad:
                k = len(self.data) // 4 * 4
                self._decode(self.data[:k])
                self.data = self.data[k:]
            return
        if self.bad:
            raise PageError(_NOT_BASE64)
        self._decode(self.data + self.pad)
        self.data, self.done = b"", True
        if not self.got:
            raise PageError(_UNREADABLE)

    def _check(self, body: bytes) -> None:
        """``body`` continues the base64 as ``[A-Za-z0-9+/]*={0,2}`` allows (:data:`_BASE64`'s full match)."""
        if self.bad:
            return
        data = body.rstrip(b"=")
        pad = body[len(data):]
        if data.translate(None, _B64_CHARS) or (data and self.pad) or len(self.pad) + len(pad) > 2:
            self.bad, self.data = True, b""
            return
        self.data += data
        self.pad += pad

    def _decode(self, text: bytes) -> None:
        try:
            got = binascii.a2b_base64(text) if text else b""
        except (binascii.Error, ValueError):
            raise PageError(_UNREADABLE) from None
        self.got += len(got)
        self.out += got

    def close(self) -> None:
        self.src.close()


def page_stream(src) -> "PageStream | None":
    """The snapshot a viewer page embeds, as a stream (:class:`PageStream`) over ``src`` (one pass over the page,
    at its start), else None: the page is read whole instead, as before -- it ends within :data:`PAGE_HEAD_BYTES`, is
    none of the viewer's, or its base64 does not begin within that start (so the whole page's answer, whatever it is,
    is :func:`embedded_snapshot`'s).  ``src`` is closed where None is returned."""
    head, part = b"", b"x"
    while len(head) < PAGE_HEAD_BYTES and part:
        part = src.read(PAGE_HEAD_BYTES - len(head))
        head += part
    at = _VIZ_FILES.search(head) if part and _VIZ_PAGE.search(head[:SNIFF_BYTES]) else None
    # a match ending at the head's end may take more blanks from the rest: the whole page tells
    m = _FIRST_FILE.match(head, at.end()) if at is not None and at.end() < len(head) else None
    if m is None or is_drawn_page(head):
        src.close()
        return None
    return PageStream(src, head[m.end():])


def _other_page(head: bytes) -> str:
    """Why a page with no viewer in it is no snapshot: named as what it is where PyTorch wrote it (the profiler's memory
    timeline plot), else the generic words."""
    return memory_timeline.WORDS if memory_timeline.is_page(head) else NOT_VIZ_PAGE


def _b64(text: memoryview) -> bytes:
    """The bytes of base64 ``text`` already checked against :data:`_BASE64` (``b64decode`` would copy the text first:
    a page's worth more memory)."""
    try:
        return binascii.a2b_base64(text)
    except (binascii.Error, ValueError):
        return b""


def sniff(path: str) -> str | None:
    """None when the file's start is a memory snapshot's pickle, else why not, in words (nothing is unpickled)."""
    try:
        head = fsio.read_head(path, SNIFF_BYTES)
    except Exception:  # noqa: BLE001 - unreadable: not ours, said so
        return "unreadable"
    return sniff_head(head)


def sniff_head(head: bytes) -> str | None:
    """:func:`sniff` of a file's first :data:`SNIFF_BYTES`, read once by whoever asks more of them
    (``SnapshotLayout.refused``)."""
    if not head:
        return "empty"
    if is_gzip(head):  # the pickle's start, decompressed from the file's (never past SNIFF_BYTES)
        from tb_gpu_advisor.formats.gz import gunzip_upto  # the one bounded gzip reader, loaded when needed

        head = gunzip_upto(io.BytesIO(head), SNIFF_BYTES)[0]
        if not head:
            return "a gzip file with nothing readable at its start"
    if is_page(head):
        if is_drawn_page(head):
            return None  # PyTorch 2.0's drawn history (``drawn``): read as its snapshot would be
        head = embedded_snapshot(head, whole=False)
        if isinstance(head, str):
            return head
    if is_json_snapshot(head):
        return None  # saved with ``json.dump``: read whole (``reader._read_json``)
    if is_zip(head):  # saved with ``torch.save``: the pickle its archive holds (``reader._Pass`` reads it)
        head = torch_save_head(head)
        if isinstance(head, str):
            return head
    if not _PICKLE_START.search(head):
        return "not a pickle"
    if _SEGMENT_LIST.search(head[:64]) and all(k in head[:256] for k in _LIST_SEGMENT_KEYS):
        return None  # ``torch.cuda.memory_snapshot()`` pickled: the segments alone, a list of them
    if _HISTORY_KEY in head[:256] and all(k in head for k in _TRACE_ENTRY_KEYS):
        return None  # the history first: a re-dumped snapshot's order
    if not any(k in head[:256] for k in _SNAPSHOT_KEYS) or not any(k in head for k in _SEGMENT_KEYS):
        return "a pickle, but no memory snapshot (torch.cuda.memory._dump_snapshot writes `segments` first)"
    return None


def capacity_name(snapshot_name: str) -> str:
    """The capacity file's name for a snapshot's file name (``capacity``): ``snapshot.pickle[.gz]`` ->
    ``snapshot.capacity.json`` (``pytorch.CAPACITY_SUFFIX``, the name ``RECORD_CAPACITY``'s fix writes)."""
    return host_name(snapshot_name) + CAPACITY_SUFFIX


def is_capacity_name(name: str) -> bool:
    return name.endswith(CAPACITY_SUFFIX) and len(name) > len(CAPACITY_SUFFIX)


#: What discovery says of a capacity file where no snapshot beside it is read (beside one, it says nothing).
CAPACITY_FILE = ("a memory snapshot's capacity record (torch.cuda.mem_get_info), read with the snapshot of its name "
                 "beside it, never as a profile")


def _left_out(path: str, why: str | None) -> str | None:
    """``SnapshotLayout.sniff``'s answer for the file at ``path`` given :func:`sniff`'s ``why``: a ``torch.save`` or
    suffixless name that holds no snapshot is left out silently (``""``)."""
    name = os.path.basename(path)
    return "" if why is not None and (is_torch_save_name(name) or is_suffixless(name)) else why


class SnapshotLayout(RunFolderLayout):
    expected = EXPECTED

    def unread(self, rel: tuple[str, ...]) -> str | None:
        """A capacity file is the snapshot's companion (``capacity``), never a profile: named, not sniffed as a
        trace (its JSON is no trace's, and "not a trace" would list it as a profile left out)."""
        return CAPACITY_FILE if is_capacity_name(rel[-1]) and self.in_run_folder(rel) else None

    def beside(self, file_name: str) -> tuple[str, ...]:
        """The capacity record the reader takes the GPU's memory from (``capacity``)."""
        return (capacity_name(file_name),)

    def claims(self, rel: tuple[str, ...]) -> bool:
        return False  # a name never says: the content does (maybe + sniff)

    def maybe(self, rel: tuple[str, ...]) -> bool:
        name = rel[-1]
        return ((is_pickle_name(name) or is_page_name(name) or is_misnamed(name) or is_torch_save_name(name)
                 or is_suffixless(name)) and self.in_run_folder(rel))

    def sniff(self, path: str) -> str | None:
        """A ``torch.save`` name (:data:`TORCH_SAVE_SUFFIXES`) or a suffixless one (:func:`is_suffixless`) that holds
        no snapshot is a checkpoint's or anyone's: left out silently (``""``), as a ``.csv`` of no profiler's is."""
        return _left_out(path, sniff(path))

    def refused(self, path: str) -> str | None:
        """Given by path, a ``torch.save`` checkpoint is named as one (:data:`CHECKPOINT`), whatever its name; any
        other file this layout asks about is refused as the walk refuses it (:meth:`sniff`: a ``README`` or a text
        ``.pth`` gets ``""``, the generic "not a profile this tool reads").  The file's head is read once, for both
        questions (:func:`sniff_head`, :func:`is_checkpoint_head`)."""
        try:
            head = fsio.read_head(path, SNIFF_BYTES)
        except Exception:  # noqa: BLE001 - unreadable: not ours, said so (:func:`sniff`), no checkpoint we can tell
            return _left_out(path, "unreadable")
        why = _left_out(path, sniff_head(head))
        return CHECKPOINT if why is not None and is_checkpoint_head(head) else why

    def lone_content(self, path: str) -> str | None:
        """A file given by path under a name no layout reads (``report ss_3``, ``report mem.bin``) is a snapshot's
        host when its first bytes open one (:func:`sniff`): named explicitly, the content says, whatever the name."""
        return host_name(os.path.basename(path)) if sniff(path) is None else None

    def pointer_unsaid(self, rel: tuple[str, ...]) -> bool:
        """A Git LFS pointer named ``.pt`` / ``.pth``, or with no suffix, stands for a checkpoint (or anything) as
        likely as for a snapshot: unsaid."""
        return is_torch_save_name(rel[-1]) or is_suffixless(rel[-1])

    def group(self, found: list[Found]) -> Groups:
        """One session per snapshot, named after its file's time (``_snapshot`` appended), in its folder's run; the
        per-rank snapshots of one job (:func:`rank_sets`) are one session with a host per rank, named after the
        newest."""
        groups: Groups = {}
        for files in rank_sets(sorted(found, key=lambda x: x.rel)):
            f = files[0]
            run = "/".join(f.rel[:-1]) or ROOT_RUN
            newest = max(x.mtime_ns for x in files)
            name = session_name(newest / 1e9 if newest else None, "_snapshot")
            key, k = (run, name, f.folder), 1
            while key in groups:
                k += 1
                key = (run, f"{name}_{k}", f.folder)
            groups[key] = [HostFile(host_name(x.name), x.path, x.size, x.mtime_ns, "snapshot") for x in files]
        return groups


#: A rank's number in a snapshot's name as distributed programs write it: torchtitan's
#: ``memory_snapshot/iteration_N/rank{r}_memory_snapshot.pickle``, ``snapshot_rank{r}.pickle``, ``..._rank_{r}``.
_RANK = re.compile(r"(?<![A-Za-z0-9])(rank[_-]?)(\d+)(?![0-9])", re.I)


def rank_template(file_name: str) -> str | None:
    """``file_name`` with its rank's number taken out (``rank{}_memory_snapshot.pickle``); None when it names no rank
    (or more than one)."""
    found = _RANK.findall(file_name)
    return _RANK.sub(lambda m: m.group(1) + "{}", file_name) if len(found) == 1 else None


def rank_sets(found: list[Found]) -> list[list[Found]]:
    """Snapshots as the sessions they are: the files of one folder named alike but for a rank's number (two or more
    ranks) are one job's, dumped by each rank of it; every other file is one alone, in ``found``'s order.

    Why: each rank of a distributed job dumps its own snapshot into one folder (torchtitan writes
    ``rank{r}_memory_snapshot.pickle`` per rank at an iteration); read as a session each, the job's ranks were listed
    as unrelated captures and no card said which rank came nearest its GPU's memory (probe h37-probe43g)."""
    by_name: dict[tuple[str, str], list[Found]] = {}
    for f in found:
        t = rank_template(f.name)
        if t is not None:
            by_name.setdefault((f.folder, t), []).append(f)
    out: list[list[Found]] = []
    taken: set[str] = set()
    for f in found:
        if f.path in taken:
            continue
        t = rank_template(f.name)
        same = by_name.get((f.folder, t), []) if t is not None else []
        files = sorted(same, key=_rank_of) if len(same) > 1 else [f]
        taken.update(x.path for x in files)
        out.append(files)
    return out


def _rank_of(f: Found) -> tuple[int, str]:
    """A rank snapshot's order: its rank's number, then its name."""
    m = _RANK.search(f.name)
    return (int(m.group(2)) if m else -1, f.name)



def host_name(name: str) -> str:
    """A snapshot's host: its file's name without the suffix (``.gz`` first)."""
    name = name[:-3] if name.endswith(".gz") and len(name) > 3 else name
    for suffix in (*SUFFIXES, HTML_SUFFIX, *MISNAMED_SUFFIXES, *TORCH_SAVE_SUFFIXES):
        if name.endswith(suffix):
            return name[: -len(suffix)] or name
    return name


LAYOUT = SnapshotLayout()
