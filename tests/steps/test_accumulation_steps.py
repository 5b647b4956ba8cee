"""Steps as the user wrote them under gradient accumulation: the optimizer's step, not the micro-step (issue #37
class 2, h37-accum32).

Public training loops mark only their micro-steps (code corpus, tests/fixtures/wild/SURVEY.md, session 32):
``record_function(f"microstep_{micro_step}")`` around ``data_loading`` / ``forward_pass`` / ``backward_pass``, then
``record_function("optimizer_step")``; ``nvtx.range_push(f"micro_{micro}")``; verl's
``record_function(f"micro_batch{i}")``.  Main read the most repeated top-level range -- the micro-step -- as the step:
32 "steps" for 8 optimizer steps of 4.  What PyTorch, DeepSpeed and the HF Trainer (``gradient_accumulation_steps``)
call a step is the optimizer's: the update after every k-th micro-step closes it, where the capture names the update
or shows the gradients' all-reduce at that beat (DDP's ``no_sync`` ends with the last micro-step).  Truth by
construction: ``synthetic.nsysexport.write_accumulation_loop``.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_host, written_hosts

#: how each loop marks its micro-steps and its update (``{i}``: the micro-step in its iteration, ``{n}``: in the run)
FORMS = {
    "record_function": {"micro_range": "microstep_{i}", "update_range": "optimizer_step"},
    "global_counter": {"micro_range": "micro_step {n}", "update_range": "optimizer.step"},
    "verl": {"micro_range": "micro_batch{i}", "phases": ("", ""), "update_range": "optimizer_step"},
    "ddp_no_sync": {"micro_range": "accum {i}", "update_range": None, "allreduce_ms": 1.5},
    "pytorch_optimizer": {"micro_range": "micro_{i}", "phases": ("", ""),
                          "update_range": "Optimizer.step#AdamW.step"},
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return written_hosts(tmp_path_factory.mktemp("accumulation"), FORMS, lambda p, kw: nx.write_accumulation_loop(p, **kw))


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_step_is_the_optimizers_not_the_micro_steps(reports, form):
    host, truth = reports[form]
    st = host["steps"]
    assert st["found"] == truth["iterations"], st["note"]  # main: 32 micro-steps (nvtx_top_range)
    assert "micro-step of gradient accumulation" in st["note"]
    assert "one optimizer step" in st["note"] and f"every {truth['micro']}th" in st["note"]
    step_ms = next(m for m in host["headline"] if m["id"] == "device_step_share")["detail"]["avg_step_ms"]
    assert step_ms == pytest.approx(truth["step_ms"], rel=0.02)


def test_the_note_shows_the_micro_steps_as_the_program_spelled_them(reports):
    note = reports["record_function"][0]["steps"]["note"]
    assert "`microstep_0`" in note and "#" not in note.split("`")[1]


#: a forward pass's kernel: what an evaluation or a logging pass at the beat launches, no optimizer's
_FORWARD_GEMM = "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn"


@pytest.mark.parametrize(("label", "kw"), [
    # nothing names the update, no collective or optimizer kernel at the beat: the beat alone is no optimizer
    # (h37-names70: the update's own kernels, ``multi_tensor_apply_kernel``, now show it -- the case below)
    ("unnamed_update", {"micro_range": "micro_{i}", "phases": ("", ""), "update_range": None,
                        "update_kernel": _FORWARD_GEMM}),
    # a loop that evaluates every 4th step launches more after it too: not an update, each range a step
    ("evaluation_beat", {"micro_range": "chunk_{n}", "update_range": "evaluate", "update_kernel": _FORWARD_GEMM}),
    ("step_named_evaluation_beat", {"micro_range": "batch {n}", "update_range": "evaluate",
                                    "update_kernel": _FORWARD_GEMM}),
])
def test_work_at_a_beat_that_is_not_named_the_optimizers_leaves_each_range_a_step_control(tmp_path, label, kw):
    p = str(tmp_path / f"{label}.sqlite")
    truth = nx.write_accumulation_loop(p, **kw)
    st = first_host(p)["steps"]
    assert st["found"] == truth["micro_steps"], st["note"]
    assert "gradient accumulation" not in st["note"]


@pytest.mark.parametrize("name", ["optimizer_step", "optimizer", "opt.step", "Optimizer.step#AdamW.step", "adamw_update",
                                  "optim_step"])
def test_the_updates_names(name):
    assert nvtx.is_update_range(name)


@pytest.mark.parametrize("name", ["optimizer.zero_grad", "Optimizer.zero_grad#AdamW.zero_grad", "backward_pass",
                                  "option_parse", "adoption", "step"])
def test_names_of_no_update_control(name):
    assert not nvtx.is_update_range(name)


def test_micro_steps_named_after_their_iteration_are_its_step(tmp_path):
    """NVIDIA-NeMo/Automodel's benchmark (``examples/benchmarking/next_token_prediction.py``) pushes
    ``f"iteration_{i}_ga_step_{_ga_step_idx}"`` around each micro-step, the optimizer's step after the last, outside
    them, named by nothing here: the name says which micro-steps make one iteration.  Main read each micro-step as a
    step (``nvtx_top_range``: 32 "steps" of 3.5 ms for 8 iterations of 14 ms, h37-nvtx69)."""
    p = str(tmp_path / "automodel.sqlite")
    truth = nx.write_accumulation_loop(p, micro_range="iteration_{k}_ga_step_{i}", update_range=None)
    host = first_host(p)
    st = host["steps"]
    assert st["found"] == truth["iterations"] and st["source"] == "nvtx_range", st["note"]
    assert "`iteration_0_ga_step_0`" in st["note"] and "8 iterations" in st["note"]
    step_ms = next(m for m in host["headline"] if m["id"] == "device_step_share")["detail"]["avg_step_ms"]
    assert step_ms == pytest.approx(truth["step_ms"], rel=0.02)


@pytest.mark.parametrize(("name", "iteration"), [
    ("iteration_3_ga_step_0", 3), ("step 12 micro 1", 12), ("iter3_microbatch0", 3), ("train_step_7/mb_2", 7),
    # controls: one number, a micro-step alone, an epoch's counter outside the step's, a step's batch
    ("iteration 3", -1), ("microstep_0", -1), ("epoch 1 step 3", -1), ("step3_batch2", -1)])
def test_the_iteration_a_micro_steps_name_numbers(name, iteration):
    assert nvtx.iteration_number(name) == iteration


@pytest.mark.parametrize(("label", "kw"), [
    ("batch_named_update", {"micro_range": "batch {n}", "update_range": "optimizer_step"}),
    ("train_step_named_update", {"micro_range": "train_step {n}", "update_range": "optimizer_step"}),
    ("batch_optimizer_kernels", {"micro_range": "batch_{n}", "update_range": None}),
    ("unnamed_micro_optimizer_kernels", {"micro_range": "micro_{i}", "phases": ("", ""), "update_range": None}),
])
def test_micro_steps_named_like_a_step_are_the_optimizers_step(tmp_path, label, kw):
    """``batch {n}`` / ``train_step {n}`` micro-steps, the update after every 4th -- named ``optimizer_step``, or
    unnamed but running the optimizer's own kernels (``multi_tensor_apply_kernel``) there alone: a step is the 4
    micro-steps, and the note says so (h37-nvtx69 / h37-names69 *Left*).  Base dbf6cf15: 32 steps, each range one
    (the step-named ones: main's policy for a single counter; the unnamed ``micro_{i}``: the beat alone was no update)."""
    p = str(tmp_path / f"{label}.sqlite")
    truth = nx.write_accumulation_loop(p, **kw)
    st = first_host(p)["steps"]
    assert st["found"] == truth["iterations"], st["note"]
    assert "micro-step of gradient accumulation" in st["note"] and "one optimizer step" in st["note"]
    if label != "unnamed_micro_optimizer_kernels":
        assert "named like a step" in st["note"] and "most repeated top-level range" not in st["note"]
    said = "(its `optimizer_step`)" if kw["update_range"] else "(the optimizer's own kernels, launched there alone)"
    assert f"after every 4th {said} closes each step" in st["note"], st["note"]  # what showed the update
