// follow_only: the benchmark's Neo4j-only follow, a design without a mirror: the same lock,
// clock and existence check as follow.cypher, and no counts read afterwards.
// Params: $src, $dst (user ids).
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
MERGE (a:User {id: $src})
SET a.clk = CASE WHEN coalesce(a.clk, 0) < now_us THEN now_us ELSE a.clk + 1 END
MERGE (b:User {id: $dst})
WITH a, b
OPTIONAL MATCH (a)-[edge:FOLLOWS]->(b)
WITH a, b, collect(edge) AS edges
FOREACH (_ IN CASE WHEN size(edges) = 0 THEN [1] ELSE [] END |
  CREATE (a)-[:FOLLOWS {since: a.clk}]->(b))
RETURN size(edges) = 0 AS changed
