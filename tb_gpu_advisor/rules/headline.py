"""One grading for numbers, cards and findings, so the report never contradicts itself.

The rule (docs/report-schema.md, "Grading"):

* :func:`grade` is the only comparison against the threshold table: a value
  fires at ``>= warning`` (``<=`` for "lower is worse" thresholds) and is
  critical at the critical level.  Rules and cards both call it.
* A headline card that a rule owns (``@rule(..., card=...)``) takes the severity of
  that rule's finding: the rule is the judge because it sees what one number
  cannot (a Tensor Core GPU, how much of the step is MatMul, the framework).
  With no finding the card is ``good``; if its number still crosses the
  rule's threshold, the card says why the rule held back (``detail.not_flagged``).
  With a finding whose number is not the card's, the card names it
  (``detail.graded_by``).
* The one card no rule owns (the device step-time share) is graded by the
  ``headline.*`` thresholds.  When it is amber or red and no check fired, the
  verdict is not "healthy": :func:`unexplained_idle` says so.
* Without GPU activity the guide's checks do not run: GPU cards are
  ``unknown`` ("not graded"), never red.
"""

from __future__ import annotations

import math
from typing import Iterable

from tb_gpu_advisor.common.thresholds import THRESHOLDS, T
from tb_gpu_advisor.model.schema import Finding, Metric, Status
from tb_gpu_advisor.rules.registry import REGISTRY, card_rule

#: card id -> (warning, critical) thresholds its own number is compared with (the owning rule's first metric)
CARD_LEVELS: dict[str, tuple[str, str | None]] = {
    "device_step_share": ("headline.device_step_share.warning", "headline.device_step_share.critical"),
    "host_op_share": ("headline.host_op_share.warning", "headline.host_op_share.critical"),
    "sixteen_bit_share": ("mixed_precision_off.warning", None),
    "launch_wait_share": ("launch_bound.warning", "launch_bound.critical"),
    "input_wait_share": ("input_bound.warning", "input_bound.critical"),
    "mfu": ("mfu_low.mfu", None),
}
_BAD = ("critical", "warning")


def grade(value: float | None, warning: str, critical: str | None = None) -> str | None:
    """Severity of ``value`` against a threshold pair (direction from the table); None = below the warning level."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    below = THRESHOLDS[warning].direction == "below"

    def hit(name: str) -> bool:
        return value <= T(name) if below else value >= T(name)

    if critical is not None and hit(critical):
        return "critical"
    if hit(warning):
        return "warning"
    return None


def value_status(card_id: str, value: float | None) -> Status:
    """The grade of a card's own number alone: good / warning / critical, unknown without value or levels."""
    if value is None or card_id not in CARD_LEVELS:
        return "unknown"
    return grade(value, *CARD_LEVELS[card_id]) or "good"  # type: ignore[return-value]


def card_threshold(card_id: str) -> float | None:
    """The warning level shown next to a card."""
    return T(CARD_LEVELS[card_id][0]) if card_id in CARD_LEVELS else None


def worst(findings: Iterable[Finding], rule_id: str) -> Finding | None:
    """The most severe warning/critical finding of ``rule_id`` (critical first, then the larger saving)."""
    hits = [f for f in findings if f.rule == rule_id and f.severity in _BAD]
    return min(hits, key=lambda f: (_BAD.index(f.severity), -(f.saving.ms_per_step if f.saving else 0.0)), default=None)


