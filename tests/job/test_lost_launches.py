"""A capture that lost part of its GPU records says so, and counts no step on the lost part (issue #37 class 1:
"a damaged file is never healthy"; h37-survey31's *Partial loss of GPU records is unsaid*).

By accounting: every launch the runtime accepted runs a kernel, and CUPTI gives the kernel its launch's correlation
id.  Launches without a kernel record that the GPU was shown done with -- each returned after every recorded kernel had
ended (an idle queue), and a host sync began after it and returned inside the capture -- are records the profiler
never wrote; those still queued behind recorded work, or after the window's last sync, are in flight at its edge.

Real trace: ``tests/fixtures/wild/nvllm_gb10_lost_tail/run.sqlite`` (Navi-AI-Lab/nvllm @0e834629, Apache-2.0,
PROVENANCE.md): an Nsight export (``--duration``, no flush at cudaProfilerStop) of a CuTe-DSL kernel harness on a GB10
whose 24,944 accepted launches have 143 kernel records; the 24,801 others all return after the last recorded
kernel's end (711.4 ms).  By construction (``synthetic.nsysexport.write_lost_kernel_records``): a loop whose kernels
stop being recorded half-way, with NVTX steps over the whole loop; the control, a window ending with launches in
flight behind a long last kernel.
"""

from __future__ import annotations

import sqlite3

from synthetic import jaxcapture, nsysexport as nx
from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.nsys import reader as nsys_reader
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.cli_report import first_report
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions


def _wild(run: str) -> dict:
    (s,) = [s for s in wild_sessions() if s.run == run]
    return session_report(s).to_dict()


def _lost(rep: dict) -> list[dict]:
    return [f for f in rep["findings"] if f["metric"] and f["metric"]["id"] == "lost_launch_share"]


def _text(f: dict) -> str:
    return " ".join([f["title"], f["summary"]] + [a["text"] + " " + (a["snippet"] or "") for a in f["actions"]])


def test_a_real_export_that_lost_its_last_second_of_kernels_says_so():
    """nvllm's harness export: 143 kernels recorded, then 24,801 accepted launches without one, each after the last
    recorded kernel and followed by a finished ``cudaDeviceSynchronize``.  On main: no word of them."""
    rep = _wild("nvllm_gb10_lost_tail")
    (f,) = _lost(rep)
    assert f["severity"] == "warning"
    assert rep["findings"][0]["id"] == f["id"]  # what the capture is comes first: the rest reads the recorded part
    assert "24,801 of the 24,944" in f["summary"] and "711.4 ms" in f["summary"]
    assert abs(f["metric"]["value"] - 24_801 / 24_944) < 1e-3
    text = _text(f)
    assert "--flush-on-cudaprofilerstop" in text and "--capture-range" in text  # Nsight's own options, not torch's
    assert "torch.profiler" not in text


def test_steps_in_the_lost_stretch_are_not_counted(tmp_path):
    """By construction: 40 NVTX steps of 4 kernels each; from step 20 on the launches are accepted and synced but no
    kernel is recorded.  The 20 steps of the lost stretch are dropped (on main they were kept: GPU-less steps read as
    a GPU idling for its host), and the warning names the share and where the stretch begins."""
    path = str(tmp_path / "run.sqlite")
    truth = nx.write_lost_kernel_records(path, ranges=True)
    rep = first_report(path)
    host = rep["hosts"][0]
    (f,) = _lost(rep)
    assert f"{truth['lost']:,} of the {truth['launches']:,}" in f["summary"]
    assert f"from {truth['lost_from_ns'] / 1e6:,.1f} ms" in f["summary"]
    steps = host["steps"]
    lost = [d for d in steps["dropped"] if d["reason"].startswith("lost records")]
    assert len(lost) == 20 and steps["found"] == 40
    # and the stock rule's first step; the last recorded step (19) is whole -- the steps after it started -- so it is
    # no last step the window cut (h37-randjobs4: before, "first and last of the rest", 18)
    assert steps["count"] == 40 - 20 - 1 and "dropped first of 40 steps" in steps["note"]


