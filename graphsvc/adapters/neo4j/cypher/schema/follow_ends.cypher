// follow_ends: give every FOLLOWS written before the edges carried their ends' ids the ids of
// its ends, src (the follower's) and dst (the followed user's), which every write of an edge
// sets (relations/follow.cypher, bulk/*). Runs once per database, at start-up, before
// follow_ends_mark.cypher records that it ran to its end.
// Reads every edge once (O(edges)), in its own transactions of 10,000 edges each (an
// auto-commit statement): stopped part-way, the next start carries on with the edges left.
// Locking: each edge set is locked (a relationship's property write), not its users; a live
// write of the same edge waits for that batch.
// Params: none. Returns nothing.
MATCH (a:User)-[r:FOLLOWS]->(b:User)
WHERE r.src IS NULL OR r.dst IS NULL
CALL (a, r, b) {
  SET r.src = a.id, r.dst = b.id
} IN TRANSACTIONS OF 10000 ROWS
