"""Issue #12 items 4, 5 and the markdown-injection bullet: bad input is never "healthy", the CLI is consistent
(--session, one JSON shape, the first code fix, help and capture text), and names cannot inject markdown/HTML.

In process (``cli_report.run`` with captured streams), so every case is cheap; ``test_cli_report.py`` covers the
same CLI through a real subprocess.
"""

from __future__ import annotations

import io
import json
import os
import random

import pytest

from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.common.fmt import and_list
from tb_gpu_advisor.discover import logdir as discovery
from tb_gpu_advisor.formats.xplane.schema import message_class
from tb_gpu_advisor.model.schema import Action, Finding, HostReport, Report, Saving, TimeWindow
from tb_gpu_advisor.report import merge, render
from tb_gpu_advisor.runtime import pipeline
from tests.support.profile_files import write_profile

SESSION = "2026_01_01_00_00_00"
XSS = "<svg onload=alert(3)>"


def report_cli(*argv: str) -> tuple[int, str, str]:
    """``tb-gpu-advisor report ARGV``: (exit code, stdout, stderr)."""
    parser = cli.build_parser()
    try:
        args = parser.parse_args(["report", *map(str, argv)])
    except SystemExit as e:  # argparse usage error
        return int(e.code), "", ""
    out, err = io.StringIO(), io.StringIO()
    return args.func(args, stdout=out, stderr=err), out.getvalue(), err.getvalue()


def _session_dir(logdir, run: str = "r") -> str:
    d = os.path.join(str(logdir), run, "plugins", "profile", SESSION)
    os.makedirs(d, exist_ok=True)
    return d


