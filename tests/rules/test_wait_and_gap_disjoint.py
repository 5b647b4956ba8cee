"""The idle a sync's wait claims and the gap's host work left after it are two times, not one (issue #37 class 3:
"each wait belongs to its cause"; h37-probe42s).

``step_gaps`` and ``launch_bound`` leave the idle after the program's syncs and blocking copies out of their own claim
(``HostSyncs.in_gaps_ledger_ms``: it is the waits'), so the gap's saving is what remains once the wait is gone.  Yet
every claim was booked in the pool of its ledger category (``host_work``, ``launch``), and the achievable step keeps
only the larger claim per pool: the two disjoint claims read as the same time.  Wrong assumption on main ed6824fb:
*idle claims in one ledger category are one time*.  A loop that syncs, then runs 0.5 ms of its own bookkeeping,
promised a step the fixes do not leave ("If every fix lands: ~624 us", with both the sync and the bookkeeping gone
the step is the GPU's 400 us) and both findings said "the savings do not add up".  The waits' idle now has pools of
its own (``sync_idle``, ``copy_idle``: ``rules.savings.idle_claims(pool=...)``).

By construction: ``synthetic.torchtrace.write_sync_then_host_work`` (Kineto) and
``synthetic.nsysexport.write_untraced_iteration_tail(tail_range="update_stats")`` (Nsight, NVTX alone).
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from synthetic import nsysexport as nx
from synthetic import torchtrace as TT
from tb_gpu_advisor.runtime.pipeline import analyze_session
from tests.support.generated_host import nsys_host


def _one(host: dict, rule: str) -> dict:
    (f,) = [f for f in host["findings"] if f["rule"] == rule and "#" not in f["id"]]
    return f


@pytest.fixture(scope="module")
def kineto(tmp_path_factory) -> dict:  # noqa: ANN001 - pytest's
    truth = TT.write_sync_then_host_work(str(tmp_path_factory.mktemp("k")))
    (p,) = truth["paths"]
    report = analyze_session("w", "s", [SimpleNamespace(host="h0", path=p, format="kineto", size=os.path.getsize(p))])
    d = report.to_dict()
    return d["hosts"][0] | {"truth": truth, "achievable": d["achievable"]}


def test_the_syncs_idle_and_the_gaps_rest_are_not_said_to_overlap(kineto) -> None:  # noqa: ANN001
    """Fails on main: each listed the other under "the savings do not add up"."""
    sync, gaps = _one(kineto, "host_sync"), _one(kineto, "step_gaps")
    assert gaps["id"] not in sync["saving"]["overlaps"] and sync["id"] not in gaps["saving"]["overlaps"]
    # disjoint, and together no more than the step's GPU idle
    idle = kineto["achievable"]["step_ms"] - kineto["truth"]["gpu_ms_per_step"]
    assert sync["saving"]["ms_per_step"] + gaps["saving"]["ms_per_step"] <= idle + 0.005


def test_if_both_fixes_land_the_step_is_the_gpus_work(kineto) -> None:  # noqa: ANN001
    """Fails on main: 0.624 ms (only the sync's 308 us counted), where the truth is the GPU's 0.400 ms."""
    assert kineto["achievable"]["achievable_step_ms"] == pytest.approx(kineto["truth"]["both_fixes_ms"], rel=0.1)


def test_the_same_in_an_nsight_export_with_nvtx_alone(tmp_path) -> None:  # noqa: ANN001
    """The Nsight loop of probe41's Left (2): a sync, then 0.5 ms in ``update_stats``.  Main: each finding overlapped
    the other and the host group recovered only host_sync's 375 us; now the two claims add up."""
    host = nsys_host(tmp_path, nx.write_untraced_iteration_tail, "loop.sqlite", tail_range="update_stats")
    sync, gaps = _one(host, "host_sync"), _one(host, "step_gaps")
    assert gaps["id"] not in sync["saving"]["overlaps"] and sync["id"] not in gaps["saving"]["overlaps"]
    both = sync["saving"]["ms_per_step"] + gaps["saving"]["ms_per_step"]
    # the groups split the claims by the ledger's categories: the first launch call after the sync is launch wait
    # (h37-dispatch68), a part of what removing the sync recovers -- together the two groups are the two claims
    groups = host["achievable"]["by_group"]
    assert groups["host"] + groups.get("launch", 0.0) == pytest.approx(both, abs=0.003), host["achievable"]
