// Portable relations: a user's follows, blocks, mutes and lists as its exports write them and
// its imports compare them (domain/portable.py). Each reads what the user's own lists show:
// suspended and spam users are left out, as every list leaves them out, so an import that
// overwrites changes nothing of what the user cannot see.

// name: following
// The users $id follows, newest first, with the options of each follow (relations/follow).
// Locking: none (a read, auto-commit).
// Cost: the user's followings, at most MAX_FOLLOWING, and a top-$limit sort.
// Params: $id, $limit.
// Returns: one row, `rows`: [id, notify, reblogs, langs] per follow (options in their stored
// form: null when default; one row of lists costs the Python driver far less than a row each).
MATCH (:User {id: $id})-[f:FOLLOWS]->(b:User)
WHERE NOT b:Inactive
WITH b, f
ORDER BY f.since DESC, b.id DESC
LIMIT $limit
RETURN collect([b.id, f.notify, f.reblogs, f.langs]) AS rows

// name: blocks
// The users $id blocks, newest first.
// Locking: none (a read, auto-commit).
// Cost: the user's blocks, at most MAX_BLOCKS, and a top-$limit sort.
// Params: $id, $limit.
// Returns: one row, `rows`: [id] per block.
MATCH (:User {id: $id})-[k:BLOCKS]->(b:User)
WHERE NOT b:Inactive
WITH b, k
ORDER BY k.since DESC, b.id DESC
LIMIT $limit
RETURN collect([b.id]) AS rows

// name: mutes
// The users $id mutes now (a mute in effect at Neo4j's clock: never expiring, or not yet),
// newest first, each with whether it hides their notifications.
// Locking: none (a read, auto-commit).
// Cost: the user's mutes, at most MAX_MUTES, and a top-$limit sort.
// Params: $id, $limit.
// Returns: one row, `rows`: [id, notifications] per mute.
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
MATCH (:User {id: $id})-[m:MUTES]->(b:User)
WHERE NOT b:Inactive AND (m.until IS NULL OR m.until > now_us)
WITH b, m
ORDER BY m.since DESC, b.id DESC
LIMIT $limit
RETURN collect([b.id, coalesce(m.notif, false)]) AS rows

// name: lists
// The members of $id's curate lists (its own, private ones too), lists newest first and each
// list's members newest first.
// Locking: none (a read, auto-commit).
// Cost: the user's lists (at most LISTS_MAX) and their members (LIST_MEMBERS_MAX each).
// Params: $id, $limit (rows in all).
// Returns: one row, `rows`: [member id, list name, list id] per membership.
MATCH (:User {id: $id})-[:OWNS]->(l:List)-[k:HAS_MEMBER]->(b:User)
WHERE coalesce(l.purpose, 'curate') = 'curate' AND NOT b:Inactive
WITH l, b, k
ORDER BY l.created DESC, l.id, k.since DESC, b.id DESC
LIMIT $limit
RETURN collect([b.id, l.name, l.id]) AS rows

// name: known
// Which of $ids are users of the graph (an import's rows name only users that exist: a row
// naming an unknown id is refused, where a follow through the API would create the user).
// Locking: none (a read, auto-commit).
// Cost: one seek in user_id_unique per id.
// Params: $ids (at most an import step's rows).
// Returns: known (a list of ids).
UNWIND $ids AS id
MATCH (u:User {id: id})
RETURN collect(u.id) AS known
