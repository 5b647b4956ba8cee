"""The host's own code between launches, booked as its own, apart from its launch calls (issue #37 class 3, "each wait
belongs to its cause"; h37-launchwait, h37-ownsplit).

The assumption that was wrong: that the GPU idle while the host is between launches is launch time.  The ledger's
launch wait was the GPU idle before a launch that came late -- late for whatever the host did before the call.  A
CUDA graph or fewer kernels cut the calls (and the driver's submission after them); the program's own code between
the calls runs as before.  h37-launchwait priced only the calls' part; the ledger (the step card, every total) still
booked the code as launch wait.  For a program that dispatches its own launches (``Framework.own_code_between_launches``:
no ML framework) the ledger now books that code as the host's own unrecorded time (``other``), and the launch-bound
check grades and saves the part of its wait inside the launch calls.

Real: PEXSI's selected inversion on an A100 (kept: ``wild/pexsi_a100_pageable_sync``, modified BSD): 849 launch calls
of 5.70 ms in all (by SQL on the file); main booked 20.9 ms of the program's own code between them as launch wait (the
card "Idle waiting for launch 22.2%", a launch-bound finding on a 29.5 ms wait); the calls and their submission hold
2.03 ms.  Better-Call-Paul's T4 layer norm (``wild/lazy_first_launch_t4``, MIT): of its 83 us wait, 47 us in its
launch calls, the rest in its synchronous read-backs' calls -- graded and saved on the calls' part.

By construction (``synthetic.nsysexport.write_host_code_launches``): a native pass of small kernels, each launched
after 40 us of host code no call records (the calls' part and the code's part of every gap known), and the control:
the same pass bound by 40 us launch calls with 2 us between them, whose wait stays the calls'.  A framework's host
time between launches is its dispatch, which a graph of the step replays away: PyTorch's finding keeps its reading
(the control on a real PyTorch capture)."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace
from pathlib import Path

import pytest

from synthetic.nsysexport import write_host_code_launches
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.rules.launch_bound import after_waits_ms
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tb_gpu_advisor.devices import amd
from tb_gpu_advisor.frameworks import native
from tests.support.cli_report import first_report
from tests.support.paths import FIXTURES, SHARED_PROFILES

PEXSI = FIXTURES / "wild" / "pexsi_a100_pageable_sync" / "report6.sqlite"
LAYER_NORM = FIXTURES / "wild" / "lazy_first_launch_t4" / "report1.sqlite"
WORDS = "the program's own code between its launches"


def _metrics(path: Path):  # -> HostMetrics
    """The host metrics of one Nsight export (its one host): the ledger and the launch split as the rules read them."""
    return host_metrics(read(SimpleNamespace(host=path.stem, path=str(path), format="nsys")))


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


def test_pexsis_own_code_between_launches_is_booked_as_the_hosts_time_not_launch_wait() -> None:
    own, in_calls = _idle_in_launch_calls_ms(PEXSI)
    assert 5.6 < own < 5.8 and 3.3 < in_calls < 3.6  # the file's own numbers
    m = _metrics(PEXSI)
    calls, code = m.launch_wait_in_launch_calls, m.launch_wait_host_code
    assert 0 < calls <= in_calls <= own and code >= 5 * calls  # 2.03 ms in the calls, 20.9 ms of its own code
    # the code is none of the ledger's launch wait: the check's wait (less the part after the syncs) is smaller than
    # the code alone (main: 29.5 ms, the code's 20.9 ms inside it), and the host's own time holds the code
    wait = m.breakdown.launch_wait - after_waits_ms(m)
    assert 0 < wait < code and m.breakdown.other >= code
    rep = first_report(PEXSI)
    # what is left of the wait -- the calls' 2.03 ms and the copies' calls -- is under the check's level (main: a
    # launch-bound finding graded on the whole 29.5 ms); the card says why it is not flagged
    assert _launch(rep) is None
    card = next(c for c in rep["hosts"][0]["headline"] if c["id"] == "launch_wait_share")
    assert card["value"] == pytest.approx(m.breakdown.launch_wait / rep["hosts"][0]["steps"]["count"]
                                          / sum(m.breakdown.as_dict().values()), abs=6e-4)
    # the unrecorded host time the report names holds the code (main: 296.0 ms, the code outside it)
    idle = next(f for f in rep["findings"] if f["id"].endswith("#unrecorded"))
    assert idle["metric"]["detail"]["unrecorded_ms"] >= code + 296.0 * 0.99


def test_a_programs_wait_in_other_calls_is_graded_and_saved_on_its_launch_calls() -> None:
    # the layer norm's 83 us wait: 47 us in its launch calls, the rest in its synchronous read-backs' calls -- a graph
    # of the launches cuts only the first (main: saved ~54 us of the whole 86 us wait, its parts unsaid)
    launch = _launch(first_report(LAYER_NORM))
    assert launch is not None
    d = launch["metric"]["detail"]
    wait, calls = d["launch_wait_ms"], d["launch_call_wait_ms"]
    assert 0 < calls < wait and launch["saving"]["ms_per_step"] <= calls
    assert "so the grade and the saving count the calls' part alone" in launch["summary"]


@pytest.mark.parametrize("bound", ["host_code", "launch_calls"])
def test_a_pass_of_launches_split_by_construction(tmp_path: Path, bound: str) -> None:
    path = tmp_path / bound / "run.sqlite"
    path.parent.mkdir()
    kw = {"code_us": 40.0, "call_us": 5.0} if bound == "host_code" else {"code_us": 2.0, "call_us": 40.0}
    truth = write_host_code_launches(str(path), **kw)
    m = _metrics(path)
    launch = _launch(first_report(path.parent))
    assert launch is not None
    save = launch["saving"]["ms_per_step"]
    # the ledger, per step (two kernels; the gap inside it, the one before it is the step's gap): the calls' part of
    # the gap is launch wait, the code's part the host's own time (main: the code's 30 us of the 39 us gap booked as
    # launch wait too, 39 us of launch wait a step)
    calls, code = m.launch_wait_in_launch_calls, m.launch_wait_host_code
    # two kernels a step: both launches' calls -- the step's first too, the GPU idle in its call its own time
    # (h37-dispatch68; 225b624d booked that part unrecorded host time) --, the code before the second alone
    share = truth["host_code_ms"] / (2 * truth["launch_calls_ms"] + truth["host_code_ms"])
    assert m.breakdown.launch_wait == pytest.approx(calls, rel=0.02)
    assert code / (calls + code) == pytest.approx(share, abs=0.02)
    assert m.breakdown.other >= code
    assert 0 < save <= calls and WORDS not in launch["summary"]  # the wait is all the calls'
    if bound == "launch_calls":  # the control: no code, the saving the whole wait's less a graph's residue
        assert truth["host_code_ms"] == 0 and save >= 0.4 * m.breakdown.launch_wait


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
