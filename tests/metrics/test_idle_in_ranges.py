"""The host-bound finding names the program's own ranges that hold the GPU's idle time (issue #37 leftovers: it said
"the host's own work" and not where in the user's code to look).

The truth is read off the real file here, independently of the Advisor's ledger: per ``ProfilerStep``, the GPU's idle
stretches (the step less the union of its kernels, copies and memsets), and the time of them inside each outermost
``user_annotation`` below the step on the thread that runs the steps.  ``wild/ddp_a100_nccl`` is a 2-rank DDP ResNet
whose training loop marks ``## forward ##``, ``## backward ##`` and ``## optimizer ##`` with ``record_function``.
"""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from synthetic import nsysexport as nx
from synthetic import torchtrace as tt
from synthetic.nsysexport import NsysJob
from tb_gpu_advisor.formats import read
from tb_gpu_advisor.rules import evaluate
from tb_gpu_advisor.runtime.pipeline import host_metrics
from tests.support.intervals import idle_within, union
from tests.support.paths import FIXTURES

DDP = FIXTURES / "wild" / "ddp_a100_nccl"


@functools.cache
def _metrics():
    (path,) = DDP.glob("*.json.gz")
    return host_metrics(read(SimpleNamespace(host="rank0", path=str(path), format="kineto")))


def _truth() -> dict[str, float]:
    """Range name -> ms of GPU idle per step inside it, from the raw events."""
    (path,) = DDP.glob("*.json.gz")
    ev = [e for e in json.loads(gzip.decompress(path.read_bytes()))["traceEvents"] if e.get("ph") == "X"]
    busy = union([(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")])
    steps = [e for e in ev if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
    tid = steps[0]["tid"]
    ann = sorted((e["ts"], -e["dur"], e["name"]) for e in ev if e.get("cat") == "user_annotation"
                 and e["tid"] == tid and not e["name"].startswith("ProfilerStep#"))
    outer, end = [], float("-inf")
    for s, d, name in ann:
        if s >= end:
            outer.append((s, s - d, name))
            end = s - d
    total: dict[str, float] = {}
    for st in steps:
        a, b = st["ts"], st["ts"] + st["dur"]
        idle = idle_within(busy, a, b)
        for s, e, name in outer:
            ov = sum(max(0.0, min(e, y) - max(s, x)) for x, y in idle)
            total[name] = total.get(name, 0.0) + ov / 1e3 / len(steps)
    return total


def test_the_ranges_holding_the_gpus_idle_time_are_named_with_their_time():
    """On main the metric did not exist and the finding named no range of the user's code."""
    m = _metrics()
    truth = _truth()
    got = dict(m.idle_in_ranges)
    assert [n for n, _ in m.idle_in_ranges] == sorted(truth, key=lambda n: -truth[n])[:3]
    for name, v in got.items():
        assert v == pytest.approx(truth[name], rel=0.02), (name, v, truth[name])
    # outermost ranges of one thread: never more than the GPU's idle time in the step
    assert sum(got.values()) <= m.headline.avg_step_ms - m.breakdown.device_compute


def test_the_host_bound_finding_says_where_in_the_users_code_to_look():
    (f,) = [f for f in evaluate(_metrics()) if f.rule == "unexplained_idle"]
    assert "`## forward ##`" in f.summary and "`## backward ##`" in f.summary
    (tab,) = [t for t in f.evidence if "ranges" in t.title]
    assert tab.rows[0][0] == "## forward ##"


def _template_truth(job: NsysJob) -> dict[str, float]:
    """Range name -> ms of GPU idle per step inside it, by construction: one step of the generator's schedule (ns from
    the step's start), the GPU's kernels and copies against the user's ``extra_ranges``, inside the step's range."""
    ev = nx._step_template(job, 0, nx._Strings())
    period = ev["period"][0]
    busy = union([(a, b) for a, b, *_ in ev["kernel"] + ev["memcpy"]])
    idle, t = [], 0
    for s, e in busy:
        if s > t:
            idle.append((t, min(s, period - 2000)))
        t = max(t, e)
    idle.append((t, period - 2000))  # the step's range ends 2 us before the next step
    ranges = [(a, b, name) for a, b, name in ev["nvtx"] if name in job.extra_ranges]
    return {name: sum(max(0, min(b, y) - max(a, x)) for x, y in idle) / 1e6 for a, b, name in ranges}


def test_an_nsight_launch_bound_loop_names_the_users_nvtx_ranges(tmp_path):
    """A launch-bound loop marked ``forward`` / ``backward`` by NVTX inside each ``train_step``: the step's own range is
    no answer, its two halves are, with the GPU idle time the schedule puts in each."""
    job = NsysJob(steps=12, ops=20, kernel_us=5.0, launch_us=100.0, h2d_us=50.0, extra_ranges=("forward", "backward"))
    path = tmp_path / "loop.sqlite"
    nx.write(str(path), job)
    m = host_metrics(read(SimpleNamespace(host="h", path=str(path), format="nsys")))
    truth = _template_truth(job)
    got = dict(m.idle_in_ranges)
    assert set(got) == {"forward", "backward"}
    for name, v in got.items():
        assert v == pytest.approx(truth[name], rel=0.03), (name, v, truth[name])
    (f,) = [f for f in evaluate(m) if f.rule == "launch_bound"]
    assert "`forward`" in f.summary and "`backward`" in f.summary


def test_the_step_gaps_finding_names_the_users_range_in_the_gaps(tmp_path):
    """A vLLM worker (generator ``serving_decode``: no ProfilerStep, steps from its engine loop) whose 9 ms of Python
    input preparation between decode steps is wrapped in ``record_function("prepare inputs")``, by construction the
    same span as the ``_prepare_inputs`` Python frame: the gap finding names the range, with the range's time."""
    (path,) = tt.write_run(str(tmp_path), "serving_decode", steps=8)
    data = json.loads(Path(path).read_text())
    prep = [e for e in data["traceEvents"] if e.get("name", "").endswith("_prepare_inputs")]
    data["traceEvents"] += [{**e, "cat": "user_annotation", "name": "prepare inputs", "args": {}} for e in prep]
    Path(path).write_text(json.dumps(data))
    m = host_metrics(read(SimpleNamespace(host="h", path=path, format="kineto")))
    (name, v), *_ = m.gaps.top_ranges
    assert name == "prepare inputs"
    # the gap holds the whole preparation: the GPU is idle from the last decode's tokens to the next input copy
    assert v == pytest.approx(tt.SERVE_HOST_US / 1000, rel=0.02), v
    assert v <= m.gaps.avg_gap_ms
    (f,) = [f for f in evaluate(m) if f.rule == "step_gaps"]
    assert "in the program's own ranges `prepare inputs`" in f.summary, f.summary
