"""Run one analysis in a child process with a memory and a time limit.

Why: TensorBoard serves every tab from one process.  An analysis that runs
inside it shares its GIL and its memory: a pathological file (a regex that
backtracks, a 1 GB capture peaking at 2.1 GB) froze or killed the whole
shared TensorBoard.  In a child process the worst a file can do is fail its
own report: the child gets ``RLIMIT_AS`` (address space) and a wall-clock
limit after which it is killed, ``RLIMIT_CPU`` (a CPU budget that grows
with the file: a 459-byte pickle that spins forever ends after the floor, a
1 GiB capture still fits), and TensorBoard's threads never wait on its GIL.

Children are started by the ``forkserver`` (:func:`mp_context`), never
by forking TensorBoard's threaded process; the forkserver preloads the
analyzer's modules once, so each child starts in milliseconds instead of
importing numpy again (measured in ``scripts/robustness.py``,
``docs/robustness.md``).  One child per analysis: a crashed, killed or
leaking child takes nothing with it, and its memory goes back to the OS.

Limits: ``TB_GPU_ADVISOR_WORKER_MEMORY_MB`` (default for these server workers:
a quarter of the machine's memory, at least 2 GiB, at most 4 GiB, ``guard.py``;
0: none), ``TB_GPU_ADVISOR_MAX_PROFILE_BYTES`` (default for them: half the memory
limit, so a file that cannot fit is refused at once) and
``TB_GPU_ADVISOR_WORKER_TIMEOUT_S`` (wall clock, default 900; 0: none) and
``TB_GPU_ADVISOR_WORKER_CPU_S`` (CPU seconds; default :func:`cpu_budget` of the
files analysed: 60 s and 120 s more per GiB, eight times that per GiB of gzip;
0: none).  The largest real capture we hold (a 13 MB XPlane file) takes 0.5 s
of CPU; a generated 1 GB capture 20 s (``docs/benchmarks.md``).

A child that dies says why: the signal by name and the limit it stands for
(``SIGXCPU``: the CPU budget; ``SIGSEGV``: a crash, never a guessed "out of
memory"), see :func:`death_message`.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from tb_gpu_advisor.common import logs, thresholds
from tb_gpu_advisor import formats
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.formats.base import ENV_MAX_BYTES
from tb_gpu_advisor.model.schema import HostReport
from tb_gpu_advisor.runtime import guard, pipeline
from tb_gpu_advisor.runtime.parent_main import ENV, main_data
from tb_gpu_advisor.runtime.guard import ENV_MEMORY  # noqa: F401 -- tests set the worker limit through it

if TYPE_CHECKING:
    import multiprocessing.context

ENV_TIMEOUT = "TB_GPU_ADVISOR_WORKER_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 900.0
ENV_CPU = "TB_GPU_ADVISOR_WORKER_CPU_S"
#: CPU seconds any analysis may use, however small its file: ~100x what the largest real capture we hold needs
#: (0.5 s for 13 MB), room for a slow or busy machine.
CPU_FLOOR_S = 60.0
#: ... and this many more per GiB of file: a generated 1 GB capture takes 20 s of CPU here, so 6x room.
CPU_S_PER_GIB = 120.0
#: A gzip file is weighed at this many times its size (traces compress ~8-10x; a declared size can lie).
GZIP_WEIGHT = 8
#: Seconds between the CPU limit's SIGXCPU (soft) and the kernel's SIGKILL (hard), should the first be ignored.
_CPU_HARD_MARGIN_S = 5
#: Modules the analysis imports on first use, not at import (a report of one format never loads another's reader, its
#: compiled decoder, the HLO reader or msgspec: the command line's start-up), which a worker must not import itself.
#: Why: a child imports under its memory limit (``guard``), where compiling a module's source (no up-to-date ``.pyc``:
#: an editable install, ``PYTHONDONTWRITEBYTECODE``) or mapping an extension can fail -- CPython's compiler then
#: crashed the child with SIGSEGV (the many-host test under 64 MB, 3 runs in 6), and a compiled decoder that cannot be
#: mapped would silently fall back to Python.  Loaded once in the forkserver, every child has them.
LAZY_ANALYSIS_MODULES = (*sorted(f.reader_module for f in formats.REGISTRY.values()),
                         "tb_gpu_advisor.formats.xplane.hlo", "tb_gpu_advisor.formats.kineto.parse",
                         "tb_gpu_advisor.model.sanity", "msgspec", "numpy.ma")
#: ``forkserver_main`` first: it imports the parent's main module in the server, so the children do not
#: each import it again (``tensorboard.main``: about 0.8 s per analysis; see that module).  A module that cannot be
#: imported (msgspec not installed) is skipped by the forkserver.
_PRELOAD = ["tb_gpu_advisor.runtime.forkserver_main", "tb_gpu_advisor.runtime.pipeline", "tb_gpu_advisor.formats.xplane.reader",
            "tb_gpu_advisor.runtime.isolation", *LAZY_ANALYSIS_MODULES]


class WorkerError(Exception):
    """The child failed: it raised, ran out of memory or time, or died.  The message says which; ``kind`` says it
    to code: ``"limit"`` (memory, CPU or wall clock: the file's own refusal, not retried until it changes),
    ``"crash"`` (died of a signal that is no limit), or the exception's class name when the child raised."""

    def __init__(self, message: str, kind: str = "error") -> None:
        super().__init__(message)
        self.kind = kind

    @property
    def limit(self) -> bool:
        """True when the file hit a limit of its worker (the same file would hit it again)."""
        return self.kind == "limit"


#: Exceptions (by class name: a worker's come back as text) that say a listed file is gone or was refused.
GONE = frozenset({"NotListedFile", "FileNotFoundError", "PermissionError", "IsADirectoryError", "NotADirectoryError",
                  "SessionNotFoundError"})


#: errno of an ``O_NOFOLLOW`` open that met a symlink (Linux ELOOP, the BSDs' EMLINK): a link swapped in since the
#: listing, refused as such even when it was swapped out again before the refusal could read it.
_LINK_MET = frozenset({errno.ELOOP, errno.EMLINK})


def failure_kind(e: BaseException) -> str:
    """What an analysis failure says of its cause, in words a parent can act on without the exception itself:

    * a :data:`GONE` name: the listed file is gone or was refused (a link swapped in), here or in a cause;
    * ``"limit"``: the analysis ran out of memory;
    * ``"file"``: the file's own bytes could not be read (a reader's error, a ``ValueError`` or ``OSError``);
    * the exception's class name otherwise: a defect of the analyzer."""
    seen: set[int] = set()
    x: BaseException | None = e
    while x is not None and id(x) not in seen:  # the reader wraps the open's refusal: look through the causes
        seen.add(id(x))
        if type(x).__name__ in GONE:
            return type(x).__name__
        if isinstance(x, OSError) and x.errno in _LINK_MET:  # a link met on an O_NOFOLLOW open: swapped in
            return "NotListedFile"
        x = x.__cause__ or x.__context__
    if isinstance(e, MemoryError):
        return "limit"
    if isinstance(e, (ValueError, OSError)) or type(e).__module__.startswith("tb_gpu_advisor.formats"):
        return "file"
    return type(e).__name__


@dataclass(frozen=True)
class Limits:
    memory_bytes: int | None = None  # RLIMIT_AS of the child; None: no limit
    timeout_s: float | None = None  # wall clock; None: no limit
    #: the largest profile the child reads (uncompressed), when ``TB_GPU_ADVISOR_MAX_PROFILE_BYTES`` does not say
    profile_bytes: int | None = None
    cpu_s: float | None = None  # RLIMIT_CPU of the child (seconds); None: no limit

    @classmethod
    def from_env(cls, hosts: Any = ()) -> "Limits":
        """A server's worker limits (TensorBoard's tab, the MCP server) for analysing ``hosts`` (HostFiles): the
        environment's, else the one rule's defaults (the command line's too): memory ``guard.memory_limit_from_env()``
        (a quarter of the machine's, 2-4 GiB), profiles up to half of it (a file that cannot fit is refused before it
        is read, not after minutes), and CPU :func:`cpu_budget` of the hosts' files."""
        memory = guard.memory_limit_from_env()
        cpu = _env_float(ENV_CPU, cpu_budget(hosts)) if ENV_CPU in os.environ else cpu_budget(hosts)
        return cls(memory, _env_float(ENV_TIMEOUT, DEFAULT_TIMEOUT_S), guard.profile_limit(memory), cpu)


def cpu_budget(hosts: Any = ()) -> float:
    """CPU seconds an analysis of ``hosts`` (HostFiles, each with ``path``, ``size`` and perhaps ``ranks``) gets by
    default: :data:`CPU_FLOOR_S` plus :data:`CPU_S_PER_GIB` per GiB of file (gzip weighed :data:`GZIP_WEIGHT` times).

    Why by size: the work of a sound file grows with its bytes, so a budget in proportion lets the largest
    capture finish and stops a tiny file that spins (a hostile pickle) after the floor, not after minutes."""
    weighed = 0
    for h in hosts or ():
        for f in getattr(h, "ranks", None) or (h,):
            size = max(0, int(getattr(f, "size", 0) or 0))
            weighed += size * (GZIP_WEIGHT if str(getattr(f, "path", "")).endswith(".gz") else 1)
    return CPU_FLOOR_S + CPU_S_PER_GIB * weighed / (1 << 30)


def _env_float(name: str, default: float) -> float | None:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        value = default
    return value if value > 0 else None


def mp_context() -> multiprocessing.context.BaseContext:
    """Start workers with forkserver/spawn, never plain fork.

    Forking a multi-threaded process (TensorBoard's server is threaded) can
    deadlock the child on a lock held by another thread; forkserver starts
    children from a clean single-threaded process.

    The forkserver gets its preload (:data:`_PRELOAD`) from whichever start comes first -- a worker of
    :func:`call` or a session's process pool -- so no child of it imports an analysis module under its limit.
    """
    import multiprocessing  # here, not at import: the CLI's report runs in its own process and never starts one

    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    if ctx.get_start_method() == "forkserver":
        os.environ[ENV] = json.dumps(main_data())  # read by the server when it starts (it inherits os.environ)
        ctx.set_forkserver_preload(_PRELOAD)  # only takes effect if the server is not running yet
    return ctx


def call(fn: Callable[..., Any], *args: Any, limits: Limits | None = None,
         progress: Callable[[str, float], None] | None = None) -> Any:
    """``fn(*args, progress=...)`` in a child process; its (picklable) result, or :class:`WorkerError`.

    ``fn`` must be a module-level function.  ``progress(message, fraction)``
    calls made in the child are forwarded to ``progress`` here.
    """
    limits = limits or Limits.from_env()
    ctx = mp_context()
    parent, child = ctx.Pipe(duplex=False)
    env = dict(os.environ)
    if limits.profile_bytes and ENV_MAX_BYTES not in env:  # the variable, when set, is the user's word
        env[ENV_MAX_BYTES] = str(limits.profile_bytes)
    proc = ctx.Process(target=_child_main, args=(child, fn, args, limits.memory_bytes, env, limits.cpu_s,
                                                 thresholds.tuned()),
                       daemon=True, name="gpu-advisor-analysis")
    proc.start()
    child.close()
    deadline = None if limits.timeout_s is None else time.monotonic() + limits.timeout_s
    try:
        while True:
            wait = 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))
            if parent.poll(wait):
                try:
                    kind, *payload = parent.recv()
                except (EOFError, OSError):
                    proc.join(5)
                    raise _death(proc.exitcode, limits) from None
                if kind == "progress":
                    if progress is not None:
                        progress(*payload)
                    continue
                if kind == "ok":
                    return payload[0]
                name, message, *kind = payload
                if name == "MemoryError":
                    raise WorkerError(guard.out_of_memory_message(limits.memory_bytes), "limit")
                raise WorkerError(f"{name}: {message}", kind[0] if kind else name)
            if not proc.is_alive() and not parent.poll(0):
                raise _death(proc.exitcode, limits)
            if deadline is not None and time.monotonic() >= deadline:
                raise WorkerError(f"took longer than {limits.timeout_s:g} s of wall-clock time: stopped "
                                  f"(wall-clock limit; raise {ENV_TIMEOUT} to allow more, 0 for none)", "limit")
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        parent.close()


