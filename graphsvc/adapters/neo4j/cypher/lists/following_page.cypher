// following_page: newest-first keyset page of whom $id follows, strictly after ($since, $after),
// leaving out inactive (suspended, spam) users as the mirror's pages do.
// Cost: two seeks in the follows_src_since index (src, since, dst), read in its order from the
// cursor's position and stopped by LIMIT, as in followers_page.cypher: the work is the page
// (plus the inactive users skipped on the way), at any depth. The followed user's id is the
// edge's dst.
// Params: $id, $since (int, microseconds), $after (user id, '' for none), $limit.
// Returns: since, id; at most $limit rows, newest first.
CALL () {
  MATCH ()-[r:FOLLOWS]->(f)
  USING INDEX r:FOLLOWS(src, since, dst)
  WHERE r.src = $id AND r.since = $since AND r.dst < $after
  WITH f, r
  ORDER BY r.src DESC, r.since DESC, r.dst DESC
  WHERE NOT f:Inactive
  RETURN r.since AS since, r.dst AS id
  LIMIT $limit
  UNION ALL
  MATCH ()-[r:FOLLOWS]->(f)
  USING INDEX r:FOLLOWS(src, since, dst)
  WHERE r.src = $id AND r.since < $since AND r.dst IS NOT NULL
  WITH f, r
  ORDER BY r.src DESC, r.since DESC, r.dst DESC
  WHERE NOT f:Inactive
  RETURN r.since AS since, r.dst AS id
  LIMIT $limit
}
RETURN since, id
ORDER BY since DESC, id DESC
LIMIT $limit
