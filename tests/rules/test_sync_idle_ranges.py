"""The idle after a program's sync names the program's own ranges the host spent it in (issue #37 class 3,
h37-copy69): a native loop under ``nsys profile -t cuda,nvtx``, NVTX its only structure (``train_step {k}`` ranges),
waits in ``cudaDeviceSynchronize`` every step, then runs 2 ms of its own recorded work (a ``log metrics`` range),
the GPU idle.  ``host_sync`` claimed the whole 2.0 ms and said only "the GPU then idles until the host launches more
work"; the range was named nowhere in the report (the idle lies inside the NVTX step, so no between-step gap names
it, as ``step_gaps`` names a Kineto loop's ``update_stats``).  Now the finding says where that idle lies: the shared
``rules.base.in_ranges``, each range its share.

By construction (``synthetic.nsysexport.NsysJob(sync_call=, after_sync_range=)``): the sync drains the GPU's queue
after 7.8 ms of waiting; the idle is the range's 2.0 ms (and the next step's first launch).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from tests.support.cli_report import cli_report


@pytest.mark.parametrize("call", ["cudaDeviceSynchronize_v3020", "cudaEventSynchronize_v3020"])
def test_the_syncs_idle_names_the_range_the_host_spent_it_in(tmp_path: Path, call: str):
    path = tmp_path / "loop.sqlite"
    nx.write(str(path), nx.NsysJob(autograd_nvtx=False, sync_call=call, untraced_ms=2.0,
                                   after_sync_range="log metrics"))
    (sync,) = [f for f in cli_report(path)["findings"] if f["id"].startswith("host_sync:") and "#" not in f["id"]]
    assert f"in {call.partition('_v')[0]} ×1" in sync["summary"]
    assert sync["saving"]["ms_per_step"] == pytest.approx(2.0, abs=0.05)
    assert "that idle lies in the program's own ranges `log metrics` 2.00 ms" in sync["summary"]  # main: not named
