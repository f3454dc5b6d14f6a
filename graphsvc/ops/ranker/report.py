"""``graphsvc ranker report``: how each ranker version does online (answers and items served,
shows, follows and dismissals counted from recommendation ids, follows per item shown and per
item served) beside what it measured offline when trained (precision@10 on its validation
users), as a table or as JSON for notebooks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphsvc.bootstrap import open_services
from graphsvc.domain.ranker.online_figures import VersionFigures
from graphsvc.settings import Settings

HEADER = (
    "version",
    "answers",
    "items",
    "shown",
    "follows",
    "dismissals",
    "per_shown",
    "per_served",
    "offline_p@10",
)


async def online_figures(settings: Settings) -> tuple[str, list[VersionFigures]]:
    """The model's name and every counted version's figures (Redis and Neo4j, read once)."""
    async with open_services(settings) as services:
        feedback = services.feedback
        return feedback.model, await feedback.report()


def as_json(model: str, figures: Sequence[VersionFigures]) -> dict[str, Any]:
    """What the internal route ``/v1/internal/suggestions/report`` answers, too."""
    return {"model": model, "versions": [f.as_json() for f in figures]}


def table(model: str, figures: Sequence[VersionFigures]) -> list[str]:
    if not figures:
        return [f"ranker {model!r}: nothing counted yet (no answer of suggestions served)"]
    rows = [HEADER] + [_row(f) for f in figures]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    lines = [
        f"ranker {model!r}: online figures from recommendation ids; per_shown and per_served "
        "are follows per item shown and per item served; offline_p@10 is the stored model's "
        "precision@10 on its validation users"
    ]
    lines += [
        "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    return lines


def _row(f: VersionFigures) -> tuple[str, ...]:
    return (
        str(f.version),
        str(f.answers),
        str(f.items),
        str(f.shown),
        str(f.follows),
        str(f.dismissals),
        _share(f.precision_shown),
        _share(f.precision_served),
        _share(f.offline_precision_at_10),
    )


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"
