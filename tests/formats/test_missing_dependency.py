"""A reader whose package is not installed says which package to install, into which Python, and how -- and the
XPlane reader needs no protobuf at all (session 71: its messages run on plain Python where protobuf is missing).

Found at session 50's stop: the scorer ran a plain ``python3`` holding numpy but not protobuf, and every XPlane host
of real-h100-jax read "could not be analysed: No module named 'google'" -- a module name no user installs.  The
package is blocked here the way a Python without it fails (``ModuleNotFoundError`` on import), in a child process
so this one's imported modules are untouched; the captures are real (an H200 JAX XPlane, an H200 PyTorch trace).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tb_gpu_advisor.common.dependencies import MissingDependencyError, missing_dependency

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "h200_jobs"
XPLANE = next((FIXTURES / "jax_jit_inference" / "plugins" / "profile").glob("*/vm.xplane.pb"))
KINETO = next((FIXTURES / "torch_compile_cudagraphs_inference").glob("*.pt.trace.json.gz"))

#: Runs the CLI in a Python where importing ``MODULE`` fails as it does where its package is not installed.
_WITHOUT = """
import importlib.abc, runpy, sys
class _NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "MODULE" or name.startswith("MODULE."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _NotInstalled())
sys.argv = ["tb-gpu-advisor"] + sys.argv[1:]
runpy.run_module("tb_gpu_advisor.cli", run_name="__main__")
"""


def _logdir(tmp_path: Path) -> Path:
    """One JAX run (XPlane) and one PyTorch run (Kineto) in one logdir."""
    jax = tmp_path / "logs" / "jax" / "plugins" / "profile" / "2026_11_27_14_54_27"
    jax.mkdir(parents=True)
    shutil.copy(XPLANE, jax / "vm.xplane.pb")
    torch = tmp_path / "logs" / "torch"
    torch.mkdir(parents=True)
    shutil.copy(KINETO, torch / KINETO.name)
    return tmp_path / "logs"


def _report_without_protobuf(logdir: Path, run: str) -> tuple[int, dict, str]:
    return _report_without("google", logdir, run)


def _report_without(module: str, logdir: Path, run: str) -> tuple[int, dict, str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", _WITHOUT.replace("MODULE", module), "report", str(logdir), "--run", run,
                           "--format", "json", "--cache-dir", "off"],
                          check=False, capture_output=True, text=True, timeout=300, env=env)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}, done.stderr


def _masked(report: dict) -> dict:
    """The report less what differs between two runs of the same analysis (when, and which analyzer build)."""
    def walk(o):
        if isinstance(o, dict):
            return {k: walk(v) for k, v in o.items() if k not in ("generated_at", "analyzer_version")}
        return [walk(v) for v in o] if isinstance(o, list) else o
    return walk(report)


def test_an_xplane_host_without_protobuf_reads_as_with_it(tmp_path: Path) -> None:
    # Session 71: the stop's scorer ran a python3 without protobuf again and real-h100-jax read 0/11 ("needs the
    # Python package 'protobuf'"); session 50 had made that a clear error.  Now the schemas' messages run on plain
    # Python where protobuf is missing (formats/protomsg.py): the real H200 JAX capture reads the same report.
    logdir = _logdir(tmp_path)
    code, report, stderr = _report_without_protobuf(logdir, "jax")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("TB_GPU_ADVISOR_PURE_PYTHON", None)
    done = subprocess.run([sys.executable, "-m", "tb_gpu_advisor.cli", "report", str(logdir), "--run", "jax",
                           "--format", "json", "--cache-dir", "off"],
                          check=False, capture_output=True, text=True, timeout=300, env=env)
    with_protobuf = json.loads(done.stdout)
    hosts = report["hosts"]
    assert hosts and not any(h["error"] for h in hosts), stderr
    assert all(g["kernel_count"] > 0 for h in hosts for g in h["gpus"]), hosts
    assert report["findings"], report  # analysed: the capture's findings are there
    assert code == done.returncode, (stderr, done.stderr)
    assert _masked(report) == _masked(with_protobuf)


def test_version_says_which_runtime_reads_the_xplane_metadata(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("TB_GPU_ADVISOR_PURE_PYTHON", None)
    done = subprocess.run([sys.executable, "-c", _WITHOUT.replace("MODULE", "google"), "--version"],
                          check=False, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert "metadata by plain-Python messages (the protobuf package is not installed)" in done.stdout, done.stdout


def test_the_other_formats_runs_are_analysed_without_protobuf(tmp_path: Path) -> None:
    code, report, stderr = _report_without_protobuf(_logdir(tmp_path), "torch")
    hosts = report["hosts"]
    assert hosts and not any(h["error"] for h in hosts), hosts
    assert all(g["kernel_count"] > 0 for h in hosts for g in h["gpus"]), hosts  # read, its kernels counted
    assert code in (0, 1), stderr


def test_the_command_without_numpy_names_it_and_how_to_install_it(tmp_path: Path) -> None:
    # numpy is imported by the analysis' stages, before any file is read: the command itself says what to install
    code, report, stderr = _report_without("numpy", _logdir(tmp_path), "torch")
    assert code == 2 and not report
    assert "'numpy'" in stderr and "pip install 'numpy>=" in stderr and sys.executable in stderr, stderr
    assert "Traceback" not in stderr, stderr


def test_a_missing_module_of_ours_names_its_package() -> None:
    err = missing_dependency("XPlane (TensorFlow/JAX)", ModuleNotFoundError("No module named 'google'",
                                                                           name="google.protobuf"))
    assert isinstance(err, MissingDependencyError) and isinstance(err, ImportError)
    assert "'protobuf'" in str(err) and "XPlane (TensorFlow/JAX)" in str(err)
    assert err.name == "google.protobuf"


def test_a_module_none_of_our_dependencies_keeps_its_own_error() -> None:
    # a module we never asked to be installed is a bug of ours, not an install to make: its own traceback stands
    assert missing_dependency("Kineto", ModuleNotFoundError("No module named 'not_a_dep'", name="not_a_dep")) is None
    assert missing_dependency("Kineto", ImportError("cannot import name 'x' from 'numpy'", name="numpy")) is None
