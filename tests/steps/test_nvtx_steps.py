"""Steps from NVTX ranges (``steps.detect`` source ``nvtx_range``), on synthetic Nsight exports whose steps are known
by construction, and the cases where NVTX must mark no step: framework ops only (autograd NVTX), library ranges
(NCCL), a range that runs once or twice."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.frameworks import nvtx
from tb_gpu_advisor.steps.detect import detect_steps
from tests.support.paths import SHARED_PROFILES


def _steps(tmp_path, job: NsysJob, name: str = "job.sqlite"):
    p = tmp_path / name
    truth = write(str(p), job)
    return detect_steps(read_trace(str(p))), truth


@pytest.mark.parametrize("pattern", ["train_step {k}", "iteration {k}", "step", "Step#{k}"])
def test_a_range_named_like_a_step_marks_the_steps(tmp_path, pattern):
    s, truth = _steps(tmp_path, NsysJob(steps=8, step_range=pattern))
    det = s.detection
    assert det.source == "nvtx_range" and "named like a step" in det.note and det.confidence == "high"
    assert det.found == 8 and s.count == 6  # first (warm-up) and last dropped, as for every host source
    assert np.diff(s.host_windows, axis=1).ravel() / 1e9 == pytest.approx(truth.step_ms, rel=1e-3)
    if "{k}" in pattern:
        assert s.ids.tolist() == list(range(1, 7))  # the numbers the names carry


def test_ranks_ranges_of_one_step_are_one_step(tmp_path):
    s, truth = _steps(tmp_path, NsysJob(steps=8, ranks=2))
    assert s.detection.found == 8 and "2 threads" in s.detection.note
    assert set(s.gpu_windows) == {0, 1}


def test_most_repeated_top_level_range(tmp_path):
    """No range named like a step: the user's top-level blocks (`forward`, `backward`, once per step) mark the steps;
    the first of the tied names starts each step."""
    s, truth = _steps(tmp_path, NsysJob(steps=7, step_range=None, extra_ranges=("forward", "backward")))
    det = s.detection
    assert det.source == "nvtx_top_range" and "`forward`, the most repeated top-level range" in det.note
    assert det.confidence == "medium"
    assert det.found == 7
    assert np.diff(s.host_windows[:, 0]) / 1e9 == pytest.approx(truth.step_ms, rel=1e-3)


def test_autograd_ops_alone_mark_no_step(tmp_path):
    """Under --pytorch=autograd-nvtx every ATen op is a range; ops repeat far more often than steps and must not be
    taken for them: the busy clusters (or the whole capture) decide."""
    s, _ = _steps(tmp_path, NsysJob(steps=6, step_range=None))
    assert not s.detection.source.startswith("nvtx")


def test_a_range_seen_twice_marks_no_step(tmp_path):
    p = tmp_path / "job.sqlite"
    write(str(p), NsysJob(steps=6, step_range=None, autograd_nvtx=False))
    con = sqlite3.connect(p)
    tid = 1 << 48 | 1000 << 24 | 1000
    for a in (40_000_000_000, 40_100_000_000):
        con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?, ?, 59, 'setup', ?)",
                    (a, a + 1000, tid))
    con.commit()
    con.close()
    assert not detect_steps(read_trace(str(p))).detection.source.startswith("nvtx")


def test_a_repeated_range_that_launches_little_marks_no_step(tmp_path):
    """A block that repeats but holds little of the GPU work is no iteration (issue #37 item 2): DLProf's capture of a
    LeNet forward (MohanadOdema/DLProf, unlicensed, so not kept here) has ten top-level ranges, one per parameter of
    ``model.cuda()``, each around one copy, and the forward's 46 kernels outside them -- main took those ten for the
    steps.  Here ten ``load_weights`` ranges around no launch follow six real steps: the steps come from the GPU's
    work, not from them."""
    p = tmp_path / "job.sqlite"
    write(str(p), NsysJob(steps=6, step_range=None, autograd_nvtx=False))
    con = sqlite3.connect(p)
    (last,) = con.execute("SELECT MAX(end) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()
    tid = 1 << 48 | 1000 << 24 | 1000
    for k in range(10):
        a = last + (k + 1) * 1_000_000
        con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?, ?, 59, 'load_weights', ?)",
                    (a, a + 500_000, tid))
    con.commit()
    con.close()
    det = detect_steps(read_trace(str(p))).detection
    assert not det.source.startswith("nvtx"), det.note


def test_library_ranges_mark_no_step(tmp_path):
    p = tmp_path / "job.sqlite"
    write(str(p), NsysJob(steps=6, step_range=None, autograd_nvtx=False, extra_ranges=("ncclGroupStart", "ncclGroupEnd")))
    assert not detect_steps(read_trace(str(p))).detection.source.startswith("nvtx")


def test_profiler_step_ranges(tmp_path):
    s, _ = _steps(tmp_path, NsysJob(steps=8, step_range="ProfilerStep#{k}, op_id = 5"))
    assert s.detection.source == "nvtx_range" and "ProfilerStep#N" in s.detection.note
    assert s.ids.tolist() == list(range(1, 7))


def test_step_names():
    yes = ["step", "train_step", "training_step 12", "iteration 3", "iter_7", "Step#4", "batch 12", "Iteration"]
    no = ["optimizer.step", "lr_scheduler.step", "forward", "train", "data", "backward", "steps", "zero_grad step"]
    assert [n for n in yes if not nvtx.is_step_name(n)] == []
    assert [n for n in no if nvtx.is_step_name(n)] == []
    assert nvtx.op_name("aten::mm, seq = 1, op_id = 2, sizes = [[2, 3]]") == ("aten::mm", True)
    assert nvtx.op_name("FSDP::pre_forward (encoder.block.9), op_id = 3") == ("FSDP::pre_forward (encoder.block.9)", True)
    assert nvtx.op_name("forward") == ("forward", False)


@pytest.mark.skipif(not (SHARED_PROFILES / "nsys").is_dir(), reason="real Nsight exports not here")
def test_real_windows_have_no_nvtx_steps():
    """The real exports are time slices not aligned to steps, with autograd ranges only: no NVTX steps there."""
    for p in sorted((SHARED_PROFILES / "nsys").glob("*/*.sqlite")):
        assert detect_steps(read_trace(str(p))).detection.source in ("gpu_busy_clusters", "whole_capture")


def _wrap_in_one_range(path, name: str) -> None:
    """Put the whole run inside one range of the user's that runs once (``generate`` around its tokens)."""
    con = sqlite3.connect(path)
    lo, hi = con.execute("SELECT MIN(start), MAX(end) FROM NVTX_EVENTS").fetchone()
    tid = 1 << 48 | 1000 << 24 | 1000
    con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?, ?, 59, ?, ?)",
                (lo - 1000, hi + 1000, name, tid))
    con.commit()
    con.close()


