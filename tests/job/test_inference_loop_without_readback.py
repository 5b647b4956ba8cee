"""An inference loop that never reads a result back, its ops recorded by ``emit_nvtx`` (issue #37 class 2,
h37-fwnvtx2; ``synthetic.autograd_nvtx`` ``no_grad`` with ``readback=False``, truth by construction).

Nothing marks its iterations: no range around them, no sync (the host never waits for the GPU), no optimizer.  Its
launch sequence repeats once an iteration, but the period reading took a repeat for a step only where the host waited
at its boundaries, where each repeat was a run of three or more layers, or where the program launched its kernels
itself with no framework op around them.  A model of one or two layers fits none, so main read the 12 iterations as
the whole window, "one pass" (7.0 ms, 8.1 ms).  What makes each repeat a call on a new input is its upload: one
host-to-device copy at the same point of every repeat, launched by the program's own op (``aten::to``), nothing else
on the GPU (``job.period._fed_calls``).

Controls: the same loop that reads its results back is read by the host's waits as before; a native loop whose
copies block at every gap with no op recorded (``test_period_native``) still gets no steps from its period.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from synthetic import autograd_nvtx as an
from tb_gpu_advisor.runtime.pipeline import analyze_session


def _host(tmp_path, **kw) -> tuple[dict, dict]:
    p = str(tmp_path / "loop.sqlite")
    truth = an.write(p, "no_grad", **kw)
    host = SimpleNamespace(host="h0", path=p, format="nsys", size=os.path.getsize(p))
    return analyze_session("w", "s", [host]).to_dict()["hosts"][0], truth


@pytest.mark.parametrize(("steps", "layers"), [(12, 1), (12, 2), (6, 1), (12, 6)])
def test_a_loop_that_never_reads_back_is_its_iterations(tmp_path, steps, layers):
    host, truth = _host(tmp_path, steps=steps, layers=layers, readback=False)
    st = host["steps"]
    assert st["source"] == "repeated_launches", st  # main (1-2 layers): "single_pass", one step of the window
    assert st["found"] == steps
    # the loop runs at the slower of its host's period and its GPU's work an iteration
    want = max(truth["step_ms"], truth["gpu_ms"])
    rows = [r["step_ms"] for r in host["step_rows"]]
    assert rows and all(abs(ms - want) < 0.02 * want for ms in rows), (rows, truth)
    assert host["job"]["kind"] == "inference"
    assert "one pass" not in " ".join(f["title"] for f in host["findings"])


def test_the_same_loop_reading_back_keeps_its_waits(tmp_path):
    """Control: with its ``.cpu()`` each batch, the host's wait marks each iteration, as on main."""
    host, truth = _host(tmp_path, steps=12, layers=1)
    assert host["steps"]["source"] == "repeated_launches" and host["steps"]["found"] == 12
    assert "waited for the GPU" in host["steps"]["note"]
    assert "fed by its own upload" not in host["steps"]["note"]
