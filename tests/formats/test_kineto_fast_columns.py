"""The PyTorch reader's fast paths (issue #30) against its plain ones, field for field of the whole parse.

Why: the typed decode's columns are built by C loops (a field read by ``map``, interning by ``dict.fromkeys``,
integers converted by ``array("q")``, a FLOP op's work remembered per distinct raw shapes), and a big trace's chunks
are decoded by worker processes and merged.  Each must give exactly what the stdlib decode, event by event, and the
serial reader give -- on real traces (H100, the public NVIDIA and AMD ones) and on a trace made to cut chunks inside
strings.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tb_gpu_advisor.formats.kineto import parse
from tb_gpu_advisor.formats.kineto.parse import parse_trace
from tests.support.kineto_paths import every_trace
from tests.support.paths import FIXTURES
from tests.support.real_checks import REAL_TORCH_SET

H100 = sorted(REAL_TORCH_SET.glob("*/*.pt.trace.json")) if REAL_TORCH_SET.is_dir() else []
WILD = sorted((FIXTURES / "wild").glob("*/*.pt.trace.json.gz"))
TRACES = H100 + WILD


def _plain_trace(tmp: Path) -> Path:
    """An uncompressed real trace (workers decode chunks of a plain file, never of a .gz): the H100 set's, else a
    public one unpacked (the largest: the tests cut it into many chunks)."""
    if H100:
        return H100[0]
    src_path = max(WILD, key=lambda p: p.stat().st_size)
    out = tmp / src_path.name[: -len(".gz")]
    with gzip.open(src_path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out
HAVE_MSGSPEC = parse._decoder(None) == "msgspec"
DECODERS = ["json"] + (["msgspec"] if HAVE_MSGSPEC else [])


def whole(kt: parse.KinetoTrace) -> dict[str, Any]:
    """Every field of a parse, arrays as lists (the decoder's name aside)."""
    out = {}
    for f in dataclasses.fields(kt):
        v = getattr(kt, f.name)
        if isinstance(v, np.ndarray):
            v = (str(v.dtype), v.tolist())
        elif isinstance(v, parse.MemoryColumns):
            v = {g.name: getattr(v, g.name).tolist() for g in dataclasses.fields(v)}
        out[f.name] = v
    out.pop("decoder")
    return out


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.name[:16]}"


@pytest.mark.skipif(not HAVE_MSGSPEC, reason="msgspec is not installed: there is no typed decode")
@pytest.mark.proved_on_python_path("tests/formats/test_kineto_compiled.py::test_both_paths_read_every_trace_alike")
@pytest.mark.parametrize("path", TRACES, ids=_id)
def test_typed_columns_equal_the_stdlib_ones(path: Path) -> None:
    """Names, ids, string pids, every argument column, shapes and FLOP work kept: the same from both decoders.

    Where the compiled scanner is built the typed decode here is the scanner's, so this run shows scanner == stdlib
    on every trace; ``test_kineto_compiled``'s ``test_both_paths_read_every_trace_alike`` shows scanner == the Python
    typed decode, field by field and type by type, on every trace of ``tests/`` and ``../shared/profiles`` (these
    included).  Together they are this test on the pure-Python path, so the Makefile's pure-Python rerun leaves it
    out (``proved_on_python_path``; it was 45 s of the rerun's CPU in CI, the Python typed and stdlib decodes of the
    largest public traces again).  Without the scanner this run compares the Python typed decode itself."""
    typed = parse_trace(str(path), decoder="msgspec", workers=1)
    plain = parse_trace(str(path), decoder="json", workers=1)
    assert typed.decoder == "msgspec" and len(typed) > 0
    assert whole(typed) == whole(plain)


def test_the_traces_compared_here_are_read_on_both_paths_there() -> None:
    """The pure-Python rerun leaves ``test_typed_columns_equal_the_stdlib_ones`` to the main run only because
    ``test_kineto_compiled`` reads each of its traces on both paths (``kineto_paths.every_trace``): a trace added here
    and not there would lose its Python-path check."""
    assert TRACES and set(map(str, TRACES)) <= set(every_trace())


