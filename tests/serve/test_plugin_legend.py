"""What the tab draws with comes from the server (issue 27 item 20), and a logdir of symlinked runs says why it lists
nothing (item 9).

Before, the tab kept its own copies -- the breakdown's categories and their names, the GPU's idle categories, the
waits each rule speaks of (``RULE_WAITS``), the settings, a ``format === "kineto"`` branch -- and main's new
categories (startup, unseen, allocator) and rules (cold_start, dtype_casts, allocator_churn) each needed an edit of
``format.js`` and ``timeline.js``.  Now ``/runs`` serves ``legend`` (``report/legend.py``) and each session's
``perfetto``; the frontend tests draw with ``frontend/test/fixtures/legend.json``, which must be what the server
serves.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil

from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from tb_gpu_advisor.metrics.types import BREAKDOWN_CATEGORIES, MEMORY_CATEGORIES
from tb_gpu_advisor.report import legend
from tb_gpu_advisor.report.timeline import EVENT_KINDS, IDLE_CATEGORIES
from tb_gpu_advisor.rules import REGISTRY
from tb_gpu_advisor.rules.savings import COMPARED_GROUPS
from tb_gpu_advisor.serve import plugin as plugin_mod
from tb_gpu_advisor.serve.service import ReportService
from tests.support import plugin_fixtures
from tests.support.paths import DEMO_LOGS, FIXTURES
from tests.support.plugin_client import PREFIX

TRACE = FIXTURES / "wild" / "amd_mi300x" / "bert_small.pt.trace.json.gz"


def _runs(logdir, **flags) -> dict:
    ctx = base_plugin.TBContext(logdir=str(logdir), flags=argparse.Namespace(gpu_advisor_cache_dir="off", **flags))
    plugin = plugin_mod.GpuAdvisorPlugin(ctx, service=ReportService(wait_s=0.05), settle_s=0)
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    r = client.get(f"{PREFIX}/runs")
    assert r.status_code == 200
    return json.loads(r.get_data(as_text=True))


def test_runs_serves_the_legend_the_frontend_tests_draw_with():
    body = _runs(DEMO_LOGS)
    assert body["legend"] == legend.legend()
    with open(plugin_fixtures.LEGEND_FIXTURE_PATH, encoding="utf-8") as f:
        assert f.read() == plugin_fixtures.legend_fixture_json()  # python -m tests.support.plugin_fixtures
    kinds = {s["format"]: s["perfetto"] for r in body["runs"] for s in r["sessions"]}
    assert kinds == {"xplane": False, "kineto": True}


def test_the_legend_names_every_category_kind_group_and_rule_wait():
    served = legend.legend()
    assert [c["id"] for c in served["categories"]] == list(BREAKDOWN_CATEGORIES)
    assert [c["id"] for c in served["idle"]] == list(IDLE_CATEGORIES)
    assert [c["id"] for c in served["kinds"]] == list(EVENT_KINDS)
    assert [g["id"] for g in served["groups"]] == list(COMPARED_GROUPS)  # the groups the diff compares
    assert [c["id"] for c in served["memory"]] == list(MEMORY_CATEGORIES)
    for section, labels in (("categories", legend.CATEGORY_LABELS), ("idle", legend.IDLE_LABELS),
                            ("kinds", legend.KIND_LABELS), ("groups", legend.GROUP_LABELS),
                            ("memory", legend.MEMORY_LABELS)):
        unnamed = [c["id"] for c in served[section] if c["id"] not in labels]
        assert not unnamed, f"report/legend.py has no label for the {section} {unnamed}"
    # each rule's waits are idle categories; the rules main added (cold_start, allocator_churn) speak of theirs
    for r in REGISTRY.values():
        assert set(r.waits) <= set(IDLE_CATEGORIES), (r.id, r.waits)
    assert served["rule_waits"]["cold_start"] == ["startup"] and served["rule_waits"]["allocator_churn"] == ["allocator"]
    assert [s["key"] for s in served["settings"]] == ["params", "net_gbps", "model_flops"]


def test_every_breakdown_category_has_its_own_colour_and_the_kernel_switch_is_named():
    """A category without a colour in ``style.css`` is drawn grey, like ``other`` (docs/ui.md): the GPU's switches
    between kernels it holds (h37-left40: ``kernel_switch``) would read as unexplained idle.  Each category has its
    ``--c-`` colour and fill, each idle category its timeline swatch; the new one is named as the GPU's own time."""
    with open(f"{plugin_mod.STATIC_DIR}/style.css", encoding="utf-8") as f:
        css = f.read()
    for c in BREAKDOWN_CATEGORIES:
        assert f"--c-{c}:" in css and f".cat-{c} {{ fill: var(--c-{c}); }}" in css, c
    for c in IDLE_CATEGORIES:
        assert f".timeline-legend .swatch.cat-{c} {{ background: var(--c-{c}); }}" in css, c
    served = legend.legend()
    names = {c["id"]: c["label"] for c in served["categories"]}
    idle = {c["id"]: c["label"] for c in served["idle"]}
    assert "kernel_switch" in names and "switch" in idle["kernel_switch"] and "host" not in idle["kernel_switch"]


