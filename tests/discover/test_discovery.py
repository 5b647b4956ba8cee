"""discovery on real nested temp logdirs (real XSpace files, real symlinks)."""

from __future__ import annotations

import logging
import os

import pytest

from tb_gpu_advisor import formats
from tb_gpu_advisor.discover import logdir as discovery
from tb_gpu_advisor.discover.logdir import SessionNotFoundError, discover, find_session, find_stock_run, has_profiles
from tb_gpu_advisor.formats.kineto import layout as kineto_layout
from tb_gpu_advisor.formats.xplane.reader import read_timeline
from tests.support.profile_files import write_events_file, write_profile


def _names(sessions):
    return [s.stock_run for s in sessions]


@pytest.fixture
def stock_example(tmp_path):
    """The layout of xprof ``generate_runs``' docstring (with .xplane.pb files)."""
    d = str(tmp_path)
    write_profile(d, ".", "run1", "hostA")
    write_events_file(os.path.join(d, "train"))
    write_profile(d, "train", "run1", "hostA")
    write_profile(d, "train", "run1", "hostB")
    write_profile(d, "train", "run2", "hostA")
    write_events_file(os.path.join(d, "validation"))
    write_profile(d, "validation", "run1", "hostA")
    write_profile(d, "new_job/tensorboard", "run1", "hostA")
    return d


def test_stock_generate_runs_docstring_names(stock_example):
    sessions = discover(stock_example)
    # xprof yields "run1", "train/run1", "train/run2", "validation/run1", "new_job/tensorboard/run1"
    assert sorted(_names(sessions)) == sorted(
        ["run1", "train/run1", "train/run2", "validation/run1", "new_job/tensorboard/run1"]
    )
    root = find_session(sessions, ".", "run1")
    assert root.stock_run == "run1"
    assert root.path == os.path.join(stock_example, "plugins", "profile", "run1")
    train1 = find_session(sessions, "train", "run1")
    assert [h.host for h in train1.hosts] == ["hostA", "hostB"]
    assert find_session(sessions, "new_job/tensorboard", "run1").stock_run == "new_job/tensorboard/run1"


def test_sorted_by_run_then_newest_session_first(tmp_path):
    d = str(tmp_path)
    for s in ("2024_01_02_10_00_00", "2025_06_01_09_30_00", "2023_12_31_23_59_59"):
        write_profile(d, "b", s, "h")
    write_profile(d, "a", "2020_01_01_00_00_00", "h")
    write_profile(d, ".", "2021_01_01_00_00_00", "h")
    got = [(s.run, s.session) for s in discover(d)]
    assert got == [
        (".", "2021_01_01_00_00_00"),
        ("a", "2020_01_01_00_00_00"),
        ("b", "2025_06_01_09_30_00"),
        ("b", "2024_01_02_10_00_00"),
        ("b", "2023_12_31_23_59_59"),
    ]


