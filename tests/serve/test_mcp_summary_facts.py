"""The MCP summary gives an agent the facts the tab shows of each host (issue #37, h37-surfaces31).

Wrong assumption on main (8b34bb94): *the job's line carries the host's facts*.  ``get_report(format='summary')``
quoted the job's line ("... its loop on the CPU: 4 marked steps of 88.0 ms on average, no GPU step.") but none of the
keys behind it or beside it: not ``job.host_loop`` / ``job.no_gpu_step`` (and "steps": 4 where the tab's host line
and the CLI's header say no step is timed), not where the steps came from (``recurring_events`` on the cold Swin
loop, low confidence), not the step's ledger the tab charts (``breakdown_ms``, ``memset`` beside the copies).  Real
traces, read through the real MCP SDK client: ``h200_jobs/torch_cpu_only`` (4 CPU steps, no GPU step) and
``wild/cold_loop_a4000_swin`` (steps found from recurring events; 0.3 us of fills a step).  The oracle is the CLI's
JSON report of the same run, key by key.
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.support.cli_report import first_report
from tests.support.paths import FIXTURES, REPO

if importlib.util.find_spec("mcp") is None:
    pytest.skip("the MCP SDK is not installed", allow_module_level=True)

from tests.support.mcp_client import mcp_server  # needs the SDK

def _text(path) -> str:
    """The CLI's text report of ``path``, run in this process."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from tb_gpu_advisor.cli import main as cli

    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        cli.main(["report", str(path), "--format", "text", "--cache-dir", "off"])
    return out.getvalue()


CASES = [(FIXTURES / "h200_jobs", "torch_cpu_only"), (FIXTURES / "wild", "cold_loop_a4000_swin"),
         (REPO / "demo_logs", "pytorch_ddp_straggler")]


@pytest.mark.parametrize(("logdir", "run"), CASES, ids=[c[1] for c in CASES])
def test_the_summary_host_says_what_the_report_knows(tmp_path, logdir, run):
    rep = first_report(logdir / run)
    with mcp_server(logdir, tmp_path / "mcp") as client:
        summary = json.loads(client.text("get_report", run=run, format="summary"))
    for said, host in zip(summary["hosts"], rep["hosts"], strict=True):
        job, steps = host["job"], host["steps"]
        assert said.get("host_loop") == job.get("host_loop") and said.get("no_gpu_step") == job.get("no_gpu_step")
        # no GPU step timed: none counted, as the tab's host line ("no step timed") and the CLI's header say
        assert said["steps"] == (0 if job.get("no_gpu_step") else steps["count"])
        if said["steps"]:  # where counted steps came from, as the tab's host line says it
            assert said["step_source"] == steps["source_label"] and said["step_confidence"] == steps["confidence"]
        assert said["gpu_count"] == len(host["gpus"])
        ledger = {k: round(v, 4) for k, v in host["breakdown_ms"].items() if v > 0}
        assert said.get("breakdown_ms", {}) == ledger


def test_the_real_cases_hold_the_new_keys():
    """The cases exercise what main left out (else the test above could pass by saying nothing)."""
    cpu, cold, ranks = (first_report(d / r)["hosts"][0] for d, r in CASES)
    assert cpu["job"]["host_loop"] == {"steps": 4, "step_ms": 87.991} and cpu["job"]["no_gpu_step"]
    assert cold["steps"]["source"] == "recurring_events" and cold["breakdown_ms"]["memset"] > 0
    assert len(ranks["gpus"]) == 4 and len({g["name"] for g in ranks["gpus"]}) == 1  # 4 GPUs, one name


def test_a_cpu_only_keras_xplane_says_its_host_step_on_every_surface(tmp_path):
    """h37-survey65's *Left*: a CPU-only TF 2.x XPlane (Keras 2 ``fit`` on a laptop: ``train_function`` calls, each
    graph a ``FunctionRun`` root) kept its host's step in JSON ``steps`` only.  Since h37-tidy30 the job's line times
    the loop; the summary now gives the number too.  Generator truth by construction: 3 batches of 80, 81, 82 ms, 2.1
    ms apart (start to start: 82.1, 83.1 ms; the last one its own 82 ms)."""
    from synthetic.tfcapture import write_cpu_keras_batches

    session = tmp_path / "logs" / "keras_cpu" / "plugins" / "profile" / "2024_01_01"
    session.mkdir(parents=True)
    write_cpu_keras_batches(str(session / "macbook.xplane.pb"), step_ms=(80.0, 81.0, 82.0))
    want = {"steps": 3, "step_ms": round((82.1 + 83.1 + 82.0) / 3, 3)}
    rep = first_report(tmp_path / "logs")
    assert rep["hosts"][0]["job"]["host_loop"] == want
    assert "its loop on the CPU: 3 marked steps of 82.4 ms on average" in " ".join(_text(tmp_path / "logs").split())
    with mcp_server(tmp_path / "logs", tmp_path / "mcp") as client:
        (host,) = json.loads(client.text("get_report", run="keras_cpu", format="summary"))["hosts"]
    assert host["host_loop"] == want and host["steps"] == 0 and host["no_gpu_step"]


