"""Status colours of the headline cards, graded with the same threshold table as the rules.

A card is amber or red when its number crosses the level at which the
matching rule would fire (input wait -> ``input_bound``, launch wait ->
``launch_bound``, 16-bit share -> ``mixed_precision_off``) or, for the two
numbers no single rule owns, the ``headline.*`` thresholds.
"""

from __future__ import annotations

from ..report_schema import Status
from .thresholds import T

# card id -> (warning threshold, critical threshold or None, True when a LOW value is bad)
_LEVELS: dict[str, tuple[str, str | None, bool]] = {
    "device_step_share": ("headline.device_step_share.warning", "headline.device_step_share.critical", True),
    "host_op_share": ("headline.host_op_share.warning", "headline.host_op_share.critical", False),
    "sixteen_bit_share": ("mixed_precision_off.warning", None, True),
    "launch_wait_share": ("launch_bound.warning", "launch_bound.critical", False),
    "input_wait_share": ("input_bound.warning", "input_bound.critical", False),
}


def card_status(card_id: str, value: float | None) -> Status:
    """good / warning / critical for a headline card; unknown without a value or a grading."""
    if value is None or card_id not in _LEVELS:
        return "unknown"
    warning, critical, low_is_bad = _LEVELS[card_id]

    def crosses(name: str) -> bool:
        return value < T(name) if low_is_bad else value >= T(name)

    if critical is not None and crosses(critical):
        return "critical"
    return "warning" if crosses(warning) else "good"


def card_threshold(card_id: str) -> float | None:
    """The warning level shown next to a card."""
    return T(_LEVELS[card_id][0]) if card_id in _LEVELS else None
