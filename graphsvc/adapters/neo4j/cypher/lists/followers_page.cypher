// followers_page: newest-first keyset page of who follows $id, strictly after ($since, $after),
// leaving out inactive (suspended, spam) users as the mirror's pages do.
// Serves pages past the mirror's capped hot list (and reads when Redis cannot help).
// Cost: two seeks in the follows_dst_since index (dst, since, src), read in its order from the
// cursor's position and stopped by LIMIT: the entries at the cursor's own time after its id,
// then the older ones. The work is the page (plus the inactive followers skipped on the
// way), the same at any depth and for any number of followers; nothing is sorted but the at
// most 2 x $limit rows of the two seeks. The follower's id is the edge's src.
// Params: $id, $since (int, microseconds), $after (user id, '' for none), $limit.
// Returns: since, id; at most $limit rows, newest first.
CALL () {
  MATCH (f)-[r:FOLLOWS]->()
  USING INDEX r:FOLLOWS(dst, since, src)
  WHERE r.dst = $id AND r.since = $since AND r.src < $after
  WITH f, r
  ORDER BY r.dst DESC, r.since DESC, r.src DESC
  WHERE NOT f:Inactive
  RETURN r.since AS since, r.src AS id
  LIMIT $limit
  UNION ALL
  MATCH (f)-[r:FOLLOWS]->()
  USING INDEX r:FOLLOWS(dst, since, src)
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
