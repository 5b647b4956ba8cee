"""Words that fit what the report already knows (issue #36 deliverable 2): the job's kind, the GPU's vendor, whether
the GPU is named, which copy a finding is about, and a capture whose GPU side was lost.  The checker
(``tests/support/contradictions.context_problems``) reads only the report; it is shown failing on each pattern, then
run over the real captures the issue names (the ``../shared`` ones when present) and the repository's AMD ones."""

from __future__ import annotations

import glob
import json
import os
from types import SimpleNamespace

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Action, Finding, GpuSummary, HostReport, Metric, Report, Table
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.contradictions import context_problems, vendor_words_problems
from tests.support.corpus import corpus
from tests.support.paths import FIXTURES, SHARED_PROFILES
from tests.support.report_store import session_report


def _report(root, run: str) -> Report:
    s = [s for s in discover(str(root)) if s.run == run][0]
    return session_report(s)


def _host(job: dict | None = None, gpu: tuple[str, str] = ("NVIDIA H100 80GB HBM3", "9.0"), findings=(), **kw) -> HostReport:
    return HostReport(host="h", path="p", size_bytes=1, job=job or {"kind": "training"}, findings=list(findings),
                      gpus=[GpuSummary(gpu=0, name=gpu[0], compute_capability=gpu[1], step_ms=1.0, busy_share=1.0,
                                       kernel_count=1)], **kw)


def _finding(rule: str, summary: str, *fixes: str) -> Finding:
    return Finding(id=rule, rule=rule, severity="warning", title="t", summary=summary, guide_section="§1",
                   actions=[Action(text=t) for t in fixes])


def _problems(host: HostReport) -> list[str]:
    return context_problems(Report(run="r", session="s", hosts=[host], findings=[], headline=[], healthy=False,
                                   analyzer_version="t", generated_at="t"))


def test_the_checker_sees_each_pattern():
    """Each example of issue #36 item 3, as a report says it, fails the checker; the fitting words pass."""
    jit = _finding("launch_bound", "s", "jit the whole training step (forward, backward and optimizer update)")
    assert _problems(_host({"kind": "inference"}, findings=[jit]))
    assert not _problems(_host({"kind": "training"}, findings=[jit]))
    fp16 = _finding("mixed_precision_off", "s", "autocast in float16 (this GPU has fp16 Tensor Cores but none for bfloat16)")
    assert _problems(_host(gpu=("GPU:0", "-"), findings=[fp16]))
    assert not _problems(_host(gpu=("Tesla V100-SXM2-16GB", "7.0"), findings=[fp16]))
    # h37-review8 (nsys/h100_fsdp_window, an export without its device table): Tensor Cores claimed for "GPU:0", and
    # loss scaling named in a forward pass's fix
    tc = _finding("tensor_core_unused", "kernels that do not use the Tensor Cores of GPU:0, GPU:1: they run in 32-bit")
    assert _problems(_host(gpu=("GPU:0", "-"), findings=[tc]))
    assert not _problems(_host(gpu=("GPU:0", "-"), findings=[_finding("tensor_core_unused", "kernels that do not use "
                                                                      "Tensor Cores (the capture does not say which GPU this is, nor whether it has them)")]))
    half = _finding("mixed_precision_off", "s", "Run inference in float16 (float16 runs on every GPU with Tensor Cores; "
                                                "on Ampere and newer, bfloat16 needs no loss scaling): cast the model once")
    assert _problems(_host({"kind": "inference"}, findings=[half]))
    assert not _problems(_host({"kind": "training"}, findings=[half]))
    amd = ("AMD Instinct MI300X", "gfx942")
    cols = Table("Top GPU kernels", ["kernel", "tensor core", "TC eligible"], [])
    assert _problems(_host(gpu=amd, kernels=cols))
    assert _problems(_host(gpu=amd, capture={"applied": {"cuda_graphs": "CUDA graphs (graph launches in the trace)"}}))
    assert not _problems(_host(kernels=cols, capture={"applied": {"cuda_graphs": "CUDA graphs"}}))
    copy = _finding("excessive_memcpy", "Copies block the GPU ..., mostly H2D (450 copies)",
                    "Keep .item(), .cpu(), print(loss) out of the step: each is a device-to-host copy", "pin memory")
    assert _problems(_host(findings=[copy]))
    assert not _problems(_host(findings=[_finding("excessive_memcpy", copy.summary, "pin memory", ".item()")]))
    lost = {"kind": "no_gpu", "kind_evidence": "the host launched 260 kernels, but the capture holds no GPU record"}
    assert _problems(_host(lost))
    ids = _finding("mixed_precision_off", "s", "verify, then check the misaligned_dims / Tensor Core findings")
    assert _problems(_host(findings=[ids]))
    keras = _finding("capture_quality", "Only 1 step (no step markers found (no `Steps` line, Keras `Profiled batch`)", "x")
    assert _problems(_host(findings=[keras], capture={"framework": "pytorch"}))
    assert not _problems(_host(findings=[keras], capture={"framework": "tensorflow"}))
    item = _finding("step_gaps", "s", "Keep .item(), .cpu(), print(loss) out of the step")
    assert _problems(_host({"kind": "unknown", "tags": ["native_host"]}, findings=[item]))
    assert not _problems(_host({"kind": "unknown", "tags": []}, findings=[item]))


