// lock_users: what a batch of edge writes (group commit) does first, as the prelude of its
// first statement (a CALL subquery before follow.cypher or unfollow.cypher: one round trip) or
// alone. Takes, in id order, the write lock of every user whose node the batch's writes will
// lock anyway, so two batches writing the same users in opposite orders take their locks in
// one order:
// - acting users (followers, blockers and the blocked): their clocks tick and their edges are
//   checked under these locks;
// - sparse other users (fewer than $sparse relationships, Neo4j's dense-node threshold):
//   creating or deleting a relationship of a sparse node locks that node. Dense nodes (a
//   celebrity) are not locked: Neo4j changes their relationships concurrently, so follows of
//   one celebrity still commit side by side;
// - users the batch's follows and blocks need and that do not exist yet (`create`) are created
//   (and so locked), also in id order.
// A lock is taken by ticking the user's hybrid logical clock, clk = max(now, clk + 1), as every
// edge write does first: the batch's own later ticks stay newer, and a clock only moves forward.
// Unknown users of unfollows and unblocks are not created (those writes change nothing).
// Within one process the service never lets two batches of the same users meet here (its
// in-process locks); across processes, Neo4j may still report a deadlock (on locks no query
// can order, such as the relationship chains of shared neighbours), and the batch runs again
// within milliseconds (deadlocks.py).
// Params: $users (sorted by id), each {id, acting, create}; $sparse (the dense threshold).
// Returns locked (how many users were locked or created).
UNWIND $users AS user
OPTIONAL MATCH (known:User {id: user.id})
WITH user, known, known IS NOT NULL AND (user.acting OR COUNT { (known)--() } < $sparse) AS lock
FOREACH (_ IN CASE WHEN known IS NULL AND user.create THEN [1] ELSE [] END |
  MERGE (:User {id: user.id}))
WITH user, known, lock, datetime.realtime() AS now
WITH known, lock, user, now.epochSeconds * 1000000 + now.microsecond AS now_us
FOREACH (_ IN CASE WHEN lock THEN [1] ELSE [] END |
  SET known.clk = CASE WHEN coalesce(known.clk, 0) < now_us THEN now_us ELSE known.clk + 1 END)
RETURN count(CASE WHEN lock OR (known IS NULL AND user.create) THEN 1 END) AS locked
