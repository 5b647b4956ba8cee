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

from synthetic import randjobs
from synthetic import torchtrace as tt
from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.model.schema import StepRow
from tb_gpu_advisor.steps.drop import _drop_profiler_waits
from tb_gpu_advisor.steps.reading import _Kept
from tb_gpu_advisor.steps.types import PS_PER_MS
from tests.support.paths import FIXTURES
from tests.support.random_jobs import _request_free_problems, reports_of, truth_problems

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
                                                                      for a in spans),
                                                 profiler_overhead_gpus={}), note="")
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



def _ranks_job(tmp_path: Path, steps: dict[int, tuple[int, ...]], late_us: float,
               count: int = 8) -> tuple[dict, float]:
    """A two-rank job (:func:`synthetic.torchtrace.ranks_requests`, ``count`` ``prof.step()`` iterations, 40 us of
    untraced turn each): its report's host and its request-free period (ms) by construction -- rank 0's host
    ``ProfilerStep#n`` of a step with no request (a rank's iterations alike but for its requests, marks back to
    back)."""
    sc = tt.Scenario(2, tt.ranks_requests(steps, late_us, 40.0), [], [], "ranks_requests")
    r0, _ = tt.simulate(sc, count)
    clean = {e["dur"] for e in r0.host if e["name"].startswith("ProfilerStep#")
             and int(e["name"].split("#")[1]) not in steps[0]}
    assert len(clean) == 1
    tt.write_run(str(tmp_path), sc, steps=count, run="ranks_requests")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        cli.main(["report", str(tmp_path / "ranks_requests"), "--format", "json", "--cache-dir", "off"])
    return json.loads(out.getvalue())["reports"][0]["hosts"][0], clean.pop() / 1e3


def test_each_ranks_requests_are_measured_against_its_own_steps(tmp_path: Path) -> None:
    """Two ranks, rank 1 0.2 ms late (an iteration is 0.28 ms), each with its own 0.45 ms buffer requests (rank 0 in
    host steps #3 and #6, rank 1 in #4 and #7).  A GPU's step opens where its host opened it (the GPU idle by then,
    h37-probe44r), so a request's wait lies in its own host step on its GPU's clock (#3 and #6 on GPU 0, #4 and #7 on
    GPU 1): #3, #4, #6 and #7 are left out (#2 and #9 by the stock rule), and every kept step, on each GPU, is the
    request-free period.  Fails on 6f44e79f: the requests pooled with no rank and measured against GPU 0's windows,
    5 of 6 windows held one, fewer than two stayed clean and nothing was dropped -- rows of 0.735 ms kept beside
    0.28 ms ones (the walk's seed 50301, below).  (Before h37-probe44r's windows the waits lay in the window before
    the host step, and #3, #5, #6 dropped: h37-probe44q.)"""
    host, period = _ranks_job(tmp_path, {0: (3, 6), 1: (4, 7)}, 200.0)
    steps = host["steps"]
    assert steps["source"] == "profiler_step"
    assert sorted(d["step"] for d in _profiler_drops(steps)) == [3, 4, 6, 7]
    rows = [(r["gpu"], r["step_ms"]) for r in host["step_rows"] if r["gpu"] is not None]
    assert {g for g, _ in rows} == {0, 1} and len(rows) == 4
    assert all(ms == pytest.approx(period, rel=0.01) for _, ms in rows), (period, rows)


def test_a_walk_job_of_two_ranks_keeps_only_its_steady_steps(tmp_path: Path) -> None:
    """Walk seed 50301 (default stream: 2 ranks, rank 1 0.27 ms late, requests of 0.12 / 2.19 / 0.29 ms in host steps
    #3, #4, #7 on each rank): measured per rank, each GPU's window opened at its host's mark holds the wait of the
    request in that host step, #3, #4 and #7 are left out, the kept steps are 1.852 ms.  Fails on 6f44e79f: 4 of 5
    windows "held" one, nothing dropped, mean step 2.349 ms.  (With the span-to-span windows before h37-probe44r the
    waits lay a window earlier, and #3 and #6 dropped: h37-probe44q.)"""
    job = randjobs.random_job(50301)
    assert job.params["ranks"] == 2 and job.params["buffer_requests"] == ((3, 119.896), (4, 2190.281), (7, 285.969))
    (report,) = reports_of(job, str(tmp_path))
    h = report.hosts[0]
    assert sorted(d["step"] for d in _profiler_drops(h.steps)) == [3, 4, 7]
    assert h.mean_step_ms() == pytest.approx(1.852, abs=0.002)
    assert randjobs.TRUTH[50301]["request_free_ms"] == pytest.approx(1.852, abs=0.001)  # the writer's own period
    assert truth_problems(job, report) == []


