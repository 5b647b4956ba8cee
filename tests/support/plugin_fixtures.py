"""Report objects built from the schema, used as TEST DATA for the plugin and the frontend.

The served plugin always calls the real ``analyze_session``; these reports
only let the routes and the rendering be tested without a profile. They
deliberately carry hostile text (``<script>`` kernel names) so escaping is
exercised everywhere.

``python -m tests.support.plugin_fixtures`` rewrites ``frontend/test/fixtures/report.json`` (and report_text.json: the
CLI's text and markdown of that report, whose numbers the tab must print alike; diff.json, window.json, legend.json:
what ``/runs`` serves as its ``legend``);
``test_plugin_backend.py`` checks the committed file matches this module,
so the frontend tests follow schema changes.
"""

from __future__ import annotations

import json
import os
import sys

from tb_gpu_advisor.model import schema as rs
from tb_gpu_advisor.report.view import display
from tb_gpu_advisor.rules.savings import achievable
from tests.support.paths import REPO

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
FIXTURE_PATH = os.path.join(str(REPO), "frontend", "test", "fixtures", "report.json")
REPORT_TEXT_FIXTURE_PATH = os.path.join(str(REPO), "frontend", "test", "fixtures", "report_text.json")
DIFF_FIXTURE_PATH = os.path.join(str(REPO), "frontend", "test", "fixtures", "diff.json")
MEMORY_DIFF_FIXTURE_PATH = os.path.join(str(REPO), "frontend", "test", "fixtures", "diff_memory.json")
WINDOW_FIXTURE_PATH = os.path.join(str(REPO), "frontend", "test", "fixtures", "window.json")
LEGEND_FIXTURE_PATH = os.path.join(str(REPO), "frontend", "test", "fixtures", "legend.json")
PASS_FIXTURE_PATH = os.path.join(str(REPO), "frontend", "test", "fixtures", "pass.json")
#: A real capture read as one pass (no step marked: ``steps.source`` ``single_pass``), 25 kB of gzip.
PASS_CAPTURE = os.path.join(str(REPO), "tests", "fixtures", "wild", "cold_a100_alexnet")
DEMO = os.path.join(str(REPO), "demo_logs")


def _metric(mid: str, label: str, value: float, unit: str, display: str, good: str, status: str, meaning: str, threshold: float | None = None) -> rs.Metric:
    return rs.Metric(mid, label, value, unit, display, good, status, meaning, threshold)


def headline() -> list[rs.Metric]:
    """The guide's four headline numbers (ids as the rules engineer names them may differ; the UI only reads fields)."""
    return [
        _metric("device_compute_share", "Device step-time share", 0.42, "share", "42.0%", "higher", "critical",
                "Share of the step the GPU spends computing; the rest is waiting.", 0.8),
        _metric("launch_wait_share", "Idle waiting for kernel launch", 0.31, "share", "31.0%", "lower", "critical",
                "Share of the step the GPU sat idle while the host launched kernels.", 0.1),
        _metric("host_op_share", "Ops on host", 0.04, "share", "4.0%", "lower", "good",
                "Share of op time placed on the CPU instead of the GPU.", 0.1),
        _metric("fp16_kernel_share", "fp16 / Tensor Core kernels", 0.0, "share", "0.0%", "higher", "warning",
                "Share of kernel time in half-precision or Tensor Core kernels.", 0.5),
    ]


def finding(host: str = "worker0") -> rs.Finding:
    return rs.Finding(
        id=f"launch_bound:{host}:0",
        rule="launch_bound",
        severity="critical",
        title="GPU waits for kernel launches: many tiny kernels",
        summary=f"Kernels average 6.1 us while launching takes 20-40 us; kernel {HOSTILE} dominates.",
        guide_section="1.2.2 Small GPU kernels and host kernel-launch delay",
        metric=headline()[1],
        saving=rs.Saving(ms_per_step=12.4, percent_of_step=31.0, assumption="launch gaps shrink to 10% of the step",
                         recovers=[{"group": "launch", "pool": "launch", "ms": 12.4}]),
        evidence=[rs.Table("Smallest frequent kernels", ["kernel", "count/step", "mean us"],
                           [[HOSTILE, 4200, 6.1], ["Mul_GPU_DT_FLOAT", 3100, 5.2]])],
        windows=[rs.TimeWindow(host=host, label="step 3", start_ms=120.0, end_ms=160.0, gpu=0, step=3)],
        actions=[rs.Action("Fuse small ops with XLA.", "@tf.function(jit_compile=True)\ndef train_step(x):\n    ...", "python"),
                 rs.Action("Use a larger batch so each kernel does more work.")],
        host=host,
        gpu=0,
    )


