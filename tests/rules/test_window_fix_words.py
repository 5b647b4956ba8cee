"""Every window fix's template is filled: no ``{key}`` reaches a user as raw braces (the lead's review of session 36).

``rules.base.Ctx.window_fixes`` fills a capture format's window fixes from three sources -- the capture vendor's
``TERMS`` (``devices.<vendor>``), the job's step range (``frameworks.nvtx.step_range``) and the words the job stage
read off the capture itself (``job.kind.Kind.fix_words``: the user's command, their iteration range) -- and
``rules.base._Said`` leaves a key none of them fills as written, so that a fix asked for without the capture's words
still reads.  A typo in a template, or a vendor whose ``TERMS`` lack a key another vendor has, would therefore reach
the user as ``{torch_buld}``.  These laws hold every template to the words that fill it, for every vendor and every
capture format, and the real tracing-off export to the words its own record gives.
"""

from __future__ import annotations

import os
import string

import pytest

from tb_gpu_advisor import devices, formats, frameworks
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.frameworks import nvtx
from tb_gpu_advisor.job.kind import work_kind
from tests.support.paths import REPO

TRACING_OFF = os.path.join(REPO, "tests", "fixtures", "wild", "tracing_off_nvtx_a10_train", "nvtx_result.sqlite")


def _keys(template: str) -> set[str]:
    """The named fields of a ``str.format`` template (``{steps}``), none for literal ``{{`` braces."""
    return {k for _, k, _, _ in string.Formatter().parse(template) if k}


def _window_keys() -> dict[tuple[str, str], set[str]]:
    """(format, window) -> the keys its fixes' text and code ask, for every registered capture format."""
    out: dict[tuple[str, str], set[str]] = {}
    for name, fmt in formats.REGISTRY.items():
        for window, fixes in fmt.window_fixes.items():
            out[(name, window)] = set().union(*(_keys(text) | _keys(code) for text, code in fixes)) if fixes else set()
    return out


def unfilled(keys: set[str], filled: set[str]) -> set[str]:
    """The keys of a template no source fills."""
    return keys - filled


def _general_words() -> set[str]:
    """What fills any window fix whatever the capture: every vendor's terms (the same keys for all: below) and the
    step range."""
    return set(devices.nvidia.TERMS) | set(nvtx.step_range("training"))


def test_every_vendor_fills_the_same_terms():
    """A window fix filled for NVIDIA's capture is filled for every vendor's: their ``TERMS`` have one set of keys."""
    keys = {v.VENDOR: set(v.TERMS) for v in devices.VENDORS}
    first = keys[devices.nvidia.VENDOR]
    assert all(k == first for k in keys.values()), {v: sorted(k ^ first) for v, k in keys.items() if k != first}


def test_every_window_fix_asks_only_words_something_fills():
    """Every format's window-fix templates, each key filled by the vendor's terms, the step range, or -- for a window
    whose fix the job stage fills with the capture's own words (the ``tracing_off`` fixes, read off the export's
    command line and NVTX ranges) -- those words, as the real export below shows them."""
    templates = _window_keys()
    assert any(templates.values())  # the walk reads the registry's templates, else it checks nothing
    general = _general_words()
    bad = {w: sorted(unfilled(k, general)) for w, k in templates.items()
           if unfilled(k, general) and not w[1].startswith("tracing_off")}
    assert not bad, bad


def test_the_real_tracing_off_export_fills_its_own_window_fix():
    """``wild/tracing_off_nvtx_a10_train`` (nvtx only, 15 ``benchmark_iteration`` ranges): the job stage picks its
    fix and the words of its record; together with the general words they fill every key of that fix."""
    trace = reader.read_trace(TRACING_OFF)
    kind = work_kind(trace, frameworks.detect_trace(trace))
    assert kind.window_fix.startswith("tracing_off"), kind.window_fix
    keys = _window_keys()[("nsys", kind.window_fix)]
    assert keys and not unfilled(keys, _general_words() | {k for k, _ in kind.fix_words}), \
        sorted(unfilled(keys, _general_words() | {k for k, _ in kind.fix_words}))


@pytest.mark.parametrize("template", ["a {torch_buld} build", "{steps} steps of {step_rnage}"])
def test_a_typo_in_a_template_is_caught(template):
    """The check the laws rest on finds a misspelt key (so the laws above can fail)."""
    assert unfilled(_keys(template), _general_words())
