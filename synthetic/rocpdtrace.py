"""Synthetic rocprofv3 ``rocpd`` databases (ROCm 7's ``<pid>_results.db``) whose content is known by construction.

The tables and columns are the real file's (schema_version 3, read off HGLiu1998/batched_gemm's
``ck_bmm/37ca13315e70/28_results.db``, survey h37-rocprof): every table ``rocpd_<table>_<guid>``; a region's record
and a dispatch's share ``rocpd_event.stack_id`` (the correlation); regions carry their category (``HIP_RUNTIME_API_EXT``,
``MARKER_CORE_API``) through their event; kernel dispatches name their kernel through ``rocpd_info_kernel_symbol`` and
record HSA's grid in work-items; memory copies name their operation (``MEMORY_COPY_HOST_TO_DEVICE``).  Columns the
reader does not use are left at their defaults.

:func:`write` takes the program -- an upload, steps of kernels (each optionally in a roctx range), a read-back -- and
returns its truth.
"""

from __future__ import annotations

import json

from synthetic import sqlitefile
from synthetic.rocprofv3trace import LAUNCH_LATENCY_NS, run_steps

GUID = "00001234_abcd_7abc_8def_0123456789ab"
PID, TID = 4242, 4242


def _schema(g: str) -> str:
    return f"""
CREATE TABLE rocpd_metadata_{g} (id INTEGER PRIMARY KEY AUTOINCREMENT, tag TEXT NOT NULL, value TEXT NOT NULL);
CREATE TABLE rocpd_string_{g} (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, string TEXT NOT NULL UNIQUE);
CREATE TABLE rocpd_info_process_{g} (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL,
  ppid INTEGER, pid INTEGER NOT NULL, init BIGINT, fini BIGINT, start BIGINT, "end" BIGINT, command TEXT,
  environment JSONB DEFAULT "{{}}" NOT NULL, extdata JSONB DEFAULT "{{}}" NOT NULL);
CREATE TABLE rocpd_info_thread_{g} (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL,
  ppid INTEGER, pid INTEGER NOT NULL, tid INTEGER NOT NULL, name TEXT, start BIGINT, "end" BIGINT,
  extdata JSONB DEFAULT "{{}}" NOT NULL);
CREATE TABLE rocpd_info_agent_{g} (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL,
  pid INTEGER NOT NULL, type TEXT CHECK (type IN ('CPU', 'GPU')), absolute_index INTEGER, logical_index INTEGER,
  type_index INTEGER, uuid INTEGER, name TEXT, model_name TEXT, vendor_name TEXT, product_name TEXT, user_name TEXT,
  extdata JSONB DEFAULT "{{}}" NOT NULL);
CREATE TABLE rocpd_info_kernel_symbol_{g} (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL,
  pid INTEGER NOT NULL, code_object_id INTEGER NOT NULL, kernel_name TEXT, display_name TEXT, kernel_object INTEGER,
  extdata JSONB DEFAULT "{{}}" NOT NULL);
CREATE TABLE rocpd_event_{g} (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, category_id INTEGER, stack_id INTEGER,
  parent_stack_id INTEGER, correlation_id INTEGER, call_stack JSONB DEFAULT "{{}}" NOT NULL,
  line_info JSONB DEFAULT "{{}}" NOT NULL, extdata JSONB DEFAULT "{{}}" NOT NULL);
CREATE TABLE rocpd_region_{g} (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL,
  pid INTEGER NOT NULL, tid INTEGER NOT NULL, start BIGINT NOT NULL, "end" BIGINT NOT NULL, name_id INTEGER NOT NULL,
  event_id INTEGER, extdata JSONB DEFAULT "{{}}" NOT NULL);
CREATE TABLE rocpd_kernel_dispatch_{g} (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL,
  pid INTEGER NOT NULL, tid INTEGER, agent_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL, dispatch_id INTEGER NOT NULL,
  queue_id INTEGER NOT NULL, stream_id INTEGER NOT NULL, start BIGINT NOT NULL, "end" BIGINT NOT NULL,
  private_segment_size INTEGER, group_segment_size INTEGER, workgroup_size_x INTEGER NOT NULL,
  workgroup_size_y INTEGER NOT NULL, workgroup_size_z INTEGER NOT NULL, grid_size_x INTEGER NOT NULL,
  grid_size_y INTEGER NOT NULL, grid_size_z INTEGER NOT NULL, region_name_id INTEGER, event_id INTEGER,
  extdata JSONB DEFAULT "{{}}" NOT NULL);
CREATE TABLE rocpd_memory_copy_{g} (id INTEGER PRIMARY KEY AUTOINCREMENT, guid TEXT, nid INTEGER NOT NULL,
  pid INTEGER NOT NULL, tid INTEGER, start BIGINT NOT NULL, "end" BIGINT NOT NULL, name_id INTEGER NOT NULL,
  dst_agent_id INTEGER, dst_address INTEGER, src_agent_id INTEGER, src_address INTEGER, size INTEGER NOT NULL,
  queue_id INTEGER, stream_id INTEGER, region_name_id INTEGER, event_id INTEGER, extdata JSONB DEFAULT "{{}}" NOT NULL);
INSERT INTO rocpd_metadata_{g} (tag, value) VALUES ('schema_version', '3');
"""


