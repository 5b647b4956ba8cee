"""An s3:// logdir against a real S3-compatible server (moto) on 127.0.0.1.

The server runs in-process on a free loopback port; ``S3_ENDPOINT`` points
at it, as users point it at MinIO or another S3-compatible store.
"""

from __future__ import annotations

import importlib.util
import os
import time

import pytest

# moto and boto3 are imported by the tests that use them (``s3_server.moto_endpoint``, ``_client``), not here:
# collection (every pytest-xdist worker, every module) paid their import, ~1.3 s of CPU, on the worker that never
# runs this file too
if importlib.util.find_spec("moto") is None or importlib.util.find_spec("boto3") is None:
    pytest.skip("moto with its server extra is needed: pip install 'moto[server]'", allow_module_level=True)

from tb_gpu_advisor.common import fsio  # noqa: E402
from tb_gpu_advisor.discover.logdir import discover, find_session, has_profiles  # noqa: E402
from tb_gpu_advisor.formats.xplane.reader import ProfileReadError, read_timeline  # noqa: E402
from tb_gpu_advisor.runtime.cache import ReportCache, session_key  # noqa: E402
from tests.support import simple_analyzer  # noqa: E402
from tests.support.profile_files import xspace_bytes  # noqa: E402
from tests.support.s3_server import moto_endpoint  # noqa: E402

BUCKET = "tbga-logs"
LOGDIR = f"s3://{BUCKET}/experiments/bert"
OBJECTS = {  # key below LOGDIR -> (host, event count) or raw bytes
    "train/events.out.tfevents.1700000000.w0": b"\0" * 16,
    "train/plugins/profile/2024_05_01_10_00_00/worker0.xplane.pb": ("worker0", 5),
    "train/plugins/profile/2024_05_01_10_00_00/worker1.xplane.pb": ("worker1", 9),
    "train/plugins/profile/2024_05_01_10_00_00/ALL_HOSTS.op_stats_v2.pb": b"stock cache",
    "train/plugins/profile/2024_04_01_10_00_00/worker0.xplane.pb": ("worker0", 2),
    "train/plugins/scalars/x.pb": b"other plugin",
    "eval/plugins/profile/2024_05_02_00_00_00/evalhost.xplane.pb": ("evalhost", 3),
    "plugins/profile/root_session/root.xplane.pb": ("root", 1),
}


def _client(endpoint_url: str):  # -> a boto3 S3 client
    """A boto3 S3 client of the server at ``endpoint_url``."""
    boto3 = pytest.importorskip("boto3")
    return boto3.client("s3", endpoint_url=endpoint_url)


@pytest.fixture(scope="module")
def s3_endpoint():
    yield from moto_endpoint()


