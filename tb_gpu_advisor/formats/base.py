"""What a format is to the rest of the pipeline: a layout, a probe and a reader, behind one descriptor.

Discovery, the tab's GPU-activity probe and the reader call a format only through :class:`Format`, so a
new input format is one package under ``formats/`` and one line in ``formats.REGISTRY``.
"""

from __future__ import annotations

import time

import contextlib
import importlib
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.fmt import BINARY_UNITS
from tb_gpu_advisor.formats import counters, heads
from tb_gpu_advisor.model.logdir import ROOT_RUN, HostFile

if TYPE_CHECKING:  # the trace model imports numpy; importing a format or framework must not
    from tb_gpu_advisor.model.trace import Trace

#: Files larger than this are refused with a clear error instead of exhausting memory (every format).
DEFAULT_MAX_BYTES = 8 << 30
ENV_MAX_BYTES = "TB_GPU_ADVISOR_MAX_PROFILE_BYTES"


#: What a "file over the limit" error adds: how to read it anyway (every analysis -- the command line's, TensorBoard's
#: workers -- gets half its memory limit as its size limit unless the variable is set: ``runtime.guard``).
LIMIT_HINT = (f"raise {ENV_MAX_BYTES} to read it anyway; by default it is half the analysis memory limit, "
              "TB_GPU_ADVISOR_WORKER_MEMORY_MB")


def is_gzip(head: bytes) -> bool:
    """Whether bytes start as a gzip file does (its magic): any format's file may come gzipped (``.json.gz`` traces,
    ``snapshot.pickle.gz``); the bounded reading of one is ``formats.gz.gunzip_upto``'s."""
    return head[:2] == b"\x1f\x8b"


def max_profile_bytes() -> int:
    """The size limit now: ``TB_GPU_ADVISOR_MAX_PROFILE_BYTES`` read at each call (a worker started
    before the variable changed still sees the new value), else 8 GiB."""
    try:
        return int(os.environ.get(ENV_MAX_BYTES, DEFAULT_MAX_BYTES))
    except ValueError:
        return DEFAULT_MAX_BYTES


#: How sessions are named: their capture time, as the XPlane profiler names its session folders (UTC).
#: How a process's standard error ends when it died: Python's uncaught exception (a traceback, then the exception's
#: unindented line), the dynamic loader's refusal, C++'s uncaught exception, a fatal signal reported by the shell.
_TRACEBACK = "Traceback (most recent call last):"
#: These patterns (to the end of :func:`reported_failure`) are text, compiled by ``re``'s own cache at their first
#: use: only a capture that kept the program's output (Nsight) is read with them, and compiling them at import was
#: ~1 ms of every report's start-up (issue #38).
_FRAME = r'(?m)^  File "[^"\n]*", line \d+'
#: A runtime's own fatal report, capitalised as runtimes print it before the context lines they add (NVHPC's OpenACC /
#: OpenMP runtime: ``Accelerator Fatal Error: Failed to find device function ...``, then the file, function and
#: line; or in capitals: ``FATAL ERROR: data in update device clause was not found on device 1``), unlike a
#: compiler's lower-case ``fatal error:`` a program may go on after (a JIT's fallback).
_FATAL_LINE = (r"error while loading shared libraries|symbol lookup error|terminate called after throwing|"
               r"Segmentation fault|core dumped|^Aborted\b|^Killed\b|\bFatal Error:|\bFATAL ERROR:")
#: A program's own error report as its last words, in the form command-line programs print before they exit non-zero
#: (``Error: ...``, ``ERROR: ...``, ``prog: error: ...``, ``fatal error: ...``): a program that went on after such a
#: line printed more, so only the last line of its standard error counts.
_ERROR_REPORT = r"(?i)^(?:[\w./-]+: )?(?:fatal )?error\s*:"
#: A program's report of the exception that ended it, as its last words: its own handler's (PEXSI's ranks:
#: ``Processor 8 caught exception with message: basic_string::_M_construct null not valid``) or a runtime's
#: (``Unhandled exception: ...``) -- caught, unhandled or uncaught, then the exception's message after a colon.
_EXCEPTION_REPORT = r"(?i)\b(?:caught|unhandled|uncaught)\b[^:\n]{0,40}\bexception\b[^:\n]{0,40}:\s*\S"
#: The C library's report of a failed call (``perror``: ``fopen: No such file or directory``): the call's name, then
#: the system's words for the error (``strerror``), a fixed vocabulary.
_STRERROR = (r"(?:No such file or directory|Permission denied|Cannot allocate memory|Is a directory|Not a directory|"
             r"Invalid argument|Too many open files|No space left on device|Input/output error|Bad file descriptor|"
             r"Connection refused|Operation not permitted|No such device|Out of memory)")
