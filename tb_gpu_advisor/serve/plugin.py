"""The "Advisor" TensorBoard tab: a route table and small handlers.

Routes (mounted at ``/data/plugin/gpu_advisor``):

=================  ===========================================================
``/index.js``      the ES module TensorBoard's iframe imports
``/static/*``      the other frontend files (normpath-guarded)
``/runs``          runs -> sessions -> hosts, from our own discovery (the
                   TensorBoard run list misses runs that hold only profiles)
``/report``        ``?run=&session=[&host=]``: the report JSON (200), or
                   ``{"state": "computing", ...}`` (202) while a worker
                   computes it, or ``{"state": "error", ...}``: 404 the
                   file is gone or was refused since it was listed, 422 it
                   cannot be analysed (a worker limit it hit, its bytes),
                   500 a defect (``service.classify``)
``/report.md``     the same report as Markdown (``render.to_markdown``, the
                   CLI's ``--format markdown``); 202/500 JSON like ``/report``
``/diff``          ``?base_run=&base_session=&new_run=&new_session=[&host=]``:
                   the diff of two session reports (``diff.diff_reports``,
                   docs/diff.md), each from the same service and caches as
                   ``/report`` (cached reports: no analysis); 202 while
                   either side computes (mean progress, the message names
                   the side), 500 naming the side whose analysis failed,
                   400 missing parameter or unknown host, 404 unknown
                   run/session
``/diff.md``       the same diff as Markdown (``diff_render.to_markdown``);
                   202/400/404/500 JSON like ``/diff``
``/window``        ``?run=&session=&host=&start_ms=&end_ms=``: the step timeline
                   of that window of the host's trace (``report.timeline``:
                   lanes, the GPU's idle runs by category, at most 5,000
                   events), read in a limited child process; 202 while it
                   reads, 400 bad numbers, 404 unknown run/session/host
``/trace``         ``?run=&session=&host=[&file=N]``: the host's trace file
                   itself, as a download (only files discovery listed; ``file``
                   picks one rank's file of a host merged from several)
=================  ===========================================================

Every route answers GET and HEAD only; any other method is a 405 naming them.

Settings: every route that answers with an analysed report (``/report``, ``/report.md``, ``/diff``, ``/diff.md``:
both sides) also takes ``params`` (the model's parameter count, a positive whole number), ``net_gbps`` (network
bandwidth between hosts, GB/s per GPU) and ``model_flops`` (the model's FLOPs of one step on one GPU), each a
positive finite number; anything else is a 400 that names the parameter.  They override TensorBoard's flags
(``--gpu_advisor_params``, ``--gpu_advisor_net_gbps``, ``--gpu_advisor_model_flops_per_step``) for that request
only: the analysis gets them as a ``UserOptions`` value (in its worker process too), and the in-memory and
persistent caches key each report by the settings it was made with.  ``/runs`` lists the flags' values
(``settings``) so the tab can show what applies when it sets nothing.

A session with several host files is analysed in worker processes
(``Advisor.report_json``, at most ``host_jobs`` of them),
still from a ReportService worker thread, never on a request thread.

Discovery runs on every ``/runs`` and ``/report`` request (the page polls
``/report`` every 400 ms while computing).  That is cheap on a local disk
but a full listing on ``s3://`` and friends, so for remote logdirs the
result is kept for ``--gpu_advisor_discovery_ttl`` seconds (default 5);
local logdirs are listed every time so a new capture shows at once.  Requests
that arrive while a listing (or ``/runs``' whole answer) is being made share
it instead of each making its own (:class:`SingleFlight`): under 50 clients
each ``/runs`` walked the logdir twice, the second walk under a lock, so they
queued one behind the other (p95 1.4 s, now a few tens of ms; ``benchmarks/loopback_load.py``).

Request parameters are never joined onto paths: run, session and host are
looked up in the list discovery built, and only its paths are opened -- below the
logdir and only as the file listed (``fsio.open_listed``): a link swapped in after
the listing is never followed out of the logdir (a ``/trace`` of it is a 404).
Symlinks inside the logdir are followed only with ``--gpu_advisor_follow_symlinks``;
a logdir that lists nothing because of what was left out says so (``/runs``' ``empty``).

Everything about the logdir goes through one entry point, ``runtime.advisor.Advisor``
(discovery, analysis, the report cache, step timelines); what the tab must know and the
server decides -- breakdown and idle categories with their labels, the waits each rule
speaks of, the settings -- comes with ``/runs`` as its ``legend`` (``report.legend``).
"""

