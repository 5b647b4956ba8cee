"""NVTX ranges on a thread or a process other than the one launching the work they mark still time the steps and
name the job (issue #37 class 2, h37-probe45n; guards: main a3712eb4 reads them right).

``synthetic.nsysexport.write_marked_elsewhere``: a training loop of 12 ``train_step {k}`` steps (``forward`` /
``backward`` / ``optimizer_step`` inside) whose launches are all made by a side thread, or whose backward is launched
by another thread (autograd's engine), or whose ranks all run but only rank 0 marks ranges (``if rank == 0``).  The
launches belong to the range they fall in by time on the process, whichever thread made them; a rank that marks
nothing is timed by rank 0's ranges, and is no job of another kind.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.cli import main as cli


def _host(path: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        cli.main(["report", path, "--format", "json", "--cache-dir", "off"])
    return json.loads(out.getvalue())["reports"][0]["hosts"][0]


@pytest.mark.parametrize("launcher, ranks", [("side", 1), ("backward", 1), ("rank0", 2), ("rank0", 4)])
def test_ranges_time_the_steps_of_work_launched_elsewhere(tmp_path, launcher, ranks) -> None:  # noqa: ANN001
    """12 training steps (10 kept) of the written length on every GPU; the job training; every rank counted."""
    path = str(tmp_path / "elsewhere.sqlite")
    truth = nx.write_marked_elsewhere(path, launcher=launcher, ranks=ranks)
    host = _host(path)
    assert host["job"]["kind"] == "training"
    assert (host["steps"]["source"], host["steps"]["found"], host["steps"]["count"]) == ("nvtx_range", 12, 10)
    assert len(host["gpus"]) == ranks
    for row in host["step_rows"]:
        assert row["step_ms"] == pytest.approx(truth.step_ms, rel=0.01), row
