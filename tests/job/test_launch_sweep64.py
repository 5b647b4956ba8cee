"""A launch period whose repeats run one kernel at block sizes of their own over the same work is a sweep of launch
configurations, not one loop's steady steps: the steps are said to be the configurations (low confidence), and each
size's kernel time replaces "Step times vary ... not steady state" (issue #37: captures unlike ours -- a CUDA sample
program's benchmark; h37-huntnsys63's Left).

Real: kalfazed/tensorrt_starter ``2.4-error-handler/report1.sqlite`` (blob 17b40971; no licence: read locally from
/work/wild63/huntnsys63/kalfazed, the test skips where it is absent).  An RTX 3080: ``MatmulKernel`` over a 1024 x 1024
matrix (1,048,576 threads) six times -- a warm-up at 16x16, then 2x2, 4x4, 8x8, 16x16, 32x32 threads a block (kernel
1.18, 9.24, 2.90, 1.44, 1.17, 1.22 ms, read by hand with sqlite3) -- each run its own mallocs, two pageable uploads,
the launch, a blocking readback and a sync.  Base read "4 steps of 5.37 ms" at medium confidence and "Step times vary
by 62% ... the window is not steady state".

Truth by construction: ``synthetic.nsysexport.write_launch_sweep`` (the same program; its blocks, grids and kernel
times given).  Controls: the same program at one block size (a loop's steady turns), and one whose grid changes with a
fixed block (a loop over inputs of new sizes: its work changes with its grid).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host

REAL = Path("/work/wild63/huntnsys63/kalfazed/report1.sqlite")
SWEEP = "The steps are a sweep of launch configurations"


def _host(tmp_path: Path, **kw) -> tuple[dict, dict]:
    p = tmp_path / "sweep.sqlite"
    truth = nx.write_launch_sweep(str(p), **kw)
    return first_host(p), truth


def _sweep_finding(host: dict) -> dict | None:
    return next((f for f in host["findings"] if f["title"] == SWEEP), None)


def _each_size_timed(text: str, runs: list[dict], kept: range) -> None:
    """Every block size of the runs ``kept`` is named with its kernel time (the fastest run at that size)."""
    for t in {runs[i]["threads"] for i in kept}:
        best = min(r["kernel_ms"] for r in runs if r["threads"] == t)
        assert f"{best:.2f} ms at {t:,}" in text, (t, text)


def test_a_block_size_sweep_is_said_as_its_configurations(tmp_path):
    host, truth = _host(tmp_path)
    steps = host["steps"]
    assert steps["confidence"] == "low", steps
    assert "sweep of launch configurations" in steps["note"] and "1,048,576 threads" in steps["note"], steps["note"]
    f = _sweep_finding(host)
    assert f is not None, [x["title"] for x in host["findings"]]
    _each_size_timed(f["summary"], truth["runs"], range(len(truth["runs"])))
    titles = [x["title"] for x in host["findings"]]
    # neither "not steady" nor "too few steps": more runs of a sweep average nothing steadier
    assert "Step times are not steady" not in titles and "Too few steps in the capture" not in titles, titles


def test_grids_rounded_up_are_the_same_work(tmp_path):
    """A 1000 x 1000 problem: each grid rounds up to whole blocks, so the threads in all differ a little (1,000,000 to
    1,048,576) -- still one problem cut into blocks of each size."""
    host, truth = _host(tmp_path, n=1000, grid_of=lambda b: -(-1000 // b))
    assert {r["total"] for r in truth["runs"]} != {truth["runs"][0]["total"]}
    assert host["steps"]["confidence"] == "low" and _sweep_finding(host) is not None, host["steps"]


def test_trials_of_each_size_in_a_row_are_a_sweep(tmp_path):
    """A benchmark that times each block size three times in a row: the same kernel at 4 sizes, 12 runs."""
    blocks = tuple(b for b in (2, 4, 8, 16) for _ in range(3))
    host, truth = _host(tmp_path, blocks=blocks, kernel_ms=tuple(18.0 / b for b in blocks))
    assert host["steps"]["confidence"] == "low", host["steps"]
    f = _sweep_finding(host)
    assert f is not None, [x["title"] for x in host["findings"]]
    _each_size_timed(f["summary"], truth["runs"], range(1, len(blocks) - 1))


def test_control_one_block_size_is_a_loop(tmp_path):
    host, _ = _host(tmp_path, blocks=(16,) * 6, kernel_ms=(1.2,) * 6)
    assert host["steps"]["confidence"] == "medium" and "sweep" not in host["steps"]["note"], host["steps"]
    assert _sweep_finding(host) is None
    assert "Too few steps in the capture" in [x["title"] for x in host["findings"]]  # 4 kept of one loop: too few


def test_control_a_grid_that_grows_with_its_input_is_no_sweep(tmp_path):
    """A fixed 16x16 block over inputs of new sizes (a loop whose batches change shape): its grid and its work change
    together, its block does not -- no configuration is being compared."""
    sides = iter((64, 40, 72, 56, 64, 48))
    host, _ = _host(tmp_path, blocks=(16,) * 6, grid_of=lambda b: next(sides))
    assert "sweep" not in host["steps"]["note"] and _sweep_finding(host) is None, host["steps"]


@pytest.mark.skipif(not REAL.exists(), reason="kalfazed/tensorrt_starter report1.sqlite has no licence: local only")
def test_real_block_size_sweep():
    host = first_host(REAL)
    steps = host["steps"]
    assert steps["confidence"] == "low" and "5 block sizes (4 to 1,024 threads a block)" in steps["note"], steps
    f = _sweep_finding(host)
    assert f is not None, [x["title"] for x in host["findings"]]
    for words in ("9.24 ms at 4,", "2.90 ms at 16,", "1.44 ms at 64,", "1.17 ms at 256"):
        assert words in f["summary"], f["summary"]
    assert not any(x["title"] == "Step times are not steady" for x in host["findings"])
