// Subscriptions to moderation lists: (:User)-[:SUBSCRIBES]->(:Subscription {key, user, list,
// action, since, due, gone})-[:TO]->(:List). `key` is "user|list" (one subscription per pair),
// `action` mute or block, `since` the subscriber's clock tick when it subscribed, `due` the
// subscription's version (every change of it or of its list moves it), `gone` true once
// unsubscribed (the node stays until its work is undone). A subscription whose work is due
// carries the :Syncing label (the worker's jobs find them by it). What a subscription did is
// recorded per person: (:Subscription)-[:IMPOSES {action, applied, refused}]->(:User), written
// before the mute or block itself (`applied` once that committed, `refused` when a bound kept
// it from being made); the people it excepts: (:Subscription)-[:EXCEPTS]->(:User).
// A subscription acts while its subscriber may see the list: its own list, or a public one of
// an owner who does not block it.

// name: subscribe
// $user subscribes to the moderation list $list to $action its members; a repeat with another
// action changes it, and a subscription being undone (unsubscribed) is taken up again.
// Locking: the subscriber's node (its clock ticks), so one user's subscriptions are counted one
// after another; the subscription's node.
// Rules: no such list, or one the subscriber may not see (a private list of another, an owner
// who blocks it, is suspended or is being erased): 'not_found'; a curate list: 'curate'; the
// subscriber is being erased: 'erasing'; a new subscription past $max: 'subscription_limit'.
// Params: $user, $list, $key, $action, $max.
// Returns one row: refused (null or the rule), created, changed (its work is due again).
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
MERGE (u:User {id: $user}) ON CREATE SET u.cs = timestamp() * 1000
SET u.clk = CASE WHEN coalesce(u.clk, 0) < now_us THEN now_us ELSE u.clk + 1 END
WITH u
OPTIONAL MATCH (o:User)-[:OWNS]->(l:List {id: $list})
OPTIONAL MATCH (u)-[:SUBSCRIBES]->(s:Subscription {key: $key})
WITH u, l, s,
     CASE
       WHEN l IS NULL
            OR NOT (o = u OR (NOT l.private AND NOT o:Inactive AND NOT o:Erasing
                              AND NOT EXISTS { (o)-[:BLOCKS]->(u) })) THEN 'not_found'
       WHEN l.purpose <> 'moderation' THEN 'curate'
       WHEN u:Erasing THEN 'erasing'
       WHEN (s IS NULL OR s.gone)
            AND COUNT { (u)-[:SUBSCRIBES]->(t:Subscription) WHERE NOT t.gone } >= $max
         THEN 'subscription_limit'
     END AS refused
WITH u, l, s, refused,
     refused IS NULL AND s IS NOT NULL AND (s.gone OR s.action <> $action) AS changed
FOREACH (_ IN CASE WHEN refused IS NULL AND s IS NULL THEN [1] ELSE [] END |
  CREATE (u)-[:SUBSCRIBES]->(:Subscription:Syncing {key: $key, user: $user, list: $list,
           action: $action, since: u.clk, due: 1, gone: false})-[:TO]->(l))
FOREACH (_ IN CASE WHEN changed THEN [1] ELSE [] END |
  SET s:Syncing, s.due = s.due + 1, s.action = $action,
      s.since = CASE WHEN s.gone THEN u.clk ELSE s.since END, s.gone = false)
RETURN refused, refused IS NULL AND s IS NULL AS created, changed

// name: unsubscribe
// End $user's subscription to $list: it is marked gone and its work due (the worker undoes
// what it did, then deletes it).
// Locking: the subscription's node.
// Params: $user, $key.
// Returns one row: removed (false: no such subscription, or one already gone).
OPTIONAL MATCH (:User {id: $user})-[:SUBSCRIBES]->(s:Subscription {key: $key})
WHERE NOT s.gone
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END |
  SET s.gone = true, s:Syncing, s.due = s.due + 1)
RETURN s IS NOT NULL AS removed

