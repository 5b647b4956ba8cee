"""Seeded random jobs (h37-randjobs): the analysis is held to the report's laws on jobs no one captured yet.

Issue #37: planning holds back real traces of every kind, and the misses are always an assumption -- a shape of job
the pipeline took for granted.  This module draws jobs at random from the shapes real captures have, on top of the
synthetic writers (``synthetic.torchtrace``'s simulated ranks, ``synthetic.nsysexport``'s exports and empty windows),
so that ``tests/support/properties.py`` walks reports of combinations no kept capture holds:

* 1-20 steps of 50 us to 500 ms; tiny steps; idle host time between steps (logging, untraced Python);
* data-loader waits, pinned or pageable copies of random sizes, blocking reads (``.item()``, ``.cpu()``,
  ``torch.cuda.synchronize()``);
* NCCL collectives on 1-4 ranks (data parallel: every rank's all-reduce ends when the last rank's data is in);
* ``prof.step()`` markers, ``record_function`` / NVTX iteration ranges, or neither;
* training (autograd's backward nodes, an optimizer) or inference (forward only); fp32 or bf16 GEMMs whose times
  follow their shapes at a random fraction of the GPU's peak (no kernel beats it); CUDA graphs;
* windows with no GPU work (Nsight: start-up only, NVTX only, tracing off, nothing launched; Kineto: host ops only).

``random_xplane_job`` (h37-randjobs2) draws the formats above it does not: JAX jitted train steps (1-6 layers, bf16 or
fp32, command buffers or per-kernel launches, ``StepTraceAnnotation`` or none, with or without host module events,
``device_put`` inputs, ``block_until_ready``-like scalar reads or ``jax.device_get`` of a batch, 1-2 hosts with an
XLA all-reduce, tiny steps, host-only windows), TF steps (Keras or custom-loop markers, 1-8 GPUs on 1-2 hosts, input
waits and copies, synchronous read-backs, NCCL all-reduces, host-placed ops only) and PyTorch memory snapshots
(training and inference loops, forward-only passes, cut histories, OOMs with the capacity known or not).

``random_form_job`` (h37-randjobs4) and ``random_form5_job`` (h37-randjobs5) draw the forms newer real captures show:
lost GPU records, OS-runtime-traced host loops, XLA's host-run loops, JAX programs called once each; AMD's rocprof and
rocpd traces, NVTX-only framework exports, blocking copies, tiny host-bound steps, a slower GPU, a snapshot beside a
trace.  ``random_form9_job`` (h37-a2afix) draws an NCCL all-to-all of each kind of exchange; ``random_form10_job``
(h37-randjobs9) attention op by op or fused, a pipeline preparing its input in traced Python, a JAX program's
batch-fetch range, a PyProf forward from the process's start; ``random_form13_job`` (h37-randjobs13) a GPU host's Kineto
window that ended before its first kernel, the blocking copies users write in a step (``.tolist()``,
``torch.tensor(pylist, device="cuda")``, a pageable ``non_blocking`` upload), a tiny RL loop, and memory snapshots of
expandable segments or of two devices.  Writers that return their truth leave it in :data:`TRUTH` for the
walk's ``step-truth`` law and the forms' own laws (``tests/support/random_jobs.truth_problems``).

Each job is a :class:`Job`: its seed, its format and its parameters -- printed, it is the job to rebuild.
``write(job, folder)`` writes it as a logdir run (``folder/<run>/...``).  ``scripts/randjobs.py`` runs jobs for a
time budget; ``tests/report/test_random_jobs.py`` walks a few dozen.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import asdict, dataclass, field
from collections.abc import Callable, Sequence
from typing import Any

from synthetic import nsysexport as N
from synthetic import torchtrace as T

#: Dense peaks of the simulated GPU (an H100 SXM, ``synthetic.torchtrace.H100``), FLOP/s: bf16 Tensor Core, fp32 FFMA.
PEAK = {"bf16": 989e12, "fp32": 67e12}
HBM_BPS = 3.35e12
#: Host-to-device rates, bytes/s: pinned memory over PCIe 5, pageable memory through the driver's staging buffer.
COPY_BPS = {"pinned": 40e9, "pageable": 12e9}
GEMM = {"bf16": T.GEMM_FWD, "fp32": T.FP32_GEMM}
GEMM_BWD = {"bf16": T.GEMM_BWD, "fp32": (T.FP32_GEMM, T.FP32_GEMM)}
RELU = {"bf16": T.RELU_BF16, "fp32": T.RELU_F32}
SGD = {"bf16": T.SGD_BF16, "fp32": T.SGD_F32}
DTYPE = {"bf16": "c10::BFloat16", "fp32": "float"}
BYTES = {"bf16": 2, "fp32": 4}
ITER_RANGES = {"train": ("train_step", "training_step", "iteration"), "infer": ("inference", "forward_pass", "generate")}


@dataclass
class Job:
    """One random job: ``fmt`` ("kineto", "nsys", "nsys_window"; "jax", "tf", "snapshot"; "fwnvtx") and its
    parameters."""

    seed: int
    fmt: str
    params: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"Job(seed={self.seed}, fmt={self.fmt!r}, params={self.params!r})"


@dataclass(frozen=True)
class FormDraw:
    """One stream of forms a walk draws (``scripts/randjobs.py --formsN``), called as ``draw(seed)`` for the job of
    ``seed``.  Every stream draws the same way -- a :class:`random.Random` seeded by ``stream`` and the seed, the form,
    then the form's parameters -- so one home holds that order, on which every seed's job (and the SURVEY sections
    that name seeds) depend: a new stream is a row of :data:`FORM_DRAWS`, not a copy of a factory."""

    name: str  #: the drawer's name, as ``scripts/randjobs.py`` prints it
    stream: str  #: the seed string's prefix: a stream of its own, so no other stream's seeds change their jobs
    forms: tuple[str, ...]
    params: Callable[[random.Random, str], dict[str, Any]]  #: the form's parameters, drawn after the form
    #: the forms' weights (``rng.choices``); ``None``: one ``rng.choice`` (a draw even of one form); ``()``: no draw,
    #: the first form (a stream that never drew its form)
    weights: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "__name__", self.name)

    def __call__(self, seed: int) -> Job:
        rng = random.Random(f"{self.stream}{seed}")
        if self.weights is None:
            fmt = rng.choice(self.forms)
        elif self.weights:
            fmt = rng.choices(self.forms, weights=self.weights)[0]
        else:
            fmt = self.forms[0]
        return Job(seed, fmt, self.params(rng, fmt))


def _log_uniform(rng: random.Random, lo: float, hi: float) -> float:
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def random_job(seed: int) -> Job:
    """The job of ``seed``: the same seed, the same job."""
    rng = random.Random(seed)
    fmt = rng.choices(("kineto", "nsys", "nsys_window"), weights=(6, 3, 1))[0]
    if fmt == "nsys_window":
        return Job(seed, fmt, {"window": rng.choice(N.WINDOWS), "ranges": rng.randint(1, 8)})
    if fmt == "nsys":
        return Job(seed, fmt, _nsys_params(rng))
    p = _kineto_params(rng)
    p["buffer_requests"] = _buffer_requests(rng, p["steps"])  # drawn last: the other draws as before (h37-walk25)
    return Job(seed, fmt, p)


def _buffer_requests(rng: random.Random, steps: int) -> tuple[tuple[int, float], ...]:
    """CUPTI's activity buffer requests in some steps (``synthetic.torchtrace.buffer_request``: Kineto's ``overhead``
    events, the next launch waiting for each): (step number, us), within what real captures hold -- 71-451 us once in
    TraceLens' B300 benchmarks, 84-2,184 us in four decode steps of ``h200_jobs/hf_generate_llama`` (h37-survey45)."""
    if rng.random() >= 0.3:
        return ()
    at = rng.sample(range(2, 2 + steps), min(steps, rng.randint(1, 4)))
    return tuple((n, round(_log_uniform(rng, 70.0, 2_200.0), 3)) for n in sorted(at))


def _kineto_params(rng: random.Random) -> dict[str, Any]:
    train = rng.random() < 0.6
    ranks = rng.choice((1, 1, 1, 2, 4)) if train else rng.choice((1, 1, 1, 2))
    dtype = rng.choice(("bf16", "fp32"))
    p: dict[str, Any] = {
        "steps": rng.randint(1, 20), "ranks": ranks, "train": train, "dtype": dtype,
        # the step's size: the GEMMs' shapes, and how close to the peak they run
        "layers": rng.randint(1, 6), "batch": rng.choice((1, 8, 64, 512, 2048, 8192)),
        "width": rng.choice((128, 512, 1024, 4096, 8192)), "efficiency": rng.uniform(0.05, 0.8),
        "marker": rng.choice(("profiler_step", "profiler_step", "range", "none")),
        "range_name": rng.choice(ITER_RANGES["train" if train else "infer"]),
        "launch_us": rng.uniform(4.0, 20.0),
        "loop_us": rng.choice((0.0, rng.uniform(1.0, 30.0), rng.uniform(1.0, 30.0))),  # the loop's own Python
        "python_us": rng.choice((0.0, 0.0, rng.uniform(5.0, 200.0))),  # Python between two ops
        "loader_us": rng.choice((0.0, 0.0, _log_uniform(rng, 20.0, 200_000.0))),
        "copies": [(rng.choice(("pinned", "pageable")), _log_uniform(rng, 0.001, 256.0))
                   for _ in range(rng.choice((0, 0, 1, 1, 2, 3)))],
        "unrecorded_us": rng.choice((0.0, 0.0, _log_uniform(rng, 10.0, 100_000.0))),  # host code no event records
        "idle_us": rng.choice((0.0, 0.0, _log_uniform(rng, 10.0, 200_000.0))),  # after the step: logging, a sleep
        "reads": rng.choice((0, 0, 1, 1, 2)),  # .item() mid-step
        "end_sync": rng.choice(("item", "item", "cpu", "synchronize", "none")),
        "graph": rng.random() < 0.2,
        "comm_us": _log_uniform(rng, 20.0, 20_000.0) if ranks > 1 else 0.0,
        "late_rank_us": rng.choice((0.0, 0.0, rng.uniform(0.0, 2_000.0))) if ranks > 1 else 0.0,
        # the collective's result is used on the compute stream (c10d's work.wait(): the stream waits for it), or not
        "comm_waited": rng.random() < 0.85,
        "slow_rank": rng.choice((None, None, rng.uniform(1.0, 2.0))) if ranks > 1 else None,
        "no_gpu": rng.random() < 0.05,  # a window of host ops only (the GPU's work not yet started)
    }
    return p


#: The smallest job of each writer: one rank, a few steps, one bf16 layer -- what a reduced job overrides.
KINETO_BASE: dict[str, Any] = {
    "steps": 8, "ranks": 1, "train": True, "dtype": "bf16", "layers": 1, "batch": 512, "width": 1024,
    "efficiency": 0.5, "marker": "profiler_step", "range_name": "train_step", "launch_us": 8.0, "loop_us": 2.0,
    "python_us": 0.0,
    "loader_us": 0.0, "copies": [], "unrecorded_us": 0.0, "idle_us": 0.0, "reads": 0, "end_sync": "item",
    "graph": False, "comm_us": 0.0, "late_rank_us": 0.0, "comm_waited": True, "slow_rank": None, "no_gpu": False,
    "opened_in_loop_us": 0.0, "buffer_requests": ()}


def kineto_job(seed: int = 0, **overrides: Any) -> Job:
    """A Kineto job of :data:`KINETO_BASE` with ``overrides``: a reduced job, written out in a test."""
    unknown = set(overrides) - set(KINETO_BASE)
    if unknown:
        raise ValueError(f"not a Kineto job's parameter: {sorted(unknown)}")
    return Job(seed, "kineto", {**KINETO_BASE, **overrides})


def nsys_job(seed: int = 0, **overrides: Any) -> Job:
    """An Nsight job: ``synthetic.nsysexport.NsysJob``'s defaults with ``overrides`` (``kernel`` by its name)."""
    return Job(seed, "nsys", {"kernel": "GEMM_BF16", **overrides})


def _nsys_params(rng: random.Random) -> dict[str, Any]:
    train = rng.random() < 0.6
    ranks = rng.choice((1, 1, 1, 2, 4))
    dtype = rng.choice(("bf16", "fp32"))
    ops = rng.randint(1, 40)
    kernel_us = _log_uniform(rng, 2.0, 20_000.0)
    pinned = rng.random() < 0.5
    h2d_bytes = int(_log_uniform(rng, 1024, 256 << 20))
    h2d_us = max(h2d_bytes / COPY_BPS["pinned" if pinned else "pageable"] * 1e6, 1.0)
    step_range = rng.choice((None, "{name} {k}", "{name} {k}", "{name}"))
    extra = rng.choice(((), ("forward", "backward", "optimizer step"), ("forward",), ("forward", "loss.backward()")))
    if not train:
        extra = rng.choice(((), ("forward",), ("inference",)))
    p: dict[str, Any] = {
        "steps": rng.randint(1, 20), "ranks": ranks, "ops": ops, "kernel_us": round(kernel_us, 3),
        "kernel": "GEMM_BF16" if dtype == "bf16" else "GEMM_FP32", "launch_us": round(rng.uniform(4.0, 20.0), 3),
        "h2d_bytes": h2d_bytes, "h2d_us": round(h2d_us, 3), "pinned": pinned, "copies_block": rng.random() < 0.3,
        "d2h_us": 0.0, "input_ms": rng.choice((0.0, 0.0, round(_log_uniform(rng, 0.02, 200.0), 3))),
        "nccl_us": round(_log_uniform(rng, 20.0, 20_000.0), 3) if ranks > 1 and rng.random() < 0.8 else 0.0,
        "sync": rng.random() < 0.7, "autograd_nvtx": rng.random() < 0.6,
        "step_range": (step_range.format(name=rng.choice(ITER_RANGES["train" if train else "infer"]), k="{k}")
                       if step_range else None),
        "extra_ranges": extra, "comm_range": rng.choice((None, "allreduce grads")) if train else None,
        "graph_mode": rng.choice((None, None, None, "replay")),
        "untraced_ms": rng.choice((0.0, 0.0, round(_log_uniform(rng, 0.01, 100.0), 3))),
        "kernel_gap_us": rng.choice((0.0, 0.0, round(rng.uniform(0.5, 20.0), 3))),
        "setup_ms": rng.choice((0.0, 0.0, round(rng.uniform(1.0, 50.0), 3))) if ranks > 1 and train else 0.0,
        # a training draw's step runs a real step's kernels (forward products, their gradients, an update), an
        # inference draw's the forward's alone (h37-gen70: the generator follows reality; drawn without the rng, so
        # every other draw stays as it was).  Kept only by :func:`random_job`'s plain Nsight jobs: the draws built on
        # these sizes that set a kind of their own (an evaluation's NVTX, DeepSpeed's, a vocabulary's) drop it
        "training_kernels": train,
    }
    if rng.random() < 0.3:  # the results read back
        d2h_bytes = int(_log_uniform(rng, 4, 64 << 20))
        p.update({"d2h_bytes": d2h_bytes, "d2h_pinned": rng.random() < 0.3, "d2h_async": rng.random() < 0.5})
        p["d2h_us"] = round(max(d2h_bytes / COPY_BPS["pinned" if p["d2h_pinned"] else "pageable"] * 1e6, 1.0), 3)
    return _paced(p)


def _paced(p: dict[str, Any]) -> dict[str, Any]:
    """Nsight job ``p`` with a loop that never waits for its GPU paced by something else: its GPU work fits its period
    (one stream runs one kernel at a time), else the loop would have queued ahead and waited in the allocator or a
    full queue.  Called again by a draw that changes the step's ops after :func:`_nsys_params`."""
    gpu_ms = (p["h2d_us"] + p["ops"] * (p["kernel_us"] + p["kernel_gap_us"]) + p["nccl_us"] + p["d2h_us"]) / 1e3
    # (a read-back that blocks waits for the step's kernels; a blocking upload at the step's start does not: the
    # export's step template starts each step's stream afresh)
    reads_back = p["d2h_us"] and not (p.get("d2h_async") and p.get("d2h_pinned"))
    if not p["sync"] and not reads_back:
        p["untraced_ms"] = round(max(p["untraced_ms"], gpu_ms * 1.2), 3)
    return p


# ------------------------------------------------------------------------------------------------- writing


def write(job: Job, folder: str) -> str:
    """Write ``job`` as the run ``job<seed>`` under ``folder`` (a logdir); returns the run's folder."""
    run = os.path.join(folder, f"job{job.seed}")
    os.makedirs(run, exist_ok=True)
    if job.fmt == "nsys_window":
        N.write_window(os.path.join(run, "window.sqlite"), job.params["window"], ranges=job.params["ranges"])
    elif job.fmt == "nsys":
        p = dict(job.params)
        p["kernel"] = getattr(N, p["kernel"])
        p["extra_ranges"] = tuple(p.get("extra_ranges", ()))
        N.write(os.path.join(run, "job.sqlite"), N.NsysJob(seed=job.seed, **p))
    elif job.fmt in _WRITERS:
        _WRITERS[job.fmt](job, run)
    else:
        _write_kineto(job, run)
    return run


def _gemm_us(p: dict[str, Any], m: int, k: int, n: int) -> float:
    """A GEMM's time at the job's fraction of the peak (never above it), at least 2 us (a launch's floor)."""
    return max(2.0 * m * k * n / (PEAK[p["dtype"]] * p["efficiency"]) * 1e6, 2.0)


def _elementwise_us(p: dict[str, Any], elems: int) -> float:
    """A memory-bound kernel reading and writing ``elems`` elements at 80% of HBM's bandwidth, at least 2 us."""
    return max(2 * elems * BYTES[p["dtype"]] / (HBM_BPS * 0.8) * 1e6, 2.0)


def _device_sync(r: T.Rank) -> None:
    """``torch.cuda.synchronize()``: the host waits in ``cudaDeviceSynchronize`` until every stream has drained."""
    done = max(r.streams.values(), default=r.host_us)
    wait = max(done - r.host_us, 0.0) + 4.0
    r.corr += 1
    r.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": r.pid, "tid": r.pid,
                   "ts": round(r.host_us + 1.0, 3), "dur": round(wait, 3),
                   "args": {"cbid": 165, "correlation": r.corr}})
    r.host_us += wait + 3.0


def _read_back(r: T.Rank, nbytes: int) -> None:
    """``.cpu()`` of a result: ``aten::to`` -> ``aten::copy_``: a device-to-host copy into pageable memory after the
    queued kernels, the host waiting for it in ``cudaStreamSynchronize`` inside the op."""
    to = r.cpu("aten::to", 0.0, advance=False)
    op = r.cpu("aten::copy_", 0.0, advance=False)
    r.corr += 1
    launch_at = r.host_us + 3.0
    r.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": r.pid, "tid": r.pid,
                   "ts": round(launch_at, 3), "dur": 10.0,
                   "args": {"External id": op["args"]["External id"], "cbid": 41, "correlation": r.corr}})
    us = max(nbytes / COPY_BPS["pageable"] * 1e6, 1.5)
    start = max(r.streams.get(T.COMPUTE_STREAM, 0.0), launch_at + 8.0)
    r.streams[T.COMPUTE_STREAM] = start + us
    r.gpu.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": r.device,
                  "tid": T.COMPUTE_STREAM, "ts": round(start, 3), "dur": round(us, 3),
                  "args": {"External id": op["args"]["External id"], "device": r.device, "context": 1,
                           "stream": T.COMPUTE_STREAM, "correlation": r.corr, "bytes": nbytes,
                           "memory bandwidth (GB/s)": nbytes / (us * 1e3)}})
    r._flow(launch_at, start, T.COMPUTE_STREAM)
    r.step_kernels.append((start, start + us))
    sync_at = launch_at + 12.0
    wait = max(start + us - sync_at, 0.0) + 3.0
    r.corr += 1
    r.host.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": r.pid, "tid": r.pid,
                   "ts": round(sync_at, 3), "dur": round(wait, 3),
                   "args": {"External id": op["args"]["External id"], "cbid": 131, "correlation": r.corr}})
    end = sync_at + wait + 4.0
    op["dur"] = round(end - r.host_us, 3)
    to["dur"] = round(end + 2.0 - r.host_us, 3)
    r.host_us = end + 2.0


def _forward(r: T.Rank, p: dict[str, Any], slow: float) -> None:
    m, d, dt = p["batch"], p["width"], p["dtype"]
    gemm, ew = _gemm_us(p, m, d, d) * slow, _elementwise_us(p, m * d) * slow
    if p["graph"]:
        r.graph([(GEMM[dt], gemm), (RELU[dt], ew)] * p["layers"])
        return
    for _ in range(p["layers"]):
        r.kernel("aten::addmm", GEMM[dt], gemm, launch_us=p["launch_us"],
                 args=T.mm_args("aten::addmm", m, d, d, DTYPE[dt]))
        r.host_us += p["python_us"]
        r.kernel("aten::relu", RELU[dt], ew, launch_us=p["launch_us"])
        r.host_us += p["python_us"]


