"""A sync an op makes to go on with its own work -- ``torch.nonzero``, boolean-mask indexing, ``torch.unique`` read a
count back, then launch the kernels that write that many elements -- is named by the op the program called, fixed
by the op's own fix, and its idle lasts until the op returns (issue #37 class 3, h37-probe43s).

Main measured a sync's drained stretch up to the first device event after the sync call returned: the op's own last
kernel (30 us), not the program's next launch.  The GPU's idle after it, while the host ran the Python that used the
selection, was read as launch wait ("Launch-bound ... Top offender: nonzero", fixed by torch.compile, which breaks
the graph at nonzero), host_sync did not fire, and where it did its fix was "keep .item() out of the step" -- the
program wrote no ``.item()``.

- generator: ``synthetic.torchtrace.write_implicit_sync`` (truth by construction: the op's name, the idle after each
  op until the next launch).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host

OP_FIX = "The wait is inside an op that reads a GPU value back to size its output"
ITEM_FIX = "Keep .item(), .cpu()"


def _findings(path: Path):  # noqa: ANN202 - the host's findings
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    return rep.findings


def _host_sync(path: Path):  # noqa: ANN202 - the host_sync finding of the program's syncs
    found = [f for f in _findings(path) if f.rule == "host_sync" and "#" not in f.id]
    assert found, [f.rule for f in _findings(path)]
    return found[0]


@pytest.mark.parametrize("op", sorted(tt.IMPLICIT_SYNC_OPS))
def test_an_ops_own_read_is_its_sync_until_it_returns(tmp_path, op):
    """The syncs' idle holds the GPU's idle after each op until the next launch; main: no host_sync finding (the
    drain ended at the op's own last kernel, 71 us of 396)."""
    p = tmp_path / f"{op}.1.pt.trace.json"
    truth = tt.write_implicit_sync(str(p), op=op)
    f = _host_sync(p)
    idle = f.metric.detail["idle_ms_per_step"]
    assert idle >= truth["idle_after_ops_ms"] * 0.95, (idle, truth)
    assert f.saving is not None and f.saving.ms_per_step >= truth["idle_after_ops_ms"] * 0.95


@pytest.mark.parametrize("op", sorted(tt.IMPLICIT_SYNC_OPS))
def test_an_ops_own_read_is_named_and_fixed_as_the_ops(tmp_path, op):
    """Named by the op the program called (``x[mask]``: aten::index, not the aten::nonzero inside it), and the op's
    fix -- a size known in advance -- first, not the ``.item()`` the program never wrote."""
    p = tmp_path / f"{op}.1.pt.trace.json"
    truth = tt.write_implicit_sync(str(p), op=op)
    f = _host_sync(p)
    assert f"in {truth['op']} " in f.summary, f.summary
    assert f.actions[0].text.startswith(OP_FIX), [a.text for a in f.actions]


def test_an_item_read_keeps_its_words(tmp_path):
    """Control (passes on main too): ``.item()`` ends with its copy -- the program's read, its fix reading every N
    steps."""
    out = tmp_path / "run"
    tt.write_sync_then_host_work(str(out))
    (p,) = list(out.rglob("*.pt.trace.json"))
    f = _host_sync(p)
    assert f.actions[0].text.startswith(ITEM_FIX), [a.text for a in f.actions]
    assert "read a size back" not in f.summary


XDIT = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "xdit_flux_mi300x_capture"


@pytest.mark.skipif(not XDIT.is_dir(), reason="fixture absent")
def test_a_compiled_regions_syncs_stay_the_programs():
    """Control (real, passes on main): Inductor's cudagraph warm-up syncs inside ``## Call CompiledFxGraph``, whose
    later kernels launch inside their own ops -- the region read no size to go on with: no op's read is claimed, and
    the pass's idle is not stretched to the region's end (a first version of this branch claimed 35.3 ms there)."""
    (p,) = XDIT.glob("*.pt.trace.json*")
    for f in _findings(p):
        assert "read a size back" not in f.summary, f.summary
        if f.rule == "host_sync":
            assert f.metric.detail["idle_ms_per_step"] < 5.0, f.metric.detail
