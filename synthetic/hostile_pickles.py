"""Hostile memory-snapshot pickles (issue #39 item 4): 39 small files, each built opcode by opcode, that run no code
but ask an unpickler -- or whatever walks its result -- for unbounded work: memo references forming a DAG that a
walk expands into copies, nesting a recursive walk overflows the C stack on, cycles, declared lengths far past the
file, long runs of opcodes, truncations, values of the wrong type, and the code a pickle can ask to run.

``PICKLES`` maps a name to ``(defect class, maker)``; :func:`run_bounded` reads one in a forked child under a time
and memory limit and says how it ended (``tests/memory/test_snapshot_hostile.py``, ``scripts/robustness.py``).
Every file looks like a snapshot from its first bytes (its ``segments`` key comes first, a segment key follows), so
discovery hands it to the reader: the reader's refusal is what is tested, never the sniffing.
"""

from __future__ import annotations

import os
import pickle
import resource
import signal
import struct
import time
from typing import Callable

# -- a tiny pickle assembler (protocol 4 opcodes) --------------------------------------------------------------------

PROTO = b"\x80\x04"
MARK, STOP, POP, DUP = b"(", b".", b"0", b"2"
EMPTY_LIST, EMPTY_DICT, EMPTY_TUPLE = b"]", b"}", b")"
APPEND, APPENDS, SETITEM, SETITEMS, LIST, TUPLE, TUPLE1, TUPLE2 = b"a", b"e", b"s", b"u", b"l", b"t", b"\x85", b"\x86"
NONE = b"N"


def s(text: str) -> bytes:
    """A string (SHORT_BINUNICODE, else BINUNICODE)."""
    raw = text.encode()
    return (b"\x8c" + bytes([len(raw)]) if len(raw) < 256 else b"X" + struct.pack("<I", len(raw))) + raw


def i(n: int) -> bytes:
    """An integer (BININT1 / BININT / LONG1)."""
    if 0 <= n < 256:
        return b"K" + bytes([n])
    if -(1 << 31) <= n < (1 << 31):
        return b"J" + struct.pack("<i", n)
    raw = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw


def put(k: int) -> bytes:
    return b"r" + struct.pack("<I", k)


def get(k: int) -> bytes:
    return b"j" + struct.pack("<I", k)


def doc(*pairs: bytes, traces: bytes = EMPTY_LIST) -> bytes:
    """A snapshot-looking top dict: ``segments`` (empty), ``device_traces`` and ``pairs`` (key then value each)."""
    return PROTO + EMPTY_DICT + MARK + s("segments") + EMPTY_LIST + s("device_traces") + traces + b"".join(pairs) \
        + SETITEMS + STOP


def one_block(frames: bytes = EMPTY_LIST, size: bytes = i(512), state: bytes = s("active_allocated")) -> bytes:
    """A snapshot whose one segment holds one live block with ``frames`` (the reader formats its frames)."""
    block = EMPTY_DICT + MARK + s("size") + size + s("state") + state + s("address") + i(0) + s("frames") + frames \
        + SETITEMS
    seg = EMPTY_DICT + MARK + s("device") + i(0) + s("total_size") + size + s("blocks") + EMPTY_LIST + block + APPEND \
        + SETITEMS
    return PROTO + EMPTY_DICT + MARK + s("segments") + EMPTY_LIST + seg + APPEND + s("device_traces") + EMPTY_LIST \
        + SETITEMS + STOP


def one_entry(frames: bytes = EMPTY_LIST, action: bytes = s("alloc")) -> bytes:
    """A snapshot whose one trace entry is an allocation with ``frames`` (the reader labels and phases it)."""
    entry = EMPTY_DICT + MARK + s("action") + action + s("addr") + i(4096) + s("size") + i(512) + s("time_us") \
        + i(1) + s("frames") + frames + SETITEMS
    return doc(traces=EMPTY_LIST + EMPTY_LIST + entry + APPEND + APPEND)


# -- shapes ------------------------------------------------------------------------------------------------------------

