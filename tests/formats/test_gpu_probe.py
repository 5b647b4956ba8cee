"""gpu_probe: "has GPU activity" from plane headers, for /runs (the tab opens on the newest GPU session)."""

from __future__ import annotations

import argparse
import json
import os

from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from tb_gpu_advisor.discover import logdir as discovery
from tb_gpu_advisor.formats import probe as gpu_probe
from tb_gpu_advisor.formats.xplane.schema import message_class
from tb_gpu_advisor.serve import plugin as plugin_mod
from tb_gpu_advisor.serve.service import ReportService
from tests.support import profile_files
from tests.support.paths import REPO

REPO = str(REPO)
DEMO = os.path.join(REPO, "demo_logs")


def space(*planes: tuple[str, bool], metadata_first: bool = False) -> bytes:
    """An XSpace with planes (name, has a line); ``metadata_first`` writes a plane's event metadata before its lines."""
    sp = message_class("XSpace")()
    for i, (name, lines) in enumerate(planes):
        p = sp.planes.add()
        p.id = i + 1
        p.name = name
        e = p.event_metadata.add()
        e.key = 1
        e.value.id = 1
        e.value.name = "k" * 40
        if lines:
            line = p.lines.add()
            line.id = 1
            ev = line.events.add()
            ev.metadata_id = 1
            ev.duration_ps = 1000
    sp.hostnames.append("worker0")
    raw = sp.SerializeToString()
    if not metadata_first:
        return raw
    # rewrite each plane as id, name, event_metadata (4), lines (3): some writers use this order
    out = b""
    for p in sp.planes:
        fields = [(1, message_class("XPlane")(id=p.id)), (2, message_class("XPlane")(name=p.name))]
        meta = message_class("XPlane")()
        meta.event_metadata.extend(p.event_metadata)
        lines = message_class("XPlane")()
        lines.lines.extend(p.lines)
        body = b"".join(m.SerializeToString() for _, m in fields) + meta.SerializeToString() + lines.SerializeToString()
        out += b"\x0a" + _varint(len(body)) + body
    return out


