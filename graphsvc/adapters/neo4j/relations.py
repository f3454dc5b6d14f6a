"""The edge writes that make Neo4j the truth: follows, unfollows, blocks and unblocks (and a
follow request's approval or rejection), committed in batches through ``cypher/relations.cypher``
with the numbered count changes and the time the mirror fences them by.

A batch is one transaction under the locks of all its users, each write creating its outbox
event; its statements' plans are made before the first batch, and again after Neo4j was lost
(``EdgeStore.plans``), so no request pays for the planning.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

from graphsvc.adapters.neo4j.store import Neo4jStore, Statements, event_id
from graphsvc.concurrency.metrics import BATCH_NEO4J
from graphsvc.concurrency.warm_up import WarmUp
from graphsvc.domain.count_changes import EdgeFacts, edge_deltas
from graphsvc.domain.edge_writes import (
    NO_LIMIT,
    REMOVED,
    EdgeWrite,
    Round,
    WriteKind,
    batch_users,
    plan_rounds,
)
from graphsvc.domain.follow_options import FollowOptions
from graphsvc.domain.ids import REHEARSAL_OTHER, REHEARSAL_USER
from graphsvc.domain.model import (
    BlockChange,
    CountChange,
    CountUpdate,
    EdgeChange,
    GraphEvent,
    Refusal,
    Relationship,
    RequestChange,
    UserCounts,
)

log = logging.getLogger(__name__)

# Reads Neo4j's clock now, where writes go (``SnapshotStore.clock``).
ReadClock = Callable[[], Awaitable[int]]
# Reads users' counts under their locks, each read numbered (``SnapshotStore.read_counts``).
ReadCounts = Callable[[Sequence[str]], Awaitable[dict[str, UserCounts]]]


def event_ids_for(batch: Sequence[EdgeWrite]) -> list[list[str]]:
    """Outbox event ids a batch's writes may need: four for a block (its own, an unfollow
    each way, the blocker's severance notice), one for any other write."""
    return [[event_id() for _ in range(4 if w.kind is WriteKind.BLOCK else 1)] for w in batch]


