"""A window that recorded the program's CPU side and holds none of its work is the profiler's own, not work on the CPU
(h37-hunt69, issue #37 class 1: a window with no GPU work).

The real trace: jjiwoo28/NonLinLF ``trace_output.json`` (MIT; ``tests/fixtures/wild/profiler_only_a4000``), an RTX
A4000, CPU and CUDA activity with ``with_stack``, run under ``pdb``.  Its 1.06 ms window (``Op count: 0``) holds 64
Python frames, every one the profiler's own exit (``__exit__`` -> ``stop`` -> ``_transit_action`` -> ``start_trace``,
then ``stop_trace``: a schedule whose recording the loop never reached), and one ``cudaDeviceSynchronize`` of 17 us,
the profiler's exit sync.  No op, no kernel.

Main (b2a0d583) read "no call of the profiled code touched the GPU, so it ran on the CPU" and told the job to move its
model and inputs to the GPU ("No GPU activity in the capture", ``capture_quality:gpu_unused``): the words of a window
that did not record the CPU side (the A10G course capture of ``test_profiler_calls_only``, CUDA activity alone, its
model left on the CPU), said of one that did and holds no op -- code the window never ran.  The control is that
A10G capture, read as before."""

from __future__ import annotations

from pathlib import Path

from synthetic.torchtrace import write_profiler_calls_only
from tests.support.cli_report import first_report

_REAL = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "profiler_only_a4000"


def _window(rep: dict) -> dict:
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    return f


def test_the_profilers_own_window_is_not_work_on_the_cpu():
    rep = first_report(_REAL)
    job = rep["hosts"][0]["job"]
    evidence = job["kind_evidence"]
    assert job["kind"] == "no_gpu" and "64 Python frames" in evidence and "no op" in evidence, evidence
    assert "ran on the CPU" not in evidence and "ran none of the program's work" in evidence, evidence
    assert "began inside the profiler's own exit" in evidence, evidence  # its frames: __exit__ -> start_trace
    f = _window(rep)
    text = f["summary"] + " ".join((a["text"] or "") + (a["snippet"] or "") for a in f["actions"])
    assert "the profiler's own work" in f["title"], f["title"]
    assert "move the model" not in text and "model.to(device)" not in text, text
    assert "prof.step()" in text and "wait + warmup + active" in text, text


def test_control_the_a10g_window_without_the_cpu_side_still_ran_on_the_cpu(tmp_path: Path):
    path = tmp_path / "run" / "a10g.pt.trace.json"
    path.parent.mkdir(parents=True)
    write_profiler_calls_only(str(path))
    evidence = first_report(path)["hosts"][0]["job"]["kind_evidence"]
    assert "so it ran on the CPU" in evidence and "Python frame" not in evidence, evidence
