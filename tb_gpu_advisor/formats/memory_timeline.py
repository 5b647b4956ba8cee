"""torch.profiler's memory timeline (``profile.export_memory_timeline(path)``): not a profile, but it sits beside them.

PyTorch writes it in three forms, chosen by the path's suffix (``torch/profiler/profiler.py``,
``_memory_profiler.MemoryProfileTimeline``), none of which holds an event or a kernel:

* ``.json``: ``[times_us, sizes_by_category]`` -- a JSON array whose first array holds microsecond timestamps since the
  epoch (cwilson51/CO-Colloquium-Pytorch-profiler's ``train_batch_128_nworkers_6_memory_broken.json``);
* ``.raw.json.gz``: one ``[time_ns, action, bytes, category]`` per allocation and free, the time ``-1`` for what was
  live before the profile began (tonghuikang/optimizer-memory-profiles' ``profile.raw.json.gz``);
* ``.html``: a matplotlib plot of the same as one PNG in an ``<img>``, under PyTorch's fixed title "GPU Memory Timeline
  HTML" (the same repository's ``profile.html``: survey h37-survey17).

The JSON forms look like a trace to the Kineto sniffer, the page like a memory viewer's page to the snapshot sniffer:
both say what it is in these one set of words, and what to give instead.
"""

from __future__ import annotations

import re

#: The JSON forms' first bytes: ``[[<13+-digit time>,`` or a raw row ``[[-1, <action>, <bytes>, <category>]``.
_JSON = re.compile(rb"^\s*\[\s*\[\s*(?:\d{13,}\s*,|-1\s*,\s*\d\s*,\s*-?\d+\s*,\s*(?:-?\d+|null)\s*\])")
#: The page's title, PyTorch's fixed template (``export_memory_timeline_html``).
_PAGE = re.compile(rb"<title>\s*GPU Memory Timeline HTML\s*</title>", re.I)

WORDS = ("torch.profiler's memory timeline (`export_memory_timeline`: the bytes each category held over time -- in its "
         "raw form each allocation and free by category, in its .html form only a picture of them), not a trace: "
         "analyse the trace itself (`export_chrome_trace`, `tensorboard_trace_handler`) or a memory snapshot "
         "(`torch.cuda.memory._dump_snapshot`), which say where the memory went")


def is_json(head: bytes) -> bool:
    """Whether a JSON file's first bytes are a memory timeline's (either JSON form)."""
    return _JSON.search(head) is not None


def is_page(head: bytes) -> bool:
    """Whether an HTML page's first bytes are the timeline's plotted page."""
    return _PAGE.search(head) is not None
