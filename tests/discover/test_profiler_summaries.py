"""A profiler's text summary -- DeepSpeed's Flops Profiler output, torch.profiler's op table -- in a logdir or given by
path is named for what it is (totals, not a trace) with the capture that records a timeline, never the silent "no GPU
profiles found" nor "not a profile this tool reads" (probe h37-probe43d: main said exactly those of a logdir holding
``flops_profiler.txt`` and of the file itself).

The files are built by construction from the tools' documented output: DeepSpeed's banner and first lines as its
Flops Profiler tutorial shows them (microsoft/DeepSpeed docs/_tutorials/flops-profiler.md), torch.profiler's table
header as ``key_averages().table()`` writes it (torch/autograd/profiler_util.py ``_build_table``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tb_gpu_advisor.cli.main import main as cli
from tests.support.paths import FIXTURES

DEEPSPEED = """
-------------------------- DeepSpeed Flops Profiler --------------------------
Profile Summary at step 10:
Notations:
data parallel size (dp_size), model parallel size(mp_size),
number of parameters (params), number of multiply-accumulate operations(MACs),

world size:                                                   1
batch size per GPU:                                           80
params per gpu:                                               336.23 M
fwd latency:                                                  76.67 ms
"""
TORCH_TABLE = """\
-------------------------------------------------------  ------------  ------------  ------------  ------------
                                                   Name    Self CPU %      Self CPU   CPU total %     CPU total
-------------------------------------------------------  ------------  ------------  ------------  ------------
                                            aten::addmm        41.20%       1.203ms        55.10%       1.609ms
"""
TORCH_TABLE_OVERLOADS = TORCH_TABLE.replace("Name    Self CPU %", "Name  Overload Name    Self CPU %")
KINETO = FIXTURES / "h200_jobs" / "torch_compile_train" / "vm_928.1795791326637701346.pt.trace.json.gz"


def _error(target: Path, capsys) -> str:
    assert cli(["report", str(target), "--cache-dir", "off"]) == 2  # nothing to analyse: the same exit code as before
    return capsys.readouterr().err


@pytest.mark.parametrize("name,text,tool", [("flops_profiler.txt", DEEPSPEED, "DeepSpeed's Flops Profiler"),
                                            ("fit-perf.txt", TORCH_TABLE, "op table"),
                                            ("summary_0.log", TORCH_TABLE_OVERLOADS, "op table")])
def test_a_summary_in_a_logdir_is_named(tmp_path: Path, capsys, name: str, text: str, tool: str):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / name).write_text(text)
    err = _error(tmp_path, capsys)
    assert f"run/{name}" in err and tool in err and "not a trace" in err and "tensorboard_trace_handler" in err
    assert "no GPU profiles found" not in err


def test_a_summary_given_by_path_is_named(tmp_path: Path, capsys):
    path = tmp_path / "flops_profiler.txt"
    path.write_text(DEEPSPEED)
    err = _error(path, capsys)
    assert "DeepSpeed's Flops Profiler" in err and "not a trace" in err
    assert "not a profile this tool reads" not in err


def test_control_other_text_still_gets_the_capture_help(tmp_path: Path, capsys):
    """A README, a training log: no summary, so the logdir is one without profiles, as before."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "README.txt").write_text("Name  of the run: baseline\nSelf CPU % is not here\n")
    (tmp_path / "run" / "train.log").write_text("step 1 loss 2.3\n" * 50)
    err = _error(tmp_path, capsys)
    assert "no GPU profiles found" in err and "README" not in err


@pytest.mark.skipif(not KINETO.is_file(), reason="fixture not here")
def test_control_a_trace_beside_the_summary_is_read(tmp_path: Path, capsys):
    """Lightning's PyTorchProfiler writes its op table beside its trace: the trace is read, the summary not in the way."""
    (tmp_path / "run").mkdir()
    shutil.copy(KINETO, tmp_path / "run" / KINETO.name)
    (tmp_path / "run" / "fit-perf.txt").write_text(TORCH_TABLE)
    assert cli(["report", str(tmp_path), "--cache-dir", "off"]) == 0
