"""A training step the program captured into one CUDA graph and replays itself is never read as forward passes from
the ops recorded beside the replay (``job.kind._replayed_outside_ops``; h37-gen71).

PyTorch's whole-network capture (the CUDA semantics notes: ``static_input.copy_(data); g.replay()``) runs forward,
backward and ``optimizer.step()`` from one ``cudaGraphLaunch`` that lies inside no op: the ops recorded in the window
are the inputs' ``aten::copy_`` into the graph's static tensors and the loss's ``.item()``, and none of them is an
autograd ``*Backward`` node because the graph's ops were recorded when it was captured, not now.  Base ea5a2537 read
such a step "ATen ops ran but no backward pass (autograd's ``*Backward`` nodes) and no optimizer step: a forward pass"
(inference, medium) whatever its kernels -- a per-parameter Adam (``foreach=False``: seven generic element-wise
kernels a parameter), Inductor's templates and its compiled optimizer (``triton_for_fused_*``).  Truth by
construction (``synthetic.torchtrace.Rank.graph(region=None)``).  A replayed forward loop still reads forward passes,
now by its replays' kernels (``job.kind._replayed_forwards``: products, no gradient, no per-parameter update run).
Controls: the same graphs replayed inside
``torch.compile``'s region (``mode="reduce-overhead"``: AOTAutograd would record ``CompiledFunctionBackward`` where it
trains, as the real ``compiled_graphs_rtx3060`` does) stay forward passes; a captured step whose graph holds ATen's
fused Adam reads training by that kernel, as on base."""

from __future__ import annotations

import json

from synthetic import nsysexport as nx
from synthetic import torchtrace as tt
from tests.support.cli_report import in_process

_EW = ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::{}<float>, "
       "std::array<char *, (unsigned long)3>>(int, T2, T3)")
#: ``torch.optim.Adam(foreach=False)``'s ``_single_tensor_adam`` for one parameter: ``exp_avg.lerp_``,
#: ``exp_avg_sq.mul_``, ``.addcmul_``, ``.sqrt()``, ``/ bias_correction2_sqrt``, ``.add_(eps)``, ``param.addcdiv_``
ADAM_PARAM = tuple(_EW.format(f) for f in ("lerp_kernel_scalar", "MulFunctor", "addcmul_cuda_kernel",
                                           "sqrt_kernel_cuda", "DivFunctor", "CUDAFunctor_add", "addcdiv_cuda_kernel"))
MUL, ADD = _EW.format("MulFunctor"), _EW.format("CUDAFunctor_add")
G = nx.GEMM_BF16
#: a compiled step's kernels with Inductor's generic names: forward templates and fusions, the backward's
TEMPLATES = ("triton_tem_fused_addmm_relu_0", "triton_poi_fused_1", "triton_tem_fused_addmm_2", "triton_per_fused_3",
             "triton_per_fused_0", "triton_tem_fused_mm_1", "triton_tem_fused_mm_2", "triton_poi_fused_3",
             "triton_tem_fused_mm_4", "triton_tem_fused_mm_5")
#: one layout's products (a hand-written backward: ``grad @ W``), then Adam one parameter at a time (six tensors)
EAGER_STEP = (G, MUL, G, ADD, G, G, G, G) + ADAM_PARAM * 6


def _job(tmp_path, kernels: tuple[str, ...], region: str | None) -> dict:
    """The job of ten steps, each copying its batch into the graph's input (``aten::copy_``), replaying one graph
    of ``kernels`` (``region`` None: the program's own replay, inside no op) and reading the loss (``.item()``)."""
    def body(r: tt.Rank) -> None:
        r.copy_h2d(8.0, 300.0)
        r.graph([(k, 30.0) for k in kernels], region=region)
        r.sync()
    paths = tt.write_run(str(tmp_path), tt.Scenario(1, tt._single(body), [], [], "graph replay"), steps=10, run="r")
    out = in_process("report", paths[0], "--format", "json", "--cache-dir", "off")
    return json.loads(out.stdout)["reports"][0]["hosts"][0]["job"]


def _said(job: dict) -> str:
    return f"{job['kind']}, {job['kind_confidence']}: {job['kind_evidence']}"


def test_a_replayed_training_step_with_a_per_parameter_adam_is_no_forward_pass(tmp_path):
    """A captured step whose update is Adam one parameter at a time: no forward pass, and the words say why the
    recorded ops say nothing (base: inference, medium, "ATen ops ran but no backward pass")."""
    job = _job(tmp_path, EAGER_STEP, region=None)
    assert job["kind"] != "inference", _said(job)
    assert "graph replay" in job["kind_evidence"] and "outside every op" in job["kind_evidence"], _said(job)
    assert "per-parameter weight update" in job["kind_evidence"], _said(job)


def test_a_replayed_forward_loop_reads_forward_passes_by_its_kernels(tmp_path):
    """A captured forward (products, element-wise work, no update) replayed ten times: forward passes, read from the
    replays' kernels, not from the input copies beside them (base: the same kind by "ATen ops ran but no backward
    pass", the ops that launched none of it)."""
    job = _job(tmp_path, (G, MUL, G, ADD, G), region=None)
    assert (job["kind"], job["kind_confidence"]) == ("inference", "medium"), _said(job)
    assert "replays runs forward matrix products" in job["kind_evidence"], _said(job)


def test_a_replayed_compiled_step_shows_its_update_in_the_words(tmp_path):
    """A captured compiled step (Inductor's templates, its optimizer compiled to ``triton_for_fused_0``): no forward
    pass, and the words say its kernels show an update (base: inference, medium)."""
    job = _job(tmp_path, TEMPLATES + ("triton_for_fused_0",), region=None)
    assert job["kind"] != "inference", _said(job)
    assert "`triton_for_fused_0`" in job["kind_evidence"], _said(job)


def test_control_a_compiled_regions_replays_stay_forward_passes(tmp_path):
    """Control (passes on base too): the same kernels replayed inside ``torch.compile``'s region with no
    ``CompiledFunctionBackward`` anywhere are the framework's forward passes."""
    job = _job(tmp_path, TEMPLATES[:4], region="Torch-Compiled Region: 0/0")
    assert (job["kind"], job["kind_confidence"]) == ("inference", "medium"), _said(job)


def test_control_a_replayed_step_with_fused_adam_reads_training(tmp_path):
    """Control (passes on base too): a captured step whose graph runs ATen's fused Adam reads training by it."""
    job = _job(tmp_path, (G, MUL, G, ADD) + nx.gradient_gemms(G) * 2 + (nx.FUSED_ADAM,), region=None)
    assert (job["kind"], job["kind_confidence"]) == ("training", "medium"), _said(job)
