// celebrities_page: the active users $id follows that have at least $threshold followers,
// newest follow first, keyset-paged (what a pull-model feed fans in from).
// Cost: $id's followings read newest first through the follows_src_since index (src, since,
// dst) from the cursor's position, as in following_page.cypher, and stopped once the page is
// full: each followed user's degree is O(1) in Neo4j. A page reads at most the followings
// after the cursor (bounded by MAX_FOLLOWING), fewer when celebrities come soon.
// Params: $id, $since, $after, $limit (as in following_page.cypher), $threshold.
// Returns: since, id; at most $limit rows, newest first.
CALL () {
  MATCH ()-[r:FOLLOWS]->(c)
  USING INDEX r:FOLLOWS(src, since, dst)
  WHERE r.src = $id AND r.since = $since AND r.dst < $after
  WITH c, r
  ORDER BY r.src DESC, r.since DESC, r.dst DESC
  WHERE NOT c:Inactive AND COUNT { (c)<-[:FOLLOWS]-() } >= $threshold
  RETURN r.since AS since, r.dst AS id
  LIMIT $limit
  UNION ALL
  MATCH ()-[r:FOLLOWS]->(c)
  USING INDEX r:FOLLOWS(src, since, dst)
  WHERE r.src = $id AND r.since < $since AND r.dst IS NOT NULL
  WITH c, r
  ORDER BY r.src DESC, r.since DESC, r.dst DESC
  WHERE NOT c:Inactive AND COUNT { (c)<-[:FOLLOWS]-() } >= $threshold
  RETURN r.since AS since, r.dst AS id
  LIMIT $limit
}
RETURN since, id
ORDER BY since DESC, id DESC
LIMIT $limit
