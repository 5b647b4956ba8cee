"""Every synthetic scenario file: the reader equals a full protobuf parse and the construction."""

from __future__ import annotations

import numpy as np
import pytest

from synthetic.scenarios import SCENARIOS
from tb_gpu_advisor.formats.xplane.reader import parse_timeline, read_timeline
from tests.support.reference_parse import assert_matches_reference


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    return {name: (fn(), [str(p) for p in fn().write(root)]) for name, fn in SCENARIOS.items()}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_reader_equals_full_parse_and_construction(written, name):
    sc, paths = written[name]
    truth = sc.truth
    assert len(paths) == truth.num_hosts
    kernels_seen: dict[str, int] = {}
    for path in paths:
        tl = read_timeline(path)
        assert assert_matches_reference(tl, path) == tl.num_events > 0
        assert [p.gpu_id for p in tl.gpu_planes()] == list(range(truth.gpus_per_host))
        env = tl.plane("Task Environment")
        assert env.stats["profile_stop_time"] > env.stats["profile_start_time"]
        host = tl.plane("/host:CPU")
        python = host.line("python")
        marker = "Profiled batch" if truth.step_marker == "keras3" else "train"
        assert (python.names() == marker).sum() == truth.num_steps
        step_nums = python.int_stat("step_num")[python.names() == marker]
        assert step_nums.tolist() == list(range(truth.num_steps))
        private = [ln.name for ln in host.lines if ln.name.startswith("tf_gpu_private_")]
        assert bool(private) == (truth.gpu_thread_mode == "gpu_private")
        for gpu in tl.gpu_planes():
            assert gpu.stats["core_count"] > 0 and gpu.stats["compute_cap_major"] >= 7
            for line in gpu.lines:
                for n, c in zip(*np.unique(line.names(), return_counts=True)):
                    if not str(n).startswith("Memcpy"):
                        kernels_seen[str(n)] = kernels_seen.get(str(n), 0) + int(c)
        # Every device event has a host launch record with the same correlation id.
        host_corr = set()
        for line in host.lines:
            c = line.int_stat("correlation_id", inherit=False)
            host_corr.update(c[c >= 0].tolist())
        for gpu in tl.gpu_planes():
            for line in gpu.lines:
                assert set(line.int_stat("correlation_id").tolist()) <= host_corr
    assert kernels_seen == truth.kernel_counts


def test_ref_value_and_typed_stats_as_in_real_captures(written):
    sc, paths = written["fp16_misaligned"]
    tl = read_timeline(paths[0])
    compute = tl.plane("/device:GPU:0").lines[0]
    assert compute.name.endswith("(Compute)")
    details = {compute.plane.string(int(i)) for i in np.unique(compute.str_stat("kernel_details"))}
    assert all(d.startswith("regs:") and "occ_pct:" in d for d in details)
    shapes = {compute.plane.string(int(i)) for i in np.unique(compute.str_stat("shape")) if i >= 0}
    assert shapes == {"(half[256,1001];half[1001,1001])"}
    h2d = tl.plane("/device:GPU:0").line("Stream #101(MemcpyH2D)")
    d = h2d.plane.string(int(h2d.str_stat("memcpy_details")[0]))
    assert d.startswith("kind_src:pinned kind_dst:device size:") and d.endswith("async:1")


def test_deterministic_and_seeded():
    a = SCENARIOS["launch_bound"](num_steps=3).encode()
    b = SCENARIOS["launch_bound"](num_steps=3).encode()
    c = SCENARIOS["launch_bound"](num_steps=3, seed=1).encode()
    assert a == b and a != c


def test_num_steps_and_scale_grow_the_capture():
    small = SCENARIOS["ideal"](num_steps=2)
    big = SCENARIOS["ideal"](num_steps=4, scale=2)
    assert big.truth.num_steps == 4 and small.truth.steady_steps == 2
    n_small = parse_timeline(small.encode()["worker0"]).num_events
    n_big = parse_timeline(big.encode()["worker0"]).num_events
    assert n_big > 3.5 * n_small
