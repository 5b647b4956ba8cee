"""Synthetic nvprof databases (``nvprof -o x.nvvp``) whose content is known by construction (h37-wild55n).

The schema is the real files' (``Version`` 12, nvprof of CUDA 10.x: josiahdavis/profiling-lm's ``net.sql``,
m-goldstein/GPU_ML's ``timeline.nvvp``): every ``CUPTI_ACTIVITY_KIND_*`` table it reads, names in ``StringTable``,
calls by their CUPTI callback id alone, kernels by their mangled symbol, NVTX ranges as start / end ``MARKER`` rows
whose thread is in a 12-byte ``objectId``, thread ids written as the signed 32-bit values nvprof writes.

:func:`write` writes a training loop on one thread: each step an NVTX range (``nvtxRangePush``) holding a blocking
upload of the batch (``cudaMemcpy`` from pageable memory), ``kernels`` launches (``cudaLaunchKernel``) and a
``cudaDeviceSynchronize``, then ``host_ms`` of the host's own code before the next step; the first launch may pay a
module load (``first_launch_ms``).  It returns the truth of what it wrote.
"""

from __future__ import annotations

import struct

from synthetic import sqlitefile


SCHEMA = """
CREATE TABLE StringTable(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, value TEXT NOT NULL UNIQUE);
CREATE TABLE Version(version INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, copyKind INT NOT NULL,
  srcKind INT NOT NULL, dstKind INT NOT NULL, flags INT NOT NULL, bytes INT NOT NULL, start INT NOT NULL,
  end INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL, streamId INT NOT NULL, correlationId INT NOT NULL,
  runtimeCorrelationId INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, value INT NOT NULL,
  bytes INT NOT NULL, start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL,
  streamId INT NOT NULL, correlationId INT NOT NULL, flags INT NOT NULL, memoryKind INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, start INT NOT NULL, end INT NOT NULL,
  deviceId INT NOT NULL, contextId INT NOT NULL, streamId INT NOT NULL, gridX INT NOT NULL, gridY INT NOT NULL,
  gridZ INT NOT NULL, blockX INT NOT NULL, blockY INT NOT NULL, blockZ INT NOT NULL, correlationId INT NOT NULL,
  name INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, start INT NOT NULL,
  end INT NOT NULL, deviceId INT NOT NULL, contextId INT NOT NULL, streamId INT NOT NULL, gridX INT NOT NULL,
  gridY INT NOT NULL, gridZ INT NOT NULL, blockX INT NOT NULL, blockY INT NOT NULL, blockZ INT NOT NULL,
  correlationId INT NOT NULL, name INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, cbid INT NOT NULL, start INT NOT NULL,
  end INT NOT NULL, processId INT NOT NULL, threadId INT NOT NULL, correlationId INT NOT NULL,
  returnValue INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, cbid INT NOT NULL, start INT NOT NULL,
  end INT NOT NULL, processId INT NOT NULL, threadId INT NOT NULL, correlationId INT NOT NULL,
  returnValue INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, flags INT NOT NULL,
  timestamp INT NOT NULL, id INT NOT NULL, objectKind INT NOT NULL, objectId BLOB NOT NULL, name INT NOT NULL,
  domain INT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_DEVICE(_id_ INTEGER PRIMARY KEY AUTOINCREMENT, globalMemoryBandwidth INT NOT NULL,
  globalMemorySize INT NOT NULL, coreClockRate INT NOT NULL, numMultiprocessors INT NOT NULL,
  computeCapabilityMajor INT NOT NULL, computeCapabilityMinor INT NOT NULL, id INT NOT NULL, name INT NOT NULL);
INSERT INTO StringTable(_id_, value) VALUES (0, '-- null --');
INSERT INTO Version VALUES (12);
"""

PID = 15938
#: A thread whose pthread id's low half is past 2**31: nvprof writes it negative in RUNTIME, unsigned in a marker's
#: ``objectId``.
TID = 0xEADC3740
#: CUPTI callback ids (``cupti_runtime_cbid.h``).
CBID = {"cudaMalloc": 20, "cudaMemcpy": 31, "cudaDeviceSynchronize": 165, "cudaLaunchKernel": 211}
#: A kernel by the symbol nvprof keeps, and the name its demangled form starts with.
KERNEL_SYMBOL = ("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_")
KERNEL_DEMANGLED = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>"
GPU = ("Tesla V100-SXM2-16GB", 80, (7, 0))
LAUNCH_NS = 6_000
LAUNCH_LATENCY_NS = 4_000


