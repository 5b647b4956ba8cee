"""A memory snapshot without annotations is cut into its training iterations by its allocations (``job/iterations``).

Survey h37-survey17: the "Understanding GPU Memory 1" blog's ResNet-50 ``snapshot.html`` (tonghuikang/optimizer-memory-
profiles @29ebcc7, no licence: read locally, not kept) holds three iterations of forward, backward and optimizer --
2,037 allocations, 679 an iteration (268 of them the forward's), each climbing from the 214.8 MiB of weights and
optimizer state to 500.4 MiB and back, read by hand -- and main analysed it as one step ("no step markers found").
This branch reads 3 steps of 679 allocations, each peaking at 500.4 MiB, from 214.8 MiB held.

Here: truth by construction (``synthetic.memsnapshot.training_iterations``: a loop of identical layers, Adam's moments
made on its first step, a loss held until the next iteration), and a kept real snapshot whose profiler annotations mark
where each optimizer step ended (``wild/snapshot_adam_iterations``, MIT): the iterations read from its allocations
alone must end where its annotations say, and the annotated snapshot is cut at them (h37-left28).  Controls: the same
loop with and without annotations reads the same iterations, and forward passes with no backward are not cut.
"""

from __future__ import annotations

import bisect
import pickle
from collections import Counter
from pathlib import Path

import pytest

from synthetic import memsnapshot as ms
from tb_gpu_advisor.formats.snapshot.reader import read_trace
from tb_gpu_advisor.job.iterations import history_iterations
from tb_gpu_advisor.model.logdir import HostFile
from tb_gpu_advisor.runtime.pipeline import analyze_host
from tests.support.paths import FIXTURES
from tests.support.snapshot_report import report as snapshot_report

MiB = 1 << 20
ADAM = FIXTURES / "wild" / "snapshot_adam_iterations" / "forward_and_backward_memory_snapshot_200.pickle"


@pytest.mark.parametrize("iterations", [2, 3, 4])
def test_each_iteration_is_a_step_with_its_own_peak(tmp_path: Path, iterations: int):
    sc = ms.training_iterations(iterations=iterations)
    rep = snapshot_report(tmp_path, sc.doc)
    # the first makes Adam's moments, its one-time work: warm-up, left out where two iterations remain (h37-left32)
    kept = slice(1, None) if iterations >= 3 else slice(None)
    assert (rep.steps["source"], rep.steps["found"], rep.steps["count"]) == \
        ("memory_iterations", iterations, len(sc.truth["starts_us"][kept])), rep.steps
    first_us = min(e["time_us"] for e in sc.doc["device_traces"][0])  # the snapshot's time 0
    # each step starts at its iteration's first allocation (those before the first moved the model to the GPU)
    assert [round(r.start_ms * 1000) + first_us for r in rep.step_rows.rows()] == sc.truth["starts_us"][kept]
    mem = rep.gpus[0].memory
    assert [row[1] for row in mem["step_peaks"]] == sc.truth["peaks"][kept]
    # the peak's step began after the first, whose optimizer step made Adam's moments: they are held, not "optimizer"
    assert mem["breakdown"]["held"] == sc.truth["held"], mem["breakdown"]
    assert "optimizer" not in mem["breakdown"], mem["breakdown"]
    # a step is timed on the allocator's clock, but the snapshot records no GPU work: its activity is unknown, not 0%
    assert rep.gpus[0].step_ms and rep.gpus[0].busy_share is None


def test_a_history_dumped_inside_an_iteration_keeps_only_the_whole_ones(tmp_path: Path):
    sc = ms.training_iterations(iterations=3, dump_in_forward=True)
    rep = snapshot_report(tmp_path, sc.doc)
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", 3), rep.steps
    assert "ends inside an iteration" in rep.steps["note"]
    # the first, which makes Adam's moments, is warm-up (h37-left32)
    assert [row[1] for row in rep.gpus[0].memory["step_peaks"]] == sc.truth["peaks"][1:]


def test_the_stock_rule_drops_the_first_and_last_of_many(tmp_path: Path):
    sc = ms.training_iterations(iterations=7)
    rep = snapshot_report(tmp_path, sc.doc)
    assert (rep.steps["found"], rep.steps["count"]) == (7, 5), rep.steps
    assert [row[1] for row in rep.gpus[0].memory["step_peaks"]] == sc.truth["peaks"][1:-1]


