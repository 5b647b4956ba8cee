"""A program marks fetching its examples in its own words, not only "batch" or "data" (issue #37 class 4;
h37-probe42n).

Wrong assumption on main ed6824fb: *a range that fetches the input says "batch", "fetch", "data", "dataset" or
"dataloader"* (``frameworks.base.names_batch``).  A native trainer or a Python loop under NVTX alone names its fetch
after what it reads -- ``load_images``, ``read_input``, ``get_next_inputs``, ``ReadRecords`` -- and main booked the
GPU's idle there as host work between iterations: a critical ``step_gaps`` (2.27 ms a 13.3 ms step, "queue the
kernels before the bookkeeping") and the input card "n/a: no ML framework".  Now a fetch verb acting on examples
(the verb, then the noun) names the input too; a noun or a verb alone does not (``input_layernorm``,
``sample_next_token``: a decode loop samples its output; ``load_model``: set-up).

By construction (``synthetic.nsysexport.write_marked_input_loop``): ``load_ms`` = 3 ms a step in the fetch range.
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks.base import names_batch
from tests.support.generated_host import nsys_host


@pytest.mark.parametrize("fetch", ["load_images", "read_input", "get_next_inputs", "ReadRecords"])
def test_a_fetch_named_for_its_examples_is_the_input_wait(tmp_path, fetch: str) -> None:  # noqa: ANN001
    host = nsys_host(tmp_path, nx.write_marked_input_loop, "trainer.sqlite", fetch=fetch)
    truth = host["truth"]
    assert host["capture"]["framework"] == "native"
    # main: 0.0 (n/a), the fetch's 3 ms booked as host work between iterations
    assert host["breakdown_ms"]["input_wait"] == pytest.approx(truth["input_ms"], abs=0.05)
    (f,) = [f for f in host["findings"] if f["rule"] == "input_bound"]
    assert f"`{fetch}`" in f["summary"] and f["saving"]["ms_per_step"] == pytest.approx(truth["input_ms"], abs=0.05)
    assert all(fetch not in g["summary"] for g in host["findings"] if g["rule"] == "step_gaps")


@pytest.mark.parametrize("name", ["sample_next_token", "input_layernorm", "load_model", "read_config",
                                  "preprocess_images", "update_stats"])
def test_a_noun_or_a_verb_alone_is_no_fetch(name: str) -> None:
    """Control: a decode loop's sampling, a layer fed by its input, the model's or the config's loading, work on
    images already fetched: no fetch of examples."""
    assert not names_batch(name)


def test_a_range_named_for_no_fetch_stays_host_work(tmp_path) -> None:  # noqa: ANN001
    """Control by construction: the same loop with its 3 ms marked ``sample_next_token`` has no input wait."""
    host = nsys_host(tmp_path, nx.write_marked_input_loop, "trainer.sqlite", fetch="sample_next_token")
    assert host["breakdown_ms"]["input_wait"] == 0.0
    assert not [f for f in host["findings"] if f["rule"] == "input_bound"]
