// Moderation: a user's status (active, suspended, spam) and its propagation over the user's
// edges, and the erasure of a user, each in resumable batches marked on the user's node. A
// status propagation's stored name is fan-out: the label :Fanout, the fanout_* queries and
// their `fanout` columns.

// name: set_status
// A user's moderation status: 'active' (no property), 'suspended' or 'spam'. Non-active users
// carry the label :Inactive, which lists, friends and common queries filter on. A change
// between active and inactive also adds :Fanout: the user's follows must then be re-flagged in
// batches (moderation/fanout_following) and the counts of its followers refreshed; the label
// marks that work as pending until it is done, so it resumes after a crash.
// Locking: the user's node (created when unknown); its clock ticks: the tick versions the
// status in the Redis mirror.
// A change creates its event in the outbox (:GraphEvent).
// Params: $id, $status, $event.
// Returns: previous (the status before), version, fanout (whether a propagation is due).
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
OPTIONAL MATCH (known:User {id: $id})
SET known.clk = CASE WHEN coalesce(known.clk, 0) < now_us THEN now_us ELSE known.clk + 1 END
WITH now_us
MERGE (u:User {id: $id}) ON CREATE SET u.cs = timestamp() * 1000
SET u.clk = CASE WHEN coalesce(u.clk, 0) < now_us THEN now_us ELSE u.clk + 1 END
WITH u, coalesce(u.status, 'active') AS previous
SET u.status = CASE WHEN $status = 'active' THEN null ELSE $status END
FOREACH (_ IN CASE WHEN $status = 'active' THEN [] ELSE [1] END | SET u:Inactive)
FOREACH (_ IN CASE WHEN $status = 'active' THEN [1] ELSE [] END | REMOVE u:Inactive)
FOREACH (_ IN CASE WHEN (previous = 'active') <> ($status = 'active') THEN [1] ELSE [] END |
  SET u:Fanout)
FOREACH (_ IN CASE WHEN previous <> $status THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $event, type: 'status', src: $id, dst: '', v: u.clk,
                       status: $status}))
RETURN previous, u.clk AS version, u:Fanout AS fanout

// name: fanout_state
// Where a status propagation starts or resumes: the user's status, a version for it (the clock,
// never older than the status's own tick) and the followed users whose mirrored counts a
// stopped job may not have refreshed.
// Locking: none (a read).
// Params: $id.
// Returns: status, version, refresh (user ids); no row for an unknown user.
MATCH (x:User {id: $id})
RETURN coalesce(x.status, 'active') AS status, x.clk AS version,
       coalesce(x.refresh, []) AS refresh

// name: fanout_following
// One batch of a status propagation over the user's followings. Each edge's flag `x` must say
// whether the follower is inactive, and each followed user's `xr` counts its flagged edges.
// Locking: the user's node (its clock ticks), so the batch is serialized with the user's own
// follows and unfollows, which maintain the same flags; repeating it is harmless. Each followed
// user whose `xr` changes is written, and so locked.
// The followed users whose counts changed are kept on the node (`refresh`) until the next
// batch: a job that stops before refreshing their mirrored counts does it on resume.
// Params: $id, $batch.
// Returns: ids (those users; none: done).
MATCH (x:User {id: $id})
WITH x, datetime.realtime() AS now
WITH x, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
WITH x, x:Inactive AS inactive
OPTIONAL MATCH (x)-[r:FOLLOWS]->(y:User)
WHERE coalesce(r.x, false) <> inactive
WITH x, inactive, r, y
LIMIT $batch
FOREACH (_ IN CASE WHEN r IS NULL THEN [] ELSE [1] END |
  SET r.x = CASE WHEN inactive THEN true END,
      y.xr = coalesce(y.xr, 0) + CASE WHEN inactive THEN 1 ELSE -1 END)
WITH x, collect(y.id) AS ids
SET x.refresh = ids
RETURN ids

// name: fanout_done
// End a status propagation, unless a newer status change made more work (the flags of the user's
// followings disagree with its status again): then it stays pending.
// Locking: the user's node (its clock ticks), so no status change or follow of the user runs
// beside the check.
// Params: $id.
// Returns: done (whether the propagation is finished).
MATCH (x:User {id: $id})
WITH x, datetime.realtime() AS now
WITH x, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
WITH x, NOT EXISTS {
  (x)-[r:FOLLOWS]->() WHERE coalesce(r.x, false) <> x:Inactive
} AS done
FOREACH (_ IN CASE WHEN done THEN [1] ELSE [] END | REMOVE x:Fanout, x.refresh)
RETURN done

// name: follower_ids
// Every follower of a user, streamed (a status propagation refreshes their counts).
// Locking: none (a read).
// Params: $id.
// Returns: id, one row per follower.
MATCH (:User {id: $id})<-[:FOLLOWS]-(f:User)
RETURN f.id AS id