def _write(logdir, name: str, data: bytes, run: str = "r") -> str:
    path = os.path.join(_session_dir(logdir, run), name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _space(*planes: tuple[str, int]) -> bytes:
    """An XSpace with the named planes, each with one line of ``n`` events."""
    space = message_class("XSpace")()
    space.hostnames.append("vm")
    for i, (name, n) in enumerate(planes, 1):
        p = space.planes.add()
        p.id, p.name = i, name
        e = p.event_metadata.add()
        e.key, e.value.id, e.value.name = 1, 1, "op"
        line = p.lines.add()
        line.id, line.name, line.timestamp_ns = 1, "python", 1_000
        for k in range(n):
            ev = line.events.add()
            ev.metadata_id, ev.offset_ps, ev.duration_ps = 1, k * 1_000_000, 500_000
    return space.SerializeToString()


# --------------------------------------------------------------------------- item 4: bad input is never healthy


BAD_FILES = {
    "random": bytes(random.Random(12).randrange(256) for _ in range(4000)),
    "empty": b"",
    "foreign_plane": _space(("/foo:bar", 3)),  # parses, but no host or device plane
    "no_events": _space(("/host:CPU", 0), ("/device:GPU:0", 0)),  # nothing in the capture window
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_bad_file_is_an_input_error_never_healthy(tmp_path, kind, fmt):
    _write(tmp_path, "x.xplane.pb", BAD_FILES[kind])
    code, out, err = report_cli(tmp_path, "--run", "r", "--format", fmt, "--fail-on", "warning")
    assert code == 2, (out, err)  # was 0, even with --fail-on warning
    assert "host 'x' could not be analysed" in err
    assert "healthy" not in out.lower().replace('"healthy": false', "")
    if fmt == "json":
        rep = json.loads(out)
        assert rep["healthy"] is False and rep["hosts"][0]["error"]  # the tab shows this error
    elif fmt == "text":
        assert "FINDINGS: not analysed" in out and "ERROR: host x could not be analysed" in out
    else:
        assert "**Error:** host `x` could not be analysed" in out


def test_no_host_or_device_plane_and_no_events_messages(tmp_path):
    _write(tmp_path, "f.xplane.pb", BAD_FILES["foreign_plane"])
    _write(tmp_path, "z.xplane.pb", BAD_FILES["no_events"])
    (s,) = discovery.discover(str(tmp_path))
    errors = {h.host: pipeline.analyze_host(h).error for h in s.hosts}
    assert "no host or device plane" in errors["f"] and "'/foo:bar'" in errors["f"]
    assert "no events in the capture window" in errors["z"]


def test_host_only_capture_with_events_is_still_analysed(tmp_path):
    """The check rejects non-profiles only: a CPU-only capture (host plane with events) is a report."""
    write_profile(str(tmp_path), "r", SESSION, "h", events=3)
    code, out, err = report_cli(tmp_path, "--run", "r", "--format", "json")
    rep = json.loads(out)
    assert code == 0 and rep["hosts"][0]["error"] is None, err


def test_one_bad_host_makes_the_session_unhealthy_and_exit_2(tmp_path):
    """A good host does not hide a bad one: not healthy, exit 2 (input error wins over --fail-on's 1)."""
    write_profile(str(tmp_path), "r", SESSION, "good", events=3)
    _write(tmp_path, "bad.xplane.pb", b"")
    code, out, err = report_cli(tmp_path, "--run", "r", "--format", "json")
    rep = json.loads(out)
    assert code == 2 and rep["healthy"] is False
    assert [h["host"] for h in rep["hosts"] if h["error"]] == ["bad"] and "'bad'" in err and "'good'" not in err


def test_merge_hosts_is_not_healthy_with_a_failed_host():
    ok = HostReport(host="a", path="/a.xplane.pb", size_bytes=1)
    bad = HostReport(host="b", path="/b.xplane.pb", size_bytes=1, error="file is empty")
    assert merge.merge_hosts("r", "s", [ok]).healthy is True
    assert merge.merge_hosts("r", "s", [ok, bad]).healthy is False  # was True
    assert merge.merge_hosts("r", "s", [bad]).healthy is False
    assert merge.merge_hosts("r", "s", []).healthy is False


def test_renderers_never_say_healthy_for_a_failed_host():
    bad = HostReport(host="b", path="/b.xplane.pb", size_bytes=1, error="file is empty")
    rep = merge.merge_hosts("r", "s", [HostReport(host="a", path="/a.xplane.pb", size_bytes=1), bad])
    text, md = render.to_text(rep), render.to_markdown(rep)
    assert "healthy" not in text.lower() and "healthy" not in md.lower()
    assert "1 of 2 hosts could not be analysed" in text and "1 of 2 hosts could not be analysed" in md
    assert text.count("file is empty") == 1  # the error once, not again as a note


@pytest.mark.parametrize("where", ["x.xplane.pb", "a/x.xplane.pb", f"r/{SESSION}/x.xplane.pb"])
def test_profile_outside_the_layout_says_wrong_folder_layout(tmp_path, where):
    path = tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_space(("/host:CPU", 3)))
    code, out, err = report_cli(tmp_path)
    assert code == 2 and out == ""
    assert "wrong folder layout: expected <run>/plugins/profile/<session>/<host>.xplane.pb" in err
    assert where in err


def test_a_lone_profile_file_given_by_path_is_read(tmp_path):
    """``report FILE`` reads an XPlane file copied anywhere (issue #36 item 4: it was "not a profile this tool
    reads", exit 2): the file's own name says what it is."""
    path = tmp_path / "copied" / "vm.xplane.pb"
    path.parent.mkdir()
    path.write_bytes(_space(("/host:CPU", 3)))
    code, out, err = report_cli(str(path), "--format", "json")
    assert "not a profile" not in err and out
    body = json.loads(out)
    assert [h["host"] for r in body["reports"] for h in r["hosts"]] == ["vm"]
    assert body["reports"][0]["session"] == "vm.xplane.pb"


def test_misplaced_profile_in_a_logdir_is_listed_as_left_out(tmp_path):
    """Beside real profiles, a misplaced one is left out of the listing and named, with why (the tab's
    "left out" note and the CLI's stderr list it; it was skipped silently)."""
    write_profile(str(tmp_path), "r", SESSION, "ok")
    (tmp_path / "r" / "stray.xplane.pb").write_bytes(_space(("/host:CPU", 3)))
    skips = discovery.skipped(str(tmp_path))
    assert [rel for rel, _ in skips] == ["r/stray.xplane.pb"]
    assert "<run>/plugins/profile/<session>/<host>.xplane.pb" in skips[0][1]


def test_misplaced_profiles_ignores_the_layout_and_other_files(tmp_path):
    write_profile(str(tmp_path), "r", SESSION, "ok")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "stray.xplane.pb").write_bytes(b"x")
    assert discovery.misplaced_profiles(str(tmp_path)) == [("stray.xplane.pb", "<run>/plugins/profile/<session>/<host>.xplane.pb")]
    assert discovery.misplaced_profiles(str(tmp_path / "missing")) == []


