"""``tb-gpu-advisor mcp``: the real server process, driven by the MCP SDK's own client (issue #21, item 6).

Each answer is checked against what the rest of the product says for the same input: the run list against
discovery, reports and diffs against ``tb-gpu-advisor report`` / ``diff`` run in process, demo runs against the
finding they were built to have, real captures against their TRUTH.json.  One server per logdir serves a module
(``tests/support/mcp_client.py``); the whole file takes a few seconds.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import shutil
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from tb_gpu_advisor.cli.main import main as cli_main
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.model.schema import Report
from tb_gpu_advisor.rules import RULE_IDS
from tb_gpu_advisor.rules import docs as rule_docs
from tb_gpu_advisor.serve.mcp_server import RULES_URI, SDK_MISSING, TABLES
from tests.support.paths import DEMO_LOGS, REPO, SHARED_PROFILES
from tests.support.real_checks import REAL_JAX_SET, load_truth

if importlib.util.find_spec("mcp") is None:
    if os.environ.get("CI") == "true":  # CI installs '.[test]', which has the SDK: a skip there would hide a break
        raise RuntimeError("the mcp SDK is missing although '.[test]' requires it")
    pytest.skip("the MCP SDK is not installed (pip install -e '.[mcp]')", allow_module_level=True)

from tests.support.mcp_client import mcp_server  # needs the SDK

TOOLS = {"list_runs", "get_report", "diff_runs", "explain_finding", "get_tables", "capture_advice", "get_memory"}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    with mcp_server(DEMO_LOGS, tmp_path_factory.mktemp("mcp-demo")) as client:
        yield client


def cli(*argv: str) -> str:
    """What ``tb-gpu-advisor ARGV`` prints (in process).  A kept logdir's (the demo logs, ``../shared``) reports come
    through the CLI's own report cache that the whole test run shares (``report_store.shared_cache_dir``, as the truth
    checks read them: each run analysed once per test run -- here the demo's multi_host and input_bound were analysed
    by several tests); any other logdir's, through this test's private cache."""
    from tests.support.report_store import shared_cache_dir

    shared = shared_cache_dir(Path(argv[1])) if len(argv) > 1 and "--cache-dir" not in argv else None
    out = io.StringIO()
    with redirect_stdout(out):
        code = cli_main(list(argv) + (["--cache-dir", str(shared)] if shared is not None else []))
    assert code in (0, 1), f"tb-gpu-advisor {' '.join(argv)} exited {code}"
    return out.getvalue()


def runs_of(listing: dict) -> list[tuple[str, list[str]]]:
    return [(r["run"], [s["session"] for s in r["sessions"]]) for r in listing["runs"]]


def discovered(logdir: Path) -> list[tuple[str, list[str]]]:
    out: dict[str, list[str]] = {}
    for s in discover(str(logdir)):
        out.setdefault(s.run, []).append(s.session)
    return list(out.items())


def without_time(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "generated_at"}


# --------------------------------------------------------------------------- demo logs


def test_the_tools_and_a_resource_per_rule_are_listed(demo):
    tools = {t.name: t for t in demo.tools()}
    assert set(tools) == TOOLS
    for t in tools.values():  # an agent picks tools by their descriptions
        assert len(t.description) > 150, t.name
    assert set(tools["get_tables"].input_schema["properties"]["table"]["enum"]) == set(TABLES)
    uris = {str(r.uri) for r in demo.resources()}
    assert uris == {RULES_URI} | {f"{RULES_URI}/{rid}" for rid in RULE_IDS}


def test_rule_resources_are_the_rule_docs(demo):
    assert demo.read(RULES_URI) == (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    text = demo.read(f"{RULES_URI}/input_bound")
    assert text == "\n".join(rule_docs.rule_section("input_bound")).rstrip() + "\n"
    assert text.startswith("### input_bound") and "input_bound.warning" in text


def test_list_runs_is_what_discovery_lists(demo):
    listing = json.loads(demo.text("list_runs"))
    assert runs_of(listing) == discovered(DEMO_LOGS)
    multi = next(r for r in listing["runs"] if r["run"] == "multi_host")
    assert [h["host"] for h in multi["sessions"][0]["hosts"]] == ["worker0", "worker1"]


@pytest.mark.parametrize("run", ["input_bound", "launch_bound", "fp32_no_tensor_cores", "host_placement"])
def test_markdown_report_is_the_cli_report_and_names_the_demo_problem(demo, run):
    from synthetic.scenarios import SCENARIOS

    md = demo.text("get_report", run=run)
    assert md == cli("report", str(DEMO_LOGS), "--run", run, "--format", "markdown")
    top = Report.from_json(demo.whole("get_report", run=run, format="json")).findings[0]
    assert top.rule == SCENARIOS[run]().truth.dominant
    assert md.splitlines()[2].startswith("**") and top.title.split(":")[0] in md.splitlines()[2]


def test_report_of_one_host_and_of_a_named_session(demo):
    both = demo.text("get_report", run="multi_host")  # two hosts: merged from the per-host cache, as the CLI does
    assert both == cli("report", str(DEMO_LOGS), "--run", "multi_host", "--format", "markdown")
    one = json.loads(demo.whole("get_report", run="multi_host", host="worker1", format="json"))
    assert [h["host"] for h in one["hosts"]] == ["worker1"]
    session = discover(str(DEMO_LOGS / "pytorch_input_bound"))[0].session
    by_session = json.loads(demo.whole("get_report", run="pytorch_input_bound", session=session, format="json"))
    assert (by_session["run"], by_session["session"]) == ("pytorch_input_bound", session)
    assert by_session["findings"][0]["rule"] == "input_bound"
    assert json.loads(demo.whole("get_report", run=f"pytorch_input_bound/{session}", format="json"))["session"] == session


def test_explain_finding_shows_every_window_and_evidence_row(demo):
    report = Report.from_json(demo.whole("get_report", run="input_bound", format="json"))
    f = report.findings[0]
    assert len(f.windows) >= 3 and f.evidence and f.evidence[0].rows
    md = demo.text("explain_finding", run="input_bound", finding_id=f.id)
    for w in f.windows:
        assert f"[{w.start_ms:.1f}–{w.end_ms:.1f} ms]" in md
    table = md.split(f"_{f.evidence[0].title}_", 1)[1]
    assert table.count("\n| ") == len(f.evidence[0].rows) + 1  # header + every row
    assert f"resource {RULES_URI}/input_bound" in md and "input_bound.critical" in md
    as_json = json.loads(demo.text("explain_finding", run="input_bound", finding_id="input_bound", format="json"))
    assert as_json == json.loads(report.to_json())["findings"][0]


def test_diff_gives_the_cli_diff_with_predicted_vs_realised(demo):
    got = json.loads(demo.whole("diff_runs", base_run="input_bound", new_run="input_bound_fixed", format="json"))
    want = json.loads(cli("diff", str(DEMO_LOGS), "--base", "input_bound", "--new", "input_bound_fixed",
                          "--format", "json"))
    assert without_time(got) == without_time(want)
    cal = got["calibration"]
    assert cal["findings"] == ["input_bound"] and cal["predicted_ms"] > 0 and cal["realised_ms"] > 0
    md = demo.text("diff_runs", base_run="input_bound", new_run="input_bound_fixed")
    assert md == cli("diff", str(DEMO_LOGS), "--base", "input_bound", "--new", "input_bound_fixed",
                     "--format", "markdown")
    assert "**Predicted vs realised:**" in md


def test_kernel_and_op_tables_are_the_report_tables(demo):
    host = Report.from_json(demo.whole("get_report", run="launch_bound", format="json")).hosts[0]
    kernels = json.loads(demo.text("get_tables", run="launch_bound", table="kernels", rows=5, format="json"))
    [h] = kernels["hosts"]
    assert h["total_rows"] == len(host.kernels.rows) and h["table"]["rows"] == host.kernels.rows[:5]
    ops = demo.text("get_tables", run="launch_bound", table="ops", rows=3)
    assert f"(3 of {len(host.ops.rows)} rows)" in ops and ops.count("\n| ") == 4
    classes = json.loads(demo.text("get_tables", run="launch_bound", table="kernel_classes", format="json"))
    assert [r[0] for r in classes["hosts"][0]["table"]["rows"]] == [c["class"] for c in host.kernel_classes]


def test_capture_advice(demo):
    cpu = demo.text("capture_advice", run="real_tf_cpu_keras/train")
    assert "Recapture before trusting the numbers: No GPU activity in the capture" in cpu
    assert "tf.keras.callbacks.TensorBoard" in cpu and "jax.profiler" not in cpu
    torch = demo.text("capture_advice", run="pytorch_input_bound")
    assert "can be trusted" in torch and "tensorboard_trace_handler" in torch
    general = demo.text("capture_advice")
    assert all(s in general for s in ("tf.profiler", "jax.profiler.trace", "torch.profiler", "plugins/profile"))


@pytest.mark.parametrize("arguments, says", [
    ({"run": "../"}, "unknown run"),
    ({"run": "../demo_logs/input_bound"}, "unknown run"),
    ({"run": str(DEMO_LOGS / "input_bound")}, "unknown run"),
    ({"run": "/etc"}, "unknown run"),
    ({"run": "input_bound", "session": "../../launch_bound/2026_01_01_00_00_00"}, "unknown session"),
    ({"run": "input_bound", "host": "../../../etc/passwd"}, "unknown host"),
    ({"run": "input_bound", "format": "yaml"}, "format"),
])
def test_bad_names_are_tool_errors_and_the_server_keeps_serving(demo, arguments, says):
    message = demo.error("get_report", **arguments)
    assert says in message
    if says.startswith("unknown run"):
        assert "input_bound_fixed" in message  # the choices are named
    assert runs_of(json.loads(demo.text("list_runs"))) == discovered(DEMO_LOGS)


def test_other_bad_parameters_are_tool_errors(demo):
    assert "no finding 'nope'" in demo.error("explain_finding", run="input_bound", finding_id="nope")
    assert "input_bound:worker0" in demo.error("explain_finding", run="input_bound", finding_id="nope")
    assert "table" in demo.error("get_tables", run="input_bound", table="../../etc")
    assert "unknown run" in demo.error("diff_runs", base_run="input_bound", new_run="/tmp")
    assert "unknown host '../w'" in demo.error("diff_runs", base_run="input_bound", new_run="ideal", host="../w")
    assert "input_bound" in demo.text("get_report", run="input_bound")


# --------------------------------------------------------------------------- a logdir with a symlink out


def test_a_symlink_out_of_the_logdir_is_not_served_and_progress_is_sent(tmp_path):
    logdir = tmp_path / "logdir"
    shutil.copytree(DEMO_LOGS / "ideal", logdir / "ideal")
    (logdir / "escape").symlink_to(DEMO_LOGS / "input_bound", target_is_directory=True)
    # a tiny poll: the first analysis outlasts it, so the client gets progress notes
    with mcp_server(logdir, tmp_path / "server", env={"TB_GPU_ADVISOR_MCP_POLL_S": "0.001"}) as client:
        assert runs_of(json.loads(client.text("list_runs"))) == [("ideal", ["2026_01_01_00_00_00"])]
        assert "unknown run 'escape'" in client.error("get_report", run="escape")
        notes: list = []
        result = client.call("get_report", progress=notes, run="ideal")
        assert not result.is_error
        assert notes and all(0.0 <= p <= 1.0 and total == 1.0 for p, total, _ in notes)
        assert all(message.startswith("ideal/2026_01_01_00_00_00: ") for _, _, message in notes)


def test_without_the_sdk_the_command_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "mcp", None)  # import mcp fails as when the extra is not installed
    assert cli_main(["mcp", str(DEMO_LOGS)]) == 2
    err = capsys.readouterr().err
    assert SDK_MISSING in err and "tb-gpu-advisor[mcp]" in err


def test_a_missing_logdir_is_an_input_error(tmp_path, capsys):
    assert cli_main(["mcp", str(tmp_path / "nothing")]) == 2
    assert "no such directory" in capsys.readouterr().err


# --------------------------------------------------------------------------- a real capture set


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    if not (REAL_JAX_SET / "TRUTH.json").exists():
        pytest.skip(f"real captures not present: {SHARED_PROFILES} (the shared folder beside the checkout)")
    with mcp_server(REAL_JAX_SET, tmp_path_factory.mktemp("mcp-real")) as client:
        yield client


def test_real_jax_set(real):
    truth = load_truth(REAL_JAX_SET)
    assert runs_of(json.loads(real.text("list_runs"))) == discovered(REAL_JAX_SET)
    report = json.loads(real.whole("get_report", run="input_bound", format="json"))
    top = report["findings"][0]
    assert top["rule"] == truth["input_bound"]["expect_top"][0]
    md = real.text("explain_finding", run="input_bound", finding_id=top["id"])
    assert all(f"[{w['start_ms']:.1f}–{w['end_ms']:.1f} ms]" in md for w in top["windows"])
    got = json.loads(real.whole("diff_runs", base_run="input_bound", new_run="healthy_bf16", format="json"))
    want = json.loads(cli("diff", str(REAL_JAX_SET), "--base", "input_bound", "--new", "healthy_bf16",
                          "--format", "json"))
    assert without_time(got) == without_time(want)
    assert "input_bound" in got["calibration"]["findings"]


# --------------------------------------------------------------------------- GPU memory (issue #29)

@pytest.fixture(scope="module")
def memory_server(tmp_path_factory):
    """One server over one logdir of generated memory captures (each test reads its own runs; the two logdirs had a
    server each): a PyTorch run recorded with profile_memory=True and a memory snapshot dumped at an OOM, and two
    runs that are each a memory snapshot of the same forward-only job, autograd on and under inference mode."""
    from synthetic import memsnapshot as ms
    from synthetic import torchtrace as tt

    d = tmp_path_factory.mktemp("mcp-memory-logs")
    tt.write_run(str(d), "memory_near_oom", steps=6)
    ms.write(str(d / "oom_run" / "rank0.pickle"), ms.fragmented().doc)
    for run, grad in (("autograd", True), ("inference", False)):
        ms.write(str(d / run / "rank0.pickle"), ms.forward_only(grad=grad).doc)
    # each run is read as in a logdir of its own: no session joins another's ranks or job
    joined = [s.run for s in discover(str(d)) if s.rank_runs or s.same_job or s.merged]
    assert not joined, joined
    with mcp_server(d, tmp_path_factory.mktemp("mcp-memory")) as client:
        yield client, d


@pytest.fixture(scope="module")
def memory_logdir(memory_server):
    """The memory server: its profile_memory run and its OOM snapshot."""
    return memory_server


def test_get_memory_is_the_reports_memory(memory_logdir):
    """The peak table and the memory findings of the report the CLI prints, per GPU; the JSON's numbers are the
    report's GpuSummary.memory (the series only when asked for); an OOM snapshot names its request and frames."""
    client, logdir = memory_logdir
    text = client.text("get_memory", run="memory_near_oom")
    rep = Report.from_json(cli("report", str(logdir), "--run", "memory_near_oom", "--format", "json"))
    mem = rep.hosts[0].gpus[0].memory
    assert "| peak allocated |" in text and "94.7%" in text
    assert "The memory peak is at the GPU" in text and "fully_shard" in text
    data = json.loads(client.whole("get_memory", run="memory_near_oom", format="json"))
    got = data["hosts"][0]["gpus"][0]["memory"]
    assert got["peak_allocated_bytes"] == mem["peak_allocated_bytes"] and "timeline" not in got
    assert {f["rule"] for f in data["findings"]} == {"memory_near_capacity"}
    series = json.loads(client.whole("get_memory", run="memory_near_oom", format="json", timeline=True))
    assert series["hosts"][0]["gpus"][0]["memory"]["timeline"] == mem["timeline"]
    oom = client.text("get_memory", run="oom_run")
    assert "Out of memory on" in oom and "3.00 GiB requested" in oom and "expandable_segments:True" in oom


