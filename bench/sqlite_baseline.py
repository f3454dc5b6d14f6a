"""The relational baseline: the same follow edges in an embedded SQLite table.

One row per edge, keyed by (src, dst), with the secondary index a careful engineer adds for
"who follows X, newest first" (dst, since, src). Counting followers is then an index range
count: fast, but it grows with the number of followers, which is what the benchmark shows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS follows (
    src   TEXT    NOT NULL,
    dst   TEXT    NOT NULL,
    since INTEGER NOT NULL,
    PRIMARY KEY (src, dst)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS follows_by_dst ON follows (dst, since, src);
CREATE INDEX IF NOT EXISTS follows_by_src ON follows (src, since, dst);
"""


class SqliteFollows:
    def __init__(self, path: Path | str) -> None:
        self.db = sqlite3.connect(str(path), check_same_thread=False)
        self.db.executescript(SCHEMA)

    def load(self, edges: Iterable[tuple[str, str, int]], batch: int = 100_000) -> int:
        """Insert edges (src, dst, since in microseconds); duplicates are ignored."""
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = OFF")
        rows: list[tuple[str, str, int]] = []
        for row in edges:
            rows.append(row)
            if len(rows) >= batch:
                self.db.executemany("INSERT OR IGNORE INTO follows VALUES (?, ?, ?)", rows)
                rows.clear()
        self.db.executemany("INSERT OR IGNORE INTO follows VALUES (?, ?, ?)", rows)
        self.db.commit()
        self.db.execute("ANALYZE")
        return self.edge_count()

    def edge_count(self) -> int:
        return self.db.execute("SELECT count(*) FROM follows").fetchone()[0]

    def follower_count(self, user_id: str) -> int:
        return self.db.execute("SELECT count(*) FROM follows WHERE dst = ?", (user_id,)).fetchone()[
            0
        ]

    def followers_page(self, user_id: str, limit: int) -> list[tuple[str, int]]:
        """Newest first, ties by id descending, as the service orders them."""
        query = "SELECT src, since FROM follows WHERE dst = ? ORDER BY since DESC, src DESC LIMIT ?"
        return self.db.execute(query, (user_id, limit)).fetchall()

    def close(self) -> None:
        self.db.close()
