"""Hostile and damaged variants of the inputs the readers gained in sessions 36-37 (h37-hostile).

PyTorch's memory viewer page with a snapshot's pickle in base64 (``formats/snapshot/layout.embedded_snapshot``), a
snapshot's values (sizes, addresses, devices and times no allocator writes; blocks that overlap; a history that
stops short of the dump), a Git LFS pointer where a profile should be (``formats/base.lfs_pointer``) and
``torch.profiler``'s memory timeline (``formats/kineto/layout._MEMORY_TIMELINE``).  Each is built from the shapes
the real files have (the viewer's ``_format_viz`` page, ``_dump_snapshot``'s dict, the LFS specification's three
lines, ``export_memory_timeline``'s arrays), then broken in one way.

``KINDS`` maps a name to ``(input, file name, maker, outcomes, words)``: the file is written under its name in a run
folder of its own and reported by the CLI (:func:`analyse_file`, in a limited child: :func:`run_bounded`); its outcome
must be one of ``outcomes`` (``error``: the host could not be analysed, ``damaged``: a partial report, exit 2 both;
``report``: an analysis) and its message hold one of ``words``.  Never a crash, a traceback, a hang or "healthy"
where the file is damaged (``tests/formats/test_hostile_inputs.py``, ``scripts/robustness.py`` section 13).
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import pickle
import zlib
from collections.abc import Callable

from synthetic import hostile_pickles as hp

#: Microseconds of the Unix epoch a snapshot's ``time_us`` holds (2023-11).
T0_US = 1_700_000_000_000_000
MiB = 1 << 20


# -- the viewer's page ----------------------------------------------------------------------------------------------

def page(pickled: bytes, name: str = "snapshot.pickle", tail: bytes = b"", b64: str | None = None) -> bytes:
    """The page ``torch.cuda._memory_viz._format_viz`` writes around ``pickled`` (``tail``: bytes after its script;
    ``b64``: the base64 text put in it as given, else ``pickled``'s)."""
    head, end = _page_parts(name, tail)
    return head + (base64.b64encode(pickled).decode("ascii") if b64 is None else b64).encode() + end


def _page_parts(name: str, tail: bytes) -> tuple[bytes, bytes]:
    """The page's bytes before and after its snapshot's base64 (``json.dumps`` of its one local file, cut there)."""
    files = json.dumps([{"name": name, "base64": "@"}]).encode()
    at = files.rindex(b'"@"') + 1  # the base64 is the last field
    return (b"\n<!DOCTYPE html>\n<html>\n<head>\n</head>\n<body>\n<script type=\"module\">\nimport {add_local_files} "
            b"from \"https://cdn.jsdelivr.net/gh/pytorch/pytorch@main/torch/utils/viz/MemoryViz.js\"\n"
            b"const local_files = " + files[:at],
            files[at + 1:] + b"\nadd_local_files(local_files, 'Active Memory Timeline')\n</script>\n" + tail
            + b"</body>\n")


def write_page(pickle_path: str, page_path: str) -> int:
    """Write :func:`page` of the pickle at ``pickle_path`` to ``page_path`` a part at a time (a page of a gigabyte in
    constant memory: ``benchmarks/snapshot_large.py``); returns the bytes written."""
    head, end = _page_parts("snapshot.pickle", b"")
    with open(pickle_path, "rb") as f, open(page_path, "wb") as out:
        out.write(head)
        while part := f.read(3 << 20):  # whole 3-byte groups: the parts' base64 joins as the whole's
            out.write(base64.b64encode(part))
        out.write(end)
    return os.path.getsize(page_path)


def page_with(files: str) -> bytes:
    """A viewer page whose ``local_files`` is the JavaScript text ``files``."""
    return (b"<html><body><script type=\"module\">\nimport {add_local_files} from \"https://cdn.jsdelivr.net/gh/pytorch/"
            b"pytorch@main/torch/utils/viz/MemoryViz.js\"\nconst local_files = " + files.encode() + b"\n</script>")


# -- snapshots ------------------------------------------------------------------------------------------------------

def block(size: int, address: int = 0, state: str = "active_allocated") -> dict:
    return {"address": address, "size": size, "requested_size": size, "state": state, "frames": []}


def segment(size: int, blocks: list, device: int = 0) -> dict:
    return {"device": device, "address": 0, "total_size": size, "segment_type": "large", "blocks": blocks}


def entry(action: str, addr: int, size: int, time_us: float) -> dict:
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": time_us, "frames": []}


def snapshot(segments: list, traces: list | None = None, **extra) -> bytes:
    """``_dump_snapshot``'s pickle of ``segments`` and one GPU's history ``traces``."""
    return pickle.dumps({"segments": segments, "device_traces": [traces or []], **extra}, protocol=4)


def small_snapshot() -> bytes:
    """One GPU, one 1 MiB segment holding one live block its history allocated."""
    return snapshot([segment(MiB, [block(MiB)])], [entry("segment_alloc", 0, MiB, T0_US),
                                                  entry("alloc", 0, MiB, T0_US + 10)])


def gzip_bomb(inflated_mb: int) -> bytes:
    """A ``snapshot.pickle.gz`` whose start is a snapshot's pickle and which inflates to ``inflated_mb`` MiB (zeros
    after it): a few hundred bytes a MiB, compressed a MiB at a time (never held inflated here)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [z.compress(small_snapshot())]
    zeros = bytes(MiB)
    out += [z.compress(zeros) for _ in range(inflated_mb)]
    return b"".join(out) + z.flush()


def padded_snapshot(pad_bytes: int) -> bytes:
    """A valid snapshot with one string of ``pad_bytes`` beside it: a large page that is still a snapshot."""
    return pickle.dumps({"segments": [segment(MiB, [block(MiB)])], "device_traces": [[]], "pad": "x" * pad_bytes},
                        protocol=4)


# -- Git LFS pointers and memory timelines ------------------------------------------------------------------------

def lfs(oid: str = "a" * 64, size: str = "847257792") -> bytes:
    """A pointer as the LFS specification lays it out."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n".encode()


#: The memory timeline's words (``formats/kineto/layout.MEMORY_TIMELINE``).
TIMELINE = ("memory timeline",)
#: An array nested 200,000 deep (CPython's JSON decoder recurses once a level).
DEEP = b"[" * 200_000 + b"]" * 200_000
#: A refused pickle's words (``formats/snapshot/unpickle``).
REFUSED = ("refused: opcode",)
SIZE_OUT_OF_RANGE = ("`size` out of range", "`total_size` out of range")
DEVICE_OUT_OF_RANGE = ("`device` out of range",)
PAGE = ("memory viewer page",)
LFS = ("a Git LFS pointer, not the profile",)

Kind = tuple[str, str, Callable[[], bytes], tuple[str, ...], tuple[str, ...]]

#: name -> (input, file name, maker, allowed outcomes, words one of which the message holds).
KINDS: dict[str, Kind] = {
    # the viewer's page
    "page_pickle_runs_code": ("viewer page", "snapshot.html",
                              lambda: page(hp.PICKLES["code_reduce_os_system"][1]()), ("error",), REFUSED),
    "page_pickle_memo_dag": ("viewer page", "snapshot.html",
                             lambda: page(hp.PICKLES["dag_frame_dicts"][1]()), ("error",), ("nested more than",)),
    "page_pickle_truncated": ("viewer page", "snapshot.html",
                              lambda: page(small_snapshot()[:-24]), ("error",), ("truncated",)),
    "page_cut_in_base64": ("viewer page", "snapshot.html", lambda: page(small_snapshot() * 40)[:1500],
                           ("error",), ("cut off",)),
    "page_in_a_page": ("viewer page", "snapshot.html", lambda: page(page(small_snapshot())), ("error",),
                       ("not a pickle",)),
    "page_base64_a_number": ("viewer page", "snapshot.html", lambda: page_with('[{"name": "a", "base64": 12}]'),
                             ("error",), PAGE),
    "page_no_files": ("viewer page", "snapshot.html", lambda: page_with("[]"), ("error",), PAGE),
    "page_base64_not_base64": ("viewer page", "snapshot.html",
                               lambda: page_with('[{"name": "a", "base64": "gASV!!!!"}]'), ("error",), PAGE),
    # a name or URL in the page is never opened (the test plants a snapshot at the path it names)
    "page_names_a_path": ("viewer page", "snapshot.html",
                          lambda: page_with('[{"name": "/tmp/tbga-outside/snapshot.pickle", '
                                            '"url": "file:///tmp/tbga-outside/snapshot.pickle"}]'), ("error",), PAGE),
    "page_bytes_not_utf8_after": ("viewer page", "snapshot.html", lambda: page(small_snapshot(), tail=b"\xff" * 4096),
                                  ("report", "healthy"), ("report", "healthy")),
    # a snapshot gzipped for upload (``snapshot.pickle.gz``): read as its pickle; cut, empty, a bomb (the bomb past
    # the size limit: tests/formats/test_snapshot_gzip.py, which sets a small one)
    "snapshot_gzipped": ("gzipped snapshot", "snapshot.pickle.gz", lambda: gzip.compress(small_snapshot(), mtime=0),
                         ("report", "healthy"), ("report", "healthy")),
    "snapshot_gzip_cut": ("gzipped snapshot", "snapshot.pickle.gz",
                          lambda: gzip.compress(small_snapshot(), mtime=0)[:120], ("error",), ("cut off or corrupt",)),
    "snapshot_gzip_header_only": ("gzipped snapshot", "snapshot.pickle.gz",
                                  lambda: gzip.compress(small_snapshot(), mtime=0)[:12], ("error",),
                                  ("nothing readable",)),
    # a snapshot's values
    "snapshot_sizes_past_address_space": ("snapshot values", "snapshot.pickle",
                                          lambda: snapshot([segment(1 << 100, [block(1 << 100)])],
                                                           [entry("alloc", 0, 1 << 100, T0_US)]),
                                          ("error", "damaged"), SIZE_OUT_OF_RANGE),
    "snapshot_int64_max_sizes": ("snapshot values", "snapshot.pickle",
                                 lambda: snapshot([segment(2**63 - 1, [block(2**63 - 1), block(2**63 - 1, 8)])],
                                                  [entry("alloc", 0, 2**63 - 1, T0_US)]), ("error", "damaged"),
                                 SIZE_OUT_OF_RANGE),
    "snapshot_negative_sizes": ("snapshot values", "snapshot.pickle",
                                lambda: snapshot([segment(-MiB, [block(-MiB)])], [entry("alloc", 0, -MiB, T0_US)]),
                                ("error", "damaged"), SIZE_OUT_OF_RANGE),
    "snapshot_device_negative": ("snapshot values", "snapshot.pickle",
                                 lambda: snapshot([segment(MiB, [block(MiB)], device=-5)]), ("error", "damaged"),
                                 DEVICE_OUT_OF_RANGE),
    "snapshot_device_past_int8": ("snapshot values", "snapshot.pickle",
                                  lambda: snapshot([segment(MiB, [block(MiB)], device=10**18)]), ("error", "damaged"),
                                  DEVICE_OUT_OF_RANGE),
    "snapshot_time_nan": ("snapshot values", "snapshot.pickle",
                          lambda: snapshot([segment(MiB, [block(MiB)])], [entry("alloc", 0, MiB, float("nan"))]),
                          ("error", "damaged"), ("`time_us` out of range",)),
    "snapshot_times_years_apart": ("snapshot values", "snapshot.pickle",
                                   lambda: snapshot([segment(2 * MiB, [block(MiB), block(MiB, MiB)])],
                                                    [entry("alloc", 0, MiB, T0_US), entry("alloc", MiB, MiB,
                                                                                          T0_US + (1 << 50))]),
                                   ("error",), ("days",)),
    "snapshot_blocks_overlap": ("snapshot values", "snapshot.pickle",
                                lambda: snapshot([segment(MiB, [block(MiB), block(MiB)])],
                                                 [entry("alloc", 0, MiB, T0_US), entry("alloc", 0, MiB, T0_US + 1)]),
                                ("damaged",), ("overlap",)),
    "snapshot_shared_blocks_past_address_space": ("snapshot values", "snapshot.pickle",
                                                  lambda: snapshot([segment(1 << 56, [block(1 << 56)] * 300)]),
                                                  ("error",), ("address space",)),
    "snapshot_history_wraps_int64": ("snapshot values", "snapshot.pickle",
                                     lambda: snapshot([segment(MiB, [block(MiB)])],
                                                      [entry("segment_alloc", k << 30, 1 << 56, T0_US + k)
                                                       for k in range(200)]), ("error",), ("2**62",)),
    "snapshot_history_first_cut": ("snapshot values", "snapshot.pickle",
                                   lambda: pickle.dumps({"device_traces": [[entry("alloc", 0, 1 << 30, T0_US)]],
                                                         "segments": [segment(MiB, [])]}, protocol=4),
                                   ("damaged",), ("history ends with",)),
    "snapshot_annotation_times": ("snapshot values", "snapshot.pickle",
                                  lambda: snapshot([segment(MiB, [block(MiB)])], [entry("alloc", 0, MiB, T0_US)],
                                                   external_annotations=[
                                                       {"name": "Optimizer.step#AdamW.step", "stage": "END",
                                                        "time_us": t} for t in (float("nan"), -(2**70), 2**70,
                                                                                T0_US + 10**15)]),
                                  ("report", "healthy"), ("report", "healthy")),
    # Git LFS pointers
    "lfs_size_of_400_digits": ("LFS pointer", "w.1.pt.trace.json", lambda: lfs(size="9" * 400), ("error",), LFS),
    "lfs_size_of_400_digits_as_snapshot": ("LFS pointer", "snapshot.pickle", lambda: lfs(size="9" * 400),
                                           ("error",), LFS),
    "lfs_oid_a_path": ("LFS pointer", "snapshot.html", lambda: lfs(oid="../../../../etc/passwd", size="10"),
                       ("error",), LFS),
    # JSON nested past the interpreter's recursion limit where a header or a page holds a value the readers decode
    # whole (a rank file's ``deviceProperties``, PyTorch 2.0's ``alloc_data``): a traceback from discovery before
    "trace_header_nested_deep": ("nested JSON", "w.pt.trace.json",
                                 lambda: b'{"schemaVersion": 1, "deviceProperties": ' + DEEP + b', "traceEvents": []}',
                                 ("error",), ("does not parse",)),
    "drawn_page_nested_deep": ("nested JSON", "trace.html",
                               lambda: b"<html><script>let alloc_data = {\"actions\": " + DEEP + b"}</script></html>",
                               ("error",), ("nested deeper",)),
    # memory timelines
    "timeline_nan_and_infinity": ("memory timeline", "profile.json",
                                  lambda: b"[[1700000000000000, NaN, Infinity], [[NaN, 1e400], [-1e308]]]",
                                  ("error",), TIMELINE),
    "timeline_raw_huge_bytes": ("memory timeline", "profile.raw.json",
                                lambda: b"[[-1, 0, " + b"9" * 5000 + b", 3], [1, 1, -" + b"9" * 5000 + b", null]]",
                                ("error",), TIMELINE),
    "timeline_cut": ("memory timeline", "profile.json", lambda: b"[[1700000000000000, 1700000000000100, 17000", ("error",),
                     TIMELINE),
}


def analyse_file(data: bytes, path: str) -> str:
    """``tb-gpu-advisor report PATH`` of ``data`` written at ``path``: ``error: ...`` (the host could not be analysed,
    exit 2), ``damaged: ...`` (a partial report, exit 2), ``report`` / ``healthy`` (exit 0 or 1), ``exception: ...``
    (anything that escaped: a traceback, another exit code)."""
    import contextlib
    import io

    from tb_gpu_advisor.cli.main import main as cli

    with open(path, "wb") as f:
        f.write(data)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):  # the words said, not the path's
        rc = cli(["report", path, "--cache-dir", "off", "--format", "json"])
    said = " ".join(err.getvalue().replace(path, "<file>").replace("tb-gpu-advisor report: error: ", "").split())
    if "Traceback" in said or rc not in (0, 1, 2):
        return f"exception: exit {rc}: {said[-300:]}"
    if rc == 2:
        return f"{'damaged' if 'the file is damaged' in said else 'error'}: {said[:600]}"
    return "healthy" if json.loads(out.getvalue()).get("healthy") else "report"


