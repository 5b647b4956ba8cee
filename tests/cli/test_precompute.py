"""precompute on real temp logdirs with a small real analyzer (tests/support/simple_analyzer.py) in real worker processes."""

from __future__ import annotations

import io
import os

import pytest

from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.cli import precompute as pc
from tb_gpu_advisor.discover.logdir import discover, find_session
from tb_gpu_advisor.runtime import pipeline
from tb_gpu_advisor.runtime import session as analysis
from tb_gpu_advisor.runtime.cache import ReportCache, session_key
from tests.support import simple_analyzer
from tests.support.paths import SHARED_PROFILES
from tests.support.profile_files import write_profile


@pytest.fixture
def logdir(tmp_path):
    d = str(tmp_path / "logdir")
    write_profile(d, "train", "2024_01_01_00_00_00", "worker0", events=5)
    write_profile(d, "train", "2024_01_01_00_00_00", "worker1", events=7)
    write_profile(d, "train", "2024_01_02_00_00_00", "worker0", events=2)
    write_profile(d, "eval", "2024_01_03_00_00_00", "host", events=4)
    return d


def _corrupt(logdir, run, session, host) -> str:
    """A capture killed mid-write: a truncated profile."""
    path = write_profile(logdir, run, session, host, events=50)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    return path


def _events(cache, s):
    doc = cache.get_dict(session_key(s))
    return None if doc is None else doc["headline"][0]["value"]


def test_fills_cache_in_worker_processes(logdir, tmp_path):
    cache = ReportCache(str(tmp_path / "cache"))
    out = io.StringIO()
    summary = pc.precompute(logdir, jobs=2, cache=cache, analyze_fn=simple_analyzer.analyze_session, out=out)
    assert summary.exit_code == 0 and summary.errors == []
    assert (summary.count("new"), summary.count("cached"), summary.jobs) == (3, 0, 2)
    sessions = discover(logdir)
    assert {s.stock_run: _events(cache, s) for s in sessions} == {
        "eval/2024_01_03_00_00_00": 4.0, "train/2024_01_02_00_00_00": 2.0, "train/2024_01_01_00_00_00": 12.0,
    }
    pids = {h["capture"]["pid"] for s in sessions for h in cache.get_dict(session_key(s))["hosts"]}
    assert os.getpid() not in pids  # analysed in workers, not here
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("precompute: 3 sessions, 4 host files")
    assert sum(1 for ln in lines if ln.startswith("[")) == 3


def test_second_run_uses_cache_and_force_recomputes(logdir, tmp_path):
    cache = ReportCache(str(tmp_path / "cache"))
    pc.precompute(logdir, jobs=1, cache=cache, analyze_fn=simple_analyzer.analyze_session, out=io.StringIO())
    again = pc.precompute(logdir, jobs=2, cache=cache, analyze_fn=simple_analyzer.analyze_session, out=io.StringIO())
    assert (again.count("cached"), again.count("new")) == (3, 0)
    # a re-captured session is analysed again, the rest stay cached
    write_profile(logdir, "eval", "2024_01_03_00_00_00", "host", events=9)
    third = pc.precompute(logdir, jobs=2, cache=cache, analyze_fn=simple_analyzer.analyze_session, out=io.StringIO())
    assert (third.count("cached"), third.count("new")) == (2, 1)
    assert _events(cache, find_session(discover(logdir), "eval", "2024_01_03_00_00_00")) == 9.0
    forced = pc.precompute(logdir, jobs=1, cache=cache, force=True, analyze_fn=simple_analyzer.analyze_session,
                           out=io.StringIO())
    assert forced.count("new") == 3


def test_bad_file_reported_with_reason_not_cached(logdir, tmp_path):
    bad = _corrupt(logdir, "train", "2024_01_02_00_00_00", "worker1")
    cache = ReportCache(str(tmp_path / "cache"))
    summary = pc.precompute(logdir, jobs=2, cache=cache, analyze_fn=simple_analyzer.analyze_session,
                            out=io.StringIO())
    assert summary.exit_code == 1
    assert [p for p, _ in summary.errors] == [bad]
    assert "not a readable XSpace" in summary.errors[0][1]
    broken = find_session(discover(logdir), "train", "2024_01_02_00_00_00")
    assert cache.get(session_key(broken)) is None  # retried next time
    assert _events(cache, find_session(discover(logdir), "eval", "2024_01_03_00_00_00")) == 4.0
    out = io.StringIO()
    pc.print_summary(summary, out)
    text = out.getvalue()
    assert "sessions:  3 (0 cached, 3 new, 0 failed)" in text
    assert f"{bad}: " in text and "errors:    1 file\n" in text


def test_analyzer_crash_fails_that_session_only(logdir, tmp_path):
    write_profile(logdir, "train", "boom", "w0")
    write_profile(logdir, "train", "boom", "w1")
    cache = ReportCache(str(tmp_path / "cache"))
    summary = pc.precompute(logdir, jobs=2, cache=cache, analyze_fn=simple_analyzer.analyze_session_failing,
                            out=io.StringIO())
    assert summary.exit_code == 1 and summary.count("failed") == 1 and summary.count("new") == 3
    assert sorted(os.path.basename(p) for p, _ in summary.errors) == ["w0.xplane.pb", "w1.xplane.pb"]
    assert all("RuntimeError: analyzer crashed on purpose" in r for _, r in summary.errors)