def test_every_memory_category_has_its_own_colour():
    """A memory category with no ``.cat-mem-`` fill is drawn in the chart's fallback grey -- ``held``'s colour: the
    peak's new kinds (``attention_math``, ``kv_cache``: h37-snapshotpeak32) would be painted as the weights they were
    wrongly read as before.  Each category has its fill, and no two share one."""
    with open(f"{plugin_mod.STATIC_DIR}/style.css", encoding="utf-8") as f:
        css = f.read()
    fills = {c: re.search(rf"\.cat-mem-{c} \{{ fill: (var\(--c-\w+\)); \}}", css) for c in MEMORY_CATEGORIES}
    assert all(fills.values()), [c for c, m in fills.items() if m is None]
    colours = [m.group(1) for m in fills.values()]
    assert len(set(colours)) == len(colours), dict(zip(MEMORY_CATEGORIES, colours))


def test_a_logdir_of_symlinked_runs_says_why_it_lists_nothing_and_the_flag_reads_them(tmp_path):
    """Runs linked from elsewhere: the reason is the message (was: "No GPU profiles found yet", the reason in a folded
    note); --gpu_advisor_follow_symlinks follows the links that stay inside the logdir, never one leading out."""
    outside = tmp_path / "outside" / "run_a"
    outside.mkdir(parents=True)
    (outside / "vm.1700000000000.pt.trace.json").write_bytes(gzip.decompress(TRACE.read_bytes()))
    logdir = tmp_path / "logdir"
    logdir.mkdir()
    (logdir / "run_a").symlink_to(outside, target_is_directory=True)
    for flags in ({}, {"gpu_advisor_follow_symlinks": True}):
        body = _runs(logdir, **flags)
        assert body["runs"] == [] and body["empty"]["title"] == "No GPU profiles read: 1 symlink out of the logdir"
        assert "nothing outside it is read" in body["empty"]["text"], body["empty"]
    # a run linked from inside the logdir: named, not followed unless TensorBoard was started with the flag
    (logdir / "run_a").unlink()
    shutil.move(str(outside), str(logdir / "data"))
    (logdir / "run_a").symlink_to(logdir / "data", target_is_directory=True)
    body = _runs(logdir)
    assert [r["run"] for r in body["runs"]] == ["data"] and "empty" not in body
    assert [x["path"] for x in body["skipped"]] == ["run_a"]
    assert "--gpu_advisor_follow_symlinks" in body["skipped"][0]["reason"]
    followed = _runs(logdir, gpu_advisor_follow_symlinks=True)
    assert [r["run"] for r in followed["runs"]] == ["data", "run_a"] and followed["skipped"] == []
