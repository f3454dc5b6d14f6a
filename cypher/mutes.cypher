// Mutes: (:User)-[:MUTES {since, until, notif, v}]->(:User), private to the muter. `since` is
// when the mute began, `until` when it expires (µs; absent: never), `notif` whether the
// muted user's new-follower notifications are muted too, `v` the muter's clock tick of the
// last write of the pair (the version by which the mirror orders writes). An expired mute
// filters nothing; the muter's next mute write deletes its expired mutes, and the lists and
// snapshots leave them out.

// name: mute
// $src mutes $dst, or changes the options of its mute. Both users are created when unknown
// (as a block creates them).
// Locking: the muter's node (its clock ticks: clk = max(now, clk + 1), the write's version);
// the muted user's node only if Neo4j locks it anyway (a sparse node whose relationship is
// created). The muter's expired mutes are deleted first, under the same lock.
// Rules: neither user is being erased ('erasing'); a new mute needs the muter to mute fewer
// than $max users, expired mutes not counted ('mute_limit'). A repeat with the same options
// changes nothing (its version is the existing one's, so the mirror can repair with it).
// A change (new, or other options) creates its outbox event (:GraphEvent of type 'mute', which
// the relay never appends to the public stream: it repairs the muter's mirror when lost).
// Params: $src, $dst, $seconds (null: no expiry), $notif, $max, $event.
// Returns one row: refused (null or the rule), created, changed, version, since, until.
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
MERGE (a:User {id: $src}) ON CREATE SET a.cs = timestamp() * 1000
SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END
MERGE (b:User {id: $dst}) ON CREATE SET b.cs = timestamp() * 1000
WITH a, b, now_us
CALL (a, now_us) {
  OPTIONAL MATCH (a)-[old:MUTES]->()
  WHERE old.until IS NOT NULL AND old.until <= now_us
  WITH collect(old) AS expired
  FOREACH (m IN expired | DELETE m)
  RETURN size(expired) AS expired
}
WITH a, b, head(COLLECT { MATCH (a)-[m:MUTES]->(b) RETURN m }) AS m,
     CASE WHEN $seconds IS NULL THEN null ELSE a.clk + $seconds * 1000000 END AS until
WITH a, b, m, until,
     CASE
       WHEN a:Erasing OR b:Erasing THEN 'erasing'
       WHEN m IS NULL AND COUNT { (a)-[:MUTES]->() } >= $max THEN 'mute_limit'
     END AS refused,
     m IS NULL OR coalesce(m.until, -1) <> coalesce(until, -1) OR coalesce(m.notif, false) <> $notif
       AS changed
FOREACH (_ IN CASE WHEN refused IS NULL AND m IS NULL THEN [1] ELSE [] END |
  CREATE (a)-[:MUTES {since: a.clk, until: until, notif: $notif, v: a.clk}]->(b))
FOREACH (_ IN CASE WHEN refused IS NULL AND m IS NOT NULL AND changed THEN [1] ELSE [] END |
  SET m.until = until, m.notif = $notif, m.v = a.clk)
FOREACH (_ IN CASE WHEN refused IS NULL AND changed THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $event, type: 'mute', src: $src, dst: $dst, v: a.clk}))
RETURN refused, m IS NULL AND refused IS NULL AS created, refused IS NULL AND changed AS changed,
       CASE WHEN m IS NULL THEN a.clk ELSE m.v END AS version,
       CASE WHEN m IS NULL THEN a.clk ELSE m.since END AS since,
       CASE WHEN m IS NULL OR changed THEN until ELSE m.until END AS until

