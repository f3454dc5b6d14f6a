"""The committed notebooks carry no outputs: their outputs are the suite's run against the
service (written to .local/notebooks, and shown by the docs site), never a stale copy."""

from __future__ import annotations

import json

from tests.support.paths import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_committed_notebooks_carry_no_outputs() -> None:
    assert NOTEBOOKS
    for path in NOTEBOOKS:
        cells = json.loads(path.read_text())["cells"]
        code = [cell for cell in cells if cell["cell_type"] == "code"]
        assert code, path.name
        assert all(not cell.get("outputs") for cell in code), path.name
        assert all(cell.get("execution_count") is None for cell in code), path.name