def test_a_loop_that_polls_after_its_lost_launches_is_read_as_its_sync_twin(tmp_path):
    """By construction: the stretch lost mid-window (steps 15-24 of 40, two streams), each repeat's wait a
    ``cudaStreamQuery`` every 10 us until its kernels are done instead of ``cudaDeviceSynchronize``.  With the records
    lost, every query found the recorded GPU done -- each one its own poll, so none was a wait and no launch was lost
    (BASE: no finding, where the sync twin reads 40 of 160).  The run of queries in a row until the host launches again
    is the poll by its shape (``job.waits.polls``): the same 40 of 160, the same stretch and steps as the twin's."""
    path = str(tmp_path / "run.sqlite")
    truth = nx.write_lost_kernel_records(path, lost_from=15, lost_until=25, streams=2, ranges=True,
                                         poll="cudaStreamQuery")
    rep = first_report(path)
    (f,) = _lost(rep)
    assert f"{truth['lost']:,} of the {truth['launches']:,}" == "40 of the 160" and "40 of the 160" in f["summary"]
    assert f"from {truth['lost_from_ns'] / 1e6:,.1f} ms to {truth['resume_ns'] / 1e6:,.1f} ms" in f["summary"]
    steps = rep["hosts"][0]["steps"]
    lost = [d for d in steps["dropped"] if d["reason"].startswith("lost records")]
    assert len(lost) == 10 and steps["found"] == 40 and steps["count"] == 40 - 10 - 2


def test_polls_over_recorded_work_keep_their_reading(tmp_path):
    """Control: nothing lost, each repeat's wait a poll -- its queries drain recorded work, read as before (one poll
    a step, no lost finding)."""
    path = str(tmp_path / "run.sqlite")
    nx.write_lost_kernel_records(path, lost_from=None, ranges=True, poll="cudaStreamQuery")
    assert not _lost(first_report(path))
    assert host_metrics(nsys_reader.read_trace(path)).syncs.poll_calls_per_step == 1.0


def test_launches_in_flight_at_the_windows_end_are_not_lost(tmp_path):
    """Control: every kernel of the loop recorded, then a long last kernel and 60 launches queued behind it with no
    sync after them (the window ended first): in flight, not lost -- no finding, no step dropped for it."""
    path = str(tmp_path / "run.sqlite")
    nx.write_lost_kernel_records(path, lost_from=None, in_flight=60, ranges=True)
    rep = first_report(path)
    assert not _lost(rep)
    assert not [d for d in rep["hosts"][0]["steps"]["dropped"] if d["reason"].startswith("lost records")]


def test_a_kept_capture_with_unmatched_launches_mid_window_is_not_lost():
    """Control (real): ``vit_a4000_pageable_batch`` holds 233 launches without a kernel record, every one before the
    last recorded kernel's end (queued behind recorded work): no lost-records finding."""
    rep = _wild("vit_a4000_pageable_batch")
    assert not _lost(rep)


# --------------------------------------------------------------------------- h37-lost3: wherever the stretch falls,
# with the cause the capture's own settings or log show, and the profilers' own loss counters

def test_a_stretch_lost_mid_window_is_lost_wherever_it_falls(tmp_path):
    """By construction: 40 NVTX steps of 4 kernels over two streams; the kernel records of steps 15-24 are dropped
    whole on both streams (CUPTI's buffers lost), then recording resumes.  Each of those 40 launches returned on an
    idle recorded GPU and its ``cudaDeviceSynchronize`` returned with no kernel recorded: lost, though the records
    go on after them.  On main: no word of them (the tail rule wanted every launch after the last recorded kernel), the
    host's waits read as "GPU work the capture does not show", and the 10 steps were kept as GPU-less steps."""
    path = str(tmp_path / "run.sqlite")
    truth = nx.write_lost_kernel_records(path, lost_from=15, lost_until=25, streams=2, ranges=True)
    rep = first_report(path)
    (f,) = _lost(rep)
    assert f["severity"] == "warning" and rep["findings"][0]["id"] == f["id"]
    assert f"{truth['lost']:,} of the {truth['launches']:,}" in f["summary"]
    assert (f"from {truth['lost_from_ns'] / 1e6:,.1f} ms to {truth['resume_ns'] / 1e6:,.1f} ms, where the kernel "
            "records resume") in f["summary"]
    steps = rep["hosts"][0]["steps"]
    lost = [d for d in steps["dropped"] if d["reason"].startswith("lost records")]
    assert len(lost) == 10 and steps["found"] == 40  # the lost stretch's steps exactly, not the one after it
    assert steps["count"] == 40 - 10 - 2


