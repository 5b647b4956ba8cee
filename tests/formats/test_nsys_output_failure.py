"""A program's failure written to its standard output is read by its words (issue #37, h37-survey8 and h37-left9).

The real case (SamuelAmsih/CUDA ``report8.sqlite`` @f7fa02c3, a Jetson Orin, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``): a jetson-utils camera program could not open its camera; jetson-utils' ``LogError``
wrote ``[video]  videoSource -- failed to parse command line options`` in red to **standard output**, the program then
set up its display, made two ``cudaMallocManaged`` calls (the context) and returned.  Main read only standard error
for a failure, so the window read "ended during start-up ... start the window where the steps run".

By construction (``synthetic.nsysexport.write_window(streams=)``): the same start-up window, the failure planted in
either stream; the controls are a warning that says it went on, and a measured error a numerical program prints.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.base import reported_failure
from tests.support.cli_report import first_host

JETSON = ("\x1b[0;31mURI -- failed to parse V4L2 device ID from /dev/video\n"
          "\x1b[0m\x1b[0;31m[video]  videoSource -- failed to parse command line options\n"
          "\x1b[0m[OpenGL] glDisplay -- X screen 0 resolution:  1920x1200\n"
          "[OpenGL] glDisplay -- display device initialized (1920x1200)\n"
          "\x1b[0;32m[video]  created glDisplay from display://0\n\x1b[0m  -- numBuffers: 4\n  -- zeroCopy:   true\n")


def _job(path: str) -> dict:
    return first_host(path)["job"]


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_failure_reported_in_either_stream_is_why_nothing_launched(tmp_path, stream: str) -> None:  # noqa: ANN001
    path = str(tmp_path / "report8.sqlite")
    nx.write_window(path, "startup", process="./ex1", streams={stream: JETSON})
    job = _job(path)
    assert "videoSource -- failed to parse command line options" in job["kind_evidence"]
    assert "\x1b" not in job["kind_evidence"]
    assert ("standard output" if stream == "stdout" else "standard error") in job["kind_evidence"]
    assert "likely" in job["kind_evidence"]


@pytest.mark.parametrize("text", [
    "2021-03-01 W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
    "'libnvinfer.so.7'\nepoch 1\n",
    "UserWarning: cannot import apex, falling back\n",
    "loaded 1000 images\nMax error: 0.000012\n",
])
def test_a_warning_or_a_measured_error_is_no_failure(tmp_path, text: str) -> None:  # noqa: ANN001
    """Controls: a line that calls itself a warning went on; an error printed as a number is a result."""
    path = str(tmp_path / "report.sqlite")
    nx.write_window(path, "startup", process="./app", streams={"stdout": text})
    job = _job(path)
    assert "failure" not in job["kind_evidence"] and "stopped with an error" not in job["kind_evidence"]
    assert job["kind_evidence"].startswith("start-up only")


def test_an_error_report_as_the_last_words_of_standard_output_is_the_failure(tmp_path) -> None:  # noqa: ANN001
    path = str(tmp_path / "report.sqlite")
    nx.write_window(path, "startup", process="./app", streams={"stdout": "reading input\nError: cannot open data.bin\n"})
    job = _job(path)
    assert "stopped with an error" in job["kind_evidence"] and "(its standard output" in job["kind_evidence"]


def test_the_words_not_the_colour_make_the_failure() -> None:
    assert reported_failure(JETSON) == "[video]  videoSource -- failed to parse command line options"
    assert reported_failure("\x1b[0;31mdisplay ready\x1b[0m\n") == ""
