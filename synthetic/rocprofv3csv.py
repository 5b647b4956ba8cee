"""Synthetic rocprofv3 CSV captures (``rocprofv3 --output-format csv``: ``<pid>_kernel_trace.csv``,
``<pid>_hip_api_trace.csv``, ``<pid>_memory_copy_trace.csv``, ``<pid>_marker_api_trace.csv``, ``<pid>_agent_info.csv``)
whose content is known by construction.

The headers are the writer's (rocprofiler-sdk ``generateCSV.cpp``; survey h37-rocprof3): ``layout="new"`` as ROCm 6.4
and later write them (``Stream_Id`` columns, agents named ``Agent <logical node id>``, copies
``MEMORY_COPY_HOST_TO_DEVICE``), ``layout="old"`` as before (no streams, agents by their bare node id, copies
``HOST_TO_DEVICE``).  A call and the work it launched share their ``Correlation_Id``; the GPU is node 2 of an
MI300X-like machine (a CPU agent 0 and 1 before it).  :func:`write` takes the program -- an upload, steps of kernels
(each in a roctx range), a read-back -- and returns its truth.
"""

from __future__ import annotations

import csv
import os

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
          upload_ns: int = 400_000, upload_staging_ms: float = 0.0, read_ns: int = 50_000,
          step_range: str | None = "iteration", gap_ms: float = 2.0, hsa_calls: int = 0, agent_info: bool = True,
          product: str = "AMD Instinct MI300X", cu_count: int = 304) -> dict:
    os.makedirs(folder, exist_ok=True)
    new = layout == "new"
    gpu_agent = f"Agent {GPU_NODE}" if new else GPU_NODE
    cpu_agent = "Agent 0" if new else 0
    kernels: list[list] = []
    calls: list[list] = []
    marks: list[list] = []
    hsa: list[list] = []
    copies: list[list] = []
    corr = [0]
    truth: dict = {"kernels": 0, "gpu_ns": {}, "copies": [], "steps": len(steps) if step_range else 0, "grids": {},
                   "calls": 0, "hsa": hsa_calls, "launch_of": {}}

    def call(name: str, b: int, e: int) -> int:
        corr[0] += 1
        calls.append(["HIP_RUNTIME_API", name, PID, TID, corr[0], b, e])
        truth["calls"] += 1
        return corr[0]

    t = 1_000_000_000
    gpu_free = t
    for i in range(hsa_calls):
        corr[0] += 1
        hsa.append(["HSA_CORE_API", "hsa_signal_store_relaxed", PID, TID, corr[0], t + 10 * i, t + 10 * i + 5])
    call("hipMalloc", t, t + 50_000)
    t += 60_000

    def copy(op: str, ns: int, staging_ns: int) -> None:
        nonlocal t, gpu_free
        c0 = t
        b = max(c0 + LAUNCH_LATENCY_NS + staging_ns, gpu_free)
        e = b + ns
        c1 = e + 3000
        cid = call("hipMemcpy", c0, c1)
        src, dst = (cpu_agent, gpu_agent) if op == "HOST_TO_DEVICE" else (gpu_agent, cpu_agent)
        row = ["MEMORY_COPY", ("MEMORY_COPY_" + op) if new else op] + ([0] if new else []) + [src, dst, cid, b, e]
        copies.append(row)
        truth["copies"].append({"direction": "h2d" if op == "HOST_TO_DEVICE" else "d2h", "ns": e - b,
                                "pageable": staging_ns >= 1_000_000 and staging_ns > e - b})
        t, gpu_free = c1 + 1000, e

    if upload_ns:
        copy("HOST_TO_DEVICE", upload_ns, int(upload_staging_ms * 1e6))
    kid: dict[str, int] = {}
    for kernels_of_step in steps:
        s0 = t
        for name, us in kernels_of_step:
            kid.setdefault(name, len(kid) + 1)
            c0 = t
            cid = call("hipLaunchKernel", c0, c0 + LAUNCH_NS)
            b = max(c0 + LAUNCH_LATENCY_NS, gpu_free)
            e = b + int(us * 1000)
            truth["kernels"] += 1
            lead = ["KERNEL_DISPATCH", gpu_agent, 1] + ([0] if new else []) + [TID, truth["kernels"], kid[name], name,
                                                                              cid, b, e]
            regs = [0, 0, 32, 0, 16] if new else [0, 0]
            kernels.append(lead + regs + [256, 1, 1, 65536, 2, 1])
            truth["gpu_ns"][name] = truth["gpu_ns"].get(name, 0) + (e - b)
            truth["grids"][name] = (256 * 2, 256)
            gpu_free = e
            t = c0 + LAUNCH_NS + 2000
        sync0 = t
        t = max(t, gpu_free) + 2000
        call("hipDeviceSynchronize", sync0, t)
        if step_range:
            corr[0] += 1
            marks.append(["MARKER_CORE_RANGE_API" if new else "MARKER_CORE_API", step_range, PID, TID, corr[0],
                          s0 - 1000, t + 500])
        t += int(gap_ms * 1e6)
    if read_ns:
        copy("DEVICE_TO_HOST", read_ns, 0)
    call("hipFree", t, t + 80_000)
    corr[0] += 1
    marks.append(["MARKER_CORE_API", "roctxGetThreadId", PID, TID, corr[0], t + 90_000, t + 90_100])  # no range
    p = os.path.join(folder, prefix + "_")
    _write(p + "kernel_trace.csv", KERNEL_NEW if new else KERNEL_OLD, kernels)
    _write(p + "hip_api_trace.csv", API, calls)
    if copies:
        _write(p + "memory_copy_trace.csv", COPY_NEW if new else COPY_OLD, copies)
    if marks:
        _write(p + "marker_api_trace.csv", API, marks)
    if hsa:
        _write(p + "hsa_api_trace.csv", API, hsa)
    if agent_info:
        _write(p + "agent_info.csv", AGENTS, [
            [0, 0, "CPU", 96, 0, 0, 0, 0, "AMD EPYC 9654", "CPU", "AMD EPYC 9654 96-Core Processor", ""],
            [1, 1, "CPU", 96, 0, 0, 0, 0, "AMD EPYC 9654", "CPU", "AMD EPYC 9654 96-Core Processor", ""],
            [GPU_NODE, GPU_NODE, "GPU", 0, 1216, 64, cu_count, 90402, "gfx942", "AMD", product, "ip discovery"]])
    return truth