class EdgeStore:
    """Follows, unfollows, blocks and unblocks, committed in batches: one transaction for the
    writes that arrive together (under the locks of all their users, each creating its outbox
    event and numbering its users' count changes). A batch of follows alone, or of unfollows
    alone, is one statement, sent as an auto-commit transaction: one round trip to Neo4j. The
    time the mirror fences the batch's writes by is Neo4j's clock read in that transaction
    once it held every lock (``relations/lock_users``), so no read of the clock follows the
    commit."""

    def __init__(self, store: Neo4jStore, clock: ReadClock, read_counts: ReadCounts) -> None:
        self._store = store
        self._clock = clock
        self._read_counts = read_counts
        # After Neo4j was lost, its plans are made again before the next batch (``prepare``).
        self.plans = WarmUp("Neo4j's plans of the write statements", self.prepare)
        store.warm_ups.append(self.plans)

    async def commit(self, writes: Sequence[EdgeWrite]) -> list[WriteOutcome]:
        """Commit ``writes`` in one transaction, in arrival order per acting user; a refusal
        refuses only its own write. Outcomes in the order of ``writes``: an EdgeChange, a
        RequestChange (the followed user is locked) or a Refusal for a follow, an EdgeChange or
        None (neither user ever existed) for an unfollow, a BlockChange or a Refusal for a
        block, the GraphEvent or None (no block) for an unblock, an EdgeChange or a Refusal
        for an approval, the GraphEvent or None (no request) for a rejection."""
        await self.plans.ready(self._store.timeout)
        batch = list(writes)
        events = event_ids_for(batch)
        rounds = plan_rounds(batch)
        single = one_statement(rounds)
        commit = self._store.one_statement if single else self._store.transaction
        with BATCH_NEO4J.time():
            rows = await commit(lambda run: commit_rounds(run, batch, events, rounds))
        at = max(
            (row["at"] for write, row in zip(batch, rows, strict=True) if _mirrored(write, row)),
            default=None,
        )
        outcomes = [
            _outcome(write, row, ids, at)
            for write, row, ids in zip(batch, rows, events, strict=True)
        ]
        return await self._repeats_read(outcomes) if at is not None else outcomes

    async def _repeats_read(self, outcomes: list[WriteOutcome]) -> list[WriteOutcome]:
        """A repeated write changed nothing, but the write it repeats may have lost its mirror
        write (the client retried because of it): its users' counts, read now under their
        locks, come with it, so the repeat repairs them."""
        users = sorted({user for outcome in outcomes for user in _repeated(outcome)})
        if not users:
            return outcomes
        try:
            readings = await self._read_counts(users)
        except Exception as exc:  # the write stands whatever went wrong here
            log.warning("count read after a repeat failed (%r); reconcile repairs it", exc)
            return outcomes

        def read(change: EdgeChange) -> EdgeChange:
            if change.changed:
                return change
            return replace(
                change, src_counts=readings.get(change.src), dst_counts=readings.get(change.dst)
            )

        return [_each_change(outcome, read) for outcome in outcomes]

    async def prepare(self) -> None:
        """Have Neo4j plan every statement a batch can send, before the first request needs
        one. A Neo4j that has just started is slow to plan them (docs/performance.md, "Right
        after a start"), and a batch holds its users' locks meanwhile, so the first writes
        after a start stalled every write of their users, long enough for the outbox relay to
        take their events for lost. Rehearses a batch of each shape on two users no request
        can name (an id the API refuses), in a transaction that is rolled back."""
        for batch in _REHEARSALS:
            events = event_ids_for(batch)
            await self._store.rehearse(
                lambda run, batch=batch, events=events: commit_rounds(run, batch, events)
            )
        await self._clock()

    async def removals(
        self, pairs: Sequence[tuple[str, str, int]], *, committed: bool = False
    ) -> list[EdgeChange]:
        """Edge changes for committed removals (src, dst, version) that numbered no count
        change (an erasure's), with the counts read now under the users' locks.
        ``committed``: the caller's write is acknowledged whatever happens, so an unreachable
        Neo4j yields changes without a time (the relay mirrors them) rather than an error."""
        users = sorted({u for s, d, _ in pairs for u in (s, d)})
        try:
            counts = await self._read_counts(users)
        except Exception as exc:
            if not committed:
                raise
            log.warning("count read after a commit failed (%r); the outbox relay mirrors it", exc)
            return [EdgeChange(s, d, False, True, v, None, None, None) for s, d, v in pairs]
        at = max((reading.at for reading in counts.values()), default=None)
        if at is None:
            at = await self._clock()
        return [
            EdgeChange(s, d, False, True, v, counts.get(s), counts.get(d), at) for s, d, v in pairs
        ]

    async def follow_filters(self, reader: str) -> dict[str, FollowOptions]:
        """The reader's follows whose options filter posts: author -> options."""
        rows = await self._store.read("relations/follow_filters", {"id": reader})
        return {row["id"]: stored_options(row) for row in rows}

    async def relationships(self, user_id: str, others: Sequence[str]) -> list[Relationship]:
        (row,) = await self._store.read(
            "relations/relationships", {"id": user_id, "ids": list(others)}
        )
        return [
            Relationship(*values[:-1], options=_options_of(values[-1])) for values in row["rows"]
        ]


# What one committed write comes to (see EdgeStore.commit).
WriteOutcome = EdgeChange | Refusal | BlockChange | RequestChange | GraphEvent | None
Row = dict[str, Any]


