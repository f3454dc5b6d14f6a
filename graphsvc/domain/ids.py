"""User ids: 1-64 characters from ``[A-Za-z0-9_.-]``, not all of them dots.

The alphabet keeps ids safe inside Redis hash tags (no braces) and makes byte order, Python
order and Neo4j string order agree, which keyset pagination relies on. Nothing in it is
percent-encoded, so an id is its own path segment; an id of dots only is refused because
URL normalisers (httpx, urllib3, curl, proxies) remove the dot-segments ``.`` and ``..``, and
``DELETE /v1/users/alice/following/..`` would reach ``DELETE /v1/users/alice``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graphsvc.domain.errors import InvalidUserId, quoted

ID_MAX = 64
ID_RULE = "1-64 characters from [A-Za-z0-9_.-], not only dots"
# For JSON Schema, pydantic (Rust regex) and Arrow (RE2): no look-around there, so the pattern
# says "some character is not a dot" and the length is checked beside it (maxLength).
USER_ID_PATTERN = r"^[A-Za-z0-9_.-]*[A-Za-z0-9_-][A-Za-z0-9_.-]*$"
_ONE = r"(?!\.+(?:,|\Z))[A-Za-z0-9_.-]{1,64}"
_USER_ID = re.compile(_ONE)


def is_user_id(value: str) -> bool:
    return bool(_USER_ID.fullmatch(value))


# Several ids joined by commas (no id holds one): a whole list checked in one match.
_USER_IDS = re.compile(rf"{_ONE}(?:,{_ONE})*")


def validate_user_ids(values: Sequence[str], name: str) -> None:
    """Every value a valid id; the error names the first that is not. One regex match for a
    list of valid ids (a hundred calls of ``validate_user_id`` cost more than the match)."""
    if all(isinstance(v, str) for v in values):
        joined = ",".join(values)
        # as many commas as joins: no value brought one of its own
        if joined.count(",") == len(values) - 1 and _USER_IDS.fullmatch(joined):
            return
    for value in values:
        validate_user_id(value, name)


def validate_user_id(value: str, name: str = "user_id") -> str:
    if not isinstance(value, str) or not _USER_ID.fullmatch(value):
        raise InvalidUserId(f"{name} {quoted(value)} is not a valid user id: use {ID_RULE}")
    return value