NAMED = [("real-h100-jax", "host_roundtrip"), ("real-h100-jax", "launch_bound_eager"), ("nsys", "h100_fsdp_window"),
         ("real-h100-torch", "torch_input_bound")]


@pytest.mark.parametrize("where, run", NAMED)
def test_the_named_real_runs_fit_their_context(where, run):
    """The inference JAX runs told "training loop" and "check convergence"; the unknown GPU told it has "no
    bfloat16"; the H2D copy findings led with ".item()" (issue #36 item 3); h100_fsdp_window's forward pass told of
    "the Tensor Cores of GPU:0, GPU:1" and of loss scaling (h37-review8)."""
    root = SHARED_PROFILES / where
    if not root.is_dir():
        pytest.skip(f"{root} not present")
    assert not context_problems(_report(root, run))


AMD_RUNS = ["amd_mi300x", "amd_mi250", "jax_mi300x", "jax_mi355x", "vllm_mi300x_capture", "vllm_mi300x_decode",
            "vllm_mi300x_prefill", "sglang_mi300x_decode", "sglang_mi300x_prefill", "ddp_mi300x_nopool",
            "ddp_mi300x_actckpt", "cold_mi300x_norm", "compiled_mi300x_attn", "mi210_gpu_only"]


@pytest.mark.parametrize("run", AMD_RUNS)
def test_amd_reports_speak_rocm(run):
    """AMD's tables, the fixes the trace shows in use, the savings' assumptions, the findings' metrics, the markdown
    and the tab's legend in ROCm's words: Matrix Cores, HIP graphs, CUs, hipMalloc / hipFree (amd_mi250's saving said
    "on Tensor Cores", ddp_mi300x_nopool "cudaMalloc" in its metric's meaning and its breakdown's legend, the small-grid
    metric "the GPU's SMs" on every AMD GPU; h37-left10)."""
    assert not context_problems(_report(FIXTURES / "wild", run))


def test_the_checker_reads_the_labels_and_the_legend():
    """A metric's label or meaning and the legend the tab draws an AMD report with are read like the findings: each
    CUDA word there fails the checker (the legend on main had one set of labels, CUDA's, for every report)."""
    amd = ("AMD Instinct MI300X", "gfx942")
    churn = _finding("allocator_churn", "s", "x")
    churn.metric = Metric(id="m", label="GPU idle in allocator calls", value=0.5, unit="share", display="50%",
                          meaning="share of step time the GPU idles while the host is in cudaMalloc / cudaFree")
    assert _problems(_host(gpu=amd, findings=[churn], capture={"vendor": "AMD"}))
    churn.metric.meaning = "share of step time the GPU idles while the host is in hipMalloc / hipFree"
    assert not _problems(_host(gpu=amd, findings=[churn], capture={"vendor": "AMD"}))
    assert _problems(_host(gpu=amd, findings=[churn], capture={}))  # no vendor named: the tab draws CUDA's legend
    churn.metric.meaning = "share of step time the GPU idles while the host is in cudaMalloc / cudaFree"
    assert not _problems(_host(findings=[churn], capture={}))  # ... which fits an NVIDIA GPU, as CUDA's calls do


@pytest.mark.parametrize("run", ["vllm_mi300x_capture", "dlrm_v100", "nvfuser_h200_gtest", "hf_qwen_h100",
                                 "tiny_block_h100_infer", "streams_pinned_copies", "gpt2_b200_clock_skew",
                                 "cold_mi300x_norm", "cloverleaf_a100_cuda", "torchrec_a100_stalls"])
