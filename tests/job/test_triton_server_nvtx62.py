"""Triton Inference Server described by its backends' NVTX alone is a serving engine (issue #37 class 2).

Under ``TRITON_ENABLE_NVTX`` each backend pushes a range per batch it executes, named by its model instance
(triton-inference-server/pytorch_backend ``src/libtorch.cc``: ``"ProcessRequests " + Name()`` around ``"Execute " +
Name()`` and ``"ReadOutputTensors " + Name()``; the Python backend's ``"ModelInstanceExecute " + Name()``).  Base read
such a capture as "GPU work of an unknown kind", so the fixes stayed a training loop's; now it is the engine, each
``ProcessRequests`` a step.  Truth by construction: ``synthetic.nsysexport.NsysJob`` with those ranges (12 batches)."""

from __future__ import annotations

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import engines
from tests.support.cli_report import first_host


def test_triton_backends_ranges_name_the_server(tmp_path):
    """Fails on base (kind unknown, low)."""
    p = tmp_path / "triton.sqlite"
    nx.write(str(p), nx.NsysJob(step_range="ProcessRequests resnet50_0_0", autograd_nvtx=False,
                                extra_ranges=("Execute resnet50_0_0", "ReadOutputTensors resnet50_0_0"),
                                range_starts=(20,)))
    host = first_host(p)
    job = host["job"]
    assert job["kind"] == "serving" and job["engine"] == "Triton Inference Server", job
    assert "`ProcessRequests resnet50_0_0`" in host["steps"]["note"]


def test_a_programs_own_words_name_no_triton():
    """Control: a range that merely says "execute" or processes requests of the program's own is no engine's."""
    for name in ("Execute", "process requests", "ProcessRequests", "execute_model_step"):
        assert engines.find([name], []) is None or engines.find([name], [])[0].id != "triton_server", name
