// Curated lists: (:User)-[:OWNS]->(:List {id, owner, name, description, private, purpose,
// exclusive, created, updated})-[:HAS_MEMBER {since, list, member}]->(:User). `created` is the
// owner's clock tick when the list was made (µs), `updated` ticks with every change of the list or its members,
// `since` is when a member was added; `list` and `member` are the ids of its ends, so a page of
// members is a seek in the members_list_since index (schema/schema). A list's members are at most LIST_MEMBERS_MAX, a user's
// lists at most LIST_OWNER_MAX, so every read of one list or one owner's lists is bounded by
// them. Inactive (suspended, spam) members are left out of the pages and the counts, as every
// list of users is; so is, from a curate list, a member in a block with the list's owner either
// way, for as long as the block stands (a moderation list keeps them).
//
// Events: each change of a public list creates its outbox events (:GraphEvent with a `list`
// property, ids from randomUUID()) in its transaction and returns them (`events`: maps of id,
// type, dst, v) for the service to append after the commit; the relay appends those whose
// append was lost. Types: list_created, list_changed (name or description), list_hidden (made
// private), list_shown (made public), list_deleted, list_member_added, list_member_removed. A
// private list's changes create none: the stream is public.

// name: create
// A new list of $owner; the owner is created when unknown (as a follow creates its users).
// Locking: the owner's node (its clock ticks: the list's `created`), so concurrent creations
// count the owner's lists one after another.
// Rules: the owner is not being erased ('erasing'); it owns fewer than $max lists
// ('list_limit'). A refused creation creates nothing.
// Params: $owner, $id, $name, $description, $private, $purpose, $exclusive, $max.
// Returns one row: refused (null or the rule), created (µs), events.
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
MERGE (o:User {id: $owner}) ON CREATE SET o.cs = timestamp() * 1000
SET o.clk = CASE WHEN coalesce(o.clk, 0) < now_us THEN now_us ELSE o.clk + 1 END
WITH o,
     CASE
       WHEN o:Erasing THEN 'erasing'
       WHEN COUNT { (o)-[:OWNS]->(:List) } >= $max THEN 'list_limit'
     END AS refused
FOREACH (_ IN CASE WHEN refused IS NULL THEN [1] ELSE [] END |
  CREATE (o)-[:OWNS]->(:List {id: $id, owner: $owner, name: $name, description: $description,
                              private: $private, purpose: $purpose, exclusive: $exclusive,
                              created: o.clk,
                              updated: o.clk}))
WITH o, refused,
     CASE WHEN refused IS NULL AND NOT $private
          THEN [{id: randomUUID(), type: 'list_created', dst: '', v: o.clk}] ELSE [] END AS events
FOREACH (e IN events |
  CREATE (:GraphEvent {id: e.id, type: e.type, src: $owner, dst: e.dst, list: $id, v: e.v}))
RETURN refused, o.clk AS created, events

// name: get
// One list of $owner, with what decides whether $viewer may read it.
// Locking: none (a read).
// Rules: a list of another owner is no list of $owner (no row).
// Params: $owner, $id, $viewer ('' for none), $count (false: members is 0, and the read is
// O(1): what a read of its members or its timeline checks first).
// Returns at most one row: the list's fields, members (active ones: O(members)),
// owner_active, blocks_viewer (the owner blocks $viewer).
MATCH (o:User {id: $owner})-[:OWNS]->(l:List {id: $id})
RETURN l.id AS id, l.owner AS owner, l.name AS name, l.description AS description,
       l.private AS private, l.purpose AS purpose, coalesce(l.exclusive, false) AS exclusive,
       l.created AS created, l.updated AS updated,
       CASE WHEN $count THEN
         COUNT { (l)-[:HAS_MEMBER]->(m:User)
                 WHERE NOT m:Inactive
                   AND NOT (l.purpose = 'curate'
                            AND (EXISTS { (o)-[:BLOCKS]->(m) } OR EXISTS { (m)-[:BLOCKS]->(o) })) }
       ELSE 0 END AS members,
       NOT o:Inactive AND NOT o:Erasing AS owner_active,
       $viewer <> '' AND EXISTS { (o)-[:BLOCKS]->(:User {id: $viewer}) } AS blocks_viewer

