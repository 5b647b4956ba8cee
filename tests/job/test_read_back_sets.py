"""A native loop that reads back several results, and one whose clocks disagree (issue #37, h37-readbacks2).

h37-hipread read a native loop's iterations from its one blocking read-back a repeat (``job.period._read_backs``).
Two assumptions left loops as one pass on main:

* *the iteration ends with one read*: a loop reading back two results each iteration (a loss and an accuracy, a
  result and a flag) has two device-to-host copies a repeat, each the host's wait; the iteration is the repeat of
  that set of reads;
* *the host's and the GPU's clocks agree to the nanosecond*: a read's call returns a few microseconds after its copy
  ends, so a GPU clock reading a few microseconds late put the copy's end after the call's return, and the read
  counted as no wait (``job.period._clock_slack`` bounds the disagreement from the capture itself).

Truth by construction: the generators' clocks (``rocproftrace.write``'s ``step_starts``, ``rpdtrace.write``'s
``burst_starts``; ``gpu_clock_ns`` shifts every GPU record).  Controls: a copy in that blocks too (a layer's swapped
weights) stays one pass with two reads and under either clock's skew; a read whose size changes each repeat is no
result buffer.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic import nsysexport, rocproftrace, rpdtrace
from synthetic.nsysexport import NsysJob
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.frameworks import engines
from tb_gpu_advisor.job import period
from tb_gpu_advisor.model.trace import device_launches
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.cli_report import first_host
from tests.support.contradictions import context_problems, report_problems

LOOP = [("gemm_kernel(float*)", 900.0), ("relu(float*)", 80.0), ("softmax(float*)", 120.0)]


def _step_ms(starts: list[int]) -> float:
    """The generated iteration's length: the mean distance between its first calls (ns -> ms)."""
    return float(np.mean(np.diff(starts))) / 1e6


def _hip_loop(tmp_path: Path, n: int, **kw) -> dict:
    """rocprof v1: ``n`` iterations of 3 kernels, results read back by blocking ``hipMemcpy``, no sync, no range."""
    kw = {"step_read_bytes": 4096, "step_range": None, **kw}
    return rocproftrace.write(str(tmp_path / "results.json"), [LOOP] * n, step_sync=None, **kw)


@pytest.mark.parametrize("reads", [(4, 4), (4096, 4)])
def test_a_hip_loop_reading_back_two_results_is_its_iterations(tmp_path: Path, reads: tuple[int, int]) -> None:
    """Two blocking reads an iteration (a loss and an accuracy; a result and a flag): main read one pass."""
    truth = _hip_loop(tmp_path, 8, step_read_bytes=reads)
    host = first_host(tmp_path)
    steps = host["steps"]
    assert (steps["source"], steps["found"]) == ("repeated_launches", 8), steps
    assert host["gpus"][0]["step_ms"] == pytest.approx(_step_ms(truth["step_starts"]), rel=0.01)
    assert "2 blocking reads of its results (`hipMemcpy`" in steps["note"], steps["note"]
    (session,) = discover(str(tmp_path))  # no CUDA word on the AMD host, no finding against its own numbers
    report = analyze_session(session.run, session.session, session.hosts)
    assert not report_problems(report) and not context_problems(report)


def test_an_rpd_loop_reading_back_two_results_is_its_iterations(tmp_path: Path) -> None:
    """rocmProfileData: 10 bursts, each reading back a result and a flag, no sync (main: one pass)."""
    truth = rpdtrace.write(str(tmp_path / "trace.rpd"), [LOOP] * 10, gap_ms=1.0, module_load_ms=0.0,
                           read_bytes=(4096, 4), sync=False)
    steps = first_host(tmp_path)["steps"]
    assert (steps["source"], steps["found"]) == ("repeated_launches", 10), steps
    assert first_host(tmp_path)["gpus"][0]["step_ms"] == pytest.approx(_step_ms(truth["burst_starts"]), rel=0.01)


def test_a_cuda_loop_reading_back_two_results_is_its_iterations(tmp_path: Path) -> None:
    """Nsight Systems: 10 iterations of a pinned upload, 3 kernels of 2 ms and two blocking ``cudaMemcpy`` of 4 KiB
    back, no sync (main: one pass)."""
    job = NsysJob(steps=10, ops=3, kernel_us=2000.0, d2h_us=50.0, d2h_bytes=4096, d2h_reads=2, step_range=None,
                  autograd_nvtx=False, sync=False, shuffle=False)
    truth = nsysexport.write(str(tmp_path / "loop.sqlite"), job)
    host = first_host(tmp_path)
    assert (host["steps"]["source"], host["steps"]["found"]) == ("repeated_launches", 10), host["steps"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth.step_ms, rel=0.01)
    assert "2 blocking reads of its results (`cudaMemcpy" in host["steps"]["note"]


