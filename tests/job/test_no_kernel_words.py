"""The words of a capture with no kernel count a GPU's fills apart from its copies (h37-copydir31; issue #37
class 3): "the GPUs only copied: N copies" counted every device event that was no kernel or collective, so a GPU that
only zeroed a buffer (``cudaMemset``) "only copied".  Truth by construction: device tables of known kinds."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from tb_gpu_advisor import devices
from tb_gpu_advisor.job.kind import _no_kernel


class _Gpu(SimpleNamespace):
    def __len__(self) -> int:
        return int(self.kind.size)


def _trace(*kinds: list[int]) -> SimpleNamespace:
    return SimpleNamespace(devices=[_Gpu(kind=np.array(k, np.int8)) for k in kinds])


H2D, FILL = devices.KIND_H2D, devices.KIND_MEMSET


@pytest.mark.parametrize("kinds,want", [
    (([H2D, H2D], [H2D]), "(the 2 GPUs only copied: 3 copies)"),  # as on main
    (([FILL, FILL],), "(the 1 GPU only filled memory: 2 fills)"),  # main: "only copied: 2 copies"
    (([H2D], [FILL, devices.KIND_D2D]), "(the 2 GPUs only copied and filled memory: 2 copies, 1 fill)"),
])
def test_a_gpu_that_only_fills_memory_is_not_said_to_copy(kinds, want):
    words = _no_kernel(_trace(*kinds))
    assert words.startswith("no kernel or collective ran on any GPU in the capture") and words.endswith(want), words


def test_no_device_work_at_all_reads_as_before():
    assert _no_kernel(_trace([])) == "no kernel, copy or collective ran on any GPU in the capture"
