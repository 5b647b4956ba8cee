"""A blocking copy's saving names the levers in the program's framework's words (h37-probe43x, issue #37 class 3).

The wrong assumption (``rules.excessive_memcpy._ASSUMPTION``): *the levers that make a blocking copy overlap are
PyTorch's* -- "pinned memory and non_blocking copies" was the rule's own text for every framework, while a JAX
program's D2H copy is its ``np.asarray(x)`` / ``jax.device_get(x)`` (no ``non_blocking`` argument exists there) and a
TF one's ``tensor.numpy()``.  The words are now the framework's (``memcpy:levers``); PyTorch's stay as they were.

Truth by construction: ``synthetic.randjobs``'s XPlane writers -- a jitted JAX step whose result is read with
``np.asarray`` each step (``read="device_get"``: a 4 MiB bf16 array) and a TF step whose graph copies 8 MiB back
synchronously each step."""

from __future__ import annotations

import dataclasses
import random

import pytest

from synthetic import randjobs
from tests.support.random_jobs import report_of


def _jax_reading_each_step() -> randjobs.Job:
    base = randjobs.random_xplane_job(42889)
    return dataclasses.replace(base, seed=90004, params={
        **base.params, "eager": 0, "host_us": 0.0, "put_bytes": 0, "hlo": True, "scale": 1.0, "layers": 4,
        "command_buffers": True, "read": "device_get"})


def _tf_copying_back_each_step() -> randjobs.Job:
    p = {**randjobs._tf_params(random.Random(1)), "steps": 12, "gpus": 1, "hosts": 1, "marker": "train",
         "layers": 4, "gemm": "GEMM_FP16_TC", "gemm_us": 400.0, "ew_us": 20.0, "input_wait_us": 0.0,
         "input_bytes": 0, "read_bytes": 8 << 20, "between_us": 2.0, "untraced_us": 0.0, "no_gpu": False,
         "thread_mode": "global"}
    return randjobs.Job(91048, "tf", p)


@pytest.mark.parametrize("make, said", [(_jax_reading_each_step, "jax.copy_to_host_async"),
                                        (_tf_copying_back_each_step, ".numpy()")])
def test_blocking_copy_saving_in_the_framework_words(make, said):
    (h,) = report_of(make()).hosts
    f = next(f for f in h.findings if f.rule == "excessive_memcpy")
    assert f.saving is not None
    assert "non_blocking" not in f.saving.assumption and said in f.saving.assumption, f.saving.assumption
