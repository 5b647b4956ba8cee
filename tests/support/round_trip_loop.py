"""The JAX round trip's loop, built (``synthetic.jaxcapture``), and a real JAX run's XPlane: shared by the round trip's
input tests (``tests/metrics/test_round_trip_leg_not_input``) and the one-window-rule tests
(``tests/rules/test_window_one_rule``), which may not import each other (``test_suite_hygiene``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthetic import jaxcapture as jc
from tests.support.real_checks import REAL_JAX_SET

MIB16 = 16 << 20
SHAPE = "bf16[2048,4096]"


def round_trip_loop(round_trip: bool) -> jc.JaxCapture:
    """part1 -> [np.asarray out, host work] -> put 16 MiB -> part2, or with no copy out: [host work] put 16 MiB -> part1
    -> part2; then host work the program records, so the step's marker closes after part2 has run."""
    cap = jc.JaxCapture(seed=0, step_annotation=True, command_buffers=True)
    ks = jc.mlp_bf16_step(2, command_buffers=True)
    for _ in range(12):
        cap.begin_step()
        if round_trip:
            cap.execute(ks, function="part1")
            cap.to_host(MIB16, shape=SHAPE)
            cap.host_work(1500.0)
            cap.execute(ks, function="part2", inputs=(cap.device_put(MIB16, SHAPE),))
        else:
            cap.host_work(1500.0)
            batch = cap.device_put(MIB16, SHAPE)
            cap.execute(ks, function="part1", inputs=(batch,))
            cap.execute(ks, function="part2")
        with cap.annotation("metrics_on_host"):  # the step's marker closes after part2 has run
            cap.host_work(2500.0)
        cap.end_step()
    return cap


def real_jax_xplane(run: str) -> Path:
    """The first XPlane of the real JAX run ``run`` (skips where the shared set is absent)."""
    files = sorted((REAL_JAX_SET / run).glob("plugins/profile/*/*.xplane.pb"))
    if not files:
        pytest.skip(f"{REAL_JAX_SET / run} not here (the shared profiles are read in place)")
    return files[0]
