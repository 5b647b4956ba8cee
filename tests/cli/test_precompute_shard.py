"""``precompute --shard K/N`` (issue #19, scale): N independent processes -- a Slurm job array, a Kubernetes Indexed
Job -- split the host files by a stable hash, fill one shared per-host cache, and every session's report (the
CLI's, the tab's) is then merged from those summaries without analysing anything again."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

import pytest
from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from synthetic import torchtrace as tt
from tb_gpu_advisor.cli.precompute import shard_of
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime import pipeline
from tb_gpu_advisor.runtime.cache import ReportCache
from tb_gpu_advisor.runtime.session import session_report
from tb_gpu_advisor.serve import plugin as plugin_mod
from tests.support.paths import REPO
from tests.support.plugin_client import PREFIX, poll_report
from tests.support.s3_server import moto_endpoint

SHARDS = 3


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    """Two multi-node jobs and one single-node run: 5 host files (16-rank jobs are a host per node)."""
    d = tmp_path_factory.mktemp("shards")
    for run in ("ddp_2x8_slow_node", "ddp_2x8_slow_rank", "ddp_balanced"):
        tt.write_run(str(d), run, steps=8)
    return str(d)


def test_the_shard_of_a_host_is_stable_and_every_host_has_one():
    names = [("run", "s", f"node{i}") for i in range(200)]
    first = [shard_of(*n, 7) for n in names]
    assert first == [shard_of(*n, 7) for n in names]  # no per-process salt
    assert set(first) == set(range(7))  # every shard gets work at this size


@pytest.fixture(scope="module")
def s3_endpoint():
    yield from moto_endpoint()


@pytest.fixture(params=["local", "s3"])
def cache_dir(request, tmp_path, monkeypatch):
    """The shared cache: a local folder (a shared file system), or a bucket on an S3-compatible server."""
    if request.param == "local":
        return str(tmp_path / "cache")
    boto3 = pytest.importorskip("boto3")
    endpoint = request.getfixturevalue("s3_endpoint")
    for k, v in {"S3_ENDPOINT": endpoint, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                 "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    bucket = f"advisor-cache-{len(os.listdir(tmp_path))}-{os.getpid()}"
    boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket=bucket)
    return f"s3://{bucket}/advisor"


def test_shards_run_at_once_analyse_each_host_once_and_sessions_merge_from_the_cache(job, cache_dir, monkeypatch):
    procs = [subprocess.Popen([sys.executable, "-m", "tb_gpu_advisor.cli", "precompute", job, "--shard", f"{k}/{SHARDS}",
                               "--cache-dir", cache_dir, "--jobs", "1"], cwd=REPO, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ))
             for k in range(SHARDS)]
    logs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * SHARDS, logs
    done = [m.group(1) for log in logs for m in re.finditer(r"^\[\d+/\d+\] (\S+): \d+ host", log, re.M)]
    hosts = [f"{s.stock_run}/{h.host}" for s in discover(job) for h in s.hosts]
    assert sorted(done) == sorted(hosts)  # each host file analysed by exactly one shard

    def no_analysis(*a, **k):
        raise AssertionError("a host was analysed again")

    monkeypatch.setattr(pipeline, "analyze_host", no_analysis)
    cache = ReportCache(cache_dir)
    assert len(cache.entries()) == len(hosts)  # per-host entries only, so far
    # the tab on the shared cache: the job view merged from the shards' entries, nothing analysed
    ctx = base_plugin.TBContext(logdir=job, flags=argparse.Namespace(gpu_advisor_cache_dir=cache_dir))
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin_mod.GpuAdvisorPlugin(ctx, isolate=False)]),
                                  wrappers.Response)
    (rank,) = [s for s in discover(job) if s.run == "ddp_2x8_slow_rank"]
    r = poll_report(client, f"{PREFIX}/report?run={rank.run}&session={rank.session}")
    assert r.status_code == 200, r.get_data(as_text=True)[:300]
    doc = r.get_json()
    assert doc["findings"][0]["rule"] == "rank_straggler" and len(doc["ranks"]["rows"]) == 16
    # the CLI's entry point: every session merged from the same entries
    for s in discover(job):
        a = session_report(s, cache=cache)
        assert not any(h.error for h in a.report.hosts)
    (node,) = [s for s in discover(job) if s.run == "ddp_2x8_slow_node"]
    rep = session_report(node, cache=cache).report
    assert rep.findings[0].rule == "node_straggler" and len(rep.ranks.rows) == 16


def test_shard_argument_is_checked(job, capsys):
    from tb_gpu_advisor.cli import main as cli

    for bad in ("3/3", "1", "a/b", "0/0"):
        with pytest.raises(SystemExit):
            cli.main(["precompute", job, "--shard", bad])
        assert "--shard" in capsys.readouterr().err


def test_net_gbps_is_the_link_between_hosts_and_part_of_the_cache_key(tmp_path, monkeypatch, capsys):
    """A 32 MiB all-reduce across 2 nodes at 5.2 GB/s of bus bandwidth: slow against the default 25 GB/s per GPU,
    fine against a 6 GB/s network the user names; the two answers are cached apart."""
    import json

    from tb_gpu_advisor.cli import main as cli
    from tb_gpu_advisor.common.thresholds import ENV_NET_GBPS
    from tb_gpu_advisor.runtime.cache import session_key

    tt.write_run(str(tmp_path / "logs"), "ddp_2x8_slow_link", steps=6)
    # set through monkeypatch, so the value cli.main writes into os.environ is undone after the test
    monkeypatch.setenv(ENV_NET_GBPS, "25")
    cache = str(tmp_path / "cache")
    rules = []
    for extra in ([], ["--net-gbps", "6"]):
        assert cli.main(["report", str(tmp_path / "logs"), "--run", "ddp_2x8_slow_link", "--format", "json",
                         "--cache-dir", cache, *extra]) == 0
        rules.append({f["rule"] for f in json.loads(capsys.readouterr().out)["findings"]})
        keys = session_key(discover(str(tmp_path / "logs"))[0])
        rules[-1].add(keys.digest)
    assert "comm_bandwidth_low" in rules[0] and "comm_bandwidth_low" not in rules[1]
    assert not {r for r in rules[0] & rules[1] if len(r) == 64}  # the two cache keys differ