// name: page
// Newest-first keyset page of $id's subscriptions (not gone), strictly after ($since,
// $after), with $key when not '' only that one.
// Cost: the subscriber's SUBSCRIBES relationships (at most LIST_SUBSCRIPTIONS_MAX); for each
// kept, its IMPOSES and EXCEPTS counted (at most LIST_MEMBERS_MAX each).
// Locking: none (a read).
// Params: $id, $key ('' for all), $since, $after (list id, '' for none), $limit.
// Returns: list, action, since, syncing, visible, owner and name (null unless visible),
// applied, refused, exceptions; at most $limit rows, newest first.
MATCH (u:User {id: $id})-[:SUBSCRIBES]->(s:Subscription)
WHERE NOT s.gone AND ($key = '' OR s.key = $key)
  AND (s.since < $since OR (s.since = $since AND s.list < $after))
WITH u, s
ORDER BY s.since DESC, s.list DESC
LIMIT $limit
OPTIONAL MATCH (s)-[:TO]->(l:List)<-[:OWNS]-(o:User)
WITH s, l,
     l IS NOT NULL AND (o = u OR (NOT l.private AND NOT EXISTS { (o)-[:BLOCKS]->(u) }))
       AS visible
RETURN s.list AS list, s.action AS action, s.since AS since, s:Syncing AS syncing, visible,
       CASE WHEN visible THEN l.owner END AS owner, CASE WHEN visible THEN l.name END AS name,
       COUNT { (s)-[:IMPOSES {applied: true}]->() } AS applied,
       COUNT { (s)-[i:IMPOSES]->() WHERE coalesce(i.refused, false) } AS refused,
       COUNT { (s)-[:EXCEPTS]->() } AS exceptions
ORDER BY since DESC, list DESC

// name: except
// Except $target, a member of the list, from $user's subscription to it ($excepted true), or
// end the exception (false). Its work is due again: an excepted person's mute or block is
// undone, one no longer excepted gets it. Only a member can be excepted, so a subscription's
// exceptions are bounded by the members its list had.
// Locking: the subscription's node.
// Params: $user, $key, $target, $excepted.
// Returns at most one row (none: no such subscription): refused (null, or 'not_member'),
// changed.
MATCH (:User {id: $user})-[:SUBSCRIBES]->(s:Subscription {key: $key})
WHERE NOT s.gone
OPTIONAL MATCH (s)-[:TO]->(:List)-[:HAS_MEMBER]->(t:User {id: $target})
OPTIONAL MATCH (s)-[x:EXCEPTS]->(:User {id: $target})
WITH s, t, x, CASE WHEN $excepted AND x IS NULL AND t IS NULL THEN 'not_member' END AS refused
WITH s, t, x, refused, refused IS NULL AND (x IS NULL) = $excepted AS changed
FOREACH (_ IN CASE WHEN changed AND $excepted THEN [1] ELSE [] END | CREATE (s)-[:EXCEPTS]->(t))
FOREACH (_ IN CASE WHEN changed AND NOT $excepted THEN [1] ELSE [] END | DELETE x)
FOREACH (_ IN CASE WHEN changed THEN [1] ELSE [] END | SET s:Syncing, s.due = s.due + 1)
RETURN refused, changed

// name: exceptions
// The people $user's subscription to $list excepts, by id.
// Locking: none (a read).
// Params: $user, $key, $after (id, '' from the start), $limit.
// Returns: id; at most $limit rows, by id.
MATCH (:User {id: $user})-[:SUBSCRIBES]->(s:Subscription {key: $key})-[:EXCEPTS]->(t:User)
WHERE NOT s.gone AND t.id > $after
RETURN t.id AS id
ORDER BY id
LIMIT $limit

// name: due_users
// Subscribers some of whose subscriptions have work due (the worker's jobs, one per user).
// Locking: none (a read; a label scan of :Syncing).
// Params: $limit.
// Returns: user; at most $limit rows.
MATCH (s:Subscription:Syncing)
RETURN DISTINCT s.user AS user
LIMIT $limit

// name: syncing
// $user's subscriptions with work due.
// Locking: none (a read).
// Params: $user.
// Returns: key.
MATCH (:User {id: $user})-[:SUBSCRIBES]->(s:Subscription:Syncing)
RETURN s.key AS key
ORDER BY key

