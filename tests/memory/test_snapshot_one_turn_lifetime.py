"""In a history of one turn, bytes held by their lifetime alone are said to be so, not silently counted as held
across steps (issue #37 class 5).

The reader books a block no frame names, made before the history's first forward and never freed, with the
parameters (h37-heldlife31: a loader's weights).  Across two turns or more such a block is held across steps
whatever it is; in one turn the input that turn reads lives the same way -- mini_snapshot_cut's 128 MiB of q, k, v
(``attention.py:206 get_input``, event 29, read by hand) made once before its only call -- and the table's "held
across steps" counted it with the 256 MiB of weights ``Module._apply`` moved.  The report now says how much of the
held memory is known by lifetime alone where fewer than two turns are recorded.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.metrics.types import GpuMemory
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.report import render
from tb_gpu_advisor.runtime.pipeline import analyze_host, host_metrics
from tests.support.paths import REPO

MiB = ms.MiB
CUT = REPO / "tests/fixtures/snapshots_wild/mini_snapshot_cut.pickle"


def _gpu(path: Path) -> GpuMemory:
    (g,) = host_metrics(read_trace(str(path))).memory.gpus
    return g


def test_a_real_benchmarks_input_is_known_by_lifetime_alone():
    """mini_snapshot_cut (kept, snapshots_wild): 16 weights moved by ``Module._apply`` (8 x 24 + 8 x 8 = 256 MiB,
    held by their frames) and the benchmark's 128 MiB input, one allocation before the first compiled forward and
    never freed -- the only bytes held by lifetime alone; the history is no loop (no turn read)."""
    g = _gpu(CUT)
    # the level and its parts both count blocks (h37-snap64): the rounding of the 4 small tensors live at the peak
    # (16,640 B in 16,896; 3 x 256 B in 512) is theirs, no longer held's (h37-units63 *Left* 1: 384 MiB + 1,024 B)
    assert g.breakdown["held"] == 384 * MiB
    assert g.held_by_lifetime_bytes == 128 * MiB


def test_the_report_says_so_beside_the_peak_table(tmp_path: Path):
    rep = analyze_host(HostFile("cut", str(CUT), CUT.stat().st_size, 0, "snapshot"))
    (g,) = rep.gpus
    assert g.memory["held_by_lifetime_bytes"] == 128 * MiB

    (note,) = render.memory_notes(SimpleNamespace(hosts=[rep]))  # the one host, as a session's report holds it
    assert "128 MiB of the 384 MiB held" in note and "not known to be held across steps" in note


def test_one_turn_of_loaded_weights_is_said_alike(tmp_path: Path):
    """A loader's 16 GiB of weights and a first forward that runs out of memory (``oom_weights("hf")``): one turn,
    so the weights too are held by lifetime alone -- the words say it may be either (truth by construction)."""
    sc = ms.oom_weights("hf")
    assert _gpu(Path(ms.write(str(tmp_path / "hf.pickle"), sc.doc))).held_by_lifetime_bytes == sc.truth["weight_bytes"]


def test_control_turns_recorded_say_nothing(tmp_path: Path):
    """The same loader's weights over three whole turns before the OOM's (``oom_later_turn("hf")``): they outlived
    every step, held across steps by the turns; nothing to say (a control of the turns' bound)."""
    sc = ms.oom_later_turn("hf")
    assert _gpu(Path(ms.write(str(tmp_path / "later.pickle"), sc.doc))).held_by_lifetime_bytes == 0


def test_a_cache_its_code_names_is_not_said_unknown(tmp_path: Path):
    """A static KV cache made before the first forward lives as the weights do, but its code names it
    (``oom_kv_cache("static")``): only the 8 GiB of weights are held by lifetime alone, not the 10 GiB cache."""
    sc = ms.oom_kv_cache("static")
    g = _gpu(Path(ms.write(str(tmp_path / "kv.pickle"), sc.doc)))
    assert g.held_by_lifetime_bytes == sc.truth["weight_bytes"]