def run_bounded(data: bytes, path: str, seconds: float = 20.0, memory_mb: int = 1024) -> dict:
    """:func:`analyse_file` in a forked child under a time and memory limit (``hostile_pickles.run_bounded``)."""
    return hp.run_bounded(data, path, seconds=seconds, memory_mb=memory_mb, analyse=analyse_file)


# -- a fuzzer of a snapshot's values --------------------------------------------------------------------------------

_INTERESTING_VALUES = (0, 1, -1, 7, 511, 2**31 - 1, 2**32, 2**48, 2**56, 2**57, 2**62, 2**63 - 1, 2**64, -(2**63),
                       10**18, float("nan"), float("inf"), -0.0, 1e300, "x", None, [], {})
_ACTIONS = ("alloc", "free_requested", "free_completed", "free", "segment_alloc", "segment_free", "segment_map",
            "segment_unmap", "oom", "snapshot", "", "alloc")


_COUNTED = {"size", "total_size", "addr", "address", "device", "time_us", "device_free", "state", "action"}


def _dicts(v, out: list, depth: int = 0) -> list:
    """Every dict in a snapshot's plain data (its segments, blocks, entries, frames), depth first.  Only containers
    are entered (a call per scalar was nine tenths of the calls, most of a fuzzed snapshot's time)."""
    if depth > 8:
        return out
    if isinstance(v, dict):
        out.append(v)
        for x in v.values():
            if isinstance(x, (dict, list)):
                _dicts(x, out, depth + 1)
    elif isinstance(v, list):
        for x in v:
            if isinstance(x, (dict, list)):
                _dicts(x, out, depth + 1)
    return out


