"""A program that polls the GPU waits for it, and a blocking copy is named by the call the program made
(h37-probe44p, issue #37 class 3; h37-probe44s's *Left* 2 and 4).

``while not ev.query(): ...`` records a run of ``cudaEventQuery`` calls outside every op until the GPU has drained;
the GPU then idles while the host works on the result.  Main read that idle as launch overhead ("Launch-bound,
critical, 308 us", torch.compile reduce-overhead): the poll is the program's own wait, host_sync's, with a poll's
fix.  The caching allocator's queries of freed blocks' events (inside ``aten::empty*`` and other ops, once per
event) are no poll: three real traces hold thousands of them and must read as before.

``x.to('cuda')`` of pageable memory records ``aten::to`` > ``aten::_to_copy`` > ``aten::copy_`` with the copy and its
stream sync in the innermost op; main named its wait "aten::copy_", where a sync is named by the op the program
called (h37-probe44s).  Truth by construction: ``synthetic.torchtrace.write_poll_then_host_work`` and
``write_pageable_to_device``.
"""

from __future__ import annotations

import bisect
import gzip
import json
import re
import sqlite3
from pathlib import Path

import pytest

from synthetic import nsysexport as nx
from synthetic import rpdtrace
from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto import adapter as kineto_adapter
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics
from tests.support.cli_report import first_report
from tests.support.paths import FIXTURES


#: a HIP loop's burst: two short fp32 GEMMs and their ReLUs, 24 us of GPU work, then the wait
_HIP_BURST = [("gemm_kernel(float*)", 8.0), ("relu(float*)", 4.0)] * 2


