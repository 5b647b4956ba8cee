"""DeepSpeed's decorated functions without a class are DeepSpeed's, not the user's (issue #37 class 2, h37-zero12).

``instrument_w_nvtx`` (deepspeedai/DeepSpeed @edaa7221 ``deepspeed/utils/nvtx.py``) pushes the decorated function's
``__qualname__``: a method's names its class (``DeepSpeedEngine.forward``), a module function's only itself
(``reduce_scatter_coalesced`` in ``runtime/comm/coalesced_collectives.py``, ``get_all_parameters`` in
``runtime/zero/partitioned_param_coordinator.py``, the ``deepspeed.comm`` calls it wraps: ``allgather_fn``).  Main
knew DeepSpeed's ranges by their class alone, so in the default NVTX domain (no ``nvtx`` package) those functions were
"the program's own ranges" in the host-time findings.  Nsight exports by construction (``synthetic.nsysexport``):
those names the only ranges, 12 ms of untraced host time a step (the GPU idle: a ``step_gaps`` finding).
"""

from __future__ import annotations

import pytest

from synthetic import nsysexport as nx
from tb_gpu_advisor.frameworks import nvtx
from tests.support.cli_report import first_host

#: classless qualnames DeepSpeed pushes (read from its source at @edaa7221)
_FUNCTIONS = ("reduce_scatter_coalesced", "all_to_all_quant_reduce", "all_to_all_loco_quant_reduce", "allgather_fn",
              "reduce_scatter_fn", "get_all_parameters", "update_recompute_parameters", "free_param",
              "Init._convert_to_deepspeed_param.<locals>.all_gather_coalesced", "assert_ints_same_as_other_ranks",
              "partition_grads", "unscale_and_clip_grads")


@pytest.mark.parametrize("name", _FUNCTIONS)
def test_deepspeeds_classless_functions_are_deepspeeds(name):
    assert nvtx.framework_range_writer(name) == "DeepSpeed"  # main: "" (the user's) outside DeepSpeed's domain
    assert nvtx.is_framework_range(name)
    assert not nvtx.is_framework_step_end(name)


@pytest.mark.parametrize("name", ["cat", "step", "reduce_scatter", "free_params", "my_allgather_fn", "partition",
                                  "all_gather_coalesced", "Trainer.partition_grads"])
def test_control_names_near_them_stay_the_users(name):
    """Control: the generic names DeepSpeed also wraps (``torch.cat``'s ``cat``, ZenFlow's ``step``) and names near
    its own are the user's outside DeepSpeed's NVTX domain; in it, DeepSpeed's."""
    assert nvtx.framework_range_writer(name) == ""
    assert nvtx.framework_range_writer(name, "DeepSpeed") == "DeepSpeed"


@pytest.mark.parametrize("ranges", [("reduce_scatter_coalesced", "allgather_fn"),
                                    ("get_all_parameters", "free_param", "reduce_scatter_coalesced")])
def test_a_capture_of_only_those_ranges_names_none_the_programs(tmp_path, ranges):  # noqa: ANN001 - pytest's tmp_path
    path = tmp_path / "ds.sqlite"
    nx.write(str(path), nx.NsysJob(steps=8, ops=9, step_range=None, autograd_nvtx=False, extra_ranges=ranges,
                                   untraced_ms=12.0))
    host = first_host(path)
    gaps = [f for f in host["findings"] if f["id"].startswith("step_gaps")]
    assert gaps  # the idle is still found
    named = {str(row[0]) for f in gaps for t in f.get("evidence", [])
             if t.get("title", "").startswith("The program's own ranges") for row in t["rows"]}
    assert not named & set(ranges), named  # main: "The program's own ranges in the gaps": `reduce_scatter_coalesced`