// name: unmute
// $src no longer mutes $dst (an expired mute counts as none).
// Locking: the muter's node (its clock ticks: the removal's version, newer than any write of
// the pair, so the mirror can repair with it even when there was nothing to remove). The
// muter's expired mutes are deleted too, under the same lock.
// Rules: an unknown muter changes nothing (known false).
// A removal creates its outbox event (:GraphEvent of type 'unmute', private as a mute's).
// Params: $src, $dst, $event.
// Returns one row: known, removed, version.
OPTIONAL MATCH (a:User {id: $src})
WITH a, datetime.realtime() AS now
WITH a, now.epochSeconds * 1000000 + now.microsecond AS now_us
FOREACH (_ IN CASE WHEN a IS NULL THEN [] ELSE [1] END |
  SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END)
WITH a, now_us
CALL (a, now_us) {
  OPTIONAL MATCH (a)-[m:MUTES]->(b:User)
  WITH m, b.id = $dst AS pair, m.until IS NOT NULL AND m.until <= now_us AS expired
  WITH collect(CASE WHEN pair OR expired THEN m END) AS gone,
       collect(CASE WHEN pair AND NOT expired THEN m END) AS live
  FOREACH (m IN gone | DELETE m)
  RETURN size(live) > 0 AS removed
}
FOREACH (_ IN CASE WHEN removed THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $event, type: 'unmute', src: $src, dst: $dst, v: a.clk}))
RETURN a IS NOT NULL AS known, removed, a.clk AS version

// name: mutes_page
// One page of a user's mutes in effect at $now, newest first (since, then id, descending),
// strictly after the cursor's position.
// Locking: none (a read).
// Cost: the user's mutes (at most MAX_MUTES) are read and sorted.
// Params: $id, $now (µs), $since and $after (the cursor's position; null for the first page),
// $limit.
// Returns: id, since, until (null: never), notif; at most $limit rows.
MATCH (:User {id: $id})-[m:MUTES]->(b:User)
WHERE (m.until IS NULL OR m.until > $now)
  AND ($since IS NULL OR m.since < $since OR (m.since = $since AND b.id < $after))
RETURN b.id AS id, m.since AS since, m.until AS until, m.notif AS notif
ORDER BY since DESC, id DESC
LIMIT $limit

// name: mute_snapshots
// What the mirror of each user's mutes is built from: the mutes in effect at $now, read
// with the user's clock in one read, so the clock is the snapshot's version: every mute write
// of the user versioned at or below it is in the snapshot, any later one is not.
// Locking: none (a read, where writes go).
// Params: $ids, $now (µs).
// Returns per id: id, version (the clock; 0 for an unknown user), mutes: [id, v, until, notif].
UNWIND $ids AS uid
OPTIONAL MATCH (a:User {id: uid})
RETURN uid AS id, coalesce(a.clk, 0) AS version,
       CASE WHEN a IS NULL THEN [] ELSE COLLECT {
         MATCH (a)-[m:MUTES]->(b:User)
         WHERE m.until IS NULL OR m.until > $now
         RETURN [b.id, m.v, m.until, coalesce(m.notif, false)]
       } END AS mutes

// name: erase_muted_by
// Delete one batch of the mutes of a user being erased by others (its own mutes go with its
// other relationships: moderation/erase_blocks). Each muter is locked and its clock ticks, as
// for an unmute: the tick versions the removal its mirror gets, and each removal creates its
// (private) outbox event, so the relay repairs a muter whose mirror write is lost.
// Locking: the muters' nodes of the batch.
// Params: $id, $batch, $events (event ids, one per mute of the batch at most).
// Returns: removed, a list of [muter id, version].
MATCH (:User:Erasing {id: $id})<-[m:MUTES]-(a:User)
WITH m, a
LIMIT $batch
WITH collect([m, a]) AS rows, datetime.realtime() AS now
WITH rows, now.epochSeconds * 1000000 + now.microsecond AS now_us
UNWIND range(0, size(rows) - 1) AS i
WITH rows[i][0] AS m, rows[i][1] AS a, now_us, $events[i] AS event
SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END
DELETE m
CREATE (:GraphEvent {id: event, type: 'unmute', src: a.id, dst: $id, v: a.clk})
RETURN collect([a.id, a.clk]) AS removed
