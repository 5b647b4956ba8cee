"""A real two-process CS336 DDP export (``fixtures/nsys_ranks/ddp_overlap_rtx3090.sqlite.gz``, SOURCE.md there):
its one measured iteration is the step, and its ranks are not "GPUs run the step one after another".

Truth read off the file itself with plain SQL, independent of the Advisor: the step runs from the earliest
``forward pass`` range's start to the latest ``backward pass`` range's end (538.9 ms), the GPU work those ranges launched
ending inside it; main read the whole 3.37 s window (process-group start-up, model, broadcast) as the step, with a
critical host-bound finding made of that set-up and `sequential_gpus` telling a DDP job to run one process per GPU."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor import rules
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import DDP_EXPORT, gunzipped

FIXTURE = DDP_EXPORT


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> Path:
    return gunzipped(FIXTURE, tmp_path_factory.mktemp("ddp"), "ddp53_profile.sqlite")


def _pass_ms(path: Path) -> float:
    """The measured iteration by the program's own ranges, from the file's NVTX table."""
    con = sqlite3.connect(path)
    try:
        (s,), = con.execute("SELECT min(start) FROM NVTX_EVENTS WHERE text = 'forward pass'").fetchall()
        (e,), = con.execute("SELECT max(end) FROM NVTX_EVENTS WHERE text = 'backward pass'").fetchall()
    finally:
        con.close()
    return (e - s) / 1e6


def test_the_measured_iteration_is_the_step(export):
    m = host_metrics(reader.read_trace(str(export)))
    truth = _pass_ms(export)
    assert truth == pytest.approx(538.9, abs=1.0)
    assert m.job.kind.kind == "training" and m.steps.count == 1
    assert m.headline.avg_step_ms == pytest.approx(truth, rel=0.02)  # main: 3,371.7 ms, the whole window
    assert "`forward pass`, `backward pass`" in m.steps.note


def test_ranks_are_not_sequential_gpus_and_the_cold_pass_leads(export):
    m = host_metrics(reader.read_trace(str(export)))
    assert m.multi_gpu.one_process_per_gpu
    found = rules.evaluate(m)
    assert "sequential_gpus" not in {f.rule for f in found}
    assert "unexplained_idle" not in {f.rule for f in found}  # main: critical, 2.52 s of set-up as "host-bound"
    assert found[0].rule == "cold_start"  # module loading inside the measured forward (115 ms `cuLibraryLoadData`)