def test_the_iterations_read_from_allocations_end_where_the_real_annotations_say():
    """The kept real snapshot's three ``Optimizer.step#NIUAdam.step`` ends (899.75, 959.60, 1019.59 ms): each iteration
    but the last begins with the first allocation after one of them, and the last runs to the history's end."""
    tr = read_trace(str(ADAM))
    me = tr.memory[0]
    ends = list(tr.snapshot.iteration_ends_ps)
    starts, stops, _ = history_iterations(me)
    assert starts.size == len(ends) == 3
    alloc_t = me.t[me.delta > 0]
    for end, start in zip(ends, starts[1:].tolist()):
        assert start == int(alloc_t[alloc_t > end][0])
    assert int(stops[-1]) == int(me.t[-1])


def test_an_annotated_snapshot_is_cut_at_its_optimizer_steps():
    """h37-left28: the kept snapshot's annotations mark three ``Optimizer.step`` ends, and it read as one untimed
    window.  Each is an iteration's end: three steps, each a turn holding its mark, each peak that of a by-hand replay
    of the pickle (its allocations and completed frees from the level held before the history: the blocks live at the
    dump less the history's net)."""
    rep = analyze_host(HostFile("adam", str(ADAM), ADAM.stat().st_size, 0, "snapshot"))
    assert rep.error is None, rep.error
    assert (rep.steps["source"], rep.steps["found"]) == ("memory_iterations", 3), rep.steps
    doc = pickle.loads(ADAM.read_bytes())
    events = doc["device_traces"][0]
    t0 = events[0]["time_us"]
    ends = [a["time_us"] for a in doc["external_annotations"]
            if a["stage"] == "END" and a["name"].startswith("Optimizer.step")]
    # the first is warm-up (test_the_first_marked_iteration_is_warm_up): the other two are the steps, each a turn
    # from its first allocation after the step end before it to the next turn's; the last to its own end (the history
    # ends before it: h37-snapturn)
    opens = [min(e["time_us"] for e in events if e["action"] == "alloc" and e["time_us"] > end) for end in ends[:-1]]
    rows = rep.step_rows.rows()
    assert [round(r.start_ms * 1000) + t0 for r in rows] == opens
    assert [round((r.start_ms + r.step_ms) * 1000) + t0 for r in rows] == [opens[1], ends[-1]]
    assert [row[1] for row in rep.gpus[0].memory["step_peaks"]] == _replayed_peaks(doc, ends)[1:]


def test_the_first_marked_iteration_is_warm_up():
    """h37-left32: the kept snapshot's first iteration took 437.5 ms, the two after it 59.6 and 59.7 ms, and the
    report's step time was their mean, 185.6 ms.  By hand, from the raw pickle (each iteration from its
    ``Optimizer.zero_grad`` start to its ``Optimizer.step`` end, each allocation keyed by its whole stack and size):
    the first makes 2 allocations no later one makes, 8,519,680 bytes each -- PyTorch's default cuBLAS workspace
    (``:4096:2:16:8``: 4 MiB x 2 + 16 KiB x 8), one per handle (the forward's thread, autograd's) -- its first calls'
    one-time work.  It is warm-up: left out, the step time is the other two's."""
    doc = pickle.loads(ADAM.read_bytes())
    events = doc["device_traces"][0]
    notes = doc["external_annotations"]
    opens = [a["time_us"] for a in notes if a["stage"] == "START" and a["name"].startswith("Optimizer.zero_grad")]
    ends = [a["time_us"] for a in notes if a["stage"] == "END" and a["name"].startswith("Optimizer.step")]
    made = [Counter((tuple((f["filename"], f["line"], f["name"]) for f in e["frames"]), e["size"])
                    for e in events if e["action"] == "alloc" and a <= e["time_us"] <= b) for a, b in zip(opens, ends)]
    beyond = made[0] - (made[1] | made[2])
    assert sorted(size for (_, size), n in beyond.items() for _ in range(n)) == [4096 * 1024 * 2 + 16 * 1024 * 8] * 2
    assert not made[1] - made[2] and not made[2] - made[1]  # the later two make the same allocations
    rep = analyze_host(HostFile("adam", str(ADAM), ADAM.stat().st_size, 0, "snapshot"))
    assert [d["step"] for d in rep.steps["dropped"]] == [0], rep.steps
    assert rep.steps["dropped"][0]["reason"].startswith("warm-up: its first calls' one-time work (2 allocations")
    t0 = events[0]["time_us"]
    first_forward = min(e["time_us"] for e in events if e["action"] == "alloc" and e["time_us"] > opens[0])
    kept = [b - a for a, b in zip(ends[:-1], ends[1:])]  # each later iteration runs from the step end before it
    assert first_forward - t0 > 0 and rep.steps["count"] == 2
    assert abs(rep.gpus[0].step_ms - sum(kept) / 2 / 1000) < 0.5, rep.gpus[0].step_ms


