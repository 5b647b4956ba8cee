"""What the tab must know to draw a report and the server decides: the one copy, served with ``/runs``.

The tab's charts stack the step breakdown's categories in their order with their names, paint the GPU's idle time
by the timeline's categories, highlight the wait each rule speaks of, name the diff's groups and offer the settings.
All of that is the server's knowledge (``metrics.types.BREAKDOWN_CATEGORIES``, ``report.timeline.IDLE_CATEGORIES``,
each rule's ``waits``, ``rules.savings.COMPARED_GROUPS``, ``common.options.settings_spec``); :func:`legend` hands it over as
data, so a new rule, category or setting needs no edit of the tab's JavaScript.  A category or kind without a label
here still shows, under its id (``tests/report/test_legend.py`` asks for a label for each).

A label that names a vendor's call asks the vendor for its words (``devices.<vendor>.TERMS``): the legend holds
each vendor's labels (``vendors``, keyed by ``devices.<vendor>.VENDOR``) and each host report says its vendor
(``HostReport.capture.vendor``), so an AMD report's allocator reads "hipMalloc / hipFree", never CUDA's names.
"""

from __future__ import annotations

from typing import Any

from tb_gpu_advisor import devices
from tb_gpu_advisor.common.options import settings_spec
from tb_gpu_advisor.common.thresholds import T
from tb_gpu_advisor.metrics.types import BREAKDOWN_CATEGORIES, MEMORY_CATEGORIES
from tb_gpu_advisor.report.timeline import EVENT_KINDS, IDLE_CATEGORIES
from tb_gpu_advisor.rules import REGISTRY as RULES
#: What holds memory at a GPU's peak (``metrics.types.MEMORY_CATEGORIES``), as the memory chart's bar names it: the
#: rules' names (``rules._memory.CATEGORY_LABELS``, their one home), not a table of its own.
from tb_gpu_advisor.rules._memory import CATEGORY_LABELS as MEMORY_LABELS
from tb_gpu_advisor.rules.savings import COMPARED_GROUPS

#: The step breakdown's categories as the tab names them (chart legends and hovers); ``{allocator_calls}``: the
#: vendor's term (``devices.<vendor>.TERMS``).
CATEGORY_LABELS = {
    "device_compute": "Device compute",
    "launch_wait": "Waiting for kernel launch",
    "input_wait": "Waiting for input",
    "host_compute": "Host compute",
    "memcpy_h2d": "Copy host→device",
    "memcpy_d2h": "Copy device→host",
    "memcpy_d2d": "Copy device→device",
    "memset": "Memset (GPU filling its own memory)",
    "collectives": "Collectives (AllReduce…)",
    "startup": "One-time start-up",
    "unseen": "Waiting on work not in the capture",
    "stream_handoff": "Handoffs between streams (a stream waiting on another's work)",
    "allocator": "Allocator calls ({allocator_calls})",
    "kernel_switch": "GPU switching between queued kernels",
    "profiler": "Profiler's own work (capture only)",
    "managed_read": "Host reading managed memory (page faults)",
    "other": "Other / idle",
}
#: The GPU's idle time in a step timeline, by what the breakdown counts it as.
IDLE_LABELS = {
    "kernel_switch": "GPU idle a few microseconds between kernels it already holds: its own switch from one to the "
                     "next",
    "startup": "GPU idle: one-time start-up (module loading, library start-up, compilation)",
    "allocator": "GPU idle: the host in the device allocator ({allocator_calls})",
    "unseen": "GPU idle on work the capture does not hold: the host waiting for GPU work the trace lacks, or the GPU "
              "holding a kernel already launched and submitted",
    "stream_handoff": "GPU idle at a handoff between streams: work queued on one stream waiting for another stream's "
                      "work to end",
    "profiler": "GPU idle: the program waiting for the profiler's own work (its buffer requests): the capture's cost, "
                "not the program's",
    "input_wait": "GPU idle: waiting for input",
    "host_compute": "GPU idle: host working",
    "launch_wait": "GPU idle: waiting for a kernel launch",
    "managed_read": "GPU idle: the host reading managed memory the GPU wrote, asleep in its page fault",
    "other": "GPU idle: other",
}
#: The kinds of event a step timeline's lanes hold (``report.timeline.EVENT_KINDS``).
KIND_LABELS = {
    "kernel": "kernel", "memcpy_h2d": "copy host→device", "memcpy_d2h": "copy device→host",
    "memcpy_d2d": "copy device→device", "memset": "memset (fill)", "collectives": "collective", "input": "input (host waits for data)",
    "launch": "launch (host)", "host_compute": "host work", "host": "host (other)",
}
#: The groups the diff compares the breakdown by (``rules.savings.COMPARED_GROUPS``: the saving groups, fills apart).
GROUP_LABELS = {
    "input": "Input", "launch": "Launch", "host": "Host / idle", "copies": "Copies", "fills": "Fills (memset)", "compute": "Compute",
    "collectives": "Collectives", "startup": "Start-up", "unseen": "Unseen GPU work",
    "handoff": "Handoffs between streams", "allocator": "Allocator",
    "kernel_switch": "Kernel switches", "profiler": "Profiler's own work",
}


def _named(ids: Any, labels: dict[str, str], terms: dict[str, str] | None = None) -> list[dict[str, str]]:
    """Each id with its label, the vendor's terms filled in."""
    return [{"id": i, "label": (labels.get(i) or i.replace("_", " ")).format_map(terms or {})} for i in ids]


def vendor_labels(vendor: Any) -> dict[str, list[dict[str, str]]]:
    """The labels that speak of a vendor's calls, in its words (``vendor``: a ``devices`` vendor module)."""
    return {"categories": _named(BREAKDOWN_CATEGORIES, CATEGORY_LABELS, vendor.TERMS),
            "idle": _named(IDLE_CATEGORIES, IDLE_LABELS, vendor.TERMS)}


def legend() -> dict[str, Any]:
    """``categories`` (the breakdown, bottom of a stacked bar first), ``idle`` (the GPU's idle categories, the
    breakdown's priority: highest first), ``kinds`` (timeline events), ``rule_waits`` (rule id -> the idle
    categories its findings speak of; a rule not listed: every one), ``groups`` (the diff's breakdown groups with
    their categories), ``memory`` (what holds memory at a peak, in the memory chart's stacking order), ``min_saving_share`` (the
    share of the step under which a saving is written "<0.5%") and ``settings`` (``common.options.Setting`` each: key, label, flag, help, what applies unset).
    ``categories`` and ``idle`` are in the words of the vendor a GPU no vendor claims gets (``devices.vendor``);
    ``vendors`` holds them in each vendor's words, for the report whose ``capture.vendor`` names it."""
    return {
        **vendor_labels(devices.vendor(None)),
        "vendors": {v.VENDOR: vendor_labels(v) for v in devices.VENDORS},
        "kinds": _named(EVENT_KINDS, KIND_LABELS),
        "rule_waits": {r.id: list(r.waits) for r in RULES.values() if r.waits},
        "groups": [{**g, "categories": list(COMPARED_GROUPS[g["id"]])} for g in _named(COMPARED_GROUPS, GROUP_LABELS)],
        "memory": _named(MEMORY_CATEGORIES, MEMORY_LABELS),
        "settings": [s.as_dict() for s in settings_spec()],
        # a saving under this share of the step is written "<0.5%", on the tab as in the CLI (render.saving_text)
        "min_saving_share": T("report.min_saving_share"),
    }
