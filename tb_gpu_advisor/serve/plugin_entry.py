"""TensorBoard entry point (``tensorboard_plugins`` in setup.py).

TensorBoard loads this module with no try/except at start-up, so it must
import only what TensorBoard itself has and never fail: the real plugin is
imported inside ``load()`` where TensorBoard does catch errors.
"""

from __future__ import annotations

from tensorboard.plugins import base_plugin


class GpuAdvisorLoader(base_plugin.TBLoader):
    """Adds the Advisor's flags and builds the plugin lazily."""

    def define_flags(self, parser) -> None:  # noqa: ANN001 - argparse parser from TensorBoard
        parser.add_argument(
            "--gpu_advisor_cache_dir",
            metavar="DIR",
            default=None,
            help="Where the Advisor keeps computed reports between TensorBoard restarts "
            "(default: $TB_GPU_ADVISOR_CACHE_DIR, else the Advisor's own default).",
        )
        parser.add_argument(
            "--gpu_advisor_discovery_ttl",
            metavar="SECONDS",
            type=float,
            default=None,
            help="For remote logdirs (s3://, gs://, ...): reuse the list of profiles for this many "
            "seconds instead of listing the bucket on every request (default 5; 0 disables). "
            "Local logdirs are always listed afresh.",
        )

        parser.add_argument(
            "--gpu_advisor_net_gbps",
            metavar="GBPS",
            type=float,
            default=None,
            help="Network bandwidth between hosts, GB/s per GPU, that collectives across hosts are compared with "
            "(default 25: a 200 Gb/s NIC per GPU).",
        )

        parser.add_argument(
            "--gpu_advisor_model_flops_per_step",
            metavar="FLOPS",
            type=float,
            default=None,
            help="The model's FLOPs of one training step on one GPU: the Advisor's MFU uses it instead of the FLOPs "
            "the trace's shapes give.",
        )

    def load(self, context):  # noqa: ANN001
        import os

        from tb_gpu_advisor.common.thresholds import ENV_MODEL_FLOPS, ENV_NET_GBPS
        from tb_gpu_advisor.serve.plugin import GpuAdvisorPlugin

        net = getattr(context.flags, "gpu_advisor_net_gbps", None)
        if net is not None and net > 0:  # the analysis workers read it from the environment
            os.environ[ENV_NET_GBPS] = repr(float(net))
        flops = getattr(context.flags, "gpu_advisor_model_flops_per_step", None)
        if flops is not None and flops > 0:
            os.environ[ENV_MODEL_FLOPS] = repr(float(flops))

        return GpuAdvisorPlugin(context)
