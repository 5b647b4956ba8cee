"""A host asleep in its loads of managed memory the GPU wrote is reading the GPU's value, not waiting for something
outside the capture (issue #37 deliverable 3: "host_sync claims ... reads of device values"; session 60's *Left* 1-2
of h37-nsys60).

Real export, cestwc/balinski-and-gomory-cuda ``report7.sqlite`` (MIT; kept trimmed as
``wild/managed_flag_rtx3090_solver``, PROVENANCE.md), read by hand with ``sqlite3`` (h37-nvtx61): ``build/test1 4`` on
an RTX 3090, 7 turns of its solver (``update_Q`` once a turn).  The launching thread's every stretch off the CPU
(``SCHED_EVENTS``) lies between two of its runtime calls in which the only record is a Unified Memory page migration
to the host (``copyKind`` 12, ``migrationCause`` 2 "Page fault", correlation id 0): the host loading its flag from
managed memory.  Three of them last 546, 710 and 490 us and end 20-25 us before their page's migration; the others
(18-33 us and 7-8 us) follow one.  No OS runtime call, no runtime call covers any of them.  Over the 5 analysed turns
(the 2nd to the 6th, ``update_Q`` to ``update_Q``) they hold 628.3 + 53.4 + 52.1 + 794.5 + 52.5 us = 316.2 us a turn.
On main (3074f48d) the finding read "The GPU idles while the host waits for something outside the capture" (an input
device, a file, a socket, a timer), 322 us a step, with the source-pacing fix.
"""

from __future__ import annotations

import re

from synthetic import nsysexport as nx
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.metrics.types import MANAGED_READ
from tests.support.paths import FIXTURES
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

RUN = "managed_flag_rtx3090_solver"
#: by hand: the launching thread's time off the CPU in its managed reads, per analysed turn (us)
OFF_CPU_IN_READS_US = (628.3 + 53.4 + 52.1 + 794.5 + 52.5) / 5


def _report(path) -> dict:  # noqa: ANN001 - a folder
    (s,) = [s for s in discover(str(path)) if s.run == RUN] if str(path).endswith("wild") else discover(str(path))
    return session_report(s).to_dict()


def _texts(rep: dict) -> str:
    return " ".join(f["title"] + " " + f["summary"] for f in rep["findings"])


def test_the_solvers_off_cpu_wait_is_its_managed_flag_read():
    """report7: the wait is the host's reads of managed memory, 316 us a step as by hand (within 5%), with the read's
    fix (a pinned copy, mapped memory or a preferred location), not the source-pacing one.  On main: "waits for
    something outside the capture"."""
    rep = _report(FIXTURES / "wild")
    (f,) = [f for f in rep["findings"] if f["id"].endswith("#outside_wait")]
    assert "reads managed memory the GPU wrote" in f["title"]
    assert "outside the capture" not in f["title"]
    rows = {r[0]: float(r[1]) for r in f["evidence"][0]["rows"]} if f.get("evidence") else {}
    named = rows.get(MANAGED_READ)
    assert named is not None and abs(named * 1000 - OFF_CPU_IN_READS_US) <= 0.05 * OFF_CPU_IN_READS_US
    fixes = " ".join(a["text"] for a in f["actions"])
    assert "cudaMallocHost" in fixes and "cudaMemAdvise" in fixes
    assert "source that paces the loop" not in fixes


def test_a_solver_whose_flag_read_faults_is_told_its_read(tmp_path):
    """Generator: 7 turns, each read of the flag a page fault that holds the thread off the CPU 300 us before its page
    comes back (truth by construction).  The gaps' cause is the managed read, with its fix; nothing says "outside the
    capture".  On main: "the host waiting for something outside the capture"."""
    truth = nx.write_counted_solver(str(tmp_path / "run.sqlite"), read="managed", fault_us=300.0)
    rep = _report(tmp_path)
    text = _texts(rep)
    assert "outside the capture" not in text
    assert "the host reading managed memory the GPU wrote" in text
    named = [f for f in rep["findings"] if MANAGED_READ in f["summary"]]
    assert named and named[0]["rule"] == "step_gaps"
    # no more of the read named a step than the thread slept in it a turn
    assert float(named[0]["saving"]["ms_per_step"]) * 1000 <= truth["fault_us_per_turn"] + 10
    fixes = " ".join(a["text"] for a in named[0]["actions"])
    assert "cudaMallocHost" in fixes and "source that paces the loop" not in fixes


def test_control_a_loop_paced_from_outside_still_waits_outside(tmp_path):
    """Control (passes on main too): a camera loop asleep between frames with no managed memory stays a wait for
    something outside the capture."""
    nx.write_paced_loop(str(tmp_path / "run.sqlite"))
    text = _texts(_report(tmp_path))
    assert "outside the capture" in text and "managed memory" not in text


