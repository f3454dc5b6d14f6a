"""A page of a timeline, home or list: rounds of the timeline's pushed posts merged on read
with the posts of the authors it pulls, newest first, until the page is full.

Pages are keyset cursors on (time, author|post): posts that arrive while a reader pages are
newer than any position it holds, so pages never skip or repeat a post. When the filters (who
may show, mutes, deletions, suspensions) empty a round, the next goes on below what it covered,
ROUNDS at most, so a page comes back full unless the timeline ends.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from graphsvc.adapters.redis.statuses import StatusesMissing
from graphsvc.adapters.redis.timelines import AuthorPosts, TimelineRead, has_more
from graphsvc.domain.cursor import CursorCodec
from graphsvc.domain.timeline import Post, TimelinePage, newest_first
from graphsvc.services.mirror_sync import MirrorSync
from graphsvc.services.paging import Pager
from graphsvc.wire.ids import is_user_id

ROUNDS = 6  # merge rounds per page when filters keep emptying it (then a short page)
SCAN_MAX = 2_000  # timeline entries one read may skip over (posts of unfollowed authors)

# One round: the visible posts after a position, at most ``want``, and its horizon.
Round = Callable[[Post | None, int], Awaitable[tuple[list[Post], Post | None]]]


async def paged(
    codec: CursorCodec,
    pager: Pager,
    scope: str,
    limit: int | None,
    cursor: str | None,
    one_round: Round,
) -> TimelinePage:
    """A page of ``limit`` posts after the cursor, made of rounds."""
    limit = pager.limit(limit)
    position = Post(*codec.decode_at(scope, cursor, _is_member)) if cursor else None
    items: list[Post] = []
    horizon: Post | None = None
    for _ in range(ROUNDS):
        posts, horizon = await one_round(position, limit + 1 - len(items))
        items += posts
        if len(items) > limit or horizon is None:
            break
        position = horizon  # filters emptied this round: go on below what it covered
    more = len(items) > limit or horizon is not None
    items = items[:limit]
    last = items[-1] if items else position
    if not more or last is None:
        return TimelinePage(items, None)
    return TimelinePage(items, codec.encode_at(scope, last.at, last.member))


async def merged(
    author_posts: AuthorPosts,
    sync: MirrorSync,
    read: TimelineRead,
    posts: Sequence[Post],
    pulled: Sequence[str],
    position: Post | None,
    want: int,
) -> tuple[list[Post], Post | None]:
    """The round's pushed ``posts`` (those of ``read`` the caller kept) merged with the
    ``pulled`` authors' pages, less the posts of inactive authors and deleted posts; and the
    horizon: the oldest post the round covered completely (None when every source ended)."""
    try:
        pages, inactive, deleted = await author_posts.pages_and_hidden(
            pulled, position, want, posts
        )
    except StatusesMissing:
        await sync.load_statuses()
        pages, inactive, deleted = await author_posts.pages_and_hidden(
            pulled, position, want, posts
        )
    # Where each source stopped short of its end, the merge is complete only above it.
    ends = [page[-1] for page in pages if has_more(page)]
    if not read.exhausted and read.posts:
        ends.append(read.posts[-1])
    horizon = max(ends) if ends else None
    visible = [
        p
        for p in newest_first([list(posts), *pages])
        if (horizon is None or p >= horizon)
        and p.author not in inactive
        and p.member not in deleted
    ]
    return visible, horizon


def _is_member(key: str) -> bool:
    """A timeline position's key: the post's ``author|post_id``."""
    author, _, post_id = key.partition("|")
    return is_user_id(author) and is_user_id(post_id)
