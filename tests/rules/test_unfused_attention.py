"""Attention computed op by op (guide §1.2.3 "Fusing ops"; issue #37 item 6, survey h37-survey37's "no check names
eager attention").

Hugging Face's TimeSformer on an H100 (``tests/fixtures/wild/timesformer_h100_video``, AMD-AGI/TraceLens, MIT) runs
its attention eagerly: per layer a bmm writes the [frames x heads, N, N] score matrix, ``cunn_SoftMaxForward`` (or
``softmax_warp_forward`` for the temporal attention) reads and writes it after a scale kernel, a copy follows, and a
second bmm reads it back.  On main no finding named it (``mfu_low`` sees only the bmm pair, nothing the softmax).
Now ``unfused_attention`` does, with a saving of the kernels between the matmuls (those a fused kernel does not run).

By construction (hand-built Kineto traces, truth from the events written): a step of six layers of bmm -> scale ->
softmax -> bmm; controls a classifier head's matmul -> softmax once a step, a router's softmax followed by a top-k
before the next matmul, and attention already fused (FlashAttention's kernel, no softmax kernel of its own).

h37-attn2: a training step runs each layer's attention twice (``synthetic.torchtrace.eager_attention_train``): the
count is the layers, forward and backward, not "2L times"; a router's softmax fused with its top-k (vLLM's
``topkGatingSoftmax``) is never an attention's middle; Hugging Face's T5 attention (the module the trace names) is
not promised an ``attn_implementation="sdpa"`` switch its releases lacked.
"""

from __future__ import annotations

import json
from functools import cache

from synthetic import torchtrace as tt
from tb_gpu_advisor import devices
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.discover.logdir import discover
from tests.support import kineto_doc
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

GPU = {"ph": "X", "pid": 0, "tid": 7}
HOST = {"ph": "X", "pid": 1, "tid": 1}
BMM = "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8>(Params)"
SCALE = ("void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, "
         "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int, T2, T3)")
SOFTMAX = ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, "
           "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(T4*, T2 const*, int)")
SOFTMAX_BWD = ("void at::native::(anonymous namespace)::cunn_SoftMaxBackward<8, c10::BFloat16, float, c10::BFloat16, "
               "at::native::(anonymous namespace)::SoftMaxBackwardEpilogue>(T4*, T2 const*, T2 const*, int)")
#: vLLM's MoE router: the gate's softmax and its top-k over the experts in one kernel (csrc/moe/topk_softmax_kernels.cu)
TOPK_GATING = ("void vllm::moe::topkGatingSoftmax<8, 16, 4, 16, 32, int, float>(float const*, bool const*, float*, int, "
               "int*, int, int, int, bool)")
TOPK = "void at::native::sbtopk::gatherTopK<c10::BFloat16, unsigned int, 2, false>(T1, T2, T2)"
LOSS = "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(T1*)"
FLASH = ("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, "
         "Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false>(Flash_fwd_params)")


@cache
def _wild(run: str) -> dict:
    s = [s for s in wild_sessions() if s.run == run][0]
    return session_report(s).to_dict()


def _attention(rep: dict) -> list[dict]:
    return [f for f in rep["findings"] if f["rule"] == "unfused_attention"]


def test_timesformer_eager_attention_is_named():
    """Its softmax kernels alone (read off the file) are time a fused kernel does not spend: the saving is at least
    theirs and at most the GPU's kernel time; the finding says which matmul (its shapes) and the fix is SDPA."""
    ev = kineto_doc.kept_events(FIXTURES / "wild" / "timesformer_h100_video")
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    softmax_ms = sum(e["dur"] for e in kernels if "SoftMaxForward" in e["name"] or "softmax_warp_forward" in e["name"]) / 1e3
    kernel_ms = sum(e["dur"] for e in kernels) / 1e3
    (f,) = _attention(_wild("timesformer_h100_video"))
    assert f["severity"] in ("warning", "critical")
    assert softmax_ms <= f["saving"]["ms_per_step"] <= kernel_ms, (softmax_ms, f["saving"], kernel_ms)
    runs = f["metric"]["detail"]["runs_per_step"]
    layers = sum(1 for e in kernels if "SoftMaxForward" in e["name"] or "softmax_warp_forward" in e["name"])
    assert runs == layers  # each softmax of the step sits between its two bmms
    assert "3137" in f["summary"]  # the score matrix's side, from the bmm's recorded Input Dims
    fix = json.dumps(f["actions"])
    assert "scaled_dot_product_attention" in fix and "sdpa" in fix


def test_control_timesformer_keeps_its_other_findings():
    """The input wait (the pipeline's preprocessing on the CPU) stays the top finding: the new one comes after it."""
    rep = _wild("timesformer_h100_video")
    bad = [f for f in rep["findings"] if f["severity"] in ("warning", "critical")]
    assert bad[0]["rule"] == "input_bound", [f["rule"] for f in bad]


#: Heads x batch, tokens, head size of the constructed attention: Q @ K^T is [B, N, D] x [B, D, N] -> [B, N, N].
B, N, D = 96, 512, 64


