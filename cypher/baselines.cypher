// Baselines: what the benchmark measures the service against (make bench). The service never
// runs these; they stand for designs it does not use.

// name: follower_count
// How many follow $id (Neo4j's degree store: O(1) for dense nodes).
// The Neo4j-only baseline of the benchmark; the service reads counts from the mirror.
// Locking: none (a read).
// Params: $id.
// Returns: followers (no row for an unknown user).
MATCH (u:User {id: $id})
RETURN COUNT { (u)<-[:FOLLOWS]-() } AS followers

// name: follow_only
// The benchmark's Neo4j-only follow, a design without a mirror, batched the way the service
// batches its writes (one statement for the follows that arrive together): the same lock,
// clock, existence check and edge (with its ends' ids, which the list indexes order by) as
// relations/follow, and no rules, no outbox event, no counts read afterwards.
// Locking: the follower's node (its clock ticks), as in relations/follow. The caller holds its
// in-process lock of every user of the batch, as the service does, and sorts the rows by
// follower (distinct followers).
// Params: $rows, each {src, dst} (user ids).
// Returns per row: src, changed.
UNWIND $rows AS row
WITH row, datetime.realtime() AS now
WITH row, now.epochSeconds * 1000000 + now.microsecond AS now_us
MERGE (a:User {id: row.src})
SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END
MERGE (b:User {id: row.dst})
WITH row, a, b, head(COLLECT { MATCH (a)-[edge:FOLLOWS]->(b) RETURN edge }) AS r
FOREACH (_ IN CASE WHEN r IS NULL THEN [1] ELSE [] END |
  CREATE (a)-[:FOLLOWS {since: a.clk, src: a.id, dst: b.id}]->(b))
RETURN row.src AS src, r IS NULL AS changed

// name: naive_suggestions
// The benchmark's baseline, what a first attempt at "people you may know" looks like: count
// every follow path of length 2 or 3. Its work grows with the degrees along the paths (a
// celebrity on the way multiplies it); the benchmark runs it with a timeout.
// Locking: none (a read).
// Params: $id.
// Returns: id, paths; the 10 users reached by most paths.
MATCH (me:User {id: $id})-[:FOLLOWS*2..3]->(p:User)
WHERE p <> me AND NOT (me)-[:FOLLOWS]->(p)
RETURN p.id AS id, count(*) AS paths
ORDER BY paths DESC
LIMIT 10
