"""A GPU-bound loop whose every call reads back several times: its steps are its calls (h37-seeds24, issue #37 classes
2 and 4: repeated iterations are steps, tiny steps).

The wrong assumption (``job.period._region_steps``, h37-twosync's reading of a call's several reads): *the reads'
pauses pick the boundary only where each read finds the work done* -- so where the GPU is slower than its host, each
read waits on the work queued before it, the syncs hold the gaps, and the loop read as one pass, though its repeats
open at a read (the wait before each call's first launch) and the boundary needs no pause to say it
(``_reads_bound_calls``).  h37-randjobs13's ``--forms13`` seed 430: 9 inference calls, each a forward then
``torch.tensor(list, device="cuda")``, ``.tolist()``, ``torch.tensor(list, device="cuda")`` and ``.item()``, its
``.tolist()`` waiting 225 us on the forward: main one pass ("no repeated launch sequence the host waits after").

Truth by construction: ``synthetic.randjobs`` (``TRUTH``: the calls and their period) and
``synthetic.torchtrace.synced_calls`` with kernels slower than the host's turn.  Controls: the same loop host-bound
(h37-twosync's reading, unchanged), one such call (one pass), a one-shot program run three times whose repeats open at
an upload after no sync (``tests/steps/test_phased_pass.py``: its bursts, unchanged)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from synthetic import randjobs, torchtrace
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.random_jobs import check

CALL = len(torchtrace.SYNCED_CALL)
#: The call's first three kernels 40 times slower (100-240 us against the host's 10 us turn): the read after them
#: waits on the GPU, the read at the call's end on its few short kernels only -- no pause stands out at the boundary.
SLOW = tuple((op, name, us * (40.0 if k < 3 else 1.0)) for k, (op, name, us) in enumerate(torchtrace.SYNCED_CALL))


def _steps(tmp_path: Path, calls: int, kernels=torchtrace.SYNCED_CALL, reads=(3, CALL)) -> dict:  # noqa: ANN001
    sc = torchtrace.Scenario(1, functools.partial(torchtrace.synced_calls, reads=reads, turn_us=10.0, kernels=kernels),
                             [], [], "a loop that reads back")
    (path,) = torchtrace.write_run(str(tmp_path), sc, steps=calls, run="loop")
    p = Path(path)
    rep = analyze_host(HostFile(p.name, str(p), p.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    return rep.steps


def test_the_walk_s_gpu_bound_calls_are_steps() -> None:
    """Seed 430: 9 calls of four reads each, every law held (main: "1 steps found, the job ran 9")."""
    job = randjobs.random_form13_job(430)
    assert job.fmt == "kineto_user_copies" and len(job.params["user_copies"]) == 3
    assert check(job) == []


@pytest.mark.parametrize("reads", [(3, CALL), (3, 6, CALL)], ids=str)
def test_a_gpu_bound_loop_reading_back_twice_a_call_has_a_step_per_call(tmp_path: Path, reads: tuple[int, ...]) -> None:
    """12 calls of slow kernels, read back mid-call and at the end (main: one pass, ``single_pass``)."""
    s = _steps(tmp_path, 12, SLOW, reads)
    assert s["source"] == "repeated_launches" and s["found"] == 12, s
    assert f"{len(reads)} syncs at the same points of every repeat" in s["note"]


def test_control_the_host_bound_loop_reads_as_before(tmp_path: Path) -> None:
    s = _steps(tmp_path, 12)
    assert s["source"] == "repeated_launches" and s["found"] == 12 and s["count"] == 10, s


def test_control_one_gpu_bound_call_reading_twice_is_one_pass(tmp_path: Path) -> None:
    s = _steps(tmp_path, 1, SLOW)
    assert s["source"] == "single_pass" and s["count"] == 1, s
