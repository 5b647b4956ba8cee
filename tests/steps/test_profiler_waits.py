"""A step holding the profiler's own work is no steady step (issue #37 class 4, survey h37-survey45).

Kineto records CUPTI's activity buffer requests as ``overhead`` events on a thread of its own; the program's next
launch waits for each.  The step stage read them nowhere, so a step that held one was averaged with the steady
ones: on TraceLens' B300 MoE benchmarks (read locally, SURVEY.md h37-survey45) the first of three 0.2 ms
iterations held a 0.45 ms request and read 1.94 ms; on the kept HF ``generate`` capture one decode step held two
(4.3 ms) and read 14.0 ms beside steps of 10.5 ms."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.steps.drop import _drop_profiler_waits
from tb_gpu_advisor.steps.reading import _Kept
from tb_gpu_advisor.steps.types import PS_PER_MS
from tests.support.paths import FIXTURES

JOBS = FIXTURES / "h200_jobs"
WILD = FIXTURES / "wild"


def _steps(run: str, root: Path = JOBS) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        cli.main(["report", str(root / run), "--format", "json", "--cache-dir", "off"])
    return json.loads(out.getvalue())["reports"][0]["hosts"][0]["steps"]


def _profiler_drops(steps: dict) -> list[dict]:
    return [d for d in steps["dropped"] if d["reason"].startswith("profiler:")]


def test_the_kineto_reader_keeps_the_profilers_own_work() -> None:
    """The four buffer requests of the kept capture, as Kineto timed them (2,143 / 2,051 / 84 / 2,184 us)."""
    (path,) = (JOBS / "hf_generate_llama").glob("*.pt.trace.json.gz")
    trace = read(SimpleNamespace(path=str(path), host="vm", format="kineto"))
    s, e = trace.profiler_overhead
    assert sorted(((e - s) / 1e6).round().tolist()) == [84, 2051, 2143, 2184]
    assert (s[1:] >= s[:-1]).all()


def test_a_decode_step_holding_buffer_requests_is_left_out() -> None:
    """hf_generate_llama: the decode step that held 4.3 ms of buffer requests (14.0 ms long) is dropped, and no kept
    step holds the profiler's work; main kept it (29 steps, 10.6 ms)."""
    steps = _steps("hf_generate_llama")
    (drop,) = _profiler_drops(steps)
    assert drop["ms"] == pytest.approx(14.0, abs=0.2)
    assert "4.32 ms" in drop["reason"]
    assert steps["count"] == 28
    assert "holding the profiler's own work" in steps["note"]


@pytest.mark.parametrize("root,run", [(JOBS, "torch_fp16_inference_unmarked"), (JOBS, "hf_generate_llama_stack"),
                                      (WILD, "held_pass_rtx5070ti"), (WILD, "vllm_b200_tp8")])
def test_control_captures_whose_requests_fall_outside_several_steps_keep_their_steps(root: Path, run: str) -> None:
    """Controls: buffer requests in a one-pass capture (no two steps would remain) or outside the steps drop nothing."""
    assert _profiler_drops(_steps(run, root)) == []


@pytest.mark.parametrize("run,count", [("torch_mem_activations", 5), ("torch_mem_fragmented", 7)])
def test_control_cupti_overheads_that_are_not_the_profilers_own_drop_nothing(run: str, count: int) -> None:
    """Controls: the other kinds Kineto files under ``overhead`` are the program's, not the profiler's --
    ``Command Buffer Full`` (the launch queue full behind a busy GPU, 40 of them in torch_mem_activations) and
    ``Lazy Function Loading`` (a module loaded on first launch, torch_mem_fragmented).  A first cut that read the whole
    category dropped 2 and 1 of their steps."""
    (path,) = (FIXTURES / "h200_memory" / run).glob("*.pt.trace.json.gz")
    assert read(SimpleNamespace(path=str(path), host="vm", format="kineto")).profiler_overhead is None
    steps = _steps(run, FIXTURES / "h200_memory")
    assert _profiler_drops(steps) == [] and steps["count"] == count


def _drop_on(spans: tuple[np.ndarray, np.ndarray], steps: int = 4, step_ms: float = 1.0) -> list[int]:
    """The ids ``steps.drop._drop_profiler_waits`` drops of ``steps`` back-to-back steps of ``step_ms`` each, given
    the profiler's own spans (ms)."""
    hs = (np.arange(steps) * step_ms * PS_PER_MS).astype(np.int64)
    kept = _Kept(np.arange(steps, dtype=np.int64), hs, hs + int(step_ms * PS_PER_MS), {})
    r = SimpleNamespace(trace=SimpleNamespace(profiler_overhead=tuple((np.asarray(a) * PS_PER_MS).astype(np.int64)
                                                                      for a in spans)), note="")
    dropped: list = []
    _drop_profiler_waits(r, kept, dropped)
    return [d.step for d in dropped]


def test_overlapping_requests_count_once() -> None:
    """Accounting: a step holds the profiler's work for as long as any request runs, not the requests' summed
    lengths.  Two requests recorded over the same 0.06 ms of step 1 hold 0.06 ms, under ``job.one_time_call_ms``
    (0.1 ms): the step is kept.  main summed each pair's overlap (0.12 ms) and dropped it (h37-review24)."""
    assert T("job.one_time_call_ms") == pytest.approx(0.1)
    assert _drop_on((np.array([1.2, 1.2]), np.array([1.26, 1.26]))) == []


def test_requests_holding_one_time_call_ms_still_drop_their_step() -> None:
    """Control by construction: disjoint requests of 0.06 ms each in step 2 hold 0.12 ms, and step 2 alone drops."""
    assert _drop_on((np.array([2.1, 2.5]), np.array([2.16, 2.56]))) == [2]
