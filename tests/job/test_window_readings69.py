"""Every window is a report, audited format by format (issue #37 deliverable 1, h37-window69): three windows without
GPU work whose reading or code broke the one rule -- what the window holds, that tool's own capture advice, never a
setting the capture shows it already had, one exit code for one kind of problem.

* An Nsight export whose options say CUDA was traced (``META_DATA_CAPTURE``: ``COLLECT_CUDA_TRACE`` true) and whose
  window holds NVTX ranges only was told to "Record the CUDA API and the GPU's work beside the NVTX ranges
  (-t cuda,nvtx)" -- as it had.  The window is what to move, not the options.
* A ``torch.profiler`` window holding the profiler's own ``ProfilerStep#N`` marks and nothing else read "the host made
  no GPU runtime call: the work ran on the CPU ... move the model to the GPU" (exit 0), where the same window without
  the marks is "nothing recorded" (exit 2): the marks are ``prof.step()``'s, no work of the program's.
* An Nsight export holding the OS runtime's calls alone (``-t osrt``; no ``META_DATA_CAPTURE``) read "No GPU kernel or
  copy in this capture (0 GPU planes, 0 events)" -- XPlane's word, none of its calls counted -- and "was the GPU
  visible?": now what it holds, and how to trace CUDA in the processes that use the GPU.
* An NVTX-only export without capture options whose CUDA activity tables are there, empty, was said to hold "no CUDA
  table at all ... what tracing NVTX alone (-t nvtx) leaves" -- absent and present-empty tables read alike.
* A rocprofv3 CSV capture whose ``kernel_trace.csv`` is written but empty (``--kernel-trace``, no kernel launched)
  was asked "was it run without --runtime-trace / --kernel-trace?" -- the file answers it: the trace was on.
* A memory snapshot whose allocator history holds only the program's tear-down -- frees of blocks allocated before it
  began, segments given back, nothing allocated at the dump -- read "No memory check fired" with no finding: healthy,
  of a file that holds none of the job's allocations.
* A JAX window on a host with no GPU plane was told to expect "a GPU device (a GPU device (CudaDevice, RocmDevice,
  ...)(id=0), RocmDevice(id=0), ...)": the device table replaced its own replacement.

Truth by construction (``synthetic.nsysexport.write_window``, ``synthetic.torchtrace.write_run`` with every event but
the profiler's own taken out, ``synthetic.jaxcapture.write_host_only_window``); no real capture of these three is kept
(tests/fixtures/nsys_windows' NVTX-only export records no options: its control below)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from synthetic import jaxcapture as jc
from synthetic import memsnapshot as ms
from synthetic import nsysexport as nx
from synthetic import torchtrace as tt
from tests.support.cli_report import in_process
from tests.support.paths import REPO

_RETRACE = "Record the CUDA API and the GPU's work beside the NVTX ranges (-t cuda,nvtx)"


def _report(path: str | Path) -> tuple[int, dict, str]:
    """(exit code, the one report, stderr) of ``report PATH --format json``."""
    out = in_process("report", str(path), "--format", "json", "--cache-dir", "off")
    return out.returncode, (json.loads(out.stdout)["reports"][0] if out.stdout.strip() else {}), out.stderr


def _window_text(rep: dict) -> str:
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    return " ".join([f["title"], f["summary"]] + [a["text"] + " " + (a["snippet"] or "") for a in f["actions"]])


def test_an_nvtx_only_window_traced_with_cuda_is_told_to_move_the_window_not_to_trace_cuda(tmp_path):
    """Options say CUDA was traced: the fix keeps them and moves the window (base: told to record -t cuda,nvtx)."""
    p = tmp_path / "nvtx.sqlite"
    truth = nx.write_window(str(p), "nvtx_only")
    code, rep, _ = _report(p)
    assert code == 0 and rep["hosts"][0]["job"]["kind"] == "no_gpu"
    text = _window_text(rep)
    assert f"{truth['nvtx_ranges']} ranges" in text and "with CUDA tracing on" in text
    assert _RETRACE not in text, text
    assert "CUDA was traced (the capture's options say so)" in text and "--capture-range=nvtx" in text


def test_control_a_real_nvtx_only_export_that_records_no_options_is_still_told_to_trace_cuda():
    """CenterFormer's export (no ``META_DATA_CAPTURE``): whether CUDA was traced is unknown, so -t cuda,nvtx stays."""
    code, rep, _ = _report(os.path.join(REPO, "tests", "fixtures", "nsys_windows", "nvtx_only_centerformer.sqlite"))
    assert code == 0
    text = _window_text(rep)
    assert _RETRACE in text and "CUDA was traced" not in text


