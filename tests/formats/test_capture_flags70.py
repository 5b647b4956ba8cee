"""Every window is a report, its capture advice in the syntax the capture tool takes (issue #37 deliverable 1,
h37-window70): the window fixes' command lines checked against the tools' own documentation.

* rocprof v1's ``--trace-period <delay:length:rate>``: "Supported time formats: <number(m|s|ms|us)>" (``rocprof -h``;
  the script's ``convert_time_val`` refuses a bare number with "invalid time value format"), and roctracer's tool
  (``tracer_tool.cpp``, ``ROCP_CTRL_RATE``) aborts on "control length value > rate value".  A start-up window was
  told ``--trace-period 5000:2000:0``: no unit on any value and a rate of 0 under a length of 2000 -- a command that
  stops before the program runs.
* Nsight Systems' ``--capture-range=nvtx --nvtx-capture=RANGE``: the capture range starts on a range whose name is a
  registered NVTX string unless ``NSYS_NVTX_PROFILER_REGISTER_ONLY=0`` (Nsight Systems User Guide, CLI profile
  options, ``--nvtx-capture``; the same variable session h37-tracingoff2 put beside its own NVTX capture range), and
  the ranges a program pushes by name (``torch.cuda.nvtx.range_push``, ``nvtxRangePushA``) are plain strings.  The
  window advice named the range without the variable: a capture that never opens.  It also needs NVTX traced
  (``-t`` holding ``nvtx``).

Truth by construction: ``synthetic.rocproftrace.write`` with no step (a window of the start-up's HIP calls),
``synthetic.nsysexport.write_window`` (start-up, NVTX only, no CUDA call); and every format's window fixes read as
text, so a fix added later in another form is held to the same syntax.
"""

from __future__ import annotations

import json
import re

import pytest

from synthetic import nsysexport as nx
from synthetic import rocproftrace as rt
from tb_gpu_advisor.formats import REGISTRY
from tests.support.cli_report import in_process

#: rocprof v1's time units (``rocprof -h``: ``<number(m|s|ms|us)>``), in microseconds
_UNIT_US = {"m": 60_000_000, "s": 1_000_000, "ms": 1_000, "us": 1}
_TIME = re.compile(r"^(\d+)(m|s|ms|us)$")
#: roctracer's ``convert_time_val`` limit: 0xffffffff us
_MAX_US = 0xFFFFFFFF


def _snippets(path: str) -> str:
    out = in_process("report", path, "--format", "json", "--cache-dir", "off")
    rep = json.loads(out.stdout)["reports"][0]
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    return "\n".join(a["snippet"] or "" for a in f["actions"])


def _trace_period_problems(text: str) -> list[str]:
    """What rocprof's script or roctracer would refuse in each ``--trace-period`` of ``text``."""
    problems = []
    for arg in re.findall(r"--trace-period[ =](\S+)", text):
        parts = arg.split(":")
        if len(parts) != 3:
            problems.append(f"{arg}: not delay:length:rate")
            continue
        us = []
        for p in parts:
            m = _TIME.match(p)
            if not m:
                problems.append(f"{arg}: {p!r} has no unit m|s|ms|us")
                break
            us.append(int(m.group(1)) * _UNIT_US[m.group(2)])
        else:
            if max(us) > _MAX_US:
                problems.append(f"{arg}: over rocprof's {_MAX_US} us")
            if us[1] > us[2]:
                problems.append(f"{arg}: length over rate (roctracer aborts)")
    return problems


def _nvtx_capture_problems(text: str) -> list[str]:
    """Each command line of ``text`` with an NVTX capture range that nsys would not open on a plain-string range, or
    that does not trace NVTX."""
    problems = []
    for line in text.splitlines():
        cmd = line.split("#")[0]
        if "--capture-range=nvtx" not in cmd:
            continue
        if "NSYS_NVTX_PROFILER_REGISTER_ONLY=0" not in cmd:
            problems.append(f"no NSYS_NVTX_PROFILER_REGISTER_ONLY=0: {cmd.strip()}")
        traced = re.search(r"(?:-t|--trace)[ =](\S+)", cmd)
        if not traced or "nvtx" not in traced.group(1).split(","):
            problems.append(f"NVTX not traced: {cmd.strip()}")
        if "--nvtx-capture=" not in cmd:
            problems.append(f"no --nvtx-capture: {cmd.strip()}")
    return problems


def test_a_rocprof_start_up_window_is_told_a_trace_period_rocprof_takes(tmp_path):
    """Base dbf6cf15: ``--trace-period 5000:2000:0`` (no unit; rate 0 under length 2000)."""
    p = tmp_path / "results.json"
    rt.write(str(p), [], upload_bytes=0, read_bytes=0)
    text = _snippets(str(p))
    assert "--trace-period" in text and "--trace-start off" in text, text
    assert _trace_period_problems(text) == [], text


@pytest.mark.parametrize("window", ["startup", "nvtx_only", "no_cuda_call"])
def test_an_nsight_window_told_an_nvtx_capture_range_can_open_it_on_a_plain_string_range(tmp_path, window):
    """Base dbf6cf15: ``nsys profile -t cuda,nvtx --capture-range=nvtx --nvtx-capture=step`` without the variable."""
    p = tmp_path / f"{window}.sqlite"
    nx.write_window(str(p), window)
    text = _snippets(str(p))
    assert "--capture-range=nvtx" in text, text
    assert _nvtx_capture_problems(text) == [], text


def _fix_texts() -> list[tuple[str, str]]:
    return [(f"{fmt.id}:{key}", text + "\n" + code) for fmt in REGISTRY.values()
            for key, fixes in (fmt.window_fixes or {}).items() for text, code in fixes]


def test_every_formats_window_fix_is_in_its_tools_syntax():
    """Every format's window fixes as written (rocprof, nsys, nvprof, rpd, Kineto...): the two flags above held to
    their tools' syntax wherever a fix names them (base: rocprof's startup/steady/long, nsys's startup/failed/
    teardown/no_cuda_call/nvtx_only/... each fail)."""
    problems = [f"{where}: {p}" for where, text in _fix_texts()
                for p in _trace_period_problems(text) + _nvtx_capture_problems(text)]
    assert problems == [], "\n".join(problems)


def test_control_the_checks_see_the_defects_they_name():
    """The checks themselves: base's two forms are refused, the documented forms pass."""
    assert _trace_period_problems("rocprof --hip-trace --trace-period 5000:2000:0 ./app")
    assert _trace_period_problems("rocprof --trace-period 5s:2s:1s ./app")  # length over rate
    assert not _trace_period_problems("rocprof --hip-trace --trace-period 5s:2s:60m ./app")
    assert _nvtx_capture_problems("nsys profile -t cuda,nvtx --capture-range=nvtx --nvtx-capture=step ./app")
    assert _nvtx_capture_problems("nsys profile -t cuda --capture-range=nvtx --nvtx-capture=step "
                                  "--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0 ./app")
    assert not _nvtx_capture_problems("nsys profile -t cuda,nvtx --capture-range=nvtx --nvtx-capture=step "
                                      "--env-var=NSYS_NVTX_PROFILER_REGISTER_ONLY=0 ./app   # x")
