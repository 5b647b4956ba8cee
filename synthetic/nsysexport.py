"""Synthetic Nsight Systems SQLite exports whose content is known by construction (issue 28).

Why: the three real exports (``../shared/profiles/nsys``) are time slices without steps, without a
``TARGET_INFO_GPU`` table and without the cases a reader must get right -- two ranks whose correlation ids collide,
rows in no order, NVTX step ranges, start/end ranges, registered strings, CUDA graph executions, an export without
kernels -- nor a gigabyte.  This module simulates a training loop per rank and writes what ``nsys export --type
sqlite`` writes for it: the real exports' table and column names (schema 3.x), serialized ``globalTid`` /
``globalPid`` ids, ``StringIds``, the ``ENUM_*`` tables, version-suffixed CUDA API names, NVTX push/pop ranges
(PyTorch's autograd NVTX names with their ``seq`` / ``op_id`` suffixes, or plain ones), synchronisation records.

One step of one rank is simulated event by event (a host clock and a stream clock: a launch costs the host
``launch_us``; a kernel starts when its stream is free and the launch has reached the GPU; the step ends with a
``cudaStreamSynchronize`` under ``aten::item``), then tiled over the steps with numpy, so a gigabyte is written in
about a minute.  :func:`write` returns the truth of what it wrote.

    python -m synthetic.nsysexport OUT.sqlite [--steps N] [--ranks R] [--ops K]
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

import numpy as np

from synthetic import sqlitefile
from synthetic.rpdtrace import untraced_idle

#: Kernel names as the real exports write them (demangled).
GEMM_BF16 = "nvjet_sm90_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN"
GEMM_FP32 = "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"
ELEMENTWISE_BF16 = ("void at::native::vectorized_elementwise_kernel<8, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
                    "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, "
                    "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
                    "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)")
NCCL_ALLREDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
#: ATen's fused Adam (``torch.optim.Adam(fused=True)``): one multi-tensor kernel updates every parameter per step, as a
#: PyTorch 2.x Nsight export demangles it (h37-fwd69's survey).
FUSED_ADAM = ("void at::native::<unnamed>::multi_tensor_apply_kernel<at::native::<unnamed>::TensorListMetadata<(int)4>, "
              "at::native::<unnamed>::FusedAdamMathFunctor<float, (int)4>>(T1, T2)")
DATALOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
H100 = dict(name="NVIDIA H100 80GB HBM3", busLocation="0000:18:00.0", isDiscrete=1, l2CacheSize=52428800,
            totalMemory=85017493504, memoryBandwidth=3352320000000, clockRate=1980000000, smCount=132,
            chipName="GH100", computeMajor=9, computeMinor=0)
#: Where the session's clock stands when the capture starts (ns), and its UTC time.
SESSION_START_NS = 35_255_823_190
UTC_START_NS = 1_779_630_014_975_716_426
HW_BIT = 1 << 48  # the serialized ids' hardware/VM field, as real exports write it
#: Steps written at a time.
BATCH_STEPS = 2000

SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER NOT NULL, duration INTEGER NOT NULL, startTime INTEGER NOT NULL,
    stopTime INTEGER NOT NULL);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT, systemClockNs INTEGER);
CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL, name TEXT NOT NULL,
    nameEnum INTEGER NOT NULL, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
"""
KERNEL_DDL = """CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
    mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
    gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
    blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
    dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
    gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER,
    graphId INTEGER)"""
_KERNEL_COLS = ("start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "demangledName",
                "shortName", "registersPerThread", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
                "staticSharedMemory", "dynamicSharedMemory", "localMemoryPerThread", "localMemoryTotal", "gridId",
                "graphNodeId", "graphId")
#: The statement that writes one kernel row of :data:`_KERNEL_COLS`.
_KERNEL_INSERT = (f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL ({', '.join(_KERNEL_COLS)}) VALUES "
                  f"({', '.join('?' * len(_KERNEL_COLS))})")


def _uploads_and_sets(con: sqlite3.Connection, gpid: int, copies: list[tuple[int, int, int]], copy_bytes: int,
                      sets: list[tuple[int, int, int]], set_bytes: int) -> None:
    """Write ``copies`` ((start, end, correlation) each) as host-to-device copies of ``copy_bytes`` (source kind 0,
    destination 2) and ``sets`` as memsets of ``set_bytes`` (kind 2), on device 0, stream 7: the rows two writers
    share."""
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,1,0,2)",
                    [(a, b, c, gpid, copy_bytes) for a, b, c in copies])
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, value, bytes, memKind) VALUES (?,?,0,1,7,?,?,0,?,2)",
                    [(a, b, c, gpid, set_bytes) for a, b, c in sets])


def _kernel_row(start: int, end: int, corr: int, gpid: int, name: int, regs: int, grid: tuple[int, ...],
                block: tuple[int, ...], grid_id: int, *, short: int | None = None, device: int = 0, context: int = 1,
                stream: int = 7, dyn_shared: int = 0, graph: tuple[int | None, int | None] = (None, None)) -> tuple:
    """One kernel row of :data:`_KERNEL_COLS` (for :data:`_KERNEL_INSERT`): its times, launch's correlation id,
    process, name id (``short``: its short name's, else the same), registers per thread, grid and block (a missing
    trailing dimension is 1), ``gridId``; on device 0, context 1, stream 7 unless said, no static shared or local
    memory, ``graph`` its ``(graphNodeId, graphId)``.

    Why one writer: the row was spelled out as a 23-value tuple at every kernel a scenario writes (46 of them), where
    a column's place was easy to get wrong and a change of the table's columns meant 46 edits (h37-damage68)."""
    gx, gy, gz = (*grid, 1, 1)[:3]
    bx, by, bz = (*block, 1, 1)[:3]
    return (start, end, device, context, stream, corr, gpid, name, name if short is None else short, regs, gx, gy, gz,
            bx, by, bz, 0, dyn_shared, 0, 0, grid_id, *graph)
MEMCPY_DDL = """CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
    deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER,
    dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER,
    copyCount INTEGER)"""
RUNTIME_DDL = """CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
    eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
    returnValue INTEGER NOT NULL, callchainId INTEGER)"""
SYNC_DDL = """CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, deprecatedSyncType INTEGER, syncType INTEGER NOT NULL,
    eventId INTEGER NOT NULL, eventSyncId INTEGER)"""
#: CUPTI's event records as Nsight 2024.2 exports them (one row per ``cudaEventRecord``; 2024.4 adds ``timestamp`` and
#: ``eventSyncId``).
CUDA_EVENT_DDL = """CREATE TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT (deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
    greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
    eventId INTEGER NOT NULL)"""
#: Two of the tables Nsight Systems 2023 and later writes the MPI trace's calls into (``-t mpi``; the columns of its
#: SQLite schema reference, ``MPI_OTHER_EVENTS`` as a 2023.4.1 export holds it).
MPI_P2P_DDL = """CREATE TABLE MPI_P2P_EVENTS (start INTEGER NOT NULL, end INTEGER, globalTid INTEGER, textId INTEGER,
    commHandle INTEGER, tag INTEGER, remoteRank INTEGER, size INTEGER, requestHandle INTEGER)"""
MPI_OTHER_DDL = """CREATE TABLE MPI_OTHER_EVENTS (start INTEGER NOT NULL, end INTEGER, globalTid INTEGER,
    textId INTEGER)"""
NVTX_DDL = """CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
    rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,
    textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL,
    uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT)"""
GPU_DDL = """CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
    isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
    smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER, ctxId INTEGER,
    computeMajor INTEGER, computeMinor INTEGER)"""
GRAPH_DDL = """CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, graphId INTEGER NOT NULL, graphExecId INTEGER)"""

_EVENT_TYPES = [(33, "NvtxCategory"), (34, "NvtxMark"), (35, "NvtxPushRange"), (36, "NvtxPopRange"),
                (37, "NvtxStartRange"), (38, "NvtxEndRange"), (59, "NvtxPushPopRange"), (60, "NvtxStartEndRange"),
                (75, "NvtxDomainCreate")]
_COPY_KINDS = [(0, "Unknown"), (1, "Host-to-Device"), (2, "Device-to-Host"), (8, "Device-to-Device"), (10, "Peer-to-Peer")]
_MEM_KINDS = [(0, "Pageable"), (1, "Pinned"), (2, "Device"), (3, "Array"), (4, "Managed"), (7, "Unknown")]
_SYNC_TYPES = [(0, "Unknown"), (1, "Event sync"), (2, "Stream wait sync"), (3, "Stream sync"), (4, "Context sync")]


@dataclass
class NsysJob:
    """A training loop under ``nsys profile -t cuda,nvtx``: ``ranks`` processes, one GPU each, ``steps`` steps."""

    steps: int = 12
    ranks: int = 1
    ops: int = 20  # ATen ops per step, one kernel each
    kernel_us: float = 300.0
    kernel: str = GEMM_BF16
    launch_us: float = 8.0
    h2d_bytes: int = 64 << 20
    h2d_us: float = 2000.0
    pinned: bool = True  # the batch copied from pinned host memory (pin_memory=True), else pageable
    copies_block: bool = False  # the batch's copy call holds the host until its transfer ends (a native cudaMemcpy)
    d2h_us: float = 0.0  # the results copied back after the kernels by a blocking cudaMemcpy this long (0: none)
    d2h_bytes: int = 64 << 20
    #: how many results the blocking copy back reads, one ``cudaMemcpy`` of ``d2h_bytes`` each, in turn (a loss and an
    #: accuracy); only where the copy blocks
    d2h_reads: int = 1
    #: the read-back made by ``cudaMemcpyAsync``: into pageable memory its call still returns only once the copy has
    #: completed (CUDA's API synchronization behaviour), into pinned memory (``d2h_pinned``) at once
    d2h_async: bool = False
    d2h_pinned: bool = False
    input_ms: float = 0.0  # the loop waits this long for its DataLoader before each step's work
    nccl_us: float = 0.0  # an NCCL AllReduce kernel per step (0: none)
    sync: bool = True  # .item() at the end of each step: cudaStreamSynchronize
    #: the sync call the program makes (``cudaDeviceSynchronize_v3020``, ``cudaEventSynchronize_v3020``: a native
    #: loop's); its CUPTI_ACTIVITY_KIND_SYNCHRONIZATION row's ``syncType`` follows (Nsight's ENUM_CUPTI_SYNC_TYPE: 1 event,
    #: 3 stream, 4 context synchronize)
    sync_call: str = "cudaStreamSynchronize_v3020"
    #: ``untraced_ms`` is the program's own recorded host work instead: a user NVTX range of that name (``log metrics``)
    after_sync_range: str | None = None
    step_range: str | None = "train_step {k}"  # the user's NVTX range around each step ({k}: its number)
    #: top-level user ranges inside each step, in order (``forward``...); "" a block of ops in no range
    #: (``{rank}``: the process's rank, in these and in ``step_range``: ``rank{rank} forward``)
    extra_ranges: tuple[str, ...] = ()
    #: the op each of ``extra_ranges`` after the first starts at (ascending); empty: the ops split evenly among them
    range_starts: tuple[int, ...] = ()
    #: the NVTX domain ``extra_ranges`` are pushed in (``nvtxDomainCreate``: DeepSpeed's ``DeepSpeed``,
    #: TensorRT-LLM's ``TensorRT-LLM``); None: the default domain
    range_domain: str | None = None
    comm_range: str | None = None  # the user's NVTX range around each step's NCCL all-reduce (``allreduce grads``)
    autograd_nvtx: bool = True  # --pytorch=autograd-nvtx: ATen ops as ``aten::mm, seq = N, op_id = M`` ranges
    #: another framework's range around each op instead of autograd's (``{name}``, ``{seq}``, ``{op_id}`` filled in):
    #: XLA's ``Thunk:#hlo_op=fusion.{seq},unique_hlo_op_id={op_id}#``; None: autograd's (where ``autograd_nvtx``)
    op_text: str | None = None
    #: the NVTX domain the op ranges are pushed in (``tensorflow-core``, XLA's ``TSL``); None: the default domain
    op_domain: str | None = None
    text_ids: bool = False  # NVTX names registered (``textId`` into StringIds) instead of inline ``text``
    gpu_info: bool = True  # a TARGET_INFO_GPU table
    #: "replay": one ``cudaGraphLaunch`` per step whose ``ops`` kernels (graph nodes) share its correlation
    graph_mode: str | None = None  # "graph": one CUDA graph execution per step instead of the kernels; "node"
    kernels_table: bool = True  # False: launches whose kernels the export does not hold (GPU records lost: damage)
    shuffle: bool = True  # rows in no order, as newer exports write them
    os_release: str | None = None  # the target's kernel release (``SoftwareReleaseVersion``: "...-microsoft-standard-WSL2")
    nv_driver: str | None = None  # the display driver (``NvDriverVersion``)
    seed: int = 0
    #: ``nsys profile -t osrt``: before each step's batch the loop blocks this long in one OS call on its own thread
    #: (``read`` of the next batch from a file), the GPU idle; the export then holds an ``OSRT_API`` table, with an
    #: ``ioctl`` inside each step's ``cudaStreamSynchronize`` (GPU busy) and a helper thread's ``pthread_cond_wait``
    #: across the whole step (not the launching thread): neither holds the GPU's idle time
    os_call: str = "read"
    os_call_ms: float = 0.0
    #: rank r's first step starts ``r * rank_lag_us`` after rank 0's: 50 us, the ranks run together; a lag longer
    #: than the steps puts one rank's GPU work after the other's (GPUs busy in turn, one process each)
    rank_lag_us: float = 50.0
    #: a data-parallel job's set-up before its steps, on each rank: a user range ``setup_range`` this long whose one
    #: launch broadcasts the parameters (an NCCL kernel of a tenth of it) -- the steps start after it (0: none)
    setup_ms: float = 0.0
    setup_range: str = "broadcast params"
    #: a range around each step's copy to the GPU (``FSDP::pre_forward (block.0)``: the copy is then a data-parallel
    #: wrapper's upload of offloaded parameters, not the batch); None: the batch's copy, under ``aten::to`` only
    copy_range: str | None = None
    #: the GPU starts each step's work this long after the batch copy's call returned (the work queued, the GPU idle:
    #: vllm_mi300x_decode's graph, launched at 1.5 ms and run from 8.4 ms); the host meanwhile launches the rest and
    #: waits in its sync.  0: the copy starts 2 us after its call returns
    queued_ms: float = 0.0
    #: after its sync, inside its step range, the host runs code no event records this long (untraced Python: Keras's
    #: own between batches), the GPU idle
    untraced_ms: float = 0.0
    #: the GPU starts each of a step's kernels after the first this long after the one before it ends, holding it:
    #: its switch between queued kernels (a CUDA graph's tiny kernels 0.8-2 us apart), or a dependency held longer
    kernel_gap_us: float = 0.0
    #: the machine's first GPU is a small display card (an NVIDIA T400: 6 SMs, Turing) the job does not use, and rank r
    #: runs under ``CUDA_VISIBLE_DEVICES=<r + 1>`` on an H100: its device rows on CUDA ordinal 0 (its process's only
    #: device), ``TARGET_INFO_GPU`` listing every GPU of the machine (the card id 0 / ``cuDevice`` 0, rank r's H100
    #: id r + 1 / ``cuDevice`` r + 1), ``TARGET_INFO_CUDA_DEVICE`` mapping (pid, ``cudaId`` 0) to ``gpuId`` r + 1 --
    #: the per-process table Nsight 2025.1+ writes (2025.1, 2026.1 and 2026.3 exports: survey h37-survey24; its rows
    #: are per process because a process's ordinals are its own: the CS336 export ``tests/fixtures/nsys_ranks`` lists
    #: ``gpuId`` 0 as ``cudaId`` 1 for each of its processes).  Truth: every kernel ran on an H100.
    display_card: bool = False
    #: the step's ops run a training step's kernels as real ones do (:func:`training_step_kernels`): a third of them
    #: the forward's products (``kernel``), the rest but the last the backward's data and weight gradients (``kernel``
    #: with its operands' layout transposed, as cuBLAS names them), the last the optimizer's update (:data:`FUSED_ADAM`);
    #: False: every op runs ``kernel`` (a forward pass's loop, or the loops written before h37-gen70)
    training_kernels: bool = False
    #: the kernel each op of a step runs, in turn (a real export's own names); empty: ``kernel`` (or
    #: ``training_kernels``'); wins over both
    step_kernels: tuple[str, ...] = ()


def gradient_gemms(kernel: str) -> tuple[str, str]:
    """The (data-gradient, weight-gradient) products of a forward product named ``kernel``, as cuBLAS names them: its
    operands' layout transposed.  A backward computes dA = dC·Bᵀ and dB = Aᵀ·dC from the forward's operands, so cuBLAS
    runs them in the two layouts the forward does not: nvjet's ``..._TNN`` forward is ``..._NTN`` / ``..._NNT``
    backward (an nvFuser step on an H200, ``tests/fixtures/wild/nvfuser_h200_first_call``), cuBLAS's
    ``volta_sgemm_*_tn`` (and xmma's ``_tn_n``) forward is ``_nn`` / ``_nt`` backward (a language model under nvprof
    on a V100, ``pyprof_lm_v100_nvprof``: each layout seven times a step).  A name with no layout: itself twice."""
    m = re.search(r"_(?:bias_)?TNN$", kernel)
    if kernel.startswith("nvjet_") and m:
        return kernel[:m.start()] + "_NNT", kernel[:m.start()] + "_NTN"
    m = re.search(r"_tn(?=_|$)", kernel)
    if m:
        return kernel[:m.start()] + "_nn" + kernel[m.end():], kernel[:m.start()] + "_nt" + kernel[m.end():]
    return kernel, kernel


def training_step_kernels(kernel: str, ops: int) -> tuple[str, ...]:
    """The kernels of a training step of ``ops`` ops in order, as a real step runs them: the forward's products
    (``kernel``, a third of the ops), the backward's data and weight gradients in turn (:func:`gradient_gemms`: two
    products per forward one, so twice the forward's FLOPs), then one optimizer update of every parameter
    (:data:`FUSED_ADAM`).  Fewer than three ops: the forward's alone (no step of one or two kernels trains)."""
    if ops < 3:
        return (kernel,) * ops
    forward = max(1, (ops - 1) // 3)
    dgrad, wgrad = gradient_gemms(kernel)
    backward = tuple((dgrad, wgrad)[j % 2] for j in range(ops - 1 - forward))
    return (kernel,) * forward + backward + (FUSED_ADAM,)


def _op_kernels(job: NsysJob) -> tuple[str, ...]:
    """The kernel of each of a step's ops (``step_kernels`` in turn, else ``training_kernels``', else ``kernel``)."""
    if job.step_kernels:
        return tuple(job.step_kernels[i % len(job.step_kernels)] for i in range(job.ops))
    if job.training_kernels:
        return training_step_kernels(job.kernel, job.ops)
    return (job.kernel,) * job.ops


@dataclass
class Truth:
    """What :func:`write` wrote, per GPU (by device id): the numbers a reader must find."""

    steps: int
    step_ms: float
    kernel_ms: dict[int, float] = field(default_factory=dict)
    kernels: dict[int, int] = field(default_factory=dict)
    h2d_bytes: dict[int, int] = field(default_factory=dict)
    h2d_copies: dict[int, int] = field(default_factory=dict)
    sync_ms: float = 0.0  # host time inside cudaStreamSynchronize, all ranks
    nccl_ms: dict[int, float] = field(default_factory=dict)
    runtime_calls: int = 0
    nvtx_ranges: int = 0
    rows: int = 0


class _Strings:
    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def __call__(self, s: str) -> int:
        if s not in self.ids:
            self.ids[s] = len(self.ids) + 1
        return self.ids[s]


def _gid(pid: int, tid: int = 0) -> int:
    return HW_BIT | (pid << 24) | tid


def _open_one(path: str, ddls: list[str], pid: int) -> tuple[sqlite3.Connection, _Strings, int, int]:
    """A new one-process export at ``path``: the common tables and ``ddls`` created.  Returns the connection, its
    interned strings, and the global ids of process ``pid``'s launching thread and of the process."""
    con = sqlitefile.connect(path)
    con.executescript(SCHEMA + ";".join(ddls) + ";")
    return con, _Strings(), _gid(pid, pid), _gid(pid)


class _Calls:
    """One thread's CUDA API calls as a one-process writer makes them: a host clock, correlation ids, the rows.

    Why one home: each writer kept the same few lines of clock, counter and ``CUPTI_ACTIVITY_KIND_RUNTIME`` rows in a
    closure of its own.  ``t`` is the host's clock (ns): a call (:meth:`__call__`) starts there and moves it past the
    call and ``gap`` (the host's own time between two calls); :meth:`row` records a call at given times and leaves the
    clock where it is.  Correlation ids count from 1, one a call, as the real exports' do."""

    def __init__(self, strings: _Strings, t: int, gap: int = 0) -> None:
        self.strings, self.t, self.gap = strings, t, gap
        self.corr = 0
        self.rows: list[tuple[int, int, int, int]] = []

    def __call__(self, name: str, dur_ns: int, then: int | None = None) -> int:
        """A call of ``dur_ns`` from now; the clock moves past it and ``then`` (the gap unless given).  Returns its
        correlation id."""
        c = self.row(name, self.t, self.t + dur_ns)
        self.t += dur_ns + (self.gap if then is None else then)
        return c

    def row(self, name: str, start: int, end: int) -> int:
        """A call from ``start`` to ``end`` (the clock stays); returns its correlation id."""
        self.corr += 1
        self.rows.append((start, end, self.corr, self.strings(name)))
        return self.corr

    def end_last(self, end: int) -> None:
        """The last call returns at ``end``: a wait, which lasts until the GPU work it waits on is done."""
        start, _, corr, name = self.rows[-1]
        self.rows[-1] = (start, end, corr, name)

    def insert(self, con: sqlite3.Connection, gtid: int) -> None:
        """The calls into ``CUPTI_ACTIVITY_KIND_RUNTIME``, made by thread ``gtid``."""
        con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,1,?,?,?,0,NULL)",
                        [(a, b, gtid, c, n) for a, b, c, n in self.rows])


class _FilledRanges:
    """NVTX ranges around kernels that fill them, as a writer of one annotated thread makes them.

    Why one home: the benchmark, pipeline and layer-wise writers each kept the same closures -- a range's kernels
    launched at its start and back to back until its end, the range pushed around them -- differing only in a few
    host timings, given here: ``lead`` (from the work's start to its first kernel), ``trim`` (a kernel ends that much
    before the next one's slot), ``launch`` (each ``cudaLaunchKernel``), ``tail`` (the host's time after the last
    kernel's slot) and ``pause`` (the host's time after popping a range), all in ns."""

    def __init__(self, api: _Calls, lead: int, trim: int, launch: int, tail: int, pause: int) -> None:
        self.api, self.lead, self.trim, self.launch, self.tail, self.pause = api, lead, trim, launch, tail, pause
        self.kern: list[tuple[int, int, int, int]] = []
        self.ranges: list[tuple[int, int, str]] = []

    def work(self, span_ms: float, name: int, n: int, sync: bool = False) -> None:
        """``n`` kernels named ``name`` (a string id) filling ``span_ms`` from the clock, all launched at its start;
        ``sync``: a ``cudaDeviceSynchronize`` waits for the last.  The clock moves past the span (or the launches)."""
        ms = 1_000_000
        api = self.api
        a, k_ns = api.t, int(span_ms * ms / n)
        free = api.t + self.lead
        for _ in range(n):
            self.kern.append((free, free + k_ns - self.trim, api("cudaLaunchKernel_v7000", self.launch), name))
            free += k_ns
        if sync:
            api.row("cudaDeviceSynchronize_v3020", api.t, free + 3000)
        api.t = max(free + self.tail, a + int(span_ms * ms))

    def ranged(self, text: str, body: Callable[[], object]) -> None:
        """A range named ``text`` around what ``body`` does (the clock's span), then the host's pause."""
        a = self.api.t
        body()
        self.ranges.append((a, self.api.t, text))
        self.api.t += self.pause

    def insert(self, con: sqlite3.Connection, gtid: int, gpid: int) -> None:
        """The ranges into ``NVTX_EVENTS`` (pushed by thread ``gtid``) and the kernels into the kernel table (device
        0, stream 7 of process ``gpid``), in the order made."""
        con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                        [(a, b, text, gtid) for a, b, text in self.ranges])
        con.executemany(_KERNEL_INSERT,
                        [_kernel_row(a, b, c, gpid, k, 128, (192,), (128,), j)
                         for j, (a, b, c, k) in enumerate(self.kern)])


class _RangedPython:
    """An export of one annotated ``python`` thread on an RTX 3070 Ti whose NVTX ranges its kernels fill
    (:class:`_FilledRanges` with a benchmark's host timings), opened ``start_ms`` into the session; :meth:`close`
    writes its calls and kernels and closes it, one ms after the last call.

    Why one home: the warm-up benchmark's writer and the tracing-off fix's retraced window (h37-tracingoff3) opened
    and closed the same export line for line (h37-review29: ``duplicates``)."""

    def __init__(self, path: str, pid: int, start_ms: int) -> None:
        us = 1000
        self.pid = pid
        self.con, self.strings, self.gtid, self.gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, KERNEL_DDL, GPU_DDL],
                                                                 pid)
        api = _Calls(self.strings, SESSION_START_NS + start_ms * 1_000_000, gap=1 * us)
        self.filled = _FilledRanges(api, lead=20 * us, trim=2 * us, launch=5 * us, tail=10 * us, pause=50 * us)

    def close(self) -> None:
        """Write the thread's calls, ranges and kernels and the export's closing tables."""
        api = self.filled.api
        stop = api.t + 1_000_000
        api.insert(self.con, self.gtid)
        self.filled.insert(self.con, self.gtid, self.gpid)
        _finish_one(self.con, self.strings, stop, (self.gpid, self.pid, self.gtid), RTX_3070_TI,
                    program="python", thread="python", copy_enums=False, sync_enum=False)

def _step_template(job: NsysJob, rank: int, strings: _Strings) -> dict[str, list]:
    """One step of one rank, times in ns from the step's start; correlation ids from 0."""
    us = 1000
    t = 0
    stream_free = 0
    corr = 0
    op_id = [0]
    ev: dict[str, list] = {"runtime": [], "kernel": [], "memcpy": [], "sync": [], "nvtx": [], "graph": [], "osrt": [],
                            "op_texts": []}

    def op_range(name: str, start: int, end: int, seq: int) -> None:
        op_id[0] += 1
        text = f"{name}, seq = {seq}, op_id = {op_id[0]}" if job.autograd_nvtx else None
        if job.op_text is not None:
            text = job.op_text.format(name=name, seq=seq, op_id=op_id[0])
            ev["op_texts"].append(text)
        if text is not None:
            ev["nvtx"].append((start, end, text))

    def call(name: str, start: int, dur: int) -> tuple[int, int]:
        nonlocal corr
        corr += 1
        ev["runtime"].append((start, start + dur, corr, strings(name)))
        return corr, start + dur

    if job.input_ms:
        a = t
        t += int(job.input_ms * 1e6)
        if job.autograd_nvtx:
            ev["nvtx"].append((a, t, f"{DATALOADER}, op_id = 0"))
    if job.os_call_ms:  # (start, end, name, 0: the launching thread / 1: a helper thread)
        ev["osrt"].append((t, t + int(job.os_call_ms * 1e6), strings(job.os_call), 0))
        t += int(job.os_call_ms * 1e6) + 1 * us
    ranges_at = [t]
    # the batch to the GPU
    a = t
    if job.copies_block:  # the call returns when its transfer is done: the host is blocked through it
        c, t = _blocking_copy(call, ev, t, stream_free, job.h2d_us, job.h2d_bytes, 1, 1 if job.pinned else 0, 2)
        stream_free = t
    else:
        c, t = call("cudaMemcpyAsync_v3020", t + 1 * us, int(job.launch_us * us))
        cs = max(t + 2 * us + int(job.queued_ms * 1e6), stream_free)
        stream_free = cs + int(job.h2d_us * us)
        ev["memcpy"].append((cs, stream_free, c, job.h2d_bytes, 1, 1 if job.pinned else 0, 2))
    t += 1 * us
    op_range("aten::to", a, t, 1)
    if job.copy_range:
        ev["nvtx"].append((a, t, f"{job.copy_range}, op_id = 0" if job.autograd_nvtx else job.copy_range))
    # the step's ops
    kernels = []
    op_kernels = _op_kernels(job)
    for i in range(job.ops):
        a = t
        replay = job.graph_mode == "replay"
        name = "cudaGraphLaunch_v10000" if job.graph_mode in ("graph", "replay") and i == 0 else "cudaLaunchKernel_v7000"
        if job.graph_mode == "graph" and i > 0:
            break
        if not (replay and i > 0):  # a replayed graph's nodes run under its one launch
            c, t = call(name, t + 1 * us, int(job.launch_us * us))
        ks = max(t + 3 * us, stream_free + (int(job.kernel_gap_us * us) if i else 0))
        dur = int(job.kernel_us * us) * (job.ops if job.graph_mode == "graph" else 1)
        stream_free = ks + dur
        if job.graph_mode == "graph":
            ev["graph"].append((ks, stream_free, c, 7))
        else:
            kernels.append((ks, stream_free, c, strings(op_kernels[i]), 7 if job.graph_mode in ("node", "replay") else 0))
        if replay and i > 0:
            continue
        t += 1 * us
        op_range("aten::mm", a, t, 10 + i)
        parts = len(job.extra_ranges)
        # the ops after which a range ends and the next starts
        ends = (tuple(k - 1 for k in job.range_starts) if job.range_starts
                else tuple(job.ops * j // parts for j in range(1, parts)))
        if parts > 1 and i in ends:
            ranges_at.append(t)
    if job.nccl_us:
        a = t
        c, t = call("cudaLaunchKernel_v7000", t + 1 * us, int(job.launch_us * us))
        ks = max(t + 3 * us, stream_free)
        stream_free = ks + int(job.nccl_us * us)
        kernels.append((ks, stream_free, c, strings(NCCL_ALLREDUCE), 0))
        t += 1 * us
        op_range("nccl:all_reduce", a, t, 99)
        if job.comm_range:
            ev["nvtx"].append((a, t, job.comm_range))
    ev["kernel"] = kernels
    dst = 1 if job.d2h_pinned else 0
    if job.d2h_us and job.d2h_async and job.d2h_pinned:  # returns at once: the copy queued behind the kernels
        c, t = call("cudaMemcpyAsync_v3020", t + 1 * us, int(job.launch_us * us))
        cs = max(t + 2 * us, stream_free)
        stream_free = cs + int(job.d2h_us * us)
        ev["memcpy"].append((cs, stream_free, c, job.d2h_bytes, 2, 2, dst))
        t += 1 * us
    elif job.d2h_us:  # the results back to the host: a copy that blocks, waiting for the kernels, then the transfer
        for _ in range(job.d2h_reads):
            c, t = _blocking_copy(call, ev, t, stream_free, job.d2h_us, job.d2h_bytes, 2, 2, dst,
                                  "cudaMemcpyAsync_v3020" if job.d2h_async else "cudaMemcpy_v3020")
            stream_free = t
            t += 1 * us
    if job.sync:
        a = t
        c, t = call(job.sync_call, t + 1 * us, max(stream_free + 5 * us - t - 1 * us, int(job.launch_us * us)))
        ev["sync"].append((stream_free, t - 1 * us, c, _SYNC_TYPE_OF_CALL.get(job.sync_call.partition("_v")[0], 3)))
        if job.os_call_ms:  # the driver's wait inside the sync, while the kernels run
            ev["osrt"].append((a + 2 * us, t - 1 * us, strings("ioctl"), 0))
        t += 1 * us
        op_range("aten::item", a, t, 100)
    if job.after_sync_range and job.untraced_ms:
        ev["nvtx"].append((t, t + int(job.untraced_ms * 1e6), job.after_sync_range))
    t += int(job.untraced_ms * 1e6)
    t += 10 * us
    ranges_at.append(t)
    for j, name in enumerate(job.extra_ranges[:len(ranges_at) - 1]):
        if name:  # "": a block of the step's ops no range marks (ZeRO-1/2's update after DeepSpeed's last backward)
            ev["nvtx"].append((ranges_at[j], ranges_at[j + 1] - 1, name))
    if job.os_call_ms:
        ev["osrt"].append((0, t, strings("pthread_cond_wait"), 1))
    ev["period"] = [t]
    ev["corrs"] = [corr]
    return ev


#: A sync call -> its CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ``syncType`` (:data:`_SYNC_TYPES`).
_SYNC_TYPE_OF_CALL = {"cudaEventSynchronize": 1, "cudaStreamSynchronize": 3, "cudaDeviceSynchronize": 4}


def _blocking_copy(call, ev: dict, t: int, stream_free: int, copy_us: float, nbytes: int, kind: int, src: int,
                   dst: int, name: str = "cudaMemcpy_v3020") -> tuple[int, int]:
    """A ``cudaMemcpy`` that blocks the host: it starts 1 us after ``t``, its transfer once the stream is free, and
    the call returns 2 us after the transfer ends.  Returns (correlation id, the call's end)."""
    us = 1000
    start = t + 1 * us
    cs = max(start + 2 * us, stream_free)
    ce = cs + int(copy_us * us)
    c, end = call(name, start, ce + 2 * us - start)
    ev["memcpy"].append((cs, ce, c, nbytes, kind, src, dst))
    return c, end


def write(path: str, job: NsysJob | None = None) -> Truth:
    """Write the export of ``job`` to ``path`` (a new file) and return its truth."""
    job = job or NsysJob()
    rng = np.random.default_rng(job.seed)
    strings = _Strings()
    con = sqlitefile.connect(path)
    con.executescript(SCHEMA + ";".join([RUNTIME_DDL, NVTX_DDL, MEMCPY_DDL, SYNC_DDL]) + ";")
    if job.kernels_table and job.graph_mode != "graph":
        con.execute(KERNEL_DDL)
    if job.graph_mode == "graph":
        con.execute(GRAPH_DDL)
    if job.gpu_info:
        con.execute(GPU_DDL)
    if job.os_call_ms:
        con.execute(OSRT_DDL)
    truth = Truth(steps=job.steps, step_ms=0.0)
    t_first = SESSION_START_NS + 5_000_000  # the first step 5 ms into the session
    t_last = t_first
    sync_id = strings("cudaStreamSynchronize_v3020")
    nccl = strings(NCCL_ALLREDUCE)
    for rank in range(job.ranks):
        pid = 1000 + rank
        gtid, gpid = _gid(pid, pid), _gid(pid)
        tpl = _step_template(job, rank, strings)
        period = tpl["period"][0]
        ncorr = tpl["corrs"][0]
        truth.step_ms = period / 1e6
        base = t_first + int(rank * job.rank_lag_us * 1000)  # ranks start 50 us apart unless told otherwise
        if job.setup_ms:
            base = _write_setup(con, job, base, rank, gtid, gpid, strings)
        for k in ("kernels", "kernel_ms", "nccl_ms", "h2d_copies", "h2d_bytes"):
            getattr(truth, k)[rank] = 0
        for first in range(0, job.steps, BATCH_STEPS):  # a batch of steps at a time: memory stays small at 1 GB
            steps = np.arange(first, min(first + BATCH_STEPS, job.steps), dtype=np.int64)
            t_last = max(t_last, _write_steps(con, job, truth, tpl, steps, base + steps * period,
                                              100 + steps * (ncorr + 1), rank, gtid, gpid, rng, strings, sync_id, nccl))
        rows = [(int(base), None, 34, None, None, None, "a mark", gtid, None, None, 0) + (None,) * 9]  # not a range
        if job.op_domain and rank == 0:  # nvtxDomainCreate's row: the ops' domain's name
            rows.append((SESSION_START_NS, None, 75, None, None, None, job.op_domain, gtid, None, None, 1) + (None,) * 9)
        if job.range_domain and rank == 0:  # and the extra ranges' (domain 2)
            rows.append((SESSION_START_NS, None, 75, None, None, None, job.range_domain, gtid, None, None, 2) + (None,) * 9)
        _insert(con, "NVTX_EVENTS", 20, rows, rng, False)
        con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (strings("python3"), gtid))
        con.execute("INSERT INTO PROCESSES VALUES (?, ?, 'python3')", (gpid, pid))
        if job.gpu_info:
            g = H100
            con.execute("INSERT INTO TARGET_INFO_GPU VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (0, rank, g["name"], g["busLocation"], 1, g["l2CacheSize"], g["totalMemory"], g["memoryBandwidth"],
                         g["clockRate"], g["smCount"], rank, f"GPU-{rank:08d}", 0, g["chipName"], rank, rank + 1,
                         g["computeMajor"], g["computeMinor"]))
        t_last = max(t_last, base + job.steps * period)
    if not (job.kernels_table or job.graph_mode == "graph"):
        truth.kernels, truth.kernel_ms, truth.nccl_ms = {}, {}, {}
    if job.display_card:
        _behind_display_card(con, job.ranks, job.gpu_info)
    stop = t_last + 1_000_000
    finish_tables(con, strings, stop)
    con.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '2026-05-24T13:40:14', '2026-05-24T13:40:14', ?)",
                (UTC_START_NS, SESSION_START_NS))
    con.execute("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (?, 'Local (CLI)', 'Hostname', 619, 'synthetic-node')", (HW_BIT,))
    for name, nid, value in (("SoftwareReleaseVersion", 618, job.os_release), ("NvDriverVersion", 205, job.nv_driver)):
        if value is not None:
            con.execute("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (?, 'Local (CLI)', ?, ?, ?)", (HW_BIT, name, nid, value))
    con.commit()
    truth.rows = sum(con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
                     for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall())
    con.close()
    return truth


#: The display card of :attr:`NsysJob.display_card` (NVIDIA's T400 4GB: TU117, 6 SMs, 80 GB/s), as ``TARGET_INFO_GPU``
#: describes a GPU (the columns of ``GPU_DDL``).
DISPLAY_CARD = (0, 0, "NVIDIA T400 4GB", "0000:17:00.0", 1, 1048576, 4294967296, 80000000000, 1425000000, 6, 0,
                "GPU-display", 0, "TU117", 0, 0, 7, 5)
CUDA_DEVICE_DDL = """CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER NOT NULL, cudaId INTEGER NOT NULL,
    pid INTEGER NOT NULL, uuid TEXT, numMultiprocessors INTEGER)"""


def _behind_display_card(con: sqlite3.Connection, ranks: int, gpu_info: bool) -> None:
    """:attr:`NsysJob.display_card`: each rank's device rows on its process's ordinal 0, the machine's GPUs listed by
    Nsight's own numbering with the display card first, and each process's ordinal mapped to its GPU."""
    for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'CUPTI_%'").fetchall():
        if "deviceId" in [r[1] for r in con.execute(f'PRAGMA table_info("{t}")')]:
            con.execute(f'UPDATE "{t}" SET deviceId = 0')
    if gpu_info:
        con.execute("UPDATE TARGET_INFO_GPU SET id = id + 1, cuDevice = cuDevice + 1, pwGpuId = pwGpuId + 1")
        con.execute(f"INSERT INTO TARGET_INFO_GPU VALUES ({', '.join('?' * len(DISPLAY_CARD))})", DISPLAY_CARD)
    con.execute(CUDA_DEVICE_DDL)
    con.executemany("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (?, 0, ?, ?, ?)",
                    [(r + 1, 1000 + r, f"GPU-{r:08d}", H100["smCount"]) for r in range(ranks)])


#: The NCCL kernel of :func:`_write_setup`'s parameter broadcast.
NCCL_BROADCAST = "ncclDevKernel_Broadcast_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def _write_setup(con: sqlite3.Connection, job: NsysJob, t0: int, rank: int, gtid: int, gpid: int,
                 strings: _Strings) -> int:
    """One rank's set-up before its steps (``job.setup_ms`` from ``t0``): the user range ``job.setup_range`` around one
    launch of a parameter broadcast (correlation id 1: the steps' start at 100), the rest host work.  Returns when the
    steps start."""
    end = t0 + int(job.setup_ms * 1e6)
    launch = t0 + 10_000
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, 1, ?, 0, NULL)",
                (launch, launch + int(job.launch_us * 1000), gtid, strings("cudaLaunchKernel_v7000")))
    ks = launch + int(job.launch_us * 1000) + 3_000
    nm = strings(NCCL_BROADCAST)
    row = _kernel_row(ks, ks + int(job.setup_ms * 1e5), 1, gpid, nm, 32, (1,), (256,), 999_999, device=rank,
                      context=rank + 1, graph=(None, 0))
    con.execute(_KERNEL_INSERT, row)
    con.execute(f'INSERT INTO "NVTX_EVENTS" VALUES ({", ".join("?" * 20)})',
                (t0, end - 1_000, 59, None, None, None, job.setup_range, gtid, None, None, 0) + (None,) * 9)
    return end + 10_000


def _write_steps(con: sqlite3.Connection, job: NsysJob, truth: Truth, tpl: dict, steps: np.ndarray, offs: np.ndarray,
                 coff: np.ndarray, rank: int, gtid: int, gpid: int, rng: np.random.Generator, strings: _Strings,
                 sync_id: int, nccl: int) -> int:
    """Steps ``steps`` of one rank (the template at offsets ``offs``, correlation ids from ``coff``): written, counted
    into ``truth``; returns the latest end written."""
    n = steps.size

    def tiled(rows: list, ncols: int) -> list[tuple]:
        """The template's rows at every step: times (columns 0, 1) shifted, correlation ids (column 2) too."""
        if not rows:
            return []
        a = np.array([r[:ncols] for r in rows], dtype=np.int64)
        out = np.repeat(a[None, :, :], n, axis=0)
        out[:, :, 0] += offs[:, None]
        out[:, :, 1] += offs[:, None]
        if ncols > 2:
            out[:, :, 2] += coff[:, None]
        return [tuple(r) for r in out.reshape(-1, ncols).tolist()]

    last = 0
    rows = [(s, e, 1, gtid, c, nm, 0, None) for s, e, c, nm in tiled(tpl["runtime"], 4)]
    _insert(con, "CUPTI_ACTIVITY_KIND_RUNTIME", 8, rows, rng, job.shuffle)
    truth.runtime_calls += len(rows)
    truth.sync_ms += sum(r[1] - r[0] for r in rows if r[5] == sync_id) / 1e6
    if job.kernels_table and job.graph_mode != "graph":
        first_id = int(steps[0]) * len(tpl["kernel"]) if steps.size else 0
        rows = [_kernel_row(s, e, c, gpid, nm, 32, (128,), (256,), first_id + i, device=rank, context=rank + 1,
                            graph=(first_id + i if g else None, g))
                for i, (s, e, c, nm, g) in enumerate(tiled(tpl["kernel"], 5))]
        con.executemany(_KERNEL_INSERT, _order(rows, rng, job.shuffle))
        truth.kernels[rank] += len(rows)
        truth.kernel_ms[rank] += sum(r[1] - r[0] for r in rows) / 1e6
        truth.nccl_ms[rank] += sum(r[1] - r[0] for r in rows if r[7] == nccl) / 1e6
        last = max([last] + [r[1] for r in rows])
    if job.graph_mode == "graph":
        rows = [(s, e, rank, rank + 1, None, 7, c, gpid, g, g) for s, e, c, g in tiled(tpl["graph"], 4)]
        _insert(con, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", 10, rows, rng, job.shuffle)
        truth.kernels[rank] += len(rows)
        truth.kernel_ms[rank] += sum(r[1] - r[0] for r in rows) / 1e6
    rows = [(s, e, rank, rank + 1, None, 7, c, gpid, b, k, None, sk, dk, None, None, rank, rank + 1, None, None, None, 1)
            for s, e, c, b, k, sk, dk in tiled(tpl["memcpy"], 7)]
    _insert(con, "CUPTI_ACTIVITY_KIND_MEMCPY", 21, rows, rng, job.shuffle)
    truth.h2d_copies[rank] += sum(1 for r in rows if r[9] == 1)
    truth.h2d_bytes[rank] += sum(r[8] for r in rows if r[9] == 1)
    # real exports write deviceId 0 for every process's sync records (read off h100_fsdp_window)
    rows = [(s, e, 0, rank + 1, None, 7, c, gpid, None, k, 4294967295, 0) for s, e, c, k in tiled(tpl["sync"], 4)]
    _insert(con, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", 12, rows, rng, job.shuffle)
    texts = [text for _, _, text in tpl["nvtx"]]
    times = tiled([(a, b) for a, b, _ in tpl["nvtx"]], 2)
    in_domain = {t for t in tpl["op_texts"]} if job.op_domain else set()  # domain 1: the ops' (write() names it)
    extra = set(job.extra_ranges) if job.range_domain else set()  # domain 2: the extra ranges'

    def domain(text: str) -> int:
        return 1 if text in in_domain else 2 if text in extra else 0

    # the user's ranges may name their rank (``{rank}``: ``rank{rank} forward``, a DDP script's tag), as may the steps'
    named = {t: t.format(rank=rank) for t in job.extra_ranges if "{rank}" in t}
    rows = [(s, e, 59, None, None, None, named.get(texts[i % len(texts)], texts[i % len(texts)]), gtid, None, None,
             domain(texts[i % len(texts)])) + (None,) * 9 for i, (s, e) in enumerate(times)]
    if job.step_range:
        period = tpl["period"][0]
        rows += [(int(o), int(o + period - 2000), 59, None, None, None, job.step_range.format(k=int(k), rank=rank), gtid,
                  None, None, 0) + (None,) * 9 for k, o in zip(steps.tolist(), offs.tolist())]
    if job.text_ids:
        rows = [r[:6] + (None,) + r[7:9] + ((strings(r[6]) if r[6] is not None else None),) + r[10:] for r in rows]
    _insert(con, "NVTX_EVENTS", 20, rows, rng, job.shuffle)
    truth.nvtx_ranges += len(rows)
    if tpl["osrt"]:
        helper = gtid + 1  # another thread of the process
        calls = tpl["osrt"]
        rows = [(s, e, 27, helper if calls[i % len(calls)][3] else gtid, 0, calls[i % len(calls)][2], 0, 0, 0)
                for i, (s, e) in enumerate(tiled([c[:2] for c in calls], 2))]
        _insert(con, "OSRT_API", 9, rows, rng, job.shuffle)
    return last


def _order(rows: list, rng: np.random.Generator, shuffle: bool) -> list:
    if not shuffle or len(rows) < 2:
        return rows
    return [rows[i] for i in rng.permutation(len(rows))]


def _insert(con: sqlite3.Connection, table: str, ncols: int, rows: list, rng: np.random.Generator, shuffle: bool) -> None:
    if rows:
        con.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" * ncols)})', _order(rows, rng, shuffle))


# --------------------------------------------------------------------------- windows without GPU work (issue 37)

#: Windows that hold no GPU work, each written with what it holds by construction (:func:`write_window`):
#: ``startup`` -- the window ends during start-up: context creation in ``cudaFree``, streams, ``cudaMalloc``, one
#: memset, no kernel launched; ``nvtx_only`` -- the user's NVTX ranges, CUDA tracing on, no CUDA call;
#: ``tracing_off`` -- NVTX ranges with CUDA tracing off in the capture's options; ``no_cuda_call`` -- CUDA tracing
#: on, nothing recorded (the program had not reached its GPU work).
WINDOWS = ("startup", "nvtx_only", "tracing_off", "no_cuda_call")
#: The OS runtime trace's table (``-t osrt``), as the real exports write it (Mordred's hash join, Nsight 2023).
OSRT_DDL = """CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
    globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL,
    nestingLevel INTEGER, callchainId INTEGER NOT NULL)"""
MEMSET_DDL = """CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
    deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
    correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER,
    memKind INTEGER)"""
CAPTURE_DDL = "CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT)"
#: Nsight's own messages about the session (``DIAGNOSTIC_EVENT``, as Nsight Systems 2025.6 exports it).
DIAG_DDL = """CREATE TABLE DIAGNOSTIC_EVENT (timestamp INTEGER NOT NULL, timestampType INTEGER NOT NULL,
    source INTEGER NOT NULL, severity INTEGER NOT NULL, text TEXT NOT NULL, globalPid INTEGER)"""
#: The start-up calls of :func:`write_window` ("startup"): (name as exported, count, ns each); the runtime initialises
#: (``cuModuleGetLoadingMode``, as the real climate U-Net's export records it), then its next call creates the CUDA
#: context and takes its ~120 ms.
STARTUP_CALLS = (("cuModuleGetLoadingMode", 1, 2_000), ("cudaFree_v3020", 1, 120_000_000),
                 ("cudaStreamCreateWithFlags_v5000", 4, 15_000), ("cudaMalloc_v3020", 2, 60_000),
                 ("cudaMemsetAsync_v3020", 1, 9_000))
WINDOW_RANGES = ("load batch", "preprocess")


def write_window(path: str, window: str, ranges: int = 6, process: str = "python3",
                 streams: dict[str, str] | None = None, driver_thread: str = "", options: bool = True,
                 collected: str = "", range_names: tuple[str, ...] = WINDOW_RANGES) -> dict:
    """Write an export whose window holds no GPU work, as ``window`` (:data:`WINDOWS`) says; return its truth:
    the window, the CUDA calls, NVTX ranges and memset bytes written, and the context creation's ms.  ``process``
    names the profiled program (a Python interpreter, or a CUDA program's own binary); ``streams`` what it wrote
    (``{"stdout": ..., "stderr": ...}``), kept as Nsight keeps it (``ProcessStreams``).  ``driver_thread``: the CUDA
    driver's ``cuda-EvtHandlr`` thread in the ``"program"``'s process (it initialised CUDA) or in Nsight's own
    (``"profiler"``: the CLI queries the GPUs); ``options=False``: an older export that keeps no capture options
    (no ``META_DATA_CAPTURE`` rows); ``range_names``: the NVTX ranges each of the ``ranges`` turns writes, in order
    (a training loop's ``Forward`` / ``Backward`` / ``SGD``: the job the names say, whatever the window holds)."""
    if window not in WINDOWS:
        raise ValueError(f"window {window!r}: one of {WINDOWS}")
    pid = 4242
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, MEMSET_DDL, CAPTURE_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 2_000_000, gap=5_000)
    nvtx = memset = 0
    if window == "startup":
        for name, n, ns in STARTUP_CALLS:
            for _ in range(n):
                corr = api(name, ns)
                if name.startswith("cudaMemset"):
                    end = api.rows[-1][1]
                    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                                (end, end + 2_000, 0, 1, None, 13, corr, gpid, 0, 4608, None, 2))
                    memset += 4608
        api.insert(con, gtid)
    else:
        for k in range(ranges if window in ("nvtx_only", "tracing_off") else 0):
            for name in range_names:
                con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                            "VALUES (?, ?, 59, ?, ?, 0)", (api.t, api.t + 3_000_000, name, gtid))
                api.t += 3_500_000
                nvtx += 1
    stop = api.t + 1_000_000
    con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (strings(process), gtid))
    con.execute("INSERT INTO PROCESSES VALUES (?, ?, ?)", (gpid, pid, process))
    if driver_thread:
        owner = pid if driver_thread == "program" else pid - 9
        if owner != pid:
            con.execute("INSERT INTO PROCESSES VALUES (?, ?, 'nsys')", (_gid(owner), owner))
        con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (strings("cuda-EvtHandlr"), _gid(owner, owner + 131)))
    if collected:
        strings(collected)
    if streams:
        con.execute("CREATE TABLE IF NOT EXISTS ProcessStreams (globalPid INTEGER NOT NULL, filenameId INTEGER NOT "
                    "NULL, contentId INTEGER NOT NULL)")
        for stream, text in streams.items():
            con.execute("INSERT INTO ProcessStreams VALUES (?, ?, ?)", (
                gpid, strings(f"/tmp/nvidia/nsight_systems/streams/pid_{pid}_{stream}.log"), strings(text)))
    finish_tables(con, strings, stop, copy_enums=False, sync_enum=False)
    cuda = "false" if window == "tracing_off" else "true"
    con.executemany("INSERT INTO META_DATA_CAPTURE VALUES (?, ?)", [
        ("START_TRIGGER", "Immediate"), ("STOP_TRIGGER", "Delayed"), ("PROCESS_0:COMMAND", "python3"),
        ("PROCESS_0:COLLECT_CUDA_TRACE", cuda), ("PROCESS_0:COLLECT_NVTX_TRACE", "true")] if options else [])
    if not options and window != "startup":  # an older export writes no empty table: none of CUDA's
        con.executescript("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME; DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET;")
    con.commit()
    con.close()
    return {"window": window, "cuda_calls": len(api.rows), "nvtx_ranges": nvtx, "memset_bytes": memset,
            "context_ms": STARTUP_CALLS[1][2] / 1e6 if window == "startup" else 0.0}


def write_tracing_off_loop(path: str, command: tuple[str, ...] = ("python", "train.py", "--steps", "10"),
                           iteration: str = "train_iter", iterations: int = 10, warmup: int = 2,
                           step_ms: float = 120.0, warm_ms: float = 600.0, startup_ms: float = 5.0,
                           launched: bool = True) -> dict:
    """Write an export recorded with ``nsys profile -t nvtx <command>``: the program's command line kept in the
    capture's options (``PROCESS_0:COMMAND`` / ``ARGUMENT_n``), CUDA tracing off, and its NVTX training loop --
    ``iterations`` ranges named ``iteration``, each holding ``forward`` then ``backward``, the first ``warmup`` of them
    ``warm_ms`` long, the rest ``step_ms``; no CUDA table.  Return its truth: the program as a shell reads it, the
    iteration range, the warm-up count, the trace list it was recorded with and the one to record with; where the
    first steady iteration starts and the last one ends since the launch (``steady_ms``, ``end_ms``: the loop begins
    ``startup_ms`` after the session's start, which is the launch where ``launched``: nsys started the program,
    ``HOW_TO_ATTACH`` LaunchAnother)."""
    pid = 4242
    con, strings, gtid, gpid = _open_one(path, [NVTX_DDL, CAPTURE_DDL], pid)
    t = SESSION_START_NS + int(startup_ms * 1e6)
    steady = None
    for k in range(iterations):
        length = int((warm_ms if k < warmup else step_ms) * 1e6)
        steady = (t - SESSION_START_NS) / 1e6 if k == warmup else steady
        fwd, bwd = int(length * 0.3), int(length * 0.6)
        for name, start, end in ((iteration, t, t + length), ("forward", t + 100_000, t + 100_000 + fwd),
                                 ("backward", t + 200_000 + fwd, t + 200_000 + fwd + bwd)):
            con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                        "VALUES (?, ?, 59, ?, ?, 0)", (start, end, name, gtid))
        t += length + 1_000_000
    con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (strings(command[0]), gtid))
    con.execute("INSERT INTO PROCESSES VALUES (?, ?, ?)", (gpid, pid, command[0]))
    finish_tables(con, strings, t + 1_000_000, copy_enums=False, sync_enum=False)
    con.executemany("INSERT INTO META_DATA_CAPTURE VALUES (?, ?)", [
        ("CAPTURE_EVENT_TYPE", "NvtxEvents"), ("START_TRIGGER", "Immediate"), ("STOP_TRIGGER", "Delayed"),
        ("PROCESS_0:COMMAND", command[0]), *((f"PROCESS_0:ARGUMENT_{i}", a) for i, a in enumerate(command[1:])),
        ("PROCESS_0:COLLECT_NVTX_TRACE", "true"), ("PROCESS_0:COLLECT_CUDA_TRACE", "false"),
        *([("PROCESS_0:HOW_TO_ATTACH", "LaunchAnother")] if launched else [])])
    con.commit()
    con.close()
    return {"program": shlex.join(command), "iteration": iteration, "warmup": warmup, "traced": "nvtx",
            "retrace": "cuda,nvtx", "nvtx_ranges": 3 * iterations, "steady_ms": steady, "step_ms": step_ms,
            "end_ms": (t - 1_000_000 - SESSION_START_NS) / 1e6}


def write_retraced_loop(path: str, iterations: int = 5, iteration: str = "train_iter", step_ms: float = 120.0,
                        kernels: int = 12) -> dict:
    """Write what the tracing-off fix asks for, recorded with CUDA on: a window of ``iterations`` steady ``iteration``
    ranges (each a ``forward`` and a ``backward`` range filled with kernels, ``step_ms`` long), as one report holds
    them -- one where each NVTX capture range is a report of its own (``--capture-range-end=repeat-shutdown``), or
    several where one window is put on the steady iterations.  Return the truth: the iterations it holds."""
    out = _RangedPython(path, pid=4243, start_ms=1)
    filled = out.filled
    ranged, gemm = filled.ranged, out.strings("ampere_sgemm_128x64_tn")
    for _ in range(iterations):
        ranged(iteration, lambda: (ranged("forward", lambda: filled.work(step_ms * 0.3, gemm, kernels, sync=True)),
                                   ranged("backward", lambda: filled.work(step_ms * 0.6, gemm, 2 * kernels,
                                                                          sync=True))))
    out.close()
    return {"iterations": iterations, "iteration": iteration}


def write_marked_input_loop(path: str, iterations: int = 12, load_ms: float = 3.0, unmarked_ms: float = 0.0,
                            step_ms: float = 10.0, fetch: str = "load_batch", kernel: str = "ampere_sgemm_128x64_tn",
                            idle_process_ms: float | None = None, idle_at_ms: float = 40.0) -> dict:
    """Write a training loop of a program with no ML framework in the capture (cuBLAS-named kernels only, as a C++
    trainer -- llm.c's -- or a Python loop with NVTX alone writes it): each ``train_iter`` range holds a range named
    ``fetch`` in which the host reads its next batch for ``load_ms`` and launches nothing, then ``unmarked_ms`` of
    host time no range covers, then ``forward``, ``backward`` and ``optimizer_step`` ranges of kernels, each ended by
    a device-wide sync.  Return the truth: the GPU waits ``load_ms`` a step for the program's own fetch (its input
    pipeline) and ``unmarked_ms`` for host time that is not input.

    ``idle_process_ms``: a second ``python3`` process in the capture makes three runtime calls and launches nothing
    (a helper or worker that touched CUDA): ``cudaGetDeviceCount``, a ``cudaFree`` that creates its context and lasts
    ``idle_process_ms`` from ``idle_at_ms`` into the session -- across the loop's steps -- and
    ``cudaStreamIsCapturing``.  Truth: its calls run in its own context and hold none of the loop's GPU work, so every
    reading of the loop is the one without it."""
    out = _RangedPython(path, pid=4343, start_ms=1)
    if idle_process_ms is not None:
        _idle_process(out, idle_process_ms, idle_at_ms)
    f = out.filled
    work = out.strings(kernel)

    def host(ms: float) -> Callable[[], None]:
        def run() -> None:
            f.api.t += int(ms * 1_000_000)
        return run

    def iteration() -> None:
        f.ranged(fetch, host(load_ms))
        host(unmarked_ms)()
        f.ranged("forward", lambda: f.work(step_ms * 0.3, work, 6, sync=True))
        f.ranged("backward", lambda: f.work(step_ms * 0.6, work, 12, sync=True))
        f.ranged("optimizer_step", lambda: f.work(step_ms * 0.1, work, 2, sync=True))

    for _ in range(iterations):
        f.ranged("train_iter", iteration)
    out.close()
    return {"iterations": iterations, "input_ms": load_ms, "unmarked_ms": unmarked_ms, "fetch": fetch}


def _idle_process(out: _RangedPython, free_ms: float, at_ms: float, pid: int = 5151) -> None:
    """Into ``out``'s export, a second process that launches nothing: three runtime calls on its main thread, its
    ``cudaFree`` (the context's creation) ``free_ms`` long from ``at_ms`` into the session."""
    gpid, gtid = _gid(pid), _gid(pid, pid)
    calls = _Calls(out.strings, SESSION_START_NS + int(at_ms * 1_000_000), gap=10_000)
    calls("cudaGetDeviceCount_v5050", 20_000)
    calls("cudaFree_v3020", int(free_ms * 1_000_000))
    calls("cudaStreamIsCapturing_v10000", 2_000)
    calls.corr = 0
    out.con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,1,?,?,?,0,NULL)",
                        [(a, b, gtid, 1_000_000 + c, n) for a, b, c, n in calls.rows])
    out.con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (out.strings("python3"), gtid))
    out.con.execute("INSERT INTO PROCESSES VALUES (?, ?, ?)", (gpid, pid, "python3"))


def write_untraced_iteration_tail(path: str, iterations: int = 30, name: str = "decode {k}", work_ms: float = 0.4,
                                  tail_ms: float = 0.5, jitter: float = 0.2, tail_range: str | None = None,
                                  seed: int = 0, tail_call: str | None = None) -> dict:
    """Write a loop of a program with no ML framework in the capture (cuBLAS-named kernels, NVTX alone: a C++ engine's
    or a plain Python loop's), each iteration one range ``name`` (``{k}`` its number: ``decode 3``, ``step 3``) that
    holds 8 kernels filling ``work_ms`` ended by a device-wide sync, then ``tail_ms`` (times 1 +/- ``jitter``, drawn
    per iteration) of host code no event records -- the loop's own Python or C++ after its read-back, the GPU idle --
    before the range closes.  ``tail_range``: that host time marked by a range of that name (the control: the program
    says what it runs there); ``tail_call``: that host time spent in one runtime call of that name instead (the
    program's own ``cudaMemGetInfo`` each iteration, recorded as ``CUPTI_ACTIVITY_KIND_RUNTIME`` rows are).

    Truth: the GPU idles ~``tail_ms`` an iteration between iterations (mean given as ``tail_ms`` in the truth, drawn
    exactly), in host time the capture records nothing of unless ``tail_range`` names it; the iteration range itself
    spans the whole iteration, so it names no work of the host's in that tail."""
    rng = np.random.default_rng(seed)
    out = _RangedPython(path, pid=4545, start_ms=1)
    f = out.filled
    work = out.strings("ampere_sgemm_128x64_tn")
    tails = tail_ms * (1.0 + jitter * rng.uniform(-1.0, 1.0, iterations))

    def tail(ms: float) -> Callable[[], None]:
        def run() -> None:
            if tail_call:
                f.api(tail_call, int(ms * 1_000_000), then=0)
            else:
                f.api.t += int(ms * 1_000_000)
        return run

    for k in range(iterations):
        def iteration(ms: float = float(tails[k])) -> None:
            f.work(work_ms, work, 8, sync=True)
            if tail_range:
                f.ranged(tail_range, tail(ms))
            else:
                tail(ms)()
        f.ranged(name.format(k=k), iteration)
    out.close()
    return {"iterations": iterations, "tail_ms": float(tails.mean()), "tails_ms": tails.tolist(), "work_ms": work_ms,
            "tail_range": tail_range, "tail_call": tail_call}


#: A codec's kernel (NVIDIA's Video Codec SDK samples convert each decoded NV12 frame to RGB in ``Nv12ToColor32``):
#: decoding data, no matrix product.
CODEC_KERNEL = "void Nv12ToColor32<BGRA32>(unsigned char*, int, unsigned char*, int, int, int, int)"


def write_marked_forward_loop(path: str, iterations: int = 10, forward_ops: int = 20, backward_ops: int = 0,
                              outer: str | None = "iteration-{k}", forward: str | None = "forward",
                              kernel: str = GEMM_BF16, seed: int = 0, ranks: int = 1) -> Truth:
    """Write a loop of a program that marks its forward pass with NVTX alone (``nsys profile -t cuda,nvtx``, no
    ``--pytorch=autograd-nvtx``: no op ranges), each iteration one range ``outer`` (``{k}`` its number; None: none)
    around one ``forward`` range (None: none) holding the iteration's input copy, its ``forward_ops`` kernels
    (``kernel``: a GEMM) and its read-back; ``backward_ops`` > 0: that many more kernels after the ``forward`` range in
    no range -- an unmarked backward pass and optimizer step (the control).

    Range names as public scripts push them (searched with ``find_string``): ``torch.cuda.nvtx.range_push("forward")``
    / ``range_pop()`` around ``output = model(input)`` inside ``range_push("Body of iteration {}".format(i))`` (an
    ImageNet training script: its backward then unmarked), ``range_push("iteration{}".format(i))`` with
    ``range_push("forward")`` around ``logits, loss = model(X, Y)`` (a nanoGPT profiling guide),
    ``nvtx.range_push(f"iter_{i}")`` > ``nvtx.range_push("forward")`` under ``torch.no_grad()`` with the backward
    range only ``if args.backward`` (a kernel benchmark), ``range_push("forward")`` around a multi-layer attention
    forward (apex's ``multihead_attn`` perf test).  A decode loop's: ``torch.cuda.nvtx.range_push(f"decode {i}")``
    around ``llm.generate([prompt_text], ...)`` (a disaggregated-serving example's decode node),
    ``range_push(f"decode_token_{index}")``, ``range_push(f"decode_step_{i}")`` around ``llm.engine.step()``,
    ``range_push(f"Decode/step_{self._decode_step:03d}")`` (VLM profiling hooks), ``nvtx.range_push(f"DECODE_ITER_
    {test_iter}")`` -- written here as ``outer="decode {k}", forward=None``; ``kernel=CODEC_KERNEL``: a codec's
    decoding of frames under the same names (the control), ``forward="decode"`` with ``backward_ops``: an
    autoencoder's ``decode`` in training (the control).
    ``ranks`` > 1: that many processes in one export, each its own GPU and its own ranges, at the same times (a
    data- or tensor-parallel job profiled with one ``nsys`` over ``torchrun``; vLLM's TP workers each their own
    ``execute_model``).

    Truth: ``iterations`` forward passes of ``forward_ops`` kernels each where ``backward_ops`` is 0 and ``kernel`` is
    a matrix product (inference: nothing but the marked work launched a kernel); a codec's decoding (no model) with
    ``CODEC_KERNEL``; else a training loop whose backward the names do not show."""
    inner = (forward, "") if backward_ops else (forward,)
    job = NsysJob(steps=iterations, ops=forward_ops + backward_ops, step_range=outer, autograd_nvtx=False,
                  extra_ranges=inner if forward else (), kernel=kernel,
                  range_starts=(forward_ops,) if backward_ops and forward else (), seed=seed, ranks=ranks)
    return write(path, job)


def write_graphed_forward_loop(path: str, iterations: int = 10, graph_ops: int = 20, after_ops: int = 3,
                               backward_graph_ops: int = 0, seed: int = 0) -> Truth:
    """Write a loop whose forward pass is one CUDA graph replay inside the user's NVTX range ``forward`` (inside
    ``iteration-{k}``; ``nsys profile -t cuda,nvtx``, no op ranges): each iteration copies its input in, replays the
    graph (one ``cudaGraphLaunch`` whose ``graph_ops`` kernels share its correlation id) inside ``forward``, then
    launches ``after_ops`` eager kernels of its own after the range (a read-out: ``argmax`` / a loss) and reads the
    result back.  ``backward_graph_ops`` > 0: a second graph replay after the range running that many kernels -- the
    backward of a forward graphed with ``torch.cuda.make_graphed_callables`` (its autograd function replays the
    backward graph), the control.

    Why: PyTorch's CUDA-graph recipe captures ``static_output = model(static_input)`` once and then, per batch,
    ``static_input.copy_(data); g.replay()`` (torch.cuda.graphs docs); vLLM replays one graph per decode step inside its
    ``gpu_model_runner: forward`` scope (``vllm/v1/worker/gpu_model_runner.py``, ``record_function_or_nullcontext``
    of ``vllm/v1/utils.py`` pushing ``nvtx.annotate(name)`` under ``VLLM_NVTX_SCOPES_FOR_PROFILING=1``) and samples
    with eager kernels after it (``gpu_model_runner: sample``).  A forward of one launch runs ``graph_ops`` kernels.

    Truth: ``iterations`` forward passes (inference) where ``backward_graph_ops`` is 0: the ``after_ops`` kernels
    after each forward are fewer than the forward's ``graph_ops``; else a training loop (a backward of
    ``backward_graph_ops`` kernels after each forward)."""
    truth = write(path, NsysJob(steps=iterations, ops=graph_ops, graph_mode="replay", step_range="iteration-{k}",
                                extra_ranges=("forward",), autograd_nvtx=False, seed=seed))
    con = sqlitefile.connect(path)
    sid = {v: k for k, v in con.execute("SELECT id, value FROM StringIds")}

    def string(value: str) -> int:
        if value not in sid:
            sid[value] = max(sid.values()) + 1
            con.execute("INSERT INTO StringIds VALUES (?, ?)", (sid[value], value))
        return sid[value]

    launches = con.execute("SELECT r.start, r.end, r.globalTid, r.correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
                           "WHERE r.nameId = ? ORDER BY r.start", (sid["cudaGraphLaunch_v10000"],)).fetchall()
    template = con.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1").fetchone()
    cols = [r[1] for r in con.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
    corr = con.execute("SELECT MAX(correlationId) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0] + 1000
    grid = con.execute("SELECT MAX(gridId) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0] + 1
    eager, graph = string("cudaLaunchKernel_v7000"), string("cudaGraphLaunch_v10000")
    readout = string("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, ArgMaxOps<float>>>")
    backward = string(GEMM_BF16)
    for a, e, tid, c in launches:
        con.execute("UPDATE NVTX_EVENTS SET end = ? WHERE text = 'forward' AND start <= ? AND end >= ?", (e + 1_000, a, e))
        gpu = con.execute("SELECT MAX(end) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = ?", (c,)).fetchone()[0]
        host, calls = e + 5_000, []
        if backward_graph_ops:
            calls.append((graph, backward, backward_graph_ops, 20_000))
        calls += [(eager, readout, 1, 5_000)] * after_ops
        for api, name, n, us in calls:
            con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,1,?,?,?,0,NULL)",
                        (host, host + 4_000, tid, corr, api))
            for _ in range(n):
                row = dict(zip(cols, template))
                row.update(start=gpu + 1_000, end=gpu + 1_000 + us, correlationId=corr, gridId=grid,
                           demangledName=name, shortName=name,
                           graphId=row["graphId"] if api == graph else 0,
                           graphNodeId=grid if api == graph else None)
                con.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL ({', '.join(cols)}) VALUES "
                            f"({', '.join('?' * len(cols))})", [row[k] for k in cols])
                gpu, grid = gpu + 1_000 + us, grid + 1
            host, corr = host + 5_000, corr + 1
    con.commit()
    con.close()
    return truth


def write_loader_thread_batches(path: str, steps: int = 12, fetch_ms: float = 1.0, ahead: bool = True,
                                main_range: str | None = None, seed: int = 0) -> Truth:
    """Write a loop whose input is fetched by a loader thread of its own process that marks each fetch with an NVTX
    range ``batch`` while the main thread launches every kernel (``NsysJob``'s 12 steps of a copy and 20 GEMMs, no
    op ranges).  ``ahead``: the loader fetches all ``steps`` batches (``fetch_ms`` each, back to back) before the loop
    starts -- a queue filled up front, the GPU never waiting on it; else one fetch at the start of each step,
    concurrent with it (prefetching the next).  ``main_range``: the main thread's own range around each step
    (``train_step {k}``); None: the main thread marks nothing.

    Why: ``torch.cuda.nvtx.range_push("Batch 0")`` / ``range_push("Load Data")`` around the fetch in public tutorials,
    and thread-based prefetchers (a ``threading.Thread`` filling a ``queue.Queue``) push their ranges on their own
    thread; Nsight records every thread's ranges.

    Truth: ``steps`` steps of ~8.03 ms (6 ms of GEMMs after a 2 ms copy), one per main-thread iteration; the GPU
    never waits for input (the batches were ready); the loader thread launches nothing."""
    truth = write(path, NsysJob(steps=steps, ops=20, autograd_nvtx=False, step_range="train_step {k}", seed=seed))
    con = sqlitefile.connect(path)
    marked = con.execute("SELECT start, globalTid FROM NVTX_EVENTS WHERE text LIKE 'train_step %' ORDER BY start"
                         ).fetchall()
    if main_range is None:
        con.execute("DELETE FROM NVTX_EVENTS WHERE text LIKE 'train_step %'")
    main = marked[0][1]
    loader = main + 1
    ns = int(fetch_ms * 1_000_000)
    for i, (a, _) in enumerate(marked):
        s = marked[0][0] - (steps + 1) * (ns + 50_000) + i * (ns + 50_000) if ahead else a + 100_000
        con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                    (s, s + ns, "batch", loader))
    con.execute("INSERT INTO ThreadNames SELECT nameId, priority, ? FROM ThreadNames WHERE globalTid = ?", (loader, main))
    con.commit()
    con.close()
    return truth


class EvalTruth(NamedTuple):
    """What :func:`write_interleaved_evaluation` wrote: the training steps (their count and length, ms) and the
    evaluation passes between them (how many ranges, their summed length, ms)."""

    train_steps: int
    step_ms: float
    passes: int
    pass_ms: float


def write_interleaved_evaluation(path: str, train_steps: int = 8, every: int = 4, batches: int = 2,
                                 pass_range: str | None = "eval_step", around: str | None = None, ranks: int = 1,
                                 numbers: str = "train", inside: bool | str = False, seed: int = 0,
                                 rank_lag_us: float = 50.0) -> EvalTruth:
    """Write a training loop that evaluates every ``every`` training steps: ``batches`` forward passes on held-out
    data after each ``every``-th step, outside its ``train_step {k}`` range.  Each training step is ``NsysJob``'s copy
    and 20 GEMMs under the user's ranges ``forward`` (7 GEMMs), ``backward`` (10) and ``optimizer_step`` (3), read
    back by a sync; an evaluation batch is the same step without its backward and update (their ranges, calls and
    kernels gone: the copy, the 7 forward GEMMs, the sync) in a range ``pass_range`` (None: in no range -- an
    evaluation under ``model.eval()`` / ``torch.no_grad()`` that the program does not mark), or, with ``around``, its
    ``forward`` alone with one range ``around`` (``validation``) over the batches of each evaluation.  The training
    ranges number on, ``train_step 0`` ... ``train_step {train_steps - 1}``: the loop's counter counts its training
    steps (``numbers="train"``); ``numbers="global"``: one counter shared with the evaluation's batches (a global step
    incremented by them too), so the training numbers skip over each evaluation (``train_step 3``, ``train_step 6``);
    ``numbers="samples"``: the same counter in samples of 128 (``train_step 384``, ``train_step 768``);
    ``numbers="epoch"``: the shared counter started over each epoch of two evaluations (``train_step 0`` ... ``3``,
    ``6`` ... ``9``, then ``0`` again: a per-epoch step counter).  ``inside``:
    the training step before each evaluation holds it in its own range (``train_step`` wrapping ``evaluate()``):
    its range ends where the evaluation's last batch ends; ``inside="head"``: the step after it holds it at its head
    (``train_step`` opened before ``evaluate()``, then the training), its range starting where the first batch starts.
    ``ranks``: processes, one GPU each, all alike, rank r ``r * rank_lag_us`` behind rank 0 (``NsysJob``'s).

    Why: a loop that evaluates every N steps (``if step % N == 0: evaluate()``, Lightning's ``val_check_interval``,
    HF Trainer's ``eval_steps``) marks its training step and its evaluation apart; between two ``train_step`` ranges
    the evaluation's forwards run on the GPU with no backward.

    Truth: ``train_steps`` training steps of ~8.03 ms each; the evaluation passes between them are no training step."""
    n = train_steps + (train_steps // every) * batches
    job = NsysJob(steps=n, ranks=ranks, ops=20, autograd_nvtx=False, step_range="train_step {k}",
                  extra_ranges=("forward", "backward", "optimizer_step"), range_starts=(7, 17), shuffle=False, seed=seed,
                  rank_lag_us=rank_lag_us)
    truth = write(path, job)
    con = sqlitefile.connect(path)
    evals = [k for k in range(n) if k % (every + batches) >= every]
    passes, pass_ns = 0, 0
    for rank in range(ranks):
        gtid = _gid(1000 + rank, 1000 + rank)
        rows = con.execute("SELECT rowid, start, end FROM NVTX_EVENTS WHERE text LIKE 'train_step %' AND globalTid = ? "
                           "ORDER BY start", (gtid,)).fetchall()
        period = rows[1][1] - rows[0][1]
        for k in evals:
            rowid, a, _ = rows[k]
            b = a + period  # the step's own ranges end by its next step's start
            _forward_only(con, a, b, gtid)
            if around is None:  # an unmarked batch keeps its span for the truth, then loses its range
                con.execute("UPDATE NVTX_EVENTS SET text = ? WHERE rowid = ?", (pass_range or _UNMARKED, rowid))
            else:
                con.execute("DELETE FROM NVTX_EVENTS WHERE rowid = ?", (rowid,))
        if around is not None:  # one range over each evaluation's batches
            for first in evals[::batches]:
                a, e = rows[first][1], rows[first + batches - 1][2]
                con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                            "VALUES (?,?,59,?,?,0)", (a, e, around, gtid))
        if inside == "head":  # the step after each evaluation opens before it
            for first in evals[::batches]:
                if first + batches < n:
                    con.execute("UPDATE NVTX_EVENTS SET start = ? WHERE rowid = ?",
                                (rows[first][1], rows[first + batches][0]))
        elif inside:  # the step before each evaluation runs through it
            for first in evals[::batches]:
                con.execute("UPDATE NVTX_EVENTS SET end = ? WHERE rowid = ?",
                            (rows[first + batches - 1][1] + period - 1, rows[first - 1][0]))
        left = con.execute("SELECT rowid, text FROM NVTX_EVENTS WHERE text LIKE 'train_step %' AND globalTid = ? "
                           "ORDER BY start", (gtid,)).fetchall()
        con.executemany("UPDATE NVTX_EVENTS SET text = ? WHERE rowid = ?",
                        [(f"train_step {_eval_loop_number(numbers, i, int(t.split()[-1]), 2 * (every + batches))}", r)
                         for i, (r, t) in enumerate(left)])
        got = con.execute("SELECT count(*), coalesce(sum(end - start), 0) FROM NVTX_EVENTS WHERE text = ? "
                          "AND globalTid = ?", (around or pass_range or _UNMARKED, gtid)).fetchone()
        passes, pass_ns = passes + got[0], pass_ns + got[1]
        con.execute("DELETE FROM NVTX_EVENTS WHERE text = ? AND globalTid = ?", (_UNMARKED, gtid))
    con.commit()
    con.close()
    return EvalTruth(train_steps=train_steps, step_ms=truth.step_ms, passes=passes, pass_ms=pass_ns / 1e6)


#: the name :func:`write_interleaved_evaluation` gives an unmarked evaluation batch's range until it deletes it
_UNMARKED = "unmarked evaluation batch"


def _eval_loop_number(numbers: str, train: int, loop: int, epoch: int = 1) -> int:
    """The number :func:`write_interleaved_evaluation`'s loop writes in its ``train``-th training range, the ``loop``-th
    turn of the loop counting the evaluation's batches: its training count, the shared counter, that in samples, or
    the shared counter started over every ``epoch`` turns."""
    return {"train": train, "global": loop, "samples": 128 * (loop + 1), "epoch": loop % epoch}[numbers]


def _forward_only(con: sqlite3.Connection, a: int, b: int, gtid: int) -> None:
    """The step from ``a`` to ``b`` (ns) on thread ``gtid`` without its backward and update: their ranges, and the
    kernels launched inside them with their launches (its read-back's sync stays)."""
    for s, e in con.execute("SELECT start, end FROM NVTX_EVENTS WHERE text IN ('backward', 'optimizer_step') "
                            "AND globalTid = ? AND start >= ? AND end <= ?", (gtid, a, b)).fetchall():
        pid = (gtid >> 24) & 0xFFFFFF
        corr = con.execute("SELECT r.correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN CUPTI_ACTIVITY_KIND_KERNEL k "
                           "ON k.correlationId = r.correlationId AND k.globalPid = ? WHERE r.globalTid = ? "
                           "AND r.start >= ? AND r.start < ?", (_gid(pid), gtid, s, e)).fetchall()
        con.executemany("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE correlationId = ? AND globalPid = ?",
                        [(c, _gid(pid)) for (c,) in corr])
        con.executemany("DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = ? AND globalTid = ?",
                        [(c, gtid) for (c,) in corr])
    con.execute("DELETE FROM NVTX_EVENTS WHERE text IN ('backward', 'optimizer_step') AND globalTid = ? AND start >= ? "
                "AND end <= ?", (gtid, a, b))


def write_marked_elsewhere(path: str, launcher: str = "side", ranks: int = 1, steps: int = 12, seed: int = 0) -> Truth:
    """Write a training loop (``NsysJob``: a copy, 20 GEMMs under ``forward`` / ``backward`` / ``optimizer_step``, an
    NCCL all-reduce where ``ranks`` > 1, a sync; ``train_step {k}`` around each) whose NVTX ranges are not on the
    thread or process that launches the work it marks.  ``launcher``: "side" -- every CUDA call made by another
    thread of the process (a data-parallel worker, a launcher thread), the main thread only marking ranges;
    "backward" -- the calls inside ``backward`` made by another thread (autograd's engine runs the backward on its
    own device thread, the main thread waiting in ``loss.backward()``); "rank0" -- every rank launches its own work,
    only rank 0 marks ranges (``if rank == 0: nvtx.range_push(...)``).

    Truth: ``steps`` training steps of ``Truth.step_ms`` on each of ``ranks`` GPUs, as :func:`write` writes them."""
    truth = write(path, NsysJob(steps=steps, ranks=ranks, ops=20, autograd_nvtx=False, step_range="train_step {k}",
                                extra_ranges=("forward", "backward", "optimizer_step"), range_starts=(7, 17),
                                nccl_us=300.0 if ranks > 1 else 0.0, shuffle=False, seed=seed))
    con = sqlitefile.connect(path)
    if launcher == "side":
        con.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = globalTid + 1")
    elif launcher == "backward":
        con.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET globalTid = globalTid + 1 WHERE EXISTS (SELECT 1 FROM "
                    "NVTX_EVENTS n WHERE n.text = 'backward' AND n.globalTid = CUPTI_ACTIVITY_KIND_RUNTIME.globalTid "
                    "AND n.start <= CUPTI_ACTIVITY_KIND_RUNTIME.start AND CUPTI_ACTIVITY_KIND_RUNTIME.start < n.end)")
    elif launcher == "rank0":
        con.execute("DELETE FROM NVTX_EVENTS WHERE globalTid != ? AND eventType != 75", (_gid(1000, 1000),))
    con.execute("INSERT INTO ThreadNames SELECT nameId, priority, globalTid + 1 FROM ThreadNames")
    con.commit()
    con.close()
    return truth


def write_forward_upload_loop(path: str, steps: int = 30, ops: int = 6, kernel_us: float = 20.0,
                              upload_us: float = 20.0, upload_bytes: int = 1 << 20) -> dict:
    """Write a PyTorch forward loop under ``nsys profile -t cuda,nvtx --pytorch=autograd-nvtx`` (ATen ranges, no
    backward, no optimizer: inference) with tiny steps: each ``step {k}`` range uploads its input from pinned memory
    with ``non_blocking=True`` (one ``cudaMemcpyAsync`` H2D of ``upload_bytes``, ``upload_us`` on the GPU, on the
    kernels' own stream), runs ``ops`` kernels of ``kernel_us``, and ends in ``.item()``'s
    ``cudaStreamSynchronize`` -- a sync with no copy to the host behind it.

    Truth: the upload runs between the kernels on their stream, the GPU computing nothing meanwhile (``upload_us`` of
    each step); no byte is copied to the host; the upload's cost is recovered only by a copy on a stream of its own
    that overlaps the forward pass -- the sync's fix (reading values once, after the batch) is the sync's, and no
    copy's."""
    truth = write(path, NsysJob(steps=steps, step_range="step {k}", ops=ops, kernel_us=kernel_us,
                                h2d_bytes=upload_bytes, h2d_us=upload_us, pinned=True))
    return {"steps": truth.steps, "step_ms": truth.step_ms, "upload_us": upload_us, "upload_bytes": upload_bytes,
            "kernel_ms_per_step": ops * kernel_us / 1000.0, "d2h_copies": 0}


# --------------------------------------------------------------------------- a DLProf-annotated cold forward (issue 37)

#: The cuDNN kernel each convolution's algorithm search times, and the one it keeps.
CUDNN_CONV = "void cudnn::cnn::implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, true, true>"
RELU = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::clamp_min_kernel_cuda>"


def write_dlprof_forward(path: str, params: int = 10, convs: int = 2, trials: int = 8,
                         context_ms: float = 400.0) -> dict:
    """Write the export of one cold forward pass annotated by DLProf (``nvidia_dlprof_pytorch_nvtx.init()`` under
    ``emit_nvtx``), shaped after MohanadOdema/DLProf's real LeNet capture: the process creates its CUDA context in
    the first ``cudaMalloc`` (``context_ms``, the GPU idle), ``model.cuda()`` then uploads ``params`` tensors -- each a
    ``{'traceMarker': ..., 'funcStack': ...}`` range around a ``{'mod': 'Tensor', 'op': 'cuda', ...}`` range around a
    pageable ``cudaMemcpyAsync`` and its ``cudaStreamSynchronize`` -- the input is copied the same way, and the
    forward runs ``convs`` convolutions under ``cudnn.benchmark``: each first call times ``trials`` candidate kernels
    between CUDA events and waits on each (``cudaEventSynchronize`` inside ``aten::cudnn_convolution``), then runs
    the one it keeps, and a ReLU.  Return the truth: every sync is a one-time cost (upload or search); none is a value
    the program reads."""
    us = 1000
    pid = 5150
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, MEMCPY_DDL, SYNC_DDL, KERNEL_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 3_000_000, gap=2 * us)
    nvtx, memcpy, kernels, syncs = [], [], [], []
    stream_free = 0

    def kernel(name: str, dur_us: float) -> None:
        nonlocal stream_free
        c = api("cudaLaunchKernel_v7000", 6 * us)
        ks = max(api.t + 2 * us, stream_free)
        stream_free = ks + int(dur_us * us)
        kernels.append((ks, stream_free, c, strings(name)))

    def wait(name: str) -> None:
        c = api(name, 3 * us)
        end = max(stream_free + 4 * us, api.rows[-1][0] + 3 * us)
        api.end_last(end)
        syncs.append((stream_free, end - 2 * us, c, 1 if "Event" in name else 3))
        api.t = end + 2 * us

    def annotated(mod: str, op: str, shape: tuple, frame: str, body) -> None:  # noqa: ANN001 - a callable
        outer = api.t
        api.t += 10 * us
        inner = api.t
        body()
        api.t += 5 * us
        args = [{"name": "", "type": "tensor", "shape": shape, "dtype": "float32"}]
        nvtx.append((inner, api.t, str({"mod": mod, "op": op, "args": args})))
        api.t += 5 * us
        nvtx.append((outer, api.t, str({"traceMarker": ["net.py:34"], "funcStack": f"/<module>/{frame}"})))
        api.t += 60 * us

    def upload(nbytes: int) -> None:
        nonlocal stream_free
        c = api("cudaMemcpyAsync_v3020", 20 * us)
        cs = max(api.t, stream_free)
        stream_free = cs + max(2 * us, nbytes // 5000)  # ~5 GB/s from pageable memory
        memcpy.append((cs, stream_free, c, nbytes))
        wait("cudaStreamSynchronize_v3020")

    shapes = [(6, 3, 3, 3), (6,), (16, 6, 5, 5), (16,), (120, 400), (120,), (84, 120), (84,), (10, 84), (10,)]
    for k in range(params):
        shape = shapes[k % len(shapes)]
        nbytes = 4 * int(np.prod(shape))

        def body(k: int = k, nbytes: int = nbytes) -> None:
            if k == 0:  # the process's first CUDA call creates its context
                api("cudaMalloc_v3020", int(context_ms * 1000 * us))
            else:
                api("cudaMalloc_v3020", 8 * us)
            upload(nbytes)
        annotated("Tensor", "cuda", shape, "Module::cuda/_apply/cuda", body)
    annotated("Tensor", "cuda", (32, 3, 32, 32), "cuda", lambda: upload(4 * 32 * 3 * 32 * 32))
    autotune = 0
    for i in range(convs):
        def conv(i: int = i) -> None:
            nonlocal autotune
            a = api.t
            api.t += 5 * us
            b = api.t
            for _ in range(trials):
                api("cudaEventRecord_v3020", 3 * us)
                kernel(CUDNN_CONV, 40 + 10 * i)
                api("cudaEventRecord_v3020", 3 * us)
                wait("cudaEventSynchronize_v3020")
                autotune += 1
            kernel(CUDNN_CONV, 40 + 10 * i)
            nvtx.append((b, api.t, f"aten::cudnn_convolution, seq = {2 * i}"))
            api.t += 3 * us
            nvtx.append((a, api.t, f"aten::conv2d, seq = {2 * i}"))
            api.t += 3 * us
        annotated("torch.nn.functional", "conv2d", (32, 3, 32, 32), "Net::forward/conv2d", conv)

        def relu(i: int = i) -> None:
            a = api.t
            kernel(RELU, 8)
            nvtx.append((a, api.t, f"aten::relu, seq = {2 * i + 1}"))
        annotated("torch.nn.functional", "relu", (32, 6, 30, 30), "Net::forward/relu", relu)
    stop = max(api.t, stream_free) + 1_000_000
    api.insert(con, gtid)
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                    [(a, b, text, gtid) for a, b, text in nvtx])
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,1,0,2)",
                    [(a, b, c, gpid, n) for a, b, c, n in memcpy])
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, "
                    "correlationId, globalPid, syncType, eventId) VALUES (?,?,0,1,7,?,?,?,0)",
                    [(a, b, c, gpid, k) for a, b, c, k in syncs])
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, n, 32, (8,), (128,), j)
                     for j, (a, b, c, n) in enumerate(kernels)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), None, program="python3", thread="python3")
    return {"uploads": params + 1, "upload_syncs": params + 1, "autotune_syncs": autotune, "convs": convs,
            "kernels": len(kernels), "context_ms": context_ms}


def write_pyprof_forward(path: str, ops: int = 20, kernel_us: float = 12.0, build_ms: float = 400.0,
                         context_ms: float = 1265.0, context_recorded: bool = False, module_ms: float = 900.0,
                         open_ranges: int = 50, tail_ms: float = 700.0) -> dict:
    """Write the export of one forward pass from the process's start under PyProf's NVTX, shaped after
    ``mmagic_a100_pyprof_forward`` (h37-survey39): the model built on the CPU (``build_ms``) with ``open_ranges``
    ``__getattr__`` ranges pushed and never popped (the call raises; the exporter ends them at the session's end),
    ``.cuda()`` -- a ``{'mod': 'Tensor', 'op': 'cuda'}`` range holding the context's creation (``context_ms``: a
    recorded ``cudaFree`` where ``context_recorded``, else host time no runtime call covers, as nsys's skipped calls
    leave it) -- then ``ops`` ops, each a ``{'traceMarker': ...}`` range around a ``{'mod': ..., 'op': ...}`` range
    around one launch (the first loads the module: ``module_ms``), the output read back with
    ``cudaMemcpy``; the session runs ``tail_ms`` past the process's last call.  Return the truth: one pass, whose span
    ends at the process's last call (the open ranges' exported end is the session's, not the program's); a cold start
    where the one-time costs a runtime call records fill half the process's span."""
    us, ms = 1000, 1_000_000
    pid = 6160
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 3 * ms, gap=4 * us)
    nvtx, kernels = [], []
    free = 0
    api.t += int(build_ms * ms)
    opened = [(api.t - int(build_ms * ms) + k * int(build_ms * ms) // max(open_ranges, 1),
               str({"mod": "Module", "op": "__getattr__", "args": [{"name": "", "type": "str", "value": "extra_repr"}]}))
              for k in range(open_ranges)]
    a = api.t
    if context_recorded:
        api("cudaFree_v3020", int(context_ms * ms))
    else:
        api.t += int(context_ms * ms)
    api("cudaStreamIsCapturing_v10000", 14 * us)
    nvtx.append((a, api.t, str({"mod": "Tensor", "op": "cuda", "args": []})))
    for i in range(ops):
        outer = api.t
        api.t += 8 * us
        inner = api.t
        c = api("cudaLaunchKernel_v7000", int(module_ms * ms) if i == 0 else 6 * us)
        ks = max(api.rows[-1][1] + 2 * us, free)
        free = ks + int(kernel_us * us)
        kernels.append((ks, free, c, strings(CUDNN_CONV if i % 2 == 0 else RELU)))
        op = "conv2d" if i % 2 == 0 else "relu"
        nvtx.append((inner, api.t, str({"mod": "torch.nn.functional", "op": op, "args": []})))
        api.t += 3 * us
        nvtx.append((outer, api.t, str({"traceMarker": ["net.py:40"], "funcStack": f"/<module>/Net::forward/{op}"})))
    c = api("cudaMemcpy_v3020", 20 * us)
    api.end_last(max(api.rows[-1][1], free + 10 * us))
    api.t = api.rows[-1][1] + 4 * us
    last = api.t
    stop = last + int(tail_ms * ms)
    api.insert(con, gtid)
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                    [(a, b, text, gtid) for a, b, text in nvtx] + [(a, stop, text, gtid) for a, text in opened])
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, n, 32, (8,), (128,), j)
                     for j, (a, b, c, n) in enumerate(kernels)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="python", thread="python")
    span = (last - SESSION_START_NS - 3 * ms) / ms
    recorded = module_ms + (context_ms if context_recorded else 0.0)  # the one-time costs a runtime call shows
    return {"steps": 1, "kind": "unknown", "rules": ("cold_start",) if recorded >= 0.5 * span else (),
            "step_ms_max": span * 1.01}


# --------------------------------------------------------------------------- managed memory paged on demand (issue 37)

#: Unified Memory page migrations (``ENUM_CUDA_MEMCPY_OPER``): the driver's, launched by no call (correlation id 0).
UVM_HTOD, UVM_DTOH = 11, 12
#: ``migrationCause``: on demand (a page fault), the driver's speculative prefetch around it.
CAUSE_COHERENCE, CAUSE_PREFETCH = 2, 3


class Gpu(NamedTuple):
    """A GPU as ``TARGET_INFO_GPU`` describes it (one row; the single-process writers' devices)."""

    name: str
    bus: str
    l2_bytes: int
    memory: int
    bandwidth: int  # bytes/s
    clock_hz: int
    sms: int
    chip: str
    nvml_id: int
    cc: tuple[int, int]


A100_SXM4_40GB = Gpu("NVIDIA A100-SXM4-40GB", "0000:07:00.0", 41943040, 42409000960, 1555200000000, 1410000000, 108,
                     "GA100", 1, (8, 0))
A100_SXM4_80GB = Gpu("NVIDIA A100-SXM4-80GB", "0000:07:00.0", 41943040, 85899345920, 2039000000000, 1410000000, 108,
                     "GA100", 1, (8, 0))
A100_80GB_PCIE = Gpu("NVIDIA A100 80GB PCIe", "0000:07:00.0", 41943040, 85899345920, 1935000000000, 1410000000, 108,
                     "GA100", 1, (8, 0))
RTX_2080 = Gpu("NVIDIA GeForce RTX 2080", "0000:21:00.0", 4194304, 8361017344, 448000000000, 1710000000, 46, "TU104", 7,
               (5, 0))
RTX_3070_TI = Gpu("NVIDIA GeForce RTX 3070 Ti", "0000:01:00.0", 4194304, 8589410304, 608256000000, 1770000000, 48,
                  "GA104", 1, (8, 6))


def _finish_one(con: sqlite3.Connection, strings: _Strings, stop: int, ids: tuple[int, int, int], gpu: Gpu | None, *,
                program: str, thread: str, copy_enums: bool = True, sync_enum: bool = True,
                copy_kinds: list[tuple[int, str]] | None = None, gpu_id: int = 0) -> None:
    """The tables a one-process, one-GPU export ends with, and the file closed: its GPU, the program (``ids``: its
    global pid, pid and launching thread's global tid) and thread names, the interned strings, the enum tables the
    export's rows refer to (copy kinds and memory kinds with ``copy_enums``, sync types with ``sync_enum``), the
    session's span up to ``stop`` and the export's product line.  ``gpu`` None: no ``TARGET_INFO_GPU`` row (an
    export without that table); ``gpu_id``: its CUDA device id (a rank's GPU other than the first)."""
    gpid, pid, gtid = ids
    if gpu is not None:
        con.execute("INSERT INTO TARGET_INFO_GPU VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (0, gpu_id, gpu.name, gpu.bus, 1, gpu.l2_bytes, gpu.memory, gpu.bandwidth, gpu.clock_hz, gpu.sms, 0,
                     "GPU-00000000", 0, gpu.chip, 0, gpu.nvml_id, *gpu.cc))
    con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (strings(thread), gtid))
    con.execute("INSERT INTO PROCESSES VALUES (?, ?, ?)", (gpid, pid, program))
    finish_tables(con, strings, stop, copy_enums=copy_enums, sync_enum=sync_enum, copy_kinds=copy_kinds)
    con.commit()
    con.close()


def finish_tables(con: sqlite3.Connection, strings: _Strings, stop: int, *, copy_enums: bool = True,
                  sync_enum: bool = True, copy_kinds: list[tuple[int, str]] | None = None) -> None:
    """The tables every export here ends with: the interned strings, the enum tables its rows refer to (event types;
    copy kinds and memory kinds with ``copy_enums``, sync types with ``sync_enum``), the session's span up to
    ``stop`` and the export's product line."""
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(i, v) for v, i in strings.ids.items()])
    con.executemany("INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (?, ?, ?)", [(i, n, n) for i, n in _EVENT_TYPES])
    if copy_enums:
        con.executemany("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)",
                        [(i, n, n) for i, n in (copy_kinds or _COPY_KINDS)])
        con.executemany("INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)", [(i, n, n) for i, n in _MEM_KINDS])
    if sync_enum:
        con.executemany("INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (?, ?, ?)", [(i, n, n) for i, n in _SYNC_TYPES])
    con.execute("INSERT INTO ANALYSIS_DETAILS VALUES (?, ?, ?, ?)", (HW_BIT, stop - SESSION_START_NS, SESSION_START_NS, stop))
    con.executemany("INSERT INTO META_DATA_EXPORT VALUES (?, ?)", [("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"),
                                                                  ("EXPORT_SCHEMA_VERSION", "3.25.0")])


def write_managed_kernel(path: str, blocks: int = 1, threads: int = 1, kernel_ms: float = 600.0,
                         faults_in_kernel: int = 300, readback_bursts: int = 60, pages_per_burst: int = 24,
                         alloc_ms: float = 250.0, fault_us: float = 8.0, fill_ms: float = 300.0) -> dict:
    """Write the export of NVIDIA's "An Even Easier Introduction to CUDA" vector add as several real captures hold
    it (SpaceManV3/cp3, SMcMann/cudaHW, lsaeteurn/vectoraddition, igouProto/CSC746CUDALab): two
    ``cudaMallocManaged`` buffers (the first creates the context, ``alloc_ms``), one ``add<<<blocks, threads>>>``
    launch of ``kernel_ms`` on an A100 (108 SMs), the pages it touches migrated to the GPU on demand while it runs
    (``faults_in_kernel`` Unified Memory HtoD migrations of ``fault_us`` each under it, none overlapping), a
    ``cudaDeviceSynchronize``, then the host's
    result check reading the pages back: ``readback_bursts`` bursts of ``pages_per_burst`` DtoH migrations
    (4 KiB-1 MiB each, ~2 ms a burst, ~8 ms apart) -- page migrations no call of the program launched.  Return the
    truth: one kernel, its launch configuration, and the migrations' counts."""
    us, ms = 1000, 1_000_000
    pid = 6161
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, SYNC_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=3 * us)
    memcpy = []
    api("cudaMallocManaged_v6000", int(alloc_ms * ms))
    api("cudaMallocManaged_v6000", 40 * us)
    api.t += int(fill_ms * ms)  # the host fills the buffers (its own loop, no CUDA call)
    launch = api("cudaLaunchKernel_v7000", 45 * us)
    ks = api.t + 10 * us
    ke = ks + int(kernel_ms * ms)
    sync = api("cudaDeviceSynchronize_v3020", 0)
    api.end_last(ke + 5 * us)
    for k in range(faults_in_kernel):  # on-demand migrations spread over the kernel, 64 KiB each
        a = ks + (k * (ke - ks)) // max(faults_in_kernel, 1)
        memcpy.append((a, a + int(fault_us * us), 0, 65536, UVM_HTOD, CAUSE_COHERENCE if k % 2 else CAUSE_PREFETCH))
    api.t = ke + 1 * ms
    for b in range(readback_bursts):  # the host's result check pulls the pages back, a burst per fault batch
        for p in range(pages_per_burst):
            a = api.t + p * 80 * us
            memcpy.append((a, a + 60 * us, 0, 4096 if p % 2 else 1 << 20, UVM_DTOH, CAUSE_COHERENCE))
        api.t += 10 * ms
    api("cudaFree_v3020", 20 * ms)
    api("cudaFree_v3020", 20 * ms)
    stop = api.t + 1 * ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind, migrationCause) VALUES (?,?,0,1,0,?,?,?,?,7,7,?)",
                    [(a, b, c, gpid, n, kind, cause) for a, b, c, n, kind, cause in memcpy])
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, "
                "correlationId, globalPid, syncType, eventId) VALUES (?,?,0,1,7,?,?,4,0)", (ke, ke + 4 * us, sync, gpid))
    name = strings("add(int, float *, float *)")
    con.execute(_KERNEL_INSERT,
                _kernel_row(ks, ke, launch, gpid, name, 16, (blocks,), (threads,), 1, short=strings("add")))
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB._replace(memory=42297524224),
                program="./vecadd_gpu", thread="vecadd_gpu",
                copy_kinds=_COPY_KINDS + [(11, "Unified Host-to-Device"), (12, "Unified Device-to-Host")])
    return {"kernels": 1, "blocks": blocks, "threads": threads, "sms": 108, "kernel_ms": kernel_ms,
            "htod_migrations": faults_in_kernel, "dtoh_migrations": readback_bursts * pages_per_burst,
            "paging_in_kernel_ms": faults_in_kernel * fault_us / 1000.0,
            "dtoh_migration_ms": readback_bursts * pages_per_burst * 0.06}


# --------------------------------------------------------------------------- blocking pageable read-backs (issue 37)


def write_pageable_readbacks(path: str, repeats: int = 5, nbytes: int = 4 << 20, dma_ms: float = 0.7,
                             staging_ms: float = 1.3, wait_ms: float = 0.0, kernel_ms: float = 0.9) -> dict:
    """Write the export of a CUDA benchmark shaped after kamalchowdhury326/HW5_helper's A100 transpose (``report1``):
    ``repeats`` times a memset, 20 launches of one kernel of ``kernel_ms`` timed between two CUDA events, a
    ``cudaEventSynchronize``, then a blocking ``cudaMemcpy`` of ``nbytes`` from the device to pageable host memory:
    its DMA takes ``dma_ms``, and the call lasts ``wait_ms`` more before it (the GPU idle: waiting on work the file does
    not hold, as a cut window's copy does) and ``staging_ms`` more after it (the driver copying the bytes out of its
    pinned staging buffer on the host, the GPU idle).  Return the truth: the calls' ms beyond their own copies."""
    us, ms = 1000, 1_000_000
    pid = 7272
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, MEMSET_DDL, SYNC_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=3 * us)
    memcpy, memsets, kernels = [], [], []
    api("cudaMalloc_v3020", 300 * ms)  # the context
    for _ in range(repeats):
        c = api("cudaMemset_v3020", 30 * us)
        memsets.append((api.t - 20 * us, api.t - 14 * us, c))
        api("cudaEventRecord_v3020", 5 * us)
        free = api.t
        for _ in range(20):
            c = api("cudaLaunchKernel_v7000", 6 * us)
            ks = max(api.t, free)
            free = ks + int(kernel_ms * ms)
            kernels.append((ks, free, c))
        api("cudaEventRecord_v3020", 3 * us)
        api("cudaEventSynchronize_v3020", 0)
        api.end_last(free + 5 * us)
        api.t = free + 10 * us
        a = api.t
        c = api("cudaMemcpy_v3020", int((wait_ms + dma_ms + staging_ms) * ms))
        ds = a + int(wait_ms * ms)
        memcpy.append((ds, ds + int(dma_ms * ms), c))
        api.t += 2 * ms  # the host checks the result
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,2,2,0)",
                    [(a, b, c, gpid, nbytes) for a, b, c in memcpy])
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?,?,0,1,NULL,7,?,?,0,?,NULL,2)",
                    [(a, b, c, gpid, nbytes) for a, b, c in memsets])
    name = strings("transposeNaive(float *, const float *)")
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, name, 16, (32, 32), (32, 8), j)
                     for j, (a, b, c) in enumerate(kernels)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="./transpose", thread="transpose")
    return {"copies": repeats, "staging_ms": repeats * staging_ms, "wait_ms": repeats * wait_ms,
            "call_beyond_dma_ms": repeats * (wait_ms + staging_ms)}


# --------------------------------------------------------------------------- pageable copies between kernels (issue 37)


def write_pageable_copy_loop(path: str, iterations: int = 200, kernels: int = 4, kernel_us: float = 15.0,
                             upload_bytes: int = 561_408, staging_us: float = 100.0, upload_us: float = 120.0,
                             download_bytes: int = 229_376, download_us: float = 26.0, copy_out_us: float = 70.0,
                             pinned: bool = False, async_calls: bool = False, upload_stream: int = 7) -> dict:
    """Write the export of a native loop shaped after PEXSI's selected inversion on an A100 (Ther-LF/QuantPSelInvPlus
    ``examples/report6.sqlite``): each of ``iterations`` iterations uploads ``upload_bytes`` with a synchronous
    ``cudaMemcpy`` from pageable memory -- the driver stages the bytes for ``staging_us`` inside the call, which
    returns as the transfer (``upload_us``) is submitted --, launches ``kernels`` kernels of ``kernel_us`` back to back
    (6 us a launch: they queue behind the upload and each other), and reads ``download_bytes`` back with a synchronous
    ``cudaMemcpy`` into pageable memory: the call waits for the kernels, the transfer takes ``download_us``, and the
    driver copies the bytes out of its staging buffer for ``copy_out_us`` before the call returns.  The host calls
    the next upload at once.  ``pinned``: the same calls from and into pinned memory, with no staging and no copy out
    (a control).  ``async_calls`` (with ``pinned``): the copies are ``cudaMemcpyAsync`` calls, returning as they are
    queued, as a program that pinned its buffers makes them; ``upload_stream``: the stream the uploads run on (7 the
    kernels'; another, a stream of their own: h37-copy63).  Return the truth: the GPU's idle inside the copy calls
    (ms), and inside the launch calls."""
    us, ms = 1000, 1_000_000
    pid = 31415
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, SYNC_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 50 * ms, gap=2 * us)
    memcpy, kern = [], []
    api("cudaFree_v3020", 400 * ms)  # the context, before the loop
    stage, out = (0, 0) if pinned else (int(staging_us * us), int(copy_out_us * us))
    free = api.t
    idle_in_copies = 0
    for _ in range(iterations):
        a = api.t  # the upload: staging inside the call, then the transfer it submits as it returns
        c = api("cudaMemcpyAsync_v3020" if async_calls else "cudaMemcpy_v3020", stage + 4 * us)
        ds = max(a + stage + 6 * us, free)
        idle_in_copies += min(ds, a + stage + 4 * us + 50 * us) - max(a, free)  # the GPU drained before the call
        free = ds + int(upload_us * us)
        memcpy.append((ds, free, c, 1, upload_bytes))
        for _ in range(kernels):
            c = api("cudaLaunchKernel_v7000", 6 * us)
            ks = max(api.t, free)
            free = ks + int(kernel_us * us)
            kern.append((ks, free, c))
        a = api.t  # the read-back: waits for the kernels, then the transfer, then the copy out of staging
        ds = max(a + 4 * us, free + 2 * us)
        c = api("cudaMemcpyAsync_v3020" if async_calls else "cudaMemcpy_v3020", ds + int(download_us * us) + out + 3 * us - a)
        idle_in_copies += ds - max(a, free) + out + 3 * us  # the GPU drained before the transfer, and after it
        free = ds + int(download_us * us)
        memcpy.append((ds, free, c, 2, download_bytes))
    stop = api.t + ms
    api.insert(con, gtid)
    host = 1 if pinned else 0  # srcKind/dstKind: 0 pageable, 1 pinned, 2 device
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,?,?,?,?,?,?,?)",
                    [(a, b, upload_stream if k == 1 else 7, c, gpid, n, k, host if k == 1 else 2, 2 if k == 1 else host)
                     for a, b, c, k, n in memcpy])
    name = strings("void trsm_right_kernel<double, 64, 16, false, true>(int, int, double const *, double *)")
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, name, 64, (432,), (256,), i)
                     for i, (a, b, c) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="./run_pselinv", thread="run_pselinv")
    return {"iterations": iterations, "idle_in_copy_calls_ms": idle_in_copies / ms,
            "staging_ms": iterations * stage / ms, "copy_out_ms": iterations * out / ms,
            "transfers_ms": iterations * (upload_us + download_us) / 1000.0,
            "kernels_ms": iterations * kernels * kernel_us / 1000.0}


def write_alternating_streams(path: str, iterations: int = 40, pairs: int = 3, kernel_us: float = 120.0,
                              hold_us: float = 30.0, side_stream: int = 13,
                              stream_flags: dict[int, int] | None = None) -> dict:
    """Write the export of a native loop whose kernels alternate between stream 7 and ``side_stream``: per iteration
    ``pairs`` pairs, each kernel (``kernel_us``) launched while the other stream's runs and started ``hold_us`` after
    it ends, no event call recorded between the launches; then ``cudaDeviceSynchronize``.  ``stream_flags``: the
    ``TARGET_INFO_CUDA_STREAM`` rows (streamId -> CUPTI's flag as Nsight numbers it: 1 default, 2 non-blocking, 3
    NULL; None: no table).  The shape of a program that launches on stream 0 (the legacy default stream) and on a
    stream made by ``cudaStreamCreate``: each stream's kernel waits for the other's, an order no call records.  Truth:
    the GPU's idle at the handoffs (ms per iteration)."""
    us, ms = 1000, 1_000_000
    pid = 27183
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, SYNC_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 50 * ms, gap=2 * us)
    kern = []
    api("cudaFree_v3020", 300 * ms)  # the context, before the loop
    free = api.t
    for _ in range(iterations):
        for k in range(2 * pairs):
            c = api("cudaLaunchKernel_v7000", 5 * us)
            ks = max(api.t, free + (int(hold_us * us) if k else 0))
            free = ks + int(kernel_us * us)
            kern.append((ks, free, c, 7 if k % 2 == 0 else side_stream))
        c = api("cudaDeviceSynchronize_v3020", 1 * us)
        api.end_last(free + 3 * us)
        api.t = free + 10 * us
    stop = api.t + ms
    api.insert(con, gtid)
    name = strings("void stencil_kernel<float, 8>(float const *, float *, int)")
    con.executemany(_KERNEL_INSERT, [_kernel_row(a, b, c, gpid, name, 32, (256,), (256,), i, stream=st)
                                     for i, (a, b, c, st) in enumerate(kern)])
    if stream_flags is not None:
        con.execute("CREATE TABLE TARGET_INFO_CUDA_STREAM (streamId INTEGER NOT NULL, hwId INTEGER NOT NULL, vmId "
                    "INTEGER NOT NULL, processId INTEGER NOT NULL, contextId INTEGER NOT NULL, priority INTEGER NOT "
                    "NULL, flag INTEGER NOT NULL)")
        con.executemany("INSERT INTO TARGET_INFO_CUDA_STREAM VALUES (?, 0, 0, ?, 1, 0, ?)",
                        [(sid, pid, f) for sid, f in stream_flags.items()])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="./stencil", thread="stencil")
    return {"iterations": iterations, "handoff_ms": (2 * pairs - 1) * hold_us / 1000.0,
            "kernels_ms": 2 * pairs * kernel_us / 1000.0}


# --------------------------------------------------------------------------- a sync after every kernel (issue 37)


def write_synced_kernels(path: str, iterations: int = 8, kernels: int = 100, kernel_us: float = 520.0,
                         launch_us: float = 12.0, latency_us: float = 36.0, sync: bool = True,
                         gpu: Gpu = A100_SXM4_40GB, poll: str = "", poll_us: float = 10.0) -> dict:
    """Write the export of an OpenMP-offload-like program shaped after lockfuehrer/beast_ressoruces' ``report2``: each
    of ``iterations`` sweeps launches ``kernels`` kernels of ``kernel_us`` (``cuLaunchKernel`` of ``launch_us``, the
    kernel starting ``latency_us`` after the call returns), and with ``sync`` the host waits for each one
    (``cuStreamSynchronize``, a synchronous target region) before launching the next: the GPU idles between kernels only
    because the host waited.  Without ``sync`` the host launches back to back and waits once a sweep; make
    ``launch_us`` longer than ``kernel_us`` for a program truly bound by its launches.  The sweeps are 3 ms apart (the
    host's own work).  ``gpu``: the device it ran on.  ``poll`` (a query call, ``cuStreamQuery``,
    ``cudaEventQuery_v3020``): each wait is that query asked every ``poll_us`` until the kernel is done (``while
    (cuStreamQuery(s) == CUDA_ERROR_NOT_READY)``), no sync call -- the same wait by other calls, its last query returning
    within ``poll_us`` of the kernel's end.  Return the truth: the cause of the GPU's idle between kernels, and of
    that idle inside the sweeps (``gaps`` of them, ``idle_ns`` in all) the part the host spent in no call and no poll
    (``untraced_idle_ns``: its own code after a wait and after a launch, which no profiler records -- a report names
    it unrecorded host time, no wait's, as ``rpdtrace.write``'s truth says)."""
    us, ms = 1000, 1_000_000
    pid = 6161
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=3 * us)
    kern = []
    polls: list[tuple[int, int]] = []  # each poll's first query's start to its last one's end: the host in its loop
    k_ns, l_ns, lat = int(kernel_us * us), int(launch_us * us), int(latency_us * us)
    for _ in range(iterations):
        free = api.t
        for _ in range(kernels):
            ks = max(api.t + l_ns + lat, free)
            free = ks + k_ns
            kern.append((ks, free, api("cuLaunchKernel", l_ns)))
            if sync and poll:
                polls.append((_poll(api, poll, free, int(poll_us * us)), api.t))
                api.t += 11 * us
            elif sync:
                api.row("cuStreamSynchronize", api.t, free + 2 * us)
                api.t = free + 13 * us
        if not sync:
            api.row("cuStreamSynchronize", api.t, max(api.t, free) + 2 * us)
            api.t = max(api.t, free) + 13 * us
        api.t += 3 * ms
    stop = api.t + ms
    api.insert(con, gtid)
    name = strings("nvkernel_main_F1L40_2")
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, name, 32, (1024,), (256,), j)
                     for j, (a, b, c) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), gpu,
                program="./offload", thread="offload", copy_enums=False, sync_enum=False)
    host = [(a, b) for a, b, _, _ in api.rows] + polls
    sweeps = [kern[i * kernels:(i + 1) * kernels] for i in range(iterations)]
    return {"cause": "host_sync" if sync else "launch_bound", "kernels": iterations * kernels,
            "gaps": iterations * (kernels - 1),
            "idle_ns": sum(b[0] - a[1] for sw in sweeps for a, b in zip(sw, sw[1:])),
            "untraced_idle_ns": sum(untraced_idle([k[:2] for k in sw], host) for sw in sweeps)}


def _poll(api: _Calls, call: str, done: int, every: int) -> int:
    """The host asks ``call`` (a 1.5 us query) every ``every`` ns from now until the GPU's work ending at ``done`` is
    over (``while (cudaEventQuery(ev) == cudaErrorNotReady)``, an event recorded first): the clock ends after the
    query that returned "done".  Returns the first query's start (from there to the last one's end the host is in
    its loop; the code between the record and the first query is its own)."""
    if "Event" in call:
        api("cuEventRecord" if call.startswith("cuEvent") else "cudaEventRecord_v3020", 2_000)
    first = api.t
    while True:
        api(call, 1_500, then=0)
        if api.t >= done:
            return first
        api.t += every


def _insert_named_kernels(con: sqlite3.Connection, gpid: int, kern: list[tuple[int, int, int, int]],
                          grid_x: int) -> None:
    """Kernels ``(start, end, correlation id, name id)`` on stream 7 of device 0, ``grid_x`` blocks of 256 threads."""
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, n, 32, (grid_x,), (256,), j)
                     for j, (a, b, c, n) in enumerate(kern)])


#: A native loop's iteration of distinct kernels (``name``, us on the GPU), no layer repeated inside it
_SYNCED_ITERATION = (("advect_x", 40.0), ("advect_y", 40.0), ("flux_calc", 25.0), ("accelerate", 30.0),
                     ("pdv_predict", 35.0), ("viscosity", 20.0), ("ideal_gas", 15.0), ("reduce_dt", 10.0))


def write_reading_loop(path: str, iterations: int = 10, reads: tuple[int, ...] = (3, 8), turn_us: float = 15.0,
                       launch_us: float = 6.0, gpu_lag_us: float = 4.0, kernel_scale: float = 1.0) -> dict:
    """Write the export of a native loop, no NVTX, whose every iteration launches the kernels of
    :data:`_SYNCED_ITERATION` in order and waits for the GPU (``cudaStreamSynchronize``) after each count of launches
    in ``reads`` -- a value read back mid-iteration and the time step at its end -- with the host's own ``turn_us``
    after each wait alike, so no pause at the iteration's boundary stands out.  ``reads=(8,)``: one wait an iteration
    (the control).  ``kernel_scale`` scales the kernels' times: below ~0.1 the host is slower than its GPU and each
    wait finds the work done.  Return the truth by construction: the iterations and each one's first launch (ns)."""
    us, ms = 1000, 1_000_000
    pid = 7171
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=2 * us)
    kern, firsts = [], []
    free = api.t
    for _ in range(iterations):
        for k, (name, k_us) in enumerate(_SYNCED_ITERATION, 1):
            if k == 1:
                firsts.append(api.t)
            ks = max(api.t + int((launch_us + gpu_lag_us) * us), free)
            free = ks + int(k_us * kernel_scale * us)
            kern.append((ks, free, api("cudaLaunchKernel", int(launch_us * us)), strings(name)))
            if k in reads:
                api.row("cudaStreamSynchronize", api.t, max(api.t, free) + 2 * us)
                api.t = max(api.t, free) + 2 * us + int(turn_us * us)
    stop = api.t + ms
    api.insert(con, gtid)
    _insert_named_kernels(con, gpid, kern, 1024)
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB,
                program="./solver", thread="solver", copy_enums=False, sync_enum=False)
    return {"iterations": iterations, "first_launch_ns": firsts, "reads": len(reads)}


#: huy310304/PyTorch-CUDA-ML-Performance ``regression_shared_mem_profiling_individual_report.sqlite`` (Quadro RTX
#: 4000): the hand-written regression's four kernels, their mean durations (us) in its kernel table
_REGRESSION_KERNELS = (("forward_pass", 96.4), ("calculate_loss", 188.9), ("calculate_gradients", 317.9),
                       ("update_weights", 3.0))


def write_event_timed_epochs(path: str, epochs: int = 60, print_every: int = 10, latency_us: float = 100.0,
                             gpu: Gpu = RTX_2080) -> dict:
    """Write the export of a CUDA C++ training loop with no framework, shaped after huy310304/PyTorch-CUDA-ML-Performance's
    Nsight export: each epoch times each of its four kernels between two ``cudaEventRecord`` and waits for the second
    (``cudaEventSynchronize``), then waits for the epoch's closing event too; every ``print_every`` epochs it reads the
    loss back and calls ``cudaDeviceSynchronize``.  No call is enclosed by anything the profiler records.  ``gpu``: the
    device it ran on.  Return the
    truth: the sync calls per epoch by name."""
    us, ms = 1000, 1_000_000
    pid = 4242
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=1 * us)
    kern: list[tuple[int, int, int, int]] = []
    free = api.t

    def wait(name: str) -> None:  # returns 3 us after the GPU's last work, or at once when that is done
        api(name, 0)
        api.end_last(max(api.rows[-1][0], free) + 3 * us)
        api.t = api.rows[-1][1] + 2 * us

    for epoch in range(epochs):
        api("cudaEventRecord_v3020", 2 * us)
        for j, (_, kernel_us) in enumerate(_REGRESSION_KERNELS):
            api("cudaEventCreate_v3020", 1 * us)
            api("cudaEventCreate_v3020", 1 * us)
            api("cudaEventRecord_v3020", 2 * us)
            c = api("cudaLaunchKernel_v7000", 6 * us)
            start = max(api.t + int(latency_us * us), free)
            free = start + int(kernel_us * us)
            kern.append((start, free, c, j))
            api("cudaEventRecord_v3020", 3 * us)
            wait("cudaEventSynchronize_v3020")
        api("cudaEventRecord_v3020", 2 * us)
        wait("cudaEventSynchronize_v3020")
        if epoch % print_every == 0:
            wait("cudaDeviceSynchronize_v3020")
    stop = api.t + ms
    api.insert(con, gtid)
    names = [strings(n) for n, _ in _REGRESSION_KERNELS]
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, names[j], 32, (15625,), (256,), i)
                     for i, (a, b, c, j) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), gpu, program="./regression", thread="regression",
                copy_enums=False, sync_enum=False)
    return {"syncs_per_epoch": {"cudaEventSynchronize": len(_REGRESSION_KERNELS) + 1,
                                "cudaDeviceSynchronize": 1.0 / print_every}}


# --------------------------------------------------------------------------- a model called back to back (issue 37)


def write_back_to_back_calls(path: str, calls: int = 4, layers: int = 12, layer_kernels: int = 6,
                             kernel_us: float = 40.0, init_bursts: int = 24) -> dict:
    """Write the export of a forward benchmark shaped after zx3xyy/assignment2-systems' ``result.sqlite`` (an A100, no
    NVTX traced): a start-up of ``init_bursts`` short bursts of initialisation kernels 5-15 ms apart (the weights'
    init), then ``calls`` calls of a model -- an embedding kernel, ``layers`` layers of ``layer_kernels`` kernels, a
    head kernel -- launched back to back, each kernel ``kernel_us`` long; the host syncs only after the first call (the
    warm-up) and after the last.  Return the truth: the calls and each call's GPU time."""
    us, ms = 1000, 1_000_000
    pid = 5151
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=3 * us)
    kern = []
    free = 0
    k_ns = int(kernel_us * us)

    def launch(name: str) -> None:
        nonlocal free
        ks = max(api.t + 10 * us, free)
        free = ks + k_ns
        kern.append((ks, free, api("cudaLaunchKernel_v7000", 5 * us), strings(name)))

    def sync() -> None:
        api.row("cudaDeviceSynchronize_v3020", api.t, max(api.t, free) + 3 * us)
        api.t = max(api.t, free) + 10 * us

    api("cudaMalloc_v3020", 300 * ms, then=1 * ms)  # the context
    for i in range(init_bursts):
        for _ in range(3):
            launch("normal_kernel_init")
        api.t += (5 + 10 * (i % 2)) * ms
    for c in range(calls):
        launch("index_embedding_kernel")
        for _ in range(layers):
            for j in range(layer_kernels):
                launch(f"layer_kernel_{j}")
        launch("head_gemm_kernel")
        if c == 0 or c == calls - 1:
            sync()
    stop = api.t + ms
    api.insert(con, gtid)
    _insert_named_kernels(con, gpid, kern, 432)
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_80GB,
                program="python", thread="python", copy_enums=False, sync_enum=False)
    return {"calls": calls, "call_ms": (layers * layer_kernels + 2) * kernel_us / 1000.0}


# --------------------------------------------------------------------------- a native loop, no sync (issue 37)


def write_native_loop(path: str, iterations: int = 400, kernel_us: tuple[float, ...] = (46.0, 39.0),
                      context_ms: float = 77.0, cut: bool = False) -> dict:
    """Write the export of a native GPU-bound loop shaped after michaelmichaeln/Parallel-Sheet-Simulator's RTX 2080
    ``report1.sqlite``: the runtime initialises (``cuModuleGetLoadingMode``), then the program's first call, a blocking
    ``cudaMemcpyToSymbol`` of 8 bytes, lasts ``context_ms`` (the context created inside it), buffers are allocated and
    uploaded, one warm-up iteration runs and is synced, and ``iterations`` iterations of ``len(kernel_us)`` kernels are
    launched back to back (20 us a launch, the kernels queue end to end), then one ``cudaEventSynchronize`` and the
    results read back.  ``cut``: a window opened mid-run instead -- no runtime start-up, and the first call a blocking
    ``cudaMemcpy`` that waits ``context_ms`` for GPU work launched before the window.  Return the truth."""
    us, ms = 1000, 1_000_000
    pid = 9514
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, SYNC_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 300 * ms, gap=2 * us)
    memcpy, kern = [], []
    free = 0

    def copy(name: str, kind: int, dma_us: float, wait_ns: int = 0) -> None:
        nonlocal free
        a = max(api.t, free) + wait_ns
        c = api(name, a - api.t + int(dma_us * us) + 5 * us)
        memcpy.append((a + 2 * us, a + 2 * us + int(dma_us * us), c, kind))
        free = max(free, a + 2 * us + int(dma_us * us))

    def launch(j: int) -> None:
        nonlocal free
        c = api("cudaLaunchKernel_v7000", 18 * us)
        ks = max(api.rows[-1][0] + 10 * us, free)
        free = ks + int(kernel_us[j] * us)
        kern.append((ks, free, c, j))

    def wait(name: str) -> None:  # returns 3 us after the GPU's last work
        api(name, 0)
        api.end_last(free + 3 * us)
        api.t = free + 5 * us

    if cut:
        copy("cudaMemcpy_v3020", 1, 1.0, wait_ns=int(context_ms * ms))  # waits for work before the window
    else:
        api("cuModuleGetLoadingMode", 1 * us)
        copy("cudaMemcpyToSymbol_v3020", 1, 1.0, wait_ns=int(context_ms * ms))  # the context, inside it
        for _ in range(3):
            api("cudaMalloc_v3020", 60 * us)
        for _ in range(3):
            copy("cudaMemcpy_v3020", 1, 180.0)
        for j in range(len(kernel_us)):  # the warm-up iteration, synced
            launch(j)
        wait("cudaDeviceSynchronize_v3020")
    first = free
    for _ in range(iterations):
        for j in range(len(kernel_us)):
            launch(j)
    wait("cudaEventSynchronize_v3020")
    loop_ms = (free - first) / ms
    for _ in range(3):
        copy("cudaMemcpy_v3020", 2, 200.0)
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,?,0,2)",
                    [(a, b, c, gpid, 4 << 20, k) for a, b, c, k in memcpy])
    names = [strings(n) for n in ("fused_force_kernel", "fused_integrate_collision_kernel", "third_kernel",
                                  "fourth_kernel")[:len(kernel_us)]]
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, names[j], 32, (977,), (256,), i)
                     for i, (a, b, c, j) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), RTX_2080, program="./cloth_sim_v4", thread="cloth_sim_v4")
    return {"iterations": iterations, "iteration_ms": sum(kernel_us) / 1000.0, "loop_ms": loop_ms,
            "context_ms": 0.0 if cut else context_ms, "waited_ms": context_ms if cut else 0.0}


# --------------------------------------------------------------------------- host work between the GPU's (issue 37)


def write_host_work_window(path: str, host_ms: float = 2000.0, kernel_ms: float = 8.7, ranged: bool = False) -> dict:
    """Write the export of a CUDA program shaped after fckwader/shitbox's ``report1`` (an A100 ``./hello``): three
    pageable 32 MB uploads, then ``host_ms`` of the host's own CPU work with no CUDA call, then one kernel of
    ``kernel_ms``, a sync and a 32 MB read-back.  With ``ranged`` the CPU work sits in the program's NVTX range
    ``cpu_reference`` (recorded); without it nothing covers it.  Return the truth: the host's work and whether the
    capture recorded it."""
    us, ms = 1000, 1_000_000
    pid = 4141
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, NVTX_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=5 * us)
    copies, nvtx_rows = [], []
    nbytes = 32 << 20
    api("cudaMalloc_v3020", 200 * ms)  # the context
    for kind in (1, 1, 1):
        a = api.t
        c = api("cudaMemcpy_v3020", int(4.9 * ms))
        copies.append((a + 100 * us, a + int(4.8 * ms), c, kind))
    a = api.t
    api.t += int(host_ms * ms)  # the host's own CPU work: no CUDA call
    if ranged:
        nvtx_rows.append((a, api.t, "cpu_reference"))
    c = api("cudaLaunchKernel_v7000", 20 * us)
    ks = api.t
    kern = (ks, ks + int(kernel_ms * ms), c)
    api("cudaDeviceSynchronize_v3020", int(kernel_ms * ms) + 10 * us)
    a = api.t
    c = api("cudaMemcpy_v3020", int(6.9 * ms))
    copies.append((a + 100 * us, a + int(6.8 * ms), c, 2))
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,?,0,2)",
                    [(a, b, c, gpid, nbytes, k) for a, b, c, k in copies])
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                    [(a, b, text, gtid) for a, b, text in nvtx_rows])
    name = strings("globalMM(float *, float *, float *, int)")
    con.execute(_KERNEL_INSERT,
                _kernel_row(kern[0], kern[1], kern[2], gpid, name, 32, (128, 128), (32, 32), 0))
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_80GB_PCIE,
                program="./hello", thread="hello", sync_enum=False)
    return {"host_ms": host_ms, "recorded": ranged}


# --------------------------------------------------------------------------- a benchmark's own warm-up range (issue 37)


def write_warmup_benchmark(path: str, warmup: int = 5, measured: int = 10, warm_step_ms: float = 220.0,
                           forward_ms: float = 67.0, kernels: int = 40, measured_backward: bool = False) -> dict:
    """Write the export of a benchmark shaped after jsun-012/assignment2-systems' ``result.sqlite`` (a Transformer LM on
    an RTX 3070 Ti, NVTX on): inside a ``Run Benchmark`` range, a ``Warm-up`` range around ``warmup`` training steps (``Warm-up Step N``, each a
    ``Forward`` and a ``Backward`` range, ``warm_step_ms`` long), then a ``Benchmark Forward Only`` range around
    ``measured`` ``Forward`` ranges of ``forward_ms`` -- the steady state the program itself times.  Each range's GPU
    work is ``kernels`` back-to-back kernels filling it (a backward twice as many: the warm-up holds most launches).
    ``measured_backward``: each measured ``Forward`` is followed by a ``Backward`` (a training benchmark: the control).
    Return the truth: the measured forward's length and the kind of the measured iterations."""
    ms = 1_000_000
    out = _RangedPython(path, pid=8383, start_ms=5)
    filled = out.filled
    ranged, gemm = filled.ranged, out.strings("ampere_sgemm_128x64_tn")

    def work(span_ms: float, n: int = kernels) -> None:  # each range's kernels, then a device-wide wait
        filled.work(span_ms, gemm, n, sync=True)

    def warm() -> None:
        for k in range(warmup):
            ranged(f"Warm-up Step {k + 1}", lambda: (ranged("Forward", lambda: work(warm_step_ms * 0.35)),
                                                     ranged("Backward", lambda: work(warm_step_ms * 0.6, 2 * kernels))))

    def bench() -> None:
        for _ in range(measured):
            ranged("Forward", lambda: work(forward_ms))
            if measured_backward:
                ranged("Backward", lambda: work(forward_ms * 2, 2 * kernels))

    filled.api("cudaMalloc_v3020", 150 * ms, then=1 * ms)  # the context
    ranged("Run Benchmark", lambda: (ranged("Warm-up", warm), ranged("Benchmark Forward Only", bench)))
    out.close()
    return {"forward_ms": forward_ms, "warmup_steps": warmup, "measured": measured,
            "kind": "training" if measured_backward else "inference"}


# --------------------------------------------------------------------------- h37-survey10: one pass, unrecorded kernels


def write_phased_pass(path: str, passes: int = 1, init_ms: float = 1.76, run_ms: float = 110.0,
                      host_ms: float = 40.0) -> dict:
    """Write the export of a one-shot CUDA program after Zeffar/2048's ``profile_report.sqlite`` (an RTX 3080
    Monte-Carlo tree search), its two kernels apart as Luminara-Raytracing's world build and render are: ``cudaMalloc``
    (the context), a 64 B upload, ``init_rng`` (``init_ms``), ``host_ms`` of the host's own work, ``simulate``
    (``run_ms``), a 4 KB read-back -- ``passes`` times.  Return the truth: the passes, each of two phases that share
    no kernel."""
    us, ms = 1000, 1_000_000
    pid = 4868
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=5 * us)
    copies, kern = [], []
    api("cudaMalloc_v3020", 86 * ms)  # the context
    for _ in range(passes):
        a = api.t
        copies.append((a + 20 * us, a + 30 * us, api("cudaMemcpy_v3020", 40 * us), 1, 64))
        for name, run in (("init_rng", init_ms), ("simulate_random_play_kernel", run_ms)):
            c = api("cudaLaunchKernel_v7000", 15 * us)
            kern.append((api.t, api.t + int(run * ms), c, strings(name)))
            api("cudaDeviceSynchronize_v3020", int(run * ms) + 10 * us)
            if name == "init_rng":
                api.t += int(host_ms * ms)  # the host's own work between the phases
        a = api.t
        copies.append((a + 20 * us, a + 40 * us, api("cudaMemcpy_v3020", 50 * us), 2, 4000))
        api.t += int(host_ms * ms)
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,?,0,2)",
                    [(a, b, c, gpid, n, k) for a, b, c, k, n in copies])
    con.executemany(_KERNEL_INSERT, [_kernel_row(a, b, c, gpid, n, 32, (1000,), (256,), 0)
                                     for a, b, c, n in kern])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_80GB_PCIE._replace(name="NVIDIA GeForce RTX 3080", sms=68),
                program="decision_tree/MCTS", thread="MCTS", sync_enum=False)
    return {"passes": passes, "pass_ms": init_ms + host_ms + run_ms}


def write_untraced_kernels(path: str, steps: int = 40, step_ms: float = 6.0, wait_ms: float = 2.8,
                           traced: bool = False) -> dict:
    """Write the export of a program whose kernels the profiler did not record, shaped after
    unschlagbar/neural-networks' ``prof.sqlite`` (a Rust LSTM trainer on an RTX 5080, ``kern_prof 1024 40``): four
    ``cuModuleLoadData``, then ``steps`` steps of ``step_ms``, each an async upload and memsets (recorded), its kernels
    (not recorded, nor their launches), then a final ``cudaDeviceSynchronize`` that waits ``wait_ms`` after the last
    recorded copy, and the teardown (``cuModuleUnload``).  With ``traced`` the kernels and launches are recorded (the
    control).  With ``wait_ms`` 0 the sync returns at once.  Return the truth."""
    us, ms = 1000, 1_000_000
    pid = 4601
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, MEMSET_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 475 * ms, gap=3 * us)
    copies, sets, kern = [], [], []
    api("cuStreamCreate", 160 * us)
    for _ in range(4):
        api("cuModuleLoadData", 7 * ms)
    for _ in range(steps):
        a = api.t
        copies.append((a + 20 * us, a + 280 * us, api("cuMemcpyHtoDAsync_v2", 300 * us)))
        for _ in range(3):
            api("cuMemAllocAsync", 10 * us)
            a = api.t
            sets.append((a + 5 * us, a + 8 * us, api("cuMemsetD8Async", 3 * us)))
        if traced:
            kern.append((api.t + 20 * us, api.t + int(step_ms * ms) - 100 * us, api("cuLaunchKernel", 10 * us)))
        api.t += int(step_ms * ms)  # the step's kernels, unrecorded unless traced
    api("cudaDeviceSynchronize_v3020", int(wait_ms * ms) + 2 * us)
    for _ in range(4):
        api("cuModuleUnload", 300 * us)
    stop = api.t + ms
    api.insert(con, gtid)
    _uploads_and_sets(con, gpid, copies, 1605632, sets, 65536)
    name = strings("lstm_step_fused")
    con.executemany(_KERNEL_INSERT, [_kernel_row(a, b, c, gpid, name, 32, (168,), (256,), 0) for a, b, c in kern])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_80GB_PCIE._replace(name="NVIDIA GeForce RTX 5080", sms=84),
                program="./target/release/examples/kern_prof", thread="kern_prof", sync_enum=False)
    return {"steps": steps, "kernels_recorded": traced, "wait_ms": wait_ms}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--ranks", type=int, default=1)
    p.add_argument("--ops", type=int, default=20)
    p.add_argument("--window", choices=WINDOWS, help="a window without GPU work instead of a training loop")
    a = p.parse_args(argv)
    if a.window:
        print(json.dumps(write_window(a.out, a.window)))
        return 0
    truth = write(a.out, NsysJob(steps=a.steps, ranks=a.ranks, ops=a.ops))
    print(json.dumps(asdict(truth)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


# --------------------------------------------------------------------------- a loop paced from outside the GPU (issue 37)

#: ``SCHED_EVENTS`` as Nsight Systems 2024-2025 exports it (``--cpuctxsw``, SamuelAmsih/CUDA's Jetson exports): one row
#: per context switch, ``isSchedIn`` 0 for a switch out; on Linux ``threadState`` 0 and ``threadBlock`` NULL.
SCHED_DDL = """CREATE TABLE SCHED_EVENTS (start INTEGER NOT NULL, cpu INTEGER NOT NULL, isSchedIn INTEGER NOT NULL,
    globalTid INTEGER, threadState INTEGER, threadBlock INTEGER)"""
PACED_KERNELS = ("I420ToRGB(uchar*, uchar3*, int, int)", "GrayscaleKernel(uchar3*, uchar*, int, int)",
                 "calcHistogramKernel(uchar*, unsigned int*, int)")


def write_paced_loop(path: str, frames: int = 40, period_ms: float = 40.0, kernel_us: float = 250.0,
                     waits: bool = True, sched: bool = True, ranged: bool = False, mid_wait_ms: float = 0.0,
                     wait_range: str = "") -> dict:
    """Write the export of a camera loop shaped after SamuelAmsih/CUDA's Jetson captures: every ``period_ms`` a frame
    arrives, the launching thread launches three kernels of ``kernel_us`` and synchronises, then has nothing to do
    until the next frame.  With ``waits`` it sleeps off the CPU until then (the scheduler's trace shows it switched
    out: a ``poll`` on the camera); without, it spins on the CPU in code the capture does not record (switched out
    only 0.2 ms a frame, preempted).  A second thread (the camera's reader) is off the CPU in every gap either way: the
    launching thread's waits alone tell the wait.  With ``sched`` False the export holds no ``SCHED_EVENTS``; with
    ``ranged`` each frame is the program's NVTX range ``frame``, from its arrival to the next one's (the wait inside
    the step, as where a loop's own markers or the GPU work's period cut the frames there); with ``mid_wait_ms`` the
    thread also sleeps that long off the CPU after the frame's first kernel (a display's vsync): idle inside the
    step, between its kernels, that no gap holds; ``wait_range``: that sleep inside an NVTX range of that name (a
    loop's ``load_weights`` around a simulated load), the program's own range around the wait.  Return
    the truth: the launching thread's time off the CPU in each gap between frames."""
    us, ms = 1000, 1_000_000
    strings = _Strings()
    con = sqlitefile.connect(path)
    con.executescript(SCHEMA + ";".join([RUNTIME_DDL, KERNEL_DDL, GPU_DDL, SCHED_DDL, NVTX_DDL]) + ";")
    pid = 5151
    gtid, gpid, reader = _gid(pid, pid), _gid(pid), _gid(pid, pid + 3)
    runtime, kernels, switches = [], [], []
    corr = 0
    names = [strings(k) for k in PACED_KERNELS]
    off_ms = []
    for i in range(frames):
        t0 = SESSION_START_NS + 50 * ms + int(i * period_ms * ms)
        switches.append((t0 - 20 * us, 1, gtid))  # the frame woke the launching thread
        switches.append((t0 - 30 * us, 1, reader))
        t = t0
        for part in ((names[:1], names[1:]) if mid_wait_ms else (names,)):
            if t > t0 and waits:  # the first kernel done: the thread sleeps mid-frame (a display's vsync)
                switches += [(t + 30 * us, 0, gtid), (t + int(mid_wait_ms * ms) - 20 * us, 1, gtid)]
            if t > t0:
                if wait_range:
                    con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                                "VALUES (?,?,59,?,?,0)", (t + 10 * us, t + int(mid_wait_ms * ms) - 10 * us, wait_range,
                                                          gtid))
                t += int(mid_wait_ms * ms)
            gpu = t + 40 * us
            for name in part:
                corr += 1
                runtime.append((t, t + 20 * us, corr, strings("cudaLaunchKernel_v7000")))
                gpu = max(gpu, t + 40 * us)
                kernels.append((gpu, gpu + int(kernel_us * us), corr, name))
                gpu += int(kernel_us * us) + 5 * us
                t += 25 * us
            corr += 1
            runtime.append((t, gpu + 10 * us, corr, strings("cudaStreamSynchronize_v3020")))
            t = done = gpu + 20 * us
        nxt = t0 + int(period_ms * ms)
        if i + 1 < frames:
            if waits:
                switches.append((done + 30 * us, 0, gtid))  # asleep until the next frame
                off_ms.append((nxt - 20 * us - (done + 30 * us)) / ms)
            else:  # on the CPU, but preempted once
                mid = (done + nxt) // 2
                switches += [(mid, 0, gtid), (mid + 200 * us, 1, gtid)]
                off_ms.append(0.2)
        switches.append((done + 10 * us, 0, reader))
        if ranged:
            con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                        "VALUES (?,?,59,'frame',?,0)", (t0 - 10 * us, nxt - 10 * us, gtid))
    stop = SESSION_START_NS + 60 * ms + int(frames * period_ms * ms)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,1,?,?,?,0,NULL)",
                    [(a, b, gtid, c, n) for a, b, c, n in runtime])
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, n, 32, (1200,), (256,), 0)
                     for a, b, c, n in kernels])
    if sched:
        con.executemany("INSERT INTO SCHED_EVENTS VALUES (?, 2, ?, ?, 0, NULL)", sorted(switches))
    else:
        con.execute("DROP TABLE SCHED_EVENTS")
    _finish_one(con, strings, stop, (gpid, pid, gtid), RTX_2080, program="./camera", thread="camera",
                copy_enums=False, sync_enum=False)
    return {"off_cpu_ms_per_gap": sum(off_ms) / len(off_ms) if sched else None,
            "mid_wait_off_cpu_ms": (mid_wait_ms - 0.05) if mid_wait_ms and waits else 0.0,
            "gap_ms": period_ms - (3 * (kernel_us + 5) + 40) / 1000, "waits": waits}


def write_scheduled_host_work_window(path: str, host_ms: float = 2000.0, on_cpu: bool = True) -> dict:
    """:func:`write_host_work_window`'s one pass (three uploads, ``host_ms`` with no CUDA call, one kernel and a
    read-back) with the scheduler's trace of its thread, as fckwader/shitbox's real export holds it: with ``on_cpu``
    the thread runs through the host time (switched out three times for 0.1 ms: its own CPU code), without it the
    thread sleeps through it (a wait the capture does not show: a read of the terminal).  Return the truth: the
    thread's time on and off the CPU in the host time."""
    us, ms = 1000, 1_000_000
    truth = write_host_work_window(path, host_ms=host_ms)
    con = sqlitefile.connect(path)
    con.execute(SCHED_DDL)
    gtid = _gid(4141, 4141)
    calls = con.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start").fetchall()
    a, b = max(((x[1], y[0]) for x, y in zip(calls, calls[1:])), key=lambda g: g[1] - g[0])  # the host's time
    if on_cpu:
        cuts = [a + int(k * (b - a) / 4) for k in (1, 2, 3)]
        rows = [(t, i, gtid) for c in cuts for t, i in ((c, 0), (c + 100 * us, 1))]
        off = 0.3
    else:
        rows = [(a + 50 * us, 0, gtid), (b - 50 * us, 1, gtid)]
        off = (b - a - 100 * us) / ms
    con.executemany("INSERT INTO SCHED_EVENTS VALUES (?, 0, ?, ?, 0, NULL)", rows)
    con.commit()
    con.close()
    return {**truth, "off_cpu_ms": off, "on_cpu_ms": (b - a) / ms - off}


# --------------------------------------------------------------------------- a launch the runtime refused (issue 37)


def write_refused_launch(path: str, kernels: int = 5, refused: tuple[int, ...] = (4,), code: int = 1,
                         kernel_ms: float = 20.0, gpu: Gpu | None = A100_80GB_PCIE) -> dict:
    """Write the export of a GEMM benchmark shaped after Promisewjx/cuda-gemm's ``report_nsys.sqlite`` (an A100, one
    kernel of each version timed between two ``cudaEventRecord``): the context in ``cudaMalloc``, then ``kernels``
    launches of ``cudaLaunchKernel``, each followed by ``cudaEventSynchronize``; the launches whose index is in
    ``refused`` return ``code`` (1, cudaErrorInvalidValue: more dynamic shared memory than a kernel may have without
    raising its limit) and run no kernel, so their sync returns at once; ``gpu`` None: no GPU table.  Return the
    truth: the refused launches."""
    us, ms = 1000, 1_000_000
    pid = 5353
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=5 * us)
    api("cudaMalloc_v3020", 290 * ms)  # the context
    kern, failed = [], []
    for k in range(kernels):
        api("cudaMemset_v3020", 25 * us)
        api("cudaEventRecord_v3020", 6 * us)
        c = api("cudaLaunchKernel_v7000", 120 * us)
        api("cudaEventRecord_v3020", 6 * us)
        if k in refused:
            failed.append(c)
            api("cudaEventSynchronize_v3020", 7 * us)
            continue
        ks = api.t
        kern.append((ks, ks + int(kernel_ms * ms), c, strings(f"gemm_v{k}(const float *, const float *, float *, int)")))
        api("cudaEventSynchronize_v3020", int(kernel_ms * ms) + 10 * us)
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = ? WHERE correlationId = ?",
                    [(code, c) for c in failed])
    con.executemany(_KERNEL_INSERT, [_kernel_row(a, b, c, gpid, n, 32, (256, 256), (16, 16), j)
                                     for j, (a, b, c, n) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), gpu, program="./gemm_test", thread="gemm_test",
                sync_enum=False)
    return {"refused": len(failed), "code": code, "kernels_run": len(kern)}


# --------------------------------------------------------------------------- a one-pass program's lazy first launch


#: The laptop GPU of RyuGracie/SudokuSolverCUDA's export (``TARGET_INFO_GPU``: 24 SMs, 8 GB, 256 GB/s).
RTX_4060_LAPTOP = Gpu("NVIDIA GeForce RTX 4060 Laptop GPU", "0000:01:00.0", 33554432, 8184725504, 256032000000,
                      2250000000, 24, "AD107", 0, (8, 9))


def write_filled_frontier(path: str, fill_bytes: int = 1_358_954_334, fill_ms: float = 6.4, levels: int = 31,
                          level_us: float = 12.0, dfs_us: float = 109.0) -> dict:
    """Write the export of a one-pass CUDA search shaped after RyuGracie/SudokuSolverCUDA's ``build/report3.sqlite`` (an
    RTX 4060 Laptop): the context in a 105 ms ``cudaMalloc``, a ``cudaMemset`` of ``fill_bytes`` (the whole frontier
    buffer; ``fill_ms`` on the GPU), two synchronous uploads of 4 and 162 bytes -- the first call waits for the fill --,
    the first launch loading its module, then ``levels`` levels of one ``ExpandFrontierKernel`` of ``level_us`` each
    followed by a synchronous 4-byte read-back of the next level's size, and one ``DfsSolveKernel``.  Return the truth:
    the fill's GPU time, the copies' own GPU time and the uploads' own time (ms), by construction."""
    us, ms = 1000, 1_000_000
    pid = 4848
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, MEMSET_DDL, SYNC_DDL, KERNEL_DDL, GPU_DDL],
                                         pid)
    api = _Calls(strings, SESSION_START_NS + 240 * ms, gap=5 * us)
    api("cuModuleGetLoadingMode", 2 * us, then=300 * us)
    api("cudaMalloc_v3020", 105 * ms)  # the context
    api("cudaMalloc_v3020", 7 * us)
    c = api("cudaMemset_v3020", 60 * us, then=3 * us)
    fill = (api.t - 8 * us, api.t - 8 * us + int(fill_ms * ms), c)
    copies, kernels = [], []
    a = api.t  # the first upload's call waits for the fill, then its copy
    c = api("cudaMemcpy_v3020", fill[1] + 12 * us - a)
    copies.append((fill[1] + 10 * us, fill[1] + 11 * us, c, 1, 4))
    c = api("cudaMemcpy_v3020", 7 * us)
    copies.append((api.t - 8 * us, api.t - 7 * us, c, 1, 162))
    api("cuLibraryLoadData", 727 * us)  # the first launch loads the module
    free = api.t
    for level in range(levels + 1):
        if level:
            c = api("cudaMemcpy_v3020", 0)  # the next level's size: waits for the kernel, then 4 bytes come back
            api.end_last(free + 8 * us)
            api.t = free + 8 * us + 5 * us
            copies.append((free + 5 * us, free + 6 * us, c, 2, 4))
            free += 6 * us
        c = api("cudaLaunchKernel_v7000", 250 * us if not level else 5 * us)
        ks = max(api.t, free)
        free = ks + int(level_us * us)
        kernels.append((ks, free, c, "ExpandFrontierKernel"))
    c = api("cudaLaunchKernel_v7000", 47 * us)
    ks = max(api.t, free)
    free = ks + int(dfs_us * us)
    kernels.append((ks, free, c, "DfsSolveKernel"))
    api("cudaDeviceSynchronize_v3020", 0)
    api.end_last(free + 5 * us)
    api.t = free + 10 * us
    c = api("cudaMemcpy_v3020", 13 * us)
    copies.append((api.t - 10 * us, api.t - 9 * us, c, 2, 162))
    api("cudaFree_v3020", 533 * us)
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,?,?,?)",
                    [(a, b, c, gpid, n, k, 0 if k == 1 else 2, 2 if k == 1 else 0) for a, b, c, k, n in copies])
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?,?,0,1,NULL,7,?,?,0,?,NULL,2)",
                (fill[0], fill[1], fill[2], gpid, fill_bytes))
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, strings(n), 32, (20,), (128,), j)
                     for j, (a, b, c, n) in enumerate(kernels)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), RTX_4060_LAPTOP, program="my_cuda_app", thread="my_cuda_app")
    own = sum(b - a for a, b, *_ in copies) / ms
    # the uploads' own time: the first call from the fill's end to its return, the second call whole
    return {"fill_ms": fill_ms, "fill_bytes": fill_bytes, "copies_ms": own, "uploads_ms": (12 + 7) * us / ms,
            "levels": levels}


def write_lazy_first_launch(path: str, launch_ms: float = 75.7, kernel_ms: float = 20.2) -> dict:
    """Write the export of a one-pass CUDA program shaped after BrianLa0616/mandelbrot's ``profile_output.sqlite`` (an
    A100, ``./mandelbrot``): ``cuModuleGetLoadingMode`` (lazy loading), the context in a 283.7 ms ``cudaMalloc``, its
    one ``cudaLaunchKernel`` of ``launch_ms`` (the kernel's module loaded inside it, the GPU idle), the kernel of
    ``kernel_ms`` once the launch returns, a 2.4 MB read-back that waits for it, and ``cudaFree`` after the host wrote
    the image.  Return the truth: the one-time costs on the GPU's critical path, ms."""
    us, ms = 1000, 1_000_000
    pid = 7373
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 983 * ms, gap=20 * us)
    api("cuModuleGetLoadingMode", 2 * us, then=2 * ms)
    api("cudaMalloc_v3020", int(283.7 * ms))  # the context
    c = api("cudaLaunchKernel_v7000", int(launch_ms * ms), then=0)
    kern = (api.t, api.t + int(kernel_ms * ms), c)
    copy = api("cudaMemcpy_v3020", int(kernel_ms * ms) + ms)
    read = (kern[1] + 10 * us, kern[1] + 720 * us, copy)
    api.t += 150 * ms  # the host writes the image
    api("cudaFree_v3020", 280 * us)
    stop = api.t + ms
    api.insert(con, gtid)
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,2400000,2,2,0)", (*read, gpid))
    name = strings("calculatePixels(unsigned char *, int, int, int)")
    con.execute(_KERNEL_INSERT, _kernel_row(kern[0], kern[1], kern[2], gpid, name, 32, (63, 50), (16, 16), 0))
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_80GB_PCIE, program="./mandelbrot", thread="mandelbrot",
                sync_enum=False)
    one_time = launch_ms if launch_ms >= 1.0 else 0.0  # a launch takes microseconds: one that long loaded a module
    return {"one_time_launch_ms": one_time, "kernel_ms": kernel_ms}


def write_cold_launches(path: str, launches_us: tuple[float, ...] = (1129.3, 17.9, 28.6),
                        leads_us: tuple[float, ...] = (), repeat_us: float | None = None, started: bool = True) -> dict:
    """Write the export of a one-pass CUDA program shaped after Better-Call-Paul/CUDA-Transformer's T4 ``layer_norm``
    (``src/report1.sqlite``, kept as ``wild/lazy_first_launch_t4``): the runtime's start-up
    (``cuModuleGetLoadingMode``: lazy loading) and the context in a 176 ms ``cudaMalloc`` (``started``; False: the
    window opens on a process that had started before it), then one ``cudaLaunchKernel`` of each ``launches_us`` --
    a kernel of its own each, the first loading the module -- each kernel (1.7 us) read back by a 4-byte
    ``cudaMemcpy``.  ``leads_us``: per launch, the GPU idle from its return to its kernel's start (2 us where not
    given; Qcompiler/MIXQ's A100 benchmark: 0.42 and 1.48 ms after its two module-loading launches).  ``repeat_us``: a
    last launch of the first kernel again, that long (a repeat launch by the same call: no module to load).  Return
    the truth: which launches load a module (a first launch over 1 ms and over every repeat launch, ms) and the leads
    (ms) after them."""
    us, ms = 1000, 1_000_000
    pid = 7474
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 900 * ms, gap=5 * us)
    if started:
        api("cuModuleGetLoadingMode", 2 * us, then=2 * ms)
        api("cudaMalloc_v3020", 176 * ms)  # the context
    plan = [(f"kernel_{i}(float *, int)", d, leads_us[i] if i < len(leads_us) else 2.0)
            for i, d in enumerate(launches_us)]
    if repeat_us is not None:
        plan.append((plan[0][0], repeat_us, 2.0))
    for name, dur_us, lead_us in plan:
        c = api("cudaLaunchKernel_v7000", int(dur_us * us), then=0)
        k0 = api.t + int(lead_us * us)
        k1 = k0 + 1700
        nid = strings(name)
        con.execute(_KERNEL_INSERT, _kernel_row(k0, k1, c, gpid, nid, 16, (4,), (256,), 0, dyn_shared=1024))
        copy = api("cudaMemcpy_v3020", 0)
        api.end_last(k1 + 15 * us)
        api.t = k1 + 15 * us + 5 * us
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
                    "correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,4,2,2,0)",
                    (k1 + 8 * us, k1 + 10 * us, copy, gpid))
    api("cudaFree_v3020", 106 * us)
    stop = api.t + ms
    api.insert(con, gtid)
    _finish_one(con, strings, stop, (gpid, pid, gtid), RTX_2080, program="./layer_norm", thread="layer_norm",
                sync_enum=False)
    worst = repeat_us or 0.0
    loads = [d / 1e3 for d in launches_us if d >= 1000.0 and d > worst]
    first_is_load = bool(launches_us) and launches_us[0] >= 1000.0 and launches_us[0] > worst
    return {"load_launches_ms": loads,
            "load_leads_ms": [lead / 1e3 for d, lead in zip(launches_us, leads_us) if d >= 1000.0 and d > worst],
            # a started process's first launch on its GPU, the GPU idle through the call and after its return with
            # nothing launched before (no work from before the capture to run): ms, 0 where the window opens on a
            # process already running or the launch is a load (booked as one above)
            "first_call_ms": launches_us[0] / 1e3 if started and launches_us and not first_is_load else 0.0,
            "first_lead_ms": (leads_us[0] if leads_us else 2.0) / 1e3 if started and launches_us else 0.0}


def write_library_kernel_fetch(path: str, fetch_ms: float = 423.3, uploads: int = 10, upload_ms: float = 40.0,
                               gemms: int = 10, gemm_ms: float = 105.0, links: bool = False, device: int = 0,
                               relay: bool = False) -> dict:
    """Write the export of a pipelined GEMM program shaped after ntua-el20062/gemm_spmm_a100's
    ``gemm_pipeline_full_overlap`` (A100-PCIE-40GB, Nsight 2024.2, ``nsys_report_fo_10000_10_20.sqlite``): the
    context, then ``uploads`` pinned H2D copies of ``upload_ms`` queued at once on a copy stream, then the first
    cuBLAS GEMM: cuBLAS fetches its kernel through CUDA 12's library API (``cuLibraryGetKernel``, then
    ``cuKernelGetFunction``), and under lazy loading the first fetch loads the kernel's module into the context --
    ``fetch_ms`` of host time while the uploads run beneath it -- then ``gemms`` GEMMs of ``gemm_ms``, each waiting for
    its upload, each launch preceded by a fetch of microseconds.  ``links``: the program orders them as the real one
    does, through CUDA events -- a ``cudaEventRecord`` on the copy stream after each upload, a ``cudaStreamWaitEvent``
    of the GEMM stream before each GEMM -- and the export records them (``CUPTI_ACTIVITY_KIND_CUDA_EVENT``, the sync
    rows' ``eventId``, Nsight 2024.2's columns); without, it records none.  ``device``: the CUDA device the program
    runs on (a rank's GPU other than the first); the sync rows say device 0 whatever it is, as real exports write
    them.  ``relay`` (with ``links``): the GEMM stream waits on the uploads through a third stream (15, which runs one
    ``prep`` kernel before the uploads): stream 15 waits for each upload's event and records one of its own, the
    GEMM stream waits for that -- two hops, as ``wait_stream`` chains make them (h37-bursts34).  Return the truth: the one-time fetch (ms,
    its start and end in ns), the GEMMs' count, the GPU's idle from the uploads' end to the first GEMM (ms), the
    uploads' span (the first's start, the last's end, ns) and the time of the first upload -- the one the first GEMM
    waits for -- that ran beneath the fetch (``needed_under_ms``)."""
    us, ms = 1000, 1_000_000
    pid = 7575
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 500 * ms, gap=10 * us)
    api("cuModuleGetLoadingMode", 2 * us, then=2 * ms)
    api("cudaMalloc_v3020", 190 * ms)  # the context
    for _ in range(3):
        api("cuLibraryLoadData", 300 * us)
    api("cublasCreate_v2", 300 * us)
    prep = []  # the relay stream's one kernel, before the uploads
    if relay:
        c = api("cuLaunchKernel", 5 * us)
        prep.append((api.t, api.t + 10 * us, c))
    copy_rows, t_copy = [], api.t + 20 * us
    records, waits = [], []  # (corr, event[, stream]): records on the copy stream 14, waits of the GEMM stream 13
    relays: list[tuple[int, int, int]] = []  # (corr, event, time): the relay stream 15's waits on the copies' events
    for u in range(uploads):
        c = api("cudaMemcpyAsync_v3020", 20 * us)
        copy_rows.append((t_copy, t_copy + int(upload_ms * ms), c))
        t_copy += int(upload_ms * ms)
        if links:
            records.append((api("cudaEventRecord_v3020", 3 * us), u + 1, 14))
        if links and relay:  # stream 15 waits for the upload, then records the event the GEMM stream waits for
            relays.append((api("cudaStreamWaitEvent_v3020", 3 * us), u + 1, api.t))
            records.append((api("cudaEventRecord_v3020", 3 * us), 1000 + u + 1, 15))
    api("cuLibraryGetKernel", 1 * us)
    fetch = (api.t, api.t + int(fetch_ms * ms))
    api("cuKernelGetFunction", int(fetch_ms * ms))
    kern_rows, gpu_free = [], 0
    for g in range(gemms):
        if g:
            api("cuKernelGetFunction", 1 * us)
        if links:
            waits.append((api("cudaStreamWaitEvent_v3020", 3 * us), min(g, uploads - 1) + 1 + 1000 * relay, api.t))
        c = api("cuLaunchKernel", 5 * us)
        k0 = max(api.t, gpu_free, copy_rows[min(g, uploads - 1)][1] + 5 * us)
        gpu_free = k0 + int(gemm_ms * ms)
        kern_rows.append((k0, gpu_free, c))
    api("cudaStreamSynchronize_v3020", 0)
    api.end_last(gpu_free + 10 * us)
    api.t = gpu_free + 20 * us
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
                    "correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,?,1,14,?,?,800000000,1,1,"
                    "2)", [(a, b, device, c, gpid) for a, b, c in copy_rows])
    nid = strings("Kernel2")
    con.executemany(_KERNEL_INSERT, [_kernel_row(k0, k1, c, gpid, nid, 168, (1256, 20), (128,), c, device=device,
                                                 stream=13)
                                     for k0, k1, c in kern_rows])
    if prep:
        pid_ = strings("prep")
        con.executemany(_KERNEL_INSERT, [_kernel_row(k0, k1, c, gpid, pid_, 32, (1,), (32,), c, device=device,
                                                     stream=15)
                                         for k0, k1, c in prep])
    if links:
        con.executescript(SYNC_DDL + ";" + CUDA_EVENT_DDL)
        con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT (deviceId, contextId, streamId, correlationId, "
                        "globalPid, eventId) VALUES (?,1,?,?,?,?)", [(device, st, c, gpid, e) for c, e, st in records])
        # Nsight 2024.2 writes a cudaStreamWaitEvent's row with syncType 3 (its own enum's stream synchronisation)
        con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, "
                        "correlationId, globalPid, syncType, eventId) VALUES (?,?,0,1,?,?,?,3,?)",
                        [(t - 3 * us, t - 2 * us, st, c, gpid, e) for st, rows in ((13, waits), (15, relays))
                         for c, e, t in rows])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="./gemm_pipeline_full_overlap",
                thread="gemm_pipeline_f", sync_enum=False, gpu_id=device)
    # the GPU idle from the uploads' end to the first GEMM, waiting on the host's fetch (0 where the uploads outlast it)
    wait = max(0, kern_rows[0][0] - copy_rows[-1][1]) / ms
    needed = max(0, min(copy_rows[0][1], fetch[1]) - max(copy_rows[0][0], fetch[0])) / ms
    return {"fetch_ms": fetch_ms, "fetch_ns": fetch, "gemms": gemms, "gpu_wait_ms": wait,
            "uploads_ns": (copy_rows[0][0], copy_rows[-1][1]), "needed_under_ms": needed}


def write_first_async_context(path: str, first_call: str = "cudaMemsetAsync_v3020", first_ms: float = 2157.6,
                              first_copy: str = "", iterations: int = 12, kernels: int = 20,
                              kernel_us: float = 300.0) -> dict:
    """Write the export of a CUDA 11.0 program shaped after quasiben/nvtx-examples' ``cudf.sqlite`` (Nsight 2020, a
    cuDF groupby in a Python process): no runtime start-up mark (no ``cuModuleGetLoadingMode`` before CUDA 11.7), the
    process's first CUDA call -- ``first_call`` -- lasting ``first_ms`` with the GPU idle (the context and the library's
    modules created in it; the real call has no memset record), then ``iterations`` passes of a ``cudaMalloc``, a
    pageable upload of 2.4 MB, a ``cudaMemsetAsync`` of microseconds, ``kernels`` kernels of ``kernel_us`` and a
    ``cudaStreamSynchronize``.  ``first_copy``: "" no copy record of the first call, "pinned" / "pageable" one 1 ms
    upload from that memory made by it (the call then a ``cudaMemcpyAsync``).  Return the truth: the first call's
    length (ms) and the window (ms)."""
    us, ms = 1000, 1_000_000
    pid = 7676
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, MEMSET_DDL, KERNEL_DDL, GPU_DDL], pid)
    t_open = SESSION_START_NS + 1200 * ms
    api = _Calls(strings, t_open, gap=30 * us)
    first = api(first_call, int(first_ms * ms))
    copies = []  # (start, end, corr, srcKind)
    if first_copy:
        t = api.t - 40 * us - ms  # the copy runs at the call's end, once its context exists
        copies.append((t, t + ms, first, {"pinned": 1, "pageable": 0}[first_copy]))
    kern, sets, gpu_free = [], [], 0
    for _ in range(iterations):
        api("cudaMalloc_v3020", 200 * us)
        c = api("cudaMemcpyAsync_v3020", int(2.5 * ms))
        copies.append((api.t - 30 * us - int(2.4 * ms), api.t - 30 * us - 100 * us, c, 0))
        c = api("cudaMemsetAsync_v3020", 2 * us)
        sets.append((api.t, api.t + 2 * us, c))
        gpu_free = api.t + 3 * us
        for _ in range(kernels):
            c = api("cudaLaunchKernel_v7000", 6 * us, then=4 * us)
            k0 = max(api.t, gpu_free)
            gpu_free = k0 + int(kernel_us * us)
            kern.append((k0, gpu_free, c))
        api("cudaStreamSynchronize_v3020", 0)
        api.end_last(gpu_free + 10 * us)
        api.t = gpu_free + 15 * ms  # the host's pandas-side work between passes
    stop = api.t + ms
    api.insert(con, gtid)
    _insert_one_stream(con, strings, (gpid, pid, gtid), stop, copies, 2400000, sets, kern, "_kernel_agent")
    return {"first_ms": first_ms, "window_ms": (stop - t_open) / ms}


def _insert_one_stream(con: sqlite3.Connection, strings: _Strings, ids: tuple[int, int, int], stop: int,
                       copies: list[tuple[int, int, int, int]], copy_bytes: int, sets: list[tuple[int, int, int]],
                       kern: list[tuple[int, int, int]], kernel: str) -> None:
    """Insert a one-process, one-stream program's GPU work on an A100 and close its export (``ids``: its globalPid,
    pid and globalTid): ``copies`` (start, end, correlation, source memory kind) uploads of ``copy_bytes``, ``sets``
    (start, end, correlation) fills of 4 KB, ``kern`` (start, end, correlation) kernels named ``kernel``, all on
    stream 7 -- the one shape :func:`write_first_async_context` and :func:`write_async_stall` write, in one place."""
    gpid = ids[0]
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
                    "correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,1,?,2)",
                    [(a, b, c, gpid, copy_bytes, k) for a, b, c, k in copies])
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, value, bytes, memKind) VALUES (?,?,0,1,7,?,?,0,4096,2)", [(*r, gpid) for r in sets])
    nid = strings(kernel)
    con.executemany(_KERNEL_INSERT, [_kernel_row(k0, k1, c, gpid, nid, 32, (80,), (256,), c) for k0, k1, c in kern])
    _finish_one(con, strings, stop, ids, A100_SXM4_40GB, program="python", thread="python", sync_enum=False)


#: How :func:`write_unrecorded_context` annotates its program, as PyProf / DLProf do (every ``torch``, ``Tensor`` and
#: ``torch.nn.functional`` call in an NVTX range whose text is a dict): "" none; "forward" each burst inside a
#: ``conv2d`` op range and the context inside ``Tensor.cuda``; "backward" the second burst a backward -- the program's
#: ``Tensor.backward`` range on its thread, the kernels launched by autograd's device thread; "grad" the same backward
#: without the ``Tensor.backward`` range (``torch.autograd.grad``, which the tools do not wrap).
PYPROF_PASSES = ("", "forward", "backward", "grad")


def _pyprof_op(mod: str, op: str) -> str:
    """A PyProf op range's text: a Python dict naming the call's module and function."""
    return str({"mod": mod, "op": op, "args": []})


#: The slow call of :func:`write_async_stall`: a fill, copies of each host memory, and a sync.
ASYNC_STALL_CALLS = ("memset", "pinned", "pageable", "sync")


def write_async_stall(path: str, call: str = "memset", stall_ms: float = 5.75, steps: int = 10, stall_at: int = 5,
                      kernels: int = 12, kernel_us: float = 400.0, stall_after: int = 0,
                      host_after_sync_us: float = 0.0) -> dict:
    """Write the export of a marked loop whose host stalls once, mid-run, inside an asynchronous call, shaped after
    ``nsys/fsdp_mfu_after``'s 5.75 ms ``cudaMemsetAsync`` (a rank's thread 170 ms into the window, the GPU idle, the
    same call microseconds elsewhere): each of ``steps`` iterations is an NVTX range ``step`` holding a
    ``cudaMemsetAsync`` of 4 us and its fill, ``kernels`` kernels of ``kernel_us`` and a ``cudaStreamSynchronize``
    that waits for them.  In iteration ``stall_at`` a call of ``stall_ms`` comes first, the GPU idle through it (the
    last sync drained it), its work at its end -- or, with ``stall_after`` > 0, after that many of the step's kernels
    were launched, the GPU running them first and idle only once they end (an idle no sync drained) --: ``call``
    (:data:`ASYNC_STALL_CALLS`) "memset" a ``cudaMemsetAsync``
    (a fill), "pinned" / "pageable" a ``cudaMemcpyAsync`` of 64 KB uploaded from that memory, "sync" a
    ``cudaStreamSynchronize`` (the control: a call that waits, for GPU work the file does not hold).  Nothing else
    covers the host's time then.  ``host_after_sync_us``: after each step's sync, the host's own work in an NVTX range
    ``postprocess`` of that long, the GPU idle (the sync drained it).  Return the truth: the stall (ms), its share per step (ms over ``steps``), the
    steps, and the GPU's work per step (ms)."""
    if call not in ASYNC_STALL_CALLS:
        raise ValueError(f"call: one of {ASYNC_STALL_CALLS}")
    us, ms = 1000, 1_000_000
    pid = 5151
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, MEMCPY_DDL, MEMSET_DDL, KERNEL_DDL, GPU_DDL],
                                         pid)
    api = _Calls(strings, SESSION_START_NS + 50 * ms, gap=5 * us)
    kern, sets, copies, ranges = [], [], [], []
    name = {"memset": "cudaMemsetAsync_v3020", "pinned": "cudaMemcpyAsync_v3020",
            "pageable": "cudaMemcpyAsync_v3020", "sync": "cudaStreamSynchronize_v3020"}[call]
    for i in range(steps):
        opened = api.t

        def stall(free: int) -> int:
            c = api(name, int(stall_ms * ms))
            at = max(api.t - 5 * us - 8 * us, free)  # its work at the call's end, after the GPU's queued work
            if call == "memset":
                sets.append((at + 5 * us, at + 6 * us, c))
                return at + 6 * us
            if call in ("pinned", "pageable"):
                copies.append((at, at + 6 * us, c, 1 if call == "pinned" else 0))
                return at + 6 * us
            return free

        free = stall(0) if i == stall_at and not stall_after else 0
        c = api("cudaMemsetAsync_v3020", 4 * us)
        free = max(api.t + 2 * us, free + 1 * us)
        sets.append((free - 1 * us, free, c))
        for j in range(kernels):
            if i == stall_at and stall_after and j == stall_after:
                free = stall(free)
            c = api("cudaLaunchKernel_v7000", 6 * us)
            k0 = max(api.t, free)
            free = k0 + int(kernel_us * us)
            kern.append((k0, free, c))
        api("cudaStreamSynchronize_v3020", 0)
        api.end_last(free + 10 * us)
        api.t = free + 15 * us
        if host_after_sync_us:
            ranges.append((api.t, api.t + int(host_after_sync_us * us), "postprocess"))
            api.t += int(host_after_sync_us * us)
        ranges.append((opened, api.t, "step"))
        api.t += 20 * us
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                    [(a, b, text, gtid) for a, b, text in ranges])
    _insert_one_stream(con, strings, (gpid, pid, gtid), stop, copies, 65536, sets, kern, "_step_kernel")
    return {"stall_ms": stall_ms, "stall_per_step_ms": stall_ms / steps, "steps": steps,
            "gpu_ms": kernels * kernel_us / 1000.0}


def write_unrecorded_context(path: str, context_ms: float = 960.0, context_calls: int = 240, kernels: int = 40,
                             kernel_ms: float = 1.0, own_ioctl_ms: float = 0.0, start_in_window: bool = True,
                             pyprof: str = "") -> dict:
    """Write the export of a one-pass PyTorch-like program whose CUDA context is created in calls Nsight does not
    record, shaped after yyhtbs-yye/mmagic_vsr_v2's ``net.sqlite`` (an A100, traced from the process's start with
    ``-t cuda,nvtx,osrt`` and ``CUDA_SKIP_SOME_API_CALLS``): the runtime initialises (``cuModuleGetLoadingMode``), the
    host builds its model for 40 ms, then ``.cuda()`` creates the context -- ``context_calls`` of the driver's
    ``ioctl`` filling ``context_ms`` on the launching thread, no runtime call around them -- and the next recorded
    call, ``cudaStreamIsCapturing``, takes 14 us.  Then an allocation, one 4 MB upload, ``kernels`` kernels of
    ``kernel_ms`` launched back to back, twice, one sync, and a read-back: one pass.  ``own_ioctl_ms``: between the
    two bursts, the first drained, the program itself waits in one ``ioctl`` this long (a camera's next frame), the
    GPU idle -- the program's own wait, mid-run.  ``start_in_window`` False: a window that opens after the runtime's
    start-up (no ``cuModuleGetLoadingMode``), the same ``ioctl`` before the first call.  ``pyprof``: the program's
    annotation (:data:`PYPROF_PASSES`).  Return the truth: the context's ms the capture shows as start-up, the
    program's own ``ioctl`` ms, and whether a backward ran."""
    if pyprof not in PYPROF_PASSES:
        raise ValueError(f"pyprof {pyprof!r}: one of {PYPROF_PASSES}")
    us, ms = 1000, 1_000_000
    pid = 3426
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL, NVTX_DDL], pid)
    autograd = gtid + 1  # autograd's device thread: a CUDA backward runs there
    api = _Calls(strings, SESSION_START_NS + 500 * ms, gap=20 * us)
    if start_in_window:
        api("cuModuleGetLoadingMode", 2 * us, then=40 * ms)  # then the model is built on the CPU
    else:
        api.t += 40 * ms
    ranges: list[tuple[int, int, str, int]] = []  # (start, end, text, thread)
    os_calls: list[tuple[int, int, str, int]] = []
    cuda_at = api.t
    each = int(context_ms * ms / context_calls)
    for _ in range(context_calls):  # the driver creates the context: no runtime call recorded around it
        os_calls.append((api.t, api.t + each, "ioctl", gtid))
        api.t += each + 50 * us
    api.t += 2 * ms
    api("cudaStreamIsCapturing_v10000", 14 * us)
    api("cudaMalloc_v3020", 480 * us)
    up = api("cudaMemcpy_v3020", 450 * us)
    memcpy = [(api.t - 400 * us, api.t - 30 * us, up, 1)]
    ranges.append((cuda_at, api.t - 10 * us, _pyprof_op("Tensor", "cuda"), gtid))
    kern: list[tuple[int, int, int]] = []
    free = api.t
    threads: dict[int, int] = {}  # correlation id -> the thread of a call made off the main thread

    def burst(op: tuple[str, str] | None, thread: int = gtid) -> None:
        nonlocal free
        a = api.t
        for _ in range(kernels):
            c = api("cudaLaunchKernel_v7000", 8 * us, then=2 * us)
            if thread != gtid:
                threads[c] = thread
            free = max(free, api.t) + 5 * us
            kern.append((free, free + int(kernel_ms * ms), c))
            free += int(kernel_ms * ms)
        if pyprof and op is not None:
            ranges.append((a, api.t, _pyprof_op(*op), gtid))

    conv = ("torch.nn.functional", "conv2d")
    burst(conv)
    if own_ioctl_ms:  # after the burst's kernels drained: the GPU idle through the wait
        api.t = max(api.t, free) + 20 * us
        os_calls.append((api.t, api.t + int(own_ioctl_ms * ms), "ioctl", gtid))
        api.t += int(own_ioctl_ms * ms) + 20 * us
    if pyprof in ("backward", "grad"):
        a = api.t
        burst(None, autograd)
        if pyprof == "backward":
            ranges.append((a, api.t, _pyprof_op("Tensor", "backward"), gtid))
    else:
        burst(conv)
    api("cudaDeviceSynchronize_v3020", 0)
    api.end_last(free + 3 * us)
    api.t = free + 20 * us
    back = api("cudaMemcpy_v3020", 450 * us)
    memcpy.append((api.t - 420 * us, api.t - 40 * us, back, 2))
    stop = api.t + ms
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,1,?,?,?,0,NULL)",
                    [(a, b, threads.get(c, gtid), c, n) for a, b, c, n in api.rows])
    if pyprof:
        con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                        "VALUES (?,?,59,?,?,0)", ranges)
        if threads:
            con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (strings("pt_autograd_0"), autograd))
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,4194304,?,0,2)",
                    [(a, b, c, gpid, k) for a, b, c, k in memcpy])
    name = strings(RELU)
    con.executemany(_KERNEL_INSERT, [_kernel_row(a, b, c, gpid, name, 32, (63, 50), (128,), i)
                                     for i, (a, b, c) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="python", thread="python")
    add_os_runtime(path, os_calls)
    return {"context_ms": context_ms if start_in_window else 0.0, "own_ioctl_ms": own_ioctl_ms,
            "kernel_ms": 2 * kernels * kernel_ms, "backward": pyprof in ("backward", "grad")}


def write_jit_first_call(path: str, compile_ms: float = 145.0, link: bool = True, kernel_us: float = 4.8) -> dict:
    """Write the export of a Numba CUDA program's first call, shaped after quasiben/nvtx-examples' ``numba-jit.sqlite``
    (NVTX ranges ``copy-to-device``, then ``matmul``): three ``cuMemAlloc`` + ``cuMemcpyHtoD`` uploads, then
    ``compile_ms`` with no CUDA call but a ``cuInit`` the compiler makes to learn its target (Numba's type inference,
    LLVM and NVVM run on the host, untraced), the driver's linker (``cuLinkCreate``, ``cuLinkComplete``,
    ``cuModuleLoadDataEx``, ``cuLinkDestroy``), one ``cuLaunchKernel`` of a ``kernel_us`` kernel and a read-back.
    With ``link`` False no linker call follows the silence (the host's own work before the launch: the control).
    Return the truth: the compile time (the host's silence between its last upload and the link)."""
    us, ms = 1000, 1_000_000
    pid = 7373
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL, NVTX_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 265 * ms, gap=60 * us)
    copies, nvtx = [], []
    a0 = api.t
    api("cuMemGetInfo_v2", 27 * us)
    for _ in range(3):
        api("cuMemAlloc_v2", 12 * us)
        a = api.t
        copies.append((a + 5 * us, a + 7 * us, api("cuMemcpyHtoD_v2", 12 * us, then=0), 1, 800))
    nvtx.append((a0, api.t + 40 * us, "copy-to-device"))
    m0 = api.t + 50 * us
    silence = api.t
    api.t += int(compile_ms * ms * 0.66)
    api("cuInit", 3 * us, then=int(compile_ms * ms * 0.34))
    compiled = (api.t - silence) / ms
    if link:
        api("cuLinkCreate_v2", 43 * us)
        api("cuLinkComplete", 95 * us)
        api("cuModuleLoadDataEx", 517 * us)
        api("cuLinkDestroy", 2 * us)
    launch = api("cuLaunchKernel", 28 * us, then=100 * us)
    kern = (api.t - 90 * us, api.t - 90 * us + int(kernel_us * us), launch)
    a = api.t
    copies.append((a + 14 * us, a + 16 * us, api("cuMemcpyDtoH_v2", 21 * us), 2, 400))
    nvtx.append((m0, api.t, "matmul"))
    stop = api.t + 67 * ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,?,0,2)",
                    [(a, b, c, gpid, n, k) for a, b, c, k, n in copies])
    name = strings("cudapy::__main__::matmul$241(Array<float, 2, C, mutable, aligned>)")
    con.execute(_KERNEL_INSERT, _kernel_row(kern[0], kern[1], kern[2], gpid, name, 32, (1,), (16, 16), 0))
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                    [(a, b, t, gtid) for a, b, t in nvtx])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_80GB_PCIE._replace(name="Quadro GV100", sms=80),
                program="python", thread="python", sync_enum=False)
    return {"compile_ms": compiled if link else 0.0, "silence_ms": compiled, "kernels": 1}


def write_nvrtc_first_calls(path: str, compile_ms: float = 169.0, cached_ms: float = 2.0, load: bool = True,
                            repeats: int = 0) -> dict:
    """Write the export of a CuPy program's first element-wise calls on an A100, shaped after nikitinvv/recon-stream's
    ``report8.sqlite`` (Nsight 2023.1, ``-t cuda``): the context's creation in a ``cudaMalloc``, then four kernels of
    2-4 us, each the first run of its name and each launched (``cuLaunchKernel``) right after the module CuPy made for
    it is loaded from memory (``cuModuleLoadData``).  Before two of the loads the host is silent ``compile_ms`` (NVRTC
    compiling the kernel, which ``-t cuda`` does not record); before the other two ``cached_ms`` (read from CuPy's
    kernel cache).  With ``load`` False no load precedes the launches (the same silences are the host's own work:
    the control).  ``repeats``: that many more launches of the last kernel, each after a load and a silence of
    ``compile_ms`` (a program that rebuilds its kernel every call: steady work, not a first call's).
    Return the truth: the first calls' compile time (the silences from the thread's last GPU work to the end of each
    load that precedes a kernel's first launch: the host's code between the load and the launch is its own), the
    rebuilds' (``rebuild_ms``: the silences before the repeat launches, the
    program's steady work) and the pass (first kernel's start to last kernel's end)."""
    us, ms = 1000, 1_000_000
    pid = 3876839
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 612 * ms, gap=10 * us)
    api("cuModuleGetLoadingMode", 1 * us, then=42 * ms)
    api("cudaMalloc_v3020", 377 * ms, then=2 * ms)  # the context
    kern: list[tuple[int, int, int, str]] = []
    compiled = rebuilt = 0
    plan = [("cupy_arange__int_int_int64", cached_ms), ("cupy_greater__int64_int_bool", compile_ms),
            ("cupy_scan_naive", cached_ms), ("cupy_put_wrap", compile_ms)]
    plan += [("cupy_put_wrap", compile_ms)] * repeats
    seen: set[str] = set()
    for name, silence in plan:
        last = api.rows[-1][1]  # the end of the thread's last GPU work (the allocation before)
        api.t += int(silence * ms)
        if load:
            api("cuModuleLoadData", 300 * us, then=20 * us)
            loaded = api.rows[-1][1]  # the compile's last act: the load's end
        launch = api("cuLaunchKernel", 25 * us, then=20 * us)
        if load and name not in seen:
            compiled += loaded - last
        elif load:
            rebuilt += loaded - last
        seen.add(name)
        start = api.t - 30 * us
        kern.append((start, start + 3 * us, launch, name))
        api("cudaMalloc_v3020", 10 * us)
    stop = api.t + 30 * ms
    api.insert(con, gtid)
    rows = []
    for i, (a, b, c, n) in enumerate(kern):
        sid = strings(n)
        rows.append(_kernel_row(a, b, c, gpid, sid, 32, (16, 0), (128,), i))
    con.executemany(_KERNEL_INSERT, rows)
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="python", thread="python",
                sync_enum=False)
    return {"compile_ms": compiled / ms, "rebuild_ms": rebuilt / ms, "pass_ms": (kern[-1][1] - kern[0][0]) / ms,
            "first_runs": len(seen), "loads": len(plan) if load else 0}


def write_prefetched_vector_add(path: str, prefetch_ms: float = 165.0, chunks: int = 256, **kw: float) -> dict:
    """Write :func:`write_managed_kernel`'s vector add as ayanamesu's Perlmutter ``report4.sqlite`` holds it: the
    program prefetches both managed buffers to the GPU (two ``cudaMemPrefetchAsync`` after its fill loop,
    ``chunks`` HtoD migrations of ``migrationCause`` "User prefetch" filling ``prefetch_ms`` with the GPU idle) before
    its one kernel, which then faults no page in; the host's result check still pulls the pages back on demand.
    Everything from the launch on runs ``prefetch_ms`` later (the kernel waits for the prefetch on its stream).
    Return the truth: :func:`write_managed_kernel`'s, with the prefetch's time and the on-demand read-back's."""
    us, ms = 1000, 1_000_000
    truth = write_managed_kernel(path, faults_in_kernel=0, **kw)
    shift = int(prefetch_ms * ms)
    con = sqlitefile.connect(path)
    launch, = con.execute("SELECT r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                          "WHERE s.value LIKE 'cudaLaunchKernel%'").fetchone()
    sync = "(SELECT id FROM StringIds WHERE value LIKE 'cudaDeviceSynchronize%')"
    con.execute(f"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = end + ? WHERE nameId IN {sync}", (shift,))
    con.execute(f"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = start + ?, end = end + ? WHERE start > ? "
                f"AND nameId NOT IN {sync}", (shift, shift, launch))
    for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"):
        con.execute(f"UPDATE {table} SET start = start + ?, end = end + ?", (shift, shift))
    con.execute("UPDATE ANALYSIS_DETAILS SET duration = duration + ?, stopTime = stopTime + ?", (shift, shift))
    corr, = con.execute("SELECT MAX(correlationId) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    (gtid, gpid), = con.execute("SELECT r.globalTid, k.globalPid FROM CUPTI_ACTIVITY_KIND_RUNTIME r, "
                                "CUPTI_ACTIVITY_KIND_KERNEL k LIMIT 1").fetchall()
    name = con.execute("SELECT id FROM StringIds WHERE value = 'cudaMemPrefetchAsync_v8000'").fetchone()
    if name is None:
        nid, = con.execute("SELECT MAX(id) + 1 FROM StringIds").fetchone()
        con.execute("INSERT INTO StringIds VALUES (?, 'cudaMemPrefetchAsync_v8000')", (nid,))
    else:
        nid = name[0]
    calls = [(launch - 60 * us, launch - 40 * us, gtid, corr + 1, nid), (launch - 30 * us, launch - 10 * us, gtid, corr + 2, nid)]
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,1,?,?,?,0,NULL)", calls)
    step = shift // chunks
    rows = [(launch + k * step, launch + (k + 1) * step - 2 * us, corr + 1 + (2 * k) // chunks, gpid)
            for k in range(chunks)]
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    f"globalPid, bytes, copyKind, srcKind, dstKind, migrationCause) VALUES (?,?,0,1,0,?,?,2097152,"
                    f"{UVM_HTOD},7,7,1)", rows)
    con.commit()
    con.close()
    return {**truth, "prefetch_ms": chunks * (step - 2 * us) / ms, "on_demand_ms": truth["dtoh_migration_ms"]}


# --------------------------------------------------------------------------- a program's own Tensor Core GEMM


#: The WMMA kernel of Promisewjx/cuda-gemm (``kernels/gemm_tensorcore.cu``: ``nvcuda::wmma`` fragments, fp16 in,
#: fp32 out), as the export names it.
USER_WMMA_GEMM = "gemm_tensorcore(const __half *, const __half *, float *, int)"


def write_user_mma_gemms(path: str, fp32_kernels: int = 4, fp32_ms: float = 20.0, mma_name: str = USER_WMMA_GEMM,
                         mma_ms: float = 0.46) -> dict:
    """Write :func:`write_refused_launch`'s GEMM benchmark with every launch accepted: ``fp32_kernels`` fp32 CUDA-core
    GEMMs of ``fp32_ms`` each, then the program's own 16-bit GEMM ``mma_name`` of ``mma_ms`` -- by default the WMMA
    kernel of Promisewjx/cuda-gemm, whose 4096^3 product in 0.46 ms (299 TFLOP/s) is above any CUDA-core fp16 rate of
    an A100, so it ran on Tensor Cores, which its name alone cannot prove.  Return the truth: the kernels' ms."""
    write_refused_launch(path, kernels=fp32_kernels + 1, refused=(), kernel_ms=fp32_ms)
    con = sqlitefile.connect(path)
    nid, = con.execute("SELECT MAX(id) + 1 FROM StringIds").fetchone()
    con.execute("INSERT INTO StringIds VALUES (?, ?)", (nid, mma_name))
    con.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = ?, shortName = ?, end = start + ? "
                "WHERE start = (SELECT MAX(start) FROM CUPTI_ACTIVITY_KIND_KERNEL)", (nid, nid, int(mma_ms * 1e6)))
    con.commit()
    con.close()
    return {"fp32_ms": fp32_kernels * fp32_ms, "fp32_kernels": fp32_kernels, "mma_ms": mma_ms, "mma_name": mma_name}


# --------------------------------------------------------------------------- an eager training iteration in bursts

#: The kernels of :func:`write_eager_training_bursts`: Eigen's element-wise and cuBLAS's GEMMs, as TF 1.15 runs them,
#: and TF's gradient kernel, named for its ``ReluGrad`` op (``devices.gradient_kernel_one``).
EAGER_FORWARD = ("void Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::TensorAssignOp<float>>, long>"
                 "(Eigen::TensorEvaluator<...>, long)", "ampere_sgemm_64x64_nn")
EAGER_GRADIENT = "void tensorflow::functor::ReluGradHalfKernelVector(const __half *, const __half *, __half *, int)"


def write_eager_training_bursts(path: str, bursts: int = 30, grad_bursts: tuple[int, ...] = (20, 26),
                                kernels: int = 12, kernel_us: float = 8.0, pause_ms: float = 2.7,
                                held_ms: float = 0.0, gpu_clock_drift_us: tuple[float, float] = (0.0, 0.0)) -> dict:
    """Write the export of an eager training program shaped after VerticalResearchGroup/casio's ``nerf`` (TF 1.15 on
    an A100, in a ``cudaProfilerApi`` window): ``bursts`` GPU bursts of ``kernels`` launches each (the same Eigen and
    cuBLAS kernels in every burst), the host's untraced code pausing ``pause_ms`` between bursts, and a gradient kernel
    in the bursts of ``grad_bursts`` only (the backward of each network).  ``grad_bursts`` = every burst makes each
    burst an iteration (the control).  ``held_ms``: as in the real export, the GPU holds each burst that long after
    its launches returned (the kernels start ``held_ms`` late, the GPU idle and the launching thread too), and the host
    waits for the burst to finish (TF polls its events) before its ``pause_ms`` and the next burst.  Return the truth:
    the bursts, at most how many iterations they hold -- every iteration runs a backward, so no more than the bursts
    holding one -- and the GPU's idle with its next kernel already launched (``held_ms_total``).
    ``gpu_clock_drift_us``: the GPU's clock against the host's at the first launch and at the last (us, linear
    between): each kernel is recorded that much later than it ran on the host's clock (earlier where negative), as a
    capture whose two clocks drift records it -- what the GPU held stays ``held_ms``."""
    us, ms = 1000, 1_000_000
    pid = 8181
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=20 * us)
    kern = []
    for b in range(bursts):
        names = [EAGER_FORWARD[i % 2] for i in range(kernels)]
        if b in grad_bursts:
            names[-1] = EAGER_GRADIENT
        for name in names:
            c = api("cudaLaunchKernel_v7000", 6 * us)
            a = api.t - 10 * us + int(held_ms * ms)
            kern.append((a, a + int(kernel_us * us), c, strings(name)))
        if held_ms:  # the host waits for the burst, then pauses
            api.t = max(api.t, kern[-1][1])
        api.t += int(pause_ms * ms)
    kern = _drifted(kern, gpu_clock_drift_us)
    stop = max(api.t, kern[-1][1]) + ms
    api.insert(con, gtid)
    con.executemany(_KERNEL_INSERT, [_kernel_row(a, b, c, gpid, n, 32, (256,), (256,), j)
                                     for j, (a, b, c, n) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="python", thread="python",
                sync_enum=False)
    return {"bursts": bursts, "max_iterations": len(set(grad_bursts) & set(range(bursts))),
            "held_ms_total": bursts * held_ms}


def _drifted(rows: list[tuple], drift_us: tuple[float, float]) -> list[tuple]:
    """Device rows ``(start, end, ...)`` (ns, by start) as a GPU clock drifting from the host's records them: shifted
    by ``drift_us[0]`` at the first row's start and ``drift_us[1]`` at the last's, linear between; lengths kept."""
    if not rows or not any(drift_us):
        return rows
    t0, t1 = rows[0][0], rows[-1][0]
    a, b = drift_us[0] * 1000.0, (drift_us[1] - drift_us[0]) * 1000.0 / max(t1 - t0, 1)
    return [(r[0] + int(a + b * (r[0] - t0)), r[1] + int(a + b * (r[0] - t0))) + tuple(r[2:]) for r in rows]


# --------------------------------------------------------------------------- h37-survey14: iterations in alternating order


def write_alternating_sweeps(path: str, iterations: int = 10, kernel_us: float = 100.0, sweep: int = 6,
                             control_ms: float = 0.8, alternate: bool = True, control_every: int = 1,
                             mid_pause_ms: float = 0.0) -> dict:
    """Write the export of a native time-stepping loop shaped after CloverLeaf's CUDA port on an A100 (hpcgroup/pipit's
    ``perlmutter-cloverleaf-cuda.sqlite``, read in the h37-survey14 survey): every kernel is followed by
    ``cudaDeviceSynchronize``; each iteration runs two kernels, an x-sweep and a y-sweep of ``sweep`` kernels each --
    in the order x then y on even iterations and y then x on odd ones (a directionally split solver alternates them,
    so the same launch sequence repeats only every two iterations) -- and a reduction, after which the host computes
    the next time step for ``control_ms`` with the GPU idle; the next iteration starts by copying that time step to
    the device (a blocking 8-byte ``cudaMemcpy``).  ``alternate``: False keeps the x-then-y order on every iteration
    (the launch sequence repeats each one); ``control_every``: the host pauses after every n-th iteration only;
    ``mid_pause_ms``: the host also works that long between the two sweeps, after a sync (the real file's longest pause,
    1.95 ms, lies inside its time step: halo staging through the host), so a boundary read from the pauses falls
    inside the iterations.
    Return the truth: the iterations and the time from one iteration's first launch to the next's."""
    us, ms = 1000, 1_000_000
    pid = 1701
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, SYNC_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 300 * ms, gap=2 * us)
    kern, memcpy = [], []
    free = 0

    def launch(name: str) -> None:
        nonlocal free
        c = api("cudaLaunchKernel_v7000", 6 * us)
        ks = max(api.rows[-1][0] + 8 * us, free)
        free = ks + int(kernel_us * us)
        kern.append((ks, free, c, strings(name)))
        api("cudaDeviceSynchronize_v3020", 0)  # returns 3 us after the kernel
        api.end_last(free + 3 * us)
        api.t = free + 5 * us

    api("cuModuleGetLoadingMode", 1 * us)
    api("cudaMalloc_v3020", 1 * us)
    firsts = []
    for i in range(iterations):
        firsts.append(api.t)
        x = [f"advec_cell_x_{j}" for j in range(sweep)]
        y = [f"advec_cell_y_{j}" for j in range(sweep)]
        a = api.t
        c = api("cudaMemcpy_v3020", 20 * us)  # the time step the host computed, to the device
        memcpy.append((a + 5 * us, a + 7 * us, c))
        for k, name in enumerate(["ideal_gas", "viscosity"] + (y + x if alternate and i % 2 else x + y) + ["calc_dt_reduce"]):
            if mid_pause_ms and k == 2 + sweep:
                api.t += int(mid_pause_ms * ms)  # the host's own work between the sweeps
            launch(name)
        if (i + 1) % control_every == 0:
            api.t += int(control_ms * ms)  # the host computes the next time step from the reduction
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,8,1,0,2)",
                    [(a, b, c, gpid) for a, b, c in memcpy])
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, n, 32, (240,), (256,), i)
                     for i, (a, b, c, n) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_80GB, program="./cuda-cloverleaf",
                thread="cuda-cloverleaf")
    return {"iterations": iterations, "iteration_ms": float(np.median(np.diff(firsts))) / ms,
            "kernels_per_iteration": 3 + 2 * sweep}


def _mpi_rank_rows(con: sqlite3.Connection, ids: tuple[int, int], domain: tuple[str, int], nvtx: list,
                   mpi: dict[str, list], memcpy: list, copy_bytes: int) -> None:
    """The rows an MPI rank's writer makes of its NVTX ranges ``(start, end, text, domainId)``, its MPI calls (table ->
    ``(start, end, globalTid, textId)``) and its copies ``(start, end, corr, kind, src, dst)`` of ``copy_bytes`` each;
    ``domain``: the MPI trace's NVTX domain and when ``nvtxDomainCreate`` named it (its row: id 1; none where "").
    ``ids``: the process's global pid and its thread's global tid."""
    gpid, gtid = ids
    if domain[0]:  # nvtxDomainCreate's row: the domain's name
        con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                    "VALUES (?,NULL,75,?,?,1)", (domain[1], domain[0], gtid))
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,?)",
                    [(a, b, text, gtid, d) for a, b, text, d in nvtx])
    for table, rows in mpi.items():
        if rows:
            con.executemany(f"INSERT INTO {table} (start, end, globalTid, textId) VALUES (?,?,?,?)", rows)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,?,?,?)",
                    [(a, b, c, gpid, copy_bytes, k, s, d) for a, b, c, k, s, d in memcpy])


def write_mpi_saxpy(path: str, iterations: int = 5, copy_ms: float = 18.5, kernel_ms: float = 17.7,
                    mpi_ms: float = 22.0, host_ms: float = 68.0, mpi_domain: str = "MPI",
                    mpi_tables: bool = False) -> dict:
    """Write rank 0's export of an MPI + CUDA saxpy shaped after hpcgroup/pipit's
    ``saxpy-mpi-cuda_nsys_perlmutter0.sqlite`` (an A100 on Perlmutter, read in the h37-survey14 survey): after
    ``MPI_Init``, each iteration allocates its buffers, copies two vectors in (blocking pageable ``cudaMemcpy``,
    ``copy_ms`` each), launches ``saxpy`` inside the program's one NVTX range ``saxpy`` -- around the launch call
    only -- copies the result back, sends it to its peer (``MPI_Send``), computes on the host for ``host_ms`` with no
    call recorded, receives the peer's (``MPI_Recv``, ``mpi_ms`` each) and computes again (MPI's ranges in its own
    NVTX domain, ``MPI``, as Nsight's MPI trace writes them).  The ``saxpy`` ranges
    mark one point of each iteration, so the steps they tile are whole iterations -- except the last, which nothing
    follows.  ``mpi_domain=""``: the same ranges in the default domain, as a program marking its own code writes them
    (a control: the names alone say nothing of who opened them).  ``mpi_tables``: the same calls where Nsight Systems
    2023 and later writes them, in ``MPI_P2P_EVENTS`` (``MPI_Send``, ``MPI_Recv``) and ``MPI_OTHER_EVENTS``
    (``MPI_Init``, ``MPI_Finalize``), the ``MPI`` domain still registered in ``NVTX_EVENTS`` and empty there (a CME 213
    export of Nsight 2023.4.1, read in h37-survey54).  Return the truth: the iterations, the time from one
    ``saxpy`` range to the next, and the MPI ranges' time in each iteration's GPU idle (``mpi_ms_per_gap``)."""
    us, ms = 1000, 1_000_000
    pid = 1230493
    ddls = [RUNTIME_DDL, NVTX_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL] + ([MPI_P2P_DDL, MPI_OTHER_DDL] if mpi_tables else [])
    con, strings, gtid, gpid = _open_one(path, ddls, pid)
    api = _Calls(strings, SESSION_START_NS + 60 * ms, gap=5 * us)
    nvtx, kern, memcpy = [], [], []
    mpi: dict[str, list] = {"MPI_P2P_EVENTS": [], "MPI_OTHER_EVENTS": []}
    marks = []

    def ranged(name: str, dur_ms: float) -> None:  # the MPI library's own ranges, in its NVTX domain or its tables
        span = (api.t, api.t + int(dur_ms * ms))
        if mpi_tables:
            mpi["MPI_P2P_EVENTS" if name in ("MPI_Send", "MPI_Recv") else "MPI_OTHER_EVENTS"].append(
                (*span, gtid, strings(name)))
        else:
            nvtx.append((*span, name, 1 if mpi_domain else 0))
        api.t += int(dur_ms * ms) + 10 * us

    def copy(kind: int) -> None:
        a = api.t
        c = api("cudaMemcpy_v3020", int(copy_ms * ms) + 40 * us)
        src, dst = (0, 2) if kind == 1 else (2, 0)  # pageable host memory to the device, and back
        memcpy.append((a + 20 * us, a + 20 * us + int(copy_ms * ms), c, kind, src, dst))

    ranged("MPI_Init", 600.0)
    api("cudaHostRegister_v4000", 300 * ms)  # the context, inside the MPI library's registration
    for _ in range(iterations):
        for _ in range(3):
            api("cudaMalloc_v3020", 300 * us)
        copy(1)
        copy(1)
        a = api.t
        c = api("cudaLaunchKernel_v7000", 30 * us)
        marks.append(a)
        nvtx.append((a, api.t, "saxpy", 0))
        kern.append((api.t + 5 * us, api.t + 5 * us + int(kernel_ms * ms), c))
        api.t = kern[-1][1] - 20 * us  # the read-back waits for the kernel
        copy(2)
        ranged("MPI_Send", mpi_ms / 2)
        ranged("MPI_Send", mpi_ms / 2)
        api.t += int(host_ms * ms)
        ranged("MPI_Recv", mpi_ms)
        api.t += int(host_ms * ms)
    ranged("MPI_Finalize", 6.0)
    stop = api.t + ms
    api.insert(con, gtid)
    _mpi_rank_rows(con, (gpid, gtid), (mpi_domain, SESSION_START_NS + 60 * ms), nvtx, mpi, memcpy, 262144000)
    name = strings("saxpy")
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, name, 16, (2,), (512,), j)
                     for j, (a, b, c) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="./saxpy-mpi-cuda",
                thread="saxpy-mpi-cuda")
    # two sends of mpi_ms / 2 and one receive of mpi_ms, all between the read-back and the next iteration's copies
    return {"iterations": iterations, "iteration_ms": float(np.median(np.diff(marks))) / ms,
            "mpi_ms_per_gap": 2 * mpi_ms}


# --------------------------------------------------------------------------- h37-mpiwait: MPI waits inside the step


#: The table Nsight Systems 2023 and later writes an ``MPI_Wait`` (and the start of a non-blocking call) into, and the
#: collectives' table: the columns the reader reads (``MPI_OTHER_DDL``'s); the real tables add the request's handle
#: and the communicator.
MPI_START_WAIT_DDL = MPI_OTHER_DDL.replace("MPI_OTHER_EVENTS", "MPI_START_WAIT_EVENTS")
MPI_COLLECTIVES_DDL = MPI_OTHER_DDL.replace("MPI_OTHER_EVENTS", "MPI_COLLECTIVES_EVENTS")


def write_mpi_steps(path: str, steps: int = 12, forward_ms: float = 0.6, backward_ms: float = 1.2,
                    wait_ms: float = 2.0, update_ms: float = 0.3, kernels: int = 6, mpi_domain: str = "MPI",
                    other_thread: bool = False, launcher_wait: str = "", own_ms: float = 0.0,
                    listener: bool = False) -> dict:
    """Write one rank's export of a data-parallel training loop shaped after Stanford CME 213's ``train_mpi``
    (``h256_comm_pinned_*_rank0.sqlite``, read in h37-survey54): each step is an NVTX range ``train_step`` around
    ``forward`` (``kernels`` kernels filling ``forward_ms``) and ``backward`` (``backward_ms``), the gradients read back
    to pinned memory (``cudaMemcpyAsync`` + ``cudaStreamSynchronize``), an ``MPI_Iallreduce`` started and waited for in
    ``MPI_Wait`` (``wait_ms``: the GPU idle, nothing queued), the averaged gradients copied in and ``adam_update``
    (``update_ms``).  The MPI calls lie in Nsight 2023's ``MPI_COLLECTIVES_EVENTS`` / ``MPI_START_WAIT_EVENTS``;
    ``mpi_domain=""`` writes them instead as NVTX ranges of the default domain, as a program naming its own code would
    (the control: the same host time, no library's call).  ``other_thread``: the MPI calls made by a thread of their
    own, which launches nothing (a communication thread; the launching thread's time then unrecorded: the control
    for calls off the launching thread).  ``launcher_wait`` (with ``other_thread``; :data:`OSRT_WAITS`): an OS
    runtime trace (:func:`add_os_runtime`) in which the launching thread, having handed the gradients to the
    communication thread, blocks in that call until the thread's ``MPI_Wait`` returns (CME 213's OpenMP communication
    thread: the main thread in ``pthread_cond_wait`` 227 ms while its comm thread ran ``MPI_Allreduce``), and the
    communication thread parks in ``pthread_cond_wait`` between its jobs; ``own_ms``: the launching thread instead
    runs its own code (no OS call) that long after handing off, then blocks for the rest (the control: the GPU idle
    then waits on the host's own work); ``listener`` (with ``other_thread``): the communication thread's per-step
    calls unrecorded, the thread instead parked in one ``MPI_Recv`` from before the first step to after the last (a
    listener: the control for a call no step handed off).  Return the truth: the steps, the step's time, the GPU
    idle the host spends in ``MPI_Wait`` per step (``wait_ms_per_step``) and in the two MPI calls (``mpi_ms_per_step``:
    the GPU is idle from the read-back's end to the next copy, the calls inside that stretch); with ``launcher_wait``,
    the part of the calls the launching thread spends blocked on them (``blocked_ms_per_step``)."""
    us, ms = 1000, 1_000_000
    pid = 2417755
    ddls = [RUNTIME_DDL, NVTX_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL, MPI_START_WAIT_DDL, MPI_COLLECTIVES_DDL,
            MPI_OTHER_DDL] + ([MPI_P2P_DDL] if listener else [])
    con, strings, gtid, gpid = _open_one(path, ddls, pid)
    api = _Calls(strings, SESSION_START_NS + 80 * ms, gap=4 * us)
    nvtx: list[tuple[int, int, str, int]] = []
    kern: list[tuple[int, int, int, str]] = []
    memcpy: list[tuple[int, int, int, int, int, int]] = []
    mpi: dict[str, list] = {"MPI_START_WAIT_EVENTS": [], "MPI_COLLECTIVES_EVENTS": [], "MPI_OTHER_EVENTS": []}
    gpu_free = [0]  # the GPU's clock: the end of its last work (ns)

    caller = _gid(pid, pid + 1) if other_thread else gtid

    def call_mpi(table: str, name: str, dur_ns: int) -> tuple[int, int]:
        span = (api.t, api.t + dur_ns)
        if listener and other_thread and table != "MPI_OTHER_EVENTS":
            pass  # the listener's one call stands for them
        elif mpi_domain:
            mpi[table].append((*span, caller, strings(name)))
        else:
            nvtx.append((*span, name, 0))
        api.t = span[1] + 5 * us
        return span

    def launch(name: str, dur_ns: int) -> None:
        c = api("cudaLaunchKernel_v7000", 8 * us)
        a = max(api.t, gpu_free[0]) + 3 * us
        kern.append((a, a + dur_ns, c, name))
        gpu_free[0] = a + dur_ns

    def copy(kind: int) -> None:  # pinned memory, 50 us; the host waits for it
        c = api("cudaMemcpyAsync_v3020", 6 * us)
        a = max(api.t, gpu_free[0]) + 3 * us
        memcpy.append((a, a + 50 * us, c, kind, 3 if kind == 2 else 0, 0 if kind == 2 else 3))
        gpu_free[0] = a + 50 * us
        api("cudaStreamSynchronize_v3020", gpu_free[0] + 2 * us - api.t)

    def ranged(name: str, body) -> None:  # noqa: ANN001 - the range's contents
        a = api.t
        body()
        nvtx.append((a, api.t, name, 0))
        api.t += 2 * us

    def phase(name: str, total_ms: float) -> None:
        ranged(name, lambda: [launch(f"{name}_kernel_{j}", int(total_ms * ms / kernels)) for j in range(kernels)])

    call_mpi("MPI_OTHER_EVENTS", "MPI_Init_thread", 150 * ms)
    api("cudaMalloc_v3020", 120 * ms)  # the context
    prev_end = [api.t]  # the communication thread's last job's end: it parks until the next
    starts, waits, calls, blocked = [], [], [], []
    osrt: list[tuple[int, int, str, int]] = []
    for _ in range(steps):
        def one_step() -> None:
            phase("forward", forward_ms)
            phase("backward", backward_ms)
            copy(2)
            a0, b0 = call_mpi("MPI_COLLECTIVES_EVENTS", "MPI_Iallreduce", 20 * us)
            a, b = call_mpi("MPI_START_WAIT_EVENTS", "MPI_Wait", int(wait_ms * ms))
            waits.append((a, b))
            calls.append(b - a + b0 - a0)
            if launcher_wait and other_thread:  # handed off at a0 - 3 us, woken 4 us after the Wait returns
                w0 = a0 - 3 * us + int(own_ms * ms)
                osrt.append((w0, b + 4 * us, launcher_wait, gtid))
                blocked.append(max(0, b0 - max(a0, w0)) + max(0, b - max(a, w0)))
                osrt.append((prev_end[0], a0 - 2 * us, "pthread_cond_wait", caller))  # the comm thread parks
                prev_end[0] = b + 2 * us
            copy(1)
            phase("adam_update", update_ms)
            api("cudaDeviceSynchronize_v3020", gpu_free[0] + 2 * us - api.t)
        starts.append(api.t)
        ranged("train_step", one_step)
    if listener and other_thread:
        mpi["MPI_P2P_EVENTS"] = [(starts[0] - 50 * us, api.t, caller, strings("MPI_Recv"))]
    call_mpi("MPI_OTHER_EVENTS", "MPI_Finalize", 3 * ms)
    stop = api.t + ms
    api.insert(con, gtid)
    # Nsight 2023.4 registers the MPI trace's domain and writes none of its calls there
    _mpi_rank_rows(con, (gpid, gtid), (mpi_domain, SESSION_START_NS + 80 * ms), nvtx, mpi, memcpy, 4194304)
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, strings(n), 64, (288,), (256,), j)
                     for j, (a, b, c, n) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="./train_mpi", thread="train_mpi")
    if osrt:
        add_os_runtime(path, osrt)
    return {"steps": steps, "step_ms": float(np.median(np.diff(starts))) / ms,
            "wait_ms_per_step": float(np.median([b - a for a, b in waits])) / ms,
            "mpi_ms_per_step": float(np.median(calls)) / ms,
            **({"blocked_ms_per_step": float(np.median(blocked)) / ms} if blocked else {})}


# --------------------------------------------------------------------------- h37-left22: one range around timed passes


def write_framed_passes(path: str, warmup: int = 3, measured: int = 5, kernels: int = 24, pass_ms: float = 20.0,
                        frame: str = "resnet50_inference", ranged_passes: bool = False, vary: bool = False,
                        context_ms: float = 150.0, phases: bool = False, gpu: Gpu = A100_80GB_PCIE,
                        warmup_ranges: tuple[str, ...] = (), ranks: int = 1, rank_lag_us: float = 0.0) -> dict:
    """Write the export of an inference benchmark shaped after amacharla15/gpu-profiling-cuda-kernels'
    ``resnet50_nsys.sqlite`` (ResNet-50 on an A100 80GB PCIe, ``eval()`` and ``no_grad``): ``warmup`` passes launched
    back to back and one ``cudaDeviceSynchronize`` after them all (the first pass twice as slow: first-call costs), then
    one NVTX range ``frame`` around ``measured`` passes, each ended by ``cudaDeviceSynchronize``.  A pass is ``kernels``
    distinct kernels filling ``pass_ms`` (the GPU-bound model; the host queues them in 5 us launches); before them one
    kernel draws the input.
    ``ranged_passes``: each measured pass in a range ``pass N`` of its own as well (the control).  ``vary``: each
    pass's first kernel named after the pass (``conv2d_layer0_kernel_pN``: a shape-tuned kernel that differs per call),
    so that the launch sequence never repeats and only the GPU's bursts show the passes.  ``context_ms``: the
    first ``cudaMalloc`` (the context's creation: a one-time cost before every pass).  ``phases``: every pass, warm-ups
    too, an NVTX ``forward`` range around its first half of launches and ``backward`` around the rest (a training
    loop's ranges: the job is training by its range names).  ``gpu``: the device it ran on.  ``warmup_ranges``:
    NVTX ranges around the warm-up passes, outermost first (``("setup", "warmup")``: a phase of the program's own
    holding a range it names its warm-up).  ``ranks``: that many processes in the one export (one ``nsys`` over
    ``torchrun``), each its own GPU (device r) running the same benchmark, rank r ``r * rank_lag_us`` later, its
    own ranges on its own thread.  Return the truth:
    the measured passes' count and length, their period (the pass, then the sync's 10 us, the timing loop's 200 us and
    the next launch's 20 us lead), the warm-up passes' count."""
    us, ms = 1000, 1_000_000
    pid = 2222
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, KERNEL_DDL, GPU_DDL], pid)
    names = [strings(f"conv2d_layer{i}_kernel") for i in range(kernels)]
    stop = 0
    for rank in range(ranks):
        r_pid = pid + rank
        r_gtid, r_gpid = _gid(r_pid, r_pid), _gid(r_pid)
        api = _Calls(strings, SESSION_START_NS + 5 * ms + int(rank * rank_lag_us * us), gap=1 * us)
        api.corr = rank * 1_000_000
        stop = max(stop, _framed_rank(con, strings, api, names, rank, r_gtid, r_gpid, warmup, measured, kernels,
                                      pass_ms, frame, ranged_passes, vary, context_ms, phases, warmup_ranges))
        if rank:
            con.execute("INSERT INTO TARGET_INFO_GPU VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (0, rank, gpu.name, gpu.bus, 1, gpu.l2_bytes, gpu.memory, gpu.bandwidth, gpu.clock_hz,
                         gpu.sms, 0, f"GPU-0000000{rank}", 0, gpu.chip, 0, gpu.nvml_id, *gpu.cc))
            con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (strings("python"), r_gtid))
            con.execute("INSERT INTO PROCESSES VALUES (?, ?, ?)", (r_gpid, r_pid, "python"))
    _finish_one(con, strings, stop, (gpid, pid, gtid), gpu, program="python", thread="python",
                copy_enums=False, sync_enum=False)
    return {"measured": measured, "pass_ms": pass_ms, "period_ms": pass_ms + 0.23, "warmup": warmup,
            "context_ms": context_ms}


def _framed_rank(con: sqlite3.Connection, strings: _Strings, api: _Calls, names: list[int], rank: int, gtid: int,
                 gpid: int, warmup: int, measured: int, kernels: int, pass_ms: float, frame: str,
                 ranged_passes: bool, vary: bool, context_ms: float, phases: bool,
                 warmup_ranges: tuple[str, ...]) -> int:
    """One process of :func:`write_framed_passes` (its parameters), on GPU ``rank``, launched by thread ``gtid`` of
    process ``gpid``: its calls, ranges and kernels into ``con``.  Returns when its capture may stop (ns)."""
    us, ms = 1000, 1_000_000
    nvtx, kern = [], []
    free = passes = 0

    def one_pass(slow: float = 1.0) -> None:  # the host queues the pass; the GPU runs it back to back
        nonlocal free, passes
        k_ns = int(slow * pass_ms * ms / kernels)
        free = max(free, api.t + 20 * us)
        mark = api.t
        for i in range(kernels):
            if phases and i == kernels // 2:
                nvtx.append((mark, api.t, "forward"))
                mark = api.t
            name = strings(f"conv2d_layer0_kernel_p{passes}") if vary and i == 0 else names[i]
            kern.append((free, free + k_ns - 1 * us, api("cudaLaunchKernel_v7000", 5 * us), name))
            free += k_ns
        if phases:
            nvtx.append((mark, api.t, "backward"))
        passes += 1

    def sync() -> None:
        api.row("cudaDeviceSynchronize_v3020", api.t, free + 3 * us)
        api.t = free + 10 * us

    api("cudaMalloc_v3020", int(context_ms * ms), then=1 * ms)  # the context
    free = api.t + 20 * us  # the input, drawn on the GPU (``torch.randn(..., device="cuda")``): no pass launches it
    kern.append((free, free + 300 * us, api("cudaLaunchKernel_v7000", 5 * us),
                 strings("distribution_elementwise_grid_stride_kernel")))
    free += 300 * us
    w0 = api.t
    for k in range(warmup):
        one_pass(2.0 if k == 0 else 1.0)
    sync()
    nvtx.extend((w0 - d * us, api.t + d * us, name) for d, name in enumerate(reversed(warmup_ranges), 1))
    api.t += 2 * ms
    a = api.t
    for k in range(measured):
        b = api.t
        one_pass()
        sync()
        if ranged_passes:
            nvtx.append((b, api.t, f"pass {k}"))
        api.t += 200 * us  # the timing loop's own host work
    nvtx.append((a, api.t, frame))
    api.insert(con, gtid)
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                    [(s, e, text, gtid) for s, e, text in nvtx])
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(s, e, c, gpid, n, 128, (4,), (256,), j, device=rank)
                     for j, (s, e, c, n) in enumerate(kern)])
    return api.t + ms


# --------------------------------------------------------------------------- h37-left41: a kernel waiting on a later copy


def write_kernel_after_late_copy(path: str, bursts: int = 30, kernels: int = 12, kernel_us: float = 8.0,
                                 pause_ms: float = 0.3, host_ms: float = 5.0, copy_us: float = 200.0,
                                 late: bool = True, grad_bursts: tuple[int, ...] = (20, 26)) -> dict:
    """Write the export of a native eager loop whose bursts each begin with a kernel that waits (on stream 7, through
    an event) for a host-to-device copy on stream 8: the host launches that kernel, computes ``host_ms`` with no call
    recorded, then issues the copy (``cudaMemcpyAsync`` from pinned memory), which the GPU runs at once; the kernel
    starts as the copy ends, and the burst's other ``kernels - 1`` launches follow; the host waits for the burst and
    pauses ``pause_ms``; a gradient kernel ends the bursts of ``grad_bursts`` only, as in
    :func:`write_eager_training_bursts`.  ``late=False`` (the control): the same GPU timeline, but the copy is launched with the
    kernel, before the host's ``host_ms`` -- the GPU then holds both idle that long (a dependency the capture lacks).
    Return the truth: per burst after the first, the GPU's idle the host's work explains (``host_ms_total``) and the
    idle the GPU held work it was given (``held_ms_total``)."""
    us, ms = 1000, 1_000_000
    pid = 8282
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=20 * us)
    kern, memcpy = [], []
    for b in range(bursts):
        names = [EAGER_FORWARD[i % 2] for i in range(kernels)]
        if b in grad_bursts:
            names[-1] = EAGER_GRADIENT
        if late:
            ck = api("cudaLaunchKernel_v7000", 6 * us)
            api.t += int(host_ms * ms)
            cc = api("cudaMemcpyAsync_v3020", 10 * us)
        else:
            cc = api("cudaMemcpyAsync_v3020", 10 * us)
            ck = api("cudaLaunchKernel_v7000", 6 * us)
            api.t += int(host_ms * ms)
        c0 = api.t - 12 * us  # where the late copy's call would have returned: the GPU timeline is the same
        memcpy.append((c0, c0 + int(copy_us * us), cc))
        free = memcpy[-1][1] + 2 * us
        kern.append((free, free + int(kernel_us * us), ck, strings(names[0])))
        free = kern[-1][1]
        for name in names[1:]:
            c = api("cudaLaunchKernel_v7000", 6 * us)
            a = max(free, api.t - 10 * us)
            kern.append((a, a + int(kernel_us * us), c, strings(name)))
            free = kern[-1][1]
        api.t = max(api.t, free) + int(pause_ms * ms)
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,8,?,?,4194304,1,1,0)",
                    [(a, b, c, gpid) for a, b, c in memcpy])
    con.executemany(_KERNEL_INSERT, [_kernel_row(a, b, c, gpid, n, 32, (256,), (256,), j)
                                     for j, (a, b, c, n) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="python", thread="python",
                sync_enum=False)
    per = (bursts - 1) * host_ms
    return {"bursts": bursts, "host_ms_total": per if late else 0.0, "held_ms_total": 0.0 if late else per}


# --------------------------------------------------------------------------- h37-left51: a pipeline schedule's phases

#: Megatron-core's ``nvtx_range_push(suffix=...)`` names: ``<module>.<function>.<suffix>``
#: (``megatron/core/pipeline_parallel/schedules.py``, ``forward_backward_pipelining_without_interleaving``).
MEGATRON_SCHEDULE = "megatron.core.pipeline_parallel.schedules.forward_backward_pipelining_without_interleaving"


def write_pipeline_schedule(path: str, iterations: int = 8, microbatches: int = 4, warm: int = 2,
                            iteration_range: str = "", leading_warmup: int = 0, micro_ms: float = 6.0,
                            kernels: int = 12) -> dict:
    """Write the export of a pipeline-parallel training rank under Megatron-core's ``--nvtx-ranges``: every iteration
    runs one ``forward_backward_pipelining_without_interleaving`` call whose 1F1B schedule pushes a ``.warmup`` range
    (``warm`` forward micro-batches), a ``.steady`` range (the other micro-batches' forward then backward) and a
    ``.cooldown`` range (the last ``warm`` backwards), then the optimizer's step.  ``iteration_range``: a user range of
    that name around each iteration (its steps' bounds); else none (steps from the launches).  ``leading_warmup``: that
    many iterations first inside a program's own ``Warm-up`` range (the control: a true warm-up, dropped).  A forward
    micro-batch is ``micro_ms`` of ``kernels`` kernels, a backward twice that.  Return the truth: the steady
    iterations' length and count and the kind."""
    us, ms = 1000, 1_000_000
    pid = 5151
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=1 * us)
    filled = _FilledRanges(api, lead=20 * us, trim=2 * us, launch=5 * us, tail=10 * us, pause=20 * us)
    ranged = filled.ranged
    names = {k: strings(n) for k, n in (("f", "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn"),
                                        ("b", "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nt_dgrad"),
                                        ("o", "multi_tensor_apply_kernel"))}

    def work(span_ms: float, kind: str, n: int = kernels) -> None:
        filled.work(span_ms, names[kind], n)

    def fwd() -> None:
        ranged("forward_step", lambda: work(micro_ms, "f"))

    def bwd() -> None:
        ranged("backward_step", lambda: work(2 * micro_ms, "b", 2 * kernels))

    def iteration() -> None:
        ranged(f"{MEGATRON_SCHEDULE}.warmup", lambda: [fwd() for _ in range(warm)])
        ranged(f"{MEGATRON_SCHEDULE}.steady", lambda: [(fwd(), bwd()) for _ in range(microbatches - warm)])
        ranged(f"{MEGATRON_SCHEDULE}.cooldown", lambda: [bwd() for _ in range(warm)])
        work(micro_ms / 2, "o", kernels // 2)  # the optimizer's step
        api.row("cudaStreamSynchronize_v3020", api.t, api.t + 30 * us)
        api.t += 40 * us

    def one() -> None:
        if iteration_range:
            ranged(iteration_range, iteration)
        else:
            iteration()
        api.t += 200 * us

    api("cudaMalloc_v3020", 150 * ms, then=1 * ms)  # the context
    if leading_warmup:
        ranged("Warm-up", lambda: [one() for _ in range(leading_warmup)])
    t0 = api.t
    for _ in range(iterations):
        one()
    step_ms = (api.t - t0) / iterations / ms
    stop = api.t + ms
    api.insert(con, gtid)
    filled.insert(con, gtid, gpid)
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_80GB, program="python", thread="pt_main_thread",
                copy_enums=False, sync_enum=False)
    return {"step_ms": step_ms, "iterations": iterations, "kind": "training"}


def _hook_marker(module: str, inputs: list[list[int]], params: dict | None = None, static: dict | None = None) -> str:
    """The range text NVIDIA's forward-hook marker (``PytHooks.module_fwd_pre_hook``: SGLang's
    ``--enable-layerwise-nvtx-marker``, vLLM's ``--enable-layerwise-nvtx-tracing``) pushes: the ``str()`` of a dict with
    ``Module`` (the module's dotted name under the prefix), ``TrainableParams`` (its own parameters' shapes),
    ``Inputs`` (the input tensors' shapes) and ``StaticParams`` (a ``Linear``'s features ...), keys only where set."""
    d: dict = {"Module": module}
    if params:
        d["TrainableParams"] = params
    d["Inputs"] = inputs
    if static:
        d["StaticParams"] = static
    return str(d)


def write_layerwise_engine(path: str, steps: int = 12, layers: int = 4, prefill_tokens: int = 512, batch: int = 8,
                           hidden: int = 4096, layer_ms: float = 1.2, kernels: int = 6, sched_ms: float = 2.0,
                           prefix: str = "model", thread: str = "VLLM::EngineCor",
                           executor_domain: str | None = None, layer_host_ms: float = 0.0) -> dict:
    """Write the export of an LLM serving engine under layer-wise NVTX (forward hooks on every module: a range per
    module call, nested as the modules are, the top one the model's forward): one prefill step of ``prefill_tokens``
    tokens then ``steps - 1`` decode steps of ``batch`` tokens, each the model's forward (``prefix``) around
    ``layers`` decoder layers (``<prefix>.layers.N``: ``self_attn``, ``mlp`` with their projections), then
    ``sched_ms`` of the engine's own host work (scheduling, sampling) with no range.  A layer is ``layer_ms`` of
    ``kernels`` kernels.  ``thread``: the launching thread's name -- the engine's process title as Linux keeps it
    for the thread, its first 15 bytes (vLLM's ``VLLM::EngineCore`` reads ``VLLM::EngineCor``; SGLang's
    ``sglang::scheduler_TP0`` reads ``sglang::schedul``).  ``executor_domain``: each step's forward inside an
    executor range ``_forward_step`` pushed in that NVTX domain (TensorRT-LLM's ``nvtx_range``, domain
    ``TensorRT-LLM``).  ``layer_host_ms``: the host's own time inside each decoder layer's range before its first
    launch (Python in the layer's forward: the GPU idles there, inside the framework's module range, not the
    program's).  Return the truth: the engine steps (one model forward each), the kind (inference)."""
    us, ms = 1000, 1_000_000
    pid = 7373
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=2 * us)
    filled = _FilledRanges(api, lead=15 * us, trim=1 * us, launch=4 * us, tail=5 * us, pause=5 * us)
    work, ranged = filled.work, filled.ranged
    gemm, attn = strings("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"), strings("flash_fwd_kernel")

    def lin(name: str, tokens: int, i: int, o: int, span: float) -> None:
        ranged(_hook_marker(name, [[tokens, i]], {"weight": [o, i]}, {"in_features": i, "out_features": o}),
               lambda: work(span, gemm, max(1, kernels // 3)))

    def layer(n: int, tokens: int, scale: float) -> None:
        base = f"{prefix}.layers.{n}"

        def attn_block() -> None:
            lin(f"{base}.self_attn.qkv_proj", tokens, hidden, 3 * hidden, 0.15 * layer_ms * scale)
            ranged(_hook_marker(f"{base}.self_attn.attn", [[tokens, hidden]] * 3),
                   lambda: work(0.15 * layer_ms * scale, attn, 1))
            lin(f"{base}.self_attn.o_proj", tokens, hidden, hidden, 0.1 * layer_ms * scale)

        def mlp_block() -> None:
            lin(f"{base}.mlp.gate_up_proj", tokens, hidden, 8 * hidden, 0.35 * layer_ms * scale)
            lin(f"{base}.mlp.down_proj", tokens, 4 * hidden, hidden, 0.25 * layer_ms * scale)

        def host() -> None:
            api.t += int(layer_host_ms * ms)

        ranged(_hook_marker(base, [[tokens, hidden], [tokens, hidden]]),
               lambda: (host(), ranged(_hook_marker(f"{base}.self_attn", [[tokens], [tokens, hidden]]), attn_block),
                        ranged(_hook_marker(f"{base}.mlp", [[tokens, hidden]]), mlp_block)))

    def forward(tokens: int, scale: float) -> None:
        ranged(_hook_marker(prefix, [[tokens], [tokens]]), lambda: [layer(n, tokens, scale) for n in range(layers)])

    api("cudaMalloc_v3020", 200 * ms, then=1 * ms)  # the context
    starts, executor = [], []
    for k in range(steps):
        starts.append(api.t)
        tokens, scale = (prefill_tokens, 4.0) if k == 0 else (batch, 1.0)
        if executor_domain:
            a = api.t
            forward(tokens, scale)
            executor.append((a, api.t, "_forward_step"))
        else:
            forward(tokens, scale)
        api.row("cudaStreamSynchronize_v3020", api.t, api.t + 20 * us)  # the sampled tokens read back
        api.t += int(sched_ms * ms)
    stop = api.t + ms
    api.insert(con, gtid)
    filled.insert(con, gtid, gpid)
    if executor_domain:  # nvtxDomainCreate's row, then the executor's ranges in that domain
        con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                    "VALUES (?,NULL,75,?,?,1)", (SESSION_START_NS + 2 * ms, executor_domain, gtid))
        con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                        "VALUES (?,?,59,?,?,1)", [(a, b, text, gtid) for a, b, text in executor])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_80GB, program="python", thread=thread,
                copy_enums=False, sync_enum=False)
    decode = [(starts[k + 1] - starts[k]) / ms for k in range(1, steps - 1)]
    return {"steps": steps, "layers": layers, "kind": "inference",
            "decode_step_ms": sum(decode) / len(decode) if decode else None}  # none between fewer than 3 steps


# --------------------------------------------------------------------------- GPU records lost mid-window (issue 37)


def write_lost_kernel_records(path: str, iterations: int = 40, kernels: int = 4, kernel_us: float = 3000.0,
                              lost_from: int | None = 20, in_flight: int = 0, ranges: bool = False,
                              lost_until: int | None = None, streams: int = 1,
                              options: dict[str, str] | None = None, diagnostics: tuple[str, ...] = (),
                              poll: str = "", side_us: float = 0.0, duration_s: int = 0) -> dict:
    """Write the export of a kernel harness shaped after Navi-AI-Lab/nvllm's ``B_harness_grid_4_active/run.sqlite``
    (a CuTe-DSL kernel on a GB10 under ``nsys --duration``): each of ``iterations`` repeats launches ``kernels``
    kernels of ``kernel_us`` back to back and waits for them (``cudaDeviceSynchronize``), 2 ms apart.  From iteration
    ``lost_from`` on the launches are recorded (each accepted) but their kernels are not: the CUDA trace's records of
    the window's end were never written -- up to iteration ``lost_until`` where given, after which the kernels are
    recorded again (CUPTI's activity buffers of a middle stretch dropped whole, then recording resumes).  ``streams``:
    the kernels of a repeat go round-robin over that many streams (a lost buffer holds every stream's records).
    ``in_flight`` launches more follow the last sync, queued behind the last recorded kernel's stream with no sync
    after them, their kernels not recorded: a window that ends with work in flight (the control, with ``lost_from``
    None).  With ``ranges`` each repeat is inside an NVTX range ``step`` (host marks whose steps reach into the lost
    stretch).  ``options``: ``META_DATA_CAPTURE`` rows (the capture's settings: ``STOP_TRIGGER``, ``RUN_DURATION_MS``,
    ``CUDA_FLUSH_ON_CUDA_PROFILER_STOP``, ``CUDA_FLUSH_PERIOD`` ...); ``diagnostics``: the profiler's injection
    messages (``DIAGNOSTIC_EVENT`` rows, source 1 Injection, severity 1 Info), as Nsight writes them at the session's
    end.  ``poll`` (a query call, ``cudaStreamQuery``): each repeat's wait is that query asked every 10 us until its
    kernels are done (:func:`_poll`), no sync call.  ``side_us``: a second thread of the process launches one kernel of
    that long in each repeat of the lost stretch after the main thread's wait, and waits for it as the main thread does
    (``poll`` or a sync) -- a line whose every launch was lost.  ``duration_s``: the session was stopped by
    ``nsys profile --duration=duration_s`` while the loop ran -- the repeats end there, the session stops just past
    the duration (its stop's latency), and ``RUN_DURATION_MS`` is the duration asked, as Nsight writes it for such a
    session (``llm_startup_window``: 10000 for a 10,005.4 ms session); without it ``RUN_DURATION_MS``, where
    ``options`` give it, is theirs.  Return the truth."""
    us, ms = 1000, 1_000_000
    limit = SESSION_START_NS + duration_s * 1000 * ms if duration_s else None
    pid = 7301
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, KERNEL_DDL, GPU_DDL, NVTX_DDL]
                                         + ([CAPTURE_DDL] if options or duration_s else [])
                                         + ([DIAG_DDL] if diagnostics else []), pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=4 * us)
    kern, marks, lost_at = [], [], []
    k_ns, lat = int(kernel_us * us), 6 * us
    side = _Calls(strings, 0, gap=4 * us)
    side.corr = 1_000_000  # its own correlation ids, none the main thread's
    resume_ns = None
    for i in range(iterations):
        if limit is not None and api.t >= limit:
            iterations = i
            break
        free, opened = api.t, api.t
        dropped = lost_from is not None and i >= lost_from and (lost_until is None or i < lost_until)
        for k in range(kernels):
            ks = max(api.t + 5 * us + lat, free)
            free = ks + k_ns
            launched = api.t
            c = api("cudaLaunchKernel", 5 * us)
            if dropped:
                lost_at.append(launched)
                continue
            kern.append((ks, free, c, k))
            if lost_until is not None and i == lost_until and resume_ns is None:
                resume_ns = ks - SESSION_START_NS
        if poll:
            _poll(api, poll, free + 3 * us, 10 * us)
        else:
            api.row("cudaDeviceSynchronize", api.t, free + 3 * us)
        marks.append((opened, free + 5 * us))
        if side_us and dropped:  # the side thread's launch, its kernel's record lost as the stretch's are
            side.t = api.t + 20 * us
            lost_at.append(side.t)
            side("cudaLaunchKernel", 5 * us)
            side_free = side.t + lat + int(side_us * us)
            if poll:
                _poll(side, poll, side_free + 3 * us, 10 * us)
            else:
                side.row("cudaDeviceSynchronize", side.t, side_free + 3 * us)
        api.t = free + 10 * us + 2 * ms
    if in_flight:  # the host ran ahead of a long last kernel; the window ended before it, or those queued, finished
        free = api.t + 20 * ms
        kern.append((api.t + 11 * us, free, api("cudaLaunchKernel", 5 * us), 0))
        for _ in range(in_flight):
            api("cudaLaunchKernel", 5 * us)
    stop = api.t + ms
    if limit is not None:
        if api.t < limit:
            raise ValueError(f"{iterations} repeats end before the {duration_s} s duration: give more")
        options = {**(options or {}), "RUN_DURATION_MS": str(duration_s * 1000)}
    api.insert(con, gtid)
    side.insert(con, _gid(pid, pid + 1))
    if ranges:
        con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                        "VALUES (?,?,59,'step',?,0)", [(a, b, gtid) for a, b in marks])
    names = [strings(f"kernel_cutlass__wo_kernel_body_{k}") for k in range(kernels)]
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, names[k], 32, (128,), (128,), j, stream=7 + k % max(1, streams))
                     for j, (a, b, c, k) in enumerate(kern)])
    if options:
        con.executemany("INSERT INTO META_DATA_CAPTURE VALUES (?, ?)", list(options.items()))
    if diagnostics:
        con.executemany("INSERT INTO DIAGNOSTIC_EVENT VALUES (?, 1, 1, 1, ?, ?)",
                        [(stop - SESSION_START_NS - 1000 + j, text, gpid) for j, text in enumerate(diagnostics)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB,
                program="python3", thread="python3", copy_enums=False, sync_enum=False)
    side_launches = sum(1 for r in side.rows if r[3] == strings("cudaLaunchKernel"))
    return {"lost": len(lost_at), "launches": iterations * kernels + (in_flight + 1 if in_flight else 0) + side_launches,
            "lost_from_ns": min(lost_at) - SESSION_START_NS if lost_at else None, "resume_ns": resume_ns}


# --------------------------------------------------------------------------- h37-osrt: untraced host work, OSRT traced

#: The waits :func:`write_untraced_host_loop` can put where the host otherwise computes: an OS call the OS runtime
#: trace records on the launching thread (a ``poll`` on a socket or a pipe, a ``pthread_cond_wait`` on another thread).
OSRT_WAITS = ("poll", "pthread_cond_wait")


def add_os_runtime(path: str, calls: list[tuple[int, int, str, int]], rows: bool = True, settings: bool = True,
                   threshold_ns: int = 1000) -> None:
    """Give the export at ``path`` an OS runtime trace (``nsys profile -t osrt``): with ``rows`` the ``OSRT_API``
    table holding ``calls`` (start, end, name, global thread id); with ``settings`` the capture's options say it was
    traced (``META_DATA_CAPTURE``: ``CAPTURE_EVENT_TYPE`` ``OSRuntime`` and ``OS_RUNTIME_OPTIONS:
    DURATION_THRESHOLD_NS`` ``threshold_ns``, beside CUDA's and NVTX's); without, the options name CUDA and NVTX only,
    as an export traced without ``osrt``."""
    con = sqlitefile.connect(path)
    strings = dict(con.execute("SELECT value, id FROM StringIds").fetchall())

    def sid(text: str) -> int:
        if text not in strings:
            strings[text] = max(strings.values(), default=-1) + 1
            con.execute("INSERT INTO StringIds VALUES (?, ?)", (strings[text], text))
        return strings[text]

    if rows:
        con.execute(OSRT_DDL)
        con.executemany("INSERT INTO OSRT_API VALUES (?, ?, 27, ?, 0, ?, 0, 0, 0)",
                        [(a, b, tid, sid(name)) for a, b, name, tid in calls])
    con.execute(CAPTURE_DDL.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"))
    options = [("CAPTURE_EVENT_TYPE", "NvtxEvents"), ("CAPTURE_EVENT_TYPE", "Cuda"), ("START_TRIGGER", "Immediate"),
               ("PROCESS_0:COLLECT_CUDA_TRACE", "true"), ("PROCESS_0:COLLECT_NVTX_TRACE", "true")]
    if settings:
        options += [("CAPTURE_EVENT_TYPE", "OSRuntime"), ("OS_RUNTIME_OPTIONS:DURATION_THRESHOLD_NS", str(threshold_ns))]
    con.executemany("INSERT INTO META_DATA_CAPTURE VALUES (?, ?)", options)
    con.commit()
    con.close()


def _runtime_os_calls(path: str, wait: str, host: tuple[int, int] | None) -> list[tuple[int, int, str, int]]:
    """The OS calls an OS runtime trace holds of the export at ``path``: a 2 us ``ioctl`` inside each CUDA call
    over 6 us long, on its thread; a second thread of the process (the runtime's) in ``pthread_cond_wait`` from the
    first call to the last; and, with ``wait``, the launching thread blocked in that call through ``host`` (start,
    end), 2 us in from each end."""
    con = sqlitefile.connect(path)
    rows = con.execute("SELECT start, end, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start").fetchall()
    con.close()
    calls = [(a + 2000, a + 4000, "ioctl", tid) for a, b, tid in rows if b - a > 6000]
    tid = rows[0][2]
    calls.append((rows[0][0], rows[-1][1], "pthread_cond_wait", tid + 1))
    if wait and host is not None:
        calls.append((host[0] + 2000, host[1] - 2000, wait, tid))
    return calls


def write_osrt_host_work_window(path: str, host_ms: float = 200.0, osrt: bool = True, settings: bool = True,
                                threshold_ns: int = 1000, wait: str = "") -> dict:
    """:func:`write_host_work_window`'s one pass (three uploads, ``host_ms`` with no CUDA call, one kernel and a
    read-back) with an OS runtime trace and no context switches (:func:`add_os_runtime`: ``osrt`` the rows,
    ``settings`` the options that say it was traced, at ``threshold_ns``): the host time is the thread running its
    own code, no OS call in it -- or, with ``wait`` (:data:`OSRT_WAITS`), the thread blocked in that call throughout.
    Return the truth: the host time and the part of it the thread ran."""
    truth = write_host_work_window(path, host_ms=host_ms)
    con = sqlitefile.connect(path)
    calls = con.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start").fetchall()
    con.close()
    a, b = max(((x[1], y[0]) for x, y in zip(calls, calls[1:])), key=lambda g: g[1] - g[0])  # the host's time
    add_os_runtime(path, _runtime_os_calls(path, wait, (a, b)), rows=osrt, settings=settings, threshold_ns=threshold_ns)
    return {**truth, "host_time_ms": (b - a) / 1e6, "ran_ms": 0.0 if wait else (b - a) / 1e6}


def write_untraced_host_loop(path: str, steps: int = 12, kernels: int = 8, kernel_us: float = 10.0,
                             host_us: float = 1000.0, osrt: bool = True, settings: bool = True,
                             threshold_ns: int = 1000, wait: str = "") -> dict:
    """Write the export of a loop whose host does work no event records between its launches, shaped after
    wrf-gpu/wrf_gpu's JAX solver bake-off (``nsys profile --trace=cuda,nvtx,osrt``, no context switches): each of
    ``steps`` iterations is the program's NVTX range ``solve`` (one jitted call) launching ``kernels`` kernels of
    ``kernel_us`` (15 us a launch), then ``host_us`` of the host's own code that no CUDA call, range or OS call
    covers (Python and dispatch between the calls).  The OS runtime trace as :func:`write_osrt_host_work_window`'s
    (``osrt``, ``settings``, ``threshold_ns``); ``wait`` (:data:`OSRT_WAITS`): the host time is instead the launching
    thread blocked in that OS call (waiting, not running).  Return the truth: the host's untraced time per step, how
    much of it the thread ran, and the GPU's busy time per step."""
    us, ms = 1000, 1_000_000
    pid = 4242
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, KERNEL_DDL, GPU_DDL, NVTX_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 20 * ms, gap=0)
    kern, ranges, hosts = [], [], []
    k_ns = int(kernel_us * us)
    for _ in range(steps):
        opened = api.t
        free = api.t
        for k in range(kernels):
            launched = api.t
            c = api("cudaLaunchKernel_v7000", 15 * us)
            ks = max(launched + 20 * us, free)
            free = ks + k_ns
            kern.append((ks, free, c, k))
        ranges.append((opened, api.t, "solve"))
        hosts.append((api.t, api.t + int(host_us * us)))
        api.t += int(host_us * us)
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                    [(a, b, text, gtid) for a, b, text in ranges])
    names = [strings(f"loop_fusion_{k}") for k in range(kernels)]
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, names[k], 32, (128,), (128,), j)
                     for j, (a, b, c, k) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="python3", thread="python3",
                copy_enums=False, sync_enum=False)
    calls = _runtime_os_calls(path, "", None)
    calls += [(a + 2 * us, b - 2 * us, wait, gtid) for a, b in hosts] if wait else []
    add_os_runtime(path, calls, rows=osrt, settings=settings, threshold_ns=threshold_ns)
    return {"host_untraced_ms": host_us / 1000.0, "ran_ms": 0.0 if wait else host_us / 1000.0,
            "launch_ms": kernels * 15 / 1000.0, "gpu_busy_ms": kernels * kernel_us / 1000.0,
            "step_ms": (kernels * 15 + host_us) / 1000.0}


def write_launcher_waits(path: str, steps: int = 8, launches: int = 2, waited: int = 2, launcher_us: float = 40.0,
                         wait_us: float = 60.0, after_wait_us: float = 0.0, between_us: float = 30.0,
                         kernel_us: float = 2.0, wait: str = "poll", call: str = "cuLaunchKernel",
                         settings: bool = True) -> dict:
    """Write the export of a Triton kernel called outside ``torch.compile`` under ``nsys profile -t
    cuda,nvtx,osrt`` with ``torch.autograd.profiler.emit_nvtx()`` (h37-launcherhb): each of ``steps`` iterations
    (the program's NVTX range ``iteration {k}``) builds its input with one ATen op (``aten::normal_``, its kernel
    launched inside the op through the runtime), runs ``between_us`` of its own Python no event records, then makes
    ``launches + waited`` launches, alternating (a launcher's first): each allocates its output (``aten::empty``, no
    kernel) and starts a kernel of ``kernel_us`` straight through the driver (``call``, no range around it).  Before
    each of the ``launches`` the thread is silent ``launcher_us`` -- Triton's Python launcher, which nothing records;
    before each of the ``waited`` it blocks ``wait_us`` in the OS call ``wait`` (the OS runtime trace records it:
    a ``poll`` on a pipe, a ``read``), then is silent ``after_wait_us`` -- the launcher's own part of that silence.
    The OS runtime trace as :func:`write_untraced_host_loop`'s (``settings``: the options say it was traced, at
    1 us; without, the waits are rows nothing says are all of them).

    Return the truth: per step, the launcher's time -- the untraced silences before bare driver launches, never the
    traced wait (``launcher_ms_per_step``) -- and the launches it precedes (``launcher_launches_per_step``; a silence
    under 5 us is no Python call's: ``launch.python_launcher_us``), the OS waits (``wait_ms_per_step``) and the
    host's untraced time in all (``untraced_ms_per_step``: the launcher's and the loop's own Python)."""
    us, ms = 1000, 1_000_000
    pid = 4300
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, KERNEL_DDL, GPU_DDL, NVTX_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 20 * ms, gap=0)
    kern, ranges, waits = [], [], []
    free, op_id = api.t, 0

    def kernel(corr: int, name: str) -> None:
        nonlocal free
        a = max(api.t - 3 * us, free)  # the launch reaches the GPU before its call returns
        free = a + int(kernel_us * us)
        kern.append((a, free, corr, name))

    def op(name: str, launch: bool) -> None:
        nonlocal op_id
        op_id += 1
        a = api.t
        api.t += 2 * us
        if launch:
            kernel(api("cudaLaunchKernel_v7000", 6 * us), "distribution_elementwise_grid_stride_kernel")
        api.t += 2 * us if launch else 6 * us
        ranges.append((a, api.t, f"{name}, op_id = {op_id}"))

    for k in range(steps):
        opened = api.t
        op("aten::normal_", True)
        api.t += int(between_us * us)
        for j in range(launches + waited):
            op("aten::empty", False)
            if (j % 2 == 1 and j // 2 < waited) or j // 2 >= launches:  # a waited launch: odd ones, then the rest
                waits.append((api.t, api.t + int(wait_us * us), wait, gtid))
                api.t += int((wait_us + after_wait_us) * us)
            else:
                api.t += int(launcher_us * us)
            kernel(api(call, 8 * us), "_qk_draft_hist_kernel")
        ranges.append((opened, api.t, f"iteration {k}"))
        api.t += 2 * us
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                    [(a, b, text, gtid) for a, b, text in ranges])
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, strings(n), 128, (128,), (128,), j)
                     for j, (a, b, c, n) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="python3", thread="pt_main_thread",
                copy_enums=False, sync_enum=False)
    add_os_runtime(path, _runtime_os_calls(path, "", None) + waits, settings=settings)
    floor = 5.0  # launch.python_launcher_us
    after = waited * after_wait_us if after_wait_us >= floor else 0.0
    return {"steps": steps, "launcher_ms_per_step": (launches * launcher_us + after) / 1000.0,
            "launcher_launches_per_step": launches + (waited if after else 0),
            "wait_ms_per_step": waited * wait_us / 1000.0,
            "untraced_ms_per_step": (between_us + launches * launcher_us + waited * after_wait_us) / 1000.0}


# --------------------------------------------------------------------------- XLA running while loops from the host


#: XLA's NVTX domain (its module and thunk ranges, ``frameworks.xla.NVTX_MODULE_PREFIX``)
XLA_DOMAIN = "TSL"
#: a sequential solver's loop body as XLA's thunk ranges name it (wrf_gpu's jitted Thomas sweep): the op path, the
#: instruction
XLA_SWEEP_BODY = (("jit(solve)/while/body", "loop_divide_fusion"),
                  ("jit(solve)/while/body", "loop_dynamic_update_slice_fusion"),
                  ("jit(solve)/while/body/add", "loop_add_fusion"))


def write_xla_host_loop(path: str, steps: int = 10, iterations: int = 48, kernel_us: float = 2.0,
                        launch_us: float = 3.0, thunk_us: float = 2.0, loop_us: float = 6.0, python_us: float = 60.0,
                        eager: bool = False, step_range: str | None = None, osrt: bool = True,
                        eval_program: int | Sequence[int] | None = None, programs: Sequence[int] | None = None,
                        eval_every: int = 1) -> dict:
    """Write the export of JAX under ``nsys profile -t cuda,nvtx`` as XLA's own NVTX ranges describe it, shaped after
    wrf-gpu/wrf_gpu's solver bake-off: each of ``steps`` calls of one jitted solver is one execution
    ``XlaModule:#hlo_module=jit_solve,program_id=7#`` (domain ``TSL``) whose ``lax.fori_loop`` XLA runs from the host,
    without command buffers: the loop's thunk ``Thunk:#name=jit(solve)/while,hlo_op=while.13#`` around ``iterations``
    iterations, each the host's own loop step (``loop_us``: the trip counter) and then the body's three thunks
    (:data:`XLA_SWEEP_BODY`), each a range around ``thunk_us`` of the host's own work and one ``cuLaunchKernel`` of
    ``launch_us`` for a kernel of ``kernel_us``; between calls ``python_us`` of Python no event records.

    ``eager``: the control, the same ops un-jitted -- each a jnp call that XLA runs as its own one-thunk program
    (``XlaModule:#hlo_module=jit_divide,...#`` around ``Thunk:#name=jit(divide)/div,hlo_op=divide#``), one after
    another from Python, ``python_us`` / 4 of Python between them, no while loop anywhere.

    ``step_range``: the user's NVTX range around each step (default domain; ``{k}`` its number).  ``osrt``: traced as
    the bake-off was (``-t cuda,nvtx,osrt``, :func:`add_os_runtime`): no OS call on the launching thread between its
    CUDA calls, so the time no event covers is the host running (``metrics.compute.waits_traced``).
    ``eval_program``: after each call, the same jitted solver called once more on a smaller input -- the same module
    name compiled into another program, ``XlaModule:#hlo_module=jit_solve,program_id=<eval_program>#``, one pass of
    the body without a loop -- still inside the step (the iteration is the loop's turn, both calls).  ``eval_every``:
    that evaluation call only after every ``eval_every``-th call (periodic evaluation), inside the step it follows;
    a sequence: per step, the program its evaluation ran (the evaluation recompiled too).
    ``programs``: per step, the program id its call of the solver ran (default 7 each) -- the same name recompiled
    mid-window (``[7] * 4 + [9] * 6``: a new input shape from step 4 on), or a last partial batch's own program
    (``[7] * 10 + [11]``), or bucketed input shapes (each padding length its own program, called in data order);
    each call is still one step.

    Return the truth: per step, the host's time inside the loop (its thunk range), the GPU's busy time, the kernels,
    the iterations (which the ranges do not mark: each body thunk repeats once an iteration, nothing ends one)."""
    us, ms = 1000, 1_000_000
    pid = 5120
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, KERNEL_DDL, GPU_DDL, NVTX_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 20 * ms, gap=0)
    kern, ranges, user = [], [], []
    gpu_free = api.t
    loop_ns, step_starts = 0, []

    def thunk(name: str, op: str) -> None:
        nonlocal gpu_free
        a = api.t
        api.t += int(thunk_us * us)
        launched = api.t
        c = api("cuLaunchKernel", int(launch_us * us))
        ks = max(launched + 4 * us, gpu_free)
        gpu_free = ks + int(kernel_us * us)
        kern.append((ks, gpu_free, c, op))
        ranges.append((a, api.t, f"Thunk:#name={name},hlo_op={op}#"))

    for k in range(steps):
        step_starts.append(api.t)
        if eager:
            for _ in range(iterations):
                for name, op in XLA_SWEEP_BODY:
                    fn = op.split("_")[1]  # divide, dynamic, add
                    m0 = api.t
                    thunk(f"jit({fn})/{fn}", fn)
                    ranges.append((m0, api.t + us, f"XlaModule:#hlo_module=jit_{fn},program_id={len(fn)}#"))
                    api.t += int(python_us * us / 4)
        else:
            m0 = api.t
            api.t += 5 * us
            w0 = api.t
            for _ in range(iterations):
                api.t += int(loop_us * us)
                for name, op in XLA_SWEEP_BODY:
                    thunk(name, op)
            api.t += 2 * us
            ranges.append((w0, api.t, "Thunk:#name=jit(solve)/while,hlo_op=while.13#"))
            loop_ns += api.t - w0
            api.t += 3 * us
            prog = 7 if programs is None else programs[k]
            ranges.append((m0, api.t, f"XlaModule:#hlo_module=jit_solve,program_id={prog}#"))
            if eval_program is not None and (k + 1) % eval_every == 0:
                api.t += int(python_us * us / 4)
                e0 = api.t
                for name, op in XLA_SWEEP_BODY:
                    thunk(name, op)
                api.t += us
                ev = eval_program if isinstance(eval_program, int) else eval_program[k]
                ranges.append((e0, api.t, f"XlaModule:#hlo_module=jit_solve,program_id={ev}#"))
        # block_until_ready, then the Python of the next call
        api("cuStreamSynchronize", max(gpu_free - api.t, 0) + 3 * us)
        if step_range:
            user.append((step_starts[-1], api.t, step_range.format(k=k)))
        api.t += int(python_us * us)
    stop = api.t + ms
    api.insert(con, gtid)
    con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,NULL,75,?,?,1)",
                (SESSION_START_NS, XLA_DOMAIN, gtid))
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,?)",
                    [(a, b, text, gtid, 1) for a, b, text in ranges] + [(a, b, text, gtid, 0) for a, b, text in user])
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, strings(op), 32, (40,), (128,), j)
                     for j, (a, b, c, op) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="python3", thread="python3",
                copy_enums=False, sync_enum=False)
    if osrt:
        add_os_runtime(path, _runtime_os_calls(path, "", None))
    per = len(XLA_SWEEP_BODY) * iterations
    step_ms = (api.t - step_starts[0]) / steps / ms
    return {"steps": steps, "iterations": iterations, "kernels_per_step": per, "gpu_busy_ms": per * kernel_us / 1000.0,
            "loop_host_ms": loop_ns / steps / ms, "step_ms": step_ms, "step_starts_ns": step_starts}


# --------------------------------------------------------------------------- the host's code between launches (issue 37)


def write_host_code_launches(path: str, launches: int = 1200, kernel_us: float = 6.0, call_us: float = 5.0,
                             code_us: float = 40.0, submit_us: float = 4.0) -> dict:
    """Write the export of a native pass of ``launches`` small kernels, shaped after PEXSI's selected inversion on an
    A100 (``wild/pexsi_a100_pageable_sync``): before each ``cudaLaunchKernel`` of ``call_us`` the host runs
    ``code_us`` of its own code that no call records; each kernel of ``kernel_us`` starts ``submit_us`` after its
    call returns, on a GPU that has drained.  The pass ends with one ``cudaDeviceSynchronize``.  With ``code_us``
    small and ``call_us`` large, the same pass is launch-call-bound (the control).

    Return the truth, by construction, over the launches after the first (the GPU is idle before each, from the end of
    the kernel before it): the idle with the host inside the launch call or the GPU about to start what it submitted
    (``launch_calls_ms``), and in the host's own code (``host_code_ms``); all of it is launch wait."""
    us, ms = 1000, 1_000_000
    pid = 27182
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, SYNC_DDL, KERNEL_DDL, GPU_DDL], pid)
    call, code, run, submit = (int(x * us) for x in (call_us, code_us, kernel_us, submit_us))
    api = _Calls(strings, SESSION_START_NS + 100 * ms, gap=code)
    api("cudaFree_v3020", 300 * ms)  # the context, before the pass
    kern = []
    calls_ps = code_ps = 0
    for i in range(launches):
        c = api("cudaLaunchKernel_v7000", call)
        ks = api.t - code + submit  # the call's return, then the driver's submission
        if kern:
            prev_end = kern[-1][1]
            begun = ks - call - submit  # the call's start
            calls_ps += ks - max(begun, prev_end)  # the call and its submission, from the GPU's drain
            code_ps += max(0, begun - prev_end)  # the host's own code before the call, from the drain
            assert ks > prev_end, "the GPU drains before each launch"
        kern.append((ks, ks + run, c))
    api("cudaDeviceSynchronize_v3020", 0)
    api.end_last(max(api.rows[-1][0], kern[-1][1]) + 3 * us)  # the GPU's last kernel has ended, or ends, first
    stop = api.rows[-1][1] + ms
    api.insert(con, gtid)
    names = [strings(n) for n in ("void trsm_right_kernel<double, 64, 16, false, true>(int, int, double const *, "
                                  "double *)", "void gemv_kernel<double, 128>(int, double const *, double *)")]
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, names[i % 2], 64, (432,), (256,), i)
                     for i, (a, b, c) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="./run_pselinv", thread="run_pselinv")
    return {"launches": launches, "launch_calls_ms": calls_ps / ms, "host_code_ms": code_ps / ms,
            "pass_ms": (kern[-1][1] - kern[0][0]) / ms}


# --------------------------------------------------------------------------- h37-commthread: a comm thread's ranges


def write_comm_thread_steps(path: str, steps: int = 12, buckets: int = 2, forward_ms: float = 0.8,
                            backward_ms: float = 1.2, update_ms: float = 0.2, allreduce_ms: float = 0.5,
                            kernels: int = 6, dispatcher: bool = False) -> dict:
    """Write one rank's export of a training loop whose gradients are all-reduced by a communication thread, shaped
    after Stanford CME 213's ``train_mpi --sync-mode openmp`` (``h256_comm_openmp_thread_*_rank0.sqlite``, read in
    h37-survey54): the main thread marks each step with NVTX ranges ``forward``, ``backward_bucketed`` and
    ``adam_update`` (``kernels`` kernels filling each phase), records an event after each of ``buckets`` parts of the
    backward, waits (unrecorded: an OpenMP barrier) for the communication thread and updates.  The communication
    thread, per bucket, waits on the bucket's event in a range ``openmp_comm_event_wait`` (``cudaEventSynchronize``),
    then in ``openmp_comm_mpi_allreduce`` copies the bucket to the host, all-reduces it (``MPI_Allreduce`` in Nsight
    2023's ``MPI_COLLECTIVES_EVENTS``) and copies it back: its ranges repeat ``buckets`` times a step, as regularly
    as the main thread's, and it launches copies, never a kernel.  ``dispatcher``: the main thread's ranges pushed by
    a thread of their own that launches nothing (an async runtime's Python thread marking the steps its worker
    launches) and the communication thread's ranges left out -- no range's thread launches a kernel, and the ranges
    still mark the steps (the control).  Return the truth: the steps and the step's time (one ``forward`` start to
    the next)."""
    us, ms = 1000, 1_000_000
    pid = 404227
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL,
                                                MPI_COLLECTIVES_DDL, MPI_OTHER_DDL], pid)
    comm_tid = _gid(pid, pid + 76)
    api = _Calls(strings, SESSION_START_NS + 90 * ms, gap=4 * us)
    comm = _Calls(strings, api.t, gap=4 * us)
    comm.corr = 1 << 20  # one process's correlation ids are distinct across its threads
    nvtx: list[tuple[int, int, str, int]] = []
    comm_nvtx: list[tuple[int, int, str, int]] = []
    kern: list[tuple[int, int, int, str]] = []
    memcpy: list[tuple[int, int, int, int, int, int]] = []
    mpi: dict[str, list] = {"MPI_COLLECTIVES_EVENTS": [], "MPI_OTHER_EVENTS": []}
    gpu_free = [0]

    def launch(calls: _Calls, name: str, dur_ns: int) -> None:
        c = calls("cudaLaunchKernel_v7000", 6 * us)
        a = max(calls.t, gpu_free[0]) + 3 * us
        kern.append((a, a + dur_ns, c, name))
        gpu_free[0] = a + dur_ns

    def phase(name: str, kernel: str, total_ms: float, n: int) -> None:
        a = api.t
        for j in range(n):
            launch(api, f"{kernel}_{j}", int(total_ms * ms / kernels))
        nvtx.append((a, api.t, name, 0))
        api.t += 2 * us

    def copy(kind: int) -> None:  # a bucket to pinned host memory (2) or back (1), 40 us; the thread waits for it
        c = comm("cuMemcpyAsync", 5 * us)
        a = max(comm.t, gpu_free[0]) + 3 * us
        memcpy.append((a, a + 40 * us, c, kind, 0 if kind == 2 else 3, 3 if kind == 2 else 0))
        gpu_free[0] = a + 40 * us
        comm("cuStreamSynchronize", gpu_free[0] + 2 * us - comm.t)

    def reduce_bucket(ready: int) -> None:  # the comm thread: wait for the bucket's event, then all-reduce it
        a = max(comm.t, api.t - 30 * us)
        comm.t = a
        comm("cudaEventSynchronize_v3020", max(ready, a + 5 * us) - a)
        comm_nvtx.append((a, comm.t, "openmp_comm_event_wait", 0))
        b = comm.t
        copy(2)
        mpi["MPI_COLLECTIVES_EVENTS"].append((comm.t, comm.t + int(allreduce_ms * ms), comm_tid, strings("MPI_Allreduce")))
        comm.t += int(allreduce_ms * ms) + 5 * us
        copy(1)
        comm_nvtx.append((b, comm.t, "openmp_comm_mpi_allreduce", 0))
        comm.t += 3 * us

    mpi["MPI_OTHER_EVENTS"].append((api.t, api.t + 150 * ms, gtid, strings("MPI_Init_thread")))
    api.t += 151 * ms
    api("cudaMalloc_v3020", 120 * ms)  # the context
    comm.t = api.t
    starts = []
    for _ in range(steps):
        starts.append(api.t)
        phase("forward", "fwd_kernel", forward_ms, kernels)
        a = api.t
        per = kernels // buckets
        for k in range(buckets):
            for j in range(per):
                launch(api, f"bias_backward_kernel_{k}_{j}", int(backward_ms * ms / kernels))
            api("cudaEventRecord_v3020", 3 * us)
            reduce_bucket(gpu_free[0])
        nvtx.append((a, api.t, "backward_bucketed", 0))
        api.t = max(api.t, comm.t) + 5 * us  # the barrier: the update waits for the last bucket's all-reduce
        phase("adam_update", "adam_kernel", update_ms, 2)
        api("cudaDeviceSynchronize_v3020", gpu_free[0] + 2 * us - api.t)
        comm.t = max(comm.t, api.t - 30 * us)
    stop = api.t + ms
    api.insert(con, gtid)
    comm.insert(con, comm_tid)
    _mpi_rank_rows(con, (gpid, gtid), ("MPI", SESSION_START_NS + 90 * ms), [] if dispatcher else nvtx, mpi, memcpy,
                   2 << 20)
    marker = _gid(pid, pid + 77)
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,?)",
                    [(a, b, text, marker, d) for a, b, text, d in nvtx] if dispatcher else
                    [(a, b, text, comm_tid, d) for a, b, text, d in comm_nvtx])
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, strings(n), 64, (128,), (256,), j)
                     for j, (a, b, c, n) in enumerate(kern)])
    con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (strings("train_mpi"), comm_tid))
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="./train_mpi", thread="train_mpi")
    return {"steps": steps, "step_ms": float(np.median(np.diff(starts))) / ms,
            "comm_ranges_per_step": buckets}


# --------------------------------------------------------------------------- h37-cpuloop31: loops on the CPU alone

def _cpu_program(path: str, process: str = "python3") -> tuple[sqlite3.Connection, _Strings, int, int]:
    """A new export of a program that made no CUDA call (Nsight 2020, no capture options): NVTX and OS runtime
    tables only; the connection, its strings, the main thread's and the process's global ids."""
    pid = 4244
    con, strings, gtid, gpid = _open_one(path, [NVTX_DDL, OSRT_DDL], pid)
    con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (strings(process), gtid))
    con.execute("INSERT INTO PROCESSES VALUES (?, ?, ?)", (gpid, pid, process))
    return con, strings, gtid, gpid


def _range_row(start: int, end: int, text: str, gtid: int) -> tuple:
    return start, end, 59, text, gtid, 0


_RANGE_INSERT = "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?, ?, ?, ?, ?, ?)"


def write_sleep_loop(path: str, sleeps_ms: tuple[float, ...] = (0.0, 1000.0, 2000.0, 3000.0, 4000.0),
                     outer: str = "f", iteration: str = "loop", osrt: bool = True, child: str = "") -> dict:
    """Write ``nsys profile -t nvtx,osrt python loop.py`` of a loop on the CPU alone: a range ``outer`` around
    ``len(sleeps_ms)`` ranges named ``iteration``, each a ``time.sleep`` held in one ``select`` (the OS runtime trace,
    where ``osrt``) of its own length -- uneven turns the program chose, as ``nvtx-quickstart.py``'s ``sleep(i)``.
    ``child``: every turn but the last marks its sleep with a range of that name inside its own (the last, bare, as
    long as its sleep: h37-cpuloop31's Left 2).
    Return the truth: the turns and their mean, each from its start to the next's, the last its own range."""
    con, strings, gtid, _ = _cpu_program(path)
    t = SESSION_START_NS + 30_000_000
    first, rows, calls = t, [], []
    starts, ends = [], []
    for ms in sleeps_ms:
        s = t
        t += 7_000  # into the sleep
        calls.append((t, t + int(ms * 1e6), 27, gtid, 0, strings("select"), 0, 0, 0))
        if child and len(starts) < len(sleeps_ms) - 1:
            rows.append(_range_row(t, t + int(ms * 1e6), child, gtid))
        t += int(ms * 1e6) + 3_000
        rows.append(_range_row(s, t, iteration, gtid))
        starts.append(s)
        ends.append(t)
        t += 50_000  # the loop's own turn between two ranges
    rows.append(_range_row(first - 6_000, ends[-1] + 1_000, outer, gtid))
    con.executemany(_RANGE_INSERT, rows)
    if osrt:
        con.executemany("INSERT INTO OSRT_API VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", calls)
    finish_tables(con, strings, t + 5_000_000, copy_enums=False, sync_enum=False)
    con.commit()
    con.close()
    turns = [*(np.diff(starts) / 1e6).tolist(), (ends[-1] - starts[-1]) / 1e6]
    return {"iteration": iteration, "steps": len(sleeps_ms), "step_ms": sum(turns) / len(turns), "turns_ms": turns}


def write_marked_calls(path: str, calls: int = 5000, loop_s: float = 60.0, spread: str = "ends",
                       name: str = "PyObject-GetAttr", seed: int = 7) -> dict:
    """Write the capture of a program whose library marks one of its functions with an NVTX range (a CPython patched
    to push a range in ``PyObject_GetAttr``): ``calls`` ranges of 0.1-0.6 us, and one long loop of ``loop_s`` that
    the program marks nowhere.  ``spread`` "ends": the calls fall in the interpreter's start-up (40 ms) and exit
    (the last 1%), the loop between them calling none (``nvtx-dictionary.py``'s dict lookups); "through": at random
    times all through the loop.  Return the truth: the ranges, their own time and the loop's -- no marked loop."""
    if spread not in ("ends", "through"):
        raise ValueError(f"spread {spread!r}: 'ends' or 'through'")
    rng = np.random.default_rng(seed)
    con, strings, gtid, _ = _cpu_program(path)
    t0 = SESSION_START_NS + 20_000_000
    loop_ns = int(loop_s * 1e9)
    if spread == "ends":
        head = calls - calls // 100
        at = np.concatenate([np.sort(rng.uniform(0, 40e6, head)),
                             40e6 + loop_ns + np.sort(rng.uniform(0, 2e6, calls - head))])
    else:
        at = np.sort(rng.uniform(0, 40e6 + loop_ns, calls))
    start = t0 + np.unique(at.astype(np.int64) // 1_000 * 1_000)  # one call at a time: a microsecond apart at least
    length = rng.integers(90, 600, start.size)
    con.executemany(_RANGE_INSERT, [_range_row(int(s), int(s + n), name, gtid) for s, n in zip(start, length)])
    stop = t0 + int(40e6) + loop_ns + 3_000_000
    finish_tables(con, strings, stop, copy_enums=False, sync_enum=False)
    con.commit()
    con.close()
    return {"ranges": int(start.size), "marked_ms": float(length.sum()) / 1e6, "loop_ms": loop_ns / 1e6}


def write_one_pass_gemm(path: str, upload_a_ms: float = 164.6, startup_ms: float = 19.7, upload_b_ms: float = 123.8,
                        gemm_ms: float = 989.6, download_ms: float = 268.0, passes: int = 1,
                        pass_gap_ms: float = 60.0) -> dict:
    """Write the export of a native DGEMM program shaped after ntua-el20062/gemm_spmm_a100's ``gemm_tiled_20000``
    (A100-PCIE-40GB, Nsight 2024.2), run ``passes`` times: A uploaded by a synchronous pinned ``cudaMemcpy`` of
    ``upload_a_ms``, then the library's start-up on the host (``cublasCreate_v2``, ``cuLibraryLoadData``) with the
    GPU idle ``startup_ms`` (the first pass only), B's pinned ``cudaMemcpyAsync`` of ``upload_b_ms`` -- the same
    direction and memory kinds as A's, so the two copies share a name --, a ``cudaMemsetAsync`` of C, one DGEMM of
    ``gemm_ms`` and C's read-back of ``download_ms``; ``pass_gap_ms`` of the host's own code between passes.  With one
    pass the GPU's work is two bursts apart at the start-up: copies alone, then everything else.  Return the truth:
    the passes, one pass's span from A's upload to the read-back's end (ms, the first's), the GEMMs' count and the
    GPU's idle inside the start-up (ms)."""
    us, ms = 1000, 1_000_000
    pid = 7878
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, MEMSET_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 400 * ms, gap=10 * us)
    api("cuModuleGetLoadingMode", 2 * us, then=2 * ms)
    api("cudaMalloc_v3020", 150 * ms)  # the context
    copies, sets, kern, spans = [], [], [], []  # copies: (start, end, corr, stream, copyKind)
    for p in range(passes):
        c = api("cudaMemcpy_v3020", int(upload_a_ms * ms) + 30 * us)  # synchronous: returns after the copy
        a0 = api.t - 10 * us - int(upload_a_ms * ms) - 10 * us
        copies.append((a0, a0 + int(upload_a_ms * ms), c, 7, 1))
        if p == 0:
            api.t = copies[-1][1] + 20 * us
            api("cublasCreate_v2", int(startup_ms * ms) // 2)
            api("cuLibraryLoadData", int(startup_ms * ms) - int(startup_ms * ms) // 2 - 40 * us)
        c = api("cudaMemcpyAsync_v3020", 30 * us)
        b0 = api.t - 10 * us
        copies.append((b0, b0 + int(upload_b_ms * ms), c, 13, 1))
        c = api("cudaMemsetAsync_v3020", 5 * us)
        s0 = max(api.t, copies[-1][1] + 2 * us)
        sets.append((s0, s0 + 20 * us, c))
        c = api("cuLaunchKernel", 8 * us)
        k0 = sets[-1][1] + 3 * us
        kern.append((k0, k0 + int(gemm_ms * ms), c))
        c = api("cudaMemcpyAsync_v3020", 20 * us)
        d0 = kern[-1][1] + 5 * us
        copies.append((d0, d0 + int(download_ms * ms), c, 15, 2))
        api("cudaDeviceSynchronize_v3020", 0)
        api.end_last(copies[-1][1] + 10 * us)
        spans.append((a0, copies[-1][1]))
        api.t = copies[-1][1] + int(pass_gap_ms * ms)
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
                    "correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,?,?,?,3200000000,?,"
                    "?,?)", [(a, b, st, c, gpid, k, 1 if k == 1 else 2, 2 if k == 1 else 1)
                             for a, b, c, st, k in copies])
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, value, bytes, memKind) VALUES (?,?,0,1,14,?,?,0,3200000000,2)",
                    [(*r, gpid) for r in sets])
    nid = strings("Kernel2")
    con.executemany(_KERNEL_INSERT, [_kernel_row(k0, k1, c, gpid, nid, 168, (1256, 20), (128,), c, stream=14)
                                     for k0, k1, c in kern])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="./gemm_tiled",
                thread="gemm_tiled", sync_enum=False)
    return {"passes": passes, "pass_ms": (spans[0][1] - spans[0][0]) / ms, "gemms": len(kern),
            "startup_idle_ms": (copies[1][0] - copies[0][1]) / ms}


# --------------------------------------------------------------------------- h37-accum32: gradient accumulation

def write_accumulation_loop(path: str, iterations: int = 8, micro: int = 4, micro_range: str = "microstep_{i}",
                            phases: tuple[str, ...] = ("forward_pass", "backward_pass"),
                            update_range: str | None = "optimizer_step", allreduce_ms: float = 0.0,
                            micro_ms: float = 3.0, update_ms: float = 1.0, kernels: int = 8,
                            update_kernel: str = "multi_tensor_apply_kernel") -> dict:
    """Write the export of a training loop under gradient accumulation that marks only its micro-steps, as public
    loops do (SURVEY session 32: ``record_function(f"microstep_{micro_step}")`` with ``data_loading`` /
    ``forward_pass`` / ``backward_pass`` inside, then ``record_function("optimizer_step")``; ``nvtx.range_push(
    f"micro_{micro}")``; verl's ``micro_batch{i}``): each of ``iterations`` iterations runs ``micro`` micro-steps, each a
    range ``micro_range`` (``{i}``: its number in the iteration, ``{n}``: in the run, ``{k}``: its iteration's number --
    NeMo Automodel's ``f"iteration_{i}_ga_step_{_ga_step_idx}"``) holding ``phases`` (a forward of
    ``micro_ms`` / 3 and a backward of twice that, ``kernels`` kernels each), then the optimizer's update
    (``update_ms`` of kernels named ``update_kernel``: a foreach optimizer's) in a range ``update_range`` (None:
    unmarked), then ``loss.item()``'s sync.
    ``allreduce_ms``: a data-parallel job in ``no_sync`` but for its last micro-step, whose backward ends with the
    gradients' NCCL all-reduce of that length.  No range around an iteration.  Return the truth: the iterations (the
    optimizer's steps), the micro-steps, and the iteration's time (one iteration's first micro-step start to the
    next's)."""
    us, ms = 1000, 1_000_000
    pid = 6262
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=1 * us)
    filled = _FilledRanges(api, lead=20 * us, trim=2 * us, launch=5 * us, tail=10 * us, pause=20 * us)
    names = {k: strings(n) for k, n in (("f", "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn"),
                                        ("b", "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nt_dgrad"),
                                        ("w", "cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8_wgrad"),
                                        ("o", update_kernel), ("r", NCCL_ALLREDUCE))}
    fwd_ms, bwd_ms = micro_ms / 3, 2 * micro_ms / 3

    def backward() -> None:  # the input gradients' GEMMs, then the weights' (a name that says a gradient)
        filled.work(bwd_ms / 2, names["b"], kernels)
        filled.work(bwd_ms / 2, names["w"], kernels)

    def micro_step(last: bool) -> None:
        todo = [lambda: filled.work(fwd_ms, names["f"], kernels), backward]
        for name, body in zip(phases or ("",) * 2, todo):
            filled.ranged(name, body) if name else body()
        if last and allreduce_ms:
            filled.work(allreduce_ms, names["r"], 1)

    def update() -> None:
        filled.work(update_ms, names["o"], max(kernels // 2, 1), sync=True)

    api("cudaMalloc_v3020", 150 * ms, then=1 * ms)  # the context
    starts = []
    n = 0
    for k in range(iterations):
        starts.append(api.t)
        for i in range(micro):
            filled.ranged(micro_range.format(i=i, n=n, k=k), lambda last=i == micro - 1: micro_step(last))
            n += 1
        filled.ranged(update_range, update) if update_range else update()
        api.t += 300 * us  # the loop's own Python between iterations (logging, the scheduler)
    stop = api.t + ms
    api.insert(con, gtid)
    filled.insert(con, gtid, gpid)
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_80GB, program="python", thread="pt_main_thread",
                copy_enums=False, sync_enum=False)
    return {"iterations": iterations, "micro_steps": iterations * micro, "micro": micro,
            "step_ms": float(np.median(np.diff(starts))) / ms, "kind": "training"}


# --------------------------------------------------------------------------- an Nsight 2020-2021 export's GPU tables


#: ``TARGET_INFO_GPU`` as Nsight Systems 2020-2021 wrote it: each GPU named by ``deviceId``, nothing else of it.
LEGACY_GPU_DDL = """CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, deviceId INTEGER NOT NULL, name TEXT,
    busLocation TEXT, isDiscrete INTEGER)"""
#: ``TARGET_INFO_CUDA_GPU``: CUDA's properties of each process's devices, keyed by the CUDA ordinal (``deviceId``).
LEGACY_CUDA_GPU_DDL = """CREATE TABLE TARGET_INFO_CUDA_GPU (vmId INTEGER NOT NULL, name TEXT, pciBusId TEXT,
    globalMemoryBandwidth INTEGER, globalMemorySize INTEGER, constantMemorySize INTEGER, l2CacheSize INTEGER,
    numThreadsPerWarp INTEGER, coreClockRate INTEGER, numMemcpyEngines INTEGER, numMultiprocessors INTEGER,
    maxIPC INTEGER, maxWarpsPerMultiprocessor INTEGER, maxBlocksPerMultiprocessor INTEGER,
    maxRegistersPerBlock INTEGER, maxSharedMemoryPerBlock INTEGER, maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER,
    maxBlockDimY INTEGER, maxBlockDimZ INTEGER, maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER,
    computeCapabilityMajor INTEGER, computeCapabilityMinor INTEGER, deviceId INTEGER, pid INTEGER,
    maxSharedMemoryPerMultiprocessor INTEGER, maxRegistersPerMultiprocessor INTEGER)"""


def write_legacy_gpu_tables(path: str, layout: str = "2021", gpus: int = 4, kernels: int = 6,
                            kernel_ms: float = 3.3, gpu: Gpu | None = None, properties: bool = True) -> dict:
    """Write the export of a one-pass vector program shaped after extra-p/extrap's ``ex-gpu`` test capture (an A100
    node of 4 GPUs): the context in a 209 ms ``cudaMalloc``, then ``kernels`` kernels of one thread block of 10
    threads, ``kernel_ms`` each, each followed by a ``cudaDeviceSynchronize``, on CUDA device 0 -- with the GPU tables
    of the Nsight Systems release ``layout`` names: "2021" (``TARGET_INFO_GPU`` keyed by ``deviceId``, name only, and
    ``TARGET_INFO_CUDA_GPU``'s properties with ``globalMemorySize`` in bytes), "2020" (the same, that size in MiB), or
    "current" (today's ``TARGET_INFO_GPU``, the control).  ``properties`` False: no ``TARGET_INFO_CUDA_GPU`` (the
    older ``TARGET_INFO_GPU``'s name alone).  Return the truth: the GPU the export describes (name, SMs, compute
    capability, memory in bytes) and the kernels' launch configuration."""
    g = gpu or A100_SXM4_40GB._replace(name="A100-PCIE-40GB", memory=42505273344)
    us, ms = 1000, 1_000_000
    pid = 8698
    tables = [GPU_DDL] if layout == "current" else [LEGACY_GPU_DDL] + ([LEGACY_CUDA_GPU_DDL] if properties else [])
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, SYNC_DDL, KERNEL_DDL] + tables, pid)
    api = _Calls(strings, SESSION_START_NS + 20 * ms, gap=5 * us)
    api("cudaMalloc_v3020", 209 * ms)  # the context
    for i in range(kernels):
        c = api("cudaLaunchKernel_v7000", 8 * us, then=0)
        k0 = api.t + 5 * us
        k1 = k0 + int(kernel_ms * ms)
        nid = strings(f"vector_op_{i}(double const*, double const*, unsigned long, double*)")
        con.execute(_KERNEL_INSERT, _kernel_row(k0, k1, c, gpid, nid, 16, (1,), (10,), i + 1))
        api("cudaDeviceSynchronize_v3020", 0)
        api.end_last(k1 + 5 * us)
        api.t = k1 + 10 * us
    api("cudaMemcpy_v3020", 18 * us)
    stop = api.t + ms
    api.insert(con, gtid)
    if layout != "current":
        memory = g.memory >> 20 if layout == "2020" else g.memory
        for dev in range(gpus):
            con.execute("INSERT INTO TARGET_INFO_GPU VALUES (?,?,?,?,1)", (1 << 48, dev, g.name, f"0000:{dev:02x}:00.0"))
            if properties:
                con.execute("INSERT INTO TARGET_INFO_CUDA_GPU (vmId, name, pciBusId, globalMemoryBandwidth, "
                            "globalMemorySize, l2CacheSize, numThreadsPerWarp, coreClockRate, numMultiprocessors, "
                            "computeCapabilityMajor, computeCapabilityMinor, deviceId, pid) "
                            "VALUES (?,?,'<UNKNOWN_BUS_ID>',?,?,?,32,?,?,?,?,?,?)",
                            (1 << 48, g.name, g.bandwidth // 1000, memory, g.l2_bytes, g.clock_hz // 1000, g.sms,
                             *g.cc, dev, pid))
    _finish_one(con, strings, stop, (gpid, pid, gtid), g if layout == "current" else None, program="./ex-gpu",
                thread="ex-gpu", sync_enum=False)
    return {"name": g.name, "sm_count": g.sms if properties or layout == "current" else None,
            "compute_capability": g.cc if properties or layout == "current" else None,
            "memory_bytes": ((g.memory >> 20) << 20 if layout == "2020" else g.memory)
            if properties or layout == "current" else None,
            "kernels": kernels, "blocks": 1, "threads": 10, "kernel_ms": kernel_ms * kernels}


# --------------------------------------------------------------------------- h37-survey71: a program's phases run once


#: The laptop GPU of extra-p/extrap's ParallelKernelsTest exports (``TARGET_INFO_GPU``: 10 SMs, cc 6.1, 6 GB).
GTX_1060_MAX_Q = Gpu("GeForce GTX 1060 with Max-Q Design", "0000:01:00.0", 1572864, 6442450944, 192192000000,
                     1341000000, 10, "GP106", 1, (6, 1))


def write_sibling_phases(path: str, streams: int = 5, copy_ms: float = 2.3, kernel_ms: float = 3.0,
                         long_ms: float = 106.0, alloc_ms: float = 5.0, phases: tuple[str, str, str] = (
                             "main->test_max_par", "main->test_copies", "main->process"),
                         copy_halves: bool = True, idle_us: float = 0.0) -> dict:
    """Write the export of a test program shaped after extra-p/extrap's ParallelKernelsTest captures (a GTX 1060
    Max-Q, Nsight 2022.1, kept as ``wild/extrap_parallel_kernels_gtx1060``): its context in a 205 ms
    ``cudaStreamCreate``, then three tests run once each, every one in an NVTX range of its own inside ``main``
    (``phases``): the first uploads ``streams`` pinned buffers (``copy_ms`` each), runs kernel ``test`` on each stream
    (``kernel_ms``) and reads them back, one ``cudaStreamSynchronize`` per stream; the second only copies (an upload
    and a read-back per stream, a stream synced at a time, the host pausing 2 ms between its two halves: two GPU
    bursts of the same copies; ``copy_halves=False``: no pause, one burst, as at the program's scalings 2 and 4,
    h37-hostalloc32); ``idle_us``: the GPU idles that long before each copy and kernel of the first two tests, as
    the real ones' transfers on several streams leave it); the third runs ``test0`` .. ``test{streams-1}`` on as many streams, ``test2`` of
    ``long_ms``, waited on by ``cudaEventSynchronize``.  Each test allocates its ``streams`` pinned buffers
    (``cudaHostAlloc``, ``alloc_ms``) and device buffers first and frees them after.  Return the truth: the tests
    are the program's phases, each run once -- no step repeats, and no phase is another's warm-up."""
    us, ms = 1000, 1_000_000
    pid = 25752
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 176 * ms, gap=20 * us)
    nvtx: list[tuple[int, int, str]] = []
    kern: list[tuple[int, int, int, int, int]] = []  # start, end, stream, correlation, name
    copies: list[tuple[int, int, int, int, int]] = []  # start, end, stream, correlation, copyKind
    main0 = api.t - 10 * us
    api("cudaStreamCreate_v3020", 205 * ms)  # the context
    free = 0

    def allocate() -> None:
        for _ in range(streams):
            api("cudaHostAlloc_v3020", int(alloc_ms * ms))
            api("cudaMalloc_v3020", int(1.5 * ms))

    def release() -> None:
        for _ in range(streams):
            api("cudaFree_v3020", 400 * us)
        for _ in range(streams):
            api("cudaFreeHost_v3020", 2 * ms)

    def copy(stream: int, kind: int) -> None:
        nonlocal free
        c = api("cudaMemcpyAsync_v3020", 15 * us)
        free = max(free, api.t) + int(idle_us * us)
        copies.append((free, free + int(copy_ms * ms), stream, c, kind))
        free += int(copy_ms * ms)

    def sync_all(call: str = "cudaStreamSynchronize_v3020") -> None:
        api.row(call, api.t, free + 5 * us)
        api.t = free + 30 * us

    @contextmanager
    def one_test(name: str) -> Iterator[None]:
        """One test of the program, in its range ``name``: its buffers allocated, the body's work, its buffers
        freed."""
        a = api.t
        allocate()
        yield
        release()
        nvtx.append((a, api.t, name))

    with one_test(phases[0]):  # the first test: upload, kernel, read-back per stream
        for s in range(streams):
            copy(14 + s, 1)
            c = api("cudaLaunchKernel_v7000", 10 * us)
            free += int(idle_us * us)
            kern.append((free, free + int(kernel_ms * ms), 14 + s, c, strings("test")))
            free += int(kernel_ms * ms)
            copy(14 + s, 2)
        sync_all()
    api.t += 10 * ms
    with one_test(phases[1]):  # the second test: copies only, in two halves the host pauses between
        for s in range(streams):
            copy(19 + s, 1)
            copy(19 + s, 2)
            if copy_halves and s == streams // 2:
                sync_all()
                api.t += 2 * ms
        sync_all()
    api.t += 10 * ms
    with one_test(phases[2]):  # the third test: a kernel per stream, one of them long, waited on by events
        start = max(free, api.t)
        for s in range(streams):
            c = api("cudaLaunchKernel_v7000", 10 * us)
            dur = int((long_ms if s == 2 else kernel_ms * (s + 1)) * ms)
            kern.append((start + s * 50 * us, start + s * 50 * us + dur, 24 + s, c, strings(f"test{s}")))
            free = max(free, start + s * 50 * us + dur)
        sync_all("cudaEventSynchronize_v3020")
    nvtx.append((main0, api.t + 10 * us, "main"))
    stop = api.t + 60 * ms
    _insert_loop_rows(con, api, (gpid, gtid), nvtx, kern, copies, (2, 1, 1, 1024, 1, 1))
    _finish_one(con, strings, stop, (gpid, pid, gtid), GTX_1060_MAX_Q, program="ParallelKernelsTest.exe",
                thread="ParallelKernelsTest.exe")
    return {"phases": list(phases), "passes": 1, "copies": len(copies), "kernels": len(kern)}


# --------------------------------------------------------------------------- h37-hostalloc32: pinned memory in a loop


def write_pinned_loop(path: str, iterations: int = 8, pin_ms: float = 6.0, unpin_ms: float = 3.0,
                      device_ms: float = 0.0, kernel_ms: float = 4.0, copy_ms: float = 1.0) -> dict:
    """Write the export of a loop that pins its host buffer every iteration (an NVTX range ``iteration`` each):
    ``cudaHostAlloc`` (``pin_ms``), an upload from it, a kernel (``kernel_ms``), a read-back into it, a
    ``cudaStreamSynchronize``, then ``cudaFreeHost`` (``unpin_ms``); with ``device_ms`` > 0 a ``cudaMalloc`` and a
    ``cudaFree`` of that length each around the work too, and with ``pin_ms`` = ``unpin_ms`` = 0 no pinned call at
    all (the device allocator alone: the control).  The GPU is idle through every allocator call: the host makes them
    between one iteration's read-back and the next upload.

    Return the truth: the GPU's idle per iteration inside the allocator's calls (``alloc_ms``), of it the pinned
    calls' (``pinned_ms``), the calls per iteration by name."""
    us, ms = 1000, 1_000_000
    pid = 4242
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 50 * ms, gap=20 * us)
    api("cudaStreamCreate_v3020", 150 * ms)  # the context, before the loop
    nvtx: list[tuple[int, int, str]] = []
    kern: list[tuple[int, int, int, int, int]] = []
    copies: list[tuple[int, int, int, int, int]] = []
    per_iter: dict[str, int] = {}

    def call(name: str, dur_ms: float) -> None:
        if dur_ms > 0:
            api(name, int(dur_ms * ms))
            per_iter[name.split("_v")[0]] = per_iter.get(name.split("_v")[0], 0) + 1

    for _ in range(iterations):
        a = api.t
        call("cudaHostAlloc_v3020", pin_ms)
        call("cudaMalloc_v3020", device_ms)
        c = api("cudaMemcpyAsync_v3020", 15 * us)
        t = api.t
        copies.append((t, t + int(copy_ms * ms), 7, c, 1))
        t += int(copy_ms * ms)
        c = api("cudaLaunchKernel_v7000", 10 * us)
        kern.append((t, t + int(kernel_ms * ms), 7, c, strings("scale_kernel")))
        t += int(kernel_ms * ms)
        c = api("cudaMemcpyAsync_v3020", 15 * us)
        copies.append((t, t + int(copy_ms * ms), 7, c, 2))
        t += int(copy_ms * ms)
        api.row("cudaStreamSynchronize_v3020", api.t, t + 5 * us)
        api.t = t + 30 * us
        call("cudaFree_v3020", device_ms)
        call("cudaFreeHost_v3020", unpin_ms)
        nvtx.append((a, api.t, "iteration"))
    stop = api.t + 20 * ms
    _insert_loop_rows(con, api, (gpid, gtid), nvtx, kern, copies, (2, 40, 1, 256, 1, 1))
    _finish_one(con, strings, stop, (gpid, pid, gtid), GTX_1060_MAX_Q, program="pinned_loop",
                thread="pinned_loop")
    calls = {n: c // iterations for n, c in per_iter.items()}
    return {"iterations": iterations, "alloc_ms": pin_ms + unpin_ms + 2 * device_ms,
            "pinned_ms": pin_ms + unpin_ms, "calls": calls}


def write_copy_bursts(path: str, iterations: int = 6, copy_ms: float = 2.0, pause_ms: float = 20.0,
                      idle_us: float = 100.0, check_kernel: bool = False) -> dict:
    """Write the export of a copy bandwidth sweep: ``iterations`` passes, pass ``i`` uploading ``i + 1`` chunks of
    16 MB from pinned memory and reading them back (``copy_ms`` each, the GPU idle ``idle_us`` before each), waited on
    by ``cudaStreamSynchronize``, the host pausing ``pause_ms`` between passes (filling its buffer); no kernel, or with
    ``check_kernel`` one ``verify`` kernel after the last pass.  Return the truth: the passes are the steps -- the
    copies alone repeat, and are the work (h37-hostalloc32's control: a copy's name is its direction and memory
    kinds, but bursts of copies alone repeat by them)."""
    us, ms = 1000, 1_000_000
    pid = 5150
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 50 * ms, gap=20 * us)
    api("cudaStreamCreate_v3020", 150 * ms)  # the context, before the loop
    copies: list[tuple[int, int, int, int]] = []  # start, end, correlation, copyKind
    kern: list[tuple[int, int, int, int]] = []
    for i in range(iterations):
        api.t += int(pause_ms * ms)
        t = api.t
        for kind in [1] * (i + 1) + [2] * (i + 1):
            c = api("cudaMemcpyAsync_v3020", 15 * us)
            t = max(t, api.t) + int(idle_us * us)
            copies.append((t, t + int(copy_ms * ms), c, kind))
            t += int(copy_ms * ms)
        api.row("cudaStreamSynchronize_v3020", api.t, t + 5 * us)
        api.t = t + 30 * us
    if check_kernel:
        api.t += int(pause_ms * ms)
        c = api("cudaLaunchKernel_v7000", 10 * us)
        kern.append((api.t, api.t + 3 * ms, c, strings("verify")))
        api.row("cudaStreamSynchronize_v3020", api.t, api.t + 3 * ms + 5 * us)
        api.t += 3 * ms + 30 * us
    stop = api.t + 20 * ms
    _insert_loop_rows(con, api, (gpid, gtid), [], [(s, e, 7, c, n) for s, e, c, n in kern],
                      [(s, e, 7, c, k) for s, e, c, k in copies], (2, 40, 1, 256, 1, 1))
    _finish_one(con, strings, stop, (gpid, pid, gtid), GTX_1060_MAX_Q, program="bandwidth_test",
                thread="bandwidth_test")
    return {"iterations": iterations, "copies": len(copies), "kernels": len(kern)}



# --------------------------------------------------------------------------- h37-bursts34: kernels named afresh


def write_renamed_kernel_loop(path: str, iterations: int = 6, kernels: int = 4, kernel_ms: float = 2.0,
                              copy_ms: float = 1.0, pause_ms: float = 20.0, fresh_streams: bool = False,
                              plan: list[tuple[int, int, int]] | None = None) -> dict:
    """Write the export of a loop whose kernels are compiled and named afresh every iteration (``fused_{i}_{j}``: a
    code generator that numbers what it emits): each iteration uploads its 16 MB batch from pinned memory, runs
    ``kernels`` kernels of ``kernel_ms``, reads 16 MB back, syncs with ``cudaStreamSynchronize``, and the host pauses
    ``pause_ms`` (preparing the next batch and compiling its kernels); every transfer and kernel on stream 7.  With
    ``fresh_streams`` (the control) each iteration runs on a stream of its own (``14 + i``): a program of phases run
    once each, as a test suite's, whose transfers are alike only by direction and size.  ``plan`` (h37-bursts35): per
    iteration (upload bytes, kernels, read-back bytes) in place of 16 MB, ``kernels`` and 16 MB each time (``iterations``
    is then its length): a loop over batches of varying length, or phases of different work.

    Return the truth: ``iterations`` iterations of ``iteration_ms`` each where the stream is shared (one loop moving
    the same data every time, whatever its kernels are called), one pass (``passes`` 1) with ``fresh_streams``."""
    us, ms = 1000, 1_000_000
    pid = 7331
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 50 * ms, gap=20 * us)
    api("cudaStreamCreate_v3020", 150 * ms)  # the context, before the loop
    kern: list[tuple[int, int, int, int, int]] = []
    copies: list[tuple[int, int, int, int, int]] = []
    plan = plan or [(16_000_000, kernels, 16_000_000)] * iterations
    sizes: list[int] = []
    for i, (up, n_kernels, back) in enumerate(plan):
        api.t += int(pause_ms * ms)
        stream = 14 + i if fresh_streams else 7
        c = api("cudaMemcpyAsync_v3020", 15 * us)
        t = api.t + 20 * us
        copies.append((t, t + int(copy_ms * ms), stream, c, 1))
        sizes += [up, back]
        t += int(copy_ms * ms)
        for j in range(n_kernels):
            c = api("cudaLaunchKernel_v7000", 10 * us)
            t = max(t, api.t) + 20 * us
            kern.append((t, t + int(kernel_ms * ms), stream, c, strings(f"fused_{i}_{j}")))
            t += int(kernel_ms * ms)
        c = api("cudaMemcpyAsync_v3020", 15 * us)
        t += 20 * us
        copies.append((t, t + int(copy_ms * ms), stream, c, 2))
        t += int(copy_ms * ms)
        api.row("cudaStreamSynchronize_v3020", api.t, t + 5 * us)
        api.t = t + 30 * us
    stop = api.t + 20 * ms
    _insert_loop_rows(con, api, (gpid, gtid), [], kern, copies, (2, 40, 1, 256, 1, 1), sizes)
    _finish_one(con, strings, stop, (gpid, pid, gtid), GTX_1060_MAX_Q, program="renamed_loop", thread="renamed_loop")
    iteration_ms = pause_ms + 2 * copy_ms + kernels * kernel_ms
    return {"iterations": len(plan), "passes": 1 if fresh_streams else len(plan), "iteration_ms": iteration_ms,
            "kernel_names": len({n for *_, n in kern})}

def _insert_loop_rows(con: sqlite3.Connection, api: _Calls, ids: tuple[int, int], nvtx: list[tuple[int, int, str]],
                      kern: list[tuple[int, int, int, int, int]], copies: list[tuple[int, int, int, int, int]],
                      dims: tuple[int, int, int, int, int, int], sizes: list[int] | None = None) -> None:
    """The rows a one-thread test loop's export holds: its runtime calls (``api``), NVTX ranges (start, end, text),
    kernels (start, end, stream, correlation, name's string id; every one of grid and block ``dims``) and copies
    (start, end, stream, correlation, copyKind: 1 an upload from pinned memory, 2 a read-back into it) of 16 MB each,
    or of ``sizes`` (bytes per copy), ``ids`` the process's global pid and the thread's global tid.  One home for the
    generators' tails (h37-bursts34)."""
    gpid, gtid = ids
    api.insert(con, gtid)
    if nvtx:  # an export without NVTX ranges has no table for them
        con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                        "VALUES (?,?,59,?,?,0)", [(s, e, text, gtid) for s, e, text in nvtx])
    con.executemany(_KERNEL_INSERT, [_kernel_row(s, e, c, gpid, n, 32, dims[:3], dims[3:], j, stream=st)
                                     for j, (s, e, st, c, n) in enumerate(kern)])
    sizes = sizes or [16_000_000] * len(copies)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
                    "correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,?,?,?,?,?,?,?)",
                    [(s, e, st, c, gpid, n, k, 1 if k == 1 else 2, 2 if k == 1 else 1)
                     for (s, e, st, c, k), n in zip(copies, sizes)])


def write_graph_decode(path: str, warmup: int = 6, decode: int = 40, fillers: int = 8, period_us: float = 1440.0,
                       graph_kernels: int = 24, busy: float = 0.97, prefill_kernels: int = 60,
                       frame: str | None = "measure", measured_prefill: int | None = None,
                       prefill_syncs: int = 0, seed: int = 5, ranks: int = 1, rank_lag_us: float = 0.0) -> dict:
    """Write the export of a serving engine's decode loop shaped after YiconRain/profiling's SGLang captures
    (h37-serve34): one host thread runs an eager prefill (``prefill_kernels`` launches) and then launches one CUDA
    graph per decode iteration (``cudaGraphLaunch``, its ``graph_kernels`` nodes sharing the launch's correlation id),
    every ``period_us`` apart with a little jitter, the host's own scheduling between launches and a sync on the
    previous iteration's tokens, so the GPU runs the graph ``busy`` of each period and its bursts merge across
    iterations.  A warm-up generate (``warmup`` iterations) comes first; the user's one NVTX range ``frame`` holds the
    measured generate (``decode`` iterations; None: no range); ``fillers`` one-token generates (an eager pass each, synced) follow.
    ``measured_prefill``: the measured prefill's launches (a longer prompt than the fillers'; default
    ``prefill_kernels``).  ``prefill_syncs``: the measured prefill synchronizes after every that many launches (the host
    reading a layer's result, as a GDN layer's scan does; 0: once at its end), so its GPU work falls into bursts of
    the same layer kernels.  ``ranks``: that many processes in the one export (one ``nsys`` over a tensor- or
    data-parallel launcher), each its own GPU (device r) running the same engine, rank r ``r * rank_lag_us`` later
    and with its own jitter (seed ``seed + r``), its own range on its own thread.  Return the truth by construction:
    the iterations inside the range and their mean period (ms; rank 0's, each rank's in ``rank_step_ms``), the
    range's span (ms; each rank's in ``rank_range_ms``), and each rank's measured graphs' first kernels' starts
    (``rank_graph_starts_ms``: where each GPU's iteration starts)."""
    us, ms = 1000, 1_000_000
    pid = 8282
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, KERNEL_DDL, GPU_DDL], pid)
    gpu = Gpu(H100["name"], H100["busLocation"], H100["l2CacheSize"], H100["totalMemory"], H100["memoryBandwidth"],
              H100["clockRate"], H100["smCount"], H100["chipName"], 1, (9, 0))
    stop, periods, spans, gpu_starts = 0, [], [], []
    for rank in range(ranks):
        r_pid = pid + rank
        api = _Calls(strings, SESSION_START_NS + 5 * ms + int(rank * rank_lag_us * us), gap=4 * us)
        api.corr = rank * 1_000_000
        end, (launches, firsts), span = _graph_decode_rank(
            con, strings, api, rank, (_gid(r_pid, r_pid), _gid(r_pid)), np.random.default_rng(seed + rank),
            warmup, decode, fillers, period_us, graph_kernels, busy, prefill_kernels, frame, measured_prefill,
            prefill_syncs)
        stop = max(stop, end)
        periods.append(float(np.diff(launches).mean()) / ms if decode > 1 else None)
        spans.append(span / ms)
        gpu_starts.append([t / ms for t in firsts])
        if rank:
            con.execute("INSERT INTO TARGET_INFO_GPU VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (0, rank, gpu.name, gpu.bus, 1, gpu.l2_bytes, gpu.memory, gpu.bandwidth, gpu.clock_hz,
                         gpu.sms, 0, f"GPU-0000000{rank}", 0, gpu.chip, 0, gpu.nvml_id, *gpu.cc))
            con.execute("INSERT INTO ThreadNames VALUES (?, 0, ?)", (strings("python"), _gid(r_pid, r_pid)))
            con.execute("INSERT INTO PROCESSES VALUES (?, ?, ?)", (_gid(r_pid), r_pid, "python"))
    _finish_one(con, strings, stop, (gpid, pid, gtid), gpu, program="python", thread="python", copy_enums=False)
    return {"steps": decode, "step_ms": periods[0], "range_ms": spans[0], "rank_step_ms": periods,
            "rank_range_ms": spans, "rank_graph_starts_ms": gpu_starts}


def _graph_decode_rank(con: sqlite3.Connection, strings: _Strings, api: _Calls, rank: int, ids: tuple[int, int],
                       rng: np.random.Generator, warmup: int, decode: int, fillers: int, period_us: float,
                       graph_kernels: int, busy: float, prefill_kernels: int, frame: str | None,
                       measured_prefill: int | None, prefill_syncs: int
                       ) -> tuple[int, tuple[list[int], list[int]], int]:
    """One process of :func:`write_graph_decode` (its parameters) on GPU ``rank``, its calls made by ``api`` on thread
    ``ids[0]`` of process ``ids[1]``: its calls, range and kernels into ``con``.  Returns when its capture may stop
    (ns), its measured graph launches' host starts and their graphs' first kernels' starts (ns), and its range's span
    (ns)."""
    us, ms = 1000, 1_000_000
    gtid, gpid = ids
    kern: list[tuple[int, int, int, int, int | None]] = []
    free = api.t
    period = int(period_us * us)
    launches: list[int] = []
    firsts: list[int] = []

    def prefill(n: int = prefill_kernels, tile: str = "", every: int = 0) -> None:
        nonlocal free  # a longer prompt's GEMMs pick other tiles (``tile``)
        for k in range(n):
            ks = max(api.t + 9 * us, free)
            free = ks + 60 * us
            kern.append((ks, free, api("cudaLaunchKernel", 6 * us), strings(f"prefill{tile}_{k % 6}"), None))
            if every and (k + 1) % every == 0 and k + 1 < n:  # the host reads the layer's result
                api.row("cudaStreamSynchronize", api.t, free + 2 * us)
                api.t = free + 120 * us
        api.row("cudaStreamSynchronize", api.t, free + 2 * us)
        api.t = free + 30 * us

    def iterations(n: int, mark: bool) -> None:
        nonlocal free
        for _ in range(n):
            t0 = api.t
            if mark:
                launches.append(t0)
            c = api("cudaGraphLaunch_v10000", 18 * us)
            ks = max(api.t + 5 * us, free)
            node = int(busy * period / graph_kernels)
            if mark:
                firsts.append(ks)
            for j in range(graph_kernels):
                kern.append((ks + j * node, ks + (j + 1) * node - 400, c, strings(f"decode_{j % 8}"), j + 1))
            prev, free = free, ks + graph_kernels * node
            for _ in range(int(rng.integers(3, 8))):  # the sampler's and the next batch's eager launches, as many
                ks = max(api.t + 5 * us, free)  # as the turn's requests need
                free = ks + 8 * us
                kern.append((ks, free, api("cudaLaunchKernel", 5 * us, then=15 * us), strings("sample"), None))
            api.row("cudaEventSynchronize", api.t, max(api.t, prev) + 2 * us)  # the previous iteration's tokens
            api.t = max(api.t, prev) + 40 * us
            api("cudaMemcpyAsync", 6 * us)
            api.t = max(api.t, t0 + period + int(rng.integers(-40, 40)) * us)

    prefill()
    iterations(warmup, False)
    api.t = max(api.t, free) + 3 * ms
    f0 = api.t
    prefill(measured_prefill or prefill_kernels, "_128x256" if measured_prefill else "", prefill_syncs)
    iterations(decode, True)
    api.row("cudaStreamSynchronize", api.t, free + 2 * us)
    api.t = free + 50 * us
    f1 = api.t
    for _ in range(fillers):
        api.t += 2 * ms
        prefill()
    api.insert(con, gtid)
    if frame is not None:
        con.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
                    "VALUES (?, ?, 59, ?, ?, 0)", (f0, f1, frame, gtid))
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, n, 64, (132,), (256,), j, device=rank, graph=(g, 1 if g else None))
                     for j, (a, b, c, n, g) in enumerate(kern)])
    return api.t + ms, (launches, firsts), f1 - f0


#: The tables :func:`pause_rank` moves, with the column that names a row's process (``globalTid`` or ``globalPid``).
_RANK_TABLES = (("CUPTI_ACTIVITY_KIND_RUNTIME", "globalTid"), ("NVTX_EVENTS", "globalTid"),
                ("CUPTI_ACTIVITY_KIND_KERNEL", "globalPid"), ("CUPTI_ACTIVITY_KIND_MEMCPY", "globalPid"),
                ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "globalPid"))


def pause_rank(path: str, rank: int, at_step: int, call: str, call_ms: float, helper: bool = False
               ) -> tuple[int, int]:
    """In an export :func:`write` made, rank ``rank``'s thread stops ``call_ms`` in one runtime call ``call`` just
    before its step ``at_step``: every row of that rank's process from the step's range on moves ``call_ms`` later
    (a range that encloses the pause, the capture's own, stretches), the other ranks' rows stay where they were.
    ``helper``: the call is made on another thread of the rank's process instead (a helper thread loading a module
    while the loop runs on), and nothing moves.  Returns the call's (start, end) ns.  Why: a rank alone paying a
    one-time cost mid-run (a module loaded for a new shape, a library handle created) -- another process's time,
    which no other rank's GPU waits on."""
    pid = 1000 + rank
    con = sqlitefile.connect(path)
    ((t0,),) = con.execute("SELECT start FROM NVTX_EVENTS WHERE text = ? AND (globalTid >> 24) & 16777215 = ?",
                           (f"train_step {at_step}", pid)).fetchall()
    d = int(call_ms * 1e6)
    for table, col in _RANK_TABLES if not helper else ():
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
            continue
        mine = f"(({col} >> 24) & 16777215) = ?"
        con.execute(f"UPDATE {table} SET end = end + ? WHERE {mine} AND start < ? AND end >= ?", (d, pid, t0, t0))
        con.execute(f"UPDATE {table} SET start = start + ?, end = end + ? WHERE {mine} AND start >= ?", (d, d, pid, t0))
    (name,) = con.execute("SELECT id FROM StringIds WHERE value = ?", (call,)).fetchone() or (None,)
    if name is None:
        name = con.execute("SELECT coalesce(max(id), 0) + 1 FROM StringIds").fetchone()[0]
        con.execute("INSERT INTO StringIds VALUES (?, ?)", (name, call))
    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, 999999, ?, 0, NULL)",
                (t0, t0 + d - 1_000, _gid(pid, pid + helper), name))
    if not helper:
        con.execute("UPDATE ANALYSIS_DETAILS SET duration = duration + ?, stopTime = stopTime + ?", (d, d))
    con.commit()
    con.close()
    return t0, t0 + d - 1_000


def write_rank_pause(path: str, ranks: int = 2, paused: int = 1, call: str = "cuModuleLoadData",
                     call_ms: float = 30.0, at_step: int = 6, helper: bool = False, **kw: object) -> dict:
    """A data-parallel job of ``ranks`` ranks (:func:`write`, one process per GPU, no collective: the ranks do not
    wait on each other) whose rank ``paused`` alone stops ``call_ms`` in ``call`` before its step ``at_step``, or
    makes that call on a helper thread (:func:`pause_rank`).  Truth: every other rank's GPU reads as it does with no
    such call (h37-probe42r)."""
    job = NsysJob(ranks=ranks, **kw)  # type: ignore[arg-type]
    truth = write(path, job)
    s, e = pause_rank(path, paused, at_step, call, call_ms, helper)
    return {"steps": truth.steps, "step_ms": truth.step_ms, "paused": paused, "call": call, "call_ns": (s, e)}


# ------------------------------------------------------------- a window of the program's tear-down (issue 37)

#: The calls a CUDA program's tear-down makes after its loop, in order, as (name, count, ns each): the sync before
#: the results are read, the device and pinned frees, the streams', events' and handles' destruction, the modules
#: unloaded, and ``cudaDeviceReset`` (which destroys the primary context: tens of ms).
TEARDOWN_CALLS = (("cudaDeviceSynchronize_v3020", 1, 40_000), ("cudaFree_v3020", 12, 180_000),
                  ("cudaFreeHost_v3020", 2, 2_500_000), ("cudaEventDestroy_v3020", 4, 3_000),
                  ("cudaStreamDestroy_v5050", 4, 25_000), ("cuModuleUnload", 3, 400_000),
                  ("cudaDeviceReset_v3020", 1, 60_000_000))


def write_teardown_window(path: str, nccl: bool = True, gpu: Gpu | None = None, reset: bool = True) -> dict:
    """Write the export of a window that opened after the program's loop (``nsys profile --delay`` past its last step,
    or a window left open to the program's exit): its tear-down alone -- :data:`TEARDOWN_CALLS` (the frees of
    ``del model`` / ``cudaFree``, ``cudaStreamDestroy``, ``cuModuleUnload``, ``cudaDeviceReset`` where ``reset``) and,
    where ``nccl``, NCCL's ``ncclCommDestroy`` as NCCL records it: an NVTX range in its own domain ``NCCL`` (NCCL's
    ``src/init.cc`` opens ``NVTX3_FUNC_RANGE_IN(nccl_domain)`` in each API call, so the range bears the function's
    name) -- and no kernel, copy or fill.  Return the truth: the window is the program's tear-down, after its loop, not
    start-up (no context created, no call that makes anything); its calls and their ms."""
    us, ms = 1000, 1_000_000
    pid = 6161
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, NVTX_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 2 * ms, gap=8 * us)
    nvtx = []
    for name, n, ns in TEARDOWN_CALLS:
        if name.startswith("cudaDeviceReset") and not reset:
            continue
        if nccl and name.startswith("cudaEventDestroy"):  # the communicator first: NCCL frees its buffers inside
            a = api.t
            for _ in range(4):
                api("cudaFree_v3020", 150 * us)
            api("cudaStreamDestroy_v5050", 20 * us)
            nvtx.append((a, api.t, "ncclCommDestroy"))
            api.t += 20 * us
        for _ in range(n):
            api(name, ns)
    stop = api.t + 2 * ms
    api.insert(con, gtid)
    rows = [(SESSION_START_NS, None, 75, None, None, None, "NCCL", gtid, None, None, 1) + (None,) * 9] if nvtx else []
    rows += [(a, b, 59, None, None, None, text, gtid, None, None, 1) + (None,) * 9 for a, b, text in nvtx]
    if rows:
        con.executemany("INSERT INTO NVTX_EVENTS VALUES (" + ",".join("?" * 20) + ")", rows)
    _finish_one(con, strings, stop, (gpid, pid, gtid), gpu or A100_SXM4_40GB, program="python3", thread="python3")
    return {"window": "teardown", "calls": len(api.rows), "nccl_destroy": len(nvtx),
            "call_ms": sum(b - a for a, b, *_ in api.rows) / ms}


def open_rank_late(path: str, rank: int, steps: int = 1) -> None:
    """In an export :func:`write` made, rank ``rank``'s capture opens ``steps`` steps late: every row of that rank's
    process before its ``train_step {steps}`` range is deleted (the other ranks' stay).  Why: ranks start their
    profilers on their own (``nsys profile`` per rank under ``mpirun``/``torchrun``, or a ``cudaProfilerStart`` each
    rank reaches in its own time), so one capture holds fewer steps of one rank than of another (h37-probe43r)."""
    pid = 1000 + rank
    con = sqlitefile.connect(path)
    ((t0,),) = con.execute("SELECT start FROM NVTX_EVENTS WHERE text = ? AND (globalTid >> 24) & 16777215 = ?",
                           (f"train_step {steps}", pid)).fetchall()
    _delete_rank_rows(con, pid, "start < ?", t0)


def close_rank_early(path: str, rank: int, steps: int = 1) -> None:
    """In an export :func:`write` made, rank ``rank``'s capture closes ``steps`` steps early: every row of that rank's
    process from its ``train_step {n - steps}`` range on (``n`` its steps) is deleted, the other ranks' stay; the GPU
    work its kept steps launched stays (each step ends with its ``.item()`` sync, so none runs past the close).  Why:
    the mirror of :func:`open_rank_late` -- a rank's profiler stops on its own (``nsys profile --duration`` per rank, a
    ``cudaProfilerStop`` each rank reaches in its own time, a buffer that filled), so one capture holds fewer last
    steps of one rank than of another."""
    pid = 1000 + rank
    con = sqlitefile.connect(path)
    texts = [t for (t,) in con.execute("SELECT text FROM NVTX_EVENTS WHERE text LIKE 'train_step %' "
                                       "AND (globalTid >> 24) & 16777215 = ?", (pid,))]
    last = max(int(t.split()[-1]) for t in texts)
    ((t0,),) = con.execute("SELECT start FROM NVTX_EVENTS WHERE text = ? AND (globalTid >> 24) & 16777215 = ?",
                           (f"train_step {last + 1 - steps}", pid)).fetchall()
    _delete_rank_rows(con, pid, "start >= ?", t0)


def _delete_rank_rows(con: sqlite3.Connection, pid: int, when: str, t0: int) -> None:
    """Delete, from every table of :data:`_RANK_TABLES` the export holds, process ``pid``'s rows that match ``when``
    (``"start < ?"``: before its capture opened; ``"start >= ?"``: after it closed) at ``t0`` ns; commit and close."""
    for table, col in _RANK_TABLES:
        if con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
            con.execute(f"DELETE FROM {table} WHERE (({col} >> 24) & 16777215) = ? AND {when}", (pid, t0))
    con.commit()
    con.close()


def write_early_closed_rank(path: str, rank: int = 1, steps: int = 1, **kw: object) -> dict:
    """:func:`write_rank_pause` whose rank ``rank`` closed its capture ``steps`` steps before the others
    (:func:`close_rank_early`).  Truth: every step it recorded reads as with no early close -- its GPU does the same
    work each step -- and its steps after the close are no steps of its GPU's."""
    truth = write_rank_pause(path, **kw)
    close_rank_early(path, rank, steps)
    return truth


def write_late_rank_pause(path: str, late: int = 1, steps: int = 1, **kw: object) -> dict:
    """:func:`write_rank_pause` whose rank ``late`` opened its capture ``steps`` steps after the others
    (:func:`open_rank_late`).  Truth: every rank's steps are its own numbered ranges, as with no late start -- the
    late rank's GPU does the same work each step, and a paused rank's cost lies in its own step."""
    truth = write_rank_pause(path, **kw)
    open_rank_late(path, late, steps)
    return truth


# --------------------------------------------------------------------------- h37-nsys58: a CUDA trace never finalized

#: Nsight's end-of-session diagnostics about the CUDA trace (Nsight Systems 2025.5, cestwc/balinski-and-gomory-cuda
#: ``report6.sqlite``): what it says where a process's records may be incomplete, its count of the CUDA API events it
#: collected, the session's stop; and the count each process's CUPTI trace writes as it closes.
UNCLOSED_DIAGNOSTICS = ("Not all CUDA events might have been collected.", "Number of CUDA events collected: \t{n}.")
SESSION_STOPPED = "Profiling has stopped."
CUPTI_CLOSED = "Number of CUPTI events produced: \t{n}, CUPTI buffers: 3."


def write_unclosed_trace(path: str, steps: int = 20, ran_ms: float = 5400.0, closed: bool = False) -> dict:
    """Write the export of a CUDA program whose session stopped before its CUDA trace was finalized, shaped after
    cestwc's solver (``build/test1 100`` under Nsight 2025.5): the start-up calls of :func:`write_window` ("startup")
    are all its CUDA records; after them the program ran its ``steps`` (its standard output, kept in the export, prints
    ``Step 0`` to ``Step N-1``) for ``ran_ms``, its launching thread calling into the driver (an OS runtime trace's
    ``ioctl`` every 10 ms) -- and none of those steps' CUDA records were written: Nsight wrote that not all CUDA events
    might have been collected and that the session stopped, and no CUPTI count (the trace never closed).  With
    ``closed`` the control: the CUPTI count written after the stop, the trace closed -- its records are all the
    program made, a window that ended during start-up.  Return the truth: the window the job stage must read, and
    the ms the program ran on after its last CUDA record."""
    write_window(path, "startup", process="test1",
                 streams={"stdout": "Matrix size n = 100\n" + "".join(f"Step {i} \n" for i in range(steps)) + "\n\n"})
    con = sqlite3.connect(path)
    last, gtid = con.execute("SELECT max(end), globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()
    ms = 1_000_000
    calls = [(last + k * 10 * ms, last + k * 10 * ms + 300_000) for k in range(1, int(ran_ms / 10) + 1)]
    stop = calls[-1][1] + 300 * ms
    con.execute("UPDATE ANALYSIS_DETAILS SET duration = ?, stopTime = ?", (stop - SESSION_START_NS, stop))
    con.commit()
    con.close()
    add_os_runtime(path, [(a, b, "ioctl", gtid) for a, b in calls])
    con = sqlite3.connect(path)
    con.execute(DIAG_DDL)
    n = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    rows = [(190 * ms, 3, 2 if "Not all" in t else 1, t.format(n=n)) for t in UNCLOSED_DIAGNOSTICS]
    rows.append((stop - SESSION_START_NS, 3, 1, SESSION_STOPPED))
    if closed:
        rows.append((stop - SESSION_START_NS + 500 * ms, 1, 1, CUPTI_CLOSED.format(n=n + 2)))
    con.executemany("INSERT INTO DIAGNOSTIC_EVENT VALUES (?, 1, ?, ?, ?, ?)",
                    [(t, src, sev, text, _gid(4242)) for t, src, sev, text in rows])
    con.executemany("INSERT INTO META_DATA_CAPTURE VALUES (?, ?)",
                    [("RUN_DURATION_MS", str(round((stop - SESSION_START_NS) / ms) + 1)),
                     ("PROCESS_0:CUDA_FLUSH_PERIOD", "0")])
    con.commit()
    con.close()
    return {"window": "startup" if closed else "unclosed", "steps": steps,
            "ran_on_ms": (calls[-1][1] - last) / ms}


# --------------------------------------------------------------------------- h37-nsys59: a solver's counted steps

def write_counted_solver(path: str, turns: int = 7, branch_every: int = 3, printed: bool = True,
                         body: int = 10, branch: int = 4, syncs: int = 3, kernel_us: float = 20.0,
                         layer: int = 0, read: str = "sync", fault_us: float = 0.0, gpu_fault_us: float = 0.0,
                         gpu_fault_every: int = 1, sleep_us: float = 0.0) -> dict:
    """Write the export of a native solver shaped after cestwc/balinski-and-gomory-cuda's ``report8`` (an RTX 3090,
    ``build/test1 4``): ``turns`` iterations of a loop whose body launches ``body`` tiny kernels, the host waiting for
    them (``cudaDeviceSynchronize``) after every ``body // syncs`` launches and after the last; after every
    ``branch_every``-th turn but the last a branch some iterations take launches ``branch`` more kernels (a search)
    and waits for them.  With ``printed`` the program's standard output (``ProcessStreams``) prints "Step i" at each
    turn, "Solver has converged after N steps." and its time.  The launch sequence then repeats exactly every
    ``branch_every`` turns and the branch, never every turn.  ``layer``: the body is a model's call of
    ``body // layer`` layers of ``layer`` kernels each (the same kernels every layer, a sync after each with
    ``syncs`` = the layers): no kernel launches once a turn.  ``read``: how the host reads its flag after each
    turn's last launch -- ``"sync"`` a ``cudaDeviceSynchronize``; ``"copy"`` no sync but a blocking
    ``cudaMemcpyFromSymbol`` of 4 bytes to the host (cestwc ``report16``); ``"managed"`` no call at all: a plain load
    of managed memory, whose only record is the driver's page migration to the host (correlation id 0; ``report7``).
    ``fault_us`` (with ``"managed"``): the load's page fault holds the thread off the CPU that long before its page
    comes back (``SCHED_EVENTS``; ``report7``'s 18-710 us), and the program makes no other wait.  ``gpu_fault_us``:
    each turn's first kernel touches the flag's page the host holds and waits that long for it, its page's migration to
    the GPU (Unified Memory, page fault) ending 1 us before the kernel does (``report7``'s ``reset_d_changed``: 1.15 us
    alone, 45-419 us with a page moving under it).  ``gpu_fault_every``: only every that many turns' first kernel
    faults (the turns ``i % gpu_fault_every == 0``), the others' runs of it fault-free: its own time shown apart from
    the fault's (h37-copy63).  ``sleep_us``: after each turn's first sync the thread sleeps that long off the CPU in no
    read (a timer, a socket): a wait for a source outside the capture beside the reads' (h37-review64).
    Return the truth: the turns' starts (each turn's first body launch, ns on the host clock), the mean turn's
    length from one start to the next (ms) and the thread's time off the CPU in its reads a turn (us)."""
    us = 1000
    pid = 5151
    copied = read != "sync" or bool(gpu_fault_us)
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, KERNEL_DDL, GPU_DDL] + [MEMCPY_DDL] * copied
                                         + [SCHED_DDL] * bool(fault_us or sleep_us), pid)
    switches: list[tuple[int, int, int]] = []  # (time, switched in, thread): the faults' sleeps
    api = _Calls(strings, SESSION_START_NS + 2_000 * us, gap=6 * us)
    kern: list[tuple[int, int, int, int]] = []
    copies: list[tuple[int, int, int, int, int]] = []  # (start, end, correlation id, copy kind, cause)
    names = [strings(f"body_kernel_{k}") for k in range(body)] + [strings(f"search_kernel_{k}") for k in range(branch)]
    free = api.t
    every = max(1, body // max(1, syncs))

    def launch(k: int) -> None:
        nonlocal free
        start = max(api.t + 5 * us, free)
        free = start + int(kernel_us * us)
        if gpu_fault_us and k == 0 and len(opens) % gpu_fault_every == 1 % gpu_fault_every:  # waits for the page
            free += int(gpu_fault_us * us)
            copies.append((free - 3 * us, free - us, 0, UVM_HTOD, CAUSE_COHERENCE))
        kern.append((start, free, api("cudaLaunchKernel", 5 * us), k % layer if layer and k < body else k))

    def wait(how: str = "sync") -> None:
        done = max(api.t + 2 * us, free + 3 * us)
        if how == "copy":  # the read's copy runs once the queue drains; the call returns after it
            copies.append((done - 2 * us, done, api.row("cudaMemcpyFromSymbol", api.t, done + 2 * us), 2, 0))
            done += 2 * us
        elif how == "managed":  # the host's load faults: the driver moves the page once the GPU let go of it
            if fault_us:  # the thread asleep in the fault until its page comes back
                switches.extend([(done, 0, gtid), (done + int(fault_us * us), 1, gtid)])
                done += int(fault_us * us)
            copies.append((done, done + 2 * us, 0, UVM_DTOH, CAUSE_COHERENCE))
            done += 4 * us
        else:
            api.row("cudaDeviceSynchronize", api.t, done)
        api.t = done + 30 * us  # the host reads a flag back and prints its line

    def sleep() -> None:
        switches.extend([(api.t, 0, gtid), (api.t + int(sleep_us * us), 1, gtid)])
        api.t += int(sleep_us * us) + 5 * us

    opens = []
    for i in range(turns):
        opens.append(api.t)
        for k in range(body):
            launch(k)
            if k == body - 1:
                wait(read)
            elif (k + 1) % every == 0:
                wait()
                if sleep_us and k + 1 == every:
                    sleep()
        if (i + 1) % branch_every == 0 and i < turns - 1:
            for k in range(branch):
                launch(body + k)
            wait()
    stop = api.t + 1_000 * us
    api.insert(con, gtid)
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, names[k], 1, (16,), (1,), j)
                     for j, (a, b, c, k) in enumerate(kern)])
    if copies:
        con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
                        "correlationId, globalPid, bytes, copyKind, srcKind, dstKind, migrationCause) "
                        "VALUES (?,?,0,1,7,?,?,4,?,?,?,?)",
                        [(a, b, c, gpid, kind, *((7, 7) if kind in (UVM_DTOH, UVM_HTOD) else (2, 0)), cause or None)
                         for a, b, c, kind, cause in copies])
    if switches:
        con.executemany("INSERT INTO SCHED_EVENTS VALUES (?, 2, ?, ?, 0, NULL)", switches)
    if printed:
        con.execute("CREATE TABLE IF NOT EXISTS ProcessStreams (globalPid INTEGER NOT NULL, filenameId INTEGER NOT "
                    "NULL, contentId INTEGER NOT NULL)")
        out = ("Matrix size n = 4\n" + "".join(f"Step {i} \nd_changed, 0\n" for i in range(turns))
               + f"Solver has converged after {turns} steps.\nsolve() time: {(api.t - opens[0]) / 1e6:.5f} ms\n")
        con.execute("INSERT INTO ProcessStreams VALUES (?, ?, ?)", (
            gpid, strings(f"/tmp/nvidia/nsight_systems/streams/pid_{pid}_stdout.log"), strings(out)))
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="test1", thread="test1",
                copy_enums=copied, sync_enum=False,
                copy_kinds=_COPY_KINDS + [(UVM_HTOD, "Unified Host-to-Device"), (UVM_DTOH, "Unified Device-to-Host")])
    return {"turns": turns, "opens_ns": opens, "turn_ms": float(np.mean(np.diff(opens))) / 1e6,
            "fault_us_per_turn": fault_us if read == "managed" else 0.0,
            # each turn's first kernel, from its start to its page's arrival
            "page_wait_us_per_turn": kernel_us + gpu_fault_us - 1 if gpu_fault_us else 0.0,
            # what each fault added to its kernel: its wait, the kernel's own work apart (h37-copy63)
            "fault_stall_us": gpu_fault_us, "faulted_turns": [i for i in range(turns) if i % gpu_fault_every == 0]}


# ------------------------------------------------- h37-nvtx62: processes with NVTX ranges and no GPU work of their own


def unrecord_process(path: str, pid: int) -> dict[str, int]:
    """In an export (generated or real), process ``pid``'s CUDA side deleted: its rows of every CUDA activity table
    (``CUPTI_ACTIVITY_KIND_*``: runtime calls, kernels, copies, fills, syncs, events), by the column that names a row's
    process (``globalPid``, else ``globalTid``); its NVTX ranges, threads and process row kept -- as Nsight writes a
    rank whose CUDA trace was off or never injected beside ranks traced whole.  Returns the rows deleted, per table.
    Why: the job-scope reading of such a rank (h37-norank61 *Left* 1) needs its truth by construction."""
    con = sqlitefile.connect(path)
    gone: dict[str, int] = {}
    tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                        "AND name LIKE 'CUPTI_ACTIVITY_KIND_%'")]
    for t in tables:
        cols = [r[1] for r in con.execute(f'PRAGMA table_info("{t}")')]
        col = next((c for c in ("globalPid", "globalTid") if c in cols), None)
        if col is not None:
            n = con.execute(f'DELETE FROM "{t}" WHERE (({col} >> 24) & 16777215) = ?', (pid,)).rowcount
            if n:
                gone[t] = n
    con.commit()
    con.close()
    return gone


#: The NVTX ranges of :func:`write_beside_ranks`' launcher: a Python launch script's own blocks around starting the
#: job's processes and waiting for them -- none of the job's work.
LAUNCHER_RANGES = ("rendezvous", "start workers", "wait for workers")
#: ... and of its loader worker: the collate function's ops under ``emit_nvtx``, one of them (``aten::to``) among the
#: ops the ranks' work runs under too.
WORKER_RANGES = ("aten::stack", "aten::to", "aten::cat")


def write_beside_ranks(path: str, launcher: bool = True, worker: bool = True, unrecorded: int | None = None,
                       ranks: int = 2, **kw: object) -> dict:
    """A data-parallel job of ``ranks`` ranks (:func:`write`, one process and GPU each; ``kw`` its :class:`NsysJob`) with,
    where asked, processes beside them that ran no GPU work: a ``launcher`` (pid 900, ``python3``: its NVTX ranges
    :data:`LAUNCHER_RANGES` around the whole run, no CUDA call) and a loader ``worker`` (pid 1100, ``pt_data_worker``:
    :data:`WORKER_RANGES` before each step, no CUDA call); and, where ``unrecorded`` names a rank, that rank's CUDA
    side deleted (:func:`unrecord_process`), its NVTX ranges kept.  Truth by construction: the ranks are processes 1000
    on (1000 + rank), the launcher and the worker no rank of the job."""
    job = NsysJob(ranks=ranks, **kw)  # type: ignore[arg-type]
    truth = write(path, job)
    con = sqlitefile.connect(path)
    (t0, t1), = con.execute("SELECT min(start), max(end) FROM NVTX_EVENTS WHERE end IS NOT NULL").fetchall()
    rows, procs = [], []
    if launcher:
        gtid = _gid(900, 900)
        span = (t1 - t0) // len(LAUNCHER_RANGES)
        rows += [(t0 - 2_000_000 + k * span, t0 - 2_000_000 + (k + 1) * span - 1000, text, gtid)
                 for k, text in enumerate(LAUNCHER_RANGES)]
        procs.append((900, "python3"))
    if worker:
        gtid = _gid(1100, 1100)
        period = int(truth.step_ms * 1e6)
        for k in range(job.steps):
            a = t0 + k * period
            rows += [(a + j * 200_000, a + j * 200_000 + 150_000, f"{text}, seq = {k * 3 + j}, op_id = {k * 3 + j}", gtid)
                     for j, text in enumerate(WORKER_RANGES)]
        procs.append((1100, "pt_data_worker"))
    con.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?,?,59,?,?,0)",
                    rows)
    con.executemany("INSERT INTO PROCESSES VALUES (?, ?, ?)", [(_gid(p), p, name) for p, name in procs])
    con.commit()
    con.close()
    gone = unrecord_process(path, 1000 + unrecorded) if unrecorded is not None else {}
    return {"steps": truth.steps, "step_ms": truth.step_ms, "ranks": tuple(f"python3 (pid {1000 + r})" for r in range(ranks)),
            "not_ranks": tuple(f"{n} (pid {p})" for p, n in procs), "deleted": gone}


#: The name of :func:`write_layer_pass`'s per-layer range (``{i}``: the layer's index in its module path): FSDP's range
#: around each wrapped block's forward, as the shared 2xH100 FSDP export writes it (``fsdp_mfu_after``).
FSDP_LAYER_RANGE = "FSDP::pre_forward (blocks.{i}._checkpoint_wrapped_module)"


def write_layer_pass(path: str, iterations: int = 1, layers: int = 12, pause_after: tuple[int, ...] = (3, 7),
                     pause_ms: float = 3.0, layer_ms: float = 2.0, kernels: int = 8, between_ms: float = 6.0,
                     layer_range: str = FSDP_LAYER_RANGE, sync: bool = False, outer: str = "") -> dict:
    """An annotated Python thread (:class:`_RangedPython`) running ``iterations`` passes of a model of ``layers``
    layers, each layer's ``kernels`` kernels (``layer_ms`` of GPU work) launched inside a range named
    ``layer_range.format(i=layer)``; after the layers of ``pause_after`` the host pauses ``pause_ms`` in its own code
    (no range, no call: the GPU idle), and between two passes ``between_ms`` (the loop's own work); ``sync``: each
    layer's ``kernels`` kernels named apart (``layer_kernel_<j>``), the last waited for (``cudaDeviceSynchronize``), as a
    program that loads each layer's weights before it runs it does -- the same launch sequence once per layer, after
    the host's wait.  ``outer``: one range of that name around the whole run (a demo's own frame), else no range
    around the layers.  No step range.
    Truth by construction: ``iterations`` passes -- the host's pauses inside a pass cut it into bursts that are no
    iterations (each layer runs once a pass)."""
    out = _RangedPython(path, 7272, 5)
    f, kname = out.filled, out.strings(GEMM_BF16)
    names = [out.strings(f"layer_kernel_{j}") for j in range(kernels)] if sync else []

    def layer(f: _FilledRanges, kname: int, names: list[int]) -> None:
        if not names:  # the layer's kernels alike, launched at once
            f.work(layer_ms, kname, kernels)
            return
        for j, name in enumerate(names):  # a layer's own sequence of kernels, the last waited for
            f.work(layer_ms / kernels, name, 1, sync=j == len(names) - 1)

    firsts = []  # each pass's start: its first layer's range

    def run() -> None:
        for k in range(iterations):
            if k:
                f.api.t += int(between_ms * 1e6)
            firsts.append(f.api.t)
            for i in range(layers):
                f.ranged(layer_range.format(i=i), lambda: layer(f, kname, names))
                if i in pause_after:
                    f.api.t += int(pause_ms * 1e6)

    if outer:
        f.ranged(outer, run)
    else:
        run()
    end = f.api.t
    out.close()
    return {"passes": iterations, "layers": layers, "pauses": len(pause_after) * iterations,
            "period_ms": (firsts[1] - firsts[0]) / 1e6 if iterations > 1 else None,
            "pass_ms": (end - firsts[-1]) / 1e6}


# ------------------------------------------------------------- h37-huntnsys64: a sweep of one kernel's launch shapes


def write_launch_sweep(path: str, blocks: tuple[int, ...] = (16, 2, 4, 8, 16, 32), n: int = 1024,
                       kernel_ms: tuple[float, ...] | None = None, grid_of: Callable[[int], int] | None = None,
                       check_ms: float = 1.0, nbytes: int = 4 << 20) -> dict:
    """Write the export of a native benchmark shaped after kalfazed/tensorrt_starter's ``2.4-error-handler`` (an RTX
    3080): an ``n`` x ``n`` matmul run once per entry of ``blocks``, each run its own ``cudaMalloc`` x3, two blocking
    uploads of ``nbytes`` from pageable memory, a third ``cudaMalloc``, ONE launch of ``MatmulKernel`` with ``b`` x ``b`` threads a block over
    a grid of ``n / b`` x ``n / b`` blocks (``grid_of(b)`` blocks a side instead, where given), a blocking readback
    that waits for it, a ``cudaDeviceSynchronize``, ``cudaFree`` x3, then ``check_ms`` of the host's own compare.  ``kernel_ms``: each run's kernel
    time (default: the real runs', 1.18 ... 1.22 ms).  Every run is the same launch sequence, so the launches alone
    repeat with a period; its repeats are the program's configurations, not one loop's turns.
    Return the truth: each run's block (threads), blocks, threads in all and kernel ms."""
    us, ms = 1000, 1_000_000
    pid = 3080
    kernel_ms = kernel_ms or (1.18, 9.24, 2.90, 1.44, 1.17, 1.22)[:len(blocks)]
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, SYNC_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=4 * us)
    copies, kernels, syncs, runs = [], [], [], []
    api("cudaMalloc_v3020", 75 * ms)  # the context, in the first allocation
    for j, (b, k_ms) in enumerate(zip(blocks, kernel_ms)):
        if j:
            api("cudaMalloc_v3020", 50 * us)
        api("cudaMalloc_v3020", 45 * us)
        for _ in range(2):
            a = api.t
            c = api("cudaMemcpy_v3020", 260 * us)
            copies.append((a + 40 * us, a + 230 * us, c, 1, 0, 2))
        api("cudaMalloc_v3020", 48 * us)
        c = api("cudaLaunchKernel_v7000", 8 * us)
        ks = api.t
        side = grid_of(b) if grid_of else n // b
        kernels.append((ks, ks + int(k_ms * ms), c, side, b))
        a = api.t
        c = api("cudaMemcpy_v3020", 0)
        ds = ks + int(k_ms * ms) + 3 * us
        copies.append((ds, ds + 250 * us, c, 2, 2, 0))
        api.end_last(ds + 330 * us)
        api.t = ds + 340 * us
        a = api.t
        syncs.append((a + 400, a + 1400, api("cudaDeviceSynchronize_v3020", 2 * us)))
        for _ in range(3):
            api("cudaFree_v3020", 60 * us)
        api.t += int(check_ms * ms)  # the host compares the result with its own
        runs.append({"threads": b * b, "blocks": side * side, "total": side * side * b * b, "kernel_ms": k_ms})
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,?,?,?)",
                    [(a, e, c, gpid, nbytes, kind, src, dst) for a, e, c, kind, src, dst in copies])
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, "
                    "correlationId, globalPid, syncType, eventId) VALUES (?,?,0,1,4294967295,?,?,1,4294967295)",
                    [(a, e, c, gpid) for a, e, c in syncs])
    name = strings("MatmulKernel")
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, e, c, gpid, name, 40, (side, side), (b, b), j)
                     for j, (a, e, c, side, b) in enumerate(kernels)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_80GB_PCIE._replace(name="NVIDIA GeForce RTX 3080", sms=68),
                program="./trt-cuda", thread="trt-cuda")
    return {"runs": runs}


#: che30122/opensift's blur kernel as the RTX 3080 export names it: the program's own free function.
OWN_IMAGE_FILTER = ("convolution(cv::cuda::PtrStepSz<float>, cv::cuda::PtrStepSz<double>, cv::cuda::PtrStepSz<float>, "
                    "int, int, int, int)")


def write_image_filter(path: str, kernel: str = OWN_IMAGE_FILTER, kernel_ms: float = 97.8,
                       grid: tuple[int, int] = (31, 274), block: tuple[int, int] = (128, 8),
                       context_ms: float = 122.8, uploads: int = 3, upload_bytes: int = 16_747_420,
                       readback_bytes: int = 24_883_200, library: bool = False) -> dict:
    """Write the export of a native image filter shaped after che30122/opensift's ``diff_ver/one_kernel/report4.sqlite``
    (a SIFT Gaussian blur on an RTX 3080, no library call): ``cudaMallocPitch`` creating the context (``context_ms``),
    ``uploads`` blocking pageable ``cudaMemcpy2D`` of ``upload_bytes``, ONE launch of ``kernel`` (``grid`` x ``block``)
    running ``kernel_ms``, a blocking ``cudaMemcpy2D`` read-back that waits for it, ``cudaFree`` x3.  ``kernel``: the
    program's own free function by default; a library's name (cuDNN's) for the control, said by ``library`` (the
    caller's knowledge of whose kernel it wrote: only a library's is matrix-unit-eligible work by its convolution
    word -- a program's own in a namespace of its own, ``mylib::convolution``, is not).  Return the truth: the
    kernel's time, and ``library``."""
    us, ms = 1000, 1_000_000
    pid = 16723
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 240 * ms, gap=3 * us)
    copies = []
    api("cudaMallocPitch_v3020", int(context_ms * ms))
    for j in range(uploads):
        if j == 1:
            api("cudaMallocPitch_v3020", 150 * us)
        a = api.t
        dma = max(upload_bytes // 13_000, 10) * us // 1000  # ~13 GB/s, staged through pageable memory
        c = api("cudaMemcpy2D_v3020", dma + 40 * us)
        copies.append((a + 20 * us, a + 20 * us + dma, c, 1, upload_bytes))
    api("cudaMallocPitch_v3020", 150 * us)
    c_launch = api("cudaLaunchKernel_v7000", 680 * us)
    ks = api.t
    ke = ks + int(kernel_ms * ms)
    c = api("cudaMemcpy2D_v3020", 0)
    dma = readback_bytes // 13_000 * us // 1000
    copies.append((ke + 3 * us, ke + 3 * us + dma, c, 2, readback_bytes))
    api.end_last(ke + 3 * us + dma + 20 * us)
    api.t = ke + 3 * us + dma + 30 * us
    for _ in range(3):
        api("cudaFree_v3020", 290 * us)
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,?,0,2)",
                    [(a, e, c, gpid, nbytes, kind) for a, e, c, kind, nbytes in copies])
    name = strings(kernel)
    short = strings(kernel.split("(")[0].removeprefix("void ").split("<")[0].split("::")[-1])
    con.executemany(_KERNEL_INSERT, [_kernel_row(ks, ke, c_launch, gpid, name, 32, grid[:2], block[:2], 0, short=short,
                                                 dyn_shared=16384)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_80GB_PCIE._replace(name="GeForce RTX 3080", sms=68),
                program="./sift", thread="sift")
    return {"kernel_ms": kernel_ms, "library": library}


def write_refused_passes(path: str, refused: bool = True, kernel_ms: float = 4.0, image_bytes: int = 24_883_200,
                         pitched_bytes: int = 25_353_228, pause_ms: float = 2.1) -> dict:
    """Write the export of a separable image blur shaped after che30122/opensift's
    ``diff_ver/seperate_and_no_shared/report41.sqlite`` (an RTX 3080): the context in ``cudaHostAlloc`` (116 ms),
    then a row pass -- two pageable 2D uploads (``image_bytes``, ``pitched_bytes``), two ``cudaMemcpyToSymbol`` of the
    Gaussian's taps, ``conv_x``'s launch, ``cudaDeviceSynchronize``, a blocking 2D read-back -- and after ``pause_ms``
    of host time a column pass: one 2D upload, ``conv_y``'s launch, a blocking read-back; frees.  With ``refused``
    each launch returns 9 (cudaErrorInvalidConfiguration: a block over 1024 threads) and runs no kernel, as in the real
    file; else each runs ``kernel_ms``.  Return the truth: one pass of the program (its two passes are different
    kernels, run once each: no iteration), the refused launches, the kernels run."""
    us, ms = 1000, 1_000_000
    pid = 30122
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 233 * ms, gap=3 * us)
    api("cudaHostAlloc_v3020", 116 * ms)  # the context
    api("cudaMalloc_v3020", 64 * us)
    copies: list[tuple[int, int, int, int, int]] = []  # start, end, correlation, copyKind, bytes
    kern: list[tuple[int, int, int, int]] = []
    failed: list[int] = []

    def copy(kind: int, nbytes: int, call: str = "cudaMemcpy2D_v3020") -> None:
        dma = max(nbytes // 12_500, 1) * us  # ~12.5 GB/s staged through pageable memory
        a = api.t
        c = api(call, dma + 40 * us)
        copies.append((a + 20 * us, a + 20 * us + dma, c, kind, nbytes))

    def launch(name: str) -> None:
        c = api("cudaLaunchKernel_v7000", 700)
        if refused:
            failed.append(c)
            return
        kern.append((api.t, api.t + int(kernel_ms * ms), c, strings(name)))
        api.t += int(kernel_ms * ms)

    api("cudaMallocPitch_v3020", 2292 * us)
    copy(1, image_bytes)
    api("cudaMallocPitch_v3020", 152 * us)
    copy(1, pitched_bytes)
    copy(1, 432, "cudaMemcpyToSymbol_v3020")
    copy(1, 5832, "cudaMemcpyToSymbol_v3020")
    launch("conv_x(cv::cuda::PtrStepSz<float>, cv::cuda::PtrStepSz<float>, int, int, int, int)")
    api("cudaDeviceSynchronize_v3020", 4 * us)
    copy(2, image_bytes)
    api.t += int(pause_ms * ms)  # the host's own work between the passes
    copy(1, pitched_bytes)
    launch("conv_y(cv::cuda::PtrStepSz<float>, cv::cuda::PtrStepSz<float>, int, int, int, int)")
    copy(2, image_bytes)
    api("cudaFreeHost_v3020", 14 * us)
    api("cudaFree_v3020", 126 * us)
    api("cudaFree_v3020", 698 * us)
    stop = api.t + ms
    api.insert(con, gtid)
    con.executemany("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET returnValue = 9 WHERE correlationId = ?",
                    [(c,) for c in failed])
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,?,?,?)",
                    [(a, e, c, gpid, nbytes, kind, 0 if kind == 1 and nbytes > 1 << 20 else 1 if kind == 1 else 2,
                      2 if kind == 1 else 0) for a, e, c, kind, nbytes in copies])
    con.executemany(_KERNEL_INSERT, [_kernel_row(a, b, c, gpid, n, 32, (20, 300), (64, 16), j)
                                     for j, (a, b, c, n) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_80GB_PCIE._replace(name="GeForce RTX 3080", sms=68),
                program="./conv", thread="conv")
    return {"passes": 1, "refused": len(failed), "kernels_run": len(kern)}


def write_synced_tiny_loop(path: str, iterations: int = 40, kernels: int = 1, kernel_us: float = 3.0,
                           launch_us: float = 8.0, latency_us: float = 5.0, turn_us: float = 5.0) -> dict:
    """Write the export of a CUDA C++ loop that syncs in every turn (h37-native67, after wild
    ``counted_steps_rtx3090_solver``'s ``cudaDeviceSynchronize`` a turn): each of ``iterations`` turns launches
    ``kernels`` kernels of ``kernel_us`` (``cudaLaunchKernel`` of ``launch_us``, each kernel starting ``latency_us``
    after its call begins, or when the GPU is free), waits in ``cudaDeviceSynchronize`` until 2 us after the GPU's last one, then runs
    ``turn_us`` of its own code.  Truth by construction: a turn's dispatch is its ``kernels + 1`` runtime calls,
    ``kernels * launch_us`` of host time outside the sync against ``kernels * kernel_us`` of GPU work, so the turn is
    too small for its dispatch (``too_small``) exactly where that host time exceeds the GPU's: tiny kernels (the
    default) it is; a control of big kernels (``kernel_us=400``) it is not.  Where each kernel ends before the next
    call begins (``latency_us + kernel_us <= launch_us``), the GPU idles ``latency_us`` inside each launch call, the
    turn's first included: ``launch_wait_ms_per_turn`` (None otherwise); and the host's own code no call records is
    ``turn_us`` a turn (``own_ms_per_turn``), after the sync's 2 us past the GPU's last kernel."""
    us, ms = 1000, 1_000_000
    pid = 7373
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, SYNC_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=0)
    kern = []
    k_ns, l_ns, lat = int(kernel_us * us), int(launch_us * us), int(latency_us * us)
    for _ in range(iterations):
        free = api.t
        for _ in range(kernels):
            ks = max(api.t + lat, free)
            c = api("cudaLaunchKernel_v7000", l_ns)
            free = ks + k_ns
            kern.append((ks, free, c))
        api.row("cudaDeviceSynchronize_v3020", api.t, free + 2 * us)
        api.t = free + 2 * us + int(turn_us * us)
    stop = api.t + ms
    api.insert(con, gtid)
    name = strings("relax_step")
    con.executemany(_KERNEL_INSERT,
                    [_kernel_row(a, b, c, gpid, name, 32, (1,), (128,), j)
                     for j, (a, b, c) in enumerate(kern)])
    _finish_one(con, strings, stop, (gpid, pid, gtid), RTX_2080, program="./solver", thread="solver")
    return {"iterations": iterations, "calls_per_turn": kernels + 1, "host_ms_per_turn": kernels * launch_us / 1000,
            "device_ms_per_turn": kernels * kernel_us / 1000, "too_small": launch_us > kernel_us,
            "launch_wait_ms_per_turn": kernels * latency_us / 1000 if latency_us + kernel_us <= launch_us else None,
            "own_ms_per_turn": turn_us / 1000}


# --------------------------------------------------------------------------- a non-C++ program's own kernel (issue 37)

#: The GPU of GDhir/GPUMATVEC's ``Reports/report1.sqlite`` (SURVEY, hunt69b): 20 SMs.
RTX_3050_TI_LAPTOP = Gpu("NVIDIA GeForce RTX 3050 Ti Laptop GPU", "0000:01:00.0", 2097152, 4294443008, 192032000000,
                         1485000000, 20, "GA107", 0, (8, 6))
#: CUDA.jl's kernel as that export names it: the Julia function, its arguments' device types (``CuDeviceArray``).
JULIA_MATVEC = "performGPUMATVEC_version1(CuDeviceArray<Float32, (int)1, (int)1>, CuDeviceArray<Float32, (int)2, (int)1>)"


def write_one_kernel_program(path: str, name: str = JULIA_MATVEC, blocks: int = 4, threads: int = 256,
                             kernel_ms: float = 1.24, regs: int = 152, program: str = "julia",
                             gpu: Gpu = RTX_3050_TI_LAPTOP) -> dict:
    """Write the export of a program that runs one kernel of its own, launched through the driver API, as GDhir/
    GPUMATVEC's Julia CUDA.jl capture holds it (SURVEY, hunt69b; the real file has no licence): ``cuProfilerStart``,
    the module loaded (``cuModuleLoadDataEx``, 2.8 ms), two uploads (``cuMemcpyHtoDAsync``), one ``cuLaunchKernel``
    of ``name`` with ``blocks`` x ``threads`` (``regs`` registers a thread) lasting ``kernel_ms``, a synchronizing
    read-back and ``cuProfilerStop``, on ``gpu`` (an RTX 3050 Ti Laptop's 20 SMs).  Return the truth: the kernel's
    launch configuration and the GPU's SM count."""
    us, ms = 1000, 1_000_000
    pid = 7171
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, SYNC_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 5 * ms, gap=3 * us)
    api("cuProfilerStart", 5 * us)
    api("cuModuleLoadDataEx", int(2.8 * ms))
    copies = []
    for nbytes in (4 * blocks * threads * 8, 4 * blocks * threads):
        c = api("cuMemcpyHtoDAsync_v2", 20 * us)
        copies.append((api.t - 15 * us, api.t - 5 * us, c, nbytes, 1))
    launch = api("cuLaunchKernel", 30 * us)
    ks = api.t + 10 * us
    ke = ks + int(kernel_ms * ms)
    back = api("cuMemcpyDtoH_v2", 0)
    api.end_last(ke + 30 * us)
    copies.append((ke + 5 * us, ke + 15 * us, back, 4 * blocks * threads, 2))
    api("cuProfilerStop", 5 * us)
    stop = api.t + 1 * ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,?,0,1)",
                    [(a, b, c, gpid, n, kind) for a, b, c, n, kind in copies])
    con.execute(_KERNEL_INSERT, _kernel_row(ks, ke, launch, gpid, strings(name), regs, (blocks,), (threads,), 1,
                                            short=strings(name.split("(", 1)[0])))
    _finish_one(con, strings, stop, (gpid, pid, gtid), gpu, program=program, thread=program)
    return {"blocks": blocks, "threads": threads, "sms": gpu.sms, "kernel_ms": kernel_ms}
# --------------------------------------------------------------------------- h37-bus69: a copy's floor on the bus

#: A laptop Pascal part (GP107, compute capability 6.1: PCIe 3.0), the GPU of OlivierKessler01/cuda-thinkering's
#: ``output.sqlite`` (Nsight Systems, no licence: read, not kept).
GTX_1050_TI_MAX_Q = Gpu("NVIDIA GeForce GTX 1050 Ti with Max-Q Design", "0000:01:00.0", 1048576, 4294967296,
                        112128000000, 1290000000, 6, "GP107", 1, (6, 1))


def write_pageable_vector_add(path: str, nbytes: int = 268_435_456, upload_ms: float = 66.0,
                              download_ms: float = 66.0, kernel_ms: float = 8.0, staging_ms: float = 1.0,
                              readback_pinned: bool = False) -> dict:
    """Write the export of a native vector add shaped after OlivierKessler01/cuda-thinkering's ``output.sqlite``
    (GTX 1050 Ti Max-Q): two synchronous ``cudaMemcpy`` uploads of ``nbytes`` each from pageable memory (each
    transfer ``upload_ms``; the driver stages ``staging_ms`` inside each call before its transfer, the GPU idle), one
    kernel of ``kernel_ms``, and the result's synchronous read-back of ``nbytes`` into pageable memory
    (``download_ms``; into pinned memory with ``readback_pinned``: its bytes over its time then measure the link).
    No step marks: one pass.  Return the truth: the bytes moved, the copies' time, the kernel's
    time and the pass (ms, first call to last copy's end)."""
    us, ms = 1000, 1_000_000
    pid = 6969
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, SYNC_DDL, KERNEL_DDL, GPU_DDL], pid)
    api = _Calls(strings, SESSION_START_NS + 50 * ms, gap=5 * us)
    api("cudaMalloc_v3020", 120 * ms)  # the context
    copies, kern = [], []
    first = api.t
    for _ in range(2):  # a and b up, each staged by the driver inside the call
        a = api.t
        ds = a + int(staging_ms * ms)
        c = api("cudaMemcpy_v3020", ds + int(upload_ms * ms) + 10 * us - a)
        copies.append((ds, ds + int(upload_ms * ms), c, 1, 0, 2))
    c = api("cudaLaunchKernel_v7000", 8 * us)
    ks = max(api.t, copies[-1][1] + 3 * us)
    kern.append((ks, ks + int(kernel_ms * ms), c))
    a = api.t  # the read-back waits for the kernel, then the transfer, then the copy out of staging
    ds = kern[-1][1] + 5 * us
    c = api("cudaMemcpy_v3020", ds + int(download_ms * ms) + int(staging_ms * ms) - a)
    copies.append((ds, ds + int(download_ms * ms), c, 2, 2, 1 if readback_pinned else 0))
    stop = api.t + 2 * ms
    api.insert(con, gtid)
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, "
                    "globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?,?,0,1,7,?,?,?,?,?,?)",
                    [(a, b, c, gpid, nbytes, k, s, d) for a, b, c, k, s, d in copies])
    name = strings("vectorAdd(const float *, const float *, float *, int)")
    con.executemany(_KERNEL_INSERT, [_kernel_row(a, b, c, gpid, name, 16, (262144,), (256,), c) for a, b, c in kern])
    _finish_one(con, strings, stop, (gpid, pid, gtid), GTX_1050_TI_MAX_Q, program="./vector_add", thread="vector_add")
    return {"bytes": 3 * nbytes, "copies_ms": 2 * upload_ms + download_ms, "kernel_ms": kernel_ms,
            "pass_ms": (copies[-1][1] - first) / ms}


def write_collectives_setup_pass(path: str, rounds: int = 6, collectives: bool = True, pin_ms: float = 120.0,
                                 kernel_ms: float = 5.0, repin: bool = False) -> dict:
    """Write the export of one pass of a program that sets up NCCL and runs its collectives once, shaped after
    blinkplus-nccl-base's nvprof ``output.nvvp`` (4 V100s, hunt70b): a first ``cudaFree`` of 300 ms (the context; the
    GPU idle), then ``rounds`` rounds of the communicator's set-up -- a ``cudaHostAlloc`` of ``pin_ms`` (the GPU idle
    through it) and 4 times a ``cudaMalloc``, a ``cudaMemset`` of 10 MB and a 120-byte ``cudaMemcpy`` upload, the
    host's own 40 ms after each round: bursts of fills and copies alone that repeat by name --, then one burst of 3
    broadcasts and 3 all-reduces of ``kernel_ms`` each (``collectives`` False: the same kernels named
    ``verify_kernel``), the first launch 3 ms (its module loaded), a ``cudaStreamSynchronize``; then the tear-down: a
    ``cudaFree`` per buffer and a ``cudaFreeHost`` per round.  Nothing is given back and asked for again: every buffer
    is taken once and freed at exit -- unless ``repin``: then each round after the first gives the last round's pinned
    buffer back (``cudaFreeHost``) before pinning its own (the control: pinned memory freed and taken again).  Return
    the truth: the rounds, the collectives' and kernels' count, the window (ms)."""
    us, ms = 1000, 1_000_000
    pid = 6262
    con, strings, gtid, gpid = _open_one(path, [RUNTIME_DDL, MEMCPY_DDL, MEMSET_DDL, KERNEL_DDL, GPU_DDL], pid)
    t_open = SESSION_START_NS + 100 * ms
    api = _Calls(strings, t_open, gap=20 * us)
    api("cudaFree_v3020", 300 * ms)  # the context, the program's first call
    copies: list[tuple[int, int, int]] = []  # start, end, correlation
    sets: list[tuple[int, int, int]] = []
    for r in range(rounds):
        if repin and r:
            api("cudaFreeHost_v3020", 500 * us)
        api("cudaHostAlloc_v3020", int(pin_ms * ms))
        for _ in range(4):  # the communicator's buffers, each cleared, and its device structs uploaded
            api("cudaMalloc_v3020", 300 * us)
            c = api("cudaMemset_v3020", 400 * us)
            sets.append((api.t - 20 * us - 350 * us, api.t - 20 * us - 50 * us, c))
            c = api("cudaMemcpy_v3020", 30 * us)
            copies.append((api.t - 20 * us - 15 * us, api.t - 20 * us - 12 * us, c))
        api.t += 40 * ms  # the host's own set-up between rounds
    names = ([NCCL_BROADCAST] * 3 + [NCCL_ALLREDUCE] * 3 if collectives else ["verify_kernel"] * 6)
    kern: list[tuple[int, int, int, int]] = []
    gpu_free = 0
    for i, name in enumerate(names):
        c = api("cudaLaunchKernel_v7000", 3 * ms if i == 0 else 10 * us)
        k0 = max(api.t, gpu_free)
        gpu_free = k0 + int(kernel_ms * ms)
        kern.append((k0, gpu_free, c, strings(name)))
    api("cudaStreamSynchronize_v3020", 0)
    api.end_last(gpu_free + 10 * us)
    api.t = gpu_free + 5 * ms
    for r in range(rounds):
        for _ in range(4):
            api("cudaFree_v3020", 400 * us)
        if not repin or r == rounds - 1:
            api("cudaFreeHost_v3020", 500 * us)
    stop = api.t + 5 * ms
    api.insert(con, gtid)
    _uploads_and_sets(con, gpid, copies, 120, sets, 10485760)
    con.executemany(_KERNEL_INSERT, [_kernel_row(k0, k1, c, gpid, n, 64, (2,), (544,), c) for k0, k1, c, n in kern])
    _finish_one(con, strings, stop, (gpid, pid, gtid), A100_SXM4_40GB, program="demo", thread="demo")
    return {"rounds": rounds, "collectives": len(kern) if collectives else 0, "kernels": len(kern),
            "window_ms": (stop - t_open) / ms}
