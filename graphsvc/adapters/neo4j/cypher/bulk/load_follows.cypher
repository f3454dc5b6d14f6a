// load_follows: bulk-create follows grouped by follower; an edge that already exists is left
// as it is. Each edge carries the ids of its ends (src, dst), as follow.cypher's do.
// Locking: as in follow.cypher only the follower is locked (its clock is written first, before
// any existence check), so a load running beside live writes, or beside another batch of the
// load, cannot create a duplicate edge. The followed users are not written (Neo4j inserts the
// relationships of dense nodes concurrently).
// Clock: the follower's clock moves as if each of its rows had ticked it in turn,
// clk = max(row time, clk + 1), so that live writes after a load are ordered after it: after
// k rows that is max(clk + k, g.m), where the caller computes g.m = max over rows i = 1..k of
// (t_i + k - i).
// Rules: a follower that followed no one before this batch cannot hold any of its edges yet
// (the rows of a group are distinct): they are created without an existence check.
// Params: $groups, each {s: follower id, k: its number of rows, m: as above,
//   d: [followed ids], t: [since in microseconds, one per followed id]}; every user exists
//   (load_users.cypher).
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
