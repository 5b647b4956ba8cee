"""An inference loop's own turn, named after inference (``inference_step_{step}``, ``Inference batch {i}``), marks its
steps (issue #37 class 2, h37-nvtx69).

Public inference benchmarks mark each turn of their loop themselves, with no profiler schedule: ``for step in
range(profile_steps): with record_function(f"inference_step_{step}"): model.generate(...)``, ``inference_iteration_
{i}``, ``inference_run_{i}``, ``inference_batch_{batch_idx}``, ``nvtx.range_push(f"Inference batch {i}")`` (code
corpus, SURVEY "h37-nvtx69").  Main read none of them as a step's name (only ``train`` may stand before ``step``): a
decode loop's 8 turns were cut by the host's waits (``repeated_launches``, low confidence: "the launches alone repeat
no longer sequence") and its critical ``small_grid`` finding fell to a warning.  Truth by construction:
``synthetic.torchtrace.write_named_turns`` renames the ``ProfilerStep#N`` of a generated decode run, whose reading
(8 steps, ``small_grid`` critical) is the truth.
"""

from __future__ import annotations

import pytest

from synthetic.torchtrace import write_named_turns
from tb_gpu_advisor.frameworks import nvtx
from tests.support.run_report import fresh_run_report


def test_an_inference_loops_named_turns_are_its_steps(tmp_path):
    write_named_turns(str(tmp_path), "decode_far_from_peak_bw", "inference_step_{k}", steps=8)
    host = fresh_run_report(tmp_path, "named_turns").hosts[0]
    st = host.steps
    assert st["source"] == "nvtx_range" and st["found"] == 8 and st["confidence"] == "high", st["note"]
    assert "`inference_step_" in st["note"]
    assert {f.rule: f.severity for f in host.findings}.get("small_grid") == "critical"  # main: warning (low steps)


@pytest.mark.parametrize("name", ["inference_step_3", "inference_iteration_2", "inference_run_0", "inference_batch_4",
                                  "Inference batch 3", "Inference 3", "infer_step 7"])
def test_inference_turn_names(name):
    assert nvtx.is_step_name(name)


@pytest.mark.parametrize("name", ["inference", "INFERENCE", "Inference (BS=32)", "inference_decode_step_3"])
def test_inference_names_of_no_turn_control(name):
    """A range around the whole run, a batch size's label, a decode step inside one generation (a pair of counters,
    ``inference step 3, rollout step 2``, is a step's: tests/steps/test_nested_loop_step_names69.py)."""
    assert not nvtx.is_step_name(name)