def _marks_only(tmp: Path, keep_marks: bool) -> str:
    """A generated torch.profiler trace with every event taken out but the profiler's own: its window span, thread
    names, and (``keep_marks``) its ``ProfilerStep#N`` marks -- a window where ``prof.step()`` ran and nothing else."""
    (path,) = tt.write_run(str(tmp), "healthy_bf16", steps=6, run="marks" if keep_marks else "empty")
    with open(path) as f:
        doc = json.load(f)
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("ph") == "M" or e.get("cat") == "Trace"
                          or (keep_marks and str(e.get("name", "")).startswith("ProfilerStep#"))]
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def test_a_window_of_profiler_step_marks_alone_is_nothing_recorded_as_an_empty_window_is(tmp_path):
    """The marks are the profiler's: the window is "nothing recorded", exit 2, as without them -- never "the work ran
    on the CPU" (base: exit 0 and "move the model to the GPU")."""
    marks, empty = _marks_only(tmp_path, True), _marks_only(tmp_path, False)
    for path in (marks, empty):
        code, _, err = _report(path)
        assert code == 2 and "nothing recorded" in err, err
        assert "ran on the CPU" not in err
    err = _report(marks)[2]
    assert "the profiler's own step marks (6, `ProfilerStep#" in err, err


def test_a_jax_window_without_a_gpu_plane_names_each_builds_device_once(tmp_path):
    """JAX's ``print(jax.devices())`` advice for a GPU no capture names: each build's device object once (base: the
    table's later pair replaced the first pair's words again)."""
    truth = jc.write_host_only_window(tmp_path, "cpu_steps", gpu_plane=False, fetch=None)
    code, rep, _ = _report(truth["path"])
    assert code == 0
    text = _window_text(rep)
    assert "expect a GPU device (CudaDevice(id=0), RocmDevice(id=0), ...)" in text, text
    assert "a GPU device (a GPU device" not in text and ")(id=0)" not in text


def _os_calls_only(path: Path, options: bool) -> list[tuple[int, int, str, int]]:
    """An export whose window holds the OS runtime's calls and nothing else (``write_window``'s empty window, an OS
    runtime trace added); ``options=False``: none of its capture options kept, as an export that records none."""
    nx.write_window(str(path), "no_cuda_call", options=False)
    with sqlite3.connect(str(path)) as con:
        (tid,) = con.execute("SELECT globalTid FROM ThreadNames").fetchone()
    t0 = nx.SESSION_START_NS + 200_000
    calls = [(t0 + i * 300_000, t0 + i * 300_000 + 200_000, name, tid) for i, name in
             enumerate(("openat", "read", "read", "poll", "read", "ioctl"))]
    nx.add_os_runtime(str(path), calls)
    if not options:
        with sqlite3.connect(str(path)) as con:
            con.execute("DELETE FROM META_DATA_CAPTURE")
    return calls


def test_an_export_of_os_runtime_calls_alone_says_what_it_holds_and_how_to_trace_cuda(tmp_path):
    """6 OS calls, no CUDA table, no options: "OS runtime calls only (6 calls: `read` ×3 ...)", its own title and fix
    (base: "(0 GPU planes, 0 events)", "was the GPU visible?"); exit 0, as every readable window without GPU work.
    Control: the same window with its options kept (CUDA traced) is the program that had not reached its GPU work."""
    p = tmp_path / "osrt.sqlite"
    calls = _os_calls_only(p, options=False)
    code, rep, _ = _report(p)
    assert code == 0
    job = rep["hosts"][0]["job"]
    assert job["kind"] == "no_gpu" and job["kind_evidence"].startswith(f"OS runtime calls only ({len(calls)} calls: "
                                                                       "`read` ×3"), job["kind_evidence"]
    text = _window_text(rep)
    assert "GPU planes" not in text and "0 events" not in text and "visible" not in text
    assert "only OS runtime calls" in text and "-t cuda,nvtx,osrt" in text and "--capture-range" in text
    told = tmp_path / "told.sqlite"
    _os_calls_only(told, options=True)
    assert "The capture window holds no CUDA call" in _window_text(_report(told)[1])