_PERROR = r"^\S[^:]{0,80}: " + _STRERROR + "$"
#: The same report in Python's words (``OSError``'s ``[Errno 2] No such file or directory``), as the interpreter
#: prints it when it cannot open the script it was given: ``python: can't open file '/x/bench.py': [Errno 2] ...``.
_ERRNO = r"\[Errno \d+\] " + _STRERROR + "$"


def program_failure(stderr: str, chars: int = 300) -> str:
    """The words a profiled program died with, read off its standard error as a capture kept it (Nsight's
    ``ProcessStreams``): a Python traceback's exception (its line and the message lines after it), a line of the
    loader, of C++'s ``terminate`` or of a fatal signal, or the program's own ``Error: ...`` report or the C library's
    ``perror`` line (``fopen: No such file or directory``, or Python's ``... [Errno 2] No such file or directory``)
    or its report of the exception that ended it (``... caught exception with message: ...``)
    when it is the last line it wrote, or a runtime's ``Fatal
    Error:`` report wherever it stands; "" when the text shows none -- warnings and progress lines
    are no failure.  Cut at ``chars`` characters."""
    text = stderr or ""
    frames = list(re.finditer(_FRAME, text))
    if _TRACEBACK in text or frames:  # a traceback, or the end of one whose header the capture cut off
        start = text.rindex(_TRACEBACK) + len(_TRACEBACK) if _TRACEBACK in text else frames[0].start()
        tail = text[start:].splitlines()
        # the frames are indented; the exception is the first line that is not, its message runs to the end
        exc = [i for i, ln in enumerate(tail) if ln.strip() and not ln[:1].isspace()]
        if exc:
            words = " ".join(ln.strip() for ln in tail[exc[0]:] if ln.strip())
            return words if len(words) <= chars else words[:chars - 3] + "..."
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.search(_FATAL_LINE, ln):
            return ln if len(ln) <= chars else ln[:chars - 3] + "..."
    if lines and (re.match(_ERROR_REPORT, lines[-1]) or re.match(_PERROR, lines[-1]) or re.search(_ERRNO, lines[-1])
                  or re.search(_EXCEPTION_REPORT, lines[-1])):
        return lines[-1] if len(lines[-1]) <= chars else lines[-1][:chars - 3] + "..."
    return ""


#: A terminal's colour and style codes (``ESC[0;31m``): loggers wrap their error lines in them (jetson-utils' red
#: ``LogError``); the words are what is read.
_ANSI = r"\x1b\[[0-9;]*[A-Za-z]"
#: A line in which the program reports that something it needed failed, in the words programs use for it.
_FAILED_WORDS = r"(?i)\b(?:failed to|could not|couldn't|cannot|can't|unable to)\b"
#: A line that calls itself a warning or a note (glog's and TensorFlow's ``W tensorflow/...cc:64] Could not load dynamic
#: library``, Python's
#: ``UserWarning: ...``, ``[warning] ...``, ``[W ...]``): the program says it went on.
_NOT_FATAL = (r"(?i)warn|^\W*(?:info|note|notice|debug)\b|^\W*[WI]\d{0,4}[\s\]]|"
              r"(?:^|\s)[WI](?:\d{4})?\s.*?[\w.-]+\.\w+:\d+\]")


def reported_failure(text: str, chars: int = 300) -> str:
    """The last line of a program's output (either stream: the words tell a failure, not the stream it went to) in
    which it reports that something it needed failed (``videoSource -- failed to parse command line options``,
    ``cannot open camera``), colour codes taken out; "" where none does, or where every such line calls itself a
    warning.  Weaker than :func:`program_failure` -- a program may report a failure and go on -- so it is read only
    for a window in which the program launched no GPU work: there it is the likely reason it launched none."""
    lines = [re.sub(_ANSI, "", ln).strip() for ln in (text or "").splitlines()]
    for ln in reversed(lines):
        if ln and re.search(_FAILED_WORDS, ln) and not re.search(_NOT_FATAL, ln):
            return ln if len(ln) <= chars else ln[:chars - 3] + "..."
    return ""


SESSION_TIME_FORMAT = "%Y_%m_%d_%H_%M_%S"


def session_name(when_s: float | None, suffix: str = "") -> str:
    """A session's name from its capture time (seconds since 1970), as the XPlane session folders are named."""
    try:
        return time.strftime(SESSION_TIME_FORMAT, time.gmtime(when_s or 0.0)) + suffix
    except (OverflowError, OSError, ValueError):
        return "unknown_time" + suffix


