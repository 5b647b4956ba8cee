"""A memset is the GPU filling its own memory, not a copy to pin (survey h37-survey58).

RyuGracie/SudokuSolverCUDA's ``build/report3.sqlite`` (an RTX 4060 Laptop, read locally, no licence: not kept) zeroes
its whole 1.36 GB frontier buffer with one ``cudaMemset`` (6.40 ms on the GPU, 212 GB/s: the device's bandwidth) and
then uploads 4 and 162 bytes with ``cudaMemcpy``, the first call waiting for the fill.  On main the ledger booked the
fill with the device copies (``memcpy_d2d``, as docs/metrics.md says), and the copies' finding read "Copies block the
GPU for 6.47 ms ... mostly D2H (all of its 45 us ...)" with pinned memory as its fix -- the largest *copy* named,
while the memcpy table showed the memset's exposed time as 0 -- and the cold start read the first call's wait as "2
copies to the device before the first kernel (6.4 ms): the program's first inputs uploaded once".  The wrong
assumption: every part of the copies' time is a transfer, and a copy call's time is its copy's.  The export here is
``synthetic.nsysexport.write_filled_frontier``'s, its fill and copies known by construction."""

from __future__ import annotations

import pytest

from synthetic.nsysexport import write_filled_frontier, write_pageable_readbacks
from tb_gpu_advisor.common.fmt import ms
from tb_gpu_advisor.discover.logdir import discover
from tests.support.report_store import session_report


def _host(tmp_path, writer=write_filled_frontier, **kw):
    truth = writer(str(tmp_path / "pass.sqlite"), **kw)
    (s,) = discover(str(tmp_path))
    return truth, session_report(s).to_dict()["hosts"][0]


def _finding(host, rule):
    return next(f for f in host["findings"] if f["rule"] == rule)


def _memcpy_rows(host):
    table = host["memcpy"]
    return [dict(zip(table["columns"], r)) for r in table["rows"]]


def test_a_memset_holding_the_copies_time_is_named_with_a_fill_fix(tmp_path):
    truth, host = _host(tmp_path)
    f = _finding(host, "excessive_memcpy")
    text = " ".join(f["summary"].split())
    assert f"mostly memsets (all of its {ms(truth['fill_ms'])}" in text, text
    assert "mostly D2H" not in text and "mostly H2D" not in text
    first = f["actions"][0]["text"]
    assert "cudaMemset" in first and "pinned" not in first, first
    assert "memsets fill only the bytes" in f["saving"]["assumption"]


def test_the_memset_row_shows_the_time_no_kernel_hides(tmp_path):
    truth, host = _host(tmp_path)
    rows = {r["direction"]: r for r in _memcpy_rows(host)}
    assert rows["memset"]["exposed ms/step"] == pytest.approx(truth["fill_ms"], abs=0.001)
    # no part exceeds its whole: the rows' exposed times add up to at most the finding's blocking time
    blocked = _finding(host, "excessive_memcpy")["metric"]["detail"]["blocking_ms_per_step"]
    assert sum(r["exposed ms/step"] for r in rows.values()) <= blocked + 1e-3


def test_uploads_queued_behind_a_fill_count_their_own_time(tmp_path):
    truth, host = _host(tmp_path)
    cold = " ".join(_finding(host, "cold_start")["summary"].split())
    assert f"2 copies to the device before the first kernel ({ms(truth['uploads_ms'])})" in cold, cold


def test_control_small_memsets_beside_pageable_copies_keep_the_copy_named(tmp_path):
    _, host = _host(tmp_path, writer=write_pageable_readbacks, staging_ms=1.3)
    text = " ".join(_finding(host, "excessive_memcpy")["summary"].split())
    assert "mostly D2H" in text and "memsets" not in text, text
