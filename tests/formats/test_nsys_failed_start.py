"""An Nsight export of a program that died at start-up: no event, but the program's own standard error, which the
export keeps (``ProcessStreams``), says why.  Such a window is a report of that failure -- the same kind of window,
with the same exit code, as a program that died after a few start-up CUDA calls (issue #37: one rule for the exit
codes) -- and its finding quotes the error instead of guessing at the window.  An export without events whose
program shows no failure is still an error that asks about the window.

The real file is amir-ghz/DynamicViT's ``nsys_profile.sqlite`` (``tests/fixtures/nsys_windows/SOURCE.md``): Python
failed to load Nsight's injection library (``symbol lookup error ... libToolsInjectionProxy64.so: undefined symbol:
__libc_dlclose``), read off the file with sqlite3 before the Advisor ran.  The copies in ``tmp_path`` carry a planted
message, or none, so what the error quotes is known by construction."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.formats.nsys.tables import NsysReadError
from tests.support.cli_report import ran_report
from tests.support.paths import FIXTURES

FAILED = FIXTURES / "nsys_windows" / "failed_start_dynamicvit.sqlite"


def _report(path, ok: tuple[int, ...] = (0, 1)) -> dict:
    """The session report of ``report PATH --format json`` and its exit code (one of ``ok``), run in this process
    (``ran_report``): these tests started a fresh interpreter for each (~2 s of CPU in imports alone) for the same
    exit code and JSON; the one-file inputs make one session each."""
    code, report = ran_report(path)
    assert code in ok, code
    return report


def _stderr_ids(path):
    con = sqlite3.connect(path)
    try:
        return con.execute("SELECT p.contentId FROM ProcessStreams p JOIN StringIds f ON f.id = p.filenameId "
                           "WHERE f.value LIKE '%stderr%'").fetchall()
    finally:
        con.close()


def test_a_program_that_died_at_start_up_is_named_by_its_own_error():
    trace = reader.read_trace(str(FAILED))
    error = trace.producer["program_error"]
    assert "symbol lookup error" in error and "libToolsInjectionProxy64.so" in error
    assert trace.num_events == 0 and len(trace.h.start) == 0  # nothing else recorded: the failure is the window's content


def test_its_report_leads_with_the_failure_and_exits_as_any_window_without_gpu_work(tmp_path):
    """Exit 0 and a capture_quality finding quoting the error, as for a program that died after start-up calls
    (was exit 2, "the export holds no event", while that one exited 0)."""
    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    shutil.copy(FAILED, run / "report.sqlite")
    report = _report(tmp_path / "logs", ok=(0,))
    top = report["findings"][0]
    assert top["rule"] == "capture_quality" and "libToolsInjectionProxy64.so" in top["summary"]


def _with_stderr(tmp_path, text):
    p = tmp_path / "copy.sqlite"
    shutil.copy(FAILED, p)
    (cid,), = _stderr_ids(p)
    con = sqlite3.connect(p)
    con.execute("UPDATE StringIds SET value = ? WHERE id = ?", (text, cid))
    con.commit()
    con.close()
    return p


def test_the_last_line_of_the_planted_error_is_quoted(tmp_path):
    p = _with_stderr(tmp_path, "loading model\nTraceback (most recent call last):\n  ...\n"
                               "RuntimeError: CUDA error: no kernel image is available\n\n")
    assert "RuntimeError: CUDA error: no kernel image is available" in reader.read_trace(str(p)).producer[
        "program_error"]


def test_words_that_are_no_failure_leave_the_window_in_question_and_are_quoted(tmp_path):
    p = _with_stderr(tmp_path, "loading model\nwarming up\n")
    with pytest.raises(NsysReadError, match=r'stopped before it ran any work.*"warming up"'):
        reader.read_trace(str(p))


def test_without_an_error_the_window_is_still_asked_about(tmp_path):
    p = _with_stderr(tmp_path, "   \n")
    with pytest.raises(NsysReadError) as e:
        reader.read_trace(str(p))
    assert str(e.value) == reader.NOTHING_RECORDED


#: The standard error that Meghakoranga/cupqc-openssl-core's ``report1.sqlite`` (@ e0e16b85, read locally only: the
#: repository has no licence) keeps for ``./benchmark_pqc``: a C program's own error report, its last words before it
#: exited 0.18 s after launch, with CUDA tracing on and no CUDA call recorded (read by h37-survey4b with sqlite3).
CUPQC_STDERR = "Error: Keygen failed. Is the algorithm name correct?\n"
NO_CUDA_CALL = FIXTURES / "nsys_windows" / "no_cuda_call_python_c.sqlite"


def _planted(tmp_path, source, text):
    """A copy of the real export ``source`` whose kept standard error is ``text``."""
    p = tmp_path / "planted.sqlite"
    shutil.copy(source, p)
    con = sqlite3.connect(p)
    (cid,), = con.execute("SELECT p.contentId FROM ProcessStreams p JOIN StringIds f ON f.id = p.filenameId "
                          "WHERE f.value LIKE '%stderr%'").fetchall()
    con.execute("UPDATE StringIds SET value = ? WHERE id = ?", (text, cid))
    con.commit()
    con.close()
    return p


def test_a_programs_own_error_report_as_its_last_words_is_its_failure(tmp_path):
    """A window with CUDA tracing on and no CUDA call whose program's last words are its own ``Error: ...`` report is
    that program's failure (window ``failed``), not a window put before the GPU work (was ``no_cuda_call``: "start the
    window where the GPU work runs", while the window held the program's whole 0.18 s life)."""
    planted = _planted(tmp_path, NO_CUDA_CALL, CUPQC_STDERR)
    assert reader.read_trace(str(planted)).producer["program_error"] == CUPQC_STDERR.strip()
    report = _report(str(planted), ok=(0,))
    top = report["findings"][0]
    assert top["rule"] == "capture_quality" and "stopped with an error" in top["title"]
    assert "Keygen failed" in top["summary"] and "had not reached its GPU work" not in top["summary"]


