"""Findings name the blocking OS calls the thread launching the GPU's work sat in while the GPU idled (issue #37, "where
to look": Nsight's OS runtime trace, ``-t osrt``, the ``OSRT_API`` table).

Truth is independent of the Advisor's ledger: by construction for the generator's exports (one step's schedule: its
kernels and copies against its OS calls), and read off the raw SQLite for Mordred's CUDA hash join
(``tests/fixtures/wild/mordred_rtx6000_hashjoin``), whose main thread -- the one making every CUDA call -- waits
4.65 s in ``getc`` (standard input) between its uploads and its first kernel.
"""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic import nsysexport as nx
from synthetic.nsysexport import NsysJob
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.formats.nsys.reader import read_trace
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.rules.base import Ctx, in_os_waits, os_waits_table
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.intervals import union
from tests.support.paths import FIXTURES

MORDRED = FIXTURES / "wild" / "mordred_rtx6000_hashjoin" / "report1.sqlite"


def _metrics(path):
    return host_metrics(read(SimpleNamespace(host="h", path=str(path), format="nsys")), release=True)


def _template_truth(job: NsysJob) -> dict[str, float]:
    """OS call -> ms of GPU idle per step the launching thread spent in it, by construction: one step's schedule (ns
    from the step's start), idle = the step's range less its kernels and copies; the helper thread's calls left out."""
    strings = nx._Strings()
    ev = nx._step_template(job, 0, strings)
    names = {i: s for s, i in strings.ids.items()}
    end = ev["period"][0] - 2000  # the step's NVTX range ends 2 us before the next step
    idle, t = [], 0
    for s, e in union([(a, b) for a, b, *_ in ev["kernel"] + ev["memcpy"]]):
        if s > t:
            idle.append((t, min(s, end)))
        t = max(t, e)
    idle.append((t, end))
    out: dict[str, float] = {}
    for a, b, name, helper in ev["osrt"]:
        if not helper:
            out[names[name]] = out.get(names[name], 0.0) + sum(max(0, min(b, y) - max(a, x)) for x, y in idle) / 1e6
    return out


@pytest.fixture(scope="module")
def reading(tmp_path_factory):
    job = NsysJob(steps=12, ops=20, kernel_us=300.0, os_call="read", os_call_ms=6.0)
    path = tmp_path_factory.mktemp("osrt") / "read.sqlite"
    nx.write(str(path), job)
    return job, _metrics(path)


def test_the_launching_threads_os_calls_are_named_with_the_gpus_idle_time_in_them(reading):
    """6 ms in ``read`` before each step's batch, the GPU idle: 6.00 ms a step; the ``ioctl`` inside the step's sync
    holds the microseconds the GPU idles at the sync's end; the helper thread's ``pthread_cond_wait`` over the whole
    step is no wait of the launching thread and is not named.  On main there was no such metric."""
    job, m = reading
    truth = _template_truth(job)
    got = dict(m.idle_in_os_waits)
    assert got.keys() == truth.keys() == {"read", "ioctl"}
    for name, v in got.items():
        assert v == pytest.approx(truth[name], abs=2e-3), (name, v, truth[name])
    assert got["read"] == pytest.approx(6.0, abs=1e-3)
    # a part never exceeds its whole: no more than the GPU's idle time in the step
    assert sum(got.values()) <= m.headline.avg_step_ms - m.breakdown.device_compute - m.breakdown.memcpy_h2d + 1e-6


def test_the_gap_finding_says_the_host_was_blocked_in_the_os(reading):
    _, m = reading
    (name, avg, most), *_ = m.gaps.top_os_waits
    assert (name, avg, most) == ("read", pytest.approx(6.0, abs=1e-3), pytest.approx(6.0, abs=1e-3))
    assert avg <= m.gaps.avg_gap_ms and most <= m.gaps.max_gap_ms
    (f,) = [f for f in evaluate(m) if f.rule == "step_gaps"]
    # the thread ran no code of its own there: the host waited (h37-paced), and the call it waited in is named
    assert "waiting for something outside the capture" in f.summary and "`read` 6.00 ms a step" in f.summary
    assert "pthread_cond_wait" not in f.summary


