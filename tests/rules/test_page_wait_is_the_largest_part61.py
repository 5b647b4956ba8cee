"""The copies' finding names as its largest part the direction whose cost is largest, the kernels' wait for that
direction's page migrations counted with it (h37-review61).

Since h37-nvtx61 the kernels' wait for managed pages migrated to the GPU under them (``paging_in_kernels_ms_per_step``,
from each kernel's start to its first page's arrival) is most of the copies' blocking time on a managed-memory
solver, yet the largest direction was still picked by the copies' own blocking time alone: the generator's solver
read "Copies block the GPU for 421 us of each 803 us step, mostly D2H (all of its 2 us per step blocks, 1 copy per
step)" beside "kernels waited 419 us per step for pages migrated to the GPU", and cestwc's report7 "464 us ...
mostly H2D (all of its 5 us per step blocks ...)": a largest part of 2 or 5 us of a 421 or 464 us whole.

Truth by construction (``synthetic.nsysexport.write_counted_solver(gpu_fault_us=400)``: each turn's first kernel waits
for the flag's page, 419 us from its start to the page's arrival; the host's read of the flag a 2 us D2H migration)
and by hand on report7 (``wild/managed_flag_rtx3090_solver``, MIT: 460.7 us a turn of kernels waiting for H2D pages,
4-5 us of copies).  Both fail on 450b1730."""

from __future__ import annotations

import re

from synthetic import nsysexport as nx
from tb_gpu_advisor.discover.logdir import discover
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

#: what the finding says of the kernels' wait where it is the largest direction's most part
PAGE_WAIT = "H2D -- the kernels' wait for its page migrations, beside the copies themselves"


def _copies_finding(sessions) -> dict:  # noqa: ANN001 - discovered sessions
    (f,) = [f for s in sessions for f in session_report(s).to_dict()["findings"] if f["rule"] == "excessive_memcpy"]
    return f


def _mostly(summary: str) -> str:
    got = re.search(r", mostly (.*?)(?:; |\.$)", summary)
    assert got, summary
    return got.group(1)


def test_a_solvers_page_wait_is_its_h2d_part_not_its_host_reads(tmp_path):
    """Generator: 419 us a turn of kernels waiting for H2D pages beside a 2 us D2H page-in of the host's read: the
    largest part is H2D's, said as the kernels' wait (base: "mostly D2H (all of its 2 us per step blocks")."""
    truth = nx.write_counted_solver(str(tmp_path / "run.sqlite"), read="managed", gpu_fault_us=400.0)
    f = _copies_finding(discover(str(tmp_path)))
    assert truth["page_wait_us_per_turn"] > 100
    assert _mostly(f["summary"]).startswith(PAGE_WAIT), f["summary"]
    # the prefetch of managed memory stays the first fix
    assert "cudaMemPrefetchAsync" in f["actions"][0]["text"]


def test_report7s_largest_part_is_the_kernels_wait_for_h2d_pages():
    """report7 by hand: 461 us a turn of kernels waiting for H2D pages, 5 us of copies (base: "mostly H2D (all of
    its 5 us per step blocks, ...)", the 461 us named only after it)."""
    (s,) = [s for s in wild_sessions() if s.run == "managed_flag_rtx3090_solver"]
    f = _copies_finding([s])
    assert _mostly(f["summary"]).startswith(PAGE_WAIT), f["summary"]


def test_control_a_pageable_upload_names_its_copies():
    """Control (the same on 450b1730): copies with no page migration are named by their own time, no kernels'
    wait."""
    (s,) = [s for s in wild_sessions() if s.run == "square_p5000_pageable_loop"]
    f = _copies_finding([s])
    assert "page migrations" not in _mostly(f["summary"]) and " blocks" in _mostly(f["summary"]), f["summary"]