@pytest.mark.parametrize("text", [
    "Error: could not open device, retrying\nretry 1 ok\nstep 1 done\n",  # it went on after the error: no failure
    "Warning: TF32 disabled\n",  # a warning is no failure
    "loading the error model: done\n",  # the word alone is no report
    "fopen: No such file or directory\nusing defaults\nstep 1 done\n",  # it went on after the failed call
])
def test_an_error_line_that_is_not_the_last_words_or_no_report_is_no_failure(text):
    from tb_gpu_advisor.formats.base import program_failure
    assert program_failure(text) == ""


@pytest.mark.parametrize("text", ["ERROR: no CUDA-capable device is detected\n",
                                  "./bench: error: unknown option --algo\n", "fatal error: out of memory\n",
                                  # caoye310/Lower-Triangular-Solves `nsys_report/report1.sqlite` @ bd207a83 (read
                                  # locally only, no licence): `./run_sparse`'s whole stderr, CUDA tracing on, no call
                                  "fopen: No such file or directory\n",
                                  # IhorAtlanov/assignment2-systems `result.sqlite` @ 2ee279bf (read locally only, no
                                  # licence): the interpreter could not open the script it was given, under WSL2
                                  "/repo/.venv/bin/python: can't open file '/repo/benchmark.py': [Errno 2] No such "
                                  "file or directory\n"])
def test_the_usual_forms_of_an_error_report_are_read(text):
    from tb_gpu_advisor.formats.base import program_failure
    assert program_failure(text) == text.strip()


#: PPCU-ITK/parallel-prog-2026-lab-7-barlaya ``report1.sqlite`` @e6dcd383 (read locally only, no licence): an OpenACC
#: Jacobi solver built with NVHPC 26.1 for ``-gpu=cc80`` run on a Quadro RTX 6000 (7.5), Nsight 2025.6.1 with CUDA
#: tracing off (``PROCESS_0:COLLECT_CUDA_TRACE`` false); its whole stderr: the accelerator runtime's fatal report,
#: then the file, function and line it names -- the program stopped before any GPU work.
NVHPC_STDERR = ("Accelerator Fatal Error: Failed to find device function 'nvkernel_main_F1L65_2'! File was compiled "
                "with: -gpu=cc80\nRebuild this file with -gpu=cc75 to use NVIDIA Tesla GPU 0\n File: "
                "/project/laplace2d.cpp\n Function: main:10\n Line: 62\n\n")
