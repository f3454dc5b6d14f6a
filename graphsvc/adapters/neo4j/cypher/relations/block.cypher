// block: (src)-[:BLOCKS]->(dst), and remove the follows between them in both directions.
// Both users are locked, in id order ($ids is sorted), so block(a, b) and block(b, a) cannot
// deadlock, and a concurrent follow either way (which locks its follower) is serialized with
// the block: it commits first and is removed here, or it sees the block and is refused.
// Each user's clock ticks: the tick of a follower is the version of its removed follow.
// Outbox events (:GraphEvent): the block when new, and an unfollow per removed follow.
// Params: $src, $dst, $ids ([$src, $dst] sorted), $events (three event ids).
// Returns created (the block is new), and per direction whether a follow was removed + version.
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
UNWIND $ids AS id
OPTIONAL MATCH (known:User {id: id})
SET known.clk = CASE WHEN coalesce(known.clk, 0) < now_us THEN now_us ELSE known.clk + 1 END
WITH now_us, collect(id) AS ids
UNWIND ids AS id
MERGE (u:User {id: id})
SET u.clk = CASE WHEN coalesce(u.clk, 0) < now_us THEN now_us ELSE u.clk + 1 END
WITH collect(u) AS users
WITH [u IN users WHERE u.id = $src][0] AS a, [u IN users WHERE u.id = $dst][0] AS b
OPTIONAL MATCH (a)-[existing:BLOCKS]->(b)
WITH a, b, collect(existing)[0] AS k
FOREACH (_ IN CASE WHEN k IS NULL THEN [1] ELSE [] END |
  CREATE (a)-[:BLOCKS {since: a.clk}]->(b))
WITH a, b, k
OPTIONAL MATCH (a)-[ab:FOLLOWS]->(b)
WITH a, b, k, collect(ab) AS abs
OPTIONAL MATCH (b)-[ba:FOLLOWS]->(a)
WITH a, b, k, abs, collect(ba) AS bas
WITH a, b, k, abs, bas,
     size([e IN abs WHERE e.x]) AS ab_flagged, size([e IN bas WHERE e.x]) AS ba_flagged
FOREACH (_ IN CASE WHEN ab_flagged > 0 THEN [1] ELSE [] END | SET b.xr = b.xr - ab_flagged)
FOREACH (_ IN CASE WHEN ba_flagged > 0 THEN [1] ELSE [] END | SET a.xr = a.xr - ba_flagged)
FOREACH (e IN abs + bas | DELETE e)
FOREACH (_ IN CASE WHEN k IS NULL THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $events[0], type: 'block', src: $src, dst: $dst, v: a.clk}))
FOREACH (_ IN CASE WHEN size(abs) > 0 THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $events[1], type: 'unfollow', src: $src, dst: $dst, v: a.clk,
                       cause: 'block'}))
FOREACH (_ IN CASE WHEN size(bas) > 0 THEN [1] ELSE [] END |
  CREATE (:GraphEvent {id: $events[2], type: 'unfollow', src: $dst, dst: $src, v: b.clk,
                       cause: 'block'}))
RETURN k IS NULL AS created,
       size(abs) > 0 AS removed_following, a.clk AS following_version,
       size(bas) > 0 AS removed_followed_by, b.clk AS followed_by_version
