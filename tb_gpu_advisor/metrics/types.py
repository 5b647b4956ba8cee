"""Every number the rules read: the metrics contract between analysis and rules.

Flat dataclasses, serializable with :func:`to_dict` (plain JSON: no NaN, no
numpy).  Units: times in **milliseconds** (``*_ms``) unless the field name
says ``*_us``; shares are **fractions** in [0, 1]; bytes are bytes.
``None`` means "could not be measured in this capture" (the rules must then
stay silent or say why), never zero.

Scopes:
- host: :class:`HostMetrics` (one per ``<host>.xplane.pb``), its fields are
  averages over the kept steps and over the *active* GPUs (GPUs with at least
  one kernel) unless documented otherwise;
- per GPU: :class:`GpuMetrics` (``HostMetrics.gpus``);
- per step: :class:`StepMetrics` (``HostMetrics.steps_detail``; one row per
  step and GPU, plus one host-wide row per step with ``gpu=None``).

Never rename a field once a rule uses it -- add a new one instead.
Definitions in full: ``docs/metrics.md``.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal

import numpy as np

from tb_gpu_advisor.job import Job
from tb_gpu_advisor.model.steprows import RowTable
from tb_gpu_advisor.model.trace import MATRIX_FLOP_KIND_NAMES
from tb_gpu_advisor.steps.types import StepDetection

def sharing_ranks(shares: Iterable[bool]) -> int:
    """How many GPUs a per-step number is shared among: those whose ``shares`` flag the context set
    (``GpuCtx.shares``: the GPUs that ran kernels or collectives; where none did, those with any device work in the
    kept steps -- copies), at least 1.  The one count :attr:`Context.ranks
    <tb_gpu_advisor.metrics.context.Context.ranks>` and :attr:`HostMetrics.ranks` both ask (h37-xplane3: 4 GPUs that
    only copied, 16 MB each a step, no kernel anywhere, read as one GPU's "h2d 5.43 ms per step in a 1.49 ms step")."""
    return max(1, sum(1 for a in shares if a))


def per_step(x, steps: int | None, ranks: int = 1, unit: float = 1.0):
    """The one division of every per-step number (docs/metrics.md, "Per step and rank"): ``x`` -- a count or a time,
    a number or a numpy array of them, summed over the kept steps -- in ``unit`` (``x / unit``, 1 for a count or a
    time already in its unit) per kept step (at least 1) and per one of ``ranks`` (the active GPUs it is shared
    among; 1 for one GPU's own total or the host's own time: a union of host intervals is the host's once, however
    many GPUs it drives).  One expression, so a number divided here in one unit matches the same number divided in
    another: ``unit * steps * ranks``, ``/ unit`` first where the caller converts before dividing."""
    d = unit * max(int(steps or 0), 1) * max(int(ranks), 1)
    return x / d if isinstance(x, np.ndarray) else float(x) / d


#: Non-overlapping step-time categories, in the order the UI shows them.  At
#: every instant of a step exactly one applies (priority in docs/metrics.md;
#: highest first: device_compute, collectives, memcpy_d2d, memset, memcpy_d2h,
#: memcpy_h2d, input_wait, host_compute, launch_wait, other).
BREAKDOWN_CATEGORIES: tuple[str, ...] = (
    "device_compute",
    "launch_wait",
    "input_wait",
    "host_compute",
    "memcpy_h2d",
    "memcpy_d2h",
    "memcpy_d2d",
    "memset",
    "collectives",
    "startup",
    "unseen",
    "stream_handoff",
    "allocator",
    "kernel_switch",
    "profiler",
    "managed_read",
    "other",
)
#: The OS wait a launching thread spent off the CPU between two of its runtime calls in which it read managed memory
#: the GPU held (``job.waits.managed_reads``: a page migration to the host no call asked for): its load's page fault,
#: the thread asleep while the driver took the page back -- a read of the GPU's value, named apart from the other time
#: off the CPU (``model.trace.OFF_CPU``) by ``metrics/breakdown.os_waits_in``.
MANAGED_READ = "a read of managed memory the GPU wrote (page fault, off the CPU)"
#: a Breakdown's values in BREAKDOWN_CATEGORIES order
_BD_VALUES = operator.attrgetter(*BREAKDOWN_CATEGORIES)

Precision = Literal["fp32", "fp16", "bf16", "int8", "fp8", "tf32", "fp64", "other"]


def to_dict(obj: Any) -> Any:
    """Plain-JSON view of a metrics dataclass: NaN/inf -> None, numpy -> Python."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_dict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, StepTable)):
        return [to_dict(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):  # numpy scalar
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


# --------------------------------------------------------------------------- steps


# --------------------------------------------------------------------------- breakdown


@dataclass
class Breakdown:
    """Non-overlapping split of step time (ms). The categories sum to the step time.

    device_compute: some GPU ran a non-memcpy, non-collective kernel.
    memcpy_h2d / memcpy_d2h / memcpy_d2d: a copy of that kind ran on the GPU
      (D2D includes P2P and copies of unknown kind) and no higher-priority activity did -- less, for H2D, the
      pinned asynchronous uploads run while the GPU would have idled for the host anyway (before the host began the
      next kernel's launch: ``metrics.breakdown.off_path_uploads``), which are the host's idle and booked as it.
    memset: a memset ran (the GPU filling its own memory, no transfer: a fill, never a copy) and no kernel,
      collective or device copy did.
    collectives: an NCCL/collective kernel ran (no copy).
    input_wait: GPU idle while the host is in IteratorGetNext* (or a
      tf_data iterator get_next) event.
    launch_wait: GPU idle while a launch for that GPU's next kernel is still
      being issued (see docs/metrics.md "idle waiting for launch").
    host_compute: GPU idle, some other host op/event running.
    startup: GPU idle while the host is inside a one-time cost (module loading in a first launch, library
      start-up, compilation: ``job.phase``); a cold capture's, never the steady state's.
    unseen: GPU idle in the trace while the host waits for it (a sync, a blocking copy): GPU work the capture does
      not hold (a window cut out of a longer trace, another process on the GPU); or idle while it holds a kernel
      whose launch call returned and was submitted (``idle_held``): work it could run and did not.
    stream_handoff: GPU idle at a handoff between streams: after the GPU's latest-ending work on one stream, before
      work on another stream that was already launched and submitted while that work ran (from 0.1.0+a56).  The
      queued work waited on the other stream's (an event wait, ``wait_stream``, a library's side stream): a
      dependency the capture holds, so not ``unseen``, which is work it does not hold.
    allocator: GPU idle while the host is in the device allocator (``cudaMalloc``/``cudaFree``; ``cudaFree``
      synchronizes the device): a caching allocator that is off or churning.
    kernel_switch: GPU idle between a kernel and the next one it already holds (launched, the call returned,
      submitted) for less than ``launch.kernel_switch_us``: the GPU's own switch between queued kernels (a CUDA
      graph's tiny kernels), no host time and no held work.
    profiler: GPU idle while the program's thread waits for the profiler's own work (CUPTI's activity buffer
      requests: ``Trace.profiler_overhead``; from 0.1.0+a80): a capture's artefact, no time the program spends
      unprofiled nor any fix's to give back -- booked once here, so no finding claims it as the host's code, its
      launch, its input or its allocator (before, each finding left it out on its own, and the ledger's
      ``host_compute`` / ``launch_wait`` / ``other`` still held it).
    managed_read: GPU idle while the thread that launches its work sleeps in a read of managed memory the GPU wrote:
      its load's page fault, off the CPU between two runtime calls while the driver moves the page back to the host
      (:data:`MANAGED_READ`; a page migration to the host no call asked for lies in the stretch) -- a read of the
      GPU's value, as a sync is, where no call is recorded (from 0.1.0+a84, h37-copy63; ``other`` before, which the
      reads' finding claimed from: one ledger of a named cause).
    other: GPU idle, nothing attributable on the host.
    """

    device_compute: float = 0.0
    launch_wait: float = 0.0
    input_wait: float = 0.0
    host_compute: float = 0.0
    memcpy_h2d: float = 0.0
    memcpy_d2h: float = 0.0
    memcpy_d2d: float = 0.0
    memset: float = 0.0
    collectives: float = 0.0
    startup: float = 0.0
    unseen: float = 0.0
    stream_handoff: float = 0.0
    allocator: float = 0.0
    kernel_switch: float = 0.0
    profiler: float = 0.0
    managed_read: float = 0.0
    other: float = 0.0

    def total(self) -> float:
        return sum(getattr(self, c) for c in BREAKDOWN_CATEGORIES)

    def as_dict(self) -> dict[str, float]:
        return {c: float(getattr(self, c)) for c in BREAKDOWN_CATEGORIES}


@dataclass
class StepMetrics:
    """One step on one GPU (``gpu`` set) or host-wide over all active GPUs (``gpu=None``)."""

    step: int
    gpu: int | None
    start_ms: float  # in the trace viewer's time base (``Steps.origin_ps``)
    step_ms: float
    breakdown: Breakdown
    device_busy_ms: float  # union of all GPU activity of this GPU (or of all GPUs) in the step
    kernel_count: int
    first_kernel_ms: float | None = None  # start of first kernel of the step, in the same time base
    first_launch_ms: float | None = None  # start of first host launch record targeting this GPU
    collective_calls: int = 0
    memcpy_count: int = 0


class StepTable(RowTable[StepMetrics]):
    """``HostMetrics.steps_detail`` kept as columns: blocks of rows, each one GPU's steps or the host-wide rows.

    Why (issue #38 deliverable 4): the dense 100 MB capture has ~12,700 step rows; a StepMetrics object per row (and a
    Breakdown in each) cost ~20 ms to make, and the report reads them back into a matrix.  The report takes the
    columns (:meth:`columns`); a rule that reads rows gets StepMetrics objects, made on demand, one block at a time.

    A block is either columns -- an object with ``gpu``, ``step``, ``start_ms``, ``step_ms`` and ``mat`` (the
    breakdown in BREAKDOWN_CATEGORIES order, ms) whose ``rows()`` makes its StepMetrics (``breakdown.StepArrays``)
    -- or a list of StepMetrics.  Iteration gives the blocks' rows in order, as the list it replaces held them.
    """

    __slots__ = ("_rows", "blocks")

    def __init__(self, blocks: Sequence[Any] = ()) -> None:
        self.blocks = [b for b in blocks if _block_len(b)]
        self._rows: list[StepMetrics] | None = None

    def __len__(self) -> int:
        return sum(_block_len(b) for b in self.blocks)

    def rows(self) -> list[StepMetrics]:
        """Every block's rows, in order (made once, on first use)."""
        if self._rows is None:
            self._rows = [r for b in self.blocks for r in _block_rows(b)]
        return self._rows

    def __iter__(self) -> Iterator[StepMetrics]:
        if self._rows is not None:
            return iter(self._rows)
        return (r for b in self.blocks for r in _block_rows(b))

    def __repr__(self) -> str:
        return f"StepTable({len(self)} rows in {len(self.blocks)} blocks)"

    def __reduce__(self):
        return StepTable, (self.blocks,)

    def of_gpu(self, gpu: int | None) -> list[StepMetrics]:
        """The rows of one GPU (None: the host-wide rows), made from that GPU's blocks only."""
        out: list[StepMetrics] = []
        for b in self.blocks:
            if isinstance(b, list):
                out.extend(r for r in b if r.gpu == gpu)
            elif b.gpu == gpu:
                out.extend(b.rows())
        return out

    def columns(self) -> tuple[np.ndarray, list[int | None], np.ndarray]:
        """(step ids, gpu of each row, (rows, 2 + categories) float64 matrix of start_ms, step_ms and the breakdown):
        the numbers a StepMetrics row holds for the report, in row order, without making the rows."""
        steps: list[np.ndarray] = []
        gpus: list[int | None] = []
        mats: list[np.ndarray] = []
        width = 2 + len(BREAKDOWN_CATEGORIES)
        for b in self.blocks:
            if isinstance(b, list):
                steps.append(np.array([r.step for r in b], dtype=np.int64))
                gpus.extend(r.gpu for r in b)
                mats.append(np.array([(r.start_ms, r.step_ms, *_BD_VALUES(r.breakdown)) for r in b],
                                     dtype=np.float64).reshape(len(b), width))
            else:
                n = b.step.shape[0]
                steps.append(np.asarray(b.step, dtype=np.int64))
                gpus.extend([b.gpu] * n)
                m = np.empty((n, width), dtype=np.float64)
                m[:, 0] = b.start_ms
                m[:, 1] = b.step_ms
                m[:, 2:] = b.mat
                mats.append(m)
        if not mats:
            return np.zeros(0, np.int64), [], np.zeros((0, width), np.float64)
        return np.concatenate(steps), gpus, np.concatenate(mats)


def rows_of_gpu(detail: Sequence[StepMetrics], gpu: int | None) -> list[StepMetrics]:
    """The step rows of one GPU (None: the host-wide rows) of ``HostMetrics.steps_detail``, a StepTable or a list."""
    if isinstance(detail, StepTable):
        return detail.of_gpu(gpu)
    return [s for s in detail if s.gpu == gpu]


def _block_len(b: Any) -> int:
    return len(b) if isinstance(b, list) else int(b.step.shape[0])


def _block_rows(b: Any) -> list[StepMetrics]:
    return b if isinstance(b, list) else b.rows()


# --------------------------------------------------------------------------- headline


@dataclass
class Headline:
    """The guide's overview numbers (section 1): per host, averaged over kept steps and active GPUs.

    device_step_share: device_compute / step time (fraction); the guide's
      "device step-time share" -- how much of the step the device executes.
    host_op_share_by_count: host-placed TF ops / all TF ops, by distinct op
      *occurrences*.  An op occurrence is "on device" when at least one GPU
      kernel/memcpy is attributed to it (via correlation_id from its launch
      records, or ``tf_op``/TF 2.4 ``TensorFlow Ops``/group_id grouping); ops
      that launched nothing are "on host".
    host_op_share_by_time: same, weighted by host self time of the op events.
    fp16_kernel_count / bf16_kernel_count: kernel *launches* (events) whose
      precision is fp16 / bf16 (name, shape or stats).
    fp16_time_share / bf16_time_share / sixteen_bit_time_share: share of the GPU
      kernel time of *known* precision (memcpy excluded) in fp16 / bf16 / either.
    unknown_precision_share: share of all kernel time whose precision no name or
      shape tells (XLA fusions, Triton GEMMs); None without kernels.
    eight_bit_time_share: share of the kernel time of known precision in fp8 or
      int8 kernels (a quantised model's GEMMs).
    integer_data_share: share of all kernel time (a part of the unknown) in
      kernels whose names type their data as 8-bit integers they do no
      arithmetic in (random bytes, bit packing): the data's type is known,
      no arithmetic's precision is.
    launch_wait_share: idle-waiting-for-launch time / step time.
    input_wait_share: input_wait / step time.
    """

    avg_step_ms: float | None
    device_step_share: float | None
    host_op_share_by_count: float | None
    host_op_share_by_time: float | None
    device_op_count: int
    host_op_count: int
    kernel_count: int  # kernel events (no memcpy) in kept steps, all GPUs
    fp16_kernel_count: int
    bf16_kernel_count: int
    fp16_time_share: float | None
    bf16_time_share: float | None
    sixteen_bit_time_share: float | None
    tensor_core_time_share: float | None  # share of kernel time in Tensor Core kernels
    launch_wait_share: float | None
    input_wait_share: float | None
    unknown_precision_share: float | None = None
    # share of the known-precision kernel time in fp8 or int8 kernels: lower than 16-bit, so a quantised model's
    # GEMMs never read as if the time outside the 16-bit share were fp32 (h37-review12: vllm_rpd_fp8)
    eight_bit_time_share: float | None = None
    integer_data_share: float | None = None


# --------------------------------------------------------------------------- kernels


@dataclass
class KernelStat:
    """One (kernel name, TF op) pair, over kept steps, all GPUs (like the stock kernel_stats table)."""

    name: str
    op_name: str  # "" when no op could be linked
    op_type: str
    count: int
    total_us: float  # each call's whole time (a call starts in a kept step, and may run past the last one)
    avg_us: float
    min_us: float
    max_us: float
    tensor_core: bool  # kernel name matches a Tensor Core pattern (kernel_classes)
    tc_eligible: bool  # op type is Tensor Core eligible
    precision: str  # a Precision value
    elementwise: bool
    collective: bool
    launch_latency_avg_us: float | None = None  # kernel start - launch record start, mean over launches onto an idle stream
    gpus: list[int] = field(default_factory=list)
    # operand shapes: the most frequent `shape` stat (else `long_name`) among this row's events, as recorded,
    # and the distinct dimension sizes in it (first-seen order); None when the capture carries no shapes
    shape: str | None = None
    dims: list[int] | None = None
    #: the calls' time inside the kept steps' windows (``metrics.comm.in_windows``): a part of the steps, as the ledger
    #: paints it, where ``total_us`` holds the time a call runs past the last kept step; None: as ``total_us``
    in_steps_us: float | None = None
    #: the calls' share of the GPU's kernel time inside the kept steps: every instant of it shared equally among the
    #: compute kernels running then (``metrics.kernels.shared_in_steps``), so their rows add up to the GPU's
    #: kernel-busy time, each microsecond once -- a part of the step where kernels on concurrent streams overlap, which
    #: ``in_steps_us`` counts once per stream (h37-classsum33); a collective's is its ``in_steps_us``, the communication
    #: tables' time of it; None: as :attr:`step_us`
    shared_us: float | None = None
    #: whether the kernel's XLA instruction only converts dtypes, as its HLO says (``Trace.xla_casts``): True a cast,
    #: False it computes (a ``loop_convert_fusion`` doing f32 math on bf16 data); None where no HLO tells
    hlo_cast: bool | None = None
    #: the kernel class its XLA fusion's opcodes state (``Trace.xla_fusion_classes``): "matmul/conv", "reduction",
    #: "elementwise"; None where no HLO tells
    hlo_class: str | None = None

    @property
    def step_us(self) -> float:
        """The calls' time as a part of the kept steps: ``in_steps_us`` where measured, else ``total_us``.  What a
        share of the step or a per-step saving reads (a part never exceeds its whole); ``total_us`` stays the calls'
        own duration, for their averages."""
        return self.total_us if self.in_steps_us is None else self.in_steps_us

    @property
    def wall_us(self) -> float:
        """The calls' part of the step's wall time (:attr:`shared_us` where measured, else :attr:`step_us`): what a
        table of time per step sums, so its rows never outgrow the step on concurrent streams."""
        return self.step_us if self.shared_us is None else self.shared_us


@dataclass
class UnderfilledKernel:
    """One kernel launched with fewer blocks than its GPU has SMs, by (name, blocks, threads per block), over kept
    steps and all GPUs (``metrics/underfill.py``)."""

    name: str  # short kernel name
    blocks: int  # blocks in its grid
    threads: int  # threads per block, -1 not recorded
    count: int
    total_ms: float  # its kernel time, kept steps, all GPUs
    sm_count: int  # the SMs of its GPU (the smallest, where it ran on several); 2 where the SM count is unknown
    idle_ms: float  # sum of (duration - small_grid.floor_us)+ x (1 - blocks / sm_count): the saving's bound
    gemm: bool  # a GEMM/convolution kernel (its time's kernel class)
    gpus: list[int] = field(default_factory=list)
    # the language its full name shows (``frameworks.kernel_code``: "julia", "numba", ...), "" where none: whose
    # launch fix small_grid tells (the short name drops the arguments that show it: ``CuDeviceArray<...>``)
    code: str = ""


@dataclass
class GpuUnderfill:
    """One GPU: its SM count and where it comes from, and its kernels' launch configurations."""

    gpu: int
    sm_count: int | None  # None: unknown (only one-block kernels are judged)
    sm_source: str  # "the trace", "<model>'s datasheet", "unknown"
    unit: str  # what the vendor calls an SM: "SM" (NVIDIA), "CU" (AMD)
    launches_recorded: int  # kernels in kept steps whose launch configuration the trace records
    kernel_ms: float  # kernel time in kept steps (all kernels)
    underfilled_ms: float  # of it, kernels with fewer blocks than SMs
    idle_ms: float  # sum over those of (duration - small_grid.floor_us)+ x (1 - blocks / SMs)
    #: of ``underfilled_ms``, the time above the least their work of known FLOPs and bytes needs at the GPU's peaks
    #: (``GpuCtx.above_floor``; all of it where none is known): no grid takes more off them (h37-pool36)
    above_floor_ms: float = 0.0
    #: of ``idle_ms``, the part its floor cut: the idle SMs' bound less what the kernels' time above their floor
    #: allows -- what makes the saving's assumption say no kernel beats its GPU's peak
    floor_cut_ms: float = 0.0


@dataclass
class Underfill:
    """Kernels too small to fill their GPU: launched with fewer blocks than it has SMs (``metrics/underfill.py``).
    Times per step are the mean per step and active GPU, as the breakdown's."""

    gpus: list[GpuUnderfill] = field(default_factory=list)
    top: list[UnderfilledKernel] = field(default_factory=list)  # by idle_ms, largest first
    underfilled_ms_per_step: float = 0.0
    idle_ms_per_step: float = 0.0  # the bound on what filling the SMs saves, before the critical cap
    gemm_idle_ms_per_step: float = 0.0  # of it, GEMM/convolution kernels'
    #: the underfilled kernels' time above their peaks' floor (:attr:`GpuUnderfill.above_floor_ms`): the bound's cap
    above_floor_ms_per_step: float = 0.0
    #: what the kernels' floor cut off the idle SMs' bound (:attr:`GpuUnderfill.floor_cut_ms`), per step
    floor_cut_ms_per_step: float = 0.0

    @property
    def recorded(self) -> bool:
        """Whether any kernel of a kept step records its launch configuration."""
        return any(g.launches_recorded for g in self.gpus)


@dataclass
class OpStat:
    """One TF op (by name), over kept steps.  Kernel figures summed over its kernels."""

    op_name: str
    op_type: str
    on_device: bool
    occurrences: int | None  # host op events of its name in kept steps; None: no host record (an HLO op)
    host_self_ms: float | None  # host time of the op events (wall duration on its thread); None as above
    kernel_count: int
    kernel_total_us: float
    tc_eligible: bool
    tensor_core_share: float | None  # share of its kernel time in TC kernels; None without kernels
    precision: str  # dominant precision by kernel time ("" without kernels)
    is_eager: bool = False
    #: its kernels' part of the GPU's time in the kept steps, each microsecond once (``KernelStat.wall_us`` summed:
    #: kernels on concurrent streams share the time they overlap), where ``kernel_total_us`` sums their own durations;
    #: None: not measured (as ``kernel_total_us``)
    kernel_wall_us: float | None = None


# --------------------------------------------------------------------------- memcpy


@dataclass
class MemcpyStat:
    """Copies of one direction ("h2d","d2h","d2d","p2p","memset","other"), per kept step and GPU: averaged over the
    steps and the host's active GPUs, like the blocking time and the step they are parts of."""

    direction: str
    count_per_step: float
    bytes_per_step: float
    ms_per_step: float  # GPU time of the copies
    sync_count_per_step: float  # copies that held the host until they ran (``metrics.memcpy._blocks_host``)
    sync_share: float | None  # sync copies / copies
    recurring: bool  # the same copies (op/size sequence) appear in every kept step
    blocking_ms_per_step: float = 0.0  # copy time during which no kernel ran on that GPU
    top_ops: list[str] = field(default_factory=list)  # ops the copies are attributed to
    #: copy time to or from pageable host memory, as a share of the copy time whose host memory the copies' names
    #: give (CUPTI's ``Memcpy HtoD (Pageable -> Device)`` in PyTorch traces and Nsight exports); None: no name says
    pageable_share: float | None = None
    #: the copies from or to pageable host memory themselves, per step and GPU: their GPU time, their count and their
    #: bytes -- what pinning would change, and the copy the advice names (a 4-byte ``.item()`` read is no upload to pin)
    pageable_ms_per_step: float = 0.0
    pageable_count_per_step: float = 0.0
    pageable_bytes_per_step: float = 0.0
    #: the smallest and the largest of those pageable copies (bytes; 0: no size known): a batch of images and its
    #: labels are two copies of 154.1 MB and 2.0 KB, never "2 copies of 77.1 MB each" (h37-hunt69b)
    pageable_min_bytes: float = 0.0
    pageable_max_bytes: float = 0.0
    #: the copy time whose host memory the capture tells (by name or record), as a share of the copy time: where it is
    #: under 1, ``pageable_share`` is of that part only (rocmProfileData tells a pageable copy by its staging alone)
    kind_known_share: float | None = None
    #: copy time that is Unified Memory page migrations (the driver's paging of managed memory, no call of the
    #: program's: ``devices.PAGE_MIGRATION``), as a share of the copy time; None: no copy time
    migration_share: float | None = None
    #: time per step kernels waited for the pages migrated to the GPU under them (each from its start to its first
    #: page's arrival: ``metrics.memcpy.page_waits``): kernel time, no part of ``blocking_ms_per_step`` (the copies ran
    #: while a kernel ran) -- the tables show it in a column of its own (h37-marks68)
    paging_in_kernels_ms_per_step: float = 0.0
    #: of the copy time whose launch the capture holds, the share launched inside a data-parallel wrapper's
    #: parameter-loading hook (``Framework.param_upload_event``: FSDP's pre-forward): offloaded parameters uploaded
    #: before each layer, not an input batch; None where no copy's launch is in the capture
    param_upload_share: float | None = None
    #: the part of ``blocking_ms_per_step`` that is the program's own Unified Memory prefetch (``cudaMemPrefetchAsync``)
    #: with no kernel beside it: the upload the data needs, done the way the copy fixes ask, so no fix removes it
    prefetch_blocking_ms_per_step: float = 0.0
    #: GPU time of the copies that held the host (``sync_count_per_step``'s): a count share times all the copies' time
    #: read a 19 MB pageable batch and its 256-byte label copy as half synchronous
    sync_ms_per_step: float = 0.0
    #: the copies in the kept steps, every rank's (``count_per_step`` is one rank's, per step)
    count: int = 0
    #: the part of ``blocking_ms_per_step`` that ran while the GPU would otherwise have idled waiting for the host:
    #: asynchronous copies done before the host launched the next kernel (``metrics.memcpy._idle_anyway``), off the
    #: step's critical path -- no fix of the copy shortens the step by it (uploads only)
    idle_anyway_ms_per_step: float = 0.0
    #: the share of the copy time on streams of their own, on which the GPU ran no kernel or collective
    #: (``metrics.memcpy._copy_streams``); None: no copy time, or some of it on a stream the file did not record (or
    #: beside kernels on one): which stream it ran on is not known
    own_stream_share: float | None = None
    #: the share of the copy time on streams of no kernel that the legacy default stream still runs in series with
    #: the kernels (the copies on it beside kernels on blocking streams, or on a blocking stream beside kernels on it:
    #: ``metrics.memcpy._copy_streams``), left out of ``own_stream_share``; None where none is, or the format states
    #: no stream's kind (Nsight's ``TARGET_INFO_CUDA_STREAM`` does; Kineto, XPlane and ROCm's traces do not)
    legacy_stream_share: float | None = None
    #: the least time the copies' bytes take on the link between host memory and the GPU (h2d and d2h only: their
    #: bytes over ``devices.host_link``'s bandwidth, per step and GPU): no pinning or overlap makes a copy shorter --
    #: only moving fewer bytes does (h37-bus69: 805 MB of pageable copies promised a pass of 8.30 ms); 0: no bytes known
    bus_floor_ms_per_step: float = 0.0
    #: the words of that link and where its bandwidth comes from (assumed where the capture does not say the GPU's)
    bus_link: str | None = None


@dataclass
class MemcpyStepStat:
    step: int
    gpu: int | None
    direction: str
    count: int
    bytes: int
    ms: float
    sync_count: int


# --------------------------------------------------------------------------- small kernels, eager, host ops


@dataclass
class SmallKernelOffender:
    name: str  # kernel name
    op_type: str
    count: int  # over the kept steps of every rank
    total_ms: float
    avg_us: float
    per_step: float = 0.0  # ``count`` per kept step and rank (``Context.per_step``)
    ms_per_step: float = 0.0  # ``total_ms`` per kept step and rank


@dataclass
class SmallKernels:
    """Kernels shorter than the launch latency band.

    count: kernels with duration < ``threshold_us`` (threshold ``launch.small_kernel_us``);
    tiny_count: < ``launch.latency_us``.  Shares are of all kernels (count)
    and of kernel time.  ``top`` sorted by total time (the guide's
    "126,224 Mul at 21.9 us" example is one row).
    """

    threshold_us: float
    count: int
    tiny_count: int
    share_of_kernels: float | None
    time_ms: float
    share_of_kernel_time: float | None
    per_step: float  # small kernels per kept step and rank (GPU), as the step's times
    top: list[SmallKernelOffender] = field(default_factory=list)
    #: share of the small kernels launched inside the framework's optimizer steps (``Framework.step_end_event``: a
    #: per-parameter optimizer's own kernels); None where the capture names no optimizer step
    in_optimizer_share: float | None = None
    #: every kernel per kept step and rank (the whole ``per_step`` is a part of); None without a kept step
    kernels_per_step: float | None = None


@dataclass
class EagerOps:
    """Ops executed eagerly: TF ``is_eager`` ops and `EagerExecute`, and compiled calls that ran a single op (un-jitted
    JAX), per kept step (:func:`tb_gpu_advisor.metrics.context._eager_ops`)."""

    count: int
    per_step: float
    time_ms_per_step: float
    top: list[str] = field(default_factory=list)
    #: the stock overview's measure (``kEagerReportThresholdInPercent`` is a share of OP time): the eager ops' share of
    #: the host's op time or of the device's op time, whichever is larger (:func:`tb_gpu_advisor.metrics.ops.eager`)
    op_share: float = 0.0
    #: which side ``op_share`` is: "host" or "device"
    op_side: str = "host"


@dataclass
class HostOps:
    """TF ops that launched no device work (host-placed), per kept step."""

    count_per_step: float
    time_ms_per_step: float  # host self time
    share_by_count: float | None
    share_by_time: float | None
    top: list[OpStat] = field(default_factory=list)  # by time


# --------------------------------------------------------------------------- fusion / XLA / loss scaling


@dataclass
class ElementwiseChain:
    """A recurring run of consecutive element-wise kernels on one stream (:func:`~tb_gpu_advisor.metrics.kernels.fusion`)."""

    names: list[str]  # kernel names, in order (shortened)
    length: int
    occurrences: int
    total_ms: float  # kernel time of all its occurrences
    gap_ms: float  # GPU idle between the chain's kernels, all occurrences
    longest_ms: float = 0.0  # the longest kernel of each occurrence, summed: about what the fused kernel takes


@dataclass
class Fusion:
    xla_in_use: bool
    xla_evidence: list[str]  # e.g. "XLA Modules line", "hlo_module stat", "cluster_ names"
    elementwise_kernel_count: int
    elementwise_time_ms: float
    small_elementwise_count: int
    chains: list[ElementwiseChain] = field(default_factory=list)  # top by occurrences * length


@dataclass
class AttentionPattern:
    """One recurring matmul -> softmax -> matmul on one stream (``metrics/attention.py``), all steps and GPUs."""

    first: str  # the matmul kernel before the softmax (short name)
    softmax: str  # the softmax kernel
    second: str  # the matmul kernel after it
    between: list[str]  # the kernels between the two matmuls, in order (the softmax and its element-wise kernels)
    occurrences: int
    matmul_ms: float  # the two matmuls' kernel time, all occurrences
    between_ms: float  # the kernels between them (softmax, scale, mask, dropout, copies), all occurrences
    shapes: str = ""  # the first matmul's op and shapes where the trace records them ("aten::bmm bf16 [..]x[..]")
    #: the score matrices the first matmuls write, all occurrences (bytes; 0 where the trace records no shapes), and
    #: the GPU's peak memory bandwidth (bytes/s; 0 unknown)
    score_bytes: float = 0.0
    bandwidth: float = 0.0
    #: the backward's run (its softmax kernel the softmax's gradient): a training step runs each layer's twice
    backward: bool = False
    #: the class of the module whose call launched the first run's first matmul (``nn.Module: T5Attention_0`` ->
    #: ``T5Attention``), "" where the trace records no module spans: the fix is worded for it
    module: str = ""

    @property
    def round_trip_ms(self) -> float:
        """The score matrix written by the first matmul and read back by the second at the GPU's peak bandwidth, all
        occurrences -- traffic a fused kernel does not make; never more than the matmuls' own time."""
        if self.score_bytes <= 0 or self.bandwidth <= 0:
            return 0.0
        return min(self.matmul_ms, 2.0 * self.score_bytes / self.bandwidth * 1e3)


@dataclass
class UnfusedAttention:
    """Attention computed op by op (``metrics/attention.py``): a matmul, a softmax (with the element-wise kernels
    around it) and a matmul back to back on one stream, recurring within a step -- the score matrix each writes and
    reads in memory, which a fused attention kernel keeps on chip."""

    occurrences: int = 0  # all steps and GPUs
    matmul_ms: float = 0.0  # all steps and GPUs
    between_ms: float = 0.0
    round_trip_ms: float = 0.0  # the score matrices' write and read back at peak bandwidth (``AttentionPattern``)
    #: of ``occurrences``, the backward's runs (``AttentionPattern.backward``): the layers are the forward's runs
    backward_occurrences: int = 0
    patterns: list[AttentionPattern] = field(default_factory=list)  # by time, most first


@dataclass
class LossScaling:
    """Dynamic loss scaling (mixed precision) ops and what they cost."""

    present: bool
    dynamic: bool  # LossScale ops with cond/while/is_finite style update logic
    op_count_per_step: float
    host_ms_per_step: float  # host time of those ops
    gap_ms_per_step: float | None  # GPU-idle time overlapped by them (between/inside steps)
    names: list[str] = field(default_factory=list)
    op_count: int = 0  # the ops in the kept steps, every rank's (``op_count_per_step`` is one rank's, per step)


# --------------------------------------------------------------------------- gaps between steps


@dataclass
class StepGap:
    """GPU idle time after a kept step (end of its last kernel -> first device event of the step after it in the
    capture), or the part of one that a kept step holds where the step on its other side was dropped (``partial``)."""

    after_step: int
    gpu: int | None
    gap_ms: float
    input_wait_ms: float  # host in IteratorGetNext / tf_data while idle
    launch_ms: float  # host launch threads issuing launches while idle
    host_other_ms: float  # other host work while idle
    unexplained_ms: float
    #: the gap's host-caused idle inside the kept steps' windows, per breakdown category, as the step ledger books it
    #: (a gap outside every step's window is in no step's breakdown)
    booked_ms: dict[str, float] = field(default_factory=dict)
    #: the time the gap sits in: from step k's start to step k+1's (step k's window, and the time between the two
    #: windows where the steps are not back to back: device-defined or guessed steps)
    cycle_ms: float = 0.0
    #: the part of a gap a kept step holds, the rest in a dropped step beside it (its window's start or end cuts it):
    #: counted in the mean per step, left out where whole gaps are compared with each other (their regularity)
    partial: bool = False


@dataclass
class Gaps:
    count: int
    avg_gap_ms: float | None
    #: the most gap time one kept step of one GPU holds (the largest of what ``avg_gap_ms`` averages: a kept step
    #: after a dropped one holds two pieces of gap), so the average never exceeds it
    max_gap_ms: float | None
    #: avg_gap_ms / avg_cycle_ms: the gaps' share of the time they sit in, never above 1 (issue #37: the gap over the
    #: mean step read 176% on two steps guessed from GPU bursts, the gap lying in the first)
    share_of_step: float | None
    avg_input_wait_ms: float | None
    avg_launch_ms: float | None
    avg_host_other_ms: float | None
    gaps: list[StepGap] = field(default_factory=list)
    #: the gaps' host-caused idle as the step ledger books it, per breakdown category, ms per kept step and active GPU
    #: (the mean gap's: one gap a step; at most what the ledger holds in the category): what a fix of the gaps can give
    #: back of the step (issue #36 deliverable 1)
    ledger_ms_per_step: dict[str, float] = field(default_factory=dict)
    #: the mean of the gaps' ``cycle_ms``: what a share of the gaps is of
    avg_cycle_ms: float | None = None
    #: the mean length of the steps the gaps follow (one gap per kept step that a step follows: every kept step but a
    #: last that ends the capture): ``avg_cycle_ms`` is this plus the mean time between a step's end and the next's
    #: start, and the part of a gap inside the steps is at most this (h37-left46)
    avg_step_ms: float | None = None
    #: (host op, average ms of a gap it fills), longest first: the outermost host work events in the gaps, where to
    #: look (metrics/breakdown.ops_in_gaps)
    top_ops: list[tuple[str, float]] = field(default_factory=list)
    #: (Python frame, average ms of a gap it holds where no op does), longest first: the program's recorded Python calls
    #: in the gaps (metrics/breakdown.frames_in_gaps)
    top_frames: list[tuple[str, float]] = field(default_factory=list)
    #: (the user's range, average ms of a gap it spans), longest first: the outermost ranges below the step of the
    #: thread spanning the most gap time (metrics/breakdown.range_time)
    top_ranges: list[tuple[str, float]] = field(default_factory=list)
    #: (a communication library's range, average ms of a gap it spans), longest first: the host waiting on other
    #: ranks in the gaps (``MPI_Recv`` in Nsight's MPI domain; frameworks.user_ranges.communication_ranges)
    top_comm_ranges: list[tuple[str, float]] = field(default_factory=list)
    #: (OS call, average ms of a gap, the most ms in one gap) the thread launching the GPU's next work spent blocked
    #: in during the gaps, longest first (Nsight's OS runtime trace; metrics/breakdown.os_waits_in)
    top_os_waits: list[tuple[str, float, float]] = field(default_factory=list)
    #: average ms of a gap the GPU idled holding the next step's work, its launch returned (booked ``unseen``): the
    #: host had handed it over, so that part is no host's time between steps (``metrics/breakdown._idle_before``)
    avg_held_ms: float = 0.0
    #: average ms of a gap the GPU idled while the program waited for the profiler's own work (the ledger's
    #: ``profiler``: a capture's cost, no host's time between steps; h37-ledger59)
    avg_profiler_ms: float = 0.0
    #: average ms of a gap the host spent inside the framework's calls of its compiled functions (JAX's
    #: ``PjitFunction``; ``metrics/breakdown._dispatch_in``): the next call's dispatch, where the framework names it
    avg_dispatch_ms: float = 0.0


# --------------------------------------------------------------------------- GPUs


@dataclass
class GpuMetrics:
    gpu: int
    name: str
    compute_capability: str | None
    sm_count: int | None
    memory_bandwidth_bytes_per_s: float | None
    memory_size_bytes: int | None
    active: bool  # ran at least one kernel or collective (``GpuCtx.active``)
    kernel_count: int  # in kept steps
    step_ms: float | None  # average of this GPU's step windows
    busy_ms_per_step: float | None  # union of this GPU's activity per step
    busy_share: float | None  # busy / step
    breakdown: Breakdown = field(default_factory=Breakdown)  # average per step
    rank: int | None = None  # the job's global rank driving this GPU (PyTorch distributedInfo), None unknown
    collective_calls_per_step: float | None = None
    allreduce_ms_per_step: float | None = None
    allreduce_bytes_per_step: float | None = None
    # avg over steps of (this GPU's first device event - the earliest active GPU's first device event in that step);
    # the "step start" here is the step's earliest GPU start, so the earliest GPU has 0.  None unless >= 2 active GPUs.
    first_kernel_offset_ms: float | None = None
    first_launch_offset_ms: float | None = None  # same for the first host launch record targeting it
    launch_thread_private: bool | None = None  # >= 50 % of its launch records come from tf_gpu_private_* threads
    #: this GPU's idle per step while the host waited in a communication library's calls (the ledger's ``comm_wait``,
    #: ``metrics.breakdown.comm_calls_in_idle``): the rank's MPI wait, which the job splits into transfer and waiting
    host_calls_ms_per_step: float = 0.0
    #: this GPU's collective time per step (as its ledger books it) during which its other work waited for the host to
    #: launch it (``metrics.breakdown.launch_gaps_in_collectives``): launch-bound time the ledger paints as
    #: communication, which launches ahead of the kernels would fill and hide the collective behind
    launch_in_collectives_ms_per_step: float = 0.0
    #: the host's per-step numbers are shared with this GPU (``GpuCtx.shares``: active, or -- no GPU active -- it
    #: copied in the kept steps)
    shares: bool = True
    #: a GPU known only by its allocator's events (``Trace.memory_devices``: its work was not recorded): a row for its
    #: name and memory, with no GPU time
    memory_only: bool = False


@dataclass
class MultiGpu:
    """Several GPUs on one host (guide section 2)."""

    gpu_count: int  # GPU planes
    active_gpus: list[int]
    idle_gpus: list[int]
    step_ms_max: float | None
    step_ms_min: float | None
    busy_share_max: float | None
    busy_share_min: float | None
    busy_imbalance: float | None  # (max busy ms - min busy ms) / max busy ms among active GPUs
    heaviest_gpu: int | None  # GPU with most busy ms
    collective_calls_per_gpu_step: float | None  # average over active GPUs
    allreduce_ms_per_step: float | None  # avg per GPU
    allreduce_bytes_per_step: float | None  # avg per GPU (from memcpy/kernel stats or shapes; None if unknown)
    params: int | None  # parameter count used for the expected time
    params_source: str  # "user" | "allreduce_bytes" | "" (unknown)
    bandwidth_bytes_per_s: float | None  # link bandwidth assumed for the estimate
    bandwidth_source: str  # e.g. "NVLink V100 (150 GB/s per direction)"
    expected_allreduce_ms: float | None  # params * 4 / bandwidth
    launch_skew_ms: float | None  # avg over steps of (max - min) first-kernel start across active GPUs
    launch_order_skew_ms: float | None  # same for first host launch record
    #: the kept steps (ids) ``launch_skew_ms`` averages over: those in which two or more active GPUs ran a kernel (a
    #: GPU that runs nothing in a step starts it at no time); empty: every kept step
    launch_skew_steps: list[int] = field(default_factory=list)
    #: the spread of first-kernel starts in each of ``launch_skew_steps`` (ms, in its order; ``launch_skew_ms`` is their
    #: mean): a share of the skew is over the steps whose whole is measured, each step's own (h37-zero12law)
    launch_skew_by_step: list[float] = field(default_factory=list)
    first_gpu_order: list[int] = field(default_factory=list)  # GPUs by first launch in the typical step
    # overlap of the GPUs' own work (kernels + copies, collectives excluded) per step:
    # (sum of per-GPU busy - union busy) / (sum busy - max busy); 1 = fully concurrent, 0 = one after another
    concurrency: float | None = None
    sequential: bool | None = None  # concurrency < 0.2 with >= 2 active GPUs
    device_copies_per_step: float = 0.0  # D2D + P2P copies per step and active GPU (``per_step``)
    device_copy_ms_per_step: float = 0.0
    step_span_ms: float | None = None  # avg over steps of (latest end - earliest start) of the active GPUs' step windows
    #: each GPU idle inside its own steps while another runs, as the step ledger books it (category -> ms per step and
    #: GPU; measured only when the GPUs look sequential): what running them concurrently gives back of the step
    peer_wait_ledger_ms: dict[str, float] = field(default_factory=dict)
    # (busiest - the median of its peers) / busiest of the active GPUs' non-collective compute ms per step
    # (breakdown.device_compute; ``multigpu.busiest_over_peers``: with two GPUs (max - min) / max).  Busy time hides a
    # straggler: NCCL kernels spin while they wait for the slowest GPU, so the others look as busy as it is.
    compute_imbalance: float | None = None
    #: the GPU whose compute most exceeds the median of its peers'
    heaviest_compute_gpu: int | None = None
    #: the median of the other GPUs' compute ms per step, which ``heaviest_compute_gpu`` is judged against
    compute_peer_median_ms: float | None = None
    #: the active GPUs whose compute per step the kept steps hold (``multigpu.compute_held_gpus``), the set
    #: ``compute_imbalance`` compares; None: every active GPU (a MultiGpu built by hand)
    compute_gpus: list[int] | None = None
    #: the largest excess of one call of one kernel on the busiest GPU over the same call on its peers (their median)
    #: (``multigpu.largest_call_excess``): {"gpu", "peer_gpu" (None where several), "peers", "kernel", "call", "calls",
    #: "ms", "peer_ms" (that call on each), "excess_ms", "gap_ms", "compute_ms", "peer_compute_ms" (per step)}; facts,
    #: judged by
    #: ``rules.gpu_imbalance``; None: no matched call
    largest_call_excess: dict | None = None
    #: where the busiest GPU's compute gap over its peers' median lies, by kernel (``multigpu.gap_by_kernel``):
    #: {"gpu", "kernels": [[kernel, ms per step more than the median peer], ...] (3 at most), "more_kernels",
    #: "more_ms", "less_ms"}; None without a gap
    gap_by_kernel: dict | None = None
    #: per active GPU, its kernels' longest single calls in the kept steps (``multigpu.longest_calls``): [kernel, call
    #: index, ms, calls, ms per step], longest first, a bounded list
    longest_calls: dict[int, list] = field(default_factory=dict)
    #: per active GPU, its compute kernels' summed time (``multigpu.kernel_times``): [kernel, ms per step], largest
    #: first, a bounded list
    kernel_times: dict[int, list] = field(default_factory=dict)
    # the smallest active GPU's AllReduce ms per step: the GPU that enters the collective last waits least, so its
    # time is the transfer itself; the others' include waiting for it (a straggler, a late launch)
    allreduce_transfer_ms_per_step: float | None = None
    #: every active GPU is driven by a process of its own (``Trace.gpu_host_lines``: the ranks of a multi-process job
    #: merged into one capture): no thread moves work between the GPUs, so they cannot run "one after another" for
    #: that cause -- a GPU waiting for another is a rank waiting for its peers
    one_process_per_gpu: bool = False
    #: how many processes drive the active GPUs (the rank a GPU is part of is its process): 1 where the format names
    #: no process per GPU (``Trace.gpu_host_lines`` empty: one process's lines drive every GPU -- TensorFlow's
    #: MirroredStrategy, a JAX process's local devices); 0 without active GPUs
    processes: int = 0
    #: ranks of the whole job the capture belongs to (PyTorch ``distributedInfo.world_size``; an Nsight export's
    #: largest NCCL communicator), None unknown: a rank whose window ran no collective is still one rank of them
    job_ranks: int | None = None
    #: where :attr:`job_ranks` was read, in words (``Trace.world_size_from``: "its distributedInfo")
    job_ranks_from: str = "its distributedInfo"


#: What holds the bytes live at a GPU's memory peak (:attr:`GpuMemory.breakdown`): memory held from before the peak's
#: step (parameters, optimizer state, caches; and whatever was allocated before the capture), and the step's own
#: allocations by the phase that made them -- the forward pass's (activations kept for the backward), the backward's
#: (gradients and its temporaries), the optimizer's -- and those of no known phase.
#: ``casts``: autocast's cached 16-bit copies of the weights made in the peak's own pass or step (freed when its
#: autocast region exits: not held across steps; one made before it, by a region spanning passes, is ``held``).
#: ``activations`` also holds the same forward's previous pass still held at the peak (a rebinding loop's last graph,
#: made before the history: ``GpuMemory.forward_kept_earlier_bytes``), never ``held``; ``casts`` that pass's casts
#: its graph saved (``GpuMemory.forward_kept_earlier_cast_bytes``)
#: ``attention_math`` and ``kv_cache`` (``model.trace.HOLDERS``, from 0.1.0+a56): the blocks a stack names the maker
#: of -- SDPA's math backend, a KV cache's code -- booked to it and not to their phase's category or ``held``
MEMORY_CATEGORIES = ("held", "casts", "activations", "gradients", "optimizer", "other", "attention_math", "kv_cache")


@dataclass
class MemoryHolder:
    """One op (or stack frame) holding bytes at a GPU's memory peak."""

    name: str
    category: str  # MEMORY_CATEGORIES
    bytes: int
    count: int  # live allocations


@dataclass
class GpuMemory:
    """One GPU's memory over the capture (``metrics/memory.py``); bytes, times in the report's ms.

    ``baseline`` ``absolute``: the allocator's own totals; ``capture_start``: the file gives deltas only (PyTorch
    1.8-1.10), and every byte count is what was allocated *above* the capture's start.
    """

    gpu: int
    source: str
    baseline: str
    events: int
    peak_allocated_bytes: int
    peak_reserved_bytes: int | None = None
    capacity_bytes: int | None = None
    capacity_source: str = ""  # "allocator limit" | "device memory" | "reserved + free at the OOM" | RETRY_CAPACITY | ""
    #: where the capacity was read off the allocator's retries (``memory.RETRY_CAPACITY``): when the driver refused
    #: more and what the allocator gave back ("at 229.4 ms the driver refused it more, so ..."); "" else
    retry_words: str = ""
    device_bytes: int | None = None  # the GPU's own memory, where known (an allocator limit may be a share of it)
    #: bytes of the GPU in use outside the process's caching allocator (from 0.1.0+a57: a snapshot's capacity record,
    #: ``MemorySnapshot.outside``): the CUDA context, libraries' own buffers, other processes; None where unknown
    outside_bytes: int | None = None
    peak_ms: float | None = None  # when the allocated peak occurs (report time)
    peak_step: int | None = None  # the kept step it falls in, None outside every kept step
    peak_step_offset_ms: float | None = None  # from that step's start
    peak_step_share: float | None = None  # offset / the step's duration
    #: where the peak falls in a history without times (a PyTorch 2.0 snapshot): its iteration and its event by order
    #: ("training iteration 4 of 4, event 160 of 200"); "" where timed
    peak_place: str = ""
    #: the capture's own peak where a snapshot's first iteration, dropped as warm-up, holds it above every steady
    #: iteration's (its one-time allocations: an autotuner's trial buffer); ``peak_*`` are then the steady ones
    warmup_peak_bytes: int | None = None
    warmup_peak_ms: float | None = None
    warmup_peak_step: int | None = None
    start_bytes: int | None = None  # allocated when the capture starts (absolute baselines)
    #: live bytes at the allocated peak by MEMORY_CATEGORIES ({} where the events carry no addresses to pair)
    breakdown: dict[str, int] = field(default_factory=dict)
    top: list[MemoryHolder] = field(default_factory=list)  # the ops holding most at the peak
    #: the breakdown's activations and gradients were read from the allocation pattern of a history recorded without
    #: stacks (``metrics.memory._pattern_phased``: low confidence), not from frames
    parts_from_pattern: bool = False
    #: peak reserved - peak allocated: bytes the allocator holds from the driver beyond the most ever allocated at once
    #: (blocks split and cached but never whole again, rounding): fragmentation
    gap_bytes: int | None = None
    #: the most reserved bytes in segments holding an allocated block (from 0.1.0+a41; snapshots whose history follows
    #: their segments): peak reserved less the cache of whole empty segments, which ``empty_cache()`` -- or the
    #: allocator itself, before it raises an OOM -- hands back; None where segments are unknown (traces' totals)
    peak_reserved_in_use_bytes: int | None = None
    #: the least the allocator's segment sizes reserve for the blocks live at the allocated peak (the framework's
    #: ``least_reserve``): rounding, no split block; None where the blocks or the allocator's sizes are not known
    reserve_floor_bytes: int | None = None
    #: the allocator's segment allocations and frees (reserved changes) per kept step: driver calls, not caching
    reserved_changes_per_step: float | None = None
    #: per kept step: [step, peak allocated, peak reserved or None, allocated at its start]
    step_peaks: list[list] = field(default_factory=list)
    #: the series for the chart, at most ``memory.timeline_points`` points that keep every peak: ``axis`` ("ms", or
    #: "allocation events" where the history records no times), ``t_ms`` (or ``event``), allocated, reserved
    timeline: dict[str, list | str] = field(default_factory=dict)
    note: str = ""
    #: of ``breakdown["held"]``, the bytes held by their lifetime alone (``MemoryEvents.by_lifetime``) in a history
    #: that holds fewer than two whole turns: not known to be held across steps (``memory._lifetime_only``); 0 else
    held_by_lifetime_bytes: int = 0
    #: the forward pass's blocks live at the allocated peak: bytes, count, the largest, and what became of them
    #: ("still held at the end of the capture", "freed together at 812.0 ms", "freed over 40.2 ms")
    forward_kept_bytes: int = 0
    forward_kept_blocks: int = 0
    forward_kept_largest: int = 0
    forward_kept_sites: int = 0  # distinct places (ops, source lines) that allocated them
    forward_kept_release: str = ""
    #: of the blocks held from before a snapshot's history, those the same forward's earlier pass kept: live at the
    #: peak, freed after it, in the sizes of the pass's own kept blocks (``memory._earlier_pass_kept``): bytes, count
    forward_kept_earlier_bytes: int = 0
    forward_kept_earlier_blocks: int = 0
    #: those blocks are still live at the dump, not freed after the peak: the snapshot was dumped before the new
    #: output replaced the old (``job.iterations.earlier_pass_held``)
    forward_kept_earlier_held: bool = False
    #: of the same blocks, those in the sizes of the pass's own autocast casts live at the peak: the earlier pass's
    #: 16-bit copies its graph saved for a backward (``memory._earlier_pass_casts``): bytes, count
    forward_kept_earlier_cast_bytes: int = 0
    forward_kept_earlier_cast_blocks: int = 0
    #: a snapshot's live blocks that ``Module._apply`` moved as parameters' gradients (``memory._gradients_moved``):
    #: bytes, blocks, and the user's frame that moved the model ("evaluator.py:37 load_model_from_path")
    grads_moved_bytes: int = 0
    grads_moved_blocks: int = 0
    grads_moved_by: str = ""
    grads_moved_of: int = 0  # bytes of every block live at the dump (what the gradients are a share of)
    #: autocast's cached 16-bit copies of fp32 parameters live at the allocated peak (``MemoryEvents.cast_copy``):
    #: bytes and blocks; booked with the parameters in ``breakdown``
    cast_cache_bytes: int = 0
    cast_cache_blocks: int = 0
    cast_cache_largest: int = 0
    #: a leak (``memory._leak``): blocks each of ``leak_iterations`` passes of the same work allocates at the same
    #: sites and the history never frees, while the allocated level between the passes rises by their bytes: the
    #: bytes each pass keeps (``leak_per_iteration_bytes``, ``leak_blocks``), those live at the allocated peak
    #: (``leak_bytes``, the saving) and at the history's end, the sites ("model.py:61 forward"); 0 / [] where none
    leak_iterations: int = 0
    #: of ``leak_iterations``, those before a late-begun history (a full ring buffer): their blocks live at the dump,
    #: made at the leak's lines with its bytes, their events dropped
    leak_earlier_iterations: int = 0
    leak_per_iteration_bytes: int = 0
    #: the bytes the leak's first whole pass keeps: below ``leak_per_iteration_bytes`` (its last pass's) where the
    #: leak grows each pass (``memory._growing_sites``: a list of outputs whose shape grows, a cache keyed by shape)
    leak_first_iteration_bytes: int = 0
    leak_blocks: int = 0
    leak_bytes: int = 0
    leak_end_bytes: int = 0
    leak_sites: list[str] = field(default_factory=list)


@dataclass
class OomReport:
    """An out-of-memory error a snapshot recorded: the request that failed and what was live then."""

    gpu: int
    requested_bytes: int
    device_free_bytes: int
    allocated_bytes: int
    reserved_bytes: int
    frames: list[str]  # where the failed request was made, innermost first
    at_ms: float | None  # None where the history records no times (a PyTorch 2.0 snapshot)
    label: str = ""  # the user's own frame that asked (the first outside the framework)
    #: the largest live allocations then: [bytes, category, frames (innermost first)]
    live: list[list] = field(default_factory=list)
    #: live bytes then by MEMORY_CATEGORIES, and by ``model.trace.HOLDERS`` where the stacks name the maker (SDPA's
    #: math backend, a KV cache: taken out of the category their phase gives)
    by_category: dict[str, int] = field(default_factory=dict)


@dataclass
class Memory:
    available: bool
    peak_bytes: int | None = None
    capacity_bytes: int | None = None
    headroom_share: float | None = None  # 1 - peak / capacity
    note: str = ""
    gpus: list[GpuMemory] = field(default_factory=list)  # per GPU with allocator events (issue #29)
    ooms: list[OomReport] = field(default_factory=list)  # a memory snapshot's out-of-memory errors
    #: a snapshot's allocator settings (``PYTORCH_CUDA_ALLOC_CONF``, ``expandable_segments`` ...)
    settings: dict[str, Any] = field(default_factory=dict)
    #: the file is a memory snapshot (no kernels, no steps: the memory checks are all it has)
    snapshot: bool = False
    #: a snapshot whose allocator history lost its start (``MemorySnapshot.history_cut``): (events kept, ms they span,
    #: ms the recording spans by its annotations); its peaks are those of the kept window only
    history_cut: tuple[int, float, float] | None = None
    #: the PyTorch release whose snapshot layout the file has (``formats.snapshot.reader._layout``: "2.1", "2.0",
    #: "1.13", "2.0 or older", "" where nothing tells): the call that records a history differs by release
    snapshot_layout: str = ""
    #: a snapshot whose allocations carry no stack (``MemorySnapshot.stackless``): phases, kind and iterations
    #: unread but where the allocation pattern shows them (``job.iterations.pattern_phases``)
    stackless: bool = False
    #: that stackless history's live blocks at the dump carry their stacks (``MemorySnapshot.dump_stacks``:
    #: ``context="state"``): the note says which setting dropped the history's
    dump_stacks: bool = False
    #: a snapshot's GPU vendor as its frames name it (``MemorySnapshot.vendor``: "AMD" for a ROCm build's), None where
    #: they do not: the words and fixes of a capture with no GPU that ran work recorded (``rules.base.Ctx.vendor``)
    vendor: str | None = None
    #: the operating system a snapshot's own frames' paths show (``MemorySnapshot.platform``: "Windows"), None where
    #: they do not: the allocator settings its build honours (``Framework.platform_features``)
    platform: str | None = None
    #: a snapshot whose allocations run through ``nn.DataParallel`` (``MemorySnapshot.data_parallel``): its GPUs hold
    #: one module's replicas, and an imbalance among them has DataParallel's fixes (``memory_imbalance``)
    data_parallel: bool = False


@dataclass
class ClockSkew:
    """Device events that start before the host call that launched them (``metrics.capture._clock_skew``).

    linked: device events with a recorded launch call; early: those starting before it; max_lead_us: the largest
    lead -- a lower bound on how far the capture's GPU and host clocks disagree.
    """

    linked: int = 0
    early: int = 0
    max_lead_us: float = 0.0


@dataclass
class PythonTracing:
    """The profiler's Python tracing (PyTorch ``with_stack``'s ``python_function`` events) in the kept steps
    (``metrics.capture._python_tracing``): every Python call the host made is recorded, at a cost to the host's time.

    calls_per_step: Python calls recorded per kept step and GPU (0 where the capture recorded none), of them
    idle_calls_per_step while that GPU ran nothing; call_us: the
    time one recorded call takes at the least, measured in the file -- the 10th percentile of the period of two
    back-to-back calls that call nothing (a call's recording, its own work and the interpreter's between them), so at
    least the recording's own cost per call; None where the file's clock or its calls cannot tell (whole-microsecond
    timestamps, too few such pairs); pairs: how many such pairs it was read from."""

    calls_per_step: float = 0.0
    #: of them, the calls starting while the GPU runs nothing: the recording whose cost lengthens the GPU's idle (a
    #: call while the GPU works ahead of the host costs the step nothing)
    idle_calls_per_step: float = 0.0
    call_us: float | None = None
    pairs: int = 0


@dataclass
class AllocCalls:
    """The driver allocator's calls inside the kept steps, by kind (``metrics.capture.alloc_calls``):
    ``allocator_churn``'s cause and its fix.

    pinned: calls per name of pinned host memory (``cudaHostAlloc``, ``cudaFreeHost``; the trace's names without a
    ``_v3020`` suffix), most first; pinned_ms / device_ms: the host's time inside pinned-host and device allocator
    calls, summed over the kept steps; reallocs: allocations that start after a free of the same kind (pinned host or
    device memory) in the kept steps -- memory given back and asked for again, churn even in one pass of a program;
    pinned_reallocs: those of pinned host memory.  The trace records no call's bytes in
    any format we read (Nsight's runtime table, Kineto's runtime events): calls and time, not sizes."""

    pinned: dict[str, int] = field(default_factory=dict)
    pinned_ms: float = 0.0
    device_ms: float = 0.0
    reallocs: int = 0
    pinned_reallocs: int = 0


@dataclass
class CacheRelease:
    """The driver frees of the kept steps, and those the program's own cache release holds
    (``Framework.cache_release_event``, ``metrics.capture.cache_release``).

    frees: device frees (``cudaFree``) inside the kept steps; released: of them, those inside a call of the program
    emptying the cache; names: those calls' names, the most frees first.  A caching allocator frees nothing of its own
    accord, so frees held by such a call are the churn it causes."""

    frees: int = 0
    released: int = 0
    names: list[str] = field(default_factory=list)


@dataclass
class CaptureQuality:
    length_ms: float  # first to last event (or profile_start/stop_time)
    steps_captured: int  # steps detected (before dropping)
    steps_kept: int
    steady_state: bool | None  # kept step times even (cv <= capture.max_step_cv) and no cold start; None with < 2 steps
    step_time_cv: float | None  # std / mean of kept step times
    too_short: bool  # < 3 steps or < 100 ms
    too_long: bool  # > 60 s of capture
    num_events: int
    gpu_thread_mode_private: bool  # tf_gpu_private_* launch threads seen
    note: str = ""
    framework: str = "unknown"  # "tensorflow" | "jax" | "unknown" (frameworks/): how fixes are spelled
    #: the framework that ran the work where it is not :attr:`framework`, the one whose profiler wrote the capture (a
    #: JAX program under ``torch.profiler``: ``frameworks.detect_work``); "" where they are one.  The capture's words
    #: are :attr:`framework`'s, the work's fixes this one's (``frameworks.recorded_by``)
    work_framework: str = ""
    #: share of kernel time in kernels launched inside CUDA graphs (XLA command buffers): their per-op names are lost
    graph_kernel_share: float = 0.0
    #: what the report's ms times (step starts, trace-viewer windows) count from, in words (``Trace.time_base``)
    time_base: str = ""
    #: the capture's format id (``formats``): whose profiler recorded it, and so whose options move its window
    capture_format: str = ""
    #: device work recorded as starting before its own launch call: the capture's clocks disagree
    clock_skew: ClockSkew = field(default_factory=ClockSkew)
    #: the profiler's Python tracing in the kept steps: its calls per step and the least time one takes
    python_tracing: PythonTracing = field(default_factory=PythonTracing)
    #: where the window ``length_ms`` measures starts, in the report's ms (``time_base``): 0 where the viewer counts
    #: from the window's start; later where recorded events precede it (``Trace.capture_start_ps``)
    window_start_ms: float = 0.0
    #: the file is a lossy printing of a fuller capture (``Trace.printed_from``), and what it did not keep
    #: (``Trace.not_kept``): the checks that needed it had nothing to read
    printed_from: str = ""
    not_kept: tuple[str, ...] = ()
    #: the collective kernels of a capture that holds nothing but them (``metrics.capture.collectives_only``: a filter
    #: of a fuller trace), 0 otherwise
    collectives_only: int = 0


@dataclass
class Dispatch:
    """The framework's dispatch of compiled work (JAX ``PjitFunction`` calls), per kept step; zeros elsewhere.

    calls_per_step: outermost dispatch events per step; host_ms_per_step: their host time.  A step of one or two
    calls whose dispatch costs more host time than its GPU work is launch-bound at step level (tiny jitted steps).
    """

    calls_per_step: float = 0.0
    host_ms_per_step: float = 0.0
    #: ms per step of host time inside executions of the compiled programs (XLA's ``<module>:XLA GPU module`` or
    #: module NVTX range): the host running a program's own thunks, not Python around the calls
    execution_ms_per_step: float = 0.0
    #: iterations per step of loops the compiled programs run from the host (XLA's ``[iter=N]`` spans inside an
    #: execution: a ``while`` loop's body launched once per iteration), and their host time in ms per step (also from
    #: Nsight's loop thunk ranges, ``xla.is_nvtx_loop_thunk``, which mark no iteration: time without a count)
    loop_iterations_per_step: float = 0.0
    loop_ms_per_step: float = 0.0


@dataclass
class HostRoundTrip:
    """Data leaving the GPU mid-step and coming back: a device->host copy, host work, a host->device copy.

    Per kept step and active GPU: from the end of the step's first D2H copy to the start of the last H2D copy
    after it, the time the GPU was idle (the step's computation sat on the host: a ``.numpy()``/``np.asarray``
    and back, an op placed on the CPU).  Averaged over kept steps (steps without a round trip count 0).
    """

    steps_with: int = 0  # kept steps (on any active GPU) with a D2H ... H2D round trip
    idle_ms_per_step: float = 0.0  # GPU idle inside the round trips, per kept step (mean over active GPUs)
    d2h_bytes_per_step: float = 0.0
    h2d_bytes_per_step: float = 0.0


@dataclass
class CollectiveStat:
    """One collective type (``devices.COLLECTIVE_TYPES``, or ``collective`` when unknown), per step and active GPU."""

    type: str
    calls_per_step: float
    ms_per_step: float
    exposed_ms_per_step: float  # not overlapped by any compute kernel of the same GPU
    #: the least time any active GPU spends in it (one GPU: its own); what the transfer takes, the rest of the others'
    #: time is waiting for the GPU that arrives last.  0 when some active GPU runs none of it.
    transfer_ms_per_step: float = 0.0
    #: runs of calls with no compute kernel starting between two of them: what packing could merge them into
    groups_per_step: float = 0.0
    #: the transfer of the same calls over their whole time, where a call runs past the kept steps (queued collectives
    #: nobody waits for): the time per step above counts only their time inside the steps' windows, as the ledger
    #: does; a rate (bytes per call over the time per call) needs each call's whole time.  Equal to
    #: ``transfer_ms_per_step`` where every call ends inside the steps
    whole_transfer_ms_per_step: float = 0.0
    #: one rank's message per call (mean over calls whose op recorded its size: the bytes a call moves), None unknown
    bytes_per_call: float | None = None
    #: ranks taking part (the ops' ``Group size``, else the job's world size), None unknown
    group_size: int | None = None
    #: the process groups its calls ran in ("pg 0 (default_pg)"), where the capture records them: one row per type
    #: may mix a data-parallel and a tensor-parallel group
    process_groups: list[str] = field(default_factory=list)
    #: per GPU (``Communication.per_gpu``' rows): each call of the kept steps as (process group label or "", step
    #: number, one rank's message bytes or -1, transfer ms) -- the transfer the least time any GPU of the host spends
    #: in that call where the host's calls pair up, else this GPU's own time -- in (group, step, start) order: what
    #: matches the call across host files (``metrics.job.JobView.transfer_ms``)
    calls: list[tuple[str, int, int, float]] = field(default_factory=list)
    #: per GPU, beside ``calls`` (same order): each call's (arrive, ready, at) ms -- how long before the call's end
    #: this GPU entered it and was ready to (``metrics.comm.ready_ps``), and its end after the GPU's first collective
    #: end of that step.  Every rank leaves a collective together, so these need no clock shared between machines:
    #: what a replay of the job's calls with one rank on time reads across host files (``metrics.comm.step_gain``)
    call_times: list[tuple[float, float, float]] = field(default_factory=list)
    #: calls that started before the first kept step and run into it (``metrics.comm.ran_into_steps``), summed over
    #: the GPUs of the row: their time inside the steps is in ``ms_per_step`` (as the ledger paints it), their calls
    #: are not in ``calls_per_step`` -- a call is counted in the step it starts in, a dropped one for these (counting
    #: a share of one at the front without taking the share of the last call that runs out past the steps would
    #: count more calls than the job issues per step) -- and their time is not in the bus bandwidth's time per call
    calls_before: int = 0
    #: the GPU idle between the type's calls where they run one by one, small, at the host's pace (booked as
    #: collectives in the ledger: ``metrics.breakdown.paced_collective_gaps``): what their count costs, past their time
    paced_ms_per_step: float = 0.0
    #: the calls in such runs, per step
    paced_calls_per_step: float = 0.0
    #: the job's global ranks of every process group the row's calls ran in (PyTorch's ``Process Group Ranks``),
    #: sorted; None where a call's group does not record them: the ranks a call could have waited for
    group_ranks: list[int] | None = None


@dataclass
class Communication:
    """Collective time per step and active GPU, and the part the step pays for (:mod:`tb_gpu_advisor.metrics.comm`)."""

    ms_per_step: float = 0.0
    exposed_ms_per_step: float = 0.0
    by_type: list[CollectiveStat] = field(default_factory=list)
    #: per GPU id, the same rows for that GPU alone (its transfer is its own time): the job view's input
    per_gpu: dict[int, list[CollectiveStat]] = field(default_factory=dict)
    #: who enters the collectives last, call by call across the host's GPUs (``metrics.comm.arrivals``: "gpu",
    #: "calls", "last_in", "wait_ms", "lag_ms"); None where no calls pair up
    arrivals: dict | None = None


@dataclass
class GemmRoofline:
    """One matmul/conv/attention shape (calls with the same op, dtype and shapes) against its roofline."""

    label: str  # "aten::mm bf16 [4096,4096]x[4096,4096]", or the HLO instruction
    kind: str  # matmul | conv | attention | depthwise (model.trace.FLOP_KINDS)
    precision: str  # what its kernels run in (their names), else its inputs' dtype
    calls_per_step: float
    flops_per_call: float
    ms_per_step: float  # its kernels' time
    tflops_per_s: float | None  # achieved: FLOPs / kernel time
    intensity: float | None  # FLOP per byte: FLOPs / (operands + result bytes)
    attainable_tflops_per_s: float | None  # min(peak, intensity x memory bandwidth)
    roofline_share: float | None  # achieved / attainable
    bound: str | None  # "compute" | "memory": which roof limits it

    @property
    def on_matrix_units(self) -> bool:
        """Its work is the matrix units' (``model.trace.MATRIX_FLOP_KINDS``), what MFU and the GEMM figures count; a
        ``depthwise`` row is the vector units' (h37-flops68)."""
        return self.kind in MATRIX_FLOP_KIND_NAMES

    @property
    def above_floor_ms_per_step(self) -> float:
        """Its kernels' time above the least its work takes at the GPU's peaks (its roofline's own time, the share
        achieved of it): what any fix keeping its work and precision can take off -- all of it where no roofline is
        known (h37-pool37)."""
        share = self.roofline_share
        return self.ms_per_step if share is None else self.ms_per_step * max(0.0, 1.0 - share)


@dataclass
class Flops:
    """FLOPs per step, model FLOPs utilisation and the top GEMMs' rooflines (:mod:`tb_gpu_advisor.metrics.flops`).

    Per GPU: a host's FLOPs per step are shared evenly by its active GPUs (data parallel), so ``flops_per_step``,
    ``peak_flops`` and ``mfu`` read the same on one GPU as on eight."""

    source: str | None = None  # "trace shapes" | "hlo" | "user" (what flops_per_step is)
    flops_per_step: float | None = None  # per GPU
    trace_flops_per_step: float | None = None  # per GPU, from the trace even when the user gave model FLOPs
    user_flops_per_step: float | None = None  # the user's --model-flops-per-step
    #: per GPU, from the trace: the FLOPs of work on the vector units (depthwise convolutions, ``FLOP_KINDS``), apart
    #: from the matrix units' FLOPs MFU counts (``trace_flops_per_step``): the two sum to the trace's FLOPs
    vector_flops_per_step: float | None = None
    vector_note: str | None = None  # what MFU leaves out, in words ("{per_step}": the window's)
    #: FLOP/s per GPU: the vector units' peak the ``depthwise`` roofline rows were rated against
    #: (``devices.vector_peak_flops``; the type most depthwise FLOPs are in, ``devices.vector_peak_16`` for 16 bits
    #: where published, h37-conv69), where the trace holds depthwise work and the GPU's vector peak is known; None
    #: otherwise -- never a guess at an unknown GPU's units.  Why: the roofline chart draws their roof from it, and a
    #: memory-bound depthwise row alone gives no height for it (h37-roof68)
    vector_peak_flops: float | None = None
    step_ms: float | None = None
    tflops_per_s: float | None = None  # achieved per GPU over the step
    dtype: str | None = None  # the precision that dominates GEMM time: the peak MFU is of
    peak_flops: float | None = None  # FLOP/s per GPU, dense: MFU's denominator (the best 16-bit peak, see peak_dtype)
    peak_dtype: str | None = None  # the dtype whose peak MFU is over (bf16/fp16; fp8 where the GEMMs run in it)
    dtype_peak_flops: float | None = None  # the peak of the dtype the GEMMs run in (``dtype``)
    dtype_mfu: float | None = None  # FLOPs per step over step time x that dtype's own peak
    peak_source: str | None = None
    mfu: float | None = None  # flops_per_step / (step time x peak)
    hfu: float | None = None  # trace FLOPs / (step time x peak), where the user gave model FLOPs
    memory_bandwidth: float | None = None  # bytes/s per GPU
    bandwidth_source: str | None = None
    #: share of matmul/conv kernel time launched by the ops whose FLOPs are known (PyTorch): below
    #: ``flops.min_coverage`` the FLOPs miss work and MFU is not given
    coverage: float | None = None
    gemm_ms_per_step: float | None = None  # GEMM kernel time of the ops with known FLOPs, per GPU
    #: the other kernels those ops launched (autocast's casts, bias adds, layout copies), per GPU: memory-bound work
    #: that is not counted as GEMM time
    non_gemm_ms_per_step: float | None = None
    gemm_tflops_per_s: float | None = None  # their FLOPs over their kernel time
    #: GEMM time at < ``flops.low_roofline_share`` of its roofline, as a share of gemm_ms_per_step
    below_roofline_share: float | None = None
    #: the least kernel time per step and GPU that the GEMM shapes of known FLOPs and bytes need at the GPU's peaks
    #: (FLOPs at its peak, their operands' bytes at its memory bandwidth, whichever takes longer), each shape's at most
    #: its measured time (one faster than its bytes allow read them from cache); None where no peak is known.  Why: no
    #: fix makes a kernel beat its GPU's peak, so no saving takes the kernel time below it (``rules.base.floor_cap``)
    floor_ms_per_step: float | None = None
    top: list[GemmRoofline] = field(default_factory=list)
    #: per kind of work (matmul, conv, attention): [ms per step and GPU, achieved TFLOP/s], where kernels are known
    by_kind: dict[str, list[float]] = field(default_factory=dict)
    note: str | None = None  # why a number is missing, in words a user can act on


# --------------------------------------------------------------------------- per host


@dataclass
class HostSyncs:
    """The host waiting for the GPU inside kept steps (``.item()``, ``cudaStreamSynchronize``, event waits)."""

    calls_per_step: float = 0.0  # sync calls per kept step the program asked for (not a blocking copy's own)
    calls: int = 0  # those calls in the kept steps, every rank's (``calls_per_step`` is one rank's, per step)
    #: GPU idle after them until the host launched again (mean over active GPUs), less input waits and host time the
    #: profiler did not record
    gpu_idle_ms_per_step: float = 0.0
    #: that idle as the step's ledger books it, per breakdown category (ms per step and GPU, adding up to
    #: ``gpu_idle_ms_per_step``): only the kept steps' time, where the breakdown puts it (issue #36)
    gpu_idle_ledger_ms: dict[str, float] = field(default_factory=dict)
    #: per step, the op the program called around each sync (the outermost framework op on its line: ``.tolist()``
    #: is ``aten::to``, not the ``aten::copy_`` inside; h37-probe44s), else the sync call itself
    callers: list[tuple[str, float]] = field(default_factory=list)
    #: of ``calls_per_step``, the syncs an op made to go on with its own work (``torch.nonzero``, ``x[mask]``,
    #: ``torch.unique``: it read a size, then launched more), named by the op the program called (h37-probe43s)
    in_op_calls_per_step: float = 0.0
    #: of ``calls_per_step``, the program's polls: runs of event or stream queries until the GPU was done
    #: (``while not ev.query()``: ``job.waits.polls``), each one wait
    poll_calls_per_step: float = 0.0
    #: host time inside those syncs per kept step and active GPU (what the syncs themselves cost the host)
    wait_ms_per_step: float = 0.0
    #: syncs that are a blocking copy's own (a pageable host-to-device copy waits for its stream), per kept step
    copy_calls_per_step: float = 0.0
    #: GPU idle after those blocking copies until the host launched again: the copies' cost, not a sync's (inside the
    #: kept steps, as the ledger books it)
    copy_idle_ms_per_step: float = 0.0
    #: that idle per breakdown category, as ``gpu_idle_ledger_ms`` is the syncs' (issue #36)
    copy_idle_ledger_ms: dict[str, float] = field(default_factory=dict)
    copy_callers: list[tuple[str, float]] = field(default_factory=list)
    #: host time inside those blocking copies' ops per kept step and active GPU (each op once: the wait for the stream
    #: to drain and the copy itself): all that pinned memory and a copy off the host's path can give back -- the host's
    #: own work around them stays (``rules.excessive_memcpy._serial_upload``)
    copy_held_ms_per_step: float = 0.0
    #: of ``copy_held_ms_per_step``, the host's time in those ops while the GPU still ran work launched before they
    #: began (the drain a blocking copy waits for; ``metrics.syncs._copy_drain``): the rest is the copies' own
    #: staging and transfer -- a copy whose call finds the GPU idle waits for no earlier work; None where unread (no
    #: GPU of the copies' thread whose clock agrees with the host's, or no copy op)
    copy_drain_ms_per_step: float | None = None
    #: how many of those ops per step waited for a drain at all (a copy's own latency or more): the rest found the
    #: GPU idle; None where ``copy_drain_ms_per_step`` is
    copy_drained_per_step: float | None = None
    #: of ``copy_idle_ms_per_step``, the GPU idle before copies whose call held the host until the transfer began (an
    #: AMD tracer's staged pageable copy: ``metrics.syncs.copy_leads``), not claimed by a sync
    copy_lead_ms_per_step: float = 0.0
    #: of ``copy_idle_ms_per_step``, the GPU idle after copies to or from pageable memory whose call held the host past
    #: the transfer's end (a synchronous download copied out of the driver's staging buffer: ``metrics.syncs.copy_tails``)
    copy_tail_ms_per_step: float = 0.0
    #: of the syncs' and the copies' idle (``gpu_idle_ledger_ms`` + ``copy_idle_ledger_ms``), the part inside the
    #: between-step gaps (``Gaps``), per breakdown category: a gap that follows a step's closing wait is that wait's
    #: idle, not host work the gaps' check may claim again
    in_gaps_ledger_ms: dict[str, float] = field(default_factory=dict)
    #: of the syncs' idle (``gpu_idle_ms_per_step``), the part the host stalled in slow asynchronous calls that wait
    #: for no GPU work (``HostMetrics.idle_in_async_stalls`` inside the syncs' own idle: ``metrics.breakdown
    #: .async_stalls_in_idle``), (call, ms per kept step and rank), longest first
    idle_in_async_stalls: list[tuple[str, float]] = field(default_factory=list)
    #: GPU idle after any sync or blocking copy while the host thread ran nothing the profiler recorded (Python the
    #: profiler did not trace): named apart, neither the sync's nor the copy's
    unrecorded_ms_per_step: float = 0.0
    #: where the capture lost its GPU records (no runtime call): the host's time per kept step in the framework's
    #: scalar reads that waited on the GPU (``job.kind.waited_scalar_reads``), and per read (``read under op``: the
    #: op that asked for the value, where one encloses it)
    lost_read_ms_per_step: float = 0.0
    lost_read_callers: list[tuple[str, float]] = field(default_factory=list)


@dataclass
class HostInput:
    """What the input wait is made of: the input pipeline's own events, and the host time before each step's first
    op that is not theirs (named apart)."""

    #: where the input wait comes from: "pipeline" (the input pipeline's own events: DataLoader ``__next__``,
    #: ``IteratorGetNext``), "before_first_op" (no such event: the host time before each step's first op stands in
    #: for an untraced loader), "" (neither)
    source: str = ""
    #: host time per kept step before the step's first op that is no input pipeline's (a capture that records its
    #: input pipeline): Python before the first op, not input
    pre_op_ms_per_step: float = 0.0
    #: every input pipeline event in the kept steps is of a pipeline that already makes batches in parallel with the
    #: step (``Framework.parallel_input``: a DataLoader with worker processes): its wait is workers too slow
    parallel: bool = False
    #: the pipeline's batches are made by worker processes (``Framework.parallel_input``, alone or inside the program's
    #: ranges around its fetch), whoever holds the wait: where ``parallel`` is False the loop's own code inside its fetch
    #: range holds most of it, and "load batches in workers" is a lever in use, not a fix (h37-huntr67)
    workers: bool = False
    #: the loop's own code inside the ranges it marks around each fetch holds most of the wait, outside the pipeline's
    #: own events: ``workers`` and not ``parallel``, or a pipeline without workers whose ``__next__`` holds under half
    #: (``metrics/inputs._serial_range_holds``): the first fix names that code (``input_bound:own_range``)
    own_range: bool = False
    #: ``own_range``: the calls the profiler recorded inside the program's fetch ranges and outside the pipeline's own
    #: events -- the loop's own code there --, as (name, calls per step, ms per step of the input wait inside them:
    #: parts of ``ranges``' own, never more), longest first;
    #: the rest of the ranges' own time is Python the profiler did not record
    range_calls: list[tuple[str, float, float]] = field(default_factory=list)
    #: source "before_first_op": the host's recorded ops filling that time (name, ms per step), longest first
    #: (metrics/inputs._ops_in): the step making its input itself, not an untraced loader, where they fill it
    ops: list[tuple[str, float]] = field(default_factory=list)
    #: source "pipeline": ms per step and GPU of the input wait spent in the batch's transfer to the device after the
    #: pipeline made it (``Framework.batch_transfer_event`` among the input events: TF's ``IteratorGetNext/_1:_Send``)
    transfer_ms_per_step: float = 0.0
    #: source "pipeline": the ranges the program names for fetching its batch among the pipeline's events (no event of
    #: the framework's own pipeline: ``get_batch`` as ``record_function``, NVTX, ``jax.profiler.TraceAnnotation`` or
    #: ``tf.profiler.experimental.Trace``; ``Framework.input_range``), as (name, ms per step and GPU of the input wait
    #: inside them), longest first: what the finding names as the pipeline (issue #37 item 4)
    ranges: list[tuple[str, float]] = field(default_factory=list)
    #: source "pipeline": the ops the input pipeline's own functions ran on the threads the step's ops run on
    #: (``Trace.pipeline_ops``: tf.data's ``map``, Keras's ``GatherV2`` slicing NumPy arrays into batches), as (op name,
    #: ms per step and GPU of the input wait inside them, the framework's own pipeline events aside), longest first:
    #: pipeline work the step waits behind, named as such -- neither ranges the program marks nor its ops placed on
    #: the host (h37-survey68)
    functions: list[tuple[str, float]] = field(default_factory=list)
    #: source "before_first_op": the program's Python frames holding that time (``with_stack``; outermost frames with
    #: only host work, ``context.lead_frames``), as (frame name, ms per step, whether its name says it fetches or
    #: prepares the batch -- ``Framework.input_frame``), longest first: the input wait is the named ones' time and
    #: time no frame covers; the others' is in ``pre_op_ms_per_step`` (metrics/inputs._frames_in, issue #37 item 4)
    frames: list[tuple[str, float, bool]] = field(default_factory=list)
    #: the frames directly inside the longest of ``frames`` (name, ms per step inside that time), longest first: what
    #: it spends its time in (a pipeline's ``preprocess``: its image processor, its video decoding)
    frames_within: list[tuple[str, float]] = field(default_factory=list)
    #: Python calls the profiler recorded (``with_stack``) per kept step and GPU that start inside the input wait's own
    #: host time (the pipeline's events, the lead that stands for it) while the GPU ran nothing: the tracing's cost in
    #: this wait is these calls' (``metrics.capture.idle_calls_within``); 0.0 where no Python was traced there
    traced_calls_per_step: float = 0.0
    #: source "pipeline": ms per step and GPU of the input wait outside the pipeline's own events, in the batch's
    #: transfers to the device the ledger books as input beside them (``jax.device_put`` after the program's fetch
    #: range; ``context._input_spans`` (b) and (c)): the part of the wait a finding naming the pipeline's ranges names
    #: beside them (metrics/inputs._put_ms, h37-forms10in)
    put_ms_per_step: float = 0.0
    #: source "pipeline": ms per step and GPU of the input wait inside the framework's own pipeline events
    #: (``Framework.input_event``: the DataLoader's ``__next__``, tf.data's ``IteratorGetNext`` and its send), the
    #: program's ranges aside: the part a finding naming the iterator's next batch states (metrics/inputs._own_ms,
    #: h37-forms10num)
    own_ms_per_step: float = 0.0
    #: source "pipeline": the framework's own pipeline event holding the most of ``own_ms_per_step`` where it is a
    #: frame the profiler's Python tracer recorded (``Framework.traced_frame``: JAX's or TF's ``$dataset_ops.py:4734
    #: __next__``), so the finding says so; "" otherwise (metrics/inputs._own_frame)
    own_frame: str = ""
    #: source "before_first_op": ms per step and GPU of the input wait inside the host time before each step's first
    #: op that stands for an untraced loader (the input spans): the part a finding naming that time states
    #: (metrics/inputs._lead_ms, h37-forms10num)
    lead_ms_per_step: float = 0.0
    #: source "before_first_op": that time ends at the end of the batch's put to the device, not at the first op (most
    #: leads cut there: ``context._lead_to_the_put``, h37-probe43t), so the finding says so -- the untraced Python
    #: after the put is in ``pre_op_ms_per_step`` (h37-probe44s)
    lead_to_put: bool = False
    #: whether anything read an input wait: the input pipeline's own events, transfers to the device, or each marked
    #: step's host time before its first op (``context._input_measured``).  False where none did (steps from the
    #: GPU's period or a program's spans with no pipeline event: an NVTX-only Megatron export): the input wait is then
    #: not measured, never 0% (h37-review15)
    measured: bool = True

    @property
    def own_pipeline(self) -> bool:
        """The capture records the input pipeline's own events in the kept steps (:attr:`source` "pipeline"): what
        gives the input checks a meaning where the framework has none of its own (``Framework.applies``' ``own_input``:
        a native program's range named for fetching its batch)."""
        return self.source == "pipeline"


@dataclass
class KernelDurations:
    """Kernel durations in kept steps as a log-spaced histogram (us), with the launch-latency band."""

    edges_us: list[float] = field(default_factory=list)  # bin edges, the last one inf
    counts: list[int] = field(default_factory=list)
    total_us: list[float] = field(default_factory=list)  # kernel time per bin
    band_us: tuple[float, float] = (0.0, 0.0)  # launch latency .. small-kernel cut
    below_band_count: int = 0
    count: int = 0


@dataclass
class Handoff:
    """The handoffs between streams that hold most of a host's ``stream_handoff`` idle, as the capture shows them
    (``metrics/breakdown.handoff_reading``): where to look, and what the capture says ordered the streams."""

    #: "stream 13 to stream 7" ("" where the ledger holds no handoff)
    streams: str = ""
    #: what ran on the stream waited on: "kernel", "collective", "copy" or "fill"
    waited_kind: str = ""
    #: the work that most of the idle follows, on the stream waited on, and the work it precedes (short names)
    waited: str = ""
    waiting: str = ""
    #: the call by which the launching thread recorded a stream's wait for another's event between the two launches for
    #: most of the idle, as the capture names it (``cudaStreamWaitEvent``, ``cuStreamWaitEvent``,
    #: ``hipStreamWaitEvent``): the program (or its framework) ordered the streams; "" where it recorded none
    event_wait: str = ""
    #: the legacy default stream orders the two streams (one is it, the other a blocking stream of its context:
    #: ``DeviceEvents.legacy_ordered``, where the format states the kinds) -- an implicit wait no call records
    legacy: bool = False


@dataclass
class Submission:
    """How long a GPU's work waits after its launch call returns onto the idle GPU (``metrics/breakdown.submission``):
    the driver's submission latency where nearly every launch pays about the same wait.

    Why: a driver that submits launches in batches (Windows' WDDM driver model, WSL2) starts every kernel tens of
    microseconds after its call returns even on an idle GPU.  The part of that wait past the usual allowance
    (``LAUNCH_START_PS``) was read as the GPU holding work for another process's context: duoan/playground-cuda's
    RTX 5080 "held" 881 us of each 8.87 ms step, every launch 23-71 us late (h37-idle67)."""

    #: launches onto an idle GPU whose wait was read (the first work of each launch, started after the GPU idled)
    launches: int = 0
    #: their wait from the call's return to the work's start: median and 90th percentile, us
    median_us: float = 0.0
    p90_us: float = 0.0
    #: share of them that waited ``launch.submit_floor_us`` or more
    delayed_share: float = 0.0
    #: whether the waits are one submission latency (paid by nearly every launch, narrow, tens of us)
    latency: bool = False
    #: the longest hold read as that latency (us; 0 where there is none): a longer one stays held work
    cap_us: float = 0.0
    #: ms per step and GPU of idle the GPU held work through that latency, booked as the host's time, not held work
    idle_ms: float = 0.0
    #: the part of ``idle_ms`` on the step's critical path: the host waiting for the GPU in a sync meanwhile
    #: (``metrics/breakdown.submission_critical``), ms per step by the ledger's category -- what the latency costs
    critical_ms: dict[str, float] = field(default_factory=dict)
    #: kernels and other works launched per step on that GPU
    launches_per_step: float = 0.0
    #: what the capture says of the host's OS ("Windows paths", "WSL2 paths"; "" where it says nothing)
    os_hint: str = ""


@dataclass
class HostMetrics:
    """Everything about one host file; the argument of ``rules.evaluate``."""

    host: str
    path: str
    capture: CaptureQuality
    steps: StepDetection
    headline: Headline
    breakdown: Breakdown  # average per kept step, host-wide (active GPUs' union)
    steps_detail: Sequence[StepMetrics]  # a StepTable (columns) from compute_host_metrics; a list also does
    gpus: list[GpuMetrics]
    kernels: list[KernelStat]  # sorted by total time
    ops: list[OpStat]  # sorted by kernel + host time
    memcpy: list[MemcpyStat]
    memcpy_steps: list[MemcpyStepStat]
    small_kernels: SmallKernels
    eager: EagerOps
    host_ops: HostOps
    fusion: Fusion
    loss_scaling: LossScaling
    gaps: Gaps
    multi_gpu: MultiGpu
    memory: Memory
    notes: list[str] = field(default_factory=list)
    round_trip: HostRoundTrip = field(default_factory=HostRoundTrip)
    dispatch: Dispatch = field(default_factory=Dispatch)
    kernel_durations: KernelDurations = field(default_factory=KernelDurations)
    syncs: HostSyncs = field(default_factory=HostSyncs)
    input: HostInput = field(default_factory=HostInput)
    comm: Communication = field(default_factory=Communication)
    flops: Flops = field(default_factory=Flops)
    #: fixes the trace shows in use (``Framework.applied_markers``): evidence id -> what shows it, in words
    applied: dict[str, str] = field(default_factory=dict)
    #: texts of the framework's fixes whose object the trace does not hold (``Framework.fix_needs``): never given
    unmet_fixes: list[str] = field(default_factory=list)
    #: what the capture is: the kind of work, its phase, its version (``job/``); None for a bare reading
    job: Job | None = None
    #: kernel time per step and GPU (mean, as ``breakdown``) that the GPU's next work waited for
    #: (``metrics/breakdown.critical_time``): the most a faster kernel can take off the step while the host paces the
    #: GPU (issue #37); None where no step or kernel was measured
    compute_critical_ms: float | None = None
    #: per kernel class ("matmul", "other": ``metrics/breakdown.CRITICAL_CLASSES``), the share of its kernel time the
    #: GPU's next work waited for: a fix's speed-up shortens the step only on that part of the kernels it touches
    compute_critical_share: dict[str, float] = field(default_factory=dict)
    #: (range, ms per step and active GPU) of the user's ranges (NVTX, ``record_function``) that span the most of the
    #: GPU's idle time inside the steps, outermost ranges of one thread, longest first: where in the user's code the
    #: host holds the GPU idle (``metrics/breakdown.ranges_in_idle``)
    idle_in_ranges: list[tuple[str, float]] = field(default_factory=list)
    #: range -> ledger category (``metrics/breakdown.HOST_IDLE``) -> ms per step and active GPU of the GPU's idle the
    #: range spans and the step ledger books there: where one finding's own time lies, each instant in one category
    #: (``metrics/breakdown.ranges_in_host_idle``; the top ranges of each category)
    idle_in_ranges_by: dict[str, dict[str, float]] = field(default_factory=dict)
    #: (Python call, ms per step and active GPU): where the capture traced Python (``with_stack``), the deepest
    #: recorded call holding most of the host's own work the ledger books in the steps (``host_compute``;
    #: ``metrics/breakdown.deepest_frame``); None where Python was not traced or no call holds that much
    host_work_frame: tuple[str, float] | None = None
    #: ms per step and active GPU of that host work inside the model's own recorded calls (the framework's
    #: ``model_call`` spans: ``nn.Module``, ``_call_impl``; ``metrics/breakdown.held_by``): 0.0 where none was recorded
    host_work_in_model: float = 0.0
    #: of those ranges, the ones inside which the host launched GPU work in the steps: a launch fix fits their time only
    ranges_launching: list[str] = field(default_factory=list)
    #: the user's ranges (of those spanning the GPU's idle in the steps or the gaps between them) inside which the host
    #: launched the steps' kernels, not only copies: the step's own compute phases (a model's forward), whose host time
    #: before their launches is the dispatch of their ops, not work that could run elsewhere (``step_gaps``)
    ranges_computing: list[str] = field(default_factory=list)
    #: (OS call, ms per step and active GPU) the thread launching the GPU's next work spent blocked in while the GPU
    #: idled inside the steps (Nsight's OS runtime trace: ``read``, ``getc``...), longest first
    #: (``metrics/breakdown.os_waits_in_idle``)
    idle_in_os_waits: list[tuple[str, float]] = field(default_factory=list)
    #: (communication call, ms per step and active GPU) of the GPU's idle inside the steps that the ledger books to the
    #: host waiting in a communication library's call (``MPI_Wait``; with the collectives), longest first
    #: (``metrics/breakdown.comm_calls_in_idle``)
    idle_in_comm_calls: list[tuple[str, float]] = field(default_factory=list)
    #: (asynchronous call, ms per step and active GPU) of the GPU's idle inside the steps that the ledger books to the
    #: host stalled for milliseconds in a call that waits for no GPU work (a ``cudaMemsetAsync``, a pinned copy; booked
    #: with the host's work), longest first (``metrics/breakdown.async_stalls_in_idle``)
    idle_in_async_stalls: list[tuple[str, float]] = field(default_factory=list)
    #: of those waits, ms per step and GPU after each step's last GPU work (the stretch ending the step: a one-pass
    #: program writing its results; ``metrics/breakdown.os_waits_after_work``)
    idle_in_os_waits_after_work: float = 0.0
    #: ms per step and GPU the GPU idled holding a kernel already launched and submitted, not at a handoff between
    #: streams (booked as ``unseen``: work outside the capture, or a dependency it does not hold;
    #: ``metrics/breakdown.held_ms``).  The held idle at handoffs is the ledger's own category, ``stream_handoff``.
    idle_held: float = 0.0
    #: the handoffs that hold most of the ledger's ``stream_handoff``: their streams and work
    #: (``metrics/breakdown.handoff_reading``)
    handoff: Handoff = field(default_factory=Handoff)
    #: the driver's submission latency of the GPU with most launches, where the capture shows one
    #: (``metrics/breakdown.submission``): the holds within it are the host's pace, not held work
    submission: Submission = field(default_factory=Submission)
    #: ms per step and GPU the GPU idled before the capture's first GPU work with that work already launched (booked
    #: as ``unseen`` too, apart from ``idle_held``): it may have been running work launched before the capture began
    #: (``metrics/breakdown.queued_first_ms``)
    idle_queued_first: float = 0.0
    #: of ``idle_queued_first``, ms per step and GPU the host spent blocked in a sync or a blocking copy -- waiting
    #: for that earlier work, not launching its own (``metrics/breakdown.queued_first_blocked_ms``)
    idle_queued_first_blocked: float = 0.0
    #: ms per step and GPU of the launch wait (as the ledger books it) before work replayed from a graph (a CUDA or HIP
    #: graph, an XLA command buffer): the host preparing the replay -- its inputs, the program's code before the one
    #: launch -- which no further graph can cut (``metrics/breakdown.replay_wait``)
    launch_wait_before_replay: float = 0.0
    #: kernels per step and GPU not replayed from a graph: each its own launch, the launches a graph could still batch
    kernels_outside_graphs: float = 0.0
    #: us: the median gap on the GPU from one replayed graph kernel's end to the next one's start, on the same stream in
    #: the same replay (one launch's correlation id), over the kept steps; negative where the device starts a node
    #: before the last ends (programmatic dependent launch); None where no replay holds two kernels on a stream
    #: (``metrics.capture.graph_node_gap_us``): what a replayed graph still pays per node, measured
    graph_node_gap_us: float | None = None
    #: ms per step and GPU the GPU idled, booked as the host's own time (``host_compute``, ``other``), while the host
    #: ran iterations of the compiled programs' loops (XLA's ``[iter=N]`` spans: a ``while`` loop run from the host;
    #: ``metrics/breakdown.loop_idle``)
    idle_in_host_loops: float = 0.0
    #: ms per step and GPU of launch wait (the ledger's ``launch_wait``) while the host ran those loops' iterations:
    #: the launches of a host-run loop's body, one by one (h37-loops2)
    launch_wait_in_host_loops: float = 0.0
    #: ms per step and GPU of launch wait (the ledger's ``launch_wait``) with the host inside the kernel launch calls
    #: or the GPU about to start the kernels they submitted: the launches' own cost (``metrics/breakdown.launch_split``)
    launch_wait_in_launch_calls: float = 0.0
    #: ms per step and GPU of the GPU's idle before late launches in the launching threads' silences outside those
    #: calls: the host's own code between its launches, in stretches no event records -- which a graph or fewer kernels
    #: leave as they are (h37-launchwait).  The ledger books it ``launch_wait`` for a framework (its dispatch) and
    #: ``other`` for a program that dispatches its own launches (``Framework.own_code_between_launches``, h37-ownsplit)
    launch_wait_host_code: float = 0.0
    #: of the ledger's ``other`` (ms per step and GPU), the part in the launching thread's silence right before the
    #: launches the framework reads as a Python launcher's (``Framework.launcher_call`` outside every op: Triton's JIT
    #: runtime called directly, CuPy, Numba), and those launches per step and GPU (``metrics.syncs.launcher_silence``)
    unrecorded_before_launcher_ms: float = 0.0
    launcher_launches: float = 0.0
    #: of those, the part inside the GPUs' between-step gaps (ms per step and GPU, booked ``other`` there) and the
    #: launches whose silence reaches into a gap, per step and GPU: what the gaps' check names of its unrecorded time
    unrecorded_before_launcher_in_gaps_ms: float = 0.0
    launcher_launches_in_gaps: float = 0.0
    #: what records the threads' waits, so that a thread's time outside them is time it ran, code recorded or not
    #: (``metrics.compute.waits_traced``): "scheduler" (Nsight's ``SCHED_EVENTS``, ``model.trace.OFF_CPU``: the
    #: time is on the CPU), "os runtime" (Nsight ``-t osrt`` at a threshold of at most a few us: a wait for anything
    #: outside the program is a traced system call, so the time is the thread running or preempted), "" where nothing
    #: does
    waits_traced: str = ""
    #: whether the capture recorded anything of the host (``metrics.compute.host_recorded``): False for a kernel
    #: trace alone, whose host time is unobserved -- the findings and cards say so instead of wording it as recorded
    host_recorded: bool = True
    #: the OS runtime trace's threshold in us (the shortest call it records) where ``waits_traced`` rests on it
    os_runtime_threshold_us: float | None = None
    #: kernels launched with fewer blocks than their GPU has SMs (``metrics/underfill.py``)
    underfill: Underfill = field(default_factory=Underfill)
    #: attention computed op by op: matmul -> softmax -> matmul recurring on one stream (``metrics/attention.py``)
    unfused_attention: UnfusedAttention = field(default_factory=UnfusedAttention)
    #: the steps' driver frees and those the program's own cache release holds (``allocator_churn``'s cause)
    cache_release: CacheRelease = field(default_factory=CacheRelease)
    #: the steps' allocator calls by kind, pinned host or device (``allocator_churn``'s cause and fix)
    alloc_calls: AllocCalls = field(default_factory=AllocCalls)
    #: the kernels and collectives that started outside the kept steps and ran into them (``metrics.comm.ran_into_steps``:
    #: a call queued in a dropped step), one row per (kernel, op) as ``kernels``: ``count`` 0 and ``total_us`` 0 (a call
    #: counts in the step it starts in, as the communication tables count it), ``in_steps_us`` their time inside the
    #: kept steps -- which the ledger paints, so the kernel classes hold it too (``report.build.kernel_class_summary``)
    kernels_ran_into: list[KernelStat] = field(default_factory=list)
    #: ms (over all kept steps, not per step) of the job's one-time costs (``job.phase.OneTime``'s spans) inside the
    #: kept steps' host windows: what the cold-start finding says ran inside the steps analysed rather than before
    #: them -- a one-pass program's library start-up and first uploads lie inside its one pass (h37-coldwords33)
    one_time_in_steps_ms: float = 0.0
    #: ms of those costs before the first kept step begins (the rest lies between or after the steps)
    one_time_before_steps_ms: float = 0.0
    #: the kept steps holding a graph captured again (``job.phase.OneTime.recapture_start``: a recurring cost, not
    #: warm-up), as (steps holding one, kept steps, ms per kept step those steps run over the median of the others,
    #: ms of capture spans inside the kept steps); None where no kept step holds one or none holds none to compare
    recaptures: tuple[int, int, float, float] | None = None

    @property
    def ranks(self) -> int:
        """The GPUs a per-step number is shared among, at least 1 (:func:`sharing_ranks`, as ``Context.ranks``)."""
        return sharing_ranks(g.shares for g in self.gpus)

    def per_step(self, x, *, shared: bool = True, unit: float = 1.0):
        """``x`` summed over the kept steps (of every rank where ``shared``) per kept step (and rank): :func:`per_step`,
        for the rules and the report that read the metrics, not the events."""
        return per_step(x, self.steps.count, self.ranks if shared else 1, unit)

    def to_dict(self) -> dict[str, Any]:
        return to_dict(self)