def unused_session_name(run: str, when_s: float | None, used: set[tuple[str, str]]) -> str:
    """The name of a session of ``run`` captured at ``when_s`` (:func:`session_name`), with ``_k`` added where an
    earlier session of the run took it (``used``: (run, name) of those, this one's added): the naming of the formats
    that make each program run's files one session (:meth:`RunFolderLayout.one_file_sessions`, rocprofv3's CSV)."""
    name = session_name(when_s)
    k = 0
    while (run, name if not k else f"{name}_{k}") in used:
        k += 1
    name = name if not k else f"{name}_{k}"
    used.add((run, name))
    return name


def named_sessions(sessions: Iterable[list]) -> Iterator[tuple[str, list]]:
    """Each session of one run's folder (its files, each with ``when_s``) with its name: its first file's capture
    time (:func:`session_name`), with ``_k`` (its place) added where an earlier session took that name -- the naming
    of the formats that group a folder's files into sessions by time (Kineto traces, Nsight exports)."""
    used: set[str] = set()
    for k, session in enumerate(sessions):
        name = session_name(min(x.when_s for x in session))
        if name in used:
            name = f"{name}_{k}"
        used.add(name)
        yield name, session


def from_start_fixes(tool: str, setup: str, window: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """The window fixes of a tracer that records from the process's start (rocprof, rocprofv3, rpd_tracer): a window
    that ended in the start-up, and one that holds the start-up before the steps (``setup``: what the start-up does),
    each with the tracer's own way to put the window on the steps (``window``, code)."""
    return {
        "startup": (("The window ended during start-up, before the program launched its first kernel: record the "
                     "steps themselves, and enough of them.", window),),
        "steady": ((f"Put the trace on the steady state: {tool} records from process start ({setup}); start it after "
                    "the warm-up and keep it on several steps.", window),),
    }


def gunzipped_within_limit(f, path: str, error: type[Exception], what: str) -> bytes:
    """The gzip stream ``f`` decompressed no further than the size limit a plain file has
    (``formats.gz.gunzip_upto``, the one bounded gzip reader); ``error`` (the format's own) where the stream is cut
    off or corrupt (after so much of ``what``: "the trace", "the database") or decompresses past the limit.  One home
    for the readers that take their format gzipped whole (rocprof's JSON, rocmProfileData's database)."""
    from tb_gpu_advisor.formats.gz import gunzip_upto

    limit = max_profile_bytes()
    raw, cut = gunzip_upto(f, limit + 1)
    if cut:
        from tb_gpu_advisor.model.damage import attach
        from tb_gpu_advisor.model.damage import cut as cut_damage

        why = f"its gzip stream is cut off or corrupt after {human_size(len(raw))} of {what}"
        raise attach(error(f"{path}: damaged gzip file: its stream is cut off or corrupt after {human_size(len(raw))} "
                           f"of {what}"), cut_damage("gzip_cut", why, offset=len(raw)))
    if len(raw) > limit:
        raise error(f"{path}: decompressed, over the {human_size(limit)} limit ({LIMIT_HINT})")
    return raw


@contextlib.contextmanager
def gunzipped_copy(path: str, error: type[Exception], suffix: str) -> Iterator[str]:
    """The gzipped database at ``path`` decompressed, no further than the size limit (:func:`gunzipped_within_limit`),
    into a private copy SQLite reads in place -- its path, removed after.  One home for the SQLite formats taken
    gzipped (rocmProfileData's ``.rpd.gz``, nvprof's ``.nvvp.gz``)."""
    try:
        with fsio.open_binary(path) as f:
            data = gunzipped_within_limit(f, path, error, "the database")
    except OSError as e:
        raise error(f"cannot read {path}: {e}") from e
    folder = tempfile.mkdtemp(prefix="tb-gpu-advisor-")
    try:
        copy = os.path.join(folder, "copy" + suffix)
        with open(copy, "xb") as out:
            out.write(data)
        del data
        yield copy
    finally:
        shutil.rmtree(folder, ignore_errors=True)


#: A format's content probe: (why the file is not one of its profiles, None where it is; whether it holds GPU work,
#: None where that cannot be told), for a path, its size and its mtime.
Probe = Callable[[str, int, int], "tuple[str | None, bool | None]"]


def sniffed(path: str, probe: Probe) -> str | None:
    """Why the file at ``path`` is not the format's profile by its content (``probe``), None where it is."""
    try:
        st = os.stat(fsio.local_path(path))
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    return probe(path, st.st_size, st.st_mtime_ns)[0]


def probed_activity(path: str, probe: Probe) -> bool | None:
    """Whether the database at ``path`` holds GPU work, by its content (``probe``): None where it cannot be told --
    gzipped (told only once decompressed, by its read), unreadable, or not the format's."""
    if path.endswith(".gz"):
        return None
    try:
        st = os.stat(fsio.local_path(path))
    except OSError:
        return None
    why, gpu = probe(path, st.st_size, st.st_mtime_ns)
    return gpu if why is None else None


def human_size(n: int) -> str:
    """Size for error messages (``2.2 GiB``; GiB alone printed a 1 kB limit as "0.0 GiB")."""
    for unit, scale in BINARY_UNITS:
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


#: How a Git LFS pointer starts (the LFS specification, ``docs/spec.md`` of git-lfs): a clone or download that did not
#: fetch a repository's LFS content holds this small text file where the profile should be -- the same for every
#: format, so each format's own words ("not JSON", "not a pickle", a protobuf wire error) would name the wrong cause.
_LFS_START = b"version https://git-lfs.github.com/spec/"
_LFS_FIELD = re.compile(rb"^(oid sha256:([0-9a-f]{8})[0-9a-f]*|size (\d+))\s*$", re.M)


class LfsPointerError(ValueError):
    """A profile file that is a Git LFS pointer: the message says so and how to fetch the file itself."""


class TextDecodedError(ValueError):
    """A binary profile converted to text (:func:`text_decoded`): the message says so and how to fetch it again."""


def lfs_pointer(path: str) -> str | None:
    """Why ``path`` is not a profile when it is a Git LFS pointer (the file it stands for, its size and how to fetch
    it), else None -- also for an unreadable file, which its format's reader reports in its own words."""
    try:
        head = fsio.read_head(path, 512)
    except Exception:  # noqa: BLE001 - unreadable: the format's reader says why
        return None
    if not head.startswith(_LFS_START):
        return None
    oid = size = None
    for m in _LFS_FIELD.finditer(head):
        oid = m.group(2).decode() if m.group(2) else oid
        size = int(m.group(3)) if m.group(3) else size
    if size is not None and size >= 1 << 63:  # no file is longer than an off_t: a size of 400 digits is no pointer's
        size = None
    what = f"the {human_size(size)} file" if size is not None else "the file"
    ident = f" (sha256 {oid}...)" if oid else ""
    return (f"a Git LFS pointer, not the profile: the repository keeps {what}{ident} in Git LFS, and this copy holds "
            f"only its {len(head)}-byte pointer. Fetch the file itself (`git lfs pull --include <this path>` in the "
            f"clone, or the repository's download of it) and analyse that")


def foreign_capture(path: str) -> str | None:
    """Why ``path`` is not read when its bytes are another tool's capture under a name no format reads it by -- an
    Nsight Systems report saved as anything but ``.nsys-rep`` (``heads.is_nsys_report_head``), with what its header
    says and the command that exports it; an Nsight Compute report (``heads.is_ncu_report_head``) under a name ncu does
    not give it, with what to trace instead -- in words; None for any other file (a report named ``<name>.ncu-rep``
    is its folder's counter collection, ``discover.counter_file``: a course repository's four T4 reports were each
    "under another name" beside their folder's collection, survey h37-huntn66), and for an unreadable one."""
    try:
        head = fsio.read_head(path, 64)  # each head's magic, a stream's after its lead
        if heads.is_ncu_report_head(head):
            name = fsio.file_name(path)
            if counters.NSIGHT_COMPUTE.names(name):  # ncu's own name: its folder's collection, told by name
                return None
            return counters.Collection(counters.NSIGHT_COMPUTE, (name,)).words(
                f"{name}, an Nsight Compute report under another name (ncu -o writes <name>.ncu-rep),")
        if heads.is_nsys_stream_head(head):
            return heads.renamed_stream_words(fsio.file_name(path))
        if not heads.is_nsys_report_head(head):
            return None
        head = fsio.read_head(path, heads.NSYS_HEADER_BYTES)
    except Exception:  # noqa: BLE001 - unreadable: the format's reader says why
        return None
    return heads.nsys_report_words(head, fsio.file_name(path))


#: How much of a file :func:`text_decoded` reads, and how many replacement characters and control bytes that head must
#: hold: a UTF-8 decode that met binary data leaves thousands of both in 64 KiB (the TPU XPlane xprof committed as
#: text: 12,704 replacements in its first 37,694 characters); a text file holds no control byte but tab and
#: newlines, and a real binary file is not valid UTF-8 at all, so neither reaches 16 of both.
_TEXT_DECODED_HEAD = 1 << 16
_TEXT_DECODED_MIN = 16
_REPLACEMENT = "\ufffd"


def text_decoded(path: str) -> str | None:
    """Why ``path`` is not the profile when it is a binary profile that went through a UTF-8 text decoder (an editor,
    a web page's text, a tool that read and wrote it as text): each byte the decoder could not read became U+FFFD,
    written back as the three bytes EF BF BD, so the file decodes as valid UTF-8 -- which no binary profile does --
    and keeps the binary's control bytes -- which no text does.  None for any other file, and for an unreadable one.

    Asked only after a format's reader failed (``formats.read``): a readable file is never refused by it."""
    try:
        head = fsio.read_head(path, _TEXT_DECODED_HEAD)
    except Exception:  # noqa: BLE001 - unreadable: the format's reader says why
        return None
    import codecs

    try:  # not final: a head cut inside a character is no sign of anything
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return None  # a binary's own bytes
    replaced = text.count(_REPLACEMENT)
    controls = sum(1 for c in text if c < " " and c not in "\t\n\r")
    if replaced < _TEXT_DECODED_MIN or controls < _TEXT_DECODED_MIN:
        return None
    return (f"a binary profile converted to text, not the profile: {replaced:,} of the first {len(text):,} characters "
            f"are U+FFFD, the mark a UTF-8 text decoder writes for each byte it cannot read, between the binary's "
            f"own control bytes -- the original bytes are lost. Fetch the file again as binary (the repository's "
            f"raw download, `git show <commit>:<path> > <file>` from a commit before the conversion, or the "
            f"profiler's output itself) and analyse that")


#: (run, session, session folder) -> the host files of that session.
Groups = dict[tuple[str, str, str], list[HostFile]]


@dataclass(frozen=True)
class Found:
    """A file one layout claimed during the walk: its path relative to the logdir (as parts), where it is."""

    rel: tuple[str, ...]
    path: str  # local path or URL
    folder: str  # the folder holding it (local path or URL)
    size: int
    mtime_ns: int

    @property
    def name(self) -> str:
        return self.rel[-1]


@dataclass(frozen=True)
class Located:
    """One host file named on the command line, as (logdir, session selector, host) of its layout."""

    logdir: str
    selector: str | None
    host: str


class Layout(Protocol):
    """How a format's files are named and placed in a logdir, and how they group into sessions and hosts."""

    #: The layout as a user is told it ("<run>/plugins/profile/<session>/<host>.xplane.pb").
    expected: str
    #: Seconds apart that sibling session folders of one run, named by capture time, may be and still hold the hosts
    #: of one capture (each host names its folder by its own clock); 0: a session is always one folder.
    host_folders_within_s: float

    def claims(self, rel: tuple[str, ...]) -> bool:
        """Whether the file at ``rel`` (path parts below the logdir) is one of this format's host files, placed
        where the layout puts them."""

    def descend(self, rel: tuple[str, ...]) -> bool:
        """Whether the folder at ``rel`` can hold this format's files (the local walk prunes the others)."""

    def misplaced(self, rel: tuple[str, ...]) -> bool:
        """A file named like this format's but not where the layout puts it (for the "wrong layout" hint)."""

    def unread(self, rel: tuple[str, ...]) -> str | None:
        """Why the file at ``rel``, placed where this format's files go, is another writer's profile this tool does
        not read (an older profiler's output), in words; None for any other file.  Discovery names it instead of
        leaving a logdir that holds a profile to read "no profiles found"."""

    def unread_beside(self, file_name: str, read: frozenset[str]) -> bool:
        """Whether the note on ``file_name`` (a file :meth:`unread` named) goes unsaid because of the profiles
        ``read`` in its folder (their file names): a profile's companion (TensorFlow's tool data beside its XPlane) is
        that profile's, not one left out; a file of a capture of its own (an Nsight stream beside another report) is
        still one left out."""

    def maybe(self, rel: tuple[str, ...]) -> bool:
        """A file its name does not claim but whose content may (a trace saved under another name): ``sniff`` says."""

    def sniff(self, path: str) -> str | None:
        """None when the file at ``path`` (one ``maybe`` named) is this format's, else why it is not, in words (``""``
        where a file of that name is anyone's and is left out without a word: a ``.csv`` that is no profiler's)."""

    def refused(self, path: str) -> str | None:
        """Why the file at ``path``, given by path and one :meth:`maybe` named, is not this format's, in words --
        where the walk may say nothing (:meth:`sniff`'s ``""``: a ``.pt`` checkpoint); None when it is."""

    def lone_content(self, path: str) -> str | None:
        """The host a file given alone by path, under a name no layout reads, is named for when its content says it
        is this format's (a snapshot saved as ``ss_3``); None otherwise (the default: a format told by name)."""

    def pointer_unsaid(self, rel: tuple[str, ...]) -> bool:
        """Whether a Git LFS pointer at ``rel`` (a name ``maybe`` asked) goes unsaid: a name most files of which are
        other programs' (a ``.pt`` checkpoint), whose pointer is no more a profile's than the file it stands for.
        Only a layout that :meth:`maybe` asks is asked."""

    def group(self, found: list[Found]) -> Groups:
        """The claimed files as sessions of host files."""

    def locate(self, path: str) -> Located | None:
        """A single host file given by path, placed as the layout puts it: where its logdir, session and host are;
        None otherwise (a file outside the layout is read alone: :meth:`lone_host`)."""

    def lone_host(self, file_name: str) -> str | None:
        """The host a file given alone by path (outside any logdir layout) is named for, when its name alone says
        it is this format's; None for a format told by its folder or content (discovery places those)."""

    def read_instead(self, file_name: str) -> tuple[str, ...]:
        """The names of files in the same folder that, when present, are read in place of the host file named
        ``file_name`` (an Nsight report's SQLite export beside the report): the walk lists the file read, and a file
        given by path (``report X.nsys-rep``) is that one's host, never "not a profile this tool reads".  A name
        ``*<suffix>`` stands for any file so named.  () when nothing stands in for it."""

    def beside(self, file_name: str) -> tuple[str, ...]:
        """The names of the files this format's reader reads beside the host file named ``file_name``, in its folder
        (a memory snapshot's capacity record): a report depends on them as on the host file, so discovery lists them
        with it (``HostFile.beside``) and a cached report is keyed by them.  () for a reader that reads no other."""


#: TensorBoard's folder of plugin data in a run (``<run>/plugins/<plugin>/...``): the XPlane profiler writes below it;
#: a run's own traces, exports and snapshots lie beside it, never in it.
PLUGINS_DIR = "plugins"


_Answer = TypeVar("_Answer")


def file_identity(path: str) -> tuple[str, int, int]:
    """(path, size, mtime in ns): what a cached answer about a file is kept by, so a rewritten file is read again.
    Raises OSError where the file cannot be stat'ed."""
    st = os.stat(fsio.local_path(path))
    return str(path), st.st_size, st.st_mtime_ns


class ByIdentity(Generic[_Answer]):
    """Answers about files (is it this format's, and why not), kept by :func:`file_identity`.

    Why: discovery asks every candidate file again on each listing the tab polls; a format's sniff that opens the file
    each time would read every trace of a large logdir twice a minute.  Bounded: past ``limit`` answers it starts over.
    One home for the cache the content-sniffed formats (rocprof's JSON, CSV and database, rocmProfileData) share."""

    def __init__(self, limit: int = 50_000) -> None:
        self._seen: dict[tuple[str, int, int], _Answer] = {}
        self._lock = threading.Lock()
        self._limit = limit

    def answer(self, key: tuple[str, int, int], probe: Callable[[], _Answer]) -> _Answer:
        """The answer kept for ``key``, else ``probe()``'s, kept."""
        with self._lock:
            if key in self._seen:
                return self._seen[key]
        found = probe()
        with self._lock:
            if len(self._seen) > self._limit:
                self._seen.clear()
            self._seen[key] = found
        return found

    def answer_for(self, path: str, probe: Callable[[], _Answer]) -> _Answer:
        """:meth:`answer` for the file ``path`` (:func:`file_identity`); ``probe()``'s, not kept, where its identity
        cannot be read."""
        try:
            key = file_identity(path)
        except OSError:
            return probe()
        return self.answer(key, probe)


_Header = TypeVar("_Header")


@dataclass(frozen=True)
class RunFile(Generic[_Header]):
    """One file of a run folder as its layout groups it into sessions (:class:`RunFolderLayout`): the host file, when
    it was written (seconds since the epoch: the file's own clock or name where it has one, else its mtime) and what
    its format's header says (a Kineto trace's rank and world, an Nsight export's duration and GPUs)."""

    host: HostFile
    when_s: float
    header: _Header


class RunFolderLayout:
    """What the layouts of files kept in a run's own folder share (PyTorch traces, Nsight exports, memory snapshots):
    such a file is anywhere but under ``plugins/``, so no place is wrong for it and no single file names its logdir.
    Each subclass says which names it claims (:meth:`claims`, :meth:`maybe`), how its content is told
    (:meth:`sniff`) and how files group into sessions (:meth:`group`)."""

    expected: str
    host_folders_within_s: float = 0.0  # a run folder's sessions are grouped by its layout's own clock (``group``)

    def pointer_unsaid(self, rel: tuple[str, ...]) -> bool:
        return False  # a pointer under a name this format may hold says it is one (``discover._sniffed``)

    def refused(self, path: str) -> str | None:
        return self.sniff(path)  # type: ignore[attr-defined]  # every subclass sniffs

    def lone_content(self, path: str) -> str | None:
        return None  # told by name: ``lone_host``

    def capture_span(self, path: str, size: int, mtime_ns: int) -> tuple[float, float]:
        """(first, last) second since 1970 the capture in the file at ``path`` can hold: by default the file's
        modification time alone (a memory snapshot is dumped at one moment); a layout whose header says when its
        capture began widens it (discovery links captures of one job by it: ``discover._same_job``)."""
        return mtime_ns / 1e9, mtime_ns / 1e9

    def gpu_totals(self, path: str, size: int, mtime_ns: int) -> tuple[tuple[int, int], ...]:
        """(ordinal, total bytes) of each GPU the capture in the file at ``path`` lists with its memory's size, from
        its header; () by default.  Discovery hands them, as numbers, to a capture of the same job that records no
        GPU size (``discover._same_job``: a memory snapshot), so no format reads another's file."""
        return ()

    def job_rank(self, path: str, size: int, mtime_ns: int) -> tuple[int, int, str, float] | None:
        """(rank, world size, the job's process groups as text, capture start in seconds since 1970) the file at
        ``path`` states of the job it is one rank of, from its header; None where it states no rank of a job of two or
        more, or no time (the default).  Discovery links sibling run folders that each hold ranks of one job
        (``discover._rank_folders``)."""
        return None

    @staticmethod
    def in_run_folder(rel: tuple[str, ...]) -> bool:
        """The file at ``rel`` lies outside every ``plugins/`` folder."""
        return PLUGINS_DIR not in rel[:-1]

    def descend(self, rel: tuple[str, ...]) -> bool:
        return PLUGINS_DIR not in rel

    def misplaced(self, rel: tuple[str, ...]) -> bool:
        return False

    def unread(self, rel: tuple[str, ...]) -> str | None:
        return None

    def unread_beside(self, file_name: str, read: frozenset[str]) -> bool:
        return bool(read)  # beside any profile read, the other writer's file is that profile's companion

    def locate(self, path: str) -> Located | None:
        return None  # placed by its folder only: discovery finds it there (``discover.locate_file``)

    def lone_host(self, file_name: str) -> str | None:
        return None  # its folder is its run: discovery places it (``discover.locate_file``)

    def read_instead(self, file_name: str) -> tuple[str, ...]:
        return ()

    def beside(self, file_name: str) -> tuple[str, ...]:
        return ()

    @staticmethod
    def one_file_sessions(found: list[Found], stem: Callable[[str], str], fmt: str) -> Groups:
        """Each file its own session of one host, named for when it was written (its mtime) and numbered where two
        of a run share a second: the grouping of formats that write one whole database or trace per program run
        (rocmProfileData, rocprof, rocpd), whose files carry no rank or world to join them by."""
        groups: Groups = {}
        used: set[tuple[str, str]] = set()
        for f in sorted(found, key=lambda x: (x.mtime_ns, x.path)):
            run = "/".join(f.rel[:-1]) or ROOT_RUN
            name = unused_session_name(run, f.mtime_ns / 1e9 if f.mtime_ns else 0.0, used)
            groups[(run, name, f.folder)] = [HostFile(stem(f.name), f.path, f.size, f.mtime_ns, fmt)]
        return groups


class DatabaseLayout(RunFolderLayout):
    """Databases of a program run kept in a run's folder, each a session of its own (nvprof's, rocmProfileData's): a
    file is claimed by the format's own names (:attr:`names`, gzipped too: read through a decompressed private copy);
    an SQLite file saved under another name (:attr:`sqlite_names`) is read when its tables are the format's (its
    ``probe``, cached by the file's identity); one compressed otherwise than gzip is named with the command that
    restores it (SQLite reads a database in place)."""

    #: How a shared database is often compressed otherwise than gzip, and the command that gives the file back.
    COMPRESSED = {".xz": "xz -dk", ".bz2": "bunzip2 -k", ".zst": "zstd -d"}

    def __init__(self, *, kind: str, what: str, expected: str, names: tuple[str, ...],
                 sqlite_names: tuple[str, ...], probe: Callable[[str], tuple[str | None, bool | None]]) -> None:
        self.kind, self.what, self.expected = kind, what, expected
        self.names = names + tuple(n + ".gz" for n in names)
        self.sqlite_names = sqlite_names
        self._probe = probe
        self._probed: ByIdentity[tuple[str | None, bool | None]] = ByIdentity()

    @staticmethod
    def _suffix(file_name: str, suffixes: tuple[str, ...]) -> str | None:
        return next((s for s in suffixes if file_name.endswith(s) and len(file_name) > len(s)), None)

    def stem(self, file_name: str) -> str:
        """``file_name`` without its database suffix: the host a file is read as."""
        suffix = self._suffix(file_name, self.names + self.sqlite_names)
        return file_name[: -len(suffix)] if suffix else file_name

    def compressed(self, file_name: str) -> str | None:
        """Why a database of the format's own name compressed otherwise than gzip is left out, with the command that
        restores it; None for any other name."""
        for suffix, command in self.COMPRESSED.items():
            inner = file_name[: -len(suffix)] if file_name.endswith(suffix) else ""
            if self._suffix(inner, self.names):
                return f"a compressed {self.what}, read once decompressed, since SQLite reads a database in place: " \
                       f"{command} {file_name}"
        return None

    def probe_file(self, path: str, size: int = 0, mtime_ns: int = 0) -> tuple[str | None, bool | None]:
        """(None when ``path`` is the format's database, else why not; whether it holds a kernel); over the size
        limit it is not opened (its read says so).  Cached by identity."""
        return self._probed.answer((path, size, mtime_ns),
                                   lambda: (None, None) if size > max_profile_bytes() else self._probe(path))

    def has_gpu_activity(self, path: str) -> bool | None:
        """True when the database holds a kernel, False when it holds none, None when it cannot be told (a gzipped
        one: told only once decompressed, by its read)."""
        return probed_activity(path, self.probe_file)

    def claims(self, rel: tuple[str, ...]) -> bool:
        return self._suffix(rel[-1], self.names) is not None and self.in_run_folder(rel)

    def maybe(self, rel: tuple[str, ...]) -> bool:
        return rel[-1].endswith(self.sqlite_names) and self.in_run_folder(rel)

    def unread(self, rel: tuple[str, ...]) -> str | None:
        return self.compressed(rel[-1])

    def sniff(self, path: str) -> str | None:
        return sniffed(path, self.probe_file)

    def group(self, found: list[Found]) -> Groups:
        return self.one_file_sessions(found, self.stem, self.kind)


@dataclass(frozen=True)
class Format:
    """One input format, as the pipeline knows it."""

    id: str
    #: How listings name it ("XPlane (TensorFlow/JAX)").
    name: str
    layout: Layout
    #: ``probe(local_path)``: True/False whether the file has GPU activity, None when it cannot be told cheaply.
    probe: Callable[[str], bool | None]
    #: Module whose ``read_trace(path, host, ranks=...)`` reads it, imported on first use: a TensorBoard that
    #: serves only one format never loads the other's reader.
    reader_module: str
    #: Whether the stock Profile tab opens this format (its trace-viewer links need it).
    stock_tool_opens: bool = False
    #: Whether Perfetto UI opens one host file of this format as it is (the tab hands it the file, not a window).
    perfetto_opens: bool = False
    #: The desktop application that opens this format's files when no browser does (the tab says to use it, in its
    #: time base), else None.
    native_viewer: str | None = None
    #: How to record the right window with this format's own profiler, for a capture whose window held no GPU work,
    #: by what it held (``job.kind.WINDOWS``; "" for any), and for the other windows the rules name ("steady", "long",
    #: "lost_records", "no_gpu_records": a window whose launches have no GPU record, "no_host": a kernel trace alone,
    #: nothing of the host recorded): ``(what to do, command)`` pairs.  Empty where the format's
    #: profiler is the framework's own (``torch.profiler``, ``jax.profiler``): the framework's fixes say it then.
    window_fixes: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    #: How to record the GPU side a rank's window lacks, as one clause a rank's words end with, per key of
    #: :attr:`window_fixes` ("cuda_unrecorded": the GPU's side not traced, "lost_records": launches whose kernels have
    #: no record): the fix's first step in short, its own text -- the job line names the rank and says it after "; "
    #: (``job.kind._record_fix``), where a finding gives the whole fix.
    window_fix_clauses: Mapping[str, str] = field(default_factory=dict)
    #: The language of :attr:`window_fixes`' code: "shell" for a profiler run from the command line (``nsys profile``),
    #: "python" where the program itself switches recording (torch.profiler's options, ``rpdTracerControl``).
    window_fix_lang: str = "shell"

    def reader(self) -> Callable[..., Trace]:
        return importlib.import_module(self.reader_module).read_trace


def claimed_by(formats: Iterable[Format], rel: tuple[str, ...]) -> Format | None:
    """The format whose layout claims the file at ``rel``, if any."""
    return next((f for f in formats if f.layout.claims(rel)), None)
