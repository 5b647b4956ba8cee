"""What a logdir holds, as the stages after discovery see it: sessions of host files, format-neutral.

A :class:`Session` is one capture of one run; its :class:`HostFile` s are the files of its hosts, each
tagged with the format that reads it.  Which files exist and how they group is each format's layout
(``formats/<format>/layout.py``); discovery only walks and asks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tb_gpu_advisor.common.fmt import echo

#: The run name of profiles directly in the logdir (TensorBoard's own name for it).
ROOT_RUN = "."


@dataclass(frozen=True)
class HostFile:
    """One host's file; (path, size, mtime_ns) is its identity for caching, ``format`` names its reader
    (``formats.REGISTRY``)."""

    host: str
    path: str
    size: int
    mtime_ns: int
    format: str = "xplane"
    #: Ranks of one machine analysed as one host (their GPUs side by side): the ranks' own files, in
    #: rank order; ``path`` is the first's, ``size`` the sum, ``mtime_ns`` the latest.  Empty: one file.
    ranks: tuple["HostFile", ...] = ()
    #: The files its format's reader reads beside it (``Layout.beside``: a memory snapshot's capacity record), as
    #: (path, size, mtime_ns) when discovery listed them, only those there.  A report depends on them as on the host
    #: file: the cache's key, the tab's in-memory key and the "unchanged" check hold them (by stat, as the host file).
    beside: tuple[tuple[str, int, int], ...] = ()
    #: (ordinal, total bytes) of each GPU a linked capture of the same job lists, where the host's own file records no
    #: GPU size (a memory snapshot beside its rank's Kineto trace: ``discover._same_job``), one total per GPU; the
    #: linked files are in :attr:`beside`, so a report depends on them.  Handed as numbers: no format reads another's.
    gpu_totals: tuple[tuple[int, int], ...] = ()
    #: where :attr:`gpu_totals` were read, in words ("the Kineto trace rank0_trace.json of the same job")
    gpu_totals_from: str = ""
    #: the rank of a file that states none, as its layout inferred it from the job the file joined (the one rank of the
    #: job's world that no other file of the session states); None where the file states its own or none can be said
    inferred_rank: int | None = None

    def identity(self) -> list:
        """(path, size, mtime_ns) of every file behind this host: what must not change for a cached report."""
        files = self.ranks or (self,)
        return [[f.path, int(f.size), int(f.mtime_ns)] for f in files]

    def inferred_ranks(self) -> list[list]:
        """(path, rank) of each file behind this host whose rank its layout inferred (:attr:`inferred_rank`).

        Why: that rank is read from the other files of the job -- other machines' too, which are no file of this
        host -- so a cached report of the same files is not this host's report once they say another rank (or
        none): the cache's key and the tab's in-memory key hold it beside :meth:`identity` (h37-debt47)."""
        return [[f.path, int(f.inferred_rank)] for f in (self.ranks or (self,)) if f.inferred_rank is not None]


@dataclass(frozen=True)
class RankRuns:
    """The job's other ranks as sibling run folders hold them, seen from one session (``Session.linked_ranks``):
    which runs (``stock_run`` names), the ranks this session holds, the job's world size.  Part of what a session's
    analysis knows of its job -- its report names those runs -- so part of its report's cache key too."""

    runs: tuple[str, ...]
    ranks: tuple[int, ...]
    world: int
    #: the host files of those runs that count on the clock of one of this session's hosts (one machine's processes,
    #: ``Layout.same_clock``): the analysis reads their one-time costs, which the collectives here wait through
    #: (``job.peers``)
    files: tuple["HostFile", ...] = ()
    #: which of :attr:`files` count on each host's clock: (host name, their paths) -- a session of two machines'
    #: files (``rank0/`` holding ranks 0 and 8 of two nodes) places each machine's peers on its own host only
    clocks: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def clock_files(self, host: str) -> tuple["HostFile", ...]:
        """The files of :attr:`files` that count on the clock of this session's host named ``host``."""
        paths = next((set(p) for h, p in self.clocks if h == host), set())
        return tuple(f for f in self.files if f.path in paths)

    def key_material(self) -> list:
        """What the report cache keys of it (``runtime.cache.make_key``): the report reads the files on its clock."""
        files = [[f.path, f.size, f.mtime_ns] for f in self.files]
        return [list(self.runs), list(self.ranks), self.world] + ([files] if files else [])


