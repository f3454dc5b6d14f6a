"""The relational baseline: the same follow edges in PostgreSQL, a server over loopback like ours.

PostgreSQL is Debian's package (installed with apt when missing and running as root), run as a
server process of its own: ``initdb`` and ``pg_ctl`` from ``/usr/lib/postgresql/<ver>/bin``,
listening on 127.0.0.1 only, on its own port, trusting loopback (a benchmark's throwaway
server). PostgreSQL refuses to run as root, so under root it runs as the ``postgres`` user
(``nobody`` when there is none). That user cannot be assumed to reach the checkout (root's home
and ``mktemp -d`` folders are mode 0700), so under root the data and log live in a folder of
that user's own under ``/var/tmp``, named after the given folder; otherwise in the given folder.

The schema is what a careful engineer would build for these questions: one row per edge keyed by
(follower, followee), an index for "who follows X, newest first" and one for "whom X follows",
and a ``counts`` table of each user's totals kept by every follow. ``count(*)`` over the index is
the honest baseline (it grows with the followers); the counts table is the relational answer to
the same problem the mirror solves.
"""

from __future__ import annotations

import glob
import hashlib
import os
import pwd
import shutil
import socket
import struct
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
from tqdm import tqdm

from graphsvc.ops.data.edge_files import read_edge_file
from graphsvc.ops.servers import processes
from graphsvc.ops.servers.local_servers import ServerError, apt_install

Say = Callable[[str], None]

SUPERUSER = "bench"
NEWEST = (2**63 - 1, "")  # a keyset position before every edge: the first page

# -- the queries (parameters are $n; each one round trip) -------------------------------------

# The follower count as the table answers it: an index-only range count on (followee, ...).
FOLLOWER_COUNT = "SELECT count(*) FROM follows WHERE followee = $1"
# The totals kept by every follow: one primary-key lookup.
COUNTS_ROW = "SELECT followers, following FROM counts WHERE user_id = $1"
# A followers page, newest first, ties by follower descending (the service's order); keyset
# after ($2 since, $3 follower), so every page is an index range scan whatever its depth.
FOLLOWERS_PAGE = """
SELECT follower, since FROM follows
WHERE followee = $1 AND (since, follower) < ($2, $3)
ORDER BY since DESC, follower DESC
LIMIT $4
"""
FOLLOWING_PAGE = """
SELECT followee, since FROM follows
WHERE follower = $1 AND (since, followee) < ($2, $3)
ORDER BY since DESC, followee DESC
LIMIT $4
"""
# A follow in one statement, so one transaction and one round trip: the edge if new, and only
# then both users' counters (rows locked in id order, so concurrent follows cannot deadlock).
FOLLOW = """
WITH added AS (
    INSERT INTO follows (follower, followee, since) VALUES ($1, $2, $3)
    ON CONFLICT DO NOTHING
    RETURNING follower, followee
), deltas AS (
    SELECT followee AS user_id, 1 AS followers, 0 AS following FROM added
    UNION ALL
    SELECT follower, 0, 1 FROM added
)
INSERT INTO counts AS c (user_id, followers, following)
SELECT user_id, followers, following FROM deltas ORDER BY user_id
ON CONFLICT (user_id) DO UPDATE
SET followers = c.followers + excluded.followers, following = c.following + excluded.following
RETURNING 1
"""

_SCHEMA = """
DROP TABLE IF EXISTS follows, counts, loaded;
CREATE TABLE follows (follower text NOT NULL, followee text NOT NULL, since bigint NOT NULL);
CREATE TABLE loaded (graph text PRIMARY KEY, edges bigint NOT NULL, seconds float8 NOT NULL);
"""
# After the COPY: building indexes once over sorted input beats maintaining them row by row.
_INDEXES = """
SET maintenance_work_mem = '512MB';
ALTER TABLE follows ADD PRIMARY KEY (follower, followee);
CREATE INDEX follows_by_followee ON follows (followee, since, follower);
CREATE INDEX follows_by_follower ON follows (follower, since, followee);
CREATE TABLE counts AS
    SELECT user_id, sum(followers)::bigint AS followers, sum(following)::bigint AS following
    FROM (SELECT followee AS user_id, 1 AS followers, 0 AS following FROM follows
          UNION ALL SELECT follower, 0, 1 FROM follows) AS sides
    GROUP BY user_id;
ALTER TABLE counts ADD PRIMARY KEY (user_id);
"""


class PostgresError(RuntimeError):
    """PostgreSQL cannot be found, installed or started; the message says what to do."""


@dataclass(frozen=True)
class PostgresSettings:
    """Where the bench's PostgreSQL lives. From BENCH_POSTGRES_PORT and
    BENCH_POSTGRES_SHARED_BUFFERS: Neo4j gets a 4 GB page cache, so PostgreSQL gets more than
    its default of 128 MB: enough to hold the S graph's table and indexes (beyond, the
    operating system's cache holds the rest, as PostgreSQL expects)."""

    home: Path
    port: int = 25432
    database: str = "graphsvc_bench"
    shared_buffers: str = "1GB"

    @classmethod
    def from_env(cls, home: Path) -> PostgresSettings:
        return cls(
            home=home,
            port=int(os.environ.get("BENCH_POSTGRES_PORT", "25432")),
            shared_buffers=os.environ.get("BENCH_POSTGRES_SHARED_BUFFERS", "1GB"),
        )

    def dsn(self, database: str | None = None) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database or self.database}"


