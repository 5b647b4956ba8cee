"""The query parameters of the tab's routes, each checked strictly before it is used.

Why: a parameter is text from anyone who can reach TensorBoard.  ``str.isdigit()`` accepts ``²`` and ``int()``
then fails; ``int()`` refuses 5,000 digits; ``float()`` accepts ``١٢`` (Arabic-Indic digits), ``1_0`` and
surrounding blanks.  Each of those was an HTML 500 or a value nobody meant.  Here every parameter has one kind:

* a **name** (``run``, ``session``, ``host``, ``base_run`` ...): any text up to :data:`MAX_NAME_CHARS` (longer
  than any local path or object key), looked up in what discovery listed, never joined onto a path;
* an **index** (``file``): 1 to :data:`MAX_INDEX_DIGITS` ASCII digits, below the count of what it picks;
* a **number** (``start_ms``, ``end_ms``): a plain ASCII decimal (sign, digits, point, exponent) of at most
  :data:`MAX_NUMBER_CHARS` characters;
* a **setting** (``params``, ``net_gbps``, ``model_flops``): ``common.options.parse_query``, the same rules.

Anything else is TensorBoard's ``InvalidArgumentError``: a 400 with a plain message that names the parameter and
echoes at most the first characters of the value (``common.fmt.echo``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from tensorboard import errors

from tb_gpu_advisor.common.fmt import echo

#: Longer than any local path (PATH_MAX 4096 bytes) or object key (S3: 1024 bytes): no listed name is longer.
MAX_NAME_CHARS = 4096
#: An index picks one of a host's files (one per rank): 9 digits is a billion ranks.
MAX_INDEX_DIGITS = 9
#: ``-123456.789e-12`` and the like; a number of ms this long is no window of a capture.
MAX_NUMBER_CHARS = 64

_INDEX = re.compile(r"[0-9]+")  # str patterns: [0-9] is the ten ASCII digits only (\d would take any script's)
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def name(args: Mapping[str, str], key: str, required: bool = True) -> str | None:
    """The name ``key`` (None when optional and absent or empty); 400 when required and missing, or too long."""
    value = args.get(key)
    if not value:
        if required:
            raise errors.InvalidArgumentError(f"missing query parameter {key!r}")
        return None
    if len(value) > MAX_NAME_CHARS:
        raise errors.InvalidArgumentError(f"{key} is {len(value):,} characters long: no {key} is named like that "
                                          f"(names are at most {MAX_NAME_CHARS:,} characters)")
    return value


def index(args: Mapping[str, str], key: str, count: int, default: int = 0) -> int:
    """The index ``key`` (``default`` when absent or empty): ASCII digits, below ``count`` (400 otherwise)."""
    raw = args.get(key)
    if not raw:
        value = default
    elif len(raw) <= MAX_INDEX_DIGITS and _INDEX.fullmatch(raw):
        value = int(raw)
    else:
        value = -1
    if not 0 <= value < count:
        span = f"an index from 0 to {count - 1}" if count > 1 else "the index 0 (there is one)"
        raise errors.InvalidArgumentError(f"{key} must be {span}, not {echo(raw, 40)}")
    return value


def number(args: Mapping[str, str], key: str, limit: float, unit: str = "ms") -> float:
    """The required number ``key``: a plain ASCII decimal, finite and within ±``limit`` (400 otherwise)."""
    raw = args.get(key)
    if not raw:
        raise errors.InvalidArgumentError(f"missing query parameter {key!r}")
    if len(raw) > MAX_NUMBER_CHARS or not _DECIMAL.fullmatch(raw):
        raise errors.InvalidArgumentError(f"{key} must be a number of {unit} (ASCII digits, '.', an exponent), "
                                          f"not {echo(raw, 40)}")
    value = float(raw)
    if not math.isfinite(value) or abs(value) > limit:
        raise errors.InvalidArgumentError(f"{key} must be a finite number of {unit} within ±{limit:g}")
    return value
