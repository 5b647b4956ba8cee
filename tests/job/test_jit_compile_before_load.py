"""A kernel compiled by a compiler the capture does not trace and loaded from memory with no link: the silence
before the load and the kernel's first launch is a first call's one-time compile, not the host's steady work (issue
#37 item 6, survey h37-survey41n).

The real case (nikitinvv/recon-stream ``report8.sqlite`` @5f9b9e0d, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``, "Session 41: h37-survey41n"): CuPy's first element-wise calls on an A100 under
``nsys -t cuda`` -- twice 169 ms with no CUDA call (NVRTC, which the capture does not trace), then
``cuModuleLoadData`` and the new kernel's first launch, in a pass of 346.8 ms whose GPU ran 15 us.  Main read the
silences as "the host's own code, which the profiler did not record": critical host-bound, 317.3 ms (91%).

By construction (``synthetic.nsysexport.write_nvrtc_first_calls``): the same silences with no load after them (the
host's own work) and a program that rebuilds its kernel every call are the controls.
"""

from __future__ import annotations

from synthetic import nsysexport as nx
from tests.support.cli_report import first_report as _report

LOADED = "compiled on the host (or read from a compiler's cache) and loaded from memory"


def _host_own(finding: dict) -> bool:
    """A finding that books the GPU's idle to the host's own (recorded or unrecorded) work."""
    return finding["title"].startswith("Host-bound") or finding["rule"] == "unexplained_idle"


def test_the_silence_before_a_load_from_memory_is_a_one_time_compile(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """The compiles (truth: each kernel's silence from the thread's last GPU work to the end of its module's load) are booked
    one-time, to the 0.1 ms; the report leads with the cold start, and no host-bound finding claims them."""
    path = str(tmp_path / "cupy.sqlite")
    truth = nx.write_nvrtc_first_calls(path)
    report = _report(path)
    job = report["hosts"][0]["job"]
    assert job["phase"] == "warm-up"
    assert f"{truth['first_runs']} kernels {LOADED} ({truth['compile_ms']:.1f} ms from" in job["phase_evidence"]
    top = report["findings"][0]
    assert top["rule"] == "cold_start" and top["severity"] == "critical"
    assert not any(_host_own(f) for f in report["findings"])


def test_silence_with_no_load_after_it_is_the_hosts_own_work(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: the same silences ending in launches with no load hold no sign of a compile: the host's own work,
    as before."""
    path = str(tmp_path / "noload.sqlite")
    truth = nx.write_nvrtc_first_calls(path, load=False)
    report = _report(path)
    assert truth["compile_ms"] == 0.0
    assert "loaded from memory" not in report["hosts"][0]["job"]["phase_evidence"]
    assert any(_host_own(f) for f in report["findings"])


def test_a_program_that_rebuilds_its_kernel_every_call_is_steady(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """Control: more loads before repeat launches than before first runs is a program that rebuilds every call
    (truth: ``rebuild_ms`` over the first calls' compile); its silences are its steady work, none booked one-time."""
    path = str(tmp_path / "rebuild.sqlite")
    truth = nx.write_nvrtc_first_calls(path, repeats=8)
    report = _report(path)
    assert truth["rebuild_ms"] > truth["compile_ms"]
    assert "loaded from memory" not in report["hosts"][0]["job"]["phase_evidence"]
    assert any(_host_own(f) for f in report["findings"])
