"""A window whose CUDA side went untraced takes the job's kind from the user's NVTX ranges however the capture shows
CUDA went untraced -- its recorded options, or (an export that records none) the driver seen in the program's
process -- and never says "the capture's options had it off" where the export records no options.

Real: YijiaZhao/NVTX-example ``quickstart.sqlite`` @3351c13 (blob bedb4f37; no licence: read locally from
/work/wild63/huntnsys63/yijia, the test skips where it is absent; h37-huntnsys63).  Nsight Systems 2022.1 (no
``META_DATA_CAPTURE``), 4 V100s listed: ``nvtx_torch.py`` trains a LeNet on MNIST with ``Batch N`` ranges, each
holding ``Load Data`` (168-180 ms), ``Forward`` (4-10 ms), ``Calculate Loss/Sync``, ``Backward`` (7.9 ms; the first
356 ms) and ``SGD`` (1.35 ms), 4 iterations (its stdout prints 4 loss lines); no CUDA table, the driver's
``cuda-EvtHandlr`` thread in its ``python`` process.  Base: "GPU work of an unknown kind [low: ... which name work
only training does: `Backward` x4 ...]" with the fix "the capture's options had it off".

Truth by construction: ``synthetic.nsysexport.write_window(range_names=...)``; control: the same ranges under options
that say CUDA tracing was off read training on base too.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.runtime.pipeline import analyze_session

TRAINING = ("Load Data", "Forward", "Calculate Loss/Sync", "Backward", "SGD")
REAL = Path("/work/wild63/huntnsys63/yijia/quickstart.sqlite")


def _host(path) -> dict:
    hosts = [SimpleNamespace(host="h0", path=str(path), format="nsys", size=os.path.getsize(path))]
    (host,) = analyze_session("w", "s", hosts).to_dict()["hosts"]
    return host


def _fix_text(host: dict) -> str:
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality"]
    return " ".join(a["text"] + " " + (a.get("snippet") or "") for a in f["actions"])


def _window_title(host: dict) -> str:
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality"]
    return f["title"]


def test_training_ranges_beside_the_drivers_thread_make_the_kind(tmp_path):
    p = tmp_path / "untraced_train.sqlite"
    nx.write_window(str(p), "nvtx_only", ranges=4, driver_thread="program", options=False, range_names=TRAINING)
    host = _host(p)
    job = host["job"]
    assert job["kind"] == "training" and job["gpu_unrecorded"] is True, job
    assert "cuda-EvtHandlr" in job["kind_evidence"] and _window_title(host).startswith("CUDA tracing was off"), job


def test_no_options_recorded_no_options_claimed(tmp_path):
    p = tmp_path / "untraced_train.sqlite"
    nx.write_window(str(p), "nvtx_only", ranges=4, driver_thread="program", options=False, range_names=TRAINING)
    text = _fix_text(_host(p))
    assert "options had it off" not in text and "does not record which APIs were traced" in text, text
    assert "-t cuda" in text


def test_control_options_that_say_tracing_was_off(tmp_path):
    p = tmp_path / "off_train.sqlite"
    nx.write_window(str(p), "tracing_off", ranges=4, range_names=TRAINING)
    host = _host(p)
    assert host["job"]["kind"] == "training" and _window_title(host).startswith("CUDA tracing was off"), host["job"]
    assert "does not record which APIs" not in _fix_text(host)


def test_control_untraced_ranges_naming_no_work_stay_unknown(tmp_path):
    p = tmp_path / "untraced.sqlite"
    nx.write_window(str(p), "nvtx_only", driver_thread="program", options=False)
    assert _host(p)["job"]["kind"] == "unknown"


@pytest.mark.skipif(not REAL.exists(), reason="YijiaZhao/NVTX-example quickstart.sqlite has no licence: kept locally")
def test_real_cpu_lenet_ranges_read_training():
    host = _host(REAL)
    job = host["job"]
    assert job["kind"] == "training" and job["gpu_unrecorded"] is True, job
    assert "`Backward` ×4" in job["kind_evidence"], job
    assert "options had it off" not in _fix_text(host)