def test_an_export_without_os_calls_names_none(tmp_path):
    path = tmp_path / "plain.sqlite"
    nx.write(str(path), NsysJob(steps=8, ops=10))
    m = _metrics(path)
    assert m.idle_in_os_waits == [] and m.gaps.top_os_waits == []


def _mordred_truth() -> float:
    """ms of the GPU's idle gap around the main thread's first ``getc``, spent inside it, from the raw tables."""
    con = sqlite3.connect(f"file:{MORDRED}?mode=ro", uri=True)
    (tid,) = con.execute("SELECT DISTINCT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    s, e = con.execute("SELECT o.start, o.end FROM OSRT_API o JOIN StringIds n ON n.id = o.nameId "
                       "WHERE n.value = 'getc' AND o.globalTid = ? ORDER BY o.start", (tid,)).fetchone()
    busy = [r for t in ("KERNEL", "MEMCPY", "MEMSET")
            for r in con.execute(f"SELECT start, end FROM CUPTI_ACTIVITY_KIND_{t}").fetchall()]
    con.close()
    gap0 = max(b for a, b in busy if b <= s + 1) if any(b <= s + 1 for a, b in busy) else s
    gap1 = min(a for a, b in busy if a >= e)
    return (min(e, gap1) - max(s, gap0)) / 1e6


def test_a_real_hash_join_names_its_wait_on_standard_input():
    """Before: the 4.66 s gap was "host work between iterations" with nothing named.  Now: `getc`, 4.65 s in that
    gap, as the raw file has it, and no more than the gap."""
    m = _metrics(MORDRED)
    truth = _mordred_truth()
    assert truth == pytest.approx(4651.7, abs=1.0)
    (name, avg, most), *_ = m.gaps.top_os_waits
    assert name == "getc" and most == pytest.approx(truth, rel=1e-3)
    assert most <= m.gaps.max_gap_ms
    (f,) = [f for f in evaluate(m) if f.rule == "step_gaps"]
    assert "`getc`" in f.summary and "4.65 s at most in one" in f.summary
    assert np.isfinite(avg) and avg * m.gaps.count <= sum(x.gap_ms for x in m.gaps.gaps) + 1e-6


def test_the_host_bound_wording_names_the_calls_holding_a_tenth_of_the_host_time(reading):
    """The host-bound finding's clause (``rules.base.in_os_waits``): `read` holds all 6 ms of a 6 ms host time, the
    sync's `ioctl` (4 us) no tenth of it; with 100 ms of host time neither stands out."""
    _, m = reading
    text = in_os_waits(Ctx(m), 6.0)
    assert "blocked in the OS" in text and "`read` 6.00 ms" in text and "ioctl" not in text
    assert in_os_waits(Ctx(m), 100.0) == ""
    (tab,) = os_waits_table(Ctx(m))
    assert tab.rows[0][0] == "read"


def test_exports_read_as_one_job_keep_each_ones_os_calls(tmp_path):
    """Two ranks' exports read together (``reader._merge``): every OS call of both, on its own thread, names merged."""
    paths = []
    for k, call in enumerate(("read", "getc")):
        p = tmp_path / f"report_rank{k}.sqlite"
        nx.write(str(p), NsysJob(steps=4, ops=4, os_call=call, os_call_ms=2.0, seed=k))
        paths.append(str(p))
    one = [read_trace(p).host_waits for p in paths]
    both = read_trace(paths[0], ranks=paths).host_waits
    assert len(both) == sum(len(w) for w in one)
    assert sorted(both.names[i] for i in both.name) == sorted(w.names[i] for w in one for i in w.name)
    # each rank's launching thread is a line of its own
    reads = both.line[np.array([both.names[i] == "read" for i in both.name])]
    getcs = both.line[np.array([both.names[i] == "getc" for i in both.name])]
    assert set(reads.tolist()).isdisjoint(getcs.tolist()) and (reads >= 0).all() and (getcs >= 0).all()


