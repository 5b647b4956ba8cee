"""Two training iterations read from a phase range: the second ends at its own work, without the time after it the
first holds (h37-seeds23; ``scripts/randjobs.py --forms12`` walk seeds 1293, 1440, 2896, left by h37-randjobs12).

The jobs: ``forward``, ``backward``, ``optimizer_step``, ``validation_step`` NVTX ranges, 2 iterations, a DataLoader
wait before each.  ``steps.top_ranges._training_range_steps`` reads the iterations from ``backward`` opened by ``forward``
(``nvtx_top_range``); each step runs from its ``forward`` to the next one's, the last to where its mark and its work
end, so it holds neither the optimizer's and the validation's work nor the next batch's wait: 132.68 and 10.76 ms
(1293), 3.275 and 2.646 (1440), 45.24 and 0.266 (2896).  Of three steps or more such a last step is dropped
(``_top_range_last_short``); of two, ``_two_part_marks`` asked only the program's own spans (``job.structure``), and
with a bar of half the tile, which a mark of 81% of it (1440) passed.  Now the NVTX range's own window as read (its
``read_end``) is the first step's mark too, and the bar is chance (``_chance``): a mark short of its tile by more than
chance moves an edge holds part of each iteration, so the last, ending at its mark, is partial and dropped.
Controls: a cold first span holding its tile (kept), the same jobs of 3 iterations (read as on main).
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from synthetic.randjobs import TRUTH, random_form12_job
from tb_gpu_advisor.steps.ends import _two_part_marks
from tb_gpu_advisor.steps.reading import _Kept
from tests.support.random_jobs import laws_broken, reports_of, truth_problems


def _report(job):  # noqa: ANN001, ANN202 - a randjobs Job, its report
    (r,) = reports_of(job)
    return r


@pytest.mark.parametrize("seed", [1293, 1440, 2896])
def test_the_second_of_two_phase_range_steps_is_dropped_as_partial(seed):
    """Fails on main (the second step 10.76 / 2.646 / 0.266 ms, the mean 71.7 / 2.96 / 22.75 ms): of 2 found, the
    first kept, the job's period; the last dropped as partial."""
    job = random_form12_job(seed)
    r = _report(job)
    st = r.hosts[0].steps
    assert st["source"] == "nvtx_top_range" and "`backward`, the training iteration's own range" in st["note"], st
    assert st["found"] == 2 and [d["reason"].split(":")[0] for d in st["dropped"]] == ["partial"], st
    period = TRUTH[seed]["step_ms"]
    ms = [row["step_ms"] for row in r.to_dict()["hosts"][0]["step_rows"]]
    assert ms and all(abs(x - period) <= 0.001 * period + 0.002 for x in ms), (ms, period)
    assert not truth_problems(job, r) and not laws_broken(r), (truth_problems(job, r), laws_broken(r))


def test_three_iterations_read_as_on_main_control():
    """Control (as on main): 1440's job of 3 iterations -- read from the most repeated top-level range, `forward`, its
    last dropped (``_top_range_last_short``), the two kept the period."""
    job = random_form12_job(1440)
    r = _report(dataclasses.replace(job, params={**job.params, "steps": 3}))
    st = r.hosts[0].steps
    assert (st["source"], st["found"], st["count"]) == ("nvtx_top_range", 3, 2), st
    assert all(abs(row["step_ms"] - 3.27476) < 0.005 for row in r.to_dict()["hosts"][0]["step_rows"])


def _two(mark_ms: float, last_ms: float, source: str = "nvtx_top_range"):  # noqa: ANN202 - reading, kept
    """Two steps 10 ms apart read from ranges: the first's own mark ``mark_ms`` long, the last ``last_ms``."""
    ps = 10**9
    hs = np.array([0, 10 * ps], np.int64)
    he = np.array([10 * ps, int((10 + last_ms) * ps)], np.int64)
    r = SimpleNamespace(own=None, source=source, ids=np.arange(2, dtype=np.int64),
                        read_end=np.array([int(mark_ms * ps), he[1]], np.int64))
    return r, _Kept(np.arange(2, dtype=np.int64), hs, he, {})


def test_a_mark_short_of_its_tile_by_more_than_chance_makes_the_last_partial():
    """A first mark of 8.1 of its 10 ms tile and a last step of 8.1 ms: partial (main's half bar kept it)."""
    assert _two_part_marks(*_two(8.1, 8.1))


def test_a_cold_first_mark_holding_its_tile_keeps_the_last_control():
    """Control: a first mark of 9.9 of its 10 ms tile (a cold first call's span holding its compilation) says nothing
    of the last's: kept, however short; and a reading from no repeated marks (GPU bursts) is never asked."""
    assert not _two_part_marks(*_two(9.9, 2.0))
    assert not _two_part_marks(*_two(2.0, 2.0, source="gpu_busy_clusters"))