_mb = guard.mb


def _death(exitcode: int | None, limits: Limits) -> WorkerError:
    """The error of a child that ended without a result (:func:`death_message`, and whether it was a limit)."""
    message, kind = death_message(exitcode, limits)
    return WorkerError(message, kind)


def signal_name(number: int) -> str:
    """``SIGSEGV`` for 11 (the platform's name), ``signal 77`` for one it has none for."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def death_message(exitcode: int | None, limits: Limits) -> tuple[str, str]:
    """(why a worker that ended without a result died, its kind: ``"limit"`` or ``"crash"``).

    Said from the signal, never guessed: ``SIGXCPU`` is the CPU limit (``RLIMIT_CPU``); ``SIGKILL`` a kill from
    outside the worker (the kernel's out-of-memory killer, an administrator, or the CPU limit's hard stop);
    anything else a crash of the analysis (``SIGSEGV``: a bug, or a C stack overflow on deeply nested input)."""
    if exitcode is None or exitcode >= 0:
        return f"worker process exited with status {exitcode} without a result", "crash"
    number = -exitcode
    name = signal_name(number)
    if number == getattr(signal, "SIGXCPU", -1):
        return (f"used more than {limits.cpu_s:g} s of CPU: stopped by the CPU limit ({name}; raise {ENV_CPU}, "
                f"in seconds, to allow more, 0 for none)" if limits.cpu_s else
                f"stopped by a CPU limit ({name}) set outside the analyzer"), "limit"
    if number == signal.SIGKILL:
        cpu = f", or the CPU limit's hard stop at {limits.cpu_s + _CPU_HARD_MARGIN_S:g} s" if limits.cpu_s else ""
        return (f"worker process killed by {name} from outside it (the system's out-of-memory killer or an "
                f"administrator{cpu}; the worker's own memory limit, {_mb(limits.memory_bytes)}, fails an allocation "
                f"instead)"), "limit"
    return (f"worker process crashed ({name}) while analysing this file: a defect of the analyzer or a C stack "
            f"overflow on deeply nested input, not a limit -- please report it with the file"), "crash"


def set_cpu_limit(cpu_s: float | None) -> None:
    """Limit this process to ``cpu_s`` seconds of CPU (a worker child, for good): ``SIGXCPU`` at ``cpu_s``, the
    kernel's ``SIGKILL`` a few seconds later should that be ignored."""
    if not cpu_s:
        return
    try:
        import resource

        used = resource.getrusage(resource.RUSAGE_SELF)
        soft = int(used.ru_utime + used.ru_stime + cpu_s + 0.999)
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + _CPU_HARD_MARGIN_S))
    except (ImportError, ValueError, OSError):
        pass