from __future__ import annotations

import json
import logging
import math
import mimetypes
import os
import threading
import time
from concurrent.futures import Future
from typing import Any, Callable, Mapping
from urllib.parse import quote

from tensorboard import errors
from tensorboard.backend import http_util
from tensorboard.plugins import base_plugin
from werkzeug import wrappers

from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.common.fmt import echo
from tb_gpu_advisor.common.options import OptionError, UserOptions, parse_query
from tb_gpu_advisor.common.thresholds import T, tuned
from tb_gpu_advisor.frameworks import REGISTRY
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.report import diff, diff_render, legend, render, timeline
from tb_gpu_advisor.runtime.advisor import Advisor, ReportCache, SessionNotFoundError
from tb_gpu_advisor.serve import query
from tb_gpu_advisor.serve.service import Outcome, ReportService

logger = logging.getLogger(__name__)

PLUGIN_NAME = "gpu_advisor"
#: How a TensorBoard user has symlinks inside the logdir followed (named when the logdir lists nothing because of them).
FOLLOW_FLAG = "--gpu_advisor_follow_symlinks"
STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
_STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".json": "application/json"}
_JSON = "application/json"
_MARKDOWN = "text/markdown; charset=utf-8"
DEFAULT_DISCOVERY_TTL_S = 5.0
DEFAULT_HOST_JOBS = 2
#: A profile modified less than this long ago is still being written: wait before analysing it.
DEFAULT_SETTLE_S = 2.0
#: Windows of a host's report read along with the one asked (one read of the file serves them all).
WINDOWS_PER_READ = 24
#: Bytes per chunk of a ``/trace`` download (the file is streamed, never held whole in memory).
DOWNLOAD_CHUNK = 1 << 20

# analyze(run, session, host_files, progress=...) -> Report
Analyzer = Callable[..., Any]