def _report(path: str):
    p = Path(path)
    rep = analyze_host(HostFile(p.name, str(p), p.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    return rep


def _named(summary: str) -> list[str]:
    """The host events the host_sync finding says the waits were in ("in cudaEventQuery ×1")."""
    said = re.search(r"\(in ([^;]*);", " ".join(summary.split()))
    assert said is not None, summary
    return [p.rsplit(" ×", 1)[0] for p in said.group(1).split(", ")]


@pytest.mark.parametrize("call", ["cudaEventQuery", "cudaStreamQuery"])
def test_a_poll_until_the_gpu_drains_is_the_programs_wait(tmp_path: Path, call: str) -> None:
    truth = tt.write_poll_then_host_work(str(tmp_path), call=call)
    rep = _report(truth["paths"][0])
    syncs = [f for f in rep.findings if f.rule == "host_sync" and "#" not in f.id]
    # main: no host_sync finding; "Launch-bound, critical, 308 us" with torch.compile's fix
    assert len(syncs) == 1, [(f.rule, f.severity) for f in rep.findings]
    f = syncs[0]
    words = " ".join(f.summary.split())
    assert "1 time per step" in words and _named(f.summary) == [call], words
    assert "1 of them by polling" in words, words  # one wait: no "1 of them polls" (h37-forms16's words law)
    # the idle is the host's work after the poll (its host_us) and the next launch's lead: the wait's
    idle_ms = f.metric.detail["idle_ms_per_step"]
    assert truth["host_work_ms"] <= idle_ms < truth["host_work_ms"] + 0.05, idle_ms
    assert f.metric.detail["wait_ms_per_step"] > 0.5 * truth["gpu_ms_per_step"]  # the host asked all that time
    fix = " ".join(a.text for a in f.actions[:1])
    assert "event.synchronize()" in fix and ".item()" not in fix, fix
    assert not [g for g in rep.findings if g.rule == "launch_bound" and g.severity in ("warning", "critical")]


def test_a_loop_that_launches_between_queries_waits_only_after_its_last_launch(tmp_path: Path) -> None:
    """Query, launch, query, launch ... then queries until done (``torchtrace.write_launches_while_polling``): the wait
    is the queries after the last launch, to the one that found the GPU done -- the launching part is no wait.  Main
    read the queries from the last launch through the host's work into the next step's first query as one run whose
    last query began after the drain: no poll, "Launch-bound, critical, 308 us"."""
    truth = tt.write_launches_while_polling(str(tmp_path))
    rep = _report(truth["paths"][0])
    (f,) = [f for f in rep.findings if f.rule == "host_sync" and "#" not in f.id]
    words = " ".join(f.summary.split())
    assert "1 time per step" in words and "by polling" in words and _named(f.summary) == ["cudaEventQuery"], words
    assert f.metric.detail["wait_ms_per_step"] == pytest.approx(truth["wait_ms"], abs=0.002)
    assert f.metric.detail["wait_ms_per_step"] < truth["gpu_ms_per_step"]  # not from the step's first query
    idle_ms = f.metric.detail["idle_ms_per_step"]
    assert truth["host_work_ms"] <= idle_ms < truth["host_work_ms"] + 0.05, idle_ms
    assert not [g for g in rep.findings if g.rule == "launch_bound" and g.severity in ("warning", "critical")]


def test_a_sync_call_keeps_its_words(tmp_path: Path) -> None:
    """Control: ``.item()`` after the same work is no poll (its words and fix are the sync's)."""
    truth = tt.write_sync_then_host_work(str(tmp_path))
    (f,) = [f for f in _report(truth["paths"][0]).findings if f.rule == "host_sync" and "#" not in f.id]
    assert "polling" not in f.summary and ".item()" in " ".join(a.text for a in f.actions)


#: CUDA's and HIP's queries of an event or a stream, as the runtimes name them (read apart from ``devices``)
_QUERY = re.compile(r"^(?:cuda|cu|hip)(?:Event|Stream)Query")


def _queries(path: Path) -> tuple[int, int]:
    """(query calls, of them inside a ``cpu_op`` on their thread), read straight from the JSON."""
    ev = [e for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("ph") == "X"]
    ops: dict = {}
    for e in ev:
        if e.get("cat") in ("cpu_op", "Operator"):
            ops.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    reach = {}  # per thread: op starts in order, and the furthest end of the ops begun by each
    for k, v in ops.items():
        v.sort()
        ends, far = [], float("-inf")
        for _, t in v:
            far = max(far, t)
            ends.append(far)
        reach[k] = ([s for s, _ in v], ends)

    def inside(e: dict) -> bool:
        starts, ends = reach.get((e["pid"], e["tid"]), ([], []))
        i = bisect.bisect_right(starts, e["ts"]) - 1
        return i >= 0 and ends[i] >= e["ts"]

    q = [e for e in ev if e.get("cat") in ("cuda_runtime", "Runtime") and _QUERY.match(e["name"])]
    return len(q), sum(inside(e) for e in q)


@pytest.mark.parametrize("name", ["d2d_v100", "torchrec_a100_stalls", "hta_v100"])
def test_the_caching_allocators_queries_are_no_poll(name: str) -> None:
    """Real traces whose event queries are the caching allocator's (nearly all inside ops; each event asked once):
    none is read as the program's poll, and no query names a wait (a control: as main reads them)."""
    path = next((FIXTURES / "wild" / name).glob("*.pt.trace.json.gz"))
    n, inside = _queries(path)
    assert n > 1000 and inside > 0.9 * n, (n, inside)
    m = host_metrics(kineto_adapter.read_trace(str(path)))
    assert not [c for c, _ in m.syncs.callers if _QUERY.match(c)], m.syncs.callers


@pytest.mark.parametrize("via", ["aten::to", None])
def test_a_blocking_copy_is_named_by_the_call_the_program_made(tmp_path: Path, via: str | None) -> None:
    truth = tt.write_pageable_to_device(str(tmp_path), via=via)
    m = host_metrics(kineto_adapter.read_trace(truth["paths"][0]))
    # main: [("aten::copy_", 1.0)] for x.to('cuda') too, the copy's mechanism inside the call
    assert m.syncs.copy_callers == [(via or "aten::copy_", pytest.approx(truth["copies_per_step"]))]
    (f,) = [f for f in _report(truth["paths"][0]).findings if f.rule == "excessive_memcpy"]
    assert f"({via or 'aten::copy_'} ×1)" in " ".join(f.summary.split()), f.summary


def _cli_findings(path: str) -> list[dict]:
    return first_report(path)["findings"]


def _by_rule(findings: list[dict]) -> dict[str, dict]:
    return {f["id"].split(":", 1)[0]: f for f in findings if "#" not in f["id"]}


def _kernel_gaps_ms(path: str) -> float:
    """The GPU's idle between consecutive kernels inside the sweeps (gaps under 1 ms), ms, read from the export."""
    with sqlite3.connect(path) as con:
        k = con.execute("SELECT start, end FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start").fetchall()
    gaps = [b[0] - a[1] for a, b in zip(k, k[1:])]
    return sum(g for g in gaps if g < 1_000_000) / 1e6


@pytest.mark.parametrize("call", ["cuStreamQuery", "cudaEventQuery_v3020"])
def test_a_native_loops_poll_after_each_kernel_is_its_wait(tmp_path: Path, call: str) -> None:
    """Nsight export of an offload loop that polls after each kernel (``nsysexport.write_synced_kernels(poll=)``):
    the same loop as its ``cuStreamSynchronize`` form, the wait by other calls.  Main found the polls but read the
    host between two queries as code the profiler did not record: 6.7 ms a step "unrecorded", 1.7 ms host_sync
    (no finding) and launch_bound 3.1 ms -- a CUDA graph for a loop that waits after each kernel."""
    path = str(tmp_path / "report2.sqlite")
    truth = nx.write_synced_kernels(path, poll=call)
    found = _by_rule(_cli_findings(path))
    assert truth["cause"] == "host_sync" and "host_sync" in found, sorted(found)
    f = found["host_sync"]
    assert f["severity"] in ("warning", "critical"), f["severity"]
    # per step: each kernel's run between two waits, as the cuStreamSynchronize twin reads its steps (h37-probe45s;
    # the polls were read as no wait by the steps before, each sweep one step), every gap inside a sweep after a poll
    gaps = truth["kernels"] - 8  # 8 sweeps of 100 kernels, 99 gaps each
    idle_ms = _kernel_gaps_ms(path) / gaps
    # the wait owns the idle but the host's own untraced 14 us a kernel (11 us before the launch, 3 us after it)
    assert 0.7 * idle_ms <= f["saving"]["ms_per_step"] <= idle_ms, (f["saving"], idle_ms)
    words = " ".join(f["summary"].split())
    assert "by polling" in words and call.split("_v")[0] in words, words
    assert "launch_bound" not in found or found["launch_bound"]["saving"]["ms_per_step"] < 0.1 * idle_ms


@pytest.mark.parametrize("call", ["hipEventQuery", "hipStreamQuery"])
def test_a_hip_loops_poll_is_its_wait_in_hips_words(tmp_path: Path, call: str) -> None:
    """rocmProfileData of a HIP loop that polls after each burst (``rpdtrace.write(poll=)``): the poll is host_sync's,
    with HIP's calls in its fix and no CUDA word (a control on the vendor's words: main read it so already)."""
    rpdtrace.write(str(tmp_path / "trace.rpd"), [_HIP_BURST] * 30, gap_ms=0.0, module_load_ms=0.0, poll=call)
    found = _by_rule(_cli_findings(str(tmp_path)))
    f = found["host_sync"]
    words = " ".join(f["summary"].split())
    assert "by polling" in words and call in words, words
    fix = " ".join(a["text"] + " " + (a.get("snippet") or "") for a in f["actions"])
    assert "hipEventSynchronize" in fix and not re.search(r"\bcu[A-Z]|\bcuda|CUDA", fix), fix
    assert "launch_bound" not in found