def _varint(n: int) -> bytes:
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def write(tmp_path, name: str, data: bytes) -> str:
    path = os.path.join(tmp_path, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def test_gpu_plane_with_lines_is_activity(tmp_path):
    assert gpu_probe.file_has_gpu_activity(write(tmp_path, "a", space(("/host:CPU", True), ("/device:GPU:0", True)))) is True
    assert gpu_probe.file_has_gpu_activity(write(tmp_path, "b", space(("/host:CPU", True), ("/device:GPU:3", True), metadata_first=True))) is True


def test_cpu_only_and_idle_gpu_planes_are_not(tmp_path):
    assert gpu_probe.file_has_gpu_activity(write(tmp_path, "a", space(("/host:CPU", True)))) is False
    # a GPU plane without lines (device capabilities only, CUPTI gave no events)
    assert gpu_probe.file_has_gpu_activity(write(tmp_path, "b", space(("/host:CPU", True), ("/device:GPU:0", False)))) is False
    assert gpu_probe.file_has_gpu_activity(write(tmp_path, "c", space(("/device:GPU:0_extra", True)))) is False
    assert gpu_probe.file_has_gpu_activity(write(tmp_path, "d", profile_files.xspace_bytes())) is False


def test_unreadable_truncated_and_remote_files_are_unknown(tmp_path):
    full = space(("/host:CPU", True), ("/device:GPU:0", True))
    assert gpu_probe.file_has_gpu_activity(write(tmp_path, "t", full[: len(full) // 2])) is None
    assert gpu_probe.file_has_gpu_activity(write(tmp_path, "g", b"\xff" * 64)) is None
    assert gpu_probe.file_has_gpu_activity(str(tmp_path / "missing")) is None
    assert gpu_probe.file_has_gpu_activity("s3://bucket/run/plugins/profile/s/h.xplane.pb") is None
    assert gpu_probe.file_has_gpu_activity(write(tmp_path, "e", b"")) is False


def test_demo_logs_cpu_captures_are_told_apart():
    got = gpu_probe.session_activity(discovery.discover(DEMO))
    assert got[("real_tf_cpu_custom", "2026_11_21_11_26_13")] is False
    assert got[("real_tf_cpu_keras/train", "2026_11_21_11_26_13")] is False
    assert got[("launch_bound", "2026_01_01_00_00_00")] is True
    assert got[("multi_host", "2026_01_01_00_00_00")] is True


def test_budget_leaves_the_rest_unknown_newest_first(tmp_path):
    old = profile_files.write_profile(str(tmp_path), "old", "s1", "h")
    new = profile_files.write_profile(str(tmp_path), "new", "s1", "h")
    with open(new, "wb") as f:
        f.write(space(("/device:GPU:0", True)))
    os.utime(old, (1_000, 1_000))
    os.utime(new, (2_000, 2_000))
    ticks = iter([0.0, 0.0, 5.0, 5.0, 5.0])  # deadline from the first tick; the second file is past it
    got = gpu_probe.session_activity(discovery.discover(str(tmp_path)), budget_s=1.0, clock=lambda: next(ticks))
    assert got == {("new", "s1"): True, ("old", "s1"): None}
    # cached answers cost no budget
    got = gpu_probe.session_activity(discovery.discover(str(tmp_path)), budget_s=0.0)
    assert got[("new", "s1")] is True


def test_runs_route_carries_has_gpu(tmp_path):
    profile_files.write_profile(str(tmp_path), "cpu", "2024_01_02_00_00_00", "h")
    gpu = profile_files.write_profile(str(tmp_path), "gpu", "2024_01_01_00_00_00", "h")
    with open(gpu, "wb") as f:
        f.write(space(("/host:CPU", True), ("/device:GPU:0", True)))
    ctx = base_plugin.TBContext(logdir=str(tmp_path), flags=argparse.Namespace(gpu_advisor_cache_dir=None))
    plugin = plugin_mod.GpuAdvisorPlugin(ctx, analyzer=lambda *a, **k: None, service=ReportService())
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    body = json.loads(client.get("/data/plugin/gpu_advisor/runs").get_data())
    has = {r["run"]: [s["has_gpu"] for s in r["sessions"]] for r in body["runs"]}
    assert has == {"cpu": [False], "gpu": [True]}


def _kineto_activity(path: str) -> bool:
    """Whether the PyTorch reader finds a kernel or copy in the file: what the probe must agree with."""
    from tb_gpu_advisor.formats.kineto import adapter

    return any(len(d.kind) > 0 for d in adapter.read_trace(path).devices)  # kernels, copies, collectives


def test_kineto_probe_agrees_with_the_reader_on_old_and_new_categories(tmp_path):
    """PyTorch 1.8-1.10 write ``"cat": "Kernel"`` (the wild-torch V100 sessions): the probe said no GPU there, so
    ``/runs`` and MCP ``list_runs`` gave ``has_gpu: false`` for 5,846 kernels (issue #36 item 4)."""
    from tb_gpu_advisor.formats.kineto import probe as kineto_probe

    base = {"ph": "X", "pid": 0, "tid": 7, "ts": 1_000, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": 1}}
    for cat, gpu in (("Kernel", True), ("kernel", True), ("Memcpy", True), ("Operator", False)):
        doc = {"schemaVersion": 1, "traceEvents": [
            {"ph": "X", "cat": "Operator" if cat[0].isupper() else "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
             "ts": 990, "dur": 20, "args": {}},
            dict(base, cat=cat, name="volta_sgemm_128x64_nn" if cat != "Memcpy" else "Memcpy HtoD")]}
        path = tmp_path / f"w.{cat}.pt.trace.json"
        path.write_text(json.dumps(doc, indent=1))
        assert kineto_probe.has_gpu_activity(str(path)) is gpu == _kineto_activity(str(path)), cat


def test_wild_torch_sessions_have_gpu():
    """The real wild-torch traces (../shared), through the listing the tab and MCP read."""
    import pytest

    from tests.support.paths import REPO as ROOT

    wild = ROOT.parent / "shared" / "profiles" / "wild-torch"
    if not wild.exists():
        pytest.skip(f"{wild} not present")
    got = gpu_probe.session_activity(discovery.discover(str(wild)), budget_s=120.0)  # no time budget under load
    assert got and all(v is True for v in got.values()), got
