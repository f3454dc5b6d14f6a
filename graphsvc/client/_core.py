"""What both clients share: the configuration, one request described as a ``Call``, the
decoding of answers into the server's own models, and the retry policy.

A ``Call[T]`` names the model of its answer, so whatever runs it (either client's ``_call``)
is typed to answer a ``T``: the route methods' return types follow from the requests they
make rather than from an annotation that could say otherwise.

Retry policy: a connection error, a 503 and a 429 are retried up to ``max_retries`` times,
waiting ``Retry-After`` when the server says it, else an exponential backoff with full
jitter (``backoff`` doubled each time, at most ``backoff_max``). Every write route of
graphsvc is idempotent (follow, unfollow, block, unblock, dismiss, status, erase: repeating
one changes nothing more), so they are retried like reads. Recording interactions and
impressions adds to counts, so those are retried only on a 429 or 503 answer (the server did
nothing), never after a connection error (it may have).
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Protocol, TypedDict, TypeVar

import httpx
from pydantic import ValidationError

from graphsvc.client.errors import (
    GraphError,
    InvalidResponse,
    RateLimited,
    Unavailable,
    error_for,
    unreachable,
)

DEFAULT_URL = "http://127.0.0.1:8000"

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Model(Protocol[T_co]):
    """What reads an answer into a ``T_co``: the model class itself (``schemas.FollowBody``),
    whose validator pydantic builds once, when the class is defined."""

    def model_validate(self, _payload: Any, /) -> T_co: ...


@dataclass(frozen=True, slots=True)
class ClientConfig:
    base_url: str
    api_key: str | None
    timeout: float = 10.0
    max_retries: int = 3
    backoff: float = 0.2
    backoff_max: float = 5.0
    viewer: str | None = None  # the user every read is for (X-Graph-Viewer; a service key)

    @classmethod
    def resolve(
        cls,
        base_url: str | None,
        api_key: str | None,
        *,
        timeout: float,
        max_retries: int,
        backoff: float,
        backoff_max: float,
        viewer: str | None,
    ) -> ClientConfig:
        """Arguments first, then GRAPHSVC_URL and GRAPHSVC_API_KEY."""
        return cls(
            base_url=(base_url or os.environ.get("GRAPHSVC_URL") or DEFAULT_URL).rstrip("/"),
            api_key=api_key or os.environ.get("GRAPHSVC_API_KEY"),
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            backoff_max=backoff_max,
            viewer=viewer,
        )

    def headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        if self.viewer is not None:
            headers["X-Graph-Viewer"] = self.viewer
        return headers


# What a cursor says for itself: a request with one leaves these out (the server refuses both).
_CURSOR_KNOWS = frozenset({"since"})


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request and the model its answer is read into."""

    method: str
    path: str
    params: dict[str, Any] = field(default_factory=dict)
    body: Any = None
    model: Model[T] = field(kw_only=True)
    idempotent: bool = True

    def after(self, cursor: str | None) -> Call[T]:
        """The page after ``cursor`` (None: the first page)."""
        if cursor is None:
            return self
        kept = {name: value for name, value in self.params.items() if name not in _CURSOR_KNOWS}
        return Call(
            self.method,
            self.path,
            {**kept, "cursor": cursor},
            self.body,
            model=self.model,
            idempotent=self.idempotent,
        )


def answer(call: Call[T], response: httpx.Response) -> T:
    """The decoded answer of an httpx response (either client's): the model, or the
    ``GraphError`` of an error answer or of one that is not the documented shape."""
    method, url = response.request.method, str(response.request.url)
    try:
        payload = response.json() if response.content else None
    except ValueError:
        payload = None
        if response.status_code < 400:
            kind = response.headers.get("content-type", "no type")
            raise _invalid(response, f"the answer is not JSON ({kind})") from None
    if response.status_code >= 400:
        raise error_for(response.status_code, payload, dict(response.headers), method, url)
    try:
        return call.model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"]))
        message = f"the answer is not the documented shape: {first['msg']} at {where}"
        raise _invalid(response, message) from None


def _invalid(response: httpx.Response, message: str) -> InvalidResponse:
    return InvalidResponse(
        message,
        status=response.status_code,
        code="invalid_response",
        request_id=response.headers.get("x-request-id"),
        method=response.request.method,
        url=str(response.request.url),
    )


def wait_or_raise(call: Call[Any], exc: Exception, attempt: int, config: ClientConfig) -> float:
    """Seconds to wait before retrying after ``exc`` (a GraphError, or a transport error,
    which is an ``Unavailable`` with no answer); raises the GraphError when not to retry."""
    if isinstance(exc, GraphError):
        error = exc
    else:
        error = unreachable(exc, call.method, _url(exc, config, call))
    wait = retry_delay(call, error, attempt, config)
    if wait is None:
        if error is exc:
            raise error
        raise error from exc
    return wait


def _url(exc: Exception, config: ClientConfig, call: Call[Any]) -> str:
    try:
        return str(exc.request.url)  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):  # httpx raises RuntimeError for an unset request
        return config.base_url + call.path


def retry_delay(
    call: Call[Any], error: GraphError, attempt: int, config: ClientConfig
) -> float | None:
    """Seconds to wait before attempt ``attempt + 1``, or None to give up."""
    if attempt >= config.max_retries or not isinstance(error, (RateLimited, Unavailable)):
        return None
    if error.status is None and not call.idempotent:
        return None  # no answer: the server may have recorded it
    if error.retry_after is not None:
        return error.retry_after
    return random.uniform(0, min(config.backoff_max, config.backoff * 2**attempt))


class NewFollower(TypedDict):
    """A ``follower`` event of the new-followers stream, or a ``follow_request`` one
    (``requested``: the user is locked, and the follower waits for its approval): a dict, as
    the event's JSON is."""

    follower: str
    since: datetime  # the follow's (or request's) time, UTC
    event_id: str
    entry_id: str  # the stream entry: pass it as ``last_event_id`` to resume after it
    requested: bool


class Notification(TypedDict):
    """A ``posted`` event of the notifications stream: a new post of an author whose bell the
    user rings."""

    author: str
    post_id: str
    at: datetime  # the post's time, UTC
    entry_id: str  # the stream entry: pass it as ``last_event_id`` to resume after it