// name: erase_begin
// Mark a user for erasure (label :Erasing): from now on no follow to or from it is accepted
// (relations/follow), no dismissal (suggestions/dismiss) and no interaction
// (suggestions/interactions_apply), and the erasure resumes after a crash until the node is
// gone.
// Every API key bound to the id is revoked, whether or not the user has a node (revoked keys
// are kept, as keys/revoke keeps them). When keys were revoked, the node remembers until when
// an API process may still trust one from its cache (`keys_until`: now + $grace_us); the node
// is not deleted before then (moderation/erase_end), so an old bound key can never act as a
// later user who takes the id.
// The first call creates the erase event in the outbox (:GraphEvent); the user's clock ticks.
// Locking: the user's node, and the keys bound to the id.
// Params: $id, $event, $grace_us.
// Returns one row: found (false: no such user), already (it was being erased before), version
// (the event's, null when not found), revoked (ids of the keys revoked by this call).
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
CALL () {
  OPTIONAL MATCH (k:ApiKey {user: $id})
  WHERE NOT coalesce(k.revoked, false)
  SET k.revoked = true
  RETURN collect(k.id) AS revoked
}
OPTIONAL MATCH (x:User {id: $id})
WITH x, revoked, now_us, coalesce(x:Erasing, false) AS already
FOREACH (_ IN CASE WHEN x IS NULL THEN [] ELSE [1] END |
  SET x:Erasing, x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
  FOREACH (__ IN CASE WHEN size(revoked) > 0 AND coalesce(x.keys_until, 0) < now_us + $grace_us
                      THEN [1] ELSE [] END |
    SET x.keys_until = now_us + $grace_us))
FOREACH (_ IN CASE WHEN x IS NULL OR already THEN [] ELSE [1] END |
  CREATE (:GraphEvent {id: $event, type: 'erase', src: $id, dst: '', v: x.clk}))
RETURN x IS NOT NULL AS found, already, x.clk AS version, revoked

// name: erase_following
// Delete one batch of the erased user's follows.
// Locking: the user's node; its clock ticks once: the tick versions every removal of the batch
// (each edge once). Flagged edges (the user is inactive) leave the followed users' `xr`, which
// locks those users.
// The batch's removals are kept on the node (`pending`, "src dst version" strings) until the
// next batch replaces them: a job that stops before mirroring a batch replays them on resume.
// Params: $id, $batch.
// Returns: ids (the followed users; none: done), version (of the removals).
MATCH (x:User:Erasing {id: $id})
WITH x, datetime.realtime() AS now
WITH x, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
WITH x
OPTIONAL MATCH (x)-[r:FOLLOWS]->(y:User)
WITH x, r, y
LIMIT $batch
FOREACH (_ IN CASE WHEN r.x THEN [1] ELSE [] END | SET y.xr = y.xr - 1)
WITH x, collect(r) AS rels, collect(y.id) AS ids
FOREACH (r IN rels | DELETE r)
SET x.pending = [i IN ids | $id + ' ' + i + ' ' + toString(x.clk)]
RETURN ids, x.clk AS version

// name: erase_followers
// Delete one batch of the follows of the erased user.
// Locking: each follower, whose clock ticks, as for an unfollow: the tick versions its removal;
// and the erased user's node, whose `xr` loses the flagged (inactive) followers, so its counts
// stay exact throughout.
// The batch's removals are kept on the node (`pending`), as in moderation/erase_following.
// Params: $id, $batch.
// Returns: removed, a list of [follower, version] pairs (empty: done).
MATCH (x:User:Erasing {id: $id})
OPTIONAL MATCH (x)<-[r:FOLLOWS]-(f:User)
WITH x, r, f
LIMIT $batch
WITH x, r, f, datetime.realtime() AS now
WITH x, r, f, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET f.clk = CASE WHEN coalesce(f.clk, 0) < now_us THEN now_us ELSE f.clk + 1 END
WITH x, collect(CASE WHEN r IS NOT NULL THEN {r: r, id: f.id, version: f.clk} END) AS removed
WITH x, removed, size([e IN removed WHERE e.r.x]) AS flagged
FOREACH (_ IN CASE WHEN flagged > 0 THEN [1] ELSE [] END | SET x.xr = x.xr - flagged)
FOREACH (e IN removed | DELETE e.r)
SET x.pending = [e IN removed | e.id + ' ' + $id + ' ' + toString(e.version)]
RETURN [e IN removed | [e.id, e.version]] AS removed

