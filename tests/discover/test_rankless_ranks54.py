"""The ranks of a job whose traces state no rank are one job (issue #37; session 53's *Left*: "rank files with no
header at all are still one session each").

``distributedInfo`` is ``torch.profiler``'s own addition (pytorch/pytorch#58011, May 2021; ``_KinetoProfile.
_start_trace`` writes it when ``torch.distributed`` is initialised): PyTorch 1.8's DDP ranks wrote none, nor does a
rank exported through ``torch.autograd.profiler``.  Each such file was a session of its own: the newest rank read
alone, "3 older sessions not analysed", the job's imbalance unseen.  What the files say instead: the handler names
each ``<host>_<pid>`` and stamps it with its export time, and the first event is the capture's start -- the ranks
are processes of one machine whose windows overlap, where two runs of one script follow each other.

Truth by construction: ``synthetic.randjobs``' 4-rank job (forms5 seed 37: one GPU oversubscribed) written as
PyTorch 1.8-1.10 writes it (``synthetic.torchtrace.rewrite_as_old_schema``), its header with and without the rank;
and minimal files whose windows, names and GPUs are set by hand for the controls.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from synthetic import randjobs as R
from synthetic import torchtrace as T
from tb_gpu_advisor.discover.logdir import discover
from tests.support.report_store import session_report
from tests.support.wild_hosts import wild_sessions

#: 2021-06-08 09:04:49 UTC, in microseconds: an old trace's clock is the wall clock.
START_US = 1_623_143_089_000_000
V100 = {"id": 0, "name": "Tesla V100-SXM2-32GB", "totalGlobalMem": 34089730048}
A100 = {"id": 0, "name": "NVIDIA A100-SXM4-40GB", "totalGlobalMem": 42505273344}


def _old_file(folder: Path, worker: str, pid: int, start_s: float, export_s: float,
              gpus: list[dict] | None = None) -> None:
    """A PyTorch 1.8-style trace of one process: an op at ``start_s`` (seconds after :data:`START_US`) on host pid
    ``pid``, a kernel on GPU 0, no ``distributedInfo``; named ``<worker>.<export ms>.pt.trace.json``."""
    t = START_US + int(start_s * 1e6)
    doc = {"schemaVersion": 1, **({"deviceProperties": gpus} if gpus else {}), "traceEvents": [
        {"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": pid, "tid": "1", "ts": t, "dur": 50},
        {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": "stream 7", "ts": t + 10,
         "dur": 30, "args": {"device": 0, "stream": 7}}]}
    folder.mkdir(parents=True, exist_ok=True)
    stamp = (START_US + int(export_s * 1e6)) // 1000
    (folder / f"{worker}.{stamp}.pt.trace.json").write_text(json.dumps(doc))


def _sessions(tmp_path: Path) -> list[list[list[str]]]:
    """Each session's hosts, each host as the workers of its files (newest session first)."""
    return [[[r.host for r in (h.ranks or (h,))] for h in s.hosts] for s in discover(str(tmp_path))]


@pytest.mark.parametrize("header", [T.HEADER_NO_RANK, T.HEADER_1_8], ids=["devices_no_rank", "no_header"])
def test_an_old_jobs_ranks_stating_no_rank_are_one_job(tmp_path: Path, header: tuple[str, ...]) -> None:
    """4 ranks' files without ``distributedInfo`` (and, as PyTorch 1.8 wrote them, without ``deviceProperties``):
    one session of one machine holding the 4 ranks, its steps and findings those of the same files with their ranks
    -- GPU3 oversubscribed (on 92231579: 4 sessions, the newest rank alone, no imbalance)."""
    job = R.random_form5_job(37)
    twin_dir, dir_ = tmp_path / "twin", tmp_path / "rankless"
    T.rewrite_as_old_schema(R.write(job, str(twin_dir)))
    paths = T.rewrite_as_old_schema(R.write(job, str(dir_)), header)
    assert len(paths) == 4 and all("distributedInfo" not in Path(p).read_text(encoding="utf-8") for p in paths)
    assert _sessions(dir_) == [[["node0_4100", "node0_4101", "node0_4102", "node0_4103"]]]

    def reading(folder: Path) -> dict:
        (s,) = discover(str(folder))
        h = session_report(s).to_dict()["hosts"][0]
        return {"steps": (h["steps"]["source"], h["steps"]["count"]),
                "findings": sorted((f["rule"], f["severity"]) for f in h["findings"])}

    got = reading(dir_)
    assert ("gpu_imbalance", "info") in got["findings"], got
    if header == T.HEADER_NO_RANK:  # the same GPUs listed: the same reading as with the ranks
        assert got == reading(twin_dir)