async def commit_rounds(
    run: Statements,
    batch: list[EdgeWrite],
    events: list[list[str]],
    rounds: list[Round] | None = None,
) -> list[Row]:
    """The statements of one batch, in one transaction: the locks of its users in id order
    (``lock_users``, as the prelude of the first follow or unfollow statement, or alone when
    the batch starts with a block), then each round's writes: a statement per kind, or per
    block and unblock (rare, and a block locks two users). One result row per write, in
    batch order. ``rounds``: ``plan_rounds(batch)``, when the caller has it already."""
    rows: list[Row | None] = [None] * len(batch)
    users = [{"id": u.id, "create": u.create} for u in batch_users(batch)]
    lock: Row | None = {"users": users}
    rounds = plan_rounds(batch) if rounds is None else rounds
    if not rounds[0].by_kind.keys() & {WriteKind.FOLLOW, WriteKind.UNFOLLOW}:
        await run("relations/lock_users", lock, None)
        lock = None
    for round_ in rounds:
        for kind, members in sorted(round_.by_kind.items(), key=lambda item: _KIND_ORDER[item[0]]):
            if kind in (WriteKind.FOLLOW, WriteKind.UNFOLLOW):
                params = {"rows": [_row(i, w, events[i][0]) for i, w in members], **(lock or {})}
                found = [
                    dict(record)
                    for record in await run(
                        f"relations/{kind.value}", params, "relations/lock_users" if lock else None
                    )
                ]
                lock = None
            else:
                found = []
                for i, w in members:
                    records = await run(f"relations/{kind.value}", _single(w, events[i]), None)
                    found += [{**dict(record), "i": i} for record in records]
            for record in found:
                rows[record["i"]] = record
    # A follow whose user was erased and deleted since the batch began gives no row.
    erased: Row = {"refused": "erasing", "retry_at": None}
    return [row if row is not None else erased for row in rows]


def one_statement(rounds: list[Round]) -> bool:
    """Whether ``commit_rounds`` sends a batch of these rounds (``plan_rounds``) as a single
    statement: one round of follows alone, or of unfollows alone (the locks ride in as its
    prelude)."""
    if len(rounds) != 1:
        return False
    kinds = rounds[0].by_kind.keys()
    return len(kinds) == 1 and kinds <= {WriteKind.FOLLOW, WriteKind.UNFOLLOW}


# Batches of every shape ``commit_rounds`` sends, on users no request can name: lock+follow,
# unfollow, follow; lock+unfollow, block, unblock; lock alone before a block; and lock alone
# before an approval, then a rejection.
_REHEARSALS = [
    [EdgeWrite(kind, REHEARSAL_USER, REHEARSAL_OTHER) for kind in kinds]
    for kinds in (
        (WriteKind.FOLLOW, WriteKind.UNFOLLOW, WriteKind.FOLLOW),
        (WriteKind.UNFOLLOW, WriteKind.BLOCK, WriteKind.UNBLOCK),
        (WriteKind.BLOCK,),
        (WriteKind.APPROVE, WriteKind.REJECT),
    )
]

# Within a round the kinds touch no common user; follows and unfollows go first, so
# the batch's first statement can carry its locks.
_KIND_ORDER = {
    WriteKind.FOLLOW: 0,
    WriteKind.UNFOLLOW: 1,
    WriteKind.BLOCK: 2,
    WriteKind.UNBLOCK: 3,
    WriteKind.APPROVE: 4,
    WriteKind.REJECT: 5,
}


def _row(position: int, write: EdgeWrite, event: str) -> Row:
    """A row of relations/follow or relations/unfollow."""
    row: Row = {"i": position, "src": write.src, "dst": write.dst, "event": event}
    if write.kind is WriteKind.FOLLOW:
        row.update(
            max_following=write.limits.max_following,
            paced=write.limits.per_window < NO_LIMIT,
            per_window=write.limits.per_window,
            window_us=write.limits.window_us,
            max_requests=write.limits.max_requests,
            notify=write.edits.notify,
            reblogs=write.edits.reblogs,
            langs=list(write.edits.languages or ()),
            set_langs=write.edits.languages is not None,
        )
    else:
        row["cause"] = write.cause or None  # a null property is not stored
        row["withdraw"] = write.cause != REMOVED  # a removal is no withdrawal of a request
    return row