class GpuAdvisorPlugin(base_plugin.TBPlugin):
    """Serves the Advisor tab for the profiles under ``context.logdir``."""

    plugin_name = PLUGIN_NAME

    def __init__(
        self,
        context: base_plugin.TBContext,
        analyzer: Analyzer | None = None,
        service: ReportService | None = None,
        discovery_ttl_s: float | None = None,
        host_jobs: int = DEFAULT_HOST_JOBS,
        clock: Callable[[], float] = time.monotonic,
        settle_s: float | None = None,
        isolate: bool | None = None,
        window_events: int = timeline.MAX_EVENTS,
    ) -> None:
        # ``context.logdir`` is "" under --logdir_spec: the tab then explains
        # that it needs --logdir instead of failing.
        self._logdir = context.logdir or ""
        self._analyzer = analyzer
        #: TensorBoard's flags: the settings of every analysis a request does not override
        self._defaults = flag_options(context.flags)
        #: the one entry point: discovery (following symlinks inside the logdir only with the flag), analysis, the
        #: report cache (its per-host entries, from a sharded precompute, are merged, not analysed), timelines
        self._advisor = Advisor(self._logdir, cache=_open_cache(context.flags) if service is None
                                else ReportCache(None, enabled=False), options=self._defaults,
                                follow_symlinks=bool(getattr(context.flags, "gpu_advisor_follow_symlinks", False)))
        self._service = service or ReportService(store=self._advisor.store())
        self._active = False
        self._active_lock = threading.Lock()
        # Remote logdirs only: (time listed, sessions) reused for ``_discovery_ttl_s`` seconds.
        ttl = discovery_ttl_s if discovery_ttl_s is not None else _flag_ttl(context.flags)
        self._discovery_ttl_s = ttl if fsio.is_remote(self._logdir) else 0.0
        self._clock = clock
        self._listing: tuple[float, list] | None = None
        self._skips: tuple[float, list[dict[str, str]]] | None = None
        self._listing_lock = threading.Lock()
        # concurrent requests share one local listing, and one /runs answer, in flight
        self._local_listing = SingleFlight()
        self._runs_answer = SingleFlight()
        self._host_jobs = max(1, int(host_jobs))
        # The real analysis reads files (``analyzer`` is None): wait for them to settle, and run it in a
        # limited child process (isolation.py).  An injected analyzer (tests) runs as given.
        self._settle_s = settle_s if settle_s is not None else (DEFAULT_SETTLE_S if analyzer is None else 0.0)
        self._isolate = isolate if isolate is not None else analyzer is None
        # Step timelines (``/window``): their own workers and memory, so a read for a picture never queues behind
        # a session's analysis, nor evicts reports.
        self._windows = ReportService(workers=1, memory_entries=64)
        self._window_events = int(window_events)

    # -- TensorBoard hooks -------------------------------------------------

    def get_plugin_apps(self) -> dict[str, Callable]:
        """Every route, answering only GET and HEAD (any other method: 405 naming them)."""
        routes = {
            "/index.js": self._serve_index_js,
            "/static/*": self._serve_static,
            "/runs": self._serve_runs,
            "/report": self._serve_report,
            "/report.md": self._serve_report_markdown,
            "/diff": self._serve_diff,
            "/diff.md": self._serve_diff_markdown,
            "/window": self._serve_window,
            "/trace": self._serve_trace,
        }
        return {path: _read_only(app) for path, app in routes.items()}

    def is_active(self) -> bool:
        """Cheap: stops at the first profile found and remembers a yes."""
        if self._active or not self._logdir:
            return self._active
        try:
            found = self._advisor.has_profiles()
        except Exception:  # noqa: BLE001 - an unreadable logdir just means "not active"
            logger.debug("gpu_advisor: has_profiles failed", exc_info=True)
            return False
        with self._active_lock:
            self._active = self._active or bool(found)
        return self._active

    def frontend_metadata(self) -> base_plugin.FrontendMetadata:
        return base_plugin.FrontendMetadata(es_module_path="/index.js", tab_name="Advisor")

    # -- static files ------------------------------------------------------

    @wrappers.Request.application
    def _serve_index_js(self, request: wrappers.Request) -> wrappers.Response:
        return _respond_file(request, "index.js")

    @wrappers.Request.application
    def _serve_static(self, request: wrappers.Request) -> wrappers.Response:
        marker = f"/data/plugin/{PLUGIN_NAME}/static/"
        _, _, name = request.path.partition(marker)
        return _respond_file(request, name)

    # -- data --------------------------------------------------------------

    @wrappers.Request.application
    def _serve_runs(self, request: wrappers.Request) -> wrappers.Response:
        return http_util.Respond(request, self._runs_answer.run(self._runs_json), _JSON)

    def _runs_json(self) -> str:
        """``/runs``' answer: the listing, what it left out, and what the tab must know (made once for all the
        requests that arrive while it is made)."""
        sessions = self._sessions()
        skipped = self._skipped()
        # has_gpu per session (True/False/None = unknown): the tab opens on the newest with GPU activity
        body = {"logdir_set": bool(self._logdir), "runs": self._advisor.listing(sessions),
                "frameworks": _frameworks_listing(), "skipped": skipped,
                "settings": _settings_listing(self._defaults), "legend": legend.legend()}
        why = None if sessions or not self._logdir else self._advisor.nothing_found(
            FOLLOW_FLAG, [(x["path"], x["reason"]) for x in skipped])
        if why is not None:  # the reason is the message: symlinks not followed or leading out, files left out
            body["empty"] = {"title": why[0], "text": why[1]}
        return json.dumps(body)

    @wrappers.Request.application
    def _serve_report(self, request: wrappers.Request) -> wrappers.Response:
        return _respond_outcome(request, self._outcome(request))

    @wrappers.Request.application
    def _serve_report_markdown(self, request: wrappers.Request) -> wrappers.Response:
        """The cached report rendered by ``render.to_markdown`` (one renderer, in Python)."""
        outcome = self._outcome(request)
        if outcome.state != "ready":
            return _respond_outcome(request, outcome)

        body = render.to_markdown(Report.from_json(outcome.body))
        return http_util.Respond(request, body, _MARKDOWN)

    @wrappers.Request.application
    def _serve_diff(self, request: wrappers.Request) -> wrappers.Response:
        result = self._diff(request)
        if isinstance(result, Outcome):
            return _respond_outcome(request, result)
        return http_util.Respond(request, result.to_json(), _JSON)

    @wrappers.Request.application
    def _serve_diff_markdown(self, request: wrappers.Request) -> wrappers.Response:
        result = self._diff(request)
        if isinstance(result, Outcome):
            return _respond_outcome(request, result)

        return http_util.Respond(request, diff_render.to_markdown(result), _MARKDOWN)

    @wrappers.Request.application
    def _serve_window(self, request: wrappers.Request) -> wrappers.Response:
        """One window's step timeline (``report.timeline``), read off the request thread like a report."""
        session, host = self._host_of(request)
        start, end = _window_args(request)
        # the tab's settings, when sent, say which report in memory names the host's other windows (read at once)
        return _respond_outcome(request, self._window_outcome(session, host, start, end, self._options(request)))

    @wrappers.Request.application
    def _serve_trace(self, request: wrappers.Request) -> wrappers.Response:
        """The host's trace file as a download: a file discovery listed, by its listed name only."""
        _, host = self._host_of(request)
        files = host.ranks or (host,)
        chosen = files[query.index(request.args, "file", len(files))]
        try:
            return _respond_download(request, chosen.path)
        except OSError as e:  # gone, or swapped since it was listed (a link out: never followed, fsio.open_listed)
            raise errors.NotFoundError(f"{echo(host.host)}: its file changed since the logdir was listed "
                                       f"({type(e).__name__}); reload the run list") from None

    def _host_of(self, request: wrappers.Request) -> tuple[Any, Any]:
        """The discovered (session, host file) the request names (400 missing parameter, 404 unknown name)."""
        run, session_name, host = _required(request, "run"), _required(request, "session"), _required(request, "host")
        session = self._find_session(run, session_name)
        return session, _select_hosts(session, host)[0]

    def _window_outcome(self, session: Any, host: Any, start: float, end: float,
                        options: UserOptions | None = None) -> Outcome:
        """The timeline of [start, end) on ``host``: kept, being read (202), or started now."""
        writing = _still_written([host], self._settle_s)
        if writing:
            return Outcome("computing", message=f"waiting for {writing} to finish writing")
        key = ("window", _identity(host), start, end)
        return self._windows.get(key, lambda progress: self._timelines(session, host, (start, end), progress, options),
                                 valid=lambda: Advisor.files_unchanged([host]))

    def _timelines(self, session: Any, host: Any, window: tuple[float, float], progress: Callable,
                   options: UserOptions | None = None) -> str:
        """Runs in a worker thread: reads the host once for ``window`` and every other window its report (the one
        made with ``options``) names (those are kept for their own requests); returns the JSON of ``window``."""
        done = self._windows.peek(("window", _identity(host), *window))
        if done is not None and done.state == "ready":  # read meanwhile, along with another window of this host
            return done.body
        windows = [window] + [w for w in self._report_windows(session, host, options)
                              if w != window][: WINDOWS_PER_READ - 1]
        progress(f"reading {host.host} for its timeline", 0.1)
        text = self._advisor.timelines_json(host, windows, self._window_events, isolate=self._isolate,
                                            progress=progress)
        bodies = [json.dumps(t) for t in json.loads(text)]
        if Advisor.files_unchanged([host]):
            for w, body in zip(windows[1:], bodies[1:]):
                self._windows.put(("window", _identity(host), *w), body)
        return bodies[0]

    def _report_windows(self, session: Any, host: Any, options: UserOptions | None = None) -> list[tuple[float, float]]:
        """The windows that the reports in memory (all hosts, or this one; made with ``options``, else the flags'
        settings) name on ``host``, in report order."""
        out: list[tuple[float, float]] = []
        for hosts in (list(session.hosts), [host]):
            done = self._service.peek(_report_key(session, hosts, options or self._defaults))
            if done is None or done.state != "ready":
                continue
            try:
                findings = json.loads(done.body).get("findings") or []
            except ValueError:
                continue
            for f in findings:
                for w in f.get("windows") or []:
                    pair = (float(w["start_ms"]), float(w["end_ms"]))
                    if w.get("host") == host.host and pair not in out and _window_ok(*pair):
                        out.append(pair)
        return out

    def _diff(self, request: wrappers.Request) -> Any:
        """The Diff of both sides' reports (from the /report service and caches), or the Outcome to answer while a
        side computes or after it failed (400/404 raised here)."""

        options = self._options(request)
        names = {side: (_required(request, f"{side}_run"), _required(request, f"{side}_session"))
                 for side in ("base", "new")}
        host = query.name(request.args, "host", required=False)
        found = {side: self._find_session(*names[side]) for side in names}  # both named before either is analysed
        sides = {side: (s.stock_run, self._outcome_of(s, None, options)) for side, s in found.items()}
        waiting = [(name, o) for name, o in sides.values() if o.state == "computing"]
        failed = [(name, o) for name, o in sides.values() if o.state == "error"]
        if failed:
            name, o = failed[0]
            return Outcome("error", message=f"{name}: {o.message}", code=o.code)
        if waiting:
            progress = sum(o.progress if o.state == "computing" else 1.0 for _, o in sides.values()) / 2
            return Outcome("computing", progress=progress, message="; ".join(f"{n}: {o.message}" for n, o in waiting))
        try:
            return diff.diff_reports(Report.from_json(sides["base"][1].body), Report.from_json(sides["new"][1].body),
                                     host=host, base_label=sides["base"][0],
                                     new_label=sides["new"][0], host_fallback=True)
        except diff.DiffError as e:
            raise errors.InvalidArgumentError(str(e)) from None

    def _outcome(self, request: wrappers.Request) -> Outcome:
        """The report service's answer for the request's run/session[/host] and settings (404/400 raised here)."""
        run, session = _required(request, "run"), _required(request, "session")
        return self._outcome_for(run, session, query.name(request.args, "host", required=False), self._options(request))

    def _options(self, request: wrappers.Request) -> UserOptions:
        return self.options_for(request.args)

    def options_for(self, args: Mapping[str, str]) -> UserOptions:
        """The flags' settings with a request's ``params`` / ``net_gbps`` / ``model_flops`` (``args``: its query)
        over them; a bad value is the request's 400 (naming the parameter), never an analysis with a setting the
        user did not mean."""
        try:
            return self._defaults.overridden_by(parse_query(args.get))
        except OptionError as e:
            raise errors.InvalidArgumentError(str(e)) from None

    def _outcome_for(self, run: str, session_name: str, host: str | None, options: UserOptions) -> Outcome:
        """The report service's answer for run/session[/host] analysed with ``options`` (404 raised here)."""
        return self._outcome_of(self._find_session(run, session_name), host, options)

    def _find_session(self, run: str, session_name: str) -> Any:
        """The discovered session named so (404 otherwise)."""
        try:
            return self._advisor.find_session(run, session_name, self._sessions())
        except SessionNotFoundError as e:
            raise errors.NotFoundError(str(e)) from None

    def _outcome_of(self, session: Any, host: str | None, options: UserOptions) -> Outcome:
        """The report service's answer for ``session`` (or its ``host``) analysed with ``options`` (404: no host)."""
        host_files = _select_hosts(session, host)
        writing = _still_written(host_files, self._settle_s)
        if writing:  # a copy or capture in progress: analysing (and caching) a partial file helps nobody
            return Outcome("computing", message=f"waiting for {writing} to finish writing")
        # each setting its own report: in memory and in the persistent store (the same entry precompute writes
        # with the same settings)
        key = _report_key(session, host_files, options)
        return self._service.get(
            key,
            lambda progress: self._compute(session, host_files, progress, options),
            self._advisor.store_key(session, host_files, options),
            valid=lambda: Advisor.files_unchanged(host_files),
        )

    def _sessions(self) -> list:
        if not self._logdir:
            return []
        if self._discovery_ttl_s <= 0:
            return list(self._local_listing.run(self._advisor.sessions))
        # One listing at a time: concurrent polls wait for it instead of each listing the bucket.
        with self._listing_lock:
            now = self._clock()
            if self._listing is not None and now - self._listing[0] < self._discovery_ttl_s:
                return list(self._listing[1])
            sessions = list(self._advisor.sessions())
            self._listing = (self._clock(), sessions)
            return list(sessions)

    def _skipped(self) -> list[dict[str, str]]:
        """What discovery left out of the logdir, with why (symlinks leaving it, JSON that is no trace), refreshed
        with the listing: the tab names them instead of hiding them."""
        if not self._logdir:
            return []
        if self._discovery_ttl_s <= 0:  # listed now (with whoever else asks meanwhile: /runs' single flight)
            return [{"path": rel, "reason": why} for rel, why in self._advisor.skipped()]
        with self._listing_lock:
            now = self._clock()
            if self._skips is None or now - self._skips[0] >= self._discovery_ttl_s:
                self._skips = (now, [{"path": rel, "reason": why} for rel, why in self._advisor.skipped()])
            return list(self._skips[1])

    def _compute(self, session: Any, host_files: list, progress: Callable, options: UserOptions) -> str:
        """Runs in a worker thread: the analysis entry point (in limited child processes unless disabled), with the
        request's settings handed down (an injected analyzer replaces the whole analysis and gets none)."""
        return self._advisor.report_json(session, host_files, progress=progress, jobs=self._host_jobs,
                                         isolate=self._isolate, analyze_fn=self._analyzer, options=options)


