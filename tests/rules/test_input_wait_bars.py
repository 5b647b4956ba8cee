"""``input_bound``'s bars on the input wait read from the thresholds table (h37-review26 *Left* 6): the share a cause
must hold to be said as the wait's (``input_bound.most_share``: the batch's transfer, the host's own ops), the share
at which the transfer is "all of it" (``input_bound.whole_share``), and the share of the wait other host time before
the first op must reach to be said apart where no pipeline event bounds the wait (``input_bound.apart_share``).  The
defaults are the numbers the rule wrote inline before; each bar moved in the table moves the words."""

from __future__ import annotations

from tb_gpu_advisor.common.thresholds import T, override
from tb_gpu_advisor.rules.input_bound import _apart_floor, _made_by_ops, _transfer_said

#: a 10 ms wait
WAIT = 10.0
#: the host's own ops before the first launch: 4.5 ms of `aten::randn`, under half the wait
OPS = [("aten::randn", 4.5)]


def test_the_defaults_are_the_numbers_written_before():
    assert (T("input_bound.most_share"), T("input_bound.whole_share"), T("input_bound.apart_share")) == (0.5, 0.995, 0.05)
    assert _transfer_said(4.9, WAIT) == ""  # under half: no cause
    assert _transfer_said(6.0, WAIT) == "; 6.00 ms of it (60.0%) the batch's transfer to the device after the pipeline made it"
    assert _transfer_said(9.96, WAIT).startswith("; all of it (9.96 ms)")
    assert _made_by_ops(OPS, WAIT) == ""
    assert _apart_floor("before_first_op", WAIT) == 0.05 * WAIT
    assert _apart_floor("pipeline", WAIT) == T("report.min_said_ms")


def test_each_bar_is_the_tables():
    with override(**{"input_bound.most_share": 0.4}):  # 4.5 ms of 10 is most of it now, and so is a 4.9 ms transfer
        assert "`aten::randn` 4.50 ms" in _made_by_ops(OPS, WAIT)
        assert _transfer_said(4.9, WAIT).startswith("; 4.90 ms of it (49.0%)")
    with override(**{"input_bound.whole_share": 0.9}):
        assert _transfer_said(9.5, WAIT).startswith("; all of it (9.50 ms)")
    with override(**{"input_bound.apart_share": 0.2}):
        assert _apart_floor("before_first_op", WAIT) == 0.2 * WAIT
        assert _apart_floor("pipeline", WAIT) == T("report.min_said_ms")  # a pipeline's floor is the printer's
