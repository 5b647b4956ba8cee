"""Every window is a report (issue #37; h37-probe43w): windows without kernels that are neither start-up nor "no GPU
work".

* Copies only: a bandwidth test or a data-staging loop queues copies between host and GPU and no kernel.  Copies are
  GPU work: main read such a window "start-up only ... no GPU work" with the fix to start the window where the steps
  run, in Nsight and in Kineto alike.  Now "copies only, no kernel": how busy the copies kept the GPU, by direction,
  and whether the host memory was pageable (then the pinned-memory fix first) or pinned.
* Tear-down: a window opened after the loop holds the program's exit -- frees, streams destroyed, modules unloaded,
  NCCL's communicator destroyed, ``cudaDeviceReset`` -- and main read it "start-up only", "the window ended during
  start-up": a window that started too late told it ended too early.

Truth by construction: ``synthetic.nsysexport.write_pageable_copy_loop(kernels=0)`` (a loop of synchronous copies up
and back, pageable or pinned), ``synthetic.torchtrace.write_copy_only_window`` (``prof.step()`` steps of
``tensor.to('cuda', non_blocking=True)`` and ``.cpu()``), ``synthetic.nsysexport.write_teardown_window``; the
start-up controls ``nsysexport.write_window(..., "startup")`` (its one 4,608-byte memset) and a tear-down window that
creates a stream keep their readings.
"""

from __future__ import annotations

import re

import pytest

from synthetic import nsysexport as nx
from synthetic import torchtrace as tt
from tests.support.cli_report import ran_report


def _window(rep: dict) -> tuple[dict, dict, str]:
    """The host's job, its one capture_quality finding, and that finding's words and fix code together."""
    (host,) = rep["hosts"]
    assert host["error"] is None
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    text = " ".join([f["title"], f["summary"]] + [a["text"] + " " + (a["snippet"] or "") for a in f["actions"]])
    return host["job"], f, text


def _busy(evidence: str) -> float:
    """The copies' busy share the words state, as a fraction."""
    return float(re.search(r"busy ([\d.]+)% of the window", evidence).group(1)) / 100


@pytest.mark.parametrize("pinned", [False, True])
def test_an_nsight_copy_loop_is_copies_not_start_up(tmp_path, pinned):
    """100 uploads and 100 read-backs, no kernel: the window holds copies -- the pageable ones told to pin first --
    never "start-up", never "no GPU work"."""
    nx.write_pageable_copy_loop(str(tmp_path / "copy.sqlite"), iterations=100, kernels=0, pinned=pinned)
    code, rep = ran_report(str(tmp_path))
    job, f, text = _window(rep)
    assert code == 0 and f["severity"] == "warning"
    ev = job["kind_evidence"]
    assert ev.startswith("copies only, no kernel: GPU 0's copies kept it busy"), ev
    assert "100 host to device" in ev and "100 device to host" in ev
    assert ("host memory pinned" if pinned else "host memory pageable") in ev
    # the copies' own time over the window from the first copy on: at least their transfers' share of that window
    assert _busy(ev) > 0.05 and job["copies_only"]
    assert "start-up" not in f["title"] and "no GPU work" not in text, text
    pin = "pinned host memory" in f["actions"][0]["text"]
    assert pin != pinned, f["actions"][0]["text"]
    _, words = ran_report(str(tmp_path), "text")
    assert "no GPU work" not in words and "start-up only" not in words
    assert "the window holds copies and no kernel" in words.splitlines()[0]


@pytest.mark.parametrize("host", ["Pinned", "Pageable"])
def test_a_torch_profiler_staging_loop_is_copies_not_start_up(tmp_path, host):
    """``prof.step()`` steps of an upload and a read-back, 64 MiB each way: copies only, how busy, which memory; the
    torch fix names the copies, never "held no GPU work"."""
    truth = tt.write_copy_only_window(str(tmp_path), host=host)
    code, rep = ran_report(truth["folder"])
    job, f, text = _window(rep)
    ev = job["kind_evidence"]
    assert ev.startswith("copies only, no kernel"), ev
    assert f"{truth['steps']} host to device, 512 MiB, {truth['steps']} device to host, 512 MiB" in ev, ev
    assert f"host memory {truth['host_memory']}" in ev
    assert _busy(ev) >= 0.9  # 46.4 ms of copies, back to back, in a 48.4 ms window
    assert "held copies and no kernel" in text and "no GPU work" not in text
    assert ("pin_memory" in f["actions"][0]["snippet"]) == (host == "Pageable")


