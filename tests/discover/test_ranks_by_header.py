"""Rank files of one job named without their machine are one host when their own headers say one machine
(``formats/kineto/layout.one_machine``): the job's GPUs are then compared (launch skew, imbalance, the collectives
each GPU waits in) instead of read as two hosts of one GPU each.

Real truth (``wild/tp_rtx4090_two_ranks``, tugot17/tokenomics-from-first-principles @b576974): both ranks of a
2-rank DTensor job saved as ``llama_trace_4layers{0,1}_with_annotations.json`` -- names that say no machine.  Read by
hand (and again here with ``json``): ``distributedInfo`` rank 0 / 1 of world 2 with one ``pg_config``, both list the
same two RTX 4090s, rank 0's kernels on device 0 and rank 1's on device 1, and each rank runs 19 NCCL kernels in the
same order.  Without ``distributedInfo`` the pair is still one job (one machine's processes, their windows
overlapping); controls by construction from the same files: the second run two minutes later (two unrelated
captures), another process group: never one host.  Ranks that each see one GPU (``CUDA_VISIBLE_DEVICES`` narrowed) are one host
by their machine's clock and pid counter; controls: another boot's clock, a repeated pid, another group or model.
A job of 4 such ranks on 2 machines (the pair twice, the copy on another pid counter) is one host per machine.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tb_gpu_advisor import formats
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.kineto import layout as kineto_layout
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES

PAIR = FIXTURES / "wild" / "tp_rtx4090_two_ranks"
FILES = [PAIR / f"llama_trace_4layers{r}_with_annotations.json.gz" for r in (0, 1)]


def _doc(path: Path) -> dict[str, Any]:
    with gzip.open(path, "rt") as f:
        return json.load(f)


def _truth(doc: dict[str, Any]) -> dict[str, Any]:
    """What one rank's file says by itself: its collectives' order and time per type, its first kernel's start."""
    kernels = sorted((e for e in doc["traceEvents"] if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    coll = [e for e in kernels if e["name"].startswith("ncclDevKernel_")]
    kind = {"AllGather": "A", "ReduceScatter": "R"}
    return {"order": "".join(next(v for k, v in kind.items() if k in e["name"]) for e in coll),
            "ms": {k: sum(e["dur"] for e in coll if k in e["name"]) / 1e3 for k in kind},
            "first_us": kernels[0]["ts"], "devices": {e["args"]["device"] for e in kernels}}


def _write(folder: Path, docs: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True)
    for src, doc in zip(FILES, docs):
        (folder / src.name.removesuffix(".gz")).write_text(json.dumps(doc))


def test_the_kept_pair_is_one_host_of_two_ranks(tmp_path: Path) -> None:
    """Both files in one run folder: one session, one host whose two GPUs are rank 0 and rank 1, each GPU's
    collectives those of its own rank's file (calls, order and time per type), on one clock."""
    run = tmp_path / "run"
    run.mkdir()
    for f in FILES:
        shutil.copy(f, run / f.name)
    (s,) = discover(str(tmp_path))
    (host,) = s.hosts
    assert [r.host for r in host.ranks] == ["llama_trace_4layers0_with_annotations",
                                            "llama_trace_4layers1_with_annotations"]
    assert host.host == "llama_trace_4layers*_with_annotations"
    truth = [_truth(_doc(f)) for f in FILES]
    assert [t["devices"] for t in truth] == [{0}, {1}]
    assert truth[0]["order"] == truth[1]["order"] == "RA" * 9 + "A"  # one job's collectives, matched one to one

    m = host_metrics(formats.read(host))
    assert [(g.gpu, g.rank, g.collective_calls_per_step) for g in m.gpus] == [(0, 0, 19.0), (1, 1, 19.0)]
    for gpu, t in zip((0, 1), truth):
        got = {c.type: c for c in m.comm.per_gpu[gpu]}
        assert {k: got[k].calls_per_step for k in got} == {"AllGather": 10.0, "ReduceScatter": 9.0}
        assert got["AllGather"].ms_per_step == pytest.approx(t["ms"]["AllGather"], abs=1e-3)
        assert got["ReduceScatter"].ms_per_step == pytest.approx(t["ms"]["ReduceScatter"], abs=1e-3)
    # one clock: rank 1's first kernel ran 10.26 ms before rank 0's, as the two files' own times say
    lead_ms = (truth[0]["first_us"] - truth[1]["first_us"]) / 1e3
    assert lead_ms == pytest.approx(10.26, abs=0.01)
    assert m.multi_gpu is not None and m.multi_gpu.first_gpu_order == [1, 0]
    assert m.gpus[0].first_kernel_offset_ms == pytest.approx(lead_ms, abs=1e-3)


def test_the_pair_without_its_ranks_is_still_one_job(tmp_path: Path) -> None:
    """The same two files without ``distributedInfo`` (as a rank exported through ``torch.autograd.profiler``, or
    PyTorch 1.8's, writes it): their machine -- the same two RTX 4090s listed, one boot clock, pids 506727/506728 --
    and their capture windows, which overlap, say one job: one session, one host of both files.  (Until h37-wild54p
    this was a control, "nothing says they are one job": two sessions.)"""
    docs = [_doc(f) for f in FILES]
    for d in docs:
        del d["distributedInfo"]
    _write(tmp_path / "run", docs)
    (s,) = discover(str(tmp_path))
    (host,) = s.hosts
    assert [r.host for r in host.ranks] == ["llama_trace_4layers0_with_annotations",
                                            "llama_trace_4layers1_with_annotations"]


def test_unrelated_single_rank_traces_stay_two_captures(tmp_path: Path) -> None:
    """Control: the same two files without ``distributedInfo``, the second's clock two minutes later -- a second run
    after the first one ended, its window after the first's: nothing says they are one job, so two sessions of a host
    each."""
    docs = [_doc(f) for f in FILES]
    for d in docs:
        del d["distributedInfo"]
    docs[1]["baseTimeNanoseconds"] += 120 * 10**9
    _write(tmp_path / "run", docs)
    sessions = discover(str(tmp_path))
    assert len(sessions) == 2 and all(len(s.hosts) == 1 and not s.hosts[0].ranks for s in sessions)


def _own_gpu_only(docs: list[dict[str, Any]]) -> None:
    """Each rank as ``CUDA_VISIBLE_DEVICES=<rank>`` leaves it: its one GPU listed, as device 0, its kernels there."""
    for r, d in enumerate(docs):
        d["deviceProperties"] = [{**p, "id": 0} for p in d["deviceProperties"] if p["id"] == r]
        for e in d["traceEvents"]:
            if isinstance(e.get("args"), dict) and e["args"].get("device") == r:
                e["args"]["device"] = 0
            if e.get("ph") in ("X", "f", "s") and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "ac2g") \
                    and e.get("pid") == r:
                e["pid"] = 0


def test_ranks_seeing_one_gpu_each_on_one_machine_are_one_host(tmp_path: Path) -> None:
    """The kept pair as ``CUDA_VISIBLE_DEVICES`` narrowed per process writes it: each file lists one RTX 4090 as device
    0.  Their machine says it: one clock (the first events 10 ms apart on the boot clock, 398,778 s) and one pid
    counter (506727, 506728).  One host of two GPUs, each its own rank's collectives, on one clock."""
    docs = [_doc(f) for f in FILES]
    truth = [_truth(d) for d in docs]
    _own_gpu_only(docs)
    assert [_truth(d)["devices"] for d in docs] == [{0}, {0}]
    _write(tmp_path / "run", docs)
    (s,) = discover(str(tmp_path))
    (host,) = s.hosts
    assert len(host.ranks) == 2
    m = host_metrics(formats.read(host))
    assert [(g.gpu, g.rank) for g in m.gpus] == [(0, 0), (1, 1)]
    for gpu, t in zip((0, 1), truth):
        got = {c.type: c.ms_per_step for c in m.comm.per_gpu[gpu]}
        assert got["AllGather"] == pytest.approx(t["ms"]["AllGather"], abs=1e-3)
    assert m.multi_gpu is not None and m.multi_gpu.first_gpu_order == [1, 0]


@pytest.mark.parametrize("change", ["other_boot", "same_pid", "other_group", "other_model"])
def test_ranks_without_one_machines_evidence_stay_apart(tmp_path: Path, change: str) -> None:
    """One job (one session) whose ranks each see one GPU, but something says two machines: rank 1's clock counts
    from a boot 90 s apart (its events 90 s later on it), the same pid in both (two pid namespaces), the ranks list
    different process groups, or different GPU models.  Two hosts."""
    docs = [_doc(f) for f in FILES]
    _own_gpu_only(docs)
    if change == "other_boot":
        for e in docs[1]["traceEvents"]:
            if isinstance(e.get("ts"), (int, float)):
                e["ts"] += 90e6  # booted 90 s apart: one session still (300 s), two clocks
    elif change == "same_pid":
        for e in docs[1]["traceEvents"]:
            if e.get("pid") == 506728:
                e["pid"] = 506727
    elif change == "other_group":
        docs[1]["distributedInfo"]["pg_config"][0]["pg_desc"] = "group_1"
    else:
        docs[1]["deviceProperties"][0]["name"] = "NVIDIA GeForce RTX 3090"
    _write(tmp_path / "run", docs)
    (s,) = discover(str(tmp_path))
    assert sorted(h.host for h in s.hosts) == [f.name.removesuffix(".json.gz") for f in FILES]
    assert all(not h.ranks for h in s.hosts)


def test_one_machine_needs_a_job_that_fits_its_gpus() -> None:
    """A job larger than the GPUs its processes see spans machines; ranks that repeat are no job."""
    gpus = ((0, "G", 1), (1, "G", 1))
    h = kineto_layout.Header
    assert kineto_layout.one_machine([h(None, 0, 2, "g", gpus), h(None, 1, 2, "g", gpus)])
    assert not kineto_layout.one_machine([h(None, 0, 4, "g", gpus), h(None, 1, 4, "g", gpus)])
    assert not kineto_layout.one_machine([h(None, 0, 2, "g", gpus), h(None, 0, 2, "g", gpus)])
    assert not kineto_layout.one_machine([h(None, 0, 2, "g", gpus)])


def test_job_name_keeps_what_the_workers_share() -> None:
    assert kineto_layout.job_name(["trace_rank0", "trace_rank1"]) == "trace_rank*"
    assert kineto_layout.job_name(["a0_x", "a1_x"]) == "a*_x"
    assert kineto_layout.job_name(["left", "right"]) == "left"  # "*t" would name nothing


def test_a_hostile_header_is_read_in_linear_time() -> None:
    """256 kB of ``"cat": "cpu_op"`` with no ``pid`` after it: the pid is looked for in Kineto's key order only (a free
    scan from each ``"cat"`` to a ``"pid"`` took 46 s here), and none is found."""
    import time

    head = ((b'"cat": "cpu_op", ' + b"x" * 20) * 7000)[: kineto_layout.HEADER_BYTES]
    t0 = time.perf_counter()
    header = kineto_layout._parse_header(b'{"traceEvents": [' + head)
    assert time.perf_counter() - t0 < 5.0
    assert header.pid is None


def test_the_process_pid_is_read_from_the_first_host_event() -> None:
    """Each kept rank's pid, as its host events carry it (GPU rows' pids are device ids and are skipped)."""
    assert [kineto_layout.read_header(str(f)).pid for f in FILES] == [506727, 506728]


def _two_machines(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The kept pair twice, as a job of 4 ranks on 2 machines writes it (h37-left42): ranks 0 / 1 the kept files,
    ranks 2 / 3 copies of them whose processes drew their pids from another machine's counter (1,000,000 higher)
    and whose clock reads 5 s later (two boots within a minute: the clock alone cannot tell the machines apart).
    Each file lists its own GPU as device 0; every file names world 4 and its own rank."""
    out = []
    for k in (0, 1):
        for r, d in enumerate(docs):
            d = json.loads(json.dumps(d))
            d["distributedInfo"]["world_size"] = 4
            d["distributedInfo"]["rank"] = 2 * k + r
            if k:
                for e in d["traceEvents"]:
                    if isinstance(e.get("pid"), int) and e["pid"] > 1000:
                        e["pid"] += 1_000_000
                    if isinstance(e.get("ts"), (int, float)):
                        e["ts"] += 5e6
            out.append(d)
    return out


def test_ranks_of_two_machines_are_one_host_per_machine(tmp_path: Path) -> None:
    """4 rank files, 2 on each of 2 machines (pid counters a million apart, clocks 5 s apart): two hosts of two GPUs
    each, ranks 0 / 1 and 2 / 3 -- never one host of four (two machines merged), never four hosts (no machine's GPUs
    compared, as on main).  Each GPU's collectives are its own rank's file's."""
    docs = [_doc(f) for f in FILES]
    truth = [_truth(d) for d in docs]
    _own_gpu_only(docs)
    hosts = _four_rank_files(tmp_path, docs)
    assert sorted(len(h.ranks) for h in hosts) == [2, 2]
    _assert_one_host_per_machine(hosts, truth)


def test_machine_groups_never_chain_two_counters() -> None:
    """Files linked pair by pair whose group spans more than one pid counter (pids 0, 3000, 6000 apart: each pair
    within PID_SPAN, the three not) stay apart; one group per machine otherwise, a lone file in none."""
    h = kineto_layout.Header
    gpu = ((0, "G", 1),)

    def rank(r: int, pid: int) -> Any:
        return h(None, r, 4, "g", gpu, pid=pid, clock_ns=10**12)

    assert kineto_layout.machine_groups([rank(0, 100), rank(1, 3100), rank(2, 6100)]) == []
    assert kineto_layout.machine_groups([rank(0, 100), rank(1, 101), rank(2, 900_100), rank(3, 900_101)]) == [
        [0, 1], [2, 3]]
    assert kineto_layout.machine_groups([rank(0, 100), rank(1, 101), rank(2, 900_100)]) == [[0, 1]]


def _four_rank_files(tmp_path: Path, docs: list[dict[str, Any]]) -> list:
    """The 4 rank files of :func:`_two_machines` in one run folder; the session's hosts, by their first rank's file."""
    run = tmp_path / "run"
    run.mkdir()
    for r, d in enumerate(_two_machines(docs)):
        (run / f"llama_trace_4layers{r}_with_annotations.json").write_text(json.dumps(d))
    (s,) = discover(str(tmp_path))
    return sorted(s.hosts, key=lambda h: (h.ranks[0].host if h.ranks else h.host))


def _assert_one_host_per_machine(hosts: list, truth: list[dict[str, Any]]) -> None:
    """Ranks 0 / 1 on the first host and 2 / 3 on the second, each GPU its own rank and its own rank's AllGather
    time -- what one host per machine means, shared by every layout of :func:`_four_rank_files`."""
    assert [[r.host for r in h.ranks] for h in hosts] == [
        [f"llama_trace_4layers{r}_with_annotations" for r in pair] for pair in ((0, 1), (2, 3))]
    for h, ranks in zip(hosts, ((0, 1), (2, 3))):
        m = host_metrics(formats.read(h))
        assert [(g.gpu, g.rank) for g in m.gpus] == [(0, ranks[0]), (1, ranks[1])]
        for gpu, t in zip((0, 1), truth):
            got = {c.type: c.ms_per_step for c in m.comm.per_gpu[gpu]}
            assert got["AllGather"] == pytest.approx(t["ms"]["AllGather"], abs=1e-3)


def test_ranks_listing_their_machines_gpus_in_a_larger_job_are_one_host_per_machine(tmp_path: Path) -> None:
    """4 rank files of a job on 2 machines of 2 GPUs, each file listing both GPUs of its machine (as the kept pair
    does), rank 0 / 1's kernels on devices 0 / 1 and rank 2 / 3's on theirs: the list is no machine's (identical
    machines list identical GPUs, and the job is larger than it), the clock and the pid counter are.  Two hosts of
    two GPUs, each GPU its own rank's collectives -- main read four hosts of one GPU (no GPUs compared)."""
    docs = [_doc(f) for f in FILES]
    truth = [_truth(d) for d in docs]
    assert [t["devices"] for t in truth] == [{0}, {1}] and all(len(d["deviceProperties"]) == 2 for d in docs)
    hosts = _four_rank_files(tmp_path, docs)
    _assert_one_host_per_machine(hosts, truth)


def test_more_ranks_on_one_counter_than_the_list_has_gpus_stay_apart() -> None:
    """Control: 4 ranks on one clock and pid counter, each listing 2 GPUs -- no machine runs 4 ranks on 2 GPUs, so the
    counter's evidence is not enough (a chain over two machines' counters looks alike) and no file is grouped; the
    same 2 ranks listing 2 GPUs of a 4-rank job are one machine; a group whose lists differ is none."""
    h = kineto_layout.Header
    two = ((0, "G", 1), (1, "G", 1))

    def rank(r: int, pid: int, gpus: tuple = two) -> Any:
        return h(None, r, 4, "g", gpus, pid=pid, clock_ns=10**12)

    assert kineto_layout.machine_groups([rank(0, 100), rank(1, 101), rank(2, 102), rank(3, 103)]) == []
    assert kineto_layout.machine_groups([rank(0, 100), rank(1, 101), rank(2, 900_100), rank(3, 900_101)]) == [
        [0, 1], [2, 3]]
    other = ((0, "G", 1), (1, "H", 2))
    assert kineto_layout.machine_groups([rank(0, 100), rank(1, 101, other)]) == []


def _wall_clock(doc: dict[str, Any], at_s: float = 1727743122.0) -> None:
    """A rank file as old PyTorch writes it: no ``baseTimeNanoseconds``, every ``ts`` the absolute microseconds since
    1970 -- the kept file's boot-clock times moved onto the wall clock at ``at_s`` (the kept base), gaps unchanged."""
    shift = at_s * 1e6 - 398778.0e6
    del doc["baseTimeNanoseconds"]
    for e in doc["traceEvents"]:
        if isinstance(e.get("ts"), (int, float)):
            e["ts"] += shift


@pytest.mark.parametrize("pids", [(506727, 506728), (57, 59)])
def test_wall_clock_ranks_need_a_wide_pid_counter(tmp_path: Path, pids: tuple[int, int]) -> None:
    """The narrowed pair with the old schema's wall clock, which two machines share to the millisecond: only the pid
    counter can say one machine.  Pids past 32,768 (the kept ones: a counter 4M wide, where two machines land within
    4096 once in 500) are one host of two GPUs, as on the boot clock; pids 57 / 59 -- two containers' counters started
    alike, or a 32,768-wide one -- say nothing, and the ranks stay two hosts (main merged them)."""
    docs = [_doc(f) for f in FILES]
    _own_gpu_only(docs)
    for d, pid, old in zip(docs, pids, (506727, 506728)):
        _wall_clock(d)
        for e in d["traceEvents"]:
            if e.get("pid") == old:
                e["pid"] = pid
    _write(tmp_path / "run", docs)
    heads = [kineto_layout.read_header(str(p)) for p in sorted((tmp_path / "run").iterdir())]
    assert all(h.wall_clock for h in heads) and [h.pid for h in heads] == list(pids)
    (s,) = discover(str(tmp_path))
    if min(pids) > kineto_layout.NARROW_PID_MAX:
        (host,) = s.hosts
        assert len(host.ranks) == 2
    else:
        assert sorted(h.host for h in s.hosts) == [f.name.removesuffix(".json.gz") for f in FILES]
        assert all(not h.ranks for h in s.hosts)


def test_the_boot_clock_is_no_wall_clock() -> None:
    """The kept files count from the machine's boot beside ``baseTimeNanoseconds``: their clock tells machines apart."""
    assert [kineto_layout.read_header(str(f)).wall_clock for f in FILES] == [False, False]


@pytest.mark.parametrize("name", ["trace_rank_{r}.json", "profiler_trace_rank_{r}.json"])
def test_rank_numbered_names_are_no_host_and_pid(tmp_path: Path, name: str) -> None:
    """The 4 rank files of :func:`_two_machines` saved as ``trace_rank_{rank}.json`` (``export_chrome_trace(
    f"trace_rank_{rank}.json")``: Accelerate's name, vidur's ``profiler_trace_rank_{rank}``): the number after the last
    ``_`` is the rank ``distributedInfo`` gives, not the pid of the file's host events, so the name is not the
    handler's ``<host>_<pid>``.  Main read all four as one host ``trace_rank`` -- two machines merged (probe
    h37-probe43d); the headers place them: one host per machine, ranks 0 / 1 and 2 / 3."""
    docs = [_doc(f) for f in FILES]
    _own_gpu_only(docs)
    docs = _two_machines(docs)
    run = tmp_path / "run"
    run.mkdir()
    for d in docs:
        (run / name.format(r=d["distributedInfo"]["rank"])).write_text(json.dumps(d))
    (s,) = discover(str(tmp_path))
    got = sorted([r.host for r in h.ranks] for h in s.hosts)
    stem = name.removesuffix(".json")
    assert got == [[stem.format(r=r) for r in pair] for pair in ((0, 1), (2, 3))]


def test_a_handler_worker_named_by_its_pid_is_its_machine() -> None:
    """Control: ``<host>_<pid>`` whose number is the host events' pid stays the handler's name, whatever the rank; a
    header without a pid keeps the name's word."""
    h = kineto_layout.Header
    assert kineto_layout.names_machine("node7_4242", h(rank=0, world_size=2, pid=4242))
    assert kineto_layout.names_machine("node7_1", h(rank=1, world_size=2, pid=1))  # pid 1 in a container, rank 1
    assert kineto_layout.names_machine("node7_1", h(rank=1, world_size=2))
    assert not kineto_layout.names_machine("trace_rank_1", h(rank=1, world_size=2, pid=50123))
    assert not kineto_layout.names_machine("trace_rank", h(rank=1, world_size=2, pid=50123))
