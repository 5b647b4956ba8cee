"""``tb-gpu-advisor report``: formats, exit codes, selection, errors -- the command's ``main`` as the console script
and ``python -m`` call it, its exit code, stdout and stderr.

Each case runs ``main`` in this process (:func:`cli`), stdout and stderr its own text buffers (never a terminal, as
a pipe is not) and the environment it sets put back after; a real interpreter per case cost ~1 s of CPU each, ~25
of them, for the same ``main``.  What only a real process shows is checked in one: the process's exit status is
``main``'s return, no progress on a stderr that is a pipe, ``--help`` and argparse's usage errors exit as the shell
sees them, and ``python -m tb_gpu_advisor.cli`` runs (:func:`cli_process`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.support.cli_report import in_process
from tests.support.paths import REPO

scenarios = pytest.importorskip("synthetic.scenarios")
ROOT = REPO


def cli_process(*args, env=None) -> subprocess.CompletedProcess:
    """``python -m tb_gpu_advisor.cli.main report ARGS`` in a real interpreter: its exit status, stdout, stderr."""
    e = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-m", "tb_gpu_advisor.cli.main", "report", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=e, timeout=300)


def cli(*args) -> subprocess.CompletedProcess:
    """``report ARGS`` through the command's ``main`` in this process (:func:`in_process`)."""
    return in_process("report", *args)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    """Two runs: input_bound (critical finding) and ideal (healthy); ideal has an older second session."""
    d = tmp_path_factory.mktemp("logs")
    scenarios.SCENARIOS["input_bound"]().write(d, run="input_bound")
    ideal = scenarios.SCENARIOS["ideal"]()
    ideal.write(d, run="ideal", session="2026_01_02_00_00_00")
    ideal.write(d, run="ideal", session="2025_12_31_00_00_00")
    return d


def test_text_default_findings_first_then_headline_and_gpus(logdir):
    """Through a real process: its exit status and output are ``main``'s (the other cases run ``main`` here)."""
    r = cli_process(logdir, "--run", "input_bound")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.index("[CRITICAL] Input-bound") < out.index("HEADLINE") < out.index("GPUs on")
    assert "saves ~" in out and "guide §1.1" in out and "prefetch(tf.data.AUTOTUNE)" in out
    assert r.stderr == ""  # no progress when stderr is not a terminal


