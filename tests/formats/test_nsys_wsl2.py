"""An Nsight export recorded under WSL2 whose kernels were not traced is the platform's limit, not a damaged file
(issue #37, leftover of survey h37-survey-nsys).

The real case (haroonsyed/NVIDIA_SGEMM_PRACTICE ``report1.sqlite`` @51a630e, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``): an SGEMM practice run under WSL2 whose ``TARGET_INFO_SYSTEM_ENV`` says
``SoftwareReleaseVersion`` = ``5.15.90.1-microsoft-standard-WSL2`` and ``NvDriverVersion`` = ``536.40``; 192
launches, 36 ``cudaMemcpy``, no kernel or memcpy table, though the run finished (its stdout: 706 GFLOPS).  Main
called it damaged (exit 2, "the profiler stopped before the GPU's records were flushed").  NVIDIA's profilers trace
the GPU under WSL2 only from a recent Windows driver (Nsight Compute's system requirements: WSL2 only, Windows 10
build 19044+ with display driver 545 or newer), so the export holds what that platform records.

By construction (``synthetic.nsysexport``): the same generated run with its kernel table left out, with and without
a WSL2 kernel release in the target's environment.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

from synthetic import nsysexport as nx
from tb_gpu_advisor.cli import main as cli

WSL2 = "5.15.90.1-microsoft-standard-WSL2"


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def _report(path: str) -> tuple[int, dict, str]:
    code, out, err = _run(["report", path, "--format", "json", "--cache-dir", "off"])
    return code, json.loads(out), err


def test_launches_without_kernels_under_wsl2_are_the_platforms_limit_not_damage(tmp_path):
    p = tmp_path / "wsl2.sqlite"
    nx.write(str(p), nx.NsysJob(steps=4, kernels_table=False, os_release=WSL2, nv_driver="536.40"))
    code, rep, err = _report(str(p))
    assert code == 0 and "damaged" not in err, err
    (host,) = rep["reports"][0]["hosts"]
    assert host["error"] is None and not host["damage"], host["damage"]
    job = host["job"]
    assert "WSL2" in job["kind_evidence"] and WSL2 in job["kind_evidence"] and "536.40" in job["kind_evidence"]
    (f,) = [f for f in rep["reports"][0]["findings"] if f["rule"] == "capture_quality" and "WSL2" in f["title"]]
    assert f["severity"] == "warning" and "not damaged" in f["summary"]
    assert "native Linux" in " ".join(a["text"] for a in f["actions"])
    code, _, _ = _run(["report", str(p), "--fail-on", "warning", "--cache-dir", "off"])
    assert code == 1


def test_the_same_export_on_native_linux_stays_damaged(tmp_path):
    """The control: a native Linux kernel release (or none recorded) keeps the lost-records reading and exit 2."""
    for release in ("5.10.165-143.735.amzn2.x86_64", None):
        p = tmp_path / f"linux-{release}.sqlite"
        nx.write(str(p), nx.NsysJob(steps=4, kernels_table=False, os_release=release))
        code, _, err = _run(["report", str(p), "--format", "json", "--cache-dir", "off"])
        assert code == 2 and "the GPU's side of the capture was lost" in err, (release, err)


def test_a_wsl2_export_with_its_kernels_is_read_as_usual(tmp_path):
    """WSL2 alone changes nothing: an export that holds its kernels is analysed like any other."""
    p = tmp_path / "wsl2-ok.sqlite"
    truth = nx.write(str(p), nx.NsysJob(steps=8, os_release=WSL2, nv_driver="560.94"))
    code, rep, err = _report(str(p))
    (host,) = rep["reports"][0]["hosts"]
    assert "WSL2" not in host["job"]["kind_evidence"]
    assert not [f for f in rep["reports"][0]["findings"] if "WSL2" in f["title"]]
    assert host["gpus"][0]["step_ms"] > 0 and truth.kernels[0] > 0
