// Portable relations: a user's follows, blocks, mutes and lists as its exports write them and
// its imports compare them (domain/portable.py). Each reads what the user's own lists show:
// suspended and spam users are left out, as every list leaves them out, so an import that
// overwrites changes nothing of what the user cannot see.

// name: following
// The users $id follows, newest first, with the options of each follow (relations/follow).
// Locking: none (a read, auto-commit).
// Cost: the user's followings, at most MAX_FOLLOWING, and a top-$limit sort.
// Params: $id, $limit.
// Returns per follow: id, since, notify, reblogs, langs (stored form: null when default).
MATCH (:User {id: $id})-[f:FOLLOWS]->(b:User)
WHERE NOT b:Inactive
RETURN b.id AS id, f.since AS since, f.notify AS notify, f.reblogs AS reblogs, f.langs AS langs
ORDER BY since DESC, id DESC
LIMIT $limit

// name: blocks
// The users $id blocks, newest first.
// Locking: none (a read, auto-commit).
// Cost: the user's blocks, at most MAX_BLOCKS, and a top-$limit sort.
// Params: $id, $limit.
// Returns per block: id, since.
MATCH (:User {id: $id})-[k:BLOCKS]->(b:User)
WHERE NOT b:Inactive
RETURN b.id AS id, k.since AS since
ORDER BY since DESC, id DESC
LIMIT $limit

// name: mutes
// The users $id mutes now (a mute in effect at Neo4j's clock: never expiring, or not yet),
// newest first, each with whether it hides their notifications.
// Locking: none (a read, auto-commit).
// Cost: the user's mutes, at most MAX_MUTES, and a top-$limit sort.
// Params: $id, $limit.
// Returns per mute: id, since, notifications, until (µs, or null: never).
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
MATCH (:User {id: $id})-[m:MUTES]->(b:User)
WHERE NOT b:Inactive AND (m.until IS NULL OR m.until > now_us)
RETURN b.id AS id, m.since AS since, coalesce(m.notif, false) AS notifications,
       m.until AS until
ORDER BY since DESC, id DESC
LIMIT $limit

// name: lists
// The members of $id's curate lists (its own, private ones too), lists newest first and each
// list's members newest first.
// Locking: none (a read, auto-commit).
// Cost: the user's lists (at most LISTS_MAX) and their members (LIST_MEMBERS_MAX each).
// Params: $id, $limit (rows in all).
// Returns per membership: list (its id), name, id (the member), since.
MATCH (:User {id: $id})-[:OWNS]->(l:List)-[k:HAS_MEMBER]->(b:User)
WHERE coalesce(l.purpose, 'curate') = 'curate' AND NOT b:Inactive
RETURN l.id AS list, l.name AS name, b.id AS id, k.since AS since
ORDER BY l.created DESC, l.id, since DESC, id DESC
LIMIT $limit

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