def test_empty_logdir_capture_help_covers_tensorflow_and_jax(tmp_path):
    code, _, err = report_cli(tmp_path)
    assert code == 2 and "no GPU profiles" in err
    assert "profile_batch" in err and "tf.profiler.experimental.start" in err and "jax.profiler.trace" in err


# --------------------------------------------------------------------------- item 5: CLI consistency


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("logs")
    for run in ("alpha", "beta"):
        write_profile(str(d), run, SESSION, "h", events=3)
    write_profile(str(d), "alpha", "2025_01_01_00_00_00", "h", events=3)
    return d


def test_session_accepts_what_its_error_message_lists(two_runs):
    code, _, err = report_cli(two_runs, "--run", "alpha", "--session", "nope")
    listed = err.split("Available sessions: ", 1)[1].split(", ")[0].strip()
    assert code == 2 and listed == f"alpha/{SESSION}"
    code, out, err = report_cli(two_runs, "--run", "alpha", "--session", listed, "--format", "json")
    assert code == 0, err  # was: unknown session 'alpha/2026_01_01_00_00_00'
    assert (json.loads(out)["run"], json.loads(out)["session"]) == ("alpha", SESSION)
    code, out, _ = report_cli(two_runs, "--session", "alpha/2025_01_01_00_00_00", "--format", "json")
    assert code == 0 and [(r["run"], r["session"]) for r in json.loads(out)["reports"]] == [("alpha", "2025_01_01_00_00_00")]


def test_json_shape_is_an_object_and_depends_on_run_only(two_runs, tmp_path):
    """Without --run: {"reports": [...]} for one run as for several; with --run: the Report itself."""
    write_profile(str(tmp_path), "only", SESSION, "h", events=3)
    for logdir, runs in ((two_runs, ["alpha", "beta"]), (tmp_path, ["only"])):
        code, out, _ = report_cli(logdir, "--format", "json")
        doc = json.loads(out)
        assert isinstance(doc, dict) and [r["run"] for r in doc["reports"]] == runs  # was a bare object for one run
        assert doc["schema_version"] and doc["healthy"] == all(r["healthy"] for r in doc["reports"])
    code, out, _ = report_cli(two_runs, "--run", "beta", "--format", "json")
    doc = json.loads(out)
    assert isinstance(doc, dict) and doc["run"] == "beta" and "findings" in doc and "hosts" in doc


def _finding(actions: list[Action]) -> Finding:
    return Finding(id="launch_bound:h", rule="launch_bound", severity="critical", title="Launch-bound", summary="s.",
                   guide_section="§1.2.2", saving=Saving(1.0, 10.0, "a"), actions=actions, host="h")


def _report(findings: list[Finding], host: str = "h", session: str = SESSION) -> Report:
    return Report(run="r", session=session, hosts=[HostReport(host=host, path="/p", size_bytes=1, steps={"count": 3})],
                  findings=findings, headline=[], healthy=False, analyzer_version="t", generated_at="t")