def _writing_results(tmp_path, write_ms: float) -> tuple[str, float]:
    """``write_managed_kernel``'s vector add, whose host pulls the results back page by page after its one kernel
    (Unified Memory DtoH migrations no call launched), with a planted ``pwrite64`` of ``write_ms`` on the launching
    thread after each burst of pages: a one-pass program writing its output, as NTHU-SC/ISC25-ICON-C's graupel export
    holds it (867 ``pwrite64`` calls, 71 ms, after its last kernel; survey h37-survey12).  Returns the path and the
    planted time, ms, all of it in the GPU's idle inside the step (the migrations go on past the last write)."""
    path = tmp_path / "writing.sqlite"
    truth = nx.write_managed_kernel(str(path), kernel_ms=20.0, readback_bursts=10, pages_per_burst=4)
    con = sqlite3.connect(path)
    con.execute(nx.OSRT_DDL)
    (sid,) = con.execute("SELECT MAX(id) + 1 FROM StringIds").fetchone()
    con.execute("INSERT INTO StringIds VALUES (?, 'pwrite64')", (sid,))
    (tid,) = con.execute("SELECT DISTINCT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    bursts = sorted(r[0] for r in con.execute(
        "SELECT MAX(end) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 12 GROUP BY start / 10000000"))
    assert len(bursts) == truth["dtoh_migrations"] // 4
    rows = [(b + 100_000, b + 100_000 + int(write_ms * 1e6), 0, tid, 0, sid, 0, 0, 0) for b in bursts[:-1]]
    con.executemany("INSERT INTO OSRT_API VALUES (?,?,?,?,?,?,?,?,?)", rows)
    con.commit()
    con.close()
    return str(path), write_ms * len(rows)


def test_os_calls_after_the_last_launch_are_the_launching_threads(tmp_path):
    """A stretch of the GPU's idle that no launch follows (the program writing its output while its pages migrate
    back) is the thread's that launched the GPU's last work: its ``pwrite64`` is named, not "the host's own code,
    which the profiler did not record" (main: no thread launched anything after the stretch, so no call counted)."""
    path, planted = _writing_results(tmp_path, 6.0)
    m = _metrics(path)
    got = dict(m.idle_in_os_waits)
    assert got.get("pwrite64") == pytest.approx(planted, abs=1e-3), got
    # a part never exceeds its whole
    assert sum(got.values()) <= m.headline.avg_step_ms - m.breakdown.device_compute + 1e-6


def test_a_one_pass_programs_wait_after_its_last_kernel_is_its_output_not_a_paced_loop(tmp_path):
    """NTHU-SC/ISC25-ICON-C's graupel export (h37-survey12; h37-left13): the outside-wait finding named the
    ``pwrite64`` calls but its words and fix spoke of "the source that paces the loop" -- a program that runs once
    paces no loop: after its last kernel it writes its results.  By construction all the planted writes lie after the
    one kernel, so the wait after the last kernel is all of them; the finding says so and gives the write's fix."""
    path, planted = _writing_results(tmp_path, 6.0)
    m = _metrics(path)
    assert m.steps.source == "whole_capture"
    assert m.idle_in_os_waits_after_work == pytest.approx(planted, abs=1e-3)
    assert m.idle_in_os_waits_after_work <= sum(v for _, v in m.idle_in_os_waits) + 1e-9  # a part of its whole
    (f,) = [f for f in evaluate(m) if f.id.endswith("#outside_wait")]
    assert f.title == "The GPU idles while the host waits in the OS after the last kernel: the program's output"
    assert f"{planted:.1f} ms of it after the last kernel" in f.summary and "no source paces a loop" in f.summary
    assert "`pwrite64`" in f.summary
    text = " ".join(a.text for a in f.actions)
    assert "asynchronous I/O" in text and "paces the loop" not in text
    assert "paces" not in f.saving.assumption


def test_a_loops_wait_keeps_the_words_of_a_paced_loop(tmp_path):
    """Control: a camera loop (``write_paced_loop``, 26 ms of each 40 ms frame off the CPU mid-frame) is many steps,
    not one pass: its wait is a source pacing the loop, as before."""
    path = tmp_path / "paced.sqlite"
    nx.write_paced_loop(str(path), mid_wait_ms=26.0)
    m = _metrics(path)
    assert m.steps.source not in ("whole_capture", "single_pass")
    (f,) = [f for f in evaluate(m) if f.id.endswith("#outside_wait")]
    assert f.title == "The GPU idles while the host waits for something outside the capture"
    assert "paces the loop" in " ".join(a.text for a in f.actions)
