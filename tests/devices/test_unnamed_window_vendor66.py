"""A window with no GPU record and no call of a known runtime speaks no vendor's words unless its file shows one
(issue #37 class 1; h37-vendor64's *Left* 2, h37-vendor66).

Truth by construction (``synthetic.torchtrace.write_vendor_windows`` in the ``unknown`` / ``unknown_named`` forms:
no ``deviceProperties`` or a model no table knows, no CUDA version keys, an unknown runtime's calls, no kernel, op or
backend only one vendor's software names).  On base (c079d51f) ``job.kind`` read the runtime of a window whose GPU
side went unrecorded as ``devices.vendor_of_calls([])`` -- NVIDIA, the default -- and the rules' words of a window
in which no GPU ran work as ``devices.vendor_called(None)``, NVIDIA's: "no CUDA call ... CUPTI", "Nsight",
``torch.cuda``.  Where the file does show a vendor -- PyTorch's cuDNN ops (``aten::cudnn_convolution``, a CUDA
build's only: wild ``cuda_unrecorded_cifar_cnn``), MIOpen's (ROCm's) -- that vendor's words stay or are taken.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import devices
from tests.support.contradictions import vendor_words_problems
from tests.support.run_report import doc_host, fresh_report

#: The windows whose report said NVIDIA's words on base in both no-vendor forms: two that lost their GPU side
#: (CUDA activity off; a data-parallel loop's host ops alone), two whose GPU ran nothing (the profiler's calls, the
#: loop's end).
_BASE_NVIDIA = ("write_cuda_activity_off", "write_unrecorded_gpu_steps", "write_profiler_calls_only",
                "write_loop_ended")


def _window(tmp_path: Path, writer: str, form: str):
    (run,) = tt.write_vendor_windows(str(tmp_path / "logs"), writers=(writer,), forms=(form,))
    return fresh_report(tmp_path / "logs" / run)


@pytest.mark.parametrize("form", ["unknown", "unknown_named"])
@pytest.mark.parametrize("writer", _BASE_NVIDIA)
def test_a_window_that_names_no_vendor_speaks_no_vendors_words(tmp_path: Path, writer: str, form: str) -> None:
    """The vendor law held to the file's truth (no vendor), whatever the report claims; no vendor claimed but
    ``unknown`` (base: ``capture.vendor`` / ``job.runtime_vendor`` NVIDIA, "CUDA", "CUPTI", "Nsight")."""
    r = _window(tmp_path, writer, form)
    (h,) = r.hosts
    assert h.capture["vendor"] in (None, devices.UNKNOWN), h.capture["vendor"]
    assert (h.job or {}).get("runtime_vendor") in (None, devices.UNKNOWN)
    assert vendor_words_problems(r, truth=devices.UNKNOWN) == []


def test_the_lost_windows_runtime_is_nobodys(tmp_path: Path) -> None:
    """CUDA activity off on a GPU nothing names: the job's evidence and the capture fix name the GPU runtime, not
    CUDA (base: "holds no CUDA call, kernel or copy ... its GPU tracer (CUPTI)")."""
    r = _window(tmp_path, "write_cuda_activity_off", "unknown")
    (h,) = r.hosts
    said = json.dumps(r.to_dict()["hosts"][0]["findings"]) + h.job["kind_evidence"]
    assert "GPU runtime call" in said and "CUPTI" not in said and "CUDA call" not in said, said


@pytest.mark.parametrize(("op", "vendor"), [("aten::cudnn_convolution", "NVIDIA"),
                                            ("aten::miopen_convolution", "AMD"),
                                            ("aten::cudnn_is_acceptable", devices.UNKNOWN),
                                            # c10d's record names its backend as distributedInfo does: NCCL's name
                                            # is RCCL's too (h37-hipwin66): NVIDIA's or AMD's, PyTorch's cuda device
                                            # on both (h37-late67); gloo nobody's
                                            ("nccl:all_reduce", devices.NCCL_GPU),
                                            ("gloo:all_reduce", devices.UNKNOWN)])
def test_a_lost_window_is_read_by_the_ops_only_one_vendors_build_has(tmp_path: Path, op: str, vendor: str) -> None:
    """The same window (CUDA activity off, nothing else naming a vendor) with one convolution op a step: cuDNN's op
    is a CUDA build's, MIOpen's a ROCm build's; an op every build runs (``aten::cudnn_is_acceptable`` asks only
    whether cuDNN would do) says nothing; a collective's c10d record its backend's library.  Base: NVIDIA for all."""
    path = tmp_path / ".w.json"
    tt.write_cuda_activity_off(str(path))
    doc = tt.as_unknown_vendor(json.loads(path.read_text()))
    step = next(e for e in doc["traceEvents"] if e.get("name", "").startswith("ProfilerStep#"))
    doc["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": op, "pid": step["pid"], "tid": step["tid"],
                               "ts": step["ts"] + 1, "dur": 2, "args": {}})
    host = doc_host(tmp_path, doc, "node0_4500.1.pt.trace.json")
    assert host["capture"]["vendor"] == vendor
    assert host["job"]["runtime_vendor"] == vendor


def test_vendor_known_reads_ops() -> None:
    """``devices.vendor_known``'s op evidence (new): a cuDNN op NVIDIA's, a MIOpen op AMD's, a question every build
    asks nobody's; beside another vendor's calls, no answer."""
    assert devices.vendor_known([], op_names=["aten::cudnn_batch_norm"]) == "NVIDIA"
    assert devices.vendor_known([], op_names=["aten::_cudnn_rnn"]) == "NVIDIA"
    assert devices.vendor_known([], op_names=["aten::miopen_batch_norm"]) == "AMD"
    assert devices.vendor_known([], op_names=["aten::cudnn_is_acceptable", "aten::conv2d"]) == devices.UNKNOWN
    assert devices.vendor_known(["hipLaunchKernel"], op_names=["aten::cudnn_convolution"]) is None


@pytest.mark.parametrize("form", ["cuda", "rocm"])
def test_control_a_window_whose_file_names_its_vendor_keeps_its_words(tmp_path: Path, form: str) -> None:
    """CUDA activity off with the header's GPUs listed (an H100, an MI300X): their vendor, as on base."""
    r = _window(tmp_path, "write_cuda_activity_off", form)
    (h,) = r.hosts
    assert h.capture["vendor"] == {"cuda": "NVIDIA", "rocm": "AMD"}[form]
    assert vendor_words_problems(r) == []
