"""A sync after every kernel: the GPU's idle between kernels is the sync's, not the launches' (issue #37 deliverable 3).

The real case (lockfuehrer/beast_ressoruces ``report2.sqlite`` @381153b0, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``): an OpenMP offload program launches 2,404 kernels of ~0.5-1 ms, each followed by
``cuStreamSynchronize`` (a synchronous target region); the GPU is 88% busy.  Each idle gap begins when a kernel ends
and the host, blocked in the sync, only then launches the next: the breakdown books it as launch wait, and main
ranked ``launch_bound`` (12.7 ms a step) above ``host_sync`` (10.1 ms), whose fix -- stop waiting after each kernel --
is the one that removes the gap (a CUDA graph of a loop that syncs after each kernel still waits).

By construction (``synthetic.nsysexport.write_synced_kernels``): with the syncs the host launches in 12 us what runs
520 us, so without them no gap is left -- the cause is the sync; the control launches in 600 us without syncing
(no sync, a launch slower than its kernel) -- the cause is the launch.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import first_report


def _findings(path: str) -> list[dict]:
    return first_report(path)["findings"]


def _rule(f: dict) -> str:
    return f["id"].split(":", 1)[0]


@pytest.mark.parametrize("sync, launch_us", [(True, 12.0), (False, 600.0)])
def test_the_idle_between_kernels_is_its_causes(tmp_path, sync: bool, launch_us: float) -> None:  # noqa: ANN001
    path = str(tmp_path / "report2.sqlite")
    truth = nx.write_synced_kernels(path, sync=sync, launch_us=launch_us)
    found = [f for f in _findings(path) if _rule(f) in ("launch_bound", "host_sync")]
    assert found, "the GPU idles between kernels: some check must say why"
    assert _rule(found[0]) == truth["cause"]
    other = "launch_bound" if truth["cause"] == "host_sync" else "host_sync"
    # the other check claims none of the cause's time: it is absent, or saves less than a tenth of it
    cause_ms = found[0]["saving"]["ms_per_step"]
    assert all(f["saving"]["ms_per_step"] < 0.1 * cause_ms for f in found if _rule(f) == other)
