"""Session 23's new forms drawn as random jobs and held to the report's laws (h37-randjobs13,
``scripts/randjobs.py --forms13``; ``randjobs.TRUTH`` is the answer), one per class of #37 that no stream drew:

* a Kineto window on an H100 host whose active ``ProfilerStep`` steps ended before the loop's first kernel: the
  DataLoader's fetch and collate only, with its ``pin_memory`` buffers (``cudaHostAlloc``), the device queries, the
  profiler's exit sync, or no CUDA call -- a report whose one finding is the capture's quality (``only_rules``);
* the blocking copies users write in a step that no other draw makes: ``.tolist()``, ``torch.tensor(pylist,
  device="cuda")``, ``x.to("cuda", non_blocking=True)`` of a pageable batch (the host blocked in the copy call
  itself, queued behind the stream's kernels) -- the iterations, their period where marked, the kind;
* a tiny RL loop: a CPU environment's untraced step, the observation uploaded, a 1-3 layer policy's tiny kernels, the
  action read back, an update each step or none -- the env steps, their period, training or a rollout;
* memory snapshots of ``expandable_segments`` (``segment_map`` / ``segment_unmap``) and of two devices -- the
  iterations of the training loop.

Two assumptions broke on main's analysis, fixed (``tests/job/test_first_update_lead.py``,
``tests/steps/test_rank_last_step_host.py``):

* walk seeds 143, 220, 256 (an RL loop read from its optimizer steps): the first step began at the capture's first
  event, without the environment step every later step holds -- 3 steps read 3.37 of 4.92 ms
  (``job.structure.first_iteration_start``);
* walk seeds 340, 347, 578 (2-4 ranks read from their GPUs' ``ProfilerStep`` spans): the last step ended at its
  device span's end, without the rank's time before its first kernel and after its last -- 1.13 of 1.48 ms
  (``formats.kineto.adapter._host_step_ps``).

Session 24 (h37-usercopies13; ``tests/steps/test_rank_last_step_host.py``, ``tests/job/test_reads_open_repeats.py``):

* walk seeds 20464, 21052, 21678, 22796, 23156 (2-4 ranks, each later one reaching its steps late): the last step
  was its rank's host annotation alone, without the gap every earlier step holds before its next mark -- 14.66 of
  15 ms (``formats.kineto.adapter._host_mark_gap_ps``);
* walk seeds 6016, 21671, 22655 (unmarked host-bound calls reading back at the repeats' opening): the boundary had
  to pause longer than a call's own gaps, which its Python between ops and its pageable uploads outlast -- one pass
  (``job.period._opens_at_wait``).

Session 27 (h37-walk13; ``tests/metrics/test_input_rank_lead.py``):

* walk seed 33 (two ranks, each with untraced host time before its steps' first op): the input account read the
  host's input spans over the merged step windows, which held none, while the ledger booked each rank's own -- a
  2.40 ms wait whose finding named no part of it (``metrics.inputs._untraced_spans``).
"""

from __future__ import annotations

from synthetic import nsysexport as N
from synthetic import randjobs
from synthetic.randjobs import FORMS13, random_form13_job
from tests.support.cli_report import first_report
from tests.support.random_jobs import walk

#: the first seed of each form (user copies 0 -- all three copies --, RL 2, two devices 3, expandable 4 with its
#: cache emptied, setup window 6 pinning), the other setup windows (7 exit sync, 35 no CUDA call, 43 queries), an RL
#: rollout (5), an expandable snapshot kept whole (42), and the seeds that broke a law on main (256; 340, 578;
#: session 24: 23156, 21671; session 27: 33; session 42: 42751, a one-pass roofline title's "ms/step")
SEEDS = (0, 2, 3, 4, 5, 6, 7, 35, 42, 43, 256, 340, 578, 23156, 21671, 33, 42751)


def test_random_form13_jobs_hold_every_law():
    """The kept walk: every report law and each form's truth, on every form."""
    kinds = walk(SEEDS, random_form13_job)
    assert set(FORMS13) <= kinds, kinds


def test_a_window_before_the_first_kernel_exits_as_an_nsight_window(tmp_path):
    """The command line's exit code of a Kineto window with no GPU work is the Nsight window's: its capture-quality
    finding is a warning, so 0 without ``--fail-on`` and 1 with ``--fail-on warning`` (never an input error, 2)."""
    randjobs.write(random_form13_job(7), str(tmp_path / "kineto"))
    (tmp_path / "nsys" / "run").mkdir(parents=True)
    N.write_window(str(tmp_path / "nsys" / "run" / "window.sqlite"), "nvtx_only", ranges=2)
    codes = {}
    for side in ("kineto", "nsys"):
        report = first_report(tmp_path / side)
        assert [f["rule"] for f in report["findings"]] == ["capture_quality"], report["findings"]
        codes[side] = [_exit(tmp_path / side, *flags) for flags in ((), ("--fail-on", "warning"))]
    assert codes["kineto"] == codes["nsys"] == [0, 1], codes


def _exit(path, *flags: str) -> int:
    """The exit code of ``report PATH --format json`` with ``flags``, run in this process."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from tb_gpu_advisor.cli import main as cli

    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return cli.main(["report", str(path), "--format", "json", "--cache-dir", "off", *flags])