def _backward(r: T.Rank, p: dict[str, Any], slow: float) -> None:
    m, d, dt = p["batch"], p["width"], p["dtype"]
    gemm, ew = _gemm_us(p, m, d, d) * slow, _elementwise_us(p, m * d) * slow
    for _ in range(p["layers"]):
        node = r.cpu("autograd::engine::evaluate_function: AddmmBackward0", 0.0, advance=False)
        t = r.host_us
        r.kernel("aten::mm", GEMM_BWD[dt][0], gemm, launch_us=p["launch_us"], args=T.mm_args("aten::mm", m, d, d, DTYPE[dt]))
        r.kernel("aten::mm", GEMM_BWD[dt][1], gemm, launch_us=p["launch_us"], args=T.mm_args("aten::mm", d, m, d, DTYPE[dt]))
        node["dur"] = round(r.host_us - t, 3)
        relu = r.cpu("autograd::engine::evaluate_function: ReluBackward0", 0.0, advance=False)
        t = r.host_us
        r.kernel("aten::threshold_backward", RELU[dt], ew, launch_us=p["launch_us"])
        relu["dur"] = round(r.host_us - t, 3)


def _optimizer(r: T.Rank, p: dict[str, Any], not_before: float) -> None:
    mark = r.cpu("Optimizer.step#SGD.step", 0.0, cat="user_annotation", advance=False)
    t = r.host_us
    r.kernel("aten::_foreach_add_", SGD[p["dtype"]], _elementwise_us(p, p["layers"] * p["width"] ** 2),
             launch_us=p["launch_us"], not_before=not_before)
    mark["dur"] = round(r.host_us - t, 3)


def _end_sync(r: T.Rank, p: dict[str, Any]) -> None:
    how = p["end_sync"]
    if how == "item":
        r.sync("aten::item")
    elif how == "cpu":
        _read_back(r, p["batch"] * 16 * BYTES[p["dtype"]])
    elif how == "synchronize":
        _device_sync(r)


def _open_mark(r: T.Rank, p: dict[str, Any], n: int) -> dict | None:
    if p["marker"] == "profiler_step":
        return r.cpu(f"ProfilerStep#{n}", 0.0, cat="user_annotation", advance=False)
    if p["marker"] == "range":
        return r.cpu(p["range_name"], 0.0, cat="user_annotation", advance=False)
    return None


def _close_mark(r: T.Rank, p: dict[str, Any], n: int, mark: dict | None) -> None:
    if mark is None:
        return
    mark["dur"] = round(round(r.host_us, 3) - mark["ts"], 3)  # ends where the clock is: the next mark may touch it
    if p["marker"] == "profiler_step" and r.step_kernels:  # the step's device-side span over its GPU work
        s, e = min(k[0] for k in r.step_kernels), max(k[1] for k in r.step_kernels)
        r.gpu.append({"ph": "X", "cat": "gpu_user_annotation", "name": f"ProfilerStep#{n}", "pid": r.device,
                      "tid": T.COMPUTE_STREAM, "ts": round(s, 3), "dur": round(e - s, 3),
                      "args": {"External id": mark["args"]["External id"]}})


def _host_only_step(r: T.Rank, p: dict[str, Any]) -> None:
    """A step of host ops only: the loader, then CPU tensors' ops (no launch)."""
    if p["loader_us"]:
        r.cpu(T.DATALOADER, p["loader_us"], cat="user_annotation")
    for _ in range(p["layers"]):
        r.cpu("aten::addmm", max(_gemm_us(p, p["batch"], p["width"], p["width"]) * 40.0, 5.0))
        r.cpu("aten::relu", 5.0)


def _late_us(late: float | tuple[float, ...], n: int) -> float:
    """How late (us) each rank after the first reaches the loop's ``n``-th step (0: the first, ``ProfilerStep#2``):
    ``late`` itself, or its ``n``-th where it is one lateness a step (a rank held up once, by its own untraced work,
    before one step)."""
    return float(late[n]) if isinstance(late, (tuple, list)) else float(late)


def _step(ranks: list[T.Rank], p: dict[str, Any], n: int) -> None:
    """Step ``n`` of every rank: each opens its mark, loads and copies its batch, runs forward (and backward); the
    ranks' all-reduce ends when the last rank's gradients are in; then the optimizer, the reads, the idle."""
    start = max(r.host_us for r in ranks)
    ready: dict[int, float] = {}
    marks: dict[int, dict | None] = {}
    for r in ranks:
        r.host_us = start + (r.rank * _late_us(p["late_rank_us"], n - 2) if len(ranks) > 1 else 0.0)
        marks[r.rank] = _open_mark(r, p, n)
        r.host_us += 5.0
        r.step_kernels = []
        if p["no_gpu"]:
            _host_only_step(r, p)
            continue
        slow = p["slow_rank"] if p["slow_rank"] and r.rank == len(ranks) - 1 else 1.0
        if p["loader_us"]:
            r.cpu(T.DATALOADER, p["loader_us"], cat="user_annotation")
        for kind, mb in p["copies"]:
            r.copy_h2d(mb, max(mb * (1 << 20) / COPY_BPS[kind] * 1e6, 1.5), pageable=kind == "pageable")
        r.host_us += p["unrecorded_us"]
        for _, us in (x for x in p.get("buffer_requests", ()) if x[0] == n):  # the profiler's, before a launch
            T.buffer_request(r, us)
        _forward(r, p, slow)
        for _ in range(p["reads"]):
            r.sync("aten::item")
            r.host_us += p["python_us"]
        for how, mb in p.get("user_copies", ()):  # (h37-randjobs13) the copies users write inside the step
            _user_copy(r, how, mb)
        if p["train"]:
            _backward(r, p, slow)
        ready[r.rank] = max(r.streams.get(T.COMPUTE_STREAM, 0.0), r.host_us)
    end = max(ready.values(), default=0.0) + p["comm_us"]
    for r in ranks:
        if not p["no_gpu"]:
            if p["comm_us"]:
                T._allreduce(r, ready[r.rank], end, group=len(ranks))
                if p["comm_waited"]:  # the compute stream's next work waits for the collective's end
                    r.streams[T.COMPUTE_STREAM] = max(r.streams.get(T.COMPUTE_STREAM, 0.0), r.streams[T.NCCL_STREAM])
            if p["train"]:
                _optimizer(r, p, end if p["comm_us"] else 0.0)
            _end_sync(r, p)
        r.host_us += p["idle_us"]
        r.host_us += 5.0
        _close_mark(r, p, n, marks[r.rank])
        if p["marker"] != "profiler_step":  # the loop's own Python between two iterations' ranges
            r.host_us += p["loop_us"]


def _write_kineto(job: Job, run: str) -> None:
    p = job.params
    opened = _opened_in_loop_us(p)
    ranks = [T.Rank(rank=k, pid=4100 + k, device=k, **({"host_us": T.T0_US + opened} if opened else {}))
             for k in range(p["ranks"])]
    starts = []
    for n in range(2, 2 + p["steps"]):
        starts.append(max(r.host_us for r in ranks))
        _step(ranks, p, n)
    if opened:  # every iteration alike: the period is each one's length, start to start
        bounds = starts + [max(r.host_us for r in ranks)]
        TRUTH[job.seed] = {"steps": p["steps"], "step_ms": (bounds[-1] - bounds[0]) / p["steps"] / 1e3}
    if p["no_gpu"] and p["marker"] == "profiler_step" and p["ranks"] == 1:  # (h37-tidy30) a loop on the CPU, every
        # step alike: the job block's ``host_loop`` times it start to start, no GPU step
        TRUTH.setdefault(job.seed, {}).update(host_step_ms=(max(r.host_us for r in ranks) - starts[0]) / p["steps"] / 1e3)
    held = [n for n, us in p.get("buffer_requests", ()) if us >= 100.0]
    # one rank: its steps are its host's ProfilerStep#n, numbered as drawn (several: each rank's GPU-side spans, the
    # request's idle in the step before on the GPU's clock -- h37-walk25's Left -- so their truth is a time)
    if held and p["marker"] == "profiler_step" and not p["no_gpu"] and p["ranks"] == 1:
        TRUTH.setdefault(job.seed, {}).update(profiler_steps=tuple(held), profiler_numbers=(2, 1 + p["steps"]))
    if held and p["marker"] == "profiler_step" and not p["no_gpu"] and p["ranks"] > 1:
        free = _request_free_ms(p, starts + [max(r.host_us for r in ranks)])
        if free is not None:
            TRUTH.setdefault(job.seed, {}).update(request_free_ms=free)
    for r in ranks:
        stamp = T.BASE_NS + int(T.T0_US * 1000) + r.rank * 1_000_000
        T.write_doc(os.path.join(run, f"{T._worker(r)}.{stamp}.pt.trace.json"), T.trace_doc(r, len(ranks)))


def _request_free_ms(p: dict[str, Any], bounds: list[float]) -> float | None:
    """The length (ms, start to start on the host) of every iteration that holds no buffer request, where the job's
    iterations are alike but for their requests (one lateness for every step); None where they are not, or none
    is free."""
    asked = {n for n, _ in p.get("buffer_requests", ())}
    free = {round(bounds[k + 1] - bounds[k], 3) for k in range(p["steps"]) if 2 + k not in asked}
    alike = not isinstance(p.get("late_rank_us", 0.0), (tuple, list))
    return free.pop() / 1e3 if alike and len(free) == 1 else None


def _opened_in_loop_us(p: dict[str, Any]) -> float:
    """How long before the first recorded iteration's start the profiler's window opened inside the loop
    (``opened_in_loop_us``; 0: the loop starts in the window, ``torchtrace.TRACE_LEAD_US`` after it opens).

    Truth by construction (h37-opens2): an iteration ran before the window and ended in the loop's untraced time
    after its read-back (``idle_us``), the window opening in that time -- its GPU work done at its end sync and its
    host in no event, nothing of it is recorded, yet the first iteration the window shows lacks the read-back and
    idle that every later one holds after its update.  Hence a read-back at each iteration's end and the window
    inside the idle, else the iteration before would show."""
    opened = float(p.get("opened_in_loop_us", 0.0))
    if opened and (p["end_sync"] == "none" or opened > p["idle_us"] or p["ranks"] != 1):
        raise ValueError("a window opened inside the loop needs one rank's end sync and an idle that holds it")
    return opened


def as_dict(job: Job) -> dict[str, Any]:
    return asdict(job)


# ------------------------------------------------------------------------------- XPlane jobs and memory snapshots
# (h37-randjobs2) JAX jitted steps (``synthetic.jaxcapture``), TF steps (``synthetic.tfcapture``), snapshots
# (``synthetic.memsnapshot``): each drawn within what those writers' real counterparts show.


def _jax_params(rng: random.Random) -> dict[str, Any]:
    hlo = rng.random() < 0.5
    return {
        # the HLO is the 4-layer MLP's (``jaxcapture.mlp_hlo``): with it, the step is that MLP
        "steps": rng.randint(1, 20), "hosts": rng.choice((1, 1, 1, 2)), "layers": 4 if hlo else rng.randint(1, 6),
        "fp32": rng.random() < 0.15, "command_buffers": rng.random() < 0.5,
        "marker": rng.choice(("train", "train", "none", "none_no_module_events")),
        # kernel times scale with the shapes; the HLO (its FLOPs at 4096-wide layers) only where they run no faster
        "hlo": hlo, "scale": round(rng.uniform(1.0, 4.0) if hlo else _log_uniform(rng, 0.005, 4.0), 4),
        "host_us": rng.choice((0.0, 0.0, round(_log_uniform(rng, 10.0, 50_000.0), 3))),
        "put_bytes": rng.choice((0, 0, int(_log_uniform(rng, 4, 256 << 20)))),
        "read": rng.choice(("none", "none", "block", "device_get")),  # block_until_ready / float(loss), np.asarray
        "allreduce_us": round(_log_uniform(rng, 20.0, 40_000.0), 3),
        "no_gpu": rng.random() < 0.05,
        # (h37-walk25, drawn last: the other draws as before) no jit: each jnp call its own one-op executable
        # (``jit_<op>``, h37-survey46's un-jitted loops), ``eager`` calls a step -- one host only
        "eager": rng.choice((0, 0, 0, rng.randint(2, 60))) if not hlo else 0,
    }


def _tf_params(rng: random.Random) -> dict[str, Any]:
    gpus = rng.choice((1, 1, 2, 4, 8))
    return {
        "steps": rng.randint(1, 20), "gpus": gpus, "hosts": rng.choice((1, 1, 1, 2)),
        "marker": rng.choice(("keras3", "train")), "thread_mode": rng.choice(("global", "gpu_private")),
        "layers": rng.randint(1, 6), "gemm": rng.choice(("GEMM_FP16_TC", "SGEMM_VOLTA", "GEMM_BF16_TC")),
        "gemm_us": round(_log_uniform(rng, 3.0, 3000.0), 3), "ew_us": round(_log_uniform(rng, 2.0, 200.0), 3),
        "input_wait_us": rng.choice((0.0, 0.0, round(_log_uniform(rng, 5.0, 100_000.0), 3))),
        "input_bytes": rng.choice((0, int(_log_uniform(rng, 1024, 128 << 20)))),
        "read_bytes": rng.choice((0, 0, 4, int(_log_uniform(rng, 4, 16 << 20)))),  # a synchronous read-back
        "allreduce_us": round(_log_uniform(rng, 20.0, 20_000.0), 3),
        "between_us": rng.choice((2.0, 2.0, round(_log_uniform(rng, 5.0, 100_000.0), 3))),
        "untraced_us": rng.choice((0.0, 0.0, round(_log_uniform(rng, 5.0, 20_000.0), 3))),
        "no_gpu": rng.random() < 0.05,
    }