// name: owned_page
// Newest-first keyset page of $owner's lists, strictly after ($since, $after): all of them
// when $all, else the public ones, and only while the owner is active and does not block
// $viewer; when $member is not '', only the lists that hold $member.
// Cost: the owner's node, then its OWNS relationships (at most LIST_OWNER_MAX), each filtered
// on the cursor's position (and, with $member, one expand into the member), the newest
// $limit kept; each kept list's active members counted (at most LIST_MEMBERS_MAX each).
// Locking: none (a read).
// Params: $owner, $all, $viewer ('' for none), $member ('' for none), $since (µs), $after
// (list id, '' for none), $limit.
// Returns: the lists' fields and members; at most $limit rows, newest first.
MATCH (o:User {id: $owner})-[:OWNS]->(l:List)
WHERE ($all OR (NOT l.private AND NOT o:Inactive AND NOT o:Erasing
                AND NOT ($viewer <> '' AND EXISTS { (o)-[:BLOCKS]->(:User {id: $viewer}) })))
  AND (l.created < $since OR (l.created = $since AND l.id < $after))
  AND ($member = '' OR EXISTS {
        (l)-[:HAS_MEMBER]->(m:User {id: $member})
        WHERE NOT m:Inactive AND NOT (l.purpose = 'curate'
                   AND (EXISTS { (o)-[:BLOCKS]->(m) } OR EXISTS { (m)-[:BLOCKS]->(o) })) })
WITH o, l
ORDER BY l.created DESC, l.id DESC
LIMIT $limit
RETURN l.id AS id, l.owner AS owner, l.name AS name, l.description AS description,
       l.private AS private, l.purpose AS purpose, coalesce(l.exclusive, false) AS exclusive,
       l.created AS created, l.updated AS updated,
       COUNT { (l)-[:HAS_MEMBER]->(m:User)
               WHERE NOT m:Inactive
                 AND NOT (l.purpose = 'curate'
                          AND (EXISTS { (o)-[:BLOCKS]->(m) } OR EXISTS { (m)-[:BLOCKS]->(o) })) }
         AS members
ORDER BY created DESC, id DESC

// name: update
// Change a list's name, description, privacy or exclusiveness (a null parameter leaves its
// field).
// Locking: the list's node (`updated` ticks); with $private, the list's subscriptions (their
// work is due: a subscription acts only while its subscriber may see the list).
// Rules: a list of another owner is no list of $owner (no row).
// Params: $owner, $id, $name, $description, $private, $exclusive (each null to keep).
// Returns at most one row: the list's fields and members, as lists/get, and events.
MATCH (o:User {id: $owner})-[:OWNS]->(l:List {id: $id})
WITH o, l, l.private AS was_private, datetime.realtime() AS now
WITH o, l, was_private, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET l.updated = CASE WHEN l.updated < now_us THEN now_us ELSE l.updated + 1 END,
    l.name = coalesce($name, l.name),
    l.description = coalesce($description, l.description),
    l.private = coalesce($private, l.private),
    l.exclusive = coalesce($exclusive, l.exclusive, false)
FOREACH (s IN CASE WHEN $private IS NULL THEN []
                   ELSE COLLECT { MATCH (l)<-[:TO]-(s:Subscription) RETURN s } END |
  SET s:Syncing, s.due = s.due + 1)
WITH o, l,
     CASE
       WHEN was_private AND NOT l.private THEN 'list_shown'
       WHEN NOT was_private AND l.private THEN 'list_hidden'
       WHEN NOT l.private AND ($name IS NOT NULL OR $description IS NOT NULL) THEN 'list_changed'
     END AS kind
WITH o, l, CASE WHEN kind IS NULL THEN []
                ELSE [{id: randomUUID(), type: kind, dst: '', v: l.updated}] END AS events
FOREACH (e IN events |
  CREATE (:GraphEvent {id: e.id, type: e.type, src: $owner, dst: e.dst, list: $id, v: e.v}))
