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

import sqlite3
from pathlib import Path

from synthetic.nsysexport import write_refused_launch
from tb_gpu_advisor.formats.nsys import reader
from tb_gpu_advisor.frameworks import detect_trace
from tb_gpu_advisor.job.kind import work_kind
from tests.support.cli_report import ran_report


def _findings(path):
    """The findings of ``report PATH --format json`` run in this process (``ran_report``; a fresh interpreter per
    case cost ~2 s of imports for the same report), its exit code one of 0 and 1 as ``cli_report`` asserted."""
    code, report = ran_report(path)
    assert code in (0, 1), code
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


# --------------------------------------------------------------------- every launch refused: no kernel lost, none ran

#: Butter-gpw/CUDA's ``build/report1.sqlite`` (MIT, kept unchanged, h37-survey48): ``./gemm`` built by CUDA 12.4 nvcc
#: for ``CMAKE_CUDA_ARCHITECTURES=52`` (sm_52 machine code and compute_52 PTX), run on an RTX 4090 D (sm_89) under
#: driver 535.183.01 (CUDA 12.2): the GPU needs the PTX compiled, and the driver cannot read PTX of a newer toolkit, so
#: every one of the 21 ``cudaLaunchKernel`` calls returned 222 (cudaErrorUnsupportedPtxVersion) and no kernel ran.
PTX_REFUSED = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "ptx_refused_rtx4090d" / "report1.sqlite"


def _lost(findings):
    return [f for f in findings if f["title"] == "The capture lost its GPU records"]


def test_an_old_drivers_refusal_of_every_launch_is_said_not_a_lost_capture():
    con = sqlite3.connect(f"file:{PTX_REFUSED}?mode=ro", uri=True)
    launches = con.execute("SELECT returnValue, COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s "
                           "ON s.id = r.nameId WHERE s.value LIKE 'cudaLaunchKernel%' GROUP BY 1").fetchall()
    kernel_table = con.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'").fetchone()
    con.close()
    assert launches == [(222, 21)] and kernel_table == (0,)  # the file's own truth: 21 launches, each refused
    assert reader.read_trace(str(PTX_REFUSED)).producer["refused_count"] == "21"
    findings = _findings(PTX_REFUSED.parent)
    assert not _lost(findings)  # nothing was lost: no kernel ran
    top = findings[0]
    assert top["title"] == "A kernel launch failed: its kernel never ran" and top["severity"] == "critical"
    assert top["summary"].startswith("21 launch calls (`cudaLaunchKernel`) returned cudaErrorUnsupportedPtxVersion "
                                     "(222): the binary holds only PTX for this GPU (sm_89), built by a newer CUDA "
                                     "toolkit")
    assert "No kernel ran in the window" in top["summary"]
    assert "the kernels that ran" not in top["summary"]


def test_every_launch_refused_by_construction_is_no_lost_record(tmp_path):
    """Every launch of the generated benchmark refused (209, no code for the GPU): the one finding is the refusal."""
    p = tmp_path / "all_refused.sqlite"
    truth = write_refused_launch(str(p), refused=(0, 1, 2, 3, 4), code=209)
    assert truth["kernels_run"] == 0 and truth["refused"] == 5
    findings = _findings(p)
    assert not _lost(findings)
    (f,) = _refused(findings)
    assert f["summary"].startswith("5 launch calls (`cudaLaunchKernel`) returned cudaErrorNoKernelImageForDevice (209)")
    assert "No kernel ran in the window" in f["summary"]


def test_some_launches_refused_by_an_old_driver_keep_the_kernels_that_ran(tmp_path):
    """Four of five launches refused for their PTX (222, a code main did not know): the kernel that ran is still
    judged, and the words say the other findings are of the kernels that ran."""
    p = tmp_path / "four_refused.sqlite"
    write_refused_launch(str(p), refused=(0, 1, 2, 3), code=222)
    (f,) = _refused(_findings(p))
    assert f["summary"].startswith("4 launch calls (`cudaLaunchKernel`) returned cudaErrorUnsupportedPtxVersion (222)")
    assert "The other findings describe the kernels that ran." in f["summary"]


def _kind(path):
    trace = reader.read_trace(str(path))
    return work_kind(trace, detect_trace(trace))