def test_text_shows_the_first_code_fix():
    acts = [Action("Make each kernel do more work."), Action("Run the step as a graph.", "@tf.function"),
            Action("Use XLA.", "jit_compile=True")]
    text = render.to_text(_report([_finding(acts)]))
    assert "Fix: Make each kernel do more work." in text
    assert "Fix: Run the step as a graph." in text and "        @tf.function" in text  # was hidden behind "+2 more"
    assert "jit_compile" not in text and "(+1 more fix in --format markdown or json)" in text
    # a first action with code is shown alone, as before
    text = render.to_text(_report([_finding(acts[1:])]))
    assert "@tf.function" in text and "Use XLA." not in text


def test_top_level_help_names_the_frameworks(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "TensorFlow, JAX and PyTorch" in out and ".pt.trace.json" in out
    assert and_list(("TensorFlow", "JAX", "PyTorch")) == "TensorFlow, JAX and PyTorch"


def test_report_help_documents_session_forms_and_json_shape(capsys):
    with pytest.raises(SystemExit):
        cli.main(["report", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "RUN/SESSION" in out and '{"reports": [Report, ...]}' in out and "JAX" in out


# --------------------------------------------------------------------------- item 7: markdown injection


def _inline_code(parts: list[str]) -> tuple[str, list[str]]:
    """Markdown outside fenced blocks without its inline code spans (CommonMark: a run of N backticks up to the
    next run of exactly N), and the spans' contents (one space of padding stripped)."""
    import re

    span = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
    text = "".join(parts)
    contents = [m.group(2)[1:-1] if m.group(2).startswith(" ") and m.group(2).endswith(" ") else m.group(2)
                for m in span.finditer(text)]
    return span.sub("", text), contents


def test_markdown_escapes_host_and_session_names():
    host, session = f"| {XSS} |", f"s`{XSS}`"
    f = _finding([Action(f"Look at {host}.", f"print('{host}')")])
    f.summary, f.host, f.windows = f"Idle on {host}.", host, [TimeWindow(host=host, label=XSS, start_ms=0, end_ms=1)]
    rep = _report([f], host=host, session=session)
    rep.hosts.append(HostReport(host=XSS, path="/q", size_bytes=1, error=f"bad {XSS}"))
    rep.notes = [f"note {XSS}"]
    md = render.to_markdown(rep)
    code_blocks = md.split("```")[1::2]
    prose, spans = _inline_code(md.split("```")[0::2])
    assert "<svg" not in prose  # was: | <svg onload=alert(3)> | in the table, the error line and the trace line
    assert "&lt;svg onload=alert(3)>" in prose
    assert any(f"print('{host}')" in b for b in code_blocks)  # snippets stay literal inside their fence
    assert {session, XSS} <= set(spans)  # names in code spans (literal in CommonMark), whole
    # a pipe in a name never splits a table cell: every table row keeps its 6 columns
    rows = [ln for ln in md.splitlines() if ln.startswith("| 1 |")]
    assert rows and all(len([c for c in ln.replace("\\|", "").split("|")]) == 8 for ln in rows)
    # the session's backticks cannot close the code span of the heading
    assert md.splitlines()[0] == f"## GPU Advisor: run `r`, session `` {session} ``"


def test_markdown_code_fence_outlasts_backticks_in_a_snippet():
    md = render.to_markdown(_report([_finding([Action("a", "x = '```'\n<b>")])]))
    assert "  ````python" not in md and "  ````" in md and "<b>" in md.split("````")[1]


def test_html_summary_line_is_escaped():
    f = _finding([])
    f.title = XSS
    md = render.to_markdown(_report([f]))
    (line,) = [ln for ln in md.splitlines() if ln.startswith("<summary>")]
    assert "<svg" not in line and "&lt;svg onload=alert(3)>" in line


