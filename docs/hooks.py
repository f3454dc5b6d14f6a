"""MkDocs hooks: the parts of the pages that are generated from the code, so they cannot
drift from it. A page asks for one with a marker line:

- ``<!-- settings-reference -->``: one table per settings section, from
  ``graphsvc.settings.reference.settings_reference()`` (variable, default, description);
- ``<!-- import-contracts -->``: the import-linter contracts of ``pyproject.toml``, which
  ``make lint`` and ``tests/unit/project/test_architecture.py`` enforce;
- ``<!-- example: OPERATION -->``: the operation's recorded exchange with the service
  (``graphsvc/api/http/examples.json``, checked against the service by the suite) as a ``curl``
  call and its answer.

And the notebooks' pages: ``docs/notebooks/`` (not committed) is filled before the build with
each notebook as the suite last ran it against its service (``.local/notebooks``, written by
``tests/integration/client/test_notebooks.py``: outputs and plots), else as committed, without outputs.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from functools import cache
from itertools import groupby
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from graphsvc.api.http.contract import EXAMPLES
from graphsvc.settings.reference import settings_reference

ROOT = Path(__file__).resolve().parent.parent
SETTINGS_MARKER = "<!-- settings-reference -->"
CONTRACTS_MARKER = "<!-- import-contracts -->"
NOTEBOOKS = ROOT / "notebooks"
EXECUTED = ROOT / ".local" / "notebooks"
RENDERED = ROOT / "docs" / "notebooks"


def on_config(config: Any, **_: Any) -> Any:
    """The notebooks the site renders: the executed copies where the suite wrote them."""
    RENDERED.mkdir(exist_ok=True)
    for stale in RENDERED.glob("*.ipynb"):
        stale.unlink()
    missing = []
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        executed = EXECUTED / notebook.name
        if not executed.exists():
            missing.append(notebook.name)
        shutil.copy(executed if executed.exists() else notebook, RENDERED / notebook.name)
    if missing:
        print(f"notebooks without outputs (run `make test` for them): {', '.join(missing)}")
    return config


EXAMPLE_MARKER = re.compile(r"^<!-- example: (\w+) -->$", re.MULTILINE)
OPEN_ROUTES = ("/healthz", "/livez", "/readyz", "/metrics")  # probes need no key


def on_page_markdown(markdown: str, **_: Any) -> str:
    markdown = EXAMPLE_MARKER.sub(lambda found: example(found.group(1)), markdown)
    if SETTINGS_MARKER in markdown:
        markdown = markdown.replace(SETTINGS_MARKER, settings_tables())
    if CONTRACTS_MARKER in markdown:
        markdown = markdown.replace(CONTRACTS_MARKER, contracts_table())
    return markdown


@cache
def operations() -> dict[str, dict[str, Any]]:
    """The OpenAPI document's operations by id, with this source's default settings."""
    from graphsvc.api.app import create_app
    from graphsvc.settings import Settings

    document = create_app(Settings().with_values(development=True)).openapi()
    return {op["operationId"]: op for path in document["paths"].values() for op in path.values()}


def parameters(operation: str) -> list[str]:
    """The route's parameters as a list, each with its bounds (as the document states them)."""
    lines = []
    for parameter in operations()[operation].get("parameters", []):
        schema = parameter.get("schema", {})
        kinds = [s.get("type") for s in schema.get("anyOf", [schema]) if s.get("type") != "null"]
        bounds = [
            f"{word} {schema[key]}"
            for key, word in (("minimum", "at least"), ("maximum", "at most"),
                              ("minLength", "length at least"), ("maxLength", "length at most"))
            if key in schema
        ]  # fmt: skip
        if "enum" in schema:
            bounds.append("one of " + ", ".join(f"`{value}`" for value in schema["enum"]))
        if "default" in schema and schema["default"] is not None:
            bounds.append(f"default `{json.dumps(schema['default'])}`")
        what = parameter.get("description", "").replace("\n", " ")
        needed = "required" if parameter.get("required") else "optional"
        detail = "; ".join([needed, *(k for k in kinds if k), *bounds])
        lines.append(f"- `{parameter['name']}` ({parameter['in']}; {detail}): {what}")
    return lines


def example(operation: str) -> str:
    """The route's parameters with their bounds, then its recorded exchange as a reader
    replays it: the curl call, then the answer."""
    recorded = EXAMPLES[operation]  # a marker without an example fails the build
    request = recorded["request"]
    url = "localhost:8000" + request["path"]
    if request.get("query"):
        url += "?" + urlencode(request["query"], safe=",")
    parts = ["curl"]
    if request["method"] != "GET":
        parts.append(f"-X {request['method']}")
    if not request["path"].startswith(OPEN_ROUTES):
        parts.append('-H "$AUTH"')
    if request.get("body") is not None:
        body = json.dumps(request["body"], separators=(",", ":"))
        parts.append(f"-H 'content-type: application/json' -d '{body}'")
    parts.append(f"'{url}'")
    answer = recorded["response"]
    shown = answer if isinstance(answer, str) else json.dumps(answer, indent=2)
    kind = "text" if isinstance(answer, str) else "json"
    listed = parameters(operation)
    return "\n".join(
        [
            *(["Parameters:", "", *listed, ""] if listed else []),
            "```sh",
            " ".join(parts),
            "```",
            "",
            f"Answer ({recorded['status']}):",
            "",
            f"```{kind}",
            shown.rstrip("\n"),
            "```",
        ]
    )


def _cell(text: str) -> str:
    """Text for a table cell (a pipe in a code span needs no escape: the table reads past it)."""
    return text.replace("|", "\\|").replace("\n", " ")


def settings_tables() -> str:
    """One table per section (the class that declares its settings), in source order."""
    parts = []
    for section, rows in groupby(settings_reference(), key=lambda row: row.section):
        parts += [
            f"### {section}",
            "",
            "| variable | default | meaning |",
            "|---|---|---|",
            *(f"| `{row.env}` | `{row.default}` | {_cell(row.description)} |" for row in rows),
            "",
        ]
    return "\n".join(parts)


def contracts_table() -> str:
    """Each contract with what it constrains, as pyproject.toml states it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    rows = ["| contract | kind | modules |", "|---|---|---|"]
    for contract in config["tool"]["importlinter"]["contracts"]:
        rows.append(f"| {_cell(contract['name'])} | {contract['type']} | {_scope(contract)} |")
    return "\n".join(rows) + "\n"


def _names(modules: list[str]) -> str:
    return ", ".join(f"`{module}`" for module in modules)


def _scope(contract: dict[str, Any]) -> str:
    if contract["type"] == "layers":  # a layer "a | b" holds independent siblings
        layers = [
            _names([part.strip() for part in layer.split("|")]) for layer in contract["layers"]
        ]
        return " over ".join(f"({layer})" if "," in layer else layer for layer in layers)
    if contract["type"] == "forbidden":
        sources, forbidden = contract["source_modules"], contract["forbidden_modules"]
        return f"from {_names(sources)}: no import of {_names(forbidden)}"
    if contract["type"] == "independence":
        return f"{_names(contract['modules'])} import nothing of each other"
    if contract["type"] == "acyclic_siblings":
        return f"no circle among the modules of any package under {_names(contract['ancestors'])}"
    return _cell(str({k: v for k, v in contract.items() if k not in ("name", "type")}))
