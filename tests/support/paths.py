"""Where things are, for every test folder: the tests, the repository, its fixtures and the shared real captures."""

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
GOLDEN = TESTS / "golden"
DEMO_LOGS = REPO / "demo_logs"
#: ``../shared/profiles`` beside the checkout: the real captures with their truth (present in CI, read-only)
SHARED_PROFILES = REPO.parent / "shared" / "profiles"
