"""Synthetic nvprof printed traces (``nvprof --csv --print-gpu-trace <program> 2> trace.csv``) whose content is known
by construction (h37-wild57n).

The layout is the real files' (jakemdaly/PyTorch-GPU-Profiling's ``trace_l1_*.csv`` of a Jetson Nano, nvprof of
CUDA 10.x): the console's ``==<pid>==`` lines, the quoted header, a row of units, one row per copy, kernel or memset,
the GPU's cells quoted.  With ``api=True`` the API's rows are printed too, as ``--print-api-trace`` adds them: the
GPU's cells empty, the call's ``Correlation_ID`` the one its work carries.

:func:`write` writes a loop: each step a pageable upload of the batch (``[CUDA memcpy HtoD]``), ``kernels`` kernels on
stream 7, a download of the result (``[CUDA memcpy DtoH]``), then ``host_ms`` with nothing on the GPU.  It returns the
truth of what it wrote.
"""

from __future__ import annotations

from pathlib import Path

HEADER = ('"Start","Duration","Grid X","Grid Y","Grid Z","Block X","Block Y","Block Z","Registers Per Thread",'
          '"Static SMem","Dynamic SMem","Size","Throughput","SrcMemType","DstMemType","Device","Context","Stream",'
          '"Name","Correlation_ID"')
PID = 7098
DEVICE = "NVIDIA Tegra X1 (0)"
#: A kernel as nvprof prints it (demangled), and one it printed as its symbol (an anonymous namespace's).
KERNELS = ("void add_tensor_kernel_v3<int=2, float, float, int=32, int=1, int=4, int=2, int=2>(cudnnTensorStruct, "
           "float*, cudnnTensorStruct, float const *, float, float, int, int, int)",
           "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_")
_TIME = {"s": 1e-3, "ms": 1.0, "us": 1e3, "ns": 1e6}  # per ms


def write(path: Path, *, steps: int = 8, kernels: int = 4, kernel_ms: float = 2.0, host_ms: float = 30.0,
          upload_kb: float = 512.0, api: bool = False, start_unit: str = "s", duration_unit: str = "ms",
          start_s: float = 8.25, kernel_names: tuple[str, ...] = KERNELS, device: str = DEVICE) -> dict:
    """Write the trace at ``path``; the truth: ``kernels`` (count), ``kernel_ms`` (their total), ``copies``,
    ``upload_bytes`` (all uploads), ``steps``, ``step_ms`` (one step start to the next), ``gpu_busy_ms``,
    ``blocks`` / ``threads`` of the first kernel, ``device``.  ``kernel_names`` are run in turn; ``device`` is the GPU
    as nvprof prints it (its name, the ordinal in parentheses)."""
    rows: list[tuple[float, float, list[str], str, int, bool]] = []  # start ms, dur ms, cells, name, corr, api?
    corr = 100
    t = start_s * 1e3
    upload_ms, download_ms = 0.25, 0.05
    busy = 0.0
    for _ in range(steps):
        step_start = t
        corr += 2
        if api:
            rows.append((t - 0.02, upload_ms + 0.04, [], "cudaMemcpy", corr, True))
        rows.append((t, upload_ms, ["", "", "", "", "", "", "", "", "", f"{upload_kb / 1024:.6f}",
                                    f"{upload_kb / 1024 / 1024 / (upload_ms / 1e3):.6f}", '"Pageable"', '"Device"'],
                     "[CUDA memcpy HtoD]", corr, False))
        t += upload_ms
        busy += upload_ms
        for k in range(kernels):
            corr += 2
            if api:
                rows.append((t - 0.01, 0.006, [], "cudaLaunchKernel", corr, True))
            name = kernel_names[k % len(kernel_names)]
            rows.append((t, kernel_ms, ["64", "1", "1", "256", "1", "1", "32", "0.000000", "0.000000", "", "", "", ""],
                         name, corr, False))
            t += kernel_ms
            busy += kernel_ms
        corr += 2
        if api:
            rows.append((t - 0.005, download_ms + 0.02, [], "cudaMemcpy", corr, True))
        rows.append((t, download_ms, ["", "", "", "", "", "", "", "", "", "0.003906", "0.076294", '"Device"',
                                      '"Pageable"'], "[CUDA memcpy DtoH]", corr, False))
        t += download_ms
        busy += download_ms
        t += host_ms
        step_ms = t - step_start
    lines = [f"=={PID}== NVPROF is profiling process {PID}, command: python train.py",
             f"=={PID}== Profiling application: python train.py", f"=={PID}== Profiling result:", HEADER,
             f"{start_unit},{duration_unit},,,,,,,,KB,KB,MB,GB/s,,,,,,,"]
    for start, dur, cells, name, c, is_api in sorted(rows, key=lambda r: r[0]):
        s = f"{start * _TIME[start_unit]:.6f}"
        d = f"{dur * _TIME[duration_unit]:.6f}"
        if is_api:
            lines.append(f'{s},{d},,,,,,,,,,,,,,,,,"{name}",{c}')
        else:
            lines.append(",".join([s, d, *cells, f'"{device}"', '"1"', '"7"', f'"{name}"', str(c)]))
    Path(path).write_text("\n".join(lines) + "\n")
    return {"kernels": steps * kernels, "kernel_ms": steps * kernels * kernel_ms, "copies": 2 * steps,
            "upload_bytes": int(steps * upload_kb * 1024), "steps": steps, "step_ms": step_ms,
            "gpu_busy_ms": busy, "blocks": 64,
            "threads": 256, "device": device.rsplit(" (", 1)[0], "api_calls": (kernels + 2) * steps if api else 0}