def test_a_request_before_the_last_steps_first_launch_is_read_once(tmp_path: Path) -> None:
    """Two ranks (rank 1 0.2 ms late), 5 steps, each with a 0.45 ms buffer request in its last host step (#6) before
    its first launch.  Each GPU's last window opens at its host's mark #6 (its GPU idle by then, h37-probe44r), so the
    wait lies in #6 on its clock, once: #6 is left out and every kept window, #2 to #5, is the period.  Fails on
    6f44e79f: the last window took its own lead (the request) as the next step's and read the request again after its
    work (0.735 ms on GPU 0), and #6 was kept or a clean step lost (with 4 steps the walk's seed 52518,
    ``tests/report/test_law_seeds.py``, kept it at 1.594 ms beside two of 0.923 ms).  (With span-to-span windows the
    wait lay in #5, which dropped: h37-probe44q.)"""
    host, period = _ranks_job(tmp_path, {0: (6,), 1: (6,)}, 200.0, count=5)
    assert sorted(d["step"] for d in _profiler_drops(host["steps"])) == [6]
    rows = [(r["gpu"], r["step"], r["step_ms"]) for r in host["step_rows"] if r["gpu"] is not None]
    assert {g for g, _, _ in rows} == {0, 1} and {n for _, n, _ in rows} == {2, 3, 4, 5}
    assert all(ms == pytest.approx(period, rel=0.01) for _, _, ms in rows), (period, rows)


def test_control_a_last_step_with_the_usual_lead_keeps_its_host_length(tmp_path: Path) -> None:
    """Control: the requests in a middle step (#4 of 5) of each rank -- its own window on each GPU, opened at its
    host's mark, holds the wait and drops (#3 with span-to-span windows before h37-probe44r) -- the last step's first
    work follows its annotation as every other's does: its window is its host annotation's length, the period."""
    host, period = _ranks_job(tmp_path, {0: (4,), 1: (4,)}, 200.0, count=5)
    assert sorted(d["step"] for d in _profiler_drops(host["steps"])) == [4]
    last = {r["gpu"]: r["step_ms"] for r in host["step_rows"] if r["gpu"] is not None and r["step"] == 6}
    assert sorted(last) == [0, 1] and all(ms == pytest.approx(period, rel=0.01) for ms in last.values()), last


def test_control_a_last_lead_shorter_than_the_usual_one_keeps_its_host_length(tmp_path: Path) -> None:
    """Control (passes on main too): requests before the first launch of #3, #4 and #5 of 5 steps, so the usual lead
    (the lower median) holds a request and the last step's is shorter: no wait of the last step lies elsewhere, its
    window stays its host annotation's length, the period -- never lengthened by the others' waits (0.735 ms)."""
    host, period = _ranks_job(tmp_path, {0: (3, 4, 5), 1: (3, 4, 5)}, 200.0, count=5)
    last = {r["gpu"]: r["step_ms"] for r in host["step_rows"] if r["gpu"] is not None and r["step"] == 6}
    assert sorted(last) == [0, 1] and all(ms == pytest.approx(period, rel=0.01) for ms in last.values()), last


def test_the_walk_truth_of_several_ranks_is_a_time() -> None:
    """The law on several ranks' requests (``request_free_ms``) can fail: main's reading of seed 50301 (GPU 0's
    rows 4.047, 1.852, 1.852, 2.143, 1.852 ms, three at the 1.852 ms period) breaks it; rows within 0.1 ms of the
    period (a window may hold that much) do not."""
    main = [StepRow(k, 0.0, ms, {}, 0) for k, ms in enumerate((4.047, 1.852, 1.852, 2.143, 1.852))]
    assert _request_free_problems({"request_free_ms": 1.852}, main) == [
        "truth: GPU 0 keeps a step of 4.047 ms beside 3 of the request-free period 1.852 ms"]
    near = [StepRow(k, 0.0, ms, {}, 0) for k, ms in enumerate((1.94, 1.852, 1.852))]
    assert _request_free_problems({"request_free_ms": 1.852}, near) == []