@pytest.mark.parametrize("wrapped", [False, True])
def test_a_loop_numbered_inside_its_names_marks_the_steps(tmp_path, wrapped):
    """A loop whose ranges carry its counter inside the name (``token_6_processing``; a real export of an LLM
    inference simulation, Sh1mwww/llama3-inference, unlicensed, names its 64 tokens so, each holding eight
    ``layer_L_token_T`` blocks), possibly inside one range that runs once around the whole loop: the numbered ranges
    are one name, and the outermost one that repeats marks the steps -- not the blocks inside each (``forward``), nor
    the GPU's bursts (main cut that export into 512 one-layer "steps")."""
    p = tmp_path / "job.sqlite"
    truth = write(str(p), NsysJob(steps=8, step_range="token_{k}_processing", autograd_nvtx=False,
                                  extra_ranges=("forward", "sample")))
    if wrapped:
        _wrap_in_one_range(p, "layer_processing_simulation")
    s = detect_steps(read_trace(str(p)))
    det = s.detection
    assert det.source == "nvtx_top_range" and "`token_0_processing`" in det.note, det.note
    assert ("outermost repeated" in det.note) == wrapped
    assert det.found == 8 and s.count == 6
    assert np.diff(s.host_windows, axis=1).ravel() / 1e9 == pytest.approx(truth.step_ms, rel=1e-3)


def test_a_small_helper_repeated_all_through_the_run_marks_no_step(tmp_path):
    """A library's helper range called all through the run below one outer range (nvFuser's ``isResharding``, 481
    times on 7 threads of the kept wild/nvfuser_h200_first_call) spans the GPU work without holding it: the launches
    fall between its instances, not inside them, so it marks no step (it did for a moment on this branch: 405
    "steps" of 678 us)."""
    p = tmp_path / "job.sqlite"
    write(str(p), NsysJob(steps=6, step_range=None, autograd_nvtx=False))
    con = sqlite3.connect(p)
    lo, hi = con.execute("SELECT MIN(start), MAX(end) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    launches = sorted(a for (a,) in con.execute("SELECT start FROM CUPTI_ACTIVITY_KIND_RUNTIME"))
    tid = 1 << 48 | 1000 << 24 | 1000
    rows = [(a - 300, a - 100, "isResharding", tid) for a in launches[1::7]]  # just before some launches
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?, ?, 59, ?, ?)", rows)
    con.commit()
    con.close()
    _wrap_in_one_range(p, "runFusionWithInputs")
    det = detect_steps(read_trace(str(p))).detection
    assert not det.source.startswith("nvtx"), det.note


_ASKED: list[str] = []
_IS_LIBRARY_RANGE = nvtx.is_library_range


def _counted_library_range(name: str, domain: str = "") -> bool:
    """``nvtx.is_library_range``, recording each name asked (a module-level function: ``per_name`` remembers it)."""
    _ASKED.append(name)
    return _IS_LIBRARY_RANGE(name, domain)


def test_library_ranges_are_asked_once_per_name(tmp_path, monkeypatch):
    """The job's tool ranges, the NVTX steps and the breakdown's user ranges all ask which names are a library's:
    one pass over the names (issue #38: 235 k `train_step N` names on a 1 GB export)."""
    from tb_gpu_advisor.runtime.pipeline import host_metrics

    p = tmp_path / "job.sqlite"
    write(str(p), NsysJob(steps=8, step_range="train_step {k}", extra_ranges=("ncclGroupStart", "ncclGroupEnd")))
    monkeypatch.setattr(nvtx, "is_library_range", _counted_library_range)
    _ASKED.clear()
    trace = read_trace(str(p))
    m = host_metrics(trace)
    assert m.steps.source == "nvtx_range" and m.steps.found == 8
    assert sorted(_ASKED) == sorted(trace.h.names)  # every name once
