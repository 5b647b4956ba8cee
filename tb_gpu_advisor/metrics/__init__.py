"""Metrics: timeline + steps -> :class:`~tb_gpu_advisor.metrics.types.HostMetrics`.

One module per job: ``breakdown`` (non-overlapping step time), ``kernels``
(kernel/op stats, precision, Tensor Cores, small kernels, fusion),
``memcpy``, ``ops`` (placement, eager, loss scaling), ``multigpu``,
``capture``.  ``compute.compute_host_metrics`` ties them together.
"""

#: Every event stat the steps and metrics read.  The reader drops the others
#: (``read_timeline(keep_stats=...)``); ``tests/test_stat_pruning.py`` checks
#: that reports are identical with and without pruning, so a stat read here
#: but missing from this set fails a test instead of silently reading nothing.
USED_STATS: frozenset[str] = frozenset({
    # events.host_events / device_events
    "correlation_id", "group_id", "step_num", "iter_num", "_r", "is_eager",
    "tf_op", "memcpy_details", "shape", "long_name",
    # XLA GPU kernels (JAX, TF jit_compile): the HLO op behind each kernel (events._hlo_ops)
    "hlo_op", "hlo_module",
    # kernels launched inside a CUDA graph (XLA command buffers): capture.graph_kernel_share
    "cuda_graph_id",
    # capture: memory headroom
    "peak_bytes_in_use", "allocator_name", "buffer_limit",
})

#: Event stats read from the timeline's lines *after* the event tables are built (``capture.memory``):
#: the lines keep these stat rows when the analysis releases their per-event columns
#: (``Line.release_events``); every other stat is in the event tables by then.
LATE_LINE_STATS: tuple[str, ...] = ("peak_bytes_in_use", "allocator_name", "buffer_limit")
