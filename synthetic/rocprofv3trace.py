"""Synthetic rocprofv3 captures whose content is known by construction: its CSV files (``rocprofv3 --output-format
csv``: ``<pid>_kernel_trace.csv``, ``<pid>_hip_api_trace.csv``, ``<pid>_memory_copy_trace.csv``,
``<pid>_marker_api_trace.csv``, ``<pid>_agent_info.csv``) or its JSON document (``--output-format json``:
``<pid>_results.json``, ``fmt="json"``: the writer's keys, ``generateJSON.cpp`` and ``cxx/serialization.hpp``).

The headers are the writer's (rocprofiler-sdk ``generateCSV.cpp``; survey h37-rocprof3): ``layout="new"`` as ROCm 6.4
and later write them (``Stream_Id`` columns, agents named ``Agent <logical node id>``, copies
``MEMORY_COPY_HOST_TO_DEVICE``), ``layout="old"`` as before (no streams, agents by their bare node id, copies
``HOST_TO_DEVICE``).  A call and the work it launched share their ``Correlation_Id``; the GPU is node 2 of an
MI300X-like machine (a CPU agent 0 and 1 before it).  :func:`write` takes the program -- an upload, steps of kernels
(each in a roctx range), a read-back -- and returns its truth.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable

PID, TID = 4242, 4243
LAUNCH_LATENCY_NS = 8_000
LAUNCH_NS = 5_000
GPU_NODE = 2

KERNEL_NEW = ["Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id", "Kernel_Name",
              "Correlation_Id", "Start_Timestamp", "End_Timestamp", "LDS_Block_Size", "Scratch_Size", "VGPR_Count",
              "Accum_VGPR_Count", "SGPR_Count", "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z",
              "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]
KERNEL_OLD = ["Kind", "Agent_Id", "Queue_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id", "Kernel_Name", "Correlation_Id",
              "Start_Timestamp", "End_Timestamp", "Private_Segment_Size", "Group_Segment_Size", "Workgroup_Size_X",
              "Workgroup_Size_Y", "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]
API = ["Domain", "Function", "Process_Id", "Thread_Id", "Correlation_Id", "Start_Timestamp", "End_Timestamp"]
COPY_NEW = ["Kind", "Direction", "Stream_Id", "Source_Agent_Id", "Destination_Agent_Id", "Correlation_Id",
            "Start_Timestamp", "End_Timestamp"]
COPY_OLD = ["Kind", "Direction", "Source_Agent_Id", "Destination_Agent_Id", "Correlation_Id", "Start_Timestamp",
            "End_Timestamp"]
AGENTS = ["Node_Id", "Logical_Node_Id", "Agent_Type", "Cpu_Cores_Count", "Simd_Count", "Wave_Front_Size", "Cu_Count",
          "Gfx_Target_Version", "Name", "Vendor_Name", "Product_Name", "Model_Name"]


def _write(path: str, header: list[str], rows: list[list]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def write(folder: str, steps: list[list[tuple[str, float]]], *, prefix: str = str(PID), layout: str = "new",
          fmt: str = "csv", upload_ns: int = 400_000, upload_bytes: int = 1 << 24, upload_staging_ms: float = 0.0,
          read_ns: int = 50_000, read_bytes: int = 1 << 20, step_range: str | None = "iteration",
          gap_ms: float | list[float] = 2.0, hsa_calls: int = 0, agent_info: bool = True,
          product: str = "AMD Instinct MI300X",
          cu_count: int = 304, start_up: tuple[str, float, int] | None = None, first_launch_ms: float = 0.0,
          loader: tuple[float, float] | None = None) -> dict:
    """Write the program's capture into ``folder`` and return its truth.  ``start_up``: (the process's first HIP call,
    the runtime's initialisation inside it in ms, the fat binaries registered before it) -- the process's start as
    rocprofiler-sdk records it (see :func:`_process_start`); ``truth["start_up_ns"]``: that call's whole length.
    ``first_launch_ms``: how long each kernel's first launch takes (its module loaded then, see :func:`run_steps`).
    ``loader``: (ms after the first kernel starts, ms long) of one ``hipModuleLoad`` on a second thread of the process
    (a background thread loading code objects while the main thread's work runs; CSV only)."""
    os.makedirs(folder, exist_ok=True)
    api: list[tuple[str, str, int, int, int]] = []  # (domain, name, correlation, start, end)
    kernels: list[tuple[str, int, int, int, int]] = []  # (name, kernel id, correlation, start, end)
    copies: list[tuple[str, int, int, int, int]] = []  # (operation, correlation, start, end, bytes)
    corr = [0]
    truth: dict = {"kernels": 0, "gpu_ns": {}, "copies": [], "steps": len(steps) if step_range else 0, "grids": {},
                   "calls": 0, "hsa": hsa_calls}

    def record(domain: str, name: str, b: int, e: int) -> int:
        corr[0] += 1
        api.append((domain, name, corr[0], b, e))
        truth["calls"] += domain == "HIP_RUNTIME_API"
        return corr[0]

    t = 1_000_000_000
    gpu_free = t
    for i in range(hsa_calls):
        record("HSA_CORE_API", "hsa_signal_store_relaxed", t + 10 * i, t + 10 * i + 5)
    if start_up:
        t = _process_start(record, t, *start_up, truth)
    record("HIP_RUNTIME_API", "hipMalloc", t, t + 50_000)
    t += 60_000

    def copy(op: str, ns: int, nbytes: int, staging_ns: int) -> None:
        nonlocal t, gpu_free
        c0 = t
        b = max(c0 + LAUNCH_LATENCY_NS + staging_ns, gpu_free)
        e = b + ns
        c1 = e + 3000
        cid = record("HIP_RUNTIME_API", "hipMemcpy", c0, c1)
        copies.append((op, cid, b, e, nbytes))
        truth["copies"].append({"direction": "h2d" if op == "HOST_TO_DEVICE" else "d2h", "ns": e - b,
                                "bytes": nbytes, "pageable": staging_ns >= 1_000_000 and staging_ns > e - b})
        t, gpu_free = c1 + 1000, e

    if upload_ns:
        copy("HOST_TO_DEVICE", upload_ns, upload_bytes, int(upload_staging_ms * 1e6))
    kid: dict[str, int] = {}

    def dispatch(name: str, cid: int, b: int, e: int) -> None:
        kernels.append((name, kid.setdefault(name, len(kid) + 1), cid, b, e))

    marker = "MARKER_CORE_RANGE_API" if layout == "new" else "MARKER_CORE_API"
    t, gpu_free = run_steps(steps, t, gpu_free, truth, lambda name, b, e: record("HIP_RUNTIME_API", name, b, e),
                            dispatch, (lambda b, e: record(marker, step_range, b, e)) if step_range else None, gap_ms,
                            first_launch_ms)
    if read_ns:
        copy("DEVICE_TO_HOST", read_ns, read_bytes, 0)
    record("HIP_RUNTIME_API", "hipFree", t, t + 80_000)
    record("MARKER_CORE_API", "roctxGetThreadId", t + 90_000, t + 90_100)  # the marker API's own call: no range
    agents = [(0, 0, "CPU", 96, "AMD EPYC 9654", "CPU", "AMD EPYC 9654 96-Core Processor"),
              (1, 1, "CPU", 96, "AMD EPYC 9654", "CPU", "AMD EPYC 9654 96-Core Processor"),
              (GPU_NODE, GPU_NODE, "GPU", cu_count, "gfx942", "AMD", product)] if agent_info else []
    side = []
    if loader:
        assert fmt == "csv", "the loader thread is written to the CSV files only"
        b = min(k[3] for k in kernels) + int(loader[0] * 1e6)
        side.append(["HIP_RUNTIME_API", "hipModuleLoad", PID, TID + 1, corr[0] + 1, b, b + int(loader[1] * 1e6)])
    if fmt == "json":
        _write_json(os.path.join(folder, prefix + "_results.json"), api, kernels, copies, agents, kid)
    else:
        _write_csv(os.path.join(folder, prefix + "_"), layout, api, kernels, copies, agents, side)
    return truth


def _process_start(record: Callable[[str, str, int, int], int], t: int, first: str, init_ms: float, fat_binaries: int,
                   truth: dict) -> int:
    """The process's start as rocprofiler-sdk records it; returns the time after it.  Facts (ROCm/clr): the compiler
    emits a module constructor per HIP translation unit that calls ``__hipRegisterFatBinary`` (then
    ``__hipRegisterFunction`` per kernel) before ``main``: registration only, no runtime initialisation; every HIP
    API initialises the runtime once (``HIP_INIT_API``: ``std::call_once(hip::init)`` -- ROCr, the devices), and
    rocprofiler-sdk times the call around it (it wraps the dispatch table's entry; ``--hip-compiler-trace`` records
    the registrations as ``HIP_COMPILER_API``).  So the process's first HIP call, whatever it is, holds
    ``init_ms`` of start-up with no GPU work yet."""
    for i in range(fat_binaries):
        record("HIP_COMPILER_API", "__hipRegisterFatBinary", t, t + 20_000)
        record("HIP_COMPILER_API", "__hipRegisterFunction", t + 25_000, t + 27_000)
        t += 30_000
    t += 5_000_000  # the program's own code before its first HIP call (main's arguments, its host set-up)
    end = t + int(init_ms * 1e6) + 30_000
    record("HIP_RUNTIME_API", first, t, end)
    truth["start_up_ns"] = end - t
    return end + 10_000


def run_steps(steps: list[list[tuple[str, float]]], t: int, gpu_free: int, truth: dict,
              call: Callable[[str, int, int], int], dispatch: Callable[[str, int, int, int], None],
              mark: Callable[[int, int], object] | None, gap_ms: float | list[float],
              first_launch_ms: float = 0.0) -> tuple[int, int]:
    """The steps every rocprofv3 writer records (its CSV and JSON here, its rocpd database in ``rocpdtrace``): each
    kernel launched by a ``hipLaunchKernel`` of ``LAUNCH_NS``, running ``LAUNCH_LATENCY_NS`` after it or once the GPU
    is free; a ``hipDeviceSynchronize`` until the step's last kernel ends; the step's range around both (``mark``);
    ``gap_ms`` idle before the next step (one for every gap, or a list: the gap after each step, nothing recorded in
    it -- a loop whose host stalls once between two bursts).  ``call(name, start, end)`` records a HIP call and
    returns the id its work shares; ``dispatch(name, id, start, end)`` records a kernel; ``truth`` counts the
    kernels, their time and grids.  A kernel's first launch lasts ``first_launch_ms`` where given: its code object
    loaded on first use (lazy loading), the GPU idle meanwhile; ``truth["first_launch_ns"]`` sums them.  Returns the
    time after the last step and when the GPU is free."""
    gaps = gap_ms if isinstance(gap_ms, list) else [gap_ms] * len(steps)
    for kernels_of_step, gap in zip(steps, gaps, strict=True):
        s0 = t
        for name, us in kernels_of_step:
            c0 = t
            load = int(first_launch_ms * 1e6) if name not in truth["gpu_ns"] else 0
            if load:
                truth["first_launch_ns"] = truth.get("first_launch_ns", 0) + load
            cid = call("hipLaunchKernel", c0, c0 + LAUNCH_NS + load)
            b = max(c0 + load + LAUNCH_LATENCY_NS, gpu_free)
            e = b + int(us * 1000)
            dispatch(name, cid, b, e)
            truth["kernels"] += 1
            truth["gpu_ns"][name] = truth["gpu_ns"].get(name, 0) + (e - b)
            truth["grids"][name] = (256 * 2, 256)
            gpu_free = e
            t = c0 + load + LAUNCH_NS + 2000
        sync0 = t
        t = max(t, gpu_free) + 2000
        call("hipDeviceSynchronize", sync0, t)
        if mark:
            mark(s0 - 1000, t + 500)
        t += int(gap * 1e6)
    return t, gpu_free


def _write_csv(p: str, layout: str, api: list, kernels: list, copies: list, agents: list, side: list = ()) -> None:
    """The CSV files; ``side``: HIP API rows of other threads, as written."""
    new = layout == "new"
    gpu_agent = f"Agent {GPU_NODE}" if new else GPU_NODE
    cpu_agent = "Agent 0" if new else 0
    rows = []
    for i, (name, k, cid, b, e) in enumerate(kernels):
        lead = ["KERNEL_DISPATCH", gpu_agent, 1] + ([0] if new else []) + [TID, i + 1, k, name, cid, b, e]
        rows.append(lead + ([0, 0, 32, 0, 16] if new else [0, 0]) + [256, 1, 1, 65536, 2, 1])
    _write(p + "kernel_trace.csv", KERNEL_NEW if new else KERNEL_OLD, rows)
    calls = [[d, n, PID, TID, c, b, e] for d, n, c, b, e in api if d.startswith("HIP_")]
    _write(p + "hip_api_trace.csv", API, calls + list(side))
    if copies:
        cop = []
        for op, cid, b, e, _ in copies:
            src, dst = (cpu_agent, gpu_agent) if op == "HOST_TO_DEVICE" else (gpu_agent, cpu_agent)
            cop.append(["MEMORY_COPY", ("MEMORY_COPY_" + op) if new else op] + ([0] if new else [])
                       + [src, dst, cid, b, e])
        _write(p + "memory_copy_trace.csv", COPY_NEW if new else COPY_OLD, cop)
    marks = [[d, n, PID, TID, c, b, e] for d, n, c, b, e in api if d.startswith("MARKER_")]
    if marks:
        _write(p + "marker_api_trace.csv", API, marks)
    hsa = [[d, n, PID, TID, c, b, e] for d, n, c, b, e in api if d.startswith("HSA_")]
    if hsa:
        _write(p + "hsa_api_trace.csv", API, hsa)
    if agents:
        _write(p + "agent_info.csv", AGENTS, [[node, logical, typ, units if typ == "GPU" else 0,
                                               1216 if typ == "GPU" else 0, 64 if typ == "GPU" else 0,
                                               units if typ == "GPU" else 0, 90402 if typ == "GPU" else 0,
                                               name, vendor, prod, "ip discovery" if typ == "GPU" else ""]
                                              for node, logical, typ, units, name, vendor, prod in agents])


def _write_json(path: str, api: list, kernels: list, copies: list, agents: list, kid: dict[str, int],
                streams: list[int] | None = None, command: list[str] | None = None) -> None:
    """The writer's document: record kinds and operations by id through ``strings.buffer_records``, agents by handle,
    kernels by id through ``kernel_symbols``, roctx messages by correlation id; ``streams``: each kernel's stream
    handle (0 where not given); ``command``: the process's command line."""
    kinds: list[dict] = [{"kind": "NONE", "operations": []}]

    def kind_op(kind: str, op: str) -> tuple[int, int]:
        k = next((i for i, x in enumerate(kinds) if x["kind"] == kind), -1)
        if k < 0:
            kinds.append({"kind": kind, "operations": ["NONE"]})
            k = len(kinds) - 1
        ops = kinds[k]["operations"]
        if op not in ops:
            ops.append(op)
        return k, ops.index(op)

    handle = {node: 1000 + node for node, *_ in agents} or {0: 1000, GPU_NODE: 1000 + GPU_NODE}
    messages = []
    recs: dict[str, list] = {"kernel_dispatch": [], "hip_api": [], "hsa_api": [], "marker_api": [], "memory_copy": []}
    for d, n, c, b, e in api:
        op = n
        if d == "MARKER_CORE_RANGE_API" or (d == "MARKER_CORE_API" and not n.startswith("roctx")):
            op = "roctxThreadRangeA"
            messages.append({"key": c, "value": n})
        k, o = kind_op(d, op)
        key = "hip_api" if d.startswith("HIP_") else "hsa_api" if d.startswith("HSA_") else "marker_api"
        recs[key].append({"size": 64, "kind": k, "operation": o, "correlation_id": {"internal": c, "external": 0},
                          "start_timestamp": b, "end_timestamp": e, "thread_id": TID})
    for i, (name, k_id, c, b, e) in enumerate(kernels):
        k, o = kind_op("KERNEL_DISPATCH", "KERNEL_DISPATCH_COMPLETE")
        recs["kernel_dispatch"].append({
            "size": 128, "kind": k, "operation": o, "thread_id": TID, "correlation_id": {"internal": c, "external": 0},
            "start_timestamp": b, "end_timestamp": e, "stream_id": {"handle": streams[i] if streams else 0},
            "dispatch_info": {"size": 96, "agent_id": {"handle": handle[GPU_NODE]}, "queue_id": {"handle": 1},
                              "kernel_id": k_id, "dispatch_id": i + 1, "private_segment_size": 0,
                              "group_segment_size": 0, "workgroup_size": {"x": 256, "y": 1, "z": 1},
                              "grid_size": {"x": 65536, "y": 2, "z": 1}}})
    for op, c, b, e, nbytes in copies:
        k, o = kind_op("MEMORY_COPY", "MEMORY_COPY_" + op)
        src, dst = (0, GPU_NODE) if op == "HOST_TO_DEVICE" else (GPU_NODE, 0)
        recs["memory_copy"].append({"size": 80, "kind": k, "operation": o, "thread_id": TID,
                                    "correlation_id": {"internal": c, "external": 0}, "start_timestamp": b,
                                    "end_timestamp": e, "dst_agent_id": {"handle": handle[dst]},
                                    "src_agent_id": {"handle": handle[src]}, "bytes": nbytes,
                                    "stream_id": {"handle": 0}})
    symbols = [{"size": 0, "kernel_id": 0, "kernel_name": "0", "formatted_kernel_name": "0"}]
    symbols += [{"size": 72, "kernel_id": i, "code_object_id": 1, "kernel_name": n + ".kd",
                 "formatted_kernel_name": n, "demangled_kernel_name": n, "truncated_kernel_name": n.split("(")[0]}
                for n, i in sorted(kid.items(), key=lambda x: x[1])]
    doc = {"rocprofiler-sdk-tool": [{
        "metadata": {"pid": PID, "init_time": 0, "fini_time": 0, "command": command or ["./app"]},
        "agents": [{"size": 512, "id": {"handle": handle[node]}, "type": 2 if typ == "GPU" else 1, "node_id": node,
                    "logical_node_id": logical, "cu_count": units if typ == "GPU" else 0, "name": name,
                    "vendor_name": vendor, "product_name": prod} for node, logical, typ, units, name, vendor, prod
                   in agents],
        "counters": [],
        "strings": {"callback_records": [], "buffer_records": kinds, "marker_api": messages,
                    "correlation_id": {"external": []}},
        "code_objects": [], "kernel_symbols": symbols, "host_functions": [],
        "summary": [], "callback_records": {"counter_collection": []},
        "buffer_records": recs}]}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


#: kernel names as a PyTorch training run on ROCm has its GPU run them (the kept rocprofv3 kernel trace
#: ``wild/fsdp_mi350x_kernel_trace``, TraceLens' ``908_results.json``): hipBLASLt's GEMMs, ATen's HIP kernels, the
#: attention kernels of aiter/Triton, the optimizer's ``multi_tensor_apply``; HIP's own fill and copy kernels at set-up
KT_FORWARD = ("Cijk_Ailk_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x32x256_MI16x16x1_SN_LDSB0_AFC1_AFEM1",
              "void at::native::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, "
              "c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
              "attn_fwd",
              "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl, std::array<char*, 2> >"
              "(int, at::native::GeluCUDAKernelImpl, std::array<char*, 2>)",
              "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::BFloat16, float, unsigned int, 1, "
              "4, bool>(at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>)")
KT_BACKWARD = ("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x64x256_MI16x16x1_SN_LDSB0_AFC1_AFEM1",
               "attn_bwd",
               "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl, "
               "std::array<char*, 3> >(int, at::native::GeluBackwardCUDAKernelImpl, std::array<char*, 3>)",
               "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<c10::BFloat16, float>"
               "(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, "
               "c10::BFloat16*, int)")
KT_OPTIMIZER = ("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)"
                "::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>>"
                "(at::native::(anonymous namespace)::TensorListMetadata<4>)",)
KT_SETUP = ("__amd_rocclr_fillBufferAligned", "__amd_rocclr_copyBuffer")
KT_COMM = "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)"


def write_kernel_trace(path: str, iterations: int, layers: int = 2, kernel_us: float = 200.0, comm_calls: int = 2,
                       comm_us: float = 1000.0, comm_waited: bool = True, gap_ms: float = 1.0,
                       inner_gap_us: float = 5.0, setup_bursts: int = 20, setup_idle_ms: float = 50.0,
                       warmup_ms: float = 30.0, gpus: int = 8, product: str = "AMD Instinct MI350X",
                       gfx: str = "gfx950", cu_count: int = 256, max_steps: bool = True,
                       forward_kernels: int | None = None, update_kernels: int = 1) -> dict:
    """Write rocprofv3's JSON of a ``--kernel-trace`` capture alone -- no HIP call, no marker, no copy record: what the
    GPU ran and nothing of the host (shaped after ``wild/fsdp_mi350x_kernel_trace``).  ``gpus`` agents of ``product``
    (every dispatch on the first: one rank's process); set-up first -- ``setup_bursts`` bursts of HIP's fill and copy
    kernels 2 ms apart (parameter init), ``setup_idle_ms`` idle, an RCCL warm-up of ``warmup_ms`` --; then
    ``iterations`` training iterations on one compute stream: ``layers`` layers' forward kernels, their backward
    (a gradient kernel in each: ``attn_bwd``, ATen's ``..._backward_...``) and Adam's ``multi_tensor_apply``, each
    kernel ``kernel_us`` (scaled by its place) ``inner_gap_us`` after the previous (the first ``forward_kernels`` of a
    layer's forward where given: a small forward beside its backward; ``update_kernels`` of Adam's, one a parameter
    group); ``comm_calls`` RCCL kernels of
    ``comm_us`` a layer on a stream of their own, started after the layer's backward, the next layer's work waiting for
    them where ``comm_waited`` (FSDP's reduce-scatter before the next layer's gradients are sharded), the optimizer
    waiting for every one (it reads the reduced gradients: RCCL's stream never runs an iteration ahead); ``gap_ms`` the
    GPU idles between iterations (the host's pause: loss read back, next batch).  The command names the run's
    ``training.max_steps`` where ``max_steps``.  Return the truth: the iterations run (``steps``), their period
    (``step_ms``: each iteration's first kernel to the next's, every iteration alike) and the GPU's kernel time."""
    kid: dict[str, int] = {}
    kernels: list[tuple] = []  # (name, kernel id, correlation, start, end, stream)
    COMPUTE, COMM, SETUP = 567, 565, 5
    t = 1_000_000_000

    def dispatch(name: str, b: int, e: int, stream: int) -> None:
        kernels.append((name, kid.setdefault(name, len(kid) + 1), len(kernels) + 1, b, e, stream))

    for k in range(setup_bursts):  # parameter init: tiny bursts of fills and copies, ~2 ms apart
        for j in range(4):
            b = t + j * 4_000
            dispatch(KT_SETUP[j % 2], b, b + 2_500, SETUP)
        t += 2_000_000
    t += int(setup_idle_ms * 1e6)
    if warmup_ms:
        dispatch(KT_COMM, t, t + int(warmup_ms * 1e6), COMM)  # RCCL's first collective: the ranks' rendezvous
        t += int(warmup_ms * 1e6) + int(max(gap_ms, 0.05) * 1e6)
    inner = int(inner_gap_us * 1000)
    comm_free = t
    starts: list[int] = []
    busy = 0

    def run(name: str, us: float, not_before: int = 0) -> None:
        nonlocal t, busy
        b = max(t + inner, not_before)
        e = b + max(int(us * 1000), 1_000)
        dispatch(name, b, e, COMPUTE)
        busy += e - b
        t = e

    for it in range(iterations):
        if it:
            t += int(gap_ms * 1e6) - inner
        starts.append(t + inner)
        for n in range(layers):
            for i, name in enumerate(KT_FORWARD[:forward_kernels]):
                run(name, kernel_us * (2.0 if i in (0, 2) else 0.5))
        wait = 0
        for n in range(layers):
            for i, name in enumerate(KT_BACKWARD):
                run(name, kernel_us * (2.0 if i < 2 else 0.5), not_before=wait)
            c = max(t + inner, comm_free)  # the layer's gradients reduced on RCCL's stream
            for _ in range(comm_calls):
                dispatch(KT_COMM, c, c + int(comm_us * 1000), COMM)
                c += int(comm_us * 1000) + inner
            comm_free = c
            wait = c if comm_waited else 0
        for _ in range(update_kernels):
            run(KT_OPTIMIZER[0], kernel_us, not_before=comm_free)  # the update reads every reduced gradient
    agents = [(0, 0, "CPU", 128, "AMD EPYC 9575F 64-Core Processor", "CPU", "AMD EPYC 9575F 64-Core Processor"),
              (1, 1, "CPU", 128, "AMD EPYC 9575F 64-Core Processor", "CPU", "AMD EPYC 9575F 64-Core Processor")]
    agents += [(2 + g, 2 + g, "GPU", cu_count, gfx, "AMD", product) for g in range(gpus)]
    command = ["python", "-u", "train.py"] + (["--override", f"training.max_steps={iterations}"] if max_steps else [])
    _write_json(path, [], [k[:5] for k in kernels], [], agents, kid, streams=[k[5] for k in kernels], command=command)
    period = [(starts[i + 1] - starts[i]) / 1e6 for i in range(len(starts) - 1)]
    return {"steps": iterations, "step_ms": sum(period) / len(period) if period else None, "kind": "training",
            "kernels": len(kernels), "compute_ms": busy / 1e6}
