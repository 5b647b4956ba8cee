"""A blocking copy's call -- "it returned only once its copy had ended" -- is tested in one place
(``job.period._returned_after``), for each reading that asks it (h37-tidy61; review60 *Left* 3).

Two readings asked it, each writing the comparison out: a program's reads of its results between turns without a
sync call (``_result_reads``: the solver's ``cudaMemcpyFromSymbol`` of its flag) and a native loop's read-back
period (``_read_backs``: the ``cudaMemcpy`` of its result each iteration).  Truth by construction (the Nsight
Systems generator's clocks): a loop of 10 iterations, each read back by a blocking ``cudaMemcpy``, and the solver's 7
turns each ending with a blocking ``cudaMemcpyFromSymbol`` (``tests/job/test_blocking_read_back.py``,
``tests/job/test_program_reads_flag60.py`` hold their readings).  Each reading keeps its counted steps with the one
test as it is and loses them once that test says no call waited: both readings go through it.  Fails on 3074f48d (no
``_returned_after``: the two readings compared the clocks each on its own)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.job import period
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _read_back_loop(tmp: Path) -> int:
    nx.write(str(tmp / "loop.sqlite"), nx.NsysJob(steps=10, ops=3, kernel_us=2000.0, d2h_us=50.0, d2h_bytes=4096,
                                                  step_range=None, autograd_nvtx=False, sync=False, shuffle=False))
    return 10


def _flag_solver(tmp: Path) -> int:
    return nx.write_counted_solver(str(tmp / "copy.sqlite"), read="copy")["turns"]


def _steps_found(tmp: Path) -> int:
    (s,) = discover(str(tmp))
    return analyze_session(s.run, s.session, s.hosts).to_dict()["hosts"][0]["steps"]["found"]


@pytest.mark.parametrize("write", [_read_back_loop, _flag_solver], ids=["read-back loop", "solver's flag reads"])
def test_each_blocking_read_reading_asks_the_one_test(write, tmp_path: Path, monkeypatch) -> None:
    turns = write(tmp_path)
    asked: list[int] = []
    one_test = period._returned_after

    def counted(call_end: np.ndarray, work_end: np.ndarray, late: int) -> np.ndarray:
        asked.append(len(call_end))
        return one_test(call_end, work_end, late)

    monkeypatch.setattr(period, "_returned_after", counted)
    assert _steps_found(tmp_path) == turns and asked
    monkeypatch.setattr(period, "_returned_after", lambda call_end, work_end, late: np.zeros(len(call_end), bool))
    assert _steps_found(tmp_path) != turns  # no call waited for its copy: neither reading holds


def test_the_one_test_allows_the_gpu_clock_reading_late() -> None:
    """A call that returned 2 us before its copy's recorded end waited where the GPU's clock may read 3 us late, not
    where it may read 1 us late; a call that returned after its copy's end waited either way."""
    call_end, work_end = np.array([10_000_000, 20_000_000]), np.array([12_000_000, 19_000_000])
    assert period._returned_after(call_end, work_end, 3_000_000).tolist() == [True, True]
    assert period._returned_after(call_end, work_end, 1_000_000).tolist() == [False, True]
