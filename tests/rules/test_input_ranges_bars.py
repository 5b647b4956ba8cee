"""``input_bound._range_parts``' bars read from the thresholds table (h37-review25's list): the share one range must
hold to be named on its own (``input_bound.range_named_share``), and the display floor below which a part is unsaid
(``report.min_said_ms``, what ``common.fmt.ms`` prints as "0 us").  Each bar moved in the table moves the words; the
defaults are the numbers the function wrote inline before.  (h37-forms10num: the program's ranges are named beside the
framework's iterator whatever share they hold together, so no bar decides between them.)"""

from __future__ import annotations

from tb_gpu_advisor.common.fmt import ms
from tb_gpu_advisor.common.thresholds import T, override
from tb_gpu_advisor.rules.input_bound import _put_said, _range_parts

#: a 10 ms wait: `get_batch` holds 6 ms, `decode` 0.8 ms (under a tenth), the put 0.3 us (under the print floor)
RANGES, WAIT, PUT = [("get_batch", 6.0), ("decode", 0.8)], 10.0, 0.0003


def test_the_defaults_are_the_numbers_written_before():
    assert (T("input_bound.range_named_share"), T("report.min_said_ms")) == (0.1, 0.0005)
    assert _range_parts(RANGES, WAIT) == ["`get_batch` 6.00 ms", "other ranges 800 us"]
    assert _put_said(PUT, WAIT) == ""
    assert ms(PUT) == "0 us"  # the floor is the printer's: below it a part would read "0 us"


def test_each_bar_is_the_tables():
    with override(**{"input_bound.range_named_share": 0.05}):  # `decode` holds 8%: named on its own now
        assert "`decode` 800 us" in _range_parts(RANGES, WAIT)
    with override(**{"report.min_said_ms": 0.0001}):  # the put said once the floor is below it
        assert _put_said(PUT, WAIT) == " and the batch's transfer to the device (0 us)"
