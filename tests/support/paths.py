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