TRACING_OFF = FIXTURES / "nsys_windows" / "tracing_off_julia.sqlite"


def test_a_runtimes_fatal_report_before_its_context_lines_is_the_failure(tmp_path):
    """A GPU runtime's fatal report (NVHPC's ``Accelerator Fatal Error: ...``, then the file, function and line it
    names) is the program's failure though it is not its last line; with CUDA tracing off the failure still leads:
    turning tracing on would record no kernel of a program that cannot load its kernels (main: "CUDA tracing was off"
    alone).  Compilers' lower-case ``fatal error:`` lines that a program went on after stay no failure (above)."""
    from tb_gpu_advisor.formats.base import program_failure
    assert program_failure(NVHPC_STDERR).startswith("Accelerator Fatal Error: Failed to find device function")
    assert program_failure("cc1plus: fatal error: cuda.h: No such file or directory\ncompiled the fallback\n") == ""
    planted = _planted(tmp_path, TRACING_OFF, NVHPC_STDERR)
    report = _report(str(planted), ok=(0,))
    top = report["findings"][0]
    assert top["rule"] == "capture_quality" and "stopped with an error" in top["title"], top["title"]
    assert "-gpu=cc80" in top["summary"]


#: PolPuigPuy/OpenACC_Project_PolPuig ``report2.sqlite`` @5ba5b87c (read locally only, no licence): an OpenACC neural net
#: (NVHPC, a cc 8.6 GPU) that ran 1,935 kernels and 1,943 copies of its set-up, then died in its first training step;
#: its stderr ends in the runtime's present-table dump and this report.
OPENACC_STDERR = ("allocated block device:0x7f867bdff800 size:1024 thread:1\n"
                  "deleted block   device:0x7f86620e3000 size:512 threadid=1 \n"
                  "FATAL ERROR: data in update device clause was not found on device 1: name=(null)\n"
                  " file:/home/user/main.c train_neural_net line:116\n\n\n")
WITH_KERNELS = FIXTURES / "wild" / "cuda_reduce_baseline" / "report1.sqlite"


def _top(path):
    report = _report(path)
    return report["findings"]


def test_a_program_that_died_after_its_gpu_work_began_is_said_first(tmp_path):
    """GPU work ran, then the program died (its kept stderr ends in the runtime's fatal report): the report leads with
    that failure, critical, its words quoted -- the window holds the part before it, not the job (main: a cold start,
    launch-bound and allocator-churn warnings about the set-up of a run that crashed, the crash unsaid)."""
    findings = _top(_planted(tmp_path, WITH_KERNELS, OPENACC_STDERR))
    top = findings[0]
    assert top["rule"] == "capture_quality" and top["severity"] == "critical", (top["rule"], top["title"])
    assert "stopped with an error after its GPU work began" in top["title"]
    assert "data in update device clause was not found" in top["summary"]
    assert any(f["rule"] == "small_grid" for f in findings)  # the kernels that ran are still judged


def test_an_error_the_program_went_on_after_is_no_death(tmp_path):
    """A traceback logged mid-run, the program printing its progress after it, is not how it ended."""
    logged = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
              "ValueError: bad batch, skipped\n" + "".join(f"step {k} loss 0.5\n" for k in range(20)))
    findings = _top(_planted(tmp_path, WITH_KERNELS, logged))
    assert not any("stopped with an error" in f["title"] for f in findings)
    assert findings[0]["rule"] == "small_grid"


