"""Words that fit the run (issue #37, h37-review10's leftovers): a fix's code in the spelling every framework version
the trace could be accepts, or both spellings with the version named where none does.

* ``wild/d2d_v100`` (2022) and ``wild/resnet_rtx2080ti_slow_workers`` date no PyTorch: on main their float16 fix
  said ``torch.amp.GradScaler('cuda')``, PyTorch 2.3's spelling; now ``torch.cuda.amp.GradScaler()``.
* the lone V100 BERT (TF 2.4) holds no version in its XPlane: on main ``@tf.function(jit_compile=True)`` (TF 2.5's
  spelling) stood alone; now a comment names TF 2.5 and TF 2.1-2.4's ``experimental_compile=True``.
"""

from __future__ import annotations

import shutil

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.frameworks import pytorch, tensorflow
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.paths import FIXTURES, SHARED_PROFILES

_CACHE: dict[tuple[str, str], Report] = {}


def _report(logdir, run: str) -> Report:
    key = (str(logdir), run)
    if key not in _CACHE:
        (s,) = [s for s in discover(str(logdir)) if s.run == run]
        _CACHE[key] = analyze_session(s.run, s.session, s.hosts)
    return _CACHE[key]


def _code(r: Report) -> str:
    return "\n".join(a.snippet or "" for h in r.hosts for f in h.findings for a in f.actions)


@pytest.mark.parametrize("run", ["d2d_v100", "resnet_rtx2080ti_slow_workers"])
def test_an_undated_pytorch_trace_is_told_the_grad_scaler_every_version_has(run):
    code = _code(_report(FIXTURES / "wild", run))
    assert "torch.cuda.amp.GradScaler()" in code
    assert "torch.amp.GradScaler(" not in code


def test_a_trace_dated_2_3_or_newer_keeps_the_device_generic_grad_scaler():
    """The control: PyTorch 2.3 on (and every vendor but the two CUDA-API ones) keeps the fix as written."""
    fw = pytorch.FRAMEWORK
    a = fw.fix("loss_scaling_gaps")[0]
    for vendor in ("NVIDIA", "AMD"):
        assert fw.fit(a, vendor, (2, 3)) is a
        assert "torch.cuda.amp.GradScaler()" in (fw.fit(a, vendor, (2, 1)).snippet or "")
        assert "torch.cuda.amp.GradScaler()" in (fw.fit(a, vendor, None).snippet or "")
    assert fw.fit(pytorch.COMPILE, "NVIDIA", None) is pytorch.COMPILE


def test_tf_jit_compile_names_the_version_it_needs_on_an_undated_xplane(tmp_path):
    src = SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb"
    if not src.is_file():
        pytest.skip("../shared/profiles is not beside this checkout")
    dst = tmp_path / "v100_bert_8gpu_tf24" / "plugins" / "profile" / "2021_06_01_00_00_00"
    dst.mkdir(parents=True)
    shutil.copyfile(src, dst / src.name)
    r = _report(tmp_path, "v100_bert_8gpu_tf24")
    told = [a.snippet or "" for h in r.hosts for f in h.findings for a in f.actions
            if "jit_compile=True" in (a.snippet or "")]
    assert told
    for code in told:
        assert "TF 2.5 or newer" in code and "experimental_compile=True" in code
        assert code.count("TF 2.5 or newer") == 1


def test_tf_dated_2_5_or_newer_is_told_jit_compile_alone():
    fw = tensorflow.FRAMEWORK
    a = tensorflow.JIT_COMPILE
    assert fw.fit(a, "NVIDIA", (2, 5)) is a
    assert fw.fit(tensorflow.TF_FUNCTION, "NVIDIA", None) is tensorflow.TF_FUNCTION