@pytest.fixture(scope="module")
def snapshot_logdir(memory_server):
    """The memory server: its two runs that are each a memory snapshot of the same forward-only job, autograd on and
    under inference mode."""
    return memory_server


def test_diff_of_two_snapshots_says_what_changed_in_memory(snapshot_logdir):
    """diff_runs on two snapshots is the CLI's diff: the memory table and the bytes predicted vs realised, the same
    texts in its Markdown, text and JSON (issue #37 item 5; was: "cannot compare", no memory)."""
    client, logdir = snapshot_logdir
    got = json.loads(client.whole("diff_runs", base_run="autograd", new_run="inference", format="json"))
    want = json.loads(cli("diff", str(logdir), "--base", "autograd", "--new", "inference", "--format", "json"))
    assert without_time(got) == without_time(want)
    rows = next(t for t in got["display"]["tables"] if t["id"] == "memory")["rows"]
    md = client.text("diff_runs", base_run="autograd", new_run="inference")
    assert "#### GPU memory (GPU0)" in md and all(f"| {' | '.join(r)} |" in md for r in rows), md
    assert "**Predicted vs realised memory:**" in md
    text = client.text("diff_runs", base_run="autograd", new_run="inference", format="text")
    assert text == cli("diff", str(logdir), "--base", "autograd", "--new", "inference")