// name: plan
// The next step of a subscription's work. Lift: what it imposed that it no longer wants (it is
// gone, no longer acts, its action changed, or the person left the list or was excepted),
// each with undo: whether the mute or block should be undone (it was not refused, and no other
// subscription of the user imposes the same on the person). Apply: the members it wants and
// has not acted on: each one new is recorded (IMPOSES, applied false) in this transaction,
// before the write, unless the user already mutes or blocks that person by hand (a mute or
// block no subscription imposed), which the subscription then leaves alone.
// Cost: the list's members (at most LIST_MEMBERS_MAX) and the subscription's IMPOSES, each
// tested with a few expands; at most $batch of each kept.
// Locking: the subscription's IMPOSES relationships it creates.
// Params: $user, $key, $batch, $now (µs: a mute that expired is no mute).
// Returns at most one row (none: no such subscription): version, action, gone, lift ([id,
// action, undo] triples), apply (ids).
MATCH (u:User {id: $user})-[:SUBSCRIBES]->(s:Subscription {key: $key})
OPTIONAL MATCH (s)-[:TO]->(l:List)<-[:OWNS]-(o:User)
WITH u, s, l,
     NOT s.gone AND l IS NOT NULL AND l.purpose = 'moderation'
     AND (o = u OR (NOT l.private AND NOT EXISTS { (o)-[:BLOCKS]->(u) })) AS acts
CALL (u, s, l, acts) {
  OPTIONAL MATCH (s)-[i:IMPOSES]->(m:User)
  WHERE NOT acts OR i.action <> s.action OR EXISTS { (s)-[:EXCEPTS]->(m) }
        OR NOT EXISTS { (l)-[:HAS_MEMBER]->(m) }
  WITH u, i, m
  LIMIT $batch
  RETURN collect(CASE WHEN i IS NOT NULL THEN
           [m.id, i.action,
            NOT coalesce(i.refused, false)
            AND NOT EXISTS { (u)-[:SUBSCRIBES]->(:Subscription)-[j:IMPOSES]->(m)
                             WHERE j <> i AND j.action = i.action
                               AND NOT coalesce(j.refused, false) }] END) AS lift
}
CALL (u, s, l, acts) {
  OPTIONAL MATCH (l)-[:HAS_MEMBER]->(m:User)
  WHERE acts AND m <> u AND NOT m:Erasing
    AND NOT EXISTS { (s)-[:EXCEPTS]->(m) }
    AND NOT EXISTS { (s)-[j:IMPOSES]->(m) WHERE j.action = s.action }
    AND NOT (CASE s.action
               WHEN 'block' THEN EXISTS { (u)-[:BLOCKS]->(m) }
               ELSE EXISTS { (u)-[mu:MUTES]->(m) WHERE mu.until IS NULL OR mu.until > $now }
             END
             AND NOT EXISTS { (u)-[:SUBSCRIBES]->(:Subscription)-[j:IMPOSES]->(m)
                              WHERE j.action = s.action AND NOT coalesce(j.refused, false) })
  WITH s, m
  LIMIT $batch
  FOREACH (_ IN CASE WHEN m IS NULL THEN [] ELSE [1] END |
    CREATE (s)-[:IMPOSES {action: s.action, applied: false}]->(m))
  RETURN count(m) AS recorded
}
CALL (s) {
  OPTIONAL MATCH (s)-[i:IMPOSES {applied: false}]->(m:User)
  WHERE i.action = s.action AND NOT coalesce(i.refused, false)
  WITH m
  LIMIT $batch
  RETURN collect(m.id) AS apply
}
RETURN s.due AS version, s.action AS action, s.gone AS gone, lift, apply

// name: applied
// The mutes or blocks a step made ($done) and those a bound refused ($refused).
// Locking: the IMPOSES relationships it changes.
// Params: $user, $key, $done (ids), $refused (ids).
// Returns one row: marked.
MATCH (:User {id: $user})-[:SUBSCRIBES]->(s:Subscription {key: $key})
CALL (s) {
  UNWIND $done AS mid
  MATCH (s)-[i:IMPOSES {applied: false}]->(:User {id: mid})
  WHERE i.action = s.action
  SET i.applied = true
  RETURN count(i) AS done
}
CALL (s) {
  UNWIND $refused AS rid
  MATCH (s)-[i:IMPOSES {applied: false}]->(:User {id: rid})
  WHERE i.action = s.action
  SET i.refused = true
  RETURN count(i) AS refused
}
RETURN done + refused AS marked

