"""PyTorch's memory viewer saves a snapshot as one self-contained page (``torch.cuda._memory_viz``'s ``trace_plot``):
an ``.html`` whose script hands ``MemoryViz.js`` the snapshot's pickle in base64.  Survey h37-survey17 found one in
the wild -- tonghuikang/optimizer-memory-profiles' ``snapshot.html`` (no licence: read locally, not kept), the
ResNet-50 training snapshot of PyTorch's "Understanding GPU Memory 1" blog: three iterations, 500 MiB replayed peak,
562 MiB reserved, 215 MiB held -- and main answered "not a profile this tool reads".  The page is the snapshot: here a
kept real snapshot (``wild/snapshot_windows_gpt``) is wrapped in the viewer's page, and the page must read exactly as
the pickle does; pages without a snapshot are refused in words."""

from __future__ import annotations

import base64
import json
from pathlib import Path

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


def _memory(path: Path) -> dict:
    rep = analyze_host(HostFile(path.stem, str(path), path.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    return {k: v for k, v in rep.gpus[0].memory.items() if k.startswith(("peak_", "held_", "activation"))}


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


def test_pytorch_2_0s_drawn_trace_page_is_named_with_what_to_give_instead(tmp_path: Path, capsys):
    """PyTorch 2.0's ``trace_plot`` wrote the allocations already drawn (``let alloc_data = {"actions": ...}``), no
    snapshot in it (zdevito/zdevito.github.io's ``assets/trace.html``: a ResNet-50 iteration, 458 allocations, 289.6
    MiB at the peak, no licence: read locally).  It is named as that, not as "an HTML page"."""
    page = tmp_path / "trace.html"
    page.write_text("\n<!DOCTYPE html>\n<html>\n<head></head>\n<body>\n<script type=\"module\">\n"
                    "import * as d3 from \"https://cdn.jsdelivr.net/npm/d3@7.7.0/+esm\";\n\n"
                    "let alloc_data = {\"actions\": [0, 1, 0], \"elements_size\": [37632, 256], \"elements_info\": [0, 1],"
                    " \"string_table\": [\"stuff.py:10:<module>\"]}\n</script>\n</body>\n")
    assert cli(["report", str(page)]) == 2
    err = capsys.readouterr().err
    assert "PyTorch 2.0's memory trace page" in err and "_dump_snapshot" in err