@pytest.fixture
def s3_logdir(s3_endpoint, monkeypatch):
    """Environment as a user would set it (dummy credentials), and the logdir uploaded."""
    monkeypatch.setenv("S3_ENDPOINT", s3_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    client = _client(endpoint_url=s3_endpoint)
    client.create_bucket(Bucket=BUCKET)
    prefix = LOGDIR[len(f"s3://{BUCKET}/"):]
    for key, spec in OBJECTS.items():
        body = spec if isinstance(spec, bytes) else xspace_bytes(*spec)
        client.put_object(Bucket=BUCKET, Key=f"{prefix}/{key}", Body=body)
    client.put_object(Bucket=BUCKET, Key=f"{prefix}/train/plugins/profile/", Body=b"")  # a "folder" marker
    yield LOGDIR
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        for obj in page.get("Contents", []):
            client.delete_object(Bucket=BUCKET, Key=obj["Key"])
    client.delete_bucket(Bucket=BUCKET)


def test_discover_names_and_hosts(s3_logdir, caplog):
    sessions = discover(s3_logdir)
    assert sessions, f"nothing discovered; log: {caplog.text}"  # a listing failure is only logged
    assert [s.stock_run for s in sessions] == [
        "root_session", "eval/2024_05_02_00_00_00", "train/2024_05_01_10_00_00", "train/2024_04_01_10_00_00",
    ]
    multi = find_session(sessions, "train", "2024_05_01_10_00_00")
    assert multi.path == f"{LOGDIR}/train/plugins/profile/2024_05_01_10_00_00"
    assert [h.host for h in multi.hosts] == ["worker0", "worker1"]
    w1 = multi.hosts[1]
    assert w1.path == f"{LOGDIR}/train/plugins/profile/2024_05_01_10_00_00/worker1.xplane.pb"
    assert w1.size == len(xspace_bytes("worker1", 9))
    assert abs(w1.mtime_ns / 1e9 - time.time()) < 600  # S3 LastModified, not 0
    assert (w1.size, w1.mtime_ns) == fsio.stat(w1.path)
    assert has_profiles(s3_logdir)
    assert find_session(sessions, ".", "root_session").hosts[0].host == "root"


def test_read_timeline_from_s3(s3_logdir):
    (s,) = [s for s in discover(s3_logdir) if s.session == "2024_05_01_10_00_00"]
    tl = read_timeline(s.hosts[1].path)
    assert tl.host == "worker1" and tl.planes[0].num_events == 9 and tl.hostnames == ["worker1"]
    with pytest.raises(ProfileReadError, match="cannot open"):
        read_timeline(f"{LOGDIR}/train/plugins/profile/nope/missing.xplane.pb")


def test_empty_prefix_and_missing_bucket(s3_logdir):
    assert discover(f"s3://{BUCKET}/no/such/prefix") == []
    assert not has_profiles(f"s3://{BUCKET}/no/such/prefix")
    assert discover("s3://no-such-bucket-tbga/x") == []  # logged, not raised
    assert not has_profiles("s3://no-such-bucket-tbga/x")


def test_cache_for_s3_sessions(s3_logdir, tmp_path):
    cache = ReportCache(str(tmp_path / "cache"))
    s = find_session(discover(s3_logdir), "train", "2024_05_01_10_00_00")
    report = simple_analyzer.analyze_session(s.run, s.session, s.hosts)
    assert report.headline[0].value == 14.0
    cache.put(session_key(s), report)
    assert cache.get_dict(session_key(find_session(discover(s3_logdir), "train", s.session)))["headline"][0][
        "value"] == 14.0
    # the capture is uploaded again (same size, new LastModified): the old report must not be served
    time.sleep(1.1)  # LastModified has 1 s resolution
    client = _client(endpoint_url=os.environ["S3_ENDPOINT"])
    key = s.hosts[0].path[len(f"s3://{BUCKET}/"):]
    client.put_object(Bucket=BUCKET, Key=key, Body=xspace_bytes("worker0", 5))
    again = find_session(discover(s3_logdir), "train", s.session)
    assert again.hosts[0].size == s.hosts[0].size and again.hosts[0].mtime_ns > s.hosts[0].mtime_ns
    assert cache.get(session_key(again)) is None


def test_precompute_s3_logdir(s3_logdir, tmp_path):
    import io

    from tb_gpu_advisor.cli import precompute as pc

    cache = ReportCache(str(tmp_path / "cache"))
    summary = pc.precompute(s3_logdir, jobs=2, cache=cache, analyze_fn=simple_analyzer.analyze_session,
                            out=io.StringIO())
    assert summary.exit_code == 0 and summary.count("new") == 4
    sessions = discover(s3_logdir)
    assert sessions and all(cache.get(session_key(s)) for s in sessions)


def test_pytorch_traces_on_s3(s3_logdir, s3_endpoint):
    """PyTorch traces in an s3:// logdir: found in the same flat listing, grouped by worker, tagged kineto."""
    client = _client(endpoint_url=s3_endpoint)
    prefix = LOGDIR[len(f"s3://{BUCKET}/"):]
    def body(rank: int) -> bytes:  # ranks of one job say so (distributedInfo), read from the head of each object
        return b'{"distributedInfo": {"rank": %d, "world_size": 2}, "traceEvents": []}' % rank

    for i, key in enumerate(("torch/a_1.1795380384000000000.pt.trace.json", "torch/b_2.1795380385000000000.pt.trace.json",
                             "torch/plugins/profile/x/c_3.1.pt.trace.json")):  # below plugins/: not a run folder's trace
        client.put_object(Bucket=BUCKET, Key=f"{prefix}/{key}", Body=body(i))
    (s,) = [s for s in discover(s3_logdir) if s.run == "torch"]
    assert s.format == "kineto" and [h.host for h in s.hosts] == ["a_1", "b_2"]
    assert s.session == "2026_11_22_20_46_24" and s.hosts[0].path == f"{LOGDIR}/torch/a_1.1795380384000000000.pt.trace.json"
