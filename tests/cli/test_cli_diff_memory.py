"""``tb-gpu-advisor diff`` of memory snapshots: its exit codes (issue #37 item 5).

A snapshot records allocations and no GPU work: two of them are compared by memory (was: exit 2, "no step
time"), and the gate (``--fail-on-regression``) has no step to judge, only their memory; a snapshot beside a trace that records
no memory compares nothing, an input error (exit 2) that says why on stderr.
"""

from __future__ import annotations

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.cli import main as cli
from tests.support.paths import REPO

TRACE_WITHOUT_MEMORY = next((REPO / "tests" / "fixtures" / "h200_jobs" / "torch_compile_train").glob("*.pt.trace.json.gz"))


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-snapshots")
    for run, grad in (("autograd", True), ("inference", False)):
        ms.write(str(d / run / "rank0.pickle"), ms.forward_only(grad=grad).doc)
    return d


@pytest.mark.parametrize("base, new", [("autograd", "inference"), ("inference", "autograd")])
def test_two_snapshots_are_compared_and_the_gate_judges_their_memory(logdir, base, new, capsys):
    """Either way round: compared by memory, never an error.  The gate has no step to judge; since h37-snap3 it
    judges memory (tests/cli/test_cli_diff_memory_gate.py): inference -> autograd grows the peak and fails it (was:
    exit 0 both ways, the gate on step time alone), autograd -> inference frees memory and passes."""
    rc = cli.main(["diff", str(logdir), "--base", base, "--new", new, "--fail-on-regression", "0", "--cache-dir", "off"])
    out, err = capsys.readouterr()
    assert rc == (1 if new == "autograd" else 0), err
    assert "GPU MEMORY (GPU0)" in out and "error" not in err
    assert ("regression: memory: GPU 0 peak allocated" in err) == (new == "autograd")


def test_a_snapshot_beside_a_trace_without_memory_exits_2_saying_why(logdir, capsys):
    rc = cli.main(["diff", str(logdir / "autograd" / "rank0.pickle"), str(TRACE_WITHOUT_MEMORY), "--cache-dir", "off"])
    _, err = capsys.readouterr()
    assert rc == 2
    assert "error: nothing to compare: the base side records memory and no GPU work" in err
    assert "records no memory of its GPUs" in err and "no step time" not in err
