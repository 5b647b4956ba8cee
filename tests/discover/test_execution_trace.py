"""PyTorch's execution trace (``ExecutionTraceObserver``, Chakra's and PARAM's et_replay input) is named for what it is
-- each op's inputs, shapes and dependencies, no GPU kernel or device time -- with the profiler trace to give instead,
never "JSON without traceEvents: not a trace" (survey h37-survey29: PARAM keeps three beside the Kineto traces
recorded with them; the one here is real, ``tests/fixtures/foreign/PROVENANCE.md``)."""

from __future__ import annotations

import json
import shutil

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import skipped
from tests.support.paths import FIXTURES

ET = FIXTURES / "foreign" / "pt2_execution_trace" / "pt2_et.json"
TRACE = FIXTURES / "wild" / "mlp_rtx2080ti_from_start" / "linear_trace.24248.pt.trace.json.gz"


def _named(words: str) -> bool:
    return "execution trace" in words and "ExecutionTraceObserver" in words and ".pt.trace.json" in words


def test_an_execution_trace_given_alone_is_named_with_the_trace_to_give(capsys):
    assert cli(["report", str(ET), "--cache-dir", "off"]) == 2
    err = capsys.readouterr().err
    assert _named(err) and "without traceEvents" not in err


def test_an_execution_trace_in_a_logdir_is_left_out_with_its_name(tmp_path):
    run = tmp_path / "logdir" / "run"
    run.mkdir(parents=True)
    shutil.copy(ET, run / "rank0_et.json")
    shutil.copy(TRACE, run / TRACE.name)  # the profiler trace beside it is read; the execution trace is named
    skips = dict(skipped(str(tmp_path / "logdir")))
    assert _named(skips["run/rank0_et.json"]) and not any(TRACE.name in k for k in skips)


def test_an_execution_trace_under_a_trace_name_says_what_it_is(tmp_path, capsys):
    """Saved under the handler's name, it is read as a trace and fails: the error says what the file is."""
    path = tmp_path / "run" / "worker0.1.pt.trace.json"
    path.parent.mkdir()
    shutil.copy(ET, path)
    assert cli(["report", str(path), "--cache-dir", "off"]) == 2
    out = capsys.readouterr()
    assert _named(" ".join((out.out + out.err).split()))


def test_other_json_with_a_schema_key_is_no_execution_trace(tmp_path):
    """Control: a JSON document whose first key is also "schema" but holds no ``nodes`` keeps the plain words."""
    run = tmp_path / "logdir" / "cfg"
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps({"schema": "2.0", "pid": 7, "layers": [1, 2]}))
    assert dict(skipped(str(tmp_path / "logdir")))["cfg/config.json"] == "JSON without traceEvents: not a trace"
