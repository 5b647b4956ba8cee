"""ReportCache on a real folder: keys, invalidation, corruption, eviction, two processes."""

from __future__ import annotations

import gzip
import io
import json
import logging
import multiprocessing
import os
import subprocess
import sys
import time

import pytest

from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.runtime import cache as cache_mod
from tb_gpu_advisor.runtime.cache import ReportCache, default_dir, make_key, session_key
from tests.support import simple_analyzer
from tests.support.profile_files import write_profile


@pytest.fixture
def session(tmp_path):
    logdir = tmp_path / "logdir"
    write_profile(str(logdir), "train", "2024_01_01_00_00_00", "h1", events=4)
    write_profile(str(logdir), "train", "2024_01_01_00_00_00", "h2", events=6)
    (s,) = discover(str(logdir))
    return s


def _analyze(s):
    return simple_analyzer.analyze_session(s.run, s.session, s.hosts)


def test_roundtrip_returns_the_stored_report(tmp_path, session):
    c = ReportCache(str(tmp_path / "c"))
    key = session_key(session)
    assert c.get(key) is None
    report = _analyze(session)
    assert c.put(key, report)
    got = c.get_dict(key)
    assert got == json.loads(report.to_json())
    assert got["headline"][0]["value"] == 10.0
    assert ReportCache(str(tmp_path / "c")).get(key) == report.to_json()  # persistent: a new instance reads it


def test_key_changes_with_file_identity_versions_and_params(tmp_path, session):
    base = session_key(session, analyzer="a1", schema="s1")
    assert base == session_key(session, analyzer="a1", schema="s1")
    assert base.digest != session_key(session, analyzer="a2", schema="s1").digest
    assert base.digest != session_key(session, analyzer="a1", schema="s2").digest
    assert base.digest != session_key(session, params=1_000_000, analyzer="a1", schema="s1").digest
    assert base.digest != make_key("other", session.session, session.hosts, analyzer="a1", schema="s1").digest
    # the host order of a listing does not matter
    assert base == make_key(session.run, session.session, session.hosts[::-1], analyzer="a1", schema="s1")


def test_rewritten_profile_misses(tmp_path, session):
    c = ReportCache(str(tmp_path / "c"))
    c.put(session_key(session), _analyze(session))
    # the capture is re-run into the same folder: new size and mtime
    write_profile(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(session.path)))),
                  "train", session.session, "h1", events=9)
    (again,) = discover(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(session.path)))))
    assert again.hosts[0].size != session.hosts[0].size
    assert c.get(session_key(again)) is None
    c.put(session_key(again), _analyze(again))
    assert c.get_dict(session_key(again))["headline"][0]["value"] == 15.0


def test_same_size_touched_file_misses(tmp_path, session):
    c = ReportCache(str(tmp_path / "c"))
    c.put(session_key(session), _analyze(session))
    h = session.hosts[0]
    os.utime(h.path, ns=(h.mtime_ns + 1_000_000_000, h.mtime_ns + 1_000_000_000))
    (again,) = discover(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(session.path)))))
    assert again.hosts[0].size == h.size
    assert c.get(session_key(again)) is None


def test_default_dir_env_and_xdg(tmp_path, monkeypatch):
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE_DIR", str(tmp_path / "envdir"))
    assert default_dir() == str(tmp_path / "envdir")
    assert ReportCache().directory == str(tmp_path / "envdir")
    assert os.path.isdir(tmp_path / "envdir")
    monkeypatch.delenv("TB_GPU_ADVISOR_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_dir() == str(tmp_path / "xdg" / "tb-gpu-advisor")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_dir() == str(tmp_path / "home" / ".cache" / "tb-gpu-advisor")
    assert ReportCache(str(tmp_path / "arg")).directory == str(tmp_path / "arg")  # argument wins


def test_disabled_by_env_or_flag(tmp_path, monkeypatch, session):
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE_DIR", "off")
    c = ReportCache()
    assert not c.enabled
    assert not c.put(session_key(session), _analyze(session))
    assert c.get(session_key(session)) is None
    c2 = ReportCache(str(tmp_path / "c"), enabled=False)
    assert not c2.put(session_key(session), _analyze(session))
    assert not (tmp_path / "c").exists()


def test_uncreatable_dir_disables_with_warning(tmp_path, caplog, session):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    with caplog.at_level(logging.WARNING, logger="tb_gpu_advisor.runtime.cache"):
        c = ReportCache(str(blocker / "cache"))
    assert not c.enabled and "disabled" in caplog.text
    assert not c.put(session_key(session), _analyze(session))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "wrong_key", "not_json", "empty"])
