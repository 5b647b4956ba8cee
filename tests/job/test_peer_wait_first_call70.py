"""A CPU backend's first send or receive waits for its peers: no cold start (h37-hunt70a, issue #37 class 1: a window
with no GPU work).

The real trace: pramod-b-s/839_Adv_ML_Project ``trace_comm.json`` @5c255b3b (no licence: read in /tmp, not kept;
survey "Session 70 hunt70a").  Rank 2 of a 4-rank Gloo job (``distributedInfo``), two Tesla P100s listed, CPU activity
only: a hand-written ring all-reduce of a 1024-float tensor -- three ``zeros``, then three rounds of ``slice`` +
``copy_`` into the send buffer, ``gloo:send`` around ``gloo:recv``, ``add_`` of the received chunk.  The first
round's ``gloo:recv`` lasts 2.85 ms inside a 3.65 ms ``gloo:send`` (rank 2 waiting for its neighbour to reach the
collective), the later ones 174-180 us inside 295-341 us sends.  No kernel, no runtime call.

Base dbf6cf15 read the first round as a cold start: "phase warm-up (80% of the window in one-time costs)", "1 first op
call far slower than every later call of the same op (`gloo:recv` 2.9 ms; 3.6 ms): what only a first call pays (an
algorithm search, a library's lazy start-up)", and dropped that round as a warm-up step.  Gloo connects every pair of
ranks when its process group is made: the first receive pays the wait for its peer, as every receive does.  The
window is built here by construction in the real file's layout (its event order, names, shapes and times).  The
control: the same window's collectives on NCCL (``nccl:``), whose communicators are made at the first collective,
keep their first call read as one-time.

The ring's rounds were also read as the loop's steps ("its loop on the CPU: 2 marked steps of 338 us"): each
round's ``gloo:send`` record encloses its receive and reduction, 62% of the host's ops, and was taken for the
program's own repeated span.  A collective's record is the framework's, not a mark of the program's loop."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_report import first_report

_P100 = {"name": "Tesla P100-PCIE-16GB", "totalGlobalMem": 17071734784, "computeMajor": 6, "computeMinor": 0,
         "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
         "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
         "sharedMemPerMultiprocessor": 65536, "numSms": 56, "sharedMemPerBlockOptin": 49152}
_T0 = 1651366220823907
#: the real file's ops after its three ``zeros`` (offset us, duration us, name): per round a slice + copy into the
#: send buffer, the send around the receive, a slice pair and the ``add_`` of the received chunk
_ROUNDS = [(247, 9, "copy"), (306, 3647, "send"), (347, 2850, "recv"), (3277, 17, "add"),
           (3319, 5, "copy"), (3984, 295, "send"), (4014, 180, "recv"), (4241, 7, "add"),
           (4264, 5, "copy"), (4320, 341, "send"), (4351, 174, "recv"), (4599, 13, "add"),
           (4641, 9, "copy"), (4699, 6, "copy")]


def _ring_window(path: Path, backend: str) -> None:
    ev: list[dict] = []

    def op(at: float, dur: float, name: str, dims: list) -> None:
        ev.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 41176, "tid": 41176, "ts": _T0 + at, "dur": dur,
                   "args": {"External id": len(ev) + 1, "Trace name": "PyTorch Profiler", "Trace iteration": 0,
                            "Input Dims": dims}})

    for k in range(3):
        op(146 + 48 * k, 38 if k == 0 else 9, "aten::zeros", [[], [], [], [], []])
        op(153 + 48 * k, 5, "aten::empty", [[], [], [], [], [], []])
        op(182 + 22 * k, 1, "aten::zero_", [[1024]])
    for at, dur, what in _ROUNDS:
        if what in ("send", "recv"):
            op(at, dur, f"{backend}:{what}", [[1024]])
        elif what == "copy":
            op(at - 23, 10, "aten::slice", [[1024], [], [], [], []])
            op(at - 16, 1, "aten::as_strided", [[1024], [], [], []])
            op(at, dur, "aten::copy_", [[1024], [1024], []])
        else:
            op(at - 66, 9, "aten::slice", [[1024], [], [], [], []])
            op(at - 58, 8, "aten::slice", [[1024], [], [], [], []])
            op(at, dur, "aten::add_", [[1024], [1024], []])
    ev.sort(key=lambda e: e["ts"])
    ev += [{"ph": "M", "name": "process_name", "pid": 41176, "tid": 0, "args": {"name": "python"}},
           {"ph": "M", "name": "thread_name", "pid": 41176, "tid": 41176, "args": {"name": "thread 41176 (python)"}},
           {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler",
            "ts": _T0, "dur": 4748, "args": {"Op count": 0}},
           {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": _T0 + 5155}]
    doc = {"schemaVersion": 1, "distributedInfo": {"backend": backend, "rank": 2, "world_size": 4},
           "deviceProperties": [{"id": i, **_P100} for i in (0, 1)], "traceEvents": ev}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))


def _host(tmp_path: Path, backend: str) -> dict:
    path = tmp_path / backend / "ring.pt.trace.json"
    _ring_window(path, backend)
    return first_report(path)["hosts"][0]


def _job(tmp_path: Path, backend: str) -> dict:
    return _host(tmp_path, backend)["job"]


def test_a_gloo_ring_s_first_receive_is_its_wait_for_a_peer_not_a_cold_start(tmp_path: Path):
    job = _job(tmp_path, "gloo")
    assert job["kind"] == "no_gpu", job["summary"]
    assert job["phase"] != "warm-up", job["summary"]
    assert "first op call" not in job["phase_evidence"] and "one-time costs" not in job["summary"], job["summary"]


def test_control_an_nccl_first_collective_may_pay_its_communicator_and_stays_one_time(tmp_path: Path):
    job = _job(tmp_path, "nccl")
    assert job["phase"] == "warm-up", job["summary"]
    assert "first op call far slower" in job["phase_evidence"] and "`nccl:recv`" in job["phase_evidence"], job


def test_a_ring_s_rounds_are_no_steps_of_a_loop(tmp_path: Path):
    host = _host(tmp_path, "gloo")
    assert host["steps"]["source"] != "annotation_spans", host["steps"]
    assert "marked step" not in host["job"]["summary"] and "`gloo:send`" not in host["steps"]["note"], host["steps"]


def _window_finding(host: dict) -> tuple[str, str]:
    (f,) = [f for f in host["findings"] if f["rule"] == "capture_quality"]
    return f["summary"], " ".join((a["text"] or "") + (a["snippet"] or "") for a in f["actions"])


def test_a_gloo_job_on_the_cpu_is_told_its_process_group_with_its_tensors(tmp_path: Path):
    summary, fixes = _window_finding(_host(tmp_path, "gloo"))
    assert "process group was made on Gloo" in summary, summary
    assert "init_process_group(backend='nccl')" in fixes and "Gloo moves host memory" in fixes, fixes


def test_control_a_model_on_the_cpu_without_collectives_keeps_the_move_the_model_fix():
    real = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "cpu_model_a100"
    summary, fixes = _window_finding(first_report(real)["hosts"][0])
    assert "the work never reached it" in summary and "process group" not in summary, summary
    assert "model = model.to(device)" in fixes and "init_process_group" not in fixes, fixes
