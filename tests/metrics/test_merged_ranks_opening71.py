"""Ranks' files merged into one window: a GPU's idle before its own process's capture opened is no work from before the
capture (h37-hunt71a, issue #37 class 3: each wait to its cause).

The real capture, kept (BSD-3-Clause, NVIDIA/Megatron-LM's licence): ``tp2/result/{0,1}/*.pt.trace.json`` added by ``add
chakra-dts tp2`` (44a8eb04, 2024-08-26, refs/pull/1316/head of NVIDIA/Megatron-LM), ``wild/megatron_tp2_v100_turns``:
one ``ProfilerStep#6`` of a small fp32 GPT trained with tensor parallelism 2 on two Tesla V100-PCIE-32GB, one process a
GPU. Rank 0's profiler opens 11.2 ms after rank 1's step starts (the merged window's start); GPU0's first kernel starts
12.9 ms into that window, 1.0 ms after its launch returned. Base ea5a2537 booked the whole 12.9 ms as work the GPU ran
from before the capture: "The capture opens while the GPU still runs earlier work ... 6.43 ms of the 74.2 ms step" --
though rank 0's process had recorded nothing yet, and the launch skew's finding tells that late start. Control (passes
on both): rank 0's file alone still reads its GPU holding launched work (51.8 ms of its 62.6 ms step: kernels start up
to 2.4 ms after their launches return, in turns)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.cli_report import cli_report

_RUN = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "megatron_tp2_v100_turns"
_RANK0 = "9c44bd29b3f0_1375.1724066820235157909.pt.trace.json.gz"
_BEFORE = "The capture opens while the GPU still runs earlier work"
_HELD = "The GPU holds work it was given, idle"


def _titles(host: dict) -> list[str]:
    return [f["title"] for f in host["findings"]]


def test_a_late_ranks_gpu_idle_before_its_process_opened_is_no_work_from_before_the_capture():
    host = cli_report(_RUN)["hosts"][0]
    assert _BEFORE not in _titles(host), [(f["title"], f["summary"][:160]) for f in host["findings"]]
    assert "launch_skew" in [f["rule"] for f in host["findings"]]  # the late start is told where it is the cause


def test_control_rank_0_alone_still_reads_its_gpu_holding_launched_work(tmp_path):
    run = tmp_path / "rank0"
    run.mkdir()
    shutil.copy(_RUN / _RANK0, run / _RANK0)
    host = cli_report(run)["hosts"][0]
    (held,) = [f for f in host["findings"] if f["title"] == _HELD]
    assert "51.8 ms" in held["summary"], held["summary"]
    assert _BEFORE not in _titles(host)
