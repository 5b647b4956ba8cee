"""The empty ``ProfilerStep#N`` a last ``prof.step()`` opens after the loop has ended is no step.

Survey h37-survey7b: shreyansh26/MLSys-Experiments' ``pinned_memory_async/traces/trace_streamed{0,1}_pinned{0,1}.json``
(PyTorch's pin_memory / non_blocking tutorial on an H100: one 20 MB host-to-device copy and two element-wise kernels a
step, ``schedule(wait=1, warmup=1, active=2)`` over a 4-iteration loop) hold one real step (``ProfilerStep#3``,
1.07 ms, the pageable copy 0.83 ms of it) and a ``ProfilerStep#4`` of 18 us that holds only the profiler's stop (a
``cudaDeviceSynchronize``): main read 2 steps of 554 us -- the copy "75% of a 554 us step" -- and "step times are
not steady".  Truth by construction: the generator's ``pageable_copy`` loop of 3 steps, then the same file with such
an empty step appended.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthetic import torchtrace as tt
from tb_gpu_advisor.formats.kineto.adapter import read_trace
from tb_gpu_advisor.runtime.pipeline import host_metrics


def _with_empty_last_step(path: Path) -> Path:
    """The trace plus ``ProfilerStep#5``: opened after the last event, 18 us long, holding only a device sync."""
    doc = json.loads(path.read_text())
    ev = doc["traceEvents"]
    marks = [e for e in ev if e.get("cat") == "user_annotation" and str(e.get("name")).startswith("ProfilerStep#")]
    last = max(marks, key=lambda e: e["ts"])
    end = max(e["ts"] + e.get("dur", 0) for e in ev if e.get("ph") == "X")
    n = int(last["name"].split("#")[1]) + 1
    ev.append({**last, "name": f"ProfilerStep#{n}", "ts": end + 40.0, "dur": 18.0, "args": {}})
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": last["pid"],
               "tid": last["tid"], "ts": end + 60.0, "dur": 15.0, "args": {"cbid": 165, "correlation": 999_999}})
    out = path.with_name("empty_last." + path.name)
    out.write_text(json.dumps(doc))
    return out


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> tuple[Path, Path]:
    (plain,) = tt.write_run(str(tmp_path_factory.mktemp("empty_last")), "pageable_copy", steps=3)
    return Path(plain), _with_empty_last_step(Path(plain))


def test_an_empty_last_profiler_step_is_dropped(pair):
    plain, empty = (host_metrics(read_trace(str(p))) for p in pair)
    det = empty.steps
    assert (det.found, det.count) == (plain.steps.count + 1, plain.steps.count) == (4, 3)
    assert [d.reason.split(":")[0] for d in det.dropped] == ["empty"]
    # steps tile time: the last kept step now runs to the empty marker's start, 40 us after the trace's last event,
    # so the mean may grow by that gap over 3 steps -- never by the half a fourth "step" took off it
    assert 0 <= empty.headline.avg_step_ms - plain.headline.avg_step_ms <= (0.040 + 0.001) / 3  # + the last event past the step marks


def test_a_last_step_that_launched_work_is_kept(pair):
    """The control: the generator's own last step launches its copy and kernels -- kept, nothing dropped."""
    m = host_metrics(read_trace(str(pair[0])))
    assert m.steps.count == 3 and not m.steps.dropped
