"""The metrics ask the run's framework what its names mean; they never name a framework themselves (h37-tidy).

``metrics.attention`` read the class of the module around an attention's launches, and ``metrics.memory`` the
``Module._apply`` frames of a snapshot's stacks and the words to record a snapshot's history, from
``frameworks.pytorch`` directly: PyTorch's knowledge applied to every run whatever its framework, and outside the
interface (``frameworks.base.Framework``) every other per-framework fact comes through.  Now they read
``ctx.fw.module_class``, ``ctx.fw.module_apply_line`` and ``ctx.fw.record_history``.

On a real capture (xDiT's Flux on an MI300X: T5's eager attention inside ``nn.Module: T5Attention_<n>`` spans) and a
snapshot by construction (``synthetic.memsnapshot.moved_with_grads``: the gradients' bytes known): PyTorch's reading
is the one the report gave; a framework that knows no module classes or ``_apply`` frames reads none."""

from __future__ import annotations

import ast
import dataclasses

from synthetic import memsnapshot as ms
from tb_gpu_advisor import frameworks
from tb_gpu_advisor.metrics import attention, memory
from tests.support.metrics_context import capture_context as _context
from tests.support.paths import FIXTURES, REPO

#: the framework modules of one framework's own knowledge (``xla`` is a compiler two frameworks share)
OWN_KNOWLEDGE = {"pytorch", "jax", "tensorflow", "native"}




def _imports(path) -> set[str]:  # noqa: ANN001 - a Path
    """Every module name ``path`` imports, and each name imported from one (``from a import b``: ``a.b``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def test_no_metrics_module_names_a_framework() -> None:
    bad = [f"{path.name} imports {name}" for path in sorted((REPO / "tb_gpu_advisor" / "metrics").glob("*.py"))
           for name in sorted(_imports(path))
           if name.startswith("tb_gpu_advisor.frameworks.") and name.split(".")[2] in OWN_KNOWLEDGE]
    assert not bad, bad


def test_the_attentions_module_is_the_frameworks_reading() -> None:
    ctx = _context(str(FIXTURES / "wild" / "xdit_flux_mi300x_denoise"))
    assert ctx.fw.id == "pytorch"
    (pat,) = attention.unfused_attention(ctx).patterns
    assert pat.module == "T5Attention"
    ctx.fw = dataclasses.replace(ctx.fw, module_class=frameworks.UNKNOWN.module_class)
    (pat,) = attention.unfused_attention(ctx).patterns
    assert pat.module == ""


def test_the_snapshots_gradients_and_advice_are_the_frameworks_reading(tmp_path) -> None:  # noqa: ANN001 - pytest's
    """A state-only dump (no history entry): its gradients from the ``_apply`` frames, its note's advice on recording
    the history from the words for its layout."""
    sc = ms.moved_with_grads(grads=True)
    ctx = _context(ms.write(str(tmp_path / "cuda_snapshot.pickle"), dict(sc.doc, device_traces=[[]])))
    assert ctx.fw.id == "pytorch"
    advice = ctx.fw.record_history(str(ctx.trace.producer.get("layout") or ""))
    (gm,) = memory.memory(ctx).gpus
    assert gm.grads_moved_bytes == sc.truth["grads_bytes"] > 0
    assert advice and gm.note.endswith(advice), gm.note
    none = frameworks.UNKNOWN
    ctx.fw = dataclasses.replace(ctx.fw, module_apply_line=none.module_apply_line, record_history=none.record_history)
    (gm,) = memory.memory(ctx).gpus
    assert gm.grads_moved_bytes == 0
    assert advice not in gm.note