def test_start_up_with_one_memset_stays_start_up(tmp_path):
    """Control: start-up's copies are one small fill -- still start-up."""
    nx.write_window(str(tmp_path / "s.sqlite"), "startup")
    _, rep = ran_report(str(tmp_path))
    job, f, _ = _window(rep)
    assert job["kind_evidence"].startswith("start-up only") and "copies_only" not in job
    assert "start-up" in f["title"]


@pytest.mark.parametrize("nccl", [True, False])
def test_a_window_of_tear_down_is_not_start_up(tmp_path, nccl):
    """Frees, streams and events destroyed, modules unloaded, ``cudaDeviceReset`` (and NCCL's communicator): the
    program's exit after its loop, its fix to end the window before the program exits -- never "start-up"."""
    truth = nx.write_teardown_window(str(tmp_path / "td.sqlite"), nccl=nccl)
    code, rep = ran_report(str(tmp_path))
    job, f, text = _window(rep)
    assert code == 0 and f["severity"] == "warning"
    ev = job["kind_evidence"]
    assert ev.startswith(f"the program's tear-down, after its loop: {truth['calls']} CUDA calls"), ev
    assert ("`ncclCommDestroy` ×1" in ev) == nccl
    assert "start-up only" not in ev and "during start-up" not in text
    assert "opened after the loop" in f["title"]
    assert "--duration" in text and "ends before" in text


def test_a_window_that_makes_something_is_no_tear_down(tmp_path):
    """Control: start-up (a context made, buffers allocated) is no tear-down, though it holds a free."""
    nx.write_window(str(tmp_path / "s.sqlite"), "startup")
    _, rep = ran_report(str(tmp_path))
    job, _, _ = _window(rep)
    assert "tear-down" not in job["kind_evidence"]


@pytest.mark.parametrize("nccl", [True, False])
def test_a_tear_down_window_is_no_warm_up(tmp_path, nccl):
    """The exit's one-time calls (``cudaDeviceReset``, ``cudaFreeHost``) fill most of a tear-down window: its phase is
    the window's reading, "tear-down", never "warm-up" or "a cold start" (h37-probe43w *Left* 1); the costs' share is
    kept, measured, and no cold-start tag or finding follows it."""
    nx.write_teardown_window(str(tmp_path / "td.sqlite"), nccl=nccl)
    _, rep = ran_report(str(tmp_path))
    job, _, _ = _window(rep)
    assert job["phase"] == "tear-down", (job["phase"], job["phase_evidence"])
    assert "cold start" not in job["phase_evidence"] and "first-time" not in job["phase_evidence"]
    assert job["one_time_share"] > 0.5 and "cold" not in job["tags"]
    assert not [f for f in rep["findings"] if f["rule"] == "cold_start"]
    _, words = ran_report(str(tmp_path), "text")
    line = " ".join(words.split("FINDINGS")[0].split())
    assert "warm-up" not in line and "phase tear-down" in line and "after the loop" in line, line


def test_start_up_keeps_its_warm_up(tmp_path):
    """Control: a start-up window's one-time costs are a warm-up's, and read so."""
    nx.write_window(str(tmp_path / "s.sqlite"), "startup")
    _, rep = ran_report(str(tmp_path))
    job, _, _ = _window(rep)
    assert job["phase"] == "warm-up" and "cold" in job["tags"]


def test_a_torch_profiler_window_of_the_exit_is_tear_down(tmp_path):
    """Kineto (h37-probe43w *Left* 1): ``torch.cuda.empty_cache()``'s frees and the pinned allocator's
    ``cudaFreeHost`` after the loop -- tear-down, its phase the exit's, its fix torch.profiler's schedule."""
    truth = tt.write_teardown_window(str(tmp_path))
    _, rep = ran_report(truth["folder"])
    job, f, text = _window(rep)
    assert job["kind_evidence"].startswith(f"the program's tear-down, after its loop: {truth['calls']} CUDA calls")
    assert f"{truth['released']} of the calls release" in job["kind_evidence"]
    assert job["phase"] == "tear-down" and "opened after the loop" in f["title"]
    assert "schedule" in text and "nsys" not in text
