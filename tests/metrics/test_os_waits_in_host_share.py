"""The launching thread's OS waits that the outside-wait finding claims lie in the idle the step ledger books to the
host, never in time it books elsewhere (survey h37-survey39).

Truth read off the raw SQLite of ``tests/fixtures/wild/mmagic_a100_pyprof_forward/net.sqlite`` (one forward pass of a
video-restoration network on an A100, under PyProf's NVTX): the thread that makes every CUDA call spends 1,949 ms in
OS calls from its first op on, 892 ms of them inside its own runtime calls -- the driver's ``ioctl`` inside the first
launches, 900 ms for one ``cudaLaunchKernel`` while its module loads, which the cold-start finding books as start-up.
Main counted those waits again as "the host waits for something outside the capture" (1.93 s of a 3.00 s pass beside
the start-up's 981.5 ms).  Control: a generated export whose launching thread waits in ``read`` mid-step
(``tests/metrics/test_idle_in_os_waits.py::test_the_launching_threads_os_calls_are_named_with_the_gpus_idle_time_in_them``)
keeps every wait, and the real hash join's ``getc`` (``::test_a_real_hash_join_names_its_wait_on_standard_input``).
"""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

from tb_gpu_advisor.formats import read
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.intervals import idle_within, union
from tests.support.paths import FIXTURES

MMAGIC = FIXTURES / "wild" / "mmagic_a100_pyprof_forward" / "net.sqlite"


def _length(iv):
    return sum(b - a for a, b in iv)


def _minus(iv, cut):
    """The parts of the disjoint sorted intervals ``iv`` outside the disjoint sorted ``cut``."""
    return [part for a, b in iv for part in idle_within(cut, a, b)]


def _waits_outside_calls_ms() -> tuple[float, float]:
    """(ms the launching thread spent in OS calls from its first op on, outside its runtime calls; ms inside them)."""
    con = sqlite3.connect(f"file:{MMAGIC}?mode=ro", uri=True)
    try:
        (tid,) = con.execute("SELECT DISTINCT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                             "WHERE correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL)").fetchone()
        (first_op,) = con.execute("SELECT min(start) FROM NVTX_EVENTS WHERE globalTid = ?", (tid,)).fetchone()
        os_calls = union(con.execute('SELECT start, "end" FROM OSRT_API WHERE globalTid = ? AND start >= ?',
                                     (tid, first_op)).fetchall())
        calls = union(con.execute('SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid = ?',
                                  (tid,)).fetchall())
    finally:
        con.close()
    outside = _length(_minus(os_calls, calls))
    return outside / 1e6, (_length(os_calls) - outside) / 1e6


def test_waits_inside_the_first_launches_are_start_up_not_a_wait_for_an_outside_source():
    outside_ms, inside_ms = _waits_outside_calls_ms()
    assert inside_ms > 800.0  # the premise: the module loading's ioctl inside the first launches
    m = host_metrics(read(SimpleNamespace(host="h", path=str(MMAGIC), format="nsys")), release=True)
    assert m.steps.count == 1
    waits = sum(v for _, v in m.idle_in_os_waits)
    assert 0.0 < waits <= outside_ms + 1.0
    # and no finding says the host waited for a source outside the capture through the one-time costs
    loud = [f for f in evaluate(m) if f.id.endswith("#outside_wait") and f.severity in ("warning", "critical")]
    assert not loud