def mutate_values(rng, doc: dict, edits: int = 4) -> dict:
    """``doc`` (a snapshot's plain data, changed in place) with one to ``edits`` fields set to values an allocator
    never writes or writes rarely (extremes, NaN, the wrong type), an action renamed, or a dict duplicated in its
    list: a snapshot that parses, for what reads its values (``tests/formats/test_hostile_inputs.py``)."""
    for _ in range(rng.randint(1, edits)):
        ds = _dicts(doc, [])
        if not ds:
            return doc
        counted = [x for x in ds if _COUNTED.intersection(x)]  # segments, blocks, entries: what is added up
        d = rng.choice(counted if counted and rng.random() < 0.8 else ds)
        keys = [k for k in d if isinstance(k, str)]
        if rng.random() < 0.7 and _COUNTED.intersection(keys):
            keys = sorted(_COUNTED.intersection(keys))
        op = rng.randrange(4)
        if op == 0 and keys:
            d[rng.choice(keys)] = rng.choice(_INTERESTING_VALUES)
        elif op == 1 and "action" in d:
            d["action"] = rng.choice(_ACTIONS)
        elif op == 2:
            lists = [v for x in ds for v in x.values() if isinstance(v, list) and v]
            if lists:
                lst = rng.choice(lists)
                lst.insert(rng.randrange(len(lst) + 1), rng.choice(lst))
        elif keys:
            del d[rng.choice(keys)]
    return doc