# --------------------------------------------------------------------------- issue 27 item 10


def test_tool_and_parameter_descriptions_are_single_lines(demo):
    """An MCP client shows descriptions verbatim: no docstring indentation (was: runs of 8 spaces and newlines in
    every tool's description)."""
    for t in demo.tools():
        texts = [t.description] + [p.get("description", "") for p in t.input_schema["properties"].values()]
        for text in texts:
            assert "  " not in text and "\n" not in text, (t.name, text[:120])


@pytest.mark.parametrize("run", ["fp32_no_tensor_cores", "host_placement", "input_bound"])
def test_markdown_answers_read_as_written(demo, run):
    """No HTML entities or backslashes where nothing needs escaping (was: 'saves \\~6.41 ms', 'device-&gt;host'),
    while a tag still cannot reach the page (tests/cli/test_cli_input_errors.py)."""
    md = demo.text("get_report", run=run)
    assert "&gt;" not in md and "\\~" not in md and "-&gt;" not in md, run
    assert "saves ~" in md


def test_a_long_json_report_comes_in_pages_that_add_up_to_it(demo):
    whole = cli("report", str(DEMO_LOGS), "--run", "multi_host", "--format", "json")
    assert len(whole) > 60_000  # the demo's two-host report; a big run's is over 100,000 characters
    first = demo.text("get_report", run="multi_host", format="json")
    head, _, body = first.partition("\n")
    assert len(first) <= 40_000 + 200 and head.startswith("[characters 0-") and "offset=" in head
    pages = demo.whole("get_report", run="multi_host", format="json")
    assert body.endswith("\n") and pages.startswith(body)  # whole lines
    assert without_time(json.loads(pages)) == without_time(json.loads(whole))
    small = demo.text("get_report", run="multi_host", format="json", max_chars=5000, offset=20_000)
    assert small.startswith("[characters 20,000-") and len(small) <= 5200
    assert "past the end" in demo.error("get_report", run="multi_host", format="json", offset=10_000_000)
    assert not demo.text("get_report", run="multi_host").startswith("[characters")  # markdown fits in one answer


