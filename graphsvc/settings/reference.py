"""The reference of every setting, which ``docs/hooks.py`` renders as the docs' settings
tables.

Kept apart from the sections, which say what each setting is: this only shows them, reading
them as it would any pydantic models, and only the docs and their tests need it.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, SecretBytes, SecretStr
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

from graphsvc.settings.sections import (
    PROJECT_ROOT,
    SECRET_SETTINGS,
    LocalServerSettings,
    Settings,
)


@dataclass(frozen=True, slots=True)
class SettingRow:
    """One environment variable of the settings reference."""

    section: str  # the class that declares the setting
    env: str  # its environment variable
    default: str  # its default as one would write it in the environment
    description: str


def settings_reference(*models: type[BaseModel]) -> list[SettingRow]:
    """Every setting of ``models`` (by default ``Settings`` and ``LocalServerSettings``), grouped
    by the class that declares it, in the order the classes and fields are written.

    The docs' settings tables are generated from this, so they say what the code reads, and a
    setting without a description shows as a gap a test refuses. It walks any pydantic models:
    a field whose type is itself a model is read as a section of its own, named by that model,
    with the variable names pydantic-settings reads for it. A secret's default is never shown."""
    rows: list[SettingRow] = []
    for model in models or (Settings, LocalServerSettings):
        rows += _model_rows(model, _env_prefix(model))
    order = list(dict.fromkeys(row.section for row in rows))
    return sorted(rows, key=lambda row: order.index(row.section))


def _model_rows(model: type[BaseModel], prefix: str) -> list[SettingRow]:
    fields = model.model_fields
    rows: list[SettingRow] = []
    for name in sorted(fields, key=lambda name: _declared_at(model, name)):
        info = fields[name]
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            if issubclass(kind, BaseSettings):  # constructed on its own: its own names
                rows += _model_rows(kind, _env_prefix(kind))
            else:  # read through the parent: FIELD__NAME
                delimiter = model.model_config.get("env_nested_delimiter") or "__"
                rows += _model_rows(kind, f"{prefix}{name}{delimiter}")
            continue
        alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
        rows.append(
            SettingRow(
                section=_declarer(model, name).__name__.lstrip("_"),
                env=(alias or f"{prefix}{name}").upper(),
                default=_default_text(name, info),
                description=info.description or "",
            )
        )
    return rows


def _env_prefix(model: type[BaseModel]) -> str:
    return str(model.model_config.get("env_prefix") or "")


def _declarer(model: type[BaseModel], name: str) -> type:
    """The class of ``model``'s hierarchy that declares the field ``name`` (the most derived
    one that annotates it)."""
    for klass in model.__mro__:
        if name in vars(klass).get("__annotations__", {}):
            return klass
    return model


def _declared_at(model: type[BaseModel], name: str) -> tuple[int, int]:
    """Where a field is written: the model's own fields first, then each base's, each in the
    order of the source."""
    klass = _declarer(model, name)
    written = list(vars(klass).get("__annotations__", {}))
    return model.__mro__.index(klass), written.index(name) if name in written else len(written)


def _default_text(name: str, info: FieldInfo) -> str:
    secret = name in SECRET_SETTINGS or info.annotation in (SecretStr, SecretBytes)
    if info.is_required():
        return "(required)"
    if secret:
        return "(development value)"
    value = info.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, Path):
        return (
            f"./{value.relative_to(PROJECT_ROOT)}"
            if value.is_relative_to(PROJECT_ROOT)
            else str(value)
        )
    if isinstance(value, dict | list | tuple):
        return json.dumps(value)
    return str(value)