RETURN l.id AS id, l.owner AS owner, l.name AS name, l.description AS description,
       l.private AS private, l.purpose AS purpose, coalesce(l.exclusive, false) AS exclusive,
       l.created AS created, l.updated AS updated,
       COUNT { (l)-[:HAS_MEMBER]->(m:User)
               WHERE NOT m:Inactive
                 AND NOT (l.purpose = 'curate'
                          AND (EXISTS { (o)-[:BLOCKS]->(m) } OR EXISTS { (m)-[:BLOCKS]->(o) })) }
         AS members, events

// name: delete
// Delete a list of $owner with its memberships and follows; the work of its subscriptions is
// due (what they did is undone), and they lapse.
// Locking: the list's node and its relationships; its subscriptions' nodes.
// Rules: a list of another owner is no list of $owner (deleted false).
// Params: $owner, $id.
// Returns one row: deleted, events.
OPTIONAL MATCH (o:User {id: $owner})-[:OWNS]->(l:List {id: $id})
WITH o, l, l IS NOT NULL AS found, datetime.realtime() AS now
WITH l, found,
     CASE WHEN found AND NOT l.private
          THEN [{id: randomUUID(), type: 'list_deleted', dst: '',
                 v: CASE WHEN l.updated < now.epochSeconds * 1000000 + now.microsecond
                         THEN now.epochSeconds * 1000000 + now.microsecond
                         ELSE l.updated + 1 END}]
          ELSE [] END AS events
FOREACH (s IN CASE WHEN found THEN COLLECT { MATCH (l)<-[:TO]-(s:Subscription) RETURN s }
                   ELSE [] END |
  SET s:Syncing, s.due = s.due + 1)
FOREACH (e IN events |
  CREATE (:GraphEvent {id: e.id, type: e.type, src: $owner, dst: e.dst, list: $id, v: e.v}))
DETACH DELETE l
RETURN found AS deleted, events

// name: change_members
// Add and remove members of a list of $owner, all or nothing. Unknown users are created when
// added (as a follow creates its users).
// Locking: the list's node (its `lock` counter, written first), so concurrent changes of one
// list count its members one after another; each member's node as its membership is created
// or deleted. `updated` ticks only when a member was added or removed, and then the work of
// the list's subscriptions is due (subscriptions/plan).
// Rules: the owner is not being erased ('erasing'); a change that adds leaves at most $max
// members ('list_member_limit', nothing changes; a change that only removes is never refused).
// An added user that is already a member, or a removed one that is not, changes nothing. An
// added user being erased is not added ('erasing'), nor, to a curate list, one in a block with
// the owner either way ('blocked').
// Params: $owner, $id, $add (ids), $remove (ids), $max.
// Returns at most one row (none: no such list of $owner): refused (null or the rule), added,
// removed (ids), skipped ([id, reason] pairs), members (active members after the change),
// events.
MATCH (o:User {id: $owner})-[:OWNS]->(l:List {id: $id})
WITH o, l, datetime.realtime() AS now
WITH o, l, now.epochSeconds * 1000000 + now.microsecond AS now_us
SET l.lock = coalesce(l.lock, 0) + 1
WITH o, l, CASE WHEN l.updated < now_us THEN now_us ELSE l.updated + 1 END AS tick
CALL (l) {
  UNWIND $remove AS rid
  MATCH (l)-[m:HAS_MEMBER]->(:User {id: rid})
  RETURN collect(m) AS leaving, collect(rid) AS removed
}
CALL (o, l) {
  UNWIND $add AS aid
  OPTIONAL MATCH (u:User {id: aid})
  WITH aid,
       CASE
         WHEN u IS NULL THEN null
         WHEN u:Erasing THEN 'erasing'
         WHEN l.purpose = 'curate'
              AND (EXISTS { (o)-[:BLOCKS]->(u) } OR EXISTS { (u)-[:BLOCKS]->(o) }) THEN 'blocked'
         WHEN EXISTS { (l)-[:HAS_MEMBER]->(u) } THEN 'member'
       END AS reason
  RETURN collect(CASE WHEN reason IS NULL THEN aid END) AS fresh,
         collect(CASE WHEN reason IN ['erasing', 'blocked'] THEN [aid, reason] END) AS skipped
}
WITH o, l, tick, leaving, removed, fresh, skipped,
     CASE
       WHEN o:Erasing THEN 'erasing'
       WHEN size(fresh) > 0
            AND COUNT { (l)-[:HAS_MEMBER]->() } - size(leaving) + size(fresh) > $max
         THEN 'list_member_limit'
     END AS refused