def _single(write: EdgeWrite, ids: list[str]) -> Row:
    """Parameters of relations/block, unblock, approve or reject, which run once per write."""
    match write.kind:
        case WriteKind.BLOCK:
            return {
                "src": write.src,
                "dst": write.dst,
                "ids": sorted((write.src, write.dst)),
                "events": ids,
                "max_blocks": write.limits.max_blocks,
            }
        case WriteKind.APPROVE:
            return {
                "src": write.src,
                "dst": write.dst,
                "ids": sorted((write.src, write.dst)),
                "event": ids[0],
                "max_following": write.limits.max_following,
            }
    return {"src": write.src, "dst": write.dst, "event": ids[0]}


def _repeated(outcome: WriteOutcome) -> tuple[str, ...]:
    """The users of a write that changed nothing (a follow that existed, an unfollow of no
    follow, a block made before that removed nothing now)."""
    match outcome:
        case EdgeChange(changed=False):
            return outcome.src, outcome.dst
        case BlockChange(created=False) if not any(c.changed for c in outcome.removed):
            return outcome.removed[0].src, outcome.removed[0].dst
    return ()


def _each_change(outcome: WriteOutcome, change: Callable[[EdgeChange], EdgeChange]) -> WriteOutcome:
    """``outcome`` with ``change`` applied to each edge change in it."""
    match outcome:
        case EdgeChange():
            return change(outcome)
        case BlockChange():
            return replace(outcome, removed=[change(c) for c in outcome.removed])
    return outcome


def _mirrored(write: EdgeWrite, row: Row) -> bool:
    """Whether the mirror gets a write for it: repeats too (its scripts are idempotent, so a
    retried request repairs a mirror write an earlier attempt lost), refusals and unblocks not."""
    match write.kind:
        case WriteKind.FOLLOW:
            return row["refused"] is None and not row["requested"]
        case WriteKind.APPROVE:
            return row["refused"] is None
        case WriteKind.UNFOLLOW:
            return bool(row["known"])
        case WriteKind.BLOCK:
            return row["refused"] is None
    return False


def _outcome(write: EdgeWrite, row: Row, ids: list[str], at: int | None) -> WriteOutcome:
    src, dst = write.src, write.dst
    match write.kind:
        case WriteKind.FOLLOW | WriteKind.APPROVE | WriteKind.BLOCK if row["refused"] is not None:
            return Refusal(row["refused"], row.get("retry_at"))
        case WriteKind.FOLLOW if row["requested"]:
            created, version = bool(row["changed"]), row["version"]
            event = GraphEvent(ids[0], "follow_request", src, dst, version) if created else None
            options, retuned = stored_options(row), bool(row["retuned"])
            return RequestChange(src, dst, created, version, event, options, retuned)
        case WriteKind.FOLLOW | WriteKind.UNFOLLOW | WriteKind.APPROVE:
            if write.kind is WriteKind.UNFOLLOW and not row["known"]:
                return None
            return _edge_change(write, row, ids[0], at)
        case WriteKind.REJECT:
            if not row["removed"]:
                return None
            return GraphEvent(ids[0], "follow_request_rejected", src, dst, row["version"])
        case WriteKind.BLOCK:
            return _block_change(write, row, ids, at)
    if not row["removed"]:
        return None
    return GraphEvent(ids[0], "unblock", src, dst, row["version"])