def test_processes_of_one_machine_profiling_together_are_one_job(tmp_path: Path) -> None:
    """Two ``<host>_<pid>`` files of one host whose windows overlap: one job of 2 ranks."""
    for pid, (start, end) in zip((4100, 4101), ((0.0, 5.0), (0.2, 5.1))):
        _old_file(tmp_path / "r", f"node0_{pid}", pid, start, end, [V100])
    assert _sessions(tmp_path) == [[["node0_4100", "node0_4101"]]]


def test_processes_named_otherwise_join_by_what_their_machine_gave_them(tmp_path: Path) -> None:
    """``worker0``/``worker1`` (a ``worker_name`` of the user's) say no machine: the same GPUs listed and pids of one
    wide counter (past 32,768) close together put them on one machine, windows overlapping -- one job."""
    _old_file(tmp_path / "r", "worker0", 40001, 0.0, 5.0, [V100, {**V100, "id": 1}])
    _old_file(tmp_path / "r", "worker1", 40002, 0.3, 5.2, [V100, {**V100, "id": 1}])
    assert _sessions(tmp_path) == [[["worker0", "worker1"]]]


#: per control, its two files: (name, pid, window start s, export s, GPUs)
APART = {
    "rerun": [("node0_4100", 4100, 0.0, 5.0, [V100]), ("node0_4107", 4107, 9.0, 14.0, [V100])],
    "other_host": [("node0_4100", 4100, 0.0, 5.0, [V100]), ("node1_4100", 4100, 0.1, 5.1, [V100])],
    "other_gpus": [("node0_4100", 4100, 0.0, 5.0, [V100]), ("node0_4101", 4101, 0.1, 5.1, [A100])],
    # session 58: one worker's two files whose windows overlap are parts of one window (read together: test_metamorphic_
    # writers); a copy of one trace saved again is not
    "same_process_copy": [("node0_4100", 4100, 0.0, 5.0, [V100]), ("node0_4100", 4100, 0.0, 5.1, [V100])],
    "narrow_pids": [("worker0", 401, 0.0, 5.0, [V100]), ("worker1", 402, 0.3, 5.2, [V100])],
    "no_export": [("node0_4100", 4100, 0.0, 5.0, [V100]), ("node0_4101", 4101, 0.1, 5.1, [V100])],
}


@pytest.mark.parametrize("case", list(APART))
def test_files_that_are_not_one_jobs_processes_stay_apart(tmp_path: Path, case: str) -> None:
    """Controls: a second run after the first exported (windows following each other); another machine's process;
    another GPU model; one worker's trace copied under a later name; names that say no machine with pids of a narrow
    counter (two machines' could land this close); a file whose name holds no export time -- each a capture of its
    own."""
    folder = tmp_path / "r"
    for name, pid, start, end, gpus in APART[case]:
        _old_file(folder, name, pid, start, end, gpus)
    if case == "no_export":
        last = max(os.listdir(folder))
        os.rename(folder / last, folder / "node0_4101.pt.trace.json")
    found = _sessions(tmp_path)
    assert len(found) == 2 and all(len(s) == 1 and len(s[0]) == 1 for s in found), found


WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"


