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
(truth by construction); its control -- the same loop, one iteration a burst -- keeps its bursts as steps."""

from __future__ import annotations

import gzip
import json
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
    assert steps["source"] == "whole_capture", steps
    assert steps["count"] != truth["bursts"] - 2, steps  # no longer a "step" per burst
    assert f"the GPU's {truth['bursts']} bursts are no iterations" in steps["note"], steps["note"]
    assert "no kernel or copy runs in more than" in steps["note"], steps["note"]


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
    assert steps["source"] == "whole_capture", steps
    assert "bursts are no iterations" in steps["note"], steps["note"]
