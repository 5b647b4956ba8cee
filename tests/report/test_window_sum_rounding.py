"""The ``one-value`` law over several steps reads a time printed whole as rounded to its unit (h37-zero12law, walk
``--zero12`` seed 21954): ``excessive_memcpy`` says "24 us of each 347 us step" over 4 kept steps and shows the
windows "copies, step N (33 us)" of steps 0..2 -- one ledger, its H2D copies 32.589 us in three steps and none in the
fourth: 3 x 32.589 = 4 x 24.442 us.  The law read "24 us" and "33 us" as exact (``_half_ulp``: a whole number is a
count) and saw 99 us of windows over 96 us; the wrong assumption was the checker's, the report said one value.
"""

from __future__ import annotations

import copy

from synthetic.randjobs import random_zero12_job
from tests.support.properties import window_value_problems
from tests.support.random_jobs import report_of


def _host():
    r = report_of(random_zero12_job(21954))
    return r.hosts[0]


def test_windows_of_one_ledger_printed_whole_hold_the_law():
    h = _host()
    (f,) = [f for f in h.findings if f.rule == "excessive_memcpy"]
    assert "24 us of each 347 us step" in " ".join(f.summary.split())
    assert [w.label for w in f.windows] == [f"copies, step {k} (33 us)" for k in range(3)]
    assert window_value_problems(h.host, h) == []  # main: "shows windows claiming 0.099 ms"


def test_windows_claiming_more_than_rounding_hides_are_still_caught():
    """Control: the law still fails where the windows claim more than the finding's time over the steps."""
    h = copy.deepcopy(_host())
    (f,) = [f for f in h.findings if f.rule == "excessive_memcpy"]
    for w in f.windows:
        w.label = w.label.replace("(33 us)", "(34 us)")  # 3 x 33.5 = 100.5 us over 4 x 24.5 = 98 us
    (problem,) = window_value_problems(h.host, h)
    assert "excessive_memcpy" in problem and "claiming" in problem
