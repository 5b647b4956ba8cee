"""The memory guard every analysis runs under: the plugin's worker processes and the CLI alike.

Why: a capture whose analysis needs more memory than the machine can give (a hostile file, or a
20 GB trace on a laptop) must fail *its own* report with a clear message -- not push the machine into
swap or the OOM killer, which would take the user's shell or TensorBoard with it.  The plugin runs
each analysis in a child process under this limit (``isolation``); the CLI runs its analyses in its
own process, so it lowers its own limit for the duration of the analyses instead
(:func:`address_space_limit`): the same ``RLIMIT_AS``, the same ``TB_GPU_ADVISOR_WORKER_MEMORY_MB``,
the same message.  When the limit is reached, numpy (or any allocation) raises ``MemoryError``;
``pipeline.analyze_host`` turns it into that host's error, its arrays are freed as the exception
unwinds, and the next host is analysed as usual.

The limit is on address space, not resident memory: the only per-process memory limit the kernel
enforces without cgroups, and one that fails an allocation (an exception, recoverable) rather than
killing the process.  The interpreter and libraries take ~150 MB of it before any analysis starts.

One rule for every analysis -- the command line's own (``report``, ``diff``, ``precompute``) and a server's
worker processes (TensorBoard's tab, the MCP server: ``isolation.Limits.from_env``) alike: a quarter of the
machine's memory, at least 2 GiB, at most 4 GiB, and profiles of up to half that, refused before they are read
(:func:`analysis_limits`; a larger one fails its own report, saying how to allow more).
``TB_GPU_ADVISOR_WORKER_MEMORY_MB`` (MB; 0: none) and ``TB_GPU_ADVISOR_MAX_PROFILE_BYTES`` set them for both.
Why one rule: the command line used to allow half the machine (2-32 GiB) and 8 GiB files, so a 17.8 MB hostile file
could take 8.5 GB there while the tab refused it at 4 GiB; the same file now fails the same way everywhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

ENV_MEMORY = "TB_GPU_ADVISOR_WORKER_MEMORY_MB"


def _env_mb(name: str) -> float | None:
    """``name`` as a positive number of MB; None when unset, not a number, or 0 (no limit)."""
    try:
        value = float(os.environ[name])
    except (KeyError, ValueError):
        return None
    return value if value > 0 else None


#: A server's worker (TensorBoard, the MCP server): at most this much address space by default.
SERVER_MAX_BYTES = 4 << 30
#: ... and at least this much, whatever the machine (the interpreter and libraries take ~150 MB of it).
MIN_BYTES = 2 << 30


def memory_limit_from_env(server: bool = True) -> int | None:
    """Bytes of address space an analysis may use: ``TB_GPU_ADVISOR_WORKER_MEMORY_MB`` (0: none), by default a
    quarter of the machine's memory, 2-4 GiB; None: no limit.  ``server`` is accepted for older callers and changes
    nothing: the command line and the servers share the rule (module doc)."""
    raw = os.environ.get(ENV_MEMORY)
    if raw is not None:
        mb = _env_mb(ENV_MEMORY)
        return int(mb * (1 << 20)) if mb else None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    return max(MIN_BYTES, min(SERVER_MAX_BYTES, total // 4))


def profile_limit(memory_bytes: int | None) -> int | None:
    """The largest profile an analysis under ``memory_bytes`` reads by default: half of it (None: no memory limit,
    the readers' own default)."""
    return memory_bytes // 2 if memory_bytes else None


@contextmanager
def analysis_limits() -> Iterator[int | None]:
    """This process's analyses inside the block under the one rule (module doc): the address space limit, and the
    profile size limit when ``TB_GPU_ADVISOR_MAX_PROFILE_BYTES`` does not set one (restored after).  Yields the
    memory limit."""
    from tb_gpu_advisor.formats.base import ENV_MAX_BYTES

    memory = memory_limit_from_env()
    size = profile_limit(memory)
    unset = ENV_MAX_BYTES not in os.environ
    if unset and size:
        os.environ[ENV_MAX_BYTES] = str(size)
    try:
        with address_space_limit(memory):
            yield memory
    finally:
        if unset:
            os.environ.pop(ENV_MAX_BYTES, None)


def mb(n: int | None) -> str:
    """A limit in words: ``2048 MB``, or ``none``."""
    return "none" if n is None else f"{n / (1 << 20):.0f} MB"


def current_limit() -> int | None:
    """This process's soft ``RLIMIT_AS`` in bytes; None when unlimited or not available."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, ValueError, OSError):
        return None
    return None if soft == resource.RLIM_INFINITY else int(soft)


def out_of_memory_message(limit: int | None = None) -> str:
    """What a host's report says when its analysis hit the limit (``limit``, else this process's): which limit,
    and how to raise it (in TensorBoard's environment for the tab: its workers inherit it)."""
    return (f"ran out of memory (worker limit {mb(limit if limit is not None else current_limit())}; raise "
            f"{ENV_MEMORY}, in MB, in the environment of TensorBoard or the command to allow more, 0 for no limit)")


def set_hard_limit(memory_bytes: int | None) -> None:
    """Limit this whole process to ``memory_bytes`` of address space (a worker child: for good)."""
    if not memory_bytes:
        return
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    except (ImportError, ValueError, OSError):
        pass


@contextmanager
def address_space_limit(memory_bytes: int | None) -> Iterator[None]:
    """Lower this process's soft ``RLIMIT_AS`` to ``memory_bytes`` inside the block, restore it after.

    Only the soft limit moves, so it can be raised back; a tighter limit already in place (a worker
    child, a shell's ``ulimit -v``) is kept.  Where the platform has no such limit, nothing happens.
    """
    try:
        import resource

        old = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, ValueError, OSError):
        yield
        return
    soft, hard = old
    want = memory_bytes
    if want is not None and hard != resource.RLIM_INFINITY:
        want = min(want, hard)
    if want is None or (soft != resource.RLIM_INFINITY and soft <= want):
        yield
        return
    try:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, old)
