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

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic import jaxcapture, scenarios
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.xplane.adapter import read_trace
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


# -- ROCm's own records beside the kernels -------------------------------------------------------------------------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _kinds(path) -> dict[int, tuple[int, float]]:
    """kind -> (events, ms) over every GPU of a capture."""
    out: dict[int, tuple[int, float]] = {}
    for d in read_trace(str(path)).devices:
        for k in np.unique(d.kind).tolist():
            sel = d.kind == k
            n, ms = out.get(k, (0, 0.0))
            out[k] = (n + int(sel.sum()), round(ms + float((d.end[sel] - d.start[sel]).sum()) / 1e9, 6))
    return out


def _renamed(plane, old: str, new: str) -> None:
    plane._events = {(new if n == old else n): i for n, i in plane._events.items()}


def _roctracer_copies(space) -> None:
    """XLA's roctracer-based ROCm tracer: each copy's HIP-OPS record named by roctracer (``CopyHostToDevice``), with
    ``memcpy_details`` of no size (``kind:Unknown size:0 ...``: the record carries none); the call on the host is
    ``hipMemcpyHtoDAsync``."""
    gpu = space.plane("/device:GPU:0")
    _renamed(gpu, "MemcpyH2D", "CopyHostToDevice")
    for ln in gpu.lines:
        for n, s, d, st in ln.take(lambda n, s, d, st: n == "CopyHostToDevice"):
            ln.add(n, s, d, **{**st, "memcpy_details": "kind:Unknown size:0 dest:0 async:1"})
    _renamed(space.plane("/host:CPU"), "MemcpyH2D", "hipMemcpyHtoDAsync")


def _blit_copies(space) -> None:
    """The HIP runtime's blit kernels: each H2D copy run as ``__amd_rocclr_copyBuffer.kd`` on the stream, made by
    the host's ``hipMemcpyHtoDAsync`` (the same correlation id), no ``memcpy_details``."""
    gpu = space.plane("/device:GPU:0")
    _renamed(gpu, "MemcpyH2D", "__amd_rocclr_copyBuffer.kd")
    for ln in gpu.lines:
        for n, s, d, st in ln.take(lambda n, s, d, st: n == "__amd_rocclr_copyBuffer.kd"):
            ln.add(n, s, d, **{k: v for k, v in st.items() if k != "memcpy_details"})
    _renamed(space.plane("/host:CPU"), "MemcpyH2D", "hipMemcpyHtoDAsync")


@pytest.mark.parametrize("change", [_roctracer_copies, _blit_copies], ids=["roctracer_records", "blit_kernels"])
def test_rocm_copies_are_copies(tmp_path, change):
    """Main read roctracer's ``CopyHostToDevice`` records and ROCclr's copy kernels as kernels: the capture's 8 H2D
    copies (0.70 ms) gone from the copies, 8 more kernels.  The same copies and kernels as the CUDA capture's."""
    want = _kinds(scenarios.ideal().write(tmp_path, run="cuda")[0])
    assert want[devices.KIND_H2D][0] > 0  # the premise: the capture's input copies
    sc = scenarios.ideal()
    change(next(iter(sc.spaces.values())))
    assert _kinds(sc.write(tmp_path, run=change.__name__)[0]) == want


def _rocm_captures() -> list[Path]:
    return sorted((FIXTURES / "wild").glob("jax_mi3*/plugins/profile/*/*.xplane.pb"))


@pytest.mark.parametrize("path", _rocm_captures(), ids=lambda p: p.parts[-5])
def test_a_real_rocm_capture_s_blit_copies_are_its_copy_calls(path):
    """The kept MI300X / MI355X JAX captures: each ``hipMemcpyHtoDAsync`` / ``hipMemcpyDtoDAsync`` / ``hipMemsetAsync``
    on the host ran as a ROCclr blit kernel (``__amd_rocclr_copyBuffer.kd``, ``__amd_rocclr_fillBufferAligned.kd``)
    under its correlation id.  Main counted them as the model's kernels (MI300X: 46 -> 26 kernels, "2.2 of 2.9 kernels
    per step" small); they are the copies and fills the calls asked for, in the calls' directions."""
    t = read_trace(str(path))
    calls = [t.h.names[i] for i in t.h.name.tolist()]
    want = {devices.KIND_H2D: sum(c.startswith("hipMemcpyHtoD") for c in calls),
            devices.KIND_D2D: sum(c.startswith(("hipMemcpyDtoD", "hipMemset")) for c in calls)}
    assert sum(want.values()) > 0  # the premise: the capture's copy and fill calls
    d = t.devices[0]
    blit = np.isin(d.name, [i for i, n in enumerate(d.names) if n.startswith("__amd_rocclr_")])
    assert {k: int((d.kind == k).sum()) for k in want} == want
    assert not (blit & (d.kind == devices.KIND_KERNEL)).any()
    assert ((d.kind == devices.KIND_KERNEL) == ~blit).all()  # control: every other kernel stays a kernel
