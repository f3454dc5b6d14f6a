"""A graph snapshot written by `graphsvc export --format parquet DIR`, read back for analysis:
pandas frames of every table, and the follow graph as networkx when asked (pyarrow, pandas
and networkx imported on first use: the client's extras).

For the whole graph, a snapshot; for one user's lists, the client's pages. A snapshot is read
only when its manifest is there (the exporter writes it last) and of a schema version this
client knows (``graphsvc/wire/snapshot.py``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphsvc.client.errors import BadRequest
from graphsvc.wire.snapshot import MANIFEST, SCHEMA_VERSION, TABLES

if TYPE_CHECKING:
    import networkx
    import pandas


@dataclass
class Snapshot:
    """The tables of one export, each a DataFrame with the columns the manifest lists
    (times as UTC timestamps); ``manifest`` says when the follows were cut and how many
    rows each table has."""

    manifest: dict[str, Any]
    follows: pandas.DataFrame
    blocks: pandas.DataFrame
    mutes: pandas.DataFrame
    users: pandas.DataFrame
    _graph: networkx.DiGraph | None = field(default=None, repr=False)

    def graph(self) -> networkx.DiGraph:
        """The follows as a ``networkx.DiGraph`` (follower -> followed, each edge with its
        ``since``), with every user as a node carrying its ``status``; built on first call."""
        if self._graph is None:
            import networkx

            graph = networkx.DiGraph()
            graph.add_nodes_from(
                (user, {"status": status})
                for user, status in zip(self.users["id"], self.users["status"], strict=True)
            )
            graph.add_edges_from(
                (src, dst, {"since": since})
                for src, dst, since in zip(
                    self.follows["src"], self.follows["dst"], self.follows["since"], strict=True
                )
            )
            graph.graph["cut"] = self.manifest["cut"]
            self._graph = graph
        return self._graph


def load_snapshot(directory: str | Path) -> Snapshot:
    """Read an export's tables; refuses a directory without a manifest (an export that did
    not finish) or of an unknown schema version."""
    import pyarrow.parquet as pq

    root = Path(directory)
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except FileNotFoundError:
        raise BadRequest(
            f"{root} holds no {MANIFEST}: not an export, or one that did not finish",
            code="invalid_argument",
        ) from None
    if manifest.get("schema_version") != SCHEMA_VERSION:
        raise BadRequest(
            f"{root} is a snapshot of schema version {manifest.get('schema_version')}; this "
            f"client reads version {SCHEMA_VERSION}",
            code="invalid_argument",
        )
    frames = {
        table: pq.read_table(root / manifest["tables"][table]["file"]).to_pandas()
        for table in TABLES
    }
    return Snapshot(manifest, **frames)
