// recently_active: the accounts that followed someone most recently (the newest edges, read
// newest first through the follows_since index, so the work is $scan edges whatever the size
// of the graph). Fills the suggestions of a user whose neighbourhood gives too few, before
// the most followed accounts; the service caches the answer with the popular list.
// Params: $scan (edges read), $limit.
MATCH (a:User)-[r:FOLLOWS]->()
WHERE r.since IS NOT NULL
WITH a, r.since AS since
ORDER BY since DESC
LIMIT $scan
WITH a, max(since) AS last
WHERE NOT a:Inactive AND NOT a:Erasing
RETURN a.id AS id
ORDER BY last DESC, id
LIMIT $limit