def test_summary_is_the_report_in_a_few_thousand_characters(demo):
    full = Report.from_json(demo.whole("get_report", run="multi_host", format="json"))
    text = demo.text("get_report", run="multi_host", format="summary")
    summary = json.loads(text)
    assert len(text) < 8000 < len(full.to_json(indent=1)) / 5
    assert summary["verdict"] == full.verdict and summary["healthy"] == full.healthy
    assert [f["id"] for f in summary["findings"]] == [f.id for f in full.findings if f.rule != "healthy"][:10]
    assert summary["findings"][0]["fix"] == full.findings[0].actions[0].text
    assert [h["host"] for h in summary["hosts"]] == ["worker0", "worker1"]
    assert {m["id"] for m in summary["headline"]} == {m.id for m in full.headline}


def _mfu(report: dict) -> str:
    return next(m["display"] for m in report["headline"] if m["id"] == "mfu")


def test_the_model_flops_setting_as_the_cli_has_it(demo, tmp_path, monkeypatch):
    """``tb-gpu-advisor mcp --model-flops-per-step`` (was: no such option) and a call's own setting, as the tab's
    Settings, give the report ``tb-gpu-advisor report --model-flops-per-step`` gives."""
    from tb_gpu_advisor.common.thresholds import ENV_MODEL_FLOPS

    monkeypatch.setenv(ENV_MODEL_FLOPS, "")  # the in-process CLI leaves its setting there: gone after this test
    want = json.loads(cli("report", str(DEMO_LOGS), "--run", "launch_bound", "--format", "json",
                          "--model-flops-per-step", "1e11"))
    plain = json.loads(demo.whole("get_report", run="launch_bound", format="json"))
    assert _mfu(want) != _mfu(plain)
    per_call = json.loads(demo.whole("get_report", run="launch_bound", format="json", model_flops_per_step=1e11))
    assert _mfu(per_call) == _mfu(want) and without_time(per_call) == without_time(want)
    with mcp_server(DEMO_LOGS, tmp_path / "flops", "--model-flops-per-step", "1e11") as client:
        served = json.loads(client.whole("get_report", run="launch_bound", format="json"))
        assert without_time(served) == without_time(want)
        assert "model_flops_per_step" in {p for t in client.tools() if t.name == "get_report"
                                          for p in t.input_schema["properties"]}