def write(path: str, steps: int = 8, kernels: int = 12, kernel_us: float = 200.0, upload_bytes: int = 8 << 20,
          upload_us: float = 900.0, host_ms: float = 3.0, first_launch_ms: float = 0.0,
          step_name: str = "train_step", kernel_symbol: str = KERNEL_SYMBOL, sync_each_step: bool = True) -> dict:
    """Write the loop to ``path``; returns its truth: the first record's time and the steps' (start, end) in ns, kernels, copies and their bytes,
    the GPU's kernel time, the step ranges' name and the thread.  ``kernel_symbol``: the kernels' symbol (a plain CUDA
    C++ program's, ``_Z6kernelPfi``, names no framework); ``sync_each_step`` False: no ``cudaDeviceSynchronize``."""
    con = sqlitefile.connect(path)
    con.executescript(SCHEMA)
    strings: dict[str, int] = {}

    def sid(text: str) -> int:
        if text not in strings:
            strings[text] = con.execute("INSERT INTO StringTable(value) VALUES (?)", (text,)).lastrowid
        return strings[text]

    signed_tid = TID - (1 << 32) if TID >= 1 << 31 else TID
    obj = struct.pack("<III", PID, TID, 0)
    corr = [0]
    t = 1_583_978_808_645_000_000
    marker = [180_000]

    def call(name: str, start: int, end: int) -> int:
        corr[0] += 1
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(cbid, start, end, processId, threadId, correlationId, "
                    "returnValue) VALUES (?, ?, ?, ?, ?, ?, 0)", (CBID[name], start, end, PID, signed_tid, corr[0]))
        return corr[0]

    con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_DEVICE(globalMemoryBandwidth, globalMemorySize, coreClockRate, "
                "numMultiprocessors, computeCapabilityMajor, computeCapabilityMinor, id, name) "
                "VALUES (898048000, 16914055168, 1530000, ?, ?, ?, 0, ?)", (GPU[1], *GPU[2], sid(GPU[0])))
    call("cudaMalloc", t, t + 2_000_000)
    t += 2_100_000
    gpu_free = t
    truth = {"first_ns": t - 2_100_000, "steps": [], "kernels": 0, "copies": 0, "copy_bytes": 0, "kernel_ns": 0, "step_name": step_name,
             "thread": TID, "pid": PID, "gpu": GPU}
    kname = sid(kernel_symbol)
    rname = sid(step_name)
    for s in range(steps):
        step_start = t
        marker[0] += 1
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MARKER(flags, timestamp, id, objectKind, objectId, name, domain) "
                    "VALUES (2, ?, ?, 2, ?, ?, 0)", (t, marker[0], obj, rname))
        t += 20_000
        # the batch's upload: blocking, from pageable memory
        copy_ns = int(upload_us * 1000)
        c_start = max(t + 30_000, gpu_free)
        c = call("cudaMemcpy", t, c_start + copy_ns + 5_000)
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY(copyKind, srcKind, dstKind, flags, bytes, start, end, "
                    "deviceId, contextId, streamId, correlationId, runtimeCorrelationId) "
                    "VALUES (1, 1, 3, 0, ?, ?, ?, 0, 1, 7, ?, 0)", (upload_bytes, c_start, c_start + copy_ns, c))
        truth["copies"] += 1
        truth["copy_bytes"] += upload_bytes
        gpu_free = c_start + copy_ns
        t = gpu_free + 5_000 + 10_000
        for k in range(kernels):
            launch = LAUNCH_NS + (int(first_launch_ms * 1e6) if s == 0 and k == 0 else 0)
            c = call("cudaLaunchKernel", t, t + launch)
            k_start = max(t + LAUNCH_LATENCY_NS, gpu_free)
            k_end = k_start + int(kernel_us * 1000)
            con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL(start, end, deviceId, contextId, streamId, "
                        "gridX, gridY, gridZ, blockX, blockY, blockZ, correlationId, name) "
                        "VALUES (?, ?, 0, 1, 7, 640, 1, 1, 128, 1, 1, ?, ?)", (k_start, k_end, c, kname))
            truth["kernels"] += 1
            truth["kernel_ns"] += k_end - k_start
            gpu_free = k_end
            t += launch + 2_000
        if sync_each_step:
            end = max(t, gpu_free) + 3_000
            call("cudaDeviceSynchronize", t, end)
            t = end
        t += 2_000
        con.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MARKER(flags, timestamp, id, objectKind, objectId, name, domain) "
                    "VALUES (4, ?, ?, 2, ?, 0, 0)", (t, marker[0], obj))
        truth["steps"].append((step_start, t))
        t += int(host_ms * 1e6)
    con.commit()
    con.close()
    return truth
