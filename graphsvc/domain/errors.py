"""Domain errors: each knows its HTTP status and a stable machine-readable code.

The service layer raises these; the API turns them into ``{"error": {"code", "message"}}``
without knowing which use case failed. Adapters never raise them for HTTP reasons.
"""

from __future__ import annotations


class GraphError(Exception):
    status: int = 400
    code: str = "bad_request"

    def __init__(self, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.headers = headers


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


class InvalidParameter(GraphError):
    status = 422
    code = "invalid_parameter"


class TooManyIds(GraphError):
    status = 422
    code = "too_many_ids"


class InvalidStatus(GraphError):
    status = 422
    code = "invalid_status"


class Blocked(GraphError):
    status = 403
    code = "blocked"


class UserSuspended(GraphError):
    status = 403
    code = "user_suspended"


class UserErasing(GraphError):
    status = 409
    code = "user_erasing"


class FollowingLimit(GraphError):
    status = 409
    code = "following_limit"


class FollowRateLimit(GraphError):
    status = 429
    code = "follow_rate_limit"


class InvalidInteraction(GraphError):
    status = 422
    code = "invalid_interaction"


class Overloaded(GraphError):
    status = 503
    code = "overloaded"
