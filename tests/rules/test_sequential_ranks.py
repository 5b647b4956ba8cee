"""GPUs each driven by a process of their own (the ranks of a DDP job) never read as "GPUs run the step one after
another" -- that finding's cause is one thread moving work between GPUs, and its fix (one process per GPU) is what
such a job already does.

Real capture: lizhieffe/assignment2-systems ``profiles/ddp53_profile.sqlite`` (2 processes, 2 x RTX 3090): main said
"GPUs run the step one after another ... Run one process per GPU with DistributedDataParallel".  Truth here by
construction: two ranks, one process each, rank 1 starting 25 ms after rank 0 (``NsysJob.rank_lag_us``)."""

from __future__ import annotations

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor import rules
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.runtime.pipeline import host_metrics


def test_ranks_in_processes_of_their_own_are_not_sequential_gpus(tmp_path):
    p = tmp_path / "lagging_rank.sqlite"
    write(str(p), NsysJob(steps=1, ranks=2, ops=60, autograd_nvtx=False, step_range=None,
                          extra_ranges=("forward", "backward"), rank_lag_us=25_000.0))
    m = host_metrics(reader.read_trace(str(p)))
    assert m.multi_gpu.concurrency is not None and m.multi_gpu.concurrency < 0.2  # busy in turn, by construction
    assert m.multi_gpu.one_process_per_gpu
    assert "sequential_gpus" not in {f.rule for f in rules.evaluate(m)}
