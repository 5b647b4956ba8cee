"""Where ROCm rocprof's traces sit in a logdir, and how one is told: ``rocprof --hip-trace`` (rocprof v1 / v2, through
roctracer) writes ``results.json`` beside ``results.stats.csv``, ``results.db`` and ``results.sysinfo.txt`` in the
folder it ran in (``-o <name>.csv`` names them after ``<name>``).

The JSON is Chrome's trace format as ROCm/rocprofiler's ``bin/tblextr.py`` writes it (facts read there and off two real
captures, survey h37-survey5): ``{ "traceEvents":[{}`` then one event a line, each led by a comma; first one
``process_name`` metadata event per section, named ``Markers and Ranges`` (roctx, pid 0), ``COPY`` (pid 1),
``CPU HIP API`` (pid 2), ``CPU HSA API`` (pid 3), ``GPU<n>`` (pid 6 + n) and ``GPU Barriers<n>`` (pid 518 + n);
then complete events (``"ph":"X"``) whose ``args`` carry the exact times as strings (``BeginNs``, ``EndNs``,
``DurationNs``); then flow events (``"ph":"s"`` / ``"t"``, ``cat`` ``DataFlow``) from each launching call to its GPU
operation; then ``otherData``, the ``rocminfo`` of the machine.

A file is claimed by its content, never its name: any JSON file of a run folder whose start holds a section label only
tblextr writes, or its ``BeginNs`` times beside ``traceEvents`` (:func:`is_rocprof_head`).  Each file is a session of
its own, named after its modification time (its clock is the GPUs' system clock, not wall-clock time), its host after
the file.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.formats.base import ByIdentity, Found, Groups, RunFolderLayout, is_gzip
from tb_gpu_advisor.formats.heads import is_perfetto_head, is_rocprof_head, perfetto_words  # Kineto's refuse by them

#: The JSON files it may be (the content decides).
SUFFIXES = (".json", ".json.gz")
#: The names of ROCm's profilers' Perfetto traces, never read (``heads.perfetto_words``): rocprofv3's
#: ``<pid>_results.pftrace``, rocprof-sys's ``perfetto-trace-<pid>.proto`` (Perfetto's own tools: ``.perfetto-trace``),
#: gzipped too.  Asked by content, so that one is named for what it is, alone or in a logdir, rather than "not a
#: profile this tool reads" or nothing; a ``.proto`` that is no trace (a schema) is anyone's file, left out unsaid.
PERFETTO_SUFFIXES = tuple(s + gz for s in (".pftrace", ".perfetto-trace", ".proto") for gz in ("", ".gz"))
EXPECTED = "<run>/results.json (rocprof --hip-trace: any name, told by its content)"
#: How much of a file's start is searched (the section labels are its first lines; a label-less file's first event).
SNIFF_BYTES = 64 << 10


def head_bytes(path: str, n: int = SNIFF_BYTES) -> bytes:
    """The first ``n`` bytes of the file, decompressed where it is gzipped (what a cut-off stream holds); b"" where it
    cannot be read."""
    try:
        raw = fsio.read_head(path, n)
    except Exception:  # noqa: BLE001 - unreadable, gone: not known to be one
        return b""
    if is_gzip(raw):
        try:
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, n)
        except zlib.error:
            return b""
    return raw


_probed: ByIdentity[str | None] = ByIdentity()


def sniff(path: str) -> str | None:
    """None when ``path`` is a rocprof trace, else why not (cached by the file's identity)."""
    def probe() -> str | None:
        head = head_bytes(path)
        if is_perfetto_head(head):
            return perfetto_words(head, path)
        if not path.endswith(SUFFIXES):
            return ""
        return None if is_rocprof_head(head) else (
            "not a rocprof trace (no section label of rocprof's, no BeginNs times)")
    return _probed.answer_for(path, probe)


#: The rocminfo rocprof writes beside its trace (``results.sysinfo.txt`` beside ``results.json``): the reader takes
#: the GPUs' names from it (``reader._sysinfo_names``).
SYSINFO_SUFFIX = ".sysinfo.txt"


def stem(file_name: str) -> str:
    for suffix in (".json.gz", ".json"):
        if file_name.endswith(suffix) and len(file_name) > len(suffix):
            return file_name[: -len(suffix)]
    return file_name


class ByContentLayout(RunFolderLayout):
    """A run folder's JSON captures told by their content alone, each file a session of its own (rocprof v1/v2's
    ``results.json``, rocprofv3's ``<pid>_results.json``): ``results.json`` is any tool's name, so no name claims one.
    One class for both tools, which differ only in the suffixes, the sniff, the session stem and the format id."""

    def __init__(self, expected: str, suffixes: tuple[str, ...], sniff: Callable[[str], str | None],
                 stem: Callable[[str], str], fmt: str, beside: tuple[str, ...] = ()) -> None:
        self.expected = expected
        self._suffixes, self._sniff, self._stem, self._fmt = suffixes, sniff, stem, fmt
        self._beside = beside  # suffixes of the files its reader reads beside the trace, after the trace's stem

    def beside(self, file_name: str) -> tuple[str, ...]:
        return tuple(self._stem(file_name) + suffix for suffix in self._beside)

    def claims(self, rel: tuple[str, ...]) -> bool:
        return False  # never by its name: results.json is any tool's name

    def maybe(self, rel: tuple[str, ...]) -> bool:
        return rel[-1].endswith(self._suffixes) and self.in_run_folder(rel)

    def sniff(self, path: str) -> str | None:
        return self._sniff(path)

    def group(self, found: list[Found]) -> Groups:
        return self.one_file_sessions(found, self._stem, self._fmt)


LAYOUT = ByContentLayout(EXPECTED, SUFFIXES + PERFETTO_SUFFIXES, sniff, stem, "rocprof", beside=(SYSINFO_SUFFIX,))