def test_a_real_export_says_nsights_own_count_and_no_duration_it_did_not_have():
    """nvllm's export records its loss: Nsight's diagnostics count "24806" incomplete CUPTI events dropped.  Its
    ``RUN_DURATION_MS`` 3799 is the session's own length (3,798.4 ms), not a --duration: the program's CUDA trace
    closed (its CUPTI counts at 3,543 ms) 255 ms before the session stopped -- the program had ended.  h37-lost3 read
    the settings as "the capture stopped on its --duration of 3.8 s while the program still ran" (h37-survey72: on
    main that sentence is in the summary); the general causes and fix stand instead."""
    (f,) = _lost(_wild("nvllm_gb10_lost_tail"))
    assert "24,806 incomplete CUPTI records dropped" in f["summary"]
    assert "--duration of" not in f["summary"] and "while the program still ran" not in f["summary"]
    assert "--cuda-flush-interval=100" in f["actions"][0]["snippet"]  # the flush that loses no record at a stop


def test_a_window_ended_at_cudaprofilerstop_without_its_flush_gets_that_fix(tmp_path):
    """By construction: the same lost tail under ``--capture-range=cudaProfilerApi`` with
    ``--flush-on-cudaprofilerstop=false`` (``STOP_TRIGGER`` CudaProfilerApi): the cause and fix are that flush."""
    path = str(tmp_path / "run.sqlite")
    nx.write_lost_kernel_records(path, options={"STOP_TRIGGER": "CudaProfilerApi", "CUDA_FLUSH_PERIOD": "0",
                                                "CUDA_FLUSH_ON_CUDA_PROFILER_STOP": "false"})
    (f,) = _lost(first_report(path))
    assert "ended at cudaProfilerStop with the CUDA trace's buffers not flushed there" in f["summary"]
    assert f["actions"][0]["snippet"].count("--flush-on-cudaprofilerstop=true") == 1
    assert not any("--cuda-flush-interval" in (a["snippet"] or "") for a in f["actions"])  # not the duration's fix


def test_settings_that_show_no_cause_name_none(tmp_path):
    """Control: a --duration session that flushed every 100 ms (``CUDA_FLUSH_PERIOD`` 100) and was not stopped by the
    duration: no cause is claimed from the settings; the general causes and fix stay as they were."""
    path = str(tmp_path / "run.sqlite")
    nx.write_lost_kernel_records(path, options={"STOP_TRIGGER": "Delayed", "RUN_DURATION_MS": "60000",
                                                "CUDA_FLUSH_PERIOD": "100", "CUDA_FLUSH_ON_CUDA_PROFILER_STOP": "true"})
    (f,) = _lost(first_report(path))
    assert "The records were lost because" not in f["summary"]
    assert "a duration that ended the session first" in f["summary"]
    assert "--flush-on-cudaprofilerstop=true" in f["actions"][0]["snippet"]


def test_a_kineto_trace_that_logged_its_buffer_limit_says_so(tmp_path):
    """By construction, with Kineto's own log line (libkineto ``CuptiActivityApi.cpp``: "Exceeded max GPU buffer count
    (33 >= 33) - terminating tracing", kept as the trace's top-level ``WARNING`` list): 12 ProfilerSteps whose kernel
    records stop at step 6.  The cause is Kineto's buffer limit, with its fix (``ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB``
    or fewer active steps); on main the log was unread and the causes were a list."""
    path = str(tmp_path / "rank0.pt.trace.json")
    truth = tt.write_lost_gpu_records(path)
    (f,) = _lost(first_report(path))
    assert f"{truth['lost']:,} of the {truth['launches']:,}" in f["summary"]
    assert "reached their limit of 33 buffers" in f["summary"]
    assert "ACTIVITIES_MAX_GPU_BUFFER_SIZE_MB" in f["actions"][0]["snippet"]


