"""A PyTorch op's text, as every reader of PyTorch's ops writes it (``frameworks.pytorch.op_text``), reads back as the
op's name and type through the op tables' own parsers (``frameworks.base.op_name`` / ``op_type``).

The Kineto and Nsight readers each kept a copy of the writer; the op tables parse what it writes, so the two are
checked against each other: a name the tables split wrong would merge two ops' rows or drop an op's type.
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor.frameworks import pytorch
from tb_gpu_advisor.frameworks.base import op_name, op_type


@pytest.mark.parametrize("name, typ", [
    ("aten::addmm", "addmm"), ("aten::_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention"),
    ("c10d::allreduce_", "allreduce_"), ("Torch-Compiled Region: 0/0", "Torch-Compiled Region"),
    ("Optimizer.step#AdamW.step", "Optimizer.step"), ("forward", "forward"),
])
def test_op_text_reads_back_as_its_name_and_type(name: str, typ: str):
    text = pytorch.op_text(name)
    assert op_name(text) == name
    assert op_type(text) == typ
