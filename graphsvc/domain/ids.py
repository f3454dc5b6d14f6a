"""User ids checked where a request enters the domain: the rule is the HTTP contract's
(``graphsvc.wire.ids``); a breach is the domain's ``InvalidUserId``, naming the parameter."""

from __future__ import annotations

import re
from collections.abc import Sequence

from graphsvc.domain.errors import InvalidUserId
from graphsvc.wire.ids import ID_RULE, ONE_ID, USER_ID, quoted

# Two ids no request can name (the rule refuses ':'): what a process rehearses its statements
# on, so that Neo4j plans them before the first request, finds nobody and changes nothing.
REHEARSAL_USER, REHEARSAL_OTHER = "rehearsal:a", "rehearsal:b"
# Several ids joined by commas (no id holds one): a whole list checked in one match.
_USER_IDS = re.compile(rf"{ONE_ID}(?:,{ONE_ID})*")


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
    if not isinstance(value, str) or not USER_ID.fullmatch(value):
        raise InvalidUserId(f"{name} {quoted(value)} is not a valid user id: use {ID_RULE}")
    return value
