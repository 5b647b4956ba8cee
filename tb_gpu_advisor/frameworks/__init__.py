"""Framework vocabulary: which framework wrote a capture, and everything that depends on it.

The analysis is framework-neutral (host events, device events, launches,
steps); what an event *means* and how a fix is *spelled* is not.  Each
supported framework is one module here (``tensorflow``, ``jax``) exporting a
:class:`Framework`: detection markers, host-event predicates (input wait,
dispatch, transfers, background threads, framework ops), labels for the
report, headline numbers that have no meaning for it, and the fixes keyed by
rule id.  Rules, metrics and the report ask :func:`get`; none of them holds a
framework string.  Adding a framework is one new module plus one line in
:data:`REGISTRY`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from ..report_schema import Action

NamePredicate = Callable[[str], bool]


def never(_: str) -> bool:
    """The predicate of a concept the framework does not have."""
    return False


@dataclass(frozen=True)
class Framework:
    """What one framework's captures look like, and how to talk to its users."""

    id: str  # "tensorflow" | "jax" | "unknown" (reported as capture.framework)
    name: str  # "TensorFlow"
    #: host event name prefixes only this framework writes (detection)
    host_markers: tuple[str, ...] = ()
    #: ``/host:metadata`` plane stats only this framework writes (detection, preferred to markers)
    metadata_stats: tuple[str, ...] = ()
    #: the host waits for the next batch (TF ``IteratorGetNext``)
    input_event: NamePredicate = never
    #: the host puts a batch on the device outside any dispatch (JAX ``device_put``)
    transfer_event: NamePredicate = never
    #: a host->device copy of array data wherever it runs, inside a dispatch too (an implicit copy of a NumPy
    #: batch passed to a jitted function; JAX ``H2D Dispatch`` worker events); scalar copies are not batches
    batch_transfer_event: NamePredicate = never
    #: the host is inside the framework's dispatch of compiled work (JAX ``PjitFunction(f)``)
    dispatch_event: NamePredicate = never
    #: a framework op that may be placed on the host or the GPU (TF ``name:Type`` op events)
    host_op_event: NamePredicate = never
    #: host threads whose events are background work, never the step's critical path
    background_line: NamePredicate = never
    #: user-facing words: "op" ("TensorFlow op", "HLO op"), "ops_table", "input_wait", ...
    labels: Mapping[str, str] = field(default_factory=dict)
    #: headline card id or rule id -> why it has no meaning for this framework (shown instead of a number)
    not_applicable: Mapping[str, str] = field(default_factory=dict)
    #: rule id (or ``rule:variant``) -> the fixes, most useful first
    fixes: Mapping[str, tuple[Action, ...]] = field(default_factory=dict)
    #: how to capture a profile with step markers (capture-quality advice, empty states)
    capture_snippet: str = ""

    def label(self, key: str) -> str:
        return self.labels.get(key) or GENERIC_LABELS[key]

    def fix(self, key: str) -> list[Action]:
        """The fixes for ``rule`` or ``rule:variant`` (the variant's, else the rule's), as a new list."""
        if key in self.fixes:
            return list(self.fixes[key])
        return list(self.fixes.get(key.split(":", 1)[0], ()))

    @property
    def has_dispatch(self) -> bool:
        """The capture names the framework's dispatch of compiled work: launch wait is then the host inside it."""
        return self.dispatch_event is not never

    def applies(self, key: str) -> bool:
        return key not in self.not_applicable


#: Labels every framework may override.
GENERIC_LABELS: dict[str, str] = {
    "op": "op",
    "ops": "ops",
    "ops_table": "Top ops (kept steps)",
    "input_wait_meaning": "share of the step the GPU was idle while the host prepared or waited for input",
    "host_op_meaning": "framework ops that launched no GPU work, by count (by time in detail); should be very small",
}

from . import jax, tensorflow  # noqa: E402  (the modules use Framework above)

UNKNOWN = Framework(
    id="unknown", name="an unknown framework", labels=tensorflow.FRAMEWORK.labels,
    input_event=tensorflow.FRAMEWORK.input_event, host_op_event=tensorflow.FRAMEWORK.host_op_event,
    background_line=tensorflow.FRAMEWORK.background_line, fixes=tensorflow.FRAMEWORK.fixes,
    capture_snippet=tensorflow.FRAMEWORK.capture_snippet,
)
#: Every supported framework, in detection order.
REGISTRY: dict[str, Framework] = {f.id: f for f in (tensorflow.FRAMEWORK, jax.FRAMEWORK)}


def get(framework_id: str | None) -> Framework:
    """The framework of a capture (``capture.framework``); unknown ones get the guide's TensorFlow spelling."""
    return REGISTRY.get(framework_id or "", UNKNOWN)


def detect(host_event_names: Iterable[str], metadata_stats: Iterable[str] = ()) -> Framework:
    """The framework that wrote a capture: from ``/host:metadata`` stats first, then host event names.

    A capture whose host events carry the markers of two frameworks, or none, is ``unknown``.
    """
    stats = set(metadata_stats)
    by_meta = [f for f in REGISTRY.values() if stats.intersection(f.metadata_stats)]
    if len(by_meta) == 1:
        return by_meta[0]
    found: set[str] = set()
    for name in host_event_names:
        for f in REGISTRY.values():
            if f.id not in found and name.startswith(f.host_markers):
                found.add(f.id)
                if len(found) > 1:
                    return UNKNOWN
    return REGISTRY[found.pop()] if len(found) == 1 else UNKNOWN


def detect_timeline(tl) -> Framework:
    """:func:`detect` on a timeline: its host planes' event names (thousands at most) and metadata plane stats."""
    names = (n for p in tl.planes if p.name.startswith("/host:") for n in p.event_names)
    meta = tl.plane("/host:metadata")
    return detect(names, meta.stats.keys() if meta is not None else ())
