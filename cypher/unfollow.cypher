// unfollow: delete (src)-[:FOLLOWS]->(dst) if it exists; no row when either user is unknown.
// Same locking and clock as follow.cypher: an effective removal gets a fresh version; a no-op
// reports each user's current clock, which is newer than any instance of this edge, so the
// mirror can repair a stale entry with it.
// Params: $src, $dst (user ids).
MATCH (a:User {id: $src})
MATCH (b:User {id: $dst})
UNWIND CASE WHEN $src < $dst THEN [a, b] ELSE [b, a] END AS locked
SET locked.clk = coalesce(locked.clk, 0)
WITH a, b, count(locked) AS locks
WITH a, b, datetime.realtime() AS now
OPTIONAL MATCH (a)-[edge:FOLLOWS]->(b)
WITH a, b, now, collect(edge) AS edges
WITH a, b, now, edges, edges[0] AS r
WITH a, b, edges, r,
     reduce(m = now.epochSeconds * 1000000 + now.microsecond,
            x IN [a.clk + 1, b.clk + 1] | CASE WHEN x > m THEN x ELSE m END) AS version
FOREACH (_ IN CASE WHEN r IS NULL THEN [] ELSE [1] END |
  FOREACH (e IN edges | DELETE e)
  SET a.clk = version, b.clk = version)
RETURN r IS NOT NULL AS changed,
       version,
       a.clk AS src_clk, COUNT { (a)<-[:FOLLOWS]-() } AS src_followers, COUNT { (a)-[:FOLLOWS]->() } AS src_following,
       b.clk AS dst_clk, COUNT { (b)<-[:FOLLOWS]-() } AS dst_followers, COUNT { (b)-[:FOLLOWS]->() } AS dst_following
