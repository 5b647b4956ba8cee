"""Write small but real XSpace profiles (one plane, a few events) for discovery, cache and S3 tests."""

from __future__ import annotations

import os

from tb_gpu_advisor.formats.xplane.schema import message_class
from tests.support.paths import FIXTURES, SHARED_PROFILES


def xspace_bytes(host: str = "host", events: int = 3) -> bytes:
    """A valid serialized XSpace: one /host:CPU plane, one line with ``events`` events."""
    space = message_class("XSpace")()
    space.hostnames.append(host)
    plane = space.planes.add()
    plane.id = 1
    plane.name = "/host:CPU"
    entry = plane.event_metadata.add()  # map<int64, XEventMetadata> as repeated entries
    entry.key = 1
    entry.value.id = 1
    entry.value.name = "train"
    line = plane.lines.add()
    line.id = 1
    line.name = "python"
    line.timestamp_ns = 1_000
    for i in range(events):
        ev = line.events.add()
        ev.metadata_id = 1
        ev.offset_ps = i * 1_000_000
        ev.duration_ps = 500_000
    return space.SerializeToString()


def write_profile(logdir: str, run: str, session: str, host: str, events: int = 3) -> str:
    """Write ``<logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb`` (run "." = logdir)."""
    run_dir = logdir if run == "." else os.path.join(logdir, *run.split("/"))
    session_dir = os.path.join(run_dir, "plugins", "profile", session)
    os.makedirs(session_dir, exist_ok=True)
    path = os.path.join(session_dir, f"{host}.xplane.pb")
    with open(path, "wb") as f:
        f.write(xspace_bytes(host, events))
    return path


def write_events_file(run_dir: str) -> str:
    """An (empty-content) TensorBoard event file name, as training writes next to profiles."""
    os.makedirs(run_dir, exist_ok=True)
    path = os.path.join(run_dir, "events.out.tfevents.1700000000.host.1.v2")
    with open(path, "wb") as f:
        f.write(b"\0" * 16)
    return path


#: The real 8 x V100 TensorFlow capture of ../shared (tests skip or shrink without it).
V100_CAPTURE = str(SHARED_PROFILES / "v100_bert_8gpu_tf24.xplane.pb")


def every_capture(tmp_path) -> list:
    """Every corpus and JAX scenario (the run's one copy of the synthetic corpus, ``tests/support/corpus.py``: the
    same files the property walk reads, written once per test run; under ``tmp_path`` without a run's folder), the
    small real fixtures, and the V100 capture when here."""
    from pathlib import Path

    from synthetic.jaxcapture import JAX_SCENARIOS
    from synthetic.scenarios import SCENARIOS
    from tests.support.corpus import corpus

    out: list = []
    for name_set, names in (("corpus_tf", SCENARIOS), ("corpus_jax", JAX_SCENARIOS)):
        root = corpus(name_set, Path(tmp_path))
        for name in names:  # each scenario's own run (corpus_tf also holds their fixed twins: not these)
            out += sorted((root / name).glob("plugins/profile/*/*.xplane.pb"))
    out += sorted((FIXTURES / "real").glob("*.xplane.pb"))
    if os.path.exists(V100_CAPTURE):
        out.append(Path(V100_CAPTURE).resolve())
    return out


def host_report_json(path, keep_stats, release: bool) -> str:  # noqa: ANN001 - a path; a set of stat names or None
    """One XPlane capture's host report as JSON, read as ``formats.xplane.adapter`` reads it but with the stats it
    keeps (``keep_stats``; None: every stat) and with or without releasing the timeline's columns (``release``)."""
    import dataclasses
    import json

    from tb_gpu_advisor.formats.xplane.adapter import to_trace
    from tb_gpu_advisor.formats.xplane.reader import read_timeline
    from tb_gpu_advisor.runtime import pipeline

    tl = read_timeline(str(path), keep_stats=keep_stats)
    m = pipeline.host_metrics(to_trace(tl, release=release), None, release=release)
    m.host = "h"
    rep = pipeline.host_report(m, os.path.getsize(path))
    return json.dumps(dataclasses.asdict(rep), sort_keys=True, default=lambda o: o.item() if hasattr(o, "item") else str(o))


def users_host_report_json(path) -> str:  # noqa: ANN001 - a path
    """:func:`host_report_json` as users read the file (``USED_STATS`` kept, the columns released): computed once per
    test run for a kept or generated capture (``report_store.file_result``), which both the stat-pruning and the
    release tests compare against (each used to compute it again)."""
    from tb_gpu_advisor.formats.xplane.adapter import USED_STATS
    from tests.support.report_store import file_result

    return file_result("xplane-host-report-used-stats-released", path,
                       lambda: host_report_json(path, USED_STATS, release=True))