def test_corrupt_entries_ignored_and_removed(tmp_path, session, damage):
    c = ReportCache(str(tmp_path / "c"))
    key = session_key(session)
    c.put(key, _analyze(session))
    path = c.path_for(key)
    raw = open(path, "rb").read()
    if damage == "truncate":
        data = raw[: len(raw) // 2]
    elif damage == "garbage":
        data = os.urandom(len(raw))
    elif damage == "wrong_key":
        text = gzip.decompress(raw).decode()
        header, _, report = text.partition("\n")
        h = json.loads(header)
        h["key"] = h["key"].replace("h1.xplane.pb", "hX.xplane.pb")
        data = gzip.compress((json.dumps(h) + "\n" + report).encode())
    elif damage == "not_json":
        data = gzip.compress(b'{"format": 1}\n{not json')
    else:
        data = b""
    with open(path, "wb") as f:
        f.write(data)
    assert c.get(key) is None
    assert not os.path.exists(path)
    assert c.put(key, _analyze(session)) and c.get(key) is not None  # and it heals


def _as_of(report, run: str, session: str):
    """``report`` as the report of ``run``/``session`` (an entry is bound to the run and session of its key)."""
    import dataclasses

    return dataclasses.replace(report, run=run, session=session)


def test_eviction_keeps_recently_used(tmp_path, session):
    report = _analyze(session)
    c = ReportCache(str(tmp_path / "c"), max_bytes=10**9)
    keys = [make_key("r", f"s{i}", session.hosts) for i in range(6)]
    for i, k in enumerate(keys):
        assert c.put(k, _as_of(report, "r", f"s{i}"))
        os.utime(c.path_for(k), (1_000_000 + i, 1_000_000 + i))  # distinct, old -> new
    entry = max(os.path.getsize(c.path_for(k)) for k in keys)  # sizes differ by a byte or two
    assert c.get(keys[0]) is not None  # a hit makes the oldest the most recently used
    c.max_bytes = entry * 3 + entry // 2
    assert c.evict() == 3
    alive = [k for k in keys if os.path.exists(c.path_for(k))]
    assert alive == [keys[0], keys[4], keys[5]]
    assert c.total_bytes() <= c.max_bytes


def test_put_evicts_when_over_budget(tmp_path, session):
    report = _analyze(session)
    c = ReportCache(str(tmp_path / "c"))
    first = make_key("r", "s0", session.hosts)
    assert c.put(first, _as_of(report, "r", "s0"))
    size = os.path.getsize(c.path_for(first))
    c.max_bytes = size * 2 + size // 2  # room for two entries, not three
    for i in range(1, 5):
        time.sleep(0.01)
        assert c.put(make_key("r", f"s{i}", session.hosts), _as_of(report, "r", f"s{i}"))
    assert len(c.entries()) == 2
    assert c.get(make_key("r", "s4", session.hosts)) is not None


def test_stale_temp_files_cleaned(tmp_path, session):
    c = ReportCache(str(tmp_path / "c"))
    stale = tmp_path / "c" / ".tmp-dead.part"
    fresh = tmp_path / "c" / ".tmp-writing.part"
    stale.write_bytes(b"x")
    fresh.write_bytes(b"x")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    c.put(session_key(session), _analyze(session))
    assert not stale.exists() and fresh.exists()


# --- two processes sharing one cache folder --------------------------------------


def _report_doc(run: str = "r", session: str = "s") -> dict:
    """The smallest valid report document (what a report key's entry must hold)."""
    return Report(run=run, session=session, hosts=[], findings=[], headline=[], healthy=False, analyzer_version="t",
                  generated_at="t").to_dict()


def _hammer(args) -> tuple[int, int]:
    """Write and read the same keys many times; return (valid reads, bad reads) of raw entry files."""
    directory, worker, rounds, material_texts = args
    c = ReportCache(directory, max_bytes=10**9)
    ok = bad = 0
    for i in range(rounds):
        for j, material in enumerate(material_texts):
            key = cache_mod.CacheKey(material)
            report = {**_report_doc("r", f"s{j}"), "worker": worker, "round": i, "entry": j,
                      "pad": "x" * (2000 + 97 * j)}
            assert c.put(key, report)
            try:
                raw = open(c.path_for(key), "rb").read()
            except FileNotFoundError:
                continue
            if cache_mod._decode(raw, key)[0] is None:  # read raw bytes: get() would hide a bad file by deleting it
                bad += 1
            else:
                ok += 1
    return ok, bad


def test_concurrent_writers_leave_valid_cache(tmp_path, session):
    directory = str(tmp_path / "shared")
    materials = [make_key("r", f"s{j}", session.hosts).material for j in range(4)]
    ctx = multiprocessing.get_context("spawn")  # separate interpreters, like TensorBoard + precompute
    with ctx.Pool(4) as pool:
        results = pool.map(_hammer, [(directory, w, 40, materials) for w in range(4)])
    assert sum(bad for _, bad in results) == 0
    assert sum(ok for ok, _ in results) > 0
    c = ReportCache(directory)
    for m in materials:
        doc = c.get_dict(cache_mod.CacheKey(m))
        assert doc is not None and doc["worker"] in range(4) and doc["round"] in range(40)
    assert not [n for n in os.listdir(directory) if n.startswith(".tmp-")]
    assert len(os.listdir(directory)) == len(materials)


def _evicting_writer(args) -> int:
    directory, worker, rounds = args
    c = ReportCache(directory, max_bytes=40_000)
    for i in range(rounds):
        c.put(cache_mod.CacheKey(f"w{worker}-{i}"), {"pad": os.urandom(3000).hex()})
    return len(c.entries())


def test_concurrent_eviction_stays_bounded_and_valid(tmp_path):
    directory = str(tmp_path / "shared")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        pool.map(_evicting_writer, [(directory, w, 30) for w in range(3)])
    c = ReportCache(directory, max_bytes=40_000)
    assert 0 < c.total_bytes() <= 40_000 + 3 * 8_000  # each writer may overshoot by its own last entry
    for path, _, _ in c.entries():
        name = os.path.basename(path)
        assert not name.startswith(".tmp-")
        assert gzip.decompress(open(path, "rb").read())  # every survivor is a whole gzip file


# --- the plugin's string-keyed store ---------------------------------------------------


def test_open_store_shares_entries_with_precompute_keys(tmp_path, session):
    """A report written under session_key (precompute) is found by the plugin's string keys."""
    directory = str(tmp_path / "c")
    report = _analyze(session)
    ReportCache(directory).put(session_key(session), report)
    store = cache_mod.open_store(directory)
    # the plugin's current key: json.dumps((run, session, ((host, path, size, mtime_ns), ...)))
    plugin_key = json.dumps((session.run, session.session, tuple((h.host, h.path, h.size, h.mtime_ns)
                                                                 for h in session.hosts)), sort_keys=True)
    assert store.get(plugin_key) == report.to_json()
    assert store.get(cache_mod.store_key(session.run, session.session, session.hosts)) == report.to_json()
    only_h1 = json.dumps((session.run, session.session, [[h.host, h.path, h.size, h.mtime_ns]
                                                         for h in session.hosts[:1]]))
    assert store.get(only_h1) is None  # a one-host report is a different entry


def test_store_opaque_keys_roundtrip_and_disabled(tmp_path, monkeypatch):
    store = cache_mod.open_store(str(tmp_path / "c"))
    store.put("anything", '{"a": 1}')
    assert store.get("anything") == '{"a": 1}'
    assert store.get("other") is None
    with pytest.raises(ValueError):
        store.put("bad", "{not json")
    assert cache_mod.open_store("off") is None  # the plugin passes the env value through
    monkeypatch.setenv("TB_GPU_ADVISOR_CACHE_DIR", "off")
    assert cache_mod.open_store() is None


def test_cache_key_version_imports_nothing_heavy():
    """The plugin computes cache keys on a request thread: the analyzer version must not import numpy/the analyzer."""
    code = ("import sys, tb_gpu_advisor.runtime.cache as c; v = c.analyzer_version(); "
            "heavy = [m for m in ('numpy', 'tb_gpu_advisor.runtime.pipeline') if m in sys.modules]; "
            "assert not heavy, heavy; import tb_gpu_advisor.report.merge as a; "
            "assert v.startswith(a.ANALYZER_VERSION + '+'); print(v)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith("0.")


def test_any_edit_to_the_analysing_code_misses_the_cache(tmp_path):
    """Issue #21 item 7: the key carries a fingerprint of the package's code, so a threshold changed without a
    version bump is not served an old report.  A copy of the package with one rule threshold changed gives another
    analyzer version, hence another key for the same session; the unchanged copy gives the same key."""
    from tests.support.package_copy import analyzer_version as version
    from tests.support.package_copy import copy_package

    copy = copy_package(tmp_path / "pkg")
    before = version(copy)
    assert before == version(copy)  # stable for unchanged code
    th = copy / "tb_gpu_advisor" / "common" / "thresholds.py"
    text = th.read_text()
    assert '"input_bound.warning", 0.05' in text
    th.write_text(text.replace('"input_bound.warning", 0.', '"input_bound.warning", 0.0', 1))
    after = version(copy)
    assert after != before and after.split("+")[:2] == before.split("+")[:2]


# --- a valid header over a body that is not a report (issue 27 item 14) -------------------------------------------


def _plant(path: str, body: str) -> None:
    """Keep the entry's header (so the key matches) and put ``body`` under it."""
    header = gzip.decompress(open(path, "rb").read()).decode("utf-8").partition("\n")[0]
    with open(path, "wb") as f:
        f.write(gzip.compress(f"{header}\n{body}".encode("utf-8")))


NOT_REPORTS = ['{}', '{"hosts": 5}', '[]', '"text"',
               # a real report's shape with one wrong field deep inside: a finding's severity a number
               None]


@pytest.mark.parametrize("body", NOT_REPORTS)
def test_a_body_that_is_not_a_report_is_a_miss_and_removed(tmp_path, session, body):
    c = ReportCache(str(tmp_path / "c"))
    key = session_key(session)
    report = _analyze(session)
    assert c.put(key, report)
    if body is None:
        doc = json.loads(report.to_json())
        doc["headline"][0]["value"] = "ten"
        body = json.dumps(doc)
    _plant(c.path_for(key), body)
    assert c.get(key) is None
    assert not os.path.exists(c.path_for(key))  # removed: the next put writes a good one
    assert c.put(key, report) and c.get(key) == report.to_json()


def test_put_refuses_a_body_that_would_not_read_back(tmp_path, session):
    c = ReportCache(str(tmp_path / "c"))
    assert not c.put(session_key(session), {})
    assert "not a report" in c.last_error and "no 'run'" in c.last_error
    opaque = cache_mod.CacheKey("opaque")
    assert c.put(opaque, {}) and c.get(opaque) == "{}"  # the store's other keys: any object


def test_a_host_entry_is_checked_as_a_host_report(tmp_path, session):
    from tb_gpu_advisor.runtime.cache import host_key

    c = ReportCache(str(tmp_path / "c"))
    hr = _analyze(session).hosts[0]
    key = host_key(session, session.hosts[0])
    assert c.put(key, hr.to_json()) and c.get(key) == hr.to_json()
    _plant(c.path_for(key), json.dumps({"host": "h1"}))  # no path, no size
    assert c.get(key) is None


def test_report_runs_over_a_planted_empty_body_and_heals_the_cache(tmp_path):
    """The issue's case end to end: every later ``report`` crashed (TypeError, exit 1, no output) on an entry whose
    body was ``{}``; now it is a miss, the report is printed and the entry is a report again."""
    from tb_gpu_advisor.cli import main as cli

    logdir, cache_dir = str(tmp_path / "logs"), str(tmp_path / "cache")
    write_profile(logdir, "train", "2024_01_01_00_00_00", "h1", events=4)

    def report() -> tuple[int, str]:
        args = cli.build_parser().parse_args(["report", logdir, "--run", "train", "--format", "json",
                                              "--cache-dir", cache_dir])
        out = io.StringIO()
        return args.func(args, stdout=out, stderr=io.StringIO()), out.getvalue()

    code, first = report()
    (entry,) = [os.path.join(cache_dir, n) for n in os.listdir(cache_dir)]
    _plant(entry, "{}")
    again_code, again = report()
    assert (again_code, json.loads(again)["run"]) == (code, "train")
    assert json.loads(again)["findings"] == json.loads(first)["findings"]
    assert json.loads(gzip.decompress(open(entry, "rb").read()).decode().partition("\n")[2])["run"] == "train"


# --- issue #39, deliverable 7: an entry is bound to its key ----------------------------------------


def _one_host_session(tmp_path, run: str = "train"):
    logdir = tmp_path / "bound"
    write_profile(str(logdir), run, "2024_01_01_00_00_00", "h1", events=4)
    (s,) = [x for x in discover(str(logdir)) if x.run == run]
    return s


def test_another_runs_report_under_this_runs_key_is_a_miss_logged_once(tmp_path, caplog):
    """A shared cache: a report of run ``other`` saved under run ``train``'s key (a valid header) was served as
    ``train``'s.  Now it is a miss, the entry goes, and the refusal is one WARNING however often it is asked."""
    s = _one_host_session(tmp_path)
    c = ReportCache(str(tmp_path / "c"))
    key = session_key(s)
    report = _analyze(s)
    assert c.put(key, report)
    other = json.loads(report.to_json())
    other["run"] = "other"
    caplog.set_level(logging.DEBUG, logger=cache_mod.logger.name)
    for _ in range(3):
        assert c.put(key, report)
        _plant(c.path_for(key), json.dumps(other))
        assert c.get(key) is None
        assert not os.path.exists(c.path_for(key))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "run 'other'" in warnings[0].getMessage(), [r.getMessage() for r in warnings]
    assert not c.put(key, other)  # nor is it ever written so


def test_a_file_replaced_with_the_same_size_and_mtime_misses(tmp_path):
    """The key (path, size, mtime_ns) cannot tell; the binding's digest of the file's ends and its inode can."""
    s = _one_host_session(tmp_path)
    c = ReportCache(str(tmp_path / "c"))
    h = s.hosts[0]
    assert c.put(session_key(s), _analyze(s)) and c.get(session_key(s)) is not None
    data = bytearray(open(h.path, "rb").read())
    data[-1] ^= 0xFF  # rewritten in place: same inode, same size, one byte at its end differs
    with open(h.path, "r+b") as f:
        f.write(bytes(data))
    os.utime(h.path, ns=(h.mtime_ns, h.mtime_ns))
    (again,) = discover(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(s.path)))))
    assert (again.hosts[0].size, again.hosts[0].mtime_ns) == (h.size, h.mtime_ns)
    assert session_key(again) == session_key(s)
    assert c.get(session_key(again)) is None


