"""JAX/XLA-shaped GPU captures (what ``jax.profiler.trace`` writes with XLA on a GPU), with their truth.

Separate from the TensorFlow corpus (:mod:`.scenarios`): the registry here is
:data:`JAX_SCENARIOS`, so goldens and tests over ``SCENARIOS`` do not change.

What a JAX GPU capture contains, and where each fact comes from (upstream
sources, read for this module):

* Planes ``/host:CPU``, ``/device:GPU:<n>``, ``Task Environment``
  (``xla/tsl/profiler/utils/xplane_schema.cc``: ``kHostThreadsPlaneName``,
  ``kGpuPlanePrefix``, ``kTaskEnvPlaneName``).  The CUPTI driver-API events are
  merged into ``/host:CPU`` on the launching thread (as in current TF files,
  see docs/profile-format.md).
* Host TraceMe events on the Python thread: ``PjitFunction(<fun>)`` around
  each call of a jitted function (jaxlib ``pjit.cc``: ``absl::StrCat(
  "PjitFunction(", function_name_, ")")``), ``PjRtCApiLoadedExecutable::Execute``
  (the PJRT C-API plugin JAX GPU ships as; seen in real traces) and
  ``<module>:XLA GPU module`` (``xla/service/gpu/gpu_executable.cc``:
  ``absl::StrCat(module_name, ":XLA GPU module")``).  Optional user step
  markers: ``jax.profiler.StepTraceAnnotation("train", step_num=s)`` -- a
  ``train`` event with ``step_num`` and ``_r=1``.
* Launch records (CUPTI driver callbacks) on the launching thread, named after
  the kernel (or ``MemcpyH2D``/``MemcpyD2H``), with ``device_id``,
  ``correlation_id`` (uint64) and ``context_id`` (``"$$<id>"``)
  (``xla/backends/profiler/gpu/cupti_collector.cc``: ``CreateXEvent``).
* GPU lines ``Stream #<id>(Compute)`` / ``Stream #<id>(MemcpyH2D)``
  (``cupti_collector.cc``: ``GetDeviceXLineName``).  Kernel events: demangled
  kernel name; stats ``correlation_id``, ``context_id``,
  ``theoretical_occupancy_pct``, ``kernel_details`` (ref), plus the parsed
  XLA annotation stack (``cupti_collector.cc`` + ``ParseAnnotationStack``):
  ``tf_op`` = the outermost annotation's name (``XlaModule:``), and every
  ``key=value`` of ``XlaModule:#prefix=..,hlo_module=..,program_id=..#`` and
  ``Thunk:#name=..,hlo_op=..#`` (``xla/service/gpu/runtime/annotation.cc``:
  ``MakeTitle``/``MakeKernelName``) -- so ``hlo_module``, ``program_id``
  (int64), ``hlo_op``, ``name``, ``prefix``.
* Derived lines, only in post-processed files (the stock converter derives
  them at conversion time; ``xprof/utils/derived_timeline.cc``):
  ``XLA Modules`` events named ``HloModuleNameWithProgramId`` =
  ``<module>(<program_id>)`` (``xla/tsl/profiler/convert/xla_op_utils.h``)
  spanning the module's kernels, and ``XLA Ops`` events named
  ``<program_id>/<hlo_op>`` with display name ``<hlo_op>``; line ids
  ``kThreadIdHloModule``/``kThreadIdHloOp`` = 0xdeadbeef + 4 / + 5
  (``xla/tsl/profiler/utils/trace_utils.h``).  Only kernels (events with
  ``kernel_details``) feed them, not copies.  One module event per execution
  is written here (the grouped / scope-range-separated form).

Variants (:data:`JAX_SCENARIOS`):

* ``jax_xla_modules`` -- post-processed: ``XLA Modules``/``XLA Ops`` lines,
  one ``jit_train_step(<id>)`` execution per step -> ``xla_modules``;
* ``jax_raw`` -- what ``jax.profiler.trace`` saves: no derived lines, no
  step markers; each step is one host ``jit_train_step:XLA GPU module``
  execution -> ``xla_module_launches`` (the GPU busy periods, separated by
  the host's per-step sync ``float(loss)`` and data preparation, would also
  give them: see ``jax_raw_no_module_events``);
* ``jax_no_steps`` -- one long ``jit_train_loop`` execution (a ``fori_loop``
  over the whole run): one continuous kernel stream -> ``whole_capture``;
* ``jax_step_annotation`` -- raw, plus ``StepTraceAnnotation("train")``
  markers -> ``trace_train``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from .builder import LineBuilder, SpaceBuilder
from .tfcapture import A100, PCIE_BYTES_PER_US, US, Gpu

#: Derived line ids (xla/tsl/profiler/utils/trace_utils.h).
THREAD_ID_DERIVED_MIN = 0xDEADBEEF
THREAD_ID_HLO_MODULE = THREAD_ID_DERIVED_MIN + 4
THREAD_ID_HLO_OP = THREAD_ID_DERIVED_MIN + 5
SESSION = "2026_01_01_00_00_00"

_GEMM_DETAILS = "regs:232 static_shared:0 dynamic_shared:73728 grid:16,8,1 block:256,1,1 occ_pct:12.5"
_FUSION_DETAILS = "regs:32 static_shared:0 dynamic_shared:0 grid:864,1,1 block:128,1,1 occ_pct:100"
_REDUCE_DETAILS = "regs:40 static_shared:4096 dynamic_shared:0 grid:216,1,1 block:512,1,1 occ_pct:100"
GEMM_BF16 = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel"


@dataclass(frozen=True)
class XlaKernel:
    """One kernel of an XLA GPU executable (a fusion, or a library call of a custom-call)."""

    name: str  # kernel name as CUPTI reports it
    hlo_op: str  # the HLO instruction that launched it
    op_name: str  # JAX op name (the `name` key of the thunk annotation)
    us: float
    details: str = _FUSION_DETAILS
    dtype: str = "bf16"
    gemm: bool = False


def mlp_train_step(layers: int = 4) -> list[XlaKernel]:
    """Kernels of one ``jit(train_step)`` of a bf16 MLP with Adam: cuBLAS GEMMs and XLA fusions."""
    ks: list[XlaKernel] = [XlaKernel("loop_convert_fusion", "loop_convert_fusion", "convert_element_type", 6)]
    g = 0
    f = 0

    def gemm(op: str, us: float) -> XlaKernel:
        nonlocal g
        g += 1
        return XlaKernel(GEMM_BF16, f"cublas-gemm.{g}", op, us, _GEMM_DETAILS, gemm=True)

    def fusion(kind: str, op: str, us: float, details: str = _FUSION_DETAILS) -> XlaKernel:
        nonlocal f
        f += 1
        return XlaKernel(f"{kind}_{f}", f"{kind}.{f}", op, us, details)

    for i in range(layers):
        ks += [gemm(f"jvp(MLP)/Dense_{i}/dot_general", 140), fusion("loop_add_fusion", f"jvp(MLP)/Dense_{i}/add", 9)]
    ks += [fusion("input_reduce_fusion", "log_softmax/reduce_max", 14, _REDUCE_DETAILS),
           fusion("loop_multiply_fusion", "log_softmax/sub", 8)]
    for i in reversed(range(layers)):
        ks += [gemm(f"transpose(jvp(MLP))/Dense_{i}/dot_general", 150),
               gemm(f"transpose(jvp(MLP))/Dense_{i}/dot_general", 150),
               fusion("input_reduce_fusion", f"transpose(jvp(MLP))/Dense_{i}/reduce_sum", 12, _REDUCE_DETAILS)]
    for i in range(layers):
        ks.append(fusion("loop_multiply_fusion", f"adam/update_{i}/mul", 18))
    return ks


@dataclass
class JaxTruth:
    """What a JAX capture really contains; times in ps (absolute, as the file stores them)."""

    scenario: str
    description: str
    expected_source: str  # steps.py source that must win
    module: str  # HLO module name, e.g. "jit_train_step"
    program_id: int
    module_event: str  # `XLA Modules` event name, "<module>(<program_id>)"
    num_steps: int  # steps the source finds (before dropping)
    steady_steps: int  # kept: first and last dropped when more than 5
    step_windows_ps: list[tuple[int, int]]  # what the source yields, tiled (step k ends where k+1 starts)
    step_time_ps: float  # mean over kept steps
    device_compute_ps: float  # mean kernel time per kept step (one GPU)
    gpu_idle_between_steps_ps: float  # mean GPU idle gap between consecutive steps' device work
    kernels_per_step: int
    kernel_counts: dict[str, int]  # whole capture
    kernel_time_ps: dict[str, int]
    hlo_ops: frozenset[str]
    memcpy_count: dict[str, int]
    derived_lines: bool
    note: str = ""
    files: list[str] = field(default_factory=list)


def _add(line: LineBuilder, name: str, start: int, dur: int, stats: dict[str, object]) -> None:
    """One event whose stats may include a stat called ``name`` (the XLA thunk annotation key)."""
    line.add_many([name], np.array([start], np.int64), np.array([dur], np.int64), {k: [v] for k, v in stats.items()})


@dataclass
class _Exec:
    """One module execution as written."""

    kernels: list[tuple[int, int, str, str]] = field(default_factory=list)  # (start, end, kernel, hlo_op)
    copies: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, H2D|D2H)
    marker: tuple[int, int] | None = None  # host step marker span (StepTraceAnnotation)
    module: tuple[int, int] | None = None  # host `<module>:XLA GPU module` span


class JaxCapture:
    """Lays out jitted-function calls the way JAX + XLA GPU record them (one GPU)."""

    def __init__(self, gpu: Gpu = A100, hostname: str = "jaxhost", seed: int = 0, module: str = "jit_train_step",
                 function: str = "train_step", program_id: int = 1021, derived_lines: bool = False,
                 step_annotation: bool = False, launch_latency_us: float = 5.0, start_ps: int = 80 * US,
                 module_events: bool = True):
        self.rng = np.random.default_rng(seed)
        self.space = SpaceBuilder(hostname)
        self.module, self.function, self.program_id = module, function, program_id
        self.derived_lines = derived_lines
        self.step_annotation = step_annotation
        self.module_events = module_events  # False: an XLA build whose host trace lacks them
        self.latency = int(launch_latency_us * US)
        self.t = start_ps
        self.gpu_free = start_ps
        self.execs: list[_Exec] = []
        self._corr = 1000
        self.host = self.space.plane("/host:CPU")
        self.python = self.host.line("python3", int(self.rng.integers(1000, 60000)))
        self.gpu = self.space.plane("/device:GPU:0")
        for key, value in (
            ("device_vendor", "Nvidia"), ("gpu_device_name", gpu.name), ("clock_rate", gpu.clock_khz),
            ("core_count", gpu.sms), ("memory_bandwidth", gpu.bandwidth), ("memory_size", gpu.memory),
            ("compute_cap_major", gpu.cc[0]), ("compute_cap_minor", gpu.cc[1]),
        ):
            self.gpu.add_stat(key, value)
        self.compute = self.gpu.line("Stream #13(Compute)", 13)
        self.h2d = self.gpu.line("Stream #14(MemcpyH2D)", 14)
        self.d2h = self.gpu.line("Stream #15(MemcpyD2H)", 15)
        self.prefix = f"jit({function})"

    def _next_corr(self) -> int:
        self._corr += 1
        return self._corr

    def _annotation(self, k: XlaKernel) -> dict[str, object]:
        return {"tf_op": "XlaModule:", "prefix": self.prefix, "hlo_module": self.module, "program_id": self.program_id,
                "name": k.op_name, "hlo_op": k.hlo_op}

    def _copy(self, ex: _Exec, direction: str, nbytes: int, h: int, dev_floor: int) -> tuple[int, int]:
        """Host launch record + device copy; returns (host end, device end)."""
        corr = self._next_corr()
        name = f"Memcpy{direction}"
        self.python.add(name, h, 4 * US, device_id=0, correlation_id=corr, context_id="$$1")
        start = max(h + self.latency, dev_floor)
        dur = max(int(nbytes / PCIE_BYTES_PER_US * US), 2 * US)
        src, dst = ("pinned", "device") if direction == "H2D" else ("device", "pinned")
        line = self.h2d if direction == "H2D" else self.d2h
        line.add(name, start, dur, correlation_id=corr, context_id="$$1",
                 memcpy_details=f"kind_src:{src} kind_dst:{dst} size:{nbytes} dest:0 async:1")
        ex.copies.append((start, start + dur, direction))
        return h + 4 * US, start + dur

    def _launch(self, ex: _Exec, kernels: list[XlaKernel], h: int, jitter: float, gap_us: float = 1.5) -> tuple[int, int]:
        """Dispatch one module execution: launch records on the host, kernels on the compute stream."""
        rng = self.rng
        d = max(self.gpu_free, h + self.latency)
        for k in kernels:
            corr = self._next_corr()
            launch = int(4 * US * (1 + jitter * abs(rng.standard_normal())))
            ann = self._annotation(k)
            _add(self.python, k.name, h, launch, {"device_id": 0, "correlation_id": corr, "context_id": "$$1", **ann})
            h += launch + US // 2
            start = max(h + self.latency, d + int(gap_us * US * (1 + 0.3 * abs(rng.standard_normal()))))
            dur = max(int(k.us * US * (1 + jitter * rng.standard_normal())), US)
            _add(self.compute, k.name, start, dur, {
                "correlation_id": corr, "context_id": "$$1",
                "theoretical_occupancy_pct": float(k.details.rsplit("occ_pct:", 1)[1]), "kernel_details": k.details, **ann})
            ex.kernels.append((start, start + dur, k.name, k.hlo_op))
            d = start + dur
        self.gpu_free = d
        return h, d

    def call(self, kernels: list[XlaKernel], h2d_bytes: int = 4 << 20, between_us: float = 2500.0,
             sync: bool = True, jitter: float = 0.02) -> None:
        """One training step: device_put(batch), ``train_step(...)``, ``float(loss)``, host data prep.

        ``sync``: the host waits for the loss (a D2H copy) before preparing the
        next batch, so the GPU idles ``~between_us`` per step; without it the
        host runs ahead and the GPU work of consecutive calls is back to back.
        """
        ex = _Exec()
        self.execs.append(ex)
        step_start = self.t
        h = self.t + 2 * US
        if h2d_bytes:
            h, dev = self._copy(ex, "H2D", h2d_bytes, h, self.gpu_free)
            self.gpu_free = max(self.gpu_free, dev)
        pj_start = h + US
        h = pj_start + int(35 * US * (1 + jitter * abs(self.rng.standard_normal())))  # argument parsing, cache lookup
        ex_start = h
        h += 8 * US
        mod_start = h
        h, d = self._launch(ex, kernels, h + 2 * US, jitter)
        h += 3 * US
        if self.module_events:
            self.python.add(f"{self.module}:XLA GPU module", mod_start, h - mod_start)
        ex.module = (mod_start, h)
        h += 2 * US
        self.python.add("PjRtCApiLoadedExecutable::Execute", ex_start, h - ex_start)
        h += 4 * US
        self.python.add(f"PjitFunction({self.function})", pj_start, h - pj_start)
        if sync:
            h, d = self._copy(ex, "D2H", 4, h + US, d)
            h = max(h, d + 3 * US)  # the host blocks until the loss is on the host
            self.gpu_free = max(self.gpu_free, d)
        end = h + 2 * US
        if self.step_annotation:
            self.python.add("train", step_start, end - step_start, step_num=len(self.execs) - 1, _r=1)
            ex.marker = (step_start, end)
        self.t = end + int(between_us * US * (1 + jitter * self.rng.standard_normal()))

    def finish(self, session_start_ns: int = 1_767_225_600_000_000_000) -> SpaceBuilder:
        """Add the derived lines (when asked) and ``Task Environment``; returns the space."""
        if self.derived_lines:
            mods = self.gpu.line("XLA Modules", THREAD_ID_HLO_MODULE)
            ops = self.gpu.line("XLA Ops", THREAD_ID_HLO_OP)
            mod_name = f"{self.module}({self.program_id})"
            for ex in self.execs:
                if not ex.kernels:
                    continue
                mods.add(mod_name, ex.kernels[0][0], ex.kernels[-1][1] - ex.kernels[0][0])
                for s, e, _, op in ex.kernels:
                    self.gpu.event_id(f"{self.program_id}/{op}", display_name=op)
                    ops.add(f"{self.program_id}/{op}", s, e - s)
        env = self.space.plane("Task Environment")
        env.add_stat("profile_start_time", session_start_ns)
        env.add_stat("profile_stop_time", session_start_ns + (self.t + 50 * US) // 1000)
        return self.space

    # -- truth ------------------------------------------------------------------

    def truth(self, scenario: str, description: str, source: str, note: str = "") -> JaxTruth:
        """Measure the truth from what was written (see :class:`JaxTruth`)."""
        execs = [e for e in self.execs if e.kernels]
        if source == "xla_modules":
            spans = [(e.kernels[0][0], e.kernels[-1][1]) for e in execs]
        elif source == "trace_train":
            spans = [e.marker for e in execs]  # type: ignore[misc]
        elif source == "xla_module_launches":  # host spans; the last runs on to its kernels' end on the GPU
            spans = [e.module for e in execs]  # type: ignore[misc]
            spans[-1] = (spans[-1][0], max(spans[-1][1], execs[-1].kernels[-1][1]))
        else:
            spans = [(min([k[0] for k in e.kernels] + [c[0] for c in e.copies]),
                      max([k[1] for k in e.kernels] + [c[1] for c in e.copies])) for e in execs]
        if source == "whole_capture":
            spans = [(min(s for s, _ in spans), max(e for _, e in spans))]
        windows = [(s, spans[i + 1][0] if i + 1 < len(spans) else e) for i, (s, e) in enumerate(spans)]
        kept = list(range(len(windows)))
        if len(windows) > 5:
            kept = kept[1:-1]
        ktime = [sum(k[1] - k[0] for k in e.kernels) for e in execs]
        if source == "whole_capture":
            ktime = [sum(ktime)]
        dev_spans = [(min([k[0] for k in e.kernels] + [c[0] for c in e.copies]),
                      max([k[1] for k in e.kernels] + [c[1] for c in e.copies])) for e in execs]
        idle = [b[0] - a[1] for a, b in zip(dev_spans, dev_spans[1:])]
        counts: dict[str, int] = {}
        times: dict[str, int] = {}
        mem: dict[str, int] = {"H2D": 0, "D2H": 0}
        for e in execs:
            for s, en, name, _ in e.kernels:
                counts[name] = counts.get(name, 0) + 1
                times[name] = times.get(name, 0) + en - s
            for c in e.copies:
                mem[c[2]] += 1
        return JaxTruth(
            scenario=scenario, description=description, expected_source=source, module=self.module,
            program_id=self.program_id, module_event=f"{self.module}({self.program_id})",
            num_steps=len(windows) if source != "whole_capture" else 0, steady_steps=len(kept),
            step_windows_ps=windows, step_time_ps=float(np.mean([windows[i][1] - windows[i][0] for i in kept])),
            device_compute_ps=float(np.mean([ktime[i] for i in kept])),
            gpu_idle_between_steps_ps=float(np.mean(idle)) if idle else 0.0,
            kernels_per_step=len(execs[0].kernels) if source != "whole_capture" else sum(len(e.kernels) for e in execs),
            kernel_counts=counts, kernel_time_ps=times,
            hlo_ops=frozenset(k[3] for e in execs for k in e.kernels), memcpy_count=mem,
            derived_lines=self.derived_lines, note=note,
        )


@dataclass
class JaxScenario:
    """One generated JAX capture (one host) and its truth."""

    name: str
    space: SpaceBuilder
    truth: JaxTruth

    @property
    def spaces(self) -> dict[str, SpaceBuilder]:
        return {self.space.hostname: self.space}

    def encode(self) -> dict[str, bytes]:
        return {self.space.hostname: self.space.encode()}

    def write(self, logdir: str | Path, run: str | None = None, session: str = SESSION) -> list[Path]:
        """Write ``<logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb``; returns the paths."""
        path = Path(logdir) / (run or self.name) / "plugins" / "profile" / session / f"{self.space.hostname}.xplane.pb"
        self.space.write(path)
        self.truth.files = [path.name]
        return [path]


def _train_steps(name: str, desc: str, source: str, num_steps: int, seed: int, layers: int, **capture) -> JaxScenario:
    """``num_steps`` calls of the jitted MLP train step on a :class:`JaxCapture` built with ``capture``."""
    cap = JaxCapture(seed=seed, **capture)
    ks = mlp_train_step(layers)
    for _ in range(num_steps):
        cap.call(ks)
    space = cap.finish()
    return JaxScenario(name, space, cap.truth(name, desc, source))


def jax_xla_modules(num_steps: int = 8, seed: int = 0, layers: int = 4) -> JaxScenario:
    """Post-processed JAX capture: `XLA Modules` (one `jit_train_step(1021)` per step) and `XLA Ops` lines."""
    return _train_steps("jax_xla_modules", "JAX jit(train_step) on one A100, post-processed file with XLA Modules / XLA Ops "
                        "lines", "xla_modules", num_steps, seed, layers, derived_lines=True)


def jax_raw(num_steps: int = 8, seed: int = 0, layers: int = 4) -> JaxScenario:
    """What jax.profiler.trace saves: no derived lines, no step markers; the host syncs on the loss each step."""
    return _train_steps("jax_raw", "JAX jit(train_step), raw capture: steps are the host's executions of the "
                        "jit_train_step module", "xla_module_launches", num_steps, seed, layers)


def jax_raw_no_module_events(num_steps: int = 8, seed: int = 0, layers: int = 4) -> JaxScenario:
    """Raw capture without host module events: steps only visible as GPU busy periods (the host syncs on the loss)."""
    return _train_steps("jax_raw_no_module_events", "JAX jit(train_step), raw capture without module events: steps "
                        "only visible as GPU busy periods", "gpu_busy_clusters", num_steps, seed, layers,
                        module_events=False)


def jax_no_steps(num_steps: int = 8, seed: int = 0, layers: int = 4) -> JaxScenario:
    """One long `jit(train_loop)` execution (fori_loop over the run): one continuous kernel stream."""
    cap = JaxCapture(seed=seed, module="jit_train_loop", function="train_loop", program_id=77)
    ks = mlp_train_step(layers) * num_steps  # the loop body, unrolled by the GPU while-thunk
    cap.call(ks, between_us=100.0)
    space = cap.finish()
    desc = "JAX jit(train_loop): the whole run is one module execution, no repeating structure"
    note = "no step structure: the whole capture is one step"
    return JaxScenario("jax_no_steps", space, cap.truth("jax_no_steps", desc, "whole_capture", note))


def jax_step_annotation(num_steps: int = 8, seed: int = 0, layers: int = 4) -> JaxScenario:
    """Raw capture with `jax.profiler.StepTraceAnnotation("train", step_num=s)` around each step."""
    return _train_steps("jax_step_annotation", "JAX jit(train_step) with StepTraceAnnotation('train', step_num=s) host "
                        "markers", "trace_train", num_steps, seed, layers, step_annotation=True)


JAX_SCENARIOS: dict[str, Callable[..., JaxScenario]] = {
    f.__name__: f for f in (jax_xla_modules, jax_raw, jax_raw_no_module_events, jax_no_steps, jax_step_annotation)
}
