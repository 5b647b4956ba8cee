"""The input wait's words: what the capture records holding the host time before each step's first op (issue #37
item 4, h37-survey37's "Left for the lead").

The assumption was that where no input pipeline event is recorded, the host time before each step's first op is an
untraced loader, whatever the capture records there.  But ``with_stack`` records the program's own Python frames, and
a program marks its own ranges: they say what holds that time, and so whether it is input at all.

* TimeSformer's Hugging Face pipeline (``timesformer_h100_video``): its ``preprocess`` frame (PyAV decoding, the image
  processor) holds 215 of the 215.4 ms before the first op -- the step prepares its input itself; was "stands for an
  untraced loader", with no fix for it.
* xDiT's Flux pipeline (``xdit_flux_mi300x_denoise``): the 11.8 ms "Waiting for input" is diffusers'
  ``_execution_device`` (10.7 ms, walking its offload hooks to find the device) -- a framework's own work, not the
  prompt's tokenizer (0.3 ms): not input.
* A range the program names for fetching its batch (``get_batch``; TorchRec's ``## copy_batch_to_gpu ##``) with no
  kernel launched inside is its input pipeline as the DataLoader's ``__next__`` is: was "not measured" where the steps
  are no marked ones, and an untraced loader's lead on ``torchrec_a100_stalls``.

Truth read off each file's own JSON (the frames' own times), or by construction (``synthetic.autograd_nvtx``).
Controls: a lead nothing records stays an untraced loader; the DataLoader's ``__next__`` reads as before; a range whose
name says nothing of a batch is no input.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import autograd_nvtx as an
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics
from tests.support.paths import FIXTURES

WILD = FIXTURES / "wild"
TIMESFORMER = WILD / "timesformer_h100_video"
XDIT = WILD / "xdit_flux_mi300x_denoise"


def _trace(d: Path) -> Path:
    return next(d.glob("*.json*"))


def _lead_and_frame(d: Path, frame: str) -> tuple[float, float]:
    """(ms from the profiler's step marker to its first ATen op, ms of ``frame`` inside that stretch), read off the
    trace's own events."""
    ev = json.loads(gzip.decompress(_trace(d).read_bytes()))["traceEvents"]
    step = next(e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    t0 = step["ts"]
    first = min(e["ts"] for e in ev if e.get("cat") == "cpu_op" and t0 <= e["ts"] < t0 + step["dur"])
    f = next(e for e in ev if e.get("cat") == "python_function" and e["name"] == frame and t0 <= e["ts"] < first)
    return (first - t0) / 1e3, (min(f["ts"] + f["dur"], first) - max(f["ts"], t0)) / 1e3


def _report(d: Path) -> dict:
    p = str(_trace(d))
    return analyze_session("w", "s", [SimpleNamespace(host="h0", path=p, format="kineto",
                                                      size=os.path.getsize(p))]).to_dict()["hosts"][0]


def _card(host: dict) -> dict:
    return next(c for c in host["headline"] if c["id"] == "input_wait_share")


def test_a_pipelines_preprocess_frame_is_named_as_the_input_it_prepares() -> None:
    lead, held = _lead_and_frame(TIMESFORMER, "transformers/pipelines/video_classification.py(129): preprocess")
    f = next(f for f in _report(TIMESFORMER)["findings"] if f["rule"] == "input_bound")
    # main: "the capture records no input pipeline event, so that time stands for an untraced loader"
    assert "preprocess (video_classification.py:129)" in f["summary"]
    assert "untraced loader" not in f["summary"].replace("not an untraced loader", "")
    # and what it spends its time in: PyAV decoding (the image processor's call, longer, before it)
    assert "read_video_pyav (video_classification.py:174)" in f["summary"]
    # the fix fits it: prepare the input off the step's path, naming the frame
    assert "preprocess (video_classification.py:129)" in f["actions"][0]["text"]
    assert "DataLoader worker" in f["actions"][0]["text"]
    m = host_metrics(read_trace(str(_trace(TIMESFORMER))))
    assert m.input.source == "before_first_op"
    name, frame_ms, is_input = m.input.frames[0]
    assert name.endswith(": preprocess") and is_input
    assert frame_ms == pytest.approx(held, abs=0.05)
    # the number is the lead's still: the frame is input, time no frame covers stays an untraced loader's
    assert m.breakdown.input_wait == pytest.approx(lead, abs=0.2)


def test_a_frameworks_own_work_before_the_first_op_is_not_input() -> None:
    lead, held = _lead_and_frame(XDIT, "diffusers/pipelines/pipeline_utils.py(1135): _execution_device")
    host = _report(XDIT)
    # main: the whole lead (11.8 ms) was "waiting for input"; diffusers' _execution_device is no input preparation
    assert host["breakdown_ms"]["input_wait"] <= lead - held + 0.05
    card = _card(host)
    frames = {h["frame"].rsplit(": ", 1)[-1]: h for h in card["detail"]["held_by"]}
    assert frames["_execution_device"]["input"] is False
    assert frames["_execution_device"]["ms_per_step"] == pytest.approx(held, abs=0.05)
    assert frames["__call__"]["input"] is True  # the prompt's tokenizer (tokenization_utils_base.py) is input
    assert "_execution_device" in card["display"]
    # the ledger books the step still: the time moved, none lost
    before = sum(host["breakdown_ms"].values())
    assert before == pytest.approx(sum(r["step_ms"] for r in host["step_rows"][:1]), rel=0.01)


def test_a_torchrec_pipelines_batch_ranges_are_its_input_pipeline() -> None:
    """TorchRec's train pipeline marks its batch's fetch and copy (``## copy_batch_to_gpu ##``, ``## wait_for_batch ##``)
    and records no DataLoader event: those ranges are its input pipeline, and the input wait lies inside them."""
    d = WILD / "torchrec_a100_stalls"
    ev = [e for e in json.loads(gzip.decompress(_trace(d).read_bytes()))["traceEvents"] if e.get("ph") == "X"]
    steps = [e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
    ranges = [e for e in ev if e.get("cat") == "user_annotation" and e["name"] in ("## copy_batch_to_gpu ##",
                                                                                    "## wait_for_batch ##")]
    most = max(sum(r["dur"] for r in ranges if s["ts"] <= r["ts"] < s["ts"] + s["dur"]) for s in steps) / 1e3
    m = host_metrics(read_trace(str(_trace(d))))
    # main: "before_first_op", 18 us of a lead no event names; the ranges' time went to the host's own work
    assert m.input.source == "pipeline"
    assert 0 < m.breakdown.input_wait <= most  # a part never above its whole


def _nvtx_host(tmp_path, **kw) -> dict:  # noqa: ANN001
    p = str(tmp_path / "job.sqlite")
    an.write(p, kw.pop("form", "emit_nvtx"), **kw)
    return analyze_session("w", "s", [SimpleNamespace(host="h0", path=p, format="nsys",
                                                      size=os.path.getsize(p))]).to_dict()["hosts"][0]


@pytest.mark.parametrize("form", ["emit_nvtx", "megatron"])
def test_a_range_the_program_names_for_fetching_its_batch_is_input(tmp_path, form: str) -> None:  # noqa: ANN001
    """By construction: 400 us of the program's own loading a step inside its ``get_batch`` range, no DataLoader."""
    host = _nvtx_host(tmp_path, form=form, loader=False, user_range="get_batch")
    card = _card(host)
    # main: "n/a: not measured" (no pipeline event, the steps no marked ones)
    assert card["value"] is not None
    assert 0.2 <= host["gpus"][0]["breakdown"]["input_wait"] <= 0.41


def test_control_a_range_named_for_other_work_is_no_input(tmp_path) -> None:  # noqa: ANN001
    host = _nvtx_host(tmp_path, loader=False, user_range="log_metrics")
    assert _card(host)["value"] is None


def test_control_the_dataloaders_next_reads_as_before(tmp_path) -> None:  # noqa: ANN001
    """With the DataLoader's ``__next__`` inside the range, the wait is its time (402 us a step by construction)."""
    host = _nvtx_host(tmp_path, user_range="get_batch")
    assert host["gpus"][0]["breakdown"]["input_wait"] == pytest.approx(0.402, abs=0.005)


def test_control_a_lead_nothing_records_stays_an_untraced_loader() -> None:
    """Control (a real H200 capture): a step marker's lead with no frame, range or op recorded in it keeps its words."""
    d = FIXTURES / "h200_waits" / "torch_unrecorded_host_work"
    f = next(f for f in _report(d)["findings"] if f["rule"] == "input_bound")
    assert "stands for an untraced loader" in f["summary"]
    assert not host_metrics(read_trace(str(_trace(d)))).input.frames


def test_control_a_recorded_dataloader_reads_as_before() -> None:
    """Control (a real capture): the DataLoader's ``__next__`` recorded, the wait is its time, in the same words."""
    d = WILD / "resnet_rtx2080ti_slow_workers"
    m = host_metrics(read_trace(str(_trace(d))))
    assert m.input.source == "pipeline" and not m.input.frames
    f = next(f for f in _report(d)["findings"] if f["rule"] == "input_bound")
    assert "the input pipeline's own time" in f["summary"]
