"""Synthetic rocprof traces (``rocprof --hip-trace``: ``results.json``) whose content is known by construction (issue #37).

The form is the one ROCm/rocprofiler's ``bin/tblextr.py`` writes (and the two real captures of survey h37-survey5
hold): ``{ "traceEvents":[{}`` then one event a line led by a comma -- the sections' ``process_name`` labels, the
complete events with their exact times as strings in ``args`` (``BeginNs``, ``EndNs``, ``DurationNs``), the flow
pairs from each launching call to its operation (``s`` at the call's middle in whole microseconds, its start where
the operation began earlier; ``t`` at the operation's start on its section and stream) -- then ``otherData``, the
machine's ``rocminfo`` with the spaces taken out of its values.

:func:`write` takes the program: an upload, steps of kernels (each step optionally inside a roctx range), a read-back
and frees, on one thread, and returns its truth.
"""

from __future__ import annotations

import gzip
import json

PID = 4242
#: ns from a launch call's start to its operation's start on an idle GPU, and a launch call's own length
LAUNCH_LATENCY_NS = 8_000
LAUNCH_NS = 5_000
START_NS = 5_000_000_000_000
#: tblextr's section pids
RANGES_PID, COPY_PID, HIP_PID, HSA_PID, GPU_BASE_PID = 0, 1, 2, 3, 6


