"""Every window is a report (issue #37): a capture whose window holds CUDA calls, NVTX ranges or nothing of CUDA's,
but no kernel, is reported for what it holds -- never a host error, never "turn CUDA tracing on" when the export
shows it was on -- and its exit code follows the one rule for every format: a damaged file (launches whose GPU
records are gone) exits 2, a readable window without GPU work is a report whose warning exits 0 (1 under
``--fail-on warning``).

Real exports: ``tests/fixtures/nsys_windows`` (SOURCE.md); truth by construction: ``synthetic.nsysexport.write_window``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import nsysexport as nx
from synthetic import torchtrace as tt
from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import REPO

WINDOWS = os.path.join(REPO, "tests", "fixtures", "nsys_windows")


def _host(path: str) -> dict:
    """The report's host block of one export, with the report's findings in it."""
    hosts = [SimpleNamespace(host="h0", path=path, format="nsys", size=os.path.getsize(path))]
    rep = analyze_session("w", "s", hosts).to_dict()
    (host,) = rep["hosts"]
    assert host["error"] is None, host["error"]
    return {**host, "findings": rep["findings"]}


def _window_finding(host: dict) -> dict:
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality"]
    return f


def _text(f: dict) -> str:
    return " ".join([f["title"], f["summary"]] + [a["text"] + " " + (a["snippet"] or "") for a in f["actions"]])


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def test_a_real_window_that_ended_in_start_up_is_a_report_of_what_it_holds():
    """A CUDA C++ U-Net's 0.88 s window (``--duration``): context creation in ``cudaFree`` (118.6 ms), 16 streams,
    ``cudaMalloc``, one memset -- no kernel.  On main: "no GPU activity captured ... profile with CUDA tracing on",
    exit 2, though its runtime table shows tracing was on."""
    host = _host(os.path.join(WINDOWS, "startup_climate_unet.sqlite"))
    job = host["job"]
    assert job["kind"] == "no_gpu" and job["kind_evidence"].startswith("start-up only: 23 CUDA calls")
    assert "`cudaFree` ×1 (118.6 ms: the CUDA context's creation" in job["kind_evidence"]
    assert "`cudaStreamCreateWithFlags` ×16" in job["kind_evidence"] and "4,608 bytes" in job["kind_evidence"]
    f = _window_finding(host)
    assert f["severity"] == "warning" and "during start-up" in f["title"]
    text = _text(f)
    assert "--capture-range=cudaProfilerApi" in text and "--capture-range=nvtx --nvtx-capture=" in text
    assert "--delay=" in text and "--duration=" in text
    assert "tracing on" not in text.replace("Turn CUDA tracing on", "") and "tracing was off" not in text
    assert [x["rule"] for x in host["findings"]] == ["capture_quality"]  # no "too few steps" on a window of no steps


def test_a_real_window_before_the_first_cuda_call_says_tracing_was_on_and_why_it_held_none():
    """A Python program's 0.37 s window with CUDA tracing on (``META_DATA_CAPTURE``) but no CUDA runtime table at
    all: the program had not reached its GPU work -- not "tracing off" -- because it died importing its own C
    extension: its standard error, kept in the export, ends in ``ImportError: dynamic module does not define module
    export function (PyInit_basic)`` (read off the file with sqlite3).  Before h37-survey-nsys: "The capture window
    holds no CUDA call", with the advice to move the window."""
    host = _host(os.path.join(WINDOWS, "no_cuda_call_python_c.sqlite"))
    assert host["job"]["kind"] == "no_gpu"
    f = _window_finding(host)
    assert "stopped with an error" in f["title"] and "CUDA tracing was on" in f["summary"]
    assert '"ImportError: dynamic module does not define module export function (PyInit_basic)"' in f["summary"]
    assert "tracing was off" not in _text(f) and "--capture-range=cudaProfilerApi" in _text(f)


def test_a_real_capture_with_cuda_tracing_off_is_told_to_turn_it_on():
    """A Julia program on 4 x A100 profiled for 2.2 s with ``COLLECT_CUDA_TRACE`` false: the one case whose fix is
    "turn CUDA tracing on", because the export's own options say it was off."""
    host = _host(os.path.join(WINDOWS, "tracing_off_julia.sqlite"))
    f = _window_finding(host)
    assert host["job"]["kind"] == "no_gpu" and f["title"].startswith("CUDA tracing was off")
    assert "Turn CUDA tracing on" in _text(f) and "--capture-range" not in _text(f)


