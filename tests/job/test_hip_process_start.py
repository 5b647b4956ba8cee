"""A HIP process's start-up in its first recorded call is start-up, whatever call it is (issue #37 class 1, what the
window holds; the HIP counterpart of ``tests/job/test_unrecorded_context.py``).

The wrong assumption: the runtime's start is only seen where a call the runtime makes while it initialises is recorded
(``devices.RUNTIME_INIT_CALLS``), and HIP had none -- so a HIP process's start read as start-up only where its first
call happened to be a non-blocking one (``_rare_slow_calls``); a first ``hipMemcpyToSymbol`` or sync holding 300 ms of
initialisation read as a steady capture.  Facts (ROCm/clr ``hipamd``): the compiler's module constructor calls
``__hipRegisterFatBinary`` before ``main`` (registration, no initialisation); every HIP API initialises the runtime
once, inside it (``HIP_INIT_API``: ``std::call_once(hip::init)``); rocprofiler-sdk times each call around the dispatch
table's entry and records the registration under ``HIP_COMPILER_API`` (the kept rocprofv3 file
``wild/fsdp_mi350x_kernel_trace`` lists that kind's operations: ``__hipRegisterFatBinary``, ``__hipRegisterFunction``
...).  No kept AMD capture records a process's start (its Kineto windows open after it; its rocprof v1 and rpd files
are roctracer's, which records neither the registration nor the initialisation; its rocprofv3 file is a kernel trace
alone): the captures here are generated (``synthetic.rocprofv3trace.write(start_up=...)``), the truth by construction.

Controls: a capture with no compiler-API record (``--hip-runtime-trace`` alone) takes nothing (nothing says its process
started in the window); a registration after a call of its thread had returned (a library loaded mid-run) takes
nothing; every kept AMD capture with HIP calls reads no runtime start; NVIDIA's own (``cuModuleGetLoadingMode``) is
the other test's.
"""

from __future__ import annotations

import csv
import glob
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic import rocprofv3trace
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.formats.rocprof.csv_reader import read_trace
from tb_gpu_advisor.job import detect_job
from tb_gpu_advisor.job.phase import _runtime_starts
from tb_gpu_advisor.model.trace import device_launches
from tests.support.paths import FIXTURES

STEPS = [[("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0)]] * 6
INIT_MS = 300.0


def _read(folder: Path):
    files = sorted(glob.glob(str(folder / "*.csv")))
    return read_trace(next(f for f in files if f.endswith("kernel_trace.csv")), ranks=files)


def _phase(trace):
    return detect_job(trace, device_launches(trace.h, trace.devices), frameworks.detect_trace(trace)).phase


def _first_call_span(trace, name: str) -> tuple[int, int]:
    h = trace.h
    calls = np.flatnonzero(h.name_mask(lambda n: n == name))
    i = calls[np.argmin(h.start[calls])]
    return int(h.start[i]), int(h.end[i])


@pytest.mark.parametrize("first", ["hipMemcpyToSymbol", "hipDeviceSynchronize"])
def test_the_first_hip_call_after_the_registrations_holds_the_start_up(tmp_path: Path, first: str):
    truth = rocprofv3trace.write(str(tmp_path), STEPS, start_up=(first, INIT_MS, 2))
    trace = _read(tmp_path)
    phase = _phase(trace)
    assert phase.phase == "warm-up"  # main: "steady", the 300 ms nowhere
    a, b = _first_call_span(trace, first)
    assert b - a == truth["start_up_ns"] * 1000  # ps
    covered = sum(max(0, min(b, int(e)) - max(a, int(s))) for s, e in zip(*phase.spans()))
    assert covered == b - a  # the whole call, nothing less
    assert phase.total_ms == pytest.approx(truth["start_up_ns"] / 1e6, abs=0.01)  # and nothing more
    assert f"the context created in the process's first runtime call after the runtime's start-up (`{first}`" \
        in phase.evidence
    assert not phase.unseen_ms  # no GPU work outside the file was waited for


def test_without_the_compiler_api_record_nothing_says_the_process_started_in_the_window(tmp_path: Path):
    rocprofv3trace.write(str(tmp_path), STEPS, start_up=("hipMemcpyToSymbol", INIT_MS, 0))
    trace = _read(tmp_path)
    assert not _runtime_starts(trace)
    assert _phase(trace).phase == "steady"


def test_a_registration_after_the_threads_own_calls_is_a_library_loaded_mid_run(tmp_path: Path):
    """A quick ``hipGetDeviceCount`` of the thread returned before the registrations: the runtime ran already."""
    rocprofv3trace.write(str(tmp_path), STEPS, start_up=("hipMemcpyToSymbol", INIT_MS, 2))
    api = next(tmp_path.glob("*_hip_api_trace.csv"))
    rows = list(csv.reader(api.open()))
    header, body = rows[0], rows[1:]
    reg = next(r for r in body if r[1] == "__hipRegisterFatBinary")
    early = list(reg)
    early[0], early[1], early[4] = "HIP_RUNTIME_API", "hipGetDeviceCount", "9999"
    early[5], early[6] = str(int(reg[5]) - 50_000), str(int(reg[5]) - 45_000)
    with api.open("w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n").writerows([header, early] + body)
    trace = _read(tmp_path)
    assert trace.h.name_mask(lambda n: n == "hipGetDeviceCount").sum() == 1
    assert not _runtime_starts(trace)
    assert _phase(trace).phase == "steady"


KEPT_AMD = ["wild/cold_mi300x_norm", "wild/amd_mi250", "wild/amd_mi300x", "wild/mi210_gpu_only",
            "wild/compiled_mi300x_attn", "wild/vllm_rpd_fp8", "foreign/rocm_rpd_matmul"]


@pytest.mark.parametrize("capture", KEPT_AMD)
def test_no_kept_amd_capture_reads_a_runtime_start(capture: str):
    """The kept AMD captures with HIP calls: Kineto windows opened after the start (``cold_mi300x_norm``'s 1 us
    ``hipInit`` after its first launch is a library's, no mark), roctracer files (rpd's matmul, from the process's
    start: its first record is a 17 us ``hipGetDeviceCount``, the initialisation before it unrecorded)."""
    path = next(p for p in sorted((FIXTURES / capture).iterdir()) if p.name.endswith((".gz", ".rpd")))
    fmt = "rpd" if ".rpd" in path.name else "kineto"
    trace = read(SimpleNamespace(host="h", path=str(path), format=fmt))
    assert trace.h.name_mask(lambda n: n.startswith("hip")).any()
    assert not _runtime_starts(trace)


def test_nvidias_start_up_mark_still_opens_the_threads_calls():
    """The mark's new condition (no call of its thread returned before it) holds for NVIDIA's own: the A100 export's
    ``cuModuleGetLoadingMode`` is still a runtime start."""
    path = FIXTURES / "wild" / "mmagic_a100_pyprof_forward" / "net.sqlite"
    trace = read(SimpleNamespace(host="h", path=str(path), format="nsys"))
    starts = _runtime_starts(trace)
    assert [trace.h.names[int(trace.h.name[i])] for i, _ in starts] == ["cuModuleGetLoadingMode"]