class LocalPostgres:
    """Idempotent like the project's own servers: ``up`` leaves a running one alone, ``down``
    ignores a stopped one."""

    def __init__(self, settings: PostgresSettings) -> None:
        self.settings = settings
        self.home = _reachable_home(settings.home)
        self.data = self.home / "data"
        self.log = self.home / "postgres.log"

    def _bin(self, say: Say) -> Path:
        found = _newest_bin()
        if found:
            return found
        if os.geteuid() != 0:
            raise PostgresError("PostgreSQL is missing: run `sudo apt-get install -y postgresql`")
        say("postgres: installing Debian's postgresql with apt")
        try:
            apt_install("postgresql")
        except ServerError as exc:
            raise PostgresError(str(exc)) from None
        found = _newest_bin()
        if not found:
            raise PostgresError("apt installed postgresql but /usr/lib/postgresql/*/bin is empty")
        return found

    def _as_owner(self, cmd: list[str]) -> list[str]:
        """PostgreSQL will not run as root: under root, run it as an unprivileged user."""
        if os.geteuid() != 0:
            return cmd
        return ["runuser", "-u", _owner(), "--", *cmd]

    def _run(self, cmd: list[str], what: str) -> None:
        # in a folder the server's user can enter: its tools fail where they cannot see the cwd
        result = subprocess.run(
            self._as_owner(cmd),
            capture_output=True,
            text=True,
            cwd=self.home if self.home.exists() else "/",
        )
        if result.returncode != 0:
            raise PostgresError(
                f"{what} failed: {result.stdout}{result.stderr}\n{processes.tail([self.log], 20)}"
            )

    def answers(self) -> bool:
        """A PostgreSQL server answers on the port (it replies to an SSL request)."""
        try:
            with socket.create_connection(("127.0.0.1", self.settings.port), timeout=1) as conn:
                conn.sendall(struct.pack("!II", 8, 80877103))
                return conn.recv(1) in (b"N", b"S")
        except OSError:
            return False

    def up(self, say: Say) -> None:
        where = f"127.0.0.1:{self.settings.port}"
        if self.answers():
            say(f"postgres: running at {where}")
            return
        bindir = self._bin(say)
        self.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        if os.geteuid() == 0:
            user = pwd.getpwnam(_owner())
            for path in (self.home, *self.home.rglob("*")):
                os.chown(path, user.pw_uid, user.pw_gid)
        if not (self.data / "PG_VERSION").exists():
            shutil.rmtree(self.data, ignore_errors=True)
            say(f"postgres: initdb {self.data}")
            # C collation: text sorts by byte, as Neo4j and Redis order ids (ties in a page).
            initdb = [str(bindir / "initdb"), "-D", str(self.data), "-U", SUPERUSER]
            self._run([*initdb, "--auth=trust", "--encoding=UTF8", "--locale=C"], "initdb")
        conf = self.data / "postgresql.conf"
        conf.write_text(
            "# generated by the graphsvc benchmark; edits are overwritten\n"
            f"listen_addresses = '127.0.0.1'\nport = {self.settings.port}\n"
            "unix_socket_directories = ''\nmax_connections = 100\n"
            f"shared_buffers = '{self.settings.shared_buffers}'\n"
            "effective_cache_size = '4GB'\nmax_wal_size = '4GB'\n"
            "datestyle = 'iso, mdy'\ntimezone = 'UTC'\n"
        )
        pg_ctl = [str(bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log)]
        self._run([*pg_ctl, "-w", "-t", "120", "start"], "pg_ctl start")
        try:
            processes.wait_until(self.answers, 60, "PostgreSQL", logs=[self.log], every=0.1)
        except processes.ProcessFailed as exc:
            raise PostgresError(str(exc)) from None
        say(f"postgres: running at {where}")

    def down(self, say: Say) -> None:
        if not (self.data / "postmaster.pid").exists():
            say("postgres: not running")
            return
        bindir = self._bin(say)
        self._run(
            [str(bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"],
            "pg_ctl stop",
        )
        say("postgres: stopped")

    async def ensure_database(self) -> None:
        conn = await asyncpg.connect(self.settings.dsn("postgres"))
        try:
            name = self.settings.database
            if not await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name):
                await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()


def installed() -> bool:
    """Debian's PostgreSQL server binaries are on this machine."""
    return _newest_bin() is not None


def _newest_bin() -> Path | None:
    found = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    if not found:
        return None
    newest = max(found, key=lambda p: int(Path(p).parent.parent.name.split(".")[0]))
    return Path(newest).parent


def _reachable_home(home: Path) -> Path:
    """Where the server's files live: ``home`` itself, or under root a folder the server's
    user can reach whatever the modes of ``home``'s parents (one per ``home``, so the bench's
    and the tests' servers stay apart)."""
    if os.geteuid() != 0:
        return home
    digest = hashlib.sha256(str(home.resolve()).encode()).hexdigest()[:16]
    return Path("/var/tmp") / f"graphsvc-postgres-{digest}"


def _owner() -> str:
    try:
        pwd.getpwnam("postgres")
        return "postgres"
    except KeyError:
        return "nobody"


# -- data -------------------------------------------------------------------------------------


def _chunks(rows: Iterable[tuple[str, str, int]], size: int) -> Iterator[list]:
    chunk: list[tuple[str, str, int]] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


async def load(
    conn: asyncpg.Connection,
    graph: str,
    edges: Iterable[tuple[str, str, int]],
    total: int,
    *,
    progress: bool = True,
) -> float:
    """Replace the tables with these distinct edges (follower, followee, since in microseconds):
    COPY, then the keys and indexes, the counts, VACUUM ANALYZE (index-only scans need the
    visibility map). Records ``graph`` as loaded; returns the seconds it took."""
    started = time.perf_counter()
    await conn.execute(_SCHEMA)
    with tqdm(total=total, desc="postgres", unit="edge", disable=not progress) as bar:
        for chunk in _chunks(edges, 100_000):
            await conn.copy_records_to_table(
                "follows", records=chunk, columns=["follower", "followee", "since"]
            )
            bar.update(len(chunk))
    await conn.execute(_INDEXES)
    await conn.execute("VACUUM ANALYZE follows")
    await conn.execute("VACUUM ANALYZE counts")
    seconds = time.perf_counter() - started
    await conn.execute("INSERT INTO loaded VALUES ($1, $2, $3)", graph, total, seconds)
    return seconds


async def ensure_graph(server: LocalPostgres, path: Path, say: Say) -> None:
    """The server up and holding the edge file's graph: loaded once, reused by later runs.
    The edges and times are the ones our loader gives Neo4j (same parse, same merges)."""
    server.up(say)
    await server.ensure_database()
    conn = await asyncpg.connect(server.settings.dsn())
    try:
        record = await loaded(conn, path.name)
        if record is not None:
            say(f"postgres: reusing {path.name} ({record['edges']:,} edges)")
            return
        edges = read_edge_file(path)
        rows = ((src, dst, since) for (src, dst), since in edges.edges.items())
        seconds = await load(conn, path.name, rows, len(edges.edges))
        say(f"postgres: loaded {len(edges.edges):,} edges in {seconds:.1f}s (COPY, indexes)")
    finally:
        await conn.close()


async def loaded(conn: asyncpg.Connection, graph: str) -> asyncpg.Record | None:
    """The record of ``graph``'s load when this database holds it."""
    if not await conn.fetchval("SELECT to_regclass('loaded') IS NOT NULL"):
        return None
    return await conn.fetchrow("SELECT edges, seconds FROM loaded WHERE graph = $1", graph)


async def follow(conn: asyncpg.Connection | asyncpg.Pool, src: str, dst: str, since: int) -> bool:
    """Follow; True when the edge is new (and both counters moved)."""
    return bool(await conn.fetch(FOLLOW, src, dst, since))


async def follower_count(conn: asyncpg.Connection | asyncpg.Pool, user_id: str) -> int:
    return await conn.fetchval(FOLLOWER_COUNT, user_id)


async def counts(conn: asyncpg.Connection | asyncpg.Pool, user_id: str) -> tuple[int, int]:
    """(followers, following) from the counts table; zeros for an unknown user."""
    row = await conn.fetchrow(COUNTS_ROW, user_id)
    return (row["followers"], row["following"]) if row else (0, 0)


async def page(
    conn: asyncpg.Connection | asyncpg.Pool,
    user_id: str,
    limit: int = 20,
    after: tuple[int, str] = NEWEST,
    *,
    followers: bool = True,
) -> list[tuple[str, int]]:
    """(id, since) newest first, strictly after the keyset position ``after``."""
    text = FOLLOWERS_PAGE if followers else FOLLOWING_PAGE
    return [(r[0], r[1]) for r in await conn.fetch(text, user_id, after[0], after[1], limit)]


def main() -> None:
    """``python -m bench.postgres up|down``: the bench's PostgreSQL (STATE/postgres)."""
    import argparse

    from graphsvc.settings import PROJECT_ROOT

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("action", choices=["up", "down"])
    parser.add_argument("--home", type=Path, default=PROJECT_ROOT / ".local" / "bench" / "postgres")
    args = parser.parse_args()
    server = LocalPostgres(PostgresSettings.from_env(args.home))
    try:
        if args.action == "up":
            server.up(print)
        else:
            server.down(print)
    except PostgresError as exc:
        raise SystemExit(f"postgres: {str(exc).splitlines()[0]}") from None


if __name__ == "__main__":
    main()