def test_a_real_jobs_ranks_without_their_rank_read_as_with_it(tmp_path: Path) -> None:
    """Real: ``wild/dlrm_v100``'s 8 ranks (one V100 machine: each lists the same 8 GPUs, pids 59811-59818, their
    windows within 0.3 ms) with ``distributedInfo`` taken out, as a rank that states none writes them: one session
    read as the files with their ranks read -- the same hosts, steps and findings (on 92231579: 8 sessions, the
    newest rank read alone, "7 older sessions not analysed")."""
    import gzip

    bare = tmp_path / "bare" / "dlrm"
    bare.mkdir(parents=True)
    for src in sorted((WILD / "dlrm_v100").glob("*.pt.trace.json.gz")):
        with gzip.open(src, "rt", encoding="utf-8") as f:
            doc = json.load(f)
        assert doc.pop("distributedInfo")["world_size"] == 8
        with gzip.open(bare / src.name, "wt", encoding="utf-8") as f:
            json.dump(doc, f)

    def reading(s) -> tuple:  # noqa: ANN001 - a discovered Session
        rep = session_report(s).to_dict()
        return (sorted(h["host"] for h in rep["hosts"]),
                sorted((h["host"], h["steps"]["source"], h["steps"]["count"]) for h in rep["hosts"]),
                sorted((f["rule"], f["severity"], f.get("host") or "") for f in rep.get("findings", [])))

    (s,) = discover(str(bare.parent))
    got = reading(s)
    # the files with their ranks: the kept fixture's own session, analysed once a run (``report_store``; the
    # property walk reads it too) -- a byte copy of it in a temporary folder was analysed here before
    (kept,) = [k for k in wild_sessions() if k.run == "dlrm_v100"]
    assert len(got[0]) == 8 and got == reading(kept)


#: PyTorch 2.x's clock: ``baseTimeNanoseconds`` (2026-11-22) plus ``ts`` microseconds since the machine's boot.
BASE_NS, BOOT_US = 1_790_857_026_000_000_000, 4_523_358_284_142.405


def _exported_file(folder: Path, name: str, pid: int, start_s: float, end_s: float | None) -> None:
    """A PyTorch 2.x trace exported by ``export_chrome_trace(name)`` (no time in the name) of a process that states no
    rank: an op at ``start_s``, its window's end recorded at ``end_s`` (Kineto's ``Trace`` span and ``Record Window
    End`` instant, the file's last events), or no record of it (None)."""
    t = BOOT_US + start_s * 1e6
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": pid, "tid": pid, "ts": t, "dur": 50.0},
              {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm", "pid": 0, "tid": 7, "ts": t + 10, "dur": 30.0,
               "args": {"device": 0, "stream": 7}}]
    if end_s is not None:
        events += [{"ph": "X", "cat": "Trace", "ts": t, "dur": (end_s - start_s) * 1e6, "pid": "Spans",
                    "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
                   {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "",
                    "ts": BOOT_US + end_s * 1e6}]
    doc = {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3",
                                                     "totalGlobalMem": 85017493504}],
           "baseTimeNanoseconds": BASE_NS, "traceEvents": events}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(doc))


def test_ranks_exported_without_a_time_join_by_the_window_their_traces_record(tmp_path: Path) -> None:
    """``torch.autograd.profiler`` in a DDP job, each rank exporting ``trace_rank{r}.json``: no rank, no export time
    in the name -- the window's end Kineto records at the file's end, with the machine their content shows (one GPU
    model, one boot clock, pids together), makes them one job of 2 ranks (on 92231579: 2 sessions)."""
    _exported_file(tmp_path / "r", "trace_rank0.json", 51200, 0.0, 2.0)
    _exported_file(tmp_path / "r", "trace_rank1.json", 51201, 0.05, 2.1)
    assert [sorted(w for h in s for w in h) for s in _sessions(tmp_path)] == [["trace_rank0", "trace_rank1"]]


@pytest.mark.parametrize("case", ["one_after_the_other", "no_recorded_end"])
def test_exports_that_are_not_one_jobs_processes_stay_apart(tmp_path: Path, case: str) -> None:
    """Controls: a second export whose window opens after the first one's recorded end (a rerun), and files whose
    ends record no window -- each a capture of its own."""
    second = (3.0, 5.0) if case == "one_after_the_other" else (0.05, None)
    _exported_file(tmp_path / "r", "trace_rank0.json", 51200, 0.0, 2.0 if case == "one_after_the_other" else None)
    _exported_file(tmp_path / "r", "trace_rank1.json", 51201, *second)
    assert len(_sessions(tmp_path)) == 2
