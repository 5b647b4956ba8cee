"""Steps of a JAX loop over several jitted programs (survey h37-survey32, issue #37 item 6).

The real captures (wrf-gpu/wrf_gpu's solver bake-off, AGPL: read in ``.robustness/``, numbers in
tests/fixtures/wild/SURVEY.md) are one JAX 0.10 program on an RTX 5090 that calls four jitted tridiagonal solvers in
turn, each followed by ``block_until_ready``:

* its ``jax.profiler.trace`` logdir holds **one** call of each solver.  Every execution is wrapped in the runtime's
  ``PjRtCApiLoadedExecutable::Execute``, so that span repeats four times and holds every launch -- main took it for
  the step: "3 steps of 790 us", the mean of three different programs.  The assumption: *a span that repeats and
  holds the work is an iteration*.  An iteration runs the same programs each time; where the capture names the
  module each execution runs, a span whose instances run different modules is one execution each.
* its Nsight export (XLA's ``XlaModule:#...#`` NVTX ranges) holds the loop five times over.  The four modules tie
  (five executions each); the step is the one launching the most work, executed first in each pass.  Steps tile
  start to start, but the last ended at its own module's end: the other three solvers of the last pass fell outside
  every step (a 1.42 ms last step of 3.6-4.5 ms passes).  The assumption: *the step's module is the whole
  iteration*; where the other tied modules run once in every step after it, they are the rest of its iteration.

Truth by construction, from the same shapes; the controls: one program called each step (its module executions
are the steps, as before), the runtime's execute span without module names (still the steps: nothing says they
differ), and a key split executed *before* each step's module (XLA's tie case, unchanged).
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace


from synthetic import jaxcapture as jc
from synthetic import nsysexport as nx
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import analyze_session, host_metrics
from tests.support.xplane_paths import written_capture

SOLVERS = ("thomas_kernel", "pcr_kernel", "hybrid_kernel", "xla_reference_kernel")



def _solvers_once(module_events: bool = True) -> jc.JaxCapture:
    """One call of each of four jitted programs, each waited for (a read back), as the bake-off's logdir."""
    cap = jc.JaxCapture(seed=0, module_events=module_events)
    ks = jc.mlp_train_step(2)
    for fn in SOLVERS:
        cap.execute(ks, function=fn)
        cap.to_host(4)
        cap.t += 150 * jc.US
    return cap


def test_four_programs_called_once_each_are_one_pass_not_steps(tmp_path):
    m = host_metrics(read_trace(str(written_capture(tmp_path, _solvers_once(), "solvers_once"))))
    # main: annotation_spans, 4 `PjRtCApiLoadedExecutable::Execute` spans found, 3 kept "steps" of different programs
    assert m.steps.source != "annotation_spans", m.steps.note
    assert "Execute" not in m.steps.note
    assert m.steps.count == 1


def test_control_without_module_names_the_runtime_span_stays_the_step(tmp_path):
    """``jax_raw_no_module_events``: one program a step, no module event names what each execution runs."""
    sc = jc.jax_raw_no_module_events()
    p = sc.write(tmp_path)[0]
    m = host_metrics(read_trace(str(p)))
    assert m.steps.source == "annotation_spans"
    assert m.steps.found == sc.truth.num_steps


def test_control_one_program_a_step_is_its_module_executions(tmp_path):
    sc = jc.jax_raw()
    m = host_metrics(read_trace(str(sc.write(tmp_path)[0])))
    assert m.steps.source == "xla_module_launches" and m.steps.found == sc.truth.num_steps


def _nsys(tmp_path: Path, name: str, steps: int = 6, **kw) -> tuple[dict, object]:
    p = str(tmp_path / f"{name}.sqlite")
    truth = nx.write(p, nx.NsysJob(steps=steps, ops=9, step_range=None, autograd_nvtx=False, **kw))
    host = SimpleNamespace(host="h0", path=p, format="nsys", size=os.path.getsize(p))
    return analyze_session("w", "s", [host]).to_dict()["hosts"][0], truth


def test_the_last_step_holds_the_rest_of_its_pass(tmp_path):
    """Two modules a pass: ``jit_solve_a`` launches six ops, then ``jit_solve_b`` three; steps start at solve_a.  Five
    passes, as the bake-off's: the last is kept (the stock rule drops first and last only of more than five)."""
    host, truth = _nsys(tmp_path, "cycle", steps=5, range_starts=(6,),
                        extra_ranges=("XlaModule:#hlo_module=jit_solve_a,program_id=3#",
                                      "XlaModule:#hlo_module=jit_solve_b,program_id=5#"))
    st = host["steps"]
    assert st["source"] == "xla_module_launches" and "`jit_solve_a`" in st["note"]
    assert st["count"] >= 4 and not any(d["step"] == st["found"] - 1 for d in st["dropped"])  # the last is kept
    rows = [r["step_ms"] for r in host["step_rows"]]  # each GPU's steps
    # main: each GPU's last step ended at solve_a's end, without its pass's solve_b (3.81 of 4.73 ms)
    assert min(rows) >= 0.9 * max(rows), rows
    assert "jit_solve_b" in st["note"]


def test_control_a_module_run_before_the_step_module_changes_nothing(tmp_path):
    """XLA's key split executed before each step's module (``jit__threefry_split``): not after it, no cycle said."""
    host, truth = _nsys(tmp_path, "tie", range_starts=(1,),
                        extra_ranges=("XlaModule:#hlo_module=jit__threefry_split,program_id=3#",
                                      "XlaModule:#hlo_module=jit_train_step,program_id=7#"))
    st = host["steps"]
    assert "`jit_train_step`" in st["note"] and "followed by" not in st["note"]
    assert st["found"] == truth.steps