def test_the_summary_says_what_a_snapshot_frees_and_why_a_card_reads_n_a(tmp_path):
    """A memory snapshot's finding saves no time and frees memory: main's summary gave its saving as null and nothing
    of the 7.75 GiB the text, the markdown and the tab print ("frees ~7.75 GiB"); each "n/a" card came without the
    reason the text prints after it.  Real snapshot: ``snapshots_wild/windows_training_cs336`` (CS336, activations
    at the peak).  Oracle: the CLI's JSON (``saving_bytes``) and text report ("n/a: <why>")."""
    import shutil

    logdir = tmp_path / "logs"
    logdir.mkdir()
    shutil.copy(FIXTURES / "snapshots_wild" / "windows_training_cs336.pickle.gz", logdir)
    rep = first_report(logdir)
    text = " ".join(_text(logdir).split())
    with mcp_server(logdir, tmp_path / "mcp") as client:
        summary = json.loads(client.text("get_report", run=".", format="summary"))
    frees = {f["id"]: f["saving_bytes"] for f in rep["findings"] if f.get("saving_bytes")}
    assert frees and {f["id"]: f.get("frees_bytes") for f in summary["findings"] if f["id"] in frees} == frees
    notes = [c for c in summary["headline"] if c["value"] == "n/a" and c.get("note")]
    assert notes and all(f"{c['label']} n/a: {c['note']}" in text for c in notes)


def test_law_surface_facts_holds_on_every_kind_of_case(tmp_path):
    """The law ``surface-facts`` (tests/support/properties.py) on the real cases above, the snapshot and a generated
    inferred T4: none breaks it.  On main every case broke it (no ``host_loop`` / ledger / GPU count in the summary,
    no ``frees_bytes``, no card notes; the display named no GPU)."""
    import shutil

    from synthetic.tfcapture import write_grouped_keras_batch
    from tests.support.cli_report import kept_report
    from tests.support.properties import surface_facts_problems

    snap = tmp_path / "snap"
    snap.mkdir()
    shutil.copy(FIXTURES / "snapshots_wild" / "windows_training_cs336.pickle.gz", snap)
    t4 = tmp_path / "t4" / "run" / "plugins" / "profile" / "2024_01_01"
    t4.mkdir(parents=True)
    write_grouped_keras_batch(str(t4 / "instance-2.xplane.pb"))
    for path in [d / r for d, r in CASES] + [snap, tmp_path / "t4"]:
        report = kept_report(path)
        assert surface_facts_problems(report) == [], path


def _t4_report(tmp_path):
    """A generated TF 2.x XPlane of a T4 that names itself not (no name stat): the report infers "NVIDIA T4 (inferred
    from ...)" from its compute capability, SMs and memory (``devices.inferred_model``)."""
    from synthetic.tfcapture import write_grouped_keras_batch
    from tests.support.cli_report import kept_report

    t4 = tmp_path / "t4" / "run" / "plugins" / "profile" / "2024_01_01"
    t4.mkdir(parents=True)
    write_grouped_keras_batch(str(t4 / "instance-2.xplane.pb"))
    return kept_report(tmp_path / "t4")


def test_the_summary_names_the_gpus_as_the_tab_does(tmp_path):
    """h37-review31: the summary's ``gpus`` kept an inferred name's reasons ("NVIDIA T4 (inferred from compute
    capability 7.5, 40 SMs, 14.8 GiB)") where the tab's host line, the display's ``gpus[].name`` and every finding
    say the model ("NVIDIA T4"): one GPU, two names across surfaces.  Oracle: the display of the same report."""
    from tb_gpu_advisor.report.view import display
    from tb_gpu_advisor.serve.mcp_server import summary_json

    report = _t4_report(tmp_path)
    (g,) = report.hosts[0].gpus
    assert " (inferred from " in g.name  # the case holds an inferred name (else the test could pass on any name)
    (shown,) = display(report)["hosts"]
    (host,) = json.loads(summary_json(report))["hosts"]
    assert host["gpus"] == [shown["gpus"][0]["name"]] == [g.name[:g.name.index(" (inferred from ")]]


def test_law_surface_facts_fails_on_a_summary_that_drops_a_fact(tmp_path, monkeypatch):
    """The law can fail: a summary that leaves out the ledger and names the GPU with its reasons (main's, 8b34bb94)
    is caught on the inferred T4, where the summary as it is passes."""
    from tb_gpu_advisor.serve import mcp_server
    from tests.support.properties import surface_facts_problems

    report = _t4_report(tmp_path)
    assert surface_facts_problems(report) == []
    own = mcp_server.summary_host

    def dropped(h):
        out = own(h)
        out.pop("breakdown_ms", None)
        return {**out, "gpus": sorted({g.name for g in h.gpus})}

    monkeypatch.setattr(mcp_server, "summary_host", dropped)
    said = surface_facts_problems(report)
    assert any("the summary's ledger" in p for p in said) and any("the summary's GPUs" in p for p in said)