def _layer(ev: list, t: float, corr: int, middle: list[tuple[str, float]], dims: bool) -> tuple[float, int]:
    """A bmm of 200 us, the ``middle`` kernels (name, us), a bmm of 200 us, back to back from ``t``; each launched by
    its own op (the bmms' with their bf16 ``Input Dims`` where ``dims``).  Returns where it ends and the last
    correlation id."""
    shapes = iter(([[B, N, D], [B, D, N]], [[B, N, N], [B, N, D]]))
    for name, dur in [(BMM, 200.0), *middle, (BMM, 200.0)]:
        corr += 1
        args = {"Input Dims": next(shapes), "Input type": ["c10::BFloat16"] * 2} if dims and name == BMM else {}
        ev += [{**HOST, "cat": "cpu_op", "name": "aten::bmm" if name in (BMM, FLASH) else "aten::op", "ts": t - 30,
                "dur": 25, "args": args},
               {**HOST, "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t - 25, "dur": 10,
                "args": {"correlation": corr}},
               {**GPU, "cat": "kernel", "name": name, "ts": t, "dur": dur,
                "args": {"correlation": corr, "device": 0, "stream": 7}}]
        t += dur + 2
    return t, corr


def _steps(middle: list[tuple[str, float]], per_step: int, n: int = 5, dims: bool = False,
           then: list[tuple[str, float]] | None = None) -> tuple[list[dict], float]:
    """``n`` ProfilerSteps of ``per_step`` layers each (and, ``then`` given, as many more with ``then`` between their
    matmuls: a backward); returns the events and the step (ms)."""
    ev: list[dict] = []
    t, corr = 1000.0, 0
    for s in range(n):
        t0 = t
        t += 50
        for mid in [middle] * per_step + ([then] * per_step if then else []):
            t, corr = _layer(ev, t, corr, mid, dims)
        t += 50
        ev.append({**HOST, "cat": "user_annotation", "name": f"ProfilerStep#{s + 1}", "ts": t0, "dur": t - t0})
    return ev, (t - 1000.0) / n / 1e3


def test_eager_attention_by_construction(tmp_path):
    middle = [(SCALE, 60.0), (SOFTMAX, 300.0)]
    ev, step = _steps(middle, per_step=6)
    (f,) = _attention(kineto_doc.session_report(tmp_path, ev))
    between = 6 * sum(d for _, d in middle) / 1e3  # ms per step: the kernels a fused kernel does not run
    assert f["metric"]["detail"]["runs_per_step"] == 6
    assert abs(f["saving"]["ms_per_step"] - between) <= 0.01 * between, (f["saving"], between)
    assert f["severity"] == ("critical" if between / step >= T("unfused_attention.critical") else "warning")
    assert "no shapes" in f["saving"]["assumption"]  # nothing sizes the score matrix: the kernels between alone


def test_score_matrix_round_trip_from_recorded_shapes(tmp_path):
    """Where the bmms record their shapes, the score matrix ([B, N, N] bf16) written and read back once each at the
    A100's peak bandwidth is saved too -- from the GPU's table, not from this test's numbers."""
    middle = [(SCALE, 60.0), (SOFTMAX, 300.0)]
    ev, _ = _steps(middle, per_step=6, dims=True)
    (f,) = _attention(kineto_doc.session_report(tmp_path, ev))
    peak = devices.memory_bandwidth(kineto_doc.A100["name"], (8, 0)).value
    trip = 6 * 2 * (B * N * N * 2) / peak * 1e3  # ms per step
    between = 6 * sum(d for _, d in middle) / 1e3
    assert abs(f["metric"]["detail"]["score_round_trip_ms_per_step"] - trip) <= 0.01 * trip
    assert abs(f["saving"]["ms_per_step"] - (between + trip)) <= 0.01 * (between + trip), (f["saving"], between, trip)
    assert f"[{B},{N},{D}]x[{B},{D},{N}]" in f["summary"]


def test_control_a_classifier_heads_softmax_once_a_step(tmp_path):
    """The head's matmul -> softmax, then a matmul, once a step: no layer's attention."""
    ev, _ = _steps([(SOFTMAX, 300.0)], per_step=1)
    assert not _attention(kineto_doc.session_report(tmp_path, ev))


def test_control_a_routers_softmax_before_its_top_k(tmp_path):
    """A mixture-of-experts router: gate matmul -> softmax -> top-k -> expert matmul, every layer: the top-k is no
    element-wise kernel, so no attention."""
    ev, _ = _steps([(SOFTMAX, 30.0), (TOPK, 40.0)], per_step=6)
    assert not _attention(kineto_doc.session_report(tmp_path, ev))


def test_control_fused_attention_says_nothing(tmp_path):
    """FlashAttention's kernel between two projections: no softmax kernel runs on its own."""
    ev, _ = _steps([(FLASH, 400.0)], per_step=6)
    assert not _attention(kineto_doc.session_report(tmp_path, ev))