def take_parent(env: dict[str, str] | None, tuned: dict[str, float] | None = None) -> None:
    """In a worker process: the parent's environment of now (``env``, where given: a forkserver's children inherit
    the one it started with) and its thresholds (``tuned``: ``thresholds.tuned()``, which the report cache keys on),
    then the worker's logging.  One answer for an isolated child and a pool's workers (``runtime.session``)."""
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    if tuned is not None:
        thresholds.adopt(tuned)
    logs.configure_worker()


def _child_main(conn, fn: Callable[..., Any], args: tuple, memory_bytes: int | None,
                env: dict[str, str] | None = None, cpu_s: float | None = None,
                tuned: dict[str, float] | None = None) -> None:
    """In the child: take the parent's environment and thresholds of now (the forkserver's are those it started
    with: ``tuned``, the parent's ``thresholds.tuned()``, is what the report cache keys on), limit memory and CPU,
    run, send ("ok", result) or ("error", type name, message)."""
    take_parent(env, tuned)
    reserve = _Reserve()  # set aside before the limit: room to say "out of memory" once it is reached
    guard.set_hard_limit(memory_bytes)
    set_cpu_limit(cpu_s)

    def progress(message: str, fraction: float) -> None:
        try:
            conn.send(("progress", message, fraction))
        except Exception:  # noqa: BLE001 - progress is best effort
            pass

    try:
        outcome = _outcome(fn, args, progress)
        reserve.release()  # the room set aside is for pickling what goes back, whatever it is
        _send(conn, outcome)
    finally:
        conn.close()


