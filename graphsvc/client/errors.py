"""The client's exceptions, one per kind of answer, carrying the server's error shape
(``{"error": {"code", "message"}}``) and where it came from: catch ``GraphError`` for all of
them, the client's own checks and a server that cannot be reached included.

``code`` is one of ``ErrorCode``, a closed set a type checker can match on: every code the
server sends (a unit test holds the set to the server's) and the client's own. A code this
client does not know, from a newer server, is ``unknown``, with the server's code kept in
``server_code`` and its message unchanged.
"""

from __future__ import annotations

from typing import Any, Literal, cast, get_args

ErrorCode = Literal[
    # the request breaks the contract (400, 422)
    "bad_request",
    "invalid_request",
    "invalid_user_id",
    "invalid_limit",
    "invalid_cursor",
    "invalid_recommendation_id",
    "invalid_status",
    "invalid_duration",
    "invalid_interaction",
    "invalid_post",
    "invalid_options",
    "invalid_import",
    "invalid_key_request",
    "invalid_last_event_id",
    "invalid_time_range",
    "invalid_audience",
    "invalid_list",
    "since_too_old",
    "too_many_ids",
    "body_too_large",
    # who is asking (401, 403)
    "unauthenticated",
    "unknown_key",
    "missing_scope",
    "bound_key_scope",
    "wrong_acting_user",
    "service_key_required",
    "owner_only",
    "network_hidden",
    # rules and state (403, 404, 405, 409)
    "self_action",
    "self_follow",
    "event_in_future",
    "blocked",
    "user_suspended",
    "user_erasing",
    "unknown_user",
    "no_follow_request",
    "post_deleted",
    "post_not_found",
    "import_not_found",
    "post_conflict",
    "list_not_found",
    "not_found",
    "method_not_allowed",
    "http_error",
    # limits and budgets (409, 429)
    "following_limit",
    "block_limit",
    "mute_limit",
    "list_limit",
    "list_member_limit",
    "list_follow_limit",
    "subscription_limit",
    "subscription_not_found",
    "list_purpose",
    "not_list_member",
    "list_text_too_long",
    "request_limit",
    "move_refused",
    "alias_limit",
    "follow_rate_limit",
    "rate_limited",
    "auth_throttled",
    "stream_limit",
    "replay_limit",
    "notifications_trimmed",
    # try again later (500, 503)
    "overloaded",
    "graph_timeout",
    "queue_full",
    "neo4j_unavailable",
    "store_warming",
    "redis_unavailable",
    "internal",
    # the client's own
    "unreachable",  # no answer: the connection failed or timed out
    "invalid_argument",  # refused before sending: the call breaks the contract
    "invalid_response",  # an answer that is not the documented shape
    "unknown",  # a code this client does not know (see ``server_code``)
]
ERROR_CODES: frozenset[str] = frozenset(get_args(ErrorCode))


class GraphError(Exception):
    """An error answer (or no answer) from graphsvc.

    ``status`` is the HTTP status (None: no answer), ``request_id`` the answer's
    ``X-Request-ID`` (quote it to the operators), ``method`` and ``url`` the request's."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: ErrorCode = "unknown",
        retry_after: float | None = None,
        request_id: str | None = None,
        method: str | None = None,
        url: str | None = None,
        server_code: str | None = None,
    ) -> None:
        self.status = status
        self.code: ErrorCode = code
        self.message = message
        self.retry_after = retry_after
        self.request_id = request_id
        self.method = method
        self.url = url
        self.server_code = server_code if server_code is not None else code
        super().__init__(self._line())

    def _line(self) -> str:
        """One line: what, then where (``Unavailable: 503 overloaded: ... [GET url, request
        id]``); without an answer, the message already names the URL."""
        head = f"{self.status} {self.server_code}: {self.message}" if self.status else self.message
        where = " ".join(part for part in (self.method, self.url) if part)
        if self.request_id:
            where = f"{where}, request {self.request_id}" if where else f"request {self.request_id}"
        return f"{head} [{where}]" if where and self.status else head


class BadRequest(GraphError):
    """400 or 422, or refused by the client before sending: the request breaks the contract
    (the code names what)."""


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
    """503 (or another 5xx), or the server could not be reached (``status`` None)."""


class InvalidResponse(GraphError):
    """An answer the client cannot read as the documented shape (a proxy's page, a server of
    another version)."""


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


def known_code(code: str) -> ErrorCode:
    """The code as this client names it (``unknown`` for one it does not know)."""
    return cast(ErrorCode, code) if code in ERROR_CODES else "unknown"


def error_for(status: int, body: Any, headers: dict[str, str], method: str, url: str) -> GraphError:
    """The exception for an error answer."""
    detail = body.get("error", {}) if isinstance(body, dict) else {}
    if not isinstance(detail, dict):
        detail = {}
    retry = headers.get("retry-after")
    kind = _BY_STATUS.get(status, Unavailable if status >= 500 else GraphError)
    server_code = str(detail.get("code") or "")
    return kind(
        str(detail.get("message") or f"HTTP {status}"),
        status=status,
        code=known_code(server_code) if server_code else "unknown",
        server_code=server_code or None,
        retry_after=float(retry) if retry and retry.replace(".", "", 1).isdigit() else None,
        request_id=headers.get("x-request-id"),
        method=method,
        url=url,
    )


def unreachable(exc: Exception, method: str, url: str) -> Unavailable:
    """No answer: what failed, and where it was going."""
    reason = str(exc) or type(exc).__name__
    return Unavailable(
        f"could not reach {url} ({method}): {reason}", code="unreachable", method=method, url=url
    )
