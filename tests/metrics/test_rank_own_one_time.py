"""A rank's one-time costs and its waits on unseen work are its own GPU's (issue #37 class 2; h37-probe42r).

Wrong assumption on main f6bb69b3: *the host's one-time costs and its waits on work the capture lacks are one
host-wide set of spans* (``Context.one_time_spans`` / ``unseen_spans`` were one union over every driving process's
lines, and ``job.phase.unseen_gpu_work`` asked whether *every* GPU was idle through a wait).  In a capture of several
processes -- one Nsight export of 2 DDP ranks -- rank 1 loading a module for 30 ms was booked as start-up on rank 0's
GPU too (its idle under rank 1's call: 0.446 ms a step), rank 0's syncs under it were left out of its sync count, and
rank 1 blocked 30 ms in a sync with its own GPU idle read as nothing, because rank 0's GPU was busy meanwhile.

By construction (``synthetic.nsysexport.write_rank_pause``: two ranks with no collective, one rank alone pausing in
one call): rank 0 must read as it does with no call at all; rank 1 as one rank alone with the same call reads.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from tests.support.generated_host import nsys_host

_LOOP = {"untraced_ms": 2.0}  # 2 ms of GPU idle a step (untraced host code): room for a wrong booking to show


def _steps(host: dict, gpu: int) -> dict[int, dict[str, float]]:
    return {r["step"]: r["breakdown"] for r in host["step_rows"] if r["gpu"] == gpu}


def _gpu(host: dict, gpu: int) -> dict[str, float]:
    return next(g["breakdown"] for g in host["gpus"] if g["gpu"] == gpu)


@pytest.fixture(scope="module")
def quiet(tmp_path_factory) -> dict:  # noqa: ANN001 - pytest's
    """The same two ranks with rank 1's call of no length: the reading every rank-0 step must keep."""
    return nsys_host(tmp_path_factory.mktemp("quiet"), nx.write_rank_pause, "r.sqlite", call_ms=1e-4, **_LOOP)


@pytest.mark.parametrize("helper", [False, True])
def test_another_ranks_module_load_is_no_start_up_of_this_gpu(tmp_path: Path, quiet: dict, helper: bool) -> None:
    """Rank 1 loads a module for 30 ms, on its loop's thread (its later steps move 30 ms) or on a helper thread
    (nothing moves).  Main booked rank 0's idle under it as start-up: 0.446 ms in each of its steps' mean."""
    paused = nsys_host(tmp_path, nx.write_rank_pause, "r.sqlite", call_ms=30.0, helper=helper, **_LOOP)
    assert paused["job"]["phase"] != "steady"  # the call is read as a one-time cost...
    mine = _steps(paused, 0)
    assert mine and all(b["startup"] == 0.0 for b in mine.values()), mine  # ...of rank 1's alone
    before = _steps(quiet, 0)
    for k, b in mine.items():
        assert b == pytest.approx(before[k], abs=2e-3), k  # the report rounds to 1 us
    # control: rank 1's own GPU books its own one-time cost where it idles under it (a helper thread's call, in
    # a step kept), or drops its own step that holds it (a call on its loop's thread: test below)
    if helper:
        assert _gpu(paused, 1)["startup"] > 0.4
    else:
        assert 5 not in _steps(paused, 1) and 5 in _steps(quiet, 1)


def test_a_ranks_wait_with_its_own_gpu_idle_is_unseen_work(tmp_path: Path) -> None:
    """Rank 1 blocks 30 ms in ``cudaDeviceSynchronize`` with its GPU idle (its loop's rows after it move 30 ms):
    unseen work, as the same rank alone reads it -- main asked whether every GPU was idle, and rank 0's busy GPU made
    the wait nothing (booked as ``other``).  Rank 0's GPU is not charged with it."""
    (tmp_path / "two").mkdir()
    (tmp_path / "one").mkdir()
    two = nsys_host(tmp_path / "two", nx.write_rank_pause, "r.sqlite", call="cudaDeviceSynchronize", **_LOOP)
    alone = nsys_host(tmp_path / "one", nx.write_rank_pause, "r.sqlite", call="cudaDeviceSynchronize", ranks=1,
                      paused=0, **_LOOP)
    assert _gpu(alone, 0)["unseen"] == pytest.approx(30.0 / alone["steps"]["count"], rel=0.02)
    assert _gpu(two, 1)["unseen"] == pytest.approx(_gpu(alone, 0)["unseen"], rel=0.02)
    assert _gpu(two, 0)["unseen"] == 0.0


