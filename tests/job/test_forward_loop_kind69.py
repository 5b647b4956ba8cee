"""A launch loop of forward kernels with no gradient or optimizer kernel in any repeat reads inference
(``job.kind.forward_loop_kind``).  Real captures: owaisahmadlone/ML-DL-Security's Nsight exports (``reports/report2..6
.sqlite`` @29a038fb, no licence, so not kept; survey line "owaisahmadlone/ML-DL-Security"): torchvision AlexNet,
DenseNet, SqueezeNet and a small CNN under ``no_grad`` on a T1000, no NVTX and no op ranges, read "GPU work of an
unknown kind" -- a loop of ``scudnn_winograd`` / ``volta_sgemm`` / ``max_pool_forward_nchw`` with no backward.  Truth by
construction: ``synthetic.nsysexport.write`` with no NVTX at all, its kernels renamed in each step to that export's
own names (demangled as Nsight writes them); a training control adds a backward's kernels (cuDNN's ``wgrad``, ATen's
``max_pool_backward``) or an optimizer's alone (ATen's fused Adam), and a ``_foreach`` update keeps the loop from being
read as forward passes."""

from __future__ import annotations

import json
import sqlite3

from synthetic import nsysexport as nx
from tests.support.cli_report import in_process

#: one forward of the real export's small CNN, in its order (short name, demangled name)
_FORWARD = (("_5x_cudnn_volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1",) * 2,
            ("max_pool_forward_nchw", ("void at::native::<unnamed>::max_pool_forward_nchw<float, float>(int, const T1 *, "
                                      "long, long, long, int, int, int, int, int, int, int, int, int, int, T1 *, long *)")),
            ("_5x_cudnn_volta_scudnn_128x32_relu_small_nn_v1",) * 2,
            ("vectorized_elementwise_kernel", ("void at::native::vectorized_elementwise_kernel<(int)4, "
                                              "at::native::<unnamed>::launch_clamp_scalar(at::TensorIteratorBase &)>")),
            ("volta_sgemm_32x32_sliced1x4_tn",) * 2)
_BACKWARD = (("wgrad_alg0_engine", "void cudnn::detail::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>"),
             ("max_pool_backward_nchw", "void at::native::<unnamed>::max_pool_backward_nchw<float, float>(const T1 *)"))
_FUSED_ADAM = (("multi_tensor_apply_kernel", ("void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>"
                                             "::TensorListMetadata<(int)4>, at::native::<unnamed>::FusedAdamMathFunctor"
                                             "<float, (int)4>>(T1, T2)")),)
_FOREACH = (("multi_tensor_apply_kernel", ("void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>"
                                          "::TensorListMetadata<(int)3>, at::native::<unnamed>::BinaryOpListAlphaFunctor"
                                          "<float, (int)3, (int)2, (int)2>>(T1, T2)")),)


def _kind(tmp_path, names: tuple[tuple[str, str], ...]) -> dict:
    """The job of a 10-step loop whose every step runs ``names`` in turn, no NVTX, no ops (as the real export)."""
    p = tmp_path / "loop.sqlite"
    nx.write(str(p), nx.NsysJob(steps=10, ops=len(names), kernel_us=300.0, kernel="k", step_range=None,
                                autograd_nvtx=False, h2d_us=200.0, shuffle=False))
    con = sqlite3.connect(p)
    ids = {}
    for s in {n for pair in names for n in pair}:
        ids[s] = con.execute("INSERT INTO StringIds (value) VALUES (?)", (s,)).lastrowid
    rows = [r[0] for r in con.execute("SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start")]
    for i, row in enumerate(rows):
        short, full = names[i % len(names)]
        con.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = ?, demangledName = ?, mangledName = ? "
                    "WHERE rowid = ?", (ids[short], ids[full], ids[full], row))
    con.commit()
    con.close()
    out = in_process("report", str(p), "--format", "json", "--cache-dir", "off")
    return json.loads(out.stdout)["reports"][0]["hosts"][0]["job"]


def test_a_forward_loop_with_no_gradient_kernel_is_inference(tmp_path):
    """The real export's forward kernels, ten repeats: inference, medium, saying so (base: unknown, low)."""
    job = _kind(tmp_path, _FORWARD)
    assert (job["kind"], job["kind_confidence"]) == ("inference", "medium"), job["kind_evidence"]
    assert "no gradient or optimizer kernel" in job["kind_evidence"] and "repeats" in job["kind_evidence"]


def test_control_the_same_loop_with_its_backward_is_training(tmp_path):
    """Control (passes on base too): the loop with a backward's kernels is training."""
    assert _kind(tmp_path, _FORWARD + _BACKWARD)["kind"] == "training"


def test_a_loop_whose_only_update_is_a_fused_adam_is_training(tmp_path):
    """An optimizer's own kernel shows training, as a backward does (base: unknown)."""
    job = _kind(tmp_path, _FORWARD + _FUSED_ADAM)
    assert job["kind"] == "training" and "FusedAdam" in job["kind_evidence"], job["kind_evidence"]


def test_control_a_foreach_update_keeps_the_loop_from_reading_as_forward_passes(tmp_path):
    """Control (passes on base too): a ``_foreach`` multi-tensor kernel is no gradient, but no forward pass runs one."""
    assert _kind(tmp_path, _FORWARD + _FOREACH)["kind"] != "inference"
