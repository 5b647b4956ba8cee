"""Issue #39, deliverable 3: every analysis is bounded in CPU as well as memory, a worker that dies says why, and
one hostile file holds at most one worker, never the queue (``runtime.isolation``, ``serve.service``)."""

from __future__ import annotations

import resource
import signal
import threading
import time

import pytest

from synthetic import hostile
from tb_gpu_advisor.discover.logdir import HostFile
from tb_gpu_advisor.runtime import isolation
from tb_gpu_advisor.serve.service import ReportService, classify
from tests.support.paths import SHARED_PROFILES


def test_a_spinning_analysis_is_stopped_by_its_cpu_budget_and_says_so():
    """A loop with no end (a 459-byte pickle did this) ends at its CPU budget, not at the 900 s wall clock."""
    t = time.monotonic()
    with pytest.raises(isolation.WorkerError) as info:
        isolation.call(hostile.busy_loop, 120.0, limits=isolation.Limits(None, 120.0, None, cpu_s=1.0))
    assert time.monotonic() - t < 60
    message = str(info.value)
    assert "SIGXCPU" in message and "1 s of CPU" in message and isolation.ENV_CPU in message, message
    assert info.value.kind == "limit" and "out of memory" not in message


def test_a_crashed_worker_names_its_signal_and_guesses_no_memory_limit():
    """A segfault (deep nesting overflows the C stack) was reported as 'signal 11 (out of memory?)'."""
    with pytest.raises(isolation.WorkerError) as info:
        isolation.call(hostile.segfault, limits=isolation.Limits(None, 60.0))
    message = str(info.value)
    assert "SIGSEGV" in message and "crashed" in message, message
    assert "out of memory" not in message and info.value.kind == "crash"


@pytest.mark.parametrize("number, kind, words", [
    (signal.SIGXCPU, "limit", "CPU limit"),
    (signal.SIGKILL, "limit", "out-of-memory killer"),
    (signal.SIGSEGV, "crash", "crashed"),
    (signal.SIGABRT, "crash", "SIGABRT"),
])
def test_every_death_is_named_by_its_signal(number, kind, words):
    message, got = isolation.death_message(-int(number), isolation.Limits(2 << 30, 900.0, None, 60.0))
    assert got == kind and words in message and signal.Signals(number).name in message, message
    assert "?" not in message


def test_the_cpu_budget_grows_with_the_file_from_a_floor():
    small = [HostFile("h", "/x/h.pickle", 459, 0)]
    big = [HostFile("h", "/x/h.xplane.pb", 1 << 30, 0)]
    gz = [HostFile("h", "/x/h.trace.json.gz", 1 << 27, 0)]
    assert isolation.cpu_budget(small) == pytest.approx(isolation.CPU_FLOOR_S, abs=0.01)
    assert isolation.cpu_budget(big) == pytest.approx(isolation.CPU_FLOOR_S + isolation.CPU_S_PER_GIB)
    assert isolation.cpu_budget(gz) == pytest.approx(isolation.cpu_budget(big))  # 128 MiB of gzip ~ 1 GiB of text


def test_the_cpu_budget_is_settable_and_zero_is_none(monkeypatch):
    monkeypatch.setenv(isolation.ENV_CPU, "7")
    assert isolation.Limits.from_env().cpu_s == 7
    monkeypatch.setenv(isolation.ENV_CPU, "0")
    assert isolation.Limits.from_env().cpu_s is None


def _largest_real_capture():
    files = [p for p in SHARED_PROFILES.rglob("*.xplane.pb")] if SHARED_PROFILES.exists() else []
    return max(files, key=lambda p: p.stat().st_size) if files else None


@pytest.mark.skipif(_largest_real_capture() is None, reason="the shared real captures are not here")
def test_the_largest_real_capture_fits_its_default_cpu_budget_many_times_over():
    """The default is measured, not guessed: the largest real file we hold uses under a tenth of its budget."""
    path = _largest_real_capture()
    host = HostFile("vm", str(path), path.stat().st_size, path.stat().st_mtime_ns)
    limits = isolation.Limits.from_env([host])
    error, used = isolation.call(analyze_and_time, host, limits=limits)
    assert error is None
    assert 0 < used < limits.cpu_s / 10, (used, limits.cpu_s)


def analyze_and_time(host, progress=None):
    """In the worker: the host's analysis error (None) and the CPU seconds the worker used for it."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    report = isolation.analyze_host(host)
    after = resource.getrusage(resource.RUSAGE_SELF)
    return report.error, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


# -- the queue ----------------------------------------------------------------------------------------------


def test_two_slow_files_do_not_hold_the_queue():
    """Two hostile files used to hold both workers: other reports waited 88 s.  Now a job past ``slow_after_s``
    gives its slot back, and a third profile's report is computed while both still run."""
    service = ReportService(workers=2, wait_s=0.0, slow_after_s=0.2)
    release = threading.Event()
    try:
        for name in ("hostile-a", "hostile-b"):
            assert service.get(name, lambda progress: (release.wait(30), "{}")[1]).state == "computing"
        t = time.monotonic()
        while (o := service.get("good", lambda progress: '{"ok": 1}')).state != "ready":
            assert time.monotonic() - t < 10, "the good report waited behind the slow ones"
            time.sleep(0.05)
        assert o.body == '{"ok": 1}' and time.monotonic() - t < 5
    finally:
        release.set()
        service.shutdown()


