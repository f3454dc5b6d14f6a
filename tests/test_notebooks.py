"""Every notebook runs top to bottom in a real Jupyter kernel (nbclient + ipykernel), through
graphsvc.client against `graphsvc serve` on the real servers, with the demo data loaded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from helpers import served_api
from nbclient import NotebookClient

from graphsvc.bootstrap import Services
from graphsvc.ops.demo import demo_edges
from graphsvc.ops.loader import load_edges
from graphsvc.settings import Settings

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def api(server_settings: Settings) -> Iterator[str]:
    with served_api(server_settings) as url:
        yield url


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
async def test_notebook_runs(path: Path, service: Services, api: str, service_key: str) -> None:
    await load_edges(service, demo_edges(), progress=False)  # idempotent: what `make demo` loads
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    # the kernel finds graphsvc as a data scientist's would: from the environment
    env = {**os.environ, "GRAPHSVC_URL": api, "GRAPHSVC_API_KEY": service_key, "MPLBACKEND": "Agg"}
    await client.async_execute(env=env)
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    assert any(out.output_type in ("stream", "execute_result") for out in outputs)


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS
