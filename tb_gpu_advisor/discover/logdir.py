"""Find profile sessions in a logdir and name them exactly as the stock Profile tab does.

Discovery knows how to walk a logdir, not what a profile looks like: every registered format's layout
(``formats/<format>/layout.py``) says which files are its host files, which folders can hold them, and how
they group into sessions and hosts.  We discover runs ourselves because TensorBoard's run list skips folders
without event files, and a profile-only run is common.

Walk rules (why):

* Local logdirs are walked with ``os.scandir`` (entry types come from the directory listing, no ``stat``
  per entry), so 10,000 runs take well under a second.  A folder is entered only when a layout says it can
  hold its files (the other plugins' assets and the stock tool's cache files can be large and never hold
  profiles).
* Remote logdirs (``s3://``, ``gs://``, ...) are one flat listing (:func:`fsio.remote_walk`) matched against
  the layouts, because per-folder requests to an object store are slow.
* Symlinks are followed only when the user asks (``follow_symlinks``: the CLI's ``--follow-symlinks``, TensorBoard's
  ``--gpu_advisor_follow_symlinks``; off by default: a logdir on a shared cluster is often writable by others), and
  then only when they resolve inside the logdir, and never into a folder already on the current path (no loops);
  the Advisor never reads files outside the logdir.  A listed file's path is a
  ``fsio.Listed``: it is read later only below the logdir and only as the file listed (a link swapped in after the
  listing is never followed out; ``fsio.open_listed``).  What is left out is not left
  out silently: :func:`skipped` names each such symlink, and files named like no format's whose content is no
  profile either, with the reason.
* A JSON file of another name in a run folder (``prof.export_chrome_trace("trace.json")``) is a PyTorch trace
  when its first bytes say so (``formats/kineto/layout.sniff``).
* Unreadable folders are skipped with a warning instead of failing the whole listing.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from tb_gpu_advisor import formats
from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.fmt import clip, echo
from tb_gpu_advisor.formats.base import Format, Found, Groups, Layout, claimed_by
from tb_gpu_advisor.formats import archives, summaries
from tb_gpu_advisor.formats.counters import Collection, collection as counter_collection
from tb_gpu_advisor.model.logdir import ROOT_RUN, HostFile, Session, SessionNotFoundError, find_session, find_stock_run

__all__ = ["discover", "with_beside", "has_profiles", "skipped", "nothing_found", "misplaced_profiles", "counter_collections", "counter_file", "text_summaries", "summary_file", "foreign_captures", "archived_profiles", "archive_file", "expected_layouts", "locate_file", "ROOT_RUN", "HostFile", "Session",
           "SessionNotFoundError", "find_session", "find_stock_run"]

logger = logging.getLogger(__name__)

#: Session folders are normally named after the capture time, e.g. 2026_11_21_11_04_16.
_SESSION_TIME_FORMAT = "%Y_%m_%d_%H_%M_%S"
_SESSION_TIME = re.compile(r"^\d{4}_\d{2}_\d{2}_\d{2}_\d{2}_\d{2}$")
#: Guard against pathological trees; real logdirs are a handful of levels deep.
MAX_DEPTH = 256
#: Bounds of the search for misplaced profiles: only done when nothing was found, and never a full crawl.
_MISPLACED_MAX_DEPTH = 8
_MISPLACED_MAX_DIRS = 20_000


#: What a symlink left out says (``skipped``), and how a user has the ones inside the logdir followed.
FOLLOW_HINT = "--follow-symlinks; TensorBoard: --gpu_advisor_follow_symlinks"
SKIP_OUTSIDE = "a symlink to a place outside the logdir: never read (nothing outside the logdir is)"
SKIP_NOT_FOLLOWED = f"a symlink: not followed unless asked ({FOLLOW_HINT}), and then only inside the logdir"
SKIP_MISPLACED = "named as a profile but outside the folder layout, so not listed: expected"
SKIP_LOOP = "a symlink back to a folder above it: a loop, not followed"


def discover(logdir: str, follow_symlinks: bool = False) -> list[Session]:
    """All sessions with at least one host file, sorted by run, then newest session first.

    A missing logdir gives ``[]`` (TensorBoard may start before training writes anything).  ``follow_symlinks``:
    symlinks that stay inside the logdir are followed (never one leading out).
    """
    claimed: dict[str, list[Found]] = {fid: [] for fid in formats.REGISTRY}
    objects: dict[str, tuple[int, int]] = {}  # a store's listing, path -> (size, mtime): the files beside a host
    for fmt, found in _walk(logdir, with_stat=True, follow=follow_symlinks, objects=objects):
        claimed[fmt.id].append(found)
    groups: Groups = {}
    for fid, found in claimed.items():
        layout = formats.REGISTRY[fid].layout
        for key, hosts in layout.group(found).items():
            groups.setdefault(key, []).extend(_with_beside(h, layout, objects) for h in hosts)
    by_format: dict[str, list[Session]] = {}
    for (run, session, path), hosts in groups.items():
        for s in _one_format_each(run, session, path, hosts):
            by_format.setdefault(s.format, []).append(s)
    sessions = [s for fid, found in by_format.items() for s in _one_capture_per_session(
        found, formats.REGISTRY[fid].layout.host_folders_within_s if fid in formats.REGISTRY else 0.0)]
    return _sorted(_rank_folders(_same_job(sessions)))


def _one_format_each(run: str, session: str, path: str, hosts: list[HostFile]) -> list[Session]:
    """The hosts two layouts put under one session name, as a session per format: the first format's keeps the name,
    each other's is named ``<session>_<format>``.  Why: a Kineto trace and an Nsight export of one job, both named by
    the second their capture began, were one session of "2 hosts" -- one process read as two machines of a job (its
    cross-host findings compare a capture with itself) -- listed under the first's format.  Each is one capture of
    the same job: :func:`_same_job` links them."""
    by_format: dict[str, list[HostFile]] = {}
    for h in hosts:
        by_format.setdefault(h.format, []).append(h)
    return [Session(run, session if k == 0 else f"{session}_{fid}", path, tuple(sorted(hs, key=lambda h: h.host)))
            for k, (fid, hs) in enumerate(by_format.items())]


def with_beside(host: HostFile, objects: dict[str, tuple[int, int]] | None = None) -> HostFile:
    """``host`` with the files its format's reader reads beside each of its files (``Layout.beside``), as they are
    now (``HostFile.beside``): one stat each, locally as the reader reaches them (``fsio.stat_as_read``); in an
    object store, from the listing just made (``objects``: no request of their own; None: a stat each)."""
    fmt = formats.REGISTRY.get(host.format)
    return host if fmt is None else _with_beside(host, fmt.layout, objects)


def _with_beside(host: HostFile, layout: Layout, objects: dict[str, tuple[int, int]] | None) -> HostFile:
    """:func:`with_beside` by ``layout``."""
    found = []
    for f in host.ranks or (host,):
        for name in layout.beside(fsio.file_name(f.path)):
            path = fsio.sibling(f.path, name)
            got = objects.get(str(path)) if objects is not None and fsio.is_remote(path) else fsio.stat_as_read(path)
            if got is not None:
                found.append((path, *got))
    return dataclasses.replace(host, beside=tuple(found)) if found or host.beside else host


def _one_capture_per_session(sessions: list[Session], within_s: float) -> list[Session]:
    """Sibling session folders that hold one capture's hosts, as one session.

    A layout whose hosts each name their session folder by their own clock (``Layout.host_folders_within_s``: the
    XPlane profiler's export second) splits one multi-host capture across sibling folders when the exports straddle
    a second; analysed apart, each folder is "one host" and the job's cross-host findings are lost.  Folders of one run
    whose names are capture times at most ``within_s`` after the earliest of them, and whose host names are all
    different, are one session: the earliest folder's name and path, every host with its own file.  A host named in
    two folders is two captures (never merged), and so is any folder not named by a time.  Only the folder names are
    read (discovery stays a listing): the capture windows themselves are in the files."""
    if within_s <= 0:
        return sessions
    timed: dict[str, list[tuple[float, Session]]] = {}
    out: list[Session] = []
    for s in sessions:
        when = session_time(s.session) if _SESSION_TIME.match(s.session) else None
        if when is None:
            out.append(s)
        else:
            timed.setdefault(s.run, []).append((when, s))
    for run_sessions in timed.values():
        run_sessions.sort(key=lambda ts: (ts[0], ts[1].session))
        group: list[Session] = []
        start = 0.0
        for when, s in run_sessions:
            names = {h.host for g in group for h in g.hosts}
            if group and when - start <= within_s and not names & {h.host for h in s.hosts}:
                group.append(s)
                continue
            if group:
                out.append(_merged(group))
            group, start = [s], when
        if group:
            out.append(_merged(group))
    return out


#: Captures of one job in two formats lie this close in time (seconds between their spans): a job's ranks write their
#: traces within it (``formats.kineto.layout.RANK_WINDOW_S``), and a snapshot dumped at the profiled iteration with them.
JOB_WINDOW_S = 300.0
#: Runs alike but for one folder that hold more sessions than this are many jobs' (``exp/run_<i>/profile`` of 10,000
#: runs), never one job's trace and snapshot folders: not paired (listing 10,000 runs stays linear).
_MAX_SIBLING_SESSIONS = 64
#: The rank a file name states (``rank0_trace.json``, ``rank_1_memory_snapshot.pickle``, ``trace_rank-2.json``).
_RANK_IN_NAME = re.compile(r"(?<![A-Za-z])rank[_-]?(\d+)(?!\d)", re.IGNORECASE)


def _same_job(sessions: list[Session]) -> list[Session]:
    """Sessions of two formats that hold one job's captures, linked (``Session.same_job``): a memory snapshot beside a
    Kineto trace (torchtitan writes both per profiled iteration: ``<dump>/profile_trace/iteration_N/rank{r}_trace.json``
    and ``<dump>/memory_snapshot/iteration_N/rank{r}_memory_snapshot.pickle``), a Kineto trace and an Nsight export of
    one run.  A session holds one format (each its own reader), so they stay two sessions; the listing says they are
    one job.  Linked where their folders are one run's (the same run, or runs alike but for one folder above the last:
    ``profile_trace`` / ``memory_snapshot`` of one iteration) and their captures' spans in time (``Layout.capture_span``:
    a trace's first event to its export, a snapshot's dump) come within :data:`JOB_WINDOW_S` of each other -- the
    times the formats share; neither holds the other's pid or host.  A snapshot's host is also handed the linked Kineto
    files (``HostFile.beside``) of its own rank where names say one, and the GPU totals they list as numbers
    (``HostFile.gpu_totals``, :func:`_linked_totals`): its GPU's capacity, which the snapshot never records
    (``formats.snapshot.reader.with_job_capacity``)."""
    spans: dict[int, tuple[float, float]] = {}  # read only for sessions a session of another format may pair with

    def span(s: Session) -> tuple[float, float]:
        if id(s) not in spans:
            spans[id(s)] = _session_span(s)
        return spans[id(s)]

    buckets: dict[tuple[str, ...], list[Session]] = {}
    for s in sessions:
        for key in _run_keys(s.run):
            buckets.setdefault(key, []).append(s)
    links: dict[int, dict[int, Session]] = {}
    for key, group in buckets.items():
        kinds: dict[str, list[Session]] = {}
        for s in group:
            kinds.setdefault(s.format, []).append(s)
        if len(kinds) < 2 or (key[0] == "*" and len(group) > _MAX_SIBLING_SESSIONS):
            continue
        fmts = list(kinds.values())
        for i, one in enumerate(fmts):
            for a, b in ((a, b) for other in fmts[i + 1:] for a in one for b in other):
                if _near(span(a), span(b)):
                    links.setdefault(id(a), {})[id(b)] = b
                    links.setdefault(id(b), {})[id(a)] = a
    out = []
    for s in sessions:
        other = list(links.get(id(s), {}).values())
        if not other:
            out.append(s)
            continue
        hosts = s.hosts
        if s.format == "snapshot":
            traces = [f for o in other if o.format == "kineto" for h in o.hosts for f in (h.ranks or (h,))]
            hosts = tuple(_with_traces(h, traces) for h in hosts)
        out.append(dataclasses.replace(s, hosts=hosts, same_job=tuple(sorted(o.stock_run for o in other))))
    return out


def _rank_folders(sessions: list[Session]) -> list[Session]:
    """Sessions of sibling run folders (runs alike but for their last folder) that each hold ranks of one job,
    linked (``Session.rank_runs``): a job that writes each rank into its own folder
    (``tensorboard_trace_handler(f"{logdir}/rank{rank}")``: ``log/rank0/``, ``log/rank1/``).  TensorBoard lists each
    folder as a run, and so does the Advisor -- each rank is analysed apart, as the user sees it -- but the report
    says where the job's other ranks are instead of "profile every rank".

    Linked where every file of both sessions states (``Layout.job_rank``) the same world size of two or more and the
    same process groups, the two hold different ranks, and their captures began within :data:`JOB_WINDOW_S` of each
    other (a job's ranks start their windows together; one folder's two runs of a script minutes apart are two jobs):
    of each other run, the session nearest in time.  A session stating no rank, or two world sizes, is linked to none.

    Why (h37-wild56r): ykcai-daniel/torch-compile-moe's 2-rank MoE wrote ``log_before/rank0/`` and
    ``log_before/rank1/``; each run read "this rank of 2" and was told that one rank's trace cannot tell the transfer
    from waiting for the other ranks, "profile every rank" -- both were profiled, in the next folder."""
    jobs: dict[int, tuple[frozenset[int], int, str, float]] = {}
    by_parent: dict[tuple[str, str], list[Session]] = {}
    for s in sessions:
        if s.run == ROOT_RUN or s.format not in formats.REGISTRY:
            continue
        by_parent.setdefault((s.format, s.run.rpartition("/")[0]), []).append(s)
    links: dict[int, dict[str, Session]] = {}
    for group in by_parent.values():
        if len({s.run for s in group}) < 2 or len(group) > _MAX_SIBLING_SESSIONS:
            continue
        for s in group:
            job = _session_job(s)
            if job is not None:
                jobs[id(s)] = job
        for a in group:
            if id(a) not in jobs:
                continue
            ra, wa, ga, ta = jobs[id(a)]
            nearest: dict[str, Session] = {}
            for b in group:
                if b.run == a.run or id(b) not in jobs:
                    continue
                rb, wb, gb, tb = jobs[id(b)]
                if wa != wb or ga != gb or ra & rb or abs(ta - tb) > JOB_WINDOW_S:
                    continue
                near = nearest.get(b.run)
                if near is None or abs(tb - ta) < abs(jobs[id(near)][3] - ta):
                    nearest[b.run] = b
            if nearest:
                links[id(a)] = nearest
    out = []
    for s in sessions:
        other = links.get(id(s))
        if not other:
            out.append(s)
            continue
        ranks, world, _, _ = jobs[id(s)]
        out.append(dataclasses.replace(s, rank_runs=tuple(sorted(o.stock_run for o in other.values())),
                                       job_ranks=(tuple(sorted(ranks)), world),
                                       **_on_its_clock(s, list(other.values()))))
    return out


def _on_its_clock(s: Session, others: list[Session]) -> dict:
    """The host files of ``others`` (the job's ranks in sibling run folders) that count on the clock of a host of
    ``s``, by its format's layout (``same_clock``: one machine's processes), and which on each host's: the analysis of
    each host places their one-time costs on its own timeline (``Session.rank_clock_files``, ``rank_clocks``); none
    where the layout cannot say.  Each host by its own clock: a session of two machines' files (``rank0/`` holding
    ranks 0 and 8 of two nodes) reads each machine's peers on that machine's host, none across (h37-ranks60)."""
    same = getattr(formats.REGISTRY[s.format].layout, "same_clock", None)
    if same is None:
        return {}
    theirs = [hf for o in sorted(others, key=lambda o: o.stock_run) for hf in o.hosts]
    clocks = tuple((h.host, paths) for h in s.hosts if (paths := tuple(f.path for f in theirs if same(h, f))))
    used = {p for _, paths in clocks for p in paths}
    return {"rank_clock_files": tuple(f for f in theirs if f.path in used), "rank_clocks": clocks}


def _session_job(s: Session) -> tuple[frozenset[int], int, str, float] | None:
    """(ranks, world size, process groups, earliest capture start) every file of ``s`` states alike
    (``Layout.job_rank``); None where one states none or the files differ in world or groups."""
    layout = formats.REGISTRY[s.format].layout
    job_rank = getattr(layout, "job_rank", None)
    if job_rank is None:
        return None
    ranks: set[int] = set()
    worlds, groups, starts = set(), set(), []
    for h in s.hosts:
        for f in h.ranks or (h,):
            got = job_rank(f.path, f.size, f.mtime_ns)
            if got is None:
                return None
            ranks.add(got[0])
            worlds.add(got[1])
            groups.add(got[2])
            starts.append(got[3])
    if len(worlds) != 1 or len(groups) != 1 or not ranks:
        return None
    return frozenset(ranks), worlds.pop(), groups.pop(), min(starts)


def _run_keys(run: str) -> list[tuple[str, ...]]:
    """The keys a run's sessions are matched by: the run itself, and the run with one folder above its last left
    open (``<dump>/*/iteration_10``: a job's trace and snapshot folders of one iteration)."""
    parts = tuple(run.split("/"))
    return [("=", *parts)] + [("*", str(k), *parts[:k], *parts[k + 1:]) for k in range(len(parts) - 1)]


def _session_span(s: Session) -> tuple[float, float]:
    """The span in time of a session's captures (every file's, :meth:`Layout.capture_span`)."""
    layout = formats.REGISTRY[s.format].layout if s.format in formats.REGISTRY else None
    spans = []
    for h in s.hosts:
        for f in h.ranks or (h,):
            span = getattr(layout, "capture_span", None)
            spans.append(span(f.path, f.size, f.mtime_ns) if span else (f.mtime_ns / 1e9, f.mtime_ns / 1e9))
    return min(a for a, _ in spans), max(b for _, b in spans)


def _near(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Two spans in time within :data:`JOB_WINDOW_S` of each other."""
    return a[0] - JOB_WINDOW_S <= b[1] and b[0] - JOB_WINDOW_S <= a[1]


def _with_traces(host: HostFile, traces: list[HostFile]) -> HostFile:
    """A snapshot host with the linked Kineto files of its rank (all of them where its name or theirs states none)."""
    own = _RANK_IN_NAME.findall(fsio.file_name(host.path))
    if own:
        same = [t for t in traces if _RANK_IN_NAME.findall(fsio.file_name(t.path)) == own]
        traces = same or [t for t in traces if not _RANK_IN_NAME.findall(fsio.file_name(t.path))]
    got = tuple((t.path, t.size, t.mtime_ns) for t in traces)
    if not got:
        return host
    totals = _linked_totals(traces)
    return dataclasses.replace(host, beside=host.beside + got, gpu_totals=totals,
                               gpu_totals_from=f"the Kineto trace {fsio.file_name(traces[0].path)} of the same job"
                               if totals else "")


def _linked_totals(traces: list[HostFile]) -> tuple[tuple[int, int], ...]:
    """(ordinal, total bytes) of each GPU the linked ``traces`` list (``Layout.gpu_totals``), by ordinal, where every
    trace that lists the GPU gives one total (ranks of one machine see one model); a GPU given two totals is none."""
    seen: dict[int, set[int]] = {}
    for t in traces:
        layout = formats.REGISTRY[t.format].layout
        for gid, total in layout.gpu_totals(t.path, t.size, t.mtime_ns):
            seen.setdefault(gid, set()).add(total)
    return tuple((gid, next(iter(t))) for gid, t in sorted(seen.items()) if len(t) == 1)


def _merged(group: list[Session]) -> Session:
    """One session of sibling folders (the earliest first): its name and path, every folder's hosts."""
    first = group[0]
    if len(group) == 1:
        return first
    hosts = tuple(sorted((h for s in group for h in s.hosts), key=lambda h: h.host))
    return Session(first.run, first.session, first.path, hosts, tuple(s.session for s in group[1:]))


def skipped(logdir: str, limit: int = 50, follow_symlinks: bool = False) -> list[tuple[str, str]]:
    """What the walk left out of a local logdir, as (path relative to the logdir, why): symlinks not followed,
    leaving the logdir or looping, JSON files that are no trace.  At most ``limit``; [] for remote logdirs (no
    symlinks there)."""
    if fsio.is_remote(logdir):
        return []
    out: list[tuple[str, str]] = []
    try:
        for _ in _local_walk(fsio.local_path(logdir), with_stat=False, skips=out, follow=follow_symlinks):
            if len(out) >= limit:
                break
    except Exception as e:  # noqa: BLE001 - only a notice
        logger.debug("cannot list %s: %s", logdir, e)
    return out[:limit]


def nothing_found(skips: list[tuple[str, str]], follow_flag: str,
                  collections: list[tuple[str, Collection]] | None = None) -> tuple[str, str] | None:
    """Why a logdir that lists no profile holds none we read, from what the walk left out (:func:`skipped`) and the
    counter tools' folders it holds (:func:`counter_collections`), as (headline, what to do) -- the message itself,
    not a note under "no profiles"; None when nothing was left out and no counter collection is there.
    ``follow_flag``: how the caller's user has symlinks followed (``--follow-symlinks``, a TensorBoard flag)."""
    collections = collections or []
    if not skips and not collections:
        return None
    inside = [rel for rel, why in skips if why == SKIP_NOT_FOLLOWED]
    outside = [rel for rel, why in skips if why == SKIP_OUTSIDE]
    other = [(rel, why) for rel, why in skips if why not in (SKIP_NOT_FOLLOWED, SKIP_OUTSIDE)]
    heads, text = [], []
    if collections:
        one = len(collections) == 1
        heads.append(f"{len(collections)} counter collection{'' if one else 's'}, no timeline")
        text.extend(held.words("the logdir" if rel == "." else echo(rel)) + "." for rel, held in collections)
    if inside:
        one = len(inside) == 1
        heads.append(f"{len(inside)} symlink{'' if one else 's'} in the logdir not followed")
        text.append(f"{_quoted(inside)} {'is a symlink' if one else 'are symlinks'} inside the logdir, and "
                    f"symlinks are followed only when asked: {follow_flag} (then only those that stay inside the "
                    "logdir).")
    if outside:
        one = len(outside) == 1
        heads.append(f"{len(outside)} symlink{'' if one else 's'} out of the logdir")
        text.append(f"{_quoted(outside)} {'points' if one else 'point'} outside the logdir, and nothing "
                    "outside it is read: point the logdir at the folder that holds the runs, or copy them in.")
    if other:
        heads.append(f"{len(other)} entr{'y' if len(other) == 1 else 'ies'} left out")
        text.append("Left out: " + "; ".join(_left_out(other)[:10]) + ".")
    return "No GPU profiles read: " + ", ".join(heads), " ".join(text)


def _left_out(other: list[tuple[str, str]]) -> list[str]:
    """One clause per folder and reason: ``folder/ (a, b, c: why)`` where several files of one folder are left out
    for one reason, ``path (why)`` for a file alone.  Why per folder: a session folder of TensorFlow's tool data
    without its XPlane holds six such files, and the tab's error line repeated the same 400-character reason six
    times (h37-survey65's ECBM4040 logdirs) -- the reason is the folder's, the files are its list."""
    by: dict[tuple[str, str], list[str]] = {}
    for rel, why in other:
        folder, _, name = rel.rpartition("/")
        by.setdefault((folder, why), []).append(name)
    out = []
    for (folder, why), names in by.items():
        if len(names) == 1:
            out.append(f"{clip(folder + '/' + names[0] if folder else names[0])} ({why})")
        else:
            out.append(f"{clip((folder or '.') + '/')} ({_quoted(names)}: {why})")
    return out


def _quoted(names: list[str], n: int = 10) -> str:
    """``'a', 'b' ... (3 more)``: names from the logdir, quoted and cut (``fmt.echo``)."""
    more = f" ... ({len(names) - n} more)" if len(names) > n else ""
    return ", ".join(echo(x) for x in names[:n]) + more


def has_profiles(logdir: str, follow_symlinks: bool = False) -> bool:
    """True as soon as one host file of any format is found (cheap: for TensorBoard's ``is_active``)."""
    try:
        return next(_walk(logdir, with_stat=False, follow=follow_symlinks), None) is not None
    except Exception as e:  # noqa: BLE001 - a listing failure means "nothing to show", not a crash
        logger.warning("cannot list %s: %s", logdir, e)
    return False


#: How many folders up from a file :func:`locate_file` looks for the logdir that holds it.
LOCATE_MAX_UP = 6


def locate_file(path: str, follow_symlinks: bool = False) -> tuple[str, Session, HostFile] | None:
    """The (logdir, session, host) a local profile file belongs to: ``report FILE`` and ``diff FILE FILE`` for every
    format.  None when no layout claims it.

    Only the nearest folder the file sits in as its layout puts it (``<run>/plugins/profile/<session>/`` above an
    XPlane file; a PyTorch trace's own folder) is discovered, and only that one: a file outside any layout, or one
    that folder does not hold as a profile, never makes us list the folders above it (up to ``/`` and ``/proc``)."""
    target = os.path.abspath(fsio.local_path(path))
    folder = os.path.dirname(target)
    for _ in range(LOCATE_MAX_UP):
        rel = tuple(os.path.relpath(target, folder).split(os.sep))
        if _fits_layout(rel):
            sessions = discover(folder, follow_symlinks)
            for s in sessions:
                for h in s.hosts:
                    if any(os.path.abspath(f.path) == target for f in (h.ranks or (h,))):
                        return folder, _own_folder(s, h), h
            instead = _read_instead(folder, sessions, target)
            above = _claimed_above(target, folder)
            if instead is not None or above is None:
                return instead
            # a file only a content sniff could claim here that a layout claims by its place above (TensorFlow
            # 2.2's <host>.trace.json.gz in its plugins/profile/<session>/ folder): that folder reads it
            folder = above
            continue
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return _lone_file(target)


def _read_instead(folder: str, sessions: list[Session], target: str) -> tuple[str, Session, HostFile] | None:
    """The host read in place of the file ``target`` (``Layout.read_instead``): ``report report1.nsys-rep`` with
    ``report1.sqlite`` beside it reports that export, as the walk of its folder lists it, instead of refusing the file
    as "not a profile this tool reads" -- while the same message lists ``.nsys-rep`` among the names it reads."""
    here, name = os.path.split(target)
    for s in sessions:
        for h in s.hosts:
            instead = formats.REGISTRY[h.format].layout.read_instead(name) if h.format in formats.REGISTRY else ()
            if any(os.path.dirname(os.path.abspath(f.path)) == here and _stands_in(fsio.file_name(f.path), instead)
                   for f in (h.ranks or (h,))):
                return folder, _own_folder(s, h), h
    return None


def _stands_in(name: str, instead: tuple[str, ...]) -> bool:
    """Whether the file ``name`` is one of ``Layout.read_instead``'s names: a name, or ``*<suffix>`` for any file
    so named (JAX's ``perfetto_trace.json.gz`` names no host: any host's XPlane of its folder stands in for it)."""
    return any(name == n or (n.startswith("*") and name.endswith(n[1:]) and len(name) > len(n) - 1) for n in instead)


def _own_folder(s: Session, host: HostFile) -> Session:
    """The session of ``host``'s own folder: a file given by path is reported as its folder's, even where discovery
    lists that folder merged into an earlier one's session (one capture split across folders)."""
    if not s.merged:
        return s
    here = os.path.dirname(os.path.abspath(host.path))
    mine = tuple(h for h in s.hosts if os.path.dirname(os.path.abspath(h.path)) == here)
    return Session(s.run, os.path.basename(here), here, mine)


def _lone_file(target: str) -> tuple[str, Session, HostFile] | None:
    """A file named as a format's host file but outside its layout (``diff BASE.xplane.pb NEW.xplane.pb`` of files
    copied anywhere), as a one-host session of its own: run ``.``, the file's name as session.  Given by path, a
    file says what it is by its name; only a walk of a logdir needs the layout to group files into sessions."""
    if not os.path.isfile(target):
        return None
    name = os.path.basename(target)
    # by name first; then, named explicitly under a name no layout reads, by content (``Layout.lone_content``: a
    # snapshot saved as ``ss_3``)
    for fmt, host_name in ((f, n) for ask in (lambda f: f.layout.lone_host(name),
                                              lambda f: f.layout.lone_content(target))
                           for f in formats.REGISTRY.values() if (n := ask(f))):
        folder = os.path.dirname(target)
        st = os.stat(target)
        host = HostFile(host_name, fsio.Listed(target, folder, (name,), (st.st_dev, st.st_ino)),
                        st.st_size, st.st_mtime_ns, fmt.id)
        host = _with_beside(host, fmt.layout, {})
        return folder, Session(ROOT_RUN, name, folder, (host,)), host
    return None


def _claimed_above(target: str, folder: str) -> str | None:
    """The nearest folder above ``folder`` (up to :data:`LOCATE_MAX_UP` from the file) in which a layout claims
    ``target`` by its place, or None."""
    up = folder
    for _ in range(LOCATE_MAX_UP):
        parent = os.path.dirname(up)
        if parent == up:
            return None
        up = parent
        rel = tuple(os.path.relpath(target, up).split(os.sep))
        if any(f.layout.claims(rel) for f in formats.REGISTRY.values()):
            return up
    return None


def _fits_layout(rel: tuple[str, ...]) -> bool:
    """A layout claims the file at ``rel`` below a folder, by name (or could, by its content)."""
    return any(f.layout.claims(rel) or f.layout.maybe(rel) for f in formats.REGISTRY.values())


def expected_layouts() -> list[str]:
    """Each format's layout, as a user is told it."""
    return [f.layout.expected for f in formats.REGISTRY.values()]


def misplaced_profiles(logdir: str, limit: int = 5) -> list[tuple[str, str]]:
    """Files in ``logdir`` named like a format's host files but not where its layout puts them, as
    (path relative to the logdir, that layout's expected placement).

    For the "no profiles found" message: a profile copied straight into the logdir (``x.xplane.pb``), or into
    a session folder without ``plugins/profile`` above it, is a wrong folder layout, which users should be
    told instead of "no profiles".  At most ``limit``; the local search is bounded in depth and folders
    (symlinks are not followed), the remote one reads the same flat listing as :func:`discover`.  Never
    raises: a listing failure gives what was found so far.
    """
    found: list[tuple[str, str]] = []
    try:
        for rel, names in _bounded_folders(logdir):
            for name in names:
                layout = next((f.layout for f in formats.REGISTRY.values() if f.layout.misplaced(rel + (name,))), None)
                if layout is not None:
                    found.append(("/".join(rel + (name,)), layout.expected))
            if len(found) >= limit:
                break
    except Exception as e:  # noqa: BLE001 - only a hint for an error message
        logger.debug("cannot search %s for misplaced profiles: %s", logdir, e)
    return found[:limit]


def counter_collections(logdir: str, limit: int = 5) -> list[tuple[str, Collection]]:
    """The folders of ``logdir`` that hold a counter tool's output (``formats.counters``: rocprof-compute's workload,
    rocprofv3's counter files, Nsight Compute's reports), as (folder relative to the logdir, "." for the logdir
    itself; its collection).

    For the "no profiles found" message: a native HIP or CUDA user who ran a counter tool is told that, and the
    vendor's tracing command, not how TensorFlow, JAX and PyTorch capture.  Bounded as :func:`misplaced_profiles`;
    never raises."""
    found: list[tuple[str, Collection]] = []
    try:
        for rel, names in _bounded_folders(logdir):
            held = counter_collection(names)
            if held is not None:
                found.append(("/".join(rel) or ".", held))
            if len(found) >= limit:
                break
    except Exception as e:  # noqa: BLE001 - only a hint for an error message
        logger.debug("cannot search %s for counter collections: %s", logdir, e)
    return found


def counter_file(path: str) -> str | None:
    """Why the local file ``path`` is no profile when it is one of a counter collection's files (told with its
    folder's other files: ``formats.counters``), in words; None otherwise.  ``report FILE`` of a counter tool's file
    says what it is and what to run, not "not a profile this tool reads"."""
    folder, name = os.path.split(os.path.abspath(fsio.local_path(path)))
    try:
        names = [e.name for e in _scandir(folder) if e.is_file()]
    except OSError:
        return None
    held = counter_collection(names)
    return held.words(echo(os.path.basename(folder) or folder)) if held is not None and name in held.files else None


#: How many files :func:`text_summaries` and :func:`foreign_captures` each open at most (their first bytes each): a
#: hint, never a crawl.
_HINT_MAX_FILES = 200


def text_summaries(logdir: str, limit: int = 5) -> list[tuple[str, str]]:
    """The text files of a local ``logdir`` that are a profiler's summary (``formats.summaries``: DeepSpeed's Flops
    Profiler output, torch.profiler's op table), as (path relative to the logdir, what it is and what to capture
    instead) -- for the "nothing found" message: a logdir holding only ``flops_profiler.txt`` said "no GPU profiles
    found" with the frameworks' capture help, as if it held nothing (probe h37-probe43d).  Bounded as
    :func:`misplaced_profiles`, and at most :data:`_HINT_MAX_FILES` files opened; [] for remote logdirs; never
    raises."""
    return _hints(logdir, lambda rel, name: summaries.maybe(name), summary_file, limit, "profiler summaries")


def foreign_captures(logdir: str, limit: int = 5) -> list[tuple[str, str]]:
    """The files of a local ``logdir`` under a name no layout reads or sniffs that are another tool's capture by their
    bytes (``formats.foreign_capture``: an Nsight Systems report saved as ``run.bin`` or without a suffix), as (path
    relative to the logdir, what it is and how to export it) -- for the "nothing found" message, which said "no GPU
    profiles found" with the frameworks' capture help of a logdir holding one (survey h37-heads60).  Bounded as
    :func:`text_summaries`; [] for remote logdirs; never raises."""
    return _hints(logdir, lambda rel, name: not _fits_layout(rel + (name,)) and not summaries.maybe(name),
                  formats.foreign_capture, limit, "other tools' captures")


def archived_profiles(logdir: str, limit: int = 5) -> list[tuple[str, str]]:
    """The archives of a local ``logdir`` (``formats.archives``: a zip or tar of a logdir or session folder) whose
    members a format's layout reads, as (path relative to the logdir, what they hold and how to unpack them) -- for
    the "nothing found" message, which said "no GPU profiles found" with the frameworks' capture help of a folder
    holding a JAX logdir zipped whole (survey h37-huntxla63).  Bounded as :func:`text_summaries` (member lists only);
    [] for remote logdirs; never raises."""
    return _hints(logdir, lambda rel, name: archives.maybe(name), archive_file, limit, "archived profiles")


def archive_file(path: str) -> str | None:
    """Why the local file ``path`` is not read when it is an archive holding profiles (by its member names, each
    asked of the formats' layouts), or a counter tool's collection (:func:`_archived_collection`), in words; None
    otherwise."""
    found = archives.held(path, lambda rel: claimed_by(formats.REGISTRY.values(), rel) is not None)
    return found.words() if found is not None else _archived_collection(path)


def _archived_collection(path: str) -> str | None:
    """What the archive at local ``path`` holds when one folder of its members is a counter tool's collection
    (``formats.counters``, asked of each folder's member names as of a folder on disk), in the tool's words; None
    otherwise.  A course repository committed four Nsight Compute reports of a T4 as ``profiles.zip``, and the zip was
    "not a profile this tool reads" with every format's layout (survey h37-huntn66): unpacking it would not help --
    what helps is the vendor's tracing command."""
    listed = archives.members(path)
    if listed is None:
        return None
    kind, names = listed
    by_folder: dict[str, list[str]] = {}
    for member in names:
        folder, _, name = member.replace("\\", "/").rpartition("/")
        by_folder.setdefault(folder, []).append(name)
    held = next((c for c in map(counter_collection, by_folder.values()) if c is not None), None)
    return None if held is None else held.words(f"{echo(os.path.basename(path))}, a {kind} archive,")


def _hints(logdir: str, asked: Callable[[tuple[str, ...], str], bool], words_of: Callable[[str], str | None],
           limit: int, what: str) -> list[tuple[str, str]]:
    """(path relative to the local ``logdir``, words) of its files ``asked`` of (by folder parts and name) whose
    ``words_of`` says something: at most :data:`_HINT_MAX_FILES` opened, in :func:`_bounded_folders`; never raises."""
    if fsio.is_remote(logdir):
        return []
    found: list[tuple[str, str]] = []
    opened = 0
    try:
        for rel, names in _bounded_folders(logdir):
            for name in (n for n in names if asked(rel, n)):
                if opened >= _HINT_MAX_FILES or len(found) >= limit:
                    return found
                opened += 1
                words = words_of(os.path.join(fsio.local_path(logdir), *rel, name))
                if words is not None:
                    found.append(("/".join(rel + (name,)), words))
    except Exception as e:  # noqa: BLE001 - only a hint for an error message
        logger.debug("cannot search %s for %s: %s", logdir, what, e)
    return found


def summary_file(path: str) -> str | None:
    """Why the local text file ``path`` is no profile when it is a profiler's text summary, in words; None otherwise
    (``report flops_profiler.txt`` says what it is, not "not a profile this tool reads")."""
    if not summaries.maybe(os.path.basename(path)):
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(summaries.HEAD_BYTES)
    except OSError:
        return None
    found = summaries.summary(head)
    return None if found is None else found.words()


def _bounded_folders(logdir: str) -> Iterator[tuple[tuple[str, ...], list[str]]]:
    """Each folder of ``logdir`` as (path parts below it, the names of its files): locally depth first in name order,
    bounded in depth and folders (symlinks not followed); remotely from the same flat listing as :func:`discover`.
    The search of the "nothing found" hints, never a full crawl."""
    if fsio.is_remote(logdir):
        folders: dict[tuple[str, ...], list[str]] = {}
        for f in fsio.remote_walk(logdir):
            parts = tuple(f.rel.split("/"))
            folders.setdefault(parts[:-1], []).append(parts[-1])
        yield from folders.items()
        return
    stack: list[tuple[str, tuple[str, ...]]] = [(fsio.local_path(logdir), ())]
    seen_dirs = 0
    while stack and seen_dirs < _MISPLACED_MAX_DIRS:
        path, rel = stack.pop()
        seen_dirs += 1
        subdirs, names = [], []
        for entry in sorted(_scandir(path), key=lambda e: e.name):
            try:
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append((entry.path, rel + (entry.name,)))
                elif entry.is_file(follow_symlinks=False):
                    names.append(entry.name)
            except OSError:
                continue
        yield rel, names
        if len(rel) + 1 < _MISPLACED_MAX_DEPTH:
            stack.extend(reversed(subdirs))


# --- ordering -----------------------------------------------------------------


def _newest_key(s: Session) -> float:
    """Capture time from the session name (the profiler names it so), else the newest file's mtime."""
    if _SESSION_TIME.match(s.session):
        try:
            when = session_time(s.session)
        except (ValueError, OverflowError):
            when = None
        if when is not None:
            return when
    return max(h.mtime_ns for h in s.hosts) / 1e9


_SESSION_FIELDS = re.compile(r"(\d{4})_(\d{2})_(\d{2})_(\d{2})_(\d{2})_(\d{2})")


def session_time(name: str) -> float | None:
    """``time.mktime(time.strptime(name, _SESSION_TIME_FORMAT))``, None where ``strptime`` raises ValueError, without
    ``strptime``: its first call imports ``_strptime`` and sets up the locale's calendar names, ~10 ms of every
    ``report`` (issue #30 item 3).  Checked as ``strptime`` checks: month 1-12, a day of that month, hour 0-23, minute
    0-59, second 0-61, year 1 or later."""
    m = _SESSION_FIELDS.fullmatch(name)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups())
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 61):
        return None
    try:
        datetime.date(year, month, day)
    except ValueError:
        return None
    return time.mktime((year, month, day, hour, minute, second, 0, 1, -1))


def _sorted(sessions: list[Session]) -> list[Session]:
    """Run ascending; within a run newest first (ties: name descending, so the order is stable)."""
    sessions.sort(key=lambda s: s.session, reverse=True)
    sessions.sort(key=_newest_key, reverse=True)
    sessions.sort(key=lambda s: s.run)
    return sessions


# --- the walk -----------------------------------------------------------------------


def _walk(logdir: str, with_stat: bool, follow: bool = False,
          objects: dict[str, tuple[int, int]] | None = None) -> Iterator[tuple[Format, Found]]:
    """Every host file a registered format claims, with that format; local or remote (``objects``: filled with the
    store's listing, path -> (size, mtime_ns))."""
    if fsio.is_remote(logdir):
        return _remote_walk(logdir, objects)
    return _local_walk(fsio.local_path(logdir), with_stat, follow=follow)


def _remote_walk(logdir: str, objects: dict[str, tuple[int, int]] | None = None) -> Iterator[tuple[Format, Found]]:
    base = logdir.rstrip("/")
    try:
        listing = list(fsio.remote_walk(logdir))
    except Exception as e:  # noqa: BLE001 - missing bucket, no credentials, ...: report and show nothing
        logger.warning("cannot list %s: %s", logdir, e)
        return
    for f in listing:
        if objects is not None:
            objects[f"{base}/{f.rel}"] = (f.size, f.mtime_ns)
        rel = tuple(f.rel.split("/"))
        fmt = claimed_by(formats.REGISTRY.values(), rel)
        if fmt is not None:
            folder = "/".join((base, *rel[:-1]))
            yield fmt, Found(rel, f"{base}/{f.rel}", folder, f.size, f.mtime_ns)


@dataclass(frozen=True)
class _Dir:
    path: str
    rel: tuple[str, ...]
    chain: tuple[str, ...]  # real paths of the symlinked folders entered on the way here
    follow: bool = False  # symlinks inside the logdir are followed (the user asked)


def _local_walk(root: str, with_stat: bool, skips: list[tuple[str, str]] | None = None,
                follow: bool = False) -> Iterator[tuple[Format, Found]]:
    """Depth first, folders in name order; a folder is entered when a layout says it can hold host files.
    ``skips`` collects what is left out, with why (:func:`skipped`); ``follow``: symlinks inside the logdir are
    followed."""
    real_root = os.path.realpath(root)
    registry = list(formats.REGISTRY.values())
    stack: list[_Dir] = [_Dir(root, (), (), follow)]
    while stack:
        d = stack.pop()
        subdirs: list[_Dir] = []
        # this folder's notes of another writer's file (``Layout.unread``): (index in skips, its name, whose note)
        unread_here: list[tuple[int, str, Format]] = []
        read_here: set[str] = set()  # the names of the profiles read in this folder
        for entry in _scandir(d.path):
            rel = d.rel + (entry.name,)
            noted = _unread(registry, rel)
            fmt = claimed_by(registry, rel) or (None if noted else _sniffed(registry, entry, rel, root, real_root,
                                                                             d, skips))
            if fmt is not None:
                found = _found(entry, rel, d, root, real_root, with_stat, skips=skips)
                if found is not None:
                    read_here.add(entry.name)
                    yield fmt, found
                continue
            if skips is not None and noted:
                unread_here.append((len(skips), entry.name, noted[0]))
                skips.append(("/".join(rel), noted[1]))
            elif skips is not None:
                _note_misplaced(registry, rel, skips)
            if not any(f.layout.descend(rel) for f in registry):
                continue
            is_dir, chain = _follow(entry, real_root, d.chain, want_dir=True, skips=skips, rel=rel, follow=d.follow)
            if is_dir:
                subdirs.append(_Dir(entry.path, rel, chain, d.follow))
        if read_here and skips is not None:  # beside a profile read, its companions (tool data made from it)
            read = frozenset(read_here)
            for i, name, fmt in reversed(unread_here):
                if fmt.layout.unread_beside(name, read):
                    del skips[i]
        if len(d.rel) + 1 >= MAX_DEPTH:
            if subdirs:
                logger.warning("not descending below %s: more than %d levels deep", d.path, MAX_DEPTH)
            continue
        stack.extend(sorted(subdirs, key=lambda s: s.path, reverse=True))


def _unread(registry: list[Format], rel: tuple[str, ...]) -> tuple[Format, str] | None:
    """Why the file at ``rel`` is another writer's, in a format's place (``Layout.unread``), with the format that
    says so: it is named, not sniffed.  Where a profile of the same folder is read, the walk drops the note when that
    format says the file goes with it (``Layout.unread_beside``): TensorFlow's tool data beside its XPlane (survey
    h37-survey18) is that profile's, not one left out; an Nsight stream beside another capture's report is not."""
    return next(((f, why) for f in registry if (why := f.layout.unread(rel)) is not None), None)


def _note_misplaced(registry: list[Format], rel: tuple[str, ...], skips: list[tuple[str, str]]) -> None:
    """A file named as a format's host file but outside its layout is left out of the listing, and says so: the tab
    and ``report LOGDIR`` name it instead of skipping it silently."""
    for f in registry:
        if f.layout.misplaced(rel):
            skips.append(("/".join(rel), f"{SKIP_MISPLACED} {f.layout.expected} (move it there, or give the file "
                                         "itself to tb-gpu-advisor report)"))
            return


def _sniffed(registry: list[Format], entry: os.DirEntry, rel: tuple[str, ...], root: str, real_root: str, d: _Dir,
             skips: list[tuple[str, str]] | None) -> Format | None:
    """The format whose layout recognises an unclaimed file by its content (a trace saved under another name): each
    format that may hold such a name is asked in turn (an SQLite file: Nsight's export, then rocmProfileData's
    database); one none of them reads is left out with the first one's words -- silently where no layout gave any
    (``""``: a ``.csv`` that is no profiler's, told by content, is anyone's)."""
    first: str | None = None
    for f in registry:
        if not f.layout.maybe(rel):
            continue
        ok, _ = _follow(entry, real_root, d.chain, want_dir=False, follow=d.follow)
        if not ok:
            return None
        listed = fsio.Listed(entry.path, root, rel, follow=d.follow)  # read only below the logdir
        pointer = formats.lfs_pointer(listed)
        if pointer:  # a pointer's words, not a layout's -- unless the layout says a pointer of that name is anyone's
            # (``Layout.pointer_unsaid``: a ``.pt`` checkpoint's pointer is no profile's, left out as the checkpoint is)
            if f.layout.pointer_unsaid(rel):
                continue
            first = pointer
            break
        why = f.layout.sniff(listed)
        if why is None:
            return f
        # another tool's capture by its bytes (an Nsight report saved as .sqlite), a binary converted to text: that,
        # not the layout's words of its damage -- asked only of a file the layout refused.  A name most files of which
        # are anyone's (``why`` "": a ``.csv``, a ``.pt`` checkpoint, a suffixless ``README``) is asked only the first
        # 64 bytes (``foreign_capture``), not 64 KiB decoded (``text_decoded``): a run folder's every such file is
        # sniffed, and a binary profile's text round trip keeps the profile's own name
        first = first or formats.foreign_capture(listed) or (formats.text_decoded(listed) if why else None) or why
    if skips is not None and first:
        skips.append(("/".join(rel), first))
    return None


def _found(entry: os.DirEntry, rel: tuple[str, ...], d: _Dir, root: str, real_root: str, with_stat: bool,
           skips: list[tuple[str, str]] | None = None) -> Found | None:
    """The claimed file (a plain file, or a symlink inside the logdir), None when it is neither or unreadable.

    Its path is a :class:`fsio.Listed`: every later read opens it below ``root`` without following a link out, and
    only while it is the file stat'ed here (device, inode), however it is swapped meanwhile."""
    ok, _ = _follow(entry, real_root, d.chain, want_dir=False, skips=skips, rel=rel, follow=d.follow)
    if not ok:
        return None
    if not with_stat:
        return Found(rel, fsio.Listed(entry.path, root, rel, follow=d.follow), d.path, 0, 0)
    try:
        st = entry.stat(follow_symlinks=True)
    except OSError as e:
        logger.warning("skipping unreadable profile %s: %s", entry.path, e)
        return None
    return Found(rel, fsio.Listed(entry.path, root, rel, (st.st_dev, st.st_ino), d.follow), d.path, st.st_size,
                 st.st_mtime_ns)


def _scandir(path: str) -> list[os.DirEntry]:
    """Entries of ``path``, or [] with a warning when it cannot be listed."""
    try:
        with os.scandir(path) as it:
            return list(it)
    except FileNotFoundError:
        return []  # removed while we walked (or a missing logdir): nothing to report
    except OSError as e:
        logger.warning("skipping unreadable folder %s: %s", path, e)
        return []


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _follow(entry: os.DirEntry, real_root: str, chain: tuple[str, ...], want_dir: bool,
            skips: list[tuple[str, str]] | None = None, rel: tuple[str, ...] = (),
            follow: bool = False) -> tuple[bool, tuple[str, ...]]:
    """Whether to use ``entry`` as a folder (``want_dir``) or file, and the symlink chain below it.

    Plain entries are used as they are.  A symlink is used only when ``follow`` (the user asked), if it resolves
    inside the logdir and (for folders) not onto a folder already entered through a symlink on this path or an
    ancestor of it, which would loop.  A symlink left out is added to ``skips`` with why.
    """
    def skip(why: str) -> tuple[bool, tuple[str, ...]]:
        if skips is not None:
            skips.append(("/".join(rel) or entry.name, why))
        return False, chain

    try:
        if not entry.is_symlink():
            ok = entry.is_dir(follow_symlinks=False) if want_dir else entry.is_file(follow_symlinks=False)
            return ok, chain
        real = os.path.realpath(entry.path)
        if not _inside(real, real_root):
            logger.debug("ignoring symlink leaving the logdir: %s -> %s", entry.path, real)
            return skip(SKIP_OUTSIDE)
        if not (os.path.isdir(real) if want_dir else os.path.isfile(real)):
            return False, chain
        if not follow:
            return skip(SKIP_NOT_FOLLOWED)
        if not want_dir:
            return True, chain
        here = os.path.realpath(os.path.dirname(entry.path))
        if real in chain or _inside(here, real):  # link to an ancestor (or itself): a loop
            return skip(SKIP_LOOP)
        return True, chain + (real,)
    except OSError:
        return False, chain