def test_without_msgspec_the_stdlib_decode_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """msgspec is optional (``pip install .[fast]``): without it the reader falls back to the stdlib, same result."""
    path = (H100 or WILD)[0]
    with_it = parse_trace(str(path), workers=1)
    monkeypatch.setitem(sys.modules, "msgspec", None)  # ``import msgspec`` now raises ImportError
    without = parse_trace(str(path), workers=1)
    assert without.decoder == "json"
    assert whole(without) == whole(with_it)


def _spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    calls: list[int] = []
    original = getattr(parse._Parser, name)

    def spy(self, *a):
        out = original(self, *a)
        calls.append(1 if out is not None else 0)
        return out

    monkeypatch.setattr(parse._Parser, name, spy)
    return calls


SAMPLE = H100[:2] + [p for p in WILD if p.parent.name in ("amd_mi300x", "hta_v100", "vllm_b200_tp8")]


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize("path", SAMPLE, ids=_id)
def test_chunks_decoded_by_workers_merge_to_the_serial_columns(path: Path, decoder: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse, "CHUNK_BYTES", 32 << 10)  # many chunks from a small file
    monkeypatch.setattr(parse, "_READ_BLOCK", 32 << 10)  # workers are used only before the input's end is read
    serial = whole(parse_trace(str(path), decoder=decoder, workers=1))
    monkeypatch.setattr(parse, "PARALLEL_AFTER", 0)
    sent = _spy(monkeypatch, "_send")
    merged = whole(parse_trace(str(path), decoder=decoder, workers=2))
    assert sum(sent) >= 4, "the chunks were not given to workers"
    assert merged == serial


