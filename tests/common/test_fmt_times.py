"""``common.fmt.times``: an estimated factor printed as precisely as an estimate is (the h36 survey's miss 8: batch
headroom "could grow about 4636.8x" on nsfw_vit_h100)."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.common.fmt import times


@pytest.mark.parametrize("x, text", [(2.34, "2.3x"), (9.96, "10.0x"), (14.8, "15x"), (56.6, "57x"), (154.5, "150x"),
                                     (4636.8, "4,600x"), (87566.1, "88,000x")])
def test_a_factor_has_two_significant_digits_from_ten_up(x, text):
    assert times(x) == text