def test_worker_count_bounded_by_cores_and_tasks(monkeypatch):
    monkeypatch.setattr(analysis, "available_cores", lambda: 4)
    assert analysis.worker_count(None, 10) == 4
    assert analysis.worker_count(16, 10) == 4
    assert analysis.worker_count(3, 2) == 2
    assert analysis.worker_count(0, 0) == 1


def test_cli_end_to_end(logdir, tmp_path, capsys):
    """The real CLI entry with the real analyzer in worker processes."""
    jobs = "2"
    rc = cli.main(["precompute", logdir, "--jobs", jobs, "--cache-dir", str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "sessions:  3 (0 cached, 3 new, 0 failed)" in err and "wall time:" in err
    # a report per session, plus a report per host of each multi-host session (what sessions merge from)
    per_host = sum(len(s.hosts) for s in discover(logdir) if len(s.hosts) > 1)
    assert per_host and len(ReportCache(str(tmp_path / "cache")).entries()) == 3 + per_host
    _corrupt(logdir, "eval", "2024_01_04_00_00_00", "host")
    assert cli.main(["precompute", logdir, "--jobs", jobs, "--cache-dir", str(tmp_path / "cache")]) == 1
    assert "sessions:  4 (3 cached, 1 new, 0 failed)" in capsys.readouterr().err
    assert cli.main(["precompute", str(tmp_path / "nope"), "--cache-dir", str(tmp_path / "cache")]) == 2


def test_cli_refuses_disabled_cache(logdir, monkeypatch, capsys):
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE_DIR", "off")
    assert cli.main(["precompute", logdir]) == 2
    assert "disabled" in capsys.readouterr().err


# --- one multi-host session in parallel ----------------------------------------------------


def test_analyze_session_parallel_merges_hosts_in_order(tmp_path):
    d = str(tmp_path)
    for i, n in enumerate((3, 8, 5)):
        write_profile(d, "job", "s", f"host{i}", events=n)
    (s,) = discover(d)
    seen = []
    report = analysis.analyze_session_parallel(s, jobs=2, progress=lambda m, f: seen.append(f),
                                         analyze_host_fn=simple_analyzer.analyze_host,
                                         merge_fn=simple_analyzer.merge_hosts)
    assert [h.host for h in report.hosts] == ["host0", "host1", "host2"]
    assert [h.headline[0].value for h in report.hosts] == [3.0, 8.0, 5.0]
    assert report.headline[0].value == 16.0
    assert os.getpid() not in {h.capture["pid"] for h in report.hosts}
    assert seen[-1] == 1.0 and len(seen) == 3


def test_analyze_session_parallel_bad_host_keeps_others(tmp_path):
    d = str(tmp_path)
    write_profile(d, "job", "s", "good", events=6)
    _corrupt(d, "job", "s", "bad")
    (s,) = discover(d)
    report = analysis.analyze_session_parallel(s, jobs=2, analyze_host_fn=simple_analyzer.analyze_host,
                                         merge_fn=simple_analyzer.merge_hosts)
    by_host = {h.host: h for h in report.hosts}
    assert by_host["good"].headline[0].value == 6.0 and by_host["good"].error is None
    assert "not a readable XSpace" in by_host["bad"].error
    assert not report.healthy


def test_analyze_session_parallel_single_job_inline(tmp_path):
    d = str(tmp_path)
    write_profile(d, ".", "s", "a", events=2)
    write_profile(d, ".", "s", "b", events=3)
    (s,) = discover(d)
    report = analysis.analyze_session_parallel(s, jobs=1, analyze_host_fn=simple_analyzer.analyze_host,
                                         merge_fn=simple_analyzer.merge_hosts)
    assert {h.capture["pid"] for h in report.hosts} == {os.getpid()}
    assert report.headline[0].value == 5.0


def test_workers_see_environment_set_after_forkserver_started(monkeypatch):
    """S3_ENDPOINT/credentials set after an earlier pool must still reach new workers."""
    with pc.process_pool(1) as pool:
        assert pool.submit(simple_analyzer.environ, "TBGA_PROBE").result() is None
    monkeypatch.setenv("TBGA_PROBE", "late-value")
    with pc.process_pool(1) as pool:
        assert pool.submit(simple_analyzer.environ, "TBGA_PROBE").result() == "late-value"


V100 = str(SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb")


@pytest.mark.skipif(not os.path.exists(V100), reason="real capture not found (CI has ../shared)")
def test_real_analyzer_parallel_equals_sequential_and_precompute(tmp_path):
    """The real analyzer on the real V100 capture as a 2-host session: worker-process merge == in-process."""
    import json
    import shutil

    d = str(tmp_path / "logdir")
    for host in ("hostA", "hostB"):
        dest = os.path.dirname(write_profile(d, "bert", "2020_01_01_00_00_00", host))
        shutil.copyfile(V100, os.path.join(dest, f"{host}.xplane.pb"))  # a temp copy, never into the repo
    (s,) = discover(d)

    def comparable(report):
        doc = json.loads(report.to_json())
        doc.pop("generated_at")
        return doc

    parallel = analysis.analyze_session_parallel(s, jobs=2)
    sequential = pipeline.analyze_session(s.run, s.session, s.hosts)
    assert [h.error for h in parallel.hosts] == [None, None]
    assert comparable(parallel) == comparable(sequential)
    cache = ReportCache(str(tmp_path / "cache"))
    summary = pc.precompute(d, jobs=2, cache=cache, out=io.StringIO())
    assert summary.exit_code == 0 and summary.count("new") == 1
    cached = cache.get_dict(session_key(s))
    cached.pop("generated_at")
    assert cached == comparable(sequential)


def test_report_and_diff_read_what_precompute_stored(tmp_path, capsys, monkeypatch):
    """One analysis entry point: after precompute, 'report' and 'diff' answer from the cache without analysing."""
    from synthetic.scenarios import SCENARIOS

    d = tmp_path / "logs"
    SCENARIOS["input_bound"]().write(d)
    SCENARIOS["input_bound"](fixed=True).write(d, run="input_bound_fixed")
    assert cli.main(["precompute", str(d), "--jobs", "1"]) == 0
    capsys.readouterr()

    def no_analysis(*a, **k):
        raise AssertionError("a precomputed report was analysed again")

    monkeypatch.setattr(pipeline, "analyze_session", no_analysis)
    monkeypatch.setattr(analysis, "analyze_session_parallel", no_analysis)
    assert cli.main(["report", str(d), "--run", "input_bound", "--progress"]) == 0
    out, err = capsys.readouterr()
    assert "input_bound" in out and "from the report cache" in err
    assert cli.main(["diff", str(d), "--base", "input_bound", "--new", "input_bound_fixed"]) == 0
    assert "fixed 'Input-bound" in capsys.readouterr().out


def test_a_report_with_a_failed_host_is_not_stored(tmp_path):
    from tb_gpu_advisor.discover.logdir import discover
    from tb_gpu_advisor.runtime.cache import ReportCache, session_key

    d = str(tmp_path / "logs")
    write_profile(d, "bad", "2024_01_01_00_00_00", "worker0", events=1)
    with open(os.path.join(d, "bad", "plugins", "profile", "2024_01_01_00_00_00", "worker0.xplane.pb"), "wb") as f:
        f.write(b"\x08\x00 not a profile")
    cache = ReportCache(str(tmp_path / "cache"))
    s = discover(d)[0]
    a = analysis.session_report(s, cache=cache)
    assert a.report.hosts[0].error and not a.stored and a.not_stored == "a host could not be analysed"
    assert cache.get(session_key(s)) is None


@pytest.mark.parametrize("sharded, warm_sessions", [(False, False), (False, True), (True, True)],
                         ids=["sessions-hosts-warm", "sessions-all-warm", "shards-all-warm"])
def test_force_analyses_every_host_again_even_with_a_warm_per_host_cache(tmp_path, monkeypatch, sharded,
                                                                          warm_sessions):
    """``--force`` analyses every host file again: never served from a session entry, nor merged from the per-host
    entries a sharded run left (the bug: a forced run of a 1,024-rank job merged them in 1.5 s instead of analysing)."""
    from synthetic import torchtrace as tt

    d = str(tmp_path / "logs")
    for run in ("ddp_2x8_slow_node", "ddp_balanced"):  # a multi-host session and a one-host one
        tt.write_run(d, run, steps=4)
    cache = ReportCache(str(tmp_path / "cache"))
    for k in range(2):  # warm: every host in the per-host cache (two shards) ...
        assert pc.precompute_shard(d, (k, 2), jobs=1, cache=cache, out=io.StringIO()).exit_code == 0
    if warm_sessions:  # ... and every session's entry, merged from them
        assert pc.precompute(d, jobs=1, cache=cache, out=io.StringIO()).exit_code == 0
    hosts = sorted(h.path for s in discover(d) for h in s.hosts)
    assert len(hosts) >= 3
    analysed: list[str] = []
    real = pipeline.analyze_host

    def counting(host_file, *a, **k):
        analysed.append(host_file.path)
        return real(host_file, *a, **k)

    monkeypatch.setattr(pipeline, "analyze_host", counting)  # the sessions' path (pipeline, runtime.session)
    # the shards' path goes through the same pipeline function (Advisor.host_report)
    if sharded:
        summaries = [pc.precompute_shard(d, (k, 2), jobs=1, cache=cache, force=True, out=io.StringIO())
                     for k in range(2)]
    else:
        summaries = [pc.precompute(d, jobs=1, cache=cache, force=True, out=io.StringIO())]
    assert all(s.exit_code == 0 and s.count("cached") == 0 for s in summaries)
    assert sorted(analysed) == hosts  # each host file analysed again, exactly once
    # and without --force, nothing is analysed: the entries the forced run refreshed serve
    analysed.clear()
    again = pc.precompute(d, jobs=1, cache=cache, out=io.StringIO())
    assert again.count("new") == 0 and analysed == []
