// follow: create (src)-[:FOLLOWS]->(dst) unless it exists.
// Both users are write-locked in id order (no deadlock cycles), so the existence check, the
// version and the counts below are exact for this transaction. An effective change is stamped
// with a per-user hybrid logical clock: since = max(now, src.clk + 1, dst.clk + 1). That value is
// the follow time shown to clients and the version the Redis mirror orders writes by.
// Params: $src, $dst (user ids).
MERGE (a:User {id: $src})
MERGE (b:User {id: $dst})
WITH a, b
UNWIND CASE WHEN $src < $dst THEN [a, b] ELSE [b, a] END AS locked
SET locked.clk = coalesce(locked.clk, 0)
WITH a, b, count(locked) AS locks
WITH a, b, datetime.realtime() AS now
OPTIONAL MATCH (a)-[edge:FOLLOWS]->(b)
WITH a, b, now, collect(edge) AS edges
WITH a, b, now, edges, edges[0] AS r
WITH a, b, edges, r,
     CASE WHEN r IS NULL
       THEN reduce(m = now.epochSeconds * 1000000 + now.microsecond,
                   x IN [a.clk + 1, b.clk + 1] | CASE WHEN x > m THEN x ELSE m END)
       ELSE r.since
     END AS version
FOREACH (_ IN CASE WHEN r IS NULL THEN [1] ELSE [] END |
  CREATE (a)-[:FOLLOWS {since: version}]->(b)
  SET a.clk = version, b.clk = version)
RETURN r IS NULL AS changed,
       version,
       a.clk AS src_clk, COUNT { (a)<-[:FOLLOWS]-() } AS src_followers, COUNT { (a)-[:FOLLOWS]->() } AS src_following,
       b.clk AS dst_clk, COUNT { (b)<-[:FOLLOWS]-() } AS dst_followers, COUNT { (b)-[:FOLLOWS]->() } AS dst_following