def test_wild_reports_fit_their_context(run):
    """A serving engine's memory was said to hold "optimizer state" and activations "training keeps for the backward
    pass"; a straggler's wait pointed at "alltoall_imbalance", a rule's id; a gap finding on guessed steps said
    "(gpu_busy_clusters)", a step source's id; an inference job's fusion saving spoke of results "saved for a backward
    pass" (h37-review); the between-step gap metric's source, printed in every markdown report, called a 1-2% gap
    "normal Keras/tf.function bookkeeping" to PyTorch, JAX and CUDA programs (h37-left10); one GPU's training loop
    was told to "Raise the per-rank batch size"; headline cards said their check "did not fire" beside its note
    (amd_mi250, dlrm_v100) and named rule ids ("it is theirs (host_sync, excessive_memcpy)", cloverleaf); the host's wait
    for unseen GPU work said "profile the whole step" over the fix "a short window instead of the whole run"
    (torchrec_a100_stalls; h37-review2)."""
    assert not context_problems(_report(FIXTURES / "wild", run))


def test_a_compiled_program_linking_libtorch_gets_no_python_advice():
    """nvFuser's C++ gtest (``./bin/test_matmul``, ATen kernels, no Python process) was told to keep ``.item()`` and
    ``print(loss)`` out of its step and shown a Python loop: its host side is C++, so the fix is libtorch's.

    Since h37-windows2 the gtest's window reads as what its truth says it is -- one cold pass, no steps, so no
    step-gap finding carries the sync fix any more: the capture still tags the job ``native_host`` and none of its
    fixes speaks Python; the sync fix that tag selects is read from the framework as the job's report asks for it
    (``for_job``), against the same framework for the same library driven from ``python3``."""
    rep = _report(FIXTURES / "wild", "nvfuser_h200_gtest")
    job = rep.hosts[0].job
    assert "native_host" in job["tags"]
    assert not context_problems(rep)
    said = " ".join(f"{a.text} {a.snippet or ''}" for f in rep.hosts[0].findings for a in f.actions)
    assert said and not any(w in said for w in (".item()", "print(loss)", "DataLoader", "with_stack", "import torch"))
    python = _report(FIXTURES / "wild", "nvfuser_h200_first_call")  # the same library driven from python3
    assert "native_host" not in python.hosts[0].job["tags"]
    fw = frameworks.get("pytorch")
    native = " ".join(a.text for a in fw.for_job(job["tags"]).fix("step_gaps"))
    in_python = " ".join(a.text for a in fw.for_job(python.hosts[0].job["tags"]).fix("step_gaps"))
    assert "item<T>()" in native and ".item()" not in native
    assert "item<T>()" not in in_python


def test_a_serving_engine_with_small_kernels_is_told_to_run_more_requests():
    """A serving engine's small-grid fix was PyTorch's for a model's own code (torch.stack, an optimizer-like
    ``torch._foreach_mul_(params, 0.9)``): its operator fills the GPU by running more requests per step."""
    rep = _report(FIXTURES / "wild", "sglang_b300_decode")
    fixes = [a for h in rep.hosts for f in h.findings if f.rule == "small_grid" for a in f.actions]
    assert fixes and "--max-running-requests" in (fixes[0].snippet or "")
    assert "_foreach_" not in " ".join(a.snippet or "" for a in fixes)


