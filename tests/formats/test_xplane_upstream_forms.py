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
from tests.support.rocm_copies import blit_copies, roctracer_copies

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


@pytest.mark.parametrize("change", [roctracer_copies, blit_copies], ids=["roctracer_records", "blit_kernels"])
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
            devices.KIND_D2D: sum(c.startswith("hipMemcpyDtoD") for c in calls),
            devices.KIND_MEMSET: sum(c.startswith("hipMemset") for c in calls)}  # a fill, no copy (h37-fill30)
    assert sum(want.values()) > 0  # the premise: the capture's copy and fill calls
    d = t.devices[0]
    blit = np.isin(d.name, [i for i, n in enumerate(d.names) if n.startswith("__amd_rocclr_")])
    assert {k: int((d.kind == k).sum()) for k in want} == want
    assert not (blit & (d.kind == devices.KIND_KERNEL)).any()
    assert ((d.kind == devices.KIND_KERNEL) == ~blit).all()  # control: every other kernel stays a kernel


# -- CUPTI's NVTX activity: the program's own ranges ---------------------------------------------------------------

STEPS = 8


def _nvtx_lines(space, names: tuple[str, ...], xla_ranges: bool = False) -> int:
    """The program's ranges ``names`` written as CUPTI's NVTX activity writes them (``NVTX:<name>`` on the line
    ``Host Threads/<tid>/NVTX`` of the thread that pushed them, merged into ``/host:CPU``) instead of as TraceMe
    events; with ``xla_ranges``, XLA's own ``XlaModule`` range (domain ``TSL``) over each module execution as well, as
    XLA pushes it whenever NVTX is listened to.  Returns the ranges moved."""
    host = space.plane("/host:CPU")
    moved = 0
    for ln in list(host.lines):
        ranges = ln.take(lambda n, s, d, st: n in names)
        modules = [e for e in ln.events() if e[0].endswith(":XLA GPU module")] if xla_ranges else []
        if not ranges and not modules:
            continue
        dst = host.line(f"Host Threads/{ln.id}/NVTX", (1 << 20) + len(host.lines))
        for n, s, d, st in ranges:
            dst.add(f"NVTX:{n}", s, d)
        for n, s, d, st in modules:
            dst.add(f"NVTX:TSL:XlaModule:#hlo_module={n.split(':')[0]},program_id=1#", s, d)
        moved += len(ranges)
    return moved


def _idle_in_ranges(path) -> dict[str, float]:
    from tb_gpu_advisor.formats import read
    from tb_gpu_advisor.runtime.pipeline import host_metrics
    t = read(SimpleNamespace(host="h", path=str(path), format="xplane"))
    return {k: round(v, 3) for k, v in dict(host_metrics(t).idle_in_ranges).items()}


def _jax_annotated(nvtx_ranges: bool):
    """A JAX loop with ``preprocess`` around 3 ms of Python and ``forward_backward`` around the jitted call each
    step (``tests/frameworks/test_user_ranges.py``'s), the ranges TraceMe or NVTX."""
    cap = jaxcapture.JaxCapture(step_annotation=True, command_buffers=False, jitter=0.0)
    kernels = jaxcapture.mlp_bf16_step(4, command_buffers=False)
    jaxcapture.annotated_loop(cap, kernels, STEPS)
    space = cap.finish()
    if nvtx_ranges:
        assert _nvtx_lines(space, ("preprocess", "forward_backward"), xla_ranges=True) == 2 * STEPS
    return jaxcapture.JaxScenario("nvtx" if nvtx_ranges else "traceme", space,
                                  cap.truth("annotated", "ranges", "trace_train"))


def test_a_jax_program_s_nvtx_ranges_are_its_own_structure(tmp_path):
    """CUPTI's NVTX ranges of a JAX program (``nvtx.annotate('preprocess')``) name the GPU's idle in them as its
    ``TraceAnnotation`` does; XLA's own ``XlaModule`` ranges (domain ``TSL``) are none of the program's.  Main passed
    the ``Host Threads/<tid>/NVTX`` lines over as the runtime's (no range named: the 3 ms a step of ``preprocess``
    unexplained)."""
    want = _idle_in_ranges(_jax_annotated(False).write(tmp_path / "traceme")[0])
    assert want.get("preprocess", 0) > 2.5  # the premise: the TraceMe ranges name the GPU's 3 ms idle a step
    got = _idle_in_ranges(_jax_annotated(True).write(tmp_path / "nvtx")[0])
    assert got == want
    assert not any(k.startswith(("XlaModule", "NVTX")) for k in got)


def test_a_tensorflow_program_s_nvtx_range_reads_by_its_name(tmp_path):
    """TF: main read the NVTX line's events as TraceMe ranges of the program, named ``NVTX:load``; the range is
    ``load``, as its TraceMe twin (``tests/frameworks/test_user_ranges.py``)."""
    from synthetic.scenarios import Capture, K, Scenario, _dense_layers, _input_copy
    from synthetic.tfcapture import A100

    def capture(nvtx_ranges: bool):
        cap = Capture(1, A100, seed=0, marker="custom_loop")
        ops = [_input_copy()] + _dense_layers(6, K.GEMM_FP16_TC, K.EW_ADD_HALF, gemm_us=200, ew_us=18)
        for _ in range(STEPS):
            cap.step([ops], host_ranges=[("load", 1500.0)], jitter=0.0)
        space = cap.finish()
        if nvtx_ranges:
            assert _nvtx_lines(space, ("load",)) == STEPS
        return Scenario("nvtx" if nvtx_ranges else "traceme", {"worker0": space}, None)  # type: ignore[arg-type]
    want = _idle_in_ranges(capture(False).write(tmp_path)[0])
    assert want.get("load") == pytest.approx(1.5, abs=0.01)  # the premise
    assert _idle_in_ranges(capture(True).write(tmp_path)[0]) == want


