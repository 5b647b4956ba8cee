"""What the command line's log lines look like on stderr: one line each, the traceback only with ``--debug``.

Why: a check that fails on an odd capture (a ``ZeroDivisionError`` in one rule on a trace whose timestamps are in
seconds) is logged with its traceback for whoever debugs it; the report itself is right and says that check could
not run.  Without a handler, Python printed that traceback to the user's terminal (the logging module's last
resort).  The command line now installs one handler (:func:`configure`): a warning is one line naming the
logger's message and, when there was an exception, its type and ``--debug``; ``--debug`` shows every record from
DEBUG on with its traceback.

The setting travels to the analysis's worker processes in ``TB_GPU_ADVISOR_DEBUG`` (0 or 1; they start with the
parent's environment): :func:`configure_worker` gives them the same handler when their process has none.  Set it
to 1 by hand to get the tracebacks of ``precompute``'s or TensorBoard's workers the same way.
"""

from __future__ import annotations

import logging
import os
import sys

ENV_DEBUG = "TB_GPU_ADVISOR_DEBUG"
#: The package's loggers, whose records the handler shows (other libraries' stay at WARNING).
PACKAGE = "tb_gpu_advisor"
_MARK = "_tb_gpu_advisor_handler"


class OneLine(logging.Formatter):
    """``tb-gpu-advisor: warning: <message> (ZeroDivisionError; --debug for the traceback)``: no traceback, no
    stack, newlines folded, so a failure is one line however deep it was raised."""

    def __init__(self, prog: str = "tb-gpu-advisor") -> None:
        super().__init__()
        self.prog = prog

    def format(self, record: logging.LogRecord) -> str:
        message = " ".join(record.getMessage().split())
        if record.exc_info and record.exc_info[0] is not None:
            message += f" ({record.exc_info[0].__name__}; --debug for the traceback)"
        return f"{self.prog}: {record.levelname.lower()}: {message}"


def is_command_handler(handler: logging.Handler) -> bool:
    """Whether ``handler`` is the one :func:`configure` installs (what a caller that runs the command's ``main`` in
    its own process takes off again after: the test suite)."""
    return bool(getattr(handler, _MARK, False))


def debug_enabled() -> bool:
    return os.environ.get(ENV_DEBUG, "").strip().lower() in ("1", "true", "yes", "on")


def configure(debug: bool = False, stream=None) -> logging.Handler:  # noqa: ANN001 - a text stream
    """Install the command line's stderr handler on the root logger (replacing one installed before): one line a
    record from WARNING on, or with ``debug`` every record of the package from DEBUG on with tracebacks.  Sets
    ``TB_GPU_ADVISOR_DEBUG`` so worker processes do the same."""
    root = logging.getLogger()
    for h in [h for h in root.handlers if getattr(h, _MARK, False)]:
        root.removeHandler(h)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    setattr(handler, _MARK, True)
    if debug:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler.setLevel(logging.DEBUG)
        logging.getLogger(PACKAGE).setLevel(logging.DEBUG)
        os.environ[ENV_DEBUG] = "1"
    else:
        handler.setFormatter(OneLine())
        handler.setLevel(logging.WARNING)
        os.environ[ENV_DEBUG] = "0"
    root.addHandler(handler)
    if root.level > logging.WARNING or root.level == logging.NOTSET:
        root.setLevel(logging.WARNING)
    return handler


def configure_worker() -> None:
    """In a worker process of the command line (``TB_GPU_ADVISOR_DEBUG`` set by :func:`configure`): the parent's
    choice, when nothing handles logs here yet.  TensorBoard's workers (the variable unset) are left as they are."""
    if os.environ.get(ENV_DEBUG) is not None and not logging.getLogger().handlers:
        configure(debug_enabled())
