"""The copy finding says how much of its copy time is synchronous only where that is a part of the step it grades.

h37-left48 counted a copy as synchronous by whether its call held the host (merged this stop), and the finding's text
said "N per step is synchronous" for any N above zero: the shared 2 x H100 FSDP window (``nsys/h100_fsdp_window``)
read "1 us per step is synchronous" beside 940 ms of blocking copies -- true, and no news (review6).  The sentence now
follows ``excessive_memcpy.sync_share``, the share of the step at which synchronous copies alone make the finding.
Control: the ViT batch uploaded from pageable memory (15.6 ms of a 84 ms iteration synchronous) keeps it.
"""

from __future__ import annotations

import re

from pathlib import Path

import pytest

from tests.support.cli_report import first_host
from tests.support.paths import FIXTURES

FSDP_WINDOW = Path(__file__).resolve().parents[3] / "shared" / "profiles" / "nsys" / "h100_fsdp_window"
VIT = FIXTURES / "wild" / "vit_a4000_pageable_batch"


def _copy_summary(path: Path) -> str:
    (f,) = [f for f in first_host(path)["findings"] if f["rule"] == "excessive_memcpy"]
    return f["summary"]


@pytest.mark.skipif(not FSDP_WINDOW.exists(), reason="the shared Nsight set is not beside this checkout")
def test_a_microsecond_of_synchronous_copy_is_not_said():
    assert "is synchronous" not in _copy_summary(FSDP_WINDOW)


def test_control_a_pageable_batch_upload_says_its_synchronous_time():
    # one kept step: "in the step is synchronous" (rules.base.Ctx.per_step, h37-left60)
    assert re.search(r"(?:per step|in the step|in the pass) is synchronous", _copy_summary(VIT))