def test_a_failed_file_is_not_analysed_again_until_it_changes():
    """The failure is kept by the files' identity apart from the reports: 40 other reports do not push it out."""
    service = ReportService(workers=1, memory_entries=4, wait_s=5.0)
    runs = []

    def hostile_compute(progress):
        runs.append(1)
        raise isolation.WorkerError("used more than 60 s of CPU: stopped by the CPU limit (SIGXCPU)", "limit")

    try:
        first = service.get(("bad", 10, 1), hostile_compute)
        assert first.state == "error" and first.code == 422
        for i in range(40):
            assert service.get(("good", i), lambda progress: "{}").state == "ready"
        assert service.get(("bad", 10, 1), hostile_compute).state == "error" and len(runs) == 1
        service.get(("bad", 10, 2), hostile_compute)  # the file changed (a new mtime): tried again
        assert len(runs) == 2
    finally:
        service.shutdown()


def _wrapped(cause: BaseException) -> BaseException:
    """A reader's error raised from ``cause``, as ``ProfileReadError`` wraps the open's (the swap race: the open met
    the link, which was gone again before it could be read)."""
    try:
        try:
            raise cause
        except OSError as e:
            raise RuntimeError(f"cannot open: {e}") from e
    except RuntimeError as wrapped:
        return wrapped


@pytest.mark.parametrize("error, code, expected", [
    (isolation.WorkerError("NotListedFile: a link on its way leaves the logdir", "NotListedFile"), 404, True),
    (isolation.WorkerError("took longer than 900 s", "limit"), 422, True),
    (isolation.WorkerError("CorruptProfileError: truncated", "file"), 422, True),
    (isolation.WorkerError("worker process crashed (SIGSEGV)", "crash"), 500, False),
    (isolation.WorkerError("KeyError: 'x'", "KeyError"), 500, False),
    (FileNotFoundError("gone"), 404, True),
    (_wrapped(OSError(40, "Too many levels of symbolic links")), 404, True),
    (ValueError("not a profile"), 422, True),
    (KeyError("bug"), 500, False),
])
def test_failures_are_classified_refusals_as_4xx_defects_as_500(error, code, expected):
    assert classify(error) == (code, expected)




def test_a_server_analyses_each_host_of_a_many_host_session_under_the_worker_limits(tmp_path, monkeypatch):
    """The MCP server's sessions of many hosts (``Advisor.report(isolate=True)``) ran in a plain process pool with
    no limit; now each host file is analysed in a limited child: under a 64 MB limit each host says so."""
    import shutil

    from tb_gpu_advisor.runtime.advisor import Advisor
    from tests.support.paths import DEMO_LOGS

    shutil.copytree(DEMO_LOGS / "multi_host", tmp_path / "multi_host")
    advisor = Advisor(str(tmp_path), cache="off")
    (session,) = advisor.sessions()
    assert len(session.hosts) == 2
    monkeypatch.setenv(isolation.ENV_MEMORY, "64")
    report = advisor.report(session, isolate=True, jobs=2).report
    errors = [h.error or "" for h in report.hosts]
    assert all("ran out of memory (worker limit 64 MB" in e or "MemoryError" in e for e in errors), errors
    monkeypatch.delenv(isolation.ENV_MEMORY)
    healthy = advisor.report(session, isolate=True, jobs=2).report
    assert [h.error for h in healthy.hosts] == [None, None]


def test_a_refused_file_is_tried_again_when_it_comes_back():
    """A link swapped in for a moment (404) is not remembered: the file as listed may be back at the next request.
    A limit the file hit (422) is remembered (above)."""
    service = ReportService(workers=1, wait_s=5.0)
    answers = iter([isolation.WorkerError("NotListedFile: a link on its way leaves the logdir", "NotListedFile"),
                    None])

    def compute(progress):
        e = next(answers)
        if e is not None:
            raise e
        return "{}"

    try:
        first = service.get(("host", 10, 1, (1, 2)), compute)
        assert (first.state, first.code) == ("error", 404)
        assert service.get(("host", 10, 1, (1, 2)), compute).state == "ready"
    finally:
        service.shutdown()


