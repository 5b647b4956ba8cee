"""PyTorch's memory viewer saves a snapshot as one self-contained page (``torch.cuda._memory_viz``'s ``trace_plot``):
an ``.html`` whose script hands ``MemoryViz.js`` the snapshot's pickle in base64.  Survey h37-survey17 found one in
the wild -- tonghuikang/optimizer-memory-profiles' ``snapshot.html`` (no licence: read locally, not kept), the
ResNet-50 training snapshot of PyTorch's "Understanding GPU Memory 1" blog: three iterations, 500 MiB replayed peak,
562 MiB reserved, 215 MiB held -- and main answered "not a profile this tool reads".  The page is the snapshot: here a
kept real snapshot (``wild/snapshot_windows_gpt``) is wrapped in the viewer's page, and the page must read exactly as
the pickle does; PyTorch 2.0's drawn page (no pickle: the history as its viewer drew it) must read as the history it
drew; pages without a snapshot are refused in words."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.cli.main import main as cli
from tb_gpu_advisor.discover.logdir import discover
from tb_gpu_advisor.formats.snapshot.layout import sniff
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES

PICKLE = FIXTURES / "wild" / "snapshot_windows_gpt" / "memory_snapshot.pickle"


def _page(pickled: bytes, kind: str = "Active Memory Timeline") -> str:
    """The page ``torch.cuda._memory_viz._format_viz`` writes: the pickle padded to whole base64 groups."""
    pickled += b"\x00" * (3 - len(pickled) % 3)
    files = json.dumps([{"name": "snapshot.pickle", "base64": base64.b64encode(pickled).decode("ascii")}])
    return ("\n<!DOCTYPE html>\n<html>\n<head>\n</head>\n<body>\n<script type=\"module\">\nimport {add_local_files} "
            "from \"https://cdn.jsdelivr.net/gh/pytorch/pytorch@main/torch/utils/viz/MemoryViz.js\"\n"
            f"const local_files = {files}\nadd_local_files(local_files, {kind!r})\n</script>\n</body>\n")


def _report(path: Path):
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return rep


def _memory(path: Path) -> dict:
    return {k: v for k, v in _report(path).gpus[0].memory.items() if k.startswith(("peak_", "held_", "activation"))}


def test_a_viewer_page_reads_as_the_snapshot_it_embeds(tmp_path: Path):
    page = tmp_path / "run1" / "snapshot.html"
    page.parent.mkdir()
    page.write_text(_page(PICKLE.read_bytes()))
    assert sniff(str(page)) is None
    assert [(h.host, h.format) for s in discover(str(tmp_path)) for h in s.hosts] == [("snapshot", "snapshot")]
    want = _memory(PICKLE)
    assert want["peak_allocated_bytes"] > 0
    assert _memory(page) == want


def test_pages_without_a_snapshot_are_refused_in_words(tmp_path: Path, capsys):
    other = tmp_path / "results.html"  # a page of someone's own: a plot, no snapshot
    other.write_text("<html>\n<head><meta charset=\"utf-8\" /><title>Loss curves</title></head>\n"
                     "<body>\n  <img src='data:image/png;base64,iVBORw0KGgo='>\n</body>\n</html>\n")
    assert cli(["report", str(other)]) == 2
    assert "not PyTorch's memory viewer page" in capsys.readouterr().err
    broken = tmp_path / "broken.html"  # the viewer's page, its base64 cut short and mangled
    broken.write_text(_page(PICKLE.read_bytes()).replace('"base64": "', '"base64": "!!', 1))
    assert sniff(str(broken)) is not None
    assert cli(["report", str(broken)]) == 2
    assert "memory viewer page" in capsys.readouterr().err


def _drawn_page(doc: dict) -> str:
    """The page PyTorch 2.0's ``torch.cuda._memory_viz.trace_plot`` wrote of a snapshot's history: each allocation an
    element (its size, its stack as a ``suffix_table`` chain whose first string names the allocation), ``actions`` the
    elements in the order they were made and freed."""
    sizes, info, actions, strings, table = [], [], [], [], []
    live: dict[int, int] = {}  # address -> element
    for e in doc["device_traces"][0]:
        if e["action"] == "alloc":
            parent = None
            for f in reversed(e.get("frames") or []):  # outermost first, each the parent of the next
                strings.append(f"{f['filename']}:{f['line']}:{f['name']}")
                table.append([len(strings) - 1, parent])
                parent = len(table) - 1
            strings.append(f"{e['size'] / 1024:.1f}KiB allocation")
            table.append([len(strings) - 1, parent])
            live[e["addr"]] = len(sizes)
            actions.append(len(sizes))
            sizes.append(e["size"])
            info.append(len(table) - 1)
        elif e["action"] == "free_completed":
            actions.append(live.pop(e["addr"]))
    data = {"actions": actions, "elements_size": sizes, "elements_info": info, "elements_category": None,
            "suffix_table": table, "string_table": strings, "initially_allocated": [], "categories": None}
    return ("\n<!DOCTYPE html>\n<html>\n<head></head>\n<body>\n<script type=\"module\">\n"
            "import * as d3 from \"https://cdn.jsdelivr.net/npm/d3@7.7.0/+esm\";\n\n"
            f"let alloc_data = {json.dumps(data)}\n\nfunction process_alloc_data() {{}}\n</script>\n</body>\n")


def test_pytorch_2_0s_drawn_trace_page_reads_as_the_history_it_drew(tmp_path: Path):
    """PyTorch 2.0's ``trace_plot`` wrote no snapshot but the allocations already drawn (``let alloc_data = {"actions":
    ...}``: zdevito/zdevito.github.io's ``assets/trace.html``, no licence, read locally: a ResNet-50's ``model.cuda()``,
    forward and backward, 458 allocations, 664 actions, 289.6 MiB at the peak, 146.4 MiB live at the end, by hand and
    by this reader alike).  Main refused it in words.  Here a synthetic training loop's history is drawn as that page
    and must read as the same history in a snapshot of PyTorch 2.0 (no times): the same peak, what holds it, the job."""
    sc = ms.training_iterations(iterations=3)
    timeless = copy.deepcopy(sc.doc)
    for e in timeless["device_traces"][0]:
        e.pop("time_us", None)
    page = tmp_path / "run1" / "trace.html"
    page.parent.mkdir()
    page.write_text(_drawn_page(sc.doc))
    pickled = Path(ms.write(str(tmp_path / "timeless.pickle"), timeless))
    assert sniff(str(page)) is None
    assert [(h.host, h.format) for s in discover(str(tmp_path / "run1")) for h in s.hosts] == [("trace", "snapshot")]
    want, got = _report(pickled), _report(page)
    assert got.gpus[0].memory["peak_allocated_bytes"] == max(sc.truth["peaks"])
    for k in ("peak_allocated_bytes", "breakdown", "top"):
        assert got.gpus[0].memory.get(k) == want.gpus[0].memory.get(k), k
    assert got.job["kind"] == want.job["kind"] == "training"
    assert got.gpus[0].memory.get("peak_reserved_bytes") is None  # the page drew no segment: reserved is unknown


def test_a_drawn_page_that_is_not_one_is_refused_in_words(tmp_path: Path, capsys):
    page = tmp_path / "trace.html"
    page.write_text("<html><body><script>\nlet alloc_data = {\"actions\": [0, 1, 0], \"elements_size\": [37632]}"
                    "\n</script></body></html>\n")
    assert cli(["report", str(page)]) == 2
    err = capsys.readouterr().err
    assert "PyTorch 2.0's memory trace page" in err and "elements_info" in err


@pytest.mark.parametrize("data", [
    {"actions": [0, 0], "elements_size": [-5], "elements_info": [0], "suffix_table": [], "string_table": []},
    {"actions": [3], "elements_size": [512], "elements_info": [0], "suffix_table": [], "string_table": []},
    {"actions": [0, 0], "elements_size": [512], "elements_info": [0], "suffix_table": [[0, 0]], "string_table": ["a.py:1:f"]},
    {"actions": [0, 1], "elements_size": [512, 1024], "elements_info": ["x", 7], "suffix_table": [[5, None], "?"],
     "string_table": [{"a": 1}]},
    {"actions": "0", "elements_size": [512], "elements_info": [0], "suffix_table": [], "string_table": []},
], ids=["negative size", "action past the elements", "a chain looping on itself", "entries of the wrong type",
        "actions not a list"])
def test_a_hostile_drawn_page_is_read_or_refused_in_words(tmp_path: Path, data: dict):
    """A chain that loops, indices past their tables, values of the wrong type: read as far as they make sense (a
    looping chain ends, a stack that is not one is left out) or refused with the page named -- never a crash."""
    page = tmp_path / "trace.html"
    page.write_text(f"<html><body><script>\nlet alloc_data = {json.dumps(data)}\n</script></body></html>\n")
    rep = analyze_host(HostFile("trace", str(page), page.stat().st_size, 0, "snapshot"))
    assert rep.error is None or "PyTorch 2.0's memory trace page" in rep.error, rep.error
