"""A forward-only loop with autograd on that rebinds its output, recorded without stacks over two passes or more:
the previous pass's graph, freed after the history's last allocation, is no teardown (h37-huntsnap63; issue #37 class
5, snap62's *Left* 5a).

Why: ``job.iterations.teardown_start`` took any block made in the history's first half and freed after its last
allocation for what the script's teardown frees (``del model, optimizer``).  A loop that rebinds ``out = model(x)``
frees the previous pass's graph there too, once the next pass has returned; recorded from between two passes with
two passes in the history (``windows_autocast_forward(grad=True, passes=3)`` through ``as_recorded(context=None)``),
that graph was made in the first half, so ``metrics.memory._climb`` read the floor at the last pass's peak and the
pass's kept graph as 4 MiB of a 964 MiB peak: no finding at all, with or without a teardown after the loop.  Truth by
construction: the generator's last pass keeps its 24 outputs of 4 MiB and its 24 bf16 casts of 8 MiB (its graph
saves them for a backward) and a 4 MiB temporary at its peak: 292 MiB made by the pass live there; 384 MiB of
weights were made before the recording.  A block a rebinding frees repeats the bytes of one made after it, and a
block of its bytes made before it was freed while it lived (the graph it replaced); a training loop's weights and
the optimizer's state of their sizes made after them replace nothing.  The first two tests fail on base; the third is
a control (a stackless Adam loop torn down still reads its teardown there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.job.iterations import teardown_start
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tests.support.snapshot_report import report

MiB = ms.MiB


def _kept(rep):
    return [f for f in rep.findings if f.rule == "activation_memory" and f.metric.detail.get("cause") == "forward_kept"]


@pytest.mark.parametrize("torn", [False, True], ids=["dumped", "torn_down"])
def test_two_recorded_rebound_passes_keep_the_last_graph(tmp_path: Path, torn: bool):
    sc = ms.windows_autocast_forward(grad=True, passes=3)
    doc = ms.as_recorded(sc.doc, context=None)
    doc = ms.torn_down(doc) if torn else doc
    rep = report(tmp_path, doc)
    (f,) = _kept(rep)
    last_graph = 2 * 12 * (4 * MiB + 8 * MiB)  # 24 outputs and 24 casts, from the generator's loop
    assert f.metric.detail["kept_bytes"] >= last_graph + 4 * MiB  # and the temporary live at the peak
    assert f.metric.detail["peak_allocated_bytes"] == sc.truth["weights_bytes"] + 2 * last_graph + 4 * MiB
    assert f.severity == ("warning" if torn else "info")  # torn down: freed unused; dumped: a backward may follow


def test_the_rebinding_is_not_read_as_the_teardown(tmp_path: Path):
    doc = ms.as_recorded(ms.windows_autocast_forward(grad=True, passes=3).doc, context=None)
    me = read_trace(ms.write(str(tmp_path / "r.pickle"), doc)).memory[0]
    assert teardown_start(me) is None  # nothing the loop held across its passes is freed


def test_a_torn_down_stackless_adam_loop_keeps_its_teardown(tmp_path: Path):
    doc = ms.as_recorded(ms.training_iterations(teardown=True).doc, context=None)
    me = read_trace(ms.write(str(tmp_path / "t.pickle"), doc)).memory[0]
    cut = teardown_start(me)
    assert cut is not None and int(me.allocated[-1]) == 0
    made = me.delta > 0
    assert not made[cut:].any() and int(me.allocated[cut - 1]) > int(me.allocated[-1])
