"""The unrecorded host time has one value on the screen: the finding's text and its trace window's label.

The unrecorded-time finding states the ledger's ``other`` (the GPU idle no recorded host event covers) less what
other findings claim of it.  Where another finding claims a part -- the time after a blocking copy, which
excessive_memcpy books -- the window's label used to claim the step's whole ``other``: PEXSI's pass (kept:
``wild/pexsi_a100_pageable_sync``, modified BSD) said "for 316.5 ms of it ... no runtime call ... covers the host's
time" with a window "unrecorded host time, the pass (316.9 ms)" (once h37-ownsplit booked the program's own code
between launches as ``other``).  The window then named the pass alone; now it claims the finding's share of the
pass's ``other`` -- the text's 316.5 ms (h37-windows60: one rule, ``rules.base.step_windows``); where no finding claims
a part, the window claims the step's time (the control: a step whose unrecorded time nothing else claims)."""

from __future__ import annotations

import re

from tests.support.cli_report import first_report
from tests.support.paths import FIXTURES

_MS = re.compile(r"\(([\d.]+) (ms|us|s)\)$")


def _unrecorded(run: str) -> dict:
    report = first_report(FIXTURES / "wild" / run)
    (f,) = [f for h in report["hosts"] for f in h["findings"] if f["id"].endswith("#unrecorded")]
    return f


def _said_ms(f: dict) -> float:
    """The unrecorded time the finding states, in ms (its metric's detail)."""
    return float(f["metric"]["detail"]["unrecorded_ms"])


def _window_ms(label: str) -> float | None:
    m = _MS.search(label)
    if not m:
        return None
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
    return float(m.group(1)) * scale


def test_a_window_never_claims_more_unrecorded_time_than_the_finding_states() -> None:
    f = _unrecorded("pexsi_a100_pageable_sync")
    said = _said_ms(f)
    assert 300.0 < said < 330.0, said
    for w in f["windows"]:
        claimed = _window_ms(w["label"])
        assert claimed is not None and abs(claimed - said) <= 0.05, (w["label"], said)  # one pass: its window is the pass


def test_a_window_still_claims_its_steps_time_where_no_other_finding_takes_a_part() -> None:
    f = _unrecorded("part_forward_a100")
    assert any(_window_ms(w["label"]) for w in f["windows"]), [w["label"] for w in f["windows"]]
