"""Settings by their plain names (``hot_list_cap``), as the environment spells them.

``Settings`` holds sections, so that each part is handed only the ones it reads; tests,
notebooks and messages still name a setting without knowing its section, and these functions
find it. They read the sections off the model they are given rather than importing
``Settings``: its module routes through this one, which therefore cannot import it back.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel
from pydantic_settings import BaseSettings


@cache
def sections_of(model: type[BaseModel]) -> dict[str, type[BaseSettings]]:
    """Each section of ``model`` by its field name: the fields that are read from the
    environment on their own."""
    return {
        name: info.annotation
        for name, info in model.model_fields.items()
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseSettings)
    }


@cache
def section_of(model: type[BaseModel]) -> dict[str, str]:
    """The section of ``model`` that declares each setting, by the setting's plain name."""
    return {
        setting: section
        for section, kind in sections_of(model).items()
        for setting in kind.model_fields
    }


def route(
    model: type[BaseModel], data: Mapping[str, Any], *, elsewhere: type[BaseModel]
) -> dict[str, Any]:
    """``model``'s fields from ``data``, where plain names may stand beside whole sections:
    the plain names given for a section build it (its other values still come from the
    environment), and a section given whole is kept, with any plain names for it applied over
    it. A name that ``elsewhere`` declares is refused with where to set it, as is a name no
    section declares, rather than dropped."""
    misplaced = sorted(set(data) & set(elsewhere.model_fields))
    if misplaced:
        where = f"set on {elsewhere.__name__}, not {model.__name__}"
        raise ValueError(f"{', '.join(misplaced)}: {where}")
    owner = section_of(model)
    unknown = sorted(name for name in data if name not in model.model_fields and name not in owner)
    if unknown:
        raise ValueError(f"{', '.join(unknown)}: no such setting")
    routed = {name: value for name, value in data.items() if name in model.model_fields}
    given: dict[str, dict[str, Any]] = {}
    for name, value in data.items():
        if name in owner:
            given.setdefault(owner[name], {})[name] = value
    for section, kind in sections_of(model).items():
        whole, values = routed.get(section), given.get(section, {})
        if isinstance(whole, BaseModel):  # validated already: only the changes are
            if values:
                routed[section] = kind.model_validate({**whole.model_dump(), **values})
        elif whole is not None or values:  # from the environment, but for these values
            routed[section] = kind(**{**(whole or {}), **values})
    return routed


def value_of(settings: BaseModel, name: str) -> Any:
    """The setting of that plain name, from the section of ``settings`` that declares it."""
    owner = section_of(type(settings))
    if name not in owner:
        raise KeyError(f"{name}: no such setting")
    return getattr(getattr(settings, owner[name]), name)
