"""A CUDA copy loop whose steps end in ``torch.cuda.synchronize()`` is copies, not a loop on the CPU (h37-hunt71b,
issue #37 class 1: a window with no kernel, with the wrong advice).

The real captures, kept (BSD-3): pytorch/benchmark PR #1080's ``trace.json`` / ``trace2.json`` @cce09c0b, torch.profiler
windows on an A100-SXM4-40GB of a host-device copy loop -- each ProfilerStep copies a 154,140,672-byte batch to the host
and one to the GPU with ``cudaMemcpyAsync`` (pinned: 17.7 and 30.6 ms at once on two streams; pageable: 34.5 and
32.2 ms, one after the other), then waits in a bare ``cudaDeviceSynchronize``; no kernel.  Main ea5a2537 read both "no
call queued GPU work -- no launch, copy or fill: the loop ran on the CPU ... they went unused", fix "move the model":
the marked-steps reader asked ``devices.is_copy_call``, which knows HIP's copy calls only, so CUDA's
``cudaMemcpyAsync`` queued nothing.  The generator's copy loop escaped only because it waits inside a value read
(``.item()``'s sync), which that reader also takes as GPU work: ``torchtrace.write_copy_only_window(sync="device")``
waits as the real loop does.  Control (passes on both): the ``.item()``-synced generated loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import cli_report

_WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _job_and_warning(path: Path) -> tuple[dict, dict]:
    host = cli_report(path)["hosts"][0]
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality" and f["severity"] == "warning"]
    return host["job"], f


@pytest.mark.parametrize(("run", "memory"), [("copies_only_a100_pinned", "pinned"),
                                             ("copies_only_a100_pageable", "pageable")])
def test_a_real_cuda_copy_loop_synced_by_the_device_is_copies_not_work_on_the_cpu(run, memory):
    job, f = _job_and_warning(_WILD / run)
    ev = job["kind_evidence"]
    assert ev.startswith("copies only, no kernel"), ev
    assert "10 host to device, 1.44 GiB, 10 device to host, 1.44 GiB" in ev and f"host memory {memory}" in ev, ev
    words = f["title"] + f["summary"] + " ".join((a["text"] or "") + (a["snippet"] or "") for a in f["actions"])
    assert "ran on the CPU" not in ev + words and "move the model" not in words, words
    assert ("pin_memory" in f["actions"][0]["snippet"]) == (memory == "pageable")


@pytest.mark.parametrize("sync", ["device", "item"])
def test_a_generated_copy_loop_is_copies_however_its_steps_wait(tmp_path, sync):
    """``sync="device"`` fails on main (the real loops' wait); ``"item"`` is the control that passed before."""
    truth = tt.write_copy_only_window(str(tmp_path), sync=sync)
    job, _ = _job_and_warning(Path(truth["folder"]))
    assert job["kind_evidence"].startswith("copies only, no kernel"), job["kind_evidence"]
    assert f"{truth['steps']} host to device, 512 MiB" in job["kind_evidence"]
