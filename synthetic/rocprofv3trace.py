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
          gap_ms: float = 2.0, hsa_calls: int = 0, agent_info: bool = True, product: str = "AMD Instinct MI300X",
          cu_count: int = 304) -> dict:
    """Write the program's capture into ``folder`` and return its truth."""
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
                            dispatch, (lambda b, e: record(marker, step_range, b, e)) if step_range else None, gap_ms)
    if read_ns:
        copy("DEVICE_TO_HOST", read_ns, read_bytes, 0)
    record("HIP_RUNTIME_API", "hipFree", t, t + 80_000)
    record("MARKER_CORE_API", "roctxGetThreadId", t + 90_000, t + 90_100)  # the marker API's own call: no range
    agents = [(0, 0, "CPU", 96, "AMD EPYC 9654", "CPU", "AMD EPYC 9654 96-Core Processor"),
              (1, 1, "CPU", 96, "AMD EPYC 9654", "CPU", "AMD EPYC 9654 96-Core Processor"),
              (GPU_NODE, GPU_NODE, "GPU", cu_count, "gfx942", "AMD", product)] if agent_info else []
    if fmt == "json":
        _write_json(os.path.join(folder, prefix + "_results.json"), api, kernels, copies, agents, kid)
    else:
        _write_csv(os.path.join(folder, prefix + "_"), layout, api, kernels, copies, agents)
    return truth


def run_steps(steps: list[list[tuple[str, float]]], t: int, gpu_free: int, truth: dict,
              call: Callable[[str, int, int], int], dispatch: Callable[[str, int, int, int], None],
              mark: Callable[[int, int], object] | None, gap_ms: float) -> tuple[int, int]:
    """The steps every rocprofv3 writer records (its CSV and JSON here, its rocpd database in ``rocpdtrace``): each
    kernel launched by a ``hipLaunchKernel`` of ``LAUNCH_NS``, running ``LAUNCH_LATENCY_NS`` after it or once the GPU
    is free; a ``hipDeviceSynchronize`` until the step's last kernel ends; the step's range around both (``mark``);
    ``gap_ms`` idle before the next step.  ``call(name, start, end)`` records a HIP call and returns the id its work
    shares; ``dispatch(name, id, start, end)`` records a kernel; ``truth`` counts the kernels, their time and grids.
    Returns the time after the last step and when the GPU is free."""
    for kernels_of_step in steps:
        s0 = t
        for name, us in kernels_of_step:
            c0 = t
            cid = call("hipLaunchKernel", c0, c0 + LAUNCH_NS)
            b = max(c0 + LAUNCH_LATENCY_NS, gpu_free)
            e = b + int(us * 1000)
            dispatch(name, cid, b, e)
            truth["kernels"] += 1
            truth["gpu_ns"][name] = truth["gpu_ns"].get(name, 0) + (e - b)
            truth["grids"][name] = (256 * 2, 256)
            gpu_free = e
            t = c0 + LAUNCH_NS + 2000
        sync0 = t
        t = max(t, gpu_free) + 2000
        call("hipDeviceSynchronize", sync0, t)
        if mark:
            mark(s0 - 1000, t + 500)
        t += int(gap_ms * 1e6)
    return t, gpu_free


def _write_csv(p: str, layout: str, api: list, kernels: list, copies: list, agents: list) -> None:
    new = layout == "new"
    gpu_agent = f"Agent {GPU_NODE}" if new else GPU_NODE
    cpu_agent = "Agent 0" if new else 0
    rows = []
    for i, (name, k, cid, b, e) in enumerate(kernels):
        lead = ["KERNEL_DISPATCH", gpu_agent, 1] + ([0] if new else []) + [TID, i + 1, k, name, cid, b, e]
        rows.append(lead + ([0, 0, 32, 0, 16] if new else [0, 0]) + [256, 1, 1, 65536, 2, 1])
    _write(p + "kernel_trace.csv", KERNEL_NEW if new else KERNEL_OLD, rows)
    calls = [[d, n, PID, TID, c, b, e] for d, n, c, b, e in api if d.startswith("HIP_")]
    _write(p + "hip_api_trace.csv", API, calls)
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


def _write_json(path: str, api: list, kernels: list, copies: list, agents: list, kid: dict[str, int]) -> None:
    """The writer's document: record kinds and operations by id through ``strings.buffer_records``, agents by handle,
    kernels by id through ``kernel_symbols``, roctx messages by correlation id."""
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
            "start_timestamp": b, "end_timestamp": e, "stream_id": {"handle": 0},
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
        "metadata": {"pid": PID, "init_time": 0, "fini_time": 0, "command": ["./app"]},
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