class SingleFlight:
    """Concurrent calls of :meth:`run` share one call of ``fn`` in flight: the first caller runs it, the others
    wait for its result (or its exception).  Nothing is kept after it: the next call runs ``fn`` again, so an
    answer is never older than the call in flight when it was asked for.

    Why: a listing costs ~10-20 ms of the GIL; 50 clients each making their own queued one behind the other."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flight: Future | None = None

    def run(self, fn: Callable[[], Any]) -> Any:
        with self._lock:
            flight, leader = self._flight, self._flight is None
            if leader:
                flight = self._flight = Future()
        assert flight is not None
        if leader:
            try:
                flight.set_result(fn())
            except BaseException as e:  # noqa: BLE001 - every waiter gets it
                flight.set_exception(e)
            finally:
                with self._lock:
                    self._flight = None
        return flight.result()


# -- helpers (pure; module level so tests and readers find them fast) ---------


def _required(request: wrappers.Request, name: str) -> str:
    """A required name parameter (run, session, host, ...): 400 when missing or longer than any name (``query``)."""
    return query.name(request.args, name)  # type: ignore[return-value]


def _number(request: wrappers.Request, name: str) -> float:
    """A required finite number of ms (400 otherwise, saying which and why: ``query.number``)."""
    return query.number(request.args, name, MAX_ABS_MS)


#: Window bounds beyond this many ms from the trace's 0 are no capture's (a profile covers seconds to minutes).
MAX_ABS_MS = 1e9


def _window_ok(start: float, end: float) -> bool:
    return math.isfinite(start) and math.isfinite(end) and 0 < end - start <= timeline.MAX_WINDOW_MS \
        and abs(start) <= MAX_ABS_MS and abs(end) <= MAX_ABS_MS


def _window_args(request: wrappers.Request) -> tuple[float, float]:
    """``start_ms`` < ``end_ms``, at most ``timeline.MAX_WINDOW_MS`` apart (400 otherwise)."""
    start, end = _number(request, "start_ms"), _number(request, "end_ms")
    if not end > start:
        raise errors.InvalidArgumentError(f"end_ms ({end:g}) must be greater than start_ms ({start:g})")
    if end - start > timeline.MAX_WINDOW_MS:
        raise errors.InvalidArgumentError(f"the window is {end - start:g} ms wide: at most {timeline.MAX_WINDOW_MS:g} ms "
                                          f"(a step or a few) are drawn")
    return start, end


def _respond_download(request: wrappers.Request, path: str) -> wrappers.Response:
    """``path`` (a discovered file) as an attachment, streamed in chunks, with TensorBoard's security headers
    (a remote object is read whole first: ``fsio.open_binary``)."""
    name = path.rstrip("/").rsplit("/", 1)[-1] if fsio.is_remote(path) else os.path.basename(fsio.local_path(path))
    ascii_name = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in name) or "trace"
    stream = fsio.open_binary(path)
    size = os.fstat(stream.fileno()).st_size if hasattr(stream, "fileno") and not fsio.is_remote(path) else None

    def chunks():
        with stream:
            while block := stream.read(DOWNLOAD_CHUNK):
                yield block

    headers = [("Content-Disposition", f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(name)}"),
               ("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-store")]
    if size is not None:
        headers.append(("Content-Length", str(size)))
    return wrappers.Response(chunks(), status=200, headers=headers, content_type="application/octet-stream",
                             direct_passthrough=True)


def _select_hosts(session: Any, host: str | None) -> list:
    """All hosts of a session, or the one asked for (only by its listed name)."""
    hosts = list(session.hosts)
    if host is None:
        return hosts
    chosen = [h for h in hosts if h.host == host]
    if not chosen:
        raise errors.NotFoundError(f"no host {echo(host)} in session {echo(session.session)}")
    return chosen


def _report_key(session: Any, host_files: list, options: UserOptions) -> tuple:
    """The in-memory key of a report: the session, every host file's identity, the settings it is made with, every
    threshold changed from the table's (``thresholds.tuned``, as the disk cache's key holds them) and the job's ranks
    in sibling run folders with the files of theirs the analysis reads (``RankRuns.key_material``, as the disk
    cache's key: a peer's file rewritten is another report)."""
    linked = session.linked_ranks
    return (session.run, session.session, tuple(_identity(h) for h in host_files), options,
            tuple(sorted(tuned().items())), repr(linked.key_material()) if linked is not None else None)


def _identity(h: Any) -> tuple:
    """A capture's identity: a rewritten or replaced file (any rank's, for a host of several) gets a new key -- by its
    size and mtime, and by the (device, inode) discovery listed it with (a file replaced by one of the same size and
    mtime is another inode); so does a file its reader reads beside it (``HostFile.beside``) written or changed --
    by its content too (``Advisor.side_identities``, the disk cache's binding: a small record rewritten with the
    same size and mtime is another key); and so does a rank its layout inferred from other machines' files
    (``HostFile.inferred_ranks``: they said another rank, or none)."""
    return (h.host, *((*f, getattr(f[0], "file_id", None)) for f in h.identity()), Advisor.side_identities(h),
            tuple(tuple(r) for r in h.inferred_ranks()))


def _still_written(host_files: list, settle_s: float) -> str | None:
    """The first local host file modified less than ``settle_s`` ago (still being written), else None.

    Discovery's mtime, no extra stat.  Remote stores (whole objects, other clocks) are not waited for.
    """
    if settle_s <= 0:
        return None
    now = time.time_ns()
    for h in host_files:
        if not fsio.is_remote(h.path) and -settle_s * 1e9 < now - h.mtime_ns < settle_s * 1e9:
            return h.host
    return None


def _frameworks_listing() -> list[dict[str, str]]:
    """The frameworks whose captures are read, with how to capture one (the tab's "no profiles yet" state)."""

    return [{"id": f.id, "name": f.name, "capture": f.capture_snippet} for f in REGISTRY.values()]


def _respond_outcome(request: wrappers.Request, outcome: Outcome) -> wrappers.Response:
    if outcome.state == "ready":
        return http_util.Respond(request, outcome.body, _JSON)
    if outcome.state == "computing":
        body = {"state": "computing", "progress": round(outcome.progress, 3), "message": outcome.message}
        return _respond_json(request, body, code=202)
    return _respond_json(request, {"state": "error", "error": outcome.message}, code=outcome.code)


#: The methods every route answers; the tab only reads.
ALLOWED_METHODS = ("GET", "HEAD")


def _read_only(app: Callable) -> Callable:
    """``app`` answering only :data:`ALLOWED_METHODS`: any other method (PUT, POST, TRACE, ...) is a 405 with an
    ``Allow`` header, before the route runs."""

    def wsgi(environ: dict, start_response: Callable) -> Any:
        method = environ.get("REQUEST_METHOD", "GET")
        if method in ALLOWED_METHODS:
            return app(environ, start_response)
        body = json.dumps({"state": "error", "error": f"method {echo(method, 20)} not allowed: "
                                                       f"{', '.join(ALLOWED_METHODS)} only"})
        response = wrappers.Response(body, status=405, content_type=_JSON,
                                     headers=[("Allow", ", ".join(ALLOWED_METHODS))])
        return response(environ, start_response)

    return wsgi


def _respond_json(request: wrappers.Request, body: Any, code: int = 200) -> wrappers.Response:
    return http_util.Respond(request, json.dumps(body), _JSON, code=code)


def _respond_file(request: wrappers.Request, name: str) -> wrappers.Response:
    """Serves one file from static/; anything that normalizes outside it is a 404."""
    path = os.path.normpath(os.path.join(STATIC_DIR, name))
    ext = os.path.splitext(path)[1]
    if (
        not name
        or os.path.isabs(name)
        or os.path.commonpath([STATIC_DIR, path]) != STATIC_DIR
        or ext not in _STATIC_TYPES
        or not os.path.isfile(path)
    ):
        raise errors.NotFoundError(f"no static file {echo(name)}")
    with open(path, "rb") as f:
        body = f.read()
    return http_util.Respond(request, body, _STATIC_TYPES.get(ext) or mimetypes.guess_type(path)[0])


def flag_options(flags: Any) -> UserOptions:
    """The settings TensorBoard was started with (``--gpu_advisor_params``, ``--gpu_advisor_net_gbps``,
    ``--gpu_advisor_model_flops_per_step``), over those a plain ``TB_GPU_ADVISOR_*`` environment gives.

    The loader's argparse types refuse bad values at start; a flags object built elsewhere (tests, an embedding
    program) with a value that is not positive is ignored with a warning, as before the flags were explicit.
    """
    given = []
    for name, whole in (("gpu_advisor_params", True), ("gpu_advisor_net_gbps", False),
                        ("gpu_advisor_model_flops_per_step", False)):
        value = getattr(flags, name, None)
        ok = isinstance(value, (int, float)) and value > 0 and value != float("inf") and (not whole or value == int(value))
        if value is not None and not ok:
            logger.warning("gpu_advisor: ignoring --%s=%r (not a positive %s)", name, value,
                           "whole number" if whole else "number")
        given.append((int(value) if whole else float(value)) if ok else None)
    return UserOptions.from_env().overridden_by(UserOptions(*given))


def _settings_listing(defaults: UserOptions) -> dict[str, Any]:
    """What applies when the tab sets nothing: the flags' settings (None: not given) and the network default."""
    return {"params": defaults.params, "net_gbps": defaults.net_gbps, "model_flops": defaults.model_flops,
            "net_gbps_default": T("comm.net_GBps")}


def _flag_ttl(flags: Any) -> float:
    """``--gpu_advisor_discovery_ttl`` (seconds; 0 lists on every request), else the default."""
    value = getattr(flags, "gpu_advisor_discovery_ttl", None)
    try:
        return max(0.0, float(value)) if value is not None else DEFAULT_DISCOVERY_TTL_S
    except (TypeError, ValueError):
        return DEFAULT_DISCOVERY_TTL_S


def _open_cache(flags: Any) -> ReportCache:
    """The report cache of ``--gpu_advisor_cache_dir`` (None: ``$TB_GPU_ADVISOR_CACHE_DIR`` and its default, "off"
    included); disabled when it cannot be created -- no cache is better than no tab."""
    try:
        return ReportCache(getattr(flags, "gpu_advisor_cache_dir", None))
    except Exception:  # noqa: BLE001
        logger.warning("gpu_advisor: persistent cache disabled", exc_info=True)
        return ReportCache(None, enabled=False)
