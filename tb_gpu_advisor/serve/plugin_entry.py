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
            "--gpu_advisor_follow_symlinks",
            action="store_true",
            default=False,
            help="Follow symlinks inside the logdir (a run folder or a profile linked from elsewhere in it); off by "
            "default. A symlink leading out of the logdir is never followed, nor a link swapped in after the listing.",
        )

        # the three settings: one definition (common.options.settings_spec), as the CLI's options and the tab read it
        from tb_gpu_advisor.common.options import settings_spec

        for s in settings_spec():
            parser.add_argument(
                s.flag,
                metavar=s.metavar,
                type=s.arg_type,
                default=None,
                help=f"{s.help} Unset: {s.unset}. Like the CLI's {s.option}; the tab's Settings override it per view.",
            )

    def load(self, context):  # noqa: ANN001
        from tb_gpu_advisor.serve.plugin import GpuAdvisorPlugin

        # the flags are the defaults of every analysis the plugin runs (GpuAdvisorPlugin reads context.flags):
        # handed to each analysis as options, never through the environment
        return GpuAdvisorPlugin(context)
