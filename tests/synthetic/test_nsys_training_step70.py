"""The synthetic Nsight training step follows a real one (h37-gen70): forward products, their data and weight
gradients in the layouts cuBLAS runs them in, an optimizer update per step; a forward loop writes the forward's alone.

Why: ``synthetic.nsysexport.NsysJob`` wrote one GEMM kind for every op of a training step, no backward product and
no optimizer kernel -- a loop no real training step launches, which a reader of kernels alone (fwd69's
``job.kind.forward_loop_kind``) reads as forward passes.  Real captures (kept fixtures): a language model under nvprof
on a V100 (``pyprof_lm_v100_nvprof``: ``volta_sgemm_*_tn`` forward, ``_nn`` and ``_nt`` backward, seven of each a
step), an nvFuser step on an H200 (``nvfuser_h200_first_call``: nvjet ``TNN`` forward, ``NTN`` and ``NNT``
backward).  The real halves skip where a fixture is missing; the generated halves always run."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor import devices, formats
from tb_gpu_advisor.discover.logdir import discover
from tests.support.cli_report import in_process
from tests.support.paths import FIXTURES


def _real_products(run: str) -> Counter:
    """The kernels a real capture's first GPU runs that are matrix products, by operand layout (launches each)."""
    path = FIXTURES / "wild" / run
    if not path.is_dir():
        pytest.skip(f"{path} missing")
    (session,) = discover(str(path))
    d = formats.read(session.hosts[0]).devices[0]
    return Counter(devices.gemm_operand_layout(d.names[i]) for i in d.name.tolist()
                   if devices.gemm_kernel_one(d.names[i]) and devices.gemm_operand_layout(d.names[i]))


@pytest.mark.parametrize("kernel", [nx.GEMM_BF16, nx.GEMM_FP32])
def test_a_training_step_runs_each_product_and_its_two_gradients(kernel):
    """A third of the step's products are the forward's, the rest its gradients in the two other layouts, about
    as many of each (a backward's FLOPs twice the forward's); one update, last (base: no training kernels)."""
    step = nx.training_step_kernels(kernel, 20)
    products = Counter(devices.gemm_operand_layout(k) for k in step if devices.gemm_kernel_one(k))
    assert set(products) == {"tn", "nn", "nt"} and products["tn"] == 6, products
    assert abs(products["nn"] - products["tn"]) <= 1 and abs(products["nt"] - products["tn"]) <= 1, products
    assert [devices.update_kernel_one(k) for k in step] == [False] * 19 + [True]


@pytest.mark.parametrize(("run", "forward"), [("pyprof_lm_v100_nvprof", "volta_sgemm_128x64_tn"),
                                               ("nvfuser_h200_first_call", "nvjet_tst_192x192_64x4_2x1_v_bz_coopB_TNN")])
def test_the_gradient_layouts_are_the_real_captures(run, forward):
    """The layouts :func:`nx.gradient_gemms` gives a real forward product are the ones the real step ran its
    backward in, and each runs about as often as the forward's (base: no such writer)."""
    real = _real_products(run)
    made = {devices.gemm_operand_layout(k) for k in (forward, *nx.gradient_gemms(forward))}
    assert made == set(real) == {"tn", "nn", "nt"}, real
    assert max(real.values()) <= 2 * min(real.values()), real


def _job(tmp_path, name: str, **kw) -> dict:
    p = tmp_path / f"{name}.sqlite"
    nx.write(str(p), nx.NsysJob(steps=10, kernel_us=300.0, step_range=None, autograd_nvtx=False, h2d_us=200.0,
                                shuffle=False, **kw))
    out = in_process("report", str(p), "--format", "json", "--cache-dir", "off")
    return json.loads(out.stdout)["reports"][0]["hosts"][0]["job"]


def test_the_generated_training_loop_reads_training_and_its_forward_loop_inference(tmp_path):
    """With no NVTX and no op, the generated training step reads training by its optimizer's kernel; the same loop
    with the forward's products alone (``training_kernels`` off, the writer's default) reads forward passes."""
    trained = _job(tmp_path, "train", ops=20, training_kernels=True)
    assert trained["kind"] == "training", trained["kind_evidence"]
    forward = _job(tmp_path, "forward", ops=20)
    assert forward["kind"] == "inference", forward["kind_evidence"]


def test_the_training_step_keeps_the_truth_of_its_kernels(tmp_path):
    """Control: the step's kernels are renamed, not added: the truth's kernel count and time are the forward loop's."""
    a = nx.write(str(tmp_path / "a.sqlite"), nx.NsysJob(steps=4, ops=12))
    b = nx.write(str(tmp_path / "b.sqlite"), nx.NsysJob(steps=4, ops=12, training_kernels=True))
    assert (a.kernels, a.kernel_ms, a.step_ms) == (b.kernels, b.kernel_ms, b.step_ms)