FOREACH (_ IN CASE WHEN refused IS NULL AND size(leaving) + size(fresh) > 0 THEN [1] ELSE [] END |
  SET l.updated = tick)
FOREACH (m IN CASE WHEN refused IS NULL THEN leaving ELSE [] END | DELETE m)
FOREACH (aid IN CASE WHEN refused IS NULL THEN fresh ELSE [] END |
  MERGE (u:User {id: aid}) ON CREATE SET u.cs = timestamp() * 1000
  CREATE (l)-[:HAS_MEMBER {since: tick, list: $id, member: aid}]->(u))
FOREACH (s IN CASE WHEN refused IS NULL AND size(leaving) + size(fresh) > 0
                   THEN COLLECT { MATCH (l)<-[:TO]-(s:Subscription) RETURN s } ELSE [] END |
  SET s:Syncing, s.due = s.due + 1)
WITH o, l, tick, removed, fresh, skipped, refused,
     CASE WHEN refused IS NULL AND NOT l.private
          THEN [aid IN fresh | {id: randomUUID(), type: 'list_member_added', dst: aid, v: tick}]
               + [rid IN removed |
                  {id: randomUUID(), type: 'list_member_removed', dst: rid, v: tick}]
          ELSE [] END AS events
FOREACH (e IN events |
  CREATE (:GraphEvent {id: e.id, type: e.type, src: $owner, dst: e.dst, list: $id, v: e.v}))
RETURN refused, events,
       CASE WHEN refused IS NULL THEN fresh ELSE [] END AS added,
       CASE WHEN refused IS NULL THEN removed ELSE [] END AS removed,
       skipped,
       COUNT { (l)-[:HAS_MEMBER]->(m:User)
               WHERE NOT m:Inactive
                 AND NOT (l.purpose = 'curate'
                          AND (EXISTS { (o)-[:BLOCKS]->(m) } OR EXISTS { (m)-[:BLOCKS]->(o) })) }
         AS members

// name: members_page
// Newest-first keyset page of a list's active members, strictly after ($since, $after).
// Cost: two seeks in the members_list_since index (list, since, member), read in its order from
// the cursor's position and stopped by LIMIT, as pages/followers_page reads a followers list:
// the page (and the members the filters skip on the way), the same at any depth of any list.
// Locking: none (a read).
// Rules: the service checks first that the viewer may read the list (lists/get), for its 404;
// the same rule is checked again here ($all, $viewer, as lists/owned_page), so a list made
// private, or an owner who blocks the viewer or was suspended meanwhile, serves no member.
// Params: $owner, $id, $all, $viewer ('' for none), $since (µs), $after (user id, '' for
// none), $limit.
// Returns: since (when the member was added), id; at most $limit rows, newest first.
MATCH (o:User {id: $owner})-[:OWNS]->(l:List {id: $id})
WHERE $all OR (NOT l.private AND NOT o:Inactive AND NOT o:Erasing
               AND NOT ($viewer <> '' AND EXISTS { (o)-[:BLOCKS]->(:User {id: $viewer}) }))
CALL (o, l) {
  MATCH ()-[k:HAS_MEMBER]->(m:User)
  USING INDEX k:HAS_MEMBER(list, since, member)
  WHERE k.list = $id AND k.since = $since AND k.member < $after
  WITH o, l, k, m
  ORDER BY k.list DESC, k.since DESC, k.member DESC
  WHERE NOT m:Inactive
    AND NOT (l.purpose = 'curate'
             AND (EXISTS { (o)-[:BLOCKS]->(m) } OR EXISTS { (m)-[:BLOCKS]->(o) }))
  RETURN k.since AS since, k.member AS id
  LIMIT $limit
  UNION ALL
  MATCH ()-[k:HAS_MEMBER]->(m:User)
  USING INDEX k:HAS_MEMBER(list, since, member)
  WHERE k.list = $id AND k.since < $since AND k.member IS NOT NULL
  WITH o, l, k, m
  ORDER BY k.list DESC, k.since DESC, k.member DESC
  WHERE NOT m:Inactive
    AND NOT (l.purpose = 'curate'
             AND (EXISTS { (o)-[:BLOCKS]->(m) } OR EXISTS { (m)-[:BLOCKS]->(o) }))
  RETURN k.since AS since, k.member AS id
  LIMIT $limit
}
RETURN since, id
ORDER BY since DESC, id DESC
LIMIT $limit