def test_a_flag_read_mid_iteration_and_the_result_at_its_end(tmp_path: Path) -> None:
    """A 4-byte flag read back after the first kernel and the result after the last: the reads lie apart, and the
    iteration begins where the launches begin repeating (main: bursts of the GPU's work, not the loop's)."""
    truth = _hip_loop(tmp_path, 8, step_flag_after=1)
    host = first_host(tmp_path)
    assert (host["steps"]["source"], host["steps"]["found"]) == ("repeated_launches", 8), host["steps"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(_step_ms(truth["step_starts"]), rel=0.01)
    # each iteration starts at its first kernel's launch (the loop's first call is the trace's first kernel launch),
    # not after the flag's read
    trace = read(SimpleNamespace(host="h", path=str(tmp_path / "results.json"), format="rocprof"))
    steps = period.repeated_launches(trace, device_launches(trace.h, trace.devices))
    first_launch = int(trace.h.start[trace.h.name_mask(lambda n: n == "hipLaunchKernel")].min())
    assert (steps.start - first_launch).tolist() == [1000 * (s - truth["step_starts"][0]) for s in truth["step_starts"]]


@pytest.mark.parametrize("reads", [4096, (4096, 4)])
def test_a_gpu_clock_reading_late_reads_the_same_loop(tmp_path: Path, reads: int | tuple[int, int]) -> None:
    """The GPU's clock 6 us behind the host's (the read's call returns 3 us after its copy ends): main one pass."""
    truth = _hip_loop(tmp_path, 8, step_read_bytes=reads, gpu_clock_ns=6_000)
    host = first_host(tmp_path)
    assert (host["steps"]["source"], host["steps"]["found"]) == ("repeated_launches", 8), host["steps"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(_step_ms(truth["step_starts"]), rel=0.01)


def test_an_rpd_gpu_clock_reading_late_reads_the_same_loop(tmp_path: Path) -> None:
    """rocmProfileData, its GPU clock 3 us late (the read returns 1 us after its copy): main one pass."""
    rpdtrace.write(str(tmp_path / "trace.rpd"), [LOOP] * 10, gap_ms=1.0, module_load_ms=0.0, read_bytes=4096,
                   sync=False, gpu_clock_ns=3_000)
    steps = first_host(tmp_path)["steps"]
    assert (steps["source"], steps["found"]) == ("repeated_launches", 10), steps


def test_a_gpu_clock_reading_early_reads_the_same_loop(tmp_path: Path) -> None:
    """Control: the GPU's clock 6 us ahead (its work still recorded after its calls' starts): as main, the loop."""
    _hip_loop(tmp_path, 8, gpu_clock_ns=-6_000)
    steps = first_host(tmp_path)["steps"]
    assert (steps["source"], steps["found"]) == ("repeated_launches", 8), steps


@pytest.mark.parametrize("skew", [0, 6_000, -6_000])
def test_a_blocking_copy_in_stays_one_pass_with_two_reads_and_skew(tmp_path: Path, skew: int) -> None:
    """Control: each repeat also copies 48 MiB in by a blocking ``hipMemcpy`` (a layer's swapped weights: the host
    waits there too), read back twice, the GPU's clock on time, late or early: no reading of a loop."""
    _hip_loop(tmp_path, 8, step_upload_bytes=48 << 20, step_read_bytes=(4096, 4), gpu_clock_ns=skew)
    assert first_host(tmp_path)["steps"]["source"] != "repeated_launches"


def test_a_second_read_of_another_size_each_repeat_is_no_read_back(tmp_path: Path) -> None:
    """Control: the loop's second copy out moves another number of bytes each repeat (a model's tensors, no result
    buffer): one pass."""
    path = tmp_path / "results.json"
    _hip_loop(tmp_path, 8, step_read_bytes=(4096, 8))
    sizes = iter(range(1, 100))
    path.write_text(re.sub(r"sizeBytes\(8\)", lambda m: f"sizeBytes({8 * next(sizes)})", path.read_text()))
    assert first_host(tmp_path)["steps"]["source"] != "repeated_launches"


class _CountingPattern:
    """An engine's span pattern that counts the names it is asked about."""

    def __init__(self, pattern: re.Pattern, seen: list[str]) -> None:
        self.pattern, self.seen = pattern, seen

    def search(self, name: str) -> re.Match | None:
        self.seen.append(name)
        return self.pattern.search(name)


def test_the_engine_names_of_a_trace_are_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``job.period._engine_named`` is asked by each reading of a period (a frame, the whole region, the host's wait
    period): the trace's range names are read against the engines once, however often it is asked (main: every
    ask searched every range name again)."""
    _hip_loop(tmp_path, 8, step_range="iteration")
    trace = read(SimpleNamespace(host="h", path=str(tmp_path / "results.json"), format="rocprof"))
    seen: list[str] = []
    counted = [dataclasses.replace(e, spans=_CountingPattern(e.spans, seen)) for e in engines.ENGINES]
    monkeypatch.setattr(engines, "ENGINES", counted)
    assert not period._engine_named(trace)  # a native loop's own ranges name no engine
    once = len(seen)
    assert once, "the range names were never read"
    for _ in range(3):
        assert not period._engine_named(trace)
    assert len(seen) == once