def test_default_is_newest_session_of_every_run(logdir):
    r = cli(logdir, "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert isinstance(doc, dict) and doc["healthy"] is False  # one object, whatever the logdir holds
    assert [(x["run"], x["session"]) for x in doc["reports"]] == [("ideal", "2026_01_02_00_00_00"),
                                                                  ("input_bound", "2026_01_01_00_00_00")]


def test_json_is_the_schema(logdir):
    r = cli(logdir, "--run", "input_bound", "--format", "json")
    rep = json.loads(r.stdout)
    assert rep["schema_version"] and rep["run"] == "input_bound" and rep["healthy"] is False
    f = rep["findings"][0]
    assert f["rule"] == "input_bound" and f["severity"] == "critical"
    assert set(f) >= {"id", "title", "summary", "guide_section", "metric", "saving", "evidence", "windows", "actions",
                      "host", "gpu"}
    assert f["saving"]["ms_per_step"] > 0 and f["saving"]["assumption"]


def test_markdown(logdir):
    r = cli(logdir, "--run", "input_bound", "--format", "markdown")
    assert r.returncode == 0
    md = r.stdout
    assert md.startswith("## GPU Advisor: run `input_bound`")
    assert "| # | severity | finding |" in md and "<details open>" in md and "```python" in md
    assert "### Headline" in md


@pytest.mark.parametrize("run,fail_on,code", [
    ("input_bound", "warning", 1), ("input_bound", "critical", 1), ("ideal", "warning", 0), ("ideal", None, 0),
])
def test_fail_on_exit_codes(logdir, run, fail_on, code):
    args = [logdir, "--run", run] + (["--fail-on", fail_on] if fail_on else [])
    assert cli(*args).returncode == code


def test_session_and_host_selection(logdir):
    r = cli(logdir, "--run", "ideal", "--session", "2025_12_31_00_00_00", "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["session"] == "2025_12_31_00_00_00"
    r = cli(logdir, "--run", "ideal", "--host", "nosuchhost")
    assert r.returncode == 2 and "Available hosts:" in r.stderr


def test_unknown_run_and_session_list_the_available_ones(logdir):
    r = cli(logdir, "--run", "nope")
    assert r.returncode == 2 and "unknown run 'nope'" in r.stderr and "ideal, input_bound" in r.stderr
    r = cli(logdir, "--run", "ideal", "--session", "1999")
    assert r.returncode == 2 and "ideal/2026_01_02_00_00_00" in r.stderr
    # and what it lists is accepted
    r = cli(logdir, "--run", "ideal", "--session", "ideal/2025_12_31_00_00_00", "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["session"] == "2025_12_31_00_00_00"


def test_empty_and_missing_logdir(tmp_path):
    r = cli(tmp_path)
    assert r.returncode == 2 and "no GPU profiles" in r.stderr and "profile_batch" in r.stderr
    assert "jax.profiler.trace" in r.stderr
    r = cli(tmp_path / "missing")
    assert r.returncode == 2 and "no such directory" in r.stderr


def test_usage_errors_exit_2(logdir):
    """Argparse's ``SystemExit`` as the shell sees it: real processes (they stop before any analysis is imported)."""
    assert cli_process(logdir, "--format", "xml").returncode == 2
    assert cli_process(logdir, "--params", "-5").returncode == 2
    assert cli_process(logdir, "--fail-on", "info").returncode == 2


def test_top_and_progress(logdir):
    r = cli(logdir, "--run", "input_bound", "--top", "0", "--progress")
    assert r.returncode == 0
    assert "[CRITICAL]" not in r.stdout and "1 more finding" in r.stdout
    assert "input_bound/2026_01_01_00_00_00" in r.stderr and "%" in r.stderr


def test_params_accepts_readable_numbers(logdir):
    """Every spelling is the same number (was: exit code 0 only, which an ignored --params would also give)."""
    from tb_gpu_advisor.cli import main as cli_mod

    for spelling in ("110000000", "110_000_000", "110,000,000", "1.1e8"):
        assert cli_mod.build_parser().parse_args(["report", "x", "--params", spelling]).params == 110_000_000, spelling
    assert cli(logdir, "--run", "ideal", "--params", "110_000_000").returncode == 0
    assert cli(logdir, "--run", "ideal", "--params", "1.1e8").returncode == 0


def test_output_file(logdir, tmp_path):
    out = tmp_path / "r.md"
    r = cli(logdir, "--run", "input_bound", "--format", "markdown", "-o", out)
    assert r.returncode == 0 and r.stdout == "" and out.read_text().startswith("## GPU Advisor")


def test_help_documents_exit_codes():
    r = cli_process("--help")
    assert r.returncode == 0 and "exit codes" in r.stdout and "--fail-on" in r.stdout


def test_python_dash_m_runs_the_cli():
    """``python -m tb_gpu_advisor.cli`` is the command's other spelling (score_real.py documents it for CI jobs)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "tb_gpu_advisor.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("tb-gpu-advisor "), out.stderr


def test_report_one_file_of_either_format(logdir, tmp_path):
    """``report FILE`` analyses the session and host of that file (issue #21 friction): an XPlane host file and a
    PyTorch trace; a file no format reads is refused at once, naming the layouts (was: "no such directory")."""
    from synthetic import torchtrace

    xplane = next((logdir / "input_bound").rglob("*.xplane.pb"))
    out = cli(xplane, "--format", "json")
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)["reports"][0]
    assert rep["session"] == xplane.parent.name and rep["findings"][0]["rule"] == "input_bound"  # its run folder is the logdir
    (trace,) = torchtrace.write_run(str(tmp_path / "torch"), "input_bound", steps=6, run="r1")
    out = cli(trace, "--format", "json")
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)["reports"][0]
    assert rep["hosts"][0]["capture"]["framework"] == "pytorch" and rep["findings"][0]["rule"] == "input_bound"
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    out = cli(other)
    assert out.returncode == 2 and "not a profile this tool reads" in out.stderr and ".pt.trace.json" in out.stderr


def test_diff_two_pytorch_trace_files(tmp_path):
    """``diff A.pt.trace.json B.pt.trace.json`` compares the two captures, as two .xplane.pb files always could."""
    from synthetic import torchtrace

    (base,) = torchtrace.write_run(str(tmp_path / "a"), "input_bound", steps=6, run="r")
    (new,) = torchtrace.write_run(str(tmp_path / "b"), "healthy_bf16", steps=6, run="r")
    out = in_process("diff", base, new, "--format", "json")
    assert out.returncode in (0, 1), out.stderr
    d = json.loads(out.stdout)
    assert d["step"]["base_ms"] > d["step"]["new_ms"] > 0, d["step"]