def second_finding(host: str = "worker0") -> rs.Finding:
    return rs.Finding(
        id="input_bound", rule="input_bound", severity="warning", title="Input pipeline stalls the GPU",
        summary="The GPU waits for input 8% of each step.", guide_section="1.1 Input pipeline",
        saving=rs.Saving(3.2, 8.0, "input wait removed", [{"group": "input", "pool": "input", "ms": 3.2}]),
        actions=[rs.Action("Prefetch input.", "dataset = dataset.prefetch(tf.data.AUTOTUNE)", "python"),
                 rs.Action("Launch kernels from private threads.", "export TF_GPU_THREAD_MODE=gpu_private", "shell")],
        host=host,
    )


def merged_second_finding(hosts: tuple[str, ...]) -> rs.Finding:
    """``second_finding`` as the session report has it when every host has it: one finding, ``hosts`` listed
    (``merge.merge_findings``), evidence with a host column, windows from every host."""
    f = second_finding(hosts[0])
    f.host = None
    f.hosts = list(hosts)
    f.summary += f" (Numbers from {hosts[0]}; the same finding on {', '.join(hosts[1:])}.)"
    f.saving = rs.Saving(3.2, 8.0, "input wait removed; session saving = mean over the hosts weighted by their kept steps",
                         [{"group": "input", "pool": "input", "ms": 3.2}])
    f.evidence = [rs.Table("Input wait per host", ["host", "ms/step"], [[h, 3.2] for h in hosts])]
    f.windows = [rs.TimeWindow(host=h, label="input wait, step 2", start_ms=80.0, end_ms=120.0, step=2) for h in hosts]
    return f