def test_a_chunk_cut_inside_an_event_is_read_again_from_its_start(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Arguments holding lists of objects (``[{"ph": 1}, {"ph": 2}]``, which look like the start of the next event)
    put the cut of a chunk sent to a worker inside an event: the worker's decode fails, the reader goes back to that
    chunk and reads on in this process; string pids, metadata and names keep their serial ids."""
    events = [{"ph": "M", "name": "process_name", "pid": "Spans", "tid": 0, "args": {"name": "spans"}}]
    for i in range(3000):
        events.append({"ph": "X", "cat": "cpu_op" if i % 3 else "kernel", "name": f"op{i % 50}" + "},{" * (i % 7),
                       "pid": "Spans" if i % 100 == 0 else 1, "tid": f"t{i % 5}" if i % 11 == 0 else 2,
                       "ts": 10.0 + i, "dur": 0.5, "args": {"correlation": i, "External id": i + 7,
                                                              "nested": [{"ph": j} for j in range(i % 9)]}})
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    monkeypatch.setattr(parse, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(parse, "_READ_BLOCK", 8192)  # workers are used only before the input's end is read
    serial = whole(parse_trace(str(path), workers=1))
    monkeypatch.setattr(parse, "PARALLEL_AFTER", 0)
    rewound = _spy(monkeypatch, "_rewind")
    merged = whole(parse_trace(str(path), workers=2))
    assert rewound, "no chunk was cut inside an event: the test does not test the rewind"
    assert merged == serial and merged["n_events"] == 3001 and not merged["problems"]


def test_a_daemonic_process_reads_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader inside a pool's worker (the precompute's shards) may not start processes: it reads serially."""
    monkeypatch.delenv("TB_GPU_ADVISOR_PARSE_WORKERS", raising=False)
    monkeypatch.setattr(parse.multiprocessing.current_process(), "daemon", True, raising=False)
    assert parse._default_workers() == 1
    monkeypatch.setenv("TB_GPU_ADVISOR_PARSE_WORKERS", "3")
    assert parse._default_workers() == 3


def test_a_threaded_process_spawns_its_workers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """In TensorBoard (threads) the pool is spawned, not forked: fresh interpreters that import the reader and
    decode the chunks they are sent; the result is still the serial one."""
    import threading

    path = _plain_trace(tmp_path)
    monkeypatch.setattr(parse, "CHUNK_BYTES", 64 << 10)
    monkeypatch.setattr(parse, "_READ_BLOCK", 64 << 10)
    serial = whole(parse_trace(str(path), workers=1))
    monkeypatch.setattr(parse, "PARALLEL_AFTER", 0)
    methods: list[str] = []
    start = parse._start_pool

    def spy(workers: int):
        pool = start(workers)
        methods.append(pool._mp_context.get_start_method())
        return pool

    monkeypatch.setattr(parse, "_start_pool", spy)
    monkeypatch.setattr(parse, "_CSCAN", None)  # processes are for the Python decode (the scanner's run in threads)
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        merged = whole(parse_trace(str(path), workers=2))
    finally:
        stop.set()
        t.join()
    assert methods == ["spawn"] and merged == serial


def _dies_on_the_third_chunk(data: bytes, decoder: str) -> Any:
    """A worker's decode that runs out of memory (the memory guard's ``RLIMIT_AS``) on its third chunk."""
    _dies_on_the_third_chunk.calls = getattr(_dies_on_the_third_chunk, "calls", 0) + 1
    if _dies_on_the_third_chunk.calls == 3:
        raise MemoryError
    return _REAL_DECODE_PART(data, decoder)


_REAL_DECODE_PART = parse._decode_part


def _scan_dies_on_the_third_chunk(data: Any) -> Any:
    """A worker thread's scan that runs out of memory on its third chunk."""
    _scan_dies_on_the_third_chunk.calls = getattr(_scan_dies_on_the_third_chunk, "calls", 0) + 1
    if _scan_dies_on_the_third_chunk.calls == 3:
        raise MemoryError
    return _REAL_SCAN_PART(data)


_REAL_SCAN_PART = parse._scan_part


def test_a_worker_that_fails_costs_the_pool_not_the_trace(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A worker out of memory: its chunk and every later one are read in this process, and the columns are the
    serial ones (the pool is forked after the patch, so its workers run the failing decode)."""
    path = _plain_trace(tmp_path)
    monkeypatch.setattr(parse, "CHUNK_BYTES", 32 << 10)
    monkeypatch.setattr(parse, "_READ_BLOCK", 32 << 10)
    serial = whole(parse_trace(str(path), workers=1))
    monkeypatch.setattr(parse, "PARALLEL_AFTER", 0)
    monkeypatch.setattr(parse, "_decode_part", _dies_on_the_third_chunk)
    monkeypatch.setattr(parse, "_scan_part", _scan_dies_on_the_third_chunk)  # the compiled scanner's threads
    dropped = _spy(monkeypatch, "_drop_pool")
    merged = whole(parse_trace(str(path), workers=2))
    assert dropped, "no worker failed: the test does not test the fallback"
    assert merged == serial and not merged["problems"]


def test_host_lines_by_runs_are_unique_pairs():
    """The adapter finds the host events' (pid, tid) lines through the rows' runs; any rows -- long runs, none,
    huge ids, one row, none -- give :func:`unique_pairs`' pairs and inverse, dtypes included."""
    from tb_gpu_advisor.formats.kineto.adapter import _unique_pairs_by_runs
    from tb_gpu_advisor.model.columns import unique_pairs

    rng = np.random.default_rng(0)
    for trial in range(300):
        n = int(rng.integers(0, 60))
        a = rng.integers(-3, 3, n) * (10**12 if trial % 2 else 1)
        b = rng.integers(-2, 2, n)
        if trial % 3 == 0:
            a, b = np.repeat(a, 20), np.repeat(b, 20)
        (p1, i1), (p2, i2) = unique_pairs(a, b), _unique_pairs_by_runs(a, b)
        assert p1.dtype == p2.dtype and i1.dtype == i2.dtype
        assert np.array_equal(p1, p2) and np.array_equal(i1, i2)


def test_host_order_is_the_lexsort():
    """Host events by line, start, longer first: the two stable sorts give the lexsort's order, with equal starts
    (where the duration decides) or without, lines as wide or as narrow as the reader makes them."""
    from tb_gpu_advisor.formats.kineto.adapter import _host_order

    rng = np.random.default_rng(2)
    for trial in range(300):
        n = int(rng.integers(0, 50))
        line = rng.integers(0, 3, n).astype((np.int64, np.int16, np.int32)[trial % 3])
        start = rng.integers(0, 10 if trial % 2 else 10**9, n) * 1000
        end = start + rng.integers(0, 5, n) * 1000
        assert np.array_equal(_host_order(line, start, end), np.lexsort((-(end - start), start, line)))