def test_non_timestamp_sessions_ordered_by_file_mtime(tmp_path):
    d = str(tmp_path)
    old = write_profile(d, "r", "zzz_old", "h")
    new = write_profile(d, "r", "aaa_new", "h")
    os.utime(old, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    os.utime(new, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    assert [s.session for s in discover(d)] == ["aaa_new", "zzz_old"]


def test_host_files_identity_and_readable(tmp_path):
    d = str(tmp_path)
    path = write_profile(d, "job", "2024_01_01_00_00_00", "worker-0.example:6009", events=7)
    (s,) = discover(d)
    (h,) = s.hosts
    st = os.stat(path)
    assert (h.host, h.path, h.size, h.mtime_ns) == ("worker-0.example:6009", path, st.st_size, st.st_mtime_ns)
    assert read_timeline(h.path).planes[0].num_events == 7


def test_profile_only_run_without_event_files(tmp_path):
    d = str(tmp_path)
    write_profile(d, "profile_only/deep", "s1", "h")
    assert not any(f.startswith("events") for _, _, fs in os.walk(d) for f in fs)
    assert _names(discover(d)) == ["profile_only/deep/s1"]
    assert has_profiles(d)


def test_other_files_and_stock_cache_files_ignored(tmp_path):
    d = str(tmp_path)
    path = write_profile(d, "r", "s1", "h1")
    session_dir = os.path.dirname(path)
    for name in ("ALL_HOSTS.op_stats_v2.pb", "h1.hlo_proto.pb", ".cached_tools.json", "h1.trace.json.gz",
                 "h1.overview_page.pb", ".xplane.pb", "notes.txt"):
        open(os.path.join(session_dir, name), "wb").close()
    os.makedirs(os.path.join(session_dir, "sub.xplane.pb"))  # a folder named like a profile
    write_profile(session_dir, ".", "nested", "too_deep")  # below the session folder: not a host
    (s,) = discover(d)
    assert [h.host for h in s.hosts] == ["h1"]


def test_sessions_without_host_files_and_other_plugins_skipped(tmp_path):
    d = str(tmp_path)
    os.makedirs(os.path.join(d, "r", "plugins", "profile", "empty_session"))
    # another plugin's assets that happen to look like a profile layout: never a run
    write_profile(os.path.join(d, "r", "plugins", "hparams"), "x", "s", "h")
    assert discover(d) == []
    assert not has_profiles(d)


def test_empty_and_missing_logdir(tmp_path):
    assert discover(str(tmp_path)) == []
    assert not has_profiles(str(tmp_path))
    assert discover(str(tmp_path / "missing")) == []
    assert not has_profiles(str(tmp_path / "missing"))


def test_file_url_logdir(tmp_path):
    write_profile(str(tmp_path), "r", "s", "h")
    assert _names(discover("file://" + str(tmp_path))) == ["r/s"]


def test_deep_nesting(tmp_path):
    run = "/".join(f"level{i}" for i in range(40))
    write_profile(str(tmp_path), run, "s", "h")
    assert _names(discover(str(tmp_path))) == [f"{run}/s"]


def test_symlink_leaving_logdir_ignored(tmp_path):
    logdir, outside = tmp_path / "logdir", tmp_path / "outside"
    write_profile(str(outside), "secret", "s", "h")  # outside/secret/plugins/profile/s/h.xplane.pb
    write_profile(str(logdir), "real", "s", "h")
    os.symlink(outside / "secret", logdir / "escape_run")  # a run folder pointing out
    os.symlink(outside, logdir / "real" / "plugins" / "profile" / "escape_session")
    secret_file = outside / "secret" / "plugins" / "profile" / "s" / "h.xplane.pb"
    os.symlink(secret_file, logdir / "real" / "plugins" / "profile" / "s" / "stolen.xplane.pb")
    sessions = discover(str(logdir))
    assert _names(sessions) == ["real/s"]
    assert [h.host for h in sessions[0].hosts] == ["h"]
    for s in sessions:
        for h in s.hosts:
            assert os.path.realpath(h.path).startswith(str(logdir.resolve()) + os.sep)


def test_symlink_escape_only_logdir_has_no_profiles(tmp_path):
    logdir, outside = tmp_path / "logdir", tmp_path / "outside"
    write_profile(str(outside), "secret", "s", "h")
    logdir.mkdir()
    os.symlink(outside / "secret", logdir / "escape_run")
    assert not has_profiles(str(logdir))


def test_symlinks_inside_logdir_followed_with_the_flag_and_loops_stopped(tmp_path):
    d = tmp_path
    write_profile(str(d), "a/real", "s", "h")
    os.symlink(d / "a", d / "alias")  # inside the logdir: followed when asked (the stock tab lists it too)
    os.symlink(d, d / "a" / "loop_to_root")  # a loop
    os.symlink(d / "alias", d / "a" / "real" / "loop_via_alias")
    assert _names(discover(str(d), follow_symlinks=True)) == ["a/real/s", "alias/real/s"]  # finite: no loop entered
    assert has_profiles(str(d / "alias"), follow_symlinks=True)


def test_symlinks_are_not_followed_without_the_flag(tmp_path):
    """Issue 27 item 9: following symlinks is opt-in (--follow-symlinks, --gpu_advisor_follow_symlinks); without it
    a link inside the logdir is left out and named, like one leading out (was: followed by default)."""
    d = tmp_path
    write_profile(str(d), "store/real", "s", "h")
    os.symlink(d / "store", d / "alias")  # a linked run folder
    (d / "files" / "plugins" / "profile" / "s").mkdir(parents=True)
    os.symlink(d / "store" / "real" / "plugins" / "profile" / "s" / "h.xplane.pb",
               d / "files" / "plugins" / "profile" / "s" / "linked.xplane.pb")  # a linked file
    assert _names(discover(str(d))) == ["store/real/s"]
    skipped = dict(discovery.skipped(str(d)))
    assert set(skipped) == {"alias", "files/plugins/profile/s/linked.xplane.pb"}
    assert all(why == discovery.SKIP_NOT_FOLLOWED and "--follow-symlinks" in why for why in skipped.values())
    assert _names(discover(str(d), follow_symlinks=True)) == ["alias/real/s", "files/s", "store/real/s"]
    assert discovery.skipped(str(d), follow_symlinks=True) == []
    only_links = tmp_path / "only_links"
    only_links.mkdir()
    os.symlink(d / "store", only_links / "run")
    assert not has_profiles(str(only_links)) and discover(str(only_links)) == []


def test_unreadable_folder_skipped_with_warning(tmp_path, monkeypatch, caplog):
    d = str(tmp_path)
    write_profile(d, "good", "s", "h")
    write_profile(d, "locked", "s", "h")
    locked = os.path.join(d, "locked")
    if os.geteuid() != 0:
        os.chmod(locked, 0)
    else:  # root reads everything: make that one folder's listing fail as EACCES would
        real_scandir = os.scandir

        def scandir(path="."):
            if os.path.abspath(path) == locked:
                raise PermissionError(13, "Permission denied", path)
            return real_scandir(path)

        monkeypatch.setattr(discovery.os, "scandir", scandir)
    try:
        with caplog.at_level(logging.WARNING, logger="tb_gpu_advisor.discover.logdir"):
            names = _names(discover(d))
    finally:
        os.chmod(locked, 0o755)
    assert names == ["good/s"]
    assert any("unreadable" in r.message and "locked" in r.message for r in caplog.records)


def test_find_session_errors_are_clear(stock_example):
    sessions = discover(stock_example)
    with pytest.raises(SessionNotFoundError) as e:
        find_session(sessions, "train", "nope")
    assert "nope" in str(e.value) and "train" in str(e.value)
    assert isinstance(e.value, KeyError)
    with pytest.raises(KeyError):
        find_session(sessions, "../train", "run1")  # names map to files only through discovery
    assert find_stock_run(sessions, "run1").run == "."
    assert find_stock_run(sessions, "new_job/tensorboard/run1").run == "new_job/tensorboard"


def test_has_profiles_stops_at_first_hit(stock_example, monkeypatch):
    """has_profiles must not stat every file (it runs on every TensorBoard reload)."""
    calls = []
    real = discovery._found

    def counting(*args, **kwargs):
        calls.append(args[-1])  # with_stat
        return real(*args, **kwargs)

    monkeypatch.setattr(discovery, "_found", counting)
    assert has_profiles(stock_example)
    assert calls == [False]  # one file looked at, never stat'ed
    calls.clear()
    assert len(discovery.discover(stock_example)) > 0 and calls and all(calls)  # discover does stat each


def test_memory_fsspec_logdir(tmp_path, caplog):
    """A non-local, non-s3 logdir goes through fsspec's flat listing (memory:// stands in for gs://)."""
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    root = "memory://disc_test_logdir"
    payload = open(write_profile(str(tmp_path), ".", "s", "h"), "rb").read()
    for key in ("train/plugins/profile/2024_01_01_00_00_00/h1.xplane.pb",
                "train/plugins/profile/2024_01_01_00_00_00/h2.xplane.pb",
                "plugins/profile/root_session/h.xplane.pb",
                "train/plugins/hparams/plugins/profile/x/h.xplane.pb",
                "train/plugins/profile/2024_01_01_00_00_00/ALL_HOSTS.op_stats_v2.pb",
                "train/events.out.tfevents.1"):
        fs.pipe(f"{root}/{key}", payload)
    try:
        sessions = discover(root)
        assert sessions, f"nothing discovered; log: {caplog.text}"  # a listing failure is only logged
        assert _names(sessions) == ["root_session", "train/2024_01_01_00_00_00"]
        train = find_session(sessions, "train", "2024_01_01_00_00_00")
        assert [h.host for h in train.hosts] == ["h1", "h2"]
        assert train.hosts[0].path == f"{root}/train/plugins/profile/2024_01_01_00_00_00/h1.xplane.pb"
        assert train.hosts[0].size == len(payload)
        assert has_profiles(root)
        assert read_timeline(train.hosts[0].path).planes[0].num_events == 3
    finally:
        fs.rm(root, recursive=True)


# --- PyTorch traces (issue #10) -------------------------------------------------------

#: A small valid Chrome trace (real traces are read in the analysis tests; discovery only looks at names).
TRACE = b'{"schemaVersion": 1, "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.0, "dur": 2.0}]}'
T0 = 1_795_380_384_000_000_000  # 2026-11-22 ... UTC in ns, as tensorboard_trace_handler stamps its files


def _trace(folder, worker: str, t_ns: int | None, gz: bool = False, rank: int | None = None, world: int = 0,
           body: bytes = TRACE, name: str | None = None) -> str:
    """A trace file named as ``tensorboard_trace_handler`` names them (or ``name``); ``rank``/``world``: its
    ``distributedInfo``, as ``torch.distributed`` jobs write it."""
    import gzip

    os.makedirs(folder, exist_ok=True)
    if name is None:
        name = f"{worker}.{t_ns}.pt.trace.json" if t_ns is not None else f"{worker}.pt.trace.json"
    if rank is not None:
        body = body.replace(b'"schemaVersion": 1,', b'"schemaVersion": 1, "distributedInfo": {"backend": "nccl", '
                            b'"rank": %d, "world_size": %d, "pg_config": [{"pg_name": "0", "ranks": []}]},' % (rank, world))
    path = os.path.join(folder, name + (".gz" if gz else ""))
    with open(path, "wb") as f:
        f.write(gzip.compress(body) if gz else body)
    return path


def test_pytorch_runs_next_to_xplane_runs(tmp_path):
    d = str(tmp_path)
    write_profile(d, "tf_run", "2026_01_01_00_00_00", "worker0")
    _trace(os.path.join(d, "torch_run"), "node1_417", T0)
    _trace(os.path.join(d, "job", "torch_gz"), "node1_9", T0, gz=True)
    _trace(d, "rootworker_1", T0)  # a trace straight in the logdir: run "."
    os.makedirs(os.path.join(d, "dir.123.pt.trace.json"))  # a folder with a trace's name is no trace
    sessions = discover(d)
    by_run = {s.run: s for s in sessions}
    assert set(by_run) == {".", "job/torch_gz", "torch_run", "tf_run"}
    assert by_run["tf_run"].format == "xplane" and formats.get(by_run["tf_run"].format).stock_tool_opens
    for run in (".", "job/torch_gz", "torch_run"):
        s = by_run[run]
        assert s.format == "kineto" and not formats.get(s.format).stock_tool_opens and [h.format for h in s.hosts] == ["kineto"]
        assert s.session == "2026_11_22_20_46_24", s.session  # the cycle's time, named like XPlane sessions
    assert by_run["torch_run"].hosts[0].host == "node1_417" and by_run["job/torch_gz"].hosts[0].path.endswith(".gz")
    assert has_profiles(d)


def test_ranks_and_profiling_cycles(tmp_path):
    """4 ranks x 2 cycles (ranks write seconds apart) -> 2 sessions of 4 hosts; newest session first."""
    folder = str(tmp_path / "ddp")
    for cycle in range(2):
        for rank in range(4):
            _trace(folder, f"node{rank // 2}_{100 + rank}", T0 + cycle * 60_000_000_000 + rank * 2_000_000_000,
                   rank=rank, world=4)
    sessions = discover(str(tmp_path))
    assert [s.session for s in sessions] == ["2026_11_22_20_47_24", "2026_11_22_20_46_24"]
    for s in sessions:  # one host per machine, its ranks' files behind it in pid order
        assert [h.host for h in s.hosts] == ["node0", "node1"]
        assert [[r.host for r in h.ranks] for h in s.hosts] == [["node0_100", "node0_101"], ["node1_102", "node1_103"]]
        assert [h.size for h in s.hosts] == [sum(os.path.getsize(r.path) for r in h.ranks) for h in s.hosts]
        assert all(h.path == h.ranks[0].path for h in s.hosts)
    newest = sessions[0]
    paths = [r.path for h in newest.hosts for r in h.ranks]
    assert all(".17953804440" in p or ".17953804460" in p or ".1795380450" in p or ".1795380448" in p
               for p in paths), paths


def test_machine_of_a_worker():
    """Ranks of one machine share ``<host>`` in ``<host>_<pid>``; other worker names are machines of their own."""
    assert kineto_layout.machine_of("vm_417") == "vm" and kineto_layout.machine_of("node-3.example_12") == "node-3.example"
    assert kineto_layout.machine_of("rank0") == "rank0" and kineto_layout.machine_of("w_") == "w_"
    assert kineto_layout.machine_of("_7") == "_7"


def test_a_rank_rewritten_changes_the_cache_key(tmp_path):
    """A host of several ranks is cached under every rank file's identity, not just the first's."""
    from tb_gpu_advisor.runtime import cache

    folder = str(tmp_path / "ddp")
    first = _trace(folder, "n_1", T0, rank=0, world=2)
    second = _trace(folder, "n_2", T0 + 1, rank=1, world=2)
    os.utime(first, ns=(T0, T0))  # the newest file: the host's mtime stays its own
    os.utime(second, ns=(T0 - 10**10, T0 - 10**10))
    (s,) = discover(str(tmp_path))
    before = cache.session_key(s).material
    os.utime(second, ns=(T0 - 2 * 10**10, T0 - 2 * 10**10))  # n_2 rewritten (an older stamp, same size)
    (s2,) = discover(str(tmp_path))
    h, h2 = s.hosts[0], s2.hosts[0]
    assert (h.host, h.path, h.size, h.mtime_ns) == (h2.host, h2.path, h2.size, h2.mtime_ns)
    assert cache.session_key(s2).material != before


def test_a_rank_missing_from_a_cycle(tmp_path):
    """Rank 1 wrote only in the second cycle: the first session has rank 0 alone, the second both ranks."""
    folder = str(tmp_path / "r")
    _trace(folder, "a_1", T0, rank=0, world=2)
    _trace(folder, "a_1", T0 + 600_000_000_000, rank=0, world=2)
    _trace(folder, "b_2", T0 + 601_000_000_000, rank=1, world=2)
    sessions = discover(str(tmp_path))
    assert sorted((s.session, tuple(h.host for h in s.hosts)) for s in sessions) == [
        ("2026_11_22_20_46_24", ("a_1",)), ("2026_11_22_20_56_24", ("a_1", "b_2"))]


def test_pytorch_trace_symlinked_outside_the_logdir_is_ignored(tmp_path):
    outside = _trace(str(tmp_path / "outside"), "evil_1", T0)
    logdir = tmp_path / "logdir"
    (logdir / "run").mkdir(parents=True)
    os.symlink(outside, logdir / "run" / f"evil_1.{T0}.pt.trace.json")
    inside = _trace(str(logdir / "real"), "ok_1", T0)
    os.symlink(inside, logdir / "run" / f"ok_1.{T0}.pt.trace.json")
    runs = {s.run: [h.host for h in s.hosts] for s in discover(str(logdir), follow_symlinks=True)}
    assert runs == {"real": ["ok_1"], "run": ["ok_1"]}
    assert {s.run for s in discover(str(logdir))} == {"real"}  # without the flag, the link inside is left out too


def test_kineto_worker_names():
    assert kineto_layout.worker_of("vm_417.1795380384345498510.pt.trace.json") == ("vm_417", 1795380384345498510)
    assert kineto_layout.worker_of("host.a_1.5.pt.trace.json.gz") == ("host.a_1", 5)
    assert kineto_layout.worker_of("w.pt.trace.json") == ("w", None)
    assert kineto_layout.worker_of("x.xplane.pb") is None and kineto_layout.worker_of(".pt.trace.json") is None


def test_reruns_are_not_ranks(tmp_path):
    """Two runs of one script into one folder (no distributedInfo, a minute apart, each on GPU 0) are two sessions of
    one host each, newest first -- not one host of two GPUs (issue #18 class 3)."""
    folder = str(tmp_path / "run")
    _trace(folder, "vm_417", T0)
    _trace(folder, "vm_418", T0 + 60_000_000_000)
    sessions = discover(str(tmp_path))
    assert [s.session for s in sessions] == ["2026_11_22_20_47_24", "2026_11_22_20_46_24"]
    assert [[h.host for h in s.hosts] for s in sessions] == [["vm_418"], ["vm_417"]]
    assert all(not h.ranks for s in sessions for h in s.hosts)


def test_ranks_need_one_world_and_distinct_ranks(tmp_path):
    """Same world size, distinct ranks, close in time: one job.  A second rank 0, another world size, or a capture
    far apart starts another session."""
    folder = str(tmp_path / "job")
    _trace(folder, "a_1", T0, rank=0, world=2)
    _trace(folder, "a_2", T0 + 10**9, rank=1, world=2)
    _trace(folder, "a_3", T0 + 2 * 10**9, rank=0, world=2)  # a second rank 0: the next job
    _trace(folder, "b_1", T0 + 3 * 10**9, rank=1, world=4)  # another world size
    _trace(folder, "a_4", T0 + 3600 * 10**9, rank=1, world=2)  # an hour later
    sizes = sorted(len(s.hosts[0].ranks) or 1 for s in discover(str(tmp_path)))
    assert sizes == [1, 1, 1, 2]


def test_session_names_come_from_the_trace_clock(tmp_path):
    """Millisecond stamps (PyTorch 1.9), no stamp, and a pid where the stamp would be: never 1970 (issue #18 class 2).
    Without a date in the name the trace's own clock names the session: ``baseTimeNanoseconds`` plus the first
    event, or the first event's absolute microseconds in the old schema."""
    _trace(str(tmp_path / "ms"), "worker0", 1623143089861)  # 2021-06-08 09:04:49.861 UTC, in ms
    new_clock = TRACE.replace(b'"schemaVersion": 1,', b'"schemaVersion": 1, "baseTimeNanoseconds": 1790857026000000000,')
    new_clock = new_clock.replace(b'"ts": 1.0', b'"ts": 4523358285700.585')
    _trace(str(tmp_path / "nostamp"), "worker0", None, body=new_clock, gz=True)
    old_clock = TRACE.replace(b'"ts": 1.0', b'"ts": 1680490298000000')  # 2023-04-03 02:51:38 UTC in us
    _trace(str(tmp_path / "pid"), "", None, body=old_clock, name="rank-0.Apr_03_18_51_38.1102.pt.trace.json")
    names = {s.run: s.session for s in discover(str(tmp_path))}
    assert names == {"ms": "2021_06_08_09_04_49", "nostamp": "2026_11_22_20_46_24", "pid": "2023_04_03_02_51_38"}


def test_a_file_without_any_clock_is_named_by_its_modification_time(tmp_path):
    path = _trace(str(tmp_path / "r"), "w", None)
    os.utime(path, ns=(T0, T0))
    (s,) = discover(str(tmp_path))
    assert s.session == "2026_11_22_20_46_24"


#: Real traces whose writer (TraceLens) put ``baseTimeNanoseconds`` and ``distributedInfo`` after ``traceEvents``,
#: megabytes from the start (tests/fixtures/wild/PROVENANCE.md).
CLOCK_AT_END = ["hf_qwen_h100/Qwen_Qwen1.5-0.5B-Chat.1016005.pt.trace.json.gz",
                "ddp_mi300x_actckpt/rank0_iter16_18.542.pt.trace.json.gz"]


def _clock_by_hand(path: str) -> tuple[str, dict]:
    """(session name, distributedInfo) read with the standard library: ``baseTimeNanoseconds`` plus the first event."""
    import gzip
    import json
    import time

    doc = json.load(gzip.open(path))
    first_us = next(e["ts"] for e in doc["traceEvents"] if "ts" in e)
    when = (doc["baseTimeNanoseconds"] + first_us * 1e3) / 1e9
    return time.strftime("%Y_%m_%d_%H_%M_%S", time.gmtime(when)), doc.get("distributedInfo") or {}


@pytest.mark.parametrize("rel", CLOCK_AT_END)
def test_a_clock_written_after_the_events_names_the_session(tmp_path, rel):
    """The session was the checkout's time (the file's mtime) when the clock came after ``traceEvents``: read from
    the file's end it is the capture's own (hf_qwen_h100: 2025-07-18 11:51 UTC, SURVEY.md), and the rank with it."""
    import shutil

    from tests.support.paths import FIXTURES

    src = FIXTURES / "wild" / rel
    dst = tmp_path / "run" / src.name
    dst.parent.mkdir()
    shutil.copyfile(src, dst)
    os.utime(dst, ns=(T0 + 10**18, T0 + 10**18))  # 2058: any later mtime, never the answer
    want, info = _clock_by_hand(str(src))
    (s,) = discover(str(tmp_path))
    assert s.session == want
    header = kineto_layout.read_header(str(dst), dst.stat().st_size, dst.stat().st_mtime_ns)
    assert (header.rank, header.world_size) == (info.get("rank"), info.get("world_size"))


def test_a_trace_too_large_to_read_for_its_end_keeps_the_modification_time(tmp_path, monkeypatch):
    """Discovery never reads a large file whole for its clock: past the bound the session is named by its mtime."""
    import shutil

    from tests.support.paths import FIXTURES

    monkeypatch.setattr(kineto_layout, "TAIL_SCAN_MAX_BYTES", 1000)
    src = FIXTURES / "wild" / CLOCK_AT_END[0]
    dst = tmp_path / "run" / src.name
    dst.parent.mkdir()
    shutil.copyfile(src, dst)
    os.utime(dst, ns=(T0, T0))
    (s,) = discover(str(tmp_path))
    assert s.session == "2026_11_22_20_46_24"
