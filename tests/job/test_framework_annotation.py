"""Framework-annotation NVTX and a cold forward's one-time costs (issue #37, misreadings left by the last stop).

NVIDIA's PyProf / DLProf annotation names each ``torch`` call's NVTX range with a Python dict
(``{'mod': 'Tensor', 'op': 'cuda', 'args': [...]}``) inside a trace-marker range (``{'traceMarker': [...],
'funcStack': ...}``).  Main read them as the user's own blocks: each text is unique, so no op was known, the copies'
syncs inside ``Tensor.cuda`` were the program's, and cuDNN's algorithm search under ``cudnn.benchmark`` (event
syncs inside ``aten::cudnn_convolution``) was a critical ``host_sync`` with the ``.item()`` fix.  Now the dict names
are the framework's ops and the tool's own ranges (``frameworks.nvtx``), and the model's upload before its first
kernel and the algorithm search are one-time costs (``job.phase``), never a step's sync.

Truth by construction: ``synthetic.nsysexport.write_dlprof_forward``, shaped after MohanadOdema/DLProf's real LeNet
export (no licence, so checked locally and not kept: its report went from a critical host_sync "26 waits in
{'mod': 'Tensor', 'op': 'cuda', ..." to a cold start naming 12 uploads and 15 algorithm searches, no host_sync).
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.frameworks import nvtx
from tb_gpu_advisor.runtime.pipeline import analyze_session


@pytest.mark.parametrize(("text", "name", "is_op"), [
    ("{'mod': 'Tensor', 'op': 'cuda', 'args': [{'name': '', 'type': 'tensor', 'shape': (6,), 'dtype': 'float32'}]}",
     "Tensor.cuda", True),
    ("{'mod': 'torch.nn.functional', 'op': 'conv2d', 'args': []}", "torch.nn.functional.conv2d", True),
    ("{'traceMarker': ['net.py:34'], 'funcStack': '/<module>/Net::__init__/Conv2d::reset_parameters/uniform_'}",
     "pyprof::uniform_", False),
    ('{"model_config": {"emit_nvtx": true}}', "pyprof::model_config", False),
    ("{not a dict}", "{not a dict}", False),
    ("forward", "forward", False),
])
def test_annotation_names(text, name, is_op):
    assert nvtx.op_name(text) == (name, is_op)
    assert nvtx.is_library_range(name) == name.startswith(nvtx.ANNOTATION_PREFIX)


def test_the_reader_names_annotation_ranges_and_marks_their_ops(tmp_path):
    p = str(tmp_path / "dlprof.sqlite")
    nx.write_dlprof_forward(p, params=4, convs=1, trials=2)
    tr = read_trace(p)
    r = tr.ranges
    names = [tr.h.names[int(i)] for i in tr.h.name[r.idx]]
    ops = {n for n, o in zip(names, r.op.tolist()) if o}
    assert {"Tensor.cuda", "torch.nn.functional.conv2d", "aten::cudnn_convolution"} <= ops
    assert not any(n.startswith("{") for n in names)
    assert {n for n in names if n.startswith(nvtx.ANNOTATION_PREFIX)} == {"pyprof::cuda", "pyprof::conv2d",
                                                                          "pyprof::relu"}


@pytest.fixture(scope="module")
def cold_forward(tmp_path_factory):
    p = str(tmp_path_factory.mktemp("dlprof") / "dlprof_forward.sqlite")
    truth = nx.write_dlprof_forward(p)
    host = SimpleNamespace(host="h0", path=p, format="nsys", size=os.path.getsize(p))
    rep = analyze_session("w", "s", [host]).to_dict()
    return rep, truth


def test_uploads_and_algorithm_search_are_one_time_costs_not_syncs(cold_forward):
    rep, truth = cold_forward
    rules = {f["rule"]: f for f in rep["findings"]}
    assert "host_sync" not in rules  # main: critical, "waits in {'mod': 'Tensor', 'op': 'cuda', ..."
    assert "excessive_memcpy" not in rules  # main booked the upload's waits to the copies, with pinned memory
    (host,) = rep["hosts"]
    ev = host["job"]["phase_evidence"]
    assert f"{truth['uploads']} copies to the device before the first kernel" in ev
    assert f"{truth['convs']} calls in cuDNN's algorithm search" in ev
    assert f"{truth['autotune_syncs']} syncs" in ev
    assert rules["cold_start"]["severity"] in ("warning", "critical")


def test_annotation_ranges_mark_no_steps(cold_forward):
    """Two ``pyprof::conv2d`` trace markers are two layers of one forward, not two steps."""
    rep, _ = cold_forward
    (host,) = rep["hosts"]
    assert "pyprof::" not in host["steps"]["note"] and host["steps"]["count"] == 1


def _title(path: str) -> str:
    from tb_gpu_advisor.report.render import to_text  # noqa: PLC0415 - the CLI's title line
    host = SimpleNamespace(host="h0", path=path, format="nsys", size=os.path.getsize(path))
    return to_text(analyze_session("w", "s", [host])).splitlines()[0]


def test_a_start_up_window_claims_no_step(tmp_path):
    """A window without GPU work (here the start-up of a CUDA program: context creation, streams, one memset) was
    titled "1 step, step 1 us"; a cold forward that is mostly start-up was "1 step, step 2.64 ms".  Neither is a step
    of the job."""
    p = str(tmp_path / "startup.sqlite")
    nx.write_window(p, "startup")
    assert "no step: the window holds no GPU work" in _title(p)
    q = str(tmp_path / "cold.sqlite")
    nx.write_dlprof_forward(q)
    title = _title(q)
    assert "start-up only: one pass of" in title and "1 step" not in title


@pytest.mark.parametrize(("process", "framework", "words"), [
    ("python3", "none_loaded", "no framework loaded yet"),
    ("./climate_train_unet", "native", "no ML framework in the capture"),
])
def test_a_python_start_up_window_had_not_loaded_its_framework(tmp_path, process, framework, words):
    """An 8 s Nsight window of a PyTorch script (CO18326/uvmTorch ``report1.sqlite``, unlicensed, checked locally
    only) holds two CUDA calls of the python process and nothing else: main called it "no ML framework in the
    capture: a GPU program's own code has no op placement to check".  A Python program reaches the GPU through a
    framework it imports, so its start-up window says the framework was not loaded yet; a CUDA binary's does not."""
    p = str(tmp_path / "startup.sqlite")
    nx.write_window(p, "startup", process=process)
    host = SimpleNamespace(host="h0", path=p, format="nsys", size=os.path.getsize(p))
    rep = analyze_session("w", "s", [host]).to_dict()
    (h,) = rep["hosts"]
    assert h["capture"]["framework"] == framework
    assert words in str(rep)
