"""Routes of home timelines: publish, inspect and delete posts (ids only), read a timeline."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import Response

from graphsvc.api.http.access import guarded
from graphsvc.api.http.bodies import FastJSON, timeline_body
from graphsvc.api.http.context import services_of, viewer_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS, POST_ERRORS
from graphsvc.api.http.params import Cursor, Limit, UserId
from graphsvc.domain.access import Scope
from graphsvc.domain.model import iso_utc
from graphsvc.domain.timeline import PostKind, PostState
from graphsvc.wire.schemas import ID_SCHEMA, PostBody, PostDeletedBody, PostIn, TimelineBody

router = APIRouter(generate_unique_id_function=operation_id)
PostId = Annotated[
    str,
    Path(
        description="the product's post id: 1-64 characters from [A-Za-z0-9_.-]",
        json_schema_extra=ID_SCHEMA,
    ),
]


def _post_body(
    state: PostState, created: bool | None = None, *, counts_hidden: bool = False
) -> dict[str, object]:
    """A post's state; ``counts_hidden``: the author's counts are hidden from the viewer, and
    so are the fan-out's figures (followers walked, home_timelines reached) and the mode, which says
    whether the author is past the celebrity threshold; so is the fan-out's progress (a pull
    is done at once, a push of many followers takes a while): both are ``published``."""
    shown_state = state.state
    if counts_hidden and shown_state in ("fanning_out", "done"):
        shown_state = "published"
    body: dict[str, object] = {
        "post_id": state.post_id,
        "author": state.author,
        "at": iso_utc(state.at) if state.state != "deleted" else None,
        "mode": None if counts_hidden else state.mode,
        "state": shown_state,
        "followers": None if counts_hidden else state.followers,
        "pushed": None if counts_hidden else state.pushed,
        "counts_hidden": counts_hidden,
        "language": state.kind.language,
        "reblog": state.kind.reblog,
    }
    if created is not None:
        body["created"] = created
    return body


@router.put(
    "/v1/users/{user_id}/posts/{post_id}",
    response_model=PostBody,
    status_code=202,
    responses=ERRORS
    | POST_ERRORS
    | {200: {"model": PostBody, "description": "the same post again (created: false)"}},
    tags=["timelines"],
    summary="Publish a post (its id and time): in the author's posts now, fanned out in the background",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def publish_post(
    user_id: UserId, post_id: PostId, body: PostIn, request: Request
) -> Response:
    kind = PostKind(body.language, body.reblog)
    state, created = await services_of(request).timelines.publish(user_id, post_id, body.at, kind)
    return FastJSON(_post_body(state, created), status_code=202 if created else 200)


@router.get(
    "/v1/users/{user_id}/posts/{post_id}",
    response_model=PostBody,
    responses=ERRORS | {404: POST_ERRORS[404]},
    tags=["timelines"],
    summary="A post's state and the progress of its fan-out",
    description="The fan-out's figures, its progress and the mode tell the author's follower "
    "count (and whether it is past the celebrity threshold): they follow the author's "
    "counts_visibility: for a viewer it hides its counts from, null with counts_hidden, and "
    "the state `published` for both fanning_out and done.",
    **guarded(Scope.READ),
)
async def get_post(user_id: UserId, post_id: PostId, request: Request) -> Response:
    services = services_of(request)
    state = await services.timelines.post(user_id, post_id)
    shown = await services.privacy.counts_visible(user_id, viewer_of(request))
    return FastJSON(_post_body(state, counts_hidden=not shown))


@router.delete(
    "/v1/users/{user_id}/posts/{post_id}",
    response_model=PostDeletedBody,
    status_code=202,
    responses=ERRORS
    | {200: {"model": PostDeletedBody, "description": "no such post (deleted: false)"}},
    tags=["timelines"],
    summary="Delete a post: hidden at once, removed from every home timeline in the background",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def delete_post(user_id: UserId, post_id: PostId, request: Request) -> Response:
    deleted = await services_of(request).timelines.delete(user_id, post_id)
    if not deleted:
        return FastJSON({"deleted": False, "state": "absent"}, status_code=200)
    return FastJSON({"deleted": True, "state": "deleting"}, status_code=202)


@router.get(
    "/v1/users/{user_id}/timeline",
    response_model=TimelineBody,
    responses=ERRORS,
    tags=["timelines"],
    summary="The user's home timeline, newest first",
    **guarded(Scope.READ, acts_as_user=True),
)
async def get_timeline(
    user_id: UserId, request: Request, limit: Limit = None, cursor: Cursor = None
) -> Response:
    page = await services_of(request).timelines.timeline(user_id, limit, cursor or None)
    return timeline_body(page)
