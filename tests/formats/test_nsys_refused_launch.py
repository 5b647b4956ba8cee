"""A kernel launch the CUDA runtime refused: the call returned an error, the kernel never ran and left no GPU record,
and the program went on (issue #37, survey h37-survey12).

Seen in Promisewjx/cuda-gemm's ``report_nsys.sqlite`` (read locally, no licence: not kept): an A100 GEMM benchmark
launched six kernels, one per version, and five ran; the sixth, ``gemm_tensorcore_large_tile`` with its dynamic shared
memory over the 48 KB a kernel gets by default, has only its ``cudaLaunchKernel`` row, ``returnValue`` 1
(cudaErrorInvalidValue), and its ``cudaEventSynchronize`` returned in 7 us.  On main the report said nothing of it
(cold start first, then Tensor Core findings about the kernels that ran).  The export here is
``synthetic.nsysexport.write_refused_launch``'s, so which launches were refused, and with what code, is known by
construction."""

from __future__ import annotations

from synthetic.nsysexport import write_refused_launch
from tb_gpu_advisor.formats.nsys import reader
from tests.support.cli_report import cli_report


def _findings(path):
    report = cli_report(path)
    return report["findings"]


def _refused(findings):
    return [f for f in findings if f["title"] == "A kernel launch failed: its kernel never ran"]


def test_a_refused_launch_is_said_first_with_its_error_and_cause(tmp_path):
    p = tmp_path / "refused.sqlite"
    truth = write_refused_launch(str(p))
    assert truth["refused"] == 1 and truth["kernels_run"] == 4
    findings = _findings(p)
    top = findings[0]
    assert top["rule"] == "capture_quality" and top["severity"] == "critical", (top["rule"], top["title"])
    assert top["title"] == "A kernel launch failed: its kernel never ran"
    assert top["summary"].startswith("1 launch call (`cudaLaunchKernel`) returned cudaErrorInvalidValue (1)")
    assert "cudaFuncAttributeMaxDynamicSharedMemorySize" in top["summary"]  # the usual cause of code 1 at a launch
    assert "cudaGetLastError" in top["actions"][0]["snippet"]
    # the kernels that ran are still judged: fp32 GEMMs without Tensor Cores
    assert any(f["rule"] == "tensor_core_unused" for f in findings)


def test_every_refused_launch_is_counted_with_the_first_error(tmp_path):
    p = tmp_path / "refused9.sqlite"
    truth = write_refused_launch(str(p), refused=(1, 3), code=9)
    (f,) = _refused(_findings(p))
    assert f["summary"].startswith(f"{truth['refused']} launch calls (`cudaLaunchKernel`) returned "
                                   "cudaErrorInvalidConfiguration (9)")


def test_accepted_launches_say_nothing(tmp_path):
    p = tmp_path / "ok.sqlite"
    write_refused_launch(str(p), refused=())
    assert not _refused(_findings(p))
    assert "refused_launches" not in reader.read_trace(str(p)).producer


def test_a_fault_is_not_a_refused_launch(tmp_path):
    """A launch that returned a sticky error (700: an earlier kernel faulted) is the fault's report, not a refusal."""
    p = tmp_path / "faulted.sqlite"
    write_refused_launch(str(p), code=700)
    assert "refused_launches" not in reader.read_trace(str(p)).producer
