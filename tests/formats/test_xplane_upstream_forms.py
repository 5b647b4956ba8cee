"""XPlane forms the kept captures do not show, built from what upstream's tracers write (survey h37-xplane2,
``tests/fixtures/wild/SURVEY.md`` "XPlane forms no kept capture shows"; issue #37).

Each capture is a synthetic one with truth by construction (``synthetic.scenarios``, ``synthetic.jaxcapture``), then
rewritten the one way another tracer version writes it; its report must be the unchanged capture's (the control):

* the CUDA driver's launch records on their own ``/host:CUPTI`` plane (``kCuptiDriverApiPlaneName``), lines
  ``Host Threads/<tid>`` -- where the GPU tracer writes them (openxla/xla ``cupti_collector.cc`` ``Export``) before
  the profiler session merges that plane into ``/host:CPU`` (``PostProcessSingleHostXSpace``); TF 2.2-2.3 kept it
  apart: launches on another plane than the op that made them;
* CUPTI's NVTX activity (the program's ``nvtx.annotate`` / ``nvtxRangePush`` ranges): events ``NVTX:<name>``
  (``NVTX:<domain>:<name>`` in a named domain, ``cupti_collector.cc`` ``CreateXEvent``) on lines
  ``Host Threads/<tid>/NVTX``;
* ROCm's own records beside the kernels on an AMD GPU's streams (roctracer's HIP-OPS ``CopyHostToDevice`` ...
  ``FillBuffer``, ``rocm_tracer.cc``), and copies the HIP runtime runs as its blit kernels.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from synthetic import jaxcapture, scenarios
from tb_gpu_advisor.runtime.pipeline import analyze_host

#: ``kCuptiDriverApiPlaneName`` (xla/tsl/profiler/utils/xplane_schema.cc)
CUPTI_PLANE = "/host:CUPTI"


def _findings(path) -> dict[str, tuple[str, float]]:
    rep = analyze_host(SimpleNamespace(host="worker0", path=str(path)))
    assert rep.error is None, rep.error
    return {f.rule: (f.severity, round(f.saving.ms_per_step, 3) if f.saving else 0.0) for f in rep.findings}


def _launches_on_cupti_plane(space) -> int:
    """Move every launch record (a host event with a ``correlation_id``) to ``/host:CUPTI``, line ``Host Threads/<tid>``
    of the thread that made it (CUPTI's ``thread_id`` is the OS thread the TraceMe line is named by); the op events
    around them stay on ``/host:CPU``.  Returns the launches moved."""
    host, cupti = space.plane("/host:CPU"), space.plane(CUPTI_PLANE)
    moved = 0
    for ln in list(host.lines):
        launches = ln.take(lambda n, s, d, st: "correlation_id" in st)
        if launches:
            dst = cupti.line(f"Host Threads/{ln.id}", ln.id)
            for n, s, d, st in launches:
                dst.add(n, s, d, **st)
            moved += len(launches)
    return moved


def _unmerged_jax(space) -> int:
    """A JAX capture's ``Host Threads/<tid>`` lines (the CUPTI callbacks, merged into ``/host:CPU`` by today's jaxlib)
    back on the ``/host:CUPTI`` plane the tracer writes them to.  Returns the launches moved."""
    host, cupti = space.plane("/host:CPU"), space.plane(CUPTI_PLANE)
    moved = 0
    for ln in [x for x in host.lines if x.name.startswith("Host Threads/")]:
        dst = cupti.line(ln.name, ln.id)
        for n, s, d, st in ln.events():
            dst.add(n, s, d, **st)
        moved += len(ln)
        host.lines.remove(ln)
    return moved


@pytest.mark.parametrize("make", [scenarios.launch_bound, scenarios.input_bound, scenarios.multi_gpu_launch_skew],
                         ids=["launch_bound", "input_bound", "launch_skew"])
def test_launches_on_their_own_cupti_plane_are_still_matched(tmp_path, make):
    """TF 2.2-2.3: the driver's launch records stay on ``/host:CUPTI``.  Launch wait, launch counts and the op each
    launch belongs to come from the same matching by ``correlation_id`` as in a merged capture: the same findings
    and savings (a guard: main already reads every ``/host:`` plane into one host table)."""
    want = _findings(make().write(tmp_path, run="merged")[0])
    assert want  # the premise: the capture's own findings (launch_bound's launch wait, input_bound's wait)
    sc = make()
    assert _launches_on_cupti_plane(next(iter(sc.spaces.values()))) > 0
    assert _findings(sc.write(tmp_path, run="cupti_plane")[0]) == want


@pytest.mark.parametrize("make", [jaxcapture.jax_raw, jaxcapture.jax_eager_ops], ids=["jax_raw", "jax_eager_ops"])
def test_a_jax_capture_s_unmerged_cupti_plane_reads_as_the_merged_one(tmp_path, make):
    """jaxlib's tracer before the merge: its ``Host Threads/<tid>`` launch lines on ``/host:CUPTI`` (a guard)."""
    want = _findings(make().write(tmp_path, run="merged")[0])
    assert want  # the premise: jax_raw's step gaps, jax_eager_ops' launch-bound eager ops
    sc = make()
    assert _unmerged_jax(sc.space) > 0
    assert _findings(sc.write(tmp_path, run="cupti_plane")[0]) == want
