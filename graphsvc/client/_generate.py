"""Writes the blocking client from the asynchronous one (``make generate``), as httpcore does
with unasync: ``await`` and ``async`` dropped, the names below mapped, the result formatted
with ruff. ``--check`` writes nothing and fails when the committed files differ from what
would be written (the unit tests run it, so CI does)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import unasync

CLIENT = Path(__file__).resolve().parent
ROOT = CLIENT.parents[1]  # the checkout: ruff reads its pyproject.toml from there
SOURCES = ("client.py", "listing.py")
NAMES = {
    "_async": "_sync",
    "AsyncGraphClient": "GraphClient",
    "AsyncAnalysis": "Analysis",
    "AsyncListing": "Listing",
    "AsyncFetch": "Fetch",
    "AsyncTotal": "Total",
    "AsyncClient": "Client",
    "aclose": "close",
    "aread": "read",
    "aiter_lines": "iter_lines",
    "asyncio": "time",
}
HEADER = "# Generated from graphsvc/client/_async/{name} by `make generate`: edit that file.\n"


def generate(into: Path) -> list[Path]:
    """The blocking files, written under ``into`` (a copy of the package's layout)."""
    source_dir, target_dir = into / "_async", into / "_sync"
    source_dir.mkdir(parents=True, exist_ok=True)
    for name in SOURCES:
        shutil.copy(CLIENT / "_async" / name, source_dir / name)
    rule = unasync.Rule(str(source_dir) + "/", str(target_dir) + "/", additional_replacements=NAMES)
    unasync.unasync_files([str(source_dir / name) for name in SOURCES], rules=[rule])
    written = [target_dir / name for name in SOURCES]
    for path in written:
        path.write_text(HEADER.format(name=path.name) + path.read_text())
    ruff = Path(sys.executable).with_name("ruff")
    subprocess.run(
        [str(ruff), "check", "--fix", "--quiet", *map(str, written)], capture_output=True
    )
    subprocess.run([str(ruff), "format", "--quiet", *map(str, written)], check=True)
    return written


def stale() -> list[str]:
    """The committed blocking files that differ from what would be generated."""
    with tempfile.TemporaryDirectory(dir=ROOT) as scratch:
        fresh = generate(Path(scratch))
        return [
            path.name
            for path in fresh
            if not (CLIENT / "_sync" / path.name).exists()
            or (CLIENT / "_sync" / path.name).read_text() != path.read_text()
        ]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        differ = stale()
        if differ:
            print(f"graphsvc/client/_sync is stale ({', '.join(differ)}): run `make generate`")
            return 1
        return 0
    with tempfile.TemporaryDirectory(dir=ROOT) as scratch:
        for path in generate(Path(scratch)):
            shutil.copy(path, CLIENT / "_sync" / path.name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
