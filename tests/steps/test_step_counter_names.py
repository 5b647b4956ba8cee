"""A loop's counter in the punctuation its program writes: one range name, a step (issue #37 class 2, h37-nvtxvocab31).

Programs number their iteration ranges in their own forms (code corpus, tests/fixtures/wild/SURVEY.md, session 31):
Grendel-GS's 3DGS trainer pushes ``f"iteration[{iteration},{iteration+bsz})"`` (the images one step trains), progress
style ``f"Step {i}/{n}"``, ``f"step ({i})"``, ``f"step[{i}]"``.  Main read a counter only where it followed a space,
``_``, ``#``, ``:``, ``=`` or ``-``: each ``iteration[96,100)`` was a name of its own, so the program's iteration ranges
neither were named like a step nor repeated, and ``Step 3/100`` kept its ``3`` -- eight names, one range each, so the
named-like-a-step reading took the first: **one step of eight**.  Now a number with no letter, digit or dot beside it
is a counter wherever it stands (``steps.ranges._base_name``), and a step word followed by a counter in any
punctuation names a step (``frameworks.nvtx.is_step_name``).  Truth by construction: ``synthetic.nsysexport`` writes
eight iterations under the range.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import nvtx
from tb_gpu_advisor.steps.ranges import _base_name, _counting_bases, _counts
from tests.support.cli_report import first_host, written_hosts
from tests.support.sqlite_edits import run_sql

#: the range around each iteration, as each program writes it ({k}: the iteration's number)
FORMS = {
    "progress": "Step {k}/100",  # main: 1 step of 8 (each `Step k/` a name of its own)
    "grendel": "iteration[{k}00,{k}04)",  # main: the ranges unread, steps from the launches' period
    "parenthesised": "step ({k})",
    "bracketed": "train_step[{k}]",
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    return written_hosts(tmp_path_factory.mktemp("counter_names"), FORMS,
                         lambda p, rng: nx.write(p, nx.NsysJob(steps=8, ops=9, step_range=rng)))


@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_counted_iteration_range_marks_every_step(reports, form):
    host, truth = reports[form]
    rng = FORMS[form]
    st = host["steps"]
    assert st["source"] == "nvtx_range", st["note"]  # main: repeated_launches (the ranges unread) for grendel...
    assert st["found"] == truth.steps  # ... and 1 for `Step k/100`
    assert "named like a step" in st["note"]
    shown = st["note"].split("`")[1]  # the ranges shown as the program spelled them (h37-accum32; `#` for the
    assert "#" not in shown and shown == rng.format(k=0)  # counters before), the first of them


@pytest.mark.parametrize("name", ["Step 3/100", "iteration[96,100)", "step (3)", "train_step[3]", "step[3]",
                                  "iteration_3", "Iteration 3 - OVERLAP", "batch 12"])
def test_step_words_with_a_counter_in_any_punctuation_name_a_step(name):
    assert nvtx.is_step_name(name)


@pytest.mark.parametrize("name", ["optimizer.step", "lr_scheduler.step 3", "batch_size=32", "steps_per_epoch",
                                  "step_fn"])
def test_a_step_word_followed_by_words_names_no_step_control(name):
    # a counter holds no letter: a setting or another word after the step word is not one.  (A micro-step's range
    # named after its iteration, ``iteration_3_ga_step_0``, names its step by the iteration's number, and the micro-
    # steps of one number are one step: tests/steps/test_accumulation_steps.py, h37-nvtx69.)
    assert not nvtx.is_step_name(name)


def test_an_evaluation_loops_counter_reads_alike():
    assert nvtx.is_evaluation_range("eval[2]") and nvtx.is_evaluation_range("validation (3)")  # main: neither


@pytest.mark.parametrize(("a", "b"), [("Step 3/100", "Step 4/100"), ("iteration[96,100)", "iteration[100,104)"),
                                      ("step (3)", "step (12)"), ("token_6_processing", "token_7_processing")])
def test_names_alike_but_for_their_counters_are_one_name(a, b):
    assert _base_name(a) == _base_name(b)


@pytest.mark.parametrize(("a", "b"), [("conv2d", "conv3d"), ("fp16_gemm", "fp32_gemm"),
                                      ("model.layers.3.mlp", "model.layers.4.mlp"), ("v1.2 fwd", "v1.3 fwd")])
def test_numbers_inside_words_and_dotted_paths_stay_control(a, b):
    # a number that is part of a word or a dotted path names another block (a layer, a kernel), as on main
    assert _base_name(a) != _base_name(b)


@pytest.mark.parametrize("name", ["zero grad", "Zero Grad", "zero_grad", "zerograd"])
def test_the_gradients_reset_says_training_in_the_words_tutorials_use(name):
    # CS336 benchmarks push ``nvtx.range("zero grad")`` around ``optimizer.zero_grad()`` inside each ``step {i}``
    # (SURVEY session 31); main knew ``zero_grad`` only
    assert nvtx.is_training_range(name)
    assert not nvtx.is_step_name(name)


def test_a_loop_that_zeroes_its_gradients_is_training(tmp_path):
    # by construction: each ``step k`` holds ``zero grad`` then ``forward``, nothing else naming its kind
    p = str(tmp_path / "zero_grad.sqlite")
    truth = nx.write(p, nx.NsysJob(steps=8, ops=9, step_range="step {k}", extra_ranges=("zero grad", "forward")))
    rep = first_host(p)
    assert rep["job"]["kind"] == "training"  # main: inference
    assert rep["steps"]["found"] == truth.steps


def _ranges(names: list[str], lines: list[int] | None = None) -> tuple[SimpleNamespace, np.ndarray]:
    """Host events of one range per name, in that order on the clock (thread ``lines``, else one), as the fold reads
    them: the unit under test reads only names, name ids, lines and starts."""
    table = sorted(set(names))
    h = SimpleNamespace(names=table, name=np.array([table.index(n) for n in names], np.int64),
                        line=np.array(lines or [0] * len(names), np.int64),
                        start=np.arange(len(names), dtype=np.int64) * 10)
    return h, np.arange(len(names), dtype=np.int64)


@pytest.mark.parametrize("names", [
    [f"iteration[{96 + 4 * k},{100 + 4 * k})" for k in range(6)],  # Grendel-GS: both bounds step by the batch
    [f"Step {k}/100" for k in range(1, 7)],  # one counter, one constant
    [f"microstep_{i}" for _ in range(3) for i in range(4)],  # a micro-step counter that starts over each iteration
    [f"micro_step {n}" for n in range(12)],
    # an outer counter holds through an epoch while the inner one counts (h37-review32; accum32's law undid the fold)
    [f"epoch {e} step {s}" for e in range(3) for s in range(4)],
    [f"epoch_{e}_iter_{e * 4 + s}" for e in range(3) for s in range(4)],
])
def test_counters_that_count_fold(names):
    h, idx = _ranges(names)
    assert _counts(h, idx)
    assert len(set(_counting_bases(h, idx, [_base_name(n) for n in h.names]))) == 1


@pytest.mark.parametrize("names", [
    # a benchmark's sweep: the labels are shapes, not turns of one loop (h37-accum32; main folded each to one name)
    [f"matmul ({s}, {s})" for s in (1024, 2048, 4096)] * 3,
    [f"matmul ({s}, {s})" for s in (1024, 2048, 4096) for _ in range(3)],  # each shape's trials in a row
    # sizes that step by one constant and start over: swept again, not counted (h37-review32's Left 1; main folded)
    [f"matmul ({s}, {s})" for s in (1024, 2048, 3072)] * 3,
    [f"chunk {s}" for s in (256, 512, 768, 1024)] * 2,
    [f"batch {b}" for b in (32, 64, 128, 256)],
    [f"batch {b}" for b in (32, 32, 64, 64)],  # a label repeated: no number moves from one range to the next
])
def test_labels_that_do_not_count_stay_apart(names):
    h, idx = _ranges(names)
    assert not _counts(h, idx)
    assert sorted(set(_counting_bases(h, idx, [_base_name(n) for n in h.names]))) == sorted(set(names))


@pytest.mark.parametrize("sizes", [(1024, 2048, 3072), (1024, 2048, 4096)], ids=["constant_step", "shapes"])
def test_blocks_labelled_by_sizes_are_not_one_loops_turns(tmp_path, sizes):
    """By construction: 8 iterations, each running three blocks the program labels by their sizes, no step range.
    Sizes that step by one constant (1024, 2048, 3072) rise and start over like a micro-step counter; main folded
    both kinds of label to one name, `matmul (#, #)`: 24 "steps" of a third of an iteration each."""
    p = str(tmp_path / "sizes.sqlite")
    shapes = tuple(f"matmul ({s}, {s})" for s in sizes)
    truth = nx.write(p, nx.NsysJob(steps=8, ops=9, step_range=None, extra_ranges=shapes))
    host = first_host(p)
    assert host["steps"]["found"] == truth.steps, host["steps"]["note"]  # main: 24
    rows = [r["step_ms"] for r in host["step_rows"] if r["gpu"] == 0]
    assert rows and all(ms == pytest.approx(truth.step_ms, rel=0.02) for ms in rows)


def test_a_range_naming_its_epoch_and_its_step_marks_every_step(tmp_path):
    """By construction: 8 iterations in ranges ``epoch {k // 4} step {k % 4}`` -- the epoch's number holds through
    its four turns while the step's counts and starts over.  After h37-accum32 each name was its own (the epoch's
    number does not move at every range, so the fold was undone) and no range marked the steps (the launches'
    period read instead); main before it and now: eight steps of the range (h37-review32)."""
    p = str(tmp_path / "epochs.sqlite")
    truth = nx.write(p, nx.NsysJob(steps=8, ops=9, step_range="step {k}"))
    run_sql(p, "UPDATE NVTX_EVENTS SET text = 'epoch ' || (CAST(substr(text, 6) AS INTEGER) / 4) || ' step ' || "
               "(CAST(substr(text, 6) AS INTEGER) % 4) WHERE text LIKE 'step %'")
    st = first_host(p)["steps"]
    assert st["source"].startswith("nvtx_"), st["note"]
    assert st["found"] == truth.steps, st["note"]
    assert "`epoch 0 step 0` … `epoch 1 step 3`" in st["note"], st["note"]
