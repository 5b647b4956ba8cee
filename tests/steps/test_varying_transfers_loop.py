"""A loop whose transfers vary in size from one iteration to the next is still a loop (h37-bursts35, bursts34 *Left* 2).

h37-bursts34 let two bursts of kernels repeat where they make the same transfers -- a loop whose kernels are compiled
and named afresh every iteration has no kernel name to share -- but matched each transfer's bytes exactly.  A loop
over batches of varying length (variable-length sequences padded to each batch's longest, a ragged last batch)
uploads its batch and reads its results back through the same copies, on the same stream, with as many kernels each
time: only how much each copy moves varies.  What shows two bursts are the same work is what the iteration does --
which copies (direction and memory kinds), on which GPU and stream, how many, and how many kernels on each stream --
with each copy's bytes within ``steps.transfer_bytes_share`` of its match's (``steps.bursts._transfers_repeat``).
Different work must stay apart: a training pass (its loss read back: 4 bytes) and an evaluation pass (its logits:
megabytes, fewer kernels), or phases whose tensors differ by more than the bound.

Truth by construction: ``synthetic.nsysexport.write_renamed_kernel_loop(plan=...)``.
"""

from __future__ import annotations


from synthetic.nsysexport import write_renamed_kernel_loop
from tests.support.cli_report import assert_bursts_are_iterations, first_host

#: the tokens of each iteration's batch (padded to its longest sequence): within 0.63 of the longest
LENGTHS = (512, 384, 448, 320, 500, 416)


def test_a_renamed_loop_over_batches_of_varying_length_keeps_its_iterations(tmp_path):
    """6 iterations, each uploading its batch (32 kB a token) and reading back its outputs (4 kB a token) around 4
    kernels named afresh, no two alike in bytes: the bursts are the iterations (main: one pass, "no kernel runs in
    two of them, and the only work they share is copies named by their direction and memory kinds")."""
    plan = [(n * 32_768, 4, n * 4_096) for n in LENGTHS]
    truth = write_renamed_kernel_loop(str(tmp_path / "run.sqlite"), plan=plan)
    assert_bursts_are_iterations(tmp_path / "run.sqlite", truth)


def test_control_a_training_pass_and_an_evaluation_pass_stay_one_pass(tmp_path):
    """Control (the same on main): a training pass (16 MB up, 4 kernels, its 4-byte loss back) then an evaluation
    pass (16 MB up, 2 kernels, 4 MB of logits back) on one stream -- different work, one pass."""
    truth = write_renamed_kernel_loop(str(tmp_path / "run.sqlite"), plan=[(16_000_000, 4, 4), (16_000_000, 2, 4_000_000)],
                                      pause_ms=20.0)
    steps = first_host(tmp_path / "run.sqlite")["steps"]
    assert steps["count"] == 1 and truth["iterations"] == 2, steps["note"]
    assert "copies named by their direction and memory kinds" in steps["note"], steps["note"]


def test_control_phases_moving_tensors_four_times_apart_stay_one_pass(tmp_path):
    """Control (the same on main): three phases alike in copies, streams and kernel counts whose tensors are 4x apart
    each (64, 16, 4 MB) -- beyond what a batch's length varies, so no two are the same work: one pass."""
    plan = [(64_000_000, 4, 64_000_000), (16_000_000, 4, 16_000_000), (4_000_000, 4, 4_000_000)]
    write_renamed_kernel_loop(str(tmp_path / "run.sqlite"), plan=plan)
    steps = first_host(tmp_path / "run.sqlite")["steps"]
    assert steps["count"] == 1, steps["note"]
    assert "copies named by their direction and memory kinds" in steps["note"], steps["note"]


def test_control_the_same_loop_with_one_kernel_more_in_one_iteration_still_repeats_elsewhere(tmp_path):
    """Where one iteration runs a kernel more (a shape that needs a split reduction), the others still make the same
    transfers: the loop keeps its iterations (the odd one matches none, and breaks nothing; main: one pass, as
    above)."""
    plan = [(n * 32_768, 5 if k == 2 else 4, n * 4_096) for k, n in enumerate(LENGTHS)]
    truth = write_renamed_kernel_loop(str(tmp_path / "run.sqlite"), plan=plan)
    steps = first_host(tmp_path / "run.sqlite")["steps"]
    assert steps["source"] == "gpu_busy_clusters" and steps["found"] == truth["iterations"], steps["note"]
