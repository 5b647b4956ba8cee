"""The launch wait the host spends in its launch calls, apart from the program's own code between them (issue #37
class 3, "each wait belongs to its cause"; h37-launchwait).

The assumption that was wrong: that the GPU idle while the host launches is the launches' cost.  The ledger's launch
wait is the GPU idle before a launch that came late -- late for whatever the host did before the call.  A CUDA graph
or fewer kernels cut the calls (and the driver's submission after them); the program's own code between the calls
runs as before, so a saving "by a graph" of the whole wait promised time no graph gives back.

Real: PEXSI's selected inversion on an A100 (kept: ``wild/pexsi_a100_pageable_sync``, modified BSD): 849 launch calls
of 5.70 ms in all (by SQL on the file); main priced its 29.5 ms launch wait whole as launch overhead (a warning saving
~28.6 ms by bigger kernels and a CUDA graph).  The calls and their submission hold 2.03 ms of it as the ledger books
it, the program's own code between them 20.9 ms.

By construction (``synthetic.nsysexport.write_host_code_launches``): a native pass of small kernels, each launched
after 40 us of host code no call records (the calls' part and the code's part of every gap known), and the control:
the same pass bound by 40 us launch calls with 2 us between them, whose saving stays the whole wait's.  A framework's
host time between launches is its dispatch, which a graph of the step replays away: PyTorch's finding keeps its
reading (the control on a real PyTorch capture)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from synthetic.nsysexport import write_host_code_launches
from tb_gpu_advisor.devices import amd
from tb_gpu_advisor.frameworks import native
from tests.support.cli_report import first_report
from tests.support.paths import FIXTURES, SHARED_PROFILES

PEXSI = FIXTURES / "wild" / "pexsi_a100_pageable_sync" / "report6.sqlite"
WORDS = "the program's own code between its launches"


def _launch(rep: dict) -> dict | None:
    return next((f for f in rep["findings"] if f["rule"] == "launch_bound"), None)


def _idle_in_launch_calls_ms(path: Path) -> tuple[float, float]:
    """(the launch calls' own time, the GPU's idle inside them), ms, read by SQL: per kernel, from its call's start
    (or the end of the GPU's earlier work, where later) to its start or its call's return and 50 us of submission,
    whichever is first -- an upper bound of what the ledger books (it keeps only the steps' launch wait)."""
    con = sqlite3.connect(path)
    work = sorted(con.execute("SELECT start, end, 1 FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT start, end, 0 "
                              "FROM CUPTI_ACTIVITY_KIND_MEMSET UNION ALL SELECT start, end, 0 FROM "
                              "CUPTI_ACTIVITY_KIND_MEMCPY"))
    calls = dict(((k, (s, e)) for k, s, e in con.execute(
        "SELECT k.start, r.start, r.end FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON "
        "r.correlationId = k.correlationId")))
    con.close()
    latest, idle = -1, 0
    for s, e, kernel in work:
        if kernel and s in calls:
            cs, ce = calls[s]
            idle += max(0, min(s, ce + 50_000) - max(latest, cs))
        latest = max(latest, e)
    return sum(e - s for s, e in calls.values()) / 1e6, idle / 1e6


def test_pexsis_launch_wait_is_mostly_its_own_code_not_its_launch_calls() -> None:
    own, in_calls = _idle_in_launch_calls_ms(PEXSI)
    assert 5.6 < own < 5.8 and 3.3 < in_calls < 3.6  # the file's own numbers
    launch = _launch(first_report(PEXSI))
    assert launch is not None
    d = launch["metric"]["detail"]
    # a graph saves at most the launch calls' idle (main: ~28.6 ms, the whole wait less a graph's residue)
    assert 0 < launch["saving"]["ms_per_step"] <= in_calls
    wait, calls, code = d["launch_wait_ms"], d["launch_call_wait_ms"], d["host_code_wait_ms"]
    assert 0 < calls <= in_calls <= own  # the ledger's part of the calls' idle: never more than the calls hold
    assert code >= 5 * calls and calls + code <= wait + 1e-9
    assert launch["saving"]["ms_per_step"] <= calls  # the calls' part as the ledger books it, less a graph's residue
    assert WORDS in launch["summary"] and "does not cut that code" in launch["summary"]
    assert any("between its launches" in a["text"] for a in launch["actions"])


@pytest.mark.parametrize("bound", ["host_code", "launch_calls"])
def test_a_pass_of_launches_split_by_construction(tmp_path: Path, bound: str) -> None:
    path = tmp_path / bound / "run.sqlite"
    path.parent.mkdir()
    kw = {"code_us": 40.0, "call_us": 5.0} if bound == "host_code" else {"code_us": 2.0, "call_us": 40.0}
    truth = write_host_code_launches(str(path), **kw)
    launch = _launch(first_report(path.parent))
    assert launch is not None
    d = launch["metric"]["detail"]
    wait, save = d["launch_wait_ms"], launch["saving"]["ms_per_step"]
    if bound == "host_code":  # 9 us of each 39 us gap is the call and its submission, 30 us the program's code
        share = truth["launch_calls_ms"] / (truth["launch_calls_ms"] + truth["host_code_ms"])
        assert save <= share * wait  # at most the calls' part of the wait (main: ~17.5 us of each 39 us)
        assert d["launch_call_wait_ms"] / wait == pytest.approx(share, rel=0.02)
        assert d["host_code_wait_ms"] / wait == pytest.approx(1 - share, rel=0.02)
        assert save <= d["launch_call_wait_ms"] and WORDS in launch["summary"]
    else:  # the control: the gap is the calls', the saving the whole wait's less a graph's residue, as on main
        assert truth["host_code_ms"] == 0 and "launch_call_wait_ms" not in d and WORDS not in launch["summary"]
        assert save >= 0.4 * wait


@pytest.mark.skipif(not (SHARED_PROFILES / "real-h100-torch" / "torch_tiny_ops").exists(), reason="shared profiles absent")
def test_a_frameworks_launch_wait_keeps_its_dispatch_reading() -> None:
    # PyTorch's host between launches is its dispatch, which a graph of the step replays away: no split, no words
    launch = _launch(first_report(SHARED_PROFILES / "real-h100-torch" / "torch_tiny_ops"))
    assert launch is not None and launch["severity"] == "critical"
    assert "launch_call_wait_ms" not in launch["metric"]["detail"] and WORDS not in launch["summary"]


def test_a_hip_programs_host_code_fix_names_rocm_tools() -> None:
    # the fix that says how to see the code is the vendor's: roctx and rocprofv3 on AMD, NVTX and nsys on NVIDIA
    (cuda,) = native.FRAMEWORK.fix("launch_bound:host_code")
    (hip,) = native.for_vendor(native.FRAMEWORK, amd).fix("launch_bound:host_code")
    assert "nvtxRangePushA" in cuda.text and "nsys" in (cuda.snippet or "")
    assert "roctx" in hip.text and "rocprofv3" in (hip.snippet or "")
    assert not any(w in hip.text + (hip.snippet or "") for w in ("NVTX", "nvtx", "nsys", "Nsight", "CUDA"))