def test_nvtx_names_and_domains():
    """``NVTX:<domain>:<name>`` only for a domain the NVTX knowledge names; any other first part stays in the name."""
    from tb_gpu_advisor.formats.xplane.adapter import nvtx_name
    assert nvtx_name("NVTX:TSL:XlaModule:#hlo_module=jit_f,program_id=3#") == ("XlaModule:#hlo_module=jit_f,program_id=3#", "TSL")
    assert nvtx_name("NVTX:NCCL:ncclAllReduce") == ("ncclAllReduce", "NCCL")
    assert nvtx_name("NVTX:forward") == ("forward", "")
    assert nvtx_name("NVTX:epoch:1") == ("epoch:1", "")
    assert nvtx_name("forward") == ("forward", None)  # control: a TraceMe event's name is its own


def test_a_chunked_capture_is_named_not_passed_over(tmp_path):
    """``SaveXSpaceChunk`` writes ``<host>.xplane.riegeli`` (Brotli Riegeli records): main said "no GPU profiles found"
    of its logdir; it is named as a capture this reader does not read, with the export it reads."""
    from tb_gpu_advisor.formats.xplane.layout import LAYOUT
    from tb_gpu_advisor.runtime.advisor import why_not_read
    session = tmp_path / "run" / "plugins" / "profile" / "2026_01_01_00_00_00"
    session.mkdir(parents=True)
    chunked = session / "vm.xplane.riegeli"
    chunked.write_bytes(b"chunked")  # the content is not read: the name says what it is
    why = why_not_read(str(chunked))
    assert why is not None and "chunks" in why and "xplane.pb" in why
    # control: the one-message export stays read
    assert LAYOUT.unread(("run", "plugins", "profile", "s", "vm.xplane.pb")) is None


# -- several hosts of one job ------------------------------------------------------------------------------------------

def _session_findings(logdir) -> tuple[int, dict[str, str]]:
    from tb_gpu_advisor.discover.logdir import discover
    from tests.support.report_store import session_report
    (s,) = discover(str(logdir))
    rep = session_report(s)
    return len(rep.hosts), {f.rule: f.severity for f in rep.findings}


def test_a_remote_capture_s_host_port_names_are_the_same_job(tmp_path):
    """A remote capture (``capture_profile``: TensorBoard's "Capture profile", ``jax.profiler.start_server``) names
    each host's file ``<host>_<port>.xplane.pb`` (``SaveXSpace``: ``:`` -> ``_``).  The two hosts of
    ``jax_dp_2host_slow_link`` so named are the same two ranks, their all-reduce judged across both (a guard: main
    already right)."""
    job = jaxcapture.jax_dp_2host_slow_link()
    job.write(tmp_path / "local", run="r")
    want = _session_findings(tmp_path / "local")
    assert want[0] == 2 and want[1].get("comm_bandwidth_low") == "critical"  # the premise: the job's slow link
    for host, space in job.spaces.items():
        space.write(tmp_path / "remote" / "r" / "plugins" / "profile" / "2026_01_01_00_00_00" / f"{host}_6009.xplane.pb")
    assert _session_findings(tmp_path / "remote") == want


@pytest.mark.parametrize("make", [jaxcapture.jax_raw, jaxcapture.jax_healthy_bf16_nocb], ids=["jax_raw", "healthy_nocb"])
def test_xla_s_own_nvtx_ranges_change_nothing(tmp_path, make):
    """Control: a JAX capture whose only NVTX ranges are XLA's own (``NVTX:TSL:XlaModule:#...#`` over each module
    execution, pushed whenever a tool listens) reads as the capture without them: the same findings and savings."""
    want = _findings(make().write(tmp_path, run="plain")[0])
    sc = make()
    _nvtx_lines(sc.space, (), xla_ranges=True)
    assert any(ln.name.endswith("/NVTX") for ln in sc.space.plane("/host:CPU").lines)  # the premise: XLA's ranges
    assert _findings(sc.write(tmp_path, run="xla_nvtx")[0]) == want


def test_a_rocm_copy_takes_the_direction_of_its_call():
    """roctracer names a ``hipMemcpyDtoD``'s record ``CopyHostToDevice`` (its issue #53): the call of the record's
    correlation id says the direction; a call that names none (``hipMemcpyAsync``) leaves the record's own name, a blit
    kernel's a copy of unknown direction.  Control: a kernel stays a kernel whatever call shares its id."""
    assert devices.blit_copy_kind("CopyHostToDevice", "hipMemcpyDtoDAsync") == devices.KIND_D2D
    assert devices.blit_copy_kind("CopyHostToDevice", "hipMemcpyAsync") == devices.KIND_H2D
    assert devices.blit_copy_kind("CopyHostToDevice", None) == devices.KIND_H2D
    assert devices.blit_copy_kind("__amd_rocclr_copyBuffer.kd", "hipMemcpyDtoHAsync") == devices.KIND_D2H
    assert devices.blit_copy_kind("__amd_rocclr_copyBuffer.kd", None) == devices.KIND_OTHER_COPY
    assert devices.blit_copy_kind("Cijk_Ailk_Bljk_BBS_BH_MT128x32x64", "hipMemcpyHtoDAsync") is None
