// follow_only: the benchmark's Neo4j-only follow, a design without a mirror, batched the way
// the service batches its writes (one statement for the follows that arrive together): the
// same lock, clock, existence check and edge (with its ends' ids, which the list indexes
// order by) as relations/follow.cypher, and no rules, no outbox event, no counts read
// afterwards. The caller holds its in-process lock of every user of the batch, as the
// service does, and sorts the rows by follower (distinct followers).
// Params: $rows, each {src, dst} (user ids). Returns per row: src, changed.
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
