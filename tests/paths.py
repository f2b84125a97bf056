"""Where tests find the checkout, tests/data and ../shared, from any test subdirectory."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DATA = TESTS / "data"
SHARED = REPO.parent / "shared"