def _expected_syncs(path: Path, kept: set[int], skip: tuple[int, int], skip_pid: int) -> int:
    """The ``cudaStreamSynchronize`` calls inside the kept steps' ranges of their own rank, less those of process
    ``skip_pid`` that start inside ``skip`` (ns): a sync inside its own process's one-time cost is start-up's."""
    with sqlite3.connect(path) as con:
        steps = con.execute("SELECT start, end, (globalTid >> 24) & 16777215, text FROM NVTX_EVENTS "
                            "WHERE text LIKE 'train_step %'").fetchall()
        syncs = con.execute("SELECT r.start, (r.globalTid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                            "JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaStreamSynchronize%'").fetchall()
    n = 0
    for t, pid in syncs:
        if pid == skip_pid and skip[0] <= t < skip[1]:
            continue
        n += any(a <= t < b and p == pid and int(text.split()[-1]) in kept for a, b, p, text in steps)
    return n


def test_a_ranks_syncs_under_another_ranks_load_are_its_own_waits(tmp_path: Path) -> None:
    """Rank 1's helper thread loads a module for 30 ms; rank 0's syncs meanwhile are rank 0's steady waits.  Main
    left them out as if inside a one-time cost (14 counted of the 16 the kept steps hold)."""
    host = nsys_host(tmp_path, nx.write_rank_pause, "r.sqlite", call_ms=30.0, helper=True, **_LOOP)
    kept = {r["step"] for r in host["step_rows"]}
    call = tuple(host["truth"]["call_ns"])
    want = _expected_syncs(tmp_path / "r.sqlite", kept, call, 1001)
    got = next(f for f in host["findings"] if f["rule"] == "host_sync")["metric"]["detail"]["syncs"]
    assert got == want


def test_a_ranks_one_time_cost_drops_its_own_step(tmp_path: Path) -> None:
    """Rank 1 loads a module for 30 ms on its loop's thread before its step 6 (its later steps 30 ms late): the cost
    lies in rank 1's own step 5, as the rank alone reads it, so step 5 is the warm-up step dropped and no kept step
    of either GPU books start-up.  Main (0cc8f245) judged the call by the host-wide windows -- rank 0's step 6 had
    started -- dropped step 6 and kept rank 1's step 5 with its 30 ms of start-up (h37-probe43r)."""
    (tmp_path / "two").mkdir()
    (tmp_path / "one").mkdir()
    two = nsys_host(tmp_path / "two", nx.write_rank_pause, "r.sqlite", call_ms=30.0, **_LOOP)
    alone = nsys_host(tmp_path / "one", nx.write_rank_pause, "r.sqlite", call_ms=30.0, ranks=1, paused=0, **_LOOP)
    kept_alone = set(_steps(alone, 0))
    assert kept_alone and 5 not in kept_alone  # control: the rank alone drops the step holding its load
    for g in (0, 1):
        assert set(_steps(two, g)) == kept_alone, g
        assert _gpu(two, g)["startup"] == 0.0, g


def test_a_rank_that_opened_late_keeps_its_own_steps(tmp_path: Path) -> None:
    """Rank 1's capture opens a step after rank 0's (its ``train_step 0`` unrecorded), and it loads a module for 30 ms
    before its step 6.  Main (0cc8f245) placed a rank that marked fewer steps than the host on the host's windows:
    its GPU read 4.667 ms of each step's 6 ms of kernels, its load in a kept step (2.2 ms/step of start-up), and step
    6 dropped.  Each rank's own ranges: both GPUs read as the two ranks opened together do."""
    (tmp_path / "late").mkdir()
    (tmp_path / "both").mkdir()
    late = nsys_host(tmp_path / "late", nx.write_late_rank_pause, "r.sqlite", **_LOOP)
    both = nsys_host(tmp_path / "both", nx.write_rank_pause, "r.sqlite", **_LOOP)
    for g in (0, 1):
        assert set(_steps(late, g)) == set(_steps(both, g)), g
        assert _gpu(late, g) == pytest.approx(_gpu(both, g), abs=2e-3), g
    assert _gpu(late, 1)["device_compute"] == pytest.approx(_gpu(late, 0)["device_compute"], abs=2e-3)


@pytest.mark.parametrize("late", [2, 3])
def test_a_rank_that_opened_steps_late_reads_as_opened_together(tmp_path: Path, late: int) -> None:
    """Rank 1's capture opens ``late`` steps after rank 0's.  Main (6f44e79f) kept the steps it never recorded for
    its GPU, on the host's windows with no kernel in them: GPU 1 read 5.333 (2 late) or 4.667 ms (3 late) of each
    step's 6 ms of kernels.  Now the steps before a rank's capture opened are dropped (``steps.drop._drop_unrecorded``)
    and every GPU reads as when the ranks open together; the note says which GPU's capture opened late."""
    (tmp_path / "late").mkdir()
    (tmp_path / "both").mkdir()
    late_h = nsys_host(tmp_path / "late", nx.write_late_rank_pause, "r.sqlite", steps=late, **_LOOP)
    both = nsys_host(tmp_path / "both", nx.write_rank_pause, "r.sqlite", **_LOOP)
    for g in (0, 1):
        assert _gpu(late_h, g) == pytest.approx(_gpu(both, g), abs=2e-3), g
        assert min(_steps(late_h, g)) >= late, g
    assert "before GPU1's capture opened" in late_h["steps"]["note"]


@pytest.mark.parametrize("closed", [1, 2])
def test_a_rank_whose_capture_closed_early_reads_as_closed_together(tmp_path: Path, closed: int) -> None:
    """Rank 1's capture closes ``closed`` steps before rank 0's (its last ``train_step`` ranges unrecorded; it runs
    30 ms behind after its module load).  Main (a3712eb4) kept the steps it never recorded for its GPU, on rank 0's
    windows 30 ms before its own last step: GPU 1 read 5.333 (1 closed) or 4.667 ms (2) of each step's 6 ms of
    kernels.  Now those steps are dropped, and the step before them too, whose GPU window (first kernel to the next
    step's first kernel) would hold the unrecorded next step's 2 ms input copy; every step kept reads on each GPU as
    with no early close, and the note says whose capture closed."""
    (tmp_path / "closed").mkdir()
    (tmp_path / "both").mkdir()
    early = nsys_host(tmp_path / "closed", nx.write_early_closed_rank, "r.sqlite", steps=closed, **_LOOP)
    both = nsys_host(tmp_path / "both", nx.write_rank_pause, "r.sqlite", **_LOOP)
    last = early["truth"]["steps"] - 1 - closed  # rank 1's last recorded step
    for g in (0, 1):
        rows = {r["step"]: r for r in early["step_rows"] if r["gpu"] == g}
        whole = {r["step"]: r for r in both["step_rows"] if r["gpu"] == g}
        assert set(rows) == {k for k in whole if k < last}, g
        for k, row in rows.items():
            assert row["step_ms"] == pytest.approx(whole[k]["step_ms"], abs=2e-3), (g, k)
            assert row["breakdown"] == pytest.approx(whole[k]["breakdown"], abs=2e-3), (g, k)
    assert _gpu(early, 1)["device_compute"] == pytest.approx(6.0, abs=2e-3)
    assert "not whole on GPU1: its process's capture closed before" in early["steps"]["note"]


def _lead_opened_late(path: str, steps: int = 2, **kw: object) -> dict:
    """:func:`nx.write_rank_pause` whose rank 0 -- the one ahead: every later rank starts ``rank_lag_us`` after it --
    opened its capture ``steps`` steps after the others (:func:`nx.open_rank_late`)."""
    truth = nx.write_rank_pause(path, **kw)
    nx.open_rank_late(path, 0, steps)
    return truth


@pytest.mark.parametrize("ranks", [2, 4])
def test_a_rank_that_leads_by_steps_and_opened_late_reads_as_opened_together(tmp_path: Path, ranks: int) -> None:
    """Rank 0 runs 2.5 steps ahead of the others (25 ms in 10 ms steps) and its capture opens 2 steps late.  Main
    (850d3394) started each step's host-wide window at the earliest rank's mark, its unmarked steps at the others'
    -- after its own step 2 began: the steps read out of order (2, 0, 3, 1, ...), GPU 0 kept steps 0 and 1 of 3.1 ms
    of compute and step 3 of 2.9, every other GPU step 3 of 2.0 ms and no kernel (GPU 0 5.106 ms a step of 6.0, the
    others 5.400).  Now its missing edge steps start at its own period (``steps.windows._group_lines``): they are
    dropped as unrecorded on GPU 0, and every GPU's kept steps read 10.027 ms with 6.0 ms of compute."""
    (tmp_path / "late").mkdir()
    (tmp_path / "both").mkdir()
    kw = dict(ranks=ranks, paused=ranks - 1, call_ms=1e-4, rank_lag_us=25_000.0, **_LOOP)
    late = nsys_host(tmp_path / "late", _lead_opened_late, "r.sqlite", **kw)
    both = nsys_host(tmp_path / "both", nx.write_rank_pause, "r.sqlite", **kw)
    for g in range(ranks):
        rows = {r["step"]: r for r in late["step_rows"] if r["gpu"] == g}
        whole = {r["step"]: r for r in both["step_rows"] if r["gpu"] == g}
        assert list(rows) == sorted(k for k in whole if k >= 2), g  # the loop's order, none before rank 0 opened
        for k, row in rows.items():
            assert row["step_ms"] == pytest.approx(whole[k]["step_ms"], abs=2e-3), (g, k)
            assert row["breakdown"] == pytest.approx(whole[k]["breakdown"], abs=2e-3), (g, k)
        assert _gpu(late, g)["device_compute"] == pytest.approx(6.0, abs=2e-3), g
    assert "before GPU0's capture opened" in late["steps"]["note"]


def _unnumbered(write: Callable[..., dict]) -> Callable[..., dict]:
    """``write`` whose ``train_step {k}`` ranges carry no number (``nvtx.range("train_step")``): the step is told by
    the range's order and time alone."""
    def unnumbered(path: str, **kw: object) -> dict:
        truth = write(path, **kw)
        with closing(sqlite3.connect(path)) as con:
            con.execute("UPDATE NVTX_EVENTS SET text = 'train_step' WHERE text LIKE 'train_step %'")
            con.commit()
        return truth
    return unnumbered


@pytest.mark.parametrize("late", [2, 3])
def test_a_late_ranks_unnumbered_steps_align_with_the_others_by_time(tmp_path: Path, late: int) -> None:
    """Rank 1's capture opens ``late`` steps after rank 0's and every ``train_step`` range is unnumbered.  Main
    b3e5562e numbered each rank's ranges by its own order, so rank 1's first recorded step was step 0 beside rank 0's
    step 0: its steps were the others' first ones (2 late: steps 1, 2, 4-8 kept, its module load's step 5 read as 3,
    "dropped 2 steps not whole on GPU1: its process's capture closed before they ended").  Now a line's first range is
    the step it ran beside (``steps.ranges._first_step_beside``): every GPU keeps the numbered reading's steps, each
    of 6.0 ms compute, and the note says GPU 1's capture opened late."""
    for d in ("plain", "numbered"):
        (tmp_path / d).mkdir()
    plain = nsys_host(tmp_path / "plain", _unnumbered(nx.write_late_rank_pause), "r.sqlite", steps=late, **_LOOP)
    numbered = nsys_host(tmp_path / "numbered", nx.write_late_rank_pause, "r.sqlite", steps=late, **_LOOP)
    for g in (0, 1):
        rows, truth = _steps(plain, g), _steps(numbered, g)
        assert list(rows) == list(truth) and min(rows) >= late and 5 not in rows, g
        for k, row in rows.items():
            assert row == pytest.approx(truth[k], abs=2e-3), (g, k)
        assert _gpu(plain, g)["device_compute"] == pytest.approx(6.0, abs=2e-3), g
    assert "before GPU1's capture opened" in plain["steps"]["note"]
    assert "closed before" not in plain["steps"]["note"]


@pytest.mark.parametrize("lag_us", [3_000.0, 6_000.0])
def test_unnumbered_ranks_a_part_of_a_step_apart_keep_their_order(tmp_path: Path, lag_us: float) -> None:
    """Control: ranks opened together, the later one 0.3 or 0.6 of a 10 ms step behind (nearer the leader's next
    step), unnumbered: each line marks as many steps as the first, so its first is the first's (b3e5562e and now)."""
    for d in ("plain", "numbered"):
        (tmp_path / d).mkdir()
    kw = dict(call_ms=1e-4, rank_lag_us=lag_us, **_LOOP)
    plain = nsys_host(tmp_path / "plain", _unnumbered(nx.write_rank_pause), "r.sqlite", **kw)
    numbered = nsys_host(tmp_path / "numbered", nx.write_rank_pause, "r.sqlite", **kw)
    for g in (0, 1):
        rows, truth = _steps(plain, g), _steps(numbered, g)
        assert list(rows) == list(truth), g
        for k, row in rows.items():
            assert row == pytest.approx(truth[k], abs=2e-3), (g, k)