def test_a_real_nvtx_only_export_is_named_so_with_the_cuda_trace_fix():
    """A CenterFormer detector's 8.6 s export with 649 NVTX ranges (`reader`, `3D_backbone`, `find_centers` ... ×72)
    and no CUDA table at all, from an Nsight that did not record its options: NVTX only, told to record the CUDA API
    beside the ranges (-t cuda,nvtx) -- never that tracing "was off" as a fact the export does not state."""
    host = _host(os.path.join(WINDOWS, "nvtx_only_centerformer.sqlite"))
    evidence = host["job"]["kind_evidence"]
    assert host["job"]["kind"] == "no_gpu" and evidence.startswith("NVTX ranges only (649 ranges: `find_centers`")
    f = _window_finding(host)
    assert "only NVTX ranges" in f["title"] and "-t cuda,nvtx" in _text(f)
    assert "tracing was off" not in _text(f)


@pytest.mark.parametrize("window", nx.WINDOWS)
def test_generated_windows_are_read_as_what_they_hold(tmp_path, window):
    """Truth by construction: each window of ``write_window`` is named as written, with its own fix; only the one
    whose capture options say CUDA tracing was off is told to turn it on."""
    p = tmp_path / f"{window}.sqlite"
    truth = nx.write_window(str(p), window)
    host = _host(str(p))
    f = _window_finding(host)
    text = _text(f)
    evidence = host["job"]["kind_evidence"]
    if window == "startup":
        assert f"{truth['cuda_calls']} CUDA calls" in evidence
        assert f"`cudaFree` ×1 ({truth['context_ms']:.1f} ms: the CUDA context's creation" in evidence, evidence
        assert f"{truth['memset_bytes']:,} bytes" in evidence
    if window == "nvtx_only":
        assert f"{truth['nvtx_ranges']} ranges" in evidence and "CUDA tracing on" in evidence
    assert ("Turn CUDA tracing on" in text) == (window == "tracing_off")
    assert ("--capture-range=cudaProfilerApi" in text) == (window != "tracing_off")
    assert f["severity"] == "warning" and host["damage"] == []


def _kineto(tmp: str, run: str, drop: tuple[str, ...]) -> str:
    """A generated PyTorch trace with the events named in ``drop`` (categories, or launch calls) taken out."""
    (path,) = tt.write_run(tmp, "healthy_bf16", steps=6, run=run)
    with open(path) as f:
        doc = json.load(f)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") not in drop and e.get("name") not in drop]
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def test_exit_codes_follow_one_rule_for_every_format(tmp_path):
    """One rule in Kineto and Nsight alike: a readable capture is a report, whatever its window holds -- no GPU work,
    or launches whose GPU records the profiler lost -- exit 0, or 1 under ``--fail-on warning``, its first finding
    saying what the capture lacks; only a file that cannot be read whole (cut off mid-write) exits 2.  Lost records
    were exit 2 ("damaged") while a job whose CUDA activity was not recorded at all was a report: the same kind of
    problem, a profiler's setting or its buffers, with two codes."""
    gpu = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")
    lost_kineto = _kineto(str(tmp_path), "lost", gpu)
    window_kineto = _kineto(str(tmp_path), "window", gpu + ("cudaLaunchKernel", "cuda_runtime", "cuda_driver"))
    lost_nsys = tmp_path / "lost.sqlite"
    nx.write(str(lost_nsys), nx.NsysJob(steps=4, kernels_table=False))
    window_nsys = tmp_path / "startup.sqlite"
    nx.write_window(str(window_nsys), "startup")
    for lost in (lost_kineto, str(lost_nsys)):
        code, out, err = _run(["report", lost, "--format", "json", "--cache-dir", "off"])
        assert code == 0 and "could not be analysed" not in err and "damaged" not in err, (lost, err)
        rep = json.loads(out)
        assert rep["healthy"] is False
        first = next(f for f in rep["reports"][0]["findings"] if f["severity"] in ("warning", "critical"))
        assert first["rule"] == "capture_quality" and first["title"] == "The capture lost its GPU records", first
        assert "launched" in first["summary"], first["summary"]
        assert _run(["report", lost, "--fail-on", "warning", "--cache-dir", "off"])[0] == 1, lost
    for window in (window_kineto, str(window_nsys)):
        code, out, err = _run(["report", window, "--format", "json", "--cache-dir", "off"])
        assert code == 0 and "could not be analysed" not in err, (window, err)
        assert json.loads(out)["healthy"] is False
        code, _, _ = _run(["report", window, "--fail-on", "warning", "--cache-dir", "off"])
        assert code == 1, window
    cut = tmp_path / "cut.pt.trace.json"
    whole = Path(lost_kineto).read_bytes()
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    code, _, err = _run(["report", str(cut), "--format", "json", "--cache-dir", "off"])
    assert code == 2 and "damaged" in err, err


