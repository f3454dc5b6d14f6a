"""User ids: 1-64 characters from ``[A-Za-z0-9_.-]``.

The alphabet keeps ids safe inside Redis hash tags (no braces) and makes byte order, Python
order and Neo4j string order agree, which keyset pagination relies on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graphsvc.domain.errors import InvalidUserId

USER_ID_PATTERN = r"^[A-Za-z0-9_.-]{1,64}$"
_USER_ID = re.compile(USER_ID_PATTERN)


def is_user_id(value: str) -> bool:
    return bool(_USER_ID.fullmatch(value))


# Several ids joined by commas (no id holds one): a whole list checked in one match.
_USER_IDS = re.compile(r"[A-Za-z0-9_.-]{1,64}(?:,[A-Za-z0-9_.-]{1,64})*")


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
        shown = value if isinstance(value, str) and len(value) <= 80 else f"{str(value)[:80]}..."
        raise InvalidUserId(
            f"{name} {shown!r} is not a valid user id: use 1-64 characters from [A-Za-z0-9_.-]"
        )
    return value
