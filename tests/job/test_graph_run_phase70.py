"""A tf.function graph's run is no op's first call: the eager runtime's inner layer of the graph call
(``EagerKernelExecute``, the same name under every eager op) holds the graph's whole run, and compared with the
callbacks' eager ops' layers of that name it read as a slow first call (h37-hunt70e *Left* 2, issue #37 class 1).

The real capture, kept (Apache-2.0): awslabs/sagemaker-debugger's ``utils/ip-172-31-19-241.trace.json`` @7e7aad69
(``wild/tf_keras_input_ops_8gpu``).  Read by hand: its 63.9 ms ``train_function`` holds ``EagerExecute`` >
``EagerLocalExecute: __inference_train_function_7724`` (63.4 ms) > ``EagerKernelExecute`` (62.5 ms) on the Python
thread, the graph's ``FunctionRun`` (62.4 ms) on an executor thread; no compile event anywhere (no ``XlaCompile``,
``_XlaCompile``).  The four later ``EagerKernelExecute`` (0.01-0.05 ms) are the TensorBoard callback's eager
``LogicalAnd``, ``Identity``, ``WriteSummary``, ``FlushSummaryWriter``.  Base read "start-up only", "phase warm-up
(94% of the window in one-time costs)".  Control, by construction on the same file: an XLA compile recorded inside the
graph call (40 ms) stays a one-time cost, the compile op named as a graph's op is
(``cluster_0_1/xla_compile:_XlaCompile``: base read no compile in it, only the graph's run as a slow first op call) or
as the runtime's bare ``XlaCompile``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.support.cli_report import cli_report

_WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"
_RUN = _WILD / "tf_keras_input_ops_8gpu"
_FILE = "plugins/profile/2020_05_11_14_26_57/ip-172-31-19-241.trace.json.gz"


def test_a_graph_calls_run_is_no_slow_first_op_call():
    job = cli_report(_RUN)["hosts"][0]["job"]
    assert job["phase"] != "warm-up", job
    ev = job.get("phase_evidence") or ""
    assert "EagerKernelExecute" not in ev and "__inference_train_function" not in ev, ev


@pytest.mark.parametrize("name, long_name", [("_XlaCompile", "cluster_0_1/xla_compile:_XlaCompile"),
                                             ("XlaCompile", None)])
def test_control_an_xla_compile_inside_the_graph_call_stays_one_time(tmp_path: Path, name: str, long_name: str | None):
    src = _RUN / _FILE
    doc = json.loads(gzip.decompress(src.read_bytes()))
    ev = doc["traceEvents"]
    layer = next(e for e in ev if e.get("name") == "EagerKernelExecute")  # the graph call's, the first
    ev.append({"ph": "X", "pid": layer["pid"], "tid": layer["tid"], "ts": layer["ts"] + 100, "dur": 40000,
               "name": name, "args": {"long_name": long_name} if long_name else {}})
    out = tmp_path / "run" / Path(_FILE).parent
    out.mkdir(parents=True)
    (out / src.name).write_bytes(gzip.compress(json.dumps(doc).encode()))
    job = cli_report(tmp_path / "run")["hosts"][0]["job"]
    assert job["phase"] in ("warm-up", "mixed"), job
    assert name in job["phase_evidence"], job["phase_evidence"]