def test_a_capture_whose_gpu_side_was_lost_is_not_called_no_gpu_work(tmp_path):
    """The host launched every kernel of a healthy run but its GPU records are gone: the job is GPU work of an
    unknown kind, never "no GPU work" -- the launches disprove it; its line names the training its host's events show
    (the fixes follow them: h37-left43), the JSON kind the GPU's reading."""
    (path,) = tt.write_run(str(tmp_path), "healthy_bf16", steps=6, run="lost")
    doc = json.load(open(path))
    doc["traceEvents"] = [e for e in doc["traceEvents"]
                          if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")]
    json.dump(doc, open(path, "w"))
    hosts = [SimpleNamespace(host="h0", path=p, format="kineto", size=0) for p in glob.glob(os.path.join(tmp_path, "lost", "*"))]
    rep = analyze_session("lost", "s", hosts)
    assert not context_problems(rep)
    assert rep.hosts[0].job["kind"] == "unknown" and rep.hosts[0].job["host_kind"] == "training"
    assert rep.hosts[0].job["summary"].startswith("Job: training steps, as the host's events name the work")


def test_triton_gemms_in_a_command_buffer_are_never_called_off_the_tensor_cores():
    """gpt_bf16 on an H100 (issue #36): XLA's ``gemm_fusion_dot`` kernels ran inside a CUDA graph, so no kernel names
    its HLO op; the HLO instruction of the kernel's own name gives its FLOPs, and one run faster than the vector units
    can is on the Tensor Cores (physics).  A slower one is unknown, never "no": its name says nothing either way."""
    root = SHARED_PROFILES / "real-h100-jax"
    if not root.is_dir():
        pytest.skip(f"{root} not present")
    k = _report(root, "gpt_bf16").hosts[0].kernels
    rows = [dict(zip(k.columns, r)) for r in k.rows if r[0].startswith("gemm_fusion_dot")]
    assert rows and all(r["tensor core"] is not False for r in rows), rows
    assert any(r["tensor core"] is True for r in rows)


def test_an_mfu_held_down_by_fp32_gemms_names_the_dtype_not_the_other_time():
    """fp32 GEMMs at their fp32 roofline on an H100: MFU is over the bf16 peak, 15x the fp32 one, so the dtype holds
    it down; GEMMs at the roofline of the dtype MFU is measured in leave the step's other time as the cause."""
    from tb_gpu_advisor.metrics.types import Flops
    from tb_gpu_advisor.rules import mfu_low
    from tests.support.rules_factory import healthy

    def quiet(**kw) -> str:
        f = Flops(mfu=0.05, below_roofline_share=0.0, peak_flops=989.4e12, peak_dtype="bf16", **kw)
        return mfu_low.quiet(healthy(flops=f)) or ""

    fp32 = quiet(dtype="fp32", dtype_peak_flops=66.9e12, dtype_mfu=0.74)
    assert "fp32 math holds MFU down" in fp32 and "15x" in fp32 and "other time" not in fp32
    assert "other time" in quiet(dtype="bf16", dtype_peak_flops=989.4e12, dtype_mfu=0.05)


def test_the_checker_holds_each_vendor_to_its_own_words():
    """The words-fit property for every vendor, not AMD alone (h37-review9): CUDA's, NVIDIA's and ROCm's words on an
    Intel GPU, ROCm's or Intel's on an NVIDIA GPU fail the checker; each vendor's own words, and a quoted citation of
    NVIDIA's tools, pass."""
    intel = ("Intel(R) Data Center GPU Max 1550", "-")
    for theirs in ("mark the code with NVTX ranges", "the CUDA sync debug mode warns", "given device='cuda'",
                   "kernels that do not use Tensor Cores", "check that NCCL uses them", "call MIOpen"):
        assert _problems(_host(gpu=intel, findings=[_finding("r", theirs)], capture={"vendor": "Intel"})), theirs
    for ours in ("kernels that do not use the XMX engines", "check that oneCCL uses them",
                 "pageable memory (Nsight Systems' 'CUDA Async Memcpy with Pageable Memory' rule)"):
        assert not _problems(_host(gpu=intel, findings=[_finding("r", ours)], capture={"vendor": "Intel"})), ours
    assert _problems(_host(gpu=intel, kernels=Table("Top GPU kernels", ["kernel", "tensor core"], []),
                           capture={"vendor": "Intel"}))
    for theirs in ("kernels that do not use Matrix Cores", "check that oneCCL uses them", "rocm-smi --showtopo"):
        assert _problems(_host(findings=[_finding("r", theirs)])), theirs
    assert not _problems(_host(findings=[_finding("r", "check that NCCL uses the Tensor Cores (nvidia-smi)")]))


def _xpu_corpus(out) -> dict[str, Report]:
    """Every PyTorch scenario of the synthetic corpus as its job writes it on an Intel GPU (``torchtrace.as_xpu``),
    analysed."""
    root = corpus("corpus_xpu", out)  # the property walk's set of them (this run's, written once)
    return {name: _report(root, name) for name in tt.SCENARIOS}


def test_intel_reports_speak_intel(tmp_path):
    """Every report of a PyTorch job on an Intel GPU in Intel's words (h37-review9, over the generated XPU traces of
    h37-survey27): no Tensor Cores, NVTX ranges, CUDA device or CUDA sync debug mode in its findings, tables,
    metrics and markdown -- main said "TC-eligible kernels not using Tensor Cores" (the table title), "kernels should
    use Tensor Cores" (the metric's source), "NVTX ranges", "device='cuda'" and "the CUDA sync debug mode" there."""
    reports = _xpu_corpus(tmp_path)
    assert all(h.gpus[0].name.startswith("Intel(R)") for r in reports.values() for h in r.hosts)
    bad = {name: p for name, r in reports.items() if (p := vendor_words_problems(r))}
    assert not bad, bad
