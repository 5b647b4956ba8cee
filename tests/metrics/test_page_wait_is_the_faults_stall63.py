"""A kernel's wait for a managed page is what the fault added to it, never the kernel's own work before the fault
(issue #37 class 3: each wait belongs to its cause; h37-managed62 *Left* 4, h37-copy62 *Left*).

``metrics.memcpy.page_waits`` counts a kernel's wait for its first page from the kernel's start to the page's arrival
(the driver moves a page only once it has handled the fault).  Truth by construction:
``synthetic.nsysexport.write_counted_solver(read="managed", kernel_us=200, gpu_fault_us=50, gpu_fault_every=2)``: each
turn's first kernel computes 200 us; on every other turn it also waits 50 us for the flag's page, which arrives 1 us
before the kernel ends.  From the start alone each fault read as 249 us; the kernel's fault-free runs (200 us) show its
own time, and the wait is at most what the fault added (50 us).

Real: cestwc/balinski-and-gomory-cuda ``report7``/``report8`` (``wild/managed_flag_rtx3090_solver``,
``wild/counted_steps_rtx3090_solver``, MIT, PROVENANCE.md), read by hand (sqlite3, every kernel with an H2D page
migration under it against the median of its fault-free runs): the faulting kernels' fault-free runs take 1.1-2.6 us
(``reset_d_changed`` 1.12 / 1.15 us, ``find_most_negative`` 2.59 / 2.62 us; ``solve_1bc_kernel``, ``init_minval``,
``reset_d_found`` never run fault-free), so the bound moves report8's 4,042 us of waits in the window by at most 9 us
(0.2%): the copies' finding keeps its 524 / 461 us a step (control).

On base the module does not import (no ``fault_free_ps``, no ``gpu_fault_every``); the controls' numbers are base's
(report8's "kernels waited 524 us per step", report7's 461 us, the generator's 419 us a turn)."""

from __future__ import annotations

import re

import numpy as np

from synthetic import nsysexport as nx
from tb_gpu_advisor import devices
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.metrics.memcpy import fault_free_ps, page_waits
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

PS_PER_US = 1_000_000


def _waits_us(d) -> float:  # noqa: ANN001 - DeviceEvents
    kern = (d.kind == devices.KIND_KERNEL) | (d.kind == devices.KIND_COLLECTIVE)
    mig = devices.page_migration(d.names)[d.name] & (devices.event_copy_directions(d.names, d.name, d.kind) == "h2d")
    s, e = page_waits(d.start[kern], d.end[kern], d.start[mig], d.end[mig], fault_free_ps(d)[kern])
    return float((e - s).sum()) / PS_PER_US


def test_a_kernel_faulting_after_its_work_waits_only_the_faults_time(tmp_path):
    """4 faults of 50 us each: 200 us of waits in the window, not 4 x 249 us.  Fails on base (no fault-free bound:
    996 us)."""
    truth = nx.write_counted_solver(str(tmp_path / "run.sqlite"), read="managed", kernel_us=200.0, gpu_fault_us=50.0,
                                    gpu_fault_every=2)
    (s,) = discover(str(tmp_path))
    (d,) = [d for d in read(s.hosts[0]).devices if len(d)]
    want = truth["fault_stall_us"] * len(truth["faulted_turns"])
    assert abs(_waits_us(d) - want) <= 0.02 * want, (_waits_us(d), want)


def test_control_a_kernel_that_always_faults_keeps_its_wait_from_its_start(tmp_path):
    """Control (the same on base): where every run of the kernel faults, its own time is unknown and its wait is still
    counted from its start to its page (419 us a turn by construction)."""
    truth = nx.write_counted_solver(str(tmp_path / "run.sqlite"), read="managed", gpu_fault_us=400.0)
    (s,) = discover(str(tmp_path))
    (d,) = [d for d in read(s.hosts[0]).devices if len(d)]
    assert np.isclose(_waits_us(d), truth["page_wait_us_per_turn"] * truth["turns"], rtol=0.01)


def test_control_the_real_solvers_waits_stay_by_hand():
    """Control (the same on base): report8 524 us, report7 461 us a step of kernels waiting for pages (by hand 523.9,
    460.7)."""
    for run, by_hand in (("counted_steps_rtx3090_solver", 523.9), ("managed_flag_rtx3090_solver", 460.7)):
        (s,) = [s for s in wild_sessions() if s.run == run]
        (f,) = [f for f in session_report(s).to_dict()["findings"] if f["rule"] == "excessive_memcpy"]
        got = re.search(r"kernels waited ([0-9.]+) us per step", f["summary"])
        assert got and abs(float(got.group(1)) - by_hand) <= 0.01 * by_hand, f["summary"]