def test_a_torch_profiler_window_without_gpu_work_gets_the_schedule_fix(tmp_path):
    """The same rule in the Kineto format: a PyTorch window with no launch and no GPU record is told to use
    torch.profiler's schedule (its own profiler), never an Nsight flag."""
    path = _kineto(str(tmp_path), "torch_window", ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation",
                                                  "cudaLaunchKernel"))
    hosts = [SimpleNamespace(host="h0", path=path, format="kineto", size=0)]
    rep = analyze_session("torch_window", "s", hosts).to_dict()
    (host,) = rep["hosts"]
    assert host["error"] is None and not host["damage"]
    text = _text(_window_finding({"findings": rep["findings"]}))
    assert "schedule(wait=" in text and "nsys" not in text


def test_an_export_that_recorded_nothing_and_says_nothing_is_an_input_error(tmp_path):
    """The other side of the rule, as for an XPlane file with no event: an export with no event in any table and no
    capture options (what it was asked to record) holds nothing to report -- exit 2, "no events in the capture
    window".  The same window with its options kept is a report (CUDA tracing on, no CUDA call)."""
    import sqlite3

    told = tmp_path / "told.sqlite"
    nx.write_window(str(told), "no_cuda_call")
    silent = tmp_path / "silent.sqlite"
    nx.write_window(str(silent), "no_cuda_call")
    with sqlite3.connect(str(silent)) as con:
        con.execute("DELETE FROM META_DATA_CAPTURE")
    code, _, err = _run(["report", str(told), "--cache-dir", "off"])
    assert code == 0, err
    code, _, err = _run(["report", str(silent), "--cache-dir", "off"])
    assert code == 2 and "no events in the capture window" in err


def test_a_real_trace_of_hardware_counters_is_no_damage_and_says_how_to_time_the_steps():
    """HTA's CUPTI range-profiler trace (tests/fixtures/wild/SOURCE.md): 77 kernels recorded as ``cuda_profiler_range``
    counter events, no kernel record.  Main called it damaged ("GPU records lost", exit 2): the kernels were measured,
    not lost."""
    folder = os.path.join(REPO, "tests", "fixtures", "wild", "cupti_counters_a100")
    (name,) = [n for n in os.listdir(folder) if n.endswith(".pt.trace.json.gz")]
    hosts = [SimpleNamespace(host="h0", path=os.path.join(folder, name), format="kineto",
                             size=os.path.getsize(os.path.join(folder, name)))]
    rep = analyze_session("w", "s", hosts).to_dict()
    (host,) = rep["hosts"]
    assert host["error"] is None and host["damage"] == []
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    assert "hardware counters" in f["title"] and "77 kernels" in f["summary"]
    assert any("profiler_metrics" in a["text"] for a in f["actions"])
    err, out = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(["report", folder, "--cache-dir", "off"])
    assert code == 0, err.getvalue()


#: Nsight keeps the profiled program's standard output and error in ``ProcessStreams`` (read off real exports:
#: ``globalPid``, ``filenameId`` and ``contentId`` into ``StringIds``, the file named ``.../pid_<pid>_stderr.log``).
_STREAMS_DDL = "CREATE TABLE ProcessStreams (globalPid INTEGER NOT NULL, filenameId INTEGER NOT NULL, contentId INTEGER NOT NULL)"
_NUMBA_DIED = ('Loading the molecule\nTraceback (most recent call last):\n  File "vqe.py", line 12, in <module>\n'
               '    import ipie\n  File "/usr/lib/python3.10/ipie/__init__.py", line 3, in <module>\n    nvvm.NVVM()\n'
               'numba.cuda.cudadrv.error.NvvmSupportError: libNVVM cannot be found.\n'
               'libnvvm.so: cannot open shared object file: No such file or directory\n')
_NVRTC_WARNINGS = ("cuda_llm: compiling kernels for sm_120 via NVRTC...\nllm_kernels.cu(198): warning #177-D: variable "
                   "\"lane\" was declared but never referenced\n      int warp_id = tid / 32, lane = tid % 32;\n")


