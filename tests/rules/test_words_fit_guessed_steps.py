"""On steps that are a guess, the findings' words fit their grade and the report's step time (issue #37: every piece
of advice fitting what the report already knows; h37-wordsfit30).

h37-coldloop30 timed the cold Swin loop of ``wild/cold_loop_a4000_swin`` by the GPU work that runs once an iteration
(``steps/recurring.py``, low confidence): "10 steps, step 21.3 ms".  Read by hand (h37-coldloop30's periods, device
copy to device copy): the kept iterations' median is 3.7 ms, and two host pauses of 82.5 and 99.1 ms hold most of
the 21.3 ms mean.  Two wrong assumptions:

* *a finding's words about its grade are said once, by the grading that caps it*: the mixed-precision and Tensor Core
  findings, capped from critical to warning on the guessed steps ("A warning, not critical: it rests on steps that
  are a guess"), were then made notes by the savings' floor (~1% of the step) and printed "[INFO] ... A warning";
* *the unsteady-steps note says enough by its spread*: "vary by 164%" beside "step 21.3 ms" never said the median
  step is 3.7 ms and two steps lift the mean.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.runtime.pipeline import analyze_session

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def _host(path: str) -> dict:
    return analyze_session("run", "s", [SimpleNamespace(host="h", path=path, format="kineto", size=0)]
                           ).to_dict()["hosts"][0]


@pytest.fixture(scope="module")
def cold_loop() -> dict:
    return _host(str(next((WILD / "cold_loop_a4000_swin").glob("*.pt.trace.json*"))))


def _unsteady(host: dict) -> str:
    (f,) = [f for f in host["findings"] if f["title"] == "Step times are not steady"]
    return f["summary"]


def _median_and_long(summary: str) -> tuple[float, int, float, float]:
    m = re.search(r"the median \w+(?: \w+)? is ([\d.]+) ms, and the (\d+ longest \w+(?: \w+)?|longest \w+(?: \w+)?) "
                  r"\(([\d.]+) ms(?: to ([\d.]+) ms)?\) lifts? it to ", summary)
    assert m is not None, summary  # main: "Step times vary by 164% (...): the window is not steady state ..."
    lo = float(m.group(3))
    return float(m.group(1)), 1 if m.group(2).startswith("longest") else int(m.group(2).split()[0]), lo, float(m.group(4) or lo)


def test_no_finding_on_guessed_steps_names_a_grade_above_its_own(cold_loop):
    assert cold_loop["steps"]["confidence"] == "low"
    assert not any(f["severity"] == "critical" for f in cold_loop["findings"])
    notes = [f for f in cold_loop["findings"] if f["severity"] == "info"]
    assert any("it rests on steps that are a guess" in f["summary"] for f in notes)  # the reason is kept
    for f in notes:
        assert "A warning" not in f["summary"], (f["title"], f["summary"])  # main: "[INFO] ... A warning, not critical"


def test_the_unsteady_note_names_the_median_and_the_pauses_of_the_real_loop(cold_loop):
    median, n, lo, hi = _median_and_long(_unsteady(cold_loop))
    assert median == pytest.approx(3.7, abs=0.05)  # the hand reading's median iteration
    assert n == 2 and lo == pytest.approx(82.5, abs=0.1) and hi == pytest.approx(99.1, abs=0.1)  # the two pauses


def test_the_unsteady_note_names_a_generated_loop_s_pauses(tmp_path):
    """``paused_loop``: steady steps of ``PAUSED_KERNELS * PAUSED_KERNEL_US`` on the GPU, two of them ``PAUSE_US``
    longer: the median is a steady step's, and exactly the two paused steps set the mean."""
    paths = tt.write_run(str(tmp_path), tt.Scenario(1, tt.paused_loop, [], [], "paused"), steps=12, run="run")
    median, n, lo, hi = _median_and_long(_unsteady(_host(paths[0])))
    steady = tt.PAUSED_KERNELS * tt.PAUSED_KERNEL_US / 1000.0
    assert steady <= median <= steady * 1.05  # its launches aside, a steady step
    assert n == len(tt.PAUSED_STEPS)
    assert lo == pytest.approx(median + tt.PAUSE_US / 1000.0, rel=0.01) and hi == lo


def test_control_an_even_spread_names_no_median(tmp_path):
    """``uneven_loop``: steps alternating 1 and 9 kernels vary by ~80%, evenly around the mean: the unsteady note
    stands, and says nothing of a median."""
    paths = tt.write_run(str(tmp_path), tt.Scenario(1, tt.uneven_loop, [], [], "uneven"), steps=12, run="run")
    summary = _unsteady(_host(paths[0]))
    assert "median" not in summary, summary
