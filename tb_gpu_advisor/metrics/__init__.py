"""Metrics: trace + steps -> :class:`~tb_gpu_advisor.metrics.types.HostMetrics`.

One module per job: ``breakdown`` (non-overlapping step time), ``kernels``
(kernel/op stats, precision, Tensor Cores, small kernels, fusion),
``memcpy``, ``ops`` (placement, eager, loss scaling), ``multigpu``,
``capture``.  ``compute.compute_host_metrics`` ties them together.
"""