def test_an_idle_service_holds_no_watchdog_thread():
    """The thread that demotes slow jobs ends when none runs (one per service left running grew a test process's
    address space past the analysis limit)."""
    service = ReportService(workers=1, wait_s=5.0, slow_after_s=0.1)
    try:
        assert service.get("k", lambda progress: "{}").state == "ready"
        deadline = time.monotonic() + 5
        while service._watchdog is not None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert service._watchdog is None
        assert service.get("k2", lambda progress: "{}").state == "ready"  # and a new job still runs
    finally:
        service.shutdown()


class _Conn:
    """A worker's end of the pipe that records, at each send, whether the analysis' memory was still held."""

    def __init__(self, held) -> None:
        self.held, self.sent = held, []

    def send(self, message) -> None:
        self.sent.append((message, self.held() is not None))

    def close(self) -> None:
        pass


def test_a_worker_out_of_memory_frees_the_analysis_before_it_says_so():
    """The message "out of memory" is pickled and sent after the failed analysis' frames are gone: sent from inside
    the ``except`` (the traceback keeping every frame and the memory they hold alive), it failed with a second
    MemoryError under a tight limit, and the parent saw only "exited with status 1 without a result" (CI, 64 MB)."""
    import weakref

    class Block:
        pass

    refs = []

    def analysis(progress=None):
        held = Block()  # what the analysis holds when it runs out
        refs.append(weakref.ref(held))
        raise MemoryError

    conn = _Conn(lambda: refs[0]() if refs else None)
    isolation._child_main(conn, analysis, (), None)
    assert conn.sent == [(("error", "MemoryError", "out of memory"), False)]


class _FailingSend:
    """A worker's end of a real pipe whose ``send`` fails as pickling does once the memory limit is reached."""

    def __init__(self, conn) -> None:
        self.conn = conn

    def send(self, message) -> None:
        raise MemoryError

    def fileno(self) -> int:
        return self.conn.fileno()

    def close(self) -> None:
        self.conn.close()


def test_a_worker_that_cannot_even_pickle_says_out_of_memory():
    """CI saw a worker at its 64 MB limit fail to pickle the three-string "out of memory" tuple too, and the parent
    heard only "exited with status 1".  The message goes prepared, with no allocation, and the parent's ``recv``
    reads it as any other: a real pipe, both sends failing."""
    import multiprocessing

    parent, child = multiprocessing.Pipe(duplex=False)

    def analysis(progress=None):
        raise MemoryError

    isolation._child_main(_FailingSend(child), analysis, (), None)
    assert parent.poll(5)
    assert parent.recv() == ("error", "MemoryError", "out of memory")
    parent.close()


def test_the_reserve_is_address_space_handed_back():
    """The room set aside is a mapping that ``release`` unmaps (a freed ``bytearray`` may stay in glibc's heap, out
    of reach of Python's arenas)."""
    reserve = isolation._Reserve(1 << 20)
    assert reserve._map is not None and len(reserve._map) == 1 << 20
    reserve.release()
    assert reserve._map is None
    reserve.release()  # twice is harmless


def test_the_prepared_out_of_memory_frame_is_read_as_the_message():
    """The frame a worker writes when out of memory (pickled at import, without multiprocessing) is what
    ``Connection.recv`` reads as the "out of memory" outcome, through the descriptor and through ``send_bytes``."""
    import multiprocessing

    class _NoFd:  # a connection without a descriptor: send_bytes
        def __init__(self, conn):
            self.conn = conn

        def send_bytes(self, data):
            self.conn.send_bytes(data)

    for wrap in (lambda c: c, _NoFd):
        reader, writer = multiprocessing.Pipe(duplex=False)
        isolation._send_out_of_memory(wrap(writer))
        assert reader.recv() == isolation._OUT_OF_MEMORY
        reader.close()
        writer.close()


def test_an_analysis_worker_imports_nothing_under_its_limit():
    """A worker imports under its memory limit, where compiling a module's source or mapping an extension can fail:
    CPython's compiler crashed the child with SIGSEGV (the many-host test above under 64 MB, 3 runs in 6, once the
    readers were imported on first use).  So the forkserver loads every module an analysis imports on first use
    (``isolation.LAZY_ANALYSIS_MODULES``), and a worker's analysis of each format imports none itself."""
    import glob

    from tests.support.paths import DEMO_LOGS, FIXTURES
    from tests.support.worker_probe import modules_analyses_import

    files = [(glob.glob(str(DEMO_LOGS / "launch_bound" / "**" / "*.xplane.pb"), recursive=True)[0], "xplane"),
             (str(FIXTURES / "gaps" / "inference_rank_1" / "inference_rank_1.1.pt.trace.json.gz"), "kineto"),
             (str(FIXTURES / "wild" / "mpi_saxpy_a100_rank0" / "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"), "nsys"),
             (str(FIXTURES / "h200_memory" / "torch_oom_snapshot" / "oom_snapshot.pickle"), "snapshot")]
    for path, fmt in files:
        assert isolation.call(modules_analyses_import, [(path, fmt)]) == [], fmt
