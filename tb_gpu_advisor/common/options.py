"""The user's settings that change a report beyond its input files: one value, handed through the analysis.

Three numbers the trace cannot give, each from the user:

* ``params`` -- the model's parameter count: the expected AllReduce time (``allreduce_slow``, guide §2.1);
* ``net_gbps`` -- the network's bandwidth between hosts, GB/s per GPU: what collectives across host files are
  compared with (``comm_bandwidth_low``; default ``comm.net_GBps``);
* ``model_flops`` -- the model's FLOPs of one training step on one GPU: MFU from them instead of the trace's shapes.

Why a value and not the environment: the tab serves requests for different settings at once, in threads and in
worker processes, so a setting must travel with its analysis (:class:`UserOptions` is frozen and picklable).  The
environment variables below stay the transport of the command line's ``--net-gbps`` / ``--model-flops-per-step``
to code that is handed no options (the MCP server, precompute's hooks): :meth:`UserOptions.of` reads them only
where a caller gives no options at all.

The options used are part of every report cache key (:meth:`UserOptions.key_material`), so two settings never share
an entry.  :func:`parse_query` checks a request's settings: positive finite numbers, ``params`` a whole number.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from tb_gpu_advisor.common.thresholds import ENV_MODEL_FLOPS, ENV_NET_GBPS, T

#: The query parameters (and URL keys of the tab) of the three settings, in the order the tab lists them.
QUERY_KEYS = ("params", "net_gbps", "model_flops")


@dataclass(frozen=True)
class Setting:
    """One setting as every surface names it: the one definition the CLI's options (``cli/options.py``),
    TensorBoard's flags (``serve/plugin_entry.py``) and the tab's Settings (served in ``/runs``' legend) read."""

    key: str  # query parameter and URL key of the tab; UserOptions field (model_flops: ``model_flops``)
    option: str  # the command line's option
    flag: str  # TensorBoard's flag
    label: str  # the tab's label
    metavar: str
    whole: bool  # a whole number (the parameter count)
    example: str  # the tab's placeholder
    help: str  # one line: what it changes
    unset: str  # what applies when it is not given

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)

    @property
    def arg_type(self) -> Callable[[str], float]:
        """argparse's ``type`` of the setting's command-line option and TensorBoard flag (one function per kind, so
        every surface's option is the same): a bad value is argparse's error, which stops the program with the reason
        instead of being ignored."""
        return _whole_arg if self.whole else _positive_arg


def settings_spec() -> tuple[Setting, ...]:
    """The three settings, in :data:`QUERY_KEYS` order (the network default read from the thresholds table)."""
    return (
        Setting("params", "--params", "--gpu_advisor_params", "Parameters", "N", True, "e.g. 110000000",
                "The model's parameter count (Model.summary()): each AllReduce is judged against parameters x 4 bytes "
                "over the link (guide §2.1).", "AllReduce time is measured, not judged"),
        Setting("net_gbps", "--net-gbps", "--gpu_advisor_net_gbps", "Network GB/s per GPU", "GBPS", False, "e.g. 50",
                "Bandwidth between hosts, GB/s per GPU, that collectives across host files are compared with.",
                f"{T('comm.net_GBps'):g} GB/s (a 200 Gb/s NIC per GPU)"),
        Setting("model_flops", "--model-flops-per-step", "--gpu_advisor_model_flops_per_step",
                "Model FLOPs per step and GPU", "FLOPS", False, "e.g. 6e12",
                "MFU from the model's own FLOPs of one step on one GPU (training: e.g. 6 x params x tokens per GPU) "
                "instead of the FLOPs the trace's shapes give.", "from the FLOPs the trace's shapes give"),
    )

# A plain decimal number as a form field or a command line gives it: 110000000, 1.1e8, 110_000_000, 110,000,000.
_NUMBER = re.compile(r"[0-9][0-9_,]*(\.[0-9]*)?([eE][+-]?[0-9]+)?|\.[0-9]+([eE][+-]?[0-9]+)?")


#: A setting written longer than this is no number anyone meant (110,000,000,000 is 15 characters).
MAX_NUMBER_CHARS = 64


class OptionError(ValueError):
    """A setting that is not a positive finite number (``params``: not a positive whole number); says which."""


