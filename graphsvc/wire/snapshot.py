"""The layout of a graph snapshot on disk (`graphsvc export --format parquet DIR`), shared by
the exporter and the client's ``load_snapshot``: one Parquet file per table and a manifest.

Times are microseconds since the epoch, UTC (Parquet ``timestamp[us, UTC]``). A reader checks
``schema_version``: a change to a table's columns is a new version.
"""

from __future__ import annotations

SCHEMA_VERSION = 1
MANIFEST = "manifest.json"

# Each table's columns, in order: name and kind ("string", "time", "time_or_null", "bool").
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    # the follow edges that stood at the cut
    "follows": (("src", "string"), ("dst", "string"), ("since", "time")),
    # blocks made by the cut that still stood when read
    "blocks": (("src", "string"), ("dst", "string"), ("since", "time")),
    # mutes in effect at the cut that still stood when read
    "mutes": (
        ("src", "string"),
        ("dst", "string"),
        ("since", "time"),
        ("until", "time_or_null"),
        ("notifications", "bool"),
    ),
    # every user, with its moderation status when read: active, suspended or spam
    "users": (("id", "string"), ("status", "string")),
}
