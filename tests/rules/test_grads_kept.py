"""A process that runs no backward pass yet moved its model to the GPU with the parameters' gradients is told so
(issue #37, survey h37-survey7b).

The real case (CognitoBlocks/BlockZero ``cuda_snapshot.pickle`` @907d2e4, no licence, so not kept:
``tests/fixtures/wild/SURVEY.md``): an evaluator thread (``evaluator.py:37 load_model_from_path``) moved a Qwen3-Next
model to the GPU, 29.6 GiB allocated; its live stacks come in pairs identical but for the innermost
``torch/nn/modules/module.py`` ``_apply`` line (957 / 998) with equal bytes and blocks: ``Module._apply`` moving each
parameter and then its ``.grad``.  Main: healthy.  Now a warning holding 13.7 GiB of gradients (46% of the allocated)
with the fix: set them to None before ``.to()``.

By construction (``synthetic.memsnapshot.moved_with_grads``): the gradients' bytes are known; the same model moved
without gradients is the control.
"""

from __future__ import annotations

import pytest

from synthetic import memsnapshot as ms
from tests.support.cli_report import first_report


def _findings(path: str) -> list[dict]:
    return first_report(path)["findings"]


@pytest.mark.parametrize("grads", [True, False])
def test_gradients_moved_with_the_model_are_found(tmp_path, grads: bool) -> None:  # noqa: ANN001 - pytest's
    sc = ms.moved_with_grads(grads=grads)
    path = ms.write(str(tmp_path / "cuda_snapshot.pickle"), sc.doc)
    found = [f for f in _findings(path) if f["id"].startswith("activation_memory") and
             (f["metric"] or {}).get("id") == "grads_kept_share"]
    if not sc.truth["grads_bytes"]:
        assert not found
        return
    assert len(found) == 1
    d = found[0]["metric"]["detail"]
    assert d["grads_bytes"] == sc.truth["grads_bytes"] and d["grads_blocks"] == sc.truth["grads_blocks"]
    assert found[0]["saving_bytes"] == sc.truth["grads_bytes"]
    assert "set_to_none=True" in found[0]["actions"][0]["snippet"]