def gpu_memory(steps: int = 6) -> dict:
    """``GpuSummary.memory`` (schema 1.3) of a training GPU: a saw-tooth over the steps (activations made in the forward
    pass, freed in the backward), the peak in step 3, the ops holding it (one named with hostile text), and the OOM a
    snapshot would add."""
    held, act, cap = 12 << 30, 6 << 30, 40 << 30
    t, alloc, res = [], [], []
    for i in range(steps):
        for k, frac in enumerate((0.0, 0.5, 1.0, 0.4, 0.0)):
            t.append(i * 40.0 + 2.0 + k * 8.0)
            a = held + int(act * frac * (1.25 if i == 3 else 1.0))
            alloc.append(a)
            res.append(held + int(act * 1.25) + (256 << 20))
    peak = max(alloc)
    return {"source": "PyTorch [memory] events (profile_memory=True)", "baseline": "absolute", "events": len(t),
            "peak_allocated_bytes": peak, "peak_reserved_bytes": max(res), "capacity_bytes": cap,
            "capacity_source": "device memory", "peak_ms": t[alloc.index(peak)], "peak_step": 3,
            "peak_step_offset_ms": 18.0, "peak_step_share": 0.45, "start_bytes": held, "gap_bytes": max(res) - peak,
            "reserved_changes_per_step": 0.0, "breakdown": {"held": held, "activations": peak - held},
            "top": [["aten::addmm", "activations", (peak - held) // 2, 12], [HOSTILE, "activations", (peak - held) // 2, 12]],
            "step_peaks": [[i, held + act, held + act, held] for i in range(steps)],
            "timeline": {"t_ms": t, "allocated": alloc, "reserved": res}, "note": "",
            "ooms": [{"requested_bytes": 2 << 30, "device_free_bytes": 1 << 30, "allocated_bytes": peak,
                      "reserved_bytes": max(res), "frames": [f"model.py:58 forward {HOSTILE}"], "at_ms": 130.0,
                      "live": [[peak - held, "activations", ["model.py:58 forward"]]],
                      "by_category": {"activations": peak - held, "held": held}}]}


def memory_finding(host: str = "worker0") -> rs.Finding:
    """A memory finding (schema 1.3): its saving in bytes, its window the step of the peak."""
    return rs.Finding(
        id=f"activation_memory:{host}", rule="activation_memory", severity="warning",
        title="Activations are most of the memory peak: recompute them (activation checkpointing)",
        summary="At its memory peak GPU 0 holds 7.50 GiB of activations kept for the backward pass.",
        guide_section="§2 item 1", saving_bytes=5637144576,
        actions=[rs.Action("Recompute activations in the backward pass.", "x = checkpoint(block, x, use_reentrant=False)",
                           "python")],
        windows=[rs.TimeWindow(host=host, label="memory peak, GPU 0 (19.5 GiB at 138 ms)", start_ms=120.0, end_ms=160.0,
                               gpu=0, step=3)],
        host=host)


def host_report(host: str = "worker0", steps: int = 6) -> rs.HostReport:
    rows = []
    for i in range(steps):
        b = {"device_compute": 17.0 + i % 2, "launch_wait": 12.4, "input_wait": 3.2, "host_compute": 1.0,
             "memcpy_h2d": 0.8, "memcpy_d2h": 0.2, "memcpy_d2d": 0.0, "collectives": 0.0, "other": 5.4}
        rows.append(rs.StepRow(step=i, start_ms=i * 40.0, step_ms=sum(b.values()), breakdown=b))
    return rs.HostReport(
        host=host, path=f"/logs/run/plugins/profile/s/{host}.xplane.pb", size_bytes=123456,
        capture={"length_ms": 240.0, "steady_state": True},
        steps={"source": "step_markers", "count": steps, "dropped": 0, "note": ""},
        headline=headline(),
        breakdown_ms=dict(rows[0].breakdown),
        step_rows=rows,
        gpus=[rs.GpuSummary(0, "NVIDIA A100-SXM4-40GB", "8.0", 40.0, 0.42, 25200, 1.0, 0.0, memory=gpu_memory(steps)),
              rs.GpuSummary(1, "NVIDIA A100-SXM4-40GB", "8.0", 41.5, 0.35, 25100, 1.0, 1.8)],
        kernels=rs.Table("Top kernels", ["kernel", "count", "total ms"], [[HOSTILE, 4200, 25.6]]),
        kernel_durations_us={"edges_us": [1, 2, 5, 10, 20, 40, 100, 1000], "counts": [10, 400, 3000, 900, 60, 30, 5]},
        findings=(fs := [finding(host), second_finding(host), memory_finding(host)]),
        achievable=achievable(sum(rows[0].breakdown.values()), rows[0].breakdown, fs),
    )


def report(run: str = "run1", session: str = "2024_01_01_00_00_00", hosts: tuple[str, ...] = ("worker0",)) -> rs.Report:
    host_reports = [host_report(h) for h in hosts]
    findings = [f for hr in host_reports for f in hr.findings if len(hosts) < 2 or f.rule != "input_bound"]
    if len(hosts) > 1:  # merged over hosts, as merge.merge_findings does; launch_bound kept per host and GPU
        findings.append(merged_second_finding(hosts))
    findings.sort(key=lambda f: -(f.saving.ms_per_step if f.saving else 0))
    out = rs.Report(run=run, session=session, hosts=host_reports, findings=findings, headline=headline(),
                    healthy=False, analyzer_version="test", generated_at="2024-01-01T00:00:00Z",
                    notes=[f"note with {HOSTILE}"], achievable=dict(host_reports[0].achievable))
    out.display = display(out)  # as merge_hosts writes it: the tab prints these texts
    return out


def fixture_json() -> str:
    return json.dumps(report(hosts=("worker0", "worker1")).to_dict(), indent=1, sort_keys=True) + "\n"


def report_text_fixture_json() -> str:
    """The CLI's text and markdown of the report of ``fixture_json`` (every finding, every evidence row): the frontend
    tests check each number the tab prints of it reads the same there."""
    from tb_gpu_advisor.report import render

    r = report(hosts=("worker0", "worker1"))
    doc = {"text": render.to_text(r, top=None, evidence_rows=1000),
           "markdown": render.to_markdown(r, top=None, evidence_rows=1000)}
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def diff_fixture_json() -> str:
    """A real diff: the demo pair input_bound -> input_bound_fixed (analysed now), with a hostile base label and
    the volatile fields pinned, so the committed file only changes when the analysis or the schema does."""
    from tb_gpu_advisor.discover import logdir as discovery
    from tb_gpu_advisor.report.diff import diff_reports
    from tb_gpu_advisor.runtime import pipeline

    sessions = {s.run: s for s in discovery.discover(DEMO)}
    base, new = (pipeline.analyze_session(x.run, x.session, x.hosts) for x in (sessions["input_bound"], sessions["input_bound_fixed"]))
    d = diff_reports(base, new, base_label=f"input_bound {HOSTILE}", new_label="input_bound_fixed/2026_01_01_00_00_00")
    d.generated_at, d.analyzer_version = "2024-01-01T00:00:00Z", "test"
    d.base.analyzer_version = d.new.analyzer_version = "test"
    return json.dumps(d.to_dict(), indent=1, sort_keys=True) + "\n"


def memory_diff_fixture_json() -> str:
    """A real diff of two memory snapshots (issue #37 item 5): the same forward-only job with autograd on and under
    inference mode (``synthetic.memsnapshot.forward_only``, truth by construction), as ``tb-gpu-advisor diff --format
    json`` writes it, the volatile fields pinned."""
    import tempfile

    from synthetic import memsnapshot
    from tb_gpu_advisor.cli import main as cli

    with tempfile.TemporaryDirectory() as tmp:
        paths = [memsnapshot.write(os.path.join(tmp, f"{name}.pickle"), memsnapshot.forward_only(grad=grad).doc)
                 for name, grad in (("forward_autograd", True), ("forward_inference", False))]
        out = os.path.join(tmp, "diff.json")
        assert cli.main(["diff", *paths, "--format", "json", "--cache-dir", "off", "-o", out]) == 0
        with open(out, encoding="utf-8") as f:
            d = json.load(f)
    for side, name in (("base", "forward_autograd"), ("new", "forward_inference")):
        d[side].update(label=f"{name}.pickle", session="2024_01_01_00_00_00_snapshot", analyzer_version="test")
    d["generated_at"], d["analyzer_version"] = "2024-01-01T00:00:00Z", "test"
    return json.dumps(d, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def window_fixture_json() -> str:
    """A real step timeline (``/window``): the demo ``input_bound`` finding's first window, read now, with one
    event and one thread renamed to hostile text (the drawing must keep them text)."""
    from tb_gpu_advisor.discover import logdir as discovery
    from tb_gpu_advisor.runtime import pipeline

    session = next(s for s in discovery.discover(DEMO) if s.run == "input_bound")
    report = pipeline.analyze_session(session.run, session.session, session.hosts)
    w = next(f for f in report.findings if f.rule == "input_bound").windows[0]
    t = pipeline.host_timelines(session.hosts[0], [(w.start_ms, w.end_ms)])[0]
    host_lane = next(lane for lane in t["lanes"] if lane["kind"] == "host")
    host_lane["label"] = f"thread {HOSTILE}"
    t["lanes"][0]["events"][0][2] = HOSTILE
    t["window"] = {"host": w.host, "label": w.label, "start_ms": w.start_ms, "end_ms": w.end_ms, "gpu": w.gpu, "step": w.step}
    return json.dumps(t, indent=1, sort_keys=True) + "\n"


def pass_fixture_json() -> str:
    """A real one-pass capture as the tab gets it (``wild/cold_a100_alexnet``: one pass, no step marked): its host as
    ``/report`` serves it (``host``, its ``display`` as ``shown``), the step timeline of its pass (``window``, its
    events left out: the axis and the host line are what the tab names the pass on) and a finding with windows on the
    pass (``finding``: its "Show ..." buttons)."""
    from tb_gpu_advisor.discover import logdir as discovery
    from tb_gpu_advisor.runtime import pipeline

    (session,) = [s for s in discovery.discover(os.path.dirname(PASS_CAPTURE)) if s.run == os.path.basename(PASS_CAPTURE)]
    doc = pipeline.analyze_session(session.run, session.session, session.hosts).to_dict()
    host, shown = doc["hosts"][0], doc["display"]["hosts"][0]
    row = host["step_rows"][0]
    t = pipeline.host_timelines(session.hosts[0], [(row["start_ms"] - 1.0, row["start_ms"] + row["step_ms"] + 1.0)])[0]
    t["lanes"], t["idle"], t["display"]["lanes"], t["display"]["idle"] = [], [], [], []
    keep = {k: host[k] for k in ("host", "capture", "steps", "gpus", "step_rows")}
    # the first finding with a trace window on the pass: its buttons' names (h37-words22), as /report serves it
    k = next(i for i, f in enumerate(doc["findings"]) if f["windows"])
    f, said = doc["findings"][k], doc["display"]["findings"][k]
    finding = {"rule": f["rule"], "windows": f["windows"],
               "shown": {"windows": said["windows"], "window_names": said["window_names"]}}
    return json.dumps({"host": keep, "shown": {"one_pass": shown["one_pass"], "steps": shown["steps"]}, "window": t,
                       "finding": finding}, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def legend_fixture_json() -> str:
    """The server's legend (``report.legend``: categories, idle kinds, rule waits, diff groups, settings), as
    ``/runs`` serves it: the frontend tests draw with it, so a category or rule added on the server reaches them."""
    from tb_gpu_advisor.report.legend import legend

    return json.dumps(legend(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    os.makedirs(os.path.dirname(FIXTURE_PATH), exist_ok=True)
    for path, text in ((FIXTURE_PATH, fixture_json()), (REPORT_TEXT_FIXTURE_PATH, report_text_fixture_json()),
                       (DIFF_FIXTURE_PATH, diff_fixture_json()),
                       (MEMORY_DIFF_FIXTURE_PATH, memory_diff_fixture_json()),
                       (WINDOW_FIXTURE_PATH, window_fixture_json()), (LEGEND_FIXTURE_PATH, legend_fixture_json()),
                       (PASS_FIXTURE_PATH, pass_fixture_json())):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        sys.stdout.write(f"wrote {os.path.normpath(path)}\n")
