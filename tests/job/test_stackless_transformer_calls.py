"""A stackless, unannotated loop of ``nn.Transformer`` calls is stepped by its calls (issue #37, h37-wild57i).

The shape (session 56's *Left*: "a stackless, unannotated transformer loop still reads no iteration"): a PyTorch
profiler trace recorded with ``with_stack=False``, no ``prof.step()`` and no ``record_function``, of a loop that calls
an encoder-decoder model N times and reads nothing back until the end -- no wait marks a call, nothing names one.
Its launch sequence still repeats call by call, and each call is two stacks of layers (the encoder's, then the
decoder's: each layer kind its own kernels) between the program's own embedding and head.  ``job.period`` read a call
from a layer only where one stack filled the call (``_calls_of_layers``): two stacks, each under its
``_LAYERS_COVER``, read as one inference pass over all N calls.

By construction (``synthetic.torchtrace.write_stackless_transformer_loop``): the calls, their GPU time and layers are
known; the calls of the bare stacks, with none of the call's own kernels around them, are calls too.  Control: one
call of the same model (its layers repeat, no call does: never steps, on the base too).
"""

from __future__ import annotations

import pytest

from synthetic import torchtrace as tt
from tests.support.cli_report import first_host


def _host(tmp_path, **kw) -> tuple[dict, dict]:
    path = str(tmp_path / "host_4400.1790857026000000000.pt.trace.json")
    truth = tt.write_stackless_transformer_loop(path, **kw)
    return first_host(path), truth


@pytest.mark.parametrize("kw", [{}, {"encoder_layers": 2, "decoder_layers": 2}, {"first_extra": 3},
                                {"kernel_us": 3.0}], ids=["4+4", "2+2", "unlike_warmup", "host_bound"])
def test_calls_of_an_encoder_decoder_are_the_steps(tmp_path, kw) -> None:
    host, truth = _host(tmp_path, **kw)
    steps = host["steps"]
    assert host["job"]["kind"] == "inference"
    assert steps["source"] == "repeated_launches"
    assert steps["found"] == truth["calls"]
    assert f"{truth['layers']} layers in 2 stacks" in steps["note"]
    if kw.get("kernel_us", 200.0) >= 100.0:  # GPU-bound: a step is the call's GPU work, launched back to back
        assert host["gpus"][0]["step_ms"] == pytest.approx(truth["call_ms"], rel=0.02)


def test_one_call_of_an_encoder_decoder_is_no_period(tmp_path) -> None:
    """Control: its layers repeat four times in each stack, but a layer is not a call."""
    host, _ = _host(tmp_path, calls=1)
    assert host["steps"]["source"] != "repeated_launches"


def test_calls_of_bare_stacks_are_the_steps(tmp_path) -> None:
    """The encoder's and decoder's layers alone, no kernel of the call's own around them: a single stack's layers
    across calls would merge into one run, two stacks in a fixed order still show each call."""
    host, truth = _host(tmp_path, own_kernels=False)
    assert host["steps"]["source"] == "repeated_launches"
    assert host["steps"]["found"] == truth["calls"]
    assert host["gpus"][0]["step_ms"] == pytest.approx(truth["call_ms"], rel=0.02)
