"""Where things are, for every test folder: the tests, the repository, its fixtures and the shared real captures."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
GOLDEN = TESTS / "golden"
DEMO_LOGS = REPO / "demo_logs"
#: ``../shared/profiles`` beside the checkout: the real captures with their truth (present in CI, read-only)
SHARED_PROFILES = REPO.parent / "shared" / "profiles"
#: A real two-process CS336 DDP Nsight export, kept gzipped (``fixtures/nsys_ranks/SOURCE.md``): discovery names a
#: ``.sqlite.gz`` and reads none, so the tests that read it unpack it first (:func:`gunzipped`).
DDP_EXPORT = FIXTURES / "nsys_ranks" / "ddp_overlap_rtx3090.sqlite.gz"
#: The real MIT tensor-parallel pair (one machine, ranks 0 and 1, one file each, on one clock)
TP_PAIR = FIXTURES / "wild" / "tp_rtx4090_two_ranks"


def in_rank_folders(src: Path, folder: Path) -> Path:
    """Each gzipped Kineto file of ``src`` copied into ``folder/rank<r>/`` by the rank it states
    (``distributedInfo.rank``), as ``tensorboard_trace_handler(f"{logdir}/rank{rank}")`` writes a job; returns
    ``folder``."""
    import gzip
    import json
    import shutil

    for path in sorted(src.glob("*.json.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            rank = json.load(f)["distributedInfo"]["rank"]
        (folder / f"rank{rank}").mkdir(parents=True)
        shutil.copy(path, folder / f"rank{rank}" / path.name)
    return folder


def gunzipped(src: Path, folder: Path, name: str | None = None) -> Path:
    """``src`` (a gzipped kept capture) unpacked into ``folder`` (made where absent) as ``name`` (default: its name
    without ``.gz``); returns the path."""
    import gzip
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    out = folder / (name or src.name.removesuffix(".gz"))
    with gzip.open(src, "rb") as f, open(out, "wb") as dst:
        shutil.copyfileobj(f, dst)
    return out
