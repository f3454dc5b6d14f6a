"""Every notebook runs top to bottom in a real Jupyter kernel (nbclient + ipykernel), against
the real servers, with the demo data loaded."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from graphsvc.bootstrap import Services
from graphsvc.ops.demo import demo_edges
from graphsvc.ops.loader import load_edges

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def kernel_environment(services: Services) -> dict[str, str]:
    """The kernel reads its settings from the environment, as a data scientist's would: point
    it at the servers the tests use (whichever way they were found)."""
    settings = services.settings
    return {
        **os.environ,
        "NEO4J_URI": settings.neo4j_uri,
        "REDIS_URL": settings.redis_url,
        "REDIS_CLUSTER": "1" if settings.redis_cluster else "0",
        "REDIS_PREFIX": settings.redis_prefix,
    }


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
async def test_notebook_runs(path: Path, service: Services) -> None:
    await load_edges(service, demo_edges(), progress=False)  # idempotent: what `make demo` loads
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    await client.async_execute(env=kernel_environment(service))
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    assert any(out.output_type in ("stream", "execute_result") for out in outputs)


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS
