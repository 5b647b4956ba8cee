"""The session's merged changes read together (issue #37, h37-review15): two classes review14 left, each fixed by
cause and each failing on main 105f2e51:

* an input wait nothing measured, said as zero: the Megatron NVTX form (``synthetic/autograd_nvtx.py`` ``megatron``,
  no op and no input range, steps from the GPU's own period) read "Waiting for input 0.0%" and "input wait 0.0%" in
  its healthy note; now the card is "n/a: not measured: ..." and the note says "input wait not measured".  Controls:
  its ``megatron_shapes`` twin (``emit_nvtx`` records the DataLoader's ``__next__``) keeps its 5.9%; a marked step
  whose host time before its first op was read keeps a zero as a measurement.
* the legacy float16 fix on a GPU with bf16 Tensor Cores: review14 trimmed the legacy (PyTorch 1.8-1.10) fix's
  bfloat16 aside for a V100, so an A100 under those releases read "enable mixed precision (bf16)" and a saving taken
  at bf16's peak above a fix in float16 alone.  Property ``bf16-fix`` (tests/support/properties.py, walked over every
  report): a host whose every GPU has bf16 Tensor Cores is given a precision fix that names bfloat16.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.run_report import run_report

WILD = FIXTURES / "wild"
OLD_V100 = SHARED_PROFILES / "wild-torch" / "resnet50_num_workers_0"


def _card(h, cid: str):
    return next(c for c in h.headline if c.id == cid)


# --------------------------------------------------------------------------- an input wait nothing measured


def _nvtx_form(tmp_path: Path, form: str):
    from synthetic import autograd_nvtx as A

    (tmp_path / form).mkdir()
    A.write(str(tmp_path / form / "report.sqlite"), form=form)
    return run_report(tmp_path, form).hosts[0]


def test_an_input_wait_nothing_measured_is_not_said_as_zero(tmp_path):
    """Main: "Waiting for input 0.0%" and the healthy note's "input wait 0.0%" on the Megatron NVTX form, whose capture
    holds no input pipeline event, no transfer and no marked step: nothing read an input wait."""
    h = _nvtx_form(tmp_path, "megatron")
    card = _card(h, "input_wait_share")
    assert card.value is None and card.display == "n/a", (card.value, card.display)
    assert card.detail["not_available"].startswith("not measured: ")
    healthy = next(f for f in h.findings if f.rule == "healthy")
    assert "input wait not measured" in healthy.summary and "input wait 0.0%" not in healthy.summary


def test_an_input_wait_its_pipeline_events_measure_keeps_its_number(tmp_path):
    """Control: the ``megatron_shapes`` twin records the DataLoader's ``__next__``: its 5.9% (346 us a step) stands."""
    h = _nvtx_form(tmp_path, "megatron_shapes")
    card = _card(h, "input_wait_share")
    assert card.value is not None and card.value > 0.05
    assert "not_available" not in (card.detail or {})


def test_a_zero_input_wait_a_marked_step_measured_stays_zero():
    """Control: real-h100-torch torch_healthy_bf16 marks its steps (``ProfilerStep#N``) and records its ops: the host
    time before each step's first op was read, so its zero is a measurement, not an unknown."""
    sets = SHARED_PROFILES / "real-h100-torch"
    if not sets.is_dir():
        pytest.skip("../shared/profiles absent")
    h = run_report(sets, "torch_healthy_bf16").hosts[0]
    card = _card(h, "input_wait_share")
    assert card.value is not None and "not_available" not in (card.detail or {})


# --------------------------------------------------------------------------- bf16-fix: an A100 on PyTorch 1.8-1.10


def _as_a100(tmp_path: Path) -> Path:
    """The real PyTorch 1.8-1.10 trace (wild-torch resnet50_num_workers_0, Kineto's old schema) with its
    ``deviceProperties`` an A100's: the same job on a GPU with bf16 Tensor Cores (held in tmp_path, never kept)."""
    src = sorted(OLD_V100.glob("*.pt.trace.json.gz"))[0]
    doc = json.loads(gzip.open(src).read())
    for p in doc["deviceProperties"]:
        p.update(name="NVIDIA A100-SXM4-40GB", computeMajor=8, computeMinor=0, numSms=108, totalGlobalMem=42505273344)
    out = tmp_path / "a100"
    out.mkdir()
    with gzip.open(out / src.name, "wt") as f:
        json.dump(doc, f)
    return tmp_path


@pytest.mark.skipif(not OLD_V100.is_dir(), reason="../shared/profiles absent")
def test_an_old_pytorch_on_a_bf16_gpu_is_told_of_bfloat16(tmp_path):
    """Main: the precision findings say "(bf16)" and take bf16's 312 TFLOP/s peak, their fix "float16 autocast with a
    GradScaler (PyTorch 1.8-1.10 spell it torch.cuda.amp) ... parameters stay float32." alone."""
    from tests.support.properties import bf16_fix_problems

    h = run_report(_as_a100(tmp_path), "a100").hosts[0]
    rules = {f.rule: f for f in h.findings}
    assert {"mixed_precision_off", "tensor_core_unused"} <= set(rules)
    for r in ("mixed_precision_off", "tensor_core_unused"):
        text = rules[r].actions[0].text
        assert "torch.cuda.amp" in text and "torch.autocast(device_type='cuda', dtype=torch.bfloat16)" in text, text
    assert not bf16_fix_problems("x", h)
    cut = "; from PyTorch 1.10 on"  # the bf16 aside (h37-review16 wording)
    main = [type(f)(**{**vars(f), "actions": [type(a)(**{**vars(a), "text": a.text.split(cut)[0]})
                                               for a in f.actions]}) for f in h.findings]
    assert bf16_fix_problems("x", type(h)(**{**vars(h), "findings": main}))


@pytest.mark.skipif(not OLD_V100.is_dir(), reason="../shared/profiles absent")
def test_an_old_pytorch_on_a_v100_is_still_told_of_no_bfloat16():
    """Control: the V100 itself keeps review14's float16 fix with no word of bfloat16."""
    from tb_gpu_advisor.discover.logdir import discover
    from tests.support.report_store import session_report
    from tests.support.properties import bf16_fix_problems, no_bf16_problems

    sessions = [s for s in discover(str(OLD_V100.parent)) if s.run == OLD_V100.name]
    assert sessions
    for s in sessions:
        h = session_report(s).hosts[0]
        f = next(f for f in h.findings if f.rule == "mixed_precision_off")
        assert "bfloat16" not in f.actions[0].text
        assert not no_bf16_problems("x", h) and not bf16_fix_problems("x", h)
