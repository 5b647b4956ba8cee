"""Computes reports off the request thread, once per profile, and remembers them.

TensorBoard serves requests on many threads and the frontend polls while a
report is computed, so three things matter here:

* the analysis never runs on a request thread (a large capture takes
  seconds; the request answers "computing, 40%" and the page polls);
* concurrent requests for the same profile share ONE computation
  (in-flight jobs are deduplicated by key);
* a finished report is kept in memory keyed by the files' identity
  (path, size, mtime), so a rewritten or new capture is recomputed on the
  next reload while an unchanged one is answered instantly.

An optional persistent store (``tb_gpu_advisor.runtime.cache``) is consulted inside
the worker, so its disk reads never block a request either.

One hostile file holds at most one worker, never the queue: an analysis that
runs longer than ``slow_after_s`` gives its slot back to the queue (up to
``max_slow`` such at once; each is bounded by its worker's CPU and wall-clock
limits), and an analysis that failed on the file's bytes or a limit is
remembered by the files' identity apart from the reports (never pushed out by
them), so the same file is not analysed again until it changes (a refusal --
a link swapped in since the listing -- is read once, by the poll of the request that found it, and then tried
again: the file may be back).  A failure that is the file's (a refused link, a
limit it hit) is one WARNING line and a 4xx (:func:`classify`); only a defect
is an ERROR with its traceback and a 500.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Callable, Hashable, Protocol

from tb_gpu_advisor.common.fmt import clip
from tb_gpu_advisor.runtime.advisor import GONE, failure_kind

logger = logging.getLogger(__name__)

# progress(message, fraction in [0, 1]) — what analyze_session reports through.
ProgressFn = Callable[..., None]
# compute(progress) -> report JSON text
ComputeFn = Callable[[ProgressFn], str]


class Store(Protocol):
    """A persistent report store (the on-disk cache), by opaque string key."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, value: str) -> None: ...


@dataclass(frozen=True)
class Outcome:
    """What a request gets: a finished report, a progress note, or an error (``code``: its HTTP status)."""

    state: str  # "ready" | "computing" | "error"
    body: str = ""  # report JSON when ready
    progress: float = 0.0
    message: str = ""
    code: int = 500  # of an error: 404 the file is gone or refused, 422 it cannot be analysed, 500 a defect


def classify(e: BaseException) -> tuple[int, bool]:
    """(HTTP status, whether it is expected) of an analysis failure.

    Expected -- the file's own doing, logged as one WARNING line: a file gone or refused since it was listed
    (404), a worker limit it hit or a read error of its bytes (422).  Anything else is a defect (500, logged with
    its traceback); a worker that crashed (a signal that is no limit) too, though its traceback stayed there."""
    kind = getattr(e, "kind", None)  # isolation.WorkerError: what the child's failure said, or limit/crash
    if kind is None:
        kind = failure_kind(e)
    if kind in GONE:
        return 404, True
    if kind in ("limit", "file"):
        return 422, True
    return 500, False


@dataclass
class _Job:
    """One in-flight computation; its progress is read by polling requests."""

    future: Future
    progress: float = 0.0
    message: str = "queued"


