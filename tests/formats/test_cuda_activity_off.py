"""A torch.profiler capture of the CPU's activity alone recorded no CUDA activity: it lost nothing (issue #37
classes 1 and 3; h37-probe42w's K3, h37-probe42c).

``activities=[ProfilerActivity.CPU]`` records the host's ops and not one CUDA call, kernel or copy.  Where the ops
show the job used a GPU (a scalar read that waited, ``nccl:all_reduce``), main titled it "The capture lost its GPU
records", said "lost or not recorded" and told the user to wait for the GPU before the profiler stops -- a wait that
records nothing.  Records lost leave their calls behind (launches without kernels): that case keeps its words.

- generator: ``synthetic.torchtrace.write_cuda_activity_off`` (truth by construction: CUDA activity recorded or
  not); ``write_unrecorded_gpu_steps`` (host ops only, ``nccl:all_reduce``); control
  ``write_lost_gpu_records(lost_from=0)`` (every launch recorded, no kernel).
"""

from __future__ import annotations

from pathlib import Path

from synthetic import torchtrace as tt
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.cli_report import ran_report

FIX = "ProfilerActivity.CUDA"
LOST_WAIT = "let the GPU finish its work before the profiler stops"


def _report(path: Path):
    rep = analyze_host(HostFile(path.name, str(path), path.stat().st_size, 0, "kineto"))
    assert rep.error is None, rep.error
    return rep


def _words(f) -> str:  # noqa: ANN001 - a Finding
    return " ".join([f.title, f.summary, *(f"{a.text} {a.snippet or ''}" for a in f.actions)])


def _capture_finding(rep):  # noqa: ANN001, ANN202 - a Report -> its capture_quality finding
    (f,) = [f for f in rep.findings if f.rule == "capture_quality"]
    return f


def test_cpu_activity_alone_is_not_recorded_not_lost(tmp_path):
    """Main: "The capture lost its GPU records", "lost or not recorded", the fix waits for the GPU."""
    p = tmp_path / "cpu_only.1.pt.trace.json"
    truth = tt.write_cuda_activity_off(str(p))
    assert not truth["cuda_recorded"]
    rep = _report(p)
    f = _capture_finding(rep)
    words = " ".join(_words(g) for g in rep.findings)
    assert f.title.startswith("The capture recorded no CUDA activity"), f.title
    assert "lost" not in words, words  # neither the capture's finding nor the scalar reads' say "lost"
    assert LOST_WAIT not in words
    code = " ".join(a.snippet or "" for a in f.actions)
    assert f"activities=[ProfilerActivity.CPU, {FIX}]" in code, code
    assert "synchronize" not in code, code
    # the file does not tell "not asked for" from "CUPTI recorded nothing" (CUDA asked: wild/gemm_h200_cuda_unrecorded):
    # the words and the fix name both
    assert "or its GPU tracer (CUPTI) recorded nothing" in f.summary, f.summary
    assert "Where it is there already" in f.actions[0].text, f.actions[0].text


def test_host_ops_of_a_gpu_job_without_a_call_are_not_lost(tmp_path):
    """The same reading where the ops name GPU-only work (``nccl:all_reduce``) rather than a wait."""
    p = tmp_path / "host_ops.1.pt.trace.json"
    tt.write_unrecorded_gpu_steps(str(p), steps=6)
    f = _capture_finding(_report(p))
    assert f.title.startswith("The capture recorded no CUDA activity"), f.title
    assert "lost" not in _words(f)


def test_launches_without_kernels_keep_the_lost_words(tmp_path):
    """Control: every launch recorded, no kernel -- the records were lost, and the title says so."""
    p = tmp_path / "lost.1.pt.trace.json"
    tt.write_lost_gpu_records(str(p), lost_from=0, log=())
    f = _capture_finding(_report(p))
    assert f.title == "The capture lost its GPU records"
    assert "recorded no CUDA activity" not in _words(f)


def test_the_control_with_cuda_recorded_reads_its_kernels(tmp_path):
    """Control: the same steps with ``ProfilerActivity.CUDA`` -- no capture-quality finding about the GPU's records."""
    p = tmp_path / "cuda_on.1.pt.trace.json"
    tt.write_cuda_activity_off(str(p), cuda=True)
    rep = _report(p)
    assert not any("CUDA activity" in f.title or "GPU records" in f.title for f in rep.findings)
    assert rep.gpus and rep.gpus[0].kernel_count > 0


def test_not_recorded_and_lost_share_one_exit_rule(tmp_path):
    """One rule for every format: both are a warning about the capture, so ``--fail-on warning`` exits 1 for each
    and no ``--fail-on`` exits 0 -- the cause changes the words, never the exit code."""
    codes = {}
    for name, write in (("off", lambda p: tt.write_cuda_activity_off(p)),
                        ("lost", lambda p: tt.write_lost_gpu_records(p, lost_from=0, log=()))):
        d = tmp_path / name
        d.mkdir()
        write(str(d / "h.1.pt.trace.json"))
        assert _capture_finding(_report(d / "h.1.pt.trace.json")).severity == "warning"
        # the command's exit code run in this process (``ran_report``): four fresh interpreters cost ~2 s each
        codes[name] = [ran_report(d, cache=str(tmp_path / f"cache_{name}_{i}"), extra=extra)[0]
                       for i, extra in enumerate((("--fail-on", "warning"), ()))]
    assert codes == {"off": [1, 0], "lost": [1, 0]}, codes
