"""A multi-process job that labels each rank's step range with its rank (``rank0 step 3``, ``rank1/iteration_2``)
marks its steps as much as one that does not (issue #37 class 2, h37-nvtx69).

Public multi-process benchmarks label their NVTX ranges with the rank first, so that one timeline of several ranks
tells them apart: ``torch.cuda.nvtx.range_push(f"rank{rank}/tp_reduce_scatter")``, ``f"rank{rank}:all_gather"``
(code corpus, SURVEY "h37-nvtx69").  Main read ``rank0 step 3`` as no step's name: rank 0's ranges alone were "the most
repeated top-level range" (``nvtx_top_range``, medium confidence, "8 on 1 thread"), rank 1's unread, where the same
loop unlabelled (``train_step``) is read from both ranks' ranges at high confidence.  Truth by construction:
``synthetic.nsysexport.write``, 2 ranks of 8 steps.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_host


def test_rank_labelled_step_ranges_are_each_ranks_steps(tmp_path):
    p = str(tmp_path / "rank_labelled.sqlite")
    truth = nx.write(p, nx.NsysJob(steps=8, ops=9, autograd_nvtx=False, ranks=2, step_range="rank{rank} step {k}",
                                   extra_ranges=("forward", "backward", "optimizer")))
    st = first_host(p)["steps"]
    assert st["found"] == truth.steps
    assert st["source"] == "nvtx_range" and st["confidence"] == "high", st["note"]  # main: nvtx_top_range, medium
    assert "16 on 2 threads" in st["note"] and "each rank marks its own steps" in st["note"]


@pytest.mark.parametrize(("name", "bare"), [
    ("rank0 step 3", "step 3"), ("rank1/iteration_2", "iteration_2"), ("[rank2] train_step 4", "train_step 4"),
    ("gpu1_step_3", "step_3"), ("rank 1 iteration 3", "iteration 3"),
    # controls: a word that starts like one, a rank's phase (not a step), no label
    ("ranking step 3", "ranking step 3"), ("step 3", "step 3")])
def test_the_rank_label_comes_off(name, bare):
    assert nvtx.without_rank(name) == bare
    assert nvtx.is_step_name(name) == nvtx.is_step_name(bare)


def test_a_ranks_phase_is_no_step_control():
    assert not nvtx.is_step_name("rank0:forward") and not nvtx.is_step_name("rank0/tp_reduce_scatter")
