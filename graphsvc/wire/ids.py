"""The user-id rule, as the server enforces it and the client checks before sending: 1-64
characters from ``[A-Za-z0-9_.-]``, not all of them dots.

The alphabet keeps ids safe inside Redis hash tags (no braces) and makes byte order, Python
order and Neo4j string order agree, which keyset pagination relies on. Nothing in it is
percent-encoded, so an id is its own path segment; an id of dots only is refused because
URL normalisers (httpx, urllib3, curl, proxies) remove the dot-segments ``.`` and ``..``, and
``DELETE /v1/users/alice/following/..`` would reach ``DELETE /v1/users/alice``.
"""

from __future__ import annotations

import re
from typing import Any

ID_MAX = 64
ID_RULE = "1-64 characters from [A-Za-z0-9_.-], not only dots"
# For JSON Schema, pydantic (Rust regex) and Arrow (RE2): no look-around there, so the pattern
# says "some character is not a dot" and the length is checked beside it (maxLength).
USER_ID_PATTERN = r"^[A-Za-z0-9_.-]*[A-Za-z0-9_-][A-Za-z0-9_.-]*$"
ONE_ID = r"(?!\.+(?:,|\Z))[A-Za-z0-9_.-]{1,64}"  # one id, for building list patterns
USER_ID = re.compile(ONE_ID)
QUOTE_MOST = 40  # characters of a bad value an error message repeats


def is_user_id(value: str) -> bool:
    return bool(USER_ID.fullmatch(value))


def quoted(value: Any, most: int = QUOTE_MOST) -> str:
    """A bad value as an error message shows it: its repr, cut to a short prefix, so an
    answer never echoes a megabyte back nor grows with what the caller sent."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= most:
        return repr(text) if isinstance(value, str) else text
    return f"{text[:most]!r}... ({len(text)} characters)"
