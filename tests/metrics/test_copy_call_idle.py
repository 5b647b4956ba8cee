"""The GPU's idle while the host is inside a pageable copy's call is the copy's cost, not launch overhead (issue #37
class 3, h37-pexsi).

The assumption that was wrong: that the host time inside a copy call before its transfer is staging only where it
lasts a millisecond (``devices.STAGING_MIN_NS``, an AMD tracer's reading), only where the call still ran when the
transfer began, and only where the tracer records the memory kind apart from the copy's name -- and that the idle
after a transfer ends is someone else's.  CUDA stages a pageable upload through a pinned buffer inside the call (a
561 kB upload: ~100 us, and the call returns as it submits the transfer), and a synchronous read-back into pageable
memory copies its bytes out of that buffer after the transfer, inside the call.  The GPU, its queue drained, waits for
the call either way; pinned memory removes that wait, a CUDA graph or bigger kernels do not.

Real: PEXSI's selected inversion on an A100 (kept: ``wild/pexsi_a100_pageable_sync``, Ther-LF/QuantPSelInvPlus,
modified BSD): 1,335 synchronous ``cudaMemcpy`` of pageable memory.  Read by SQL on the file: the GPU idles 79.4 ms
inside the uploads' and downloads' calls before their transfers and 28.3 ms inside the downloads' calls after them
(74.0 and 26.4 ms in stretches beyond a copy's own latency, 20 us);
main booked all of it as launch wait (130.2 ms, a critical launch-bound finding saving 129.2 ms "by a CUDA graph")
and the copy finding held the transfers only (125.0 ms).

By construction (``synthetic.nsysexport.write_pageable_copy_loop``): a loop of a pageable upload, four kernels and a
pageable read-back, the GPU's idle inside the copy calls known; main read it as host time no call covers (a critical
between-step gap "paced by a camera or a timer").  Control: the same loop from pinned memory, copies the transfers only.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from synthetic.nsysexport import write_pageable_copy_loop
from tests.support.cli_report import first_report
from tests.support.paths import FIXTURES

PEXSI = FIXTURES / "wild" / "pexsi_a100_pageable_sync" / "report6.sqlite"
BAD = ("warning", "critical")


def _finding(rep: dict, rule: str) -> dict | None:
    return next((f for f in rep["findings"] if f["rule"] == rule and f["severity"] in BAD), None)


def _idle_in_copy_calls_ms(path: Path) -> tuple[float, float, float]:
    """(GPU idle inside the copy calls before their transfers, after them, the transfers), ms, read by SQL: per copy,
    from its call's start (or the end of the GPU's earlier work, where later) to its transfer's start or its call's
    return, whichever is first; and from its transfer's end to its call's return -- each where it lasts a copy's own
    latency at least (20 us: shorter is the call's latency, as a pinned copy's)."""
    con = sqlite3.connect(path)
    work = sorted(con.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT start, end FROM "
                              "CUPTI_ACTIVITY_KIND_MEMSET UNION ALL SELECT start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY"))
    copies = con.execute("SELECT m.start, m.end, r.start, r.end FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN "
                         "CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = m.correlationId").fetchall()
    con.close()
    ran_to, lead, tail, moved = {}, 0, 0, 0
    latest = -1
    for s, e in work:
        ran_to.setdefault(s, latest)  # the latest end of the work that started before s
        latest = max(latest, e)
    for s, e, cs, ce in copies:
        lead += _beyond_latency(min(s, ce) - max(cs, ran_to[s]))
        tail += _beyond_latency(ce - e)
        moved += e - s
    return lead / 1e6, tail / 1e6, moved / 1e6


def _beyond_latency(ns: int) -> int:
    """``ns`` where it lasts a copy's own latency (20 us) at least, else 0."""
    return ns if ns >= 20_000 else 0


def test_pexsis_copy_calls_are_the_copies_not_launch_wait() -> None:
    lead, tail, moved = _idle_in_copy_calls_ms(PEXSI)
    assert 73 < lead < 75 and 26 < tail < 27 and 124 < moved < 126  # the file's own numbers
    rep = first_report(PEXSI)
    copies = _finding(rep, "excessive_memcpy")
    assert copies is not None and copies["severity"] == "critical"
    blocking = copies["metric"]["detail"]["blocking_ms_per_step"]
    # the transfers and the idle inside their calls (give or take the driver's submission after an upload's call
    # returns, and what the ledger paints as held work): main said 125.0 ms, the transfers alone
    assert moved + 0.98 * (lead + tail) <= blocking <= moved + lead + tail + 1.0, blocking
    assert "after the transfers end, the host still inside their copy calls" in copies["summary"]
    launch = _finding(rep, "launch_bound")
    # what is left of the launch wait is the host's own code before launches: not critical, no longer the copies'
    assert launch is None or (launch["severity"] == "warning" and launch["saving"]["ms_per_step"] < 30), launch
    # pinned memory saves the calls' idle too (main: 125.0 ms, the transfers alone), less what the bytes still take on
    # the bus beyond the kernels (h37-bus69: 618 MB over PCIe 4.0 x16 is 16.9 ms at least; the summary says what stays)
    stays = re.search(r"([\d.]+) ms in the pass stays beyond the kernels", " ".join(copies["summary"].split()))
    assert stays is not None and 0 < float(stays.group(1)) < 16.9, copies["summary"]
    assert copies["saving"]["ms_per_step"] >= moved + 0.98 * (lead + tail) - float(stays.group(1))


@pytest.mark.parametrize("pinned", [False, True])
def test_a_pageable_loops_copy_calls_by_construction(tmp_path: Path, pinned: bool) -> None:
    path = tmp_path / f"loop_{pinned}.sqlite"
    truth = write_pageable_copy_loop(str(path), pinned=pinned)
    rep = first_report(path)
    n = truth["iterations"]
    copies = _finding(rep, "excessive_memcpy")
    assert copies is not None
    blocking = copies["metric"]["detail"]["blocking_ms_per_step"]
    moved = truth["transfers_ms"] / n
    if pinned:  # no staging, no copy out: the transfers alone, as before
        assert blocking == pytest.approx(moved, abs=0.002)
    else:  # the transfers and the GPU's idle inside the calls; main: the transfers alone, the rest a paced gap
        assert blocking == pytest.approx(moved + truth["idle_in_copy_calls_ms"] / n, rel=0.03)
    assert _finding(rep, "step_gaps") is None and _finding(rep, "launch_bound") is None
