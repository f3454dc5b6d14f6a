"""Routes of privacy: a user's settings (who sees its followers, following and counts,
whether it may be suggested, whether new follows wait for its approval)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from graphsvc.api.http.access import guarded
from graphsvc.api.http.context import services_of
from graphsvc.api.http.contract import operation_id
from graphsvc.api.http.errors import ERRORS
from graphsvc.api.http.params import UserId
from graphsvc.domain.access import Scope
from graphsvc.domain.privacy import CountsVisibility, Privacy, PrivacyEdit, Visibility
from graphsvc.wire.schemas import ErrorBody, PrivacyBody, PrivacyRequest

router = APIRouter(generate_unique_id_function=operation_id)
ERASING = {409: {"model": ErrorBody, "description": "user_erasing: the user is being erased"}}


def _body(privacy: Privacy) -> PrivacyBody:
    return PrivacyBody(
        followers_visibility=privacy.followers_visibility.value,
        following_visibility=privacy.following_visibility.value,
        counts_visibility=privacy.counts_visibility.value,
        discoverable=privacy.discoverable,
        locked=privacy.locked,
    )


@router.get(
    "/v1/users/{user_id}/privacy",
    response_model=PrivacyBody,
    responses=ERRORS,
    tags=["privacy"],
    summary="A user's privacy settings (the defaults for a user who never set any)",
    **guarded(Scope.READ),
)
async def get_privacy(user_id: UserId, request: Request) -> PrivacyBody:
    return _body(await services_of(request).privacy.settings(user_id))


@router.put(
    "/v1/users/{user_id}/privacy",
    response_model=PrivacyBody,
    tags=["privacy"],
    summary="Change some privacy settings (the others keep their values); the settings now",
    responses=ERRORS | ERASING,
    **guarded(Scope.WRITE, acts_as_user=True),
)
async def set_privacy(user_id: UserId, body: PrivacyRequest, request: Request) -> PrivacyBody:
    edit = PrivacyEdit(
        followers_visibility=_visibility(body.followers_visibility),
        following_visibility=_visibility(body.following_visibility),
        counts_visibility=(
            CountsVisibility(body.counts_visibility) if body.counts_visibility else None
        ),
        discoverable=body.discoverable,
        locked=body.locked,
    )
    _, now = await services_of(request).privacy.update(user_id, edit)
    return _body(now)


def _visibility(value: str | None) -> Visibility | None:
    return Visibility(value) if value is not None else None
