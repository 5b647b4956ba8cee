"""A PyTorch capture of Apple's MPS backend is not a capture that lost its CUDA records (issue #37, amdmps35's Left).

torch.profiler has no Metal activity source: on the ``mps`` device it records the host's ops only, by design.  Read
by the physics that show a GPU whose CUDA records were lost (a ``.item()`` that waited 8 ms on a queue), such a
capture read "The capture lost its GPU records", was told to add ``ProfilerActivity.CUDA`` and
``torch.cuda.synchronize()``, and its scalar-read fix put tensors on ``device='cuda'``.  The backend is the trace's
own: the ops PyTorch dispatches only for MPS tensors (``aten::_mps_convolution``) and the MPS allocator's
``[memory]`` events (``Device Type`` 13).

Truth by construction (``synthetic.torchtrace.write_mps_capture``): a training loop on the Apple GPU as torch.profiler
records it.  Control: the same loop with neither sign of the backend (no MPS-only op, no memory events) still reads
as GPU records the capture lacks -- nothing in it says which backend.  No public MPS capture was found to keep
(tests/fixtures/wild/SURVEY.md, session 36).
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.cli.report import EXIT_FINDINGS, exit_code
from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _report(tmp_path, conv: bool, memory: bool):
    path = str(tmp_path / f"mps_{int(conv)}{int(memory)}.pt.trace.json")
    truth = tt.write_mps_capture(path, conv=conv, memory=memory)
    rep = analyze_session("mps", "s", [SimpleNamespace(host="mac", path=path, format="kineto", size=0)])
    return rep, truth


@pytest.mark.parametrize("conv,memory", [(True, True), (True, False), (False, True)])
def test_by_construction_an_mps_capture_reads_as_an_untraced_backend_not_lost_cuda_records(tmp_path, conv, memory):
    rep, truth = _report(tmp_path, conv, memory)
    d = rep.to_dict()
    job = d["hosts"][0]["job"]
    assert job["kind"] == "unknown" and "Apple GPU" in job["kind_evidence"]
    no_gpu = next(f for f in d["findings"] if f["id"].startswith("capture_quality"))
    assert "MPS backend is not traced" in no_gpu["title"]
    words = json.dumps(d["findings"]) + job["capture_advice"] + job["kind_evidence"]
    for said in ("lost its GPU records", "lost the GPU's records", "ProfilerActivity.CUDA", "torch.cuda.",
                 "device='cuda'", "CUDA activity was not recorded"):
        assert said not in words, said
    assert "torch.mps.profiler.profile" in json.dumps(no_gpu["actions"])
    # the host's wait in its reads is still the host's, on the mps device's code
    read = next(f for f in d["findings"] if f["id"].startswith("host_sync"))
    assert read["metric"]["detail"]["wait_ms_per_step"] == pytest.approx(truth["item_ms"], rel=0.01)
    assert "device='mps'" in json.dumps(read["actions"])
    # the same code as a capture whose GPU records were lost: a warning, no GPU verdict
    assert exit_code([rep], "warning") == EXIT_FINDINGS


def test_by_construction_a_capture_with_no_sign_of_the_backend_still_reads_as_records_it_lacks(tmp_path):
    rep, _ = _report(tmp_path, conv=False, memory=False)
    d = rep.to_dict()
    assert "Apple GPU" not in d["hosts"][0]["job"]["kind_evidence"]
    # host ops alone, in no vendor's words: nothing in the file names a vendor either (h37-vendor66; CUDA's before)
    unrecorded = "The capture recorded no GPU runtime activity: the GPU's work is not in it"
    assert any(f["title"] == unrecorded for f in d["findings"])
    assert d["hosts"][0]["capture"]["vendor"] == "unknown"


@pytest.mark.parametrize("name,backend", [("aten::_mps_convolution", "mps"), ("aten::mps_convolution_backward", "mps"),
                                          ("aten::_lstm_mps", "mps"), ("aten::lstm_mps_backward", "mps"),
                                          ("aten::_mps_convolution_transpose.out", "mps"), ("aten::addmm", ""),
                                          ("aten::_cudnn_rnn", ""), ("aten::mpsish", "")])
def test_pytorch_names_the_backend_of_its_backend_only_ops(name, backend):
    assert pytorch.backend_event(name) == backend


@pytest.mark.parametrize("conv,memory", [(True, True), (False, True)])
def test_by_construction_an_mps_capture_is_apples_in_every_text(tmp_path, conv, memory):
    """The capture's vendor is Apple (``rules.base.capture_vendor``), so every finding, fix and legend is in Apple's
    words: no CUDA tool, call or profiler anywhere (h37-apple37; main said ``capture.vendor`` null and NVIDIA's words)."""
    from tests.support.contradictions import _CUDA_TOOLS

    rep, _ = _report(tmp_path, conv, memory)
    d = rep.to_dict()
    assert d["hosts"][0]["capture"]["vendor"] == "Apple"
    texts = json.dumps(d["findings"]) + d["hosts"][0]["job"]["capture_advice"]
    said = sorted({m.group(0) for m in _CUDA_TOOLS.finditer(texts)} | {w for w in ("CUDA", "cudaMemcpy") if w in texts})
    assert not said, said


def test_a_backend_no_vendor_claims_is_named_not_crashed_on():
    """A backend the profiler does not trace that no vendor module claims (only Apple's ``mps`` is claimed today) is
    named as the framework names it, with no vendor's fix; main 84eea5f7 read ``None.BACKEND_NAME`` (h37-review40's
    latent crash)."""
    from tb_gpu_advisor.rules import capture_quality

    kind = SimpleNamespace(evidence="the ops PyTorch dispatches only for `npu` tensors", untraced_backend="npu")
    title, actions, summary = capture_quality._untraced_backend(kind)
    assert "`npu` backend is not traced" in title and actions == [] and "npu" in summary
    title, actions, _ = capture_quality._untraced_backend(SimpleNamespace(evidence="x", untraced_backend="mps"))
    assert "MPS backend" in title and actions
