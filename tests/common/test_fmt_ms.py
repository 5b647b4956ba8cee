"""``common.fmt.ms``: a duration keeps its unit's three significant digits at every boundary, where rounding would
print a fourth or the next unit's number in this one (``--default`` walk seed 77007: "57.7% of the 1000.0 ms capture
window" of a 999.96 ms window, the words law's "a duration of seconds in ms").  ``ms_step`` is the last digit's
worth of that same text, so the two change units at the same place."""

from __future__ import annotations

import pytest

from tb_gpu_advisor.common.fmt import ms, ms_step


@pytest.mark.parametrize("x, text", [(999.96, "1.00 s"), (999.94, "999.9 ms"), (1000.0, "1.00 s"), (9.996, "10.0 ms"),
                                     (9.994, "9.99 ms"), (0.9996, "1.00 ms"), (0.994, "994 us"), (-999.96, "-1.00 s")])
def test_a_duration_rounds_into_the_next_unit_at_its_boundary(x, text):
    assert ms(x) == text


@pytest.mark.parametrize("x", [999.96, 999.94, 9.996, 9.994, 0.9996, 0.994, 12.3, 1234.5])
def test_the_last_digits_worth_is_the_printed_unit(x):
    """One unit of the last printed digit: 10 ms for seconds to 2 places, 0.1 ms for tens of ms, 0.01 ms, 1 us."""
    text = ms(x)
    want = 10.0 if text.endswith(" s") else 0.001 if text.endswith(" us") else 0.1 if len(text.split(".")[1]) == 4 else 0.01
    assert ms_step(x) == want, (x, text)