def fuzz_values(n: int, seed: int, path: str, edits: int = 4) -> tuple[dict[str, int], list[str]]:
    """``n`` snapshots of ``synthetic.memsnapshot``'s scenarios through :func:`mutate_values`, each read and analysed
    to a report (JSON and Markdown) or refused: the outcomes counted (``report``, ``healthy``, ``refused``), and what
    escaped (anything else), in words."""
    import collections
    import copy
    import random

    from synthetic import memsnapshot as ms
    from tb_gpu_advisor.formats.snapshot.reader import SnapshotReadError, read_trace
    from tb_gpu_advisor.report.merge import merge_hosts
    from tb_gpu_advisor.report.render import to_markdown
    from tb_gpu_advisor.runtime.pipeline import host_metrics, host_report

    seeds = [make().doc for make in ms.SCENARIOS.values()]
    rng = random.Random(seed)
    counts: collections.Counter[str] = collections.Counter()
    escaped = []
    for _ in range(n):
        data = pickle.dumps(mutate_values(rng, copy.deepcopy(rng.choice(seeds)), edits), protocol=4)
        with open(path, "wb") as f:
            f.write(data)
        try:
            report = merge_hosts("r", "s", [host_report(host_metrics(read_trace(path), None), len(data))])
            to_markdown(report)
            report.to_json()
            counts["healthy" if report.healthy else "report"] += 1
        except SnapshotReadError:
            counts["refused"] += 1
        except Exception as e:  # noqa: BLE001 - what escapes is the finding
            counts["escaped"] += 1
            escaped.append(f"{type(e).__name__}: {e}"[:200])
    return dict(counts), escaped
