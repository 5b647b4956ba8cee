"""Walk seed ``--forms11 104070`` reduced: 2 ranks 50 us apart in one Nsight export, 2 iterations of `forward FFT` >
`pointwise` > `backward FFT`, 20 kernels and a read-back each (truth: 2 iterations, period 0.513 ms).  The frame
tests (tests/steps/test_framed_own_process.py) and the per-rank period tests (tests/steps/test_ranks_own_steps.py)
read the same job."""

SEED = 104070
JOB = {"steps": 2, "ranks": 2, "ops": 20, "kernel_us": 10.889, "kernel": "GEMM_BF16", "launch_us": 19.86,
       "h2d_bytes": 10039, "h2d_us": 1.0, "pinned": True, "copies_block": False, "d2h_us": 1.0, "input_ms": 0.0,
       "nccl_us": 0.0, "sync": True, "autograd_nvtx": False, "step_range": None,
       "extra_ranges": ("forward FFT", "pointwise", "backward FFT"), "comm_range": None, "graph_mode": None,
       "untraced_ms": 0.0, "kernel_gap_us": 0.0, "setup_ms": 0.0, "d2h_bytes": 8015, "d2h_pinned": True,
       "d2h_async": True, "vocab": "backward_fft", "range_domain": None}