@dataclass(frozen=True)
class UserOptions:
    """The user's settings of one analysis; None: not given (the analysis' own default applies)."""

    params: int | None = None
    net_gbps: float | None = None
    model_flops: float | None = None

    @classmethod
    def from_env(cls, params: int | None = None) -> "UserOptions":
        """The command line's settings as it leaves them in the environment (``cli.main``); a value that is not a
        positive finite number counts as not given, as before options were explicit."""
        return cls(params=params, net_gbps=_positive_or_none(os.environ.get(ENV_NET_GBPS)),
                   model_flops=_positive_or_none(os.environ.get(ENV_MODEL_FLOPS)))

    @classmethod
    def of(cls, options: "UserOptions | None", params: int | None = None) -> "UserOptions":
        """The options an entry point analyses with: the caller's, else the environment's (the command line's);
        ``params`` where given (the older keyword of every entry point) wins over the options' own."""
        base = options if options is not None else cls.from_env()
        return base if params is None else replace(base, params=int(params))

    def overridden_by(self, other: "UserOptions") -> "UserOptions":
        """These options with every setting ``other`` gives in its place (a request's over TensorBoard's flags)."""
        return UserOptions(*(b if b is not None else a for a, b in zip(self.as_tuple(), other.as_tuple())))

    def as_tuple(self) -> tuple[int | None, float | None, float | None]:
        return (self.params, self.net_gbps, self.model_flops)

    @property
    def link_gbps(self) -> float:
        """Network bandwidth between hosts, GB/s per GPU: the user's, else the thresholds table's ``comm.net_GBps``."""
        return self.net_gbps if self.net_gbps is not None else T("comm.net_GBps")

    def key_material(self) -> dict[str, float]:
        """The settings besides ``params`` (which has its own slot) for a report cache key; empty when none is
        given, so keys of reports made without them keep their earlier form."""
        out: dict[str, float] = {}
        if self.net_gbps is not None:
            out["net_gbps"] = float(self.net_gbps)
        if self.model_flops is not None:
            out["model_flops_per_step"] = float(self.model_flops)
        return out

    def as_query(self) -> dict[str, str]:
        """The given settings as query parameters (the tab's URL keys): :func:`parse_query` reads them back."""
        return {k: _plain(v) for k, v in zip(QUERY_KEYS, self.as_tuple()) if v is not None}


def parse_query(get: Callable[[str], str | None]) -> UserOptions:
    """A request's settings (``get(name)``: its query parameter or None); an absent or empty one is not given.

    Raises :class:`OptionError` naming the parameter for anything but a positive finite number (``params``: a
    positive whole number), so the caller answers 400 instead of analysing with a setting the user did not mean.
    """
    raw = {k: (get(k) or "").strip() for k in QUERY_KEYS}
    return UserOptions(
        params=parse_params(raw["params"], "params") if raw["params"] else None,
        net_gbps=parse_positive(raw["net_gbps"], "net_gbps") if raw["net_gbps"] else None,
        model_flops=parse_positive(raw["model_flops"], "model_flops") if raw["model_flops"] else None,
    )


def parse_positive(text: str, name: str | None = None) -> float:
    """A positive finite number written as a form field gives it (``1.1e8``, ``110_000_000``), else OptionError
    (its message starts with ``name`` when given)."""
    value = _number(text)
    if value is None or not (value > 0 and math.isfinite(value)):
        raise OptionError(_named(name, f"must be a positive number, got {text[:40]!r}"))
    return value


def parse_params(text: str, name: str | None = "params") -> int:
    """A positive whole number (the parameter count: ``110000000``, ``1.1e8``), else OptionError."""
    value = _number(text)
    if value is None or not (value > 0 and math.isfinite(value)) or not value.is_integer():
        raise OptionError(_named(name, f"must be a positive whole number (the model's parameter count), "
                                       f"got {text[:40]!r}"))
    return int(value)


def _whole_arg(text: str) -> int:
    """:func:`parse_params` as argparse's ``type`` (``--params``, ``--gpu_advisor_params``)."""
    try:
        return parse_params(text, None)
    except OptionError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _positive_arg(text: str) -> float:
    """:func:`parse_positive` as argparse's ``type`` (``--net-gbps``, ``--model-flops-per-step`` and their flags)."""
    try:
        return parse_positive(text)
    except OptionError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _named(name: str | None, message: str) -> str:
    return f"{name}: {message}" if name else message


def _number(text: str) -> float | None:
    """The value of a plain decimal number (no sign, no nan/inf words), None for anything else."""
    t = text.strip()
    if len(t) > MAX_NUMBER_CHARS or not _NUMBER.fullmatch(t):
        return None
    try:
        return float(t.replace("_", "").replace(",", ""))
    except (ValueError, OverflowError):
        return None


def _positive_or_none(text: str | None) -> float | None:
    try:
        v = float(text or "")
    except ValueError:
        return None
    return v if v > 0 and math.isfinite(v) else None


def _plain(v: float) -> str:
    """A setting as text that reads back to it: whole numbers without a fraction (``110000000``, ``6``)."""
    return str(int(v)) if float(v).is_integer() else repr(float(v))