def test_softmax_family_by_name():
    """ATen's softmax kernels are the family; log-softmax (a loss's, ATen's epilogue says so) and fused attention
    kernels are not."""
    assert devices.softmax_one(SOFTMAX)
    assert devices.softmax_one("void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 3, false, false>(T2*)")
    assert not devices.softmax_one(SOFTMAX.replace("SoftMaxForwardEpilogue", "LogSoftMaxForwardEpilogue"))
    assert not devices.softmax_one(FLASH)
    assert not devices.softmax_one(LOSS)


def test_control_captures_whose_attention_is_fused_say_nothing():
    """Kept captures whose attention runs in one fused kernel -- PyTorch's FlashAttention (Qwen1.5 and a ViT on an
    H100, through SDPA), Composable Kernel's FMHA (SGLang's prefill on an MI300X) -- and that run no softmax kernel
    of their own between two matmuls: no finding."""
    for run, fused in (("hf_qwen_h100", "flash_fwd_kernel"), ("nsfw_vit_h100", "flash_fwd_kernel"),
                       ("sglang_mi300x_prefill", "FmhaBatchPrefill")):
        names = {e["name"] for e in kineto_doc.kept_events(FIXTURES / "wild" / run) if e.get("cat") == "kernel"}
        assert any(fused in n for n in names), run  # the file's own fused attention kernel
        assert not _attention(_wild(run)), run


def test_t5_encoders_eager_attention_is_a_note():
    """xDiT's Flux.1 on an MI300X encodes its prompt with T5 (Hugging Face's T5 attention is eager: its position
    bias added between the matmul and the softmax), 23 of its 24 layers back to back (the first computes the bias
    apart): a real run of eager attention, but under 2% of the pipeline call -- info, beside a healthy verdict."""
    rep = _wild("xdit_flux_mi300x_denoise")
    (f,) = _attention(rep)
    assert f["severity"] == "info"
    assert f["saving"]["percent_of_step"] < 100 * T("unfused_attention.warning")
    assert not [x for x in rep["findings"] if x["severity"] in ("warning", "critical")]


def test_training_counts_each_layer_once_forward_and_backward(tmp_path):
    """Eager attention trained (``eager_attention_train``: L layers, each a forward matmul -> scale -> softmax ->
    matmul and a backward matmul -> softmax backward -> scale -> matmul): the finding says L layers, forward and
    backward -- not "2L times" -- and saves the kernels between the matmuls of both passes (truth by construction)."""
    sc = tt.SCENARIOS["eager_attention_train"]
    tt.write_run(str(tmp_path), "eager_attention_train", steps=8)
    s = next(iter(discover(str(tmp_path))))
    (f,) = _attention(session_report(s).to_dict())
    layers = sc.extra["layers"]
    d = f["metric"]["detail"]
    assert (d["layers_per_step"], d["backward_runs_per_step"], d["runs_per_step"]) == (layers, layers, 2 * layers)
    assert f"in {layers} layers per step, forward and backward ({2 * layers} runs)" in f["summary"], f["summary"]
    assert "the backward's runs are in it" in f["summary"]
    assert abs(f["saving"]["ms_per_step"] - sc.extra["between_ms"]) <= 0.01 * sc.extra["between_ms"], f["saving"]


def test_control_a_classifier_heads_softmax_forward_and_backward_once_a_step(tmp_path):
    """A head's matmul -> softmax -> matmul once forward and once backward a step: two runs, one layer -- no finding
    (on main the two runs made the count)."""
    ev, _ = _steps([(SOFTMAX, 300.0)], per_step=1, then=[(SOFTMAX_BWD, 300.0)])
    assert not _attention(kineto_doc.session_report(tmp_path, ev))


def test_softmax_backward_family_by_name():
    assert devices.softmax_backward_one(SOFTMAX_BWD)
    assert devices.softmax_backward_one("void (anonymous namespace)::softmax_warp_backward<c10::BFloat16, c10::BFloat16, float, 10, false, false>(T1*)")
    assert devices.softmax_backward_one("triton_per_fused__softmax_backward_data_mul_3")
    assert not devices.softmax_backward_one(SOFTMAX)


def test_a_routers_fused_softmax_and_top_k_is_no_attention(tmp_path):
    """vLLM's MoE router runs the gate's softmax and its top-k in one kernel, between the gate's matmul and the
    experts' GEMM: no score matrix lies between them, whatever the name's "softmax" (on main: a finding every MoE
    layer)."""
    assert not devices.softmax_one(TOPK_GATING)
    ev, _ = _steps([(TOPK_GATING, 30.0)], per_step=6)
    assert not _attention(kineto_doc.session_report(tmp_path, ev))


def test_t5s_fix_is_not_a_switch_its_releases_lacked():
    """The T5 encoder's eager attention (xdit_flux: ``nn.Module: T5Attention_<n>`` spans around its launches): the
    fix names T5's attention and the transformers change that gave it SDPA, never the bare
    ``attn_implementation="sdpa"`` promise of any Hugging Face model (a ValueError on the releases before it)."""
    (f,) = _attention(_wild("xdit_flux_mi300x_denoise"))
    (a,) = f["actions"]
    assert "T5Attention" in a["text"] and "ValueError" in a["text"], a
    assert "AutoModel.from_pretrained" not in a["snippet"]
