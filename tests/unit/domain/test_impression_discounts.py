"""The impressions' re-rank: a suggestion shown past its free shows sinks, and the re-sorted
list still keeps followers not followed back to their share of the first places."""

from __future__ import annotations

from graphsvc.domain.impressions import rerank
from graphsvc.domain.model import Suggestion


def item(user: str, score: float, follower: bool = False) -> Suggestion:
    sources = ["follows_you"] if follower else ["friends_of_friends"]
    return Suggestion(user, score, 0, [], sources)


def test_a_shown_suggestion_sinks_and_followers_keep_their_share() -> None:
    # followers f1..f3 score highest; s1 is shown often enough to sink below everyone
    items = [item("f1", 0.9, True), item("s1", 0.8), item("f2", 0.7, True)]
    items += [item("f3", 0.6, True), item("s2", 0.5), item("s3", 0.4)]
    found = [s.user_id for s in rerank(items, {"s1": 10}, free=3, decay=0.5)]
    assert found.index("s1") > found.index("s3")  # sunk
    # re-sorted by score, the three followers would take the first three places
    assert found[:4] == ["f1", "s2", "f2", "s3"]
    computed = rerank(items, {}, free=3, decay=0.5)
    assert rerank(computed, {}, free=3, decay=0.5) == computed  # nothing shown: as it was
