"""The note on an XLA program's conditional branches counted as if every branch ran names the framework's own call
(review69).  ``metrics.flops._branch_runs`` wrote JAX's ``lax.cond`` for every XLA program -- a TensorFlow program
compiled by XLA (``jit_compile=True``: its ``tf.cond`` lowers to the same HLO ``conditional``) was told of a JAX call
it never made.  The words are the framework's (``flops:conditional``), the HLO's own name where it has none.

Truth by construction: one FLOP row inside a branch of a module run 4 times, no GPU to say which branch ran (no
kernel names an instruction): 4 runs, the note an upper bound.  Fails on 27fe2870 (main before this review): the
TensorFlow note reads "(`lax.cond`)"."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from tb_gpu_advisor import devices
from tb_gpu_advisor.frameworks import Framework, jax, tensorflow
from tb_gpu_advisor.metrics.flops import _branch_runs
from tb_gpu_advisor.model.trace import FlopOps


def _note(fw: Framework) -> tuple[np.ndarray, str]:
    fo = FlopOps(source="hlo", flops=np.array([2e9]), bytes=np.array([1e6]),
                 precision=np.array([devices.P_BF16], np.int8), kind=np.zeros(1, np.int8), label=["dot bf16"],
                 host_idx=np.full(1, -1, np.int64), module=["cluster_0"], op_name=["dot.2"], branch=np.array([True]))
    ran, note = _branch_runs(SimpleNamespace(gpus=[], fw=fw), fo, fo.branch, np.ones(1), {"cluster_0": 4})
    return ran, note or ""


def test_a_tensorflow_program_is_not_told_of_lax_cond():
    ran, note = _note(tensorflow.FRAMEWORK)
    assert ran.tolist() == [4.0] and "upper bound" in note
    assert "lax" not in note and "conditional branches" in note


def test_a_jax_program_keeps_its_own_call():
    assert "conditional branches (`lax.cond`)" in _note(jax.FRAMEWORK)[1]
