"""XPlanes whose GPU planes hold lines and records our real captures lack (survey h37-survey28,
``tests/fixtures/wild/SURVEY.md`` "XPlane schema across versions").

Each capture is ``synthetic.scenarios.ideal``'s (truth by construction), then given what another TensorFlow/XLA
version's GPU tracer or post-processing writes beside the streams -- the streams unchanged, so the GPU's work read
from it must equal the unchanged capture's (the control of each test):

* a derived line known by its id (``kThreadIdDerivedMin`` = 0xdeadbeef ...): ``Source code`` (``kThreadIdSource``,
  from the ``source`` stat of each kernel's annotation), ``Host Offload Ops``, and ``CUPTI overhead`` records without a
  stream (``kThreadIdOverhead``) -- main read each as kernels: the GPU's busy time doubled, or profiler overhead
  in the idle between steps counted as work;
* CUPTI overhead records on a stream line, which the tracer then names ``CUPTI overhead`` whole: its kernels stay;
* CUPTI memory records (``MemoryAlloc`` / ``MemoryFree``, with ``memalloc_details`` / ``MemFree_details``) on a
  stream line: main counted each as a zero-length kernel (336 -> 420 kernels, "22 launches a step");
* a ``_counters_`` line of performance-counter samples (zero-length events): main read each as a kernel;
* a host file gzipped by hand (``<host>.xplane.pb.gz``): named, with how to read it -- main passed it over.
"""

from __future__ import annotations

import numpy as np
import pytest

from synthetic import scenarios
from synthetic.tfcapture import US
from tb_gpu_advisor import devices
from tb_gpu_advisor.formats.xplane.adapter import read_trace

#: ``kThreadIdDerivedMin`` (0xdeadbeef, an ``int``) as the wire holds it
_DERIVED = 0xDEADBEEF - (1 << 32)
_STEPS = 8


def _write(tmp_path, name: str, change=None) -> str:
    sc = scenarios.ideal(num_steps=_STEPS)
    gpu = next(iter(sc.spaces.values())).plane("/device:GPU:0")
    streams = gpu.lines[0]
    if change is not None:
        change(gpu, streams, np.array(streams.start_ps, np.int64), np.array(streams.duration_ps, np.int64))
    return str(sc.write(tmp_path, run=name)[0])


def _gpu_work(path: str) -> dict[tuple[int, int], tuple[int, float]]:
    """(GPU, kind) -> (events, ms): what a variant must leave as the unchanged capture has it."""
    out = {}
    for d in read_trace(path).devices:
        for k in np.unique(d.kind).tolist():
            sel = d.kind == k
            out[(d.gpu, k)] = (int(sel.sum()), round(float((d.end[sel] - d.start[sel]).sum()) / 1e9, 6))
    return out


def _source_line(gpu, streams, start, dur) -> None:
    ln = gpu.line("Source code", _DERIVED + 7)  # kThreadIdSource: one event over each kernel
    for a, b in zip(start.tolist(), dur.tolist()):
        ln.add("train.py:42", a, b)


def _offload_line(gpu, streams, start, dur) -> None:
    ln = gpu.line("Host Offload Ops", _DERIVED + 8)  # kThreadIdHostOffloadOpStart
    for a, b in zip(start[::4].tolist(), dur[::4].tolist()):
        ln.add("offload", a, 3 * b)


def _overhead_line(gpu, streams, start, dur) -> None:
    ln = gpu.line("CUPTI overhead", _DERIVED + 6)  # kThreadIdOverhead: records of no stream
    for a in start[::56].tolist():
        ln.add("BUFFER_FLUSH", a - 300 * US, 250 * US)


def _overhead_on_stream(gpu, streams, start, dur) -> None:
    streams.name = "CUPTI overhead"  # GetDeviceXLineName: a stream holding an overhead record is named so whole
    for a in start[::56].tolist():
        streams.add("BUFFER_FLUSH", a - 300 * US, 250 * US)


def _memory_records(gpu, streams, start, dur) -> None:
    for a in start[::8].tolist():
        streams.add("MemoryAlloc", a - 2 * US, 0, memalloc_details="kind:device num_bytes:1048576")
        streams.add("MemoryFree", a - US, 0, MemFree_details="kind:device num_bytes:1048576")


def _counter_line(gpu, streams, start, dur) -> None:
    ln = gpu.line("_counters_", 1)  # kCounterEventsLineName: zero-length samples of performance counters
    for a in start[::4].tolist():
        ln.add("Wavefronts Launched (Count)", a, 0, counter_value=4096)


@pytest.mark.parametrize("change", [_source_line, _offload_line, _overhead_line, _overhead_on_stream, _memory_records,
                                    _counter_line],
                         ids=["source_code", "host_offload", "overhead_line", "overhead_on_a_stream", "memory_records",
                              "counters"])
def test_the_gpu_s_work_is_its_streams_whatever_else_the_plane_holds(tmp_path, change):
    want = _gpu_work(_write(tmp_path, "base"))
    kernels, ms = want[(0, devices.KIND_KERNEL)]
    assert kernels == 56 * _STEPS and ms > 0  # the premise: the scenario's kernels, read
    assert _gpu_work(_write(tmp_path, change.__name__, change)) == want