def _replayed_peaks(doc: dict, ends: list[int]) -> list[int]:
    """The allocated peak between each optimizer step's end and the next, replayed from the raw snapshot in the
    allocator's blocks: an entry records the request; a block still live at the dump is its own ``size``, any other
    the request rounded up to 512 bytes (h37-units63: the 162 blocks live at the dump, all made in the history, are
    4,523,308 B over their requests -- unsplit 20 MiB blocks of 20,480,000 B -- which a replay in requests counted as
    held before the history)."""
    events = doc["device_traces"][0]
    blocks = {b["address"]: b["size"] for seg in doc["segments"] for b in seg["blocks"]
              if b["state"] == "active_allocated"}
    sign = {"alloc": 1, "free_completed": -1}
    last = {e["addr"]: i for i, e in enumerate(events) if e["action"] in sign}
    size = [blocks[e["addr"]] if e["action"] == "alloc" and last[e["addr"]] == i and e["addr"] in blocks
            else max(512, -(-e["size"] // 512) * 512) for i, e in enumerate(events)]
    level = sum(blocks.values()) - sum(sign.get(e["action"], 0) * b for e, b in zip(events, size))
    peaks = [0] * len(ends)
    for e, b in zip(events, size):
        level += sign.get(e["action"], 0) * b
        i = bisect.bisect_left(ends, e["time_us"])  # the step whose end is the first at or after it
        if i < len(ends):
            peaks[i] = max(peaks[i], level)
    return peaks


def test_a_ring_buffer_keeps_only_the_whole_marked_iterations(tmp_path: Path):
    """The ring buffer dropped the oldest events; the annotations are all kept: an end with no forward allocation
    since the one before is no whole iteration, and no step."""
    sc = ms.ring_buffer_training(iterations=6, max_entries=60)
    events = sc.doc["device_traces"][0]
    first = events[0]["time_us"]
    zero_grad_ends = [a["time_us"] for a in sc.doc["external_annotations"]
                      if a["stage"] == "END" and a["name"].startswith("Optimizer.zero_grad")]
    whole = sum(t >= first for t in zero_grad_ends)  # by construction: iterations begun after the first kept event
    assert sc.truth["cut"] and 1 <= whole < 6
    assert snapshot_report(tmp_path, sc.doc).steps["count"] == whole


def test_the_same_loop_annotated_or_not_is_cut_and_forward_passes_are_not_iterations(tmp_path: Path):
    annotated = ms.ring_buffer_training(iterations=4, max_entries=None)
    assert snapshot_report(tmp_path, annotated.doc, "annotated").steps["count"] == 4  # cut at its marks (h37-left28)
    bare = dict(annotated.doc, external_annotations=[])
    assert snapshot_report(tmp_path, bare, "bare").steps["count"] == 4
    # forward passes with no backward are an inference job's passes, not training iterations
    # (test_snapshot_passes_and_accumulation: where each begins)
    forwards = snapshot_report(tmp_path, ms.forward_only(grad=False, passes=4).doc, "forwards")
    assert forwards.job["kind"] == "inference" and "forward passes" in forwards.steps["note"], forwards.steps
    assert "training iteration" not in forwards.steps["note"]


@pytest.mark.parametrize(("temp_mib", "warm"), [([5, 6, 6, 6], True), ([5, 6, 7, 8], False), ([5, 6, 7, 6], False)])
def test_only_a_first_iteration_unlike_steady_ones_is_warm_up(tmp_path: Path, temp_mib: list[int], warm: bool):
    """h37-left32: a first iteration whose one allocation (a temporary) no later one makes is warm-up where the later
    ones repeat each other ([5, 6, 6, 6] MiB); where each differs from each (a size that follows the data: [5, 6, 7,
    8], [5, 6, 7, 6]) the first is no odd one out and stays.  By construction."""
    a = ms.Allocator(80 * ms.GiB)
    for _ in range(2):
        a.malloc(64 * MiB, ms.PARAMS)
    for mib in temp_mib:
        acts = [a.malloc(32 * MiB, ms.ACTIVATION) for _ in range(6)]
        a.free(a.malloc(mib * MiB, ms.ACTIVATION))
        for x in reversed(acts):
            g = a.malloc(32 * MiB, ms.GRADIENT)
            a.free(x)
            a.free(g)
        a.free(a.malloc(MiB, ms.OPTIMIZER))
    rep = snapshot_report(tmp_path, ms.snapshot([a]))
    assert rep.steps["found"] == len(temp_mib), rep.steps
    assert [d["step"] for d in rep.steps["dropped"]] == ([0] if warm else []), rep.steps
    if warm:
        assert "1 allocation, 5.00 MiB" in rep.steps["dropped"][0]["reason"], rep.steps