// name: erase_owned
// Delete one batch of what an erased user's lists hold: their memberships, then, once none
// is left, the lists themselves (its memberships in others' lists go with its other
// relationships, moderation/erase_blocks).
// Locking: the relationships and nodes it deletes.
// Params: $id, $batch.
// Returns one row: deleted (memberships and lists; fewer than $batch: caught up), lists (the
// ids of the lists deleted, whose timelines the caller forgets).
OPTIONAL MATCH (:User:Erasing {id: $id})-[:OWNS]->(:List)-[m:HAS_MEMBER]->()
WITH m
LIMIT $batch
WITH collect(m) AS gone
FOREACH (m IN gone | DELETE m)
WITH size(gone) AS memberships
CALL (memberships) {
  OPTIONAL MATCH (:User:Erasing {id: $id})-[:OWNS]->(l:List)
  WHERE memberships < $batch AND NOT EXISTS { (l)-[:HAS_MEMBER]->() }
  WITH l
  LIMIT $batch
  WITH collect(l) AS lists
  WITH lists, [l IN lists | l.id] AS ids
  FOREACH (l IN lists |
    FOREACH (s IN COLLECT { MATCH (l)<-[:TO]-(s:Subscription) RETURN s } |
      SET s:Syncing, s.due = s.due + 1)
    DETACH DELETE l)
  RETURN size(ids) AS deleted_lists, ids
}
RETURN memberships + deleted_lists AS deleted, ids AS lists

// name: leave_blocked
// What a block does to lists, besides what it does to follows: a member in a block with a
// curate list's owner, either way, leaves the list (its membership deleted, so an unblock does
// not bring it back); follows of one's lists by the other go, both ways; and the blocked
// user's subscriptions to the blocker's lists lapse (their work is due: what they did is
// undone). Run for each block event, after the block committed; a pair whose block is gone
// (unblocked since: the event came late) changes nothing, so a member added again after an
// unblock stays. Moderation lists keep their members.
// Locking: each list that loses a member (its `lock` counter, as lists/change_members, and
// `updated` ticks), the memberships and list follows deleted, the subscriptions marked.
// Params: $pairs ([blocker, blocked] id pairs).
// Returns one row: removed (memberships and list follows deleted), events (lists of maps of
// id, type, src, dst, list, v: the members that left public lists).
UNWIND $pairs AS pair
MATCH (a:User {id: pair[0]})-[:BLOCKS]->(b:User {id: pair[1]})
CALL (a, b) {
  CALL (a, b) {
    MATCH (a)-[:OWNS]->(l:List {purpose: 'curate'})-[m:HAS_MEMBER]->(b)
    RETURN l, m, b.id AS member
    UNION
    MATCH (b)-[:OWNS]->(l:List {purpose: 'curate'})-[m:HAS_MEMBER]->(a)
    RETURN l, m, a.id AS member
  }
  WITH l, m, member, datetime.realtime() AS now
  WITH l, m, member, now.epochSeconds * 1000000 + now.microsecond AS now_us
  SET l.lock = coalesce(l.lock, 0) + 1,
      l.updated = CASE WHEN l.updated < now_us THEN now_us ELSE l.updated + 1 END
  DELETE m
  WITH l, member,
       CASE WHEN NOT l.private
            THEN {id: randomUUID(), type: 'list_member_removed', src: l.owner, dst: member,
                  list: l.id, v: l.updated} END AS event
  FOREACH (e IN CASE WHEN event IS NULL THEN [] ELSE [event] END |
    CREATE (:GraphEvent {id: e.id, type: e.type, src: e.src, dst: e.dst, list: e.list, v: e.v}))
  RETURN count(member) AS memberships, collect(event) AS events
}
CALL (a, b) {
  OPTIONAL MATCH (b)-[f:FOLLOWS_LIST]->(:List)<-[:OWNS]-(a)
  DELETE f
  RETURN count(f) AS followed
}
CALL (a, b) {
  OPTIONAL MATCH (a)-[f:FOLLOWS_LIST]->(:List)<-[:OWNS]-(b)
  DELETE f
  RETURN count(f) AS following
}
CALL (a, b) {
  OPTIONAL MATCH (b)-[:SUBSCRIBES]->(s:Subscription)-[:TO]->(:List)<-[:OWNS]-(a)
  FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | SET s:Syncing, s.due = s.due + 1)
  RETURN count(s) AS lapsed
}
RETURN sum(memberships + followed + following) AS removed, collect(events) AS events