def test_kinetos_count_of_dropped_records_is_said(tmp_path):
    """By construction: every kernel recorded, but Kineto's log counts records CUPTI dropped ("Dropped 1234 activity
    records", libkineto ``CuptiActivityApi.cpp``): an info with the count -- no launch is shown lost, so no warning
    and no step dropped.  Control: the same trace without the line has no such finding."""
    path = str(tmp_path / "rank0.pt.trace.json")
    tt.write_lost_gpu_records(path, lost_from=None, log=(
        "WARNING:2026-03-02 10:14:07 4100:4188 CuptiActivityApi.cpp:308] Dropped 1234 activity records",))
    rep = first_report(path)
    (f,) = [f for f in rep["findings"] if f["metric"] and f["metric"]["id"] == "dropped_records"]
    assert f["severity"] == "info" and "1,234 activity records CUPTI dropped" in f["summary"]
    assert not _lost(rep) and not rep["hosts"][0]["steps"]["dropped"][2:]
    clean = str(tmp_path / "clean.pt.trace.json")
    tt.write_lost_gpu_records(clean, lost_from=None, log=())
    assert not [f for f in first_report(clean)["findings"] if f["metric"] and f["metric"]["id"] == "dropped_records"]


def test_an_xplane_whose_profiler_warned_of_dropped_gpu_events_says_so(tmp_path):
    """By construction: a JAX capture whose ``XSpace.warnings`` holds XLA's GPU tracer's own warning
    (``cupti_collector.cc``: "Detected GPU events dropped on <host>: ... N events dropped because <reason>."): the
    count and reason are said.  On main the warning was read but never said."""
    sc = jaxcapture.jax_healthy_bf16()
    sc.space.warnings.append("Detected GPU events dropped on localhost: Profiler has collected 1048576 driver events "
                             "and 1048576 device events. 5120 events dropped because cupti activity buffer full.")
    sc.write(tmp_path)
    (f,) = [f for f in first_report(str(tmp_path))["findings"] if f["metric"] and f["metric"]["id"] == "dropped_records"]
    assert "5,120 GPU events it dropped (cupti activity buffer full)" in f["summary"]


def _program_window_export(path: str, started_by_program: bool, duration_s: int = 0) -> None:
    """The lost tail under a window the session's own settings record as Nsight 2025.6 writes them for any window:
    ``START_TRIGGER`` Immediate, ``STOP_TRIGGER`` Delayed and ``RUN_DURATION_MS`` the session's length as it ran (or,
    with ``duration_s``, the --duration that stopped it); with ``started_by_program`` Nsight's diagnostic that the
    program's cudaProfilerStart opened it."""
    said = ("Profiling started due to cudaProfilerStart API invoked in the application.",) if started_by_program else ()
    _stopped_export(path, said + (_DROPPED_80,), duration_s)


def test_a_window_the_program_opened_itself_is_not_read_as_a_duration(tmp_path):
    """YiconRain/profiling's SGLang exports (h37-survey72; no licence, not kept) were recorded with
    ``--capture-range=cudaProfilerApi --capture-range-end=stop`` and no ``--duration``, yet their settings read
    ``STOP_TRIGGER`` Delayed, ``RUN_DURATION_MS`` 95 for a 94.3 ms session: Nsight writes the length the session ran.
    By construction, the same settings with Nsight's diagnostic that cudaProfilerStart opened the window: the cause is
    the program's own stop, with the fix that finishes the work before it.  On main: "the capture stopped on its
    --duration of 0.1 s while the program still ran" and the --cuda-flush-interval fix that keeps a duration."""
    path = str(tmp_path / "run.sqlite")
    _program_window_export(path, started_by_program=True)
    (f,) = _lost(first_report(path))
    assert "--duration of" not in f["summary"]
    assert "the program opened and closed the window itself (cudaProfilerStart" in f["summary"]
    first = f["actions"][0]
    assert "right before cudaProfilerStop" in first["text"] and "--duration" not in (first["snippet"] or "")


def test_control_the_same_settings_without_the_programs_start_still_read_as_its_duration(tmp_path):
    """Control: the same export without the diagnostic, stopped by a 1 s --duration (``RUN_DURATION_MS`` 1000, the
    session just past it), keeps h37-lost3's reading of a session stopped by its length."""
    path = str(tmp_path / "run.sqlite")
    _program_window_export(path, started_by_program=False, duration_s=1)
    (f,) = _lost(first_report(path))
    assert "the capture stopped on its --duration of" in f["summary"]