def dag(leaf: bytes, levels: int, shape: tuple[bytes, bytes, Callable[[bytes], bytes]] | None = None) -> bytes:
    """``levels`` containers, each holding the one below twice -- once inline, then by memo reference -- as
    ``pickle.dump`` writes such a DAG (memo keys in order, no opcode it never writes): 2**levels leaves once
    expanded.  ``shape``: (what opens a container, what precedes the first copy after its MARK, what follows the
    copy given the reference to it); None: tuples of two (built after their items, as pickle writes them)."""
    if shape is None:
        out = leaf + put(0)
        for k in range(levels):
            out += get(k) + TUPLE2 + put(k + 1)
        return out
    open_, prefix, close = shape
    out = b"".join(open_ + put(k) + MARK + prefix for k in range(levels)) + leaf + put(levels)
    for k in reversed(range(levels)):
        out += close(get(k + 1))
    return out


LIST2 = (EMPTY_LIST, b"", lambda ref: ref + APPENDS)
LIST8 = (EMPTY_LIST, b"", lambda ref: ref * 7 + APPENDS)
FRAME2 = (EMPTY_DICT, s("filename"), lambda ref: s("name") + ref + SETITEMS)  # {"filename": x, "name": x}


def nested(depth: int, open_: bytes, close: bytes, leaf: bytes = NONE) -> bytes:
    """``depth`` containers, one in the next, built without memo (the file grows with the depth)."""
    return open_ * depth + leaf + close * depth


def colliding_ints(n: int) -> list[int]:
    """``n`` distinct integers with one hash (Python hashes an int modulo 2**61 - 1): a dict of them is quadratic."""
    p = (1 << 61) - 1
    return [7 + k * p for k in range(1, n + 1)]


def _snapshot_like_doc(key: bytes, value: bytes) -> bytes:
    return doc(key + value)


# -- the corpus --------------------------------------------------------------------------------------------------------

def _reduce(fn: str, arg: str, protocol: int) -> bytes:
    """A snapshot whose segments hold ``fn(arg)``: runs under ``pickle.load`` (the control: never here)."""

    class _Run:
        def __reduce__(self):
            import builtins
            return (getattr(os, fn) if hasattr(os, fn) else getattr(builtins, fn)), (arg,)

    return pickle.dumps({"segments": [_Run()], "device_traces": [], "total_size": 0}, protocol=protocol)


MARKER = "/tmp/tbga-hostile-pickle-ran"

