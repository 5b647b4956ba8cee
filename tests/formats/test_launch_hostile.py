"""Hostile launch configurations (issue #38 deliverable 6): Kineto ``grid``/``block`` values and XPlane
``kernel_details`` strings read alike by each format's two decoders, in range, with no escaped error.  A fixed
sample of ``scripts/launch_fuzz_equal.py``'s inputs (the script runs thousands, under AddressSanitizer too)."""

from __future__ import annotations

import random

import pytest

from tb_gpu_advisor.formats.xplane.adapter import _parse_launch
from tests.support import hostile_launch
from tests.support.compiled import built, needs
from tests.support.kineto_paths import differences, read_both

_cscan = built("tb_gpu_advisor.formats.kineto._cscan")
_cwire = built("tb_gpu_advisor.formats.xplane._cwire")
TOP = hostile_launch.TOP


@pytest.mark.parametrize(("details", "want"), [
    ("grid:" + "9" * 4301 + " block:256,1,1", (TOP, 256)),           # past Python's 4,300-digit conversion limit
    ("grid:" + "0" * 5000 + "7,2 block:1," + "9" * 5000, (14, TOP)),  # leading zeros are not significant
    ("grid:0," + "9" * 5000 + " block:" + "0" * 4400, (0, 0)),        # a zero dimension launches nothing
    ("grid:2147483647,2 block:99999999999", (TOP, TOP)),              # saturated at int32's top
    ("grid:4294967296 block:2147483648", (TOP, TOP)),
], ids=["4301 digits", "leading zeros", "zero dimension", "product past int32", "dimensions past int32"])
def test_kernel_details_of_any_length_are_counted(details, want):
    """Truth by construction: a dimension of thousands of digits saturates the count (or a zero makes it 0) rather
    than raising Python's digit-limit ValueError, which stopped the analysis of the whole host."""
    assert _parse_launch(details) == want


@needs(_cwire, "XPlane decoder")
def test_hostile_kernel_details_read_alike_on_both_xplane_decoders():
    rng = random.Random(38)
    for _ in range(40):
        data = hostile_launch.xplane_file([hostile_launch.kernel_details(rng) for _ in range(rng.randint(1, 6))])
        fast, ref = (hostile_launch.xplane_launch_columns(c, data) for c in (True, False))
        assert not isinstance(ref, Exception), ref
        assert fast == ref and all(hostile_launch.counts_in_range(*g[1:]) for g in ref)


@needs(_cscan, "PyTorch JSON scanner")
@pytest.mark.parametrize("seed", [1, 2])
def test_hostile_grid_and_block_read_alike_on_both_kineto_paths(seed):
    """The scanner's ``scan_dims`` and the typed decode's ``launch_count``: the same columns or the same error, and
    every count -1 or within int32."""
    rng = random.Random(seed)
    read = 0
    for _ in range(60):
        fast, ref = read_both(hostile_launch.kineto_trace(rng))
        assert differences(fast, ref) == []
        if not isinstance(fast, Exception) and fast.blocks is not None:
            read += 1
            assert hostile_launch.counts_in_range(fast.blocks, fast.threads)
    assert read > 20  # most traces are read (not all refused), so the columns were compared