#: Bytes a worker keeps aside until its analysis ends and frees before it sends the outcome, so that even a worker
#: that ran out of memory can pickle the message saying so.
_SEND_RESERVE = 1 << 20

_OUT_OF_MEMORY = ("error", "MemoryError", "out of memory")


def _framed(message: tuple) -> bytes:
    """``message`` as ``Connection.send`` puts it on the pipe: a 4-byte big-endian length, then the pickle.

    ``pickle.dumps``: for plain strings in a tuple ``ForkingPickler.dumps`` writes the same bytes (its reducers are
    for sockets and connections), and importing ``multiprocessing`` here cost every ``report`` ~4 ms of start-up
    (issue #38), though the command line analyses in its own process and starts no worker."""
    import pickle
    import struct

    payload = pickle.dumps(message)
    return struct.pack("!i", len(payload)) + payload


#: "out of memory", pickled and framed while memory is plentiful: written with one ``os.write`` it needs no
#: allocation at all (CI saw even the pickling of this three-string tuple fail once the limit was reached).
_OUT_OF_MEMORY_FRAME = _framed(_OUT_OF_MEMORY)


class _Reserve:
    """Address space mapped before the memory limit and unmapped when the analysis ends.  An anonymous mapping, not a
    ``bytearray``: glibc may carve a freed megabyte out of its heap, where Python's own arenas (mapped one megabyte
    at a time) cannot reuse it; unmapping hands the room back to the limit for certain."""

    def __init__(self, size: int = _SEND_RESERVE) -> None:
        import mmap

        try:
            self._map: Any = mmap.mmap(-1, size)  # never touched: the limit counts address space, not pages
        except (OSError, ValueError):
            self._map = None

    def release(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None


def _outcome(fn: Callable[..., Any], args: tuple, progress: Callable[[str, float], None]) -> tuple:
    """``("ok", result)`` or the error as text.  Returned, not sent, from inside the ``except``: once this returns,
    the exception's traceback and the frames that held the analysis' memory are gone, so a worker that ran out of
    memory has room again to tell the parent (sending from inside the handler failed with a second MemoryError
    under a 64 MB limit, and the parent saw only "exited with status 1")."""
    try:
        return ("ok", fn(*args, progress=progress))
    except MemoryError:
        return _OUT_OF_MEMORY
    except BaseException as e:  # noqa: BLE001 - everything goes back to the parent as text
        return ("error", type(e).__name__, str(e), failure_kind(e))


def _send(conn, outcome: tuple) -> None:
    """Send the outcome; a result too big to pickle in what memory is left becomes the MemoryError it is."""
    try:
        conn.send(outcome)
    except MemoryError:
        outcome = None
        _send_out_of_memory(conn)
    except Exception:  # noqa: BLE001 - a broken pipe: the parent says the worker ended without a result
        pass


def _send_out_of_memory(conn) -> None:
    """Say "out of memory" with no allocation: the prepared frame in one ``os.write`` on the pipe (``recv`` in the
    parent reads it as any message); ``send_bytes`` where the connection has no descriptor."""
    try:
        fd = conn.fileno()
    except (AttributeError, OSError):
        fd = None
    try:
        if fd is None:
            conn.send_bytes(_OUT_OF_MEMORY_FRAME[4:])
            return
        written = os.write(fd, _OUT_OF_MEMORY_FRAME)
        if written < len(_OUT_OF_MEMORY_FRAME):  # a pipe takes a frame this small whole; be sure anyway
            os.write(fd, memoryview(_OUT_OF_MEMORY_FRAME)[written:])
    except Exception:  # noqa: BLE001 - a broken pipe: the parent says the worker ended without a result
        pass


# -- what the plugin runs in the child ------------------------------------------------------------


def child_noop(progress=None) -> None:
    """Does nothing in a child: what starting one costs (``scripts/robustness.py``)."""


def analyze_session_json(run: str, session: str, host_files: list, options: UserOptions | None = None,
                         rank_runs: Any = None, progress=None) -> str:
    """``pipeline.analyze_session`` serialized: only text crosses the process boundary.  ``options`` (the request's
    settings) are pickled with the call: the child analyses with them whatever its environment says."""
    return pipeline.analyze_session(run, session, host_files, progress=progress, options=options,
                                    rank_runs=rank_runs).to_json()


def analyze_host(host_file: Any, params: int | None = None, options: UserOptions | None = None,
                 peer_files: tuple = (), progress=None) -> Any:
    """``pipeline.analyze_host`` in the child (a HostReport, pickled back); the child reads ``peer_files``."""
    return pipeline.analyze_host(host_file, params=params, options=options, peer_files=peer_files)


def timelines_json(host_file: Any, windows: list, max_events: int, progress=None) -> str:
    """``pipeline.host_timelines`` serialized (a JSON list, one timeline per window): only text crosses back."""
    return json.dumps(pipeline.host_timelines(host_file, windows, max_events))


def host_report(host_file: Any, params: int | None = None, limits: Limits | None = None,
                options: UserOptions | None = None, peer_files: tuple = ()) -> Any:
    """One host's HostReport from a limited child (``limits`` None: :meth:`Limits.from_env` for this file), with the
    one-time spans of ``peer_files`` (``pipeline.clock_files``) read in that child; a failed child gives a HostReport
    with the error."""
    try:
        return call(analyze_host, host_file, params, options, tuple(peer_files),
                    limits=limits or Limits.from_env([host_file]))
    except WorkerError as e:
        return HostReport(host=host_file.host, path=host_file.path, size_bytes=host_file.size,
                          error=f"analysis failed: {e}")
