"""Another tool's trace in Chrome's JSON array form is named as such, not "JSON without traceEvents: not a trace"
(survey h37-survey11: siwaarbn/grof's ``gpu_trace.json``, a bare list of 300 copy and kernel events its own CUPTI
tracer wrote).  Truth by construction: the same three events as that file's first, in the array form, and an object
with ``traceEvents`` that is no PyTorch trace as the control."""

from __future__ import annotations

import json

from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.formats.kineto.layout import sniff

EVENTS = [{"name": "[MEMCPY] HtoD", "ph": "X", "ts": 1773534654823498.5, "dur": 8118.707, "pid": 1, "tid": 7,
           "args": {"correlationId": 1, "externalId": 1}},
          {"name": "void at::native::vectorized_elementwise_kernel<4, ...>", "ph": "X", "ts": 1773534654845422.2,
           "dur": 292.0, "pid": 1, "tid": 7, "args": {"correlationId": 2, "externalId": 3}},
          {"name": "[MEMCPY] DtoH", "ph": "X", "ts": 1773534654845721.8, "dur": 64176.254, "pid": 1, "tid": 7,
           "args": {"correlationId": 3, "externalId": 5}}]


def test_an_array_of_events_is_another_tools_trace(tmp_path):
    path = tmp_path / "gpu_trace.json"
    path.write_text(json.dumps(EVENTS, indent=2))
    why = sniff(str(path))
    assert why is not None and "Chrome's JSON array form" in why and "torch.profiler" in why


def test_the_cli_says_so_for_the_file_given_alone(tmp_path, capsys):
    path = tmp_path / "gpu_trace.json"
    path.write_text(json.dumps(EVENTS))
    assert cli(["report", str(path), "--cache-dir", "off"]) == 2
    assert "Chrome's JSON array form" in capsys.readouterr().err


def test_other_json_is_still_no_trace(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps([{"lr": 0.1}, {"phase": "train"}]))
    assert sniff(str(path)) == "JSON without traceEvents: not a trace"
    path.write_text(json.dumps({"traceEvents": EVENTS}))
    assert "not PyTorch's" in sniff(str(path))
