"""The command line on Nsight Systems exports: ``report FILE.sqlite``, a logdir of several formats, ``precompute``,
and the memory guard (a big export fails alone, with the limit named; the session's other host is reported)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from contextlib import redirect_stderr, redirect_stdout

import pytest

from synthetic.nsysexport import NsysJob, write
from tb_gpu_advisor.cli import main as cli
from tb_gpu_advisor.cli import precompute as pc
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.runtime.cache import ReportCache, session_key
from tests.support.paths import DEMO_LOGS, REPO


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def test_report_one_export(tmp_path):
    p = tmp_path / "train.sqlite"
    write(str(p), NsysJob(steps=8, input_ms=4.0))
    code, out, err = _run(["report", str(p), "--format", "json", "--fail-on", "critical"])
    assert code == 1, err  # the loop waits 4 ms of each 8.7 ms step for its input: critical
    (rep,) = json.loads(out)["reports"]
    host = rep["hosts"][0]
    assert host["host"] == "train" and host["error"] is None
    assert host["steps"]["source"] == "nvtx_range" and host["steps"]["count"] == 6
    assert rep["findings"][0]["rule"] == "input_bound"


def test_a_logdir_of_three_formats(tmp_path):
    shutil.copytree(DEMO_LOGS / "launch_bound", tmp_path / "tf")
    shutil.copytree(DEMO_LOGS / "pytorch_input_bound", tmp_path / "torch")
    (tmp_path / "nsight").mkdir()
    write(str(tmp_path / "nsight" / "rank0.sqlite"), NsysJob(steps=8))
    code, out, err = _run(["report", str(tmp_path), "--format", "json"])
    assert code in (0, 1), err
    reports = {r["run"]: r for r in json.loads(out)["reports"]}
    assert set(reports) == {"tf", "torch", "nsight"}
    assert all(h["error"] is None for r in reports.values() for h in r["hosts"])


def test_an_export_whose_launches_lost_their_kernels_is_a_report_that_says_so(tmp_path):
    """Lost GPU records are the capture's problem, not the file's: a report (exit 0; 1 under ``--fail-on warning``)
    whose first finding says the records were lost -- never healthy, never an input error."""
    p = tmp_path / "cpu.sqlite"
    write(str(p), NsysJob(steps=4, kernels_table=False))
    code, out, err = _run(["report", str(p), "--format", "json"])
    rep = json.loads(out)
    assert code == 0 and rep["healthy"] is False and "could not be analysed" not in err, err
    assert "the GPU's side of the capture was lost" in rep["reports"][0]["hosts"][0]["job"]["kind_evidence"]
    assert _run(["report", str(p), "--fail-on", "warning"])[0] == 1


def test_precompute_fills_the_cache(tmp_path):
    logdir = tmp_path / "logdir"
    for run in ("a", "b"):
        (logdir / run).mkdir(parents=True)
        write(str(logdir / run / "report.sqlite"), NsysJob(steps=6))
    cache = ReportCache(str(tmp_path / "cache"))
    summary = pc.precompute(str(logdir), jobs=2, cache=cache, out=io.StringIO())
    assert summary.exit_code == 0 and summary.count("new") == 2
    for s in discover(str(logdir)):
        doc = cache.get_dict(session_key(s))
        assert doc is not None and doc["hosts"][0]["steps"]["source"] == "nvtx_range"


DRIVER = textwrap.dedent("""
    import os, sys
    from tb_gpu_advisor.cli import main as cli
    import tb_gpu_advisor.runtime.pipeline, tb_gpu_advisor.formats.nsys.reader
    with open("/proc/self/status") as f:
        vm_kb = next(int(line.split()[1]) for line in f if line.startswith("VmSize:"))
    os.environ["TB_GPU_ADVISOR_WORKER_MEMORY_MB"] = str(vm_kb // 1024 + int(sys.argv[2]))
    sys.exit(cli.main(["report", sys.argv[1], "--format", "json"]))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc/self/status are Linux's")
def test_memory_guard_stops_a_big_export_alone(tmp_path):
    """A 35 MB export (200k kernels, 400k host events) needs more than 48 MB above the driver's own address space; the
    small export beside it does not."""
    (tmp_path / "small").mkdir()
    (tmp_path / "big").mkdir()
    write(str(tmp_path / "small" / "small.sqlite"), NsysJob(steps=6))
    write(str(tmp_path / "big" / "big.sqlite"), NsysJob(steps=3000, ops=60, step_range=None))
    env = dict(os.environ, TB_GPU_ADVISOR_CACHE_DIR="off", PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", DRIVER, str(tmp_path), "48"], capture_output=True, text=True,
                         timeout=300, env=env, cwd=str(REPO), check=False)
    assert out.returncode == 2, out.stderr[-2000:]
    hosts = {h["host"]: h for r in json.loads(out.stdout)["reports"] for h in r["hosts"]}
    assert hosts["small"]["error"] is None and hosts["small"]["gpus"]
    assert hosts["big"]["error"].startswith("ran out of memory (worker limit ")
    assert "Traceback" not in out.stderr