class ReportService:
    """Worker pool + in-flight dedupe + LRU memory cache of report JSON."""

    def __init__(
        self,
        workers: int = 2,
        memory_entries: int = 32,
        store: Store | None = None,
        wait_s: float = 0.3,
        slow_after_s: float = 5.0,
        max_slow: int | None = None,
        failed_entries: int = 4096,
        refusal_s: float = 5.0,
    ) -> None:
        #: ``workers`` analyses at once, and up to ``max_slow`` more that have run past ``slow_after_s``
        self._max_slow = max(0, workers * 2 if max_slow is None else int(max_slow))
        self._pool = ThreadPoolExecutor(max_workers=workers + self._max_slow, thread_name_prefix="gpu-advisor")
        self._slots = threading.BoundedSemaphore(max(1, workers))
        self._slow_after_s = slow_after_s
        self._slow = 0
        #: the jobs holding a slot: [started (monotonic), held] each; one watchdog thread demotes the slow ones
        self._holding: list[list] = []
        self._watchdog: threading.Thread | None = None
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._jobs: dict[Hashable, _Job] = {}
        self._done: collections.OrderedDict[Hashable, Outcome] = collections.OrderedDict()
        #: failures by key, kept apart so reports never push them out: a file that failed is not tried again
        self._failed: collections.OrderedDict[Hashable, Outcome] = collections.OrderedDict()
        self._failed_entries = max(1, failed_entries)
        #: refusals (404: a file gone or swapped since it was listed) by key, with when they were found.  They are
        #: not kept as failures, since the file may come back as listed: the next request tries again.  But a
        #: request that started the analysis and got "computing" polls again, and that poll must read the refusal,
        #: not start the analysis anew (under load, each new analysis outlasting the request's wait, the poll would
        #: never end).  So a refusal is read once, by the first request to ask within ``refusal_s``
        self._refused: collections.OrderedDict[Hashable, tuple[float, Outcome]] = collections.OrderedDict()
        self._refusal_s = max(0.0, refusal_s)
        self._memory_entries = memory_entries
        self._store = store
        # A short wait lets fast (cached on disk, tiny) reports answer in one
        # round trip instead of a 202 and a poll.
        self._wait_s = wait_s
        self.computations = 0  # how many analyses actually ran (tests, logs)

    def get(self, key: Hashable, compute: ComputeFn, store_key: str | None = None,
            valid: Callable[[], bool] | None = None) -> Outcome:
        """Returns the outcome for ``key``, starting the computation if needed.

        ``valid()`` is asked after a computation: False (the input changed meanwhile, e.g. a file still
        being written) keeps the report out of the persistent store.
        """
        with self._lock:
            done = self._finished(key)
            if done is not None:
                return done
            job = self._jobs.get(key)
            if job is None:
                job = self._start(key, compute, store_key, valid)
        result = None
        try:
            result = job.future.result(timeout=self._wait_s)
        except FutureTimeout:
            return Outcome("computing", progress=job.progress, message=job.message)
        except Exception:  # noqa: BLE001 - recorded by _run as an error outcome
            pass
        with self._lock:
            return self._finished(key) or result or Outcome("computing", progress=job.progress, message=job.message)

    def _finished(self, key: Hashable) -> Outcome | None:
        """The outcome kept for ``key`` (a report, refreshed in the LRU, or a failure); caller holds the lock."""
        done = self._done.get(key)
        if done is not None:
            self._done.move_to_end(key)
            return done
        refused = self._refused.pop(key, None)  # read once, by the first request to ask
        if refused is not None and time.monotonic() - refused[0] < self._refusal_s:
            return refused[1]
        return self._failed.get(key)

    def peek(self, key: Hashable) -> Outcome | None:
        """The finished outcome kept for ``key``, or None; never starts a computation."""
        with self._lock:
            return self._done.get(key) or self._failed.get(key)

    def put(self, key: Hashable, body: str) -> None:
        """Keeps ``body`` as the ready outcome of ``key``: what one computation found for other keys besides its
        own (the timelines of every window of a host, from one read of its file)."""
        with self._lock:
            self._done[key] = Outcome("ready", body=body, progress=1.0)
            self._done.move_to_end(key)
            while len(self._done) > self._memory_entries:
                self._done.popitem(last=False)

    def _start(self, key: Hashable, compute: ComputeFn, store_key: str | None,
               valid: Callable[[], bool] | None = None) -> _Job:
        """Registers and submits a job; caller holds the lock."""
        job = _Job(future=Future())
        self._jobs[key] = job
        job.future = self._pool.submit(self._run, key, job, compute, store_key, valid)
        return job

    def _run(self, key: Hashable, job: _Job, compute: ComputeFn, store_key: str | None,
             valid: Callable[[], bool] | None = None) -> Outcome:
        """Worker body: waits for a slot, then :meth:`_work`; a job still running after ``slow_after_s`` gives its
        slot back (:meth:`_watch`), so a slow or hostile file never holds the queue."""
        self._slots.acquire()
        entry = [time.monotonic(), True]  # [started, the slot: True held, None demoted, False given back]
        with self._lock:
            self._holding.append(entry)
            self._start_watchdog()
        try:
            return self._work(key, job, compute, store_key, valid)
        finally:
            with self._lock:
                self._holding.remove(entry)
                if entry[1]:
                    entry[1] = False
                    self._slots.release()
                elif entry[1] is None:  # demoted: it counted as slow
                    self._slow -= 1

    def _start_watchdog(self) -> None:
        """The one thread that demotes slow jobs, started with a job when none runs (caller holds the lock); it ends
        when no job runs, so an idle service holds no thread."""
        if self._watchdog is None:
            self._watchdog = threading.Thread(target=self._watch, name="gpu-advisor-watchdog", daemon=True)
            self._watchdog.start()

    def _watch(self) -> None:
        """Every tenth of ``slow_after_s`` (at most 0.5 s): a job that has held its slot longer than ``slow_after_s``
        gives it back to the queue while fewer than ``max_slow`` run so."""
        tick = max(0.01, min(0.5, self._slow_after_s / 10))
        while not self._stopped.wait(tick):
            now = time.monotonic()
            with self._lock:
                if not self._holding:  # nothing runs: the thread ends (the next job starts another)
                    self._watchdog = None
                    return
                for entry in self._holding:
                    if entry[1] and now - entry[0] >= self._slow_after_s and self._slow < self._max_slow:
                        entry[1] = None
                        self._slow += 1
                        self._slots.release()

    def _work(self, key: Hashable, job: _Job, compute: ComputeFn, store_key: str | None,
              valid: Callable[[], bool] | None = None) -> Outcome:
        """Persistent cache, else analyze; returns the outcome, kept; a refusal (a 404: the file gone
        or swapped since it was listed may be back later, and trying again costs an open) until one request reads it
        (within ``refusal_s``)."""
        try:
            body = self._load(store_key)
            if body is None:
                with self._lock:
                    self.computations += 1
                body = compute(lambda message, fraction: _note_progress(job, message, fraction))
                if valid is None or valid():
                    self._save(store_key, body)
                else:
                    logger.info("gpu_advisor: %s changed during its analysis: report not stored", clip(repr(key)))
            outcome = Outcome("ready", body=body, progress=1.0)
        except Exception as e:  # noqa: BLE001 - any analysis failure becomes a JSON error
            code, expected = classify(e)
            if expected:  # the file's doing: one line, no traceback
                logger.warning("gpu_advisor: %s: %s", clip(repr(key)), clip(str(e), 300))
            elif getattr(e, "kind", None):  # a worker's crash: its traceback stayed in the worker
                logger.error("gpu_advisor: analysis failed for %s: %s", clip(repr(key)), clip(str(e), 300))
            else:
                logger.exception("gpu_advisor: analysis failed for %s", clip(repr(key)))
            outcome = Outcome("error", message=str(e) if getattr(e, "kind", None) else f"{type(e).__name__}: {e}",
                              code=code)
        with self._lock:
            self._jobs.pop(key, None)
            if outcome.state == "error" and outcome.code == 404:  # read by the polls of the next seconds only
                self._refused[key] = (time.monotonic(), outcome)
                self._refused.move_to_end(key)
                while len(self._refused) > self._failed_entries:
                    self._refused.popitem(last=False)
            elif outcome.state == "error":
                self._failed[key] = outcome
                while len(self._failed) > self._failed_entries:
                    self._failed.popitem(last=False)
            elif outcome.state != "error":
                self._done[key] = outcome
                while len(self._done) > self._memory_entries:
                    self._done.popitem(last=False)
        return outcome

    def _load(self, store_key: str | None) -> str | None:
        if self._store is None or store_key is None:
            return None
        try:
            return self._store.get(store_key)
        except Exception:  # noqa: BLE001 - a broken cache must never break the tab
            logger.warning("gpu_advisor: persistent cache read failed", exc_info=True)
            return None

    def _save(self, store_key: str | None, body: str) -> None:
        if self._store is None or store_key is None:
            return
        try:
            self._store.put(store_key, body)
        except Exception:  # noqa: BLE001
            logger.warning("gpu_advisor: persistent cache write failed", exc_info=True)

    def shutdown(self) -> None:
        self._stopped.set()
        self._pool.shutdown(wait=False, cancel_futures=True)


def _note_progress(job: _Job, message: str, fraction: float) -> None:
    """Progress callback handed to the analyzer: ``progress(message, fraction)``."""
    job.progress = max(0.0, min(1.0, float(fraction)))
    if message:
        job.message = message
