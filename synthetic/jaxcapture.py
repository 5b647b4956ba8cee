"""JAX/XLA-shaped GPU captures, laid out as real JAX 0.11.2 + jaxlib CUDA plugin files on an H100 show them.

Separate from the TensorFlow corpus (:mod:`.scenarios`): the registry here is
:data:`JAX_SCENARIOS`.  Where this generator and the real captures in
``../shared/profiles/real-h100-jax`` disagree, the real files win; what was
changed and which file showed it is in ``docs/synthetic-corpus.md``.

What a capture contains (every item read off the real files):

* Planes, in this order: ``/host:metadata`` (``jax_version``,
  ``jaxlib_version``, ``cuda_version`` ...), ``/host:__ScopeRangeCallStack__``
  (``#<scope id>`` -> parent id, no lines), ``/device:GPU:0`` (device
  properties + ``process_id``), ``/host:CPU``, ``Task Environment``.
* GPU lines ``Stream #14(<kinds>)`` (compute: ``Compute``, ``Memset``,
  ``MemcpyD2D`` as used, any order), ``Stream #15(MemcpyH2D)``,
  ``Stream #18(MemcpyD2H)``; a stream with no activity has no line.
* Host lines ``python3`` (a hashed line id), ``pjrt_async_work_runner/<id>``
  (transfers, two threads used in turn), a second ``python3`` line for
  ``D2H Copy From Staging Buffer``, a few ``Host Threads/<tid>`` lines.
* A jitted call on ``python3``: ``PjitFunction(f)`` twice nested >
  ``ParseArguments``, ``PjRtCApiLoadedExecutable::Execute`` > ... >
  ``CommonPjRtLoadedExecutable::Execute (jit_f)`` > ... >
  ``[0] PjRtStreamExecutorRawLoadedExecutable::Execute`` >
  ``ComputeSemaphoreAcquire [capacity=32, value=V]`` (V = 32 - executions
  still queued on the GPU), ``[0] GpuExecutable::ExecuteThunks`` >
  ``jit_f:XLA GPU module`` > then either
  - command buffers (default in XLA): ``command_buffer_1`` >
    ``command_buffer::update``, ``command_buffer::execute`` >
    ``cuGraphLaunch (CudaGraph:N)``; every device activity of the graph has
    the launch's ``correlation_id`` and ``scope_range_id``, plus
    ``cuda_graph_id``/``cuda_graph_node_id`` and ``hlo_op=command_buffer_1``;
  - or (``--xla_gpu_enable_command_buffer=``) one thunk event per HLO op
    (``cublas-lt-matmul.1``, ``fusion.34`` ...) around launch records named
    after the kernel (``Memset`` for memsets), each with its own
    ``correlation_id``; kernels carry ``hlo_op``, ``name`` (JAX op path),
    ``unique_hlo_op_id``, ``hlo_module``, ``program_id``.
* Async dispatch: the call returns once the work is queued; the GPU runs
  behind (up to 32 executions queued), so host step windows are far shorter
  than device steps.
* ``jax.device_put``: ``shard_args`` > ``DevicePutWithSharding`` >
  ``PjRtCApiCompiler::BufferFromHostBuffer(<shape>)`` on ``python3``;
  ``H2D Dispatch`` (host staging) then a ``MemcpyH2D`` launch on a
  ``pjrt_async_work_runner`` line; the copy on ``Stream #15(MemcpyH2D)``.
  The consuming execution blocks in its ``Execute`` until the copy is
  launched; its kernels wait for the copy to end.
* ``np.asarray(x)``: ``np.asarray(jax.Array)`` on ``python3``; ``D2H
  Dispatch`` (``shape``) + ``MemcpyD2H`` on a pjrt line, the copy on
  ``Stream #18(MemcpyD2H)``, ``D2H Copy From Staging Buffer`` on the other
  ``python3`` line.
* Eager ops: each op is its own ``jit_<op>`` executable; each Python scalar
  argument is a ``DevicePut`` + 4-byte ``MemcpyH2D``.
* Step markers ``train`` (``step_num``, ``_r=1``) from
  ``jax.profiler.StepTraceAnnotation``.
* Derived lines (``XLA Modules``/``XLA Ops``, ids 0xdeadbeef + 4/5) exist only
  in post-processed files (``jax_xla_modules``): the real raw files have none.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from synthetic import hlo as hlo_module
from synthetic.builder import LineBuilder, SpaceBuilder
from synthetic.tfcapture import CAPTURE_LEAD_PS, US, Gpu
from synthetic.truth import RULE_IDS
from synthetic.xla_kernels import (
    EW_SMALL,
    EAGER_BIG_OPS,
    EAGER_BIG_US,
    EAGER_OPS,
    GEMM_BF16,
    H100,
    TINY_EW,
    XlaKernel,
    eager_big_op,
    eager_dot,
    eager_op,
    mlp_bf16_step,
    mlp_fp32_highest_step,
)

__all__ = ["GEMM_BF16", "JAX_SCENARIOS", "JaxCapture", "JaxScenario", "JaxTruth", "XlaKernel", "mlp_train_step",
           "THREAD_ID_HLO_MODULE", "THREAD_ID_HLO_OP"]

#: Derived line ids (xla/tsl/profiler/utils/trace_utils.h).
THREAD_ID_DERIVED_MIN = 0xDEADBEEF
THREAD_ID_HLO_MODULE = THREAD_ID_DERIVED_MIN + 4
THREAD_ID_HLO_OP = THREAD_ID_DERIVED_MIN + 5
SESSION = "2026_01_01_00_00_00"
COMPUTE_STREAM, H2D_STREAM, D2H_STREAM = 14, 15, 18
SEMAPHORE_CAPACITY = 32
SCOPE_BASE = 1 << 48  # real scope_range_ids: 281474976710658 ...
H2D_BYTES_PER_US = 55_000  # 32 MiB in ~610 us on the real H100 (pinned)
STAGING_BYTES_PER_US = 7_000  # `H2D Dispatch` host staging: 32 MiB in ~4.8 ms
D2H_STAGING_BYTES_PER_US = 9_200  # `D2H Copy From Staging Buffer`: 16 MiB in ~1.8 ms
METADATA = {"jax_version": "0.11.2", "jaxlib_version": "0.11.2", "cuda_version": "13000",
            "cuda_runtime_version": "13000", "cuda_driver_version": "13000", "gpu_version": "cuda 13000",
            "cpu_version": "cpu"}


def mlp_train_step(layers: int = 4) -> list[XlaKernel]:
    """Kernels of one ``jit(train_step)`` of the bf16 MLP, as healthy_bf16_nocb runs them (kept name for callers)."""
    return mlp_bf16_step(layers, command_buffers=False)


@dataclass
class JaxTruth:
    """What a JAX capture really contains; times in ps (absolute, as the file stores them).

    The first block is the step-source truth of the original scenarios; the
    second (defaults) the device-side truth every scenario now carries,
    measured from the written events.  ``expect_top``/``expect_not``/``dominant``
    use the rule ids of :data:`.truth.RULE_IDS` and come from the real run
    each scenario mirrors (``real_counterpart``, its TRUTH.json entry).
    """

    scenario: str
    description: str
    expected_source: str  # steps.py source that must win
    module: str  # HLO module name of the step executable, e.g. "jit_train_step"
    program_id: int
    module_event: str  # `XLA Modules` event name, "<module>(<program_id>)"
    num_steps: int  # steps the source finds (before dropping)
    steady_steps: int  # kept: first and last dropped when more than 5
    step_windows_ps: list[tuple[int, int]]  # what the source yields, tiled (step k ends where k+1 starts)
    step_time_ps: float  # mean over kept steps of those windows
    device_compute_ps: float  # mean summed device activity time (kernels + memsets + D2D) per kept step
    gpu_idle_between_steps_ps: float  # mean GPU idle between consecutive steps' device work
    kernels_per_step: int  # device activities on the compute stream per step
    kernel_counts: dict[str, int]  # whole capture, names as on the compute stream
    kernel_time_ps: dict[str, int]
    hlo_ops: frozenset[str]  # the `hlo_op` stats of the compute stream
    memcpy_count: dict[str, int]
    derived_lines: bool
    note: str = ""
    files: list[str] = field(default_factory=list)
    # -- device-side truth (async dispatch) --
    device_step_ps: float = 0.0  # mean over kept steps: device start of step k -> device start of k+1
    device_busy_ps: float = 0.0  # mean union of compute-stream activity per kept step (overlaps counted once)
    host_window_ps: float = 0.0  # mean host marker (or module call) duration per kept step
    max_in_flight: int = 0  # most executions queued on the GPU when one was dispatched
    command_buffers: bool = False
    launches_per_step: int = 0  # host launch records (cuGraphLaunch / per-kernel / memcpy) per step
    h2d_bytes_per_step: int = 0
    expect_top: tuple[str, ...] = ()
    expect_not: tuple[str, ...] = ()
    dominant: str | None = None
    real_counterpart: str = ""

    def __post_init__(self) -> None:
        for rule in (*self.expect_top, *self.expect_not):
            if rule not in RULE_IDS:
                raise ValueError(f"unknown rule id {rule}")
        if self.dominant is not None and self.dominant not in self.expect_top:
            raise ValueError(f"dominant rule {self.dominant} is not an expected top rule")


#: the HIP calls a ROCm XPlane records for a thunk's launch, by the kernel's kind (``wild/jax_mi355x``'s
#: ``hipModuleLaunchKernel``, ``hipMemsetAsync``; ``wild/jax_mi300x``'s ``hipMemcpyDtoDAsync``), and the thread id of
#: the line they lie on (``Host Threads/7`` in ``jax_mi355x``)
ROCM_LAUNCH_NAMES = {"kernel": "hipModuleLaunchKernel", "memset": "hipMemsetAsync", "memcpy_d2d": "hipMemcpyDtoDAsync"}
ROCM_API_TID = 7


def _add(line: LineBuilder, name: str, start: int, dur: int, stats: dict[str, object]) -> None:
    """One event whose stats may include a stat called ``name`` (the JAX op path of a kernel)."""
    line.add_many([name], np.array([start], np.int64), np.array([max(dur, 0)], np.int64),
                  {k: [v] for k, v in stats.items() if v is not None})


@dataclass
class _Transfer:
    """One host<->device copy: when its launch record ended on the host and when the copy ended on the GPU."""

    direction: str
    nbytes: int
    host_ready: int
    dev_start: int
    dev_end: int


@dataclass
class _Exec:
    """One executable run as written."""

    function: str
    module_name: str
    kernels: list[tuple[int, int, str, str]] = field(default_factory=list)  # (start, end, name, hlo_op), compute stream
    copies: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, H2D|D2H)
    marker: tuple[int, int] | None = None  # host step marker span (StepTraceAnnotation)
    module_span: tuple[int, int] | None = None  # host `<module>:XLA GPU module` span
    call: tuple[int, int] | None = None  # host `PjitFunction` span
    launches: int = 0
    in_flight: int = 0
    #: the compiled program it ran (its kernels' ``program_id``): one module name may be compiled into several
    program_id: int = 0


@dataclass
class _Step:
    """One ``train`` step: its marker and the executions and copies issued inside it."""

    marker: tuple[int, int]
    execs: list[_Exec]
    copies: list[tuple[int, int, str]]
    h2d_bytes: int = 0


class JaxCapture:
    """Lays out JAX calls the way JAX 0.11 + XLA GPU record them (one H100 by default).

    Host time is ``self.t`` (the Python thread); the GPU streams keep their
    own clocks, so dispatch is asynchronous unless the host waits (a
    ``to_host`` copy, a full queue, an input still being staged).
    """

    def __init__(self, gpu: Gpu = H100, hostname: str = "jaxhost", seed: int = 0, module: str = "jit_train_step",
                 function: str = "train_step", program_id: int = 7292, derived_lines: bool = False,
                 step_annotation: bool = False, launch_latency_us: float = 8.0, start_ps: int = CAPTURE_LEAD_PS,
                 module_events: bool = True, command_buffers: bool = False, jitter: float = 0.02,
                 host_memory: str = "pinned", rocm: bool = False, step_mark: str = "train"):
        self.rng = np.random.default_rng(seed)
        self.space = SpaceBuilder(hostname)
        self.module, self.function, self.program_id = module, function, program_id
        self.derived_lines, self.step_annotation = derived_lines, step_annotation
        self.module_events = module_events  # False: an XLA build whose host trace lacks them
        self.command_buffers = command_buffers
        self.jitter = jitter
        #: the host end of each copy as XLA's CUPTI collector names it in ``memcpy_details`` (``kind_src:pinned``): PjRt
        #: stages through pinned buffers; "pageable" is a copy the driver stages itself
        self.host_memory = host_memory
        #: a ROCm build's capture: the GPU plane's vendor ``AMD``, and each thunk's launch record a HIP call
        #: (``ROCM_LAUNCH_NAMES``) on the HIP API's own line, ``Host Threads/<tid>``, apart from the ``python3`` line
        #: of the call that made it -- as ``wild/jax_mi355x`` and ``wild/jax_mi300x`` record them
        self.rocm = rocm
        #: the name each step's ``StepTraceAnnotation(name, step_num=s)`` carries (JAX's own docs mark ``train``; the
        #: advice this tool gives a forward pass or work of no known kind names it ``predict`` or ``step``)
        self.step_mark = step_mark
        self.latency = int(launch_latency_us * US)
        self.loop_host_us = 6.0  # the host's own work of each iteration of a loop it runs (``_launch_loop``)
        self.t = start_ps
        self.gpu_free = {COMPUTE_STREAM: start_ps, H2D_STREAM: start_ps, D2H_STREAM: start_ps}
        self.execs: list[_Exec] = []
        self.steps: list[_Step] = []
        self._step: _Step | None = None
        self._pending: list[tuple[int, int, str]] = []  # copies issued before the next execution
        self._corr = 0
        self._scope = SCOPE_BASE + 1
        self._graphs: dict[str, int] = {}
        self._op_ids: dict[str, dict[str, int]] = {}
        self._programs: dict[str, int] = {module: program_id}
        self._kinds: dict[int, list[str]] = {COMPUTE_STREAM: [], H2D_STREAM: [], D2H_STREAM: []}
        self._pjrt_turn = 0
        self.annotations: list[tuple[str, int, int]] = []  # (name, start, end) of the program's TraceAnnotations
        self._build_planes(gpu)

    # -- planes and lines -------------------------------------------------------

    def _build_planes(self, gpu: Gpu) -> None:
        """Planes in the real order, with the real plane stats."""
        pid = 417
        meta = self.space.plane("/host:metadata")
        for key, value in METADATA.items():
            meta.add_stat(key, value)
        meta.add_stat("process_id", pid)
        self.scopes = self.space.plane("/host:__ScopeRangeCallStack__")
        self.gpu = self.space.plane("/device:GPU:0")
        for key, value in (
            ("device_vendor", "AMD" if self.rocm else "Nvidia"), ("gpu_device_name", gpu.name), ("clock_rate", gpu.clock_khz),
            ("core_count", gpu.sms), ("memory_bandwidth", gpu.bandwidth), ("memory_size", gpu.memory),
            ("compute_cap_major", gpu.cc[0]), ("compute_cap_minor", gpu.cc[1]), ("process_id", pid),
        ):
            self.gpu.add_stat(key, value)
        self.streams = {s: self.gpu.line(f"Stream #{s}", s) for s in (COMPUTE_STREAM, H2D_STREAM, D2H_STREAM)}
        self.host = self.space.plane("/host:CPU")
        self.host.add_stat("process_id", pid)
        for tid, names in ((pid, ["<UNKNOWN>"] * 3), (682, ["BUFFER_FLUSH", "BUFFER_FLUSH", "<UNKNOWN>"])):
            line = self.host.line(f"Host Threads/{tid}", tid, display_name=f"Host Threads/{tid}")
            for i, n in enumerate(names):
                line.add(n, self.t + i * 50 * US, US)
        self.python = self._hashed_line("python3")
        #: where the thunks' launch records go: the HIP API's own line on ROCm, else the calling thread's
        self.api = self.host.line(f"Host Threads/{ROCM_API_TID}", ROCM_API_TID,
                                  display_name=f"Host Threads/{ROCM_API_TID}") if self.rocm else self.python
        self.staging = None  # second `python3` line, created on the first D2H
        self.pjrt = [self._hashed_line("pjrt_async_work_runner/{}", negative=True) for _ in range(2)]

    def _hashed_line(self, pattern: str, negative: bool = False) -> LineBuilder:
        """A host line whose id is a 64-bit hash, as jaxlib's Python/pjrt threads get (name may include it)."""
        lid = int(self.rng.integers(1 << 60, 1 << 63))
        lid = -lid if negative else lid
        name = pattern.format(lid)
        return self.host.line(name, lid, display_name=name)

    def _stream_kind(self, stream: int, kind: str) -> None:
        if kind not in self._kinds[stream]:
            self._kinds[stream].append(kind)

    def _next_corr(self) -> int:
        self._corr += 1
        return self._corr

    def _next_scope(self) -> int:
        self._scope += 1
        self.scopes.add_stat(f"#{self._scope}", self._scope - 1)
        return self._scope

    def _dur(self, us: float) -> int:
        """``us`` with the capture's jitter, at least 1 ns."""
        return max(int(us * US * (1 + self.jitter * self.rng.standard_normal())), 1000)

    def _pjrt_line(self, free_at: int | None = None) -> LineBuilder:
        """The pjrt thread pool's next thread (two taking turns); with ``free_at``, one whose work has ended by then --
        the other, or a new thread of the pool -- as a thread runs one scoped event at a time: a 64 MiB staging
        (9.6 ms) outlasting the loop's turn was written over the previous one on its thread (session 53)."""
        self._pjrt_turn ^= 1
        if free_at is None:
            return self.pjrt[self._pjrt_turn]
        for k in (self._pjrt_turn, self._pjrt_turn ^ 1, *range(2, len(self.pjrt))):
            line = self.pjrt[k]
            if max((a + d for a, d in zip(line.start_ps, line.duration_ps)), default=0) <= free_at:
                return line
        self.pjrt.append(self._hashed_line("pjrt_async_work_runner/{}", negative=True))
        return self.pjrt[-1]

    # -- steps ------------------------------------------------------------------

    def begin_step(self) -> None:
        """Open a step (``StepTraceAnnotation(self.step_mark)``) at the current host time."""
        self._step = _Step((self.t, self.t), [], [])
        self.t += 4 * US

    def end_step(self, turn_us: float = 15.0) -> None:
        """Close the step: write its ``step_mark`` marker; the loop's turn (its own code between two markers) then takes
        ``turn_us`` on the host."""
        st = self._step
        assert st is not None
        end = self.t + 2 * US
        st.marker = (st.marker[0], end)
        # jaxlib's StepTraceAnnotation is a TraceAnnotation with ``_r=1`` added to the caller's ``step_num``
        self.python.add(self.step_mark, st.marker[0], end - st.marker[0], step_num=len(self.steps), _r=1)
        for ex in st.execs:
            ex.marker = st.marker
        self.steps.append(st)
        self._step = None
        self.t = end + int(turn_us * US)

    @contextmanager
    def annotation(self, name: str) -> Iterator[None]:
        """``with jax.profiler.TraceAnnotation(name):`` around the body: a TraceMe range on ``python3`` from the host
        time at entry to 1 us after the body's last host event, as jaxlib writes it (no stats)."""
        t0 = self.t
        self.t += US
        yield
        self.t += US
        self.python.add(name, t0, self.t - t0)
        self.annotations.append((name, t0, self.t))

    def host_work(self, us: float) -> None:
        """Untraced Python work (data loading, sleep, numpy): only time passes on the host."""
        self.t += self._dur(us)

    # -- transfers --------------------------------------------------------------

    def _memcpy(self, direction: str, nbytes: int, launch_at: int, line: LineBuilder, floor: int) -> _Transfer:
        """Launch record on a pjrt line + the copy on its stream."""
        corr = self._next_corr()
        rec = self._dur(36 if nbytes > 4096 else 6)
        name = f"Memcpy{direction}"
        line.add(name, launch_at, rec, device_id=0, correlation_id=corr, context_id="$$1",
                 memcpy_details=f"kind_src:unknown kind_dst:unknown size:{nbytes} dest:0 async:1")
        stream = H2D_STREAM if direction == "H2D" else D2H_STREAM
        start = max(self.gpu_free[stream], launch_at + self.latency, floor)
        dur = max(int(nbytes / H2D_BYTES_PER_US * US), 800_000)
        src, dst = (self.host_memory, "device") if direction == "H2D" else ("device", self.host_memory)
        self.streams[stream].add(name, start, dur, correlation_id=corr, context_id="$$1",
                                 memcpy_details=f"kind_src:{src} kind_dst:{dst} size:{nbytes} dest:0 async:1")
        self._stream_kind(stream, name)
        self.gpu_free[stream] = start + dur
        copy = (start, start + dur, direction)
        if self._step is not None:
            self._step.copies.append(copy)
            self._step.h2d_bytes += nbytes if direction == "H2D" else 0
        return _Transfer(direction, nbytes, launch_at + rec, start, start + dur)

    def _callback(self, line: LineBuilder, name: str, at: int) -> int:
        """``ThenExecuteCallback:<name>`` > ``LocalDeviceState::WaitFor``, ``cuLaunchHostFunc``; returns its end."""
        w = self._dur(2.5)
        f = self._dur(6.0)
        line.add("LocalDeviceState::WaitFor", at + 300_000, w)
        line.add("hipLaunchHostFunc" if self.rocm else "cuLaunchHostFunc", at + 300_000 + w + 500_000, f)
        end = at + 300_000 + w + 500_000 + f + 300_000
        line.add(f"ThenExecuteCallback:{name}", at, end - at)
        return end

    def device_put(self, nbytes: int, shape: str = "bf16[4096,4096]") -> _Transfer:
        """``jax.device_put`` of a host array: returns at once; staging and the copy run on a pjrt thread."""
        h = self.t
        lin = h + 80 * US
        self.python.add("PythonRefManager::CollectGarbage", h + 2 * US, 2 * US)
        self.python.add("CommonPjRtClient::LinearizeIntoImpl", lin, self._dur(33))
        self.python.add(f"PjRtCApiCompiler::BufferFromHostBuffer({shape})", lin - 38 * US, 76 * US)
        self.python.add("DevicePutWithSharding", lin - 70 * US, 124 * US)
        end = lin + 150 * US
        self.python.add("shard_args", h, end - h)
        d0 = lin + 65 * US
        line = self._pjrt_line(free_at=d0)
        stage = max(int(nbytes / STAGING_BYTES_PER_US * US), US)
        line.add("Transpose::ExecuteChunk", d0 + 12 * US, stage)
        line.add("Transpose::Execute", d0 + 11 * US, stage + 2 * US)
        line.add("H2D Dispatch", d0, stage + 30 * US)
        cb = self._callback(line, "GetEventForComputeStreamSyncPoint", d0 + stage + 30 * US)
        tr = self._memcpy("H2D", nbytes, cb + 15 * US, line, 0)
        self._callback(line, "PjRtStreamExecutorRawBuffer::CopyRawHostToDevice", tr.host_ready + 5 * US)
        self._pending.append((tr.dev_start, tr.dev_end, "H2D"))
        self.t = end + 3 * US
        return tr

    def _scalar_put(self, at: int, line: LineBuilder, shape: str = "f32[]", nbytes: int = 4) -> tuple[int, _Transfer]:
        """A Python scalar argument of an eager op: DevicePut on python3 (returns its end) + 4-byte H2D.  ``shape``,
        ``nbytes``: a NumPy array's instead (handed straight to the jitted call, copied inside its dispatch)."""
        d = self._dur(17)
        self.python.add("Transpose::ExecuteChunk", at + 11 * US, 100_000)
        self.python.add("Transpose::Execute", at + 11 * US, 300_000)
        self.python.add("CommonPjRtClient::LinearizeIntoImpl", at + 8 * US, 7 * US)
        self.python.add(f"PjRtCApiCompiler::BufferFromHostBuffer({shape})", at + 2 * US, 14 * US)
        self.python.add("DevicePut", at, d)
        tr = _Transfer("H2D", nbytes, at, 0, 0)
        return at + d, tr

    def to_host(self, nbytes: int, shape: str = "f32[]") -> int:
        """``np.asarray(x)`` / ``float(loss)``: blocks until the value is on the host; returns host end time."""
        h = self.t
        # the value is read once it is on the device: after the compute stream's work, and after an upload not yet
        # consumed by an execution (``device_put`` then ``np.asarray`` of the same array: a copy loop's turn)
        uploaded = max((e for _, e, kind in self._pending if kind == "H2D"), default=0)
        d0 = max(h + 20 * US, self.gpu_free[COMPUTE_STREAM] + 5 * US, uploaded + 5 * US)
        line = self._pjrt_line(free_at=d0)
        line.add("PjRtBuffer::ToLiteralZeroCopyPath", d0 + 8 * US, 13 * US, shape=shape)
        line.add("D2H Dispatch", d0, 23 * US, shape=shape)
        tr = self._memcpy("D2H", nbytes, d0 + 55 * US, line, self.gpu_free[COMPUTE_STREAM])
        self._callback(line, "PjRtStreamExecutorRawBuffer::CopyRawDeviceToHost", tr.host_ready + 20 * US)
        if self.staging is None:
            self.staging = self._hashed_line("python3")
        s0 = tr.dev_end + 10 * US
        sd = max(int(nbytes / D2H_STAGING_BYTES_PER_US * US), 2 * US)
        self.staging.add("D2H Copy From Staging Buffer", s0, sd)
        end = s0 + sd + 5 * US
        self.python.add("np.asarray(jax.Array)", h, end - h)
        if self.execs:
            self.execs[-1].copies.append((tr.dev_start, tr.dev_end, "D2H"))
        self.t = end + 3 * US
        return end

    # -- executions -------------------------------------------------------------

    def _acquire(self, at: int, line: LineBuilder) -> tuple[int, int]:
        """``ComputeSemaphoreAcquire``: waits while 32 executions are queued; returns (end, in flight)."""
        ends = sorted(e.kernels[-1][1] for e in self.execs if e.kernels and e.kernels[-1][1] > at)
        wait = 0
        if len(ends) >= SEMAPHORE_CAPACITY:
            wait = ends[len(ends) - SEMAPHORE_CAPACITY] - at
            ends = [e for e in ends if e > at + wait]
        dur = wait + self._dur(0.5)
        line.add(f"ComputeSemaphoreAcquire [capacity={SEMAPHORE_CAPACITY}, value={SEMAPHORE_CAPACITY - len(ends)}]",
                 at, dur)
        return at + dur, len(ends)

    def _gpu_stats(self, k: XlaKernel, ex: _Exec, corr: int, scope: int, node: int | None) -> dict[str, object]:
        """Stats of one compute-stream activity (see the module docstring for the two shapes)."""
        st: dict[str, object] = {"correlation_id": corr, "scope_range_id": scope, "context_id": "$$1"}
        if node is not None:
            st["cuda_graph_id"] = self._graphs[ex.module_name]
            st["cuda_graph_node_id"] = node
        if k.kind == "memset":
            st["Memset_details"] = ("kind:unknown num_bytes:4 async:0" if node is not None
                                    else "kind:device num_bytes:4 async:1")
        elif k.kind == "memcpy_d2d":
            st["memcpy_details"] = f"kind_src:device kind_dst:device size:{k.nbytes} dest:0 async:1"
        else:
            st.update(theoretical_occupancy_pct=k.occupancy, occupancy_min_grid_size=2 * 132 if k.occupancy == 100 else 132,
                      occupancy_suggested_block_size=1024, kernel_details=k.details)
        st["tf_op"] = "XlaModule:"
        if node is None:
            st["name"] = k.op_name or None
            st["hlo_op"] = k.hlo_op
            st["unique_hlo_op_id"] = self._unique_op_id(ex.module_name, k.hlo_op)
        else:
            st["hlo_op"] = "command_buffer_1"
        st["hlo_module"] = ex.module_name
        st["program_id"] = ex.program_id
        return st

    def _unique_op_id(self, module: str, hlo_op: str) -> int:
        """``unique_hlo_op_id``: (module number << 32) | op number, stable for a capture (as in the real files)."""
        ops = self._op_ids.setdefault(module, {})
        return ((list(self._op_ids).index(module) + 1) << 32) | ops.setdefault(hlo_op, len(ops) + 1)

    def _gpu_name(self, k: XlaKernel, graph: bool) -> str:
        if k.kind == "memset":
            return "Memset 0" if graph else "Memset 3"
        return "MemcpyD2D" if k.kind == "memcpy_d2d" else k.name

    def _run_on_gpu(self, ex: _Exec, kernels: list[XlaKernel], launch: list[int], floor: int,
                    corr: list[int], scope: list[int], graph: bool) -> None:
        """Place the activities on the compute stream: in order, after their launch, after ``floor``."""
        stream = self.streams[COMPUTE_STREAM]
        if graph:
            self._stream_kind(COMPUTE_STREAM, "Compute")
        prev_end = self.gpu_free[COMPUTE_STREAM]
        first = True
        base = self._graphs.get(ex.module_name, 0) << 32
        for i, k in enumerate(kernels):
            ready = max(launch[i] + self.latency, floor)
            start = max(ready, prev_end if first else prev_end + int(k.gap_us * US))
            first = False
            dur = self._dur(k.us)
            name = self._gpu_name(k, graph)
            node = base + 513 + i if graph else None
            _add(stream, name, start, dur, self._gpu_stats(k, ex, corr[i], scope[i], node))
            self._stream_kind(COMPUTE_STREAM, {"memset": "Memset", "memcpy_d2d": "MemcpyD2D"}.get(k.kind, "Compute"))
            ex.kernels.append((start, start + dur, name, "command_buffer_1" if graph else k.hlo_op))
            prev_end = max(prev_end, start + dur)
        self.gpu_free[COMPUTE_STREAM] = prev_end

    def _launch_graph(self, ex: _Exec, kernels: list[XlaKernel], h: int, floor: int) -> int:
        """``command_buffer_1`` > update, execute > ``cuGraphLaunch``; returns the host end."""
        module = ex.module_name
        gid = self._graphs.setdefault(module, 22 + 43 * len(self._graphs))
        n = len(kernels)
        commands = 1 + sum(a.hlo_op != b.hlo_op for a, b in zip(kernels, kernels[1:]))  # thunks, not activities
        up = self._dur(11)
        self.python.add("command_buffer::update", h + 3 * US, up, device=0, num_commands=commands)
        x0 = h + 3 * US + up + US
        corr, scope = self._next_corr(), self._next_scope()
        gl = self._dur(95)
        self.python.add(f"cuGraphLaunch (CudaGraph:{gid})", x0 + 3 * US, gl, device_id=0, correlation_id=corr,
                        scope_range_id=scope, context_id="$$1", cuda_graph_id=gid)
        xe = x0 + 3 * US + gl + US
        self.python.add("command_buffer::execute", x0, xe - x0, device=0, num_commands=commands, num_executions=1)
        self.python.add("command_buffer_1", h, xe + US - h)
        ex.launches += 1
        self._run_on_gpu(ex, kernels, [x0 + 3 * US + 40 * US] * n, floor, [corr] * n, [scope] * n, True)
        return xe + US

    def _launch_thunks(self, ex: _Exec, kernels: list[XlaKernel], h: int, floor: int) -> int:
        """One thunk event per HLO op around launch records named after their kernels; returns the host end."""
        launch, corr, scope = [], [], []
        i = 0
        while i < len(kernels):
            op = kernels[i].hlo_op
            t0 = h
            h += 2 * US
            sc = self._next_scope()
            while i < len(kernels) and kernels[i].hlo_op == op:
                k = kernels[i]
                c = self._next_corr()
                d = self._dur(3.0)
                rec = {"device_id": 0, "correlation_id": c, "scope_range_id": sc, "context_id": "$$1"}
                if k.kind == "memset":
                    rec["Memset_details"] = "kind:unknown num_bytes:4 async:1"
                elif k.kind == "memcpy_d2d":
                    rec["memcpy_details"] = f"kind_src:unknown kind_dst:unknown size:{k.nbytes} dest:0 async:1"
                names = ROCM_LAUNCH_NAMES if self.rocm else {"memset": "Memset", "memcpy_d2d": "MemcpyD2D"}
                host_name = names.get(k.kind, names.get("kernel", k.name))
                _add(self.api, host_name, h, d, rec)
                launch.append(h)
                corr.append(c)
                scope.append(sc)
                ex.launches += 1
                h += d + 500_000
                i += 1
            self.python.add(op, t0, h - t0)
            h += 500_000
        self._run_on_gpu(ex, kernels, launch, floor, corr, scope, False)
        return h

    def _launch_loop(self, ex: _Exec, body: list[XlaKernel], iterations: int, h: int, floor: int) -> int:
        """A ``while`` loop XLA runs from the host (not in a command buffer): ``while.<n>`` around one ``[iter=<i>]``
        span per iteration, each launching the body's thunks one by one after the host's own step of the loop (its
        loop-counter bookkeeping, ``loop_host_us``); returns the host end."""
        w0 = h
        h += US
        for i in range(iterations):
            i0 = h
            h = self._launch_thunks(ex, body, h + self._dur(self.loop_host_us), floor)
            self.python.add(f"[iter={i}]", i0, h - i0)
            h += 500_000
        self.python.add("while.13", w0, h + US - w0)
        return h + 2 * US

    def execute(self, kernels: list[XlaKernel], function: str | None = None, inputs: tuple[_Transfer, ...] = (),
                scalar_args: int = 0, program_id: int | None = None,
                loop: tuple[list[XlaKernel], int] | None = None, array_args: tuple[tuple[str, int], ...] = ()) -> _Exec:
        """One call of a jitted function: the full dispatch chain on ``python3``; returns when the work is queued.
        ``loop``: (body, iterations) of a ``while`` loop the program runs from the host after ``kernels``
        (:meth:`_launch_loop`).  ``program_id``: the compiled program this call runs (the module's first where
        none is given: one module name compiled into several programs runs each in its own calls).  ``array_args``: (shape, bytes) of NumPy arrays handed to the call, each copied to
        the device inside its dispatch as a scalar argument is, with its shape (real ``implicit_numpy_input``)."""
        fn = function or self.function
        module = f"jit_{fn}"
        self._programs.setdefault(module, program_id or (self.program_id + 663 * len(self._programs)))
        ex = _Exec(fn, module, program_id=program_id or self._programs[module])
        ex.copies.extend(self._pending)
        self._pending = []
        self.execs.append(ex)
        if self._step is not None:
            self._step.execs.append(ex)
        py = self.python
        p0 = self.t
        h = p0 + US
        py.add("PythonRefManager::CollectGarbage", h, self._dur(1.0))
        h += 2 * US
        pa = self._dur(4)
        py.add("ParseArguments", h, pa)
        h += pa + 2 * US
        puts = []
        for shape, nbytes in [("f32[]", 4)] * scalar_args + list(array_args):
            h, tr = self._scalar_put(h, py, shape, nbytes)
            puts.append(tr)
            h += 2 * US
        e0 = h + 10 * US
        h = e0 + 4 * US
        py.add("PJRT_LoadedExecutable_Execute linkage", h, 600_000)
        l0 = h + US
        c0 = l0 + 5 * US
        hs = c0 + US
        prep = hs + 13 * US
        py.add("Handle inputs", hs + 2 * US, self._dur(4.3))
        py.add("AllocateOutputBuffersWithInputReuse", hs + 7 * US, self._dur(3.9))
        py.add("CommonPjRtLoadedExecutable::ExecutePrepare", hs, prep - hs)
        r0 = prep + 2 * US
        h, in_flight = self._acquire(r0 + US, py)
        ex.in_flight = in_flight
        floor = max([tr.dev_end for tr in inputs] or [0])
        pj = self._pjrt_line()
        for put in puts:  # scalar copies run on a pjrt thread while Execute waits for them
            cb = self._callback(pj, "GetEventForComputeStreamSyncPoint", h + 2 * US)
            tr = self._memcpy("H2D", put.nbytes, cb + 2 * US, pj, 0)
            h = self._callback(pj, "PjRtStreamExecutorRawBuffer::CopyRawHostToDevice", tr.host_ready + 2 * US)
            ex.copies.append((tr.dev_start, tr.dev_end, "H2D"))
            floor = max(floor, tr.dev_end)
        h = max([h] + [tr.host_ready + 60 * US for tr in inputs])  # Execute blocks until staged inputs are launched
        py.add("Resolve constant globals", h + 2 * US, 400_000)
        b0 = h + 3 * US
        for j, size in enumerate((72, 4, 268479760)):
            py.add("MemoryAllocation", b0 + (1 + j) * US, 0, allocator_name="GPU_0_bfc", requested_bytes=size)
        h = b0 + self._dur(7)
        py.add("Build buffer allocations", b0, h - b0)
        t0 = h + 3 * US
        m0 = t0 + 3 * US
        py.add("Thunks::Prepare", m0 + 3 * US, self._dur(1.3))
        py.add("Thunks::Initialize", m0 + 6 * US, self._dur(3.5))
        k0 = m0 + 11 * US
        if self.command_buffers:
            h = self._launch_graph(ex, kernels, k0, floor)
        else:
            h = self._launch_thunks(ex, kernels, k0, floor)
        if loop is not None:
            h = self._launch_loop(ex, loop[0], loop[1], h, floor)
        m1 = h + 2 * US
        if self.module_events:
            py.add(f"{module}:XLA GPU module", m0, m1 - m0)
        ex.module_span = (m0, m1)
        py.add("[0] GpuExecutable::ExecuteThunks", t0, m1 + US - t0, module_name=module)
        cb = self._callback(py, "GetEventForComputeStreamSyncPoint", m1 + 4 * US)
        r1 = cb + US
        py.add("[0] PjRtStreamExecutorRawLoadedExecutable::Execute", r0, r1 - r0, replica=0, partition=0)
        py.add("Handle input event recording", r1 + US, self._dur(1.3))
        py.add("CommonPjRtClient::CreateOutputs", r1 + 3 * US, self._dur(5))
        c1 = r1 + 10 * US
        py.add("CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice", hs - 500_000, c1 - hs)
        _add(py, f"CommonPjRtLoadedExecutable::Execute ({module})", c0, c1 + US - c0, {
            "name": module, "execution_mode": "default", "num_replicas": 1, "num_partitions": 1,
            "num_addressable_devices": 1})
        py.add("PJRT_LoadedExecutable_Execute", l0, c1 + 3 * US - l0)
        x1 = c1 + 5 * US
        py.add("PjRtCApiLoadedExecutable::Execute", e0, x1 - e0)
        p1 = x1 + 4 * US
        py.add(f"PjitFunction({fn})", p0 + 400_000, p1 - p0 - 400_000)
        py.add(f"PjitFunction({fn})", p0, p1 - p0 + 200_000)
        ex.call = (p0, p1)
        h = p1 + 2 * US
        for _ in range(8):
            py.add("Wait for donation holds", h, 60_000)
            h += US
        self.t = h + 2 * US
        return ex

    # -- the original step loop --------------------------------------------------

    def call(self, kernels: list[XlaKernel], h2d_bytes: int = 4 << 20, between_us: float = 2500.0,
             sync: bool = True, jitter: float | None = None) -> None:
        """One training step of the original scenarios: ``device_put(batch)``, ``train_step(...)``, ``float(loss)``.

        ``sync``: the host waits for the loss (a D2H copy) before preparing the
        next batch, so the GPU idles ``~between_us`` per step; without it the
        host runs ahead (async dispatch) and the GPU work is back to back.
        """
        if jitter is not None:
            self.jitter = jitter
        if self.step_annotation:
            self.begin_step()
        inputs = (self.device_put(h2d_bytes, "bf16[512,4096]"),) if h2d_bytes else ()
        self.execute(kernels, inputs=inputs)
        if sync:
            self.to_host(4)
        if self.step_annotation:
            self.end_step()
        self.t += self._dur(between_us)

    def add_hlo(self, raw: bytes) -> None:
        """The step module's HLO as JAX saves it: the ``Hlo Proto`` bytes stat of the module's event metadata
        (``<module>(<program_id>)``) on ``/host:metadata``: what FLOPs and collective sizes are read from."""
        self.space.plane("/host:metadata").event_stat(f"{self.module}({self.program_id})", "Hlo Proto", raw)

    def finish(self, session_start_ns: int = 1_767_225_600_000_000_000) -> SpaceBuilder:
        """Name the GPU streams after what ran on them, drop empty ones, add derived lines (when asked) and ``Task Environment``."""
        for sid, line in self.streams.items():
            line.name = f"Stream #{sid}({','.join(self._kinds[sid])})"
        self.gpu.lines = [ln for ln in self.gpu.lines if len(ln)]
        self.host.lines = [ln for ln in self.host.lines if len(ln)]  # a thread that did nothing has no line
        if self.derived_lines:
            self._derived()
        env = self.space.plane("Task Environment")
        env.add_stat("profile_start_time", session_start_ns)
        end = max([self.t] + [e.kernels[-1][1] for e in self.execs if e.kernels])
        env.add_stat("profile_stop_time", session_start_ns + (end + 50 * US) // 1000)
        return self.space

    def _derived(self) -> None:
        """``XLA Modules``/``XLA Ops`` lines, as the stock converter derives them (post-processed files only)."""
        mods = self.gpu.line("XLA Modules", THREAD_ID_HLO_MODULE)
        ops = self.gpu.line("XLA Ops", THREAD_ID_HLO_OP)
        for ex in self.execs:
            if not ex.kernels:
                continue
            pid = ex.program_id
            mods.add(f"{ex.module_name}({pid})", ex.kernels[0][0], ex.kernels[-1][1] - ex.kernels[0][0])
            for s, e, _, op in ex.kernels:
                self.gpu.event_id(f"{pid}/{op}", display_name=op)
                ops.add(f"{pid}/{op}", s, e - s)

    # -- truth ------------------------------------------------------------------

    def truth(self, scenario: str, description: str, source: str, note: str = "", **expect) -> JaxTruth:
        """Measure the truth from what was written (see :class:`JaxTruth`)."""
        execs = [e for e in self.execs if e.kernels]
        groups = self._groups(execs, source)
        spans = self._source_spans(groups, source)
        windows = [(s, spans[i + 1][0] if i + 1 < len(spans) else e) for i, (s, e) in enumerate(spans)]
        kept = list(range(len(windows)))
        if len(windows) > 5:
            kept = kept[1:-1]
        dev = [_device_span(g) for g in groups]
        ktime = [sum(k[1] - k[0] for e in g for k in e.kernels) for g in groups]
        busy = [_union(k[:2] for e in g for k in e.kernels) for g in groups]
        dev_tiles = [dev[i + 1][0] - dev[i][0] for i in range(len(dev) - 1)] + [dev[-1][1] - dev[-1][0]]
        host = [(self.steps[i].marker[1] - self.steps[i].marker[0]) if self.steps and len(self.steps) == len(groups)
                else (g[-1].call[1] - g[0].call[0]) for i, g in enumerate(groups)]  # type: ignore[index]
        idle = [b[0] - a[1] for a, b in zip(dev, dev[1:])]
        counts: dict[str, int] = {}
        times: dict[str, int] = {}
        mem: dict[str, int] = {"H2D": 0, "D2H": 0}
        for e in execs:
            for s, en, name, _ in e.kernels:
                counts[name] = counts.get(name, 0) + 1
                times[name] = times.get(name, 0) + en - s
        for line, key in ((self.streams[H2D_STREAM], "H2D"), (self.streams[D2H_STREAM], "D2H")):
            mem[key] = len(line)
        mean = lambda xs: float(np.mean([xs[i] for i in kept]))  # noqa: E731
        return JaxTruth(
            scenario=scenario, description=description, expected_source=source, module=self.module,
            program_id=self.program_id, module_event=f"{self.module}({self.program_id})",
            num_steps=len(windows) if source != "whole_capture" else 0, steady_steps=len(kept),
            step_windows_ps=windows, step_time_ps=mean([w[1] - w[0] for w in windows]),
            device_compute_ps=mean(ktime), gpu_idle_between_steps_ps=float(np.mean(idle)) if idle else 0.0,
            kernels_per_step=sum(len(e.kernels) for e in groups[0]),
            kernel_counts=counts, kernel_time_ps=times,
            hlo_ops=frozenset(k[3] for e in execs for k in e.kernels), memcpy_count=mem,
            derived_lines=self.derived_lines, note=note,
            device_step_ps=mean(dev_tiles), device_busy_ps=mean(busy), host_window_ps=mean(host),
            max_in_flight=max(e.in_flight for e in self.execs), command_buffers=self.command_buffers,
            launches_per_step=sum(e.launches for e in groups[len(groups) // 2]) + sum(
                1 for e in groups[len(groups) // 2] for c in e.copies),
            h2d_bytes_per_step=self.steps[len(self.steps) // 2].h2d_bytes if self.steps else 0, **expect,
        )

    def _groups(self, execs: list[_Exec], source: str) -> list[list[_Exec]]:
        """Executions grouped into steps: by ``train`` marker when there are markers, else one per execution."""
        if source == "whole_capture":
            return [execs]
        if self.steps:
            return [[e for e in st.execs if e.kernels] for st in self.steps]
        return [[e] for e in execs]

    def _source_spans(self, groups: list[list[_Exec]], source: str) -> list[tuple[int, int]]:
        """The spans the named step source sees, before tiling."""
        if source == "xla_modules":
            return [(g[0].kernels[0][0], g[-1].kernels[-1][1]) for g in groups]
        if source == "trace_train":
            return [st.marker for st in self.steps]
        if source == "xla_module_launches":  # host spans; the last runs on to its kernels' end on the GPU
            spans = [g[0].module_span for g in groups]
            spans[-1] = (spans[-1][0], max(spans[-1][1], groups[-1][-1].kernels[-1][1]))  # type: ignore[index]
            return spans  # type: ignore[return-value]
        spans = [_device_span(g) for g in groups]
        if source == "whole_capture":
            return [(min(s for s, _ in spans), max(e for _, e in spans))]
        return spans


def _device_span(execs: list[_Exec]) -> tuple[int, int]:
    """First start and last end of the device work (compute + copies) of some executions."""
    items = [k[:2] for e in execs for k in e.kernels] + [c[:2] for e in execs for c in e.copies]
    return min(s for s, _ in items), max(e for _, e in items)


def _union(spans) -> int:
    """Total length of the union of (start, end) spans."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(spans):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0)


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


# -- the original step-source scenarios (synchronous loop: the host waits for the loss every step) ----------------


def _train_steps(name: str, desc: str, source: str, num_steps: int, seed: int, layers: int, **capture) -> JaxScenario:
    """``num_steps`` calls of the jitted MLP train step on a :class:`JaxCapture` built with ``capture``."""
    cap = JaxCapture(seed=seed, **capture)
    ks = mlp_train_step(layers)
    for _ in range(num_steps):
        cap.call(ks)
    space = cap.finish()
    # the host waits for the loss and prepares the next batch (~2.5 ms) while the GPU idles: a gap between steps
    return JaxScenario(name, space, cap.truth(name, desc, source, expect_top=("step_gaps",), dominant="step_gaps"))


def jax_xla_modules(num_steps: int = 8, seed: int = 0, layers: int = 4) -> JaxScenario:
    """Post-processed JAX capture: `XLA Modules` (one `jit_train_step(7292)` per step) and `XLA Ops` lines."""
    return _train_steps("jax_xla_modules", "JAX jit(train_step) on one H100, post-processed file with XLA Modules / "
                        "XLA Ops lines", "xla_modules", num_steps, seed, layers, derived_lines=True)


def jax_raw(num_steps: int = 8, seed: int = 0, layers: int = 4) -> JaxScenario:
    """What jax.profiler.trace saves: no derived lines, no step markers; the host syncs on the loss each step."""
    return _train_steps("jax_raw", "JAX jit(train_step), raw capture: steps are the host's executions of the "
                        "jit_train_step module", "xla_module_launches", num_steps, seed, layers)


def jax_raw_no_module_events(num_steps: int = 8, seed: int = 0, layers: int = 4) -> JaxScenario:
    """Raw capture without host module events: no step markers; the runtime's one execute span per jitted call
    (``PjRtCApiLoadedExecutable::Execute``) repeats once per step and holds its launches (the job stage's spans)."""
    return _train_steps("jax_raw_no_module_events", "JAX jit(train_step), raw capture without module events: steps "
                        "from the runtime's execute span of each call", "annotation_spans", num_steps, seed, layers,
                        module_events=False)


def jax_no_steps(num_steps: int = 8, seed: int = 0, layers: int = 4) -> JaxScenario:
    """One long `jit(train_loop)` execution (fori_loop over the run): one continuous kernel stream."""
    cap = JaxCapture(seed=seed, module="jit_train_loop", function="train_loop", program_id=77)
    ks = mlp_bf16_step(layers, command_buffers=False, fn="train_loop") * num_steps  # the loop body, unrolled
    cap.call(ks, between_us=100.0)
    space = cap.finish()
    desc = "JAX jit(train_loop): the whole run is one module execution, no repeating structure"
    note = "no step structure: the whole capture is one step"
    return JaxScenario("jax_no_steps", space, cap.truth("jax_no_steps", desc, "whole_capture", note,
                                                        expect_top=("capture_quality",)))


def jax_step_annotation(num_steps: int = 8, seed: int = 0, layers: int = 4) -> JaxScenario:
    """Raw capture with `jax.profiler.StepTraceAnnotation("train", step_num=s)` around each step."""
    return _train_steps("jax_step_annotation", "JAX jit(train_step) with StepTraceAnnotation('train', step_num=s) host "
                        "markers", "trace_train", num_steps, seed, layers, step_annotation=True)


# -- scenarios mirroring the real H100 runs (async dispatch, as the real loops run) --------------------------------


def _async_loop(cap: JaxCapture, kernels: list[XlaKernel], num_steps: int, host_us: float = 0.0,
                put_bytes: int = 0, put_shape: str = "bf16[4096,4096]", read_bytes: int = 0) -> None:
    """The real capture loop: ``with StepTraceAnnotation('train', step_num=s): [work; device_put]; state = step(state)``.

    No per-step sync: the host only waits when 32 executions are queued -- unless ``read_bytes``: the step ends in a
    read of its result (``float(loss)``: ``np.asarray(jax.Array)`` around the D2H copy and its staging copy, as the
    real ``host_roundtrip`` writes it), which waits until the GPU has run the step.
    """
    for _ in range(num_steps):
        cap.begin_step()
        if host_us:
            cap.host_work(host_us)
        inputs = (cap.device_put(put_bytes, put_shape),) if put_bytes else ()
        cap.execute(kernels, inputs=inputs)
        if read_bytes:
            cap.to_host(read_bytes)
        cap.end_step()


def _healthy_bf16(name: str, command_buffers: bool, num_steps: int, seed: int, desc: str, note: str = "") -> JaxScenario:
    """The real healthy bf16 MLP loop, with XLA command buffers (one cuGraphLaunch a step) or without (per kernel)."""
    cap = JaxCapture(seed=seed, step_annotation=True, command_buffers=command_buffers)
    kernels = mlp_bf16_step(4, command_buffers=command_buffers)
    cap.add_hlo(mlp_hlo(cap.module, kernels))
    _async_loop(cap, kernels, num_steps)
    return JaxScenario(name, cap.finish(), cap.truth(
        name, desc, "trace_train", note,
        expect_not=("input_bound", "launch_bound", "tensor_core_unused", "mixed_precision_off"),
        real_counterpart=name.removeprefix("jax_")))


def jax_healthy_bf16(num_steps: int = 20, seed: int = 0) -> JaxScenario:
    """Real ``healthy_bf16``: jitted bf16 MLP, data on device, XLA command buffers (one cuGraphLaunch a step), async."""
    return _healthy_bf16("jax_healthy_bf16", True, num_steps, seed,
                         "jitted bf16 MLP on an H100, command buffers, async dispatch, no problem injected",
                         "host step windows (~0.25 ms) are not step times: the device step is ~2.4 ms")


def jax_healthy_bf16_nocb(num_steps: int = 20, seed: int = 0) -> JaxScenario:
    """Real ``healthy_bf16_nocb``: the same step with ``--xla_gpu_enable_command_buffer=`` (one launch per kernel)."""
    return _healthy_bf16("jax_healthy_bf16_nocb", False, num_steps, seed,
                         "jitted bf16 MLP on an H100 without command buffers: per-kernel launches, async dispatch")


def jax_input_bound(num_steps: int = 20, seed: int = 0) -> JaxScenario:
    """Real ``input_bound``: 12 ms of host 'data loading' inside each step, then ``device_put`` of a 32 MiB batch."""
    cap = JaxCapture(seed=seed, step_annotation=True, command_buffers=True)
    kernels = mlp_bf16_step(4, command_buffers=True)
    cap.add_hlo(mlp_hlo(cap.module, kernels))
    _async_loop(cap, kernels, num_steps, host_us=12_000.0, put_bytes=4096 * 4096 * 2)
    name = "jax_input_bound"
    return JaxScenario(name, cap.finish(), cap.truth(
        name, "12 ms host work + device_put(bf16[4096,4096]) before every step: the GPU idles ~85%", "trace_train",
        expect_top=("input_bound",), dominant="input_bound", real_counterpart="input_bound"))


def jax_read_each_step(num_steps: int = 20, seed: int = 0) -> JaxScenario:
    """The healthy bf16 loop logging ``float(loss)`` every step: each read waits for the step's last kernel, so the
    host dispatches the next step only after the GPU has drained -- the GPU idles for the read's copy back and the next
    dispatch, every step (issue #37 class 3: a sync the program asked for, in JAX's own event)."""
    cap = JaxCapture(seed=seed, step_annotation=True, command_buffers=True)
    kernels = mlp_bf16_step(4, command_buffers=True)
    cap.add_hlo(mlp_hlo(cap.module, kernels))
    _async_loop(cap, kernels, num_steps, read_bytes=4)
    name = "jax_read_each_step"
    return JaxScenario(name, cap.finish(), cap.truth(
        name, "jitted bf16 MLP on an H100 reading float(loss) every step: the GPU idles while the host reads and "
        "dispatches the next step", "trace_train",
        expect_top=("host_sync",), dominant="host_sync",
        expect_not=("input_bound", "launch_bound", "tensor_core_unused", "mixed_precision_off")))


def jax_fp32_highest(num_steps: int = 20, seed: int = 0) -> JaxScenario:
    """Real ``fp32_highest``: fp32 MLP with ``precision=HIGHEST``: ffma/SIMT GEMMs, no Tensor Cores."""
    cap = JaxCapture(seed=seed, step_annotation=True, command_buffers=True)
    _async_loop(cap, mlp_fp32_highest_step(), num_steps)
    name = "jax_fp32_highest"
    return JaxScenario(name, cap.finish(), cap.truth(
        name, "fp32 with precision=HIGHEST: sm80_xmma ffma and cutlass SIMT GEMMs on CUDA cores", "trace_train",
        expect_top=("tensor_core_unused", "mixed_precision_off"), dominant="tensor_core_unused",
        expect_not=("input_bound",), real_counterpart="fp32_highest"))


def jax_eager_ops(num_steps: int = 8, seed: int = 0, iterations: int = 50, step_mark: str = "train") -> JaxScenario:
    """Real ``launch_bound_eager``: no jit, 4 x 50 tiny ops + a dot per step, each its own executable; each step
    inside ``StepTraceAnnotation(step_mark, step_num=s)`` (the real program's ``train``)."""
    cap = JaxCapture(seed=seed, step_annotation=True, module="jit_multiply", function="multiply", program_id=103873,
                     step_mark=step_mark)
    for _ in range(num_steps):
        cap.begin_step()
        for _ in range(iterations):
            for fn, kernel, op, scalar in EAGER_OPS:
                cap.execute(eager_op(fn, kernel, op), function=fn, scalar_args=int(scalar))
                cap.host_work(2.0)  # Python between ops
        cap.execute(eager_dot(), function="dot")
        cap.end_step()
    name = "jax_eager_ops"
    return JaxScenario(name, cap.finish(), cap.truth(
        name, "eager JAX: 201 tiny ops per step, each a jit_<op> executable, a 4-byte H2D per Python scalar",
        "trace_train", "the GPU is busy ~1 us per ~100 us op", expect_top=("launch_bound", "eager_execution", "xla_not_used"),
        dominant="launch_bound", real_counterpart="launch_bound_eager"))


def jax_eager_chain(num_steps: int = 8, seed: int = 0, ops: int = 40) -> JaxScenario:
    """No jit: a chain of ``ops`` element-wise jnp calls on an f32[4096,4096] array per step, each its own
    ``jit_<op>`` executable with one ~50 us kernel (no Python scalars: array operands).  The kernels are not small:
    the GPU waits for Python's dispatch of each op, and jitting the step would also fuse the chain into about
    one kernel.  Constructed truth: eager_execution first, ahead of launch_bound, with a saving of at least the
    fused kernel time (ops - 1) x 50 us on top of the dispatch wait."""
    cap = JaxCapture(seed=seed, step_annotation=True, module="jit_multiply", function="multiply", program_id=104021)
    for _ in range(num_steps):
        cap.begin_step()
        for i in range(ops):
            fn, kernel, op = EAGER_BIG_OPS[i % len(EAGER_BIG_OPS)]
            cap.execute(eager_big_op(fn, kernel, op), function=fn)
            cap.host_work(20.0)  # Python between ops
        cap.end_step()
    name = "jax_eager_chain"
    return JaxScenario(name, cap.finish(), cap.truth(
        name, f"eager JAX: a chain of {ops} element-wise ops on f32[4096,4096] per step, each a jit_<op> executable "
        f"with one {EAGER_BIG_US:g} us kernel", "trace_train",
        f"fused kernel time saved by jit: {(ops - 1) * EAGER_BIG_US:g} us per step",
        expect_top=("eager_execution",), dominant="eager_execution"))


#: The body of a sequential solver's ``while`` loop (a tridiagonal forward sweep, as wrf_gpu's jitted Thomas kernel
#: runs it): a divide, a dynamic-update-slice and an add on one row of f32[128,164] a step, ~2 us each.
SWEEP_BODY = [XlaKernel("loop_divide_fusion", "loop_divide_fusion", "jit(solve)/while/body/div", 2.0, TINY_EW, "fp32",
                        gap_us=0.0),
              XlaKernel("loop_dynamic_update_slice_fusion", "loop_dynamic_update_slice_fusion",
                        "jit(solve)/while/body/dynamic_update_slice", 2.0, TINY_EW, "fp32", gap_us=0.0),
              XlaKernel("loop_add_fusion", "loop_add_fusion", "jit(solve)/while/body/add", 2.0, TINY_EW, "fp32",
                        gap_us=0.0)]


def jax_while_on_host(num_steps: int = 12, seed: int = 0, iterations: int = 64, rocm: bool = False) -> JaxScenario:
    """One jitted call a step (``jit(solve)``) whose ``lax.fori_loop`` of ``iterations`` sequential steps XLA runs from
    the host, without command buffers: each iteration launches its three ~2 us kernels one by one (~4 us of host each)
    after ~6 us of the host's own loop work, so the GPU idles most of the step while the host runs the loop.
    Constructed truth: host-bound inside the jitted program -- ``iterations`` loop iterations a step, every call already
    one jitted program: the fix is the loop's (run on the GPU, unrolled, fewer iterations), never "jit the step".
    ``rocm``: the same program on an MI300X under XLA's ROCm build (:class:`JaxCapture` ``rocm``)."""
    gpu = {"gpu": MI300X_GPU, "rocm": True} if rocm else {}
    cap = JaxCapture(seed=seed, step_annotation=True, module="jit_solve", function="solve", program_id=5120, **gpu)
    for _ in range(num_steps):
        cap.begin_step()
        cap.execute([], loop=(SWEEP_BODY, iterations))
        cap.end_step()
    name = "jax_while_on_host" + ("_rocm" if rocm else "")
    return JaxScenario(name, cap.finish(), cap.truth(
        name, f"jitted solver: a while loop of {iterations} iterations a step run from the host, three ~2 us kernels "
        f"each", "trace_train", f"{iterations} host-run loop iterations per step inside one jitted call",
        expect_not=("eager_execution", "xla_not_used")))


#: The bf16 MLP's shapes (real ``healthy_bf16``): 4 square layers of 4096 on a batch of 4096 rows.
MLP_LAYERS, MLP_WIDTH = 4, 4096


def annotated_loop(cap: JaxCapture, kernels: list[XlaKernel], steps: int) -> None:
    """A training loop with the user's own ranges (``TraceAnnotation``; the capture's form decides TraceMe or NVTX):
    each step ``preprocess`` around 3 ms of Python and ``forward_backward`` around the jitted call of ``kernels``,
    then the loss read back (the step's sync)."""
    for _ in range(steps):
        cap.begin_step()
        with cap.annotation("preprocess"):
            cap.host_work(3000.0)
        with cap.annotation("forward_backward"):
            cap.execute(kernels)
        cap.to_host(4)
        cap.end_step()


def fetch_loop(cap: JaxCapture, kernels: list[XlaKernel], steps: int, name: str | None = "get_batch",
               fetch_us: float = 4000.0, other_us: float = 2000.0, put_bytes: int = 512 * 4096 * 2,
               shape: str = "bf16[512,4096]", array_args: tuple[tuple[str, int], ...] = ()
               ) -> list[tuple[int, int, int]]:
    """A loop that fetches its batch inside a range of its own (``with jax.profiler.TraceAnnotation(name):
    batch = jax.device_put(load())``: ``fetch_us`` of untraced Python, then the batch's copy), runs ``other_us`` of
    untraced Python of another kind (logging), then the jitted step on the batch -- asynchronous, as the real loops
    run.  The truth by construction: the GPU's idle inside the ``name`` ranges (``cap.annotations``) is the input
    pipeline's, ``other_us`` a step is host time before the step's first op that is no input (issue #37 item 4).

    ``name`` None: the fetch records no range -- ``batch = jax.device_put(next(it))`` over a NumPy iterator, the
    batch's ``shard_args`` > ``DevicePutWithSharding`` > ``BufferFromHostBuffer(<shape>)`` its only events (as jaxlib
    records them, module docstring).  Truth the same: the untraced time up to the put's end is the fetch and its put,
    the ``other_us`` after it no input.  ``array_args``: (shape, bytes) of NumPy arrays the loop makes in that time
    and hands straight to the jitted call (``step(state, batch, np_mask)``), copied inside its dispatch: then the
    time after the put is making them, input too.  Returns per step (its marker's start, the put's end, the step's
    dispatch), host ps."""
    spans = []
    for _ in range(steps):
        cap.begin_step()
        start = cap.t - 4 * US
        if name is None:
            cap.host_work(fetch_us)
            batch = cap.device_put(put_bytes, shape)
        else:
            with cap.annotation(name):
                cap.host_work(fetch_us)
                batch = cap.device_put(put_bytes, shape)
        put = cap.t
        cap.host_work(other_us)
        spans.append((start, put, cap.t))
        cap.execute(kernels, inputs=(batch,), array_args=array_args)
        cap.end_step()
    return spans


#: The Python tracer's frames (``python_tracer_level=1``) of a loop taking its batch from tf.data's NumPy iterator
#: (``it = ds.as_numpy_iterator()``; ``batch = next(it)``): the C call, then ``_NumpyIterator.__next__`` (TF 2.x
#: ``dataset_ops.py``) -- the names the XPlane's ``python3`` line carries, ``$<file>:<line> <function>``
TRACED_NEXT = ("$builtins next", "$dataset_ops.py:4734 __next__")


def traced_fetch_loop(cap: JaxCapture, kernels: list[XlaKernel], steps: int, fetch_us: float = 300.0,
                      other_us: float = 150.0, frames: tuple[str, ...] = TRACED_NEXT, put_bytes: int = 64 * 256 * 4,
                      shape: str = "f32[64,256]", other: str = "$train.py:40 log_metrics",
                      loop: str = "$train.py:12 main") -> list[tuple[int, int, int, int]]:
    """A loop recorded with the profiler's Python tracer on: ``batch = jax.device_put(next(it))``, then ``other_us``
    of the program's other Python (``other``: a logger's frame), then the jitted step -- each call a frame on the
    ``python3`` line, as the tracer writes them: ``frames`` (outermost first) around the ``fetch_us`` of the
    iterator's work (``TRACED_NEXT``: tf.data's; ``("$builtins next",)`` alone: a generator the loop pulls from,
    no iterator class's ``__next__``), ``$api.py:2307 device_put`` around the put, ``loop`` around the whole loop.
    Truth by construction (issue #37 item 4): the input pipeline's own time is the innermost frame's, the batch's
    put beside it; ``other_us`` is host time before the step's first op that is no input.  Returns per step (the
    iterator's frame start, its end, the put's end, the dispatch), host ps."""
    t0 = cap.t
    spans = []
    for _ in range(steps):
        cap.begin_step()
        n0 = cap.t
        cap.t += len(frames) * US
        i0 = cap.t
        cap.host_work(fetch_us)
        i1 = cap.t
        cap.t += len(frames) * US
        for depth, name in enumerate(frames):
            cap.python.add(name, n0 + depth * US, cap.t - n0 - 2 * depth * US)
        p0 = cap.t
        batch = cap.device_put(put_bytes, shape)
        cap.python.add("$api.py:2307 device_put", p0, cap.t - p0 - US)
        put = cap.t
        cap.host_work(other_us)
        cap.python.add(other, put, cap.t - put)
        spans.append((i0, i1, put, cap.t))
        cap.execute(kernels, inputs=(batch,))
        cap.end_step()
    cap.python.add(loop, t0, cap.t - t0)
    return spans


#: grain's dataset iterators' TraceMe names (``grain/_src/python/dataset/stats.py`` ``trace_input_pipeline_next``:
#: ``f"{iterator.__class__.__name__}.{next_fn.__name__}"``, google/grain @f5dd0d8a): the loop's own take from the
#: prefetch buffer, and the stages the prefetch thread runs to make the next batch
GRAIN_TAKE = "ThreadPrefetchDatasetIterator.__next__"
GRAIN_STAGES = ("BatchDatasetIterator.__next__", "MapDatasetIterator.__next__")


def grain_loop(cap: JaxCapture, kernels: list[XlaKernel], steps: int, take_us: float, other_us: float,
               put_bytes: int = 64 * 4096 * 2, prefetch_thread: bool = True) -> list[tuple[int, int, int]]:
    """A small loop fed by grain's dataset API with a prefetch thread (``ds.to_iter_dataset().prefetch(...)``), as
    grain records it under ``jax.profiler``: each step the loop takes its batch (``GRAIN_TAKE``, ``take_us`` on the
    loop's thread), puts it on the device (``jax.device_put``), runs ``other_us`` of untraced Python of another kind
    (logging), calls the jitted step and reads its loss back (``float(loss)``: the GPU idles through the host's
    part).  Meanwhile grain's prefetch thread (its own line) makes the next batch inside ``GRAIN_STAGES`` ranges
    from just after the take to the step's end: the pipeline working ahead, no wait of the loop's
    (``prefetch_thread`` False: a capture that records only the take, as grain's multiprocess prefetch does -- its
    workers are other processes, traced only with ``grain_enable_multiprocess_worker_profiling``).  Returns per step
    (take's start, the other work's start, its end), host ps: the truth by construction (issue #37 item 4)."""
    worker = cap._hashed_line("grain-thread-prefetch") if prefetch_thread else None
    spans = []
    for _ in range(steps):
        cap.begin_step()
        take = cap.t
        with cap.annotation(GRAIN_TAKE):
            cap.host_work(take_us)
        batch = cap.device_put(put_bytes, "bf16[64,4096]")
        other = cap.t
        cap.host_work(other_us)
        spans.append((take, other, cap.t))
        cap.execute(kernels, inputs=(batch,))
        cap.to_host(4)
        made = take + int(take_us * US) + 2 * US
        for depth, stage in enumerate(GRAIN_STAGES if worker is not None else ()):
            worker.add(stage, made + depth * US, cap.t - made - 2 * depth * US)
        cap.end_step()
    return spans


def mlp_hlo(module: str, kernels: list[XlaKernel], allreduce_group: int | None = None) -> bytes:
    """The HLO of :func:`mlp_bf16_step`: one dot per GEMM kernel, named as the kernel's ``hlo_op`` (real captures
    without command buffers match kernels to HLO instructions by that name); ``3 x layers - 1`` GEMMs."""
    names = [k.hlo_op for k in kernels if k.gemm]
    raw, _, _ = hlo_module.mlp_train_step(module, MLP_LAYERS, MLP_WIDTH, MLP_WIDTH, "bf16", allreduce_group, names)
    return raw


#: A data-parallel step's gradient all-reduce as NCCL >= 2.19 names its kernel under XLA (``all-reduce-start``).
NCCL_ALLREDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
#: The slow link: the 4 weight gradients (4 x 4096 x 4096 bf16 = 128 MiB) all-reduced between 2 hosts in 40 ms.
DP_ALLREDUCE_US = 40_000.0


@dataclass
class JaxJob:
    """A generated multi-host JAX capture: one XSpace per host in one session, and its truth."""

    name: str
    spaces: dict[str, SpaceBuilder]
    truth: JaxTruth
    extra: dict = field(default_factory=dict)

    def write(self, logdir: str | Path, run: str | None = None, session: str = SESSION) -> list[Path]:
        out = []
        for host, space in self.spaces.items():
            path = Path(logdir) / (run or self.name) / "plugins" / "profile" / session / f"{host}.xplane.pb"
            space.write(path)
            out.append(path)
        self.truth.files = [p.name for p in out]
        return out


def jax_dp_2host_slow_link(num_steps: int = 12, seed: int = 0) -> JaxJob:
    """Data parallel across 2 hosts (one H100 each): each step's bf16 MLP, then one XLA all-reduce of the 128 MiB of
    weight gradients between the hosts taking ``DP_ALLREDUCE_US``: bus bandwidth 2(n-1)/n x 128 MiB / 40 ms = 3.4
    GB/s, an eighth of the 25 GB/s per GPU assumed between hosts.  The message size is only in the HLO
    (``all-reduce-start`` over replica group {0, 1}): constructed truth for XLA collective sizing (issue #19)."""
    spaces, truth = {}, None
    for node in range(2):
        cap = JaxCapture(hostname=f"node{node}", seed=seed + node, step_annotation=True, command_buffers=False)
        kernels = mlp_bf16_step(MLP_LAYERS, command_buffers=False)
        kernels.append(XlaKernel(NCCL_ALLREDUCE, "all-reduce-start.1", "jit(train_step)/psum", DP_ALLREDUCE_US,
                                 EW_SMALL))
        cap.add_hlo(mlp_hlo(cap.module, kernels, allreduce_group=2))
        _async_loop(cap, kernels, num_steps)
        spaces[cap.space.hostname] = cap.finish()
        if truth is None:
            truth = cap.truth("jax_dp_2host_slow_link", "JAX data parallel on 2 hosts: a 128 MiB gradient all-reduce "
                              "of 40 ms per step between them, a slow link", "trace_train",
                              expect_top=("comm_bandwidth_low",), dominant="comm_bandwidth_low")
    nbytes = MLP_LAYERS * MLP_WIDTH * MLP_WIDTH * 2
    return JaxJob("jax_dp_2host_slow_link", spaces, truth, extra={
        "bytes_per_call": nbytes, "group_size": 2, "bus_GBps": 2 * (2 - 1) / 2 * nbytes / (DP_ALLREDUCE_US * 1e-6) / 1e9})


JAX_SCENARIOS: dict[str, Callable[..., JaxScenario]] = {
    f.__name__: f for f in (jax_xla_modules, jax_raw, jax_raw_no_module_events, jax_no_steps, jax_step_annotation,
                            jax_healthy_bf16, jax_healthy_bf16_nocb, jax_input_bound, jax_fp32_highest, jax_eager_ops,
                            jax_eager_chain, jax_read_each_step)
}


#: An MI300X as its XPlane plane states it (``wild/jax_mi300x``).
MI300X_GPU = Gpu("AMD Instinct MI300X", (9, 4), 304, 2100000, 5300000000000, 205822885888)
#: :func:`write_tiny_jitted_calls`: one tiny jitted ``jnp.dot`` a call -- its one GEMM kernel, 5 us on the GPU.
TINY_DOT = [XlaKernel("gemm_fusion_dot", "gemm_fusion_dot", "jit(dot)/dot_general", 5.0,
                      "regs:50 static_shared:0 dynamic_shared:8192 grid:64,1,1 block:128,1,1 occ_pct:56.25", "fp32",
                      True, gap_us=0.0)]


#: :func:`write_tiny_jitted_calls`: the fill of a ``jnp.ones`` outside jit (its ``broadcast_in_dim`` primitive, its
#: own one-kernel executable), 5 us on the GPU.
TINY_FILL = [XlaKernel("wrapped_broadcast", "wrapped_broadcast", "jit(broadcast_in_dim)/broadcast_in_dim", 5.0, TINY_EW,
                       "fp32", gap_us=0.0)]


def write_tiny_jitted_calls(logdir: str | Path, run: str = "tiny_calls", calls: int = 16, between_us: float = 15.0,
                            loop_frame: bool = True, inputs_every: int = 4, ones_us: float = 150.0,
                            own_us: float = 0.0, seed: int = 0) -> JaxTruth:
    """A benchmark loop of tiny jitted calls under ``jax.profiler.trace`` with Python tracing on -- wild ``jax_mi300x``'s
    ``for _ in range(n): c = jnp.dot(a, b); c.block_until_ready()``: ``calls`` calls of ``jit(dot)`` (:data:`TINY_DOT`:
    a 5 us kernel after ~70 us of the call's dispatch chain, :meth:`JaxCapture.execute`), the host waiting for each
    result (``block_until_ready`` records no event: the host's time only) and ``between_us`` of the loop's own Python
    before the next call, all of it inside the loop's one traced frame (``loop_frame``: ``$bench.py:12 run``, as the
    real capture's ``$generate_gemm_trace.py:31 run_gemms``); every ``inputs_every`` calls, two fresh inputs made
    first outside jit (``a = jnp.ones(...)``: ``ones_us`` of JAX's traced Python, ``$array_creation.py:98 ones``,
    around the dispatch of its ``broadcast_in_dim`` primitive, :data:`TINY_FILL`).  No step annotation: the steps are
    the executions of ``jit_dot``, the most executed module, so a step whose call made inputs holds them.

    Truth by construction: each gap between two calls' GPU work is the loop's ``between_us`` plus the next call's
    dispatch up to its launch (most of it: the dispatch chain outlasts ``between_us``), and nothing else -- no
    function of the program's own, no wait but the one for the result; the step is too small for its dispatch
    (~75 us of host for 5 us of GPU).  Control: ``own_us`` -- a function of the program's own (``$bench.py:30
    prepare``, traced) before each call: host work between the calls that is no call's dispatch, a cause of its own."""
    # ROCm, as the real capture (the launch records on the HIP API's own line); the loop's frame opens before its first
    # call, as ``run_gemms`` does: a frame opening with a call reads as inside that call's dispatch, not the host's work
    cap = JaxCapture(gpu=MI300X_GPU, seed=seed, module="jit_dot", function="dot", program_id=4410, jitter=0.0, rocm=True)
    t0 = cap.t
    cap.host_work(5.0)  # the frame's own lines before its first call
    for i in range(calls):
        if inputs_every and i % inputs_every == inputs_every - 1:
            for _ in range(2):  # a, b = jnp.ones(shape), jnp.ones(shape)
                o0 = cap.t
                cap.host_work(ones_us)  # lax.full -> bind -> apply_primitive: JAX's Python before the dispatch
                cap.execute(TINY_FILL, function="broadcast_in_dim")
                cap.python.add("$array_creation.py:98 ones", o0, cap.t - o0)
                cap.host_work(1.0)
        cap.execute(TINY_DOT, function="dot")
        cap.t = max(cap.t, cap.gpu_free[COMPUTE_STREAM]) + US  # block_until_ready: the host waits, nothing recorded
        cap.host_work(between_us)  # the loop's own Python before the next call
        if own_us:
            w0 = cap.t
            cap.host_work(own_us)
            cap.python.add("$bench.py:30 prepare", w0, cap.t - w0)
            cap.host_work(1.0)
    if loop_frame:
        cap.python.add("$bench.py:12 run", t0, cap.t - t0)
    truth = cap.truth(run, f"{calls} tiny jitted dot calls, each waited for, {between_us:g} us of the loop between",
                      "xla_modules", expect_not=("step_gaps",) if loop_frame and not own_us else ())
    JaxScenario(run, cap.finish(), truth).write(logdir, run)
    return truth


def write_host_only_window(logdir: str | Path, run: str, gpu_plane: bool = True, fetch: str | None = "load_batch",
                           turns: int = 5, fetch_us: float = 3000.0, other_us: float = 500.0, gpu: Gpu = H100,
                           rocm: bool = False) -> dict:
    """``jax.profiler.trace`` around host-only code: ``turns`` turns of a loop that runs no jitted call, each
    ``fetch_us`` inside ``jax.profiler.TraceAnnotation(fetch)`` (``fetch`` None: inside
    ``StepTraceAnnotation('train')`` -- a loop of steps whose work stays on the host) then ``other_us`` of untraced
    Python.  ``gpu_plane``: the capture holds ``gpu``'s ``/device:GPU:0`` plane (an H100's; ``rocm``: an AMD GPU's,
    its vendor stat ROCm's) with its device stats and no line (the GPU plugin's tracer saw the GPU; nothing ran on
    it); False: no GPU plane, as JAX's CPU backend writes it.
    Returns the truth by construction: the turns, the ms inside the fetch ranges (0 where ``fetch`` is None) and the
    GPU the plane lists ("" without one)."""
    cap = JaxCapture(gpu=gpu, seed=11, rocm=rocm)
    for i in range(turns):
        if fetch is None:
            start = cap.t
            cap.host_work(fetch_us)
            cap.python.add("train", start, cap.t - start, step_num=i, _r=1)
        else:
            with cap.annotation(fetch):
                cap.host_work(fetch_us)
        cap.host_work(other_us)
    space = cap.finish()
    if not gpu_plane:
        space.planes = [p for p in space.planes if not p.name.startswith("/device:GPU")]
    path = Path(logdir) / run / "plugins" / "profile" / SESSION / f"{space.hostname}.xplane.pb"
    space.write(path)
    inside = sum(e - s for _, s, e in cap.annotations) / (1000 * US)
    return {"turns": turns, "fetch_ms": inside, "gpu": gpu.name if gpu_plane else "", "path": str(path)}


#: A start-up window's CUDA driver calls, as XLA's GPU tracer records them on the calling thread (name, us): the
#: driver's initialisation, the primary context's creation (the long one), a buffer, a stream, a memset of it
STARTUP_CALLS = (("cuInit", 50.0), ("cuDevicePrimaryCtxRetain", 90_000.0), ("cuMemAlloc_v2", 400.0),
                 ("cuStreamCreate", 30.0), ("cuMemsetD8Async", 10.0))


def write_startup_window(logdir: str | Path, run: str, gap_us: float = 100.0) -> dict:
    """``jax.profiler.trace`` stopped before the first jitted call ran: the window holds the CUDA driver's start-up
    calls (:data:`STARTUP_CALLS`, ``gap_us`` of Python after each) on the Python thread, the H100's plane with no
    line, no kernel, copy or module.  Truth by construction: the calls, the context's creation in
    ``cuDevicePrimaryCtxRetain``, no GPU work -- a window that ended in start-up, CUDA tracing on."""
    cap = JaxCapture(seed=11)
    for name, us in STARTUP_CALLS:
        start = cap.t
        cap.host_work(us)
        cap.python.add(name, start, cap.t - start)
        cap.host_work(gap_us)
    space = cap.finish()
    path = Path(logdir) / run / "plugins" / "profile" / SESSION / f"{space.hostname}.xplane.pb"
    space.write(path)
    return {"calls": len(STARTUP_CALLS), "context_call": "cuDevicePrimaryCtxRetain", "path": str(path),
            "gpu": H100.name}


def write_copy_loop_window(logdir: str | Path, run: str = "copy_loop", turns: int = 8, mb: int = 64,
                           host_us: float = 300.0) -> dict:
    """``jax.profiler.trace`` around a host loop that only moves arrays: each turn ``jax.device_put`` of an ``mb`` MiB
    float32 host array (``shard_args`` > ``DevicePutWithSharding``, staged on a pjrt thread, one ``MemcpyH2D``), then
    ``np.asarray`` of it back (``D2H Dispatch``, one ``MemcpyD2H``, the staging buffer's copy out), then ``host_us``
    of Python -- no jitted call, no kernel, and no step annotation (a host-device bandwidth check, a data-staging
    tool).  Truth by construction: ``turns`` uploads and ``turns`` read-backs of ``mb`` MiB each, no kernel, no mark:
    GPU work (copies), not start-up, its repeats found from its launches, not marked."""
    cap = JaxCapture(seed=3)
    nbytes = mb << 20
    for _ in range(turns):
        cap.device_put(nbytes, f"f32[{nbytes // 4 // 4096},4096]")
        cap.to_host(nbytes, f"f32[{nbytes // 4 // 4096},4096]")
        cap.host_work(host_us)
    space = cap.finish()
    path = Path(logdir) / run / "plugins" / "profile" / SESSION / f"{space.hostname}.xplane.pb"
    space.write(path)
    return {"turns": turns, "h2d": turns, "d2h": turns, "bytes": nbytes, "path": str(path)}


def write_perfetto_json(xplane_path: str | Path, json_path: str | Path) -> dict:
    """JAX's ``perfetto_trace.json.gz`` of the session whose XPlane is ``xplane_path``: the session's trace viewer JSON
    (``tfcapture.write_trace_viewer_json``, as ``ConvertXSpaceToTraceEvents`` prints an XSpace) re-written as
    ``jax.profiler.trace(..., create_perfetto_trace=True)`` does (jax ``_src/profiler.py``
    ``_write_perfetto_trace_file``: ``json.load`` of ``<host>.trace.json.gz``, ``del trace["metadata"]``, then
    ``gzip.open(..., "w").write(json.dumps(trace).encode())``): the same events, the trailing ``{}`` kept, no
    ``metadata``.  Returns what :func:`write_trace_viewer_json` returns."""
    import gzip
    import json
    import tempfile

    from synthetic.tfcapture import write_trace_viewer_json

    with tempfile.TemporaryDirectory() as tmp:
        viewer = str(Path(tmp) / "host.trace.json.gz")
        kept = write_trace_viewer_json(str(xplane_path), viewer)
        with gzip.open(viewer, "rb") as fp:
            trace = json.load(fp)
    del trace["metadata"]
    with gzip.open(str(json_path), "w") as fp:
        fp.write(json.dumps(trace).encode("utf-8"))
    return kept