def test_a_file_replaced_by_a_copy_of_itself_misses_by_its_inode(tmp_path):
    s = _one_host_session(tmp_path)
    c = ReportCache(str(tmp_path / "c"))
    h = s.hosts[0]
    assert c.put(session_key(s), _analyze(s))
    copy = h.path + ".new"
    with open(h.path, "rb") as src, open(copy, "wb") as dst:
        dst.write(src.read())
    os.utime(copy, ns=(h.mtime_ns, h.mtime_ns))
    os.replace(copy, h.path)
    assert c.get(session_key(s)) is None


def test_an_entry_carries_its_run_files_and_analyzer(tmp_path):
    s = _one_host_session(tmp_path)
    c = ReportCache(str(tmp_path / "c"))
    key = session_key(s)
    assert c.put(key, _analyze(s))
    header = json.loads(gzip.decompress(open(c.path_for(key), "rb").read()).decode().partition("\n")[0])
    bound = header["binding"]
    st = os.stat(s.hosts[0].path)
    assert (bound["run"], bound["session"], bound["analyzer"]) == (s.run, s.session, cache_mod.analyzer_version())
    (path, size, mtime_ns, inode, digest), = bound["files"]
    assert (path, size, mtime_ns, inode) == (s.hosts[0].path, st.st_size, st.st_mtime_ns, st.st_ino)
    assert len(digest) == 32 and int(digest, 16) >= 0
