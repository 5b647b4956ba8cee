"""TensorFlow-shaped events on top of :mod:`.builder`: a tiny step simulator.

A scenario describes, per step and per GPU, the TF ops it runs (host cost,
kernels, copies); :class:`Capture` lays them out the way a TF 2.16+ GPU
capture does (raw, no ``group_id``, no ``Steps`` line) and records what it
wrote so :meth:`Capture.truth_numbers` can measure the truth afterwards.

Event layout per step (what the stock grouper links, see
xla/tsl/profiler/utils/group_events.cc):

* ``python`` thread: the step marker -- Keras 3 ``Profiled batch``
  (``step_num``) around ``FunctionRun`` (``_r=1``), or a custom-loop
  ``train`` (``step_num``, ``_r=1``) around ``FunctionRun``.
  ``FunctionRun`` carries producer stats ``_pt``/``_p``.
* ``tf_data_iterator_get_next/<id>``: ``ExecutorState::Process``
  (consumer ``_ct``/``_c`` = the step's id) around
  ``IteratorGetNextOp::DoCompute`` (the input wait).
* launch threads (``tf_Compute/<id>``, or ``tf_gpu_private_<gpu>/<id>``):
  ``ExecutorState::Process`` around TF op events ``name:Type`` around the
  launch records (named after the kernel, or ``MemcpyH2D``/``MemcpyD2H``,
  with ``correlation_id``).
* ``/device:GPU:<n>``: kernels on ``Stream #N(Compute)`` and copies on the
  memcpy streams, with the same ``correlation_id``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from synthetic.builder import LineBuilder, PlaneBuilder, SpaceBuilder

US = 1_000_000  # ps per microsecond
#: Where the first event lies after the capture's start (the XPlane clock's 0, the stock trace viewer's 0): the
#: profiler starts tracing before the step loop reaches its first traced call -- 7-20 ms in 10 of the 11 real JAX
#: H100 captures, 129 ms in the real TF 2.4 V100 one.  Never ~0: a report counting from the first event instead of
#: the viewer's 0 would then pass every test and still open its links 10 ms early (issue #21).
CAPTURE_LEAD_PS = 12_000 * US
TF_EXECUTOR_CONTEXT = 2  # ContextType::kTfExecutor, the `_pt`/`_ct` value TF writes
PCIE_BYTES_PER_US = 12_000  # ~12 GB/s pinned host<->device copies


@dataclass(frozen=True)
class Gpu:
    """Device properties written as plane stats."""

    name: str
    cc: tuple[int, int]
    sms: int
    clock_khz: int
    bandwidth: int  # bytes/s
    memory: int  # bytes


A100 = Gpu("NVIDIA A100-SXM4-40GB", (8, 0), 108, 1410000, 1555000000000, 42505273344)
V100 = Gpu("Tesla V100-SXM2-16GB", (7, 0), 80, 1530000, 898048000000, 16945512448)


@dataclass(frozen=True)
class Kernel:
    """One GPU kernel launch."""

    name: str
    us: float
    dtype: str = "fp32"  # fp32 | fp16 | bf16 | int32
    tensor_core: bool = False
    gemm: bool = False
    details: str = "regs:32 static_shared:0 dynamic_shared:0 grid:108,1,1 block:256,1,1 occ_pct:50"
    shape: str | None = None


@dataclass
class Op:
    """One TF op as one launch thread executes it."""

    name: str  # "model/dense/MatMul:MatMul"
    kernels: list[Kernel] = field(default_factory=list)
    host_us: float = 6.0  # host work before the first launch
    launch_us: float = 6.0  # host cost of each launch call
    on_host: bool = False  # placed on the CPU: runs host_us on the host, launches nothing
    h2d_bytes: int = 0  # copy of an input to the GPU before the kernels
    d2h_bytes: int = 0  # copy of the output back to the host after the kernels
    sync_copy: bool = False  # copies are synchronous (async:0): the host waits for them
    tf_op_stat: bool = True  # kernels carry the `tf_op` stat


@dataclass
class _DevEvent:
    gpu: int
    name: str
    kind: str  # kernel | nccl | H2D | D2H | D2D
    start: int
    dur: int
    launch_end: int
    kernel: Kernel | None
    sync: bool = False
    after_host_work: bool = False  # host compute or a copy came between this kernel and the previous one


@dataclass
class _Step:
    num: int
    start: int
    end: int = 0
    input_wait: int = 0
    host_compute: int = 0
    between: int = 0
    untraced: int = 0  # host time inside the step no event records
    host_ops: int = 0
    device_ops: int = 0
    eager_ops: int = 0
    events: list[_DevEvent] = field(default_factory=list)


class Capture:
    """Builds one host's XSpace by simulating steps; records what it wrote."""

    def __init__(self, num_gpus: int = 1, gpu: Gpu = A100, hostname: str = "worker0", seed: int = 0,
                 marker: str = "keras3", thread_mode: str = "global", launch_latency_us: float = 4.0,
                 start_ps: int = CAPTURE_LEAD_PS, gpu_id_base: int = 0, step_base: int = 0, trace_name: str = "train",
                 eager_local: bool = False):
        self.rng = np.random.default_rng(seed)
        #: an eager op's ``EagerExecute`` holds TF 2.21's ``EagerLocalExecute: <op type>`` (the real
        #: tests/fixtures/real/tf221_* captures' nesting), the eager runtime's call the framework counts as dispatch
        self.eager_local = eager_local
        self.space = SpaceBuilder(hostname)
        self.num_gpus = num_gpus
        self.marker = marker
        self.thread_mode = thread_mode
        self.latency = int(launch_latency_us * US)
        self.t = start_ps
        self.first_ps = start_ps
        self.gpu_id_base = gpu_id_base
        #: the first step's number: Keras's TensorBoard callback profiles batch 2 by default (``profile_batch=2``)
        self.step_base = step_base
        #: the name a custom loop's ``tf.profiler.experimental.Trace(name, step_num=s, _r=1)`` marks carry
        self.trace_name = trace_name
        self.steps: list[_Step] = []
        self._corr = 1
        self._step_id = int(self.rng.integers(1 << 40, 1 << 50))
        self.host = self.space.plane("/host:CPU")
        self.python = self._thread("python")
        self.data_thread = self._thread("tf_data_iterator_get_next")
        if thread_mode == "gpu_private":
            self.launchers = [self._thread(f"tf_gpu_private_{g}") for g in range(num_gpus)]
        else:
            self.launchers = [self._thread("tf_Compute") for _ in range(num_gpus)]
        self.gpus: list[PlaneBuilder] = []
        self.streams: list[dict[str, LineBuilder]] = []
        for g in range(num_gpus):
            plane = self.space.plane(f"/device:GPU:{g}")
            for key, value in (
                ("device_vendor", "Nvidia"), ("gpu_device_name", gpu.name), ("clock_rate", gpu.clock_khz),
                ("core_count", gpu.sms), ("memory_bandwidth", gpu.bandwidth), ("memory_size", gpu.memory),
                ("compute_cap_major", gpu.cc[0]), ("compute_cap_minor", gpu.cc[1]),
            ):
                plane.add_stat(key, value)
            base = 100 + 10 * g
            self.gpus.append(plane)
            self.streams.append({
                "kernel": plane.line(f"Stream #{base}(Compute)", base),
                "H2D": plane.line(f"Stream #{base + 1}(MemcpyH2D)", base + 1),
                "D2H": plane.line(f"Stream #{base + 2}(MemcpyD2H)", base + 2),
            })
        self.gpu_free = [start_ps] * num_gpus

    # -- threads and ids --------------------------------------------------

    def _thread(self, prefix: str) -> LineBuilder:
        if prefix == "python":
            tid = int(self.rng.integers(1000, 60000))
            return self.host.line("python", tid)
        tid = int(self.rng.integers(-2**31, 2**31))
        return self.host.line(f"{prefix}/{tid}", int(self.rng.integers(1000, 60000)))

    def _next_corr(self) -> int:
        c = self._corr
        self._corr += 1
        return c

    # -- one step -----------------------------------------------------------

    def step(self, ops: list[list[Op]], input_wait_us: float = 0.0, allreduce: list[Kernel] | None = None,
             gpu_order: list[int] | None = None, gpu_delay_us: list[float] | None = None,
             sequential: bool = False, tail_host_ops: list[Op] | None = None, between_us: float = 2.0,
             between_events: list[tuple[str, float]] | None = None, eager: bool = False,
             jitter: float = 0.02, host_ranges: list[tuple[str, float]] | None = None, send_us: float = 0.0,
             untraced_us: float = 0.0, peer_wait_us: list[float] | None = None, read_bytes: int = 0) -> None:
        """Simulate one training step.

        ``ops[g]``: the ops launched for GPU g in order; ``allreduce``: NCCL
        kernels run on every GPU after its ops, all GPUs starting together;
        ``gpu_delay_us[g]``: extra host delay before GPU g's launch thread
        starts (thread contention); ``sequential``: GPU g+1's first kernel
        waits for GPU g's last; ``tail_host_ops``: host-placed ops at the end
        of the step (loss-scaling conditionals); ``between_events``: host
        work on the python thread after the step (callbacks, metrics); ``host_ranges``: the program's own
        ``tf.profiler.experimental.Trace(name)`` ranges around Python work at the step's start, inside its marker,
        before any launch (the GPU idle through them); ``send_us``: the graph's hand-over of the batch to GPU 0
        (``IteratorGetNext/_1:_Send`` on its launch thread, the host staging the copy) before the first launch --
        input the GPU waits for, as the stock tool counts it; ``untraced_us``: Python work inside the step's marker
        before any launch that no event records (the profiler's Python tracer off), the GPU idle through it.
        ``peer_wait_us``: the AllReduce as a real collective runs it -- each GPU enters its first NCCL kernel when its
        own ops are done and spins in it until the last GPU of the host enters, plus ``peer_wait_us[g]``: the wait for
        GPUs of other hosts (another capture's), so every GPU of the job leaves together.  None: every GPU of the host
        starts its collectives together, after the host's slowest GPU.
        ``read_bytes`` (eager): the loop reads a result of GPU 0 back at the step's end (``loss.numpy()``,
        ``float(loss)``), as TensorFlow 2.x records it (:meth:`_eager_read`).
        """
        rng = self.rng
        num = len(self.steps)
        st = _Step(num=num, start=self.t)
        self.steps.append(st)
        step_id = self._step_id + num
        t0 = self.t + 3 * US
        # Input: the get-next op blocks the step until the batch is there.
        t = t0
        if input_wait_us > 0:
            wait = int(input_wait_us * US * (1 + jitter * rng.standard_normal()))
            self.data_thread.add("ExecutorState::Process", t, wait + 2 * US, id=step_id, iter_num=0,
                                 _ct=TF_EXECUTOR_CONTEXT, _c=step_id)
            self.data_thread.add("IteratorGetNextOp::DoCompute", t + US, wait, id=step_id, iter_num=0)
            st.input_wait = wait
            t += wait + 2 * US
        if send_us > 0:
            send = int(send_us * US * (1 + jitter * abs(rng.standard_normal())))
            self.launchers[0].add("IteratorGetNext/_1:_Send", t, send)
            st.input_wait += send
            t += send + US
        for name, us in host_ranges or []:
            dur = int(us * US)
            self.python.add(name, t, dur)
            st.host_compute += dur
            t += dur + US
        st.untraced = int(untraced_us * US)
        t += st.untraced
        order = gpu_order or list(range(self.num_gpus))
        delays = gpu_delay_us or [0.0] * self.num_gpus
        ends = [t] * self.num_gpus
        h_starts = [t] * self.num_gpus
        h_ends = [t] * self.num_gpus
        host_end = t
        prev_gpu_done = t
        for g in order:
            h = t + int(delays[g] * US) + int(rng.integers(0, 2 * US))
            if eager:  # one Python thread dispatches every replica's ops: one replica's after the other's
                h = max(h, host_end)
            dev_floor = max(self.gpu_free[g], h)
            if sequential:
                dev_floor = max(dev_floor, prev_gpu_done)
            thread = self.python if eager else self.launchers[g]
            h_starts[g] = h
            h, d = self._launch_ops(st, g, ops[g] if g < len(ops) else [], thread, h, dev_floor, eager, jitter)
            ends[g] = d
            h_ends[g] = h
            prev_gpu_done = d
            host_end = max(host_end, h)
        if allreduce:
            ar_start = max(max(ends) + 2 * US, host_end + 7 * US + self.latency)
            enter = {g: max(ends[g] + 2 * US, h_ends[g] + 7 * US + self.latency) for g in order}
            for g in order:
                h = max(h_ends[g], ar_start - self.latency - 10 * US) if peer_wait_us is None else h_ends[g]
                d = ar_start if peer_wait_us is None else enter[g]
                for i, k in enumerate(allreduce):
                    corr = self._next_corr()
                    thread = self.python if eager else self.launchers[g]
                    thread.add(k.name, h, 6 * US, correlation_id=corr)
                    dur = int(k.us * US * (1 + jitter * rng.standard_normal()))
                    if peer_wait_us is not None and i == 0:  # spins until the last GPU of the job enters
                        dur += max(enter.values()) - enter[g] + int(peer_wait_us[g] * US)
                    self.streams[g]["kernel"].add(k.name, d, dur, correlation_id=corr, kernel_details=k.details)
                    st.events.append(_DevEvent(g, k.name, "nccl", d, dur, h + 6 * US, k))
                    h += 7 * US
                    d += dur + 2 * US
                ends[g] = d
                h_ends[g] = h
        if not eager:
            for g in order:
                self.launchers[g].add("ExecutorState::Process", h_starts[g] - US, h_ends[g] - h_starts[g] + 2 * US,
                                      id=step_id, iter_num=0, _ct=TF_EXECUTOR_CONTEXT, _c=step_id)
        if read_bytes:
            host_end = self._eager_read(st, order[0], read_bytes, host_end, ends)
        done = max(ends + [host_end])
        for op in tail_host_ops or []:
            dur = int(op.host_us * US * (1 + jitter * rng.standard_normal()))
            self.launchers[0].add(op.name, done + US, dur)
            st.host_compute += dur
            st.host_ops += 1
            done += dur + 2 * US
        for g in range(self.num_gpus):
            self.gpu_free[g] = max(self.gpu_free[g], ends[g])
        end = done + 3 * US
        self._markers(st, num, step_id, self.t, end, eager)
        st.end = end
        # Between steps: host work on the python thread, GPU idle.
        t = end + int(between_us * US)
        for name, us in between_events or []:
            dur = int(us * US * (1 + jitter * rng.standard_normal()))
            self.python.add(name, t, dur)
            st.between += dur
            st.host_compute += dur
            t += dur + US
        self.t = t

    def _markers(self, st: _Step, num: int, step_id: int, start: int, end: int, eager: bool) -> None:
        if eager:  # op-by-op: no function, the custom loop's marker is the only root
            self.python.add(self.trace_name, start, end - start, step_num=num + self.step_base, _r=1)
        elif self.marker == "keras3":
            self.python.add("Profiled batch", start, end - start, step_num=num + self.step_base)
            self.python.add("FunctionRun", start + US, end - start - 2 * US, id=step_id, _r=1,
                            _pt=TF_EXECUTOR_CONTEXT, _p=step_id)
        else:
            self.python.add(self.trace_name, start, end - start, step_num=num + self.step_base, _r=1)
            self.python.add("FunctionRun", start + US, end - start - 2 * US, id=step_id, _r=1,
                            _pt=TF_EXECUTOR_CONTEXT, _p=step_id)

    def _launch_ops(self, st: _Step, g: int, ops: list[Op], thread: LineBuilder, h: int, d: int,
                    eager: bool, jitter: float) -> tuple[int, int]:
        """Lay out ``ops`` on launch thread ``thread`` from host time ``h``; returns (host, device) ends."""
        rng = self.rng
        streams = self.streams[g]
        host_work = False
        for op in ops:
            op_start = h
            h += int(op.host_us * US * (1 + jitter * abs(rng.standard_normal())))
            if op.on_host:
                # Needs the GPU's result first: wait for the device, copy back, compute, copy in.
                h, d = self._copy(st, g, "D2H", op.d2h_bytes or 256, thread, max(h, d), d, True, op)
                work = int(op.host_us * US)
                h += work
                st.host_compute += work
                host_work = True
                if op.h2d_bytes:
                    h, d = self._copy(st, g, "H2D", op.h2d_bytes, thread, h, d, op.sync_copy, op)
                st.host_ops += 1
            else:
                if op.h2d_bytes:
                    h, d = self._copy(st, g, "H2D", op.h2d_bytes, thread, h, d, op.sync_copy, op)
                    host_work = True
                for k in op.kernels:
                    corr = self._next_corr()
                    launch = int(op.launch_us * US * (1 + jitter * abs(rng.standard_normal())))
                    thread.add(k.name, h, launch, correlation_id=corr)
                    h += launch
                    start = max(h + self.latency, d)
                    dur = max(int(k.us * US * (1 + jitter * rng.standard_normal())), US // 2)
                    stats = {"correlation_id": corr, "kernel_details": k.details}
                    if op.tf_op_stat:
                        stats["tf_op"] = op.name
                    if k.shape:
                        stats["shape"] = k.shape
                    streams["kernel"].add(k.name, start, dur, **stats)
                    st.events.append(_DevEvent(g, k.name, "kernel", start, dur, h, k, after_host_work=host_work))
                    host_work = False
                    d = start + dur
                    h += US // 2
                if op.d2h_bytes:
                    h, d = self._copy(st, g, "D2H", op.d2h_bytes, thread, h, d, op.sync_copy, op)
                st.device_ops += 1
            h += US
            if (op.name.startswith("IteratorGetNext") and op.name.endswith(":_Send") and g == 0
                    and not any(e.gpu == g and e.kind == "kernel" for e in st.events)):
                st.input_wait += h - op_start  # the batch handed to GPU 0 before its first kernel: input, as the stock tool counts it
            if eager:
                st.eager_ops += 1
                thread.add("EagerExecute", op_start - US, h - op_start + US)
                if self.eager_local:
                    thread.add(f"EagerLocalExecute: {op.name.rpartition(':')[2]}", op_start - 3 * US // 4,
                               h - op_start + US // 2)
                thread.add("EagerKernelExecute", op_start - US // 2, h - op_start + US // 4, is_func=0)
                thread.add(op.name, op_start, h - op_start - US // 2, is_eager=1)
            else:
                thread.add(op.name, op_start, h - op_start - US // 2)
        return h, d

    def _eager_read(self, st: _Step, g: int, nbytes: int, h: int, ends: list[int]) -> int:
        """``loss.numpy()`` of GPU ``g``'s result on the Python thread from host time ``h``, as TensorFlow 2.3 records
        it on a V100 (mholmeslinder/semi-supervised-cv ``logs/scalars/20201216-223130``, Keras's per-batch read of its
        logs): nothing while the thread waits for the GPU's queue to drain, then -- 103 us after the GPU's last kernel
        -- a ``MemcpyD2H`` of 38 us on the Python thread outside any op or ``EagerExecute`` (the copy call), its copy
        on the GPU's D2H stream 27 us into it, 2 us long.  Here: 20 us after the drain, 30 us, the copy 10 us in.
        Returns the host's time after the read; the GPU's next work starts after it (``ends[g]``)."""
        corr = self._next_corr()
        at = max(h, ends[g]) + 20 * US
        self.python.add("MemcpyD2H", at, 30 * US, correlation_id=corr)
        dur = max(int(nbytes / PCIE_BYTES_PER_US * US), 2 * US)
        self.streams[g]["D2H"].add("MemcpyD2H", at + 10 * US, dur, correlation_id=corr,
                                   memcpy_details=f"kind_src:device kind_dst:pinned size:{nbytes} dest:{g} async:0")
        st.events.append(_DevEvent(g, "MemcpyD2H", "D2H", at + 10 * US, dur, at + 30 * US, None, True))
        ends[g] = max(ends[g], at + 10 * US + dur)
        return at + 30 * US

    def _copy(self, st: _Step, g: int, direction: str, nbytes: int, thread: LineBuilder, h: int, d: int,
              sync: bool, op: Op) -> tuple[int, int]:
        """One memcpy: host record + device event; a sync copy blocks the host until it is done."""
        corr = self._next_corr()
        name = "MemcpyH2D" if direction == "H2D" else "MemcpyD2H"
        thread.add(name, h, 5 * US, correlation_id=corr)
        h += 5 * US
        start = max(h + self.latency, d if direction == "D2H" else h + self.latency)
        dur = max(int(nbytes / PCIE_BYTES_PER_US * US), 2 * US)
        src, dst = ("pinned", "device") if direction == "H2D" else ("device", "pinned")
        details = f"kind_src:{src} kind_dst:{dst} size:{nbytes} dest:{g} async:{0 if sync else 1}"
        self.streams[g][direction].add(name, start, dur, correlation_id=corr, memcpy_details=details)
        st.events.append(_DevEvent(g, name, direction, start, dur, h, None, sync))
        if sync:
            h = max(h, start + dur)
        d = max(d, start + dur)  # the next kernel consumes (or overwrites) the copied tensor
        return h, d

    # -- output ---------------------------------------------------------------

    def finish(self, session_start_ns: int = 1_767_225_600_000_000_000) -> SpaceBuilder:
        """Add the ``Task Environment`` plane and return the space."""
        env = self.space.plane("Task Environment")
        env.add_stat("profile_start_time", session_start_ns)
        env.add_stat("profile_stop_time", session_start_ns + (self.t + 50 * US) // 1000)
        return self.space

    def truth_numbers(self) -> dict:
        """Per-step numbers measured from what was written (see truth.py)."""
        steps = self.steps
        n = len(steps)
        gids = [self.gpu_id_base + g for g in range(self.num_gpus)]
        per: dict[str, list[float]] = {
            "step_time_ps": [], "input_wait_ps": [], "host_compute_ps": [], "between_steps_ps": [], "untraced_ps": [],
        }
        dev = {g: [] for g in gids}
        coll = {g: [] for g in gids}
        wait = {g: [] for g in gids}
        mem = {"H2D": 0.0, "D2H": 0.0, "D2D": 0.0}
        cnt = {"H2D": 0.0, "D2H": 0.0, "D2D": 0.0}
        sync = 0
        t16 = tb16 = t16_stock = tall = 0
        counts: dict[str, int] = {}
        ktime: dict[str, int] = {}
        tc, non_tc = set(), set()
        nccl = 0
        for i, st in enumerate(steps):
            nxt = steps[i + 1].start if i + 1 < n else st.end
            per["step_time_ps"].append(nxt - st.start)
            per["input_wait_ps"].append(st.input_wait)
            per["host_compute_ps"].append(st.host_compute)
            per["between_steps_ps"].append(st.between)
            per["untraced_ps"].append(st.untraced)
            for g in range(self.num_gpus):
                evs = sorted((e for e in st.events if e.gpu == g and e.kind in ("kernel", "nccl")),
                             key=lambda e: e.start)
                dev[gids[g]].append(sum(e.dur for e in evs if e.kind == "kernel"))
                coll[gids[g]].append(sum(e.dur for e in evs if e.kind == "nccl"))
                w = 0
                for a, b in zip(evs, evs[1:]):
                    gap = b.start - (a.start + a.dur)
                    by_launch = b.start <= b.launch_end + self.latency + US
                    if gap > 0 and by_launch and not b.after_host_work:
                        w += gap
                wait[gids[g]].append(w)
            for e in st.events:
                if e.kind in mem:
                    mem[e.kind] += e.dur
                    cnt[e.kind] += 1
                    sync += e.sync
                    continue
                counts[e.name] = counts.get(e.name, 0) + 1
                ktime[e.name] = ktime.get(e.name, 0) + e.dur
                if e.kind == "nccl":
                    nccl += 1
                    continue
                k = e.kernel
                tall += e.dur
                t16 += e.dur if k.dtype == "fp16" else 0
                tb16 += e.dur if k.dtype == "bf16" else 0
                stock16 = ("half" in k.shape) if k.shape else ("half" in k.name or "fp16" in k.name)
                t16_stock += e.dur if stock16 else 0
                if k.tensor_core:
                    tc.add(k.name)
                elif k.gemm:
                    non_tc.add(k.name)
        mean = lambda xs: float(np.mean(xs)) if len(xs) else 0.0  # noqa: E731
        return {
            "num_steps": n,
            "step_time_ps": mean(per["step_time_ps"]),
            "device_compute_ps": {g: mean(v) for g, v in dev.items()},
            "collective_ps": {g: mean(v) for g, v in coll.items()},
            "launch_wait_ps": {g: mean(v) for g, v in wait.items()},
            "input_wait_ps": mean(per["input_wait_ps"]),
            "host_compute_ps": mean(per["host_compute_ps"]),
            "between_steps_ps": mean(per["between_steps_ps"]),
            "untraced_ps": mean(per["untraced_ps"]),
            "memcpy_ps": {k: v / n for k, v in mem.items()},
            "memcpy_count": {k: v / n for k, v in cnt.items()},
            "sync_memcpy_count": sync / n,
            "fp16_share": t16 / tall if tall else 0.0,
            "bf16_share": tb16 / tall if tall else 0.0,
            "stock_16bit_share": t16_stock / tall if tall else 0.0,
            "tensor_core_kernels": frozenset(tc),
            "non_tensor_core_gemms": frozenset(non_tc),
            "kernel_counts": counts,
            "kernel_time_ps": ktime,
            "allreduce_per_gpu_per_step": nccl / (n * self.num_gpus),
            "eager_op_count": sum(s.eager_ops for s in steps) // max(n, 1),
            "host_op_count": sum(s.host_ops for s in steps) // max(n, 1),
            "device_op_count": sum(s.device_ops for s in steps) // max(n, 1),
            "per_step": {**per, **{f"device_compute_ps[{g}]": v for g, v in dev.items()},
                         **{f"launch_wait_ps[{g}]": v for g, v in wait.items()}},
            "_tall": tall, "_t16": t16, "_tb16": tb16, "_t16_stock": t16_stock,
        }


#: A T4's plane stats (sm_75, 40 SMs, 15 GiB): the GCP VMs of the real Keras captures this scenario follows.
T4 = Gpu("Tesla T4", (7, 5), 40, 1590000, 320064000000, 15843721216)


def write_grouped_keras_batch(path: str, callback_gap_ms: float = 45.0, kernels: int = 40,
                              kernel_us: float = 150.0, gpu_props: Gpu | None = None,
                              omit: tuple[str, ...] = (), name: str | None = None,
                              root_us: float | None = None) -> dict:
    """A TF 2.x grouped capture of one Keras batch profiled by the TensorBoard callback (``profile_batch=N``), as
    TensorFlow writes it (a derived ``Steps`` line on the GPU plane, events tagged with ``group_id``): the host's
    ``train_function`` (Keras 2: no ``_r``, no ``step_num``) launches ``kernels`` kernels of ``kernel_us`` each
    (group 0); after it returns, the loss is read back (a D2H copy, no group); ``callback_gap_ms`` later the callback
    stops the profiler and runs its summary op ``LogicalAnd``, whose kernel TensorFlow's grouping gives group 0 too.
    The ``Steps`` line's step 0 spans from the first kernel to that op, as TensorFlow derives it (the real T4
    captures of h37-survey65).  Returns the truth by construction: the step's own GPU span (first kernel's start to
    the end of the loss read Keras makes every batch before anything else: h37-survey75), the span of the kernels
    ``train_function`` launched alone (``kernels_ms``), and the Steps line's span.  ``gpu_props``: the device
    properties its GPU plane carries (a T4's by default) -- with no name stat, as TF 2.x wrote the T4's; ``omit``: stats left out;
    ``name``: a ``gpu_device_name`` stat to write (as other TF builds and the driver name the device); ``root_us``: also
    the graph's ``FunctionRun`` root (``_r``, group 0) on the Python thread inside ``train_function``, returning after
    ``root_us`` while the executor's thread goes on launching the step's kernels (TF 2.3, h37-survey74's V100
    sessions)."""
    space = SpaceBuilder("instance-2")
    host = space.plane("/host:CPU")
    py = host.line("python3", 3627382263)
    launcher = host.line("tf_Compute/-1773360180", 2521607116)
    gpu = space.plane("/device:GPU:0")
    g = gpu_props or T4
    for key, value in (("clock_rate", g.clock_khz), ("core_count", g.sms), ("memory_bandwidth", g.bandwidth),
                       ("memory_size", g.memory), ("compute_cap_major", g.cc[0]), ("compute_cap_minor", g.cc[1])):
        if key not in omit:
            gpu.add_stat(key, value)
    if name is not None:
        gpu.add_stat("gpu_device_name", name)
    stream, d2h = gpu.line("Stream #13(Compute)", 13), gpu.line("Stream #15(MemcpyD2H)", 15)
    t0 = CAPTURE_LEAD_PS
    details = "regs:32 static_shared:0 dynamic_shared:0 grid:40,1,1 block:256,1,1 occ_pct:50"
    corr, h, d = 1, t0 + 200 * US, t0 + 1000 * US
    first = d
    for _ in range(kernels):  # launched 20 us apart, queued behind one another on the stream
        launcher.add("volta_sgemm_128x64_nn", h, 5 * US, correlation_id=corr, group_id=0)
        d = max(d, h + 10 * US)
        stream.add("volta_sgemm_128x64_nn", d, int(kernel_us * US), correlation_id=corr, kernel_details=details,
                   group_id=0)
        d += int(kernel_us * US) + US
        h, corr = h + 20 * US, corr + 1
    own_end = d - US
    fn_end = h + 100 * US
    py.add("train_function", t0, fn_end - t0)
    if root_us is not None:
        py.add("FunctionRun", t0 + 150 * US, int(root_us * US), _r=1, group_id=0)
    py.add("MemcpyD2H", own_end + 10 * US, 5 * US, correlation_id=corr)  # the loss read back after the function
    read_end = own_end + 22 * US
    d2h.add("MemcpyD2H", read_end - 2 * US, 2 * US, correlation_id=corr,
            memcpy_details="kind_src:device kind_dst:pinned size:4 dest:0 async:0")
    late = own_end + int(callback_gap_ms * 1000 * US)
    py.add("EagerExecute: LogicalAnd", late, 90 * US)
    py.add("LogicalAnd:LogicalAnd", late + 10 * US, 60 * US, group_id=0)
    py.add("void Eigen::internal::EigenMetaKernel<logical_and>", late + 30 * US, 20 * US, correlation_id=corr + 1,
           group_id=0)
    stream.add("void Eigen::internal::EigenMetaKernel<logical_and>", late + 60 * US, 5 * US,
               correlation_id=corr + 1, kernel_details=details, group_id=0)
    gpu.line("Steps", 0xDEADBEEF).add("0", first, late + 65 * US - first, group_id=0)
    space.write(path)
    return {"step_ms": (read_end - first) / (1000 * US), "kernels_ms": (own_end - first) / (1000 * US),
            "steps_line_ms": (late + 65 * US - first) / (1000 * US)}


def _gpu_plane(space: SpaceBuilder, gpu: Gpu, index: int = 0) -> PlaneBuilder:
    """A ``/device:GPU:<index>`` plane with ``gpu``'s device stats and no line: the GPU TensorFlow's (or XLA's) GPU
    tracer saw, on which nothing ran in the window."""
    plane = space.plane(f"/device:GPU:{index}")
    for key, value in (("device_vendor", "Nvidia"), ("gpu_device_name", gpu.name), ("clock_rate", gpu.clock_khz),
                       ("core_count", gpu.sms), ("memory_bandwidth", gpu.bandwidth), ("memory_size", gpu.memory),
                       ("compute_cap_major", gpu.cc[0]), ("compute_cap_minor", gpu.cc[1])):
        plane.add_stat(key, value)
    return plane


def _dense_eager_ops(kernel_us: float, host_us: float, launch_us: float) -> list[Op]:
    """A dense layer's three eager ops -- ``MatMul``, ``BiasAdd``, ``Relu`` -- each ``host_us`` of host work and one
    ``launch_us`` launch of a ``kernel_us`` kernel: the one step of :func:`write_tiny_eager_loop` and
    :func:`write_eager_read_loop`, so the loop that reads and the one that does not run the same work."""
    return [Op(f"dense/{name}:{name}", [Kernel(f"{kernel}", kernel_us)], host_us=host_us, launch_us=launch_us)
            for name, kernel in (("MatMul", "volta_sgemm_32x32_sliced1x4_nn"),
                                 ("BiasAdd", "void tensorflow::functor::BiasNHWCKernel<float>"),
                                 ("Relu", "void Eigen::internal::EigenMetaKernel<relu>"))]


def write_tiny_eager_loop(path: str, steps: int = 8, kernel_us: float = 3.0, host_us: float = 25.0,
                          launch_us: float = 6.0) -> dict:
    """A TF 2.x custom loop run eagerly (no ``tf.function``) on tiny tensors, as ``tf.profiler.experimental`` records
    it: each ``train`` step runs three ops from Python -- ``MatMul``, ``BiasAdd``, ``Relu`` -- each an ``EagerExecute``
    holding ``EagerLocalExecute: <op type>`` (TF 2.21's nesting, ``Capture(eager_local=True)``), ``host_us`` of the
    eager runtime's work and one ``launch_us`` launch of a ``kernel_us`` kernel.  No jitter.

    Truth by construction: 3 eager calls a step, each ``host_us + launch_us + 2`` us of host time (its
    ``EagerLocalExecute`` span: the op's host work, its launch, 1.5 us of the runtime's bookkeeping and the 0.5 us the
    span opens before the op), against ``3 * kernel_us`` of GPU work: too small for its dispatch (``too_small``) where
    the host's exceeds the GPU's -- the default's 99 us against 9 us; a control of 400 us kernels is not."""
    cap = Capture(1, A100, seed=7, marker="custom_loop", eager_local=True)
    ops = _dense_eager_ops(kernel_us, host_us, launch_us)
    for _ in range(steps):
        cap.step([ops], eager=True, jitter=0.0)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    cap.finish().write(path)
    call_us = host_us + launch_us + 2.0
    return {"steps": steps, "calls_per_step": 3, "host_ms_per_step": 3 * call_us / 1000,
            "device_ms_per_step": 3 * kernel_us / 1000, "too_small": 3 * call_us > 3 * kernel_us}


def write_eager_read_loop(path: str, steps: int = 8, kernel_us: float = 300.0, host_us: float = 25.0,
                          launch_us: float = 6.0, read: bool = True, between_us: float = 2.0) -> dict:
    """:func:`write_tiny_eager_loop`'s eager custom loop whose step reads its result back (``loss.numpy()``, 4 bytes:
    ``Capture.step(read_bytes=4)``) -- the per-turn read TensorFlow's sync-once fix is about.  ``read``: False, the
    same loop reading nothing (a control).  Truth by construction: one read a step, the program's; the host waits in it
    (unrecorded) while the GPU runs the step's ``3 * kernel_us``, and the GPU's idle after the read (until the next
    step's first kernel: the read's 20 us wake and 30 us call, ``between_us``, the next op's host work and launch)
    is the read's cost."""
    cap = Capture(1, A100, seed=7, marker="custom_loop", eager_local=True)
    ops = _dense_eager_ops(kernel_us, host_us, launch_us)
    for _ in range(steps):
        cap.step([ops], eager=True, jitter=0.0, read_bytes=4 if read else 0, between_us=between_us)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    cap.finish().write(path)
    return {"steps": steps, "reads_per_step": 1 if read else 0, "device_ms_per_step": 3 * kernel_us / 1000}


def write_data_only_window(path: str, batches: int = 6, fetch_us: float = 2000.0, gap_us: float = 200.0,
                           gpu: Gpu | None = A100) -> dict:
    """``tf.profiler.experimental.start`` / ``stop`` around a loop that only iterates a ``tf.data`` dataset (``for
    batch in ds.take(6): pass``): per batch, the eager ``IteratorGetNextOp::DoCompute`` on the Python thread and the
    pipeline's ``Iterator::Root`` / ``Iterator::Prefetch`` on a ``tf_data`` thread; the GPU's plane (``gpu``; None: no
    GPU plane) holds no line.  Truth by construction: ``batches`` fetches of ``fetch_us`` each, no op of a model, no
    GPU runtime call, no GPU work -- the input pipeline only."""
    space = SpaceBuilder("worker0")
    host = space.plane("/host:CPU")
    py = host.line("python3", 4242)
    data = host.line("tf_data_iterator_get_next/1977", 1977)
    if gpu is not None:
        _gpu_plane(space, gpu)
    t = CAPTURE_LEAD_PS
    for _ in range(batches):
        data.add("Iterator::Root", t, int((fetch_us - 4) * US))
        data.add("Iterator::Prefetch", t + US, int((fetch_us - 6) * US))
        py.add("IteratorGetNextOp::DoCompute", t, int(fetch_us * US))
        t += int((fetch_us + gap_us) * US)
    space.write(path)
    return {"batches": batches, "fetch_ms": batches * fetch_us / 1000, "gpu": gpu.name if gpu is not None else ""}


def write_cpu_keras_batches(path: str, step_ms: tuple[float, ...] = (80.0,), gap_ms: float = 2.0,
                            roots: bool = True, gpu: Gpu | None = None) -> dict:
    """A TF 2.x CPU-only capture of Keras 2 ``fit`` batches, as TensorFlow writes one on a laptop (h37-survey65's
    MacBook sessions): one host plane, no GPU plane; each batch a ``train_function`` call on the Python thread
    (Keras 2: no ``_r``, no ``step_num``) whose graph runs as a ``FunctionRun`` root (``_r``) on a ``tf_Compute``
    thread, its ops beneath it (``roots=False``: no ``_r`` stat on it, as a build that groups no events writes it).
    ``step_ms``: each batch's ``FunctionRun`` length, ``gap_ms`` apart.  Returns the
    truth by construction: the batches' mean length, ms, and their count.  ``gpu``: the machine has that GPU and
    TensorFlow saw it -- its plane, with no line, as a ``with tf.device('/CPU:0'):`` run on it writes one."""
    space = SpaceBuilder("macbook")
    host = space.plane("/host:CPU")
    if gpu is not None:
        _gpu_plane(space, gpu)
    py = host.line("python3", 1)
    compute = host.line("tf_Compute/-1", 2)
    t = CAPTURE_LEAD_PS
    for i, length in enumerate(step_ms):
        dur = int(length * 1000 * US)
        py.add("train_function", t - 50 * US, dur + 100 * US)
        compute.add("FunctionRun", t, dur, _r=1 if roots else None, group_id=i if roots else None)
        compute.add("Conv2DBackpropFilter", t + 10 * US, dur // 2)
        compute.add("_FusedConv2D", t + 20 * US + dur // 2, dur // 3)
        t += dur + 100 * US + int(gap_ms * 1000 * US)
    space.write(path)
    return {"step_ms": sum(step_ms) / len(step_ms), "steps": len(step_ms)}


def write_keras_batch_with_map(path: str, gather_us: float = 1000.0, host_op_us: float = 0.0, kernels: int = 40,
                               kernel_us: float = 100.0, iterators: tuple[str, ...] = (),
                               grouped_function: bool = True, call: str = "RunAsync", stray_op_us: float = 0.0,
                               cut_call: bool = False, stray_eager: bool = False) -> dict:
    """A TF 2.x grouped capture of one Keras batch (``model.fit`` on NumPy arrays, as :func:`write_grouped_keras_batch`
    lays it out) whose input pipeline's captured function runs on the step's inter-op threads: tf.data's thread starts
    it (``InstantiatedCapturedFunction::RunAsync`` around a ``FunctionRun``, group 1 -- the root of a group of its
    own, as TensorFlow groups it; ``iterators``: the events of the dataset's iterators the profiler records there, each
    stage's chain from the root, ``Iterator::Model::ParallelMapV2`` as ECBM4040's Keras writes it), and its op
    ``GatherV2:GatherV2`` (Keras slicing the next batch out of the arrays,
    group 1) runs ``gather_us`` on a ``tf_Compute`` thread between the step's first and second halves of kernels, the
    GPU idle all that time (the step's next op queued behind it).  ``host_op_us`` > 0 adds an op of the step's own graph
    (``Unique:Unique``, group 0) that launches no kernel -- a real host-placed op -- right after it, the GPU idle too.
    ``grouped_function=False``: TensorFlow 2.3's layout -- no ``FunctionRun`` under the call, and neither the call nor
    the function's ops carry a group (Pol-Zeimet/Gestenerkennung_Projektarbeit_2's Colab T4 and K80 sessions,
    h37-huntxla63); the step's own events keep group 0.
    ``call="RunWithBorrowedArgs"``: tf.data calls the function synchronously, its event spanning the function's run
    (the gather inside it), as TensorFlow 2.4's ``MultiDeviceIterator`` generator does (the shared V100 BERT,
    h37-xla64); ``cut_call``: the same function's op runs once more after the step (``GatherV2:GatherV2``, ungrouped,
    200 us) in a call the capture cut -- no call event recorded around it; ``stray_op_us`` > 0: an ungrouped op that is
    no node of the function (``WriteScalarSummary:WriteScalarSummary``, no kernel) runs on the launcher thread right
    after the gather, outside the call, the GPU idle under it (``stray_ms``) -- no tf.data function's op;
    ``stray_eager``: that op run eagerly (``is_eager`` 1: the TensorBoard callback's summary), never a graph's.

    Truth by construction: the step (first kernel to last), the GPU idle under the pipeline's op (``input_ms``), the
    idle under the step's own host op (``host_op_ms``), no host-placed op but that one (the ECBM4040 T4 captures of
    h37-survey68: ``GatherV2`` 0.24-1.16 ms, read as "a TF op of the step placed on the host")."""
    space = SpaceBuilder("instance-2")
    host = space.plane("/host:CPU")
    py = host.line("python3", 3627382263)
    launcher = host.line("tf_Compute/-1773360180", 2521607116)
    other = host.line("tf_Compute/-839262650", 3455704646)
    resource = host.line("tf_data_iterator_resource/170933739", 170933739)
    gpu = space.plane("/device:GPU:0")
    g = T4
    for key, value in (("clock_rate", g.clock_khz), ("core_count", g.sms), ("memory_bandwidth", g.bandwidth),
                       ("memory_size", g.memory), ("compute_cap_major", g.cc[0]), ("compute_cap_minor", g.cc[1])):
        gpu.add_stat(key, value)
    stream = gpu.line("Stream #13(Compute)", 13)
    t0 = CAPTURE_LEAD_PS
    details = "regs:32 static_shared:0 dynamic_shared:0 grid:40,1,1 block:256,1,1 occ_pct:50"
    corr, h = 1, t0 + 200 * US
    first = last_end = None
    half = kernels // 2
    for i, name in enumerate(iterators):  # nested: the root's GetNext around its input's
        resource.add(name, t0 + (20 + i) * US, (60 - 2 * i) * US)
    if call == "RunAsync":  # the call hands the function to a runner and returns
        resource.add("InstantiatedCapturedFunction::RunAsync", t0 + 100 * US, 12 * US)
    fn_group = 1 if grouped_function else None
    if grouped_function:
        resource.add("FunctionRun", t0 + 105 * US, 5 * US, group_id=1)
    gather = host_op = stray = (0, 0)
    for k in range(kernels):
        if k == half:  # the pipeline's op on the other inter-op thread; the step's next launch waits behind it
            start = last_end + 20 * US
            other.add("ExecutorState::Process", start - 5 * US, int(gather_us * US) + 10 * US, group_id=fn_group)
            other.add("GatherV2:GatherV2", start, int(gather_us * US), group_id=fn_group)
            gather = (start, start + int(gather_us * US))
            if call != "RunAsync":  # a synchronous call: its event around the function's run
                resource.add(f"InstantiatedCapturedFunction::{call}", start - 15 * US, int(gather_us * US) + 30 * US)
            h = gather[1] + 10 * US
            if stray_op_us > 0:
                launcher.add("WriteScalarSummary:WriteScalarSummary", h, int(stray_op_us * US),
                             **({"is_eager": 1} if stray_eager else {}))
                stray = (h, h + int(stray_op_us * US))
                h = stray[1] + 10 * US
            if host_op_us > 0:
                launcher.add("Unique:Unique", h, int(host_op_us * US), group_id=0)
                host_op = (h, h + int(host_op_us * US))
                h = host_op[1] + 10 * US
        launcher.add("volta_sgemm_128x64_nn", h, 5 * US, correlation_id=corr, group_id=0)
        d = max(h + 10 * US, last_end + US if last_end is not None else 0)
        stream.add("volta_sgemm_128x64_nn", d, int(kernel_us * US), correlation_id=corr, kernel_details=details,
                   group_id=0)
        first = d if first is None else first
        last_end = d + int(kernel_us * US)
        h, corr = h + 20 * US, corr + 1
    py.add("train_function", t0, h + 100 * US - t0)
    gpu.line("Steps", 0xDEADBEEF).add("0", first, last_end - first, group_id=0)
    if cut_call:  # the next batch's slice, by a call still running when the capture stopped
        other.add("ExecutorState::Process", h + 200 * US, 210 * US)
        other.add("GatherV2:GatherV2", h + 205 * US, 200 * US)
    space.write(path)
    ms_ = 1000 * US
    return {"step_ms": (last_end - first) / ms_, "input_ms": (gather[1] - gather[0]) / ms_,
            "host_op_ms": (host_op[1] - host_op[0]) / ms_, "stray_ms": (stray[1] - stray[0]) / ms_}


#: The events and stats TensorFlow's trace viewer converter leaves out as internal (``IsInternalEvent`` /
#: ``IsInternalStat``, tsl/profiler/utils/xplane_schema.cc): the allocator's records and tf.data's producer/consumer
#: pairs; a kernel's launch details, the grouping's producer/consumer and root stats, XLA's cost stats.
VIEWER_INTERNAL_EVENTS = frozenset({
    "MemoryAllocation", "MemoryDeallocation", "PrefetchProduce", "PrefetchConsume", "ParallelInterleaveProduce",
    "ParallelInterleaveConsume", "ParallelInterleaveInitializedInput", "ParallelMapProduce", "ParallelMapConsume",
    "MapAndBatchProduce", "MapAndBatchConsume", "ParseExampleProduce", "ParseExampleConsume"})
VIEWER_INTERNAL_STATS = frozenset({"kernel_details", "level 0", "_pt", "_p", "_ct", "_c", "_r", "_a", "flops",
                                   "bytes_accessed", "program_id", "symbol_id"})
#: The trace viewer's process id of the host's threads (``kHostThreadsDeviceId``); a device's is its index + 1.
VIEWER_HOST_PID = 501


def write_trace_viewer_json(xplane_path: str, json_path: str) -> dict:
    """The trace viewer JSON TensorFlow converts a session's XPlane into (``<host>.trace.json.gz``: what TF 2.2 saved
    instead of an XPlane), written from the XSpace at ``xplane_path`` as ``ConvertXSpaceToTraceEvents`` does it: a
    process per plane (``/host:CPU`` 501, ``/device:GPU:N`` N + 1), a thread per line (its display id and name), an
    ``X`` event per event at its picosecond time in microseconds to three decimals, the event's display name as its
    name with its name as ``long_name``, ``step_name`` as the name where it has one, each stat as an argument printed
    as text (metadata stats first), the internal events and stats left out, no plane stat.  Returns what the JSON
    keeps: the count of events written and left out."""
    import gzip
    import json

    from tb_gpu_advisor.formats.xplane.schema import message_class

    with open(xplane_path, "rb") as f:
        space = message_class("XSpace").FromString(f.read())
    events: list[dict] = []
    written = left_out = 0
    for index, plane in enumerate(space.planes):
        if plane.name.startswith("/device:GPU:"):
            pid = int(plane.name.rsplit(":", 1)[1]) + 1
        elif plane.name.startswith("/host:CPU"):
            pid = VIEWER_HOST_PID
        else:
            continue  # /host:metadata, the task environment: no trace events
        stat_names = {e.key: e.value.name for e in plane.stat_metadata}
        metadata = {e.key: e.value for e in plane.event_metadata}
        events.append({"ph": "M", "pid": pid, "name": "process_name", "args": {"name": plane.name}})

        def text(stat, stat_names=stat_names) -> str | None:  # ``XStatVisitor::ToString``: the value set
            if stat.str_value:
                return stat.str_value
            if stat.ref_value:
                return stat_names.get(stat.ref_value, "")
            if stat.bytes_value:
                return None
            if stat.double_value:
                return f"{stat.double_value:g}"
            return str(stat.uint64_value or stat.int64_value)

        for line in plane.lines:
            tid = line.display_id or line.id
            if tid < 0:
                tid += 1 << 32  # printed as the uint32 resource id it is (the derived lines' 0xdeadbeef + k)
            events.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                           "args": {"name": line.display_name or line.name}})
            for ev in line.events:
                md = metadata.get(ev.metadata_id)
                name = md.name if md is not None else ""
                if name in VIEWER_INTERNAL_EVENTS:
                    left_out += 1
                    continue
                args: dict[str, str] = {}
                shown = name
                if md is not None and md.display_name:
                    shown, args["long_name"] = md.display_name, name
                for stat in [*(md.stats if md is not None else ()), *ev.stats]:
                    key = stat_names.get(stat.metadata_id, "")
                    value = text(stat)
                    if not key or key in VIEWER_INTERNAL_STATS or value is None:
                        continue
                    args[key] = value
                    if key == "step_name":
                        shown = args[key]
                start_ps = line.timestamp_ns * 1000 + ev.offset_ps
                events.append({"ph": "X", "pid": pid, "tid": tid, "ts": round(start_ps / 1e6, 3),
                               "dur": round(ev.duration_ps / 1e6, 3), "name": shown, **({"args": args} if args else {})})
                written += 1
    doc = {"displayTimeUnit": "ns", "metadata": {"highres-ticks": True}, "traceEvents": events + [{}]}
    raw = json.dumps(doc).encode()
    with open(json_path, "wb") as f:
        f.write(gzip.compress(raw) if json_path.endswith(".gz") else raw)
    return {"events": written, "left_out": left_out}


#: xprof's streaming trace viewer (``trace_viewer@``, tensorboard-plugin-profile / xprof 2.19 on): the host plane's
#: process id (``kHostThreadsDeviceId``: past 500 device and 200 custom-plane ids) and its thread pools' after it.
STREAMING_HOST_PID = 701


def streaming_viewer_doc(doc: dict, host: str) -> dict:
    """A trace viewer document (``write_trace_viewer_json``'s layout) re-laid as xprof's streaming trace viewer serves
    it (``ConvertXSpaceToTraceEventsContainer`` then ``TraceEventsToJson``, openxla/xprof ``xprof/convert``): each
    process named ``"<host> <plane>"`` with a ``process_sort_index``; the host plane at :data:`STREAMING_HOST_PID`;
    the host threads named ``<pool>/<n>`` (or ``<pool>-<n>/<tid>``) in pools of more than one thread moved into a
    process of their own each, ``"<host> <pool>"`` at the next ids in the pools' name order (``ThreadPoolGrouper``);
    a ``thread_sort_index`` per thread; the top level's ``codeLink``, ``useNewBackend``, ``returnedEventsSize``,
    ``filteredByVisibility``, ``fullTimespan``, ``stackFrames``, ``showCounterMessage`` and ``totalCounterEvents``;
    and one counter series in its ``entries`` form (``"ph":"C"``), which no complete event is."""
    import re

    events = [e for e in doc["traceEvents"] if e]
    names = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    host_pid = next(pid for pid, n in names.items() if n.startswith("/host:"))
    pools: dict[str, list[int]] = {}
    for (pid, tid), name in threads.items():
        m = re.fullmatch(r"(.*)/\d+(:?-.*)?", name) if pid == host_pid else None
        if m:
            pool = re.fullmatch(r"(.*)[-_]\d+", m.group(1))
            pools.setdefault(pool.group(1) if pool else m.group(1), []).append(tid)
    pool_pid = {}
    for i, pool in enumerate(sorted(p for p, tids in pools.items() if p and len(tids) > 1)):
        for tid in pools[pool]:
            pool_pid[tid] = STREAMING_HOST_PID + 1 + i
        names[STREAMING_HOST_PID + 1 + i] = pool
    names[STREAMING_HOST_PID] = names.pop(host_pid)

    def place(pid: int, tid: int) -> int:
        return pool_pid.get(tid, STREAMING_HOST_PID) if pid == host_pid else pid

    out = []
    for pid, name in sorted(names.items()):
        out += [{"args": {"name": f"{host} {name}"}, "name": "process_name", "ph": "M", "pid": pid},
                {"args": {"sort_index": pid}, "name": "process_sort_index", "ph": "M", "pid": pid}]
    for (pid, tid), name in sorted(threads.items()):
        out += [{"args": {"name": name}, "name": "thread_name", "ph": "M", "pid": place(pid, tid), "tid": tid},
                {"args": {"sort_index": tid}, "name": "thread_sort_index", "ph": "M", "pid": place(pid, tid),
                 "tid": tid}]
    complete = [{**e, "pid": place(e["pid"], e["tid"]), "z": i} for i, e in enumerate(events) if e.get("ph") == "X"]
    ts = [e["ts"] for e in complete]
    out += complete
    out.append({"pid": STREAMING_HOST_PID, "name": "host memory", "ph": "C", "entries": [[min(ts), 1], [max(ts), 2]]})
    return {"displayTimeUnit": "ns", "metadata": {"highres-ticks": True}, "codeLink": "", "useNewBackend": False,
            "returnedEventsSize": len(complete), "filteredByVisibility": False,
            "fullTimespan": [min(ts) / 1000, max(ts) / 1000], "stackFrames": {}, "traceEvents": out,
            "showCounterMessage": "", "totalCounterEvents": 1}
