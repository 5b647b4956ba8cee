"""PyTorch's named kernel tables, each of one library's code (h37-review25's list): ATen's own kernels
(``ATEN_KERNEL_KINDS``, aten/src/ATen/native/cuda/) and nvFuser's generated ones (``NVFUSER_KERNEL_KINDS``, named by
the scheduler that built them), so a table's comment and its truth source speak of the names it holds.  The kept
``wild/nvfuser_h200_first_call`` (Thunder + nvFuser's first call of a cross-entropy on an H200, beside ATen kernels)
gives both libraries' names; a pattern of either table must claim none of the other library's names, and the
framework applies both."""

from __future__ import annotations

import re
import sqlite3

from tb_gpu_advisor import frameworks
from tb_gpu_advisor.frameworks import pytorch
from tests.support.paths import FIXTURES

CAPTURE = FIXTURES / "wild" / "nvfuser_h200_first_call" / "report1.sqlite"


def _kernel_names() -> list[str]:
    con = sqlite3.connect(f"file:{CAPTURE}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT DISTINCT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
                           "ON s.id = k.shortName").fetchall()
    finally:
        con.close()
    return [r[0] for r in rows]


def _claims(table, name: str) -> bool:
    return any(re.search(p, name) for p, _ in table)


def test_each_table_claims_only_its_own_librarys_kernels():
    names = _kernel_names()
    fused = [n for n in names if n.startswith("nvfuser_")]
    assert len(fused) >= 6 and len(names) > len(fused)  # the file's own truth: both libraries ran
    assert all(_claims(pytorch.NVFUSER_KERNEL_KINDS, n) for n in fused)
    assert not any(_claims(pytorch.ATEN_KERNEL_KINDS, n) for n in fused)
    assert not any(_claims(pytorch.NVFUSER_KERNEL_KINDS, n) for n in names if n not in fused)


def test_pytorch_applies_its_tables_in_one_order():
    assert pytorch.FRAMEWORK.named_kernel_kinds == (pytorch.ATEN_KERNEL_KINDS + pytorch.NVFUSER_KERNEL_KINDS
                                                   + pytorch.FBGEMM_KERNEL_KINDS + pytorch.VISION_KERNEL_KINDS)
    assert frameworks.named_kernel_kind_one("nvfuser_inner_persistent_f0_c1_r0_g2") == "reduction"
    assert frameworks.named_kernel_kind_one("nvfuser_pointwise_f0_c1_r0_g4") == "elementwise"
