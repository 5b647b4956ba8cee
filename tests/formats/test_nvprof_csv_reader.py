"""nvprof's printed GPU trace (``nvprof --csv --print-gpu-trace``, saved as a ``.csv``) is read as the GPU timeline it
is -- each kernel, copy and memset with its start, duration, grid, block, stream and GPU -- and its report says what
the printing did not keep (the host's calls, NVTX, the GPU's properties), never that the host is healthy.

Survey h37-wild57n (session 56's Left 1): main named such a file "nvprof's CSV output, not read" and asked for the run
again with ``--export-profile``, though the rows are the run's GPU records.  Truth by construction from
``synthetic.nvprofcsv``; the real traces (jakemdaly/PyTorch-GPU-Profiling, no licence: read from a local mirror, not
kept) are checked where the mirror is present."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from synthetic import nvprofcsv
from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.nvprof.csv_reader import NvprofCsvReadError, read_trace

#: jakemdaly/PyTorch-GPU-Profiling (no licence): a local mirror, if this machine has one; the tests on it skip without.
MIRROR = Path("/work/.mirror/jakemdaly+PyTorch-GPU-Profiling/repo")
REAL = "torch/gpu_traces/torch_gpu_trace/mnist/allLayers50TrialsBatchsizes1-2-5__10000/l2/GPUTrace_l2_bs500_44.csv"


def _kernels(trace) -> tuple[np.ndarray, list[str]]:  # noqa: ANN001 - a Trace
    d = trace.devices[0]
    names = [d.names[i] for i in d.name.tolist()]
    return np.array([not n.startswith(("Memcpy", "Memset")) for n in names], bool), names


@pytest.mark.parametrize("units", [("s", "ms"), ("us", "us"), ("ms", "ns")])
def test_a_generated_loop_reads_as_written(tmp_path: Path, units):
    truth = nvprofcsv.write(tmp_path / "trace.csv", start_unit=units[0], duration_unit=units[1])
    tr = read_trace(str(tmp_path / "trace.csv"))
    assert tr.format == "nvprof-csv" and len(tr.devices) == 1 and len(tr.h) == 0
    d = tr.devices[0]
    is_kernel, names = _kernels(tr)
    assert int(is_kernel.sum()) == truth["kernels"] and int((~is_kernel).sum()) == truth["copies"]
    assert (d.end - d.start)[is_kernel].sum() / 1e9 == pytest.approx(truth["kernel_ms"], rel=1e-6)
    assert d.info.name == truth["device"] and d.stream_names == ["stream 7"]
    # a symbol nvprof printed mangled is demangled; a copy is named as CUPTI names it to the other readers
    assert any(n.startswith("void at::native::vectorized_elementwise_kernel<4") for n in names)
    assert "Memcpy HtoD (Pageable -> Device)" in names
    ups = np.array([n.startswith("Memcpy HtoD") for n in names])
    assert int(d.mem_bytes[ups].sum()) == pytest.approx(truth["upload_bytes"], rel=1e-5)
    assert tr.printed_from.startswith("nvprof's CSV output") and any("CUDA API calls" in x for x in tr.not_kept)


def test_with_the_api_rows_each_gpu_record_has_its_launch(tmp_path: Path):
    truth = nvprofcsv.write(tmp_path / "trace.csv", api=True)
    tr = read_trace(str(tmp_path / "trace.csv"))
    assert len(tr.h) == truth["api_calls"]
    d = tr.devices[0]
    assert (d.corr >= 0).all()  # every kernel and copy tied to the call with its Correlation_ID
    assert not any("CUDA API calls" in x for x in tr.not_kept) and any("threads" in x for x in tr.not_kept)


def test_in_a_logdir_it_is_a_session_and_its_report_says_what_was_not_kept(tmp_path: Path, capsys):
    (tmp_path / "run1").mkdir()
    truth = nvprofcsv.write(tmp_path / "run1" / "trace.csv")
    sessions = discover(str(tmp_path))
    assert [h.format for s in sessions for h in s.hosts] == ["nvprof-csv"]
    assert cli(["report", str(tmp_path), "--cache-dir", "off", "--format", "json"]) in (0, 1)
    rep = json.loads(capsys.readouterr().out)
    host = rep["reports"][0]["hosts"][0]
    assert rep["healthy"] is False and "records_not_kept" in json.dumps(host)
    # the steps are the loop's, read off the GPU's bursts: each step's kernels, copies and the host's gap
    assert host["steps"]["found"] == truth["steps"]
    assert host["headline"][0]["detail"]["avg_step_ms"] == pytest.approx(truth["step_ms"], abs=0.05)
    row = host["step_rows"][0]["breakdown"]
    assert row["device_compute"] == pytest.approx(truth["kernel_ms"] / truth["steps"], abs=0.01)
    assert row["memcpy_h2d"] == pytest.approx(0.25, abs=0.01)


def test_a_table_cut_short_is_a_clear_error(tmp_path: Path):
    nvprofcsv.write(tmp_path / "trace.csv")
    text = (tmp_path / "trace.csv").read_text()
    (tmp_path / "cut.csv").write_text(text[: text.rindex(",")])
    with pytest.raises(NvprofCsvReadError, match="cut part-way|cells") as e:
        read_trace(str(tmp_path / "cut.csv"))
    # its record (h37-damage67b; none on base 776bb150): a cut in the table's last row
    from tb_gpu_advisor.model.damage import CUT, of_error

    d = of_error(e.value)
    assert d is not None and (d.kind, d.what) == (CUT, "csv_cut"), d


def test_control_a_csv_with_start_and_duration_but_no_gpu_is_passed_over(tmp_path: Path):
    """Named control (passes on base too): a CSV of the user's own timings is no profiler's."""
    (tmp_path / "run1").mkdir()
    (tmp_path / "run1" / "timings.csv").write_text('"Start","Duration","Name"\n0.1,2.5,"step"\n')
    assert discover(str(tmp_path)) == []


def _real(tmp_path: Path, rel: str) -> Path:
    if not MIRROR.is_dir():
        pytest.skip("jakemdaly/PyTorch-GPU-Profiling is not mirrored here (no licence: not kept)")
    out = tmp_path / "l2" / Path(rel).name
    out.parent.mkdir(parents=True)
    out.write_bytes(subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:{rel}"], check=True,
                                   capture_output=True).stdout)
    return out


def test_the_real_jetson_trace_reads_its_rows(tmp_path: Path):
    """``TorchDCNN.py mnist 2 500`` on a Jetson Nano, read by hand: 15 rows over 5.72 s -- 6 kernels (the weights'
    ``normal_kernel_cuda``, then an FFT convolution: ``maxwell_gcgemm_64x64_nt`` 160.6 ms, ``fft2d_r2c_32x32`` /
    ``fft2d_c2r_32x32``, a bias add), 5 copies and 4 memsets; the GPU busy 294.1 ms of it."""
    path = _real(tmp_path, REAL)
    tr = read_trace(str(path))
    is_kernel, names = _kernels(tr)
    d = tr.devices[0]
    assert len(d) == 15 and int(is_kernel.sum()) == 6 and d.info.name == "NVIDIA Tegra X1"
    assert (d.end - d.start).sum() / 1e9 == pytest.approx(294.07, abs=0.05)
    assert (d.end.max() - d.start.min()) / 1e12 == pytest.approx(5.72, abs=0.01)
    assert any(n.startswith("maxwell_gcgemm_64x64_nt") for n in names)


#: fp32 GEMMs and convolutions, as cuBLAS / cuDNN name them on Maxwell and Volta: Tensor-Core-eligible work in 32 bit.
FP32_GEMMS = ("maxwell_sgemm_128x64_nn", "maxwell_scudnn_128x64_relu_interior_nn", "maxwell_sgemm_128x64_nt")


def _findings(logdir: Path, capsys) -> list[dict]:  # noqa: ANN001
    assert cli(["report", str(logdir), "--cache-dir", "off", "--format", "json"]) in (0, 1)
    return json.loads(capsys.readouterr().out)["reports"][0]["hosts"][0]["findings"]


def test_a_gpu_its_name_says_has_no_tensor_cores_is_not_told_to_use_them(tmp_path: Path, capsys):
    """nvprof's printed trace names the GPU and nothing else of it; a Jetson Nano's ``NVIDIA Tegra X1`` is Maxwell
    (sm_53), with no Tensor Cores: fp32 GEMMs there are no "Tensor Cores unused" (main: "the capture does not say
    which GPU this is, nor whether it has them")."""
    (tmp_path / "run1").mkdir()
    nvprofcsv.write(tmp_path / "run1" / "trace.csv", kernel_names=FP32_GEMMS, kernel_ms=6.0, host_ms=1.0, api=True)
    ids = [f["rule"] for f in _findings(tmp_path, capsys)]
    assert "tensor_core_unused" not in ids


def test_control_the_same_gemms_on_a_v100_are_told_to_use_tensor_cores(tmp_path: Path, capsys):
    """Named control: the same trace printed on a V100 (Volta, Tensor Cores by its name in the table)."""
    (tmp_path / "run1").mkdir()
    nvprofcsv.write(tmp_path / "run1" / "trace.csv", kernel_names=FP32_GEMMS, kernel_ms=6.0, host_ms=1.0, api=True,
                    device="Tesla V100-SXM2-16GB (0)")
    ids = [f["rule"] for f in _findings(tmp_path, capsys)]
    assert "tensor_core_unused" in ids


def test_what_was_not_kept_is_recorded_by_nvprof_whatever_the_framework(tmp_path: Path, capsys):
    """A TensorFlow job printed by nvprof is told nvprof's way to record the run whole (its database), not TensorFlow
    2.3's XPlane (main's one fix for a printing was TensorFlow's trace viewer JSON's)."""
    (tmp_path / "run1").mkdir()
    nvprofcsv.write(tmp_path / "run1" / "trace.csv", kernel_names=(
        "void tensorflow::functor::ShuffleInTensor3Simple<float, int=2, int=1, int=0, bool=0>(int, float const *, "
        "tensorflow::functor::Dimension<int=3>, float*)", "redzone_checker"))
    found = [f for f in _findings(tmp_path, capsys) if (f.get("metric") or {}).get("id") == "records_not_kept"]
    assert len(found) == 1
    fixes = json.dumps(found[0]["actions"])
    assert "--export-profile" in fixes and "TensorFlow 2.3" not in fixes


#: ``nvprof --csv --print-api-trace`` alone: the API's rows, no GPU row (the layout as a public parser quotes it,
#: ``profile.process_<pid>.nvprof.api_trace.csv``; calls added to launch a kernel and wait for it)
API_ONLY = ('==15562== NVPROF is profiling process 15562, command: ./app\n==15562== Profiling result:\n'
            '"Start","Duration","Name","Correlation_ID"\nus,us,,\n0.000000,2.866000,"cuDeviceGetPCIBusId",1\n'
            '35863.518000,0.952000,"cuDeviceGetCount",2\n35900.0,15.0,"cudaMalloc",3\n36000.0,20.0,"cudaLaunchKernel",4\n'
            '36100.0,500.0,"cudaDeviceSynchronize",5\n')


def test_the_api_rows_alone_say_the_gpu_rows_were_not_printed(tmp_path: Path, capsys):
    """The GPU's records were recorded, never printed: the report says so and how to print them -- a warning, as
    every capture whose GPU side is missing is (exit 1 under --fail-on warning, 0 without), never healthy and never
    "lost"."""
    (tmp_path / "run1").mkdir()
    (tmp_path / "run1" / "api_trace.csv").write_text(API_ONLY)
    tr = read_trace(str(tmp_path / "run1" / "api_trace.csv"))
    assert len(tr.h) == 5 and not tr.devices and any("GPU's rows" in x for x in tr.not_kept)
    found = _findings(tmp_path, capsys)
    top = found[0]
    assert top["severity"] == "warning" and "lost" not in top["title"] and "--print-gpu-trace" in top["summary"]
    assert "--print-gpu-trace" in json.dumps(top["actions"])
    assert cli(["report", str(tmp_path), "--cache-dir", "off", "--fail-on", "warning"]) == 1


def test_records_nvprof_could_not_time_are_said_missing(tmp_path: Path):
    """nvprof's console warning before the table (``======== Warning: 376746 records have invalid timestamps due to
    insufficient device buffer space``, as a public parser quotes it) says its rows are not the GPU's whole work."""
    nvprofcsv.write(tmp_path / "trace.csv")
    text = (tmp_path / "trace.csv").read_text()
    (tmp_path / "warned.csv").write_text(
        "======== Warning: 376746 records have invalid timestamps due to insufficient device buffer space. You can "
        "configure the buffer space using the option --device-buffer-size.\n" + text)
    tr = read_trace(str(tmp_path / "warned.csv"))
    assert len(tr.devices[0]) == 48 and any("376,746 GPU records" in x for x in tr.not_kept)
    assert not any("could not time" in x for x in read_trace(str(tmp_path / "trace.csv")).not_kept)


def test_the_real_jetson_forward_is_one_pass(tmp_path: Path):
    """The same real trace read whole: one forward of the program (its uploads of different tensors in bursts of
    copies alone are no iterations), on a GPU without Tensor Cores -- main before this session: "not read"; with the
    reader alone: 4 burst "steps" of 33.7 ms."""
    from tests.support.cli_report import first_host

    path = _real(tmp_path, REAL)
    host = first_host(path.parent.parent)
    assert host["steps"]["source"] == "whole_capture" and host["steps"]["count"] == 1
    assert "tensor_core_unused" not in [f["rule"] for f in host["findings"]]
