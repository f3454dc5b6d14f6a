"""The client's types reach its users: `mypy --strict` on a script outside the package
(tests/unit/client/typing/uses_client.py), run from outside the checkout so that graphsvc is found as an
installed package (which needs its py.typed marker), sees every answer's precise type; and
the script uses every public method of both clients, so a new one cannot go unchecked."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import graphsvc
from graphsvc.client import AsyncGraphClient, GraphClient

SCRIPT = Path(__file__).resolve().parent / "typing" / "uses_client.py"


def _public(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls, callable) if not name.startswith("_")}


def test_the_package_says_it_is_typed() -> None:
    assert (Path(graphsvc.__file__).parent / "py.typed").is_file()


def test_the_script_uses_every_public_method() -> None:
    used = set(re.findall(r"graph\.(\w+)\(", SCRIPT.read_text()))
    assert _public(GraphClient) - used == set()
    assert _public(AsyncGraphClient) - used == set()


def test_mypy_strict_sees_precise_types(tmp_path: Path) -> None:
    script = tmp_path / "uses_client.py"
    script.write_text(SCRIPT.read_text())
    mypy = Path(sys.executable).with_name("mypy")
    checked = subprocess.run(
        [str(mypy), "--strict", "--no-incremental", "--ignore-missing-imports", str(script)],
        cwd=tmp_path,  # no pyproject.toml, no checkout on the path: the installed package
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
