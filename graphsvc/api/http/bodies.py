"""The response bodies several routers share, shaped once: pages, follows, counts."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi.responses import Response

from graphsvc.domain.follow_options import FollowOptions
from graphsvc.domain.model import (
    EdgeChange,
    Familiar,
    FollowResult,
    IdPage,
    Page,
    ShownCounts,
    iso_utc,
)
from graphsvc.domain.timeline import TimelinePage
from graphsvc.services.follow_pages import FollowPages


class FastJSON(Response):
    """JSON by orjson, for bodies the route already shaped (no second validation pass)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def page_body(page: Page) -> FastJSON:
    items = [{"user_id": e.user_id, "since": iso_utc(e.since)} for e in page.items]
    return FastJSON({"items": items, "next_cursor": page.next_cursor})


def timeline_body(page: TimelinePage) -> FastJSON:
    items = [{"post_id": p.post_id, "author": p.author, "at": iso_utc(p.at)} for p in page.items]
    return FastJSON({"items": items, "next_cursor": page.next_cursor})


def follow_body(result: FollowResult) -> FastJSON:
    """A follow's answer: 200 for a follow, 202 for a request waiting for approval."""
    body = {
        "following": result.following,
        "requested": result.requested,
        "created": result.created,
        **options_body(result.options),
        "options_changed": result.retuned,
    }
    return FastJSON(body, status_code=202 if result.requested else 200)


def options_body(options: FollowOptions | None) -> dict[str, Any]:
    """A follow's options under Mastodon's names; null where there is no follow nor request."""
    if options is None:
        return {"notifying": None, "showing_reblogs": None, "languages": None}
    return {
        "notifying": options.notify,
        "showing_reblogs": options.reblogs,
        "languages": list(options.languages) or None,
    }


def unfollow_body(change: EdgeChange | None) -> FastJSON:
    removed = change is not None and change.changed
    withdrawn = change is not None and change.withdrawn
    return FastJSON({"following": False, "removed": removed, "withdrawn": withdrawn})


def counts_body(pages: FollowPages, shown: ShownCounts) -> FastJSON:
    """The counts as the viewer may see them (hidden: every count null)."""
    counts = shown.counts
    if counts is None:
        return FastJSON(
            {
                "followers": None,
                "following": None,
                "followers_active": None,
                "following_active": None,
                "friends": None,
                "celebrity": None,
                "pending_requests": shown.pending_requests,
                "counts_hidden": True,
            }
        )
    return FastJSON(
        {
            "followers": counts.followers,
            "following": counts.following,
            "followers_active": counts.followers_active,
            "following_active": counts.following_active,
            "friends": counts.friends,
            "celebrity": pages.is_celebrity(counts),
            "pending_requests": shown.pending_requests,
            "counts_hidden": False,
        }
    )


def familiar_body(familiar: Familiar) -> dict[str, Any]:
    """One target's familiar followers (a FamiliarBody): no count where they are hidden."""
    return {
        "total": familiar.total,
        "items": familiar.user_ids,
        "hidden": familiar.total is None,
    }


def id_page_body(page: IdPage) -> FastJSON:
    return FastJSON(
        {
            "total": page.total,
            "items": page.user_ids,
            "next_cursor": page.next_cursor,
            "total_is_lower_bound": page.total_is_lower_bound,
        }
    )
