"""Every notebook runs top to bottom against the real servers (with the demo data loaded)."""

from __future__ import annotations

import ast
import asyncio
import json
from pathlib import Path

import pytest

from graphsvc.demo import demo_edges
from graphsvc.loader import load_edges
from graphsvc.service import GraphService

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


async def run_notebook(path: Path) -> None:
    """Run the code cells in order, with top-level await, as a Jupyter kernel would."""
    namespace: dict[str, object] = {"__name__": "__notebook__"}
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        code = compile(
            "".join(cell["source"]), f"{path.name}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
        result = eval(code, namespace)
        if asyncio.iscoroutine(result):
            await result


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
async def test_notebook_runs(path: Path, service: GraphService) -> None:
    await load_edges(service, demo_edges(), progress=False)  # idempotent: what `make demo` loads
    await run_notebook(path)


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS
