"""`graphsvc export`: the whole graph as Parquet files, for training, audits and analysis in a
notebook (``graphsvc.client.load_snapshot``), written as it streams from Neo4j: a batch of rows
at a time, so the exporting process holds a batch, not the graph.

The cut. The follows are exact at one moment, the cut (CHANGES_SETTLE_SECONDS before the
export starts: every follow stamped by then has committed), whatever commits during the
export: the follows made by the cut, and those made by then that ended after it, read back
from their tombstones. Blocks and mutes made after the cut are left out, but one removed
during the export is missing from it; statuses are as read. The manifest says so, with the
cut, the row counts and the schema version (``graphsvc/wire/snapshot.py``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from graphsvc.adapters.neo4j.exports import ExportStore
from graphsvc.domain.model import iso_utc
from graphsvc.version import __version__
from graphsvc.wire.snapshot import MANIFEST, SCHEMA_VERSION, TABLES

USERS_PER_BATCH = 5_000  # users whose rows are read, held and written at a time
_KINDS = {
    "string": pa.string(),
    "time": pa.timestamp("us", tz="UTC"),
    "time_or_null": pa.timestamp("us", tz="UTC"),
    "bool": pa.bool_(),
}
CUT_NOTE = (
    "follows: exactly those that stood at the cut; blocks and mutes: made by the cut and "
    "still standing when read; users: statuses as read"
)


@dataclass(frozen=True)
class ExportReport:
    directory: Path
    cut: int  # µs
    rows: dict[str, int]
    seconds: float


def arrow_schema(table: str) -> pa.Schema:
    return pa.schema([(name, _KINDS[kind]) for name, kind in TABLES[table]])


async def export_parquet(
    store: ExportStore,
    directory: Path,
    *,
    settle_seconds: float,
    progress: Callable[[str, int], None] | None = None,
) -> ExportReport:
    """Write every table and then the manifest (its presence says the export is whole);
    ``progress`` is told each batch's rows per table."""
    began = time.perf_counter()
    await asyncio.to_thread(_prepare, directory)
    cut = time.time_ns() // 1000 - round(settle_seconds * 1_000_000)
    schemas = {table: arrow_schema(table) for table in TABLES}
    rows = dict.fromkeys(TABLES, 0)
    with ExitStack() as files:
        writers = {
            table: files.enter_context(
                pq.ParquetWriter(directory / f"{table}.parquet", schema, compression="zstd")
            )
            for table, schema in schemas.items()
        }
        async for batch in store.batches(cut, USERS_PER_BATCH):
            # in a thread: the next batch is read and decoded meanwhile
            await asyncio.to_thread(_write_batch, writers, schemas, batch)
            for table, found in batch.items():
                rows[table] += len(found)
                if found and progress is not None:
                    progress(table, len(found))
        for table, writer in writers.items():
            if not rows[table]:
                writer.write_table(schemas[table].empty_table())
    manifest = json.dumps(_manifest(cut, rows), indent=1) + "\n"
    await asyncio.to_thread((directory / MANIFEST).write_text, manifest)
    return ExportReport(directory, cut, rows, time.perf_counter() - began)


def _prepare(directory: Path) -> None:
    """The directory, without a manifest: one is written only when every table is whole."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MANIFEST).unlink(missing_ok=True)


def _write_batch(
    writers: dict[str, pq.ParquetWriter],
    schemas: dict[str, pa.Schema],
    batch: dict[str, list[list[Any]]],
) -> None:
    for table, found in batch.items():
        if found:
            writers[table].write_batch(_record_batch(found, schemas[table]))


def _record_batch(found: list[list[Any]], schema: pa.Schema) -> pa.RecordBatch:
    columns = zip(*found, strict=True)
    arrays = [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)]
    return pa.record_batch(arrays, schema=schema)


def _manifest(cut: int, rows: dict[str, int]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "cut": iso_utc(cut),
        "cut_us": cut,
        "exported_at": iso_utc(time.time_ns() // 1000),
        "graphsvc": __version__,
        "consistency": CUT_NOTE,
        "tables": {
            table: {
                "file": f"{table}.parquet",
                "rows": rows[table],
                "columns": [{"name": name, "kind": kind} for name, kind in TABLES[table]],
            }
            for table in TABLES
        },
    }