def write_first_call_autotuned(path: Path, *, candidates: int = 4, check_ms: float = 20.0, idle_ms: float = 5000.0,
                               checker: str = "redzone_checker") -> dict:
    """A TensorFlow program's one call of a convolution, printed by nvprof (jakemdaly's ``trace_l1_20200329_1.csv``
    in shape): the first call's algorithm search -- each candidate kernel run once, each followed by two ``checker``
    kernels (XLA's stream executor checking the candidate's buffers), each candidate's burst after ``idle_ms`` on the
    host -- then the call itself: the upload, the chosen kernel, a bias add, the download.  The truth: one pass, no
    iteration (``iterations`` 0), the checker's time ``check_ms`` x 2 x ``candidates``."""
    rows: list[tuple[float, float, str, bool]] = []  # start ms, duration ms, name, copy?
    t = 10_000.0
    for i in range(candidates):
        rows.append((t, 0.1, f"void cudnn::detail::dgrad_alg{i}_engine<float, int=512>(int, float const *)", False))
        t += 0.2
        for _ in range(2):
            rows.append((t, check_ms, checker, False))
            t += check_ms + 0.05
        t += idle_ms
    rows.append((t, 0.01, "[CUDA memcpy HtoD]", True))
    rows.append((t + 0.05, 0.15, "void cudnn::detail::dgrad_alg1_engine<float, int=512>(int, float const *)", False))
    rows.append((t + 0.25, 0.02, "void tensorflow::BiasNCHWKernel<float>(int, float const *, float const *, float*)",
                 False))
    rows.append((t + 0.3, 0.01, "[CUDA memcpy DtoH]", True))
    lines = [f"=={PID}== NVPROF is profiling process {PID}, command: python main.py",
             f"=={PID}== Profiling result:", HEADER, "s,ms,,,,,,,,KB,KB,MB,GB/s,,,,,,,"]
    for c, (start, dur, name, copy) in enumerate(rows, 1):
        if copy:
            src, dst = ('"Pageable"', '"Device"') if "HtoD" in name else ('"Device"', '"Pageable"')
            cells = ["", "", "", "", "", "", "", "", "", "0.001", "0.1", src, dst]
        else:
            cells = ["64", "1", "1", "256", "1", "1", "32", "0.000000", "0.000000", "", "", "", ""]
        lines.append(",".join([f"{start / 1e3:.6f}", f"{dur:.6f}", *cells, f'"{DEVICE}"', '"1"', '"7"', f'"{name}"',
                               str(100 + 2 * c)]))
    Path(path).write_text("\n".join(lines) + "\n")
    return {"iterations": 0, "check_ms": check_ms * 2 * candidates, "bursts": candidates + 1}


def write_one_forward_with_uploads(path: Path, *, upload_mb: tuple[float, float, float] = (0.140625, 0.976562, 0.0027),
                                   host_ms: float = 5288.0) -> dict:
    """A program's one forward, printed by nvprof, laid out as jakemdaly's ``GPUTrace_l2_bs500_44.csv`` (TorchDCNN on a
    Jetson Nano): the weights uploaded (``upload_mb[0]``) around their initialising kernel, more weights
    (``upload_mb[1]``) in a burst of their own, ``host_ms`` on the host, the workspace's memsets, the input
    (``upload_mb[2]``), then the forward's kernels and its read-back.  The truth: one pass, no iteration."""
    rows: list[tuple[float, float, str, float]] = [  # start ms, duration ms, name, MB (-1: a kernel)
        (0.0, 0.052, "[CUDA memcpy HtoD]", upload_mb[0]), (0.5, 0.001, "[CUDA memcpy HtoD]", 0.000122),
        (3.3, 0.150, "void at::native::normal_kernel_cuda<float>(at::TensorIterator&, double, double)", -1.0),
        (29.4, 0.323, "[CUDA memcpy HtoD]", upload_mb[1])]
    t = 29.7 + host_ms
    rows += [(t + 0.1 * k, 0.003, "[CUDA memset]", 0.000122) for k in range(4)]
    rows.append((t + 1.9, 0.003, "[CUDA memcpy HtoD]", upload_mb[2]))
    t += 108.2
    for name, dur in (("void fft2d_r2c_32x32<float, bool=1, unsigned int=0, bool=0>(float2*, float const *)", 56.8),
                      ("maxwell_gcgemm_64x64_nt", 160.6),
                      ("void fft2d_c2r_32x32<float, bool=0, bool=0, unsigned int=1>(float*, float2 const *)", 53.0)):
        rows.append((t, dur, name, -1.0))
        t += dur + 0.01
    rows.append((t, 16.9, "[CUDA memcpy DtoH]", 3.9))
    lines = [f"=={PID}== NVPROF is profiling process {PID}, command: python TorchDCNN.py mnist 2 500",
             f"=={PID}== Profiling result:", HEADER, "s,ms,,,,,,,,KB,KB,MB,GB/s,,,,,,,"]
    for c, (start, dur, name, mb) in enumerate(rows, 1):
        if mb >= 0:
            src, dst = {"HtoD": ('"Pageable"', '"Device"'), "DtoH": ('"Device"', '"Pageable"')}.get(
                name[13:17], ('"Device"', ""))
            cells = ["", "", "", "", "", "", "", "", "", f"{mb:.6f}", f"{mb / 1024 / (dur / 1e3):.6f}", src, dst]
        else:
            cells = ["64", "1", "1", "256", "1", "1", "32", "0.000000", "0.000000", "", "", "", ""]
        lines.append(",".join([f"{8.267 + start / 1e3:.6f}", f"{dur:.6f}", *cells, f'"{DEVICE}"', '"1"', '"7"',
                               f'"{name}"', str(100 + 2 * c)]))
    Path(path).write_text("\n".join(lines) + "\n")
    return {"iterations": 0}