def _with_stderr(path: str, text: str) -> str:
    """A start-up window (``write_window``) whose program wrote ``text`` to its standard error."""
    import sqlite3

    nx.write_window(path, "startup")
    con = sqlite3.connect(path)
    con.execute(_STREAMS_DDL)
    top = con.execute("SELECT max(id) FROM StringIds").fetchone()[0]
    con.executemany("INSERT INTO StringIds VALUES (?, ?)",
                    [(top + 1, "/tmp/nvidia/nsight_systems/streams/pid_4242_stderr.log"), (top + 2, text)])
    con.execute("INSERT INTO ProcessStreams VALUES (?, ?, ?)", (1 << 48 | 4242 << 24, top + 1, top + 2))
    con.commit()
    con.close()
    return path


def test_a_program_that_died_before_its_gpu_work_is_its_failure_not_a_window_put_wrong(tmp_path):
    """A Python program that died importing its GPU library (a real cuda-quantum/ipie capture read in the
    h37-survey-nsys survey: numba's ``NvvmSupportError``, 11 CUDA calls of start-up in a 5 s window).  Main called it
    "the window ended during start-up" and told the user to move the window."""
    host = _host(_with_stderr(str(tmp_path / "died.sqlite"), _NUMBA_DIED))
    job = host["job"]
    assert job["kind"] == "no_gpu" and job["kind_evidence"].startswith("the program stopped with an error")
    quoted = ("numba.cuda.cudadrv.error.NvvmSupportError: libNVVM cannot be found. libnvvm.so: cannot open shared "
              "object file: No such file or directory")
    assert f'"{quoted}"' in job["kind_evidence"] and "CUDA calls" in job["kind_evidence"]
    f = _window_finding(host)
    assert f["severity"] == "warning" and "stopped with an error" in f["title"]
    assert "wrong window" not in f["summary"] and "fix it" in _text(f)
    code, _, _ = _run(["report", str(tmp_path / "died.sqlite"), "--format", "json"])
    assert code == 0  # a readable window without GPU work, as every other


def test_warnings_on_stderr_are_no_failure(tmp_path):
    """A program still compiling its kernels when a ``--duration`` window ran out writes warnings, not an error: its
    window ended during start-up.  Also the real one it is modelled on (``wild/llm_startup_window``)."""
    host = _host(_with_stderr(str(tmp_path / "warned.sqlite"), _NVRTC_WARNINGS))
    assert host["job"]["kind_evidence"].startswith("start-up only") and "during start-up" in _window_finding(host)["title"]
    real = _host(os.path.join(REPO, "tests", "fixtures", "wild", "llm_startup_window", "profile.sqlite"))
    assert real["job"]["kind_evidence"].startswith("start-up only: 3 CUDA calls")
    assert "during start-up" in _window_finding(real)["title"]


@pytest.mark.parametrize("name", ["startup_climate_unet", "no_cuda_call_python_c", "tracing_off_julia"])
def test_a_window_without_gpu_work_says_no_step_once_not_also_one_step(tmp_path, name):
    """The title says "no step: the window holds no GPU work"; the job line and the steps' note said besides "the whole
    capture is analysed as one step" -- one quantity, two values on one screen."""
    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    shutil.copy(os.path.join(WINDOWS, f"{name}.sqlite"), run / "r.sqlite")
    code, out, _ = _run(["report", str(tmp_path / "logs")])
    # a window whose GPU side went unrecorded (CUDA tracing off) says that, not that it holds no GPU work (h37-tidy29)
    said = "the capture did not record the GPU's work" if name == "tracing_off_julia" else "the window holds no GPU work"
    assert code == 0 and f"no step: {said}" in out, out[:300]
    assert "as one step" not in out and "as one pass" not in out and "Steps on" not in out, out


def test_a_start_up_calls_time_is_said_as_every_time_is():
    """The start-up calls' times had their own format, one decimal of ms: the real ``wild/llm_startup_window`` read
    "`cuInit` ×1 (0.0 ms)" -- a call that took time said as none -- and a 1.15 s copy read "(1150.7 ms)" (h37-randjobs4).
    Now ``common.fmt.ms``, as every time of the report; the climate U-Net's context creation reads as before."""
    real = _host(os.path.join(REPO, "tests", "fixtures", "wild", "llm_startup_window", "profile.sqlite"))
    said = real["job"]["kind_evidence"]
    assert "(0.0 ms)" not in said and "`cuInit` ×1 (" in said, said  # main: "(0.0 ms)"
    unet = _host(os.path.join(WINDOWS, "startup_climate_unet.sqlite"))
    assert "`cudaFree` ×1 (118.6 ms: the CUDA context's creation" in unet["job"]["kind_evidence"]  # the control
