"""xprof's streaming trace viewer JSON (tensorboard-plugin-profile 2.19 on, xprof 2.2x: the ``trace_viewer@`` tool)
read as the classic trace viewer JSON is.

The classic layout (TSL ``ConvertXSpaceToTraceEvents``: TF's ``<host>.trace.json.gz``, JAX's ``perfetto_trace.json.gz``)
names each process by its plane (``/host:CPU``, ``/device:GPU:0``).  xprof's streaming viewer
(``ConvertXSpaceToTraceEventsContainer`` then ``TraceEventsToJson``, openxla/xprof ``xprof/convert``) prints the same
events with each process named ``"<host> <plane>"``, the host plane at pid 701, its threads named ``<pool>/<n>``
grouped into one process per pool (``"vm Host Threads"``), sort-index metadata, ``"z"`` serials, counter series in
an ``entries`` form and new top-level keys.  Base read none of it: "a trace JSON whose processes are no planes of a
TensorFlow/JAX profile" (exit 2).

Truth: the real JAX sessions' own ``vm.trace.json.gz`` (the project's H200 ``jax_jit_inference``; the 11 H100 sessions
of ``../shared/profiles/real-h100-jax``, skipped where absent) re-laid by construction as the streaming viewer lays
them out (``synthetic.tfcapture.streaming_viewer_doc``, from xprof's source): the same steps and step time as the
classic JSON, and the host's threads back in its plane."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from synthetic.tfcapture import STREAMING_HOST_PID, streaming_viewer_doc
from tb_gpu_advisor.formats.xplane.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.paths import FIXTURES, SHARED_PROFILES

KEPT = FIXTURES / "h200_jobs" / "jax_jit_inference"
SHARED = sorted((SHARED_PROFILES / "real-h100-jax").glob("*/plugins/profile/*/vm.trace.json.gz"))


def _streamed(src: Path, root: Path) -> tuple[Path, dict]:
    doc = json.loads(gzip.open(src).read())
    out = root / src.parents[3].name / "plugins" / "profile" / "s" / "vm.trace.json.gz"
    out.parent.mkdir(parents=True)
    streamed = streaming_viewer_doc(doc, "vm")
    with gzip.open(out, "wt") as fp:
        json.dump(streamed, fp)
    return out, streamed


def _steps(path) -> tuple[int, list[float], int]:
    trace = read_trace(str(path))
    hm = host_metrics(trace)
    return hm.steps.count, [round(g.step_ms, 9) for g in hm.gpus if g.step_ms], len(trace.h.line_names)


def test_the_streaming_layout_reads_as_the_classic_json(tmp_path):
    """Fails on base (NotViewerJson: "processes are no planes").  8 steps of 482 us, every host thread kept."""
    (src,) = KEPT.glob("plugins/profile/*/vm.trace.json.gz")
    out, streamed = _streamed(src, tmp_path)
    names = {e["args"]["name"] for e in streamed["traceEvents"] if e.get("name") == "process_name"}
    assert names == {"vm /device:GPU:0", "vm /host:CPU", "vm Host Threads"}  # the layout as xprof writes it
    assert any(e.get("pid") == STREAMING_HOST_PID + 1 for e in streamed["traceEvents"] if e.get("ph") == "X")
    count, step_ms, lines = _steps(out)
    assert (count, step_ms, lines) == _steps(src)
    assert count == 8 and step_ms[0] == pytest.approx(0.482, abs=5e-4)
    assert read_trace(str(out)).host == "vm"


def _events(path) -> tuple:
    """Every host and device event of the trace read: names, threads, start and end (ps)."""
    t = read_trace(str(path))
    host = sorted(zip([t.h.names[i] for i in t.h.name], [t.h.line_names[i] for i in t.h.line], t.h.start.tolist(),
                      t.h.end.tolist()))
    return host, [(d.start.tolist(), d.end.tolist()) for d in t.devices]


@pytest.mark.skipif(not SHARED, reason="../shared/profiles/real-h100-jax (the real H100 JAX sessions) is absent")
def test_every_real_h100_jax_session_streamed_reads_as_its_json(tmp_path):
    """Fails on base (every one unread).  Each session's JSON under 1 MB (9 of the 11; ``gpt_big`` and
    ``launch_bound_eager`` hold 1.7-2.4 MB and read the same way): every host event on its thread and every device
    event at the classic JSON's times, to the picosecond (score_real: 11/11 streamed, 0/11 on base)."""
    small = [src for src in SHARED if src.stat().st_size < 1 << 20]
    got = {src.parents[3].name: _events(_streamed(src, tmp_path)[0]) == _events(src) for src in small}
    assert len(got) == 9 and all(got.values()), got


def test_a_process_of_another_host_is_not_taken_for_a_pool(tmp_path):
    """A process named for no plane and for no host of a plane (another tool's) stays out (fails on base: unread)."""
    (src,) = KEPT.glob("plugins/profile/*/vm.trace.json.gz")
    doc = streaming_viewer_doc(json.loads(gzip.open(src).read()), "vm")
    doc["traceEvents"] += [{"args": {"name": "other-host Python"}, "name": "process_name", "ph": "M", "pid": 9000},
                           {"pid": 9000, "tid": 1, "ts": 1.0, "dur": 5.0, "name": "stray", "ph": "X"}]
    out = tmp_path / "run" / "plugins" / "profile" / "s" / "vm.trace.json.gz"
    out.parent.mkdir(parents=True)
    with gzip.open(out, "wt") as fp:
        json.dump(doc, fp)
    trace = read_trace(str(out))
    assert "stray" not in set(trace.h.names)


@pytest.mark.parametrize("streamed", [False, True], ids=["classic", "streaming"])
def test_a_tpu_plane_gets_tpu_words_never_cuda_advice(tmp_path, capsys, streamed):
    """The real H200 JSON with its device plane named as a TPU's (``/device:TPU:0``; xprof prints a TPU capture's
    planes so where it has no GPU plane): the report says the work ran on a TPU and gives the accelerator's own tools,
    never a CUDA or GPU fix.  The classic layout is a control (base says the same); the streaming one fails on base
    (unread)."""
    from tb_gpu_advisor.cli.main import main as cli

    (src,) = KEPT.glob("plugins/profile/*/vm.trace.json.gz")
    doc = json.loads(gzip.open(src).read())
    for e in doc["traceEvents"]:
        if e.get("name") == "process_name" and e["args"]["name"] == "/device:GPU:0":
            e["args"]["name"] = "/device:TPU:0"
    if streamed:
        doc = streaming_viewer_doc(doc, "vm")
    out = tmp_path / "run" / "plugins" / "profile" / "s" / "vm.trace.json.gz"
    out.parent.mkdir(parents=True)
    with gzip.open(out, "wt") as fp:
        json.dump(doc, fp)
    assert cli(["report", str(tmp_path / "run"), "--format", "json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)["reports"]
    (top, *rest) = report["findings"]
    assert top["rule"] == "capture_quality" and "ran on TPU" in top["summary"]
    said = json.dumps(report["findings"])
    assert "CUDA" not in said and "Nsight" not in said and "nsys" not in said and "nvidia-smi" not in said
