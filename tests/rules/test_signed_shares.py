"""A share never prints a zero with a sign, and the GEMM shapes' table says what its time is (h37-floor35).

``common.fmt.pct`` is the one formatter of shares.  A negative share that rounds to zero printed "-0.0%" (a diff's
step change of a microsecond in a long step: "(-1 us, -0.0%)"), a zero with a sign that says neither the change's
size nor that it is below the digits; it now reads "-<0.1%", as a positive one reads "<0.1%" (h37-coldshare34).
``mfu_low``'s evidence table (its test in tests/report/test_random_jobs.py, beside the JAX job it reads) "GEMM shapes against their roofline" has an ``ms/step`` column of each shape's own kernel
time (concurrent kernels each counted: a rate's time), as the report's roofline table, whose heading said so since
h37-coldshare34 while the finding's title did not; both now take the words from one place (``metrics.flops.ROOF_TIME``).
"""

from __future__ import annotations

import pytest

from tb_gpu_advisor.common.fmt import pct
from tb_gpu_advisor.report.diff_render import _signed_pct


@pytest.mark.parametrize(("share", "digits", "said"), [
    (-0.00026, 1, "-<0.1%"), (-0.0, 1, "0.0%"), (-1e-6, 2, "-<0.01%"), (-0.004, 0, "-<1%"), (-0.1234, 1, "-12.3%"),
    (0.00026, 1, "<0.1%"), (0.0, 1, "0.0%")])
def test_a_share_never_reads_a_signed_zero(share: float, digits: int, said: str) -> None:
    """Main: pct(-0.00026) == "-0.0%", pct(-0.0) == "-0.0%"."""
    assert pct(share, digits) == said


def test_a_diffs_signed_change_below_the_digits_says_so() -> None:
    """Main: "-0.0%" for a step 1 us shorter in 10 ms; "+" only for a change above zero, none for none."""
    assert _signed_pct(-1e-4) == "-<0.1%"
    assert _signed_pct(1e-4) == "+<0.1%"
    assert _signed_pct(0.0) == "0.0%"

