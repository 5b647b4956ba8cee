"""Copy-only windows in the formats h37-probe43w did not build (its *Left* 4; h37-probe43e): a JAX host loop that
only ``jax.device_put``s and reads arrays back (XPlane), and a HIP program's copy loop under rocprof (AMD).

* XPlane: the copies' repeats are found from the launches (``repeated_launches``), no mark in the capture -- main's
  job line said "its loop: 5 marked steps", and the steps' note said each repeat was "launched without reading a
  result back" beside its device-to-host copy.
* rocprof: an MI300X that copied and ran no kernel was no active GPU, so the capture's vendor was none and the fix
  was Nsight's (NVTX ranges, ``nsys profile``): its vendor is the GPUs' that copied, its words ROCm's.

Truth by construction: ``synthetic.jaxcapture.write_copy_loop_window``, ``synthetic.rocproftrace.write`` with steps
of no kernel and a batch uploaded and read back each (its ``iteration`` roctx ranges: marked steps, rightly).
"""

from __future__ import annotations

from synthetic import jaxcapture as jc
from synthetic import rocproftrace as rp
from tests.support.cli_report import report_of


def test_a_jax_copy_loop_has_repeats_not_marked_steps(tmp_path):
    truth = jc.write_copy_loop_window(str(tmp_path))
    rep = report_of(str(tmp_path))
    (host,) = rep["hosts"]
    job = host["job"]
    assert job.get("copies_only") and f"{truth['h2d']} host to device" in job["kind_evidence"]
    assert host["steps"]["source"] == "repeated_launches"
    assert "marked step" not in job["summary"] and " repeats of " in job["summary"], job["summary"]
    note = host["steps"]["note"]
    assert "without reading a result back" not in note and "reading its result back" in note, note


def test_a_rocprof_copy_loop_speaks_rocm(tmp_path):
    t = rp.write(str(tmp_path / "results.json"), [[] for _ in range(10)], step_upload_bytes=64 << 20,
                 step_read_bytes=64 << 20, upload_bytes=0, read_bytes=0)
    assert t["kernels"] == 0
    rep = report_of(str(tmp_path))
    (host,) = rep["hosts"]
    assert host["job"].get("copies_only") and host["capture"]["vendor"] == "AMD"
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    said = " ".join(a["text"] + " " + (a["snippet"] or "") for a in f["actions"])
    assert "nsys" not in said and "NVTX" not in said and "CUDA" not in said, said
    assert "roctx" in said
    assert "marked step" in host["job"]["summary"]  # its roctx ranges mark them: marked, rightly


def test_a_jax_copy_loops_pinned_side_is_pjrts_staging_buffer(tmp_path):
    """The JAX copy loop's copies read from and wrote to pinned host memory -- PjRt's staging buffer, not the
    program's NumPy arrays, which are pageable and staged through it by the host (``H2D Dispatch`` in, ``D2H Copy
    From Staging Buffer`` out; openxla/xla ``common_pjrt_client.cc`` ``LinearizeIntoImpl``, read in
    ``frameworks.jax.is_upload_staging``).  Main said "host memory pinned" of the program's arrays, and the finding
    said pageable copies pass "through the driver's staging buffer" (h37-probe43e *Left* 2, h37-probe44v)."""
    truth = jc.write_copy_loop_window(str(tmp_path))
    rep = report_of(str(tmp_path))
    (host,) = rep["hosts"]
    said = host["job"]["kind_evidence"]
    assert "host memory pinned" not in said, said
    assert "PjRt's pinned staging buffer" in said and "NumPy arrays pageable" in said, said
    assert f"`H2D Dispatch` ×{truth['h2d']} in" in said and f"`D2H Copy From Staging Buffer` ×{truth['d2h']} out" in said
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    assert "driver's staging buffer" not in f["summary"] and "`pinned_host` memory kind" in f["summary"], f["summary"]


def test_a_torch_copy_loops_host_memory_keeps_its_words(tmp_path):
    """Control: a PyTorch copy loop from pinned tensors stages nothing of the framework's own: "host memory pinned",
    and the driver's staging buffer in the finding."""
    from synthetic import torchtrace as tt
    tt.write_copy_only_window(str(tmp_path), host="Pinned")
    rep = report_of(str(tmp_path))
    (host,) = rep["hosts"]
    assert "host memory pinned" in host["job"]["kind_evidence"]
    (f,) = [f for f in rep["findings"] if f["rule"] == "capture_quality"]
    assert "driver's staging buffer" in f["summary"]
