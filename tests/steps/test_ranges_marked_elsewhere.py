"""NVTX ranges on a thread or a process other than the one launching the work they mark still time the steps and
name the job (issue #37 class 2, h37-probe45n; guards: main a3712eb4 reads them right).

``synthetic.nsysexport.write_marked_elsewhere``: a training loop of 12 ``train_step {k}`` steps (``forward`` /
``backward`` / ``optimizer_step`` inside) whose launches are all made by a side thread, or whose backward is launched
by another thread (autograd's engine), or whose ranks all run but only rank 0 marks ranges (``if rank == 0``).  The
launches belong to the range they fall in by time on the process, whichever thread made them; a rank that marks
nothing is timed by rank 0's ranges, and is no job of another kind.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_host


@pytest.mark.parametrize("launcher, ranks", [("side", 1), ("backward", 1), ("rank0", 2), ("rank0", 4)])
def test_ranges_time_the_steps_of_work_launched_elsewhere(tmp_path, launcher, ranks) -> None:  # noqa: ANN001
    """12 training steps (10 kept) of the written length on every GPU; the job training; every rank counted."""
    path = str(tmp_path / "elsewhere.sqlite")
    truth = nx.write_marked_elsewhere(path, launcher=launcher, ranks=ranks)
    host = first_host(path)
    assert host["job"]["kind"] == "training"
    assert (host["steps"]["source"], host["steps"]["found"], host["steps"]["count"]) == ("nvtx_range", 12, 10)
    assert len(host["gpus"]) == ranks
    for row in host["step_rows"]:
        assert row["step_ms"] == pytest.approx(truth.step_ms, rel=0.01), row
