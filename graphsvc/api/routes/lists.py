"""Routes of curated lists: a user's lists and their members.

The owner's changes act as the owner (``acts_as_user``). Reads are for the viewer: another's
private list, and every list of an owner who blocks the viewer or is suspended, is a 404
``list_not_found``, as an unknown list is (``services/lists/curated.py``). A page of lists or of
members is one bounded Neo4j read (``Cost.GRAPH``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from graphsvc.api.http.access import Cost, guarded
from graphsvc.api.http.bodies import FastJSON, page_body, timeline_body
from graphsvc.api.http.context import services_of, viewer_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS
from graphsvc.api.http.params import Cursor, Limit, ListId, UserId
from graphsvc.domain.access import Scope
from graphsvc.domain.lists import CuratedList, Purpose
from graphsvc.domain.model import iso_utc
from graphsvc.domain.privacy import Viewer
from graphsvc.wire.schemas import (
    ID_SCHEMA,
    ErrorBody,
    ListBody,
    ListDeletedBody,
    ListIn,
    ListPatchIn,
    ListsBody,
    MembersChangeBody,
    MembersIn,
    PageBody,
    TimelineBody,
)

router = APIRouter(generate_unique_id_function=operation_id)

NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {
        "model": ErrorBody,
        "description": "list_not_found: no such list of the owner, or one the viewer may not "
        "see (private, or its owner blocks the viewer or is suspended)",
    }
}
WRITE_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    409: {
        "model": ErrorBody,
        "description": "a bound reached (list_limit, list_member_limit, list_text_too_long), or "
        "the owner is being erased (user_erasing); nothing changed",
    },
    422: {
        "model": ErrorBody,
        "description": "invalid user or list id, an empty name, nothing to change (invalid_list), "
        "or more than LIST_BATCH_MAX members named (too_many_ids)",
    },
}
Member = Annotated[
    str | None,
    Query(description="only the lists that hold this user", json_schema_extra=ID_SCHEMA),
]


def list_json(found: CuratedList, viewer: Viewer) -> dict[str, Any]:
    """The list as the viewer may see it: whether it is exclusive is the owner's alone."""
    return {
        "id": found.id,
        "owner": found.owner,
        "name": found.name,
        "description": found.description,
        "private": found.private,
        "purpose": found.purpose.value,
        "members": found.members,
        "exclusive": found.exclusive if viewer.is_owner(found.owner) else None,
        "created_at": iso_utc(found.created),
        "updated_at": iso_utc(found.updated),
    }


@router.post(
    "/v1/users/{user_id}/lists",
    response_model=ListBody,
    status_code=201,
    responses=WRITE_ERRORS,
    tags=["lists"],
    summary="Create a list (curate or moderation, public or private)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def create_list(user_id: UserId, body: ListIn, request: Request) -> FastJSON:
    created = await services_of(request).lists.create(
        user_id,
        body.name,
        body.description,
        private=body.private,
        purpose=Purpose(body.purpose),
        exclusive=body.exclusive,
    )
    return FastJSON(list_json(created, viewer_of(request)), status_code=201)


@router.get(
    "/v1/users/{user_id}/lists",
    response_model=ListsBody,
    responses=ERRORS,
    tags=["lists"],
    summary="A user's lists the viewer may see, newest first; with member, those holding it",
    **guarded(Scope.READ, cost=Cost.GRAPH),
)
async def list_lists(
    user_id: UserId,
    request: Request,
    limit: Limit = None,
    cursor: Cursor = None,
    member: Member = None,
) -> FastJSON:
    viewer = viewer_of(request)
    items, next_cursor = await services_of(request).lists.owned(
        user_id, viewer, limit, cursor, member=member
    )
    return FastJSON({"items": [list_json(i, viewer) for i in items], "next_cursor": next_cursor})


@router.get(
    "/v1/users/{user_id}/lists/{list_id}",
    response_model=ListBody,
    responses={**ERRORS, **NOT_FOUND},
    tags=["lists"],
    summary="One list, with its count of active members",
    **guarded(Scope.READ, cost=Cost.GRAPH),
)
async def get_list(user_id: UserId, list_id: ListId, request: Request) -> FastJSON:
    viewer = viewer_of(request)
    found = await services_of(request).lists.get(user_id, list_id, viewer)
    return FastJSON(list_json(found, viewer))


@router.patch(
    "/v1/users/{user_id}/lists/{list_id}",
    response_model=ListBody,
    responses={**WRITE_ERRORS, **NOT_FOUND},
    tags=["lists"],
    summary="Rename or describe a list, make it private or public, exclusive or not",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def update_list(
    user_id: UserId, list_id: ListId, body: ListPatchIn, request: Request
) -> FastJSON:
    changed = await services_of(request).lists.update(
        user_id,
        list_id,
        name=body.name,
        description=body.description,
        private=body.private,
        exclusive=body.exclusive,
    )
    return FastJSON(list_json(changed, viewer_of(request)))


@router.delete(
    "/v1/users/{user_id}/lists/{list_id}",
    response_model=ListDeletedBody,
    responses=ERRORS,
    tags=["lists"],
    summary="Delete a list and its memberships (idempotent)",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def delete_list(user_id: UserId, list_id: ListId, request: Request) -> ListDeletedBody:
    return ListDeletedBody(deleted=await services_of(request).lists.delete(user_id, list_id))


@router.get(
    "/v1/users/{user_id}/lists/{list_id}/members",
    response_model=PageBody,
    responses={**ERRORS, **NOT_FOUND},
    tags=["lists"],
    summary="A list's active members, newest first",
    **guarded(Scope.READ, cost=Cost.GRAPH),
)
async def list_members(
    user_id: UserId,
    list_id: ListId,
    request: Request,
    limit: Limit = None,
    cursor: Cursor = None,
) -> FastJSON:
    page = await services_of(request).lists.members(
        user_id, list_id, viewer_of(request), limit, cursor
    )
    return page_body(page)


@router.get(
    "/v1/users/{user_id}/lists/{list_id}/timeline",
    response_model=TimelineBody,
    responses={
        **ERRORS,
        **NOT_FOUND,
        409: {"model": ErrorBody, "description": "a moderation list (list_purpose)"},
    },
    tags=["lists"],
    summary="The posts of a curate list's members, newest first, as the viewer may read them",
    **guarded(Scope.READ, cost=Cost.GRAPH),
)
async def list_timeline(
    user_id: UserId,
    list_id: ListId,
    request: Request,
    limit: Limit = None,
    cursor: Cursor = None,
) -> FastJSON:
    page = await services_of(request).lists.timeline(
        user_id, list_id, viewer_of(request), limit, cursor
    )
    return timeline_body(page)


@router.post(
    "/v1/users/{user_id}/lists/{list_id}/members",
    response_model=MembersChangeBody,
    responses={**WRITE_ERRORS, **NOT_FOUND},
    tags=["lists"],
    summary="Add and remove members in one change, all or nothing",
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def change_list_members(
    user_id: UserId, list_id: ListId, body: MembersIn, request: Request
) -> FastJSON:
    change = await services_of(request).lists.change_members(
        user_id, list_id, body.add, body.remove
    )
    refused = [{"user_id": u, "reason": r} for u, r in change.refused.items()]
    return FastJSON(
        {
            "added": change.added,
            "removed": change.removed,
            "refused": refused,
            "members": change.members,
        }
    )