def test_a_stream_named_for_its_overhead_keeps_its_kernels(tmp_path):
    """Control: ``CUPTI overhead`` as a stream's name drops only the overhead records on it -- every kernel stays."""
    got = _gpu_work(_write(tmp_path, "named", lambda g, s, a, d: setattr(s, "name", "CUPTI overhead")))
    assert got == _gpu_work(_write(tmp_path, "base"))


def test_a_kernel_named_like_an_overhead_kind_on_a_stream_is_a_kernel(tmp_path):
    """Control: an overhead kind's name is dropped only on a ``CUPTI overhead`` line; on any other stream it is
    work of the GPU (a user kernel may be called ``RESOURCE``)."""
    def kernel_named_resource(gpu, streams, start, dur):
        streams.add("RESOURCE", int(start[-1] + dur[-1]) + 5 * US, 40 * US, correlation_id=999_999)
    base = _gpu_work(_write(tmp_path, "base"))
    got = _gpu_work(_write(tmp_path, "resource", kernel_named_resource))
    n, ms = base[(0, devices.KIND_KERNEL)]
    assert got[(0, devices.KIND_KERNEL)] == (n + 1, pytest.approx(ms + 0.04))


def test_derived_by_id_signed_or_not_and_never_a_stream():
    """A derived line's id as TF writes it (a negative ``int``) or as an unsigned 0xdeadbeef + n; a stream's or a
    thread's id is never one, whatever its name."""
    from tb_gpu_advisor.formats.xplane.adapter import DERIVED_GPU_LINES, is_derived_line
    from tb_gpu_advisor.formats.xplane.timeline import Line
    assert {"Steps", "Source code", "Host Offload Ops"} <= DERIVED_GPU_LINES

    def line(i: int, name: str) -> Line:
        return Line(i, name, "", 0, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int16), None)
    assert is_derived_line(line(_DERIVED, "anything")) and is_derived_line(line(_DERIVED + (1 << 32) + 7, "x"))
    assert not any(is_derived_line(line(i, f"Stream #{i}(Compute)")) for i in (0, 7, 100, 1 << 20))


def test_a_compressed_xplane_is_named_not_passed_over(tmp_path):
    """A host file gzipped by hand (to attach it to an issue): main said "no GPU profiles found" of its logdir and
    "not a profile this tool reads" of the file; it is named, with how to read it."""
    from tb_gpu_advisor.formats.xplane.layout import LAYOUT
    from tb_gpu_advisor.runtime.advisor import why_not_read
    session = tmp_path / "run" / "plugins" / "profile" / "2026_01_01"
    session.mkdir(parents=True)
    packed = session / "worker0.xplane.pb.gz"
    packed.write_bytes(b"\x1f\x8b\x08\x00")
    why = why_not_read(str(packed))
    assert why is not None and "compressed XPlane" in why and "xplane.pb" in why
    # controls: the profiler's own gzipped tool data and a PyTorch trace keep their readings
    assert "compressed" not in (LAYOUT.unread(("run", "plugins", "profile", "s", "worker0.trace.json.gz")) or "")
    assert LAYOUT.unread(("run", "worker0.123.pt.trace.json.gz")) is None
    assert LAYOUT.unread(("run", "plugins", "profile", "s", "worker0.xplane.pb")) is None


def _old_jaxlib(space) -> None:
    """What jaxlib 0.3-0.4.x wrote: ``jax.jit``'s dispatch traced ``JaxCompiledFunction(<name>)`` (before jit became
    pjit), and no ``jax_version`` / ``jaxlib_version`` on ``/host:metadata``."""
    host = space.plane("/host:CPU")
    host._events = {n.replace("PjitFunction(", "JaxCompiledFunction("): i for n, i in host._events.items()}
    meta = space.plane("/host:metadata")
    meta.plane_stats = [(k, v) for k, v in meta.plane_stats if k not in ("jax_version", "jaxlib_version")]


def test_an_older_jaxlib_s_capture_is_jax_with_jax_s_findings(tmp_path):
    """Main read it as TensorFlow: TF's fixes (``tf.profiler`` options, ``steps_per_execution``,
    ``TF_GPU_THREAD_MODE``) and the input wait lost (0.77 ms of each step read as host launch contention)."""
    import re
    from types import SimpleNamespace

    from synthetic.jaxcapture import jax_raw
    from tb_gpu_advisor import frameworks
    from tb_gpu_advisor.runtime.pipeline import analyze_host

    def report(old: bool):
        sc = jax_raw()
        if old:
            _old_jaxlib(sc.space)
        path = str(sc.write(tmp_path, run="old" if old else "new")[0])
        rep = analyze_host(SimpleNamespace(host="jaxhost", path=path))
        found = {f.rule: (f.severity, round(f.saving.ms_per_step if f.saving else 0, 3)) for f in rep.findings}
        return frameworks.detect_trace(read_trace(path)).id, found, rep
    fw, want, _ = report(False)
    assert fw == "jax" and want  # the premise: today's jaxlib, read as JAX, with findings
    fw_old, got, rep = report(True)
    assert fw_old == "jax" and got == want
    tf_api = re.compile(r"\btf\.|steps_per_execution|TF_GPU_THREAD_MODE")
    assert not any(tf_api.search(f"{a.text} {a.snippet or ''}") for f in rep.findings for a in f.actions)
