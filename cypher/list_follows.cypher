// List follows: (:User)-[:FOLLOWS_LIST {since}]->(:List). A user follows a curate list it may
// see to read its timeline (every follower reads the list's one timeline: a follow copies
// nothing). `since` is the follower's clock tick when it followed. A follow is the follower's
// alone: no answer tells a list's owner or anyone else who follows it. A list the follower may
// no longer see (made private, an owner who blocks it, suspended or being erased) is left out
// of its follows; a block ends the follow for good (lists/leave_blocked), a deleted list
// takes its follows with it.

// name: follow
// $user follows the curate list $list (a repeat changes nothing).
// Locking: the follower's node (its clock ticks), so one user's follows are counted one after
// another.
// Rules: no such list, or one the follower may not see: 'not_found'; a moderation list:
// 'moderation'; the follower is being erased: 'erasing'; a new follow past $max:
// 'list_follow_limit'.
// Params: $user, $list, $max.
// Returns one row: refused (null or the rule), created.
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
MERGE (u:User {id: $user}) ON CREATE SET u.cs = timestamp() * 1000
SET u.clk = CASE WHEN coalesce(u.clk, 0) < now_us THEN now_us ELSE u.clk + 1 END
WITH u
OPTIONAL MATCH (o:User)-[:OWNS]->(l:List {id: $list})
WITH u, l, head(COLLECT { MATCH (u)-[f:FOLLOWS_LIST]->(l) RETURN f }) AS f,
     CASE
       WHEN l IS NULL
            OR NOT (o = u OR (NOT l.private AND NOT o:Inactive AND NOT o:Erasing
                              AND NOT EXISTS { (o)-[:BLOCKS]->(u) })) THEN 'not_found'
       WHEN l.purpose <> 'curate' THEN 'moderation'
       WHEN u:Erasing THEN 'erasing'
     END AS refused
WITH u, l, f,
     CASE
       WHEN refused IS NULL AND f IS NULL AND COUNT { (u)-[:FOLLOWS_LIST]->() } >= $max
         THEN 'list_follow_limit'
       ELSE refused
     END AS refused
FOREACH (_ IN CASE WHEN refused IS NULL AND f IS NULL THEN [1] ELSE [] END |
  CREATE (u)-[:FOLLOWS_LIST {since: u.clk}]->(l))
RETURN refused, refused IS NULL AND f IS NULL AS created

// name: unfollow
// $user stops following $list (idempotent).
// Locking: the follow it deletes.
// Params: $user, $list.
// Returns one row: removed.
OPTIONAL MATCH (:User {id: $user})-[f:FOLLOWS_LIST]->(:List {id: $list})
DELETE f
RETURN f IS NOT NULL AS removed

// name: page
// Newest-first keyset page of the lists $id follows and may see, strictly after ($since,
// $after), with each list's fields as lists/get answers them.
// Cost: the follower's FOLLOWS_LIST relationships (at most LIST_FOLLOWS_MAX), each list's
// active members counted for the kept ones (at most LIST_MEMBERS_MAX each).
// Locking: none (a read).
// Params: $id, $since, $after (list id, '' for none), $limit.
// Returns: followed (µs), and the list's fields; at most $limit rows, newest follow first.
MATCH (u:User {id: $id})-[f:FOLLOWS_LIST]->(l:List)<-[:OWNS]-(o:User)
WHERE (o = u OR (NOT l.private AND NOT o:Inactive AND NOT o:Erasing
                 AND NOT EXISTS { (o)-[:BLOCKS]->(u) }))
  AND (f.since < $since OR (f.since = $since AND l.id < $after))
WITH o, l, f
ORDER BY f.since DESC, l.id DESC
LIMIT $limit
RETURN f.since AS followed, l.id AS id, l.owner AS owner, l.name AS name,
       l.description AS description, l.private AS private, l.purpose AS purpose,
       coalesce(l.exclusive, false) AS exclusive, l.created AS created, l.updated AS updated,
       COUNT { (l)-[:HAS_MEMBER]->(m:User)
               WHERE NOT m:Inactive
                 AND NOT (l.purpose = 'curate'
                          AND (EXISTS { (o)-[:BLOCKS]->(m) } OR EXISTS { (m)-[:BLOCKS]->(o) })) }
         AS members
ORDER BY followed DESC, id DESC
