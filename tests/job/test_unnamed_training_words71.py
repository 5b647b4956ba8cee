"""A loop whose kernels show a backward or an update, by a name or by structure, where no host event names what the
work was for, says what its kernels show -- never "no backward pass, optimizer step or serving engine is named"
beside a kernel named like a compiled optimizer's (``job.kind._backward_shown``, ``job.kind.forward_loop_kind``;
h37-gen71).

gen70 kept such loops from reading as forward passes but left the generic words: a ``torch.compile``'d step whose
optimizer runs as ``triton_for_fused_0``, a step whose products run in a forward's and its two gradients' layouts, a
compiled model (Inductor's ``triton_tem_fused_mm_*`` templates, generic ``triton_poi_fused_*`` backward kernels)
updated by ``torch.optim.Adam(foreach=False)`` -- seven generic element-wise kernels a parameter, after the
backward's last product -- all read "GPU work, but no backward pass, optimizer step or serving engine is named" on
base ea5a2537.  The kind stays unknown, low: nothing names training.  Truth by construction
(``synthetic.nsysexport.NsysJob.step_kernels``: a step's kernels in turn, no NVTX, no ops).  Controls: a compiled
forward loop (templates, no update) keeps the generic words; a loop with SGD over six tensors (6 kernels, under
``_UPDATE_RUN``) too."""

from __future__ import annotations

from synthetic import nsysexport as nx
from tests.support.kernel_loops import loop_job, said

_EW = ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::{}<float>, "
       "std::array<char *, (unsigned long)3>>(int, T2, T3)")
#: ``torch.optim.Adam(foreach=False)``'s ``_single_tensor_adam`` for one parameter
ADAM_PARAM = tuple(_EW.format(f) for f in ("lerp_kernel_scalar", "MulFunctor", "addcmul_cuda_kernel",
                                           "sqrt_kernel_cuda", "DivFunctor", "CUDAFunctor_add", "addcdiv_cuda_kernel"))
ADD = _EW.format("CUDAFunctor_add")
#: a compiled model's forward and backward in Inductor's generic names (no ``_backward`` word in any)
FORWARD = ("triton_tem_fused_addmm_relu_0", "triton_poi_fused_1", "triton_tem_fused_addmm_relu_0", "triton_red_fused_2",
           "triton_tem_fused_addmm_1", "triton_per_fused_3")
BACKWARD = ("triton_per_fused_0", "triton_tem_fused_mm_1", "triton_tem_fused_mm_2", "triton_poi_fused_3",
            "triton_tem_fused_mm_4", "triton_tem_fused_mm_5", "triton_poi_fused_6", "triton_tem_fused_mm_7",
            "triton_red_fused_8")
UNNAMED = "GPU work, but no backward pass, optimizer step or serving engine is named"


def test_a_compiled_optimizer_kernel_is_said(tmp_path):
    """A compiled step whose optimizer is ``triton_for_fused_0``: the words name that kernel (base: "no ... optimizer
    step ... is named")."""
    job = loop_job(tmp_path, FORWARD + BACKWARD + ("triton_for_fused_0",))
    assert (job["kind"], job["kind_confidence"]) == ("unknown", "low"), said(job)
    assert "`triton_for_fused_0`" in job["kind_evidence"] and "update" in job["kind_evidence"], said(job)


def test_products_in_three_layouts_are_said(tmp_path):
    """A step whose cuBLAS products run in a forward's and its two gradients' layouts: the words give the layouts and
    their counts (base: the generic words)."""
    g = nx.GEMM_BF16
    job = loop_job(tmp_path, (g, ADD, g) + nx.gradient_gemms(g) * 2 + ADAM_PARAM * 4)
    assert (job["kind"], job["kind_confidence"]) == ("unknown", "low"), said(job)
    assert "operand layouts" in job["kind_evidence"] and "×20" in job["kind_evidence"], said(job)


def test_a_compiled_model_with_a_per_parameter_adam_says_its_update(tmp_path):
    """A compiled model (templates, generic backward) updated by Adam one parameter at a time (six tensors): the
    words say each repeat runs a per-parameter update after its last product (base: the generic words -- the
    templates were no products, so no run between two was measured)."""
    job = loop_job(tmp_path, FORWARD + BACKWARD + ADAM_PARAM * 6)
    assert (job["kind"], job["kind_confidence"]) == ("unknown", "low"), said(job)
    assert "per-parameter weight update" in job["kind_evidence"] and "43+ kernels" in job["kind_evidence"], said(job)


def test_control_a_compiled_forward_loop_keeps_the_generic_words(tmp_path):
    """Control (passes on base too): a compiled model's forward passes alone -- templates and fusions, no update --
    show nothing, and the templates name no layout: no known kind, the generic words."""
    job = loop_job(tmp_path, FORWARD)
    assert (job["kind"], job["kind_evidence"]) == ("unknown", UNNAMED), said(job)


def test_control_a_short_per_parameter_sgd_keeps_the_generic_words(tmp_path):
    """Control (passes on base too): SGD over six tensors is six kernels after the last product, under the fewest a
    per-parameter update is read by (``_UPDATE_RUN``): the generic words."""
    job = loop_job(tmp_path, FORWARD + BACKWARD + (ADD,) * 6)
    assert (job["kind"], job["kind_evidence"]) == ("unknown", UNNAMED), said(job)
