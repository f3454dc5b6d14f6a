"""An account similar to a seed: what a user is shown right after following the seed.

Similar means co-followed: the seed's followers also follow it. The reasons name the seed and
how many of the followers read share the account; the source is ``similar_to``.
"""

from __future__ import annotations

from dataclasses import dataclass

SIMILAR_SOURCE = "similar_to"


@dataclass(frozen=True, slots=True)
class SimilarAccount:
    user_id: str
    score: float
    seed: str
    shared_followers: int  # of the seed's followers read, those who follow this account

    def as_json(self) -> dict[str, object]:
        return {
            "user_id": self.user_id,
            "score": round(self.score, 6),
            "reasons": {"seed": self.seed, "shared_followers": self.shared_followers},
            "sources": [SIMILAR_SOURCE],
        }
