"""Domain errors: each knows its HTTP status and a stable machine-readable code.

The service layer raises these; the API turns them into ``{"error": {"code", "message"}}``
without knowing which use case failed. Adapters never raise them for HTTP reasons.
"""

from __future__ import annotations


class GraphError(Exception):
    status: int = 400
    code: str = "bad_request"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidUserId(GraphError):
    status = 422
    code = "invalid_user_id"


class SelfFollow(GraphError):
    status = 422
    code = "self_follow"


class InvalidLimit(GraphError):
    status = 422
    code = "invalid_limit"


class InvalidCursor(GraphError):
    status = 400
    code = "invalid_cursor"
