"""Every window fix's slots are filled (h37-words37 *Left* 1): ``rules.base._Said`` leaves a key no word fills as
written, so a template naming a word its window's producer does not give would print ``{iteration}`` to the user.

By construction: each template's slots against what fills them -- every vendor's ``TERMS``, the job's step range
(``frameworks.nvtx.step_range``) and, for a capture whose options had CUDA tracing off, the words its own record gives
(``job.kind._retrace``), read off a generated export of each of its three windows.
"""

from __future__ import annotations

import string

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor import devices, formats
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_report
from tests.support.contradictions import window_slots


def _slots(fixes) -> set[str]:  # noqa: ANN001 - a format's (text, code) pairs
    return {k for pair in fixes for s in pair if s for _, k, _, _ in string.Formatter().parse(s) if k}


def _filled_always() -> set[str]:
    """The words every window fix is given: each vendor's own (the keys all of them fill) and the step range."""
    every = set.intersection(*(set(v.TERMS) for v in devices.VENDORS))
    return every | set(nvtx.step_range("training")) | set(nvtx.step_range("inference"))


def test_every_window_fix_is_filled_by_its_vendor_and_step_words_or_is_a_retrace():
    """A window fix no capture's words are passed to names only slots every vendor and the step range fill; the ones
    that name more are the tracing-off windows, which ``_retrace`` fills (the next test)."""
    loose = {(name, w): _slots(fixes) - _filled_always() for name, f in formats.REGISTRY.items()
             for w, fixes in f.window_fixes.items()}
    assert {k for k, v in loose.items() if v} <= {("nsys", "tracing_off:api"), ("nsys", "tracing_off:program"),
                                                   ("nsys", "tracing_off:time")}, loose
    assert window_slots() >= set().union(*loose.values())


@pytest.mark.parametrize("launched, iterations, window", [(True, 20, "time"), (False, 20, "api"), (True, 0, "program")])
def test_a_tracing_off_window_fix_prints_no_slot(tmp_path, launched, iterations, window):
    """Each of ``_retrace``'s windows, generated: its fix names the program and no slot is left in braces."""
    p = str(tmp_path / "report.sqlite")
    truth = nx.write_tracing_off_loop(p, iterations=iterations, launched=launched)
    rep = first_report(p)
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    said = " ".join((a.get("text") or "") + " " + (a.get("snippet") or "") for a in f["actions"])
    assert truth["program"].split()[0] in said
    if window != "program":
        code = " ".join(a.get("snippet") or "" for a in f["actions"])
        assert ("--delay" in code) == (window == "time") and "cudaProfilerApi" in code, code
    left = [s for s in window_slots() if "{" + s + "}" in said]
    assert not left, (left, said)