// name: release
// Forget what a step lifted (after the mutes or blocks to undo were undone).
// Locking: the IMPOSES relationships it deletes.
// Params: $user, $key, $lifted ([id, action] pairs).
// Returns one row: released.
MATCH (:User {id: $user})-[:SUBSCRIBES]->(s:Subscription {key: $key})
CALL (s) {
  UNWIND $lifted AS pair
  MATCH (s)-[i:IMPOSES {action: pair[1]}]->(:User {id: pair[0]})
  DELETE i
  RETURN count(*) AS released
}
RETURN released

// name: finish
// A subscription's work is done as of $version: its :Syncing label goes unless it changed
// since (its version moved), and a subscription that is gone, or whose list was deleted, and
// imposes nothing more is deleted.
// Locking: the subscription's node.
// Params: $user, $key, $version.
// Returns one row: finished (false: it changed meanwhile, its work is due again).
OPTIONAL MATCH (:User {id: $user})-[:SUBSCRIBES]->(s:Subscription {key: $key})
WHERE s.due = $version
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | REMOVE s:Syncing)
WITH s, s IS NOT NULL AS finished,
     s IS NOT NULL AND (s.gone OR NOT EXISTS { (s)-[:TO]->() })
     AND NOT EXISTS { (s)-[:IMPOSES]->() } AS over
FOREACH (_ IN CASE WHEN over THEN [1] ELSE [] END | DETACH DELETE s)
RETURN finished

// name: claim
// $user muted or blocked $target by hand ($kept true: the mute or block is the user's own now,
// and no subscription will undo it), or undid one by hand ($kept false: every subscription of
// the user with that action whose list holds $target excepts it, so none does it again).
// Locking: the IMPOSES it deletes, the EXCEPTS it creates.
// Params: $user, $target, $action, $kept.
// Returns one row: claimed (subscriptions touched).
OPTIONAL MATCH (:User {id: $user})-[:SUBSCRIBES]->(s:Subscription)
WHERE NOT s.gone
OPTIONAL MATCH (s)-[i:IMPOSES {action: $action}]->(:User {id: $target})
OPTIONAL MATCH (s)-[:TO]->(:List)-[:HAS_MEMBER]->(m:User {id: $target})
WITH s, i, CASE WHEN NOT $kept AND s.action = $action THEN m END AS excepted
WHERE i IS NOT NULL OR excepted IS NOT NULL
FOREACH (_ IN CASE WHEN excepted IS NULL THEN [] ELSE [1] END | MERGE (s)-[:EXCEPTS]->(excepted))
FOREACH (_ IN CASE WHEN i IS NULL THEN [] ELSE [1] END | DELETE i)
RETURN count(s) AS claimed

// name: erase_subscribed
// Delete one batch of an erased user's subscriptions: their IMPOSES and EXCEPTS, then, once
// none is left, the subscriptions themselves (its mutes and blocks go in moderation/
// erase_blocks, and what others' subscriptions recorded about it with them).
// Locking: the relationships and nodes it deletes.
// Params: $id, $batch.
// Returns one row: deleted (fewer than $batch: caught up).
OPTIONAL MATCH (:User:Erasing {id: $id})-[:SUBSCRIBES]->(:Subscription)-[k:IMPOSES|EXCEPTS]->()
WITH k
LIMIT $batch
WITH collect(k) AS gone
FOREACH (k IN gone | DELETE k)
WITH size(gone) AS recorded
CALL (recorded) {
  OPTIONAL MATCH (:User:Erasing {id: $id})-[:SUBSCRIBES]->(s:Subscription)
  WHERE recorded < $batch AND NOT EXISTS { (s)-->(:User) }
  WITH s
  LIMIT $batch
  WITH collect(s) AS subscriptions
  FOREACH (s IN subscriptions | DETACH DELETE s)
  RETURN size(subscriptions) AS subscriptions
}
RETURN recorded + subscriptions AS deleted
