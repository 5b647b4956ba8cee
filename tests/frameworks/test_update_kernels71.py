"""The frameworks' words for a weight update in a kernel's name are each framework's own (h37-homes71):
``frameworks._UPDATE_KERNEL_WORD`` held PyTorch's ``clip_grad``, ``_foreach_`` and Inductor's ``triton_for_fused``
beside the optimizer names every framework shares.  Now each framework lists its own (``Framework.update_kernels``),
the names once (``base.OPTIMIZER_KERNEL``), and the one list is every registered framework's, joined.

Fails on main ea5a2537 (no ``update_kernels``); the answers are the old list's (:data:`_OLD`, kept here as the
reference) on every name below.
"""

from __future__ import annotations

import re

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.frameworks import base, jax, pytorch, tensorflow

#: the list as main ea5a2537 wrote it, one pattern for every framework
_OLD = re.compile(r"(?i:clip_grad|_foreach_|(?<![a-z])(?:adamw?|sgd|lamb|lion|adagrad|rmsprop|adafactor)(?![a-z]))|"
                  r"^triton_for_fused")

_NAMES = ("fused_adam_kernel", "FusedAdamMathFunctor", "multi_tensor_apply_kernel<AdamFunctor>", "sgd_update",
          "adamw_step", "ResourceApplyAdam", "lamb_stage1", "lion_update", "adagrad", "RMSProp", "rmsprop_kernel",
          "adafactor_update", "madam_kernel", "sgdx", "clip_grad_norm_kernel", "CLIP_GRAD", "_foreach_add_",
          "void at::native::_foreach_mul", "triton_for_fused_0", "Triton_for_fused_0", "x_triton_for_fused",
          "ampere_sgemm_128x64_nn", "volta_h884gemm", "fusion_12", "loop_add_fusion", "", "blamb", "lambda_kernel")


def test_the_one_list_answers_as_the_old_one():
    for name in _NAMES:
        assert frameworks.update_kernel_word(name) == bool(_OLD.search(name)), name


def test_each_framework_lists_its_own_words():
    assert pytorch.FRAMEWORK.update_kernels[0] == base.OPTIMIZER_KERNEL
    for fw in (tensorflow.FRAMEWORK, jax.FRAMEWORK):  # ATen's and Inductor's words are PyTorch's alone
        assert fw.update_kernels == (base.OPTIMIZER_KERNEL,), fw.id
    joined = "|".join(p for f in frameworks.REGISTRY.values() for p in f.update_kernels)
    assert {"_foreach_", "clip_grad", "triton_for_fused"} <= set(re.findall(r"[a-z_]{8,}", joined))
    assert frameworks._UPDATE_KERNEL_WORD.pattern.count("adagrad") == 1  # the names said once
