"""What a rule is, and where rules register: the one table every other list of rules derives from.

A rule module registers its check with :func:`rule`; ``rules/__init__.py`` imports the rule modules in the
guide's order (:data:`~tb_gpu_advisor.rules.MODULES`, the only list of rules).  Headline card owners, the truth
tables of the synthetic corpus and ``docs/rules.md`` read this registry.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from tb_gpu_advisor.common.thresholds import THRESHOLDS

if TYPE_CHECKING:
    from tb_gpu_advisor.model.schema import Finding

CheckFn = Callable[[Any], "list[Finding]"]


@dataclass(frozen=True)
class Rule:
    id: str
    section: str  # "§1.2.2"
    title: str  # the generic title (findings may specialise it)
    thresholds: tuple[str, ...]  # names in thresholds.THRESHOLDS
    check: CheckFn
    doc: str = ""
    #: why the rule stayed silent although its headline card's number crosses its threshold (None: generic)
    quiet: Callable[[Any], str | None] | None = None
    #: the headline card this rule grades (its finding's severity is the card's), if any
    card: str | None = None
    #: "host": ``check(HostMetrics)`` per host file; "job": ``check(JobView)`` once per session, over every rank
    scope: str = "host"
    #: the GPU's idle categories (``report.timeline.IDLE_CATEGORIES``) its findings speak of: the tab's step timeline
    #: highlights them (none: every kind of idle time)
    waits: tuple[str, ...] = ()
    #: a host rule's judgement of its finding across the job, once every host is analysed (``rules.evaluate_session``):
    #: ``in_job(finding, job, job_findings)`` -> the session's finding, or None where the job shows it is no problem of
    #: its own (a host sees only its GPUs; what it measured may be the wait for another host's GPU).  None: the host's
    #: finding stands as the hosts found it
    in_job: Callable[[Any, Any, Any], Any] | None = None
    #: the strongest severity its findings may take, whatever grading follows the rule's own (the savings' raise in
    #: ``rules.follow_savings``): "warning" for a check whose guide calls its fix optional (XLA)
    ceiling: str = "critical"
    #: the host rules whose findings on the same host its check reads: the evaluator runs those first and calls
    #: ``check(metrics, earlier)``, ``earlier`` their findings by rule id (``rules.evaluate``); the check may tell what
    #: it found as a part of one of them, and then returns nothing of its own.  Why through the evaluator: a check that
    #: called the other itself computed it twice, and the other asked back (the gaps' check and the launch check on a
    #: step too small for its dispatch, h37-refactor66)
    reads: tuple[str, ...] = ()


REGISTRY: dict[str, Rule] = {}


def rule(id: str, section: str, title: str, thresholds: Sequence[str] = (),
         quiet: Callable[[Any], str | None] | None = None, card: str | None = None,
         scope: str = "host", waits: Sequence[str] = (),
         in_job: Callable[[Any, Any, Any], Any] | None = None,
         ceiling: str = "critical", reads: Sequence[str] = ()) -> Callable[[CheckFn], CheckFn]:
    """Decorator registering ``check(metrics) -> list[Finding]`` as rule ``id`` (``quiet``, ``card``, ``scope``,
    ``waits``, ``in_job``, ``ceiling``, ``reads``: see :class:`Rule`)."""
    for name in thresholds:
        if name not in THRESHOLDS:
            raise KeyError(f"rule {id}: unknown threshold {name!r}")

    def deco(fn: CheckFn) -> CheckFn:
        if id in REGISTRY:
            raise ValueError(f"rule {id!r} registered twice")
        doc = fn.__doc__ or getattr(sys.modules.get(fn.__module__), "__doc__", None) or ""
        REGISTRY[id] = Rule(id, section, title, tuple(thresholds), fn, doc.strip(), quiet, card, scope, tuple(waits),
                            in_job, ceiling, tuple(reads))
        return fn

    return deco


def card_rule(card_id: str) -> str | None:
    """The rule that grades headline card ``card_id`` (None: no rule owns it)."""
    return next((r.id for r in REGISTRY.values() if r.card == card_id), None)
