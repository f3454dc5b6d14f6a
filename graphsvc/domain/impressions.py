"""Impression discounting of "people you may know" (LinkedIn, KDD 2014): a suggestion shown
again and again without being acted on sinks, so the list does not stall on the same faces.

Policy: the first ``free`` shows of a target cost nothing (a user needs a few looks before
acting, and one page view is not a refusal); each show beyond them multiplies the target's
score by ``decay``, i.e. ``score * decay ** max(0, shows - free)``. A multiplier rather than
a subtraction keeps the order among untouched targets and never makes a score negative, and
ties keep the order the ranking gave them. No I/O here: the counts come from the caller.

What is counted (so that what one key can make Redis hold stays bounded): a show only of a
target that was served to the user as a suggestion in the last SUGGEST_SERVED_SECONDS (the
newest SERVED_KEPT served are remembered); a show of any other id is ignored (counted by
``graphsvc_impressions_ignored_total``), not refused, since a client reports what it displayed
and may report late. Per user, the shows of at most SUGGEST_IMPRESSIONS_MAX targets are kept:
when a served target would pass it, the counts of targets no longer served are forgotten first
(they are not on screen, so their discount does not matter until they are served again), and
if that frees no room, the show is ignored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from graphsvc.domain.model import Suggestion
from graphsvc.domain.ranker.scoring import spread

SERVED_KEPT = 200  # served suggestions remembered per user: four full lists of 50


def discount_factor(shows: int, free: int, decay: float) -> float:
    """What a target's score is multiplied by after ``shows`` shows (1.0 up to ``free``)."""
    return decay ** max(0, shows - free)


def rerank(
    items: Sequence[Suggestion], shows: Mapping[str, int], free: int, decay: float
) -> list[Suggestion]:
    """The suggestions with discounted scores, best first; ties (and targets never shown,
    whose scores do not move) keep their given order, and followers keep to their share of
    the first places (``ranking.spread``). The inputs are left unchanged."""
    scored: list[tuple[float, int, Suggestion]] = []
    for position, item in enumerate(items):
        factor = discount_factor(shows.get(item.user_id, 0), free, decay)
        if factor != 1.0:
            item = replace(item, score=item.score * factor)
        scored.append((-item.score, position, item))
    scored.sort(key=lambda entry: (entry[0], entry[1]))
    return spread([item for _, _, item in scored], lambda item: "follows_you" in item.sources)
