"""GPU bursts in which no work recurs are pieces of iterations, not iterations (h37-survey59, issue #37 class 4:
steps the loop really took).

The real class: willding123/Shift-Equivariant-Vision-Transformers ``trace.json`` @fdc9ac61 (MIT, kept:
``wild/cold_loop_a4000_swin``) -- a shifted-window block's test loop profiled from the process's start on an RTX
A4000 with CUDA activities only: 16 iterations (each a device copy of the input, two 20-byte read-backs, an upload, a
``grid_sampler`` and the block's forward), the first ones cut into single-event bursts by each kernel's first launch
(5.54 s in one ``cudaLaunchKernel``; the context's ``cudaFree`` 3.0 s), the last eleven run in 154 ms, several to a
burst.  Main cut 85 bursts and kept 74 "steps" of 10.9 ms ("some of the same work running in several of them").

The wrong assumption: bursts are iterations as soon as any work runs in two of them.  An iteration is the loop's body,
and the body runs in every iteration, so bursts that are iterations share work with nearly all the others; here the
most widespread kernel runs in 35 of the 83 inner bursts.  Built by ``synthetic.torchtrace.write_cuda_only_warming_loop``
(truth by construction); its control -- the same loop, one iteration a burst -- keeps its bursts as steps.

Session 30 (h37-coldloop30): the pass was then read whole -- "start-up only: one pass of 11.96 s, no steady step" --
though it holds 16 iterations, the last ten or so warm.  The wrong assumption: *an unmarked loop whose bursts are no
iterations holds none that can be timed*.  Some of its work runs exactly once in every iteration, in the same order (the
input's device copy, the upload, ``grid_sampler``, three index kernels: 16 runs each, one in each of the 16
iterations), while the rolls between them vary; those runs open the iterations (``steps.recurring``, low
confidence)."""

from __future__ import annotations

import gzip
import json
from itertools import pairwise
from pathlib import Path

from synthetic.torchtrace import write_cuda_only_warming_loop
from tests.support.cli_report import first_host
from tests.support.paths import FIXTURES

REAL = FIXTURES / "wild" / "cold_loop_a4000_swin"


def _write(tmp_path: Path, **kw: object) -> tuple[Path, dict]:
    path = tmp_path / "run" / "a10g.pt.trace.json"
    path.parent.mkdir(parents=True)
    return path, write_cuda_only_warming_loop(str(path), **kw)  # type: ignore[arg-type]


def test_a_warming_loops_bursts_are_no_iterations(tmp_path: Path):
    path, truth = _write(tmp_path)
    assert truth["bursts"] > truth["iterations"]  # the cold iterations' pieces outnumber the iterations
    steps = first_host(path)["steps"]
    assert steps["source"] != "gpu_busy_clusters", steps
    assert steps["count"] != truth["bursts"] - 2, steps  # no longer a "step" per burst
    assert f"the GPU's {truth['bursts']} bursts are no iterations" in steps["note"], steps["note"]
    assert "no kernel or copy runs in more than" in steps["note"], steps["note"]


def test_a_warming_loops_iterations_are_read_from_the_work_run_once_in_each(tmp_path: Path):
    path, truth = _write(tmp_path)
    host = first_host(path)
    steps = host["steps"]
    assert (steps["source"], steps["found"], steps["confidence"]) == ("recurring_events", truth["iterations"], "low")
    assert "run once in each of 16 turns" in steps["note"] and "as one pass" not in steps["note"], steps["note"]
    rows = {r["step"]: r["step_ms"] for r in host["step_rows"]}
    assert rows and all(abs(ms - truth["period_ms"][k]) < 1e-3 for k, ms in rows.items()), (rows, truth["period_ms"])
    assert not any(f["severity"] == "critical" for f in host["findings"])  # steps that are a guess: nothing critical


def test_control_one_iteration_a_burst_stays_steps(tmp_path: Path):
    path, truth = _write(tmp_path, cold=0, per_burst=1)
    assert truth["bursts"] == truth["iterations"]
    steps = first_host(path)["steps"]
    assert steps["source"] == "gpu_busy_clusters", steps
    assert steps["count"] >= truth["iterations"] - 2, steps
    assert "are no iterations" not in steps["note"]


def test_a_real_test_loop_cut_by_first_launches_is_no_74_steps():
    (path,) = REAL.glob("*.pt.trace.json.gz")
    events = [e for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("ph") == "X"]
    samplers = [e for e in events if e.get("cat") == "Kernel" and "grid_sampler_2d" in e["name"]]
    uploads = [e for e in events if e["name"].startswith("Memcpy HtoD")]
    assert len(samplers) == len(uploads) == 16  # the loop's 16 iterations, each one upload and one grid sampler
    steps = first_host(REAL)["steps"]
    assert steps["source"] != "gpu_busy_clusters" and steps["count"] != 74, steps
    assert "bursts are no iterations" in steps["note"], steps["note"]


def test_a_real_test_loops_16_iterations_are_timed_from_the_work_run_once_in_each():
    """By hand from the raw events: the input's device copy (``Memcpy DtoD``) runs first in each of the 16
    iterations, and every upload and ``grid_sampler`` lies between one device copy and the next."""
    (path,) = REAL.glob("*.pt.trace.json.gz")
    events = [e for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("ph") == "X"]
    opens = sorted(e["ts"] for e in events if e["name"].startswith("Memcpy DtoD"))
    for name in ("Memcpy HtoD", "grid_sampler_2d"):
        runs = sorted(e["ts"] for e in events if e.get("cat") in ("Memcpy", "Kernel") and name in e["name"])
        assert len(runs) == len(opens) == 16 and all(a <= b < c for a, b, c in zip(opens, runs, opens[1:] + [1e30]))
    period_ms = [(b - a) / 1000.0 for a, b in pairwise(opens)]
    host = first_host(REAL)
    steps = host["steps"]
    assert (steps["source"], steps["found"]) == ("recurring_events", 16), steps
    rows = {r["step"]: r["step_ms"] for r in host["step_rows"]}
    assert len(rows) >= 5 and all(abs(ms - period_ms[k]) < 0.01 for k, ms in rows.items()), (rows, period_ms)
    # the first iteration holds the 11 s start-up: never a step
    assert 0 not in rows and 0 in {d["step"] for d in steps["dropped"]}
