"""One pass of a pipeline of different models is no loop of steps (issue #37 item 6, survey h37-survey37).

``with_stack``'s ``Module._call_impl`` frame is the same Python span for every ``nn.Module`` call, so a pipeline that
calls four models once each -- a diffusion pipeline's CLIP and T5 text encoders, its transformer, its VAE -- repeats
that span four times.  Main took those four for a loop's iterations: xDiT's Flux.1 capture pass on an MI300X
(``tests/fixtures/wild/xdit_flux_mi300x_capture``, AMD-AGI/TraceLens, MIT) read as "3 steps, step 20.6 ms" (the cold
transformer call dropped), the mean of a text encoder's, the other's and the VAE's forwards, with a critical
host-bound and a critical launch-bound finding on those "steps".  ``with_modules`` names the module each call runs
(``nn.Module: T5Stack_0``): the four calls run four different modules, as four jitted solvers called once each run
four XLA modules (``structure._same_programs``, survey h37-survey32), so they are no iterations.

By construction (hand-built Kineto traces): the same three module calls, once of three different modules and once of
one module called three times (the control: a loop's iterations, stepped by the span as before).
"""

from __future__ import annotations

import json
from functools import cache

from tb_gpu_advisor.frameworks import pytorch
from tests.support import kineto_doc
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

GPU = {"ph": "X", "pid": 0, "tid": 7}
HOST = {"ph": "X", "pid": 1, "tid": 1}
CALL = "torch/nn/modules/module.py(1779): _call_impl"


@cache
def _wild(run: str) -> dict:
    s = [s for s in wild_sessions() if s.run == run][0]
    return session_report(s).to_dict()


def _calls(modules: list[str], kernels: int = 20) -> list[dict]:
    """One ``_call_impl`` span per entry of ``modules``, 10 ms apart, each holding that module's ``nn.Module:`` span
    and ``kernels`` matmuls (an op, its launch, a 200 us kernel)."""
    ev: list[dict] = []
    corr = 0
    for i, mod in enumerate(modules):
        t = 100.0 + 10_000.0 * i
        ev += [{**HOST, "cat": "python_function", "name": CALL, "ts": t, "dur": 8000},
               {**HOST, "cat": "python_function", "name": f"nn.Module: {mod}", "ts": t + 5, "dur": 7990}]
        for j in range(kernels):
            corr += 1
            k = t + 20 + 300.0 * j
            ev += [{**HOST, "cat": "cpu_op", "name": "aten::mm", "ts": k, "dur": 30},
                   {**HOST, "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": k + 5, "dur": 10,
                    "args": {"correlation": corr}},
                   {**GPU, "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "ts": k + 20, "dur": 200,
                    "args": {"correlation": corr, "device": 0, "stream": 7}}]
    return ev


def test_the_module_a_with_modules_span_names():
    assert pytorch.named_module("nn.Module: T5Stack_0") == "T5Stack_0"
    assert pytorch.named_module("nn.Module: xFuserFlux1Transformer2DWrapper_0") == "xFuserFlux1Transformer2DWrapper_0"
    # the call frame is every module's: it names none
    assert pytorch.named_module(CALL) == ""
    assert pytorch.named_module("aten::mm") == ""


def test_calls_of_different_models_are_no_steps(tmp_path):
    rep = kineto_doc.session_report(tmp_path, _calls(["CLIPTextModel_0", "T5EncoderModel_0", "AutoencoderKL_0"]))
    steps = rep["hosts"][0]["steps"]
    assert steps["source"] != "annotation_spans", steps


def test_control_calls_of_one_model_are_its_steps(tmp_path):
    rep = kineto_doc.session_report(tmp_path, _calls(["MyModel_0"] * 3))
    steps = rep["hosts"][0]["steps"]
    assert steps["source"] == "annotation_spans" and steps["found"] == 3, steps


def test_control_call_spans_without_module_names_keep_their_reading(tmp_path):
    """Where ``with_modules`` was off, nothing names the programs: the spans are read as before."""
    ev = [e for e in _calls(["A_0", "B_0", "C_0"]) if not e["name"].startswith("nn.Module: ")]
    steps = kineto_doc.session_report(tmp_path, ev)["hosts"][0]["steps"]
    assert steps["source"] == "annotation_spans" and steps["found"] == 3, steps


def test_xdit_flux_capture_pass_is_one_pass_of_its_start_up():
    """The file's truth (read by hand): one Flux.1 pipeline call on an MI300X -- CLIP (9.5 ms) and T5 (31.4 ms) text
    encoders, the compiled transformer (326 ms: its HIP graph recorded by ``CUDAGraphNode.record``, 243 ms, then
    replayed once, 35.5 ms of kernels) and the VAE -- no ProfilerStep.  It is the start-up's graph capture: the cold
    start leads, and no host-bound or launch-bound verdict rests on the models' forwards averaged as "steps"."""
    rep = _wild("xdit_flux_mi300x_capture")
    host = rep["hosts"][0]
    assert host["steps"]["source"] != "annotation_spans", host["steps"]
    assert "_call_impl" not in json.dumps(host["steps"])
    assert rep["findings"][0]["rule"] == "cold_start"
    crit = [f["rule"] for f in rep["findings"] if f["severity"] == "critical" and f["rule"] != "cold_start"]
    assert not crit, crit
    # the pass is the window's GPU work, not a third of it
    assert host["gpus"][0]["step_ms"] > 300
