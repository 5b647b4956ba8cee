"""Synthetic rocmProfileData databases (``runTracer.sh -o x.rpd``) whose content is known by construction (h37-rpd).

The schema is the real files' (schema_version 2: ``rocpd_api``, ``rocpd_op``, ``rocpd_api_ops``, ``rocpd_copyapi``,
``rocpd_kernelapi``, ``rocpd_string``, ``rocpd_metadata``), the values a program traced from its start: its HIP
calls on one thread, each launch's op on ``gpuId`` 0 after a launch latency, bursts of GPU work apart by idle time.

:func:`write` takes the program as bursts -- each a list of ``(kernel name, GPU microseconds)`` -- and whether the
first burst loads a code object (``hipModuleLoadData``: a one-time cost), and returns the truth of what it wrote.
"""

from __future__ import annotations

from synthetic import sqlitefile

SCHEMA = """
CREATE TABLE rocpd_string (id integer PRIMARY KEY AUTOINCREMENT, string varchar(4096) NOT NULL);
CREATE TABLE rocpd_api (id integer PRIMARY KEY AUTOINCREMENT, pid integer NOT NULL, tid integer NOT NULL,
  start integer NOT NULL, "end" integer NOT NULL, apiName_id integer NOT NULL, args_id integer NOT NULL);
CREATE TABLE rocpd_op (id integer PRIMARY KEY AUTOINCREMENT, gpuId integer NOT NULL, queueId integer NOT NULL,
  sequenceId integer NOT NULL, completionSignal varchar(18) NOT NULL, start integer NOT NULL, "end" integer NOT NULL,
  description_id integer NOT NULL, opType_id integer NOT NULL);
CREATE TABLE rocpd_api_ops (id integer PRIMARY KEY AUTOINCREMENT, api_id integer NOT NULL, op_id integer NOT NULL);
CREATE TABLE rocpd_copyapi (api_ptr_id integer PRIMARY KEY, stream varchar(18) NOT NULL, size integer NOT NULL,
  width integer NOT NULL, height integer NOT NULL, kind integer NOT NULL, dst varchar(18) NOT NULL,
  src varchar(18) NOT NULL, dstDevice integer NOT NULL, srcDevice integer NOT NULL, sync bool NOT NULL,
  pinned bool NOT NULL);
CREATE TABLE rocpd_kernelapi (api_ptr_id integer PRIMARY KEY, stream varchar(18) NOT NULL, gridX integer NOT NULL,
  gridY integer NOT NULL, gridZ integer NOT NULL, workgroupX integer NOT NULL, workgroupY integer NOT NULL,
  workgroupZ integer NOT NULL, groupSegmentSize integer NOT NULL, privateSegmentSize integer NOT NULL,
  kernelArgAddress varchar(18) NOT NULL, aquireFence varchar(8) NOT NULL, releaseFence varchar(8) NOT NULL,
  codeObject_id integer NOT NULL, kernelName_id integer NOT NULL);
CREATE TABLE rocpd_metadata (id integer PRIMARY KEY AUTOINCREMENT, tag varchar(4096) NOT NULL,
  value varchar(4096) NOT NULL);
INSERT INTO rocpd_metadata (tag, value) VALUES ('schema_version', '2');
"""

PID = 4242
#: ns from a launch call's start to its op's start on an idle GPU, and a launch call's own length
LAUNCH_LATENCY_NS = 8_000
LAUNCH_NS = 5_000


