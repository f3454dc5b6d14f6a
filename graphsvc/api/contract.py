"""The OpenAPI document states every rule the service enforces that a schema can state, with
the values of this deployment's settings (a page's largest size is PAGE_LIMIT_MAX, not a
number written twice). Routes mark such places ``schemas.settings_extra(keyword=setting)``;
``state_settings`` writes the setting's value in and drops the mark when the document is
generated. Rules a schema cannot state (acting on oneself, a block, a time in the future)
are refused with 403, never with the 422 that means "the schema forbids this"."""

from __future__ import annotations

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
