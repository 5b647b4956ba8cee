"""Step annotations of several ranks in Kineto files, unnumbered and numbered: the Kineto build of h37-probe46r's
part 3 (its Nsight build is ``tests/metrics/test_rank_own_one_time.py::
test_a_late_ranks_unnumbered_steps_align_with_the_others_by_time``; the numbering it fixed,
``steps.ranges._first_step_beside``, is ``tests/steps/test_unnumbered_rank_steps.py``).

By construction (``synthetic.torchtrace.write_rank_pause(ranks=2, late=L)``: two ranks of one node, each its own
file, rank 1 loading a module once at the head of its ``ProfilerStep#<RANK_PAUSE_STEP>``, rank 1's capture opened L
steps after rank 0's), every ``ProfilerStep#k`` annotation renamed as a user names its own step range:
``record_function("train_step")`` -- a ``user_annotation`` with no number -- or ``record_function(f"train_step {k}")``.
Truth: the ``ProfilerStep#k`` reading of the same files (each rank's steps its own, 3.2 ms of compute each step on
each GPU; steps ``#2`` .. ``#13``, the first and last dropped, the steps before rank 1's capture opened dropped and
said, the module load's step dropped as warm-up).

BASE (2e24ba35) read the unnumbered annotations as the program's repeated spans (``job.structure.span_steps``: one
thread's instances by time, the other rank's GPU placed on them): GPU 0's kept steps after rank 1's module load
0.0 ms of compute (late 2: steps 1, 2 of 3.2 ms, 4-8 of 0.0; late 0: 6-10 of 0.0).  And each numbered
``train_step {k}`` a name of its own: the launches' period (``repeated_launches``), GPU 1 of the late-2 build 0.0 ms
in steps 1 and 5-10.  Now both read as step-named ranges (``steps.nvtx_ranges._annotation_steps``), each rank's on
its own thread, numbered by their counter or beside the others' (h37-probe47k).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import ran_report

COMPUTE_MS = 3.2  # each rank's kernels a step, by construction (``rank_pause``)


def _host(logdir: Path, late: int, step_name: str | None) -> dict[str, Any]:
    """The one host's report of ``write_rank_pause(ranks=2, late=late)``, each ``ProfilerStep#k`` annotation (host and
    GPU) renamed ``step_name`` (its ``{k}`` the step's number; None: kept)."""
    for path in tt.write_rank_pause(str(logdir), ranks=2, late=late):
        doc = json.loads(Path(path).read_text())
        for e in doc["traceEvents"]:
            m = re.fullmatch(r"ProfilerStep#(\d+)", e.get("name", ""))
            if step_name is not None and m:
                e["name"] = step_name.format(k=m.group(1))
        tt.write_doc(path, doc)
    code, report = ran_report(logdir)
    assert code in (0, 1)
    (host,) = report["hosts"]
    return host


def _compute(host: dict[str, Any], gpu: int) -> list[float]:
    """Each kept step's compute (ms) on ``gpu``, in step order."""
    return [r["breakdown"].get("device_compute", 0.0) for r in sorted(host["step_rows"], key=lambda r: r["step"])
            if r["gpu"] == gpu]


@pytest.mark.parametrize("late", [2, 3])
def test_the_numbered_reading_is_the_truth(tmp_path: Path, late: int) -> None:
    """Control (the truth): ``ProfilerStep#k`` on each rank -- every kept step 3.2 ms of compute on each GPU, none
    before rank 1's capture opened (``ProfilerStep#<2 + late>``), said in the note."""
    host = _host(tmp_path, late, None)
    assert host["steps"]["source"] == "profiler_step"
    for g in (0, 1):
        assert _compute(host, g) == pytest.approx([COMPUTE_MS] * (9 - late + 1), abs=2e-3), g
        assert min(r["step"] for r in host["step_rows"] if r["gpu"] == g) == 2 + late, g
        assert _steps(host, g) == _kept(late, 2), g
    assert "before GPU1's capture opened" in host["steps"]["note"]


def _kept(late: int, first: int) -> list[int]:
    """The kept steps' numbers by construction, the loop's ``ProfilerStep#2`` numbered ``first``: of steps ``#2`` ..
    ``#13``, the first and the last dropped, those before rank 1's capture opened (``#<2 + late>``), and the module
    load's (``RANK_PAUSE_STEP``, the warm-up)."""
    return [k - 2 + first for k in range(3, 13) if k >= 2 + late and k != tt.RANK_PAUSE_STEP]


def _steps(host: dict[str, Any], gpu: int) -> list[int]:
    """The kept steps' numbers on ``gpu``, in order."""
    return sorted(r["step"] for r in host["step_rows"] if r["gpu"] == gpu)


@pytest.mark.parametrize("late", [0, 2, 3])
def test_a_late_ranks_unnumbered_annotations_read_as_the_numbered_steps(tmp_path: Path, late: int) -> None:
    """Truth: as the numbered reading -- as many kept steps on each GPU, each of 3.2 ms compute, numbered by rank 0's
    order (its first ``train_step`` step 0, rank 1's first beside rank 0's range of its time), and the note says rank
    1's capture opened late.  BASE: GPU 0 0.0 ms after rank 1's module load (``annotation_spans``)."""
    (tmp_path / "numbered").mkdir()
    (tmp_path / "plain").mkdir()
    truth = _host(tmp_path / "numbered", late, None)
    plain = _host(tmp_path / "plain", late, "train_step")
    assert plain["steps"]["source"] == "nvtx_range"
    assert plain["steps"]["source_label"] == "record_function step ranges"
    for g in (0, 1):
        assert _compute(plain, g) == pytest.approx(_compute(truth, g), abs=2e-3), g
        assert _compute(plain, g) == pytest.approx([COMPUTE_MS] * len(_kept(late, 0)), abs=2e-3), g
        assert _steps(plain, g) == _kept(late, 0), g
    assert ("before GPU1's capture opened" in plain["steps"]["note"]) == (late > 0)


@pytest.mark.parametrize("late", [0, 2, 3])
def test_numbered_annotations_are_steps_that_carry_their_numbers(tmp_path: Path, late: int) -> None:
    """``record_function(f"train_step {k}")`` (k the loop's ``ProfilerStep`` number) reads as the ``ProfilerStep#k``
    reading: the names one counted range, each rank's steps its own and numbered k, 3.2 ms of compute on each GPU.
    BASE: each number a name of its own, ``repeated_launches``, late 2: GPU 1 0.0 ms in steps 1 and 5-10."""
    host = _host(tmp_path, late, "train_step {k}")
    assert host["steps"]["source"] == "nvtx_range"
    assert "`train_step 2` … `train_step 13`" in host["steps"]["note"]
    for g in (0, 1):
        assert _steps(host, g) == _kept(late, 2), g
        assert _compute(host, g) == pytest.approx([COMPUTE_MS] * len(_kept(late, 2)), abs=2e-3), g
    assert ("before GPU1's capture opened" in host["steps"]["note"]) == (late > 0)


def _one_rank(logdir: Path, step_name: str | None, nested: bool = False) -> dict[str, Any]:
    """The report of ``write_rank_pause(ranks=1, paused=None)`` (one rank, no module load), its ``ProfilerStep#k``
    annotations renamed ``step_name`` (None: kept); ``nested``: each host one holding another of its name 1 us inside
    it (a decorated step calling a decorated helper of the same name)."""
    for path in tt.write_rank_pause(str(logdir), ranks=1, paused=None):
        doc = json.loads(Path(path).read_text())
        inner = []
        for e in doc["traceEvents"]:
            if step_name is not None and re.fullmatch(r"ProfilerStep#\d+", e.get("name", "")):
                e["name"] = step_name
                if nested and e.get("cat") == "user_annotation":
                    inner.append({**e, "ts": e["ts"] + 1.0, "dur": e["dur"] - 2.0})
        doc["traceEvents"] += inner
        tt.write_doc(path, doc)
    code, report = ran_report(logdir)
    assert code in (0, 1)
    (host,) = report["hosts"]
    return host


@pytest.mark.parametrize("nested", [False, True])
def test_one_ranks_annotations_read_as_its_profiler_steps(tmp_path: Path, nested: bool) -> None:
    """Control, one rank: its ``train_step`` annotations read as its ``ProfilerStep#k`` (as many kept steps, 3.2 ms
    of compute each, numbered from 0), a ``train_step`` nested in another one call, not a step of its own."""
    (tmp_path / "numbered").mkdir()
    (tmp_path / "plain").mkdir()
    truth = _one_rank(tmp_path / "numbered", None)
    plain = _one_rank(tmp_path / "plain", "train_step", nested)
    assert plain["steps"]["source"] == "nvtx_range"
    assert plain["steps"]["found"] == truth["steps"]["found"] == 12
    assert _compute(plain, 0) == pytest.approx(_compute(truth, 0), abs=2e-3)
    assert _compute(plain, 0) == pytest.approx([COMPUTE_MS] * truth["steps"]["count"], abs=2e-3)
    assert _steps(plain, 0) == [k - 2 for k in _steps(truth, 0)]