@dataclass(frozen=True)
class Session:
    """One capture of one run, with one file per host."""

    run: str  # ROOT_RUN when the TensorBoard run is the logdir itself
    session: str
    path: str
    hosts: tuple[HostFile, ...]
    #: The names of sibling session folders whose hosts this session holds too: one capture whose hosts each named
    #: their folder by their own export second (``discover``); ``session`` and ``path`` are the earliest folder's,
    #: each host keeps its own file's path.  Empty: one folder.
    merged: tuple[str, ...] = ()
    #: The other sessions (``stock_run`` names) that hold captures of the same job in another format -- a memory
    #: snapshot and a Kineto trace of one run folder, a Kineto trace and an Nsight export -- listed apart because a
    #: session holds one format (``discover``: their folders and capture times).  Empty: none.
    same_job: tuple[str, ...] = ()
    #: The sessions (``stock_run`` names) of sibling run folders that hold the other ranks of the job this session holds
    #: ranks of -- one folder per rank (``tensorboard_trace_handler(f"{logdir}/rank{rank}")``), each a run of its own
    #: as TensorBoard lists it (``discover._rank_folders``).  Empty: none.
    rank_runs: tuple[str, ...] = ()
    #: (ranks this session holds, the job's world size) where :attr:`rank_runs` is said; () else.
    job_ranks: tuple[tuple[int, ...], int] | tuple[()] = ()
    #: the host files of :attr:`rank_runs` that count on the clock of one of its hosts (``RankRuns.files``), and
    #: which count on each host's (``RankRuns.clocks``)
    rank_clock_files: tuple[HostFile, ...] = ()
    rank_clocks: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def linked_ranks(self) -> RankRuns | None:
        """:attr:`rank_runs` with :attr:`job_ranks`, as the analysis reads them (the job rules' context, the report's
        key); None where no sibling run folder holds the job's other ranks."""
        if not self.rank_runs or not self.job_ranks:
            return None
        ranks, world = self.job_ranks
        return RankRuns(tuple(self.rank_runs), tuple(int(r) for r in ranks), int(world), tuple(self.rank_clock_files),
                        tuple(self.rank_clocks))

    @property
    def stock_run(self) -> str:
        """The run name the stock Profile tab uses (its ``?run=`` parameter): ``<run>/<session>``, or just
        ``<session>`` for the root run (xprof ``profile_plugin.generate_runs``)."""
        return self.session if self.run == ROOT_RUN else f"{self.run}/{self.session}"

    def named(self, name: str) -> bool:
        """``name`` is its folder's, or one merged into it, as a folder name or RUN/SESSION (the stock tab's name): a
        user told either folder of a split capture finds it."""
        return any(name in (folder, folder if self.run == ROOT_RUN else f"{self.run}/{folder}")
                   for folder in (self.session, *self.merged))

    @property
    def format(self) -> str:
        """The format of its files: one format per session (a layout never mixes formats in a session)."""
        return self.hosts[0].format if self.hosts else "xplane"

    @property
    def size(self) -> int:
        """Total bytes of its host files (lets callers pick a progress message or parallelism)."""
        return sum(h.size for h in self.hosts)


class SessionNotFoundError(KeyError):
    """No discovered session has this run and session name."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0]) if self.args else "session not found"


def find_session(sessions: Iterable[Session], run: str, session: str) -> Session:
    """The discovered session named (run, session); raises :class:`SessionNotFoundError`.

    Request handlers map names to files only through this lookup, never by
    joining request parameters onto paths.
    """
    for s in sessions:
        if s.run == run and (s.session == session or session in s.merged):  # a folder of it (``merged``)
            return s
    raise SessionNotFoundError(f"no profile session {echo(session)} in run {echo(run)} (refresh the run list?)")


def find_stock_run(sessions: Iterable[Session], stock_run: str) -> Session:
    """The session the stock Profile tab calls ``stock_run`` (``<run>/<session>`` or ``<session>``)."""
    run, _, session = stock_run.rpartition("/")
    return find_session(sessions, run or ROOT_RUN, session)