_DROPPED_80 = ("Number of incomplete CUPTI events dropped: 80. Incomplete events appear when GPU timestamp information "
               "have not been retrieved at the time the profiling session was stopped.")


def _stopped_export(path: str, order: tuple[str, ...], duration_s: int = 0) -> None:
    """The lost tail with Nsight's diagnostics in ``order`` and ``RUN_DURATION_MS`` the session's length rounded up to
    the ms, as Nsight writes it for a session no --duration stopped; with ``duration_s`` a session that ran past its
    ``--duration=duration_s`` (``RUN_DURATION_MS`` the duration asked; the lost stretch from its repeat 20 on)."""
    nx.write_lost_kernel_records(path, options={"START_TRIGGER": "Immediate", "STOP_TRIGGER": "Delayed",
                                                "CUDA_FLUSH_PERIOD": "0", "CUDA_FLUSH_ON_CUDA_PROFILER_STOP": "false"},
                                 diagnostics=order, iterations=200 if duration_s else 40, duration_s=duration_s)
    if duration_s:
        return
    con = sqlite3.connect(path)
    (ns,) = con.execute("SELECT duration FROM ANALYSIS_DETAILS").fetchone()
    con.execute("INSERT INTO META_DATA_CAPTURE VALUES ('RUN_DURATION_MS', ?)", (str(-(-ns // 1_000_000)),))
    con.commit()
    con.close()


def test_a_program_that_ended_before_the_session_stopped_was_not_stopped_by_a_duration(tmp_path):
    """``RUN_DURATION_MS`` is the length the session ran (one ms over it in every export kept here), so a session
    "lasting its duration" proves nothing; the program still ran at a --duration's stop only where its CUDA trace
    closed after the session stopped.  By construction: the CUPTI counts written before "Profiling has stopped." (the
    program gone first, as nvllm's export: counts at 3,543 ms, stop at 3,798 ms): no --duration cause.  On main: "the
    capture stopped on its --duration of ... while the program still ran"."""
    path = str(tmp_path / "run.sqlite")
    _stopped_export(path, (_DROPPED_80, "Profiling has stopped."))
    (f,) = _lost(first_report(path))
    assert "--duration of" not in f["summary"]


def test_control_a_session_stopped_while_the_program_ran_keeps_its_duration(tmp_path):
    """Control: the counts written after the stop of a session that ran past its 1 s --duration
    (``llm_startup_window``: a 10 s --duration, counts at 10,572 ms, stop at 10,005 ms): the duration's cause stays."""
    path = str(tmp_path / "run.sqlite")
    _stopped_export(path, ("Profiling has stopped.", _DROPPED_80), duration_s=1)
    (f,) = _lost(first_report(path))
    assert "the capture stopped on its --duration of 1.0 s" in f["summary"]


def test_a_session_that_ran_its_own_length_had_no_duration(tmp_path):
    """Nsight writes ``RUN_DURATION_MS`` for every session: the length it ran, rounded up to the ms, where no
    --duration was asked (16 exports read, h37-nsys59: 838 for 837.0 ms, 6036 for 6,035.4 ms ...), the duration asked
    in whole seconds, outlasted by the stop, where one was (``llm_startup_window``: 10000 for 10,005.4 ms).  By
    construction: the program still running at the stop (its counts after it) in a session whose value is its own
    length: no --duration cause.  On main: "the capture stopped on its --duration of 0.6 s while the program still
    ran"."""
    path = str(tmp_path / "run.sqlite")
    _stopped_export(path, ("Profiling has stopped.", _DROPPED_80))
    (f,) = _lost(first_report(path))
    assert "--duration of" not in f["summary"] and "while the program still ran" not in f["summary"]
    assert "a duration that ended the session first" in f["summary"]  # the general causes stand


def test_real_exports_say_a_duration_only_where_one_stopped_the_session():
    """Real: cestwc/balinski-and-gomory-cuda ``report6`` (``unclosed_rtx3090_solver``; ``nsys profile build/test1
    100``, no --duration) writes ``RUN_DURATION_MS`` 6036 for its 6,035.4 ms session; on main the reader's cause read
    "the capture stopped on its --duration of 6.0 s".  Control: ``llm_startup_window`` (``--duration=10``: 10000 for
    10,005.4 ms, the program loading a model at the stop) keeps it."""
    wild = FIXTURES / "wild"
    solver = nsys_reader.read_trace(str(wild / "unclosed_rtx3090_solver" / "report6.sqlite")).producer
    assert "--duration" not in solver.get("records_cause", "")
    startup = nsys_reader.read_trace(str(wild / "llm_startup_window" / "profile.sqlite")).producer
    assert "the capture stopped on its --duration of 10.0 s" in startup["records_cause"]


def test_a_helper_process_that_ended_early_does_not_end_the_program(tmp_path):
    """Nsight writes each traced process's CUPTI counts as that process's CUDA trace closes: the program ended before
    the session stopped only where every traced process's trace closed before the stop -- a short-lived helper
    (a compile worker, a device probe) closing early says nothing of the program.  By construction: the
    ``llm_startup_window`` order (the program's counts after the 10 s stop) plus a second process whose counts come
    early in the window.  On main (h37-survey72 read the earliest close of any process): the --duration cause was
    dropped, the lost records left with no cause."""
    path = str(tmp_path / "run.sqlite")
    _stopped_export(path, ("Profiling has stopped.", _DROPPED_80), duration_s=1)
    con = sqlite3.connect(path)
    (first,) = con.execute("SELECT min(timestamp) FROM DIAGNOSTIC_EVENT").fetchone()
    con.execute("INSERT INTO DIAGNOSTIC_EVENT VALUES (?, 1, 1, 1, ?, ?)",
                (first - 1_000_000, "Number of CUPTI events produced: \t12, CUPTI buffers: 1 of 50.", 424242))
    con.commit()
    con.close()
    (f,) = _lost(first_report(path))
    assert "the capture stopped on its --duration of" in f["summary"]


def test_a_thread_whose_every_launch_was_lost_polls_as_its_sync_twin(tmp_path):
    """By construction: the poll form above, and a second thread that launches one 500-us kernel in each repeat of the
    lost stretch and polls for it -- a line with no recorded launch.  Its polls were not read (``job.waits.polls``
    asked only lines with a recorded launch), so its last lost launch had no wait after it (BASE: 49 of the 170);
    now the same 50 of 170 as the sync twin's, 10 of them the side thread's."""
    counts = {}
    for poll in ("", "cudaStreamQuery"):
        path = str(tmp_path / f"run{poll}.sqlite")
        truth = nx.write_lost_kernel_records(path, lost_from=15, lost_until=25, streams=2, ranges=True, poll=poll,
                                             side_us=500.0)
        (f,) = _lost(first_report(path))
        counts[poll] = f["summary"].split(" kernel launches")[0]
    assert (truth["lost"], truth["launches"]) == (50, 170)
    assert counts[""] == counts["cudaStreamQuery"] == "50 of the 170"


def test_a_kineto_thread_whose_every_launch_was_lost_polls_as_its_sync_twin(tmp_path):
    """Control, Kineto's form of the above (h37-probe50c; h37-probe47e *Left* 2): 12 ProfilerSteps whose kernel
    records stop at step 6, and a second thread that launches one 500-us kernel in each step of the lost stretch and
    waits for it -- each step's wait ``.item()`` or a ``cudaStreamQuery`` poll.  Both read 42 of the 78 (6 of them the
    side thread's), as on BASE: ``job.waits._launching_lines`` already asks every line with a launch call (asked only
    of lines with a recorded launch, the poll form reads 41)."""
    counts = {}
    for poll in ("", "cudaStreamQuery"):
        # each in a folder of its own: the two are written with one pid on one clock, which the layout now reads as
        # one process's window in two files (h37-meta58)
        (tmp_path / (poll or "item")).mkdir()
        path = str(tmp_path / (poll or "item") / "rank0.pt.trace.json")
        truth = tt.write_lost_gpu_records(path, poll=poll, side_us=500.0)
        (f,) = _lost(first_report(path))
        counts[poll] = f["summary"].split(" kernel launches")[0]
    assert (truth["lost"], truth["launches"]) == (42, 78)
    assert counts[""] == counts["cudaStreamQuery"] == "42 of the 78"
