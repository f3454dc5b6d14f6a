// Follow requests: the pending (src)-[:REQUESTS {since, src, dst}]->(dst) of a follow to a
// locked user (relations/follow makes them; relations/approve, relations/reject and
// relations/unfollow end them). Each carries its ends' ids, by which the requests indexes
// order it (schema/schema), as a follow does: a page is a seek at the cursor's position.

// name: incoming_page
// Newest-first keyset page of the requests made to $id, strictly after ($since, $after),
// leaving out inactive requesters: a suspended user's requests are hidden, a spam user's stay
// in the shadow (made, never shown), as their follows are.
// Cost: two seeks in the requests_dst_since index, as pages/followers_page.
// Locking: none (a read).
// Params: $id, $since (int, microseconds), $after (user id, '' for none), $limit.
// Returns: since, id (the requester); at most $limit rows, newest first.
CALL () {
  MATCH (f)-[r:REQUESTS]->()
  USING INDEX r:REQUESTS(dst, since, src)
  WHERE r.dst = $id AND r.since = $since AND r.src < $after
  WITH f, r
  ORDER BY r.dst DESC, r.since DESC, r.src DESC
  WHERE NOT f:Inactive
  RETURN r.since AS since, r.src AS id
  LIMIT $limit
  UNION ALL
  MATCH (f)-[r:REQUESTS]->()
  USING INDEX r:REQUESTS(dst, since, src)
  WHERE r.dst = $id AND r.since < $since AND r.src IS NOT NULL
  WITH f, r
  ORDER BY r.dst DESC, r.since DESC, r.src DESC
  WHERE NOT f:Inactive
  RETURN r.since AS since, r.src AS id
  LIMIT $limit
}
RETURN since, id
ORDER BY since DESC, id DESC
LIMIT $limit

// name: sent_page
// Newest-first keyset page of the requests $id made, strictly after ($since, $after).
// Cost: two seeks in the requests_src_since index, as pages/following_page.
// Locking: none (a read).
// Params: $id, $since, $after, $limit.
// Returns: since, id (the requested user); at most $limit rows, newest first.
CALL () {
  MATCH ()-[r:REQUESTS]->()
  USING INDEX r:REQUESTS(src, since, dst)
  WHERE r.src = $id AND r.since = $since AND r.dst < $after
  WITH r
  ORDER BY r.src DESC, r.since DESC, r.dst DESC
  RETURN r.since AS since, r.dst AS id
  LIMIT $limit
  UNION ALL
  MATCH ()-[r:REQUESTS]->()
  USING INDEX r:REQUESTS(src, since, dst)
  WHERE r.src = $id AND r.since < $since AND r.dst IS NOT NULL
  WITH r
  ORDER BY r.src DESC, r.since DESC, r.dst DESC
  RETURN r.since AS since, r.dst AS id
  LIMIT $limit
}
RETURN since, id
ORDER BY since DESC, id DESC
LIMIT $limit

// name: pending_count
// How many requests to $id wait, from active requesters (those its owner is shown).
// Cost: the user's incoming requests (a locked user's pending ones: few, as a user answers
// them), each with its requester's labels.
// Locking: none (a read).
// Params: $id.
// Returns one row: pending (0 for an unknown user).
OPTIONAL MATCH (u:User {id: $id})
RETURN CASE WHEN u IS NULL THEN 0
            ELSE COUNT { (u)<-[:REQUESTS]-(f) WHERE NOT f:Inactive } END AS pending

// name: approve_all_begin
// Mark $id's pending requests to be approved in the background (the label :Approving, the queue
// of that work, kept until it is done, so it resumes after a crash): every request made up to
// now (`approve_until`, the user's clock tick), oldest first, from where the work has got to
// (`approve_since`, `approve_after`: the last request taken). A newer mark only extends
// `approve_until`.
// Locking: the user's node (its clock ticks).
// Params: $id.
// Returns: marked (the user exists), pending (requests now waiting from active requesters:
// what requests/incoming_page lists and requests/pending_count counts; a suspended or spam
// requester's request is marked too, and the approval takes it or refuses it by its rules).
OPTIONAL MATCH (u:User {id: $id})
WITH u, datetime.realtime() AS now
WITH u, now.epochSeconds * 1000000 + now.microsecond AS now_us
FOREACH (_ IN CASE WHEN u IS NULL THEN [] ELSE [1] END |
  SET u.clk = CASE WHEN coalesce(u.clk, 0) < now_us THEN now_us ELSE u.clk + 1 END
  SET u:Approving, u.approve_until = u.clk,
      u.approve_since = coalesce(u.approve_since, 0),
      u.approve_after = coalesce(u.approve_after, ''))
RETURN u IS NOT NULL AS marked,
       CASE WHEN u IS NULL THEN 0
            ELSE COUNT { (u)<-[:REQUESTS]-(f) WHERE NOT f:Inactive } END AS pending

// name: approvals_due
// The next requests an approval of every request takes: made to $id up to its `approve_until`,
// oldest first, after its `approve_since` / `approve_after` position (those the work already
// passed, refused ones among them, are not taken again).
// Cost: a seek in the requests_dst_since index, stopped at $limit.
// Locking: none (a read).
// Params: $id, $limit.
// Returns: since, id (the requester); nothing when the user is not marked.
MATCH (u:User:Approving {id: $id})
WITH u.approve_until AS until, u.approve_since AS since, u.approve_after AS after
MATCH ()-[r:REQUESTS]->()
USING INDEX r:REQUESTS(dst, since, src)
WHERE r.dst = $id AND r.since >= since AND r.since <= until
  AND (r.since > since OR r.src > after)
RETURN r.since AS since, r.src AS id
ORDER BY since, id
LIMIT $limit

// name: approve_all_step
// Note how far an approval of every request has got ($since, $id: the last request taken; null:
// where it was), and end the mark when $done, unless requests to approve remain past that
// position (a newer mark extended `approve_until`): the work then goes on.
// Locking: the user's node.
// Params: $user, $since, $id, $done.
// Returns: finished (the mark is gone); no row when the user is not marked.
MATCH (u:User:Approving {id: $user})
SET u.approve_since = coalesce($since, u.approve_since),
    u.approve_after = coalesce($id, u.approve_after)
WITH u, u.approve_since AS since, u.approve_after AS after
WITH u, $done AND NOT EXISTS {
  MATCH ()-[r:REQUESTS]->(u)
  WHERE r.since <= u.approve_until AND (r.since > since OR (r.since = since AND r.src > after))
} AS finished
FOREACH (_ IN CASE WHEN finished THEN [1] ELSE [] END |
  REMOVE u:Approving, u.approve_until, u.approve_since, u.approve_after)
RETURN finished

// name: approving_users
// Users whose requests are being approved in the background (a label scan).
// Locking: none (a read).
// Params: none.
// Returns: id.
MATCH (u:User:Approving)
RETURN u.id AS id
