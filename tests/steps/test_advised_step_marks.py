"""A capture marked as our own advice says reads high-confidence steps, whatever the mark's name (h37-marks68).

The capture advice names each job's step marks for its work: JAX's ``StepTraceAnnotation('train' | 'predict' |
'step', step_num=step)`` (``frameworks.jax.STEP_MARKS``, h37-audit68), TensorFlow's ``Trace('predict' | 'step',
step_num=step, _r=1)`` (``tensorflow.INFERENCE_LOOP``, ``ANY_LOOP``, h37-left43).  The step detector read only marks
named ``train*``/``test*`` as the program's marks (``trace_train``, high); a ``predict`` or ``step`` mark fell to
``root_r`` ("step roots", medium), so a user who followed the advice got steps read as a guess and every finding on
them a medium one -- and the loop's turn between two marks no longer went to the step before (``_TURN_MARKS``).  A
root numbered by ``step_num`` is the program's own step mark (``tensorflow.own_step_marks``); the name tells its work.

Each test follows the advice text literally: the mark's name and arguments are parsed from the snippet the framework
(or the report) gives, the capture is written with them by the generated-capture writers (``synthetic.jaxcapture``,
``synthetic.tfcapture``: what jaxlib and TensorFlow write for that call), and read back.  On base 5b7502f7 the
``predict`` and ``step`` cases and both round trips fail (``root_r``, medium); the ``train`` case is the control.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import jaxcapture as jc
from synthetic import kernels as K
from synthetic.tfcapture import A100, Capture, Op
from synthetic.xla_kernels import GEMM_BF16, TINY_EW, XlaKernel
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.frameworks import jax, tensorflow
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics

STEPS = 10
#: a step mark as the advice spells it: ``StepTraceAnnotation('predict', step_num=step)``,
#: ``tf.profiler.experimental.Trace('step', step_num=step, _r=1)``
_MARK = re.compile(r"(?P<call>StepTraceAnnotation|experimental\.Trace)\('(?P<name>\w+)'(?P<kw>(?:, \w+=\w+)*)\)")
#: the arguments each call must be given for the writer to write what the library writes (jaxlib's
#: ``StepTraceAnnotation`` adds ``_r=1`` itself; TensorFlow's ``Trace`` takes it from the caller)
_WRITES = {"StepTraceAnnotation": {"step_num": "step"}, "experimental.Trace": {"step_num": "step", "_r": "1"}}


def _advised_mark(advice: str) -> tuple[str, str]:
    """(call, name) of the one step mark ``advice`` tells the user to write, its arguments checked against what the
    writers write for it."""
    (m,) = _MARK.finditer(advice)
    kw = dict(a.split("=") for a in m["kw"].split(", ") if a)
    assert kw == _WRITES[m["call"]], advice
    return m["call"], m["name"]


def _forward_kernels() -> list[XlaKernel]:
    """A jitted forward pass: four bf16 GEMMs, each with its ReLU fusion."""
    ks = []
    for i in range(4):
        ks.append(XlaKernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
                            "segment_k_off_kernel__5x_cublas", f"cublas-lt-matmul.{i}", "jit(forward)/dot_general",
                            150.0, GEMM_BF16, "bf16"))
        ks.append(XlaKernel("fusion_34", f"fusion.{34 + i}", "jit(forward)/max", 20.0, TINY_EW, "bf16"))
    return ks


def _write_jax(root: Path, mark: str | None) -> Path:
    """A JAX loop of ``STEPS`` jitted forward passes, each inside ``StepTraceAnnotation(mark, step_num=step)`` (no
    mark: none)."""
    cap = jc.JaxCapture(step_annotation=mark is not None, step_mark=mark or "train", jitter=0.0,
                        module="jit_forward", function="forward")
    kernels = _forward_kernels()
    cap.add_hlo(jc.mlp_hlo(cap.module, kernels))
    for _ in range(STEPS):
        cap.call(kernels, h2d_bytes=0, between_us=300.0)
    (path,) = jc.JaxScenario("fwd", cap.finish(), cap.truth("fwd", "forward loop", "trace_train")).write(root)
    return path


def _write_tf(root: Path, mark: str) -> Path:
    """A TensorFlow custom loop of ``STEPS`` forward passes of four dense layers, each step inside
    ``tf.profiler.experimental.Trace(mark, step_num=step, _r=1)`` around its ``FunctionRun``."""
    cap = Capture(1, A100, marker="custom_loop", trace_name=mark)
    g, e = K.sized(K.GEMM_FP16_TC, 200), K.sized(K.EW_ADD_HALF, 18)
    ops = [Op("IteratorGetNext/_2:_Send", [], host_us=4, h2d_bytes=1 << 20)]
    for i in range(4):
        s = f"model/dense_{i}"
        ops += [Op(f"{s}/MatMul:MatMul", [g]), Op(f"{s}/BiasAdd:BiasAdd", [e]), Op(f"{s}/Relu:Relu", [e])]
    for _ in range(STEPS):
        cap.step([ops], input_wait_us=25, between_us=300)
    path = root / "worker0.xplane.pb"
    cap.finish().write(path)
    return path


_WRITERS = {"StepTraceAnnotation": _write_jax, "experimental.Trace": _write_tf}


@pytest.mark.parametrize("fw, tags", [(jax, ()), (jax, ("inference",)), (jax, ("any_work",)),
                                      (tensorflow, ("inference",)), (tensorflow, ("any_work",))],
                         ids=["jax-train", "jax-predict", "jax-step", "tf-predict", "tf-step"])
def test_the_advised_mark_reads_as_the_programs_own_steps(tmp_path: Path, fw, tags) -> None:
    """Each job's advised mark, written as advised: high-confidence steps, one per mark, read as ``train`` marks are
    (``trace_train``: the same windows' rules).  Base: ``predict`` and ``step`` read ``root_r``, medium."""
    call, name = _advised_mark(fw.FRAMEWORK.for_job(tags).capture_snippet)
    m = host_metrics(read_trace(str(_WRITERS[call](tmp_path, name))))
    d = m.steps
    assert (d.source, d.confidence) == ("trace_train", "high"), (name, d.source, d.note)
    assert d.found == STEPS


@pytest.mark.parametrize("call, first", [("StepTraceAnnotation", None), ("experimental.Trace", "train")],
                         ids=["jax-unmarked", "tf-train-marked"])
def test_following_the_reports_advice_gives_high_confidence_findings(tmp_path: Path, call: str, first) -> None:
    """The round trip a user makes: report a capture, mark the steps as its capture advice says, report again.  The
    steps are the program's own (high), so are the findings that rest on them, and the advice names the same mark.
    Base: the second report's steps are ``root_r``, medium, and so is every finding."""
    write = _WRITERS[call]
    before = analyze_host(SimpleNamespace(host="h", path=str(write(tmp_path / "before", first))))
    advised = _advised_mark(before.job["capture_advice"])
    assert advised[0] == call
    after = analyze_host(SimpleNamespace(host="h", path=str(write(tmp_path / "after", advised[1]))))
    assert (after.steps["source"], after.steps["confidence"]) == ("trace_train", "high"), after.steps
    assert after.findings and all(f.confidence == "high" for f in after.findings), \
        [(f.rule, f.confidence) for f in after.findings]
    assert _advised_mark(after.job["capture_advice"]) == advised