def write(path: str, steps: list[list[tuple[str, float]]], *, upload_bytes: int = 1 << 26,
          upload_staging_ms: float = 0.0, read_bytes: int = 1 << 20, step_range: str | None = "iteration",
          gap_ms: float = 2.0, hsa_calls: int = 0, product: str = "AMD Instinct MI300X", cu_count: int = 304) -> dict:
    g = GUID
    con = sqlitefile.connect(path)
    con.executescript(_schema(g))
    strings: dict[str, int] = {}

    def sid(text: str) -> int:
        if text not in strings:
            strings[text] = con.execute(f"INSERT INTO rocpd_string_{g} (string) VALUES (?)", (text,)).lastrowid
        return strings[text]

    con.execute(f"INSERT INTO rocpd_info_process_{g} (id, nid, ppid, pid) VALUES (?, 1, 1, ?)", (PID, PID))
    con.execute(f"INSERT INTO rocpd_info_thread_{g} (id, nid, ppid, pid, tid) VALUES (?, 1, 1, ?, ?)", (TID, PID, TID))
    con.execute(f"INSERT INTO rocpd_info_agent_{g} (id, nid, pid, type, absolute_index, logical_index, type_index, "
                "name, product_name) VALUES (0, 1, ?, 'CPU', 0, 0, 0, 'EPYC', 'AMD EPYC 9654')", (PID,))
    con.execute(f"INSERT INTO rocpd_info_agent_{g} (id, nid, pid, type, absolute_index, logical_index, type_index, "
                "name, product_name, extdata) VALUES (1, 1, ?, 'GPU', 1, 1, 0, 'gfx942', ?, ?)",
                (PID, product, json.dumps({"cu_count": cu_count, "simd_per_cu": 4})))
    kernels: dict[str, int] = {}
    truth: dict = {"kernels": 0, "gpu_ns": {}, "copies": [], "steps": len(steps), "grids": {}, "hsa": hsa_calls}

    def region(name: str, cat: str, b: int, e: int) -> int:
        eid = con.execute(f"INSERT INTO rocpd_event_{g} (category_id, stack_id, parent_stack_id, correlation_id) "
                          "VALUES (?, 0, 0, 0)", (sid(cat),)).lastrowid
        con.execute(f"UPDATE rocpd_event_{g} SET stack_id = ? WHERE id = ?", (eid, eid))
        con.execute(f'INSERT INTO rocpd_region_{g} (nid, pid, tid, start, "end", name_id, event_id) '
                    "VALUES (1, ?, ?, ?, ?, ?, ?)", (PID, TID, b, e, sid(name), eid))
        return eid

    def work_event(stack: int) -> int:
        return con.execute(f"INSERT INTO rocpd_event_{g} (category_id, stack_id, parent_stack_id, correlation_id) "
                           "VALUES (?, ?, ?, 0)", (sid("KERNEL_DISPATCH"), stack, stack)).lastrowid

    t = 1_000_000_000
    gpu_free = t
    for i in range(hsa_calls):
        region("hsa_signal_store_relaxed", "HSA_CORE_API", t + 10 * i, t + 10 * i + 5)
    region("hipMalloc", "HIP_RUNTIME_API_EXT", t, t + 50_000)
    t += 60_000

    def copy(op: str, nbytes: int, staging_ns: int) -> None:
        nonlocal t, gpu_free
        c0 = t
        b = max(c0 + LAUNCH_LATENCY_NS + staging_ns, gpu_free)
        e = b + max(nbytes // 20, 1000)
        c1 = e + 3000
        stack = region("hipMemcpy", "HIP_RUNTIME_API_EXT", c0, c1)
        eid = work_event(stack)
        dst, src = (1, 0) if op == "HOST_TO_DEVICE" else (0, 1)
        con.execute(f'INSERT INTO rocpd_memory_copy_{g} (nid, pid, tid, start, "end", name_id, dst_agent_id, '
                    "src_agent_id, size, queue_id, stream_id, event_id) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?)",
                    (PID, TID, b, e, sid(f"MEMORY_COPY_{op}"), dst, src, nbytes, eid))
        truth["copies"].append({"bytes": nbytes, "direction": "h2d" if op == "HOST_TO_DEVICE" else "d2h",
                                "pageable": staging_ns >= 1_000_000 and staging_ns > e - b})
        t, gpu_free = c1 + 1000, e

    if upload_bytes:
        copy("HOST_TO_DEVICE", upload_bytes, int(upload_staging_ms * 1e6))
    def dispatch(name: str, stack: int, b: int, e: int) -> None:
        if name not in kernels:
            kernels[name] = con.execute(f"INSERT INTO rocpd_info_kernel_symbol_{g} (nid, pid, code_object_id, "
                                        "kernel_name, display_name) VALUES (1, ?, 1, ?, ?)",
                                        (PID, name + ".kd", name)).lastrowid
        con.execute(f'INSERT INTO rocpd_kernel_dispatch_{g} (nid, pid, tid, agent_id, kernel_id, dispatch_id, '
                    'queue_id, stream_id, start, "end", workgroup_size_x, workgroup_size_y, workgroup_size_z, '
                    "grid_size_x, grid_size_y, grid_size_z, region_name_id, event_id) "
                    "VALUES (1, ?, ?, 1, ?, ?, 0, 0, ?, ?, 256, 1, 1, 65536, 2, 1, ?, ?)",
                    (PID, TID, kernels[name], truth["kernels"] + 1, b, e, sid(""), work_event(stack)))

    t, gpu_free = run_steps(steps, t, gpu_free, truth, lambda name, b, e: region(name, "HIP_RUNTIME_API_EXT", b, e),
                            dispatch, (lambda b, e: region(step_range, "MARKER_CORE_API", b, e)) if step_range else None,
                            gap_ms)
    if read_bytes:
        copy("DEVICE_TO_HOST", read_bytes, 0)
    region("hipFree", "HIP_RUNTIME_API_EXT", t, t + 80_000)
    con.commit()
    con.close()
    return truth