def _edge_change(write: EdgeWrite, row: Row, event_id: str, at: int | None) -> EdgeChange:
    """A committed follow, unfollow or approval, with its event: the approval's is a follow
    (cause ``approved``), an unfollow that only withdrew a request says so."""
    src, dst = write.src, write.dst
    following = write.kind is not WriteKind.UNFOLLOW
    changed, version = bool(row["changed"]), row["version"]
    withdrawn = bool(row.get("withdrawn"))
    event = None
    if changed and write.kind is WriteKind.APPROVE:
        event = GraphEvent(event_id, "follow", src, dst, version, cause="approved")
    elif changed:
        event = GraphEvent(event_id, write.kind.value, src, dst, version, cause=write.cause)
    elif withdrawn:
        event = GraphEvent(event_id, "follow_request_withdrawn", src, dst, version)
    # a new edge flags an inactive follower; a removed one says whether it was flagged
    flagged = bool(row["flagged"]) if not following else not row["src_on"]
    facts = EdgeFacts(
        following, bool(row["src_on"]), bool(row["dst_on"]), bool(row["back"]), flagged
    )
    counts = _numbered(changed, facts, row["src_cs"], row["dst_cs"])
    change = EdgeChange(src, dst, following, changed, version, *counts, at, event, withdrawn)
    if write.kind is WriteKind.FOLLOW:
        return replace(change, options=stored_options(row), retuned=bool(row["retuned"]))
    return change


def _numbered(
    changed: bool, facts: EdgeFacts, src_cs: int, dst_cs: int
) -> tuple[CountUpdate, CountUpdate]:
    """Both users' numbered count changes for an edge change; none when nothing changed."""
    if not changed:
        return None, None
    src_delta, dst_delta = edge_deltas(facts)
    return CountChange(src_cs, src_delta), CountChange(dst_cs, dst_delta)


def _block_change(write: EdgeWrite, row: Row, ids: list[str], at: int | None) -> BlockChange:
    """Both directions come back as removals, also when there was no follow: the mirror
    applies a removal newer than any instance of the edge harmlessly, so a retried block
    repairs a mirror write that an earlier attempt lost. The follow src -> dst went first
    (its count changes are numbered one before the last when both went), while the other
    still followed back."""
    src, dst = write.src, write.dst
    ab, ba = row["following_version"], row["followed_by_version"]
    removed_ab, removed_ba = bool(row["removed_following"]), bool(row["removed_followed_by"])
    src_on, dst_on = bool(row["src_on"]), bool(row["dst_on"])
    src_cs, dst_cs = row["src_cs"], row["dst_cs"]
    flags = bool(row["following_flagged"]), bool(row["followed_by_flagged"])
    first = _numbered(
        removed_ab,
        EdgeFacts(False, src_on, dst_on, removed_ba, flags[0]),
        src_cs - removed_ba,
        dst_cs - removed_ba,
    )
    second = _numbered(
        removed_ba, EdgeFacts(False, dst_on, src_on, False, flags[1]), dst_cs, src_cs
    )
    changes = [
        EdgeChange(src, dst, False, removed_ab, ab, *first, at),
        EdgeChange(dst, src, False, removed_ba, ba, *second, at),
    ]
    events = [GraphEvent(ids[0], "block", src, dst, ab)] if row["created"] else []
    events += [
        GraphEvent(ids[n], "unfollow", s, d, v, cause="block")
        for n, s, d, v, r in ((1, src, dst, ab, removed_ab), (2, dst, src, ba, removed_ba))
        if r
    ]
    if removed_ab or removed_ba:  # the blocker's severance notice (the blocked user gets none)
        events.append(
            GraphEvent(
                ids[3],
                "severed",
                dst,
                src,
                ab,
                cause="block",
                followers=int(removed_ba),
                following=int(removed_ab),
            )
        )
    return BlockChange(bool(row["created"]), changes, events)


def stored_options(row: Row) -> FollowOptions:
    """A follow's options from their stored form (``relations/follow``: only what is not the
    default is stored)."""
    return FollowOptions(
        notify=bool(row.get("notify")),
        reblogs=row.get("reblogs") is not False,
        languages=tuple(row.get("langs") or ()),
    )


def _options_of(stored: list[Any] | None) -> FollowOptions | None:
    if stored is None:
        return None
    notify, reblogs, langs = stored
    return stored_options({"notify": notify, "reblogs": reblogs, "langs": langs})
