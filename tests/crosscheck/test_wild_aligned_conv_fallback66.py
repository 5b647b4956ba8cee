"""A 16-bit convolution off the matrix units whose channels are aligned is the library's choice, not misaligned dims
(issue #37 item 6; h37-huntk66).

Real trace: amd/HPCTrainingExamples ``MLExamples/TraceLens/event_replay_wd/replay_trace.json`` @82661816 (MIT; kept
as ``tests/fixtures/wild/mi300x_conv_backward_replay``).  Read by hand: an AMD Instinct MI300X, 10 ``ProfilerStep``
each one fp16 ``aten::convolution_backward`` of grad [256,512,4,4], input [256,128,4,4], weight [512,128,1,1] -- a
1x1 convolution of 128 -> 512 channels, multiples of 8 -- launching two MIOpen Winograd
``miopenSp3AsmConv_v30_3_1_gfx9_fp16_dot2_edc_*`` kernels (fp16 ``dot2``, no MFMA).  Padding changes nothing there;
MIOpen's search (``torch.backends.cudnn.benchmark``) is the lever.  On base the report's second finding was
``misaligned_dims`` critical, "16-bit matmul/conv dims are not multiples of 16 bytes", with "Pad the layer sizes".

Generator (truth by construction): ``synthetic.torchtrace.write_fp16_conv_fallback`` -- the same kernels under
convolutions of aligned channels (128 -> 512) or odd ones (100 -> 500).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic.torchtrace import write_fp16_conv_fallback
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

REPLAY = FIXTURES / "wild" / "mi300x_conv_backward_replay" / "replay_trace.json"


def _findings(path: Path):
    m = host_metrics(read_trace(str(path)))
    return m, {f.rule: f for f in evaluate(m) if f.severity in ("warning", "critical")}


def test_the_real_replay_is_not_told_to_pad_aligned_channels():
    """Fails on base: ``misaligned_dims`` critical, ``tensor_core_unused`` saying "usually dims not aligned", and
    ``mfu_low`` telling the 1x1 convolution to pad its vocabulary."""
    m, found = _findings(REPLAY)
    convs = [s for s in m.kernels if s.tc_eligible and s.precision == "fp16"]
    assert convs and all(s.dims == [128, 512] for s in convs), [(s.name, s.dims) for s in convs]
    assert "misaligned_dims" not in found
    tc = found["tensor_core_unused"]
    assert "aligned dims" in tc.summary and "not aligned" not in tc.summary, tc.summary
    assert "cudnn.benchmark" in (tc.actions[0].snippet or ""), tc.actions[0]
    assert not any("((units +" in (a.snippet or "") for a in tc.actions)
    # the roofline finding's fixes are a convolution's (layout, the library's search), not a matmul's padding
    mfu = found["mfu_low"]
    assert not any("vocab" in a.text + (a.snippet or "") for a in mfu.actions), [a.text for a in mfu.actions]
    assert any("cudnn.benchmark" in (a.snippet or "") for a in mfu.actions)


@pytest.mark.parametrize("channels, aligned", [((128, 512), True), ((100, 500), False)])
def test_the_generator_tells_a_library_choice_from_misaligned_channels(tmp_path, channels, aligned):
    """Fails on base for the aligned loop (``misaligned_dims`` fires on channels of 128 and 512); the odd loop is the
    control: 100 and 500 are no multiples of 8, and both findings keep the padding fix."""
    path = tmp_path / "run" / "conv.pt.trace.json"
    path.parent.mkdir()
    truth = write_fp16_conv_fallback(str(path), channels=channels)
    assert truth["aligned"] is aligned
    _, found = _findings(path)
    tc = found["tensor_core_unused"]
    if aligned:
        assert "misaligned_dims" not in found
        assert "aligned dims" in tc.summary
    else:
        f = found["misaligned_dims"]
        assert f.evidence[0].rows[0][-1] == "100, 500"
        assert "usually dims not aligned" in tc.summary
        assert any("((units + 7) // 8) * 8" in (a.snippet or "") for a in tc.actions)