def grade_card(card: Metric, findings: list[Finding], gpu_active: bool, why_quiet: str = "") -> Metric:
    """Set a headline card's status (and threshold, grading notes) from the rule that owns it.

    ``why_quiet``: why the owning rule did not fire although the card's
    number crosses its threshold (said on the card instead of a colour the
    findings do not back).
    """
    card.threshold = card_threshold(card.id)
    card.detail = dict(card.detail or {})
    owner = card_rule(card.id)
    if card.value is None:
        card.status = "unknown"
        return card
    if not gpu_active and card.id in CARD_LEVELS:
        card.status = "unknown"
        card.detail["not_graded"] = "no GPU activity in this capture: the guide's checks did not run"
        return card
    if owner is None:
        card.status = value_status(card.id, card.value)
        return card
    f = worst(findings, owner)
    if f is not None:
        card.status = f.severity  # type: ignore[assignment]
        if f.metric is not None and f.metric.display != card.display:
            card.detail["graded_by"] = {"rule": owner, "finding": f.id, "label": f.metric.label,
                                        "display": f.metric.display}
        return card
    card.status = "good"
    if value_status(card.id, card.value) in _BAD:
        # its number crosses its own printed threshold: never green beside it (issue #27 item 3) -- grey, with why the
        # check that weighs more than the number held back
        card.status = "unknown"
        # a check that fired as a note speaks through it: its quiet reason ("the rest is below this check's level")
        # is why it would not fire, never said beside its own note (h37-review11: the JAX block_until_ready runs'
        # launch card read "below this check's level" beside the check's graph-replay note)
        noted = any(f.rule == owner and f.severity == "info" for f in findings)
        card.detail["not_flagged"] = _quiet_words(owner, findings) if noted else why_quiet or _quiet_words(owner, findings)
    return card


def holder(findings: Iterable[Finding], rule_id: str) -> Finding | None:
    """The most severe warning/critical finding that holds ``rule_id``'s verdict as its own part (its metric's detail
    ``holds``: the rules whose findings it tells, ``rules.step_told_whole``), where ``rule_id``'s own finding was
    folded into it.  Why: a card whose check's finding is told inside another says so, never that its check "did not
    fire" (h37-calls67: wild ``jax_mi300x``'s launch card beside the host-bound finding holding its launch wait); it
    stays ungraded, the holder's grade being its whole's (the host's 306 us), not this card's number's."""
    hits = [f for f in findings if f.severity in _BAD and f.metric is not None
            and rule_id in ((f.metric.detail or {}).get("holds") or ())]
    return min(hits, key=lambda f: _BAD.index(f.severity), default=None)


def _quiet_words(owner: str, findings: list[Finding]) -> str:
    """Why a card past its threshold is not flagged, in words that fit the findings beside it: the owning check may
    have fired as a note (amd_mi250's "Launch-bound" info beside a card that said the check "did not fire"), and
    the check is named by its title, not its rule id."""
    note = next((f for f in findings if f.rule == owner and f.severity == "info"), None)
    held = holder(findings, owner)
    if held is not None:  # its finding is told inside another's, whose grade is that finding's whole, not this number's
        return (f"its check's finding is told inside another (\"{held.title}\", {held.severity}), which holds this "
                f"time as its own part")
    if note is not None:
        return f"its check weighs more than this number and rates it a note, not a problem (\"{note.title}\", info)"
    title = REGISTRY[owner].title if owner in REGISTRY else owner
    return f"its check (\"{title}\") weighs more than this number and did not fire"


def unexplained_idle(cards: list[Metric], findings: list[Finding]) -> Metric | None:
    """The device step-time card when it is amber or red while no check fired (the verdict must not say healthy)."""
    if any(f.severity in _BAD for f in findings):
        return None
    return next((c for c in cards if c.id == "device_step_share" and c.status in _BAD), None)


def disagreements(cards: list[Metric], findings: list[Finding]) -> list[str]:
    """Every way cards and findings contradict each other (empty = consistent); the consistency test walks reports."""
    out = []
    for c in cards:
        owner = card_rule(c.id)
        if owner is None or c.status == "unknown":
            continue
        f = worst(findings, owner)
        want = f.severity if f is not None else "good"
        if c.status != want:
            out.append(f"card {c.id} is {c.status} but {owner} says {want}")
    bad_cards = [c.id for c in cards if c.status in _BAD]
    if bad_cards and not any(f.severity in _BAD for f in findings):
        out.append(f"cards {bad_cards} are amber/red beside a healthy verdict")
    for f in findings:
        if f.severity == "ok" and any(x.severity in _BAD for x in findings):
            out.append(f"healthy finding {f.id} beside warnings")
    return out