def _x(name: str, pid: int, tid: int, b: int, e: int, args: dict) -> str:
    a = {"BeginNs": str(b), "EndNs": str(e), **args, "DurationNs": str(e - b)}
    return json.dumps({"ph": "X", "name": name, "pid": pid, "tid": tid, "ts": str(b // 1000),
                       "dur": str(max((e - b) // 1000, 1)), "args": a})


def write(path: str, steps: list[list[tuple[str, float]]], *, dev_id: int = 2, cpu_agents: int = 2,
          model: str = "AMDInstinctMI300X", compute_units: int = 304, upload_bytes: int = 1 << 26,
          upload_staging_ms: float = 0.0, read_bytes: int = 1 << 20, step_range: str | None = "iteration",
          gap_ms: float = 2.0, hsa_calls: int = 0, labels: bool = True, gz: bool = False,
          other_data: bool = True, gpu_records: bool = True, step_upload_bytes: int = 0,
          step_staging_ms: float = 0.0, step_read_bytes: int | tuple[int, ...] = 0, step_copy_call: str = "hipMemcpy",
          step_sync: str | None = "hipDeviceSynchronize", gpu_clock_ns: int = 0,
          step_flag_after: int | None = None, step_device_copies: tuple[str, ...] = (),
          phase_ranges: tuple[str, ...] = ()) -> dict:
    """Write the program to ``path``; returns its truth: kernels, GPU ns per kernel name, copies (bytes, direction,
    pageable by staging), launches, steps, each step's first call (ns).  ``gpu_records=False`` leaves the GPU's side out (its operations and the
    flows to them): the calls alone, as a capture that lost its GPU records holds them.

    A step may copy its own batch: ``step_upload_bytes`` to the GPU at its start, staged ``step_staging_ms`` first
    (a pageable batch: HIP stages it through a pinned buffer while the call holds the host), and ``step_read_bytes``
    back after its kernels, each by ``step_copy_call`` (``hipMemcpy``; ``hipMemcpyAsync`` from or to pageable
    memory holds the host the same way), the step then waiting in ``step_sync`` (``hipStreamSynchronize``); a tuple
    of sizes reads that many results back, one copy each, in turn (a loss and an accuracy).  ``gpu_clock_ns``: the
    GPU's clock reads that much later than the host's (earlier where negative): every GPU operation is recorded so
    shifted, the calls and ``truth`` on the host's clock.  ``step_flag_after``: a 4-byte flag read back by
    ``step_copy_call`` after that many of each step's kernels (a convergence test mid-iteration).
    ``step_device_copies``: after each step's kernels, copies that move no host memory, each by its call not named
    ``...Async`` -- ``d2d`` a ``hipMemcpy`` between two device buffers, ``memset`` a ``hipMemset`` of device memory --
    and each call returns once its work is queued, as ROCm's runtime does for them (clr's ``hip_memory.cpp``): the
    host is not held (``truth["device_copies"]``: (direction, call, its ns, its copy's ns)).  ``phase_ranges``: each
    step's kernels cut into that many runs in turn, each launched inside a roctx range of its name on the launching
    thread (``roctxRangePushA``/``roctxRangePop`` around a training step's ``forward``, ``backward`` and optimizer
    step, as a program marks its own phases -- roctracer's ``roctx.h``), nested in the step's range where it has one."""
    t = START_NS
    tid = PID
    calls: list[str] = []
    ops: list[str] = []
    ranges: list[str] = []
    flows: list[tuple[int, int, int, int, int]] = []  # (call start, call end, op section pid, lane, op start)
    truth: dict = {"kernels": 0, "gpu_ns": {}, "copies": [], "launches": 0, "steps": len(steps), "grids": {},
                   "step_starts": []}
    gpu_free = t

    def call(name: str, b: int, e: int, args: str) -> None:
        calls.append(_x(name, HIP_PID, tid, b, e, {"pid": str(PID), "tid": str(tid), "Name": name, "args": args,
                                                    "Data": ""}))

    def op(name: str, section: int, stream: int, b: int, e: int) -> None:
        b, e = b + gpu_clock_ns, e + gpu_clock_ns
        ops.append(_x(name, section, stream, b, e, {"dev-id": str(dev_id), "queue-id": "0", "Name": name,
                                                    "pid": str(PID), "tid": str(tid), "stream-id": str(stream),
                                                    "Data": ""}))

    def copy(kind: int, nbytes: int, staging_ns: int, api: str = "hipMemcpy") -> None:
        nonlocal t, gpu_free
        c0 = t
        b = max(c0 + LAUNCH_LATENCY_NS + staging_ns, gpu_free)
        e = b + max(nbytes // 20, 1000)  # ~20 GB/s
        c1 = e + 3000
        args = f"( dst(0x7f0000000000) src(0x7f1000000000) sizeBytes({nbytes}) kind({kind}))"
        call(api, c0, c1, args)
        name = {1: "CopyHostToDevice", 2: "CopyDeviceToHost"}[kind]
        op(name, COPY_PID, 0, b, e)
        flows.append((c0, c1, COPY_PID, 0, b + gpu_clock_ns))
        truth["copies"].append({"bytes": nbytes, "direction": "h2d" if kind == 1 else "d2h",
                                "pageable": staging_ns >= 1_000_000 and staging_ns > e - b})
        t, gpu_free = c1 + 1000, e

    def device_copy(direction: str, nbytes: int = 1 << 24) -> None:
        """A copy that moves no host memory, queued by a call that returns at once (``step_device_copies``)."""
        nonlocal t, gpu_free
        c0 = t
        c1 = c0 + LAUNCH_NS
        api, name, args = {
            "d2d": ("hipMemcpy", "CopyDeviceToDevice",
                    f"( dst(0x7f0000000000) src(0x7f2000000000) sizeBytes({nbytes}) kind(3))"),
            "memset": ("hipMemset", "FillBuffer", f"( dst(0x7f0000000000) value(0) sizeBytes({nbytes}))")}[direction]
        call(api, c0, c1, args)
        b = max(c0 + LAUNCH_LATENCY_NS, gpu_free)
        e = b + max(nbytes // 1000, 1000)  # ~1 TB/s on the device
        op(name, COPY_PID, 0, b, e)
        flows.append((c0, c1, COPY_PID, 0, b + gpu_clock_ns))
        truth.setdefault("device_copies", []).append((direction, api, c1 - c0, e - b))
        t, gpu_free = c1 + 2000, e

    call("hipMalloc", t, t + 50_000, "( ptr(0x7f0000000000) size(67108864))")
    t += 60_000
    if upload_bytes:
        copy(1, upload_bytes, int(upload_staging_ms * 1e6))
    for s, kernels in enumerate(steps):
        s0 = t
        truth["step_starts"].append(s0)
        if step_upload_bytes:
            copy(1, step_upload_bytes, int(step_staging_ms * 1e6), step_copy_call)
        per = -(-len(kernels) // len(phase_ranges)) if phase_ranges and kernels else 0
        p0 = t
        for k, (name, us) in enumerate(kernels):
            if per and k % per == 0:
                p0 = t - 300
            if k == step_flag_after:
                copy(2, 4, 0, step_copy_call)
            c0 = t
            c1 = c0 + LAUNCH_NS
            grid, block = (16, 64, 16), (8, 8, 8)
            call("__hipPushCallConfiguration", c0 - 20, c0 - 10, "")
            call("hipLaunchKernel", c0, c1, f"( kernel({name}) function_address(0x201030) numBlocks({{z({grid[0]}) "
                 f"y({grid[1]}) x({grid[2]}}}) dimBlocks({{z({block[0]}) y({block[1]}) x({block[2]}}}) "
                 "args(0x7fffad028c94) sharedMemBytes(0) stream(1))")
            b = max(c0 + LAUNCH_LATENCY_NS, gpu_free)
            e = b + int(us * 1000)
            op(name, GPU_BASE_PID + dev_id, 1, b, e)
            flows.append((c0, c1, GPU_BASE_PID + dev_id, 1, b + gpu_clock_ns))
            truth["kernels"] += 1
            truth["launches"] += 1
            truth["gpu_ns"][name] = truth["gpu_ns"].get(name, 0) + (e - b)
            truth["grids"][name] = (16 * 64 * 16, 8 * 8 * 8)
            gpu_free = e
            t = c1 + 2000
            if per and (k % per == per - 1 or k == len(kernels) - 1):
                pname = phase_ranges[k // per]
                ranges.append(_x(pname, RANGES_PID, tid, p0, t - 1000, {"pid": str(PID), "tid": str(tid),
                                                                         "Name": pname}))
        for direction in step_device_copies:
            device_copy(direction)
        for nbytes in (step_read_bytes if isinstance(step_read_bytes, tuple) else (step_read_bytes,)):
            if nbytes:
                copy(2, nbytes, 0, step_copy_call)
        sync0 = t
        t = max(t, gpu_free) + 2000
        if step_sync:  # None: the step's blocking copies are its only waits
            call(step_sync, sync0, t, "( stream(1))" if step_sync == "hipStreamSynchronize" else "")
        if step_range:
            ranges.append(_x(step_range, RANGES_PID, tid, s0 - 1000, t + 500, {"pid": str(PID), "tid": str(tid),
                                                                                "Name": step_range}))
        t += int(gap_ms * 1e6)
    if read_bytes:
        copy(2, read_bytes, 0)
    call("hipFree", t, t + 80_000, "( ptr(0x7f0000000000))")
    hsa = [_x("hsa_signal_store_relaxed", HSA_PID, tid, START_NS + 100 * i, START_NS + 100 * i + 50,
              {"pid": str(PID), "tid": str(tid), "Name": "hsa_signal_store_relaxed", "args": "", "Data": ""})
           for i in range(hsa_calls)]
    lines = ['{ "traceEvents":[{}']
    if labels:
        sections = [(RANGES_PID, "Markers and Ranges")] if ranges else []
        sections += [(HIP_PID, "CPU HIP API")] + ([(HSA_PID, "CPU HSA API")] if hsa else []) + [(COPY_PID, "COPY")]
        for g in range(dev_id + 1):
            sections += [(GPU_BASE_PID + g, f"GPU{g}"), (GPU_BASE_PID + g + 512, f"GPU Barriers{g}")]
        lines += [json.dumps({"args": {"name": n}, "ph": "M", "pid": p, "name": "process_name", "sort_index": i})
                  for i, (p, n) in enumerate(sections)]
    lines += ranges + (ops if gpu_records else []) + hsa + calls
    for k, (c0, c1, section, lane, b) in enumerate(flows if gpu_records else []):
        from_us = (c0 // 1000) + ((c1 - c0) // 1000) / 2  # tblextr: begin_us + dur_us / 2, printed with %d
        from_us = min(int(from_us), b // 1000)
        lines.append(json.dumps({"ts": from_us, "ph": "s", "cat": "DataFlow", "id": k, "pid": HIP_PID, "tid": tid,
                                 "name": "dep"}))
        lines.append(json.dumps({"ts": b // 1000, "ph": "t", "cat": "DataFlow", "id": k, "pid": section,
                                 "tid": lane, "name": "dep"}))
    text = "\n,".join(lines) + "\n"
    if other_data:
        agents = {}
        for a in range(cpu_agents):
            agents.update({f"Agent{a + 1}.Name": "AMDEPYC9654", f"Agent{a + 1}.MarketingName": "AMDEPYC9654",
                           f"Agent{a + 1}.Node": str(a), f"Agent{a + 1}.DeviceType": "CPU",
                           f"Agent{a + 1}.ComputeUnit": "96"})
        for g in range(dev_id + 1 - cpu_agents if dev_id + 1 > cpu_agents else 1):
            i = cpu_agents + g + 1
            agents.update({f"Agent{i}.Name": "gfx942", f"Agent{i}.MarketingName": model,
                           f"Agent{i}.Node": str(cpu_agents + g), f"Agent{i}.DeviceType": "GPU",
                           f"Agent{i}.ComputeUnit": str(compute_units)})
        text += '],\n"otherData": {\n' + ",\n".join(f'    "{k}": "{v}"' for k, v in agents.items()) + "\n  }\n}"
    else:
        text += "]}"
    data = text.encode()
    with open(path, "wb") as f:
        f.write(gzip.compress(data) if gz else data)
    return truth
