"""The client's exceptions, one per kind of answer, carrying the server's error shape
(``{"error": {"code", "message"}}``): catch ``GraphError`` for all of them."""

from __future__ import annotations

from typing import Any


class GraphError(Exception):
    """An error answer (or no answer) from graphsvc."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}" if status else message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after


class BadRequest(GraphError):
    """400 or 422: the request breaks the contract (the code names what)."""


class Unauthorized(GraphError):
    """401: no API key, or an unknown or revoked one."""


class Forbidden(GraphError):
    """403: the key lacks the scope, acts as another user, or a rule forbids the act."""


class NotFound(GraphError):
    """404."""


class Conflict(GraphError):
    """409: the present state forbids it (a following limit, a user being erased)."""


class RateLimited(GraphError):
    """429: a budget is spent; ``retry_after`` says for how many seconds."""


class Unavailable(GraphError):
    """503, or the server could not be reached."""


_BY_STATUS: dict[int, type[GraphError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: BadRequest,
    429: RateLimited,
    503: Unavailable,
}


def error_for(status: int, body: Any, headers: dict[str, str]) -> GraphError:
    """The exception for an error answer."""
    detail = body.get("error", {}) if isinstance(body, dict) else {}
    retry = headers.get("retry-after")
    kind = _BY_STATUS.get(status, Unavailable if status >= 500 else GraphError)
    return kind(
        str(detail.get("message") or f"HTTP {status}"),
        status=status,
        code=str(detail.get("code") or ""),
        retry_after=float(retry) if retry and retry.replace(".", "", 1).isdigit() else None,
    )
