// lock_users: the first statement of a batch of edge writes (group commit). Takes, in the
// order given, the write lock of every known user whose node the batch's writes will lock
// anyway, so that two batches writing the same users in opposite orders take their locks in
// the same order and cannot deadlock:
// - acting users (followers, blockers and the blocked): their clocks tick and their edges are
//   checked under these locks;
// - sparse other users (fewer than $sparse relationships, Neo4j's dense-node threshold):
//   creating or deleting a relationship of a sparse node locks that node. Dense nodes (a
//   celebrity) are not locked: Neo4j changes their relationships concurrently, so follows of
//   one celebrity still commit side by side.
// A lock is taken by ticking the user's hybrid logical clock, clk = max(now, clk + 1), as every
// edge write does first: the batch's own later ticks stay newer, and a clock only moves forward.
// No MERGE here: a MERGE would find known users with a shared lock first, and two batches
// upgrading the same shared lock deadlock. Users not yet known come back in `missing`
// (those the batch creates: the users of follows and blocks) for create_users.cypher.
// Params: $users (sorted by id), each {id, acting, create}; $sparse (the dense threshold).
// Returns locked (how many users were locked) and missing (ids to create, in order).
WITH datetime.realtime() AS now
WITH now.epochSeconds * 1000000 + now.microsecond AS now_us
UNWIND $users AS user
OPTIONAL MATCH (known:User {id: user.id})
WITH now_us, user, known,
     known IS NOT NULL AND (user.acting OR COUNT { (known)--() } < $sparse) AS lock
FOREACH (_ IN CASE WHEN lock THEN [1] ELSE [] END |
  SET known.clk = CASE WHEN coalesce(known.clk, 0) < now_us THEN now_us ELSE known.clk + 1 END)
RETURN count(CASE WHEN lock THEN 1 END) AS locked,
       collect(CASE WHEN known IS NULL AND user.create THEN user.id END) AS missing
