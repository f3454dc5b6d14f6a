"""Who is told why a follow ended: the user who ended it; the other user only that the
follower left; nobody else anything."""

from __future__ import annotations

import pytest

from graphsvc.domain.changes import Change, shown_cause
from graphsvc.domain.model import Side
from graphsvc.domain.privacy import ANONYMOUS, EVERYONE, Viewer

# ana followed bo; the end is seen in bo's followers and in ana's following
ENDS = {
    "unfollow": Change(1, "ana", "unfollow", "unfollow", by="ana"),
    "removed": Change(1, "ana", "unfollow", "removed", by="bo"),
    "block by the follower": Change(1, "ana", "unfollow", "block", by="ana"),
    "block by the followed": Change(1, "ana", "unfollow", "block", by="bo"),
}


def _told(end: str, viewer: Viewer) -> tuple[str | None, str | None]:
    """What the viewer is told in bo's followers and in ana's following."""
    change = ENDS[end]
    mirrored = Change(change.at, "bo", change.op, change.cause, change.by)
    return (
        shown_cause(change, "bo", Side.FOLLOWERS, viewer),
        shown_cause(mirrored, "ana", Side.FOLLOWING, viewer),
    )


@pytest.mark.parametrize(
    ("end", "ana", "bo"),
    [
        ("unfollow", "unfollow", "unfollow"),
        ("removed", None, "removed"),
        ("block by the follower", "block", "unfollow"),
        ("block by the followed", None, "block"),
    ],
)
def test_the_one_who_ended_it_is_told_the_other_only_that_the_follower_left(
    end: str, ana: str | None, bo: str | None
) -> None:
    assert _told(end, Viewer("ana")) == (ana, ana)
    assert _told(end, Viewer("bo")) == (bo, bo)


@pytest.mark.parametrize("end", sorted(ENDS))
def test_others_are_told_nothing_and_full_views_everything(end: str) -> None:
    assert _told(end, Viewer("cy")) == (None, None)
    assert _told(end, ANONYMOUS) == (None, None)
    assert _told(end, EVERYONE) == (ENDS[end].cause, ENDS[end].cause)


def test_a_follow_has_no_cause() -> None:
    assert shown_cause(Change(1, "ana", "follow"), "bo", Side.FOLLOWERS, EVERYONE) is None