def _faulted(tmp_path, lose_records: bool):
    """The real CUDA reduction export with its ``cudaEventSynchronize`` returning 700 (cudaErrorIllegalAddress), as
    Jorgedavyd/cuda ``profiling/report9.sqlite`` @7af02f3c (read locally only, no licence) holds it: a wave kernel
    faulted, every call after it returned 700, and the export has no kernel or copy table at all."""
    from tests.support.sqlite_edits import run_sql
    p = tmp_path / "faulted.sqlite"
    shutil.copy(WITH_KERNELS, p)
    sql = ["UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 700 WHERE start >= (SELECT start FROM "
           "CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE "
           "'cudaEventSynchronize%')"]
    if lose_records:
        sql += ["DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL", "DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY"]
    run_sql(str(p), *sql)
    return p


def test_a_kernel_that_faulted_is_named_from_the_calls_return_codes(tmp_path):
    """The calls' return codes say a kernel faulted (a sticky CUDA error: the context is unusable, and the profiler
    could not flush the GPU's records): the report says the program failed, with the call and the error, not "the
    capture lost its GPU records ... let the GPU finish its work before the profiler stops" (main)."""
    findings = _top(_faulted(tmp_path, lose_records=True))
    top = findings[0]
    assert top["severity"] == "critical" and "failed" in top["title"], top["title"]
    assert "cudaEventSynchronize returned cudaErrorIllegalAddress (700)" in top["summary"]
    assert "the host launched 1 kernel)" in top["summary"]  # one takes the singular (main: "1 kernels")
    assert "compute-sanitizer" in top["actions"][0]["snippet"]


def test_a_fault_after_recorded_kernels_leads_the_report(tmp_path):
    findings = _top(_faulted(tmp_path, lose_records=False))
    assert findings[0]["severity"] == "critical" and "stopped with an error" in findings[0]["title"]
    assert "cudaErrorIllegalAddress" in findings[0]["summary"]


def test_a_program_that_ran_to_its_output_unrecorded_is_said_so(tmp_path):
    """An export with no event whose program wrote no error but its output (mamedov-artem-rafaelevich/parallel_course_2
    ``report2.sqlite`` @4992e305, read locally only, no licence: ``./temp1`` printed its residuals ``500 6.046895``):
    the program ran, nothing of it was traced -- not a profiler "stopped right after it started" (main's guess)."""
    from tests.support.sqlite_edits import run_sql
    p = tmp_path / "ran.sqlite"
    shutil.copy(FAILED, p)
    run_sql(str(p), "INSERT INTO StringIds (id, value) VALUES (900001, '1 0.000000\n500 6.046895\n')",
            "INSERT INTO StringIds (id, value) VALUES (900002, '')",
            "UPDATE ProcessStreams SET contentId = 900001 WHERE filenameId IN (SELECT id FROM StringIds WHERE value "
            "LIKE '%stdout%')",
            "UPDATE ProcessStreams SET contentId = 900002 WHERE filenameId IN (SELECT id FROM StringIds WHERE value "
            "LIKE '%stderr%')")
    with pytest.raises(NsysReadError) as e:
        reader.read_trace(str(p))
    assert "ran and wrote its output" in str(e.value) and "500 6.046895" in str(e.value)
    assert "stopped right after it started" not in str(e.value)


def test_an_older_export_with_only_target_tables_is_an_export_of_a_run_unrecorded(tmp_path):
    """An ``nsys nvprof`` export of 2021 (martisu1631998/kmeans-parallel ``report1.sqlite`` @1355103, read locally
    only, no licence: a sequential ``nvc`` build of k-means on a GTX 1080 Ti / RTX 2070 node) holds only
    ``StringIds``, ``TARGET_INFO_GPU``, ``ThreadNames`` and ``ProcessStreams``: no metadata table, no event table.
    It is an export of a program that ran (its output kept) with nothing traced -- main called it "not an Nsight
    Systems export" and skipped it in a run folder.  Built here from the kept export, its metadata tables dropped."""
    from tb_gpu_advisor.formats.nsys import layout
    from tests.support.sqlite_edits import run_sql
    p = tmp_path / "report1.sqlite"
    shutil.copy(FAILED, p)
    run_sql(str(p), "DROP TABLE TARGET_INFO_SESSION_START_TIME", "DROP TABLE TARGET_INFO_SYSTEM_ENV",
            "INSERT INTO StringIds (id, value) VALUES (900001, 'TEST = 1\n\nWIDTH : 3840\nLENGHT: 8294400\n\n\n')",
            "INSERT INTO StringIds (id, value) VALUES (900002, '')",
            "UPDATE ProcessStreams SET contentId = 900001 WHERE filenameId IN (SELECT id FROM StringIds WHERE value "
            "LIKE '%stdout%')",
            "UPDATE ProcessStreams SET contentId = 900002 WHERE filenameId IN (SELECT id FROM StringIds WHERE value "
            "LIKE '%stderr%')")
    assert layout.sniff(str(p)) is None
    with pytest.raises(NsysReadError) as e:
        reader.read_trace(str(p))
    assert "ran and wrote its output" in str(e.value) and "LENGHT: 8294400" in str(e.value)


