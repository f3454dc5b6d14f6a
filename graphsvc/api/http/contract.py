"""The OpenAPI document states every rule the service enforces that a schema can state, with
the values of this deployment's settings (a page's largest size is PAGE_LIMIT_MAX, not a
number written twice). Routes mark such places ``schemas.settings_extra(keyword=setting)``;
``state_settings`` writes the setting's value in and drops the mark when the document is
generated. Rules a schema cannot state (acting on oneself, a block, a time in the future)
are refused with 403, never with the 422 that means "the schema forbids this"."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fastapi.routing import APIRoute

from graphsvc.settings import Settings
from graphsvc.wire.ids import USER_ID_PATTERN
from graphsvc.wire.schemas import SETTINGS_MARK

_ID = USER_ID_PATTERN.strip("^$")


def _apply(node: dict[str, Any], marks: dict[str, str], settings: Settings) -> None:
    for keyword, name in marks.items():
        value = settings.value(name)
        if keyword == "id_list":
            node["pattern"] = f"^{_ID}(,{_ID}){{0,{value - 1}}}$"
        elif keyword == "enum_keys":
            node["enum"] = sorted(value)
        else:
            node[keyword] = value


def state_settings(schema: Any, settings: Settings) -> Any:
    """Replace every mark in the generated document, in place."""
    if isinstance(schema, dict):
        marks = schema.pop(SETTINGS_MARK, None)
        if marks:
            _apply(schema, marks, settings)
        for value in schema.values():
            state_settings(value, settings)
    elif isinstance(schema, list):
        for value in schema:
            state_settings(value, settings)
    return schema


def operation_id(route: APIRoute) -> str:
    """A route's operationId is its endpoint's name (``follow``, ``list_followers``): short and
    stable, so an SDK generated from the document reads as the API does. Renaming an endpoint
    renames a method of every generated SDK (tests/unit pins the list)."""
    return route.name


# One real exchange per operation, recorded from the service by tests/api/test_api_examples.py
# (which also checks, on every run, that the service still answers in their shape).
EXAMPLES_PATH = Path(__file__).with_name("examples.json")
EXAMPLES: dict[str, Any] = json.loads(EXAMPLES_PATH.read_text())


def add_examples(document: dict[str, Any]) -> dict[str, Any]:
    """Each operation's recorded request and answer, as OpenAPI examples: SDK generators and
    /docs show them, and the API page renders them as a curl call and its answer."""
    for template, path in document["paths"].items():
        for operation in path.values():
            example = EXAMPLES.get(operation.get("operationId", ""))
            if example is None:
                continue
            request = example["request"]
            values = path_values(template, request["path"])
            for parameter in operation.get("parameters", []):
                value = _parameter_value(parameter, request, values)
                if value is not None:
                    parameter["example"] = value
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None and request.get("body") is not None:
                body["example"] = request["body"]
            answer = operation.get("responses", {}).get(str(example["status"]), {})
            for media in answer.get("content", {}).values():
                media["example"] = example["response"]
    return document


def path_values(template: str, path: str) -> dict[str, str]:
    """The values of a path template's parameters in a path (none when it does not match)."""
    pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template))
    found = re.fullmatch(pattern, path)
    return found.groupdict() if found else {}


def _parameter_value(
    parameter: dict[str, Any], request: dict[str, Any], values: dict[str, str]
) -> Any:
    if parameter.get("in") == "query":
        return request.get("query", {}).get(parameter["name"])
    if parameter.get("in") == "path":
        return values.get(parameter["name"])
    return None