def write(path: str, bursts: list[list[tuple[str, float]]], gap_ms: float | list[float] = 5.0, module_load_ms: float = 30.0,
          upload_bytes: int = 0, read_bytes: int | tuple[int, ...] = 0, sync: bool = True, gpu_clock_ns: int = 0,
          poll: str = "", poll_us: float = 10.0) -> dict:
    """Write the program to ``path`` (``gap_ms``: the host's pause after each burst, one for all or one per burst);
    returns its truth: the bursts' count, kernels, GPU time (ns) per kernel name, each burst's first call (ns).
    ``read_bytes``: each burst's result read back after its kernels by a blocking ``hipMemcpy`` (0: none); ``sync``
    False: no ``hipDeviceSynchronize`` after a burst (its read-back, if any, its only wait); a tuple of sizes reads
    that many results back, one blocking copy each, in turn.  ``gpu_clock_ns``: the GPU's clock reads that much later
    than the host's (earlier where negative): every GPU operation is recorded so shifted, the calls on the host's.
    ``poll`` (``hipEventQuery``, ``hipStreamQuery``): each burst's wait is that query, asked every ``poll_us`` until
    the GPU is done (``while (hipEventQuery(ev) == hipErrorNotReady)``, an event recorded first), not a sync call.

    The truth's ``untraced_idle_ns``: of the GPU's idle between the bursts' work, the part the host spent in no call
    and no poll (its own code between a wait's return and its launches, which no profiler records): a report names that
    time unrecorded host time, no wait's (``metrics.syncs._idle_after``), so a wait's truth is the idle less it."""
    con = sqlitefile.connect(path)
    con.executescript(SCHEMA)
    strings: dict[str, int] = {}
    host: list[tuple[int, int]] = []  # the host's calls and polls (first query to the last), on the host's clock
    gpu: list[tuple[int, int]] = []  # the GPU's operations, on the host's clock

    def sid(text: str) -> int:
        if text not in strings:
            strings[text] = con.execute("INSERT INTO rocpd_string (string) VALUES (?)", (text,)).lastrowid
        return strings[text]

    def call(name: str, start: int, end: int) -> int:
        host.append((start, end))
        return con.execute('INSERT INTO rocpd_api (pid, tid, start, "end", apiName_id, args_id) VALUES (?,?,?,?,?,?)',
                           (PID, PID, start, end, sid(name), sid(""))).lastrowid

    def op(api: int, start: int, end: int, desc: str, kind: str) -> None:
        gpu.append((start, end))
        start, end = start + gpu_clock_ns, end + gpu_clock_ns
        oid = con.execute('INSERT INTO rocpd_op (gpuId, queueId, sequenceId, completionSignal, start, "end", '
                          'description_id, opType_id) VALUES (0, 0, 0, "", ?, ?, ?, ?)',
                          (start, end, sid(desc), sid(kind))).lastrowid
        con.execute("INSERT INTO rocpd_api_ops (api_id, op_id) VALUES (?, ?)", (api, oid))

    t = 1_000_000_000
    gpu_free = t
    truth = {"bursts": len(bursts), "kernels": 0, "gpu_ns": {}, "burst_starts": []}
    first_op = 0
    if upload_bytes:  # a blocking upload: the call holds the host until its copy is done
        c0 = t
        copy_ns = max(upload_bytes // 10, 1000)  # ~10 GB/s
        api = call("hipMemcpyWithStream", c0, c0 + LAUNCH_LATENCY_NS + copy_ns + 1000)
        con.execute("INSERT INTO rocpd_copyapi VALUES (?, '0x0', ?, 0, 0, 1, '', '', 0, 0, 0, 0)", (api, upload_bytes))
        op(api, c0 + LAUNCH_LATENCY_NS, c0 + LAUNCH_LATENCY_NS + copy_ns, "", "CopyHostToDevice")
        t = gpu_free = c0 + LAUNCH_LATENCY_NS + copy_ns + 2000
    for b, kernels in enumerate(bursts):
        if b == 0 and module_load_ms:
            call("hipModuleLoadData", t, t + int(module_load_ms * 1e6))
            t += int(module_load_ms * 1e6) + 1000
        truth["burst_starts"].append(t)
        if b == 0:
            first_op = len(gpu)  # the loop's work: its idle before the first burst (upload, module load) is no wait's
        for name, us in kernels:
            api = call("hipLaunchKernel", t, t + LAUNCH_NS)
            con.execute("INSERT INTO rocpd_kernelapi VALUES (?, '0x0', 64, 1, 1, 256, 1, 1, 0, 0, '', '', '', 0, ?)",
                        (api, sid(name)))
            start = max(t + LAUNCH_LATENCY_NS, gpu_free)
            end = start + int(us * 1000)
            op(api, start, end, name, "KernelExecution")
            gpu_free = end
            t += LAUNCH_NS + 1000
            truth["kernels"] += 1
            truth["gpu_ns"][name] = truth["gpu_ns"].get(name, 0) + int(us * 1000)
        for nbytes in (read_bytes if isinstance(read_bytes, tuple) else (read_bytes,)):
            if not nbytes:
                continue
            # the result back: the call waits for the kernels, then for its own copy
            c = max(t + LAUNCH_LATENCY_NS, gpu_free)
            gpu_free = c + max(nbytes // 10, 1000)
            api = call("hipMemcpy", t, gpu_free + 1000)
            con.execute("INSERT INTO rocpd_copyapi VALUES (?, '0x0', ?, 0, 0, 2, '', '', 0, 0, 1, 0)",
                        (api, nbytes))
            op(api, c, gpu_free, "", "CopyDeviceToHost")
            t = gpu_free + 2000
        if sync and poll:
            begin = t
            t = _poll(call, poll, t, gpu_free, int(poll_us * 1000))
            host.append((begin, t))  # between its queries the host is in its poll
        elif sync:
            call("hipDeviceSynchronize", t, max(t, gpu_free) + 2000)
        gap = gap_ms[b % len(gap_ms)] if isinstance(gap_ms, list) else gap_ms
        t = max(t, gpu_free) + 2000 + int(gap * 1e6)
    con.commit()
    con.close()
    truth["untraced_idle_ns"] = untraced_idle(gpu[first_op:], host)
    return truth


def untraced_idle(gpu: list[tuple[int, int]], host: list[tuple[int, int]]) -> int:
    """ns of the GPU's idle between its first and last operation ``gpu`` during which the host was in none of ``host``
    (both on the host's clock): the host's own code no profiler records, which a report names unrecorded host time,
    no wait's -- a wait's truth is the idle less it (asked by every writer whose truth is a wait's idle)."""
    free, out = None, 0
    for s, e in sorted(gpu):
        if free is not None and s > free:  # an idle stretch [free, s): less the host's recorded time in it
            out += (s - free) - _covered(free, s, host)
        free = e if free is None else max(free, e)
    return out


def _covered(a: int, b: int, spans: list[tuple[int, int]]) -> int:
    """ns of [a, b) that the union of ``spans`` covers."""
    out, reach = 0, a
    for s, e in sorted(x for x in spans if x[1] > a and x[0] < b):
        s, e = max(s, reach), min(e, b)
        if e > s:
            out += e - s
            reach = e
    return out


def _poll(call, name: str, t: int, done: int, every: int) -> int:  # noqa: ANN001 - the writer's call recorder
    """The host asks ``name`` (a 1.5 us query) every ``every`` ns from ``t`` until the GPU's work ending at ``done``
    is over, an event recorded first where it queries one; returns the host's clock after the query that said so."""
    if "Event" in name:
        call("hipEventRecord", t, t + 2000)
        t += 3000
    while True:
        call(name, t, t + 1500)
        t += 1500
        if t >= done:
            return t
        t += every