PICKLES: dict[str, tuple[str, Callable[[], bytes]]] = {
    # memo references expanded into copies (the reader's str() of a frame, a hash of a key, a walk of shared lists)
    "dag_list_filename": ("memo DAG", lambda: one_block(EMPTY_LIST + EMPTY_DICT + MARK + s("filename")
                                                         + dag(EMPTY_LIST, 60, LIST2) + s("line") + i(1) + s("name")
                                                         + s("f") + SETITEMS + APPEND)),
    "dag_list_name_in_trace": ("memo DAG", lambda: one_entry(EMPTY_LIST + EMPTY_DICT + MARK + s("filename") + s("x.py")
                                                             + s("name") + dag(s("w"), 60, LIST2) + SETITEMS
                                                             + APPEND)),
    "dag_frame_dicts": ("memo DAG", lambda: one_block(EMPTY_LIST + dag(s("a.py"), 60, FRAME2) + APPEND)),
    "dag_tuple_key": ("memo DAG", lambda: doc(dag(s("k"), 100) + i(1))),
    "dag_tuple_key_in_block": ("memo DAG", lambda: one_block(EMPTY_LIST + EMPTY_DICT + dag(s("k"), 90)
                                                             + i(1) + SETITEM + APPEND)),
    # within the depth limit: 8**9 leaves; a frame's file name that is a list is a field of the wrong type
    "dag_wide_lists": ("memo DAG", lambda: one_entry(EMPTY_LIST + EMPTY_DICT + MARK + s("filename")
                                                     + dag(s("z" * 64), 9, LIST8) + s("name") + s("f") + SETITEMS
                                                     + APPEND)),
    "dag_action": ("memo DAG", lambda: one_entry(action=dag(EMPTY_LIST, 60, LIST2))),
    "dag_entries": ("memo DAG", lambda: doc(traces=EMPTY_LIST + dag(EMPTY_LIST + EMPTY_DICT + MARK + s("action")
                                                                     + s("alloc") + s("size") + i(512) + SETITEMS
                                                                     + APPEND, 40, LIST2) + APPEND)),
    # nesting a recursive walk (hash, ==, repr, a pickler) overflows the C stack on
    "deep_tuple_key": ("deep nesting", lambda: doc(nested(400_000, b"", TUPLE1, EMPTY_TUPLE) + i(1))),
    "deep_tuple_value": ("deep nesting", lambda: doc(s("x") + nested(400_000, b"", TUPLE1, EMPTY_TUPLE))),
    "deep_lists": ("deep nesting", lambda: doc(s("x") + nested(300_000, EMPTY_LIST, APPEND))),
    "deep_dicts": ("deep nesting", lambda: doc(s("x") + nested(150_000, EMPTY_DICT + s("k"), SETITEM))),
    "deep_frames": ("deep nesting", lambda: one_block(nested(300_000, EMPTY_LIST, APPEND, EMPTY_LIST))),
    "deep_marks": ("deep nesting", lambda: doc(s("x") + MARK * 500_000 + LIST * 500_000)),
    # cycles: a walk that follows them never ends
    "cycle_self_list": ("cycle", lambda: one_block(EMPTY_LIST + put(0) + get(0) + APPEND)),
    "cycle_self_dict": ("cycle", lambda: one_block(EMPTY_LIST + EMPTY_DICT + put(0) + s("filename") + get(0)
                                                   + SETITEM + APPEND)),
    "cycle_mutual": ("cycle", lambda: doc(s("x") + EMPTY_LIST + put(0) + EMPTY_LIST + put(1) + get(0) + APPEND
                                          + APPEND)),
    # lengths declared far past the file
    "huge_binunicode8": ("huge length", lambda: PROTO + EMPTY_DICT + s("segments") + b"\x8d"
                         + (1 << 60).to_bytes(8, "little") + b"abc"),
    "huge_binunicode": ("huge length", lambda: doc(s("device") + b"X" + struct.pack("<I", 0xFFFFFFF0) + b"abc")),
    "huge_long4": ("huge length", lambda: doc(s("total_size") + b"\x8b" + struct.pack("<i", 0x7FFFFFF0) + b"\x01")),
    "huge_int": ("huge length", lambda: doc(s("total_size") + b"\x8a\xff" + b"\x01" * 255)),
    "huge_frame": ("huge length", lambda: PROTO + b"\x95" + struct.pack("<Q", (1 << 64) - 1) + doc()[2:]),
    "huge_text_int": ("huge length", lambda: doc(s("total_size") + b"I" + b"9" * 500_000 + b"\n")),
    # long runs of opcodes and keys that collide: work must stay linear in the file
    "loop_dup_pop": ("opcode loop", lambda: doc(s("x") + NONE + (DUP + POP) * 400_000)),
    "loop_memo_puts": ("opcode loop", lambda: doc(s("x") + NONE + b"".join(put(k) for k in range(150_000)))),
    "loop_colliding_int_keys": ("opcode loop", lambda: doc(s("x") + EMPTY_DICT + MARK
                                                           + b"".join(i(k) + NONE for k in colliding_ints(30_000))
                                                           + SETITEMS)),
    "loop_no_newline": ("opcode loop", lambda: doc(s("x") + b"F" + b"1" * 2_000_000)),
    "loop_empty_lists": ("opcode loop", lambda: doc(s("x") + EMPTY_LIST + MARK + EMPTY_DICT * 600_000 + APPENDS)),
    # cut short
    "truncated_half": ("truncation", lambda: (lambda d: d[: len(d) // 2])(
        pickle.dumps({"segments": [], "device_traces": [[{"action": "alloc", "size": 1}]]}, protocol=4))),
    "truncated_in_string": ("truncation", lambda: doc(s("x" * 300))[:-200]),
    "truncated_no_stop": ("truncation", lambda: doc()[:-1]),
    "truncated_after_proto": ("truncation", lambda: PROTO + EMPTY_DICT + MARK + s("segments")),
    # values of the wrong type where the reader expects others
    "wrong_segments_type": ("wrong type", lambda: PROTO + EMPTY_DICT + MARK + s("segments") + i(5)
                            + s("device_traces") + EMPTY_LIST + SETITEMS + STOP),
    "wrong_block_types": ("wrong type", lambda: one_block(frames=s("not frames"), size=s("big"), state=i(3))),
    "wrong_top_level": ("wrong type", lambda: PROTO + EMPTY_LIST + MARK + s("segments") + s("total_size")
                        + APPENDS + STOP),
    # the code a pickle can ask to run (runs under pickle.load; refused here before anything is looked up)
    "code_reduce_os_system": ("code", lambda: _reduce("system", f"touch {MARKER}", 4)),
    "code_reduce_exec_protocol0": ("code", lambda: _reduce("exec", f"open({MARKER!r}, 'w').close()", 0)),
    "code_inst_protocol0": ("code", lambda: doc(s("x") + MARK + s(f"touch {MARKER}") + b"ios\nsystem\n")),
    "code_ext1": ("code", lambda: doc(s("x") + b"\x82\x01")),
}
"""name -> (defect class, maker): 39 files, 8 classes."""

CLASSES = sorted({c for c, _ in PICKLES.values()})


def corpus() -> dict[str, bytes]:
    return {name: make() for name, (_, make) in PICKLES.items()}


# -- reading one under limits ------------------------------------------------------------------------------------------

def analyse_pickle(data: bytes, path: str) -> str:
    """What a report does with a snapshot file: read it, and analyse it; the refusal's message or ``report``."""
    from tb_gpu_advisor.formats.snapshot.reader import SnapshotReadError
    from tb_gpu_advisor.model.logdir import HostFile
    from tb_gpu_advisor.runtime.pipeline import analyze_host

    with open(path, "wb") as f:
        f.write(data)
    try:
        rep = analyze_host(HostFile("hostile", path, len(data), 0, "snapshot"))
    except SnapshotReadError as e:
        return f"refused: {e.reason}"
    if rep.error:
        return f"error: {rep.error}"
    return f"damaged: {'; '.join(rep.damage)}" if rep.damage else "report"


#: a bounded child's wall time limit, in multiples of its CPU limit (:func:`run_bounded`): a guard against a child that
#: waits, not the bound
WALL_GUARD = 10


def run_bounded(data: bytes, path: str, seconds: float = 10.0, memory_mb: int = 1024,
                analyse: Callable[[bytes, str], str] = analyse_pickle) -> dict:
    """Read ``data`` (written to ``path``) in a forked child limited to ``seconds`` of CPU and ``memory_mb`` of address
    space beyond the parent's; how it ended: ``outcome`` (``refused`` / ``report`` / ``error`` / ``timeout`` /
    ``signal N`` / ``exception``), ``message``, ``seconds`` (wall), ``cpu_seconds`` (the child's user + system time),
    ``peak_rss_mb``.  ``analyse``: what is done with the file (another corpus's, ``hostile_inputs.analyse_file``).

    The bound is the child's CPU: a read that spins is stopped at ``seconds`` of it (``RLIMIT_CPU``) however busy the
    machine is.  Its wall time has a guard of :data:`WALL_GUARD` times ``seconds`` for a child that waits without
    spinning: a wall limit of ``seconds`` alone stopped a read of 2 s of CPU on a machine that gave the child a
    fifth of a core (a test flaky under load)."""
    r, w = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: limits, the read, one line back
        os.close(r)
        try:
            base = resource.getrlimit(resource.RLIMIT_AS)
            vm = _vm_bytes()
            resource.setrlimit(resource.RLIMIT_AS, (vm + (memory_mb << 20), base[1]))
            resource.setrlimit(resource.RLIMIT_CPU, (int(seconds) + 1, int(seconds) + 2))
            signal.alarm(int(seconds * WALL_GUARD) + 1)
            try:
                msg = analyse(data, path)
            except BaseException as e:  # noqa: BLE001 - what escapes is the finding
                msg = f"exception: {type(e).__name__}: {str(e)[:200]}"
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            os.write(w, f"{rss}\t{msg}".encode(errors="replace")[:4000])
        finally:
            os._exit(0)
    os.close(w)
    _, status, usage = os.wait4(pid, 0)
    took = time.monotonic() - t0
    cpu = usage.ru_utime + usage.ru_stime
    out = b""
    while chunk := os.read(r, 4096):
        out += chunk
    os.close(r)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        kind = "timeout" if sig in (signal.SIGALRM, signal.SIGXCPU) else f"signal {sig}"
        return {"outcome": kind, "message": signal.Signals(sig).name, "seconds": took, "cpu_seconds": cpu,
                "peak_rss_mb": None}
    rss_kb, _, msg = out.decode(errors="replace").partition("\t")
    outcome = msg.split(":", 1)[0] if msg else "no answer"
    return {"outcome": outcome, "message": msg, "seconds": took, "cpu_seconds": cpu,
            "peak_rss_mb": int(rss_kb) / 1024 if rss_kb.isdigit() else None}


def _vm_bytes() -> int:
    """This process's address space now (the memory limit is set on top of what the fork inherited)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