def test_control_a_rank_waiting_for_anothers_request_at_the_all_reduce_still_drops_it(tmp_path: Path) -> None:
    """Control (walk seed 51232: 2 ranks, the second 1.89 ms late, an all-reduce each step, a 1.26 ms request in host
    step #3 on each): each GPU's window #3, opened at its host's mark, holds its own request's wait and drops; #2 is
    no request's (its all-reduce ends before rank 1's request begins) but the queue's fill
    (:func:`test_a_first_step_that_fills_its_gpus_queue_is_left_out`), left out as warm-up.  Every kept row is the
    2.844 ms period; h37-probe44r's windows kept GPU 0's #2 at 3.358 ms."""
    job = randjobs.random_job(51232)
    assert job.params["ranks"] == 2 and job.params["comm_us"] > 0
    (report,) = reports_of(job, str(tmp_path))
    h = report.hosts[0]
    assert sorted(d["step"] for d in _profiler_drops(h.steps)) == [3]
    assert [d["step"] for d in h.steps["dropped"] if d["reason"].startswith("warm-up: its GPU began it idle")] == [2]
    assert truth_problems(job, report) == []
    assert h.mean_step_ms() == pytest.approx(randjobs.TRUTH[51232]["request_free_ms"], rel=1e-3)


def _mark_period_ms(folder: Path) -> float:
    """The one start-to-start length (ms) of every rank's host ``ProfilerStep#n`` marks in the traces under
    ``folder``: the job's period where its iterations are alike (asserted)."""
    periods = set()
    for path in folder.rglob("*.pt.trace.json"):
        starts = sorted(e["ts"] for e in json.loads(path.read_text())["traceEvents"]
                        if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))
        periods |= {round(b - a, 3) for a, b in zip(starts, starts[1:])}
    assert len(periods) == 1, periods
    return periods.pop() / 1e3


def test_a_first_step_that_fills_its_gpus_queue_is_left_out(tmp_path: Path) -> None:
    """Walk seed 51232 without its buffer requests (truth by construction: every iteration alike, 2.844 ms host start
    to start on each rank).  Rank 1 is 1.89 ms late at each all-reduce, so rank 0's host opens each later step 0.51 ms
    before its GPU ends the all-reduce before, its launches queued behind it; its first step opens on an idle GPU and
    its kernels run at the host's pace: GPU 0's window #2 holds that lead once more (3.358 ms).  The first step is
    left out and every kept row is the period.  Fails on ba7d7f39: GPU 0 kept #2 at 3.358 ms."""
    job = randjobs.random_job(51232)
    job.params["buffer_requests"] = ()
    (report,) = reports_of(job, str(tmp_path))
    period = _mark_period_ms(tmp_path)
    h = report.hosts[0]
    rows = [(r.gpu, r.step, r.step_ms) for r in h.step_rows if r.gpu is not None]
    assert {g for g, _, _ in rows} == {0, 1} and {n for _, n, _ in rows} == {3, 4, 5, 6}
    assert all(ms == pytest.approx(period, rel=1e-3) for _, _, ms in rows), (period, rows)
    (drop,) = h.steps["dropped"]
    assert drop["step"] == 2 and "0.51 ms after its host's" in drop["reason"]


def test_the_merge_keeps_each_requests_rank(tmp_path: Path) -> None:
    """Reading two ranks' files as one trace, each GPU's own requests are those of its rank's file, though both files
    write them on pid -1 (``Trace.profiler_overhead_gpus``): rank 0's two in host steps #3 and #6 start before rank
    1's (0.2 ms late) in #4 and #7.  main kept no rank: the field did not exist."""
    sc = tt.Scenario(2, tt.ranks_requests({0: (3, 6), 1: (4, 7)}, 200.0, 40.0), [], [], "merged")
    paths = sorted(tt.write_run(str(tmp_path), sc, steps=8, run="merged"))
    t = read_trace(paths[0], ranks=paths)
    s, e = t.profiler_overhead
    own = {g: s[idx].tolist() for g, idx in t.profiler_overhead_gpus.items()}
    assert sorted(own) == [0, 1] and len(own[0]) == len(own[1]) == 2 and sorted(own[0] + own[1]) == s.tolist()
    r0, r1 = tt.simulate(sc, 8)
    starts = {r.rank: [ev["ts"] for ev in r.host if ev["name"] == "Activity Buffer Request"] for r in (r0, r1)}
    assert np.allclose(np.diff(own[1]) / 1e6, np.diff(starts[1])) and own[0][0] < own[1][0] < own[0][1] < own[1][1]
