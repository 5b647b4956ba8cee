"""A loop whose kernels are named afresh every iteration is still a loop: its bursts make the same transfers
(h37-bursts34, h37-hostalloc32 *Left* 1).

h37-hostalloc32 stopped taking a copy's name (``Memcpy HtoD (Pinned -> Device)``: a direction and memory kinds) for the
same work in two bursts of kernels, so that ParallelKernelsTest's three tests, run once each and sharing only 16 MB
uploads, read as one pass.  That left kernels' names the only evidence of a loop among bursts of kernels: a program
whose iterations run kernels compiled and named afresh (a code generator numbering what it emits) read as one pass
with "no work of the program's own" shared.  What a copy's record says besides its name -- its bytes, its stream --
tells a loop's transfers from a phase's: an iteration moves its batch and its results the same way every time, on the
same stream, while ParallelKernelsTest's tests each run on streams of their own (14-18, 19-23, 24-28: read with
``sqlite3`` in the kept captures).  A burst of kernels whose whole set of transfers another burst makes again is a
repeat (``steps.bursts._burst_transfers``).

Truth by construction: ``synthetic.nsysexport.write_renamed_kernel_loop``.
"""

from __future__ import annotations


from synthetic.nsysexport import write_renamed_kernel_loop, write_sibling_phases
from tests.support.cli_report import assert_bursts_are_iterations, first_host


def test_a_loop_whose_kernels_are_renamed_each_iteration_keeps_its_iterations(tmp_path):
    """By construction: 6 iterations on one stream, each uploading 16 MB, running 4 kernels named afresh and reading
    16 MB back -- the bursts are the iterations, each as long as the loop's turn (main: one pass, "no kernel runs in
    two of them, and the only work they share is copies named by their direction and memory kinds")."""
    truth = write_renamed_kernel_loop(str(tmp_path / "run.sqlite"))
    assert_bursts_are_iterations(tmp_path / "run.sqlite", truth)


def test_control_phases_on_streams_of_their_own_stay_one_pass(tmp_path):
    """Control (the same on main): the same program with each iteration on a stream of its own -- phases run once,
    alike only by their transfers' direction and size -- stays one pass."""
    truth = write_renamed_kernel_loop(str(tmp_path / "run.sqlite"), fresh_streams=True)
    steps = first_host(tmp_path / "run.sqlite")["steps"]
    assert steps["count"] == truth["passes"] == 1, steps["note"]
    assert "copies named by their direction and memory kinds" in steps["note"], steps["note"]


def test_control_parallel_kernels_tests_sharing_upload_sizes_stay_one_pass(tmp_path):
    """Control (the same on main): ParallelKernelsTest's shape, whose first two tests both move 16 MB buffers from
    pinned memory, but each on its own streams -- one pass."""
    truth = write_sibling_phases(str(tmp_path / "run.sqlite"), copy_halves=False, idle_us=150.0)
    steps = first_host(tmp_path / "run.sqlite")["steps"]
    assert steps["count"] == truth["passes"], steps["note"]
