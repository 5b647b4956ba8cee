"""``tb-gpu-advisor mcp LOGDIR``: serve the logdir's reports to an AI assistant over MCP (stdio).

Usage::

    tb-gpu-advisor mcp LOGDIR [--cache-dir DIR] [--params N] [--net-gbps GBPS] [--in-process]

An MCP client (Claude Desktop, an IDE agent, ``mcp.client.stdio``) starts this command and talks JSON-RPC on its
stdin/stdout; logs go to stderr.  Tools: list_runs, get_report, diff_runs, explain_finding, get_tables,
capture_advice; resources: the rules' docs (``tb_gpu_advisor.serve.mcp_server``).  Needs the ``mcp`` extra:
``pip install 'tb-gpu-advisor[mcp]'``.

Exit codes: 0 the client closed the connection; 2 usage or input error (no such logdir, the SDK missing).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, TextIO

from tb_gpu_advisor.cli.report import EXIT_INPUT, _positive_int
from tb_gpu_advisor.common import fsio
from tb_gpu_advisor.serve import mcp_server



def add_parser(subparsers: Any) -> None:
    """Register ``mcp`` (called by cli/main.py)."""
    p = subparsers.add_parser(
        "mcp",
        help="serve LOGDIR's reports, diffs and tables to an AI assistant (MCP server on stdio)",
        description="Run a Model Context Protocol server on stdin/stdout for the profiles in LOGDIR: an assistant "
        "lists runs, reads reports (markdown or JSON), explains findings, compares runs with predicted vs realised "
        "savings, reads kernel and op tables and capture advice.  Needs: pip install 'tb-gpu-advisor[mcp]'.",
        epilog="client configuration (mcpServers): {\"gpu-advisor\": {\"command\": \"tb-gpu-advisor\", "
        "\"args\": [\"mcp\", \"/path/to/logdir\"]}}",
    )
    p.add_argument("logdir", metavar="LOGDIR", help="TensorBoard logdir (local path, s3://, gs://, ...)")
    p.add_argument("--cache-dir", default=None, metavar="DIR",
                   help="report cache folder (default: as 'report'; TB_GPU_ADVISOR_CACHE_DIR=off disables it)")
    p.add_argument("--params", type=_positive_int, default=None, metavar="N",
                   help="model parameter count for the expected AllReduce time, as given to 'report'")
    p.add_argument("--net-gbps", type=float, default=None, metavar="GBPS",
                   help="network bandwidth between hosts, GB/s per GPU, as given to 'report'")
    p.add_argument("--in-process", action="store_true",
                   help="analyse in this process instead of a child with the worker memory and time limits "
                        "(TB_GPU_ADVISOR_WORKER_MEMORY_MB, default a quarter of the memory, 2-4 GiB; "
                        "TB_GPU_ADVISOR_WORKER_TIMEOUT_S)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, stderr: TextIO | None = None) -> int:
    """Serve until the client closes stdin; 2 when the logdir is missing or the SDK is not installed."""
    stderr = stderr or sys.stderr
    if not fsio.is_remote(args.logdir) and not os.path.isdir(fsio.local_path(args.logdir)):
        print(f"tb-gpu-advisor mcp: error: {args.logdir}: no such directory", file=stderr)
        return EXIT_INPUT
    if not mcp_server.sdk_available():
        print(f"tb-gpu-advisor mcp: error: {mcp_server.SDK_MISSING}", file=stderr)
        return EXIT_INPUT
    mcp_server.serve_stdio(args.logdir, cache_dir=args.cache_dir, params=args.params, isolate=not args.in_process)
    return 0