def test_every_launch_refused_is_decided_once_by_the_job(tmp_path):
    """h37-review25's list: the job stage decides from the counts whether the runtime refused every launch
    (``Kind.every_launch_refused``), and capture_quality reads that fact instead of re-deriving it from the kind's other
    fields.  The kept capture (21 of 21 refused) and the generator's 5 of 5 say so; 4 of 5 (one kernel ran) and 1 of 5
    do not."""
    assert _kind(PTX_REFUSED).every_launch_refused
    every, some, one = tmp_path / "all.sqlite", tmp_path / "four.sqlite", tmp_path / "one.sqlite"
    write_refused_launch(str(every), refused=(0, 1, 2, 3, 4), code=209)
    write_refused_launch(str(some), refused=(0, 1, 2, 3), code=222)
    write_refused_launch(str(one))
    assert _kind(every).every_launch_refused
    assert _kind(every).refused_launches.startswith("5 launch calls")
    for path in (some, one):
        kind = _kind(path)
        assert kind.refused_launches and not kind.every_launch_refused


# --------------------------------------------------------------------- the cause names the GPU and driver the export records

def test_the_ptx_refusals_cause_names_the_gpu_and_driver_the_export_records():
    """h37-ptxarch: the kept export records its GPUs (four, RTX 4080 and RTX 4090 D, each compute capability 8.9) and
    the driver (``NvDriverVersion`` 535.183.01, ``CudaDriverVersion`` 12020: CUDA 12.2); on main the cause said
    "-arch=sm_XX" and "the toolkit the driver supports", withholding both."""
    con = sqlite3.connect(f"file:{PTX_REFUSED}?mode=ro", uri=True)
    ccs = con.execute("SELECT DISTINCT computeMajor, computeMinor FROM TARGET_INFO_GPU").fetchall()
    env = dict(con.execute("SELECT name, value FROM TARGET_INFO_SYSTEM_ENV WHERE name IN "
                           "('NvDriverVersion', 'CudaDriverVersion')").fetchall())
    con.close()
    assert ccs == [(8, 9)] and env == {"NvDriverVersion": "535.183.01", "CudaDriverVersion": "12020"}  # the file's truth
    (f,) = _refused(_findings(PTX_REFUSED.parent))
    summary = f["summary"]
    assert "only PTX for this GPU (sm_89)" in summary
    assert "than the driver (535.183.01, CUDA 12.2) supports" in summary
    assert "-arch=sm_89" in summary and "build with CUDA 12.2 or older" in summary
    assert "sm_XX" not in summary and "the toolkit the driver supports" not in summary


def test_a_refusal_names_the_generated_gpus_architecture(tmp_path):
    """The generator's A100 (8.0) and an invalid-PTX refusal (218): build for sm_80; no driver recorded, none named."""
    p = tmp_path / "invalid_ptx.sqlite"
    write_refused_launch(str(p), refused=(0, 1, 2, 3, 4), code=218)
    (f,) = _refused(_findings(p))
    assert f["summary"].startswith("5 launch calls (`cudaLaunchKernel`) returned cudaErrorInvalidPtx (218)")
    assert "-arch=sm_80" in f["summary"] and "sm_XX" not in f["summary"]


def test_a_refusal_without_the_gpu_table_keeps_the_generic_words(tmp_path):
    """No GPU table, no driver recorded: nothing to name, the generic words stay (and no empty parentheses)."""
    p = tmp_path / "no_gpu.sqlite"
    write_refused_launch(str(p), refused=(0, 1, 2, 3), code=222, gpu=None)
    text = reader.read_trace(str(p)).producer["refused_launches"]
    assert ("the binary holds only PTX for this GPU, built by a newer CUDA toolkit than the driver supports (update "
            "the driver, or build machine code for the GPU with -arch=sm_XX, or build with the toolkit the driver "
            "supports)") in text
    assert "()" not in text and "{" not in text


def test_a_box_of_mixed_gpus_names_no_architecture(tmp_path):
    """Two GPUs of different compute capability (8.0 and 8.6): a runtime row does not say which one refused, so no
    architecture is named."""
    p = tmp_path / "mixed.sqlite"
    write_refused_launch(str(p), refused=(0, 1, 2, 3), code=223)
    con = sqlite3.connect(p)
    con.execute("INSERT INTO TARGET_INFO_GPU SELECT * FROM TARGET_INFO_GPU")
    con.execute("UPDATE TARGET_INFO_GPU SET id = 1, cuDevice = 1, computeMinor = 6 WHERE rowid = "
                "(SELECT MAX(rowid) FROM TARGET_INFO_GPU)")
    con.commit()
    con.close()
    text = reader.read_trace(str(p)).producer["refused_launches"]
    assert "build machine code with -arch=sm_XX" in text and "sm_80" not in text and "sm_86" not in text
