"""A capture whose GPU side holds no work reads its iterations from the host's own marks.

``wild/cuda_unrecorded_cifar_cnn`` (0x-NaN/ml-profiler: one CIFAR CNN epoch, CUDA asked for, none recorded -- host ops
and the allocator's events on GPU 0 only) marks 16 batches with ``record_function`` ranges (``data_to_device`` /
``forward`` / ``backward``) after 11.9 s with no event (the DataLoader's two workers starting).  Main read it as "one
pass ... nothing repeats": the program's repeated spans were weighed by the GPU work they launch, and there is none.
The host's ops stand in for it (``job.structure.host_work_times``), and the stretch before the first batch is said as
what the trace shows.  The generator's epoch (``synthetic.torchtrace.write_host_marked_epoch``) holds the truth by
construction.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.common.fmt import ms
from tb_gpu_advisor.discover.logdir import discover
from tests.support.report_store import session_report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
_GPU_CHECKS = {"input_bound", "step_gaps", "host_sync", "launch_bound", "excessive_memcpy", "low_device_utilization"}


def _report(folder: Path, run: str) -> dict:
    (s,) = [s for s in discover(str(folder)) if s.run == run]
    return session_report(s).to_dict()


@pytest.fixture(scope="module")
def epochs(tmp_path_factory) -> dict[str, tuple[dict, dict]]:
    """The generator's epoch, its loader with worker processes and without."""
    out = tmp_path_factory.mktemp("host_marked")
    runs = {}
    for name, workers in (("workers", True), ("in_process", False)):
        (out / name).mkdir()
        truth = tt.write_host_marked_epoch(str(out / name / "h.35500.pt.trace.json"), iterations=12,
                                           startup_ms=3000.0, workers=workers)
        runs[name] = (truth, _report(out, name))
    return runs


def test_a_host_only_epochs_marked_batches_are_its_steps(epochs):
    truth, rep = epochs["workers"]
    st = rep["hosts"][0]["steps"]
    assert st["source"] == "annotation_spans", st
    assert (st["found"], st["count"]) == (truth["iterations"], truth["iterations"] - 2)  # first and last dropped
    rows = rep["hosts"][0]["step_rows"]
    assert [r["step_ms"] for r in rows] == pytest.approx([truth["iteration_ms"]] * len(rows), abs=1e-3)
    assert "host's ops" in st["note"] and "GPU work's launches" not in st["note"]


def test_the_time_before_the_first_batch_is_named(epochs):
    truth, rep = epochs["workers"]
    note = rep["hosts"][0]["steps"]["note"]
    assert f"the {ms(truth['startup_ms'])} before the first batch's fetch" in note, note
    assert "worker processes" in note
    _, rep = epochs["in_process"]
    note = rep["hosts"][0]["steps"]["note"]
    assert f"the {ms(truth['startup_ms'])} before the first batch's fetch" in note and "unrecorded host time" in note
    assert "worker" not in note.split("first batch's fetch")[1]


def test_no_gpu_check_fires_and_the_unrecorded_gpu_stays_top(epochs):
    for _, rep in epochs.values():
        ids = [f["rule"] for f in rep["findings"]]
        assert ids[0] == "capture_quality", ids
        assert not _GPU_CHECKS & set(ids), ids


def test_the_real_epochs_16_batches_and_its_workers_start_up():
    rep = _report(FIXTURES / "wild", "cuda_unrecorded_cifar_cnn")
    st = rep["hosts"][0]["steps"]
    assert (st["source"], st["found"], st["count"]) == ("annotation_spans", 16, 14), st
    assert "the 11.90 s before the first batch's fetch" in st["note"] and "worker processes" in st["note"], st["note"]
    ids = [f["rule"] for f in rep["findings"]]
    assert ids[0] == "capture_quality" and not _GPU_CHECKS & set(ids), ids


def test_profiler_steps_of_a_host_only_capture_stay_the_steps(tmp_path):
    """The control: ``ProfilerStep#N`` marks on a capture without GPU records are the format's own steps, as before."""
    (tmp_path / "run").mkdir()
    truth = tt.write_unrecorded_gpu_steps(str(tmp_path / "run" / "h.1.pt.trace.json"), steps=6, final_mark_us=None)
    st = _report(tmp_path, "run")["hosts"][0]["steps"]
    assert st["source"] == "profiler_step" and st["found"] == truth["steps"], st