// name: member_ids
// Every active member of a list, newest first: what its timeline is made of (its rebuild,
// and which members' posts are pulled). The service checked first that the viewer may read
// the list.
// Cost: the list found by its id (list_id_unique), then its HAS_MEMBER relationships (at most
// LIST_MEMBERS_MAX).
// Locking: none (a read).
// Params: $owner, $id.
// Returns: id; at most LIST_MEMBERS_MAX rows.
MATCH (o:User {id: $owner})-[:OWNS]->(l:List {id: $id})-[k:HAS_MEMBER]->(m:User)
WHERE NOT m:Inactive
  AND NOT (l.purpose = 'curate'
           AND (EXISTS { (o)-[:BLOCKS]->(m) } OR EXISTS { (m)-[:BLOCKS]->(o) }))
RETURN m.id AS id
ORDER BY k.since DESC, id DESC

// name: timeline_authors
// Whether $viewer may read a list's timeline, and which of $authors it may show: active
// members of the list (as lists/member_ids counts them) that are in no block with $viewer,
// either way. Every round of a read asks, so a list made private, or an owner who blocks the
// viewer meanwhile, shows nothing more.
// Cost: the list found by its id, then per author its node (user_id_unique) and whether the
// list holds it (an expand between two known nodes, from the side with fewer relationships):
// the page's authors and the list's pulled members, not the list's members.
// Locking: none (a read).
// Params: $owner, $id, $all, $viewer ('' for none), $authors (ids).
// Returns one row: visible (the list exists and the viewer may read it, as lists/get and
// domain/lists.may_see decide), purpose (null for no list), authors (ids; none unless visible).
OPTIONAL MATCH (o:User {id: $owner})-[:OWNS]->(l:List {id: $id})
WITH o, l,
     l IS NOT NULL
     AND ($all OR (NOT l.private AND NOT o:Inactive AND NOT o:Erasing
                   AND NOT ($viewer <> '' AND EXISTS { (o)-[:BLOCKS]->(:User {id: $viewer}) })))
       AS visible
CALL (o, l, visible) {
  UNWIND CASE WHEN visible THEN $authors ELSE [] END AS aid
  MATCH (m:User {id: aid})
  WHERE EXISTS { (l)-[:HAS_MEMBER]->(m) }
    AND NOT m:Inactive
    AND NOT (l.purpose = 'curate'
             AND (EXISTS { (o)-[:BLOCKS]->(m) } OR EXISTS { (m)-[:BLOCKS]->(o) }))
    AND NOT ($viewer <> '' AND EXISTS { (m)-[:BLOCKS]-(:User {id: $viewer}) })
  RETURN collect(m.id) AS authors
}
RETURN visible, l.purpose AS purpose, authors

// name: exclusive_members
// The members of $owner's exclusive lists: whose posts leave the owner's home timeline.
// Cost: the owner's lists (at most LIST_OWNER_MAX), the members of the exclusive ones (at
// most LIST_MEMBERS_MAX each).
// Locking: none (a read).
// Params: $owner.
// Returns one row: ids.
OPTIONAL MATCH (:User {id: $owner})-[:OWNS]->(l:List {exclusive: true})-[:HAS_MEMBER]->(m:User)
RETURN collect(DISTINCT m.id) AS ids