def test_an_empty_rocprofv3_kernel_trace_says_the_trace_was_on(tmp_path):
    """The real RDNA2 capture's agent list and its kernel trace's header, its one row taken out: a ``--kernel-trace``
    run whose program launched no kernel.  Still an input error (nothing recorded, exit 2, as every format's), now
    saying the kernel trace was on (base: "was it run without ... --kernel-trace?")."""
    real = Path(REPO, "tests", "fixtures", "wild", "hip_matmul_rdna2_igpu")
    run = tmp_path / "empty"
    run.mkdir()
    (run / "output_agent_info.csv").write_bytes((real / "output_agent_info.csv").read_bytes())
    header = (real / "output_kernel_trace.csv").read_text().splitlines()[0]
    (run / "output_kernel_trace.csv").write_text(header + "\n")
    out = in_process("report", str(tmp_path), "--run", "empty", "--cache-dir", "off")
    assert out.returncode == 2 and "no events" in out.stderr, out.stderr
    assert "kernel trace was on (--kernel-trace: its file is here, empty)" in out.stderr, out.stderr
    assert "was it run without" not in out.stderr


def test_an_export_with_empty_cuda_tables_is_not_said_to_hold_none(tmp_path):
    """The NVTX-only window with its options taken out: its CUDA tables (present, empty) are named as such (base: "no
    CUDA table at all is what tracing NVTX alone (-t nvtx) leaves"); the real export that holds none keeps those words."""
    p = tmp_path / "nvtx.sqlite"
    nx.write_window(str(p), "nvtx_only")
    with sqlite3.connect(str(p)) as con:
        con.execute("DELETE FROM META_DATA_CAPTURE")
        empty = sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE name LIKE 'CUPTI_ACTIVITY_KIND_%'"))
    assert empty  # the window's writer keeps CUDA's tables, empty
    evidence = _report(p)[1]["hosts"][0]["job"]["kind_evidence"]
    assert f"its CUDA tables ({', '.join(empty)}) are there but empty" in evidence, evidence
    assert "no CUDA table at all" not in evidence
    real = _report(os.path.join(REPO, "tests", "fixtures", "nsys_windows", "nvtx_only_centerformer.sqlite"))[1]
    assert "no CUDA table at all is what tracing NVTX alone (-t nvtx) leaves" in real["hosts"][0]["job"]["kind_evidence"]


def test_a_snapshot_that_recorded_only_the_tear_down_is_the_wrong_window_not_healthy(tmp_path):
    """``training_iterations``' snapshot torn down (every block freed, ``empty_cache()``), its history cut to the
    tear-down's events alone (a ring buffer that kept the exit): no allocation in it, none at the dump.  A warning with
    the fix to dump after the steps (base: no finding, "No memory check fired").  Control: the whole history torn down
    keeps its reading (the job's training stacks), no such warning."""
    doc = ms.training_iterations().doc
    kept = len(doc["device_traces"][0])
    whole = ms.torn_down(doc, empty_cache=True)
    tail = {**whole, "device_traces": [whole["device_traces"][0][kept:]]}
    frees = sum(1 for e in tail["device_traces"][0] if e["action"] == "free_completed")
    segments = sum(1 for e in tail["device_traces"][0] if e["action"] == "segment_free")
    (tmp_path / "tail").mkdir()
    ms.write(str(tmp_path / "tail" / "snapshot.pickle"), tail)
    code, rep, _ = _report(tmp_path / "tail" / "snapshot.pickle")
    assert code == 0 and rep["healthy"] is False
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality" and f["severity"] == "warning"]
    assert f"{frees} frees of blocks allocated before it began and {segments} segments given back" in f["summary"]
    assert "tear-down" in f["title"] and "before del model" in f["actions"][0]["snippet"]
    (tmp_path / "whole").mkdir()
    ms.write(str(tmp_path / "whole" / "snapshot.pickle"), whole)
    rep = _report(tmp_path / "whole" / "snapshot.pickle")[1]
    assert rep["hosts"][0]["job"]["kind"] == "training"
    assert not [f for f in rep["findings"] if "tear-down" in f["title"]]
