"""Accounts similar to a seed: the suggestions a user gets right after following someone.

Co-followed accounts (what the seed's newest followers also follow), from one bounded query
(``cold_start/similar``): SUGGEST_SIMILAR_FOLLOWERS of the seed's followers, SUGGEST_SIMILAR_FOLLOWS
follows of each. Policy: the same exclusions and privacy rules as the user's own suggestions
(the seed's followers are read only when the user may see that list, a follower's follows only
when the user may see them), answered from Neo4j as it is now, so no cached answer outlives a
follow, a block or a change of settings. An account that hides its counts is never similar to
anyone: the score is over the root of its follower count, so its score or place would tell it. The seed must be a user of the graph (404
``unknown_user`` naming it); a seed that is suspended or being erased suggests nothing.
"""

from __future__ import annotations

from graphsvc.adapters.neo4j.cold_start import ColdStartStore
from graphsvc.domain.errors import InvalidLimit, UnknownUser
from graphsvc.domain.ids import validate_user_id
from graphsvc.domain.similar import SimilarAccount
from graphsvc.settings import ColdStartSettings

SIMILAR_MAX = 50  # accounts one call may ask for


class SimilarAccounts:
    def __init__(self, store: ColdStartStore, settings: ColdStartSettings) -> None:
        self._store = store
        self._followers = settings.suggest_similar_followers
        self._follows = settings.suggest_similar_follows

    async def similar(self, user_id: str, seed_id: str, limit: int) -> list[SimilarAccount]:
        """The accounts most similar to the seed that may be suggested to the user, best
        first."""
        validate_user_id(user_id, "user_id")
        validate_user_id(seed_id, "seed_id")
        if not 1 <= limit <= SIMILAR_MAX:
            raise InvalidLimit(f"limit must be between 1 and {SIMILAR_MAX}, got {limit}")
        found = await self._store.similar(
            user_id, seed_id, followers=self._followers, follows=self._follows, limit=limit
        )
        if found is None:
            raise UnknownUser(f"no user {seed_id!r} to find accounts similar to")
        return found
