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
    """Every corpus and JAX scenario written under ``tmp_path``, the small real fixtures, and the V100 capture when here."""
    from pathlib import Path

    from synthetic.jaxcapture import JAX_SCENARIOS
    from synthetic.scenarios import SCENARIOS

    out: list = []
    for name, make in {**SCENARIOS, **JAX_SCENARIOS}.items():
        out += make().write(Path(tmp_path) / "logs", run=name)
    out += sorted((FIXTURES / "real").glob("*.xplane.pb"))
    if os.path.exists(V100_CAPTURE):
        out.append(Path(V100_CAPTURE).resolve())
    return out
