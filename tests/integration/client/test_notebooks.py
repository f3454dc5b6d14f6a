"""Every notebook runs top to bottom in a real Jupyter kernel (nbclient + ipykernel), through
graphsvc.client against `graphsvc serve` on the real servers, with the demo data loaded."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from graphsvc.bootstrap import Services
from graphsvc.ops.data.demo import NAMED, demo_edges
from graphsvc.ops.data.loader import load_edges
from tests.support.paths import ROOT

pytestmark = pytest.mark.long  # minutes: handed out first on a parallel run

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXECUTED = ROOT / ".local" / "notebooks"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
async def test_notebook_runs(path: Path, service: Services, api: str, service_key: str) -> None:
    await load_edges(service, demo_edges(), progress=False)  # idempotent: what `make demo` loads
    before = await _demo_state(service)
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    # the kernel finds graphsvc as a data scientist's would: from the environment
    # plots inline, as Jupyter draws them, so the executed copy carries them as images
    inline = "module://matplotlib_inline.backend_inline"
    env = {**os.environ, "GRAPHSVC_URL": api, "GRAPHSVC_API_KEY": service_key, "MPLBACKEND": inline}
    await client.async_execute(env=env)
    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    assert any(out.output_type in ("stream", "execute_result") for out in outputs)
    plots = [out for out in outputs if "image/png" in out.get("data", {})]
    assert len(plots) >= sum(cell.source.count("plt.show()") for cell in notebook.cells)
    # a notebook changes only what it made: the demo graph's named users are as they were
    assert await _demo_state(service) == before
    # the docs site renders this copy (docs/hooks.py): the notebook as the suite ran it
    EXECUTED.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, EXECUTED / path.name)


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS


async def _demo_state(service: Services) -> dict[str, object]:
    """The named demo users' counts and followings (what a notebook must leave alone)."""
    state: dict[str, object] = {}
    for user in NAMED:
        counts = await service.follow_pages.counts(user)
        page = await service.follow_pages.following(user, 200)
        state[user] = (counts.followers, counts.following, sorted(i.user_id for i in page.items))
    return state
