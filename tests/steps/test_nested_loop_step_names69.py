"""A range named by nested loops' counters -- an outer loop's and the step's -- marks the steps (issue #37 class 2,
h37-names69; SURVEY h37-nvtx69 *Left* 1-2).

Public trainers name each step by both of their loops: ``_nvtx_range_push(f"iteration epoch={e} batch={b}")``,
``f"inference step {i}, rollout step {j}"``, and the forms ``Epoch 1/10 Step 5/100``, ``[epoch 2][iter 30]``,
``e3_b17`` write.  Main read none as a step's name (the outer counter's word beside the step's): a decode loop of 8
such turns was cut by the host's waits (``repeated_launches``, low) and its critical ``small_grid`` fell to a
warning; ``e3_b17``'s glued counters even split the ranges into one name per epoch.  Truth by construction:
``synthetic.torchtrace.write_named_turns`` renames the ``ProfilerStep#N`` of a generated decode run (8 steps,
``small_grid`` critical), ``{e}`` / ``{b}`` the outer and inner counters (4 turns to an epoch);
``synthetic.nsysexport.write_accumulation_loop`` the same names on micro-steps under gradient accumulation.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from synthetic.torchtrace import write_named_turns
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_host
from tests.support.run_report import fresh_run_report


@pytest.mark.parametrize("name", ["iteration epoch={e} batch={b}", "e{e}_b{b}"])
def test_nested_loop_counters_name_the_steps(tmp_path, name):
    """main: ``repeated_launches`` 8 low, ``small_grid`` warning."""
    write_named_turns(str(tmp_path), "decode_far_from_peak_bw", name, steps=8)
    host = fresh_run_report(tmp_path, "named_turns").hosts[0]
    st = host.steps
    assert (st["source"], st["found"], st["confidence"]) == ("nvtx_range", 8, "high"), st["note"]
    assert {f.rule: f.severity for f in host.findings}.get("small_grid") == "critical"


def test_nested_loop_micro_steps_are_closed_by_the_update(tmp_path):
    """An ``epoch {k} batch {n}`` range per micro-step, ``optimizer_step`` after every 4th: 8 optimizer steps, as main
    read the unnamed-looking range -- its name read as a step's must not make each micro-step one (32)."""
    p = str(tmp_path / "accum.sqlite")
    truth = nx.write_accumulation_loop(p, micro_range="epoch {k} batch {n}", update_range="optimizer_step")
    st = first_host(p)["steps"]
    assert (st["found"], st["source"]) == (truth["iterations"], "nvtx_range"), st["note"]


@pytest.mark.parametrize("name", ["iteration epoch=1 batch=2", "inference step 3, rollout step 2",
                                  "Epoch 1/10 Step 5/100", "[epoch 2][iter 30]", "e3_b17", "epoch 1 step 5 loss=0.31", "step=12 loss=2.31",
                                  "train/step_12", "fwd_bwd_12", "rank0 epoch 1 step 2"])
def test_step_names_with_several_counters_or_values(name):
    assert nvtx.is_step_name(name)


@pytest.mark.parametrize("name", ["layer_12", "block 3", "head_7", "conv2d_3", "all_reduce_bucket_4", "microbatch 2",
                                  "decode_step_3", "layer 3 block 2", "epoch 2 microbatch 1", "Epoch 1/10", "fwd_bwd",
                                  "optimizer epoch 1 step 2", "e1_b2_h3", "step3_batch2", "epoch 1 step 2 of model3"])
def test_names_with_numbers_of_no_step_control(name):
    """A layer's, a block's, a bucket's index; a micro-batch alone or inside an epoch; one token of a generation; an
    outer loop alone; a step's counter followed by other words."""
    assert not nvtx.is_step_name(name)
