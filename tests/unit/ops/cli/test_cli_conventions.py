"""The CLI follows the conventions people expect: a version, completion, help that shows each
option's real default and its environment variable, and help that answers at once because
rendering it loads none of the stores' drivers, the web framework or the numeric libraries."""

from __future__ import annotations

import subprocess
import sys

from graphsvc.ops.cli import main
from graphsvc.settings import ApiSettings
from graphsvc.version import __version__
from tests.support.paths import ROOT

HEAVY = [
    "neo4j",
    "redis",
    "fastapi",
    "starlette",
    "uvicorn",
    "networkx",
    "pyarrow",
    "scipy",
    "numpy",
    "pandas",
    "pydantic_settings",
    "graphsvc.bootstrap",
    "graphsvc.settings",
]
GROUPS = [
    [],
    ["services"],
    ["keys"],
    ["ranker"],
    ["serve"],
    ["load"],
    ["check"],
    ["ranker", "eval"],
]

HELP_ONLY = """
import contextlib, io, sys
from graphsvc.ops.cli import main
for argv in {groups!r}:
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([*argv, "--help"]) == 0, argv
print(" ".join(sorted(name for name in {heavy!r} if name in sys.modules)))
"""


def test_help_loads_nothing_heavy() -> None:
    script = HELP_ONLY.format(groups=GROUPS, heavy=HEAVY)
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == ""


def test_version(capsys) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"graphsvc {__version__}\n"


def test_serve_shows_its_settings_defaults_and_variables(capsys) -> None:
    assert main(["serve", "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    fields = ApiSettings.model_fields
    for option, env in [
        ("host", "API_HOST"),
        ("port", "API_PORT"),
        ("workers", "API_WORKERS"),
        ("server", "API_SERVER"),
    ]:
        default = fields[f"api_{option}"].default
        assert f"[env var: {env}; default: ({default})" in shown, option
    assert "<str>" not in shown and "<int>" not in shown


def test_completion_is_offered(capsys) -> None:
    assert main(["--help"]) == 0
    shown = capsys.readouterr().out
    assert "--install-completion" in shown and "--show-completion" in shown
