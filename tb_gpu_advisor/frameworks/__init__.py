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
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from tb_gpu_advisor.model.schema import Action

NamePredicate = Callable[[str], bool]


def action(text: str, snippet: str | None = None, lang: str | None = None) -> Action:
    """A fix: what to change, and code (or an environment variable) to copy; the language is guessed if not given."""
    if snippet is not None and lang is None:
        lang = "shell" if snippet.lstrip().startswith(("export ", "TF_", "XLA_", "#!")) else "python"
    return Action(text=text, snippet=snippet, snippet_lang=lang)  # type: ignore[arg-type]


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
    #: the framework's own step annotation spanning a whole step (PyTorch ``ProfilerStep#N``): no host work itself
    step_marker: NamePredicate = never
    #: user-facing words and phrases (keys of :data:`GENERIC_LABELS`), and ``title:<rule>`` finding titles
    labels: Mapping[str, str] = field(default_factory=dict)
    #: headline card id or rule id -> why it has no meaning for this framework (shown instead of a number)
    not_applicable: Mapping[str, str] = field(default_factory=dict)
    #: rule id (or ``rule:variant``) -> the fixes, most useful first
    fixes: Mapping[str, tuple[Action, ...]] = field(default_factory=dict)
    #: how to capture a profile with step markers (capture-quality advice, empty states)
    capture_snippet: str = ""
    #: the same in one or two short lines, with LOGDIR (the CLI's "no profiles found" help)
    capture_hint: tuple[str, ...] = ()
    #: the input format (``formats.REGISTRY`` id) this framework's profiler writes
    writes: str = ""

    def label(self, key: str, **fmt: object) -> str:
        """A word or phrase in this framework's vocabulary (``{name}`` fields filled from ``fmt``)."""
        text = self.labels[key] if key in self.labels else GENERIC_LABELS[key]
        return text.format(**fmt) if fmt else text

    def title(self, rule_id: str) -> str | None:
        """This framework's title for a rule's findings, or None for the rule's own (framework-neutral) title."""
        return self.labels.get(f"title:{rule_id}")

    def fix(self, key: str, **fmt: object) -> list[Action]:
        """The fixes for ``rule`` or ``rule:variant`` (the variant's, else the rule's), as a new list.

        ``fmt`` fills ``{name}`` fields of the fixes' text (never of their code).
        """
        if key in self.fixes:
            found = self.fixes[key]
        else:
            found = self.fixes.get(key.split(":", 1)[0], ())
        return [_filled(a, fmt) for a in found]

    def extra(self, key: str, **fmt: object) -> list[Action]:
        """The fixes of exactly ``rule:variant``: an optional addition that frameworks without it leave out."""
        return [_filled(a, fmt) for a in self.fixes.get(key, ())]

    def fixes_for(self, rule_id: str, variants: Iterable[str], **fmt: object) -> list[Action]:
        """The fixes of several variants of one rule, in order, each once (a missing variant: the rule's)."""
        out: list[Action] = []
        for v in variants:
            out.extend(a for a in self.fix(f"{rule_id}:{v}", **fmt) if a not in out)
        return out

    @property
    def has_dispatch(self) -> bool:
        """The capture names the framework's dispatch of compiled work: launch wait is then the host inside it."""
        return self.dispatch_event is not never

    def applies(self, key: str) -> bool:
        return key not in self.not_applicable


def _filled(a: Action, fmt: Mapping[str, object]) -> Action:
    return Action(text=a.text.format(**fmt), snippet=a.snippet, snippet_lang=a.snippet_lang) if fmt else a


#: Words and phrases every framework may override; the value here is the framework-neutral wording.
GENERIC_LABELS: dict[str, str] = {
    "op": "op",
    "ops": "ops",
    "ops_short": "framework ops",
    "ops_table": "Top ops (kept steps)",
    "input_wait_meaning": "share of the step the GPU was idle while the host prepared or waited for input",
    "host_op_meaning": "framework ops that launched no GPU work, by count (by time in detail); should be very small",
    #: one call of the framework's dispatch of compiled work (step-level launch-bound)
    "dispatch_call": "compiled call",
    #: who should see the GPU ("Was the GPU visible to ...?")
    "gpu_user": "the framework",
    #: the step compiled as one unit (eager-execution saving)
    "compiled_step": "one compiled graph",
    #: the compiler that fuses kernels (xla_not_used)
    "compiler": "XLA",
    #: host work that holds the GPU idle between steps
    "step_gaps:host_work": "host work between steps",
    #: the host launching work during a gap (TF: launch threads contending with tf.data threads)
    "step_gaps:launch": "host launch threads busy (thread contention)",
    #: appended to the launch-skew summary when the capture shows no per-GPU launch threads
    "launch_skew:no_private_threads": "",
}

from tb_gpu_advisor.frameworks import jax, pytorch, tensorflow  # noqa: E402  (the modules use Framework above)

if TYPE_CHECKING:  # the trace model imports numpy; importing a format or framework must not
    from tb_gpu_advisor.model.trace import Trace

UNKNOWN = Framework(
    id="unknown", name="an unknown framework", labels=tensorflow.FRAMEWORK.labels,
    input_event=tensorflow.FRAMEWORK.input_event, host_op_event=tensorflow.FRAMEWORK.host_op_event,
    background_line=tensorflow.FRAMEWORK.background_line, fixes=tensorflow.FRAMEWORK.fixes,
    capture_snippet=tensorflow.FRAMEWORK.capture_snippet,
)
#: Every supported framework, in detection order.
REGISTRY: dict[str, Framework] = {f.id: f for f in (tensorflow.FRAMEWORK, jax.FRAMEWORK, pytorch.FRAMEWORK)}


def display_names() -> tuple[str, ...]:
    """The supported frameworks' display names, in registry order (for --help and messages)."""
    return tuple(f.name for f in REGISTRY.values())


def how_to_capture(layouts: Mapping[str, str]) -> str:
    """How to write a profile, one block per framework, then where each format's files go (``layouts``: format id
    -> its layout as users are told it) -- the CLI's "no profiles found" help."""
    lines = ["How to capture a profile (about ten seconds of steady-state steps):"]
    for f in REGISTRY.values():
        for i, hint in enumerate(f.capture_hint):
            lines.append(f"  {(f.name + ':') if i == 0 else '':<12}{hint}")
    for fmt, layout in layouts.items():
        writers = [f.name for f in REGISTRY.values() if f.writes == fmt]
        if writers:
            verb = "writes" if len(writers) == 1 else "write"
            lines.append(f"{' and '.join(writers)} {verb} LOGDIR/{layout}")
    return "\n".join(lines)


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


def detect_trace(trace: Trace) -> Framework:
    """The framework of a trace: the only one that writes its format (Kineto: PyTorch), else :func:`detect` on
    its host event names (thousands at most) and metadata keys."""
    writers = [f for f in REGISTRY.values() if f.writes == trace.format]
    if len(writers) == 1:
        return writers[0]
    return detect(trace.h.names, trace.metadata_keys)
