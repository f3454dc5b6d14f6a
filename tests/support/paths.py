"""Where the tests find files: the checkout's root, and the public datasets kept beside it
(SNAP's edge lists; a test that needs one is skipped without it)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATASETS = ROOT.parent / "shared" / "datasets"
