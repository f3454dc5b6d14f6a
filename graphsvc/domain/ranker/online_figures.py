"""Online figures of people you may know, per ranker version: what was served, shown, followed
and dismissed, beside the precision the model was measured at offline.

Online precision is follows attributed per item shown (what the user saw and acted on), and
per item served (what the service sent, shown or not: a client that reports no shows still
gets a figure). Both count only requests that carried a recommendation id issued within
SUGGEST_RECOMMENDATION_TTL_SECONDS, so two versions served at once (an A/B split) are compared on
the same rules. The offline figure is the stored model's precision@10 on its validation users
(`graphsvc ranker train`); the built-in default (version 0) has none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# What is counted per version, in the order the report shows them.
COUNTERS: tuple[str, ...] = ("answers", "items", "shown", "follows", "dismissals")


@dataclass(frozen=True, slots=True)
class VersionFigures:
    version: int
    answers: int = 0  # answers of suggestions served
    items: int = 0  # suggestions in them
    shown: int = 0  # shows recorded as impressions
    follows: int = 0  # follows attributed (each once)
    dismissals: int = 0
    offline_precision_at_10: float | None = None

    @property
    def precision_shown(self) -> float | None:
        """Follows per item shown (None before any show was counted)."""
        return self.follows / self.shown if self.shown else None

    @property
    def precision_served(self) -> float | None:
        """Follows per item served (None before any was served)."""
        return self.follows / self.items if self.items else None

    def as_json(self) -> dict[str, int | float | None]:
        return {
            "version": self.version,
            **{name: getattr(self, name) for name in COUNTERS},
            "precision_shown": self.precision_shown,
            "precision_served": self.precision_served,
            "offline_precision_at_10": self.offline_precision_at_10,
        }


def figures(
    counts: Mapping[int, Mapping[str, int]], offline: Mapping[int, float]
) -> list[VersionFigures]:
    """One row per version that was counted or measured, by version."""
    return [
        VersionFigures(
            version,
            **{name: int(counts.get(version, {}).get(name, 0)) for name in COUNTERS},
            offline_precision_at_10=offline.get(version),
        )
        for version in sorted(set(counts) | set(offline))
    ]
