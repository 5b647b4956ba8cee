"""A driver launch inside the program's own range, after an op inside it returned, is no bare launch (issue #37
class 3, h37-probe47y).

``metrics.syncs._bare_launcher_calls`` keeps the launches a framework reads as a Python launcher's that are made
outside every op and range of their thread.  It asked ``model.enclosing.Encloser`` without nesting, which answers the
latest-starting outer event and -1 where that one has ended: a Triton kernel launched inside a ``record_function``
range after the range's ``aten::empty`` (its output) returned read as outside every range -- all 24 kept launches of
``write_python_launcher(ranged=True)`` (6 kept steps x 4).  Truth by construction: the generator puts every launch
inside its range (0 bare), and its plain twin makes every launch bare (4 a kept step)."""

from __future__ import annotations

import pytest

from synthetic.torchtrace import write_python_launcher
from tb_gpu_advisor.metrics.syncs import _bare_launcher_calls
from tests.support.metrics_context import capture_context as _context




@pytest.mark.parametrize("ranged", [False, True], ids=["bare", "in_range_after_inner_op"])
def test_a_launch_in_its_range_after_an_inner_op_is_not_bare(tmp_path, ranged):
    """Bare launches per kept step: the generator's 4 where nothing is around them, 0 inside the program's range
    (BASE: 4 there too, the range's ``aten::empty`` having returned before the launcher ran)."""
    truth = write_python_launcher(str(tmp_path / "bench.pt.trace.json"), ranged=ranged)
    ctx = _context(str(tmp_path))
    named = ctx.h.name_mask(ctx.fw.launcher_call)
    bare = sum(_bare_launcher_calls(ctx, g, named).size for g in ctx.active)
    assert ctx.steps.count > 0
    assert bare == truth["bare_launches_per_step"] * ctx.steps.count
    assert bare == (0 if ranged else 4 * ctx.steps.count)
