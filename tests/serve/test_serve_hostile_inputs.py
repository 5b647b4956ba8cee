"""The tab keeps serving every other run beside the hostile variants of the new inputs (``synthetic/hostile_inputs``:
viewer pages, snapshot values, LFS pointers, memory timelines), each in a run of its own: the good snapshot run reads
as alone, each hostile run is either listed as skipped with why, or served (200) with its host's error or damage --
never a 500, and never "healthy" where the CLI calls the file an error or damaged."""

from __future__ import annotations

import argparse
import json
from urllib.parse import urlencode

from tensorboard.backend import application
from tensorboard.plugins import base_plugin
from werkzeug import test as werkzeug_test
from werkzeug import wrappers

from synthetic import hostile_inputs as hi
from tb_gpu_advisor.serve import plugin as plugin_mod
from tb_gpu_advisor.serve.service import ReportService
from tests.support.paths import FIXTURES
from tests.support.plugin_client import PREFIX, poll_report

GOOD = FIXTURES / "wild" / "snapshot_windows_gpt" / "memory_snapshot.pickle"


def _json(client, url: str) -> dict:
    r = poll_report(client, url)
    assert r.status_code == 200, (url, r.status_code, r.get_data(as_text=True)[:300])
    return json.loads(r.get_data(as_text=True))


def test_the_tab_serves_the_good_run_beside_every_hostile_input(tmp_path):
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "memory_snapshot.pickle").write_bytes(GOOD.read_bytes())
    for name, (_, file_name, make, _, _) in hi.KINDS.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / file_name).write_bytes(make())
    ctx = base_plugin.TBContext(logdir=str(tmp_path), flags=argparse.Namespace(gpu_advisor_cache_dir="off"))
    plugin = plugin_mod.GpuAdvisorPlugin(ctx, service=ReportService(wait_s=0.3), settle_s=0, isolate=False)
    client = werkzeug_test.Client(application.TensorBoardWSGI([plugin]), wrappers.Response)
    listing = _json(client, f"{PREFIX}/runs")
    runs = {r["run"]: r for r in listing["runs"]}
    skipped = {s["path"].split("/")[0] for s in listing["skipped"]}
    assert "good" in runs and "good" not in skipped
    assert set(hi.KINDS) <= set(runs) | skipped, set(hi.KINDS) - set(runs) - skipped
    for run in ("good", *(k for k in hi.KINDS if k in runs)):
        q = {"run": run, "session": runs[run]["sessions"][0]["session"]}
        report = _json(client, f"{PREFIX}/report?{urlencode(q)}")
        host = report["hosts"][0]
        if run == "good":
            assert host["error"] is None and host["gpus"], host["error"]
            continue
        outcomes = hi.KINDS[run][3]
        if "report" not in outcomes:  # the CLI's error or damage: the tab says the same, never healthy
            assert host["error"] or host.get("damage"), (run, report.get("healthy"))
            assert not report.get("healthy"), run
