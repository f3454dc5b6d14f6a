// load_edges: bulk-create follows; an edge that already exists is left as it is.
// As in follow.cypher only the follower is locked (before the existence check), so a load
// running beside live writes cannot create a duplicate edge, and its clock moves past the
// newest loaded follow time so that live writes after a load are ordered after it. Each edge
// carries the ids of its ends (src, dst), as follow.cypher's do.
// Params: $rows (list of {s: src id, d: dst id, t: since in microseconds}).
UNWIND $rows AS row
MATCH (a:User {id: row.s})
MATCH (b:User {id: row.d})
SET a.clk = CASE WHEN coalesce(a.clk, 0) < row.t THEN row.t ELSE a.clk + 1 END
WITH a, b, row
WHERE NOT EXISTS { (a)-[:FOLLOWS]->(b) }
CREATE (a)-[:FOLLOWS {since: row.t, src: row.s, dst: row.d}]->(b)
RETURN count(*) AS created
