"""Run one analysis in a child process with a memory and a time limit.

Why: TensorBoard serves every tab from one process.  An analysis that runs
inside it shares its GIL and its memory: a pathological file (a regex that
backtracks, a 1 GB capture peaking at 2.1 GB) froze or killed the whole
shared TensorBoard.  In a child process the worst a file can do is fail its
own report: the child gets ``RLIMIT_AS`` (address space) and a wall-clock
limit after which it is killed, and TensorBoard's threads never wait on its
GIL.

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
``TB_GPU_ADVISOR_WORKER_TIMEOUT_S`` (default 900; 0: none).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

from tb_gpu_advisor.common import logs
from tb_gpu_advisor.common.options import UserOptions
from tb_gpu_advisor.formats.base import ENV_MAX_BYTES
from tb_gpu_advisor.model.schema import HostReport
from tb_gpu_advisor.runtime import guard, pipeline
from tb_gpu_advisor.runtime.forkserver_main import ENV, main_data
from tb_gpu_advisor.runtime.guard import ENV_MEMORY

ENV_TIMEOUT = "TB_GPU_ADVISOR_WORKER_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 900.0
#: ``forkserver_main`` first: it imports the parent's main module in the server, so the children do not
#: each import it again (``tensorboard.main``: about 0.8 s per analysis; see that module).
_PRELOAD = ["tb_gpu_advisor.runtime.forkserver_main", "tb_gpu_advisor.runtime.pipeline", "tb_gpu_advisor.formats.xplane.reader",
            "tb_gpu_advisor.runtime.isolation"]


class WorkerError(Exception):
    """The child failed: it raised, ran out of memory or time, or died.  The message says which."""


@dataclass(frozen=True)
class Limits:
    memory_bytes: int | None = None  # RLIMIT_AS of the child; None: no limit
    timeout_s: float | None = None  # wall clock; None: no limit
    #: the largest profile the child reads (uncompressed), when ``TB_GPU_ADVISOR_MAX_PROFILE_BYTES`` does not say
    profile_bytes: int | None = None

    @classmethod
    def from_env(cls) -> "Limits":
        """A server's worker limits (TensorBoard's tab, the MCP server): the environment's, else the protective
        server defaults: memory ``guard.memory_limit_from_env(server=True)`` (a quarter of the machine's, 2-4 GiB),
        and profiles up to half of it (a file that cannot fit is refused before it is read, not after minutes)."""
        memory = guard.memory_limit_from_env(server=True)
        return cls(memory, _env_float(ENV_TIMEOUT, DEFAULT_TIMEOUT_S), memory // 2 if memory else None)


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
    """
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _context():
    ctx = mp_context()
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
    ctx = _context()
    parent, child = ctx.Pipe(duplex=False)
    env = dict(os.environ)
    if limits.profile_bytes and ENV_MAX_BYTES not in env:  # the variable, when set, is the user's word
        env[ENV_MAX_BYTES] = str(limits.profile_bytes)
    proc = ctx.Process(target=_child_main, args=(child, fn, args, limits.memory_bytes, env), daemon=True,
                       name="gpu-advisor-analysis")
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
                    raise WorkerError(_death(proc.exitcode, limits)) from None
                if kind == "progress":
                    if progress is not None:
                        progress(*payload)
                    continue
                if kind == "ok":
                    return payload[0]
                name, message = payload
                if name == "MemoryError":
                    raise WorkerError(guard.out_of_memory_message(limits.memory_bytes))
                raise WorkerError(f"{name}: {message}")
            if not proc.is_alive() and not parent.poll(0):
                raise WorkerError(_death(proc.exitcode, limits))
            if deadline is not None and time.monotonic() >= deadline:
                raise WorkerError(f"took longer than {limits.timeout_s:g} s: stopped "
                                  f"(raise {ENV_TIMEOUT} to allow more)")
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        parent.close()


_mb = guard.mb


def _death(exitcode: int | None, limits: Limits) -> str:
    if exitcode is not None and exitcode < 0:
        return (f"worker process killed by signal {-exitcode} (out of memory? worker limit "
                f"{_mb(limits.memory_bytes)}; raise {ENV_MEMORY}, in MB, to allow more)")
    return f"worker process exited with status {exitcode} without a result"


def _child_main(conn, fn: Callable[..., Any], args: tuple, memory_bytes: int | None,
                env: dict[str, str] | None = None) -> None:
    """In the child: take the parent's environment of now (the forkserver's is the one it started with),
    limit memory, run, send ("ok", result) or ("error", type name, message)."""
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    logs.configure_worker()
    guard.set_hard_limit(memory_bytes)

    def progress(message: str, fraction: float) -> None:
        try:
            conn.send(("progress", message, fraction))
        except Exception:  # noqa: BLE001 - progress is best effort
            pass

    try:
        result = fn(*args, progress=progress)
        conn.send(("ok", result))
    except MemoryError:
        conn.send(("error", "MemoryError", "out of memory"))
    except BaseException as e:  # noqa: BLE001 - everything goes back to the parent as text
        try:
            conn.send(("error", type(e).__name__, str(e)))
        except Exception:  # noqa: BLE001
            pass
    finally:
        conn.close()


# -- what the plugin runs in the child ------------------------------------------------------------


def child_noop(progress=None) -> None:
    """Does nothing in a child: what starting one costs (``scripts/robustness.py``)."""


def analyze_session_json(run: str, session: str, host_files: list, options: UserOptions | None = None,
                         progress=None) -> str:
    """``pipeline.analyze_session`` serialized: only text crosses the process boundary.  ``options`` (the request's
    settings) are pickled with the call: the child analyses with them whatever its environment says."""
    return pipeline.analyze_session(run, session, host_files, progress=progress, options=options).to_json()


def analyze_host(host_file: Any, params: int | None = None, options: UserOptions | None = None, progress=None) -> Any:
    """``pipeline.analyze_host`` in the child (a HostReport, pickled back)."""
    return pipeline.analyze_host(host_file, params=params, options=options)


def timelines_json(host_file: Any, windows: list, max_events: int, progress=None) -> str:
    """``pipeline.host_timelines`` serialized (a JSON list, one timeline per window): only text crosses back."""
    return json.dumps(pipeline.host_timelines(host_file, windows, max_events))


def host_report(host_file: Any, params: int | None = None, limits: Limits | None = None,
                options: UserOptions | None = None) -> Any:
    """One host's HostReport from a limited child; a failed child gives a HostReport with the error."""
    try:
        return call(analyze_host, host_file, params, options, limits=limits)
    except WorkerError as e:
        return HostReport(host=host_file.host, path=host_file.path, size_bytes=host_file.size,
                          error=f"analysis failed: {e}")