def test_control_the_same_solver_without_faults_names_no_read(tmp_path):
    """Control (passes on main too): the same managed-flag solver whose thread never leaves the CPU names no read of
    managed memory among its waits."""
    nx.write_counted_solver(str(tmp_path / "run.sqlite"), read="managed")
    assert MANAGED_READ not in _texts(_report(tmp_path))


# ---------------------------------------------------------------------------------------------- the GPU's side
#: by hand (report7): the 5 analysed turns' kernels ran 497.2 us a turn, 483.0 us of it in kernels under which a page
#: moved to the GPU (``copyKind`` 11, page fault); from each such kernel's start to its page's arrival, 460.7 us a turn.
#: The same kernels run 1.1-2.6 us where no page moves under them (``reset_d_changed`` 1.15 us, 45-419 us with one).
PAGE_WAIT_US = 460.7


def _saving_us(f: dict) -> float:
    return float(f["saving"]["ms_per_step"]) * 1000


def _waited_us(f: dict) -> float:
    """The kernels' wait for their pages as the copies' finding says it ("kernels waited 461 us per step")."""
    got = re.search(r"kernels waited ([0-9.]+) (us|ms) ", f["summary"])
    assert got, f["summary"]
    return float(got.group(1)) * (1000 if got.group(2) == "ms" else 1)


def test_the_solvers_kernels_wait_for_managed_pages_not_for_thread_blocks():
    """report7: the copies' finding claims the kernels' wait for their managed pages, 461 us a step as by hand (within
    5%), with the prefetch fix; the small-grid finding no longer counts that wait as idle SMs (a note of at most the
    fault-free kernels' time).  On main: small grids critical, "saves ~469 us/step", and no copy finding."""
    rep = _report(FIXTURES / "wild")
    (mc,) = [f for f in rep["findings"] if f["rule"] == "excessive_memcpy"]
    assert "cudaMemPrefetchAsync" in " ".join(a["text"] for a in mc["actions"])
    assert abs(_waited_us(mc) - PAGE_WAIT_US) <= 0.05 * PAGE_WAIT_US
    (sg,) = [f for f in rep["findings"] if f["rule"] == "small_grid"]
    assert sg["severity"] == "info" and _saving_us(sg) <= 497.2 - 483.0 + 25


def test_a_kernel_waiting_for_a_managed_page_is_the_pages_wait(tmp_path):
    """Generator: each turn's first kernel (16 blocks on 108 SMs, 20 us of work) waits 400 us more for the flag's page,
    which moves to the GPU under it (truth by construction: 419 us a turn from its start to the page's arrival).  The
    copies' finding claims that wait; the small-grid saving is the same solver's without the faults (within 10%:
    its step, and so the part of its kernels the next work waits for, differs by the wait).  On main: small
    grids critical, 487 us a step, and no copy finding."""
    truth = nx.write_counted_solver(str(tmp_path / "run.sqlite"), read="managed", gpu_fault_us=400.0)
    rep = _report(tmp_path)
    (mc,) = [f for f in rep["findings"] if f["rule"] == "excessive_memcpy"]
    assert abs(_waited_us(mc) - truth["page_wait_us_per_turn"]) <= 5
    (free,) = [tmp_path / "free"]
    free.mkdir()
    nx.write_counted_solver(str(free / "run.sqlite"), read="managed")
    (sg,) = [f for f in rep["findings"] if f["rule"] == "small_grid"]
    (sg0,) = [f for f in _report(free)["findings"] if f["rule"] == "small_grid"]
    assert abs(_saving_us(sg) - _saving_us(sg0)) <= 0.1 * _saving_us(sg0)  # its step differs by the wait


def test_the_later_builds_export_reads_the_same():
    """report8 (``wild/counted_steps_rtx3090_solver``, the same solver's next export; by hand over its 5 analysed turns,
    ``update_Q`` to ``update_Q``): kernels waiting for managed pages 523.9 us a turn (555.7 of 568.8 us of kernel time
    in faulting kernels), the thread off the CPU in its managed reads 433.0 us a turn.  Within 5% each; small grids a
    note.  On main: small grids critical and "outside the capture".  Since h37-managed62 the reads are one finding's,
    the gaps' check's (its gaps' part and the rest inside the steps), which claims them: 433 us a step."""
    (s,) = [s for s in wild_sessions() if s.run == "counted_steps_rtx3090_solver"]
    rep = session_report(s).to_dict()
    (mc,) = [f for f in rep["findings"] if f["rule"] == "excessive_memcpy"]
    assert abs(_waited_us(mc) - 523.9) <= 0.05 * 523.9
    (f,) = [f for f in rep["findings"] if "reads managed memory the GPU wrote" in f["title"]]
    assert "outside the capture" not in f["title"]
    assert abs(_saving_us(f) - 433.0) <= 0.05 * 433.0
    assert [g["severity"] for g in rep["findings"] if g["rule"] == "small_grid"] in ([], ["info"])