// name: erase_blocks
// Delete one batch of the erased user's other relationships, both directions: blocks, pending
// follow requests, interactions (affinity), dismissed suggestions, the tombstones of ended
// follows to or from it (the changes others' lists show: an erased user leaves none), its
// memberships in others' curated lists, its follows of lists, what others' subscriptions
// recorded about it (IMPOSES, EXCEPTS), and its own mutes (its mutes by others go first, each
// with its muter's mirror write: mutes/erase_muted_by). Its own lists go in lists/erase_owned,
// its subscriptions in subscriptions/erase_subscribed.
// Locking: the relationships it deletes (and, as any relationship delete, the sparse nodes at
// their ends).
// Params: $id, $batch.
// Returns: deleted, how many were deleted (fewer than $batch: caught up; what arrives later
// goes with the node, moderation/erase_end).
OPTIONAL MATCH
  (:User:Erasing {id: $id})
  -[k:BLOCKS|REQUESTS|INTERACTS|DISMISSED|MUTES|UNFOLLOWED|HAS_MEMBER|FOLLOWS_LIST|IMPOSES|EXCEPTS]-()
WITH k
LIMIT $batch
WITH collect(k) AS gone
FOREACH (k IN gone | DELETE k)
RETURN size(gone) AS deleted

// name: erase_pending
// The removals of an erasure's last batch, which its mirror may have missed.
// Locking: none (a read).
// Params: $id.
// Returns: pending ("src dst version" strings); no row when the user is not being erased.
MATCH (x:User:Erasing {id: $id})
RETURN coalesce(x.pending, []) AS pending

// name: erase_end
// Delete the erased user's node once its follows, its lists and its subscriptions are gone (a follow, or a list's
// member, that raced the start of the erasure may still have landed: then the batches run
// again). Other relationships that raced in since the last batch of moderation/erase_blocks
// (blocks, dismissals, interactions: none carries mirror work) are deleted with the node, up
// to $batch of them, so a stream of them cannot hold the erasure up. The node is locked (its
// clock ticks) before the check, so no follow can slip in between.
// A key bound to the id since the erasure began is revoked too, and the node is kept until no
// API process may trust a revoked key from its cache any more (`keys_until`, set by
// moderation/erase_begin or here, $grace_us after the revocation): `wait_us` says how long.
// `version`, the tick, is newer than any status version the user had: the mirror uses it to
// forget the user's status, so a later user with the same id starts out active.
// Locking: the user's node; the keys bound to the id.
// Params: $id, $batch, $grace_us.
// Returns one row: done (the erasure is over), version (null when the node was already gone,
// or is not being erased), wait_us (0, or how long the node must be kept for its revoked
// keys), revoked (ids of keys revoked by this call).
OPTIONAL MATCH (x:User:Erasing {id: $id})
WITH x, datetime.realtime() AS now
WITH x, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET x.clk = CASE WHEN coalesce(x.clk, 0) < now_us THEN now_us ELSE x.clk + 1 END
WITH x, now_us
CALL (x) {
  OPTIONAL MATCH (k:ApiKey {user: $id})
  WHERE x IS NOT NULL AND NOT coalesce(k.revoked, false)
  SET k.revoked = true
  RETURN collect(k.id) AS revoked
}
FOREACH (_ IN CASE WHEN size(revoked) > 0 THEN [1] ELSE [] END |
  SET x.keys_until = now_us + $grace_us)
WITH x, now_us, revoked, x.clk AS version,
     CASE WHEN coalesce(x.keys_until, 0) > now_us THEN x.keys_until - now_us ELSE 0 END AS wait_us
WITH x, revoked, version, wait_us,
     x IS NOT NULL AND (wait_us > 0 OR EXISTS { (x)-[:FOLLOWS]-() } OR EXISTS { (x)-[:OWNS]->() }
                        OR EXISTS { (x)-[:SUBSCRIBES]->() }
                        OR COUNT { (x)--() } > $batch) AS busy
FOREACH (_ IN CASE WHEN x IS NOT NULL AND NOT busy THEN [1] ELSE [] END | DETACH DELETE x)
RETURN NOT busy AS done, version, wait_us, revoked

// name: pending_work
// Users with a status propagation or an erasure not yet finished (label scans).
// Locking: none (a read).
// Params: none.
// Returns: id, erasing (false: a status propagation).
MATCH (u:User)
WHERE u:Fanout OR u:Erasing
RETURN u.id AS id, u:Erasing AS erasing

// name: user_state
// A user's status and pending background work.
// Locking: none (a read).
// Params: $id.
// Returns: status, fanout, erasing, approving (its follow requests are being approved); no
// row for an unknown user.
MATCH (u:User {id: $id})
RETURN coalesce(u.status, 'active') AS status, u:Fanout AS fanout, u:Erasing AS erasing,
       u:Approving AS approving
