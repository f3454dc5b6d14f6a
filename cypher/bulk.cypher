// Bulk: loading an edge file into Neo4j (`graphsvc load`), beside live writes, and wiping the
// evaluation's own server.

// name: load_users
// Make sure every user of a bulk-load batch exists.
// Locking: the users it creates (MERGE; the user_id_unique constraint serialises two batches
// creating the same id). Existing users are not locked.
// Params: $ids (list of user ids).
// Returns nothing.
UNWIND $ids AS uid
MERGE (u:User {id: uid}) ON CREATE SET u.cs = timestamp() * 1000

// name: load_follows
// Bulk-create follows grouped by follower; an edge that already exists is left as it is. Each
// edge carries the ids of its ends (src, dst), as relations/follow's do.
// Locking: as in relations/follow only the follower is locked (its clock is written first,
// before any existence check), so a load running beside live writes, or beside another batch
// of the load, cannot create a duplicate edge. The followed users are not written (Neo4j
// inserts the relationships of dense nodes concurrently).
// Clock: the follower's clock moves as if each of its rows had ticked it in turn,
// clk = max(row time, clk + 1), so that live writes after a load are ordered after it: after
// k rows that is max(clk + k, g.m), where the caller computes g.m = max over rows i = 1..k of
// (t_i + k - i).
// Rules: a follower that followed no one before this batch cannot hold any of its edges yet
// (the rows of a group are distinct): they are created without an existence check.
// Params: $groups, each {s: follower id, k: its number of rows, m: as above,
//   d: [followed ids], t: [since in microseconds, one per followed id]}; every user exists
//   (bulk/load_users).
// Returns: created (how many edges were new).
UNWIND $groups AS g
MATCH (a:User {id: g.s})
SET a.clk = CASE WHEN coalesce(a.clk, 0) + g.k > g.m THEN coalesce(a.clk, 0) + g.k ELSE g.m END
WITH a, g, COUNT { (a)-[:FOLLOWS]->() } AS before
UNWIND range(0, size(g.d) - 1) AS i
MATCH (b:User {id: g.d[i]})
WITH a, b, g.t[i] AS since, before, g.s AS src, g.d[i] AS dst
WHERE before = 0 OR NOT EXISTS { (a)-[:FOLLOWS]->(b) }
CREATE (a)-[:FOLLOWS {since: since, src: src, dst: dst}]->(b)
RETURN count(*) AS created

// name: load_edges
// Bulk-create follows, one row per edge; an edge that already exists is left as it is. Each
// edge carries the ids of its ends (src, dst), as relations/follow's do.
// Locking: as in relations/follow only the follower is locked (before the existence check), so
// a load running beside live writes cannot create a duplicate edge.
// Clock: the follower's clock moves past the newest loaded follow time, so that live writes
// after a load are ordered after it.
// Params: $rows (list of {s: src id, d: dst id, t: since in microseconds}); a row whose users
//   do not both exist creates nothing (bulk/load_users makes them first).
// Returns: created (how many edges were new).
UNWIND $rows AS row
MATCH (a:User {id: row.s})
MATCH (b:User {id: row.d})
SET a.clk = CASE WHEN coalesce(a.clk, 0) < row.t THEN row.t ELSE a.clk + 1 END
WITH a, b, row
WHERE NOT EXISTS { (a)-[:FOLLOWS]->(b) }
CREATE (a)-[:FOLLOWS {since: row.t, src: row.s, dst: row.d}]->(b)
RETURN count(*) AS created

// name: wipe
// Delete every node and relationship, in batches (only the evaluation's own server is ever
// wiped: `graphsvc ranker eval`). Runs as an auto-commit transaction (CALL IN TRANSACTIONS).
// Locking: each batch's transaction locks the nodes it deletes.
// Params: none.
// Returns nothing.
MATCH (n)
CALL (n) {
  DETACH DELETE n
} IN TRANSACTIONS OF 5000 ROWS