def _snapshot_params(rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(("training", "training", "inference", "forward", "ring", "oom", "cap"))
    p: dict[str, Any] = {"kind": kind}
    if kind == "training":
        p.update(iterations=rng.randint(1, 7), layers=rng.randint(1, 12), mib=rng.choice((1, 8, 32, 128)),
                 params=rng.randint(1, 6), param_mib=rng.choice((4, 64, 256)), hold_loss=rng.random() < 0.5,
                 dump_in_forward=rng.random() < 0.3, micro_batches=rng.choice((1, 1, 2, 4)),
                 set_to_none=rng.random() < 0.7, max_entries=rng.choice((None, None, rng.randint(20, 400))))
    elif kind == "inference":
        p.update(passes=rng.randint(1, 8), blocks=rng.randint(1, 24), mib=rng.choice((1, 16, 64)),
                 input_mib=rng.choice((1, 8, 32)), kv_mib=rng.choice((0, 0, 64)), dump_in_pass=rng.random() < 0.3)
    elif kind == "forward":
        p.update(grad=rng.random() < 0.5, layers=rng.randint(1, 24), mib=rng.choice((4, 64, 256)),
                 passes=rng.randint(1, 4), cast_mib=rng.choice((0, 0, 16)))
    elif kind == "ring":
        p.update(iterations=rng.randint(1, 8), max_entries=rng.choice((None, rng.randint(10, 300))),
                 layers=rng.randint(1, 12), mib=rng.choice((8, 64)))
    elif kind == "oom":
        # the writer's loop runs out of memory in its second step at its own sizes (the capacity known or not)
        p.update(device_total=rng.choice((None, 80 << 30)))
    else:
        p.update(device_total=rng.choice((80, 141)) << 30)  # a per-process cap under the writer's own job
    return p


def random_xplane_job(seed: int) -> Job:
    """The XPlane or snapshot job of ``seed`` (its own stream of draws: ``random_job``'s seeds are unchanged)."""
    rng = random.Random(f"xplane{seed}")
    fmt = rng.choices(("jax", "tf", "snapshot"), weights=(4, 4, 2))[0]
    return Job(seed, fmt, {"jax": _jax_params, "tf": _tf_params, "snapshot": _snapshot_params}[fmt](rng))


def _write_jax(job: Job, run: str) -> None:
    from dataclasses import replace

    from synthetic import jaxcapture as J
    from synthetic import xla_kernels as X

    p = job.params
    for host in range(p["hosts"]):
        cap = J.JaxCapture(hostname=f"node{host}", seed=job.seed + host, step_annotation=p["marker"] == "train",
                           module_events=p["marker"] != "none_no_module_events",
                           command_buffers=p["command_buffers"] and p["hosts"] == 1 and not p.get("eager"))
        base = X.mlp_fp32_highest_step() if p["fp32"] else X.mlp_bf16_step(p["layers"], command_buffers=cap.command_buffers)
        kernels = [replace(k, us=k.us * p["scale"]) for k in base]
        if p["hosts"] > 1:
            kernels.append(X.XlaKernel(J.NCCL_ALLREDUCE, "all-reduce-start.1", "jit(train_step)/psum",
                                       p["allreduce_us"], X.EW_SMALL))
        if p["hlo"] and not p["fp32"]:
            cap.add_hlo(J.mlp_hlo(cap.module, kernels, allreduce_group=p["hosts"] if p["hosts"] > 1 else None))
        for _ in range(p["steps"]):
            if cap.step_annotation:
                cap.begin_step()
            if p["host_us"]:
                cap.host_work(p["host_us"])
            if not p["no_gpu"] and p.get("eager") and p["hosts"] == 1:
                _eager_calls(cap, p["eager"])
            elif not p["no_gpu"]:
                inputs = (cap.device_put(p["put_bytes"], "bf16[512,4096]"),) if p["put_bytes"] else ()
                cap.execute(kernels, inputs=inputs)
                if p["read"] != "none":
                    cap.to_host(4 if p["read"] == "block" else 512 * 4096 * 2, "f32[]" if p["read"] == "block"
                                else "bf16[512,4096]")
            else:
                cap.host_work(50.0)
            if cap.step_annotation:
                cap.end_step()
            else:
                cap.host_work(20.0)
        space = cap.finish()
        space.write(os.path.join(run, "plugins", "profile", J.SESSION, f"node{host}.xplane.pb"))
    if p.get("eager") and p["hosts"] == 1 and not p["no_gpu"] and p["marker"] == "train":
        # each step a StepTraceAnnotation around its eager calls: the steps are those, the dispatch theirs to save
        TRUTH[job.seed] = {"steps": p["steps"], **({"rules": ("eager_execution",)} if p["eager"] >= 10 else {})}


def _eager_calls(cap: Any, calls: int) -> None:
    """One step of an un-jitted JAX loop: ``calls`` element-wise jnp calls in turn, each its own ``jit_<op>``
    executable of one kernel (its Python scalar put on the device where it takes one), 2 us of Python between."""
    from synthetic import xla_kernels as X

    for i in range(calls):
        fn, kernel, op, scalar = X.EAGER_OPS[i % len(X.EAGER_OPS)]
        cap.execute(X.eager_op(fn, kernel, op), function=fn, scalar_args=int(scalar))
        cap.host_work(2.0)


def _write_tf(job: Job, run: str) -> None:
    from synthetic import kernels as K
    from synthetic import tfcapture as TFC

    p = job.params
    gemm = K.sized(getattr(K, p["gemm"]), p["gemm_us"])
    ew = K.sized(K.EW_ADD_HALF if p["gemm"] != "SGEMM_VOLTA" else K.EW_ADD_F32, p["ew_us"])
    ops: list[TFC.Op] = []
    if p["input_bytes"]:
        ops.append(TFC.Op("IteratorGetNext/_2:_Send", [], host_us=4, h2d_bytes=p["input_bytes"]))
    for i in range(p["layers"]):
        s = f"model/dense_{i}"
        if p["no_gpu"]:
            ops.append(TFC.Op(f"{s}/MatMul:MatMul", [], host_us=p["gemm_us"], on_host=True))
            continue
        ops += [TFC.Op(f"{s}/MatMul:MatMul", [gemm]), TFC.Op(f"{s}/Relu:Relu", [ew])]
    for i in range(p["layers"]):
        if not p["no_gpu"]:
            g = f"gradient_tape/model/dense_{i}"
            ops += [TFC.Op(f"{g}/MatMul:MatMul", [gemm]), TFC.Op(f"{g}/MatMul_1:MatMul", [gemm])]
    if p["read_bytes"] and not p["no_gpu"]:
        ops.append(TFC.Op("model/loss/Sum:Sum", [K.sized(K.EW_ADD_F32, 3.0)], d2h_bytes=p["read_bytes"],
                          sync_copy=True))
    hosts = p["hosts"]
    reduce_ = ([K.sized(K.NCCL_ALLREDUCE, p["allreduce_us"])]
               if (p["gpus"] > 1 or hosts > 1) and not p["no_gpu"] else None)
    for h in range(hosts):
        cap = TFC.Capture(p["gpus"], TFC.A100, hostname=f"worker{h}", seed=job.seed + h, marker=p["marker"],
                          thread_mode=p["thread_mode"], gpu_id_base=100 * h)
        for _ in range(p["steps"]):
            cap.step([ops] * p["gpus"], input_wait_us=p["input_wait_us"], allreduce=reduce_,
                     between_us=p["between_us"], untraced_us=p["untraced_us"],
                     peer_wait_us=[0.0] * p["gpus"] if hosts > 1 and reduce_ else None)
        space = cap.finish()
        space.write(os.path.join(run, "plugins", "profile", "2026_01_01_00_00_00", f"worker{h}.xplane.pb"))


def _write_snapshot(job: Job, run: str) -> None:
    from synthetic import memsnapshot as M

    p = dict(job.params)
    kind = p.pop("kind")
    fn = {"training": M.training_iterations, "inference": M.inference_loop, "forward": M.forward_only,
          "ring": M.ring_buffer_training, "oom": M.oom_activations, "cap": M.memory_cap}[kind]
    M.write(os.path.join(run, "snapshot.pickle"), fn(**p).doc)


# ------------------------------------------------------------------------------ forms real captures show (h37-randjobs4)
# The shapes the newer real captures hold that ``random_job`` / ``random_xplane_job`` never draw, each on the writer
# built after its real case (truth by construction there): GPU records lost mid-window or at the tail (Nsight's
# ``write_lost_kernel_records``, Kineto's ``write_lost_gpu_records``), host work no event records under an OS runtime
# trace (``write_untraced_host_loop``), XLA running ``while`` loops from the host as its NVTX ranges show them
# (``write_xla_host_loop``), JAX programs called once each or in cycles (XPlane, ``jaxcapture``'s ``function``), and
# the ``NsysJob`` fields the Nsight draw leaves at their defaults: OS calls before each batch, ranks that lag each
# other, work the GPU holds queued, a wrapper's parameter uploads, frameworks' own NVTX (XLA, TensorFlow, DALI,
# DeepSpeed, ``record_function``'s registered names), no GPU info table, the kernels table lost whole.

#: frameworks' own NVTX, as ``tests/job/test_framework_nvtx.py`` writes them (``NsysJob`` fields)
_XLA_MODULE = "XlaModule:#prefix=jit(train_step),hlo_module=jit_train_step,program_id=7#"
FRAMEWORK_NVTX: dict[str, dict[str, Any]] = {
    "none": {},
    "record_function": {"step_range": "train_step, op_id = {k}", "text_ids": True},
    "xla": {"step_range": _XLA_MODULE, "autograd_nvtx": False,
            "op_text": "Thunk:#name=dot_general,hlo_op=fusion.{seq},unique_hlo_op_id={op_id}#", "op_domain": "TSL"},
    "tensorflow": {"step_range": None, "autograd_nvtx": False, "op_text": "MatMul: dense_{seq}/MatMul",
                   "op_domain": "tensorflow-core"},
    "dali": {"autograd_nvtx": False, "op_text": "[DALI] RunGPU", "op_domain": "DALI"},
    "deepspeed": {"step_range": None, "autograd_nvtx": False,
                  "extra_ranges": ("DeepSpeedEngine.forward", "DeepSpeedEngine.backward", "DeepSpeedEngine.step")},
}
SOLVERS = ("thomas_kernel", "pcr_kernel", "hybrid_kernel", "xla_reference_kernel")


def _form_nsys_params(rng: random.Random) -> dict[str, Any]:
    p = _nsys_params(rng)
    fw = rng.choice(("none", "none", "none", "record_function", "xla", "tensorflow", "dali", "deepspeed"))
    p.update(FRAMEWORK_NVTX[fw])
    if p["ranks"] > 1:
        p["rank_lag_us"] = rng.choice((50.0, round(_log_uniform(rng, 1.0, 50_000.0), 3)))
    p.update({
        "os_call": rng.choice(("read", "getc", "poll")),
        "os_call_ms": rng.choice((0.0, 0.0, round(_log_uniform(rng, 0.01, 50.0), 3))),
        "queued_ms": rng.choice((0.0, 0.0, 0.0, round(_log_uniform(rng, 0.01, 20.0), 3))),
        "copy_range": rng.choice((None, None, None, "FSDP::pre_forward (block.0)")),
        "gpu_info": rng.random() < 0.9,
        # the kernels table lost whole (the writer's set-up broadcast is a kernel: only without one)
        "kernels_table": rng.random() < 0.95 or bool(p["setup_ms"]),
    })
    return p


def _form_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    if fmt == "nsys":
        return _form_nsys_params(rng)
    if fmt == "nsys_lost":
        it = rng.randint(3, 60)
        lost_from = rng.choice((None, rng.randint(1, it - 1)))
        until = rng.choice((None, rng.randint(lost_from + 1, it))) if lost_from is not None else None
        return {"iterations": it, "kernels": rng.randint(1, 8), "kernel_us": round(_log_uniform(rng, 2.0, 5000.0), 3),
                "lost_from": lost_from, "lost_until": until if until != it else None,
                "in_flight": rng.choice((0, 0, rng.randint(1, 5))), "ranges": rng.random() < 0.5,
                "streams": rng.randint(1, 3),
                # nvllm's settings without a flush (RUN_DURATION_MS its session's own length, no --duration), or none
                "options": rng.choice((None, {"STOP_TRIGGER": "Delayed", "RUN_DURATION_MS": "3799",
                                              "CUDA_FLUSH_ON_CUDA_PROFILER_STOP": "false", "CUDA_FLUSH_PERIOD": "0"})),
                "diagnostics": rng.choice(((), ("Number of incomplete CUPTI events dropped: 24806. Incomplete events "
                                                "appear when GPU timestamp information have not been retrieved at the "
                                                "time the profiling session was stopped.",)))}
    if fmt == "kineto_lost":
        steps = rng.randint(2, 20)
        return {"steps": steps, "lost_from": rng.choice((None, rng.randint(1, steps - 1))), "kernels": rng.randint(1, 12),
                "kernel_us": round(_log_uniform(rng, 2.0, 5000.0), 3), "log": rng.random() < 0.7}
    if fmt == "nsys_host_loop":
        kernels, kernel_us = rng.randint(1, 30), round(_log_uniform(rng, 2.0, 2000.0), 3)
        # the loop never waits for its GPU (the writer's kernels of a step start from its first launch): its GPU
        # work fits its period, else it would have queued ahead and blocked in a full queue
        return {"steps": rng.randint(1, 20), "kernels": kernels, "kernel_us": kernel_us,
                "host_us": round(max(_log_uniform(rng, 5.0, 50_000.0), kernels * kernel_us + 30.0), 3),
                "osrt": rng.random() < 0.8,
                "settings": rng.random() < 0.8, "threshold_ns": rng.choice((1000, 1000, 10_000, 1_000_000)),
                "wait": rng.choice(("", "", "poll", "pthread_cond_wait"))}
    if fmt == "nsys_xla_loop":
        return {"steps": rng.randint(1, 12), "iterations": rng.randint(1, 60), "kernel_us": round(_log_uniform(rng, 1.0, 500.0), 3),
                "launch_us": round(rng.uniform(2.0, 15.0), 3), "thunk_us": round(rng.uniform(0.5, 10.0), 3),
                "loop_us": round(rng.uniform(1.0, 20.0), 3), "python_us": round(_log_uniform(rng, 5.0, 5000.0), 3),
                "eager": rng.random() < 0.2, "step_range": rng.choice((None, None, "solve {k}")), "osrt": rng.random() < 0.5}
    # jax_programs: ``passes`` passes over ``programs`` jitted programs, each call waited for (a read back)
    return {"passes": rng.randint(1, 8), "programs": rng.randint(1, 4), "layers": rng.randint(1, 6),
            "scale": round(_log_uniform(rng, 0.005, 4.0), 4), "module_events": rng.random() < 0.7,
            "read": rng.choice(("block", "block", "none")), "between_us": round(_log_uniform(rng, 5.0, 2000.0), 3),
            "loop_iterations": rng.choice((0, 0, rng.randint(1, 50))), "step_annotation": rng.random() < 0.3}


FORMS = ("nsys", "nsys_lost", "kineto_lost", "nsys_host_loop", "nsys_xla_loop", "jax_programs")


def _reduced_job(forms: Sequence[str], fmt: str, seed: int, params: dict[str, Any]) -> Job:
    """A job of form ``fmt`` with these writer ``params``, refused with a clear error where ``fmt`` is none of
    ``forms``: the one check every ``formN_job`` makes before a test writes its reduced job out."""
    if fmt not in forms:
        raise ValueError(f"not a form: {fmt}")
    return Job(seed, fmt, params)


def _write_nsys_lost(job: Job, run: str) -> None:
    p = dict(job.params)
    N.write_lost_kernel_records(os.path.join(run, "run.sqlite"), **p)


def _write_kineto_lost(job: Job, run: str) -> None:
    p = dict(job.params)
    log = p.pop("log")
    stamp = T.BASE_NS + int(T.T0_US * 1000)
    T.write_lost_gpu_records(os.path.join(run, f"host_4100.{stamp}.pt.trace.json"), log=(T.KINETO_BUFFER_LIMIT,) if log else (),
                             **p)


def _write_nsys_host_loop(job: Job, run: str) -> None:
    N.write_untraced_host_loop(os.path.join(run, "loop.sqlite"), **job.params)


def _write_nsys_xla_loop(job: Job, run: str) -> None:
    N.write_xla_host_loop(os.path.join(run, "solver.sqlite"), **job.params)


def _write_jax_programs(job: Job, run: str) -> None:
    from synthetic import jaxcapture as J
    from synthetic import xla_kernels as X

    p = job.params
    cap = J.JaxCapture(hostname="node0", seed=job.seed, step_annotation=p["step_annotation"],
                       module_events=p["module_events"], command_buffers=False)
    kernels = [replace_us(k, p["scale"]) for k in X.mlp_bf16_step(p["layers"], command_buffers=False)]
    body = kernels[: max(1, len(kernels) // 4)]
    for _ in range(p["passes"]):
        if cap.step_annotation:
            cap.begin_step()
        for fn in SOLVERS[: p["programs"]]:
            loop = (body, p["loop_iterations"]) if p["loop_iterations"] and fn == SOLVERS[0] else None
            cap.execute(kernels, function=fn, loop=loop)
            if p["read"] == "block":
                cap.to_host(4)
            cap.host_work(p["between_us"])
        if cap.step_annotation:
            cap.end_step()
    cap.finish().write(os.path.join(run, "plugins", "profile", J.SESSION, "node0.xplane.pb"))


def replace_us(k: Any, scale: float) -> Any:
    """An XLA kernel ``k`` with its time scaled by ``scale``."""
    from dataclasses import replace

    return replace(k, us=k.us * scale)


def form_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS` with its writer's ``params``: a reduced job, written out in a test."""
    return _reduced_job(FORMS, fmt, seed, dict(params))


#: The smallest JAX job: one host, 4 steps of the 4-layer bf16 MLP, no marker, nothing read back.
JAX_BASE: dict[str, Any] = {
    "steps": 4, "hosts": 1, "layers": 4, "fp32": False, "command_buffers": True, "marker": "none", "hlo": False,
    "scale": 1.0, "host_us": 0.0, "put_bytes": 0, "read": "none", "allreduce_us": 100.0, "no_gpu": False}


def jax_job(seed: int = 0, **overrides: Any) -> Job:
    """A JAX job of :data:`JAX_BASE` with ``overrides``: a reduced job, written out in a test."""
    unknown = set(overrides) - set(JAX_BASE)
    if unknown:
        raise ValueError(f"not a JAX job's parameter: {sorted(unknown)}")
    return Job(seed, "jax", {**JAX_BASE, **overrides})


#: The smallest TF job: one host, one GPU, 4 Keras steps of one dense layer, no input wait nor copy.
TF_BASE: dict[str, Any] = {
    "steps": 4, "gpus": 1, "hosts": 1, "marker": "keras3", "thread_mode": "global", "layers": 1,
    "gemm": "GEMM_FP16_TC", "gemm_us": 100.0, "ew_us": 10.0, "input_wait_us": 0.0, "input_bytes": 0, "read_bytes": 0,
    "allreduce_us": 100.0, "between_us": 2.0, "untraced_us": 0.0, "no_gpu": False}


def tf_job(seed: int = 0, **overrides: Any) -> Job:
    """A TF job of :data:`TF_BASE` with ``overrides``: a reduced job, written out in a test."""
    unknown = set(overrides) - set(TF_BASE)
    if unknown:
        raise ValueError(f"not a TF job's parameter: {sorted(unknown)}")
    return Job(seed, "tf", {**TF_BASE, **overrides})


def snapshot_job(kind: str, seed: int = 0, **args: Any) -> Job:
    """A memory snapshot of ``synthetic.memsnapshot``'s ``kind`` writer with ``args``: a reduced job."""
    return Job(seed, "snapshot", {"kind": kind, **args})


def fwnvtx_job(form: str, seed: int = 0, steps: int = 12, layers: int = 6) -> Job:
    """An Nsight export whose NVTX a framework wrote (``synthetic.autograd_nvtx``'s ``form``: ``emit_nvtx``, Megatron's
    ``--nvtx-ranges``, Lightning's, DDP's ...): ``steps`` iterations of a ``layers``-layer model.  Not in
    :func:`random_job`'s draw (the seeds keep their jobs): the walk takes each form by name."""
    return Job(seed, "fwnvtx", {"form": form, "steps": steps, "layers": layers})


def _write_fwnvtx(job: Job, run: str) -> None:
    from synthetic import autograd_nvtx

    p = job.params
    TRUTH[job.seed] = autograd_nvtx.write(os.path.join(run, "fwnvtx.sqlite"), p["form"], steps=p["steps"],
                                          layers=p["layers"], ranks=p.get("ranks", 1))


_WRITERS = {"jax": _write_jax, "tf": _write_tf, "snapshot": _write_snapshot, "fwnvtx": _write_fwnvtx,
            "nsys_lost": _write_nsys_lost, "kineto_lost": _write_kineto_lost, "nsys_host_loop": _write_nsys_host_loop,
            "nsys_xla_loop": _write_nsys_xla_loop, "jax_programs": _write_jax_programs}


# ----------------------------------------------------------------------------- more forms real captures show (h37-randjobs5)
# Drawn by ``random_form5_job`` (``scripts/randjobs.py --forms5``), a stream of its own so that ``random_form_job``'s
# seeds keep their jobs: AMD's tracers (rocprof v1's ``results.json``, rocprofv3's rocpd database: kernels named as
# rocBLAS/Tensile, Composable Kernel and ATen name them on ROCm, roctx step ranges or none, staged pageable uploads),
# NVTX-only Nsight exports (``synthetic.autograd_nvtx``'s framework forms, 1-2 ranks), Kineto jobs whose steps block on
# copies (pageable uploads, ``.cpu()`` read-backs, ``.item()``, ``torch.cuda.synchronize()`` together), tiny host-bound
# steps (the DataLoader's ``__next__``, Python before the first op, fp32 ops dispatched one by one), data-parallel ranks
# with one GPU slower, and a Kineto trace with a PyTorch memory snapshot beside it (two sessions of one run).

#: kernel names as ROCm's libraries write them (rocBLAS/Tensile, Composable Kernel, ATen's HIP build, MIOpen)
AMD_KERNELS = (
    ("Cijk_Ailk_Bljk_BBS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0_GRVW8_K1_WG32_4_1", "gemm"),
    ("Cijk_Alik_Bljk_SB_MT64x64x16_MI16x16x4x1_SN_GRVW4_K1_WG16_16_1", "gemm"),
    ("void ck::kernel_gemm_xdl_cshuffle_v3<ck::half_t, ck::half_t, float, 256>(ck::GemmArgs)", "gemm"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl, std::array<char*, 2> >"
     "(int, at::native::GeluCUDAKernelImpl, std::array<char*, 2>)", "ew"),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float> > >"
     "(at::native::ReduceOp<float, at::native::MeanOps<float, float> >)", "ew"),
    ("MIOpenBatchNormFwdTrainSpatial", "ew"),
)
#: the truth the last writing of a job's seed returned, where its writer returns one (``steps``: the iterations it ran)
TRUTH: dict[int, dict[str, Any]] = {}
FORMS5 = ("rocprof", "rocpd", "fwnvtx", "kineto_blocking", "kineto_tiny", "kineto_slow_gpu", "kineto_snapshot")


def _amd_params(rng: random.Random) -> dict[str, Any]:
    kernels = [(name, round(_log_uniform(rng, 2.0, 5000.0 if kind == "gemm" else 500.0), 3))
               for name, kind in rng.sample(AMD_KERNELS, rng.randint(1, 4))]
    return {"steps": rng.randint(1, 16), "kernels": kernels * rng.randint(1, 6),
            "upload_bytes": rng.choice((0, 1 << 20, 1 << 26)), "upload_staging_ms": rng.choice((0.0, 0.0, 5.0)),
            "read_bytes": rng.choice((0, 4096, 1 << 20)), "step_range": rng.choice(("iteration", "train_step", None)),
            "gap_ms": rng.choice((0.05, 1.0, round(_log_uniform(rng, 0.01, 50.0), 3))),
            "hsa_calls": rng.choice((0, 0, 3))}


def _step_copies(rng: random.Random) -> dict[str, Any]:
    """A rocprof loop's own copy each step (h37-copyforms): none, or a batch inside ``hipMemcpy`` or
    ``hipMemcpyAsync``, pinned or pageable -- staged on the host first at 3-12 GB/s, as HIP stages a pageable buffer
    (a slower "staging" is a wait on GPU work the capture lacks, ``job.phase.unseen_gpu_work``) --, a read-back, and
    the step's sync."""
    nbytes = rng.choice((0, 0, 1 << 20, 48 << 20))
    staged = rng.random() < 0.5
    return {"step_upload_bytes": nbytes,
            "step_staging_ms": round(nbytes / rng.uniform(3e9, 12e9) * 1e3, 3) if staged else 0.0,
            "step_read_bytes": rng.choice((0, 0, 4096, 16 << 20)),
            "step_copy_call": rng.choice(("hipMemcpy", "hipMemcpyAsync")),
            "step_sync": rng.choice(("hipDeviceSynchronize", "hipStreamSynchronize"))}


def _form5_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    if fmt == "rocprof":  # drawn after the rest: the seeds' other draws stay as they were
        return {**_amd_params(rng), **_step_copies(rng)}
    if fmt == "rocpd":
        return _amd_params(rng)
    if fmt == "fwnvtx":
        from synthetic import autograd_nvtx

        # (the writer's truth is a period: two iterations at least)
        return {"form": rng.choice(autograd_nvtx.FORMS), "steps": rng.randint(2, 16), "layers": rng.randint(1, 8),
                "ranks": rng.choice((1, 1, 2))}
    p = _kineto_params(rng)
    p["no_gpu"] = False
    if fmt == "kineto_blocking":  # pageable uploads, reads mid-step and a blocking read or sync at the end
        p["copies"] = [(rng.choice(("pageable", "pageable", "pinned")), _log_uniform(rng, 0.001, 256.0))
                       for _ in range(rng.randint(1, 3))]
        p.update(reads=rng.randint(1, 3), end_sync=rng.choice(("cpu", "synchronize", "item")))
    elif fmt == "kineto_tiny":  # a tiny model paced by its host: the loader's __next__, Python before the first op
        p.update(batch=rng.choice((1, 8, 64)), width=rng.choice((128, 512)), dtype="fp32", graph=False,
                 loader_us=round(rng.uniform(20.0, 200.0), 3), unrecorded_us=round(rng.uniform(5.0, 100.0), 3),
                 python_us=round(rng.uniform(5.0, 60.0), 3), launch_us=round(rng.uniform(8.0, 20.0), 3),
                 steps=rng.randint(2, 20), idle_us=0.0, copies=[("pinned", _log_uniform(rng, 0.001, 0.1))])
    elif fmt == "kineto_slow_gpu":  # data-parallel ranks, the last one's GPU slower
        p.update(ranks=rng.choice((2, 4)), train=True, slow_rank=round(rng.uniform(1.05, 2.5), 3),
                 comm_us=_log_uniform(rng, 20.0, 20_000.0))
    else:  # kineto_snapshot: the trace and a memory snapshot of the same loop, beside it
        p["snapshot"] = {"kind": "training", "iterations": rng.randint(1, 7), "layers": rng.randint(1, 12),
                         "mib": rng.choice((1, 8, 32, 128)), "params": rng.randint(1, 6),
                         "param_mib": rng.choice((4, 64, 256)), "hold_loss": rng.random() < 0.5,
                         "max_entries": rng.choice((None, None, rng.randint(20, 400)))}
    return p


def form5_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS5`: a Kineto form is :data:`KINETO_BASE` with ``params``; the others take their
    writer's ``params``."""
    return _reduced_job(FORMS5, fmt, seed, {**KINETO_BASE, **params} if fmt.startswith("kineto_") else dict(params))


def _write_amd(job: Job, run: str) -> None:
    from synthetic import rocpdtrace, rocproftrace

    p = dict(job.params)
    steps = [[tuple(k) for k in p.pop("kernels")]] * p.pop("steps")
    if job.fmt == "rocprof":
        TRUTH[job.seed] = rocproftrace.write(os.path.join(run, "results.json"), steps, **p)
    else:
        TRUTH[job.seed] = rocpdtrace.write(os.path.join(run, "4242_results.db"), steps, **p)


def _write_kineto_form(job: Job, run: str) -> None:
    p = dict(job.params)
    snap = p.pop("snapshot", None)
    _write_kineto(Job(job.seed, "kineto", p), run)
    if snap:
        _write_snapshot(Job(job.seed, "snapshot", snap), run)


_WRITERS.update({"rocprof": _write_amd, "rocpd": _write_amd, "fwnvtx": _write_fwnvtx,
                 **{f: _write_kineto_form for f in FORMS5 if f.startswith("kineto_")}})


# --------------------------------------------------------------- the forms h37-survey35..37 and their fixes read (h37-randjobs7)
# Drawn by ``random_form7_job`` (``scripts/randjobs.py --forms7``), a stream of its own: rocprofv3 kernel traces with no
# host (``rocprofv3trace.write_kernel_trace``: a training loop's iterations only its busiest stream's period shows),
# serving engines under layer-wise hook markers (``nsysexport.write_layerwise_engine``), Kineto steps whose work runs
# inside torch.compile's own ranges (``_write_compiled``), one pass of a diffusion pipeline: models each called
# once and a denoiser called in a loop under ``with_modules`` (``_write_pipeline``).

FORMS7 = ("rocprof_kernels", "layerwise", "compiled", "pipeline")


def _form7_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    if fmt == "rocprof_kernels":
        return {"iterations": rng.randint(3, 30), "layers": rng.randint(1, 6),
                "kernel_us": round(_log_uniform(rng, 5.0, 2000.0), 3), "comm_calls": rng.randint(0, 3),
                "comm_us": round(_log_uniform(rng, 20.0, 20_000.0), 3), "comm_waited": rng.random() < 0.7,
                "gap_ms": round(_log_uniform(rng, 0.3, 5.0), 3), "inner_gap_us": round(rng.uniform(1.0, 20.0), 3),
                "setup_bursts": rng.randint(0, 200), "setup_idle_ms": round(_log_uniform(rng, 1.0, 2000.0), 3),
                "warmup_ms": rng.choice((0.0, round(_log_uniform(rng, 1.0, 700.0), 3))), "gpus": rng.choice((1, 8)),
                "max_steps": rng.random() < 0.5}
    if fmt == "layerwise":
        return {"steps": rng.randint(2, 20), "layers": rng.randint(1, 8), "layer_ms": round(_log_uniform(rng, 0.05, 5.0), 3),
                "kernels": rng.randint(3, 12), "sched_ms": round(_log_uniform(rng, 0.05, 10.0), 3),
                "thread": rng.choice(("VLLM::EngineCor", "sglang::schedul", "python")),
                "executor_domain": rng.choice((None, None, "TensorRT-LLM")),
                "layer_host_ms": rng.choice((0.0, 0.0, round(_log_uniform(rng, 0.01, 2.0), 3)))}
    if fmt == "compiled":
        return _compiled_params(rng)
    if fmt == "pipeline":
        return _pipeline_params(rng)
    return {}


def form7_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS7` with its writer's ``params``: a reduced job, written out in a test."""
    return _reduced_job(FORMS7, fmt, seed, dict(params))


def _begin_step(r: Any, p: dict[str, Any], n: int, starts: list[float]) -> Any:
    """Open iteration ``n`` on the host of a Kineto writer ``r``: its start noted in ``starts``, the
    ``ProfilerStep#n`` marker where the job draws one (returned, to be closed by the caller, else None), and the
    DataLoader's fetch where the job loads input -- the same opening for every form that steps a Kineto loop."""
    starts.append(r.host_us)
    mark = r.cpu(f"ProfilerStep#{n}", 0.0, cat="user_annotation", advance=False) if p["marker"] == "profiler_step" else None
    r.host_us += 5.0
    r.step_kernels = []
    if p["loader_us"]:
        r.cpu(T.DATALOADER, p["loader_us"], cat="user_annotation")
    return mark


def _end_step(r: Any, n: int, mark: Any) -> None:
    """Close iteration ``n`` as every stepped Kineto form does: the loss read back, the marker closed."""
    r.sync("aten::item")
    r.host_us += 5.0
    if mark is not None:
        _close_mark(r, {"marker": "profiler_step"}, n, mark)


def _write_kineto_loop(r: Any, run: str, starts: list[float]) -> list[float]:
    """Write writer ``r``'s trace into ``run`` under the worker's name and return the iterations' periods (us),
    from which the form's truth takes its step time."""
    stamp = T.BASE_NS + int(T.T0_US * 1000)
    T.write_doc(os.path.join(run, f"{T._worker(r)}.{stamp}.pt.trace.json"), T.trace_doc(r, 1))
    return [b - a for a, b in zip(starts, starts[1:])]


def _write_rocprof_kernels(job: Job, run: str) -> None:
    from synthetic import rocprofv3trace

    TRUTH[job.seed] = rocprofv3trace.write_kernel_trace(os.path.join(run, "908_results.json"), **job.params)


def _write_layerwise(job: Job, run: str) -> None:
    TRUTH[job.seed] = N.write_layerwise_engine(os.path.join(run, "engine.sqlite"), **job.params)


_WRITERS.update({"rocprof_kernels": _write_rocprof_kernels, "layerwise": _write_layerwise})


#: Inductor's generated kernels as a compiled model's trace names them (``xdit_sd35_mi300x_denoise``): each launched by
#: a ``cpu_op`` of the kernel's own name; the backward graph's carry autograd's word (``threshold_backward``)
INDUCTOR_FWD = ("triton_poi_fused_addmm_gelu_view_15", "triton_red_fused_add_addmm_mul_native_layer_norm_split_2",
                "triton_per_fused__to_copy_add_addmm_mean_mul_pow_rsqrt_3", "triton_poi_fused__unsafe_view_clone_11")
INDUCTOR_BWD = ("triton_poi_fused_gelu_backward_threshold_backward_4", "triton_red_fused_native_layer_norm_backward_5",
                "triton_per_fused_sum_view_6")


def _compiled_params(rng: random.Random) -> dict[str, Any]:
    return {"steps": rng.randint(3, 16), "train": rng.random() < 0.5, "layers": rng.randint(1, 6),
            "kernel_us": round(_log_uniform(rng, 3.0, 2000.0), 3), "gemm_us": round(_log_uniform(rng, 5.0, 5000.0), 3),
            # Inductor's Python launcher per kernel (``triton_heuristics.run`` ~40 us on SD 3.5), or the graph's replay
            "launch_us": round(_log_uniform(rng, 5.0, 60.0), 3), "graphs": rng.random() < 0.25,
            "marker": rng.choice(("profiler_step", "profiler_step", "none")),
            "loader_us": rng.choice((0.0, 0.0, round(_log_uniform(rng, 20.0, 20_000.0), 3))),
            "hash": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(52))}


def _write_compiled(job: Job, run: str) -> None:
    """``steps`` iterations of a ``torch.compile``'d model (Inductor, PyTorch 2.x): each ``Torch-Compiled Region``
    call holds AOTAutograd's ``AOTDispatcher Runtime Wrapper Prologue`` and Inductor's ``## Call CompiledFxGraph
    <hash> ##`` around the generated kernels' launches (``layers`` x the fused kernels and an extern GEMM), each
    ``launch_us`` apart (Inductor's Python launcher), or one CUDA graph replay (``graphs``: ``mode="reduce-overhead"``);
    training adds autograd's ``CompiledFunctionBackward`` around the backward graph's call and the optimizer; every
    iteration reads its loss back (``.item()``).  Truth: the iterations and their period (every one alike)."""
    p = job.params
    r = T.Rank(rank=0, pid=4100, device=0)
    starts: list[float] = []
    k_us, g_us = p["kernel_us"], p["gemm_us"]

    def graph_call(tag: str, kernels: list[tuple[str, float]]) -> None:
        region = r.cpu("Torch-Compiled Region: 0/0" if tag == "f" else
                       "autograd::engine::evaluate_function: CompiledFunctionBackward", 0.0, advance=False)
        t0 = r.host_us
        r.cpu("AOTDispatcher Runtime Wrapper Prologue", 8.0)
        call = r.cpu(f"## Call CompiledFxGraph {tag}{p['hash']} ##", 0.0, cat="user_annotation", advance=False)
        t1 = r.host_us
        if p["graphs"]:
            r.graph(kernels, launch_us=20.0)
        else:
            for name, us in kernels:
                if name.startswith("triton_"):
                    r.kernel(name, name, us, launch_us=p["launch_us"])
                else:
                    r.kernel("aten::mm", name, us, launch_us=8.0)
        call["dur"] = round(r.host_us - t1, 3)
        r.cpu("AOTDispatcher Runtime Wrapper Epilogue", 4.0)
        region["dur"] = round(r.host_us - t0, 3)

    fwd = [(T.GEMM_FWD, g_us)] + [(n, k_us) for n in INDUCTOR_FWD]
    bwd = [(T.GEMM_BWD[0], g_us), (T.GEMM_BWD[1], g_us)] + [(n, k_us) for n in INDUCTOR_BWD]
    for n in range(2, 2 + p["steps"]):
        mark = _begin_step(r, p, n, starts)
        graph_call("f", fwd * p["layers"])
        if p["train"]:
            graph_call("b", bwd * p["layers"])
            opt = r.cpu("Optimizer.step#AdamW.step", 0.0, cat="user_annotation", advance=False)
            t = r.host_us
            r.kernel("aten::_foreach_add_", T.SGD_BF16, k_us, launch_us=8.0)
            opt["dur"] = round(r.host_us - t, 3)
        _end_step(r, n, mark)
    period = _write_kineto_loop(r, run, starts)
    TRUTH[job.seed] = {"steps": p["steps"], "step_ms": sum(period) / len(period) / 1e3,
                       "kind": "training" if p["train"] else "inference",
                       "not_program": ("## Call CompiledFxGraph", "AOTDispatcher", "Torch-Compiled Region")}


#: the models a diffusion pipeline calls (``with_modules`` names: the class and its instance number), xDiT's Flux.1
PIPELINE_MODELS = ("CLIPTextModel_0", "T5EncoderModel_0", "AutoencoderKL_0")
PIPELINE_LOOP = "FluxTransformer2DModel_0"
#: each model's GEMM kernel: cuBLAS picks a tile for each model's shapes (the text encoders' 77/512 tokens, the
#: transformer's 4096 latent tokens, the VAE's convolutions as implicit GEMMs)
PIPELINE_GEMMS = {"CLIPTextModel_0": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1",
                  "T5EncoderModel_0": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x64x64_warpgroupsize1x1x1",
                  PIPELINE_LOOP: T.GEMM_FWD,
                  "AutoencoderKL_0": "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64"}


def _pipeline_params(rng: random.Random) -> dict[str, Any]:
    return {"calls": rng.choice((1, 1, 2, rng.randint(3, 12))), "models": rng.randint(1, 3),
            "kernels": rng.randint(2, 40), "kernel_us": round(_log_uniform(rng, 5.0, 2000.0), 3),
            # the denoiser is the pipeline's biggest model (xDiT Flux.1: 326 ms of its call against T5's 31, CLIP's 9.5)
            "loop_scale": round(rng.uniform(1.0, 4.0), 3), "launch_us": round(rng.uniform(5.0, 30.0), 3),
            "between_us": round(_log_uniform(rng, 10.0, 50_000.0), 3), "step_marker": rng.random() < 0.3,
            "read": rng.random() < 0.5}


def _write_pipeline(job: Job, run: str) -> None:
    """One call of a diffusion pipeline under ``with_stack`` and ``with_modules``: each model call one
    ``Module._call_impl`` frame (the same span name for every model) around its ``nn.Module: <Class>_0`` annotation --
    the text encoders (``models`` of them) once each, the scheduler's timesteps read back, the transformer ``calls``
    times (the denoising loop: one iteration a call, the GPU's clock of it each call's first kernel), the VAE once -- ``between_us`` of the pipeline's own Python between calls, the image read back
    at the end (``read``); under one ``ProfilerStep`` where ``step_marker`` (the pass is then the marked step).
    Truth: the denoising iterations where the transformer is called three times or more (the loop the pipeline runs;
    its period, every call alike); one pass else (``steps``: 1 -- no loop to read from calls of different models)."""
    p = job.params
    r = T.Rank(rank=0, pid=4100, device=0)
    call_span = "torch/nn/modules/module.py(1779): _call_impl"
    starts: list[float] = []

    def model(mod: str, kernels: int) -> None:
        outer = r.cpu(call_span, 0.0, cat="python_function", advance=False)
        t = r.host_us
        r.host_us += 3.0
        named = r.cpu(f"nn.Module: {mod}", 0.0, cat="python_function", advance=False)
        gemm = PIPELINE_GEMMS[mod]  # each model's shapes pick their own GEMM kernel
        for i in range(kernels):
            if i % 3 == 0:
                r.kernel("aten::addmm", gemm, p["kernel_us"] * 2.0, launch_us=p["launch_us"])
            else:
                r.kernel("aten::gelu" if i % 3 == 1 else "aten::add", T.RELU_BF16, p["kernel_us"] * 0.3,
                         launch_us=p["launch_us"])
        named["dur"] = round(r.host_us - named["ts"], 3)
        r.host_us += 2.0
        outer["dur"] = round(r.host_us - t, 3)
        r.host_us += p["between_us"]

    mark = r.cpu("ProfilerStep#3", 0.0, cat="user_annotation", advance=False) if p["step_marker"] else None
    r.host_us += 5.0
    r.step_kernels = []
    for mod in PIPELINE_MODELS[:min(p["models"], 2)]:
        model(mod, p["kernels"])
    r.sync("aten::item")  # the scheduler's timesteps read back before the loop (the encoders' work done)
    for _ in range(p["calls"]):
        first = len(r.gpu)
        model(PIPELINE_LOOP, max(2, round(p["kernels"] * p["loop_scale"])))
        starts.append(r.gpu[first]["ts"])  # the call's first kernel: the GPU's clock of the loop, queued or not
        r.sync("aten::item") if p["read"] else None  # the scheduler's step reads the timestep back
    model(PIPELINE_MODELS[2], p["kernels"])
    r.sync("aten::item")
    if mark is not None:
        _close_mark(r, {"marker": "profiler_step"}, 3, mark)
    stamp = T.BASE_NS + int(T.T0_US * 1000)
    T.write_doc(os.path.join(run, f"{T._worker(r)}.{stamp}.pt.trace.json"), T.trace_doc(r, 1))
    loop = p["calls"] >= 3 and not p["step_marker"]
    period = [b - a for a, b in zip(starts, starts[1:])]
    TRUTH[job.seed] = ({"steps": p["calls"], "step_ms": sum(period) / len(period) / 1e3, "kind": "inference"} if loop
                       else {"steps": 1, "kind": "inference"})


_WRITERS.update({"compiled": _write_compiled, "pipeline": _write_pipeline})


# --------------------------------------------------------------- DeepEP's all-to-all beside fp8 grouped GEMMs (h37-randjobs8)
# Drawn by ``random_form8_job`` (``scripts/randjobs.py --forms8``), a stream of its own: an MoE model's steps as
# DeepSeek-V3's published H800 training profile runs them (h37-survey35's reading) -- per MoE layer an attention GEMM
# and the router's gate on the compute stream, DeepEP's dispatch and combine (20 thread blocks, the SMs it keeps for
# NVLink/RDMA) on a stream of their own, the experts' fp8 grouped GEMM (112 blocks) between them; with ``overlap`` two
# micro-batches interleave (DualPipe's), the next one's dispatch running beside this one's GEMM.

FORMS8 = ("deepep",)

#: the kernels as DeepSeek's build names them (``dpsk::``), or open DeepEP's (``deep_ep::``), and DeepGEMM-like fp8
#: grouped GEMMs as CUTLASS device kernels
DEEPEP_GEMM = ("void cutlass::device_kernel<dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel>"
               "(dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel::Params)")
DEEPEP_ATTN = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"
DEEPEP_GATE = "void cuda::clean_and_count_expert<512>(int*, int)"


def _deepep_kernels(internode: bool, own_build: bool) -> tuple[str, str]:
    ns = ("dpsk::ep::" if own_build else "deep_ep::") + ("internode" if internode else "intranode")
    return (f"void {ns}::dispatch<false, 8, true, 8>(int4*, float*, long*, float*)",
            f"void {ns}::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, int4 const*)")


def _form8_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    return {"steps": rng.randint(3, 12), "layers": rng.randint(1, 6), "micro": rng.choice((1, 2)),
            "gemm_us": round(_log_uniform(rng, 20.0, 3000.0), 3), "a2a_us": round(_log_uniform(rng, 10.0, 3000.0), 3),
            "attn_us": round(_log_uniform(rng, 10.0, 2000.0), 3), "train": rng.random() < 0.5,
            "internode": rng.random() < 0.5, "own_build": rng.random() < 0.5,
            "marker": rng.choice(("profiler_step", "profiler_step", "none")),
            "loader_us": rng.choice((0.0, 0.0, round(_log_uniform(rng, 20.0, 20_000.0), 3)))}


def form8_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS8` with its writer's ``params``: a reduced job, written out in a test."""
    return _reduced_job(FORMS8, fmt, seed, dict(params))


def _write_deepep(job: Job, run: str) -> None:
    """``steps`` iterations of an MoE model on one H100 rank (a kernel trace with its host): per layer and
    micro-batch (``micro``) the attention GEMM and the gate on the compute stream, DeepEP's dispatch on the
    communication stream once the gate is done, the fp8 grouped GEMM (112 of 132 SMs) once its tokens arrived, the
    combine after it; with 2 micro-batches the second's dispatch runs beside the first's GEMM.  Training runs the
    layers again for the backward (the all-to-alls swapped).  Every iteration reads its loss back.  Truth: the
    iterations, their period, and what the work is by construction -- the all-to-all a collective, the GEMMs on
    Tensor Cores (``no_rules``: no mixed-precision or Tensor Core advice), and the grouped GEMM's SMs left idle only
    while it ran with no all-to-all beside it (``small_grid_bound_ms``: no small-grid saving beyond its time alone)."""
    p = job.params
    r = T.Rank(rank=0, pid=4100, device=0)
    dispatch, combine = _deepep_kernels(p["internode"], p["own_build"])
    comm = T.NCCL_STREAM
    starts: list[float] = []
    gemms: list[tuple[float, float]] = []
    a2a: list[tuple[float, float]] = []
    gates: list[tuple[float, float]] = []  # the router's small kernels (64 blocks): their time counts in the bound

    def moe_layer(first: str, second: str) -> None:
        for _ in range(p["micro"]):
            r.kernel("aten::mm", DEEPEP_ATTN, p["attn_us"], launch_us=8.0)
        gate_end = []
        for _ in range(p["micro"]):
            gates.append(r.kernel("moe::gate", DEEPEP_GATE, 4.0, launch_us=6.0, grid=(64, 1, 1)))
            gate_end.append(gates[-1][1])
        sent = [r.kernel("deep_ep::dispatch", first, p["a2a_us"], launch_us=9.0, stream=comm, grid=(20, 1, 1),
                         not_before=g) for g in gate_end]
        a2a.extend(sent)
        done = []
        for s in sent:
            done.append(r.kernel("dpsk::grouped_gemm", DEEPEP_GEMM, p["gemm_us"], launch_us=9.0, grid=(112, 1, 1),
                                 not_before=s[1]))
            gemms.append(done[-1])
        for d in done:
            a2a.append(r.kernel("deep_ep::combine", second, p["a2a_us"], launch_us=9.0, stream=comm,
                                grid=(20, 1, 1), not_before=d[1]))
        r.streams[T.COMPUTE_STREAM] = max(r.streams[T.COMPUTE_STREAM], r.streams[comm])  # the next layer waits

    for n in range(2, 2 + p["steps"]):
        mark = _begin_step(r, p, n, starts)
        for _ in range(p["layers"]):
            moe_layer(dispatch, combine)
        if p["train"]:
            for _ in range(p["layers"]):
                moe_layer(combine, dispatch)
            r.kernel("aten::_foreach_add_", T.SGD_BF16, 20.0, launch_us=8.0)
        _end_step(r, n, mark)
    period = _write_kineto_loop(r, run, starts)
    alone = sum(max(0.0, (e - s) - sum(max(0.0, min(e, b) - max(s, a)) for a, b in a2a)) for s, e in gemms + gates)
    TRUTH[job.seed] = {"steps": p["steps"], "step_ms": sum(period) / len(period) / 1e3,
                       "kind": "training" if p["train"] else "inference", "exchange": "experts",
                       "no_rules": ("mixed_precision_off", "tensor_core_unused"),
                       "small_grid_bound_ms": alone / p["steps"] / 1e3}


_WRITERS.update({"deepep": _write_deepep})


# --------------------------------------------------------------- an NCCL all-to-all of each kind of exchange (h37-a2afix)
# Drawn by ``random_form9_job`` (``scripts/randjobs.py --forms9``), a stream of its own: one rank whose all-to-all is
# NCCL's point-to-point kernel under ``c10d::alltoall_base_`` (its name says no type, the host op does), once per
# layer and direction, exposed (the next kernel needs its data), between the work its kind runs beside it -- a
# recommender's embedding lookups and dense GEMM, an MoE layer's router top-k and grouped GEMM, or sequence
# parallelism's QKV projection and attention.  Truth: the kind of the exchange, so each report's fix fits it.

FORMS9 = ("a2a",)
EXCHANGE_KINDS = ("embeddings", "experts", "sequence")

#: the kernels beside each kind's all-to-all, forward (before, after) and backward (before, after), as their libraries
#: name them: FBGEMM's table-batched lookup, ATen's top-k and a Triton MoE GEMM, FlashAttention 2
_EXCHANGE_KERNELS = {
    "embeddings": (("void split_embedding_codegen_forward_unweighted_kernel<float, float, int>(...)", T.GEMM_FWD),
                   (T.GEMM_BWD[0], "void split_embedding_backward_codegen_sgd_unweighted_kernel_cta_per_row_1<float>()")),
    "experts": (("void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(...)", "fused_moe_kernel"),
                ("fused_moe_kernel", "fused_moe_kernel")),
    "sequence": ((T.GEMM_FWD, "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
                  "cutlass::bfloat16_t>, false, true, false, false, true, true, false, false>(Flash_fwd_params)"),
                 ("void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8>>()",
                  T.GEMM_BWD[0])),
}


def _a2a_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    """One rank's all-to-all: its kind of exchange, 3-10 steps of 1-4 layers, the exchange's and its neighbours'
    times, training or not."""
    return {"kind": rng.choice(EXCHANGE_KINDS), "steps": rng.randint(3, 10), "layers": rng.randint(1, 4),
            "a2a_us": round(_log_uniform(rng, 50.0, 3000.0), 3), "work_us": round(_log_uniform(rng, 20.0, 1000.0), 3),
            "train": rng.random() < 0.5, "marker": "profiler_step", "loader_us": 0.0}


def form9_job(seed: int = 0, **params: Any) -> Job:
    """A job of :data:`FORMS9`'s form with its writer's ``params``: a reduced job, written out in a test."""
    return Job(seed, FORMS9[0], dict(params))


def _write_a2a(job: Job, run: str) -> None:
    """``steps`` iterations on one H100 rank: per layer the kind's kernel before the all-to-all, the all-to-all on
    the communication stream once it is done, the kind's kernel after it once the data arrived; training runs the
    layers again backward (the backward's kernels) and an optimizer step.  Every iteration reads its loss back."""
    p = job.params
    r = T.Rank(rank=0, pid=4200, device=0)
    forward, backward = _EXCHANGE_KERNELS[p["kind"]]
    starts: list[float] = []

    def layer(before: str, after: str) -> None:
        ready = r.kernel("aten::mm", before, p["work_us"])[1]
        r.cpu("nccl:all_to_all", 12.0, cat="user_annotation", advance=False)
        done = r.kernel("c10d::alltoall_base_", T.NCCL_SENDRECV, p["a2a_us"], stream=T.NCCL_STREAM, not_before=ready)[1]
        r.kernel("aten::mm", after, p["work_us"], not_before=done)

    for n in range(2, 2 + p["steps"]):
        mark = _begin_step(r, p, n, starts)
        for _ in range(p["layers"]):
            layer(*forward)
        if p["train"]:
            for _ in range(p["layers"]):
                layer(*backward)
            r.kernel("aten::_foreach_add_", T.SGD_BF16, 20.0, launch_us=8.0)
        _end_step(r, n, mark)
    period = _write_kineto_loop(r, run, starts)
    TRUTH[job.seed] = {"steps": p["steps"], "step_ms": sum(period) / len(period) / 1e3,
                       "kind": "training" if p["train"] else "inference", "exchange": p["kind"]}


_WRITERS.update({"a2a": _write_a2a})


# --------------------------------------------------------------- the forms the last surveys kept (h37-randjobs9)
# Drawn by ``random_form10_job`` (``scripts/randjobs.py --forms10``), a stream of its own: attention computed op by op
# (bmm -> scale -> softmax -> bmm per layer, h37-eagerattn) or fused (one FlashAttention kernel), in training or
# inference; a PyTorch inference step that prepares its own input in traced Python before its first op (a pipeline's
# ``preprocess``, ``timesformer_h100_video``); a JAX loop whose program marks fetching its batch with its own TraceMe
# range (``jax.profiler.TraceAnnotation("get_batch")``).

FORMS10 = ("attention", "preprocess", "jax_fetch", "nsys_pyprof")

#: eager attention's kernels as ATen names them on an H100 (``tests/rules/test_unfused_attention.py``'s): the batched
#: matmul (cuBLAS's CUTLASS kernel), the scale, the softmax, its backward; FlashAttention's fused forward/backward
ATTN_BMM = "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8>(Params)"
ATTN_SCALE = ("void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<c10::BFloat16, "
              "c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >"
              "(int, T2, T3)")
ATTN_SOFTMAX = ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, "
                "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(T4*, T2 const*, int)")
ATTN_SOFTMAX_BWD = ("void at::native::(anonymous namespace)::cunn_SoftMaxBackward<8, c10::BFloat16, float, "
                    "c10::BFloat16, at::native::(anonymous namespace)::SoftMaxBackwardEpilogue>(T4*, T2 const*, int)")
ATTN_FLASH = ("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, "
              "Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false>(Flash_fwd_params)")
ATTN_FLASH_BWD = ("void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, "
                  "false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, "
                  "true, false, false, false, false>(Flash_bwd_params)")
ATTN_LOSS = ("void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(T1*)")
#: a pipeline's input preparation as ``with_stack`` names its frames (``timesformer_h100_video``), and a library's own
#: set-up before the first op that prepares no input (``xdit_flux_mi300x_denoise``'s)
PREP_FRAME = "transformers/pipelines/video_classification.py(129): preprocess"
PREP_INNER = ("transformers/image_processing_utils.py(40): __call__", "transformers/pipelines/video_classification.py(174): read_video_pyav")
SETUP_FRAME = "diffusers/pipelines/pipeline_utils.py(1135): _execution_device"


def _attention_params(rng: random.Random) -> dict[str, Any]:
    layers = rng.randint(1, 8)
    return {"steps": rng.randint(3, 12), "train": rng.random() < 0.5, "layers": layers,
            "eager": rng.choice((0, layers, layers, rng.randint(0, layers))),  # the layers computing it op by op
            "tokens": rng.choice((128, 512, 1024, 3137)), "heads": rng.choice((8, 16, 96)), "dims": rng.random() < 0.5,
            "bmm_us": round(_log_uniform(rng, 5.0, 2000.0), 3), "softmax_us": round(_log_uniform(rng, 2.0, 2000.0), 3),
            "proj_us": round(_log_uniform(rng, 5.0, 2000.0), 3), "head": rng.random() < 0.5,
            "marker": rng.choice(("profiler_step", "profiler_step", "none")),
            "loader_us": rng.choice((0.0, 0.0, round(_log_uniform(rng, 20.0, 20_000.0), 3)))}


def _preprocess_params(rng: random.Random) -> dict[str, Any]:
    return {"steps": rng.randint(3, 12), "prep_us": round(_log_uniform(rng, 100.0, 300_000.0), 3),
            "inner": rng.random() < 0.7, "setup_us": rng.choice((0.0, 0.0, round(_log_uniform(rng, 50.0, 20_000.0), 3))),
            "untraced_us": rng.choice((0.0, round(_log_uniform(rng, 5.0, 2000.0), 3))),
            "kernels": rng.randint(2, 30), "kernel_us": round(_log_uniform(rng, 5.0, 5000.0), 3),
            "upload_mb": rng.choice((0.0, 0.5, 16.0)), "marker": rng.choice(("profiler_step", "profiler_step", "none"))}


def _jax_fetch_params(rng: random.Random) -> dict[str, Any]:
    return {"steps": rng.randint(3, 12), "layers": rng.randint(1, 6), "scale": round(_log_uniform(rng, 0.01, 4.0), 4),
            "fetch_us": round(_log_uniform(rng, 50.0, 100_000.0), 3), "range": rng.choice(("get_batch", "load_batch", "next_batch")),
            "put": rng.random() < 0.7, "read": rng.random() < 0.7, "step_annotation": rng.random() < 0.5,
            "module_events": rng.random() < 0.7}


def _pyprof_params(rng: random.Random) -> dict[str, Any]:
    return {"ops": rng.randint(2, 400), "kernel_us": round(_log_uniform(rng, 2.0, 500.0), 3),
            "build_ms": round(_log_uniform(rng, 10.0, 2000.0), 3), "context_ms": round(_log_uniform(rng, 100.0, 2000.0), 3),
            "context_recorded": rng.random() < 0.5, "module_ms": round(_log_uniform(rng, 5.0, 1000.0), 3),
            "open_ranges": rng.choice((0, rng.randint(1, 800))), "tail_ms": round(_log_uniform(rng, 1.0, 2000.0), 3)}


def _form10_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    return {"attention": _attention_params, "preprocess": _preprocess_params, "jax_fetch": _jax_fetch_params,
            "nsys_pyprof": _pyprof_params}[fmt](rng)


def form10_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS10` with its writer's ``params``: a reduced job, written out in a test."""
    return _reduced_job(FORMS10, fmt, seed, dict(params))


def _write_attention(job: Job, run: str) -> None:
    """``steps`` iterations of a ``layers``-layer transformer on one H100: per layer a projection GEMM, attention --
    op by op in the first ``eager`` layers (``bmm`` Q @ K^T, the scale, the softmax, ``bmm`` P @ V; shapes recorded
    where ``dims``) or one FlashAttention kernel -- and an output projection; with ``head`` a classifier's matmul,
    softmax and loss once a step (no attention); training runs each layer's backward in reverse (eager: the two
    bmm gradients, the softmax's backward, the scale's, two more; fused: FlashAttention's backward) and an optimizer.
    Every iteration reads its loss back.  Truth: the iterations and their period; ``unfused_attention`` where two
    layers or more are eager and the kernels between their matmuls are worth a mention (``fires_if_saving_ms``, a
    step: the walk holds it to the rule's own bar), never where none is; its saving at most the kernels between each run's matmuls plus the
    score matrix ([heads, N, N] bf16) written and read once at the GPU's bandwidth (capped by the matmuls), a step."""
    p = job.params
    r = T.Rank(rank=0, pid=4100, device=0)
    starts: list[float] = []
    b, n = p["heads"], p["tokens"]
    dims = (lambda shapes: {"Input Dims": shapes, "Input type": ["c10::BFloat16"] * 2}) if p["dims"] else (lambda s: None)
    # no kernel beats the GPU: each bmm at least its FLOPs at 70% of the bf16 peak, the softmax at least the score
    # matrix read and written once at the memory's bandwidth
    bmm = max(p["bmm_us"], 2 * b * n * n * 64 / (0.7 * PEAK["bf16"]) * 1e6)
    sm = max(p["softmax_us"], 2 * b * n * n * BYTES["bf16"] / HBM_BPS * 1e6)
    proj = p["proj_us"]
    scale = round(sm * 0.2, 3)

    def layer(eager: bool) -> None:
        r.kernel("aten::linear", T.GEMM_FWD, proj, launch_us=8.0)
        if eager:
            r.kernel("aten::bmm", ATTN_BMM, bmm, args=dims([[b, n, 64], [b, 64, n]]))
            r.kernel("aten::mul", ATTN_SCALE, scale)
            r.kernel("aten::softmax", ATTN_SOFTMAX, sm)
            r.kernel("aten::bmm", ATTN_BMM, bmm, args=dims([[b, n, n], [b, n, 64]]))
        else:
            r.kernel("aten::_flash_attention_forward", ATTN_FLASH, bmm)
        r.kernel("aten::linear", T.GEMM_FWD, proj, launch_us=8.0)

    def layer_backward(eager: bool) -> None:
        r.kernel("autograd::engine::evaluate_function: AddmmBackward0", T.GEMM_BWD[0], proj)
        if eager:
            for name, us in ((ATTN_BMM, bmm), (ATTN_BMM, bmm), (ATTN_SOFTMAX_BWD, sm), (ATTN_SCALE, scale),
                             (ATTN_BMM, bmm), (ATTN_BMM, bmm)):
                r.kernel("autograd::engine::evaluate_function: BmmBackward0", name, us)
        else:
            r.kernel("autograd::engine::evaluate_function: ScaledDotProductFlashAttentionBackward0", ATTN_FLASH_BWD,
                     bmm * 2.5)
        r.kernel("autograd::engine::evaluate_function: AddmmBackward0", T.GEMM_BWD[1], proj)

    eager_at = [i < p["eager"] for i in range(p["layers"])]
    for step in range(2, 2 + p["steps"]):
        mark = _begin_step(r, p, step, starts)
        for e in eager_at:
            layer(e)
        if p["head"]:
            r.kernel("aten::linear", T.GEMM_FWD, proj, launch_us=8.0)
            r.kernel("aten::softmax", ATTN_SOFTMAX, sm * 0.1)
            r.kernel("aten::nll_loss", ATTN_LOSS, 5.0)
        if p["train"]:
            for e in reversed(eager_at):
                layer_backward(e)
            r.kernel("aten::_foreach_add_", T.SGD_BF16, proj, launch_us=8.0)
        _end_step(r, step, mark)
    period = _write_kineto_loop(r, run, starts)
    runs = p["eager"] * (2 if p["train"] else 1)  # each eager layer's run, its backward's too
    between = p["eager"] * ((scale + sm) + ((sm + scale) if p["train"] else 0.0))
    trip = min(2 * b * n * n * BYTES["bf16"] / HBM_BPS * 1e6, 2 * bmm) * runs if p["dims"] else 0.0
    truth: dict[str, Any] = {"steps": p["steps"], "step_ms": sum(period) / len(period) / 1e3,
                             "kind": "training" if p["train"] else "inference",
                             "saving_bound_ms": {"unfused_attention": (between + trip) / 1e3}}
    if p["eager"] >= 2:  # it must fire where what it saves is worth a mention
        truth["fires_if_saving_ms"] = {"unfused_attention": between / 1e3}
    elif p["eager"] == 0:
        truth["no_rules"] = ("unfused_attention",)
    TRUTH[job.seed] = truth


def _write_preprocess(job: Job, run: str) -> None:
    """``steps`` inference calls of a pipeline under ``with_stack``: each step's host first runs ``untraced_us`` of
    Python the profiler records nothing of, a library's own set-up frame (``setup_us``: no input), then the pipeline's
    ``preprocess`` frame (``prep_us``; with ``inner``, the image processor's ``__call__`` and the video decoding
    inside it), then the forward: the input uploaded (``upload_mb``, pinned), ``kernels`` kernels, the logits read
    back.  Truth: the iterations and their period; the input wait, where the report finds one, is the program's own
    preparation (``preprocess`` named; no untraced loader) where that frame holds most of the time before the first
    op that is no set-up, and never more than the frame's time and the untraced time."""
    p = job.params
    r = T.Rank(rank=0, pid=4100, device=0)
    starts: list[float] = []
    for step in range(2, 2 + p["steps"]):
        mark = _begin_step(r, {**p, "loader_us": 0.0}, step, starts)
        r.host_us += p["untraced_us"]
        if p["setup_us"]:
            r.cpu(SETUP_FRAME, p["setup_us"], cat="python_function")
        prep = r.cpu(PREP_FRAME, p["prep_us"], cat="python_function", advance=False)
        if p["inner"]:
            t = prep["ts"] + 1.0
            for name, share in zip(PREP_INNER, (0.8, 0.15)):
                e = r.cpu(name, round(p["prep_us"] * share, 3), cat="python_function", advance=False)
                e["ts"] = round(t, 3)
                t += p["prep_us"] * share
        r.host_us += p["prep_us"]
        r.cpu("aten::lift_fresh", 4.0)
        if p["upload_mb"]:
            r.copy_h2d(p["upload_mb"], p["upload_mb"] * 1e6 / COPY_BPS["pinned"] * 1.048576)
        for i in range(p["kernels"]):
            r.kernel("aten::linear" if i % 2 == 0 else "aten::gelu", T.GEMM_FWD if i % 2 == 0 else T.RELU_BF16,
                     p["kernel_us"] if i % 2 == 0 else p["kernel_us"] * 0.2)
        _end_step(r, step, mark)
    period = _write_kineto_loop(r, run, starts)
    truth: dict[str, Any] = {"steps": p["steps"], "step_ms": sum(period) / len(period) / 1e3, "kind": "inference",
                             "input_bound_ms": (p["prep_us"] + p["untraced_us"] + 20.0) / 1e3}
    if p["prep_us"] >= 0.6 * (p["prep_us"] + p["untraced_us"]):  # the frame holds most of the input time
        truth.update(input_words=("prepares its input itself", "preprocess (video_classification.py:129)"),
                     input_not_words=("stands for an untraced loader",))
    TRUTH[job.seed] = truth


def _write_jax_fetch(job: Job, run: str) -> None:
    """``steps`` iterations of a jitted bf16 MLP (``layers``, times scaled by ``scale``) whose program fetches each
    batch inside its own ``jax.profiler.TraceAnnotation(range)`` (``fetch_us`` of host work), then puts it on the
    device (``put``), runs the step and reads the loss back (``read``: else the next fetch overlaps the GPU's work).
    Truth: the input wait, where the report finds one, is the program's own batch-fetch range -- its input
    pipeline's time, never an untraced loader's -- at most the fetch's and the put's time a step (the batch put on
    the device is input too, as JAX's words for the wait say)."""
    from synthetic import jaxcapture as J
    from synthetic import xla_kernels as X

    p = job.params
    cap = J.JaxCapture(hostname="node0", seed=job.seed, step_annotation=p["step_annotation"],
                       module_events=p["module_events"], command_buffers=False)
    kernels = [replace_us(k, p["scale"]) for k in X.mlp_bf16_step(p["layers"], command_buffers=False)]
    put_us = 0.0  # the longest put: from its call to its copy's end on the GPU (the input's, by JAX's meaning)
    for _ in range(p["steps"]):
        if cap.step_annotation:
            cap.begin_step()
        with cap.annotation(p["range"]):
            cap.host_work(p["fetch_us"])
        t0 = cap.t
        puts = (cap.device_put(1 << 22),) if p["put"] else ()
        put_us = max([put_us] + [(tr.dev_end - t0) / J.US for tr in puts])
        cap.execute(kernels, inputs=puts)
        if p["read"]:
            cap.to_host(4)
        if cap.step_annotation:
            cap.end_step()
    cap.finish().write(os.path.join(run, "plugins", "profile", J.SESSION, "node0.xplane.pb"))
    # the longest fetch as the capture records it: the host's work is jittered (``JaxCapture.jitter``, 2% sigma), so the
    # drawn ``fetch_us`` is no bound on it (seed 41178: 40.5 ms drawn, a 41.93 ms ``next_batch`` range; h37-forms10in)
    fetch_us = max(t1 - t0 for name, t0, t1 in cap.annotations if name == p["range"]) / J.US
    TRUTH[job.seed] = {"input_source": "pipeline", "input_not_words": ("stands for an untraced loader",),
                       "input_bound_ms": (fetch_us + put_us + 50.0) / 1e3}


def _write_nsys_pyprof(job: Job, run: str) -> None:
    TRUTH[job.seed] = N.write_pyprof_forward(os.path.join(run, "net.sqlite"), **job.params)


_WRITERS.update({"attention": _write_attention, "preprocess": _write_preprocess, "jax_fetch": _write_jax_fetch,
                 "nsys_pyprof": _write_nsys_pyprof})


# ------------------------------------------------------------- session 21's forms (h37-randjobs11)
# Drawn by ``random_form11_job`` (``scripts/randjobs.py --forms11``), a stream of its own: Nsight exports whose only
# NVTX is a library's vocabulary (``NsysJob.range_domain``; h37-nvtxvocab), native CUDA loops timing each kernel with
# events and syncing outside any framework op (``nsysexport.write_event_timed_epochs``, ``write_synced_kernels``;
# h37-survey41), one unmarked Kineto pass and a kernel trace with no host (the windows h37-words20 named "the pass").

#: each library's (or program's) NVTX words as it pushes them (tests/job/test_nvtx_vocabularies.py: their sources),
#: the domain it pushes them in, and the job's kind they say ("not training": a numerical method's backward direction;
#: TensorRT-LLM's method names say serving only in its own domain, :data:`NAMED_BY_DOMAIN`)
VOCAB11: dict[str, tuple[tuple[str, ...], str | None, str]] = {
    "sglang": (("scheduler.recv_requests", "scheduler.process_input_requests", "scheduler.get_next_batch_to_run",
                "scheduler.run_batch", "scheduler.process_batch_result"), None, "serving"),
    "fwd_bwd_opt": (("data", "fwd", "bwd", "opt"), None, "training"),
    "FWD_BWD": (("FWD", "BWD"), None, "training"),
    "optim_step": (("forward", "loss", "optim_step"), None, "training"),
    "clip_grad": (("forward", "loss", "clip_grad_norm"), None, "training"),
    "backward_fft": (("forward FFT", "pointwise", "backward FFT"), None, "not training"),
    "fft_bwd": (("fft_fwd", "pointwise", "fft_bwd"), None, "not training"),
    "vllm": (("gpu_model_runner: preprocess", "gpu_model_runner: forward", "gpu_model_runner: postprocess",
              "gpu_model_runner: sample", "gpu_model_runner: bookkeep"), None, "serving"),
    "deepspeed": (("DeepSpeedEngine.forward", "DeepSpeedEngine.backward", "DeepSpeedZeroOptimizer_Stage3.step"),
                  "DeepSpeed", "training"),
    "trtllm": (("_fetch_new_requests", "_schedule", "_forward_step", "_sample_async", "_update_requests"),
               "TensorRT-LLM", "serving"),
}
NAMED_BY_DOMAIN = frozenset({"trtllm"})
#: NVIDIA GPUs a native loop is drawn on (``synthetic.nsysexport``'s): a Turing card and two Amperes
NATIVE_GPUS = ("RTX_2080", "A100_SXM4_40GB", "RTX_3070_TI")
FORMS11 = ("nsys_vocab", "event_timed", "synced_kernels", "kineto_pass", "hostless")


def _vocab_params(rng: random.Random) -> dict[str, Any]:
    """An Nsight job of :func:`_nsys_params`'s sizes whose only ranges are one vocabulary's (no ATen op range, no
    communication range), 1-16 iterations (one: a single unmarked pass), pushed in the library's domain or, at
    random, in the default one."""
    p = _nsys_params(rng)
    del p["training_kernels"]  # the vocabulary's words say the kind: its loop's kernels as before h37-gen70
    vocab = rng.choice(sorted(VOCAB11))
    words, domain, _ = VOCAB11[vocab]
    # (a replayed graph launches its ops at once: no host boundary between two ranges, so none but the first written)
    p.update(vocab=vocab, extra_ranges=words, range_domain=domain if rng.random() < 0.7 else None,
             autograd_nvtx=False, comm_range=None, step_range=rng.choice((None, None, "step {k}")),
             steps=rng.choice((1, rng.randint(2, 16))), ops=max(p["ops"], len(words) + 1), setup_ms=0.0,
             graph_mode=rng.choice((None, None, "node")))
    return _paced(p)


def _form11_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    if fmt == "nsys_vocab":
        return _vocab_params(rng)
    if fmt == "event_timed":
        return {"epochs": rng.randint(2, 120), "print_every": rng.randint(1, 20),
                "latency_us": round(_log_uniform(rng, 1.0, 400.0), 3), "gpu": rng.choice(NATIVE_GPUS)}
    if fmt == "synced_kernels":
        return {"iterations": rng.randint(1, 10), "kernels": rng.randint(1, 200),
                "kernel_us": round(_log_uniform(rng, 2.0, 5000.0), 3), "launch_us": round(rng.uniform(3.0, 30.0), 3),
                "latency_us": round(_log_uniform(rng, 1.0, 200.0), 3), "sync": rng.random() < 0.7,
                "gpu": rng.choice(NATIVE_GPUS)}
    if fmt == "kineto_pass":  # one unmarked pass (or a few unmarked iterations) of a Kineto job
        p = _kineto_params(rng)
        p.update(steps=rng.choice((1, 1, rng.randint(2, 4))), marker="none", no_gpu=False)
        return p
    # hostless: rocprofv3's kernel trace alone, one to a few iterations, an MI300X or an MI350X
    p = _form7_params(rng, "rocprof_kernels")
    product, gfx, cus = rng.choice((("AMD Instinct MI300X", "gfx942", 304), ("AMD Instinct MI350X", "gfx950", 256)))
    p.update(iterations=rng.choice((1, 1, 2, rng.randint(3, 8))), product=product, gfx=gfx, cu_count=cus)
    return p


def form11_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS11` with its writer's ``params``: a reduced job, written out in a test."""
    return _reduced_job(FORMS11, fmt, seed, dict(params))


def _write_nsys_vocab(job: Job, run: str) -> None:
    """The export, and its truth: the iterations and their period (where two or more), the kind the words say."""
    p = dict(job.params)
    vocab = p.pop("vocab")
    kind = VOCAB11[vocab][2] if vocab not in NAMED_BY_DOMAIN or p["range_domain"] else None
    p["kernel"] = getattr(N, p["kernel"])
    p["extra_ranges"] = tuple(p["extra_ranges"])
    t = N.write(os.path.join(run, "job.sqlite"), N.NsysJob(seed=job.seed, **p))
    TRUTH[job.seed] = {"steps": t.steps, "step_ms": t.step_ms, **({"job_kind": kind} if kind else {})}


def _write_event_timed(job: Job, run: str) -> None:
    """The native loop and its truth: the syncs the program makes, by their own calls' names."""
    p = dict(job.params)
    truth = N.write_event_timed_epochs(os.path.join(run, "regression.sqlite"), gpu=getattr(N, p.pop("gpu")), **p)
    TRUTH[job.seed] = {"sync_names": tuple(truth["syncs_per_epoch"])}


def _write_synced_kernels(job: Job, run: str) -> None:
    """The offload loop and its truth: where it waits for each kernel, the waits are its own ``cuStreamSynchronize``."""
    p = dict(job.params)
    N.write_synced_kernels(os.path.join(run, "offload.sqlite"), gpu=getattr(N, p.pop("gpu")), **p)
    TRUTH[job.seed] = {"sync_names": ("cuStreamSynchronize",)}


_WRITERS.update({"nsys_vocab": _write_nsys_vocab, "event_timed": _write_event_timed,
                 "synced_kernels": _write_synced_kernels, "kineto_pass": _write_kineto_form,
                 "hostless": _write_rocprof_kernels})


# ------------------------------------------------------------- session 22's forms (h37-randjobs12)
# Drawn by ``random_form12_job`` (``scripts/randjobs.py --forms12``), a stream of its own: a JAX loop fed by grain
# (``jaxcapture.grain_loop``; h37-inputwait), one NVTX range framing the measured passes of a benchmark after its
# warm-ups (``nsysexport.write_framed_passes``; h37-survey42), DeepSpeed's NVTX ranges in either domain under gradient
# accumulation, and a program's evaluation ranges alone or beside a fit (``tests/job/test_library_nvtx.py``; h37-nvtx22).

FORMS12 = ("grain", "framed_pass", "ds_nvtx", "eval_nvtx")
#: DeepSpeed's ``instrument_w_nvtx`` qualnames: the engine's once a micro-batch, ZeRO-3's optimizer step once an
#: iteration (deepspeedai/DeepSpeed ``runtime/engine.py``, ``runtime/zero/stage3.py``)
DS_MICRO = ("DeepSpeedEngine.forward", "DeepSpeedEngine.backward")
DS_STEP = "DeepSpeedZeroOptimizer_Stage3.step"
#: a program's own evaluation ranges (nothing trains: forward passes) and a fit that validates (training)
EVAL_RANGES = {("data", "eval_step"): "inference", ("validation_step",): "inference",
               ("load", "evaluate", "metrics"): "inference",
               ("forward", "backward", "optimizer_step", "validation_step"): "training"}
#: the framed benchmark's GPUs (``synthetic.nsysexport``'s): its own A100 PCIe, an SXM A100, a Turing and an Ampere card
FRAMED_GPUS = ("A100_80GB_PCIE", "A100_SXM4_80GB", "RTX_2080", "RTX_3070_TI")


def _grain_params(rng: random.Random) -> dict[str, Any]:
    """A grain-fed JAX loop: 2-12 steps of a 1-6 layer bf16 MLP at a random scale, on an H100 or an A100, grain's
    take and the loop's other Python of random lengths, the prefetch thread recorded or not."""
    return {"steps": rng.randint(2, 12), "layers": rng.randint(1, 6), "scale": round(_log_uniform(rng, 0.05, 20.0), 4),
            "take_us": round(_log_uniform(rng, 10.0, 5000.0), 3), "other_us": round(_log_uniform(rng, 5.0, 5000.0), 3),
            "prefetch_thread": rng.random() < 0.6, "command_buffers": rng.random() < 0.5,
            "gpu": rng.choice(("H100", "A100"))}


def _framed_params(rng: random.Random) -> dict[str, Any]:
    """A benchmark's 0-3 warm-up passes and 1-4 measured passes in one NVTX range (each measured pass in its own range
    too at random; a shape-tuned first kernel per pass; forward/backward phase ranges: a training loop)."""
    kernels = rng.randint(4, 64)
    return {"warmup": rng.randint(0, 3), "measured": rng.randint(1, 4), "kernels": kernels,
            # each kernel far longer than its 6 us launch: the GPU-bound pass the writer models
            "pass_ms": round(max(_log_uniform(rng, 5.0, 80.0), kernels * 0.05), 3),
            "frame": rng.choice(("resnet50_inference", "measurement", "timed", "benchmark")),
            "ranged_passes": rng.random() < 0.2, "vary": rng.random() < 0.3, "phases": rng.random() < 0.2,
            "context_ms": round(rng.uniform(20.0, 300.0), 3), "gpu": rng.choice(FRAMED_GPUS)}


def _library_nvtx_params(rng: random.Random, fmt: str, stage: int = 3) -> dict[str, Any]:
    """An Nsight job of :func:`_nsys_params`'s sizes and ranks whose only NVTX is DeepSpeed's (``ds_nvtx``:
    accumulation 1-8, the default domain or ``DeepSpeed``; ZeRO ``stage`` 3 closes each iteration with its optimizer's
    ``step`` range, 1 and 2 with the update's kernels in no range, accumulation 1, 2, 4 or 2-8) or a program's
    evaluation ranges (``eval_nvtx``).  Stage 3 draws as before: ``--forms12``'s seeds are unchanged."""
    p = _nsys_params(rng)
    del p["training_kernels"]  # the library's ranges say the kind: its loop's kernels as before h37-gen70
    if fmt == "ds_nvtx":
        gas = rng.choice((1, 1, rng.randint(2, 8)) if stage == 3 else (1, 2, 4, rng.randint(2, 8)))
        words = DS_MICRO * gas + ((DS_STEP,) if stage == 3 else ("",))
        p.update(gas=gas, range_domain=rng.choice((None, "DeepSpeed")), job_kind="training")
    else:
        words = rng.choice(sorted(EVAL_RANGES))
        p.update(range_domain=None, job_kind=EVAL_RANGES[words])
    p.update(extra_ranges=words, autograd_nvtx=False, comm_range=None, step_range=None, graph_mode=None,
             steps=rng.choice((1, rng.randint(2, 16))), ops=max(p["ops"], len(words) + 1), setup_ms=0.0)
    return _paced(p)


def _form12_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    if fmt == "grain":
        return _grain_params(rng)
    if fmt == "framed_pass":
        return _framed_params(rng)
    return _library_nvtx_params(rng, fmt)


def _zero12_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    """``ds_nvtx`` under ZeRO-1 or -2 -- no range of DeepSpeed's closes an iteration, the optimizer's update launched
    outside its ranges after every ``gradient_accumulation_steps``-th micro-batch (deepspeedai/DeepSpeed @edaa7221
    ``runtime/engine.py``; h37-zero12) -- or ZeRO-3 (its optimizer's ``step`` range), on 1-4 ranks."""
    return _library_nvtx_params(rng, fmt, stage=rng.choice((1, 2, 2, 3)))


def form12_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS12` with its writer's ``params``: a reduced job, written out in a test."""
    return _reduced_job(FORMS12, fmt, seed, dict(params))


def _write_grain(job: Job, run: str) -> None:
    """The grain-fed loop and its truth: the steps and their period, the input wait the program's own pipeline
    (grain's take on the loop's thread), at most the take and the batch's ``device_put`` a step (the prefetch
    thread working ahead is no wait of the loop's)."""
    from synthetic import jaxcapture as J
    from synthetic import tfcapture as TF
    from synthetic import xla_kernels as X

    p = job.params
    gpu = {"H100": X.H100, "A100": TF.A100}[p["gpu"]]
    cap = J.JaxCapture(gpu=gpu, hostname="node0", seed=job.seed, step_annotation=True,
                       command_buffers=p["command_buffers"])
    kernels = [replace_us(k, p["scale"]) for k in X.mlp_bf16_step(p["layers"], command_buffers=p["command_buffers"])]
    spans = J.grain_loop(cap, kernels, p["steps"], p["take_us"], p["other_us"], prefetch_thread=p["prefetch_thread"])
    # the mean iteration over all the steps run: from the first step's marker to the loop's end (the last marker and
    # the loop's turn after it) -- each step's host work is jittered, so the start-to-start of the first steps alone is
    # no period of the last (of two steps it was the first's length: seed 4044's second ran 0.16 ms less work)
    period = (cap.t - cap.steps[0].marker[0]) / p["steps"] / J.US / 1e3
    cap.finish().write(os.path.join(run, "plugins", "profile", J.SESSION, "node0.xplane.pb"))
    fetch_ms = max(other - take for take, other, _ in spans) / J.US / 1e3
    TRUTH[job.seed] = {"steps": p["steps"], "step_ms": period, "input_source": "pipeline",
                       "input_not_words": ("stands for an untraced loader",), "input_bound_ms": fetch_ms + 0.05}


def _write_framed_pass(job: Job, run: str) -> None:
    """The framed benchmark and its truth: the measured passes and their period (where no warm-up has the phase
    ranges of a training loop); one pass after warm-ups of the same work, outside training, is the step (``pass_ms``)."""
    p = dict(job.params)
    t = N.write_framed_passes(os.path.join(run, "bench.sqlite"), gpu=getattr(N, p.pop("gpu")), **p)
    # (with phase ranges the warm-ups are iterations of the loop too, launched back to back, the first twice as slow:
    # no count or period of them by construction)
    truth: dict[str, Any] = {} if p["phases"] and t["warmup"] else {"steps": t["measured"], "step_ms": t["period_ms"]}
    if t["measured"] == 1 and t["warmup"] and not p["phases"]:
        truth.update(pass_ms=t["pass_ms"], pass_range_ms=t["period_ms"])
    if p["phases"]:
        truth["job_kind"] = "training"
    TRUTH[job.seed] = truth


def _write_library_nvtx(job: Job, run: str) -> None:
    """The export, and its truth: the iterations and their period, the kind the ranges say."""
    p = dict(job.params)
    kind = p.pop("job_kind")
    p.pop("gas", None)
    p["kernel"] = getattr(N, p["kernel"])
    p["extra_ranges"] = tuple(p["extra_ranges"])
    t = N.write(os.path.join(run, "job.sqlite"), N.NsysJob(seed=job.seed, **p))
    TRUTH[job.seed] = {"steps": t.steps, "step_ms": t.step_ms, "job_kind": kind}


_WRITERS.update({"grain": _write_grain, "framed_pass": _write_framed_pass, "ds_nvtx": _write_library_nvtx,
                 "eval_nvtx": _write_library_nvtx})


# ------------------------------------------------------------- forms no stream drew before (h37-randjobs13)
# Drawn by ``random_form13_job`` (``scripts/randjobs.py --forms13``), a stream of its own, one form per class of #37:
# a Kineto window on a GPU host whose active steps ended before the first kernel (the DataLoader's steps only: its
# pinned buffers, the device queries, the profiler's exit sync -- class 1); the blocking copies PyTorch users write
# inside a step that no other draw makes (``.tolist()``, ``torch.tensor(pylist, device="cuda")``, ``x.to("cuda",
# non_blocking=True)`` of a pageable batch -- class 3); a tiny RL loop: a CPU environment's step between tiny GPU
# forwards, the action read back each step (class 4); memory snapshots of ``expandable_segments`` (segments mapped and
# unmapped) and of two devices in one snapshot (class 5).

FORMS13 = ("kineto_setup_window", "kineto_user_copies", "rl_loop", "snapshot_expandable", "snapshot_two_devices")
#: the copies a step's own code makes: how, and the memory its host side is in
USER_COPIES = ("tolist", "tensor_from_list", "nonblocking_pageable")
#: the runtime calls a GPU host's window makes before its first kernel: the DataLoader's ``pin_memory`` buffers,
#: ``torch.cuda.is_available()`` / ``current_device()``'s queries, and ``torch.profiler``'s exit sync
SETUP_CALLS = ("none", "query", "pin", "query_exit_sync")


def _setup_window_params(rng: random.Random) -> dict[str, Any]:
    """A schedule's active steps that ended before the loop's first kernel: 1-8 steps of a DataLoader's fetch and its
    collate (CPU ops), with one of :data:`SETUP_CALLS`."""
    return {"steps": rng.randint(1, 8), "loader_us": round(_log_uniform(rng, 50.0, 50_000.0), 3),
            "collate_ops": rng.randint(1, 6), "calls": rng.choice(SETUP_CALLS), "batch_mib": rng.choice((1, 8, 64))}


def _user_copies_params(rng: random.Random) -> dict[str, Any]:
    """A Kineto job of :func:`_kineto_params`'s sizes whose step makes 1-3 of :data:`USER_COPIES`, none of the
    blocking forms the other draws make (pageable ``copy_h2d``, ``.cpu()``, mid-step ``.item()``)."""
    p = _kineto_params(rng)
    p.update(no_gpu=False, graph=False, copies=[], reads=0, end_sync="item",
             marker=rng.choice(("profiler_step", "profiler_step", "none")))
    p["user_copies"] = [(rng.choice(USER_COPIES), round(_log_uniform(rng, 0.0001, 64.0), 6))
                        for _ in range(rng.randint(1, 3))]
    return p


def _rl_params(rng: random.Random) -> dict[str, Any]:
    """A tiny RL loop: each env step a CPU environment (untraced Python, numpy), the observation uploaded with
    ``torch.tensor(obs, device="cuda")``, a 1-3 layer policy's tiny kernels, the action read back with ``.item()``,
    and (training) the update each step."""
    return {"steps": rng.randint(2, 20), "env_us": round(_log_uniform(rng, 20.0, 5000.0), 3),
            "layers": rng.randint(1, 3), "kernel_us": round(rng.uniform(2.0, 8.0), 3),
            "launch_us": round(rng.uniform(4.0, 15.0), 3), "obs_floats": rng.choice((4, 8, 24, 376)),
            "train": rng.random() < 0.6, "marker": rng.choice(("profiler_step", "profiler_step", "none"))}


def _snapshot13_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    """A training loop's snapshot (:func:`synthetic.memsnapshot.training_iterations`'s sizes, whole histories)."""
    p = {"iterations": rng.randint(1, 6), "layers": rng.randint(1, 12), "mib": rng.choice((1, 8, 32, 128)),
         "params": rng.randint(1, 6), "param_mib": rng.choice((4, 64, 256)), "hold_loss": rng.random() < 0.5,
         "set_to_none": rng.random() < 0.7}
    if fmt == "snapshot_expandable":
        p["empty_cache"] = rng.random() < 0.5  # the unused pages unmapped at the end (``torch.cuda.empty_cache()``)
    return p


def _form13_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    draw = {"kineto_setup_window": _setup_window_params, "kineto_user_copies": _user_copies_params,
            "rl_loop": _rl_params}.get(fmt)
    return draw(rng) if draw else _snapshot13_params(rng, fmt)


def form13_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS13` with its writer's ``params`` (``kineto_user_copies``: :data:`KINETO_BASE`'s
    with ``params``): a reduced job, written out in a test."""
    return _reduced_job(FORMS13, fmt, seed, {**KINETO_BASE, **params} if fmt == "kineto_user_copies" else dict(params))


def _runtime_call(r: T.Rank, name: str, dur: float, ext: int | None = None) -> dict:
    """A CUDA runtime call of the host thread, ``dur`` long from now (the clock moves past it)."""
    r.corr += 1
    e = {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": r.pid, "tid": r.pid, "ts": round(r.host_us, 3),
         "dur": round(dur, 3), "args": {"External id": r.ext if ext is None else ext, "cbid": 0, "correlation": r.corr}}
    r.host.append(e)
    r.host_us += dur
    return e


def _copy_ops(r: T.Rank, outer: tuple[str, ...]) -> tuple[list[dict], dict]:
    """The op stack a copy runs in (``outer`` ops, then ``aten::_to_copy`` -> ``aten::copy_``), opened now; the
    caller closes them with :func:`_close_ops`. Returns (every op, the ``aten::copy_`` whose id the copy carries)."""
    ops = [r.cpu(name, 0.0, advance=False) for name in (*outer, "aten::_to_copy")]
    r.host_us += 2.0
    r.cpu("aten::empty_strided", 3.0)
    op = r.cpu("aten::copy_", 0.0, advance=False)
    return [*ops, op], op


def _close_ops(r: T.Rank, ops: list[dict]) -> None:
    """Close ``ops`` (outermost first) where the host clock is, each 1 us after the one it holds."""
    for k, op in enumerate(reversed(ops)):
        op["dur"] = round(r.host_us + k - op["ts"], 3)
    r.host_us += len(ops)


def _user_copy(r: T.Rank, how: str, mb: float) -> None:
    """One of :data:`USER_COPIES` of ``mb`` MB in the step, as PyTorch runs it:

    * ``tolist``: ``aten::to`` -> ``aten::_to_copy`` -> ``aten::copy_``: a device-to-host copy into pageable memory
      after the queued kernels, the host waiting in ``cudaStreamSynchronize`` (``tensor_to_list`` copies to the CPU);
    * ``tensor_from_list``: ``torch.tensor(pylist, device="cuda")``: ``aten::lift_fresh`` then the same stack uploading
      the new pageable CPU tensor, ``cudaMemcpyAsync`` then ``cudaStreamSynchronize`` (``non_blocking=False``);
    * ``nonblocking_pageable``: ``x.to("cuda", non_blocking=True)`` of a batch not pinned: no sync call, but the
      driver stages pageable memory, so ``cudaMemcpyAsync`` returns only when the copy -- queued behind the stream's
      kernels -- is done: the host blocks inside the copy call itself."""
    nbytes = max(int(mb * (1 << 20)), 4)
    us = max(nbytes / COPY_BPS["pageable"] * 1e6, 1.5)
    if how == "tensor_from_list":
        r.cpu("aten::lift_fresh", 1.0)
    ops, op = _copy_ops(r, ("aten::to",))
    name = "Memcpy DtoH (Device -> Pageable)" if how == "tolist" else "Memcpy HtoD (Pageable -> Device)"
    ext = op["args"]["External id"]
    end = _queued_copy(r, name, ext, nbytes, us, blocks=how == "nonblocking_pageable")
    if how != "nonblocking_pageable":
        r.host_us += 2.0
        _runtime_call(r, "cudaStreamSynchronize", max(end - r.host_us, 0.0) + 3.0, ext)["args"]["cbid"] = 131
    _close_ops(r, ops)


def _queued_copy(r: T.Rank, name: str, ext: int, nbytes: int, us: float, blocks: bool) -> float:
    """A ``cudaMemcpyAsync`` of the host thread now and its copy ``name`` on the compute stream, queued behind the
    stream's work; ``blocks``: the call returns only when the copy is done (pageable memory staged by the driver), else
    after 12 us. Returns the copy's end, us."""
    launch_at = r.host_us
    start = max(r.streams.get(T.COMPUTE_STREAM, 0.0), launch_at + 8.0)
    call = _runtime_call(r, "cudaMemcpyAsync", start + us - launch_at + 3.0 if blocks else 12.0, ext)
    call["args"]["cbid"] = 41
    r.streams[T.COMPUTE_STREAM] = start + us
    r.gpu.append({"ph": "X", "cat": "gpu_memcpy", "name": name, "pid": r.device, "tid": T.COMPUTE_STREAM,
                  "ts": round(start, 3), "dur": round(us, 3),
                  "args": {"External id": ext, "device": r.device, "context": 1, "stream": T.COMPUTE_STREAM,
                           "correlation": r.corr, "bytes": nbytes, "memory bandwidth (GB/s)": nbytes / (us * 1e3)}})
    r._flow(launch_at, start, T.COMPUTE_STREAM)
    r.step_kernels.append((start, start + us))
    return start + us


def _write_setup_window(job: Job, run: str) -> None:
    """The window and its truth: the capture's quality is the finding, no other rule fires (nothing ran on a GPU)."""
    p = job.params
    r = T.Rank(rank=0, pid=4100, device=0)
    for n in range(1, 1 + p["steps"]):
        mark = r.cpu(f"ProfilerStep#{n}", 0.0, cat="user_annotation", advance=False)
        r.host_us += 5.0
        fetch = r.cpu(T.DATALOADER, 0.0, cat="user_annotation", advance=False)
        r.host_us += p["loader_us"]
        if p["calls"] == "pin":  # the pin-memory thread's page-locked buffer for the batch
            _runtime_call(r, "cudaHostAlloc", 40.0 + p["batch_mib"] * 30.0)
        for _ in range(p["collate_ops"]):
            r.cpu("aten::stack", 20.0 + p["batch_mib"] * 4.0)
        fetch["dur"] = round(r.host_us - fetch["ts"], 3)
        if p["calls"] in ("query", "query_exit_sync"):  # torch.cuda.is_available(), current_device()
            _runtime_call(r, "cudaGetDeviceCount", 2.0)
            _runtime_call(r, "cudaGetDevice", 1.0)
        r.host_us += 5.0
        mark["dur"] = round(r.host_us - mark["ts"], 3)
    if p["calls"] == "query_exit_sync":  # torch.profiler's exit: a device sync, then the trace's end
        _runtime_call(r, "cudaDeviceSynchronize", 6.0)
    stamp = T.BASE_NS + int(T.T0_US * 1000)
    T.write_doc(os.path.join(run, f"{T._worker(r)}.{stamp}.pt.trace.json"), T.trace_doc(r, 1))
    TRUTH[job.seed] = {"rules": ("capture_quality",), "only_rules": ("capture_quality",)}


def _write_user_copies(job: Job, run: str) -> None:
    """The Kineto job and its truth: its iterations and kind, and where ``prof.step()`` marks each, their period."""
    _write_kineto(job, run)
    p = job.params
    truth: dict[str, Any] = {"steps": p["steps"], "job_kind": "training" if p["train"] else "not training"}
    if p["marker"] == "profiler_step" and p["steps"] >= 2:
        truth["step_ms"] = _marked_period_ms(run)
    TRUTH[job.seed] = truth


def _marked_period_ms(run: str) -> float:
    """The mean period of the ``ProfilerStep#`` marks of rank 0's Kineto trace in ``run``, ms (first start to last):
    every rank's loop keeps the same period (the ranks' all-reduce binds them)."""
    import glob
    import json

    starts = []
    for path in glob.glob(os.path.join(run, "*.pt.trace.json")):
        with open(path) as f:
            doc = json.load(f)
        starts += [e["ts"] for e in doc["traceEvents"] if e.get("pid") == 4100 and e.get("cat") == "user_annotation"
                   and str(e.get("name", "")).startswith("ProfilerStep#")]
    starts.sort()
    return (starts[-1] - starts[0]) / (len(starts) - 1) / 1e3


def _write_rl_loop(job: Job, run: str) -> None:
    """The loop and its truth: the env steps and their period, the kind (an update each step: training; none: a
    rollout, not training)."""
    p = job.params
    r = T.Rank(rank=0, pid=4100, device=0)
    starts: list[float] = []
    obs = p["obs_floats"] * 4 / (1 << 20)
    for n in range(1, 1 + p["steps"]):
        starts.append(r.host_us)
        mark = r.cpu(f"ProfilerStep#{n}", 0.0, cat="user_annotation", advance=False) if p["marker"] == "profiler_step" else None
        r.host_us += 5.0
        r.step_kernels = []
        r.host_us += p["env_us"]  # env.step(action): numpy in Python, no op recorded
        _user_copy(r, "tensor_from_list", obs)
        for _ in range(p["layers"]):
            r.kernel("aten::addmm", T.FP32_GEMM, p["kernel_us"], launch_us=p["launch_us"])
            r.kernel("aten::tanh", RELU["fp32"], 2.0, launch_us=p["launch_us"])
        r.kernel("aten::softmax", RELU["fp32"], 2.5, launch_us=p["launch_us"])
        r.kernel("aten::multinomial", RELU["fp32"], 3.0, launch_us=p["launch_us"])
        r.sync("aten::item")  # the action, read back for the environment
        if p["train"]:
            for _ in range(p["layers"]):
                node = r.cpu("autograd::engine::evaluate_function: AddmmBackward0", 0.0, advance=False)
                t = r.host_us
                r.kernel("aten::mm", T.FP32_GEMM, p["kernel_us"], launch_us=p["launch_us"])
                r.kernel("aten::mm", T.FP32_GEMM, p["kernel_us"], launch_us=p["launch_us"])
                node["dur"] = round(r.host_us - t, 3)
            _optimizer(r, {"dtype": "fp32", "layers": p["layers"], "width": 64, "launch_us": p["launch_us"]}, 0.0)
        r.host_us += 5.0
        if mark is not None:
            _close_mark(r, {"marker": "profiler_step"}, n, mark)
    stamp = T.BASE_NS + int(T.T0_US * 1000)
    T.write_doc(os.path.join(run, f"{T._worker(r)}.{stamp}.pt.trace.json"), T.trace_doc(r, 1))
    TRUTH[job.seed] = {"job_kind": "training" if p["train"] else "not training", "steps": p["steps"],
                       "step_ms": (starts[-1] - starts[0]) / (len(starts) - 1) / 1e3}


def _write_snapshot13(job: Job, run: str) -> None:
    """The snapshot: with ``expandable_segments`` every segment is one mapping (``segment_map``, its free pages
    ``segment_unmap``-ed by ``empty_cache``), or the same loop on two devices (``device_traces`` one list each).
    Truth: the loop's iterations, a training loop's."""
    from synthetic import memsnapshot as M

    p = dict(job.params)
    empty = p.pop("empty_cache", False)
    doc = M.training_iterations(**p).doc
    if job.fmt == "snapshot_expandable":
        doc = _as_expandable(doc, empty)
    else:
        other = M.training_iterations(**p).doc
        for s in other["segments"]:
            s["device"] = 1
        doc["segments"] += other["segments"]
        doc["device_traces"].append(other["device_traces"][0])
    M.write(os.path.join(run, "snapshot.pickle"), doc)
    TRUTH[job.seed] = {"steps": p["iterations"], "job_kind": "training"}


def _as_expandable(doc: dict[str, Any], empty_cache: bool) -> dict[str, Any]:
    """``doc`` as ``expandable_segments:True`` records it: each segment's growth a ``segment_map``, its release a
    ``segment_unmap``; ``empty_cache``: the pages no block uses unmapped at the end (each free segment's)."""
    actions = {"segment_alloc": "segment_map", "segment_free": "segment_unmap"}
    for trace in doc["device_traces"]:
        for e in trace:
            e["action"] = actions.get(e["action"], e["action"])
    if empty_cache:
        free = [s for s in doc["segments"] if not s["allocated_size"]]
        t = doc["device_traces"][0][-1]["time_us"] if doc["device_traces"][0] else 0
        for k, s in enumerate(free):
            doc["device_traces"][0].append({"action": "segment_unmap", "addr": s["address"], "size": s["total_size"],
                                            "stream": 0, "time_us": t + 7 * (k + 1)})
        doc["segments"] = [s for s in doc["segments"] if s["allocated_size"]]
    for s in doc["segments"]:
        s["is_expandable"] = True
    doc["allocator_settings"].update(expandable_segments=True, PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
    return doc


_WRITERS.update({"kineto_setup_window": _write_setup_window, "kineto_user_copies": _write_user_copies,
                 "rl_loop": _write_rl_loop, "snapshot_expandable": _write_snapshot13,
                 "snapshot_two_devices": _write_snapshot13})


# ------------------------------------------------------------- forms no stream drew before (h37-inputgen)
# Drawn by ``random_form14_job`` (``scripts/randjobs.py --forms14``), a stream of its own: a Kineto window on a GPU
# host whose profiled loop only loads data (#37 class 1, h37-survey53's ``wild/input_only_rtx4090_unetr``): N fetches
# of a DataLoader's ``__next__``, each batch copied to the GPU or not (pinned or pageable, waited for or not), no
# kernel -- or, as a control, the same loop running its model's ``aten::linear`` on the CPU.

FORMS14 = ("kineto_input_only",)
#: how each batch reaches the GPU: not at all, ``.to("cuda", non_blocking=True)`` of a pinned batch (the call returns
#: at once), or ``.to("cuda")`` of a pageable one (the driver stages it: the call returns when the copy is done)
BATCH_COPIES = ("none", "pinned", "pageable")
#: the DataLoader iterators whose ``__next__`` the profiler records (``num_workers=0`` and ``>0``)
LOADERS = (T.DATALOADER, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__")


def _input_only_params(rng: random.Random) -> dict[str, Any]:
    """A loop of 0-12 batch fetches (2 or more most often), each batch copied as one of :data:`BATCH_COPIES` in 1-2
    tensors (image, label) with or without a ``torch.cuda.synchronize()``; the device queried before the loop
    (``torch.cuda.is_available()``) or not (always, without a fetch: a window holds something); a model run on the CPU (``aten::linear`` on each batch) one time in five.
    A CPU model's batches stay on the CPU: a tensor on the GPU fed to a CPU model is an error, not a job."""
    cpu_model, fetches = rng.random() < 0.2, rng.choice((0, 1, 2, 2, 3, 4, 6, 8, 12))
    return {"fetches": fetches, "loader": rng.choice(LOADERS),
            "loader_us": round(_log_uniform(rng, 50.0, 200_000.0), 3), "collate_ops": rng.randint(1, 4),
            "copies": "none" if cpu_model else rng.choice(BATCH_COPIES), "tensors": rng.randint(1, 2),
            "batch_mib": round(_log_uniform(rng, 0.01, 256.0), 4), "sync": rng.random() < 0.5,
            "query": rng.random() < 0.6 or not fetches, "cpu_model": cpu_model, "linear_us": round(_log_uniform(rng, 20.0, 20_000.0), 3),
            "marker": rng.choice(("profiler_step", "none"))}


def form14_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS14` with :func:`_input_only_params`'s keys: a reduced job, written in a test."""
    return _reduced_job(FORMS14, fmt, seed, dict(params))


def _batch_upload(r: T.Rank, p: dict[str, Any]) -> None:
    """One batch's tensors to the GPU as ``p["copies"]`` says (``aten::to`` -> ``aten::_to_copy`` -> ``aten::copy_``,
    its ``cudaMemcpyAsync`` and the copy), then ``torch.cuda.synchronize()`` where ``p["sync"]``."""
    nbytes = max(int(p["batch_mib"] * (1 << 20)), 4)
    us = max(nbytes / COPY_BPS[p["copies"]] * 1e6, 1.5)
    name = "Memcpy HtoD (Pinned -> Device)" if p["copies"] == "pinned" else "Memcpy HtoD (Pageable -> Device)"
    end = 0.0
    for _ in range(p["tensors"]):
        ops, op = _copy_ops(r, ("aten::to",))
        end = _queued_copy(r, name, op["args"]["External id"], nbytes, us, blocks=p["copies"] == "pageable")
        _close_ops(r, ops)
    if p["sync"]:
        r.host_us += 2.0
        _runtime_call(r, "cudaDeviceSynchronize", max(end - r.host_us, 0.0) + 3.0)["args"]["cbid"] = 165


def _write_input_only(job: Job, run: str) -> None:
    """The loop and its truth, by construction: no kernel runs, so the job does no GPU work (kind ``no_gpu``) and the
    capture's quality is its one finding; the window (``window``, read by ``tests/support/random_jobs``) is
    ``input_only`` where two or more batches were fetched and no model op ran (``input_on_cpu`` where no runtime call
    was made either), ``startup`` where at most one was and the host made a runtime call (a query or a copy),
    ``cpu_model`` where an ``aten::linear`` ran each batch on the CPU (no CUDA call inside the model's ops: its
    queries come before the loop) -- :func:`input_window`."""
    p = job.params
    r = T.Rank(rank=0, pid=4100, device=0)
    r.host_us += 20.0
    if p["query"]:  # torch.cuda.is_available(), current_device()
        _runtime_call(r, "cudaGetDeviceCount", 2.0)
        _runtime_call(r, "cudaGetDevice", 1.0)
    for n in range(1, 1 + p["fetches"]):
        mark = r.cpu(f"ProfilerStep#{n}", 0.0, cat="user_annotation", advance=False) if p["marker"] != "none" else None
        r.host_us += 5.0
        fetch = r.cpu(p["loader"], 0.0, cat="user_annotation", advance=False)
        r.host_us += p["loader_us"]
        for _ in range(p["collate_ops"]):
            r.cpu("aten::stack", 20.0 + p["batch_mib"] * 4.0)
        fetch["dur"] = round(r.host_us - fetch["ts"], 3)
        if p["copies"] != "none":
            _batch_upload(r, p)
        if p["cpu_model"]:
            r.cpu("aten::linear", p["linear_us"])
        r.host_us += 5.0
        if mark is not None:
            mark["dur"] = round(r.host_us - mark["ts"], 3)
    stamp = T.BASE_NS + int(T.T0_US * 1000)
    T.write_doc(os.path.join(run, f"{T._worker(r)}.{stamp}.pt.trace.json"), T.trace_doc(r, 1))
    TRUTH[job.seed] = {"job_kind": "no_gpu", "only_rules": ("capture_quality",), "window": input_window(p)}


def input_window(p: dict[str, Any]) -> str:
    """What :func:`_write_input_only`'s window of ``p`` is by construction: "cpu_model", "input_only", "startup",
    "input_on_cpu" (two or more fetches, no model op, no runtime call at all: a loop over its input alone, its batches
    on the CPU -- h37-nogpu2), or "cpu_loop" (at most one fetch and no runtime call: no loop, nothing reached for a
    GPU)."""
    if p["cpu_model"] and p["fetches"]:
        return "cpu_model"
    if not p["query"] and (p["copies"] == "none" or not p["fetches"]):
        return "input_on_cpu" if p["fetches"] >= 2 else "cpu_loop"
    return "input_only" if p["fetches"] >= 2 else "startup"


_WRITERS.update({"kineto_input_only": _write_input_only})


# ------------------------------------------------------------- a window at either end of a queue (h37-loopstart)
# Drawn by ``random_form15_job`` (``scripts/randjobs.py --forms15``), a stream of its own: a Kineto window at the
# loop's end whose GPU drains the last step's queue (``torchtrace.write_loop_ended``, h37-loopend2's
# ``wild/loop_ended_backlog_a100_gnn``), and its mid-loop twin, a window that opens on the step before's queue
# (``torchtrace.write_loop_opened``, ``wild/hf_qwen_h100``'s first step).

FORMS15 = ("kineto_loop_ended", "kineto_loop_opened")


def _queue_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    """The queue left before the window (none, one kernel, or up to 2,000 of ``torchtrace.BACKLOG_KERNEL_US``) and,
    at the loop's end, whether the step launched work of its own after its fetch (the control) and its number; mid-loop,
    2-5 steps (the stock rule drops none) each opened by ``torch.cuda.synchronize()`` or not."""
    backlog = rng.choice((0, 1, rng.randint(2, 40), rng.randint(41, 2000)))
    if fmt == "kineto_loop_ended":
        return {"backlog": backlog, "launch_in_step": rng.random() < 0.2, "step": rng.randint(1, 5)}
    return {"backlog": backlog, "steps": rng.randint(2, 5), "sync_first": rng.random() < 0.5,
            "first": rng.randint(1, 30)}


def form15_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS15` with :func:`_queue_params`'s keys: a reduced job, written in a test."""
    return _reduced_job(FORMS15, fmt, seed, dict(params))


def _write_queue_window(job: Job, run: str) -> None:
    """The window and its truth, by construction (``tests/support/random_jobs``): at the loop's end, the window
    ``loop_ended`` and capture quality its one finding -- or, where the step launched its own work, no such window;
    mid-loop, every step found and the first one's GPU time without the queue (``first_step_ms``)."""
    p, stamp = job.params, T.BASE_NS + int(T.T0_US * 1000)
    path = os.path.join(run, f"host_3884292.{stamp}.pt.trace.json")
    if job.fmt == "kineto_loop_ended":
        truth = T.write_loop_ended(path, **p)
        TRUTH[job.seed] = ({"window": "step"} if p["launch_in_step"] else
                           {"window": "loop_ended", "only_rules": ("capture_quality",)})
        return
    truth = T.write_loop_opened(path, **p)
    TRUTH[job.seed] = {"steps": truth["steps"], "first_step_ms": truth["first_step_ms"]}


_WRITERS.update({"kineto_loop_ended": _write_queue_window, "kineto_loop_opened": _write_queue_window})


# ----------------------------------------------------- session 44's forms: ranks on their own, polls, leaks (h37-forms16)
# Drawn by ``random_form16_job`` (``scripts/randjobs.py --forms16``), a stream of its own over the writers issue #37's
# session 44 built one case of each: ranks that pause alone or open their capture late, in one Kineto file each
# (``torchtrace.write_rank_pause``) or one Nsight export (``nsysexport.write_late_rank_pause``); a loop polling an
# event until its GPU drains (``torchtrace.write_poll_then_host_work``); a training loop's memory snapshot that leaks
# (``memsnapshot.training_iterations(leak=...)``: a list, an evaluation's graph, a growing list, or none), under
# gradient accumulation, ``zero_grad(set_to_none=False)`` and an optimizer with or without per-step temporaries.

FORMS16 = ("kineto_rank_late", "nsys_rank_late", "kineto_poll", "snapshot_leak")


def _rank_late_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    """2-4 ranks, one of them pausing once in a module load (or none), the last (Kineto) or a chosen rank (Nsight)
    opening its capture 0-3 steps late."""
    ranks = rng.randint(2, 4)
    if fmt == "kineto_rank_late":
        steps = rng.randint(9, 14)
        return {"ranks": ranks, "paused": rng.choice((None, rng.randrange(ranks))), "late": rng.choice((0, 1, 2, 3)),
                "steps": steps, "load_ms": round(rng.uniform(2.0, 40.0), 3), "step": rng.randint(4, steps - 2)}
    late = rng.randrange(1, ranks)
    return {"ranks": ranks, "paused": rng.randrange(ranks), "late": late, "steps": rng.choice((1, 2, 3)),
            "call_ms": round(rng.uniform(2.0, 40.0), 3), "at_step": rng.randint(5, 8), "helper": rng.random() < 0.3}


def _poll_params(rng: random.Random) -> dict[str, Any]:
    """A forward loop polling an event (or its stream) until its GPU drains, then host work with the GPU idle."""
    return {"steps": rng.randint(4, 14), "kernels": rng.randint(1, 16), "kernel_us": round(rng.uniform(20.0, 400.0), 3),
            "host_us": round(rng.choice((0.0, rng.uniform(20.0, 800.0))), 3),
            "between_us": round(rng.uniform(2.0, 40.0), 3), "call": rng.choice(("cudaEventQuery", "cudaStreamQuery"))}


def _leak_params(rng: random.Random) -> dict[str, Any]:
    """A training loop's snapshot of 3-8 whole iterations that leaks one of the writer's ways, or not at all."""
    return {"iterations": rng.randint(3, 8), "layers": rng.randint(2, 10), "mib": rng.choice((8, 32, 64)),
            "micro_batches": rng.choice((1, 1, 2, 3)), "set_to_none": rng.random() < 0.7,
            "optimizer_temp": rng.random() < 0.7, "hold_loss": rng.random() < 0.5,
            "leak": rng.choice(("", "list", "graph", "grow")), "leak_mib": rng.choice((4, 16, 48))}


def _form16_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    if fmt in ("kineto_rank_late", "nsys_rank_late"):
        return _rank_late_params(rng, fmt)
    return _poll_params(rng) if fmt == "kineto_poll" else _leak_params(rng)


def form16_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS16` with :func:`_form16_params`' keys: a reduced job, written in a test."""
    return _reduced_job(FORMS16, fmt, seed, dict(params))


def _profiler_step_ms(path: str) -> float:
    """The period of a Kineto file's ``ProfilerStep#N`` ranges (ms), start to start (a range may end before the next
    opens) -- the loop's period, read off what the writer wrote, not off any analysis."""
    import json
    import statistics

    with open(path, encoding="utf-8") as f:
        marks = [e for e in json.load(f)["traceEvents"] if str(e.get("name", "")).startswith("ProfilerStep#")]
    firsts: dict[str, float] = {}
    for e in marks:  # a step's mark is written on the host line and again as a GPU user annotation: its first start
        firsts[e["name"]] = min(e["ts"], firsts.get(e["name"], e["ts"]))
    starts = sorted(firsts.values())
    # the median of the steps' periods: a first step may open later than the loop's beat (its host's first mark after
    # the window's start), and the period is the steady steps'
    return statistics.median(b - a for a, b in zip(starts, starts[1:])) / 1e3


def _write_rank_late(job: Job, run: str) -> None:
    """Truth: every rank's steps are its own numbered ones, each rank read as alone (h37-probe44r, lead44): the job
    ran ``steps`` iterations at the period of a rank that neither paused nor opened late."""
    p = dict(job.params)
    if job.fmt == "nsys_rank_late":
        truth = N.write_late_rank_pause(os.path.join(run, "ranks.sqlite"), late=p.pop("late"), steps=p.pop("steps"), **p)
        TRUTH[job.seed] = {"steps": truth["steps"], "step_ms": truth["step_ms"]}
        return
    paths = T.write_rank_pause(os.path.dirname(run), run=os.path.basename(run), **p)
    # the first rank opened on time (only the last opens late) and another than it pauses, where one does
    steady = paths[0] if p["paused"] != 0 else paths[1]
    TRUTH[job.seed] = {"steps": p["steps"], "step_ms": _profiler_step_ms(steady)}


def _write_poll(job: Job, run: str) -> None:
    """Truth: every step found at the loop's period; where the host waits in its poll, the host-sync finding names
    the program's own call (h37-probe44p)."""
    p = dict(job.params)
    (path,) = T.write_poll_then_host_work(os.path.dirname(run), run=os.path.basename(run), **p)["paths"]
    TRUTH[job.seed] = {"steps": p["steps"], "step_ms": _profiler_step_ms(path), "sync_names": (p["call"],)}


def _write_leak(job: Job, run: str) -> None:
    """Truth: the writer's leak (``Scenario.truth["leak"]``) or none (``leak`` False), held to the memory-leak
    finding by ``tests.support.random_jobs.leak_problems``."""
    from synthetic import memsnapshot as M

    sc = M.training_iterations(**job.params)
    M.write(os.path.join(run, "snapshot.pickle"), sc.doc)
    TRUTH[job.seed] = {"leak": sc.truth.get("leak") or False, "iterations": job.params["iterations"]}


_WRITERS.update({"kineto_rank_late": _write_rank_late, "nsys_rank_late": _write_rank_late,
                 "kineto_poll": _write_poll, "snapshot_leak": _write_leak})


# ------------------------------------- session 45's forms: ranks closing early, evaluation, launchers, polls (h37-forms17)
# Drawn by ``random_form17_job`` (``scripts/randjobs.py --forms17``), a stream of its own over the writers session 45
# built one case of each: a rank whose capture closed steps before the others' (Nsight ``write_early_closed_rank``,
# Kineto ``write_rank_pause(closed_early=...)``, beside a late-opened rank), a training loop evaluating every few steps
# outside its step ranges (``write_interleaved_evaluation``), NVTX ranges on another thread or rank than the launches
# (``write_marked_elsewhere``), a loop launching between its event queries (``write_launches_while_polling``) and a
# backward node waiting for the GPU (``write_backward_read``).

FORMS17 = ("nsys_rank_closed", "kineto_rank_closed", "nsys_eval", "nsys_marked_elsewhere", "kineto_launch_poll",
           "kineto_backward_read")


def _form17_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    """Each form's writer parameters, within what its writer's real counterpart shows."""
    if fmt == "nsys_rank_closed":
        ranks = rng.randint(2, 4)
        return {"ranks": ranks, "paused": rng.randrange(ranks), "rank": rng.randrange(ranks), "steps": rng.choice((1, 2, 3)),
                "call_ms": round(rng.uniform(2.0, 40.0), 3), "at_step": rng.randint(3, 6), "helper": rng.random() < 0.3}
    if fmt == "kineto_rank_closed":
        ranks, steps = rng.randint(2, 4), rng.randint(9, 14)
        return {"ranks": ranks, "paused": rng.choice((None, rng.randrange(ranks))), "late": rng.choice((0, 0, 1, 2)),
                "closed_early": rng.choice((1, 2, 3)), "steps": steps, "load_ms": round(rng.uniform(2.0, 40.0), 3),
                "step": rng.randint(4, steps - 4)}
    if fmt == "nsys_eval":
        return {"train_steps": rng.randint(6, 14), "every": rng.randint(2, 5), "batches": rng.randint(1, 3),
                "pass_range": rng.choice(("eval_step", "val_step", "evaluate")),
                "around": rng.choice((None, None, "validation")), "ranks": rng.choice((1, 1, 2))}
    if fmt == "nsys_marked_elsewhere":
        launcher = rng.choice(("side", "backward", "rank0"))
        return {"launcher": launcher, "ranks": rng.randint(2, 4) if launcher == "rank0" else rng.choice((1, 2)),
                "steps": rng.randint(6, 14)}
    if fmt == "kineto_launch_poll":
        return {"steps": rng.randint(4, 14), "kernels": rng.randint(1, 16), "kernel_us": round(rng.uniform(20.0, 400.0), 3),
                "host_us": round(rng.choice((0.0, rng.uniform(20.0, 800.0))), 3),
                "between_us": round(rng.uniform(2.0, 40.0), 3)}
    return {"case": rng.choice(tuple(T.BACKWARD_READS)), "steps": rng.randint(4, 12), "layers": rng.randint(1, 6),
            "gemm_us": round(rng.uniform(30.0, 400.0), 3), "host_us": round(rng.uniform(0.0, 300.0), 3)}


def form17_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS17` with :func:`_form17_params`' keys: a reduced job, written in a test."""
    return _reduced_job(FORMS17, fmt, seed, dict(params))


def _write_form17(job: Job, run: str) -> None:
    """Each form's file and its truth (the writers' own: steps, period, the job's kind, the waits' calls)."""
    p = dict(job.params)
    out, name = os.path.dirname(run), os.path.basename(run)
    kineto = os.path.join(run, f"host_3884292.{T.BASE_NS + int(T.T0_US * 1000)}.pt.trace.json")
    if job.fmt == "nsys_rank_closed":
        t = N.write_early_closed_rank(os.path.join(run, "ranks.sqlite"), **p)
        truth = {"steps": t["steps"], "step_ms": t["step_ms"]}
    elif job.fmt == "kineto_rank_closed":
        paths = T.write_rank_pause(out, run=name, **p)
        truth = {"steps": p["steps"], "step_ms": _profiler_step_ms(paths[0] if p["paused"] != 0 else paths[1])}
    elif job.fmt == "nsys_eval":
        t = N.write_interleaved_evaluation(os.path.join(run, "eval.sqlite"), seed=job.seed, **p)
        truth = {"steps": t.train_steps, "step_ms": t.step_ms, "job_kind": "training"}
    elif job.fmt == "nsys_marked_elsewhere":
        t = N.write_marked_elsewhere(os.path.join(run, "marked.sqlite"), seed=job.seed, **p)
        truth = {"steps": t.steps, "step_ms": t.step_ms, "job_kind": "training"}
    elif job.fmt == "kineto_launch_poll":
        (path,) = T.write_launches_while_polling(out, run=name, **p)["paths"]
        truth = {"steps": p["steps"], "step_ms": _profiler_step_ms(path), "sync_names": ("cudaEventQuery",)}
    else:
        t = T.write_backward_read(kineto, **p)
        truth = {"steps": p["steps"], "step_ms": _profiler_step_ms(kineto), "sync_names": (t["node"],)}
    TRUTH[job.seed] = truth


_WRITERS.update({fmt: _write_form17 for fmt in FORMS17})


# ------------------------------------------- session 45's writers no stream drew: polls, indices, stacks, ranks (h37-forms18)
# Drawn by ``random_form18_job`` (``scripts/randjobs.py --forms18``), a stream of its own over the forms session 45
# built a case of each and no stream drew: a HIP loop polling after each burst (``rpdtrace.write(poll=...)``), an
# offload loop polling after each kernel (``nsysexport.write_synced_kernels(poll=...)``), a Kineto loop polling at a
# sleep's pace (``torchtrace.write_poll_then_host_work`` / ``write_launches_while_polling`` with a long
# ``between_us``), a layer indexing by a CPU tensor (``torchtrace.write_cpu_index``), a training snapshot recorded
# without stacks (``memsnapshot.as_recorded(..., context=None)``), ranks whose Kineto file states no rank
# (``torchtrace.write_rank_pause(rankless=...)``) and a step counter with gaps (``nsysexport.
# write_interleaved_evaluation(numbers=...)``).

FORMS18 = ("rpd_poll", "nsys_poll", "kineto_sleep_poll", "kineto_cpu_index", "snapshot_stackless", "kineto_rankless",
           "nsys_eval_numbers")

#: A HIP loop's kernels (name, us on the GPU): short fp32 GEMMs and their ReLUs, as ``tests/steps/test_poll_steps``.
_HIP_KERNELS = (("gemm_kernel(float*)", (4.0, 200.0)), ("relu(float*)", (2.0, 20.0)))


def _rpd_poll_params(rng: random.Random) -> dict[str, Any]:
    """10-40 bursts alike of 1-4 GEMM + ReLU pairs, a pause of 0-2 ms after each, the wait a query asked every
    2-60 us, an upload or a read-back or neither."""
    pairs = [[name, round(rng.uniform(*us), 3)] for _ in range(rng.randint(1, 4)) for name, us in _HIP_KERNELS]
    return {"bursts": rng.randint(10, 40), "kernels": pairs, "gap_ms": round(rng.choice((0.0, rng.uniform(0.05, 2.0))), 3),
            "module_load_ms": rng.choice((0.0, 30.0)), "poll": rng.choice(("hipEventQuery", "hipStreamQuery")),
            "poll_us": round(rng.uniform(2.0, 60.0), 3), "read_bytes": rng.choice((0, 0, 4096, 1 << 20))}


def _nsys_poll_params(rng: random.Random) -> dict[str, Any]:
    """An offload loop of 2-8 sweeps of 10-100 kernels, polling after each one."""
    return {"iterations": rng.randint(2, 8), "kernels": rng.randint(10, 100),
            "kernel_us": round(_log_uniform(rng, 20.0, 800.0), 3), "launch_us": round(rng.uniform(4.0, 16.0), 3),
            "latency_us": round(rng.uniform(4.0, 40.0), 3),
            "poll": rng.choice(("cuStreamQuery", "cudaEventQuery_v3020", "cuEventQuery")),
            "poll_us": round(rng.uniform(2.0, 60.0), 3)}


def _form18_params(rng: random.Random, fmt: str) -> dict[str, Any]:
    """Each form's writer parameters, within what its writer's real counterpart shows."""
    if fmt == "rpd_poll":
        return _rpd_poll_params(rng)
    if fmt == "nsys_poll":
        return _nsys_poll_params(rng)
    if fmt == "kineto_sleep_poll":  # ``time.sleep(between)`` in the poll: the last query up to a sleep late
        return {"writer": rng.choice(("poll_then_host_work", "launches_while_polling")), "steps": rng.randint(4, 14),
                "kernels": rng.randint(1, 16), "kernel_us": round(rng.uniform(20.0, 400.0), 3),
                "host_us": round(rng.choice((0.0, rng.uniform(20.0, 800.0))), 3),
                "between_us": round(_log_uniform(rng, 50.0, 2000.0), 3)}
    if fmt == "kineto_cpu_index":
        return {"steps": rng.randint(4, 14), "layers": rng.randint(1, 8), "kernel_us": round(rng.uniform(20.0, 600.0), 3),
                "host_us": round(rng.uniform(0.0, 400.0), 3)}
    if fmt == "snapshot_stackless":
        return {**_leak_params(rng), "stacks": rng.choice(("none", "none", "python"))}
    if fmt == "kineto_rankless":
        p = _rank_late_params(rng, "kineto_rank_late")
        return {**p, "rankless": sorted(rng.sample(range(p["ranks"]), rng.randint(1, p["ranks"] - 1)))}
    every = rng.randint(2, 5)
    return {"train_steps": rng.randint(2 * every, 14), "every": every, "batches": rng.randint(1, 3),
            "pass_range": rng.choice(("eval_step", "val_step", "evaluate")),
            "around": rng.choice((None, None, "validation")), "ranks": rng.choice((1, 1, 2)),
            "numbers": rng.choice(("global", "samples")), "inside": rng.random() < 0.3}


def form18_job(fmt: str, seed: int = 0, **params: Any) -> Job:
    """A job of one of :data:`FORMS18` with :func:`_form18_params`' keys: a reduced job, written in a test."""
    return _reduced_job(FORMS18, fmt, seed, dict(params))


def _write_form18(job: Job, run: str) -> None:
    """Each form's file and its truth (the writers' own: steps, period, the waits' calls, GPUs, the leak)."""
    p = dict(job.params)
    out, name = os.path.dirname(run), os.path.basename(run)
    TRUTH[job.seed] = {"rpd_poll": _write_rpd_poll, "nsys_poll": _write_nsys_poll,
                       "kineto_sleep_poll": _write_sleep_poll, "kineto_cpu_index": _write_cpu_index,
                       "snapshot_stackless": _write_stackless, "kineto_rankless": _write_rankless,
                       "nsys_eval_numbers": _write_eval_numbers}[job.fmt](p, out, name, job.seed)


def _write_rpd_poll(p: dict[str, Any], out: str, name: str, seed: int) -> dict[str, Any]:
    """Truth: every burst a step, at the bursts' period (their first launches apart), the wait named by its query; a
    loop that reads nothing back and pauses nothing between bursts waits only in its poll, and what that wait costs
    is the GPU's idle it exposes -- the period less the longer of the burst's GPU work and its launches (the loop
    without the wait steps at that: ``metrics.syncs._idle_after``'s physics), less the host's own code in that idle
    which no call records (``untraced_idle_ns``: the writer's 2 us between the poll's last query and the next launch,
    1 us between two launches) -- the time a report names unrecorded host time, no wait's, in a poll's form as in its
    sync twin's (h37-probe46h: the law counted it, and broke on a 190-us step idle 11.4 us a burst, 3 us of it
    untraced) -- host_sync's to report where it reaches the rule's bar (``fires_if_saving_ms``)."""
    from synthetic import rpdtrace

    t = rpdtrace.write(os.path.join(out, name, "trace.rpd"), [[tuple(k) for k in p.pop("kernels")]] * p.pop("bursts"),
                       **p)
    starts = t["burst_starts"]
    period = sorted(b - a for a, b in zip(starts, starts[1:]))[(len(starts) - 1) // 2] / 1e6
    truth = {"steps": t["bursts"], "step_ms": period, "sync_names": (p["poll"],)}
    if not p["read_bytes"] and not p["gap_ms"]:
        work_ms = max(sum(t["gpu_ns"].values()), t["kernels"] * (rpdtrace.LAUNCH_NS + 1000)) / t["bursts"] / 1e6
        untraced_ms = t["untraced_idle_ns"] / max(t["bursts"] - 1, 1) / 1e6  # a gap between two bursts
        truth["fires_if_saving_ms"] = {"host_sync": period - work_ms - untraced_ms}
    return truth


def _write_nsys_poll(p: dict[str, Any], out: str, name: str, seed: int) -> dict[str, Any]:
    """Truth: each kernel's run between two waits a step (as its ``cuStreamSynchronize`` twin reads it), the GPU's idle
    between them host_sync's, named by the query the loop polls with: the idle between a sweep's kernels (the poll's
    lateness, the host's 11 us after it, its launch and the kernel's latency) less the host's own code in it that no
    call records (``untraced_idle_ns``: the 11 us after the poll, 3 after the launch, 3 after an event's record) --
    unrecorded host time, no wait's, as in the HIP poll's law (h37-probe46h) -- a share of each kernel's turn
    (``fires_if_share``; the loop without the waits launches under the kernels).  The law counted the writer's 11 us
    as the wait's (h37-probe47c)."""
    t = N.write_synced_kernels(os.path.join(out, name, "report2.sqlite"), **p)
    idle = t["idle_ns"] / t["gaps"] / 1e3  # us a gap between two kernels of a sweep
    wait = idle - t["untraced_idle_ns"] / t["gaps"] / 1e3
    return {"steps": t["kernels"], "fires_if_share": {"host_sync": wait / (idle + p["kernel_us"])},
            "sync_names": (p["poll"].split("_v")[0],)}


def _write_sleep_poll(p: dict[str, Any], out: str, name: str, seed: int) -> dict[str, Any]:
    """Truth: every step at the loop's period, the wait named by its query."""
    writer = {"poll_then_host_work": T.write_poll_then_host_work,
              "launches_while_polling": T.write_launches_while_polling}[p.pop("writer")]
    (path,) = writer(out, run=name, **p)["paths"]
    return {"steps": p["steps"], "step_ms": _profiler_step_ms(path), "sync_names": ("cudaEventQuery",)}


def _write_cpu_index(p: dict[str, Any], out: str, name: str, seed: int) -> dict[str, Any]:
    """Truth: every step at the loop's period; the blocking copies are the index's uploads, ``layers`` a step made by
    ``aten::index`` (``copy_op``); each drains the GPU, which then idles at least through the host's ``host_us`` of
    recorded work after it (the loop without the wait runs that work under the next GEMM): the copies' cost, the copy
    finding's to report where it reaches the rule's bar (``fires_if_saving_ms``)."""
    t = T.write_cpu_index(out, run=name, **p)
    return {"steps": p["steps"], "step_ms": _profiler_step_ms(t["paths"][0]),
            "copy_op": (t["op"], t["copies_per_step"]),
            "fires_if_saving_ms": {"excessive_memcpy": p["layers"] * min(p["host_us"], p["kernel_us"]) / 1e3}}


def _write_stackless(p: dict[str, Any], out: str, name: str, seed: int) -> dict[str, Any]:
    """Truth: the writer's leak or none, as :func:`_write_leak`'s, from a history with no frame (or Python's only)."""
    from synthetic import memsnapshot as M

    stacks = p.pop("stacks")
    sc = M.training_iterations(**p)
    doc = M.as_recorded(sc.doc, context=None) if stacks == "none" else M.as_recorded(sc.doc, stacks="python")
    M.write(os.path.join(out, name, "snapshot.pickle"), doc)
    return {"leak": sc.truth.get("leak") or False, "iterations": p["iterations"]}


def _write_rankless(p: dict[str, Any], out: str, name: str, seed: int) -> dict[str, Any]:
    """Truth: one job of ``ranks`` GPUs (a file without its rank is its process's, read with its job), every rank's
    steps its own, at the period of a rank that neither paused nor opened late."""
    paths = T.write_rank_pause(out, run=name, **{**p, "rankless": tuple(p["rankless"])})
    steady = paths[0] if p["paused"] != 0 else paths[1]
    return {"steps": p["steps"], "step_ms": _profiler_step_ms(steady), "gpus": p["ranks"]}


def _write_eval_numbers(p: dict[str, Any], out: str, name: str, seed: int) -> dict[str, Any]:
    """Truth: the training steps alone, at their length, however the counter numbers them."""
    t = N.write_interleaved_evaluation(os.path.join(out, name, "eval.sqlite"), seed=seed, **p)
    return {"steps": t.train_steps, "step_ms": t.step_ms, "job_kind": "training"}


_WRITERS.update({fmt: _write_form18 for fmt in FORMS18})


# ------------------------------------------------------------------------------------------------ the streams of forms
#: Each stream of forms by its ``scripts/randjobs.py`` flag.  ``forms10`` draws from ``form9`` as when h37-randjobs9
#: walked it, before h37-a2afix's form took that name (the seeds its SURVEY section names draw the same jobs);
#: ``forms9`` never drew its one form, ``forms8`` / ``forms14`` / ``forms15`` draw theirs by ``rng.choice``.
FORM_DRAWS: dict[str, FormDraw] = {
    "forms": FormDraw("random_form_job", "form", FORMS, _form_params, (4, 2, 2, 2, 2, 2)),
    "forms5": FormDraw("random_form5_job", "form5", FORMS5, _form5_params, (2, 2, 2, 2, 2, 2, 2)),
    "forms7": FormDraw("random_form7_job", "form7", FORMS7, _form7_params, (3, 2, 3, 2)),
    "forms8": FormDraw("random_form8_job", "form8", FORMS8, _form8_params),
    "forms9": FormDraw("random_form9_job", "form9", FORMS9, _a2a_params, ()),
    "forms10": FormDraw("random_form10_job", "form9", FORMS10, _form10_params, (4, 3, 3, 3)),
    "forms11": FormDraw("random_form11_job", "form11", FORMS11, _form11_params, (4, 2, 2, 2, 2)),
    "forms12": FormDraw("random_form12_job", "form12", FORMS12, _form12_params, (3, 3, 3, 2)),
    "zero12": FormDraw("random_zero12_job", "zero12", ("ds_nvtx",), _zero12_params, ()),
    "forms13": FormDraw("random_form13_job", "form13", FORMS13, _form13_params, (2, 3, 3, 1, 1)),
    "forms14": FormDraw("random_form14_job", "form14", FORMS14, lambda rng, _fmt: _input_only_params(rng)),
    "forms15": FormDraw("random_form15_job", "form15", FORMS15, _queue_params),
    "forms16": FormDraw("random_form16_job", "form16", FORMS16, _form16_params),
    "forms17": FormDraw("random_form17_job", "form17", FORMS17, _form17_params),
    "forms18": FormDraw("random_form18_job", "form18", FORMS18, _form18_params),
}
random_form_job, random_form5_job, random_form7_job, random_form8_job, random_form9_job, random_form10_job = (
    FORM_DRAWS[k] for k in ("forms", "forms5", "forms7", "forms8", "forms9", "forms10"))
random_form11_job, random_form12_job, random_zero12_job, random_form13_job, random_form14_job, random_form15_job = (
    FORM_DRAWS[k] for k in ("forms11", "forms12", "zero12", "forms13", "forms14", "forms15"))
random_form16_job, random_form17_job, random_form18_job = (FORM_DRAWS[k] for k in ("forms16", "forms17", "forms18"))