def test_stringids_beside_tables_nsight_never_writes_is_no_export(tmp_path):
    """The control: ``StringIds`` beside another program's tables is still no export."""
    from tb_gpu_advisor.formats.nsys import layout
    p = tmp_path / "other.sqlite"
    con = sqlite3.connect(p)
    con.executescript("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT); CREATE TABLE trials (id INTEGER);"
                      "INSERT INTO StringIds VALUES (1, 'x');")
    con.close()
    assert "not an Nsight Systems export" in layout.sniff(str(p))


#: Ther-LF/QuantPSelInvPlus ``examples/report1.sqlite`` @ad90e017 (PEXSI's modified BSD licence; kept as
#: ``wild/mpirun_ranks_exception_a100``): ``nsys`` started ``mpirun`` (its ``PROCESSES`` table: mpirun,
#: nsys-launcher, nsys-tee, bash) on an A100 box; the OS runtime trace holds the calls of nine more processes (the
#: ranks, pids 494-502, 0.08-0.36 s) and no CUDA table, and mpirun's standard error (kept) holds each rank's own
#: report, ``Processor N caught exception with message: basic_string::_M_construct null not valid`` (the examples'
#: ``catch (std::exception&)``): every rank stopped before it touched the GPU.
MPIRUN_RANKS = FIXTURES / "wild" / "mpirun_ranks_exception_a100" / "report1.sqlite"


def test_ranks_that_reported_the_exception_that_ended_them_are_said_stopped():
    con = sqlite3.connect(MPIRUN_RANKS)
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "CUPTI_ACTIVITY_KIND_RUNTIME" not in tables and "CUPTI_ACTIVITY_KIND_KERNEL" not in tables
    ranks = con.execute("SELECT COUNT(DISTINCT globalTid / 16777216 % 16777216) FROM OSRT_API").fetchone()[0]
    assert ranks == 11  # mpirun, one helper, nine ranks: the ranks were followed, and made no CUDA call
    report = _report(MPIRUN_RANKS)
    top = report["findings"][0]
    assert "stopped with an error" in top["title"], top["title"]
    assert "caught exception with message: basic_string::_M_construct null not valid" in top["summary"]
    assert "Was the GPU visible" not in top["summary"]


@pytest.mark.parametrize("text", ["Processor 8 caught exception with message: basic_string::_M_construct null not "
                                  "valid\n", "Unhandled exception: std::bad_alloc\n"])
def test_the_report_of_the_exception_that_ended_a_program_is_its_failure(text):
    from tb_gpu_advisor.formats.base import program_failure
    assert program_failure(text) == text.strip()


@pytest.mark.parametrize("text", [
    # Python at shutdown: the exception was ignored, the program had ended as it meant to
    "Exception ignored in: <function _after_fork at 0x7f>\nTraceback (most recent call last):\n",
    "caught exception: retrying (1/3)\nstep 1 done\n",  # it went on after it
])
def test_an_exception_the_program_went_on_after_or_ignored_is_no_failure(text):
    from tb_gpu_advisor.formats.base import program_failure
    assert program_failure(text) == ""
