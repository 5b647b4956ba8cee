"""A jitted function that loops over training steps (``lax.scan`` / ``fori_loop``) runs that many steps per call
(issue #26 deliverable 2): the loop is told from a loop over layers by what its body holds -- a whole training step
has the forward instructions (``jvp(``) and their transpose; a layer scan has one of the two."""

from __future__ import annotations

from synthetic.hlo import Module, shape
from tb_gpu_advisor.formats.xplane import hlo
from tb_gpu_advisor.formats.xplane.hlo import message_class


def _meta(name: str):
    return message_class("OpMetadata")(op_name=name)


def _loop_module(body_names: list[str], trip: int = 16) -> bytes:
    m = Module("jit_train_loop")
    body = m.computation("body")
    p = body.param("p", shape("f32", 8))
    for i, n in enumerate(body_names):
        body.add(f"i{i}", "add", shape("f32", 8), [p, p], metadata=_meta(n))
    cond = m.computation("cond")
    cond.param("p", shape("f32", 8))
    entry = m.computation("main")
    x = entry.param("x", shape("f32", 8))
    entry.add("loop", "while", shape("f32", 8), [x], called_computation_ids=[body.id, cond.id],
              backend_config={"known_trip_count": {"n": str(trip)}})
    return m.encode(entry)


def test_a_scan_over_training_steps_runs_that_many_steps_per_call():
    raw = _loop_module(["jit(train_loop)/while/body/jvp(mlp)/dot_general",
                        "jit(train_loop)/while/body/transpose(jvp(mlp))/dot_general"], trip=16)
    assert hlo.steps_per_call(raw) == 16


def test_a_scan_over_layers_is_no_loop_over_steps():
    fwd = _loop_module(["jit(train_step)/jvp(scan_layers)/while/body/dot_general"])
    bwd = _loop_module(["jit(train_step)/transpose(jvp(scan_layers))/while/body/dot_general"])
    assert hlo.steps_per_call(fwd) is None and hlo.steps_per_call(bwd) is None


def test_a_hostile_module_gives_no_count():
    assert hlo.steps_per_call(b"jvp(" + b"\xff" * 40) is None
