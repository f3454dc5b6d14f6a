"""`make bench`'s rows for imports and moves, measured on the loaded graph in the same run as
the others, in this process as the worker's jobs run them.

- Import: 20,000 rows of follows (Mastodon's CSV, every account a user of the graph) submitted
  for a fresh user, until its job is done; MAX_FOLLOWING is raised for this row (at its default
  an import of 20,000 follows refuses all past 5,000: the row measures the machinery, not the
  limit). FOLLOWS_PER_DAY does not apply to an import's follows.
- Move: an account with 30,000 followers (users of the graph, following it for the row) moved
  to a new one, until its job is done: every follower follows the new account with its options
  and leaves the old one.
"""

from __future__ import annotations

import asyncio
import collections
import time
from pathlib import Path
from typing import Any

from bench.timelines import _follower_counts
from graphsvc.bootstrap import open_services
from graphsvc.builders.moves import build_move_jobs
from graphsvc.concurrency.jobs import Progress
from graphsvc.domain.follow_options import OptionEdits
from graphsvc.domain.portable import Kind, Mode
from graphsvc.settings import Settings

IMPORT_ROWS = 20_000
MOVE_FOLLOWERS = 30_000


def _users(followers: collections.Counter[str], n: int) -> list[str]:
    """``n`` users of the graph, the most followed first."""
    return [user for user, _ in followers.most_common(n)]


async def measure(settings: Settings, graph: Path) -> dict[str, Any]:
    followers = _follower_counts(graph)
    run = int(time.time())
    figures: dict[str, Any] = {}
    limits = {"max_following": 2 * IMPORT_ROWS}
    async with open_services(settings.with_values(**limits)) as services:
        accounts = _users(followers, IMPORT_ROWS)
        header = "Account address,Show boosts,Notify on new posts,Languages\n"
        body = header + "".join(f"{a},true,false,\n" for a in accounts)
        importer = f"bench.import.{run}"
        started = time.perf_counter()
        record, _ = await services.imports.submit(
            importer, Kind.FOLLOWING, Mode.MERGE, body.encode(), "text/csv"
        )
        await services.core.jobs.drain()
        figures["import_s"] = time.perf_counter() - started
        done = await services.imports.status(importer, record.id)
        figures["import_rows"] = done.rows
        figures["import_applied"] = done.applied
        figures["import_refused"] = len(done.refused)

        old, new = f"bench.move.{run}.old", f"bench.move.{run}.new"
        fans = _users(followers, MOVE_FOLLOWERS)
        edits = OptionEdits(notify=False)
        for start in range(0, len(fans), 500):
            chunk = fans[start : start + 500]
            await asyncio.gather(*(services.relations.follow(f, old, edits=edits) for f in chunk))
        await services.moves.alias(new, old)
        moves = services.core.neo4j.moves
        started = time.perf_counter()
        await moves.begin(old, new, 0)  # the move's mark, as POST .../move makes it
        await build_move_jobs(services.core).run(old, Progress())  # as a worker runs it
        figures["move_s"] = time.perf_counter() - started
        state = await moves.state(old)
        figures["move_followers"] = len(fans)
        figures["moved"] = state.moved if state else 0
    return figures


def rows(f: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "row": f"import, {f['import_rows']:,} rows of follows (Mastodon's CSV) for a fresh "
            f"user, until its job is done: {f['import_applied']:,} applied, "
            f"{f['import_refused']:,} refused (MAX_FOLLOWING raised for the row)",
            "measured": f"{f['import_s']:.1f} s ({f['import_rows'] / f['import_s']:,.0f} rows/s)",
            "target": "import of 20,000 rows <= 30 s",
            "pass": f["import_s"] <= 30 and f["import_applied"] == f["import_rows"],
        },
        {
            "row": f"move of an account with {f['move_followers']:,} followers: each follows "
            f"the new account with its options and leaves the old one; {f['moved']:,} moved",
            "measured": f"{f['move_s']:.1f} s ({f['moved'] / f['move_s']:,.0f} followers/s)",
            "target": "move of 30,000 followers <= 60 s",
            "pass": f["move_s"] <= 60 and f["moved"] == f["move_followers"],
        },
    ]
